//! What the world tells whoever records a run, as the run goes.
//!
//! Data flows one way: the world runs the projects and hosts and hands what it sees
//! to a [`Recorder`]; all it asks back, once, is whether the audit trail is wanted.
//! The recorder of a real run is [`crate::stats::recorder::StatsRecorder`] (the
//! tallies of `summary.json` and `summary.csv`, the time series, the run folder's
//! tables), which depends on the world, never the reverse: the world's code does not
//! name `crate::stats`, so the simulation can change without touching the outputs
//! and the outputs without touching the simulation.
//!
//! Every call is made at a fixed point of the event loop, in event order, so what a
//! recorder sees is as deterministic as the run.

use crate::client::files::XferTimes;
use crate::engine::Time;
use crate::server::db::{Db, ResultRow, Transition, WorkunitRow};
use crate::server::job_log::DecidedResult;
use crate::server::types::{AppId, ResultId};
use std::io;

/// The run's observer, wired to the world by whoever starts the run (the command
/// line, a sweep, a test). Project `pi` is the index in
/// [`World::projects`](super::World::projects), `project` its name.
pub trait Recorder {
    /// Whether the audit trail (`transitions.csv`) is wanted: the databases keep the
    /// rows of each step only if so (or if the invariants are checked).
    fn wants_transitions(&self) -> bool;

    /// The audit rows of one step of project `pi` at `time` (spec backend §2: every
    /// state change a daemon or the scheduler made), in the order they were made.
    fn transitions(
        &mut self,
        pi: usize,
        project: &str,
        time: Time,
        rows: &[Transition],
    ) -> io::Result<()>;

    /// A workunit row is final: purged by db_purge (`purged`, spec backend §2.8) or
    /// still live at the end of the run.
    fn workunit(
        &mut self,
        pi: usize,
        project: &str,
        wu: &WorkunitRow,
        purged: bool,
    ) -> io::Result<()>;

    /// Results the validator of project `pi` decided (VALID or INVALID) during one
    /// step, in the order it decided them (spec backend §2.5): the job log and the
    /// credit figures. Ignored unless a recorder wants them.
    fn decided(&mut self, pi: usize, project: &str, rows: &[DecidedResult]) -> io::Result<()> {
        let _ = (pi, project, rows);
        Ok(())
    }

    /// A result row is final, as [`Self::workunit`]; a purged workunit's results
    /// follow it. `app` and `batch` are its workunit's app and batch (a RESULT row
    /// names only its workunit, and a result never sent has no app version), for
    /// figures per app and per batch; `host` is the world's index of the host
    /// its `hostid` row is (`None`: never sent, or a host that is not simulated).
    #[allow(clippy::too_many_arguments)]
    fn result(
        &mut self,
        pi: usize,
        project: &str,
        app: AppId,
        batch: u32,
        host: Option<u32>,
        r: &ResultRow,
        purged: bool,
    ) -> io::Result<()>;

    /// A simulated host's scheduler RPC to project `pi` at `now`: `reached` is false
    /// when an outage refused it (spec backend §2.9).
    fn rpc(&mut self, pi: usize, now: Time, reached: bool);

    /// A host started `n` project RPC backoffs with project `pi` during its event at
    /// `now`, `secs` seconds in all (spec client §1.9, §2.8).
    fn backoffs(&mut self, pi: usize, now: Time, n: u32, secs: f64);

    /// Bucket `k` of the time series: project `pi`'s server state at the bucket's
    /// start, after every actor at that time.
    fn sample(&mut self, pi: usize, k: usize, db: &Db);

    /// Bucket `k` of the time series: project `pi`'s servers under load, sampled
    /// right after [`Self::sample`] of the same bucket, and only for a project that
    /// reports its server load
    /// ([`crate::server::ProjectConfig::reports_server_load`]): a recorder writes
    /// these figures for such a project alone, so every other project's outputs
    /// stay as they were.
    fn server_load(&mut self, pi: usize, k: usize, load: ServerLoad) {
        let _ = (pi, k, load);
    }

