//! The back end as the hosts see it: every project's servers, the recorder that
//! hears what they do, the invariant checkers and the run's counters, owned apart
//! from the hosts. A host's policy reaches it through [`ServerLink`]: one call per
//! scheduler RPC, which returns the whole reply, errors included, as a value
//! (spec backend §2.4, client §4).
//!
//! The world owns a [`Backend`] and the hosts side by side, so a host event borrows
//! its host and the back end at once: nothing is swapped out, lent or parked.

use super::{Recorder, RunCounters, RunError};
use crate::base::prefetch::prefetch_bytes;
use crate::client::host::{ClientHost, ClientJob, Sent, ServerLink, TaskState};
use crate::engine::Time;
use crate::engine::rng;
use crate::scenario::Daemon;
use crate::scenario::import::hosts::HostTable;
use crate::scenario::plan::OsMix;
use crate::server::config::OutageKind;
use crate::server::db::{HostNames, HostRow};
use crate::server::invariants::InvariantChecker;
use crate::server::scheduler::{self, Reply, Request};
use crate::server::step::Step;
use crate::server::table::Load;
use crate::server::types::*;
use crate::server::web_server::{
    Admission, Caller, LOCKED_REQUEST_DELAY, SCRIPTED_CALLER, WebServer,
};
use crate::server::{
    Project, assimilator, db_purge, feeder, file_deleter, transitioner, validator, work_generator,
};
use crate::streams::StreamKind;
use rand::RngExt;
use std::collections::HashMap;
use std::sync::Arc;

/// How many of a host's jobs, from the front of its queue, [`Backend::prefetch_rows_of`]
/// looks at.
const PREFETCH_JOBS: usize = 16;

/// What the HOST row a host gets at its first RPC to a project is made of (spec
/// backend §2.4.2). The row cannot be made when the world is built: the database
/// numbers its hosts in the order they first make contact, and that hostid reaches
/// the outputs, so first contact stays a named step of the RPC.
pub(crate) struct NewHosts {
    /// Attributes of the host rows each group's hosts get at first contact, by group.
    host_rows: Vec<HostRow>,
    /// Per group, its operating-system mix (cumulative weights), when it has one.
    os_mix: Vec<Option<OsMix>>,
    /// By group: the host export a group's hosts are records of, and which record
    /// each host is, for the attributes of its host records.
    pub(super) imported: Vec<Option<ImportedRows>>,
    /// The scenario's master seed: a new host record draws its day offset from its
    /// own (host, project) stream.
    seed: u64,
}

impl NewHosts {
    /// First contact (host id 0, spec backend §2.4.2): project `pi`'s server creates
    /// the HOST row of the host that sent `req` and returns its new hostid.
    fn first_contact(&mut self, p: &mut Project, pi: usize, req: &Request) -> HostId {
        let g = req.group as usize;
        let row = host_row(&self.host_rows, &mut self.imported, g, req.host_index);
        let os = self.os_mix[g].as_deref();
        let hi = req.host_index as u64;
        first_contact(p, row, self.seed, hi, pi, req.host_info.p_fpops, os)
    }
}

/// Requests and replies served and handed back, kept with their lists' capacity
/// so that an RPC allocates nothing once they have grown. A request is owned by
/// its RPC from the host's filling it to the server's reading it, and a reply from
/// the server's writing it to the host's applying it; between RPCs both wait here.
#[derive(Default)]
pub(crate) struct RpcBuffers {
    requests: Vec<Request>,
    replies: Vec<Reply>,
}

impl RpcBuffers {
    /// An empty request to fill.
    pub(super) fn request(&mut self) -> Request {
        self.requests.pop().unwrap_or_default()
    }

    /// Keeps a request the server has read, emptied.
    pub(super) fn keep_request(&mut self, mut req: Request) {
        req.clear();
        self.requests.push(req);
    }

    /// A reply to write (the scheduler clears it first).
    pub(super) fn reply(&mut self) -> Reply {
        self.replies.pop().unwrap_or_default()
    }

    /// Keeps a reply its host has applied.
    pub(super) fn keep_reply(&mut self, reply: Reply) {
        self.replies.push(reply);
    }
}

