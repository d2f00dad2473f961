//! One simulated volunteer host running a BOINC client: its jobs, its per-project
//! client state, its execution model, and the scheduler RPC glue shared by both
//! policies.
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

use super::availability::{AvailSpec, Availability};
use super::config::{ClientConfig, Policy};
use super::estimate::{self, Dcf};
use super::merit::HostMerit;
use crate::engine::Time;
use crate::engine::rng::SimRng;
use crate::server::db::OutputStatus;
use crate::server::resource::{Coproc, ProcType, coproc_of};
use crate::server::scheduler::{Job, ReportedJob};
use crate::server::types::*;
use rand::RngExt;

/// `ERR_RESULT_START`, the exit status of a modelled client error.
pub const CLIENT_ERROR_EXIT: i32 = -177;

pub use super::truth::correct_output;
use super::truth::{HostTruth, OutputModel};

/// Why an RPC is made (`rpc_reason`, modern client; spec client §2.7, §2.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RpcReason {
    #[default]
    None,
    ResultsDue,
    NeedWork,
    Init,
}

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
    /// `req_instances`, `estimated_delay`), kept for scripted expectations.
    pub last_request: WorkRequest,
    /// The work-fetch backoff of each processor type, by BOINC's number (the
    /// CPU's at [`CPU`](crate::server::resource::CPU); spec client §2.7,
    /// `RSC_PROJECT_WORK_FETCH::backoff_interval`): its current length, and when it
    /// ends (0: none).
    pub backoff_interval: [f64; crate::server::resource::N_RSC],
    pub backoff_time: [f64; crate::server::resource::N_RSC],
    /// The last reply's `no_rsc_apps`: the project has no app version for that
    /// processor type, so work fetch never asks it for that type (spec client §2.6).
    pub no_rsc_apps: [bool; crate::server::resource::N_RSC],
    pub sched_req_no_work: bool,
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
    /// Jobs received from the project.
    pub njobs: u64,
    /// RPCs that reached an up server.
    pub nrpcs: u64,
    /// RPC attempts that failed (outage, transport).
    pub nrpc_failed: u64,
    pub met_deadline: u64,
    pub missed_deadline: u64,
    /// Project RPC backoffs started since the world last collected them, and their
    /// total length (s). The world drains them after each host event into the
    /// `client_backoffs` series, so the policies need no link to the statistics.
    pub backoffs_pending: u32,
    pub backoff_pending_s: f64,
}

impl ProjectState {
    /// Records the backoff just set by a failed RPC or master fetch: its length is
    /// `min_rpc_time - now`.
    pub fn note_backoff(&mut self, now: f64) {
        self.backoffs_pending += 1;
        self.backoff_pending_s += (self.min_rpc_time - now).max(0.0);
    }
}

/// Where a job is in the client (`result.state` + `active_task`, simplified).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TaskState {
    /// Downloaded, never run.
    #[default]
    Unstarted,
    /// Executing on a CPU now.
    Running,
    /// Preempted and kept in memory: loses nothing.
    Suspended,
    /// Preempted and removed from memory: restarted from its checkpoint.
    Quit,
    /// Finished computing (success or error); waits to be reported.
    Done,
}

/// The job's app version on this host, as the reply gave it: its app, what it
/// uses while it runs (`avg_ncpus`, the GPU type and `coproc_usage`; spec client
/// §5.4, backend §2.4.4) and how fast it truly computes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JobUsage {
    /// The processor type the job is scheduled on (CPU, or its GPU type).
    pub proc_type: ProcType,
    /// The workunit's app within its project (`appid − 1`): which app's outputs a
    /// wrong result takes ([`HostBehaviour::outputs`]). Beside `proc_type`, it
    /// fills padding: the job costs no more memory.
    pub app: u16,
    /// CPUs the job uses: several for a multi-threaded job, a fraction for most GPU
    /// jobs.
    pub avg_ncpus: f64,
    /// Instances of its GPU type the job uses (0 for a CPU job; may be a fraction).
    pub gpu_usage: f64,
    /// Simulator-only: FLOPS the job computes at while it runs (the server's
    /// `Job::true_flops`); `None`: a one-CPU job at the host's `p_fpops`.
    pub true_flops: Option<f64>,
}

impl Default for JobUsage {
    /// A plain one-CPU job.
    fn default() -> Self {
        JobUsage {
            proc_type: ProcType::Cpu,
            app: 0,
            avg_ncpus: 1.0,
            gpu_usage: 0.0,
            true_flops: None,
        }
    }
}

impl JobUsage {
    /// Whether the job runs on a GPU (`uses_coprocs`).
    pub fn uses_gpu(&self) -> bool {
        self.proc_type != ProcType::Cpu
    }
}

/// A job the client holds (spec client §1.4, §2.5, §3).
#[derive(Clone, Debug, Default)]
pub struct ClientJob {
    /// Index into [`ClientHost::projects`].
    pub project: u8,
    pub result_id: ResultId,
    pub workunit_id: WuId,
    pub received_time: Time,
    pub report_deadline: Time,
    /// `wu.rsc_fpops_est`: the client's estimate of the job's size.
    pub rsc_fpops_est: f64,
    /// The app version's `flops` from the reply (the server's projected speed).
    pub app_flops: f64,
    /// Simulator-only: the job's true size. Only execution reads it; the client's
    /// estimates go through [`estimate`].
    pub true_fpops: f64,
    /// True FLOPs still to compute.
    pub flops_left: f64,
    /// `flops_left` at the last checkpoint.
    pub checkpoint_flops_left: f64,
    pub state: TaskState,
    /// `max_elapsed_time` (seconds, [`estimate::max_elapsed_time`]): the job is
    /// aborted when its CPU time reaches it.
    pub max_elapsed_time: f64,
    /// Set when the job ran into `max_elapsed_time` (`EXIT_TIME_LIMIT_EXCEEDED`).
    pub time_limit_exceeded: bool,
    /// What the job uses and how fast it computes.
    pub usage: JobUsage,
    /// Elapsed seconds computed, and the value at the last checkpoint. A one-CPU job
    /// uses one CPU, so this is also its CPU time; others report
    /// [`ClientJob::reported_cpu_time`].
    pub cpu_time: f64,
    pub checkpoint_cpu_time: f64,
    pub peak_flop_count: f64,
    pub completed_time: Time,
    /// Outcome decided when computing ends.
    pub client_state: i32,
    pub exit_status: i32,
    pub output: f64,
    /// Whether `output` is right (simulator truth; `None` for an error).
    pub output_correct: Option<bool>,
    // --- modern CPU scheduler scratch (§3.2–3.3) ---
    pub run_interval_start: f64,
    pub edf_scheduled: bool,
    pub once_ran_edf: bool,
    pub rr_sim_misses_deadline: bool,
    /// Time of the last projected miss (keeps a task marked one period, §3.2 step 2).
    pub last_deadline_miss_time: f64,
    pub scheduled: bool,
}