    /// The run has files (spec client §8): called once, before the first event, by a
    /// world whose plan gives file sizes, and never otherwise. A recorder adds its
    /// transfer figures (columns, series, figures) only then, so a run without files
    /// writes the same bytes as before files existed.
    fn files_enabled(&mut self) {}

    /// A result of project `pi` was reported, and its job had files (spec client
    /// §8.1): when they moved. Called only in a run with files, once per report that
    /// reached the server, in event order.
    fn result_transfers(&mut self, pi: usize, result: ResultId, times: &XferTimes) {
        let _ = (pi, result, times);
    }

    /// Bucket `k` of the time series, in a run with files: project `pi`'s data
    /// server up to the bucket's start ([`DataServerSample`]; spec client §8.5).
    /// Called right after [`Self::sample`] of the same bucket.
    fn data_server(&mut self, pi: usize, k: usize, s: DataServerSample) {
        let _ = (pi, k, s);
    }

    /// Project `pi` has a web server with `processes` scheduler processes (spec
    /// backend §2.4.0): called once per such project, before the first event, and
    /// never for another. A recorder adds the scheduler's figures for it only then,
    /// so a run without `[project.NAME.server]` writes the same bytes as before.
    fn scheduler_enabled(&mut self, pi: usize, processes: u32) {
        let _ = (pi, processes);
    }

    /// An RPC's service at project `pi` started at `now` after `wait` seconds in
    /// the web server's queue.
    fn rpc_wait(&mut self, pi: usize, now: Time, wait: f64) {
        let _ = (pi, now, wait);
    }

    /// Bucket `k` of the time series, for a project with a web server: its state
    /// at the bucket's start. Called right after [`Self::sample`] of the same
    /// bucket.
    fn scheduler(&mut self, pi: usize, k: usize, s: SchedulerSample) {
        let _ = (pi, k, s);
    }
}

/// A project's web server at a sample (spec backend §2.4.0): cumulative counts
/// since the run began, and the queue now.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SchedulerSample {
    /// Process-seconds of service so far.
    pub busy_s: f64,
    /// Connections waiting for a process, and RPCs in service.
    pub waiting: u64,
    pub in_service: u64,
    pub counts: crate::server::web_server::Counts,
}

/// A project's data server at a sample, in a run with files (spec client §8.5):
/// cumulative figures since t = 0, taken after every event of the sample's second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DataServerSample {
    /// Bytes carried in each direction `[down, up]` (down: server to hosts).
    pub bytes: [f64; 2],
    /// Seconds each link carried at least 95 % of its capacity
    /// (`engine::flow::FlowNet::busy_time`).
    pub busy: [f64; 2],
    /// The links' capacities, bytes/s (`f64::INFINITY`: unlimited).
    pub cap: [f64; 2],
    /// Its connections, for a server with `max_connections` (`None` otherwise).
    pub connections: Option<ConnectionSample>,
}

/// A data server's connections at a sample (`max_connections`, spec client §8.5).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ConnectionSample {
    /// Its `max_connections`, and those open now.
    pub max: u32,
    pub open: u32,
    /// Transfers refused since t = 0 because every connection was taken.
    pub refused: u64,
    /// Seconds since t = 0 with every connection taken.
    pub full_s: f64,
}

/// A project's servers at a sample: how far its daemons are behind, and how many
/// are down (`[[project.NAME.daemon_outage]]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerLoad {
    /// Workunits whose `transition_time` is at or before the sample's time: the
    /// transitioner's next pass takes them (spec backend §2.2).
    pub transitioner_backlog: u64,
    /// Occupied slots of the feeder's job cache (spec backend §2.3).
    pub job_cache_fill: usize,
    /// Of the seven periodic daemons, those down at the sample's time.
    pub daemons_down: usize,
}