/// Every project's back end, with what hears it and checks it.
pub(crate) struct Backend<R> {
    pub projects: Vec<Project>,
    /// Hears of every row finalised, RPC and gauge sample.
    pub recorder: R,
    pub counters: RunCounters,
    /// One checker per project under `--check-invariants` ([`Self::checks_invariants`]).
    pub(super) checkers: Option<Vec<InvariantChecker>>,
    pub(super) fd_state: Vec<file_deleter::State>,
    /// Projects a step changed since the world last woke their daemons, when idle
    /// daemons sleep (`world::daemons`), and which are in it.
    pub(super) stepped: Vec<u16>,
    pub(super) is_stepped: Vec<bool>,
    track_steps: bool,
    /// What a host's row is made of when it first contacts a project.
    pub(super) new_hosts: NewHosts,
    /// The buffers every scheduler RPC builds its request's lists and its reply in.
    pub(super) rpc: RpcBuffers,
    /// The data servers' links and the transfers on them, in a run with files
    /// (spec client §8.5).
    pub(super) net: Option<super::network::Net>,
    /// By project: its web server in front of the scheduler, when it has a
    /// `[project.NAME.server]` (spec backend §2.4.0).
    pub(super) web: Vec<Option<WebServer>>,
}

impl<R: Recorder> Backend<R> {
    /// Starts loading the index entries of the server rows a host's event after
    /// next will most likely touch ([`Self::prefetch_rows_of`]). A hint only.
    pub(super) fn prefetch_row_indexes_of(&self, h: &ClientHost) {
        self.prefetch_rows_as(h, Load::Index);
    }

    /// Starts loading the server rows a host's next event will most likely touch
    /// ([`Self::prefetch_rows_as`]). A hint only.
    pub(super) fn prefetch_rows_of(&self, h: &ClientHost) {
        self.prefetch_rows_as(h, Load::Row);
    }

    /// Starts loading the server rows a host's next event will most likely touch: its
    /// host row in each project, and the result and workunit rows of its jobs that
    /// are done (to report) or running (they may finish then). Called one event
    /// ahead (`World::prefetch_ahead`), so that the cache misses of the RPC that
    /// usually follows overlap the current event (docs/performance.md). With
    /// [`Load::Index`], it loads instead the tables' index entries that say where
    /// those rows are, one event earlier still: reading an entry to find its row
    /// waited for the entry (at a million hosts every entry misses the cache). A hint
    /// only.
    ///
    /// Only the first [`PREFETCH_JOBS`] jobs are looked at: the client runs and
    /// reports its oldest jobs first, so those are at the front of its queue, and a
    /// volunteer with a buffer of days holds hundreds of jobs whose walk, twice per
    /// event, cost more than the misses it hid.
    fn prefetch_rows_as(&self, h: &ClientHost, load: Load) {
        for ps in &h.projects {
            if let Some(p) = self.projects.get(ps.project as usize) {
                p.db.hosts.prefetch_as(ps.hostid, load);
            }
        }
        let busy = |j: &&ClientJob| matches!(j.state, TaskState::Done | TaskState::Running);
        for j in h.jobs.iter().take(PREFETCH_JOBS).filter(busy) {
            let Some(ps) = h.projects.get(j.project as usize) else {
                continue;
            };
            if let Some(p) = self.projects.get(ps.project as usize) {
                p.db.results.prefetch_as(j.result_id, load);
                p.db.workunits.prefetch_as(j.workunit_id, load);
            }
        }
    }

    /// The last stage, for the event about to run: the lists a host row keeps in
    /// allocations of their own, its jobs in progress and its HAV rows, which the
    /// RPC reads and edits (a reported job leaves `in_progress`, the quota checks
    /// read the HAVs: spec backend §2.4.3, §2.4.4). The host row itself was
    /// prefetched one event earlier ([`Self::prefetch_rows_of`]), so reading where
    /// the lists are does not wait; the client's own work before its RPC hides their
    /// load. A hint only.
    pub(super) fn prefetch_host_lists_of(&self, h: &ClientHost) {
        for ps in &h.projects {
            if let Some(row) = self
                .projects
                .get(ps.project as usize)
                .and_then(|p| p.db.hosts.get(ps.hostid))
            {
                prefetch_bytes(row.in_progress.as_ptr(), size_of_val(&row.in_progress[..]));
                prefetch_bytes(row.havs.as_ptr(), size_of_val(&row.havs[..]));
            }
        }
    }