impl ClientJob {
    /// A job of estimate `rsc_fpops_est` that really takes `true_fpops`, sent with
    /// app version `flops` and bound `rsc_fpops_bound`; its time limit is for a
    /// client estimating at `flops`, and nothing of it has run.
    pub fn sized(rsc_fpops_est: f64, true_fpops: f64, flops: f64, rsc_fpops_bound: f64) -> Self {
        ClientJob {
            rsc_fpops_est,
            app_flops: flops,
            true_fpops,
            flops_left: true_fpops,
            checkpoint_flops_left: true_fpops,
            max_elapsed_time: rsc_fpops_bound / flops,
            ..Default::default()
        }
    }
    pub fn ready_to_report(&self) -> bool {
        self.state == TaskState::Done
    }
    /// Not finished computing (`state < COMPUTE_DONE`).
    pub fn unfinished(&self) -> bool {
        self.state != TaskState::Done
    }
    pub fn is_running(&self) -> bool {
        self.state == TaskState::Running
    }
    /// CPU seconds the job used: its elapsed time times its `avg_ncpus` (spec
    /// client §5.4), what the result reports as `cpu_time`.
    pub fn reported_cpu_time(&self) -> f64 {
        self.cpu_time * self.usage.avg_ncpus
    }
    /// Fraction of the true size done.
    pub fn fraction_done(&self, true_size: f64) -> f64 {
        if true_size <= 0.0 {
            1.0
        } else {
            (1.0 - self.flops_left / true_size).clamp(0.0, 1.0)
        }
    }
}

/// How a running job executes over an interval (spec client §5.4).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Execution {
    /// FLOPS while it runs: its true speed, times `cpu_scale` for a CPU job.
    pub flops: f64,
    /// Fraction of the wall time it runs: `gpu_active_frac` for a GPU job, else 1.
    /// Between two events the simulator spreads a GPU's suspensions evenly
    /// (docs/fidelity.md).
    pub run_frac: f64,
    /// CPUs it occupies while it runs: `avg_ncpus`, times `cpu_scale` for a CPU job.
    pub cpus: f64,
}

/// How job `j` executes on a host of per-CPU speed `p_fpops` whose CPU tasks run
/// at `cpu_scale` ([`ClientHost::cpu_scale`]) and whose GPUs may compute
/// `gpu_active_frac` of the time.
pub fn execution(j: &ClientJob, p_fpops: f64, cpu_scale: f64, gpu_active_frac: f64) -> Execution {
    let flops = j.usage.true_flops.unwrap_or(p_fpops);
    let cpus = j.usage.avg_ncpus;
    if j.usage.uses_gpu() {
        Execution {
            flops,
            run_frac: gpu_active_frac,
            cpus,
        }
    } else if cpu_scale == 1.0 {
        Execution {
            flops,
            run_frac: 1.0,
            cpus,
        }
    } else {
        Execution {
            flops: flops * cpu_scale,
            run_frac: 1.0,
            cpus: cpus * cpu_scale,
        }
    }
}

/// Each processor type's `relative_speed` (spec client §2.3): 1 for the CPU, and
/// `count·0.2·peak_flops / p_fpops` for a GPU type the host has (0 otherwise).
pub fn gpu_relative_speeds(
    coprocs: &[Coproc],
    p_fpops: f64,
) -> [f64; crate::server::resource::N_RSC] {
    let mut rel = [0.0; crate::server::resource::N_RSC];
    rel[0] = 1.0;
    for t in &ProcType::ALL[1..] {
        if let Some(c) = coproc_of(coprocs, *t) {
            rel[t.index()] = c.count as f64 * 0.2 * c.peak_flops / p_fpops;
        }
    }
    rel
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
}

/// What a host group shares: its client configuration, job behaviour and
/// availability model.
#[derive(Clone, Debug)]
pub struct GroupCtx {
    pub cfg: ClientConfig,
    pub behaviour: HostBehaviour,
    pub avail: AvailSpec,
}

/// The time-statistics the client keeps and sends to the server (spec client §1.11,
/// §3.5), as exponential moving averages over the host's real on/active/connected
/// intervals.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeStats {
    pub on_frac: f64,
    pub active_frac: f64,
    pub connected_frac: f64,
}

/// What the server answered (spec client §4.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RpcStatus {
    /// No scheduler URL could be reached (outage, or the host is not connected).
    Failed,
    /// The reply said `project_is_down`.
    Down { request_delay: f64 },
    /// A real reply.
    Ok {
        new_jobs: u32,
        request_delay: f64,
        no_work: bool,
    },
}

/// A work request of one RPC.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WorkRequest {
    /// CPU seconds asked for (`work_req_seconds`, `cpu_req_secs`).
    pub req_secs: f64,
    /// CPU instances asked for (`cpu_req_instances`, modern only).
    pub req_instances: f64,
    /// The client's queued work, seconds (`estimated_delay`).
    pub estimated_delay: f64,
    /// GPU seconds and instances asked for, by processor type (index 0 unused: the
    /// CPU's are `req_secs` and `req_instances`; modern only, spec client §4.1).
    pub gpu_req_secs: [f64; crate::server::resource::N_RSC],
    pub gpu_req_instances: [f64; crate::server::resource::N_RSC],
}

