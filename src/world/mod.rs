//! The world: projects, hosts and the event queue, and the one `dispatch` that moves
//! the simulation forward.
//!
//! Events are a closed enum (no boxing, no allocation per event). Ties at one
//! timestamp are broken by the scenario's `tie_order` (spec backend §2.0), then by
//! insertion order, so a run is a pure function of the scenario and its seed.
//!
//! The world knows nothing of the outputs: it hands every final row, audit row, RPC
//! outcome and gauge sample to a [`Recorder`], which [`crate::stats`] implements.

mod error;
mod recorder;

pub use error::RunError;
pub use recorder::Recorder;

use crate::client::availability::{AvailSpec, Availability};
use crate::client::config::ClientConfig;
use crate::client::host::{
    ClientHost, GroupCtx, HostBehaviour, ProjectState, RpcCall, RpcScratch, RpcStatus, ServerLink,
};
use crate::client::scripted::ScriptedHost;
use crate::client::truth;
use crate::engine::rng::{self, StreamKind};
use crate::engine::{EventQueue, Time};
use crate::scenario::validate::parse_wu_name;
use crate::scenario::{Daemon, ReportOutcome, ScenarioFile, ScriptEvent};
use crate::server::config::OutageKind;
use crate::server::db::{HavRow, HostRow, OutputStatus};
use crate::server::invariants::InvariantChecker;
use crate::server::resource::{Coproc, N_RSC};
use crate::server::scheduler::{self, Reply, ReportedJob, Request};
use crate::server::types::*;
use crate::server::{
    APP_VERSION_ID, Project, assimilator, db_purge, feeder, file_deleter, lookup_result,
    transitioner, validator, work_generator,
};
use rand::RngExt;
use std::sync::Arc;

/// Tie class of server-state samples: after every actor at the same time.
const CLASS_SAMPLE: u8 = 199;
/// Tie class of expectation checks: after everything else at the same time.
const CLASS_EXPECT: u8 = 200;
/// Tie class of the end-of-run marker.
const CLASS_END: u8 = 255;

/// Everything that can happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A periodic daemon pass; it reschedules itself.
    DaemonPass { project: u16, daemon: Daemon },
    /// Scripted event number `i` of the scenario.
    Script(u32),
    /// Simulated host `i` wakes up: its one pending event (spec client §7; see
    /// [`ClientHost`]).
    Host(u32),
    /// Expectation number `i` is checked.
    Expect(u32),
    /// The server state of every project is sampled for bucket `k` of
    /// `timeseries.csv`.
    Sample(u32),
    /// End of the run.
    End,
}

/// Options of a run that do not come from the scenario.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub check_invariants: bool,
    /// Collect no time series, gauges or histograms (`bench --no-metrics`), to
    /// measure what they cost; the tallies of `summary.json` are kept.
    pub no_metrics: bool,
}

impl RunOptions {
    /// Every invariant checked after every step (`--check-invariants`).
    pub const CHECKED: Self = Self {
        check_invariants: true,
        no_metrics: false,
    };
}

/// How often a progress observer hears from [`World::run_with`], in events: a power
/// of two, so the test is a mask of the event counter. 2^14 events take a few
/// milliseconds on a typical scenario and under a second with `--check-invariants`,
/// so a bar moves smoothly while the observer is called too rarely to cost anything.
pub const PROGRESS_EVERY: u64 = 1 << 14;

/// Where a run is, as told to a progress observer ([`World::run_with`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Simulated time of the last event processed, s.
    pub now: Time,
    /// Simulated end of the run, s.
    pub end: Time,
    /// Events processed so far.
    pub events: u64,
}

/// Counters reported at the end of a run.
#[derive(Clone, Debug, Default)]
pub struct RunCounters {
    pub events: u64,
    pub rpcs: u64,
    /// Scheduler RPCs that failed because of an outage.
    pub rpcs_failed: u64,
    pub daemon_passes: u64,
    /// `[[expect]]` entries checked (each once, at its time or at the end).
    pub expectations_checked: u64,
}

