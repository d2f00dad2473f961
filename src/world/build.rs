//! Building the world from a resolved [`Plan`]: its projects, named hosts, host
//! groups and the first events of the queue. Every draw a host makes here comes from
//! its own streams, in a fixed order, so adding a host never changes another's.

use super::link::{self, Backend};
use super::{
    CLASS_END, CLASS_EXPECT, CLASS_SAMPLE, Event, HostGroupRt, Recorder, RunOptions, World,
};
use crate::client::availability::Availability;
use crate::client::background::{BACKGROUND, HostExtra, HostPrefs};
use crate::client::config::Policy;
use crate::client::host::{ClientHost, HostXfer, ProjectState, TaskState, TimeStats};
use crate::client::scripted::ScriptedHost;
use crate::client::truth;
use crate::engine::rng;
use crate::engine::{EventQueue, Time};
use crate::scenario::Daemon;
use crate::scenario::plan::HostsPlan;
use crate::scenario::plan::{GroupPlan, Plan, StartJobPlan, StartPlan};
use crate::server::db::HavRow;
use crate::server::resource::{CPU, Coproc};
use crate::server::scheduler::{self, Job};
use crate::server::{APP_VERSION_ID, Project, downtime};
use crate::streams::StreamKind;
use rand::RngExt;
use std::sync::Arc;

