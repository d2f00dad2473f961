//! Building the world of a checked scenario: its projects, named hosts, host groups
//! and the first events of the queue. Every draw a host makes here comes from its
//! own streams, in a fixed order, so adding a host never changes another's.

use super::link::{self, Backend};
use super::script::script_class;
use super::{
    CLASS_END, CLASS_EXPECT, CLASS_SAMPLE, Event, HostGroupRt, Recorder, RunOptions, World,
    daemon_index,
};
use crate::client::availability::{AvailSpec, Availability};
use crate::client::config::ClientConfig;
use crate::client::host::{ClientHost, GroupCtx, HostBehaviour, ProjectState};
use crate::client::scripted::ScriptedHost;
use crate::client::truth;
use crate::engine::rng::{self, StreamKind};
use crate::engine::{EventQueue, Time};
use crate::scenario::{Daemon, ScenarioFile};
use crate::server::db::{HavRow, HostRow};
use crate::server::resource::Coproc;
use crate::server::scheduler;
use crate::server::{APP_VERSION_ID, Project};
use rand::RngExt;
use std::sync::Arc;

impl<R: Recorder> World<R> {
    /// Builds the world of a validated scenario. `recorder` hears of every row
    /// finalised as the run goes.
    pub fn new(scenario: ScenarioFile, opts: &RunOptions, recorder: R) -> Self {
        let seed = scenario.simulation.seed;
        let audit = recorder.wants_transitions() || opts.check_invariants;
        let names: Vec<String> = scenario.project.keys().cloned().collect();
        let project_index = |name: &str| -> u16 {
            if name.is_empty() {
                0
            } else {
                names.iter().position(|n| n == name).unwrap_or(0) as u16
            }
        };
        let mut projects: Vec<Project> = scenario
            .project
            .iter()
            .enumerate()
            .map(|(i, (name, cfg))| Project::new(i, name, cfg.clone(), seed, audit))
            .collect();
        let mut tie_class = [0u8; 8];
        for (pos, d) in scenario.simulation.tie_order.iter().enumerate() {
            tie_class[daemon_index(*d)] = pos as u8;
        }

        // Named hosts first, in file order, then host groups.
        let mut named = Vec::new();
        for h in &scenario.host {
            let pi = project_index(&h.project);
            let p = &mut projects[pi as usize];
            let id = p.db.hosts.next_id();
            let attrs = HostRow {
                userid: h.userid.unwrap_or(id),
                p_ncpus: h.p_ncpus,
                p_fpops: h.p_fpops,
                p_iops: h.p_iops,
                m_nbytes: h.m_nbytes,
                d_free: h.d_free,
                on_frac: h.on_frac,
                active_frac: h.active_frac,
                os_name: h.os_name.as_str().into(),
                p_vendor: h.p_vendor.as_str().into(),
                p_model: h.p_model.as_str().into(),
                ..Default::default()
            };
            let day = h.day_offset.or(p.cfg.pin.day_offset).unwrap_or_else(|| {
                rng::stream(seed, StreamKind::Host, id as u64 ^ (pi as u64) << 32).random()
            });
            let hostid = link::add_host(p, attrs, day);
            if let Some(hav) = &h.hav {
                p.db.host_mut(hostid).havs.push(HavRow {
                    app_version_id: APP_VERSION_ID,
                    max_jobs_per_day: hav.max_jobs_per_day,
                    n_jobs_today: hav.n_jobs_today,
                    consecutive_valid: hav.consecutive_valid,
                    ..Default::default()
                });
            }
            named.push(ScriptedHost {
                name: h.name.clone(),
                project: pi,
                hostid,
                holds: Vec::new(),
                last_reply: None,
            });
        }

        let end = scenario.simulation.duration.get();
        let mut queue = EventQueue::new();
        // Sized once: a million hosts never pay for a doubled vector.
        let mut hosts =
            Vec::with_capacity(scenario.host_group.iter().map(|g| g.count as usize).sum());
        let mut groups = Vec::new();
        let outputs = truth::output_models(&scenario);
        let classes = truth::error_classes(&scenario.host_group);
        for (gi, g) in scenario.host_group.iter().enumerate() {
            let mut cfg = ClientConfig::resolve(&scenario.client, g.policy);
            cfg.gpu_active_frac = g.gpu_active_frac;
            let ctx = Arc::new(GroupCtx {
                avail: avail_spec(g, cfg.policy),
                cfg,
                behaviour: HostBehaviour {
                    outputs: outputs.clone(),
                    detach_prob: g.detach_prob,
                },
            });
            // Attached projects in project (name) order, as the client lists them.
            let attached: Vec<(u16, f64)> = if g.shares.is_empty() {
                vec![(project_index(&g.project), 100.0)]
            } else {
                g.shares
                    .iter()
                    .map(|(n, s)| (project_index(n), *s))
                    .collect()
            };
            let row = HostRow {
                p_ncpus: g.p_ncpus,
                p_iops: g.p_iops,
                m_nbytes: g.m_nbytes,
                d_free: g.d_free,
                on_frac: g.on_frac,
                active_frac: g.active_frac,
                gpu_active_frac: g.gpu_active_frac,
                os_name: g.os_name.as_str().into(),
                p_vendor: g.p_vendor.as_str().into(),
                p_model: g.p_model.as_str().into(),
                host_group: Some(gi as u32),
                ..Default::default()
            };
            let first = hosts.len();
            for slot in 0..g.count {
                let index = hosts.len() as u32;
                let mut hrng = rng::stream(seed, StreamKind::Host, index as u64);
                // Population draws come first, in a fixed order, from the host's own
                // stream: adding a host never changes another host's draws.
                let p_fpops = g.p_fpops.sample(&mut hrng).max(1.0);
                let joined = (g.arrival.sample(&mut hrng).max(0.0).ceil() as Time).min(end);
                let leave_at = g.lifetime.as_ref().map_or(Time::MAX, |d| {
                    joined.saturating_add(d.sample(&mut hrng).max(1.0).ceil() as Time)
                });
                // Availability has its own stream, so the periods a host is on do
                // not shift with what it draws for its jobs.
                let mut arng = rng::stream(seed, StreamKind::HostAvailability, index as u64);
                let avail = Availability::new(&ctx.avail, slot, joined, &mut arng);
                let states = attached
                    .iter()
                    .map(|&(project, share)| ProjectState {
                        project,
                        resource_share: share,
                        ..Default::default()
                    })
                    .collect();
                queue.push(joined, tie_class[0], Event::Host(index));
                let mut host = ClientHost::new(
                    gi as u16,
                    index,
                    g.p_ncpus.max(1) as u32,
                    p_fpops,
                    hrng,
                    arng,
                    states,
                    avail,
                    joined,
                );
                host.leave_at = leave_at;
                host.truth = truth::host_truth(seed, index, g, classes[gi]);
                host.coprocs = draw_coprocs(g, seed, index);
                if let Some(start) = &g.start {
                    // A client with a state has contacted its projects before: each
                    // knows it (no initial RPC, spec client §2.9 step 3).
                    for ps in &mut host.projects {
                        let p = &mut projects[ps.project as usize];
                        ps.hostid = link::first_contact(
                            p,
                            row.clone(),
                            seed,
                            index as u64,
                            ps.project as usize,
                            p_fpops,
                        );
                        p.db.host_mut(ps.hostid).coprocs = host.coprocs.clone();
                    }
                    start.apply(&mut host, joined as f64, project_index);
                    for sj in &start.job {
                        let pw = project_index(if sj.project.is_empty() {
                            &g.project
                        } else {
                            &sj.project
                        });
                        let Some(pi) = host.projects.iter().position(|ps| ps.project == pw) else {
                            continue;
                        };
                        let p = &mut projects[pw as usize];
                        let deadline = sj.report_deadline.get();
                        // Checked by scenario validation.
                        let appid = p.cfg.app_id(&sj.app).unwrap_or(1);
                        let Some(job) = scheduler::sent_before_start(
                            p,
                            appid,
                            joined,
                            host.projects[pi].hostid,
                            deadline,
                        ) else {
                            continue;
                        };
                        sj.enqueue(&mut host, pi, &job, joined, ctx.cfg.policy);
                    }
                }
                hosts.push(Box::new(host));
            }
            groups.push(HostGroupRt {
                name: g.name.clone(),
                ctx,
                row,
                first,
            });
        }

        // Periodic daemon passes start at time 0.
        for (pi, p) in projects.iter().enumerate() {
            let d = &p.cfg.daemons;
            for (daemon, period) in [
                (Daemon::Transitioner, d.transitioner),
                (Daemon::Validator, d.validator),
                (Daemon::Assimilator, d.assimilator),
                (Daemon::FileDeleter, d.file_deleter),
                (Daemon::DbPurge, d.db_purge),
                (Daemon::Feeder, d.feeder),
                (Daemon::WorkGenerator, d.work_generator),
            ] {
                if period.get() > 0 {
                    let class = tie_class[daemon_index(daemon)];
                    queue.push(
                        0,
                        class,
                        Event::DaemonPass {
                            project: pi as u16,
                            daemon,
                        },
                    );
                }
            }
        }
        for (i, ev) in scenario.event.iter().enumerate() {
            queue.push(
                ev.at.get(),
                script_class(ev, &tie_class),
                Event::Script(i as u32),
            );
        }
        for (i, ex) in scenario.expect.iter().enumerate() {
            if let Some(at) = ex.at {
                queue.push(at.get(), CLASS_EXPECT, Event::Expect(i as u32));
            }
        }
        queue.push(end, CLASS_END, Event::End);
        if !opts.no_metrics {
            queue.push(0, CLASS_SAMPLE, Event::Sample(0));
        }

        let check = opts.check_invariants || scenario.simulation.check_invariants;
        let host_rows = groups.iter().map(|g: &HostGroupRt| g.row.clone()).collect();
        let backend = Backend::new(projects, recorder, check, host_rows, seed);
        Self {
            scenario,
            backend,
            queue,
            hosts,
            groups,
            named,
            end,
            tie_class,
            started: false,
            expect_failures: Vec::new(),
        }
    }
}

