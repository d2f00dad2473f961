//! One simulated volunteer host running a BOINC client: its per-project client
//! state, the group context it runs under, its construction, and the common start of
//! each of its events.
//!
//! The host is event-driven, not stepped: between two of its events the set of
//! running tasks and the host's availability are constant, so progress, CPU time and
//! the figures of merit are integrated exactly over the interval
//! ([`ClientHost::advance`]). After each event the policy computes the next time
//! anything can change (a task finishing, a backoff ending, the buffer crossing a
//! water mark, a time slice ending, an availability change), and the world schedules
//! exactly one event for it. A host therefore never has more than one pending event,
//! and the queue needs no cancellation for hosts.
//!
//! The host knows no policy: each policy (`seed`, `modern`) drives a host through
//! what this module offers, and the dispatch of a host event to its group's policy
//! ([`ClientHost::wake`]) is in [`super::policy`].
//!
//! The rest of the host is split along its seams, one concern a file, and re-exported
//! here, so `client::host::X` names every item wherever it lives:
//!
//! - `job.rs`: the jobs the client holds ([`ClientJob`]), receiving one, and the
//!   host's estimates of what is left of them;
//! - `execution.rs`: the execution model: how running tasks progress between two
//!   events, finish, are preempted and checkpoint (spec client §3.4, §5.4);
//! - `rpc.rs`: one scheduler RPC: the request a host sends, the reply it reads, and
//!   the [`ServerLink`] they go through (spec client §4);
//! - `invariants.rs`: the client invariants the world checks after every host event;
//! - `seed_state.rs` and `modern_state.rs`: each policy's own state, which the host
//!   holds ([`ProjectState::seed`], [`ProjectState::modern`], [`ClientHost::modern`])
//!   and only that policy reads: below the host, so that it can hold them without
//!   naming a policy.

mod execution;
mod invariants;
mod job;
mod modern_state;
mod rpc;
mod seed_state;
#[cfg(test)]
mod tests;
mod xfer;
#[cfg(test)]
pub(crate) use xfer::JOB_FILES_BYTES;

pub use super::truth::correct_output;
pub(crate) use execution::run_for;
pub use execution::{CLIENT_ERROR_EXIT, Execution, execution, gpu_relative_speeds};
pub use job::{ClientJob, JobFlags, JobUsage, TaskState};
pub use modern_state::{
    FlagIndex, Flags, ModernHost, ModernProject, RscFlags, TransferFlag, TransferFlags,
};
pub use rpc::{
    Answer, InFlight, RpcReason, RpcState, RpcStatus, Sent, ServerLink, WorkRequest, status_of,
};
#[cfg(test)]
pub(crate) use rpc::{test_answer, test_reply};
pub use seed_state::SeedProject;
pub use xfer::{Dir, HostXfer};
// The time statistics live with the availability that computes them; the host keeps
// and sends them, and this path still names them.
pub use super::availability::TimeStats;

use super::availability::{AvailSpec, Availability};
use super::background::{BACKGROUND, Background, HostExtra, HostPrefs, ncpus_for_pct};
use super::config::ClientConfig;
use super::estimate::Dcf;
use super::merit::HostMerit;
use super::truth::{HostTruth, OutputModel};
use crate::engine::Time;
use crate::engine::rng::SimRng;
use crate::server::resource::Coproc;
use crate::server::types::*;
use rand::RngExt;