impl<R: Recorder> World<R> {
    /// Builds the world of a resolved scenario. `recorder` hears of every row
    /// finalised as the run goes.
    pub fn new(plan: Plan, opts: &RunOptions, recorder: R) -> Self {
        let seed = plan.seed;
        let audit = recorder.wants_transitions() || opts.check_invariants;
        let mut projects: Vec<Project> = (plan.projects.iter().enumerate())
            .map(|(i, p)| Project::new(i, &p.name, p.cfg.clone(), seed, audit))
            .collect();
        let end = plan.end;
        for p in &mut projects {
            downtime::install(p, end);
        }
        let named = named_hosts(&plan, &mut projects);
        let host_class = plan.tie_class_of(Daemon::Scheduler);
        let mut queue = EventQueue::new();
        // Sized once: a million hosts never pay for a doubled vector.
        let mut hosts = Vec::with_capacity(plan.host_count());
        let mut groups = Vec::new();
        let mut imported = Vec::with_capacity(plan.groups.len());
        for (gi, g) in plan.groups.iter().enumerate() {
            let first = hosts.len();
            // The record of each host of a group with a host export: 4 bytes a host,
            // for that group only.
            let mut records = Vec::with_capacity(if g.hosts.is_some() {
                g.count as usize
            } else {
                0
            });
            for slot in 0..g.count {
                let index = hosts.len() as u32;
                let host = match &g.hosts {
                    Some(hp) => {
                        let k = record_of(hp, slot, index, seed);
                        records.push(k);
                        imported_host(g, hp, k, gi, slot, index, seed, end)
                    }
                    None => group_host(g, gi, slot, index, seed, end, &mut projects),
                };
                queue.push(host.joined, host_class, Event::Host(index));
                hosts.push(Box::new(host));
            }
            imported.push(g.hosts.as_ref().map(|hp| {
                let table = Arc::clone(&hp.table);
                link::ImportedRows::new(table, first as u32, records.into_boxed_slice())
            }));
            groups.push(HostGroupRt {
                name: g.name.clone(),
                ctx: g.ctx.clone(),
                first,
            });
        }

        // Periodic daemon passes start at time 0.
        for (pi, p) in projects.iter().enumerate() {
            // In `Daemon::ALL`'s order, which the scheduler (period 0) leads.
            for daemon in Daemon::ALL {
                if super::configured_period(p, daemon) > 0 {
                    let project = pi as u16;
                    let ev = Event::DaemonPass {
                        project,
                        daemon,
                        generation: 0,
                    };
                    queue.push(0, plan.tie_class_of(daemon), ev);
                }
            }
        }
        for (i, ev) in plan.events.iter().enumerate() {
            queue.push(ev.at, ev.class, Event::Script(i as u32));
        }
        for (i, ex) in plan.expects.iter().enumerate() {
            if let Some(at) = ex.at {
                queue.push(at, CLASS_EXPECT, Event::Expect(i as u32));
            }
        }
        queue.push(end, CLASS_END, Event::End);
        if !opts.no_metrics {
            queue.push(0, CLASS_SAMPLE, Event::Sample(0));
        }

        let check = opts.check_invariants || plan.check_invariants;
        let host_rows = plan.groups.iter().map(|g| g.row.clone()).collect();
        let os_mix = plan.groups.iter().map(|g| g.os_mix.clone()).collect();
        let mut backend = Backend::new(projects, recorder, check, host_rows, os_mix, seed);
        backend.new_hosts.imported = imported;
        if let Some(files) = &plan.files {
            let net = super::network::Net::new(files);
            // A data server's outages cut the transfers it carries.
            for (pi, s) in net.servers.iter().enumerate() {
                for &(start, _) in s.iter().flat_map(|d| &d.server.outages) {
                    if start <= end {
                        queue.push(start, host_class, Event::DataServerDown(pi as u16));
                    }
                }
            }
            backend.net = Some(net);
            backend.recorder.files_enabled();
            for (gi, g) in plan.groups.iter().enumerate() {
                let first = groups[gi].first;
                for (slot, h) in hosts[first..first + g.count as usize]
                    .iter_mut()
                    .enumerate()
                {
                    let cap = host_links(g, slot as u32, h.index, seed);
                    h.xfer = Some(Box::new(HostXfer::new(
                        cap,
                        h.projects.len(),
                        seed,
                        h.index,
                    )));
                }
            }
        }
        // A transfer's end or an RPC's answer wakes its host at once, so the hosts'
        // own events may go stale: each host's current one is tracked.
        let any_web = backend.web.iter().any(Option::is_some);
        let web_at = if any_web {
            vec![Time::MAX; backend.web.len()]
        } else {
            Vec::new()
        };
        for (pi, w) in backend.web.iter().enumerate() {
            if let Some(w) = w {
                backend
                    .recorder
                    .scheduler_enabled(pi, w.capacity().processes);
            }
        }
        let host_wake_at = if backend.net.is_some() || any_web {
            hosts.iter().map(|h| h.joined).collect()
        } else {
            Vec::new()
        };
        // Idle daemons sleep (`daemons`), unless scripted events change projects
        // outside the lattice, or a daemon that comes before the scheduler at equal
        // times would deliver a run's finished transfers before the `Net` event of
        // its second does.
        let daemon_before_scheduler = (plan.tie_class.iter()).any(|&c| c < plan.tie_class[0]);
        let skip = !opts.every_daemon_pass
            && plan.events.is_empty()
            && !(plan.files.is_some() && daemon_before_scheduler);
        let mut world = Self {
            backend,
            queue,
            hosts,
            groups,
            named,
            end,
            tie_class: plan.tie_class,
            sample_interval: plan.sample_interval,
            events: plan.events,
            expects: plan.expects,
            started: false,
            expect_failures: Vec::new(),
            clocks: Default::default(),
            host_wake_at,
            web_wake_at: web_at,
        };
        world.init_clocks(skip);
        world
    }
}

/// The named hosts, in file order, each with its host row in its project.
fn named_hosts(plan: &Plan, projects: &mut [Project]) -> Vec<ScriptedHost> {
    let seed = plan.seed;
    let mut named = Vec::new();
    for h in &plan.named {
        let pi = h.project;
        let p = &mut projects[pi as usize];
        let id = p.db.hosts.next_id();
        let mut attrs = h.row.clone();
        attrs.userid = h.userid.unwrap_or(id.0);
        let day = h.day_offset.or(p.cfg.pin.day_offset).unwrap_or_else(|| {
            rng::stream(seed, StreamKind::Host, id.0 as u64 ^ (pi as u64) << 32).random()
        });
        let hostid = link::add_host(p, attrs, day);
        if let Some((consecutive_valid, max_jobs_per_day, n_jobs_today)) = h.hav {
            p.db.host_mut(hostid).havs.push(HavRow {
                app_version_id: APP_VERSION_ID,
                max_jobs_per_day,
                n_jobs_today,
                consecutive_valid,
                ..Default::default()
            });
        }
        named.push(ScriptedHost {
            name: h.name.clone(),
            project: pi,
            hostid,
            holds: Vec::new(),
            last_reply: None,
            rpcs_in_flight: 0,
        });
    }
    named
}