pub struct World<R> {
    pub scenario: ScenarioFile,
    pub projects: Vec<Project>,
    pub queue: EventQueue<Event>,
    /// Boxed, so that taking a host out of its slot for its event (the world is its
    /// server meanwhile) moves a pointer, not the host (issue 12's profile had 2–3 %
    /// of the time in those copies).
    pub hosts: Vec<Box<ClientHost>>,
    pub groups: Vec<HostGroupRt>,
    /// Index and group of the host whose event is being processed (for
    /// [`ServerLink`]: while it runs, its slot in `hosts` holds a stand-in).
    current_host: usize,
    current_group: usize,
    /// The stand-in left in a host's slot during its event.
    spare: Option<Box<ClientHost>>,
    /// An error raised inside a host's RPC, surfaced after the host event.
    pending_error: Option<RunError>,
    pub named: Vec<ScriptedHost>,
    pub counters: RunCounters,
    pub end: Time,
    tie_class: [u8; 8],
    fd_state: Vec<file_deleter::State>,
    checkers: Option<Vec<InvariantChecker>>,
    expect_failures: Vec<String>,
    reply: Reply,
    reports: Vec<ReportedJob>,
    other: Vec<ResultId>,
    /// The buffers every host's RPC is built in ([`ServerLink::take_scratch`]).
    rpc_scratch: RpcScratch,
    /// Hears of every row finalised, RPC and gauge sample.
    pub recorder: R,
}

/// A host group at run time: what its hosts share.
pub struct HostGroupRt {
    pub name: String,
    pub ctx: Arc<GroupCtx>,
    /// Attributes of the host rows the group's hosts get in each project's database.
    pub row: HostRow,
    /// Index of the group's first host in [`World::hosts`].
    pub first: usize,
}

/// What a finished run hands back: its final state, and the recorder that heard
/// the run.
pub struct Finished<R> {
    pub counters: RunCounters,
    pub hosts: Vec<Box<ClientHost>>,
    pub groups: Vec<HostGroupRt>,
    pub projects: Vec<Project>,
    pub recorder: R,
}

fn daemon_index(d: Daemon) -> usize {
    Daemon::ALL.iter().position(|x| *x == d).unwrap_or(0)
}