/// Per-(host, project) client state (spec client §1.1, §2.3, §2.7, §2.8): what both
/// policies, the host's shared mechanics or the world's statistics read, and each
/// policy's own state, [`seed`](Self::seed) and [`modern`](Self::modern).
///
/// Every slot holds both parts, though a host runs one policy for the whole run (its
/// group's `[client] policy`). An enum of the two would take the larger part and a
/// tag, 136 bytes for 160, and bring the slot to 272 bytes: a 288-byte block of the
/// allocator instead of 304 for a one-project host (16 MB at a million hosts). That
/// is not worth what it costs: every read of either part would match on the policy,
/// and so would the host's shared mechanics before each write they make for the
/// modern client (a task's instance-seconds, a finished job or upload, a reply's
/// `no_rsc_apps`); the world's starting state and `[[expect]]` entries would have to
/// answer for a part the host lacks; and every slot, the tests' included, would need
/// its policy to be built. Side by side each part is a plain field, and the slot
/// costs what its fields cost before they were split: 296 bytes, within the host's
/// budget (`src/memory_budget.rs`).
#[derive(Clone, Debug, Default)]
pub struct ProjectState {
    /// Index of the project in the world (scenario order).
    pub project: u16,
    /// This host's id in that project's database (0 = never contacted).
    pub hostid: HostId,
    pub resource_share: f64,
    // --- project-level RPC backoff (§1.9, §2.8) ---
    /// Earliest time any scheduler of the project may be contacted (0 = now).
    pub min_rpc_time: f64,
    pub nrpc_failures: u32,
    pub master_fetch_failures: u32,
    pub master_url_fetch_pending: bool,
    pub sched_rpc_pending: RpcReason,
    /// Duration correction factor (§3.6): the host's runtime estimates keep it up to
    /// date under both policies, and those of the seed policy use it.
    pub dcf: Dcf,
    /// The work request of the project's last scheduler RPC (`req_secs`,
    /// `req_instances`, `estimated_delay`), kept for scripted expectations only
    /// ([`ClientConfig::keep_last_request`]): no policy reads it. Boxed and kept only
    /// in a scenario with `[[expect]]` entries, it costs 8 bytes a host-project
    /// instead of 88 (88 MB at a million hosts); allocated at the first RPC and
    /// overwritten in place after ([`Self::keep_request`]). Read it with
    /// [`Self::last_request`].
    pub last_request: Option<Box<WorkRequest>>,
    // --- each policy's own (§1.1–1.3; §2.3–2.7, §8.4) ---
    /// What only the seed policy reads: its CPU average and resource debt.
    pub seed: SeedProject,
    /// What only the modern policy reads: REC, priority, work fetch, RR simulation.
    pub modern: ModernProject,
    // --- accounting (figures of merit, hosts.csv) ---
    /// CPU seconds computed for the project (all jobs, wasted or not).
    pub cpu_time: f64,
    /// Peak FLOPs used (`flops_used`, spec client §5.4).
    pub flops_used: f64,
    /// Peak FLOPs of results reported after their deadline (§5.7).
    pub flops_wasted: f64,
    /// Seconds since a task of this project last ran, and its running sum of squares
    /// weighted as the emulator does, on its global step grid (§5.4).
    pub idle: super::merit::IdleRun,
    /// GPU instance-seconds computed for the project (all jobs, wasted or not).
    pub gpu_time: f64,
    /// Jobs received from the project. These five counters are `u32`, 20 bytes
    /// less a host-project than `u64` (20 MB at a million hosts), and cannot
    /// overflow: a run is shorter than `INT_MAX` seconds (`simulation.duration`),
    /// a host makes at most a few RPCs per event, and a reply carries at most a
    /// buffer's worth of jobs, so no count comes near 4.3 billion. The tables widen
    /// them to `u64` to sum them.
    pub njobs: u32,
    /// RPCs that reached an up server.
    pub nrpcs: u32,
    /// RPC attempts that failed (outage, transport).
    pub nrpc_failed: u32,
    pub met_deadline: u32,
    pub missed_deadline: u32,
}

impl ProjectState {
    /// Whether this is one of the host's background projects, whose servers are not
    /// simulated ([`super::background`]): its slot carries no world project.
    pub fn is_background(&self) -> bool {
        self.project == BACKGROUND
    }

    /// The work request of the project's last scheduler RPC; all zeros before the
    /// first, or in a run that keeps none ([`ClientConfig::keep_last_request`]).
    pub fn last_request(&self) -> WorkRequest {
        self.last_request.as_deref().copied().unwrap_or_default()
    }

    /// Keeps `work` as the last request when the run keeps it: one allocation per
    /// host-project for the whole run, then an overwrite in place, so an RPC
    /// allocates nothing.
    pub(crate) fn keep_request(&mut self, work: WorkRequest, cfg: &ClientConfig) {
        if !cfg.keep_last_request {
            return;
        }
        match &mut self.last_request {
            Some(w) => **w = work,
            None => self.last_request = Some(Box::new(work)),
        }
    }

