//! The jobs a client holds: where each is ([`TaskState`]), what it uses and how fast
//! it truly computes ([`JobUsage`]), the job itself ([`ClientJob`]), and the host's
//! operations on its queue that are about jobs rather than their execution: adding a
//! job the server sent ([`ClientHost::receive`]) and the client's estimates of what
//! is left ([`ClientHost::est_flops_left`], spec client §1.4, §3.6).

use super::ClientHost;
use crate::client::config::Policy;
use crate::client::estimate;
use crate::engine::Time;
use crate::server::resource::ProcType;
use crate::server::scheduler::Job;
use crate::server::types::*;
use crate::server::types::{DbTime, db_time};

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
    /// Received, waiting for an input file (`RESULT_FILES_DOWNLOADING`, spec client
    /// §8.1): not runnable, but queued work for the round-robin simulation and work
    /// fetch (`nearly_runnable`).
    Downloading,
    /// Finished computing, its output still going to the server
    /// (`RESULT_FILES_UPLOADING`, §8.1): not ready to report.
    Uploading,
}

/// The job's app version on this host, as the reply gave it: its app, what it
/// uses while it runs (`avg_ncpus`, the GPU type and `coproc_usage`; spec client
/// §5.4, backend §2.4.4) and how fast it truly computes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JobUsage {
    /// The processor type the job is scheduled on (CPU, or its GPU type).
    pub proc_type: ProcType,
    /// The workunit's app within its project (`appid − 1`): which app's outputs a
    /// wrong result takes ([`HostBehaviour::outputs`](super::HostBehaviour::outputs)).
    /// Beside `proc_type`, it fills padding: the job costs no more memory.
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
    pub(crate) fn uses_gpu(&self) -> bool {
        self.proc_type != ProcType::Cpu
    }
}

/// A job the client holds (spec client §1.4, §2.5, §3).
///
/// Millions are in flight in a large run, so it is kept to 128 bytes (it was 144:
/// 16 MB less at a million jobs) without changing any value: the times it only
/// records or compares in whole seconds are BOINC's `int` ([`DbTime`]; a run stays
/// below `INT_MAX` seconds, since `simulation.duration` is validated below it), and
/// its five flags share one byte ([`JobFlags`]).
#[derive(Clone, Debug, Default)]
pub struct ClientJob {
    /// Index into [`ClientHost::projects`], of the type of [`ProjectState::project`]
    /// ([`super::ProjectState`]).
    pub project: u16,
    pub result_id: ResultId,
    pub workunit_id: WuId,
    /// When the reply brought it (whole seconds, [`DbTime`]).
    pub received_time: DbTime,
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
    /// Its app version on this host: an index into [`ClientHost::app_versions`],
    /// which says what the job uses and how fast it computes. A job holds the
    /// index, as BOINC's client holds an `APP_VERSION` pointer (`RESULT::avp`), so
    /// the hundreds of jobs of one version share one copy.
    pub app_version: u16,
    /// Elapsed seconds computed, and the value at the last checkpoint. A one-CPU job
    /// uses one CPU, so this is also its CPU time; others report
    /// [`ClientJob::reported_cpu_time`].
    pub cpu_time: f64,
    pub checkpoint_cpu_time: f64,
    pub peak_flop_count: f64,
    /// When computing ended, or the job was aborted (whole seconds, [`DbTime`]).
    pub completed_time: DbTime,
    /// Outcome decided when computing ends: BOINC's `client_state` number (0–6, fits
    /// a byte; the report widens it to the server's `int`).
    pub client_state: u8,
    pub exit_status: i32,
    pub output: f64,
    /// Whether `output` is right (simulator truth; `None` for an error).
    pub output_correct: Option<bool>,
    // --- modern CPU scheduler scratch (§3.2–3.3) ---
    /// When the task last started running (`run_interval_start`): always a host
    /// event's time, whole seconds ([`DbTime`]); read as `f64`.
    pub run_interval_start: DbTime,
    /// Time of the last projected miss (keeps a task marked one period, §3.2 step 2).
    pub last_deadline_miss_time: f64,
    /// The job's flags, one bit each ([`ClientJob::edf_scheduled`] and the others).
    pub flags: JobFlags,
}

/// A job's boolean marks, one bit each: five `bool`s took five bytes of the job
/// and pushed it past 128 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobFlags(u8);