impl WorkRequest {
    /// Whether it asks for any work, of any resource.
    pub fn asks(&self) -> bool {
        self.req_secs > 0.0
            || self.req_instances > 0.0
            || self.gpu_req_secs.iter().any(|&x| x > 0.0)
            || self.gpu_req_instances.iter().any(|&x| x > 0.0)
    }
}

/// Everything a host sends in one scheduler RPC (spec client §4.1): who it is,
/// what it asks for, and its jobs, from which the request's reported results and
/// `other_results` are read ([`Self::reported`], [`Self::in_progress`]). The server
/// side builds whatever lists it needs in buffers of its own, so a host holds no
/// buffers between its RPCs and lends none.
pub struct RpcRequest<'a> {
    /// Global index of the host (its random streams' id).
    pub host_index: u32,
    /// The host's group, whose attributes a new host record takes.
    pub group: u16,
    /// The project's index in the world.
    pub project: u16,
    pub hostid: HostId,
    pub reattached: bool,
    pub work: WorkRequest,
    /// Index of the project in the host's own list, which its jobs carry.
    pub(crate) slot: u8,
    pub(crate) jobs: &'a [ClientJob],
    pub p_ncpus: u32,
    pub p_fpops: f64,
    /// The host's coprocessors (`<coprocs>` of the request's host info).
    pub coprocs: &'a [Coproc],
    pub time_stats: TimeStats,
}

impl RpcRequest<'_> {
    /// The results the request reports: the project's jobs ready to report, in the
    /// client's order (spec client §4.1, `<result>` elements).
    pub fn reported(&self) -> impl Iterator<Item = ReportedJob> + '_ {
        self.jobs
            .iter()
            .filter(|j| j.project == self.slot && j.ready_to_report())
            .map(|j| ReportedJob {
                result_id: j.result_id,
                client_state: j.client_state,
                exit_status: j.exit_status,
                cpu_time: j.reported_cpu_time(),
                elapsed_time: j.cpu_time,
                output: j.output,
                output_correct: j.output_correct,
                output_status: OutputStatus::Ok,
            })
    }

    /// The project's other jobs the client holds (`<other_results>`), in the
    /// client's order; the server sorts them.
    pub fn in_progress(&self) -> impl Iterator<Item = ResultId> + '_ {
        self.jobs
            .iter()
            .filter(|j| j.project == self.slot && !j.ready_to_report())
            .map(|j| j.result_id)
    }
}

/// The whole answer to one scheduler RPC (spec client §4.2): its status, the host
/// id a new host record got, and, for a real reply, the jobs sent, the jobs to
/// abort, and the processor types the project has no app version for. The lists
/// borrow the server's reply buffers until the client has read them.
#[derive(Debug)]
pub struct RpcReply<'a> {
    pub status: RpcStatus,
    /// The host's id in the project's database (a new one at first contact).
    pub hostid: HostId,
    pub jobs: &'a [Job],
    /// `result_abort`: jobs to stop whatever their state.
    pub aborts: &'a [ResultId],
    /// `result_abort_if_not_started`: jobs to drop if they never ran.
    pub aborts_if_not_started: &'a [ResultId],
    /// `<no_rsc_apps>`: per processor type, whether the project has no app version
    /// for it (the client then never asks it for that type, spec client §2.6).
    pub no_rsc_apps: [bool; crate::server::resource::N_RSC],
}

impl<'a> RpcReply<'a> {
    /// A reply that carries no lists: a failed RPC, a project that is down, or a
    /// test server's empty answer.
    pub fn bare(status: RpcStatus, hostid: HostId) -> Self {
        RpcReply {
            status,
            hostid,
            jobs: &[],
            aborts: &[],
            aborts_if_not_started: &[],
            no_rsc_apps: [false; crate::server::resource::N_RSC],
        }
    }
}