    pub(super) fn new(
        projects: Vec<Project>,
        recorder: R,
        check_invariants: bool,
        host_rows: Vec<HostRow>,
        os_mix: Vec<Option<OsMix>>,
        seed: u64,
    ) -> Self {
        let n = projects.len();
        let web = (projects.iter().enumerate())
            .map(|(pi, p)| {
                let cap = p.cfg.server.clone()?;
                let rng = rng::stream(seed, StreamKind::SchedulerService, pi as u64);
                Some(WebServer::new(cap, rng))
            })
            .collect();
        Backend {
            checkers: check_invariants
                .then(|| (0..n).map(|_| InvariantChecker::default()).collect()),
            fd_state: vec![file_deleter::State::default(); n],
            stepped: Vec::with_capacity(n),
            is_stepped: vec![false; n],
            track_steps: false,
            projects,
            recorder,
            counters: RunCounters::default(),
            new_hosts: NewHosts {
                host_rows,
                os_mix,
                imported: Vec::new(),
                seed,
            },
            rpc: RpcBuffers::default(),
            net: None,
            web,
        }
    }

    /// Whether the run checks its invariants (`--check-invariants`): the back end's
    /// after every step, and the world's own (clients, network, gauges) after each
    /// event that can break them.
    pub(super) fn checks_invariants(&self) -> bool {
        self.checkers.is_some()
    }

    /// Whether steps note their project for the world's wake of sleeping daemons.
    pub(super) fn track_steps(&mut self, on: bool) {
        self.track_steps = on;
    }

    /// The server's half of a scheduler RPC that reached project `pi` (spec backend
    /// §2.4): first contact, the host row's update from the request's host info,
    /// the request handled, and the step ended as for a daemon pass. The reply is
    /// the whole answer, owned; the client applies it on its own side
    /// ([`ClientHost::rpc`]).
    fn serve(&mut self, now: Time, pi: usize, mut req: Request) -> Result<Reply, RunError> {
        let p = &mut self.projects[pi];
        if req.hostid == HostId(0) {
            req.hostid = self.new_hosts.first_contact(p, pi, &req);
        }
        scheduler::copy_host_info(p, req.hostid, &req.host_info);
        req.other_results.sort_unstable();
        let mut reply = self.rpc.reply();
        scheduler::process_request(p, now, &req, &mut reply);
        reply.hostid = req.hostid;
        reply.no_rsc_apps = scheduler::no_rsc_apps(p);
        self.counters.rpcs += 1;
        self.rpc.keep_request(req);
        self.end_step(now, pi, Some(Actor::Scheduler), &Step::default())?;
        Ok(reply)
    }

    /// A named host's scripted request is served at `now` (spec backend §4): the
    /// scheduler reads it as it is, since the script gave its host id, jobs and
    /// work request, and no host row is updated from it.
    pub(super) fn serve_scripted(
        &mut self,
        now: Time,
        pi: usize,
        req: Request,
    ) -> Result<Reply, RunError> {
        let mut reply = self.rpc.reply();
        scheduler::process_request(&mut self.projects[pi], now, &req, &mut reply);
        self.rpc.keep_request(req);
        self.counters.rpcs += 1;
        self.end_step(now, pi, Some(Actor::Scheduler), &Step::default())?;
        Ok(reply)
    }

    /// A host's RPC to project `pi` failed at `now` without reaching its scheduler:
    /// an outage, a refused connection, or a client that gave up waiting.
    pub(super) fn rpc_failed(&mut self, pi: usize, now: Time) {
        self.counters.rpcs_failed += 1;
        self.recorder.rpc(pi, now, false);
    }