/// A getter and a setter of one bit of [`JobFlags`] on [`ClientJob`].
macro_rules! job_flag {
    ($(#[$doc:meta])* $get:ident, $set:ident, $bit:expr) => {
        $(#[$doc])*
        #[inline]
        pub fn $get(&self) -> bool {
            self.flags.0 & (1 << $bit) != 0
        }
        #[doc = concat!("Sets [`ClientJob::", stringify!($get), "`].")]
        #[inline]
        pub fn $set(&mut self, on: bool) {
            if on {
                self.flags.0 |= 1 << $bit;
            } else {
                self.flags.0 &= !(1 << $bit);
            }
        }
    };
}

impl ClientJob {
    job_flag!(
        /// The job ran into `max_elapsed_time` (`EXIT_TIME_LIMIT_EXCEEDED`).
        time_limit_exceeded,
        set_time_limit_exceeded,
        0
    );
    job_flag!(
        /// Modern CPU scheduler scratch (§3.2–3.3): chosen to run by EDF.
        edf_scheduled,
        set_edf_scheduled,
        1
    );
    job_flag!(
        /// Once ran as EDF (`once_ran_edf`, §3.2).
        once_ran_edf,
        set_once_ran_edf,
        2
    );
    job_flag!(
        /// The round-robin simulation projects it misses its deadline (§2.5, §3.2).
        rr_sim_misses_deadline,
        set_rr_sim_misses_deadline,
        3
    );
    job_flag!(
        /// Modern CPU scheduler scratch (§3.2–3.3): in this pass's run list.
        scheduled,
        set_scheduled,
        4
    );
}

impl ClientJob {
    /// A job of estimate `rsc_fpops_est` that really takes `true_fpops`, sent with
    /// app version `flops` and bound `rsc_fpops_bound`; its time limit is for a
    /// client estimating at `flops`, and nothing of it has run.
    pub(crate) fn sized(
        rsc_fpops_est: f64,
        true_fpops: f64,
        flops: f64,
        rsc_fpops_bound: f64,
    ) -> Self {
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
    pub(crate) fn ready_to_report(&self) -> bool {
        self.state == TaskState::Done
    }
    /// Not finished computing (`state < COMPUTE_DONE`): its inputs may still be
    /// downloading (`nearly_runnable`, spec client §8.1).
    pub fn unfinished(&self) -> bool {
        !matches!(self.state, TaskState::Done | TaskState::Uploading)
    }
    /// May run now: not finished and every input on the host (`RESULT::runnable`,
    /// spec client §8.1).
    pub fn runnable(&self) -> bool {
        !matches!(
            self.state,
            TaskState::Done | TaskState::Uploading | TaskState::Downloading
        )
    }
    pub(crate) fn is_running(&self) -> bool {
        self.state == TaskState::Running
    }
    /// CPU seconds the job used, with its app version `u`: its elapsed time times
    /// its `avg_ncpus` (spec client §5.4), what the result reports as `cpu_time`.
    pub(crate) fn reported_cpu_time(&self, u: &JobUsage) -> f64 {
        self.cpu_time * u.avg_ncpus
    }
    /// What the client's estimates read of the job: its sizes, its app version's
    /// speed and how far it has run ([`estimate::JobProgress`]).
    pub fn progress(&self) -> estimate::JobProgress {
        estimate::JobProgress {
            rsc_fpops_est: self.rsc_fpops_est,
            app_flops: self.app_flops,
            true_fpops: self.true_fpops,
            flops_left: self.flops_left,
            cpu_time: self.cpu_time,
        }
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

impl ClientHost {
    /// The app version job `j` runs with on this host: what it uses and how fast it
    /// computes.
    #[inline]
    pub fn usage(&self, j: &ClientJob) -> &JobUsage {
        &self.app_versions[j.app_version as usize]
    }

    /// The index of `usage` in the host's app versions, added if new. A host meets
    /// a handful (one per app and plan class its projects send it), so a linear
    /// search is the quickest.
    pub(crate) fn intern_app_version(&mut self, usage: JobUsage) -> u16 {
        if let Some(k) = self.app_versions.iter().position(|u| *u == usage) {
            return k as u16;
        }
        self.app_versions.push(usage);
        debug_assert!(self.app_versions.len() <= 1 << 16);
        (self.app_versions.len() - 1) as u16
    }

    /// Adds a job the project `pi` sent at `now` to the queue, with its time limit
    /// for this client (spec client §4.2).
    pub(crate) fn receive(&mut self, pi: usize, job: &Job, now: Time, policy: Policy) {
        let mut new = ClientJob {
            project: pi as u16,
            result_id: job.result_id,
            workunit_id: job.workunit_id,
            received_time: db_time(now),
            report_deadline: job.report_deadline,
            app_version: self.intern_app_version(JobUsage {
                proc_type: job.proc_type,
                app: job.appid.saturating_sub(1) as u16,
                avg_ncpus: job.avg_ncpus,
                gpu_usage: job.gpu_usage,
                true_flops: Some(job.true_flops),
            }),
            ..ClientJob::sized(
                job.rsc_fpops_est,
                job.true_fpops,
                job.flops,
                job.rsc_fpops_bound,
            )
        };
        new.max_elapsed_time =
            estimate::max_elapsed_time(job.rsc_fpops_bound, new.progress(), self.p_fpops, policy);
        // Grow by a quarter, not by doubling: a host's queue hovers around its
        // buffer's size, and with doubling a third of the job memory of bench-100k
        // was unused capacity (docs/performance.md, "Memory per entity").
        if self.jobs.len() == self.jobs.capacity() {
            self.jobs.reserve_exact((self.jobs.len() / 4).max(2));
        }
        self.jobs.push(new);
    }

    /// The client's estimate of job `j`'s remaining work, FLOPs at `p_fpops`
    /// ([`estimate::est_flops_left`]).
    pub fn est_flops_left(&self, j: &ClientJob, policy: Policy) -> f64 {
        let dcf = self.projects[j.project as usize].dcf;
        estimate::est_flops_left(j.progress(), self.p_fpops, policy, dcf)
    }

    /// Estimated seconds of job `j`'s work left per true second of it
    /// ([`estimate::est_ratio`]).
    pub(crate) fn est_ratio(&self, j: &ClientJob, policy: Policy) -> f64 {
        let dcf = self.projects[j.project as usize].dcf;
        estimate::est_ratio(j.progress(), self.p_fpops, policy, dcf)
    }

    /// Work left in the buffer of jobs not finished, seconds of one CPU at
    /// `p_fpops`, as the client estimates it (estimate × fraction left, spec client
    /// §1.4, corrected as in §3.6).
    pub(crate) fn unfinished_secs(&self, policy: Policy) -> f64 {
        self.jobs
            .iter()
            .filter(|j| j.unfinished())
            .map(|j| self.est_flops_left(j, policy) / self.p_fpops)
            .sum()
    }
}

/// A job as a reply carries it, for the host's tests: result and workunit `id`, a
/// one-CPU version `app_version_id` computing 1e12 FLOPs at 1 GFLOPS, estimated
/// exactly, bounded at ten times that.
#[cfg(test)]
pub(crate) fn test_job(id: u32, app_version_id: u32, report_deadline: Time) -> Job {
    Job {
        result_id: ResultId(id),
        workunit_id: WuId(id),
        appid: 1,
        app_version_id,
        proc_type: ProcType::Cpu,
        avg_ncpus: 1.0,
        gpu_usage: 0.0,
        rsc_fpops_est: 1e12,
        rsc_fpops_bound: 1e13,
        flops: 1e9,
        true_fpops: 1e12,
        true_flops: 1e9,
        report_deadline,
        resend: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each flag is its own bit: setting or clearing one leaves the others.
    #[test]
    fn job_flags_are_independent() {
        let mut j = ClientJob::default();
        j.set_scheduled(true);
        j.set_rr_sim_misses_deadline(true);
        assert!(j.scheduled() && j.rr_sim_misses_deadline());
        assert!(!j.edf_scheduled() && !j.once_ran_edf() && !j.time_limit_exceeded());
        j.set_edf_scheduled(true);
        j.set_once_ran_edf(true);
        j.set_time_limit_exceeded(true);
        j.set_scheduled(false);
        assert!(!j.scheduled());
        assert!(j.edf_scheduled() && j.once_ran_edf() && j.time_limit_exceeded());
        assert!(j.rr_sim_misses_deadline());
        j.set_rr_sim_misses_deadline(false);
        assert_eq!(j.flags, JobFlags(0b0111));
    }

    /// The times a job records are whole seconds kept as BOINC's `int`: the value
    /// given is the value read.
    #[test]
    fn job_times_keep_their_values() {
        let mut h = ClientHost::for_test(1, 1e9, &[100.0]);
        let job = test_job(1, 0, 3_000_000_000);
        h.receive(0, &job, 2_000_000_123, Policy::ModernRec);
        let j = &h.jobs[0];
        assert_eq!(Time::from(j.received_time), 2_000_000_123);
        assert_eq!(j.report_deadline, 3_000_000_000);
    }
}