fn actor_of(d: Daemon) -> Actor {
    match d {
        Daemon::Scheduler => Actor::Scheduler,
        Daemon::Transitioner => Actor::Transitioner,
        Daemon::Validator => Actor::Validator,
        Daemon::Assimilator => Actor::Assimilator,
        Daemon::FileDeleter => Actor::FileDeleter,
        Daemon::DbPurge => Actor::DbPurge,
        Daemon::Feeder => Actor::Feeder,
        Daemon::WorkGenerator => Actor::WorkGenerator,
    }
}

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
            let hostid = add_host(p, attrs, day);
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
                        ps.hostid = first_contact(
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

        let checkers = (opts.check_invariants || scenario.simulation.check_invariants).then(|| {
            projects
                .iter()
                .map(|_| InvariantChecker::default())
                .collect()
        });
        let nprojects = projects.len();
        Self {
            scenario,
            projects,
            queue,
            hosts,
            groups,
            current_host: 0,
            current_group: 0,
            spare: None,
            pending_error: None,
            named,
            counters: RunCounters::default(),
            end,
            tie_class,
            fd_state: vec![file_deleter::State::default(); nprojects],
            checkers,
            expect_failures: Vec::new(),
            reply: Reply::default(),
            reports: Vec::new(),
            other: Vec::new(),
            rpc_scratch: RpcScratch::default(),
            recorder,
        }
    }

    /// Runs to the end of the scenario, then writes the rows still in the database.
    pub fn run(self) -> Result<Finished<R>, RunError> {
        self.run_with(&mut |_| {})
    }

    /// [`Self::run`], telling `progress` where the run is every [`PROGRESS_EVERY`]
    /// events and once more when the last event is done. The observer only reads a
    /// [`Progress`] copy, so the run and its outputs are the same with or without
    /// one; the event loop knows nothing of how progress is shown (the command line
    /// draws a bar, [`crate::progress`]).
    pub fn run_with(mut self, progress: &mut dyn FnMut(Progress)) -> Result<Finished<R>, RunError> {
        self.run_until_with(self.end, progress)?;
        progress(Progress {
            now: self.end,
            end: self.end,
            events: self.counters.events,
        });
        // Expectations without a time are checked at the end.
        for i in 0..self.scenario.expect.len() {
            if self.scenario.expect[i].at.is_none() {
                self.check_expect(i);
            }
        }
        if let Some(checkers) = &mut self.checkers {
            for (p, c) in self.projects.iter().zip(checkers.iter_mut()) {
                c.check_all(p, self.end).map_err(RunError::Invariant)?;
            }
        }
        if !self.expect_failures.is_empty() {
            return Err(RunError::Expectations {
                failed: std::mem::take(&mut self.expect_failures),
                checked: self.counters.expectations_checked,
            });
        }
        // Rows still live at the end, in id order.
        for (pi, p) in self.projects.iter().enumerate() {
            for (_, wu) in p.db.workunits.iter() {
                self.recorder.workunit(pi, &p.name, wu, false)?;
            }
            for (_, r) in p.db.results.iter() {
                let app = p.db.wu(r.workunitid).appid;
                self.recorder.result(pi, &p.name, app, r, false)?;
            }
        }
        // Close every host's accounting at the end of the run.
        let end = self.end;
        for h in &mut self.hosts {
            if !h.gone && h.joined <= end {
                let cfg = &self.groups[h.group as usize].ctx.cfg;
                h.advance(end, cfg);
            }
        }
        Ok(Finished {
            counters: self.counters,
            hosts: self.hosts,
            groups: self.groups,
            projects: self.projects,
            recorder: self.recorder,
        })
    }

    /// Processes every event with time ≤ `t`.
    pub fn run_until(&mut self, t: Time) -> Result<(), RunError> {
        self.run_until_with(t, &mut |_| {})
    }

    /// [`Self::run_until`] with a progress observer, called after every
    /// [`PROGRESS_EVERY`]-th event: the per-event cost is one mask of the event
    /// counter, so a run with an observer is as fast as one without.
    fn run_until_with(
        &mut self,
        t: Time,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(), RunError> {
        while let Some(next) = self.queue.peek_time() {
            if next > t {
                break;
            }
            let (now, ev) = self.queue.pop().expect("peeked");
            if ev == Event::End {
                break;
            }
            self.counters.events += 1;
            if let Some(&Event::Host(j)) = self.queue.peek_next() {
                prefetch_host(&self.hosts[j as usize]);
            }
            self.dispatch(now, ev)?;
            if self.counters.events & (PROGRESS_EVERY - 1) == 0 {
                progress(Progress {
                    now,
                    end: self.end,
                    events: self.counters.events,
                });
            }
        }
        Ok(())
    }

    fn dispatch(&mut self, now: Time, ev: Event) -> Result<(), RunError> {
        match ev {
            Event::DaemonPass { project, daemon } => {
                self.run_daemon(now, project as usize, daemon)?;
                let period = period_of(&self.projects[project as usize], daemon);
                let class = self.tie_class[daemon_index(daemon)];
                self.queue.push(now + period, class, ev);
            }
            Event::Script(i) => self.run_script(now, i as usize)?,
            Event::Host(i) => self.host_event(now, i as usize)?,
            Event::Expect(i) => self.check_expect(i as usize),
            Event::Sample(k) => {
                if self.checkers.is_some() {
                    // The O(1) counters behind the gauges equal a full recount.
                    for p in &self.projects {
                        let mut c = [0u64; 6];
                        for (_, r) in p.db.results.iter() {
                            c[r.server_state.code() as usize] += 1;
                        }
                        let wus = p.db.workunits.iter().count() as u64;
                        if let Some(m) = p.db.transition_index_error() {
                            return Err(RunError::Fatal(format!(
                                "t={now}: project {}: {m}",
                                p.name
                            )));
                        }
                        if c != p.db.result_state_counts || wus != p.db.workunits_live {
                            return Err(RunError::Fatal(format!(
                                "t={now}: project {}: state counters {:?}/{} differ from a recount {c:?}/{wus}",
                                p.name, p.db.result_state_counts, p.db.workunits_live
                            )));
                        }
                        // The post-processing lists behind the stacked workunit
                        // gauges are disjoint, so they stack into db_workunits.
                        let d = &p.db;
                        let lists = [
                            &d.assimilate_ready,
                            &d.fd_ready_wus,
                            &d.fd_error_wus,
                            &d.purge_ready,
                        ];
                        let listed: usize = lists.iter().map(|l| l.len()).sum();
                        let mut all: Vec<_> = lists.iter().flat_map(|l| l.iter()).collect();
                        all.sort_unstable();
                        all.dedup();
                        if all.len() != listed || listed as u64 > wus {
                            return Err(RunError::Fatal(format!(
                                "t={now}: project {}: the workunit post-processing lists overlap ({listed} entries, {} distinct, {wus} workunits)",
                                p.name,
                                all.len()
                            )));
                        }
                    }
                }
                for (pi, p) in self.projects.iter().enumerate() {
                    self.recorder.sample(pi, k as usize, &p.db);
                }
                let next = (k as Time + 1) * self.scenario.output.interval.get().max(1);
                if next <= self.end {
                    self.queue.push(next, CLASS_SAMPLE, Event::Sample(k + 1));
                }
            }
            Event::End => {}
        }
        Ok(())
    }

    /// One pass of a daemon of a project, followed by output and invariant checks.
    pub fn run_daemon(&mut self, now: Time, pi: usize, daemon: Daemon) -> Result<(), RunError> {
        self.counters.daemon_passes += 1;
        let p = &mut self.projects[pi];
        p.db.now = now;
        match daemon {
            Daemon::Scheduler => {}
            Daemon::Transitioner => {
                transitioner::pass(p, now);
            }
            Daemon::Validator => {
                validator::pass(p, now);
            }
            Daemon::Assimilator => {
                assimilator::pass(p, now);
            }
            Daemon::FileDeleter => {
                file_deleter::pass(p, now, &mut self.fd_state[pi]);
            }
            Daemon::DbPurge => {
                // A pass that purged more than 500 is followed at once by another.
                while db_purge::pass(p, now) > 500 {}
            }
            Daemon::Feeder => {
                feeder::pass(p, now);
            }
            Daemon::WorkGenerator => {
                work_generator::pass(p, now);
            }
        }
        self.after_step(now, pi, Some(actor_of(daemon)))
    }

    /// Writes this step's audit rows and purged rows, and checks invariants.
    fn after_step(&mut self, now: Time, pi: usize, actor: Option<Actor>) -> Result<(), RunError> {
        let p = &mut self.projects[pi];
        if let Some(f) = p.fatal.take() {
            return Err(RunError::Fatal(f));
        }
        if let Some(checkers) = &mut self.checkers {
            checkers[pi]
                .check_after_step(p, now, &p.db.audit, actor)
                .map_err(RunError::Invariant)?;
        }
        let rec = &mut self.recorder;
        rec.transitions(pi, &p.name, &p.db.audit)?;
        rec.decided(pi, &p.name, &p.decided)?;
        p.decided.clear();
        for (wu, results) in p.purged.drain(..) {
            rec.workunit(pi, &p.name, &wu, true)?;
            for r in &results {
                rec.result(pi, &p.name, wu.appid, r, true)?;
            }
        }
        p.db.audit.clear();
        Ok(())
    }

    // ----- unscripted hosts ---------------------------------------------------

    /// One event of a simulated host: the client policy runs, making RPCs through
    /// [`ServerLink`], and the host's next event is scheduled.
    fn host_event(&mut self, now: Time, i: usize) -> Result<(), RunError> {
        let ctx = Arc::clone(&self.groups[self.hosts[i].group as usize].ctx);
        // The host leaves its slot for the event (the world is its server meanwhile);
        // one stand-in is made once and reused, so the hot path builds nothing.
        let stand_in = self
            .spare
            .take()
            .unwrap_or_else(|| Box::new(placeholder_host()));
        let mut h = std::mem::replace(&mut self.hosts[i], stand_in);
        let next = if now >= h.leave_at {
            // The volunteer leaves for good: its jobs are never reported.
            h.advance(h.leave_at, &ctx.cfg);
            h.gone = true;
            Time::MAX
        } else {
            self.current_host = i;
            self.current_group = h.group as usize;
            h.wake(now, &ctx, self).min(h.leave_at)
        };
        for p in h.projects.iter_mut().filter(|p| p.backoffs_pending > 0) {
            self.recorder.backoffs(
                p.project as usize,
                now,
                p.backoffs_pending,
                p.backoff_pending_s,
            );
            p.backoffs_pending = 0;
            p.backoff_pending_s = 0.0;
        }
        if self.checkers.is_some()
            && let Some(v) = h
                .buffer_violation(&ctx.cfg)
                .or_else(|| h.time_limit_violation())
                .or_else(|| h.resource_violation(&ctx.cfg))
        {
            self.pending_error
                .get_or_insert(RunError::Client(format!("t={now}: {v}")));
        }
        self.spare = Some(std::mem::replace(&mut self.hosts[i], h));
        if next < Time::MAX && next <= self.end {
            self.queue
                .push(next, self.tie_class[0], Event::Host(i as u32));
        }
        match self.pending_error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    // ----- scripted events ----------------------------------------------------

    fn project_of(&self, name: &Option<String>) -> usize {
        match name {
            Some(n) => self.projects.iter().position(|p| &p.name == n).unwrap_or(0),
            None => 0,
        }
    }

    fn run_script(&mut self, now: Time, i: usize) -> Result<(), RunError> {
        let ev: ScriptEvent = self.scenario.event[i].clone();
        if let Some(d) = ev.daemon {
            let pi = self.project_of(&ev.project);
            if !ev.assimilate.is_empty() {
                // A pass whose handler answers as the script says (spec backend §2.6).
                let script: Vec<_> = ev
                    .assimilate
                    .iter()
                    .filter_map(|(name, &a)| parse_wu_name(name).map(|id| (id, a)))
                    .collect();
                self.counters.daemon_passes += 1;
                let p = &mut self.projects[pi];
                p.db.now = now;
                assimilator::pass_scripted(p, now, &script);
                return self.after_step(now, pi, Some(Actor::Assimilator));
            }
            return self.run_daemon(now, pi, d);
        }
        if let Some(n) = ev.create_workunits {
            let pi = self.project_of(&ev.project);
            let p = &mut self.projects[pi];
            p.db.now = now;
            // Checked by scenario validation.
            let appid = p.cfg.app_id(ev.app.as_deref().unwrap_or("")).unwrap_or(1);
            for _ in 0..n {
                work_generator::create_work(p, appid, now, Actor::WorkGenerator);
            }
            return self.after_step(now, pi, Some(Actor::WorkGenerator));
        }
        if !ev.cancel.is_empty() {
            let pi = self.project_of(&ev.project);
            let p = &mut self.projects[pi];
            p.db.now = now;
            for name in &ev.cancel {
                if let Some(id) = name.strip_prefix("wu").and_then(|s| s.parse().ok()) {
                    work_generator::cancel(p, now, id);
                }
            }
            return self.after_step(now, pi, Some(Actor::Cancel));
        }
        if let Some(name) = &ev.host {
            self.scripted_rpc(now, name, &ev)?;
        }
        Ok(())
    }

    fn scripted_rpc(&mut self, now: Time, name: &str, ev: &ScriptEvent) -> Result<(), RunError> {
        let Some(ni) = self.named.iter().position(|h| h.name == name) else {
            return Ok(());
        };
        let pi = self.named[ni].project as usize;
        let hostid = self.named[ni].hostid;
        // A lost job is gone from the client whether or not the RPC gets through.
        for lost in &ev.lost {
            let rid = lookup_result(&self.projects[pi], lost);
            self.named[ni].holds.retain(|&h| h != rid);
        }
        // During an outage the request never reaches the scheduler: a down one answers
        // with the maintenance reply (spec backend §2.9), an unreachable one not at all.
        if let Some(o) = self.projects[pi].cfg.outage_at(now) {
            self.counters.rpcs_failed += 1;
            self.named[ni].last_reply = match o.kind {
                OutageKind::Down => {
                    let mut r = Reply::default();
                    r.maintenance(o.maintenance_delay(&self.projects[pi].cfg.config));
                    Some(r)
                }
                OutageKind::Unreachable => None,
            };
            return Ok(());
        }
        self.reports.clear();
        let p = &self.projects[pi];
        for rep in &ev.report {
            let rid = lookup_result(p, &rep.result);
            self.named[ni].holds.retain(|&h| h != rid);
            let (client_state, exit_status) = match rep.outcome {
                ReportOutcome::Success => (client_state::FILES_UPLOADED, 0),
                ReportOutcome::ClientError => (
                    client_state::COMPUTE_ERROR,
                    rep.exit_status
                        .unwrap_or(crate::client::host::CLIENT_ERROR_EXIT),
                ),
                ReportOutcome::Abort => (client_state::ABORTED, exit_status::EXIT_ABORTED_VIA_GUI),
                ReportOutcome::ProjectAbort => {
                    (client_state::ABORTED, exit_status::EXIT_ABORTED_BY_PROJECT)
                }
                ReportOutcome::NoReply => continue,
            };
            let sent = p.db.results.get(rid).map_or(now, |r| r.sent_time);
            let elapsed = rep.elapsed_time.unwrap_or((now - sent) as f64);
            let output_status = match rep.output {
                crate::scenario::OutputRead::Ok => OutputStatus::Ok,
                crate::scenario::OutputRead::Unreadable => OutputStatus::Unreadable,
                crate::scenario::OutputRead::Transient => OutputStatus::TransientUntil(
                    rep.transient_until
                        .map_or(crate::engine::INT_MAX, |d| d.get())
                        .clamp(0, crate::engine::INT_MAX) as i32,
                ),
            };
            self.reports.push(ReportedJob {
                result_id: rid,
                client_state,
                exit_status,
                cpu_time: rep.cpu_time.unwrap_or(elapsed),
                elapsed_time: elapsed,
                output: rep.value,
                output_correct: rep.correct,
                output_status,
            });
        }
        if ev.detach {
            self.named[ni].holds.clear();
        }
        self.other.clear();
        self.other.extend_from_slice(&self.named[ni].holds);
        let (work_req_seconds, max_jobs) = match (ev.request, ev.work_req_seconds) {
            (Some(n), _) => (if n > 0 { 1e12 } else { 0.0 }, n),
            (None, Some(s)) => (s, u32::MAX),
            (None, None) => (0.0, 0),
        };
        let req = Request {
            hostid,
            reattached: ev.detach,
            req_secs: [work_req_seconds, 0.0, 0.0, 0.0],
            req_instances: [0.0; N_RSC],
            max_jobs,
            estimated_delay: 0.0,
            reported: &self.reports,
            other_results: ev.send_other_results.then_some(&self.other[..]),
        };
        let p = &mut self.projects[pi];
        p.db.now = now;
        scheduler::process_request(p, now, &req, &mut self.reply);
        self.counters.rpcs += 1;
        let holds = &mut self.named[ni].holds;
        for j in &self.reply.jobs {
            if let Err(k) = holds.binary_search(&j.result_id) {
                holds.insert(k, j.result_id);
            }
        }
        self.named[ni].last_reply = Some(self.reply.clone());
        self.after_step(now, pi, Some(Actor::Scheduler))
    }

    // ----- expectations -------------------------------------------------------

    fn check_expect(&mut self, i: usize) {
        self.counters.expectations_checked += 1;
        let ex = &self.scenario.expect[i];
        let pi = self.project_of(&ex.project);
        let p = &self.projects[pi];
        let named = &self.named;
        let outcome = if let Some(c) = &ex.client {
            let (name, k) = c.split_once('#').unwrap_or((c.as_str(), "0"));
            let k: usize = k.parse().unwrap_or(0);
            let g = self.groups.iter().find(|g| g.name == name);
            let now = ex.at.map_or(self.end, |t| t.get());
            match g.and_then(|g| self.hosts.get(g.first + k).map(|h| (g, h))) {
                Some((g, h)) => {
                    let pos = h.projects.iter().position(|q| q.project as usize == pi);
                    let names: Vec<String> = self.projects.iter().map(|p| p.name.clone()).collect();
                    crate::scenario::expect::check_client(
                        ex,
                        h,
                        pos,
                        now,
                        &g.ctx.cfg,
                        &names,
                        &g.ctx.avail,
                    )
                }
                None => Err(format!("no simulated host `{c}`")),
            }
        } else {
            crate::scenario::expect::check(ex, p, named)
        };
        if let Err(msg) = outcome {
            let at = ex
                .at
                .map_or("end".to_string(), |t| format!("t={}", t.get()));
            let place = ex.source.0.as_deref().unwrap_or("scenario");
            self.expect_failures
                .push(format!("{place}: expect[{i}] at {at}: {msg}"));
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

/// The host record the server creates at a simulated host's first contact (spec
/// backend §2.4.2): the group's attributes with the client's speed, the host's own
/// day offset (from its (host, project) stream unless pinned) and a user of its own.
fn first_contact(
    p: &mut Project,
    mut row: HostRow,
    seed: u64,
    hi: u64,
    pi: usize,
    p_fpops: f64,
) -> HostId {
    let day = p.cfg.pin.day_offset.unwrap_or_else(|| {
        rng::stream(seed, StreamKind::HostProject, hi << 16 | pi as u64).random()
    });
    row.p_fpops = p_fpops;
    let hostid = add_host(p, row, day);
    p.db.host_mut(hostid).userid = hostid;
    hostid
}

fn add_host(p: &mut Project, mut row: HostRow, day_offset: f64) -> HostId {
    let id = p.db.hosts.next_id();
    row.id = id;
    row.day_offset = day_offset;
    p.db.hosts.insert(row)
}

fn period_of(p: &Project, d: Daemon) -> Time {
    let x = &p.cfg.daemons;
    match d {
        Daemon::Scheduler => 1,
        Daemon::Transitioner => x.transitioner.get(),
        Daemon::Validator => x.validator.get(),
        Daemon::Assimilator => x.assimilator.get(),
        Daemon::FileDeleter => x.file_deleter.get(),
        Daemon::DbPurge => x.db_purge.get(),
        Daemon::Feeder => x.feeder.get(),
        Daemon::WorkGenerator => x.work_generator.get(),
    }
    .max(1)
}

fn script_class(ev: &ScriptEvent, tie: &[u8; 8]) -> u8 {
    let d = if let Some(d) = ev.daemon {
        d
    } else if ev.create_workunits.is_some() {
        Daemon::WorkGenerator
    } else {
        Daemon::Scheduler
    };
    tie[daemon_index(d)]
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

/// A stand-in left in a host's slot while the host runs (no allocation).
fn placeholder_host() -> ClientHost {
    let rng = rng::stream(0, StreamKind::Host, u64::MAX);
    let mut h = ClientHost::new(
        0,
        u32::MAX,
        1,
        1.0,
        rng.clone(),
        rng,
        Vec::new(),
        Availability::default(),
        0,
    );
    h.gone = true;
    h
}

impl<R: Recorder> ServerLink for World<R> {
    /// A scheduler RPC from the current host (spec backend §2.4, client §4). During an
    /// outage the RPC fails as the outage's kind says and never reaches the server.
    fn rpc(
        &mut self,
        now: Time,
        call: &RpcCall,
        jobs: &mut Vec<crate::server::scheduler::Job>,
    ) -> (RpcStatus, HostId) {
        let pi = call.project as usize;
        if let Some(o) = self.projects[pi].cfg.outage_at(now) {
            self.counters.rpcs_failed += 1;
            self.recorder.rpc(pi, now, false);
            return match o.kind {
                // The maintenance reply's `request_delay` (spec backend §2.9); the
                // client applies it as spec client §1.7 / §4.2 say.
                OutageKind::Down => (
                    RpcStatus::Down {
                        request_delay: o.maintenance_delay(&self.projects[pi].cfg.config),
                    },
                    call.hostid,
                ),
                OutageKind::Unreachable => (RpcStatus::Failed, call.hostid),
            };
        }
        self.recorder.rpc(pi, now, true);
        let (hi, gi) = (self.current_host, self.current_group);
        let p = &mut self.projects[pi];
        p.db.now = now;
        let mut hostid = call.hostid;
        if hostid == 0 {
            // First contact: the server creates the host record (spec backend §2.4.2).
            let row = self.groups[gi].row.clone();
            hostid = first_contact(
                p,
                row,
                self.scenario.simulation.seed,
                hi as u64,
                pi,
                call.p_fpops,
            );
        }
        {
            // The request's host_info and time_stats update the host row, so the
            // scheduler's runtime estimates use the client's own figures (§2.4.4).
            let h = p.db.host_mut(hostid);
            h.p_ncpus = call.p_ncpus as i32;
            h.p_fpops = call.p_fpops;
            if *h.coprocs != *call.coprocs {
                h.coprocs = call.coprocs.into();
            }
            h.on_frac = call.time_stats.on_frac;
            h.active_frac = call.time_stats.active_frac;
        }
        let req = Request {
            hostid,
            reattached: call.reattached,
            // Per resource: the CPU's request and each GPU type's (spec client §4.1).
            // A CPU instance request with no seconds still asks for work (the
            // server's `work_needed` tests both), as one second: the CPU instance
            // count is not forwarded, so that CPU-only hosts get what they got before
            // per-resource requests.
            req_secs: std::array::from_fn(|k| {
                if k > 0 {
                    call.work.gpu_req_secs[k]
                } else if call.work.req_secs <= 0.0 && call.work.req_instances > 0.0 {
                    1.0
                } else {
                    call.work.req_secs
                }
            }),
            req_instances: std::array::from_fn(|k| {
                if k > 0 {
                    call.work.gpu_req_instances[k]
                } else {
                    0.0
                }
            }),
            max_jobs: u32::MAX,
            estimated_delay: call.work.estimated_delay,
            reported: call.reported,
            other_results: Some(call.other_results),
        };
        scheduler::process_request(p, now, &req, &mut self.reply);
        self.counters.rpcs += 1;
        jobs.extend_from_slice(&self.reply.jobs);
        let status = RpcStatus::Ok {
            new_jobs: self.reply.jobs.len() as u32,
            request_delay: self.reply.request_delay,
            no_work: self.reply.no_work,
        };
        if let Err(e) = self.after_step(now, pi, Some(Actor::Scheduler))
            && self.pending_error.is_none()
        {
            self.pending_error = Some(e);
        }
        (status, hostid)
    }

    fn take_scratch(&mut self) -> RpcScratch {
        std::mem::take(&mut self.rpc_scratch)
    }

    fn return_scratch(&mut self, scratch: RpcScratch) {
        self.rpc_scratch = scratch;
    }

    fn last_aborts(&mut self, out: &mut Vec<(ResultId, bool)>) {
        out.extend(self.reply.aborts.iter().map(|&r| (r, false)));
        out.extend(self.reply.aborts_if_not_started.iter().map(|&r| (r, true)));
    }

    /// The processor types for which `project` has no app version.
    fn no_rsc_apps(&mut self, project: u16) -> [bool; N_RSC] {
        let p = &self.projects[project as usize];
        std::array::from_fn(|k| !p.app_versions.iter().any(|v| v.proc_type.index() == k))
    }

    fn master_fetch(&mut self, now: Time, project: u16) -> bool {
        !self.projects[project as usize]
            .cfg
            .outage
            .iter()
            .any(|o| o.covers(now) && o.kind == OutageKind::Unreachable)
    }
}

/// Asks the CPU to load the host of the next event while the current one runs: with
/// many hosts, the first touch of a host is a cache miss on most events
/// (docs/performance.md). A hint only; it changes no result.
#[inline(always)]
fn prefetch_host(h: &ClientHost) {
    prefetch_bytes(h as *const ClientHost, std::mem::size_of::<ClientHost>());
    // Its jobs and projects too (their first 24 lines): every event walks both.
    const MAX: usize = 24 * 64;
    prefetch_bytes(h.jobs.as_ptr(), std::mem::size_of_val(&h.jobs[..]).min(MAX));
    prefetch_bytes(
        h.projects.as_ptr(),
        std::mem::size_of_val(&h.projects[..]).min(MAX),
    );
}

/// Prefetches the cache lines of `bytes` bytes from `p`.
#[inline(always)]
fn prefetch_bytes<T>(p: *const T, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let p = p.cast::<i8>();
        for k in 0..bytes.div_ceil(64) {
            // SAFETY: a prefetch never faults, and every address is inside the
            // `bytes` bytes the caller names, all within one object.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.add(k * 64)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, bytes);
}