/// Host `slot` of group `g` (number `gi`), global index `index`, as it joins.
fn group_host(
    g: &GroupPlan,
    gi: usize,
    slot: u32,
    index: u32,
    seed: u64,
    end: Time,
    projects: &mut [Project],
) -> ClientHost {
    let mut hrng = rng::stream(seed, StreamKind::Host, index as u64);
    // Population draws come first, in a fixed order, from the host's own stream:
    // adding a host never changes another host's draws.
    let p_fpops = g.p_fpops.sample(&mut hrng).max(1.0);
    let joined = (g.arrival.sample(&mut hrng).max(0.0).ceil() as Time).min(end);
    let leave_at = g.lifetime.as_ref().map_or(Time::MAX, |d| {
        joined.saturating_add(d.sample(&mut hrng).max(1.0).ceil() as Time)
    });
    let (avail, arng) = join_availability(g, seed, (slot, index), joined, None);
    // Hardware drawn per host has its own stream too, used only when asked for.
    let mut hw = (g.ncpus_dist.is_some()
        || g.coprocs
            .iter()
            .any(|c| c.count_dist.is_some() || c.probability < 1.0))
    .then(|| rng::stream(seed, StreamKind::HostHardware, index as u64));
    let ncpus = match (&g.ncpus_dist, &mut hw) {
        (Some(d), Some(r)) => whole(d.sample(r), 1),
        _ => g.p_ncpus,
    };
    let body = Body {
        ncpus,
        p_fpops,
        joined,
        leave_at,
    };
    let mut host = attach(g, gi, index, seed, body, (hrng, arng), avail);
    host.coprocs = draw_coprocs(g, seed, index, hw.as_mut());
    if let Some(start) = &g.start {
        // A client with a state has contacted its projects before: each knows it
        // (no initial RPC, spec client §2.9 step 3).
        for ps in &mut host.projects {
            let p = &mut projects[ps.project as usize];
            let mut row = g.row.clone();
            row.p_ncpus = host.ncpus as i32; // drawn per host, or the group's
            let pi = ps.project as usize;
            let os = g.os_mix.as_deref();
            ps.hostid = link::first_contact(p, row, seed, index as u64, pi, p_fpops, os);
            p.db.host_mut(ps.hostid).coprocs = host.coprocs.clone();
        }
        apply_start(start, &mut host, joined as f64);
        for sj in &start.jobs {
            let Some(pi) = host.projects.iter().position(|ps| ps.project == sj.project) else {
                continue; // the group is not attached to it: refused when loaded
            };
            let p = &mut projects[sj.project as usize];
            let hostid = host.projects[pi].hostid;
            let sent =
                scheduler::sent_before_start(p, sj.appid, joined, hostid, sj.report_deadline);
            if let Some(job) = sent {
                enqueue_start_job(sj, &mut host, pi, &job, joined, g.ctx.cfg.policy);
            }
        }
    }
    give_extra(g, seed, index, &mut host);
    host
}

/// A drawn count: rounded, at least `min`, at most `u32::MAX` (NaN: `min`).
fn whole(x: f64, min: u32) -> u32 {
    if x.is_nan() {
        min
    } else {
        x.round().clamp(min as f64, u32::MAX as f64) as u32
    }
}