    /// The service of a request that reached project `pi`'s web server starts at
    /// `start` (seconds, within the event second `now`) after `wait` seconds in its
    /// queue (spec backend §2.4.0): the scheduler reads and writes the database
    /// now, unless another of its processes serves the same host, and the reply
    /// waits for the service's end. Returns the second the reply is due.
    pub(super) fn start_service(
        &mut self,
        now: Time,
        pi: usize,
        req: Request,
        start: f64,
        wait: f64,
        abandoned: bool,
    ) -> Result<Time, RunError> {
        let reported = req.reported.len();
        let mut caller = Caller::of(&req);
        let locked = (self.web[pi].as_ref()).is_some_and(|w| w.serving(req.hostid, start));
        let reply = if locked {
            // `lock_sched`: the request is answered with a delay and nothing else.
            let mut r = self.rpc.reply();
            r.locked(LOCKED_REQUEST_DELAY);
            r.hostid = req.hostid;
            self.rpc.keep_request(req);
            r
        } else if caller.host_index & SCRIPTED_CALLER != 0 {
            self.serve_scripted(now, pi, req)?
        } else {
            self.recorder.rpc(pi, now, true);
            self.serve(now, pi, req)?
        };
        caller.hostid = reply.hostid;
        self.recorder.rpc_wait(pi, now, wait);
        let web = self.web[pi].as_mut().expect("a project with a web server");
        if locked {
            web.count_locked();
        }
        Ok(web.begin(caller, reply, reported, start, wait, abandoned))
    }

    /// One pass of a daemon of a project, then the end of its step: what it
    /// returned and wrote reaches the outputs and the invariant checks.
    pub(crate) fn run_daemon(
        &mut self,
        now: Time,
        pi: usize,
        daemon: Daemon,
    ) -> Result<(), RunError> {
        self.counters.daemon_passes += 1;
        if self.is_down(pi, daemon, now) {
            // A stopped daemon does nothing and its work waits (spec backend §2.0);
            // only the file deleter's retry clock keeps its schedule.
            if daemon == Daemon::FileDeleter {
                self.fd_state[pi].tick(now);
            }
            return Ok(());
        }
        let actor = Some(super::actor_of(daemon));
        let p = &mut self.projects[pi];
        let step = match daemon {
            Daemon::Scheduler => Step::default(),
            Daemon::Transitioner => transitioner::pass(p, now),
            Daemon::Validator => validator::pass(p, now),
            Daemon::Assimilator => assimilator::pass(p, now),
            Daemon::FileDeleter => file_deleter::pass(p, now, &mut self.fd_state[pi]),
            Daemon::DbPurge => loop {
                // A full pass is followed at once by another (spec backend §2.8).
                let step = db_purge::pass(&mut self.projects[pi], now);
                if step.handled <= db_purge::PURGE_AGAIN_ABOVE {
                    break step;
                }
                self.end_step(now, pi, actor, &step)?;
            },
            Daemon::Feeder => Step::handled(feeder::pass(p, now)),
            Daemon::WorkGenerator => Step::handled(work_generator::pass(p, now) as usize),
        };
        self.end_step(now, pi, actor, &step)
    }

    /// Whether daemon `d` of project `pi` is down at `now`
    /// (`[[project.NAME.daemon_outage]]`, [`crate::server::downtime`]).
    pub(super) fn is_down(&self, pi: usize, d: Daemon, now: Time) -> bool {
        super::outage_target(d)
            .is_some_and(|t| self.projects[pi].downtime.down_until(t, now).is_some())
    }

    /// Ends one step of project `pi` at `now`: checks the invariants, and hands the
    /// step's audit rows (stamped with `now`), the results `step` decided and the
    /// rows it purged to the recorder.
    pub(super) fn end_step(
        &mut self,
        now: Time,
        pi: usize,
        actor: Option<Actor>,
        step: &Step,
    ) -> Result<(), RunError> {
        if self.track_steps && !self.is_stepped[pi] {
            self.is_stepped[pi] = true;
            self.stepped.push(pi as u16);
        }
        let p = &mut self.projects[pi];
        if let Some(checkers) = &mut self.checkers {
            checkers[pi]
                .check_after_step(p, now, &p.db.audit, actor)
                .map_err(RunError::Invariant)?;
        }
        let rec = &mut self.recorder;
        rec.transitions(pi, &p.name, now, &p.db.audit)?;
        rec.decided(pi, &p.name, &step.decided)?;
        for (wu, results) in step.purged_rows() {
            rec.workunit(pi, &p.name, wu, true)?;
            for r in results {
                let host = p.db.world_host(r.hostid);
                rec.result(pi, &p.name, wu.appid, wu.batch, host, r, true)?;
            }
        }
        p.db.audit.clear();
        Ok(())
    }
}