/// The GPUs of host `index` of group `g`: each type's peak FLOPS drawn, in the
/// group's order, from the host's own coprocessor stream
/// ([`StreamKind::HostCoproc`]), so that CPU-only hosts draw nothing new and every
/// other draw stays as it was.
fn draw_coprocs(g: &crate::scenario::HostGroup, seed: u64, index: u32) -> Box<[Coproc]> {
    if g.coproc.is_empty() {
        return Box::default();
    }
    let mut crng = rng::stream(seed, StreamKind::HostCoproc, index as u64);
    g.coproc
        .iter()
        .map(|c| Coproc {
            kind: c.kind.proc_type(),
            count: c.count,
            peak_flops: c.peak_flops.sample(&mut crng).max(1.0),
        })
        .collect()
}

/// The availability model of a host group (spec client §3.5, §5.3): a trace, explicit
/// on/off periods, or the emulator's alternating process driven by `on_frac`; the
/// time statistics are kept by the rule of the group's client `policy`.
fn avail_spec(g: &crate::scenario::HostGroup, policy: crate::client::config::Policy) -> AvailSpec {
    use crate::client::availability::OnOff;
    let on_off = if let Some(t) = &g.trace_data.0 {
        OnOff::Trace(Arc::clone(t))
    } else if let (Some(on), Some(off)) = (&g.on_period, &g.off_period) {
        OnOff::Periods { on: *on, off: *off }
    } else if g.on_frac < 1.0 {
        OnOff::Process {
            on_frac: g.on_frac,
            lambda: g.on_lambda.get() as f64,
        }
    } else {
        OnOff::Always
    };
    AvailSpec {
        on_off,
        active: (g.active_frac, g.active_lambda.get() as f64),
        connected: (g.connected_frac, g.connected_lambda.get() as f64),
        time_stats: crate::client::availability::TimeStatsRule::of(policy),
    }
}