/// Gives `host` its own preferences and its background projects, if its group has
/// either: the preferences drawn from the host's preferences stream
/// ([`StreamKind::HostPrefs`]), the background projects' count and shares from its
/// background stream ([`StreamKind::HostBackground`]), which then draws their jobs.
/// A group with neither draws nothing and its hosts carry no extra state, so every
/// other draw and output stays as it was. The background projects come after the
/// scenario's projects in the host's list: a starting state never names them.
fn give_extra(g: &GroupPlan, seed: u64, index: u32, host: &mut ClientHost) {
    let bg = g.ctx.behaviour.background.as_ref();
    if bg.is_none() && g.prefs.is_none() {
        return;
    }
    let prefs = g.prefs.as_ref().map_or_else(HostPrefs::default, |d| {
        d.draw(&mut rng::stream(seed, StreamKind::HostPrefs, index as u64))
    });
    let mut bg_rng = rng::stream(seed, StreamKind::HostBackground, index as u64);
    if let Some(b) = bg {
        let mut shares = Vec::new();
        b.shares(&mut bg_rng, &mut shares);
        host.projects.reserve_exact(shares.len());
        host.projects
            .extend(shares.iter().map(|&share| ProjectState {
                project: BACKGROUND,
                resource_share: share,
                ..Default::default()
            }));
    }
    host.set_extra(HostExtra { prefs, bg_rng });
}

/// What a host of a group is made of, whether drawn or a record of a host export.
struct Body {
    ncpus: u32,
    p_fpops: f64,
    joined: Time,
    leave_at: Time,
}

/// Host `index` of group `g` (number `gi`) with `body`, its host and availability
/// streams and availability: attached to the group's projects with their shares, and
/// with its own error and wrong-result probabilities.
fn attach(
    g: &GroupPlan,
    gi: usize,
    index: u32,
    seed: u64,
    body: Body,
    (hrng, arng): (rng::SimRng, rng::SimRng),
    avail: Availability,
) -> ClientHost {
    let states = (g.attached.iter())
        .map(|&(project, share)| ProjectState {
            project,
            resource_share: share,
            ..Default::default()
        })
        .collect();
    let (ncpus, p_fpops, joined) = (body.ncpus, body.p_fpops, body.joined);
    let mut host = ClientHost::new(
        gi as u16, index, ncpus, p_fpops, hrng, arng, states, avail, joined,
    );
    host.leave_at = body.leave_at;
    host.truth = truth::host_truth(
        seed,
        index,
        &g.error_prob,
        &g.wrong_result_prob,
        g.error_class,
    );
    host
}

/// The availability of host `slot` (global `index`) of group `g`, joining at
/// `joined`, and the availability stream it goes on drawing from. Availability has
/// its own stream, so the periods a host is on do not shift with what it draws for
/// its jobs; a class and own fractions come from a stream of their own
/// ([`StreamKind::HostAvailTraits`]), only in a group that asks for them.
///
/// `utc_offset` is the host's own time zone (a host export's record), which a daily
/// model uses instead of drawing one.
fn join_availability(
    g: &GroupPlan,
    seed: u64,
    (slot, index): (u32, u32),
    joined: Time,
    utc_offset: Option<i32>,
) -> (Availability, rng::SimRng) {
    let mut arng = rng::stream(seed, StreamKind::HostAvailability, index as u64);
    let spec = &g.ctx.avail;
    let mut traits = if spec.has_traits() {
        let mut trng = rng::stream(seed, StreamKind::HostAvailTraits, index as u64);
        spec.draw_traits(&mut trng)
    } else {
        spec.typical_traits()
    };
    traits.utc_offset = utc_offset;
    let avail = Availability::join(spec, traits, slot, joined, &mut arng);
    (avail, arng)
}