impl<R: Recorder> ServerLink for Backend<R> {
    type Error = RunError;

    fn request(&mut self) -> Request {
        self.rpc.request()
    }

    /// A scheduler RPC (spec backend §2.4, client §4). During an outage the RPC fails
    /// as the outage's kind says and never reaches the server. A project with a web
    /// server queues it or refuses it (spec backend §2.4.0, client §4.3).
    fn rpc(&mut self, now: Time, req: Request) -> Result<Sent, RunError> {
        let pi = req.project as usize;
        if let Some(o) = self.projects[pi].cfg.outage_at(now) {
            // Inline, not `rpc_failed`: the outage `o` borrows the project.
            self.counters.rpcs_failed += 1;
            self.recorder.rpc(pi, now, false);
            let reply = match o.kind {
                // The maintenance (or database-down) reply's `request_delay` (spec
                // backend §2.9); the client applies it as spec client §1.7 / §4.2 say.
                OutageKind::Down => {
                    let mut r = self.rpc.reply();
                    r.down(o);
                    r.hostid = req.hostid;
                    Some(r)
                }
                OutageKind::Unreachable => None,
            };
            self.rpc.keep_request(req);
            return Ok(Sent::Answered(reply));
        }
        if let Some(web) = &mut self.web[pi] {
            return match web.admit(now, req) {
                Admission::Refused(req) => {
                    self.rpc_failed(pi, now);
                    self.rpc.keep_request(req);
                    Ok(Sent::Answered(None))
                }
                Admission::Serve(req) => {
                    self.start_service(now, pi, req, now as f64, 0.0, false)?;
                    Ok(Sent::InFlight)
                }
                Admission::Queued => Ok(Sent::InFlight),
            };
        }
        self.recorder.rpc(pi, now, true);
        self.serve(now, pi, req).map(|r| Sent::Answered(Some(r)))
    }

    fn recycle(&mut self, reply: Reply) {
        self.rpc.keep_reply(reply);
    }

    /// A background project's backoffs are no project's: its index names none.
    fn backoff(&mut self, now: Time, project: u16, secs: f64) {
        if (project as usize) < self.projects.len() {
            self.recorder.backoffs(project as usize, now, 1, secs);
        }
    }

    /// A background project's web server (no world project) always answers.
    fn master_fetch(&mut self, now: Time, project: u16) -> bool {
        self.projects.get(project as usize).is_none_or(|p| {
            !p.cfg
                .outage
                .iter()
                .any(|o| o.covers(now) && o.kind == OutageKind::Unreachable)
        })
    }

    /// A transfer starts on the project's data-server link (spec client §8.5), or
    /// fails at once while the data server is down.
    fn xfer_start(
        &mut self,
        now: Time,
        project: u16,
        dir: crate::client::host::Dir,
        host: u32,
        cap: f64,
        bytes: f64,
    ) -> Option<u32> {
        self.net
            .as_mut()?
            .start(now, project, dir, host, cap, bytes)
    }

    fn xfer_stop(&mut self, now: Time, flow: u32) -> f64 {
        self.net.as_mut().map_or(0.0, |n| n.stop(now, flow))
    }

    fn xfer_report(
        &mut self,
        project: u16,
        result: ResultId,
        times: &crate::client::files::XferTimes,
    ) {
        self.recorder
            .result_transfers(project as usize, result, times);
    }
}

/// A group's host export and each of its hosts' record (4 bytes a host).
pub(crate) struct ImportedRows {
    pub table: std::sync::Arc<crate::scenario::import::hosts::HostTable>,
    /// Index of the group's first host in the world.
    pub first: u32,
    /// The record of each host of the group, by slot.
    pub records: Box<[u32]>,
    /// The names of the host rows made so far, by the export's text indices of
    /// `(os_name, p_vendor, p_model)`: hosts with the same three share one copy.
    pub names: HashMap<[u32; 3], Arc<HostNames>>,
}

impl ImportedRows {
    pub(crate) fn new(table: Arc<HostTable>, first: u32, records: Box<[u32]>) -> Self {
        Self {
            table,
            first,
            records,
            names: HashMap::new(),
        }
    }
}