/// The project servers, as seen from a host: one call per scheduler RPC, and one
/// per master-file fetch. Whatever fails on the server side comes back as an
/// [`Self::Error`] value, which the client's policy passes up unchanged.
pub trait ServerLink {
    type Error;
    /// Makes one scheduler RPC and returns the whole reply.
    fn rpc(&mut self, now: Time, req: &RpcRequest) -> Result<RpcReply<'_>, Self::Error>;
    /// Fetches the project's master file: true if the project's web server answered.
    fn master_fetch(&mut self, now: Time, project: u16) -> bool;
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
    /// [`StreamKind::HostAvailability`]: crate::engine::rng::StreamKind::HostAvailability
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
            last_work_fetch_check: f64::NEG_INFINITY,
            next_rpc_poll: 0.0,
            must_check_work_fetch: true,
            last_schedule: f64::NEG_INFINITY,
            must_schedule_cpus: true,
            rec_interval_start: joined as f64,
            merit: HostMerit::default(),
            coprocs: Box::default(),
            truth: HostTruth::reliable(crate::engine::rng::stream(
                0,
                crate::engine::rng::StreamKind::HostTruth,
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
        use crate::engine::rng::{StreamKind, stream};
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
        h.last_work_fetch_check = 0.0;
        h.must_check_work_fetch = false;
        h.last_schedule = 0.0;
        h.must_schedule_cpus = false;
        h.rec_interval_start = 0.0;
        h
    }

    /// A uniform draw `U`, or the pinned constant (spec client §6 "U fixed").
    pub fn draw_u(&mut self, cfg: &ClientConfig) -> f64 {
        match cfg.pin_u {
            Some(u) => u,
            None => self.rng.random(),
        }
    }

    /// Whether tasks compute now (host on and computing allowed).
    pub fn computing(&self, cfg: &ClientConfig) -> bool {
        cfg.bce_compat_compute_when_off || self.avail.computing()
    }

    /// Number of CPUs the client uses (`min(p_ncpus, max_cpus)` in the seed era).
    pub fn usable_cpus(&self, cfg: &ClientConfig) -> u32 {
        self.ncpus.min(cfg.max_cpus).max(1)
    }

    /// Integrates progress from `last_advance` to `now`: FLOPs, CPU time, REC
    /// instance-seconds, and the figures of merit (spec client §5.4).
    pub fn advance(&mut self, now: Time, cfg: &ClientConfig) {
        let dt = (now - self.last_advance) as f64;
        if dt <= 0.0 {
            return;
        }
        let computing = self.computing(cfg);
        let ncpus = self.usable_cpus(cfg) as f64;
        let speed = self.p_fpops;
        let cpu_scale = self.cpu_scale(cfg);
        let rel = gpu_relative_speeds(&self.coprocs, speed);
        let mut used_cpus = 0.0;
        // Projects with a running task, noted in the same walk over the jobs (bit k:
        // project k); hosts attached to more than 64 projects walk again below.
        let mut ran_mask = 0u64;
        if computing {
            for j in &mut self.jobs {
                if j.state != TaskState::Running {
                    continue;
                }
                ran_mask |= 1u64.checked_shl(u32::from(j.project)).unwrap_or(0);
                let x = execution(j, speed, cpu_scale, cfg.gpu_active_frac);
                let speed = x.flops;
                // A GPU job runs the `gpu_active_frac` of the interval (1 for a CPU
                // job, so `jdt == dt`).
                let jdt = dt * x.run_frac;
                let remaining = j.flops_left / speed;
                let to_limit = j.max_elapsed_time - j.cpu_time;
                let secs = if to_limit < remaining && to_limit <= jdt {
                    // Runs into its time limit before it finishes (spec backend
                    // §1.2 `rsc_fpops_bound`): it stops there, and `finish_tasks`
                    // aborts it.
                    let secs = to_limit.max(0.0);
                    j.flops_left -= secs * speed;
                    j.time_limit_exceeded = true;
                    secs
                } else if remaining <= jdt {
                    // Finishes within the interval: exactly zero left, never a
                    // floating-point residue that would keep it running forever.
                    j.flops_left = 0.0;
                    remaining.max(0.0)
                } else {
                    j.flops_left -= jdt * speed;
                    jdt
                };
                j.cpu_time += secs;
                j.peak_flop_count += secs * speed;
                if cfg.checkpoint_period <= 0.0 {
                    j.checkpoint_flops_left = j.flops_left;
                    j.checkpoint_cpu_time = j.cpu_time;
                }
                let p = &mut self.projects[j.project as usize];
                p.cpu_time += secs * x.cpus;
                p.flops_used += secs * speed;
                // REC counts instance-seconds weighted by the resource's speed
                // relative to a CPU (spec client §2.3), kept here as CPU-seconds.
                p.secs_this_rec_interval += if j.usage.uses_gpu() {
                    p.gpu_time += secs * j.usage.gpu_usage;
                    secs * (x.cpus + j.usage.gpu_usage * rel[j.usage.proc_type.index()])
                } else {
                    secs * x.cpus
                };
                used_cpus += secs * x.cpus / dt;
            }
        }
        self.merit
            .account(dt, ncpus * speed, used_cpus * speed, self.avail.computing());
        // A project "ran" in the interval if one of its tasks executed (§5.4).
        let step = cfg.merit_step;
        let jobs = &self.jobs;
        let from = self.last_advance as f64;
        for (k, p) in self.projects.iter_mut().enumerate() {
            let ran = computing
                && if k < 64 {
                    ran_mask & (1 << k) != 0
                } else {
                    jobs.iter()
                        .any(|j| j.is_running() && j.project as usize == k)
                };
            p.idle.advance(from, now as f64, ran, step);
        }
        self.last_advance = now;
    }

    /// `cpu_scale` of the emulator's execution model (spec client §5.4): when the
    /// running tasks' `avg_ncpus` add up to more than the usable CPUs (GPU tasks'
    /// CPU shares may overcommit them, §3.3), the CPU tasks share what the GPU tasks
    /// leave, `(ncpus − cpu_usage_gpu) / cpu_usage_cpu`; otherwise 1.
    pub fn cpu_scale(&self, cfg: &ClientConfig) -> f64 {
        let n = self.usable_cpus(cfg) as f64;
        let (mut gpu, mut cpu) = (0.0, 0.0);
        for j in self.jobs.iter().filter(|j| j.is_running()) {
            if j.usage.uses_gpu() {
                gpu += j.usage.avg_ncpus;
            } else {
                cpu += j.usage.avg_ncpus;
            }
        }
        if gpu + cpu > n && cpu > 0.0 {
            ((n - gpu) / cpu).max(0.0)
        } else {
            1.0
        }
    }

    /// Earliest time a running task finishes computing, if tasks compute now.
    pub fn next_completion(&self, cfg: &ClientConfig) -> Time {
        if !self.computing(cfg) {
            return Time::MAX;
        }
        let cpu_scale = self.cpu_scale(cfg);
        self.jobs
            .iter()
            .filter(|j| j.is_running())
            .map(|j| {
                let x = execution(j, self.p_fpops, cpu_scale, cfg.gpu_active_frac);
                if x.run_frac <= 0.0 || x.flops <= 0.0 {
                    return Time::MAX; // GPU computing never allowed
                }
                let left = (j.flops_left / x.flops).min(j.max_elapsed_time - j.cpu_time);
                self.last_advance + (left / x.run_frac).ceil().max(0.0) as Time
            })
            .min()
            .unwrap_or(Time::MAX)
    }

    /// Marks running tasks with no FLOPs left as done, draws their outcome, and
    /// returns how many finished. A task that ran into its time limit ends as a
    /// client error with `EXIT_TIME_LIMIT_EXCEEDED` and draws nothing. A task that
    /// succeeds updates its project's DCF (spec client §3.6). The caller credits
    /// policy state (seed `exp_avg_cpu`) through `on_done`.
    ///
    /// Otherwise the outcome is an error with the host's `error_prob`, else a wrong
    /// output with its `wrong_result_prob` (shared by its error class or unique, see
    /// [`super::truth`]), else the correct output. The three draws of the host's main
    /// stream are made whatever the app's collision fraction.
    pub fn finish_tasks(
        &mut self,
        now: Time,
        behaviour: &HostBehaviour,
        mut on_done: impl FnMut(&mut ProjectState, &ClientJob),
    ) -> u32 {
        let mut n = 0;
        for k in 0..self.jobs.len() {
            let j = &self.jobs[k];
            if !(j.is_running() && (j.flops_left <= 0.0 || j.time_limit_exceeded)) {
                continue;
            }
            let wuid = self.jobs[k].workunit_id;
            let (cs, es, out, correct) = if j.time_limit_exceeded {
                let es = exit_status::EXIT_TIME_LIMIT_EXCEEDED;
                (client_state::COMPUTE_ERROR, es, 0.0, None)
            } else if self.rng.random::<f64>() < self.truth.error_prob {
                (client_state::COMPUTE_ERROR, CLIENT_ERROR_EXIT, 0.0, None)
            } else if self.rng.random::<f64>() < self.truth.wrong_result_prob {
                let noise: f64 = self.rng.random();
                let pi = self.projects[self.jobs[k].project as usize].project as usize;
                let app = self.jobs[k].usage.app as usize;
                let model = behaviour
                    .outputs
                    .get(pi)
                    .and_then(|apps| apps.get(app))
                    .copied()
                    .unwrap_or_default();
                let rid = self.jobs[k].result_id;
                let out = self.truth.wrong_output(&model, wuid, rid, noise);
                (client_state::FILES_UPLOADED, 0, out, Some(false))
            } else {
                (
                    client_state::FILES_UPLOADED,
                    0,
                    correct_output(wuid),
                    Some(true),
                )
            };
            let j = &mut self.jobs[k];
            j.state = TaskState::Done;
            j.completed_time = now;
            j.client_state = cs;
            j.exit_status = es;
            j.output = out;
            j.output_correct = correct;
            n += 1;
            let j = &self.jobs[k];
            let p = &mut self.projects[j.project as usize];
            if es == 0 {
                p.dcf.update(estimate::dcf_sample(j));
            }
            on_done(p, j);
        }
        n
    }

    /// Stops a running task: suspended in memory, or quit and rolled back to its last
    /// checkpoint (spec client §3.4).
    pub fn preempt(&mut self, k: usize, keep_in_memory: bool) {
        let j = &mut self.jobs[k];
        if j.state != TaskState::Running {
            return;
        }
        if keep_in_memory {
            j.state = TaskState::Suspended;
        } else {
            j.flops_left = j.checkpoint_flops_left;
            j.cpu_time = j.checkpoint_cpu_time;
            j.state = TaskState::Quit;
        }
    }

    /// Starts or resumes a task at `now`.
    pub fn start(&mut self, k: usize, now: Time) {
        let j = &mut self.jobs[k];
        if j.state != TaskState::Running {
            j.state = TaskState::Running;
            j.run_interval_start = now as f64;
        }
    }

    /// Brings checkpoints up to date for a periodic checkpoint period: the last
    /// multiple of the period in the task's compute time (spec client §3.4).
    pub fn update_checkpoints(&mut self, cfg: &ClientConfig) {
        let c = cfg.checkpoint_period;
        if c <= 0.0 {
            return;
        }
        let cpu_scale = self.cpu_scale(cfg);
        let (p_fpops, gaf) = (self.p_fpops, cfg.gpu_active_frac);
        for j in &mut self.jobs {
            if j.state == TaskState::Running {
                let speed = execution(j, p_fpops, cpu_scale, gaf).flops;
                let ck = (j.cpu_time / c).floor() * c;
                if ck > j.checkpoint_cpu_time {
                    j.checkpoint_flops_left += -(ck - j.checkpoint_cpu_time) * speed;
                    j.checkpoint_flops_left = j.checkpoint_flops_left.max(j.flops_left);
                    j.checkpoint_cpu_time = ck;
                }
            }
        }
    }

    /// Every running task loses its work since the last checkpoint and leaves memory:
    /// the host went off or computing was suspended (spec client §3.5).
    pub fn quit_all(&mut self, cfg: &ClientConfig) {
        self.update_checkpoints(cfg);
        for k in 0..self.jobs.len() {
            self.preempt(k, false);
        }
    }

    /// Makes one scheduler RPC to `self.projects[pi]`: reports every ready result,
    /// lists the jobs in progress, asks for `work`, and adds the jobs of the reply.
    /// Shared by both policies; what a failure or an empty reply means is theirs.
    pub fn rpc<S: ServerLink + ?Sized>(
        &mut self,
        now: Time,
        pi: usize,
        work: WorkRequest,
        behaviour: &HostBehaviour,
        cfg: &ClientConfig,
        server: &mut S,
    ) -> Result<RpcStatus, S::Error> {
        let detach = behaviour.detach_prob > 0.0
            && {
                let u: f64 = self.rng.random();
                u < behaviour.detach_prob
            }
            && self.projects[pi].hostid != 0;
        if detach {
            // Detach and re-attach: every job of the project is dropped unreported.
            self.jobs.retain(|j| j.project as usize != pi);
            self.merit.detaches += 1;
        }
        let p = &self.projects[pi];
        let req = RpcRequest {
            host_index: self.index,
            group: self.group,
            project: p.project,
            hostid: p.hostid,
            reattached: detach,
            work,
            slot: pi as u8,
            jobs: &self.jobs,
            p_ncpus: self.usable_cpus(cfg),
            p_fpops: self.p_fpops,
            coprocs: &self.coprocs,
            time_stats: self.time_stats,
        };
        let reply = server.rpc(now, &req)?;
        let status = reply.status;
        let p = &mut self.projects[pi];
        p.last_request = work;
        match status {
            RpcStatus::Failed | RpcStatus::Down { .. } => {
                p.nrpc_failed += 1;
            }
            RpcStatus::Ok { .. } => {
                p.nrpcs += 1;
                p.hostid = reply.hostid;
                p.no_rsc_apps = reply.no_rsc_apps;
                // Reported results are acknowledged and leave the client.
                let (mut met, mut missed, mut wasted) = (0, 0, 0.0);
                self.jobs.retain(|j| {
                    if j.project as usize == pi && j.ready_to_report() {
                        if now > j.report_deadline {
                            missed += 1;
                            wasted += j.peak_flop_count;
                        } else {
                            met += 1;
                        }
                        false
                    } else {
                        true
                    }
                });
                // The server's aborts: the job stops and is reported as aborted by
                // the project (`result_abort`; `_if_not_started` only before it ran).
                let aborts = reply.aborts.iter().map(|&r| (r, false));
                let if_unstarted = reply.aborts_if_not_started.iter().map(|&r| (r, true));
                for (rid, only_unstarted) in aborts.chain(if_unstarted) {
                    if let Some(j) = self
                        .jobs
                        .iter_mut()
                        .find(|j| j.project as usize == pi && j.result_id == rid)
                        && j.unfinished()
                        && (!only_unstarted || j.state == TaskState::Unstarted)
                    {
                        j.state = TaskState::Done;
                        j.completed_time = now;
                        j.client_state = client_state::ABORTED;
                        j.exit_status = exit_status::EXIT_ABORTED_BY_PROJECT;
                    }
                }
                let p = &mut self.projects[pi];
                p.met_deadline += met;
                p.missed_deadline += missed;
                p.flops_wasted += wasted;
                p.njobs += reply.jobs.len() as u64;
                for job in reply.jobs {
                    // A job the client already has only gets the new deadline.
                    if let Some(j) = self
                        .jobs
                        .iter_mut()
                        .find(|j| j.result_id == job.result_id && j.project as usize == pi)
                    {
                        j.report_deadline = job.report_deadline;
                        continue;
                    }
                    self.receive(pi, job, now, cfg.policy);
                }
            }
        }
        Ok(status)
    }

    /// Adds a job the project `pi` sent at `now` to the queue, with its time limit
    /// for this client (spec client §4.2).
    pub fn receive(&mut self, pi: usize, job: &Job, now: Time, policy: Policy) {
        let mut new = ClientJob {
            project: pi as u8,
            result_id: job.result_id,
            workunit_id: job.workunit_id,
            received_time: now,
            report_deadline: job.report_deadline,
            usage: JobUsage {
                proc_type: job.proc_type,
                app: job.appid.saturating_sub(1) as u16,
                avg_ncpus: job.avg_ncpus,
                gpu_usage: job.gpu_usage,
                true_flops: Some(job.true_flops),
            },
            ..ClientJob::sized(
                job.rsc_fpops_est,
                job.true_fpops,
                job.flops,
                job.rsc_fpops_bound,
            )
        };
        new.max_elapsed_time =
            estimate::max_elapsed_time(job.rsc_fpops_bound, &new, self.p_fpops, policy);
        // Grow by a quarter, not by doubling: a host's queue hovers around its
        // buffer's size, and with doubling a third of the job memory of a large run
        // was unused capacity (issue 12, docs/performance.md).
        if self.jobs.len() == self.jobs.capacity() {
            self.jobs.reserve_exact((self.jobs.len() / 4).max(2));
        }
        self.jobs.push(new);
    }

    /// The client's estimate of job `j`'s remaining work, FLOPs at `p_fpops`
    /// ([`estimate::est_flops_left`]).
    pub fn est_flops_left(&self, j: &ClientJob, policy: Policy) -> f64 {
        let dcf = self.projects[j.project as usize].dcf;
        estimate::est_flops_left(j, self.p_fpops, policy, dcf)
    }

    /// Estimated seconds of job `j`'s work left per true second of it
    /// ([`estimate::est_ratio`]).
    pub fn est_ratio(&self, j: &ClientJob, policy: Policy) -> f64 {
        let dcf = self.projects[j.project as usize].dcf;
        estimate::est_ratio(j, self.p_fpops, policy, dcf)
    }

    /// Work left in the buffer of jobs not finished, seconds of one CPU at
    /// `p_fpops`, as the client estimates it (estimate × fraction left, spec client
    /// §1.4, corrected as in §3.6).
    pub fn unfinished_secs(&self, policy: Policy) -> f64 {
        self.jobs
            .iter()
            .filter(|j| j.unfinished())
            .map(|j| self.est_flops_left(j, policy) / self.p_fpops)
            .sum()
    }

    /// The common start of every host event: integrates progress up to `now` under
    /// the old availability, applies availability changes due by `now` (tasks quit
    /// when computing stops, spec client §3.5), and refreshes the time statistics.
    /// Returns true if computing was allowed before and is not now.
    pub fn begin_event(&mut self, now: Time, g: &GroupCtx) -> bool {
        self.advance(now, &g.cfg);
        let was = self.computing(&g.cfg);
        self.avail.update(now, &g.avail, &mut self.avail_rng);
        self.time_stats = self.avail.time_stats();
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

    /// The work-buffer invariant: a client never holds more work than its high water
    /// mark plus one reply. The high water mark is the seed's `work_buf_max_days`
    /// scaled by `active_frac` (spec client §1.4), or the modern `work_buf_total()`
    /// scaled by the availability fraction the RR simulation uses (§2.5), times the
    /// CPUs. A reply overshoots its request by less than one job, because the
    /// scheduler stops once the request is met. The modern request is the shortfall,
    /// idle instance-seconds of the RR simulation: jobs are indivisible, so a CPU can
    /// idle inside the window while others run work past its end, by at most one job
    /// per other CPU; the modern slack is therefore one job per CPU, plus one job per
    /// project for the initial RPC after attach, which asks for one job whatever the
    /// buffer holds (`RPC_REASON_INIT`, §2.6). The server fills a request by its own
    /// estimates and the client measures its buffer by its own (§3.6), so when the
    /// client thinks jobs are larger than the server does, the window part grows by
    /// that factor ([`estimate::client_over_server`]), and the slack is counted in
    /// the client's estimate of a whole job. `None` when the invariant holds.
    ///
    /// Each resource is checked on its own: the CPU jobs' instance-seconds against
    /// the CPUs, and each GPU type's jobs against its instances, with that GPU's
    /// availability (`gpu_active_frac`).
    pub fn buffer_violation(&self, cfg: &ClientConfig) -> Option<String> {
        for t in ProcType::ALL {
            let n = match t {
                ProcType::Cpu => None,
                t => match coproc_of(&self.coprocs, t) {
                    Some(c) => Some(c.count as f64),
                    None => continue,
                },
            };
            if let Some(v) = self.buffer_violation_of(cfg, t, n) {
                return Some(v);
            }
        }
        None
    }

    /// [`Self::buffer_violation`] for the jobs of processor type `rsc`, which has
    /// `ninst` instances (`None`: the CPUs).
    fn buffer_violation_of(
        &self,
        cfg: &ClientConfig,
        rsc: ProcType,
        ninst: Option<f64>,
    ) -> Option<String> {
        let ts = self.time_stats;
        let gpu_frac = if rsc == ProcType::Cpu {
            1.0
        } else {
            cfg.gpu_active_frac
        };
        let ts = TimeStats {
            active_frac: ts.active_frac * gpu_frac,
            ..ts
        };
        let (window, frac) = match cfg.policy {
            Policy::SeedDebt => (cfg.work_buf_max_days * 86_400.0, ts.active_frac),
            Policy::ModernRec => (
                cfg.work_buf_total(),
                (ts.on_frac * ts.active_frac).clamp(0.01, 1.0),
            ),
        };
        // The server sizes jobs with its own availability estimate, clamped to 0.1.
        let frac = frac.min((ts.on_frac * ts.active_frac).clamp(0.1, 1.0));
        let ncpus = match (ninst, cfg.policy) {
            (Some(n), _) => n,
            (None, Policy::SeedDebt) => self.ncpus as f64,
            (None, Policy::ModernRec) => self.usable_cpus(cfg) as f64,
        };
        let policy = cfg.policy;
        let dcf = |j: &ClientJob| self.projects[j.project as usize].dcf;
        let mine = || self.jobs.iter().filter(|j| j.usage.proc_type == rsc);
        let instances = |j: &ClientJob| {
            if rsc == ProcType::Cpu {
                j.usage.avg_ncpus
            } else {
                j.usage.gpu_usage
            }
        };
        // The largest job in instance-seconds, the unit of `held`: a reply overshoots
        // its request by at most one job's seconds times the instances it uses.
        let largest = mine()
            .map(|j| estimate::estimated_runtime(j, self.p_fpops, policy, dcf(j)) * instances(j))
            .fold(0.0, f64::max);
        let mismatch = mine()
            .filter(|j| j.unfinished())
            .map(|j| estimate::client_over_server(j, self.p_fpops, policy, dcf(j)))
            .fold(1.0, f64::max);
        // Instance-seconds: a job's estimated seconds times the instances it uses.
        let plain = |j: &ClientJob| !j.usage.uses_gpu() && j.usage.avg_ncpus == 1.0;
        let held: f64 = if ninst.is_none() && self.jobs.iter().all(plain) {
            self.unfinished_secs(policy)
        } else {
            mine()
                .filter(|j| j.unfinished())
                .map(|j| self.est_flops_left(j, policy) / self.p_fpops * instances(j))
                .sum()
        };
        let slack_jobs = match cfg.policy {
            Policy::SeedDebt => 1.0,
            Policy::ModernRec => ncpus + self.projects.len() as f64,
        };
        // The round-robin simulation fills a resource while it is not saturated, so
        // the last job it picks may overcommit it by its instances less one (BOINC's
        // `pick_jobs_to_run`): the simulated queue then drains that much faster, and
        // the client fetches for that many more instances than it has.
        let widest = mine().map(instances).fold(1.0, f64::max);
        let simulated = ncpus + (widest - 1.0);
        let bound =
            mismatch * simulated * window / frac.max(1e-9) + slack_jobs * largest / frac.max(0.1);
        (held > bound * (1.0 + 1e-9)).then(|| {
            let what = if rsc == ProcType::Cpu {
                String::new()
            } else {
                format!(" of {} GPU", rsc.name())
            };
            format!(
                "host {} holds {held:.0} s of unfinished work{what}, more than its high water mark plus one reply ({bound:.0} s)",
                self.index
            )
        })
    }

    /// The resource invariant: the running tasks fit the host (spec client §3.3,
    /// §5.4). Their `avg_ncpus` add up to at most the usable CPUs plus the one CPU
    /// GPU tasks may overcommit, and to at most the CPUs when a multi-threaded task
    /// runs; the CPUs really used (CPU tasks slowed by `cpu_scale`) never exceed the
    /// usable CPUs; the tasks of a GPU type use at most the host's instances of it,
    /// and a GPU task runs only on a GPU type the host has. `None` when it holds.
    pub fn resource_violation(&self, cfg: &ClientConfig) -> Option<String> {
        const EPS: f64 = 1e-9;
        let n = self.usable_cpus(cfg) as f64;
        let cpu_scale = self.cpu_scale(cfg);
        let (mut asked, mut used, mut mt) = (0.0, 0.0, false);
        let mut gpu = [0.0; crate::server::resource::N_RSC];
        for j in self.jobs.iter().filter(|j| j.is_running()) {
            let u = &j.usage;
            asked += u.avg_ncpus;
            used += execution(j, self.p_fpops, cpu_scale, cfg.gpu_active_frac).cpus;
            mt |= u.avg_ncpus > 1.0;
            if u.uses_gpu() {
                if coproc_of(&self.coprocs, u.proc_type).is_none() {
                    return Some(format!(
                        "host {} runs result {} on a {} GPU it does not have",
                        self.index,
                        j.result_id,
                        u.proc_type.name()
                    ));
                }
                gpu[u.proc_type.index()] += u.gpu_usage;
            }
        }
        let limit = if mt { n } else { n + 1.0 };
        if asked > limit + EPS || used > n + EPS {
            return Some(format!(
                "host {} runs tasks of {asked} CPUs (really using {used}) on {n} usable CPUs",
                self.index
            ));
        }
        for c in self.coprocs.iter() {
            if gpu[c.kind.index()] > c.count as f64 + EPS {
                return Some(format!(
                    "host {} runs tasks of {} {} GPU instances on {}",
                    self.index,
                    gpu[c.kind.index()],
                    c.kind.name(),
                    c.count
                ));
            }
        }
        None
    }

    /// The time-limit invariant: no job computes past its `max_elapsed_time`
    /// (`rsc_fpops_bound / flops`, spec backend §1.2): one that reaches it is
    /// aborted there. `None` when the invariant holds.
    pub fn time_limit_violation(&self) -> Option<String> {
        self.jobs
            .iter()
            .find(|j| j.cpu_time > j.max_elapsed_time * (1.0 + 1e-12))
            .map(|j| {
                format!(
                    "host {} computed result {} for {} s, past its time limit of {} s",
                    self.index, j.result_id, j.cpu_time, j.max_elapsed_time
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::config::ClientSection;
    use crate::engine::rng::{StreamKind, stream};

    /// A job's size is the client's memory per job in flight, millions of them in a
    /// large run (docs/performance.md "Sizes"): a field added shows here first.
    #[test]
    fn job_size() {
        assert_eq!(std::mem::size_of::<JobUsage>(), 40);
        assert_eq!(std::mem::size_of::<ClientJob>(), 184);
    }

    fn host(ncpus: u32) -> ClientHost {
        let projects = vec![ProjectState {
            resource_share: 100.0,
            ..Default::default()
        }];
        let rng = stream(1, StreamKind::Host, 0);
        let avail_rng = stream(1, StreamKind::HostAvailability, 0);
        ClientHost::new(
            0,
            0,
            ncpus,
            1e9,
            rng,
            avail_rng,
            projects,
            Availability::default(),
            0,
        )
    }

    fn job(secs: f64) -> ClientJob {
        ClientJob {
            report_deadline: 1_000_000,
            ..ClientJob::sized(secs * 1e9, secs * 1e9, 1e9, f64::INFINITY)
        }
    }

    /// Seed high water mark 3 days on 2 CPUs: 6 CPU-days plus one job is allowed,
    /// one more job is a violation.
    #[test]
    fn buffer_bound_is_high_water_plus_one_reply() {
        let cfg = ClientConfig::resolve(&ClientSection::default(), None);
        let mut h = host(2);
        for _ in 0..(6 * 24 + 1) {
            h.jobs.push(job(3600.0));
        }
        assert_eq!(h.buffer_violation(&cfg), None);
        h.jobs.push(job(3600.0));
        assert!(h.buffer_violation(&cfg).is_some());
    }

    /// Progress is integrated exactly: a 1-hour task advanced in uneven pieces
    /// finishes at exactly 3600 s with zero FLOPs left and 3600 CPU seconds.
    #[test]
    fn advance_integrates_exactly_and_finishes_cleanly() {
        let cfg = ClientConfig::resolve(&ClientSection::default(), None);
        let mut h = host(1);
        h.jobs.push(job(3600.0));
        h.start(0, 0);
        for t in [7, 1000, 1001, 2999, 3599] {
            h.advance(t, &cfg);
        }
        assert_eq!(h.next_completion(&cfg), 3600);
        h.advance(3600, &cfg);
        assert_eq!(h.jobs[0].flops_left, 0.0);
        assert!((h.projects[0].cpu_time - 3600.0).abs() < 1e-9);
        let n = h.finish_tasks(3600, &HostBehaviour::default(), |_, _| {});
        assert_eq!(n, 1);
        assert!(h.jobs[0].ready_to_report());
        assert_eq!(h.merit.flops_used, 3600.0 * 1e9);
    }

    /// A job whose true size passes its bound stops exactly at its time limit
    /// `rsc_fpops_bound / flops` and ends as a client error with
    /// `EXIT_TIME_LIMIT_EXCEEDED`; its DCF is not updated (spec client §3.6).
    #[test]
    fn a_job_past_its_bound_is_aborted_at_its_time_limit() {
        let cfg = ClientConfig::resolve(&ClientSection::default(), None);
        let mut h = host(1);
        h.jobs.push(ClientJob {
            report_deadline: 1_000_000,
            ..ClientJob::sized(3600e9, 3.0 * 3600e9, 1e9, 7200e9)
        });
        h.start(0, 0);
        assert_eq!(h.next_completion(&cfg), 7200);
        h.advance(7199, &cfg);
        assert_eq!(
            h.finish_tasks(7199, &HostBehaviour::default(), |_, _| {}),
            0
        );
        assert_eq!(h.next_completion(&cfg), 7200);
        h.advance(7200, &cfg);
        assert_eq!(h.time_limit_violation(), None);
        assert_eq!(
            h.finish_tasks(7200, &HostBehaviour::default(), |_, _| {}),
            1
        );
        let j = &h.jobs[0];
        assert!(j.ready_to_report());
        assert_eq!(j.completed_time, 7200);
        assert_eq!(j.client_state, client_state::COMPUTE_ERROR);
        assert_eq!(j.exit_status, exit_status::EXIT_TIME_LIMIT_EXCEEDED);
        assert_eq!(j.cpu_time, 7200.0);
        assert_eq!(j.flops_left, 3600e9);
        assert_eq!(h.projects[0].dcf, Dcf(1.0));
    }

    /// A job that succeeds sets the DCF from its true size over its estimate.
    #[test]
    fn a_successful_job_updates_the_dcf() {
        let cfg = ClientConfig::resolve(&ClientSection::default(), None);
        let mut h = host(1);
        h.jobs.push(ClientJob {
            report_deadline: 1_000_000,
            ..ClientJob::sized(3600e9, 2.0 * 3600e9, 1e9, 36000e9)
        });
        h.start(0, 0);
        assert_eq!(h.next_completion(&cfg), 7200);
        h.advance(7200, &cfg);
        assert_eq!(
            h.finish_tasks(7200, &HostBehaviour::default(), |_, _| {}),
            1
        );
        assert_eq!(h.jobs[0].exit_status, 0);
        assert_eq!(h.projects[0].dcf, Dcf(2.0));
    }

    /// A quit task rolls back to its last checkpoint (spec client §3.4).
    #[test]
    fn quitting_loses_the_work_since_the_last_checkpoint() {
        let s = ClientSection {
            checkpoint_period: 600.0,
            ..Default::default()
        };
        let cfg = ClientConfig::resolve(&s, None);
        let mut h = host(1);
        h.jobs.push(job(3600.0));
        h.start(0, 0);
        h.advance(1500, &cfg);
        h.quit_all(&cfg);
        assert_eq!(h.jobs[0].state, TaskState::Quit);
        assert!((h.jobs[0].cpu_time - 1200.0).abs() < 1e-9);
        assert!((h.jobs[0].flops_left - 2400.0 * 1e9).abs() < 1.0);
    }
}