/// The GPUs of host `index` of group `g`: each type's peak FLOPS drawn, in the
/// group's order, from the host's own coprocessor stream
/// ([`StreamKind::HostCoproc`]), so that CPU-only hosts draw nothing new and every
/// other draw stays as it was. A type with a `probability` below 1 or a count
/// distribution draws, from the hardware stream `hw`, whether the host has it (`U <
/// probability`) and then how many (rounded, at least 0); a host with none of a type
/// does not list it. Its peak FLOPS is drawn all the same, so that the other types'
/// speeds do not move.
fn draw_coprocs(
    g: &GroupPlan,
    seed: u64,
    index: u32,
    mut hw: Option<&mut rng::SimRng>,
) -> Box<[Coproc]> {
    if g.coprocs.is_empty() {
        return Box::default();
    }
    let mut crng = rng::stream(seed, StreamKind::HostCoproc, index as u64);
    (g.coprocs.iter())
        .filter_map(|c| {
            let peak_flops = c.peak_flops.sample(&mut crng).max(1.0);
            let mut count = c.count;
            if let Some(r) = hw.as_deref_mut() {
                if c.probability < 1.0 && r.random::<f64>() >= c.probability {
                    count = 0;
                } else if let Some(d) = &c.count_dist {
                    count = whole(d.sample(r), 0);
                }
            }
            (count > 0).then_some(Coproc {
                kind: c.kind,
                count,
                peak_flops,
            })
        })
        .collect()
}

/// Gives `host`, just built and joining at `joined`, its starting state
/// (`[host_group.start]`): time statistics, and per attached project REC,
/// `exp_avg_cpu` and backoffs, each only where the scenario gives it.
fn apply_start(start: &StartPlan, host: &mut ClientHost, joined: f64) {
    let ts = host.avail.time_stats();
    if start.on_frac.is_some() || start.active_frac.is_some() || start.connected_frac.is_some() {
        let ts = TimeStats {
            on_frac: start.on_frac.unwrap_or(ts.on_frac),
            active_frac: start.active_frac.unwrap_or(ts.active_frac),
            connected_frac: start.connected_frac.unwrap_or(ts.connected_frac),
        };
        host.avail.set_time_stats(ts);
        host.time_stats = ts;
    }
    for (pi, s) in &start.projects {
        let Some(p) = host.projects.iter_mut().find(|p| p.project == *pi) else {
            continue; // the group is not attached to it: refused when loaded
        };
        if let Some(rec) = s.rec {
            p.modern.rec = rec;
            p.modern.rec_time = joined;
        }
        if let Some(x) = s.exp_avg_cpu {
            p.seed.exp_avg_cpu = x;
            p.seed.exp_avg_mod_time = joined;
        }
        if let Some(t) = s.min_rpc_time {
            p.min_rpc_time = t as f64;
        }
        if let Some(n) = s.nrpc_failures {
            p.nrpc_failures = n;
        }
        if let Some(t) = s.cpu_backoff_time {
            p.modern.backoff_time[CPU] = t as f64;
        }
        if let Some(t) = s.cpu_backoff_interval {
            p.modern.backoff_interval[CPU] = t as f64;
        }
    }
}

/// Puts `job`, which project `pi` sent at `now`, in `host`'s queue with the starting
/// job's progress: computed up to its last checkpoint and out of memory (the client
/// was not running), so it resumes from there (spec client §3.4).
fn enqueue_start_job(
    sj: &StartJobPlan,
    host: &mut ClientHost,
    pi: usize,
    job: &Job,
    now: Time,
    policy: Policy,
) {
    host.receive(pi, job, now, policy);
    let Some(j) = host.jobs.last_mut() else {
        return;
    };
    let f = sj.fraction_done;
    if f > 0.0 {
        j.flops_left = j.true_fpops * (1.0 - f);
        j.checkpoint_flops_left = j.flops_left;
        j.cpu_time = j.true_fpops * f / host.p_fpops;
        j.checkpoint_cpu_time = j.cpu_time;
        j.peak_flop_count = j.true_fpops * f;
        j.state = TaskState::Quit;
    }
}