    /// The length of the backoff just set by a failed RPC or master fetch:
    /// `min_rpc_time - now`.
    pub(crate) fn backoff_length(&self, now: f64) -> f64 {
        (self.min_rpc_time - now).max(0.0)
    }
}

/// Behaviour of a host group that is not policy: how its outputs err and detaching.
/// The error and wrong-result probabilities are each host's own ([`HostTruth`]).
#[derive(Clone, Debug, Default)]
pub struct HostBehaviour {
    /// How each project's apps err, by world project index, then app (`appid − 1`)
    /// (missing: never collides).
    pub outputs: Vec<Vec<OutputModel>>,
    /// Probability, per scheduler RPC, that the client was detached and re-attached
    /// since its last RPC to that project (spec backend §2.4.2).
    pub detach_prob: f64,
    /// The group's background projects (`[host_group.background]`), if any: the jobs
    /// of each host's `k`-th one ([`super::background`]).
    pub background: Option<Background>,
    /// The run's files (spec client §8), shared by every group; `None`: jobs have no
    /// files and the host makes no transfer.
    pub files: Option<std::sync::Arc<super::files::FilesPlan>>,
}

/// What a host group shares: its client configuration, job behaviour and
/// availability model.
#[derive(Clone, Debug)]
pub struct GroupCtx {
    pub cfg: ClientConfig,
    pub behaviour: HostBehaviour,
    pub avail: AvailSpec,
}

/// One simulated host.
pub struct ClientHost {
    pub group: u16,
    /// Global host index (its random stream id).
    pub index: u32,
    pub ncpus: u32,
    /// Per-CPU FLOPS.
    pub p_fpops: f64,
    pub rng: SimRng,
    /// The availability's own stream ([`StreamKind::HostAvailability`]): on/off
    /// periods do not depend on the host's job draws.
    ///
    /// [`StreamKind::HostAvailability`]: crate::streams::StreamKind::HostAvailability
    pub avail_rng: SimRng,
    pub projects: Vec<ProjectState>,
    /// Jobs in arrival order.
    pub jobs: Vec<ClientJob>,
    pub avail: Availability,
    pub time_stats: TimeStats,
    /// Time up to which progress has been integrated.
    pub last_advance: Time,
    pub joined: Time,
    /// When the host leaves for good (`Time::MAX`: never).
    pub leave_at: Time,
    pub gone: bool,
    /// The RPC this host waits the answer of, if any (spec client §4.3): only
    /// with a project whose web server queues RPCs.
    pub rpc_in_flight: Option<InFlight>,
    /// The modern policy's cadences and REC interval ([`ModernHost`]); the seed
    /// policy keeps nothing per host.
    pub modern: ModernHost,
    pub merit: HostMerit,
    /// The host's own error and wrong-result probabilities, error class and truth
    /// stream (a reliable host until the world sets them).
    pub truth: HostTruth,
    /// The host's GPUs, as plain data: the server schedules by them; this client
    /// does not run jobs on them yet.
    pub coprocs: Box<[Coproc]>,
    /// The app versions the host's jobs run with (spec client §5.4), each once; a job
    /// holds its index ([`ClientJob::app_version`]). One is kept inline: most hosts
    /// run one version.
    pub app_versions: smallvec::SmallVec<[JobUsage; 1]>,
    /// The host's file transfers (spec client §8); `None` in a run without files.
    pub xfer: Option<Box<HostXfer>>,
}