/// The attributes of the host record a host of group `group` (world index `index`)
/// gets at first contact: the group's, with a host export's record's own memory,
/// disk, integer speed, operating system and CPU (spec backend §1.4; the texts are
/// shared, not copied).
fn host_row(
    host_rows: &[HostRow],
    imported: &mut [Option<ImportedRows>],
    group: usize,
    index: u32,
) -> HostRow {
    let mut row = host_rows[group].clone();
    if let Some(Some(im)) = imported.get_mut(group) {
        let k = im.records[(index - im.first) as usize];
        let r = &im.table.records[k as usize];
        row.p_ncpus = r.ncpus as i32;
        row.p_iops = r.p_iops;
        row.m_nbytes = r.m_nbytes;
        row.d_free = r.d_free;
        let t = &im.table;
        let key = [r.os_name, r.p_vendor, r.p_model];
        row.names = Arc::clone(im.names.entry(key).or_insert_with(|| {
            Arc::new(HostNames {
                os_name: Arc::clone(t.text(key[0])),
                p_vendor: Arc::clone(t.text(key[1])),
                p_model: Arc::clone(t.text(key[2])),
            })
        }));
    }
    row
}

/// The host record the server creates at a simulated host's first contact (spec
/// backend §2.4.2): the group's attributes with the client's speed, the host's own
/// day offset (from its (host, project) stream unless pinned) and a user of its own.
/// In a group with a mix of operating systems (`os`, cumulative weights), the
/// host's own is drawn from its [`StreamKind::HostOs`] stream: the same in every
/// project, and nothing kept per host (the client reports it in every RPC's
/// `host_info`, which BOINC's `handle_request.cpp` copies into the host record).
pub(super) fn first_contact(
    p: &mut Project,
    mut row: HostRow,
    seed: u64,
    hi: u64,
    pi: usize,
    p_fpops: f64,
    os: Option<&[(Arc<HostNames>, f64)]>,
) -> HostId {
    let day = p.cfg.pin.day_offset.unwrap_or_else(|| {
        rng::stream(seed, StreamKind::HostProject, hi << 16 | pi as u64).random()
    });
    row.p_fpops = p_fpops;
    row.host = hi as u32 + 1;
    if let Some(mix) = os.filter(|m| !m.is_empty()) {
        row.names = Arc::clone(&mix[host_os(mix, seed, hi)].0);
    }
    let hostid = add_host(p, row, day);
    p.db.host_mut(hostid).userid = hostid.0;
    hostid
}

/// Inserts a host record with the next id and its day offset.
pub(super) fn add_host(p: &mut Project, mut row: HostRow, day_offset: f64) -> HostId {
    let id = p.db.hosts.next_id();
    row.id = id;
    row.day_offset = day_offset;
    p.db.hosts.insert(row)
}

/// The index, in a group's operating-system mix `mix` (cumulative weights), of host
/// `hi`'s system: the first entry whose cumulative weight exceeds the host's draw.
pub(crate) fn host_os<T>(mix: &[(T, f64)], seed: u64, hi: u64) -> usize {
    let u: f64 = rng::stream(seed, StreamKind::HostOs, hi).random();
    mix.partition_point(|&(_, c)| c <= u).min(mix.len() - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hosts_system_follows_the_weights_and_its_own_stream() {
        let mix: Vec<(Arc<str>, f64)> = vec![
            ("Darwin".into(), 0.1),
            ("Linux".into(), 0.2),
            ("Microsoft Windows".into(), 1.0),
        ];
        let mut n = [0; 3];
        for hi in 0..10_000 {
            n[host_os(&mix, 3, hi)] += 1;
        }
        assert!((n[2] as f64 / 10_000.0 - 0.8).abs() < 0.02, "{n:?}");
        assert!((n[0] as f64 / 10_000.0 - 0.1).abs() < 0.02, "{n:?}");
        // The same host, seed and mix give the same system (every project sees it).
        assert_eq!(host_os(&mix, 3, 77), host_os(&mix, 3, 77));
        // One system: always it.
        let one: Vec<(Arc<str>, f64)> = vec![("Linux".into(), 1.0)];
        assert!((0..100).all(|hi| host_os(&one, 3, hi) == 0));
    }
}
