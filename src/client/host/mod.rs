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
//! - `invariants.rs`: the client invariants the world checks after every host event.

mod execution;
mod invariants;
mod job;
mod rpc;
#[cfg(test)]
mod tests;
mod xfer;
#[cfg(test)]
pub(crate) use xfer::JOB_FILES_BYTES;

pub use super::truth::correct_output;
pub(crate) use execution::run_for;
pub use execution::{CLIENT_ERROR_EXIT, Execution, execution, gpu_relative_speeds};
pub use job::{ClientJob, JobFlags, JobUsage, TaskState};
#[cfg(test)]
pub(crate) use rpc::test_reply;
pub use rpc::{RpcReason, RpcStatus, ServerLink, WorkRequest, status_of};
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

/// Per-(host, project) client state: the union of what both policies keep (spec
/// client §1.1, §2.3, §2.7, §2.8).
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
    // --- seed policy (§1.2–1.3) ---
    pub exp_avg_cpu: f64,
    pub exp_avg_mod_time: f64,
    pub resource_debt: f64,
    pub debt_order: u32,
    /// Duration correction factor (§3.6); the seed policy's estimates use it.
    pub dcf: Dcf,
    // --- modern policy (§2.3–2.7) ---
    pub rec: f64,
    pub rec_time: f64,
    /// Scratch copy of `rec` while building run lists (`adjust_rec_sched`).
    pub rec_temp: f64,
    /// Instance-seconds of CPU since the start of the REC interval.
    pub secs_this_rec_interval: f64,
    pub sched_priority: f64,
    /// The work request of the project's last scheduler RPC (`req_secs`,
    /// `req_instances`, `estimated_delay`), kept for scripted expectations only
    /// ([`ClientConfig::keep_last_request`]): no policy reads it. Boxed and kept only
    /// in a scenario with `[[expect]]` entries, it costs 8 bytes a host-project
    /// instead of 88 (88 MB at a million hosts); allocated at the first RPC and
    /// overwritten in place after ([`Self::keep_request`]). Read it with
    /// [`Self::last_request`].
    pub last_request: Option<Box<WorkRequest>>,
    /// The work-fetch backoff of each processor type, by BOINC's number (the
    /// CPU's at [`CPU`](crate::server::resource::CPU); spec client §2.7,
    /// `RSC_PROJECT_WORK_FETCH::backoff_interval`): its current length, and when it
    /// ends (0: none).
    pub backoff_interval: [f64; crate::server::resource::N_RSC],
    pub backoff_time: [f64; crate::server::resource::N_RSC],
    /// The last reply's `no_rsc_apps`: the project has no app version for that
    /// processor type, so work fetch never asks it for that type (spec client §2.6).
    pub no_rsc_apps: RscFlags,
    /// Whether the last request that asked for each processor type got no jobs of
    /// it (by BOINC's number; `PROJECT::sched_req_no_work[i]`, spec client §2.6): a
    /// better project so marked does not keep a piggy-backed request from asking
    /// for that type.
    pub sched_req_no_work: RscFlags,
    /// Transfer flags the modern client's work fetch and reporting read (spec client
    /// §8.4), refreshed by the host's transfer step; always false without files.
    pub download_stalled: bool,
    pub too_many_uploads: bool,
    pub actively_uploading: bool,
    /// A job of the project finished since its last reply: work fetch may ask it
    /// for idle instances although it is uploading
    /// (`request_if_idle_and_uploading`, set in `CLIENT_STATE::app_finished`).
    pub request_if_idle_and_uploading: bool,
    /// RR simulation outputs (§2.5 step 5).
    pub deadlines_missed: u32,
    pub deadlines_missed_copy: u32,
    pub nused_total: f64,
    pub n_runnable_jobs: u32,
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

/// One flag per processor type, by BOINC's number, one bit each: read as an array
/// (`flags[rsc]`), set with [`RscFlags::set`]. Two `[bool; N_RSC]` of
/// [`ProjectState`] took 8 bytes; as bits they take 2, which brings the state to
/// 296 bytes, a 304-byte block of the allocator instead of 320 for a one-project
/// host (16 MB at a million hosts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RscFlags(u8);

impl RscFlags {
    /// Sets the flag of processor type `rsc` (`rsc < N_RSC`, as an array index).
    #[inline]
    pub fn set(&mut self, rsc: usize, on: bool) {
        assert!(rsc < crate::server::resource::N_RSC, "processor type {rsc}");
        if on {
            self.0 |= 1 << rsc;
        } else {
            self.0 &= !(1 << rsc);
        }
    }
}

impl std::ops::Index<usize> for RscFlags {
    type Output = bool;
    /// The flag of processor type `rsc`; out of range, a panic, as an array's.
    #[inline]
    fn index(&self, rsc: usize) -> &bool {
        assert!(rsc < crate::server::resource::N_RSC, "processor type {rsc}");
        if self.0 & (1 << rsc) != 0 {
            &true
        } else {
            &false
        }
    }
}

impl From<[bool; crate::server::resource::N_RSC]> for RscFlags {
    fn from(flags: [bool; crate::server::resource::N_RSC]) -> Self {
        let mut f = RscFlags(0);
        for (rsc, &on) in flags.iter().enumerate() {
            f.set(rsc, on);
        }
        f
    }
}

impl PartialEq<[bool; crate::server::resource::N_RSC]> for RscFlags {
    fn eq(&self, other: &[bool; crate::server::resource::N_RSC]) -> bool {
        *self == RscFlags::from(*other)
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
    // --- modern client cadence (§2.9, §3.1) ---
    /// The last gated check of the RPC poll (`last_work_fetch_time`). While
    /// `must_check_work_fetch` is set it holds instead the poll that will use the
    /// request up (`scheduler_rpc_poll` clears the flag and restarts the 60-s grid
    /// there, spec client §2.9 step 5), as the modern policy knew it at the end of its
    /// last event; `f64::INFINITY`: raised since (a finished upload), so the host's
    /// next event is the first poll that may use it. One field for both keeps the
    /// host small: the last check is not needed while a check is pending.
    pub last_work_fetch_check: f64,
    pub must_check_work_fetch: bool,
    /// The RPC poll does not act before this time: the last scheduler operation plus
    /// `SCHEDULER_RPC_POLL_PERIOD` (spec client §2.1, §2.9).
    pub next_rpc_poll: f64,
    pub last_schedule: f64,
    pub must_schedule_cpus: bool,
    pub rec_interval_start: f64,
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
            last_work_fetch_check: f64::INFINITY,
            next_rpc_poll: 0.0,
            must_check_work_fetch: true,
            last_schedule: f64::NEG_INFINITY,
            must_schedule_cpus: true,
            rec_interval_start: joined as f64,
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
        h.last_work_fetch_check = 0.0;
        h.must_check_work_fetch = false;
        h.last_schedule = 0.0;
        h.must_schedule_cpus = false;
        h.rec_interval_start = 0.0;
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