/// Host `index`'s links, bytes/s per direction (spec client §8.2): drawn from the
/// group's `network` distributions on the host's own stream, else an imported host's
/// `n_bwdown`/`n_bwup` when known (> 0), else unlimited; then limited by the user's
/// `max_bytes_sec_*` when set.
fn host_links(g: &GroupPlan, slot: u32, index: u32, seed: u64) -> [f64; 2] {
    let mut rng = rng::stream(seed, StreamKind::HostLinks, index as u64);
    let record = g.hosts.as_ref().map(|hp| {
        let k = record_of(hp, slot, index, seed);
        let r = &hp.table.records[k as usize];
        [r.n_bwdown as f64, r.n_bwup as f64]
    });
    let l = &g.links;
    let mut cap = [f64::INFINITY; 2];
    for (d, (dist, limit)) in [
        (l.download, l.max_bytes_sec_down),
        (l.upload, l.max_bytes_sec_up),
    ]
    .into_iter()
    .enumerate()
    {
        cap[d] = match (dist, record) {
            (Some(dist), _) => dist.sample(&mut rng).max(1.0),
            (None, Some(r)) if r[d] > 0.0 => r[d],
            _ => f64::INFINITY,
        };
        if limit > 0.0 {
            cap[d] = cap[d].min(limit);
        }
    }
    cap
}

/// The record of a host export that host `slot` (global `index`) of a group is:
/// the slot's record in a replay, else one drawn uniformly from the host's own
/// record stream ([`StreamKind::HostRecord`]), so that no other draw moves.
fn record_of(hp: &HostsPlan, slot: u32, index: u32, seed: u64) -> u32 {
    match &hp.replay {
        Some((records, _)) => records[slot as usize],
        None => {
            let n = hp.table.records.len() as u32;
            rng::stream(seed, StreamKind::HostRecord, index as u64).random_range(0..n)
        }
    }
}

/// Host `slot` of group `g`, which is record `k` of the group's host export: its
/// CPUs, speed and GPUs are the record's (docs/population.md, "A project's own
/// hosts"). A replayed host joins at its `create_time` (at 0 if created before the
/// run) and leaves at its `rpc_time`, both relative to the run's start; a drawn one
/// joins as the group's `arrival` says and stays `rpc_time − create_time`.
#[allow(clippy::too_many_arguments)]
fn imported_host(
    g: &GroupPlan,
    hp: &HostsPlan,
    k: u32,
    gi: usize,
    slot: u32,
    index: u32,
    seed: u64,
    end: Time,
) -> ClientHost {
    let r = &hp.table.records[k as usize];
    let mut hrng = rng::stream(seed, StreamKind::Host, index as u64);
    let (joined, leave_at) = match &hp.replay {
        Some((_, start)) => {
            let joined = r.create_time.saturating_sub(*start).clamp(0, end);
            (joined, r.rpc_time.saturating_sub(*start).max(joined + 1))
        }
        None => {
            let joined = (g.arrival.sample(&mut hrng).max(0.0).ceil() as Time).min(end);
            (
                joined,
                joined.saturating_add(r.rpc_time.saturating_sub(r.create_time).max(1)),
            )
        }
    };
    let (avail, arng) = join_availability(g, seed, (slot, index), joined, Some(r.timezone));
    let body = Body {
        ncpus: r.ncpus,
        p_fpops: r.p_fpops,
        joined,
        leave_at,
    };
    let mut host = attach(g, gi, index, seed, body, (hrng, arng), avail);
    host.coprocs = record_coprocs(hp, r.gpus, seed, index);
    give_extra(g, seed, index, &mut host);
    host
}

