//! The world: projects, hosts and the event queue, and the one `dispatch` that moves
//! the simulation forward.
//!
//! Events are a closed enum (no boxing, no allocation per event). Ties at one
//! timestamp are broken by the scenario's `tie_order` (spec backend §2.0), then by
//! insertion order, so a run is a pure function of the scenario and its seed.
//!
//! The world knows nothing of the outputs: it hands every final row, audit row, RPC
//! outcome and gauge sample to a [`Recorder`], which [`crate::stats`] implements.

mod build;
mod daemons;
mod error;
mod expect;
mod expect_reply;
mod link;
mod network;
mod recorder;
mod script;
mod web;

pub use error::RunError;
pub use recorder::{ConnectionSample, DataServerSample, Recorder, SchedulerSample, ServerLoad};

use crate::base::prefetch::{prefetch, prefetch_bytes};
use crate::client::host::{Answer, ClientHost, GroupCtx};
use crate::client::scripted::ScriptedHost;
use crate::engine::{EventQueue, Time};
use crate::scenario::Daemon;
use crate::scenario::plan::{EventPlan, ExpectPlan, daemon_index};
use crate::server::Project;
use crate::server::config::OutageTarget;
use crate::server::db::WorkunitRow;
use crate::server::step::Step;
use crate::server::types::*;
use link::Backend;
use std::sync::Arc;

/// Tie class of server-state samples: after every actor at the same time.
pub(super) const CLASS_SAMPLE: u8 = 199;
/// Tie class of expectation checks: after everything else at the same time.
pub(super) const CLASS_EXPECT: u8 = 200;
/// Tie class of the end-of-run marker.
pub(super) const CLASS_END: u8 = 255;

/// Everything that can happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A periodic daemon pass; it schedules the next (`daemons`). `generation` tells a
    /// pass replaced by an earlier wake, which pops as no event.
    DaemonPass {
        project: u16,
        daemon: Daemon,
        generation: u32,
    },
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
    /// Transfers end (spec client §8): every transfer whose last byte moved by now
    /// is finished and its host woken.
    Net,
    /// Project `i`'s data server goes down: every transfer it carries fails
    /// (spec client §8.3, §8.5).
    DataServerDown(u16),
    /// Project `i`'s web server: services that start or end, clients that give up
    /// (spec backend §2.4.0, client §4.3). Stale unless at its current time.
    WebServer(u16),
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
    /// Run every daemon pass, idle ones included, instead of letting idle daemons
    /// sleep (`world::daemons`). The outputs are the same either way; tests set
    /// it to check that.
    pub every_daemon_pass: bool,
}