impl ClientHost {
    /// A host that joins at `joined`, with nothing done yet: its first event
    /// schedules CPUs and checks work fetch at once (the client's start-up).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        group: u16,
        index: u32,
        ncpus: u32,
        p_fpops: f64,
        rng: SimRng,
        avail_rng: SimRng,
        projects: Vec<ProjectState>,
        avail: Availability,
        joined: Time,
    ) -> Self {
        let time_stats = avail.time_stats();
        ClientHost {
            group,
            index,
            ncpus,
            p_fpops,
            rng,
            avail_rng,
            projects,
            jobs: Vec::new(),
            avail,
            time_stats,
            last_advance: joined,
            joined,
            leave_at: Time::MAX,
            gone: false,
            rpc_in_flight: None,
            modern: ModernHost::starting(joined as f64),
            merit: HostMerit::default(),
            coprocs: Box::default(),
            app_versions: smallvec::SmallVec::new(),
            xfer: None,
            truth: HostTruth::reliable(crate::engine::rng::stream(
                0,
                crate::streams::StreamKind::HostTruth,
                index as u64,
            )),
        }
    }

    /// A test host joined at 0 with the given CPUs, speed and project shares, its
    /// cadence flags clear and its clocks at 0: the policies' unit tests drive it
    /// event by event.
    #[cfg(test)]
    pub(crate) fn for_test(ncpus: u32, p_fpops: f64, shares: &[f64]) -> Self {
        let projects = shares
            .iter()
            .enumerate()
            .map(|(i, &rs)| ProjectState {
                project: i as u16,
                resource_share: rs,
                ..Default::default()
            })
            .collect();
        use crate::engine::rng::stream;
        use crate::streams::StreamKind;
        let rng = stream(1, StreamKind::Host, 0);
        let avail_rng = stream(1, StreamKind::HostAvailability, 0);
        let mut h = Self::new(
            0,
            0,
            ncpus,
            p_fpops,
            rng,
            avail_rng,
            projects,
            Availability::default(),
            0,
        );
        // App version 0: a plain one-CPU job, the default of the jobs tests build.
        h.app_versions.push(JobUsage::default());
        h.modern.last_work_fetch_check = 0.0;
        h.modern.must_check_work_fetch = false;
        h.modern.request_poll_at = 0.0;
        h.modern.last_schedule = 0.0;
        h.modern.must_schedule_cpus = false;
        h.modern.rec_interval_start = 0.0;
        h
    }

    /// A uniform draw `U`, or the pinned constant (spec client §6 "U fixed").
    pub(crate) fn draw_u(&mut self, cfg: &ClientConfig) -> f64 {
        match cfg.pin_u {
            Some(u) => u,
            None => self.rng.random(),
        }
    }

    /// Whether tasks compute now (host on and computing allowed).
    pub fn computing(&self, cfg: &ClientConfig) -> bool {
        cfg.bce_compat_compute_when_off || self.avail.computing()
    }

    /// Number of CPUs the client uses (`min(p_ncpus, max_cpus)` in the seed era),
    /// after the host's own `max_ncpus_pct` if it has one
    /// ([`ncpus_for_pct`], BOINC `CLIENT_STATE::set_n_usable_cpus`).
    pub(crate) fn usable_cpus(&self, cfg: &ClientConfig) -> u32 {
        let n = match self.extra() {
            Some(x) => ncpus_for_pct(self.ncpus, x.prefs.max_ncpus_pct as f64),
            None => self.ncpus,
        };
        n.min(cfg.max_cpus).max(1)
    }

    /// Whether the user limits the CPUs the client uses below the host's
    /// (`n_usable_cpus < original_p_ncpus` in `enforce_run_list`): then no job may
    /// take the CPUs in use past the usable ones (spec client §3.3).
    pub(crate) fn cpus_limited(&self, cfg: &ClientConfig) -> bool {
        self.usable_cpus(cfg) < self.ncpus
    }

    /// The host's own preferences (all `NaN` if it has none).
    pub fn prefs(&self) -> HostPrefs {
        self.extra().map_or_else(HostPrefs::default, |x| x.prefs)
    }

    /// The host's own preferences and the stream of its background jobs, when it has
    /// either (`None`: its group's `[client]` values and no background project).
    /// Boxed behind one pointer kept in [`HostTruth`]'s unused bytes, so that the host
    /// is no larger for it.
    pub fn extra(&self) -> Option<&HostExtra> {
        self.truth.extra.as_deref()
    }

    pub(crate) fn extra_mut(&mut self) -> Option<&mut HostExtra> {
        self.truth.extra.as_deref_mut()
    }

    /// Gives the host its own preferences and background stream (the world's build
    /// does, from the group's draws; an importer may set explicit values).
    pub fn set_extra(&mut self, extra: HostExtra) {
        self.truth.extra = Some(Box::new(extra));
    }

    /// `pref` if the host has one, else the group's `group` value.
    fn pref(&self, pref: impl Fn(&HostPrefs) -> f32, group: f64) -> f64 {
        match self.extra() {
            Some(x) if !pref(&x.prefs).is_nan() => pref(&x.prefs) as f64,
            _ => group,
        }
    }

    /// `work_buf_min_days`: the host's own, or its group's (spec client §1.1, §2.1).
    pub(crate) fn work_buf_min_days(&self, cfg: &ClientConfig) -> f64 {
        self.pref(|p| p.work_buf_min_days, cfg.work_buf_min_days)
    }

    /// `work_buf_additional_days` (modern): the host's own, or its group's (§2.1).
    pub(crate) fn work_buf_additional_days(&self, cfg: &ClientConfig) -> f64 {
        self.pref(|p| p.work_buf_additional_days, cfg.work_buf_additional_days)
    }

    /// `work_buf_max_days` (seed high water mark): the host's own, or its group's
    /// (§1.1). A host with its own buffer but no own high water mark has
    /// `work_buf_min_days + work_buf_additional_days`, the mark BOINC's later
    /// preferences replaced it with, so that a drawn minimum never lies above a
    /// fixed maximum.
    pub(crate) fn work_buf_max_days(&self, cfg: &ClientConfig) -> f64 {
        match self.extra() {
            Some(x)
                if x.prefs.work_buf_max_days.is_nan()
                    && !(x.prefs.work_buf_min_days.is_nan()
                        && x.prefs.work_buf_additional_days.is_nan()) =>
            {
                self.work_buf_min_days(cfg) + self.work_buf_additional_days(cfg)
            }
            _ => self.pref(|p| p.work_buf_max_days, cfg.work_buf_max_days),
        }
    }

    /// Modern `work_buf_min()` with the host's preferences
    /// ([`ClientConfig::work_buf_min`], spec client §2.2).
    pub(crate) fn work_buf_min(&self, cfg: &ClientConfig) -> f64 {
        match self.extra() {
            None => cfg.work_buf_min(),
            Some(_) => ClientConfig::buf_min(self.work_buf_min_days(cfg)),
        }
    }

    /// Modern `work_buf_total()` with the host's preferences
    /// ([`ClientConfig::work_buf_total`], spec client §2.2).
    pub(crate) fn work_buf_total(&self, cfg: &ClientConfig) -> f64 {
        match self.extra() {
            None => cfg.work_buf_total(),
            Some(_) => ClientConfig::buf_total(
                self.work_buf_min_days(cfg),
                self.work_buf_additional_days(cfg),
            ),
        }
    }

    /// The common start of every host event: integrates progress up to `now` under
    /// the old availability, applies availability changes due by `now` (tasks quit
    /// when computing stops, spec client §3.5), and refreshes the time statistics.
    /// Returns true if computing was allowed before and is not now.
    pub(crate) fn begin_event(&mut self, now: Time, g: &GroupCtx) -> bool {
        self.advance(now, &g.cfg);
        let was = self.computing(&g.cfg);
        // The client updates its statistics at the end of a main-loop iteration that
        // did nothing (`do_something`, `client/client_state.cpp`; `client_state.C` in
        // the 2003 client), so what it does at `now` (a request, the RR simulation)
        // uses the statistics of its updates before `now`: the first request after a
        // restart carries the fractions from before the stop (spec client §1.11,
        // §3.5).
        self.avail.update(now - 1, &g.avail, &mut self.avail_rng);
        self.time_stats = self.avail.time_stats();
        self.avail.update(now, &g.avail, &mut self.avail_rng);
        let stopped = was && !self.computing(&g.cfg);
        if stopped {
            if self.avail.is_on() && g.cfg.leave_apps_in_memory {
                for k in 0..self.jobs.len() {
                    self.preempt(k, true);
                }
            } else {
                self.quit_all(&g.cfg);
            }
        }
        stopped
    }
}