/// The GPUs of a record, each type's peak FLOPS drawn from the group's `coproc`
/// entry of that type on the host's own coprocessor stream
/// ([`StreamKind::HostCoproc`]).
fn record_coprocs(hp: &HostsPlan, gpus: [u8; 3], seed: u64, index: u32) -> Box<[Coproc]> {
    if gpus == [0; 3] || hp.gpu_peak_flops.iter().all(Option::is_none) {
        return Box::default();
    }
    let mut crng = rng::stream(seed, StreamKind::HostCoproc, index as u64);
    (crate::scenario::import::hosts::GPU_TYPES.iter().zip(gpus))
        .zip(&hp.gpu_peak_flops)
        // A type without its `coproc` entry is left out: the loader refuses one
        // under the modern client, and the seed client runs CPU jobs only.
        .filter_map(|(((_, kind), n), peak)| {
            let peak = peak.as_ref().filter(|_| n > 0)?;
            Some(Coproc {
                kind: *kind,
                count: n.into(),
                peak_flops: peak.sample(&mut crng).max(1.0),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::dist::Dist;
    use crate::scenario::plan::CoprocPlan;
    use crate::server::resource::ProcType;

    #[test]
    fn drawn_counts_are_rounded_and_clamped() {
        assert_eq!(whole(4.49, 1), 4);
        assert_eq!(whole(4.5, 1), 5);
        assert_eq!(whole(0.2, 1), 1);
        assert_eq!(whole(-3.0, 0), 0);
        assert_eq!(whole(f64::NAN, 1), 1);
        assert_eq!(whole(1e12, 1), u32::MAX);
    }

    #[test]
    fn gpus_per_host_follow_their_probability() {
        let plan = crate::scenario::load::load_str(
            "[project.main]\n[client]\npolicy = \"modern_rec\"\n[[host_group]]\ncount = 1\n",
            "t.toml",
            &[],
            None,
        )
        .unwrap()
        .plan;
        let mut g = plan.groups[0].clone();
        let kind = ProcType::Nvidia;
        g.coprocs = vec![CoprocPlan {
            kind,
            count: 1,
            count_dist: Some(Dist::fixed(3.0)),
            probability: 0.25,
            peak_flops: Dist::fixed(1e12),
        }];
        let n = 4000;
        let mut with = 0;
        for index in 0..n {
            let mut hw = rng::stream(9, StreamKind::HostHardware, index as u64);
            let c = draw_coprocs(&g, 9, index, Some(&mut hw));
            if let Some(c) = c.first() {
                assert_eq!((c.count, c.peak_flops), (3, 1e12));
                with += 1;
            }
        }
        assert!((with as f64 / n as f64 - 0.25).abs() < 0.03, "{with}");
        // Without a hardware stream (probability 1, a fixed count) every host has it.
        g.coprocs[0].probability = 1.0;
        g.coprocs[0].count_dist = None;
        assert_eq!(draw_coprocs(&g, 9, 0, None)[0].count, 1);
    }

    /// A host's links (spec client §8.2): the group's draw, capped by the user's
    /// limit; without a draw, an imported record's measured `n_bwdown`/`n_bwup`;
    /// otherwise unlimited.
    #[test]
    fn host_links_come_from_the_group_the_record_or_nowhere() {
        let load = |extra: &str| {
            crate::scenario::load::load_str(
                &format!("[project.main]\n[[host_group]]\ncount = 1\n{extra}"),
                "t.toml",
                &[],
                None,
            )
            .unwrap()
            .plan
        };
        let g = &load("network = { download = 2e6, max_bytes_sec_up = 5e5 }\n").groups[0];
        assert_eq!(host_links(g, 0, 0, 1), [2e6, 5e5]);
        let g = &load("network = { download = 2e6, max_bytes_sec_down = 1e6 }\n").groups[0];
        assert_eq!(host_links(g, 0, 0, 1), [1e6, f64::INFINITY]);
        let g = &load("").groups[0];
        assert_eq!(host_links(g, 0, 0, 1), [f64::INFINITY; 2]);
        // The first record of the shipped host export: its measured bandwidths.
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/project-hosts.toml");
        let plan = crate::scenario::load::load(&path, &[], None).unwrap().plan;
        let g = &plan.groups[0];
        let hp = g.hosts.as_ref().unwrap();
        let r = &hp.table.records[record_of(hp, 0, 0, plan.seed) as usize];
        assert!(r.n_bwdown > 0.0 && r.n_bwup > 0.0);
        assert_eq!(
            host_links(g, 0, 0, plan.seed),
            [r.n_bwdown as f64, r.n_bwup as f64]
        );
    }
}