impl RunOptions {
    /// Every invariant checked after every step (`--check-invariants`).
    pub const CHECKED: Self = Self {
        check_invariants: true,
        no_metrics: false,
        every_daemon_pass: false,
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

/// The simulation: the back end and the hosts, owned side by side, and the queue of
/// what happens next. A host event borrows its host and the back end at once, so a
/// scheduler RPC is one call from the client's policy into [`Backend`].
pub struct World<R> {
    backend: Backend<R>,
    pub queue: EventQueue<Event>,
    /// Boxed: a host is large and a run holds up to millions; the vector of boxes
    /// grows without moving them.
    pub hosts: Vec<Box<ClientHost>>,
    pub groups: Vec<HostGroupRt>,
    pub named: Vec<ScriptedHost>,
    pub end: Time,
    tie_class: [u8; 8],
    /// Interval of the server-state samples, s.
    sample_interval: Time,
    /// The scenario's scripted events and expectations, resolved.
    events: Vec<EventPlan>,
    expects: Vec<ExpectPlan>,
    /// Whether the build step (rows written while the world was built, such as
    /// starting jobs' sends) has been handed to the recorder, at time 0.
    started: bool,
    expect_failures: Vec<String>,
    /// Each daemon's lattice of passes, and whether idle passes are skipped.
    clocks: daemons::Clocks,
    /// By host, the time of its one current event (`Time::MAX`: none), when a
    /// transfer's end or an RPC's answer may wake a host before it: an
    /// `Event::Host` popped at another time is stale. Empty when neither can.
    host_wake_at: Vec<Time>,
    /// By project, the time of its web server's current event (`Time::MAX`: none);
    /// empty when no project has a web server.
    web_wake_at: Vec<Time>,
}

/// A host group at run time: what its hosts share.
pub struct HostGroupRt {
    pub name: String,
    pub ctx: Arc<GroupCtx>,
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

/// What a `[[project.NAME.daemon_outage]]` names daemon `d` by (none for the
/// scheduler, which only a database outage stops, through its outages).
pub(super) fn outage_target(d: Daemon) -> Option<OutageTarget> {
    match d {
        Daemon::Scheduler => None,
        Daemon::Transitioner => Some(OutageTarget::Transitioner),
        Daemon::Validator => Some(OutageTarget::Validator),
        Daemon::Assimilator => Some(OutageTarget::Assimilator),
        Daemon::FileDeleter => Some(OutageTarget::FileDeleter),
        Daemon::DbPurge => Some(OutageTarget::DbPurge),
        Daemon::Feeder => Some(OutageTarget::Feeder),
        Daemon::WorkGenerator => Some(OutageTarget::WorkGenerator),
    }
}

pub(super) fn actor_of(d: Daemon) -> Actor {
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
    /// Runs to the end of the scenario, then writes the rows still in the database.
    pub fn run(self) -> Result<Finished<R>, RunError> {
        self.run_with(&mut |_| {})
    }

    /// [`Self::run`], telling `progress` where the run is each time the event
    /// counter passes a multiple of [`PROGRESS_EVERY`] (skipped idle daemon passes
    /// count as events, so it may pass several at once) and once more when the last
    /// event is done. The observer only reads a
    /// [`Progress`] copy, so the run and its outputs are the same with or without
    /// one; the event loop knows nothing of how progress is shown (the command line
    /// draws a bar, [`crate::progress`]).
    pub fn run_with(mut self, progress: &mut dyn FnMut(Progress)) -> Result<Finished<R>, RunError> {
        self.run_until_with(self.end, progress)?;
        self.count_skipped_to_end();
        progress(Progress {
            now: self.end,
            end: self.end,
            events: self.backend.counters.events,
        });
        // Expectations without a time are checked at the end.
        for i in 0..self.expects.len() {
            if self.expects[i].at.is_none() {
                self.check_expect(i);
            }
        }
        if self.backend.checks_invariants() {
            self.check_web_all(self.end)?;
        }
        let b = &mut self.backend;
        if let Some(checkers) = &mut b.checkers {
            for (p, c) in b.projects.iter().zip(checkers.iter_mut()) {
                c.check_all(p, self.end).map_err(RunError::Invariant)?;
            }
        }
        if !self.expect_failures.is_empty() {
            return Err(RunError::Expectations {
                failed: std::mem::take(&mut self.expect_failures),
                checked: b.counters.expectations_checked,
            });
        }
        // Rows still live at the end, in id order.
        for (pi, p) in b.projects.iter().enumerate() {
            for (_, wu) in p.db.workunits.iter() {
                b.recorder.workunit(pi, &p.name, wu, false)?;
            }
            for (_, r) in p.db.results.iter() {
                let wu = p.db.wu(r.workunitid);
                let host = p.db.world_host(r.hostid);
                (b.recorder).result(pi, &p.name, wu.appid, wu.batch, host, r, false)?;
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
            counters: self.backend.counters,
            hosts: self.hosts,
            groups: self.groups,
            projects: self.backend.projects,
            recorder: self.backend.recorder,
        })
    }

    /// Processes every event with time ≤ `t`.
    pub fn run_until(&mut self, t: Time) -> Result<(), RunError> {
        self.run_until_with(t, &mut |_| {})
    }

    /// [`Self::run_until`] with a progress observer, called after each event that
    /// takes the counter past a multiple of [`PROGRESS_EVERY`]: the per-event cost
    /// is one division of the counter, so a run with an observer is as fast as one
    /// without.
    fn run_until_with(
        &mut self,
        t: Time,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(), RunError> {
        if !self.started {
            self.start()?;
        }
        while let Some(next) = self.queue.peek_time() {
            if next > t {
                break;
            }
            let (now, ev) = self.queue.pop().expect("peeked");
            if ev == Event::End {
                break;
            }
            if self.pass_is_stale(ev) {
                continue; // a daemon's earlier wake replaced it: no event
            }
            if let Some(net) = &self.backend.net {
                // Every transfer that ended by now is delivered before anything else
                // happens at now: nothing may start, stop or sample a transfer
                // that has ended (`FlowNet`'s contract).
                if net.flows.next_finish().is_some_and(|f| f <= now as f64) {
                    self.deliver(now)?;
                }
            }
            // A host woken by a transfer or an answer got a new event; its old one
            // is stale.
            if let Event::Host(j) = ev
                && self.host_wake_at.get(j as usize).is_some_and(|&t| t != now)
            {
                continue;
            }
            let before = self.backend.counters.events;
            self.backend.counters.events += 1;
            self.prefetch_ahead(ev);
            self.dispatch(now, ev)?;
            // Skipped daemon passes count as events, so the counter may jump past a
            // multiple of PROGRESS_EVERY.
            if before / PROGRESS_EVERY != self.backend.counters.events / PROGRESS_EVERY {
                progress(Progress {
                    now,
                    end: self.end,
                    events: self.backend.counters.events,
                });
            }
        }
        Ok(())
    }

    fn dispatch(&mut self, now: Time, ev: Event) -> Result<(), RunError> {
        match ev {
            Event::DaemonPass {
                project, daemon, ..
            } => {
                let pi = project as usize;
                self.before_pass(now, pi, daemon);
                self.backend.run_daemon(now, pi, daemon)?;
                self.after_pass(now, pi, daemon);
            }
            Event::Script(i) => self.run_script(now, i as usize)?,
            Event::Host(i) => self.host_event(now, i as usize)?,
            Event::Expect(i) => self.check_expect(i as usize),
            Event::Sample(k) => {
                if self.backend.checks_invariants() {
                    self.check_web_all(now)?;
                    // The O(1) counters behind the gauges equal a full recount.
                    for p in &self.backend.projects {
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
                let b = &mut self.backend;
                let check = b.checks_invariants();
                for (pi, p) in b.projects.iter_mut().enumerate() {
                    b.recorder.sample(pi, k as usize, &p.db);
                    if p.cfg.reports_server_load() {
                        let load = ServerLoad {
                            transitioner_backlog: p.db.transition_backlog(now),
                            job_cache_fill: p.feeder.occupied(),
                            daemons_down: p.downtime.down_count(now),
                        };
                        if check {
                            // The transitioner's backlog equals a recount.
                            let due = |w: &&WorkunitRow| {
                                w.in_transition_index && Time::from(w.transition_time) <= now
                            };
                            let recount = p.db.workunits.iter().map(|(_, w)| w).filter(due);
                            let recount = recount.count() as u64;
                            if recount != load.transitioner_backlog {
                                return Err(RunError::Fatal(format!(
                                    "t={now}: project {}: {} workunits counted due for the transitioner, a recount finds {recount}",
                                    p.name, load.transitioner_backlog
                                )));
                            }
                        }
                        b.recorder.server_load(pi, k as usize, load);
                    }
                    // In a run with files, every project's data server (one without
                    // files carries nothing and has no limit).
                    if let Some(net) = &b.net {
                        let t = now as f64;
                        let sample = match net.servers.get(pi) {
                            Some(Some(d)) => DataServerSample {
                                bytes: d.links.map(|l| net.flows.delivered(l, t)),
                                busy: d.links.map(|l| net.flows.busy_time(l, t)),
                                cap: [d.server.download, d.server.upload],
                                connections: d.server.limits_connections().then(|| {
                                    ConnectionSample {
                                        max: d.server.max_connections,
                                        open: d.connections.open,
                                        refused: d.connections.refused,
                                        full_s: d.connections.full_s(now),
                                    }
                                }),
                            },
                            _ => DataServerSample {
                                bytes: [0.0; 2],
                                busy: [0.0; 2],
                                cap: [f64::INFINITY; 2],
                                connections: None,
                            },
                        };
                        b.recorder.data_server(pi, k as usize, sample);
                    }
                    if let Some(Some(w)) = b.web.get(pi) {
                        b.recorder.scheduler(pi, k as usize, web::sample(w, now));
                    }
                }
                let next = (k as Time + 1) * self.sample_interval;
                if next <= self.end {
                    self.queue.push(next, CLASS_SAMPLE, Event::Sample(k + 1));
                }
            }
            Event::Net => self.net_event(now)?,
            Event::DataServerDown(pi) => self.data_server_down(now, pi as usize)?,
            Event::WebServer(pi) => self.web_event(now, pi as usize)?,
            Event::End => {}
        }
        let class = match ev {
            Event::DaemonPass { daemon, .. } => self.tie_class[daemon_index(daemon)],
            Event::Script(i) => self.events[i as usize].class,
            Event::Host(_) | Event::Net | Event::DataServerDown(_) | Event::WebServer(_) => {
                self.tie_class[0]
            }
            Event::Expect(_) => CLASS_EXPECT,
            Event::Sample(_) => CLASS_SAMPLE,
            Event::End => CLASS_END,
        };
        self.wake_daemons(now, class);
        Ok(())
    }

    /// Brings the hosts of the next events into the cache in stages, one event apart,
    /// each stage reading only what the stage before loaded: for the fifth next event
    /// the entry of the host list that points to its client host, for the fourth
    /// the client host, the third's jobs and projects, for the second the index
    /// entries of the server rows its RPC will touch and for the next one those rows
    /// ([`Backend::prefetch_rows_of`]), and for the `current` one the lists those
    /// rows point to ([`Backend::prefetch_host_lists_of`]). With many hosts the first
    /// touch of each is a cache miss (docs/performance.md); in stages, no prefetch
    /// waits for one. A hint only: it changes no result.
    fn prefetch_ahead(&mut self, current: Event) {
        if let Event::Host(j) = current
            && let Some(h) = self.hosts.get(j as usize)
        {
            self.backend.prefetch_host_lists_of(h);
        }
        let mut ahead = [None; 5];
        for (slot, ev) in ahead.iter_mut().zip(self.queue.peek_ahead()) {
            if let Event::Host(j) = *ev {
                *slot = Some(j as usize);
            }
        }
        let host = |k: usize| ahead[k].and_then(|j| self.hosts.get(j));
        if let Some(j) = ahead[4]
            && let Some(entry) = self.hosts.get(j)
        {
            prefetch(entry);
        }
        if let Some(h) = host(3) {
            prefetch_bytes(&**h as *const ClientHost, std::mem::size_of::<ClientHost>());
        }
        if let Some(h) = host(2) {
            prefetch_jobs_and_projects(h);
        }
        if let Some(h) = host(1) {
            self.backend.prefetch_row_indexes_of(h);
        }
        if let Some(h) = host(0) {
            self.backend.prefetch_rows_of(h);
        }
    }

    /// One event of a simulated host: the client's policy runs, making its RPCs
    /// straight into the back end, and the host's next event is scheduled.
    fn host_event(&mut self, now: Time, i: usize) -> Result<(), RunError> {
        self.host_event_with(now, i, None)
    }

    /// [`Self::host_event`], with the answer to the host's RPC in flight (spec
    /// client §4.3).
    fn host_event_with(
        &mut self,
        now: Time,
        i: usize,
        answer: Option<Answer>,
    ) -> Result<(), RunError> {
        let h = &mut self.hosts[i];
        let ctx = &self.groups[h.group as usize].ctx;
        let next = if now >= h.leave_at {
            // The volunteer leaves for good: its jobs are never reported, and its
            // transfers stop.
            h.advance(h.leave_at, &ctx.cfg);
            h.gone = true;
            h.xfer_leave(now, &mut self.backend);
            Time::MAX
        } else {
            h.wake_with(now, ctx, &mut self.backend, answer)?
                .min(h.leave_at)
        };
        if self.backend.checks_invariants()
            && let Some(v) = h
                .buffer_violation(&ctx.cfg)
                .or_else(|| h.time_limit_violation())
                .or_else(|| h.resource_violation(&ctx.cfg))
                .or_else(|| h.xfer_violation())
        {
            return Err(RunError::Client(format!("t={now}: {v}")));
        }
        let pushed = next < Time::MAX && next <= self.end;
        if pushed {
            self.queue
                .push(next, self.tie_class[0], Event::Host(i as u32));
        }
        if let Some(at) = self.host_wake_at.get_mut(i) {
            *at = if pushed { next } else { Time::MAX };
        }
        if self.backend.net.is_some() {
            self.schedule_net();
        }
        if !self.web_wake_at.is_empty() {
            self.schedule_web();
        }
        Ok(())
    }

    /// Makes sure an `Event::Net` is pending for the next transfer to end (spec
    /// client §8): one earlier than the pending one replaces it (the old one is
    /// stale when it pops).
    fn schedule_net(&mut self) {
        let Some(net) = &mut self.backend.net else {
            return;
        };
        if let Some(t) = net.next_event()
            && t < net.event_at
        {
            net.event_at = t;
            self.queue.push(t, self.tie_class[0], Event::Net);
        }
    }

    /// Every transfer that ended by `now`: its host hears of it and is woken, in
    /// the order the transfers ended (spec client §8.1).
    fn net_event(&mut self, now: Time) -> Result<(), RunError> {
        let Some(net) = &mut self.backend.net else {
            return Ok(());
        };
        if net.event_at != now {
            return Ok(()); // stale: a later transfer end replaced it
        }
        net.event_at = Time::MAX;
        self.deliver(now)
    }

    /// Hands every transfer that ended by `now` to its host, in the order they
    /// ended, and wakes those hosts (spec client §8.1).
    fn deliver(&mut self, now: Time) -> Result<(), RunError> {
        let Some(net) = &mut self.backend.net else {
            return Ok(());
        };
        if net.event_at == now {
            net.event_at = Time::MAX; // this is the pending event's work
        }
        let mut woken = std::mem::take(&mut net.woken);
        while let Some((flow, h)) = net.pop_finished(now) {
            self.hosts[h as usize].xfer_finished(now, flow);
            if !woken.contains(&h) {
                woken.push(h);
            }
        }
        self.wake_hosts(now, &mut woken)
    }

    /// Project `pi`'s data server goes down at `now`: every transfer it carries
    /// stops, a transient failure for its host (spec client §8.3, §8.5).
    fn data_server_down(&mut self, now: Time, pi: usize) -> Result<(), RunError> {
        let Some(net) = &mut self.backend.net else {
            return Ok(());
        };
        let Some(Some(d)) = net.servers.get(pi) else {
            return Ok(());
        };
        let links = d.links;
        let mut woken = std::mem::take(&mut net.woken);
        for link in links {
            for flow in net.flows.flows_on(link) {
                let h = net.owner[flow as usize];
                let left = net.stop(now, flow);
                let host = &mut self.hosts[h as usize];
                let cfg = &self.groups[host.group as usize].ctx.cfg;
                host.xfer_failed(now, flow, left, cfg);
                if !woken.contains(&h) {
                    woken.push(h);
                }
            }
        }
        self.wake_hosts(now, &mut woken)
    }

    /// Runs an event now for each host of `woken` still here, checks the network
    /// under `--check-invariants`, and schedules the next transfer end.
    fn wake_hosts(&mut self, now: Time, woken: &mut Vec<u32>) -> Result<(), RunError> {
        if self.backend.checks_invariants()
            && let Some(net) = &self.backend.net
        {
            (net.flows.check(now as f64))
                .and_then(|()| net.check_bytes(now))
                .and_then(|()| net.check_connections())
                .map_err(|m| RunError::Client(format!("t={now}: network: {m}")))?;
        }
        for &h in woken.iter() {
            if !self.hosts[h as usize].gone {
                self.host_event(now, h as usize)?;
            }
        }
        woken.clear();
        if let Some(net) = &mut self.backend.net {
            net.woken = std::mem::take(woken);
        }
        self.schedule_net();
        Ok(())
    }

    /// The recorder that hears the run, to set it up before the run starts.
    pub(crate) fn recorder_mut(&mut self) -> &mut R {
        &mut self.backend.recorder
    }

    /// The projects, as they stand.
    pub fn projects(&self) -> &[Project] {
        &self.backend.projects
    }

    /// Hands the build step to the recorder: the rows the build wrote (starting jobs
    /// sent before the run) belong to time 0, before any event.
    fn start(&mut self) -> Result<(), RunError> {
        self.started = true;
        for pi in 0..self.backend.projects.len() {
            if !self.backend.projects[pi].db.audit.is_empty() {
                self.backend.end_step(0, pi, None, &Step::default())?;
            }
        }
        Ok(())
    }
}

/// A daemon's period as configured (0: it never runs; the scheduler has none).
fn configured_period(p: &Project, d: Daemon) -> Time {
    let x = &p.cfg.daemons;
    match d {
        Daemon::Scheduler => 0,
        Daemon::Transitioner => x.transitioner,
        Daemon::Validator => x.validator,
        Daemon::Assimilator => x.assimilator,
        Daemon::FileDeleter => x.file_deleter,
        Daemon::DbPurge => x.db_purge,
        Daemon::Feeder => x.feeder,
        Daemon::WorkGenerator => x.work_generator,
    }
}

/// Prefetches the jobs and projects of host `h` (their first 24 cache lines each):
/// every event walks both.
#[inline(always)]
fn prefetch_jobs_and_projects(h: &ClientHost) {
    const MAX: usize = 24 * 64;
    prefetch_bytes(h.jobs.as_ptr(), std::mem::size_of_val(&h.jobs[..]).min(MAX));
    prefetch_bytes(
        h.projects.as_ptr(),
        std::mem::size_of_val(&h.projects[..]).min(MAX),
    );
}
