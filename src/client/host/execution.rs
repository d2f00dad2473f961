//! The execution model (spec client §5.4): how a running job computes
//! ([`execution`], [`gpu_relative_speeds`]), and the host's operations that integrate
//! its tasks between two events and change which of them run: [`ClientHost::advance`],
//! [`ClientHost::cpu_scale`], [`ClientHost::next_completion`],
//! [`ClientHost::finish_tasks`], and preempting, starting and checkpointing tasks
//! (§3.4–3.5). Only this file reads a job's true size and speed to run it; what the
//! client believes of a job goes through `client::estimate`.

use super::{
    ClientHost, ClientJob, HostBehaviour, JobUsage, ProjectState, TaskState, TransferFlag,
};
use crate::client::config::ClientConfig;
use crate::client::estimate;
use crate::client::truth::correct_output;
use crate::engine::Time;
use crate::server::resource::{Coproc, ProcType, coproc_of};
use crate::server::types::db_time;
use crate::server::types::*;
use rand::RngExt;

/// `ERR_RESULT_START`, the exit status of a modelled client error.
pub const CLIENT_ERROR_EXIT: i32 = -177;

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

/// How a job of app version `u` ([`ClientHost::usage`]) executes on a host of
/// per-CPU speed `p_fpops` whose CPU tasks run at `cpu_scale`
/// ([`ClientHost::cpu_scale`]) and whose GPUs may compute `gpu_active_frac` of the
/// time.
pub fn execution(u: &JobUsage, p_fpops: f64, cpu_scale: f64, gpu_active_frac: f64) -> Execution {
    let flops = u.true_flops.unwrap_or(p_fpops);
    let cpus = u.avg_ncpus;
    if u.uses_gpu() {
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

/// How an interval of computing ends for a running task ([`run_for`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum RunEnd {
    /// It computes throughout.
    Runs,
    /// It finishes within the interval.
    Finishes,
    /// It reaches its time limit (`max_elapsed_time`, spec backend §1.2
    /// `rsc_fpops_bound`) before it finishes.
    TimeLimit,
}

/// The seconds a running task executing as `x` computes in an interval of `dt`
/// wall seconds, and how the interval ends for it (spec client §5.4): its share of
/// the interval (`run_frac`, the GPU's `gpu_active_frac`), cut where it finishes or
/// reaches its time limit. [`ClientHost::advance`] integrates with it, and an
/// expectation between events projects a project's CPU time with it.
pub(crate) fn run_for(j: &ClientJob, x: &Execution, dt: f64) -> (f64, RunEnd) {
    let jdt = dt * x.run_frac;
    let remaining = j.flops_left / x.flops;
    let to_limit = j.max_elapsed_time - j.cpu_time;
    if to_limit < remaining && to_limit <= jdt {
        (to_limit.max(0.0), RunEnd::TimeLimit)
    } else if remaining <= jdt {
        (remaining.max(0.0), RunEnd::Finishes)
    } else {
        (jdt, RunEnd::Runs)
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

impl ClientHost {
    /// Integrates progress from `last_advance` to `now`: FLOPs, CPU time, REC
    /// instance-seconds, and the figures of merit (spec client §5.4).
    pub(crate) fn advance(&mut self, now: Time, cfg: &ClientConfig) {
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
                let u = &self.app_versions[j.app_version as usize];
                let x = execution(u, speed, cpu_scale, cfg.gpu_active_frac);
                let speed = x.flops;
                let (secs, end) = run_for(j, &x, dt);
                match end {
                    // Finishes within the interval: exactly zero left, never a
                    // floating-point residue that would keep it running forever.
                    RunEnd::Finishes => j.flops_left = 0.0,
                    // Stops at its time limit, and `finish_tasks` aborts it.
                    RunEnd::TimeLimit => {
                        j.flops_left -= secs * speed;
                        j.set_time_limit_exceeded(true);
                    }
                    RunEnd::Runs => j.flops_left -= secs * speed,
                }
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
                p.modern.secs_this_rec_interval += if u.uses_gpu() {
                    p.gpu_time += secs * u.gpu_usage;
                    secs * (x.cpus + u.gpu_usage * rel[u.proc_type.index()])
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
    pub(crate) fn cpu_scale(&self, cfg: &ClientConfig) -> f64 {
        let n = self.usable_cpus(cfg) as f64;
        let (mut gpu, mut cpu) = (0.0, 0.0);
        for j in self.jobs.iter().filter(|j| j.is_running()) {
            let u = self.usage(j);
            if u.uses_gpu() {
                gpu += u.avg_ncpus;
            } else {
                cpu += u.avg_ncpus;
            }
        }
        if gpu + cpu > n && cpu > 0.0 {
            ((n - gpu) / cpu).max(0.0)
        } else {
            1.0
        }
    }

    /// Earliest time a running task finishes computing, if tasks compute now.
    pub(crate) fn next_completion(&self, cfg: &ClientConfig) -> Time {
        if !self.computing(cfg) {
            return Time::MAX;
        }
        let cpu_scale = self.cpu_scale(cfg);
        self.jobs
            .iter()
            .filter(|j| j.is_running())
            .map(|j| {
                let x = execution(self.usage(j), self.p_fpops, cpu_scale, cfg.gpu_active_frac);
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
    /// A background project's job always succeeds and draws nothing
    /// ([`crate::client::background`]). Otherwise the outcome is an error with the
    /// host's `error_prob`, else a wrong output with its `wrong_result_prob` (shared
    /// by its error class or unique, see [`client::truth`](crate::client::truth)),
    /// else the correct output. The three draws of the host's main stream are made
    /// whatever the app's collision fraction.
    pub(crate) fn finish_tasks(
        &mut self,
        now: Time,
        behaviour: &HostBehaviour,
        mut on_done: impl FnMut(&mut ProjectState, &ClientJob),
    ) -> u32 {
        let mut n = 0;
        for k in 0..self.jobs.len() {
            let j = &self.jobs[k];
            if !(j.is_running() && (j.flops_left <= 0.0 || j.time_limit_exceeded())) {
                continue;
            }
            let wuid = self.jobs[k].workunit_id;
            let (cs, es, out, correct) = if j.time_limit_exceeded() {
                let es = exit_status::EXIT_TIME_LIMIT_EXCEEDED;
                (client_state::COMPUTE_ERROR, es, 0.0, None)
            } else if self.projects[j.project as usize].is_background() {
                // A background project's job never errs and draws nothing: no server
                // validates it, and the host's draws for our jobs do not shift.
                (client_state::FILES_UPLOADED, 0, 0.0, None)
            } else if self.rng.random::<f64>() < self.truth.error_prob {
                (client_state::COMPUTE_ERROR, CLIENT_ERROR_EXIT, 0.0, None)
            } else if self.rng.random::<f64>() < self.truth.wrong_result_prob {
                let noise: f64 = self.rng.random();
                let pi = self.projects[self.jobs[k].project as usize].project as usize;
                let app = self.usage(&self.jobs[k]).app as usize;
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
            j.completed_time = db_time(now);
            j.client_state = cs as u8;
            j.exit_status = es;
            j.output = out;
            j.output_correct = correct;
            n += 1;
            if let Some(files) = &behaviour.files {
                self.xfer_computed(k, now, files);
            }
            let j = &self.jobs[k];
            let p = &mut self.projects[j.project as usize];
            p.modern
                .transfer
                .set(TransferFlag::RequestIfIdleAndUploading, true);
            if es == 0 {
                p.dcf.update(estimate::dcf_sample(j.progress()));
            }
            on_done(p, j);
        }
        n
    }

    /// Stops a running task: suspended in memory, or quit and rolled back to its last
    /// checkpoint (spec client §3.4).
    pub(crate) fn preempt(&mut self, k: usize, keep_in_memory: bool) {
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
            j.run_interval_start = db_time(now);
        }
    }

    /// Brings checkpoints up to date for a periodic checkpoint period: the last
    /// multiple of the period in the task's compute time (spec client §3.4).
    pub(crate) fn update_checkpoints(&mut self, cfg: &ClientConfig) {
        let c = cfg.checkpoint_period;
        if c <= 0.0 {
            return;
        }
        let cpu_scale = self.cpu_scale(cfg);
        let (p_fpops, gaf) = (self.p_fpops, cfg.gpu_active_frac);
        for j in &mut self.jobs {
            if j.state == TaskState::Running {
                let u = &self.app_versions[j.app_version as usize];
                let speed = execution(u, p_fpops, cpu_scale, gaf).flops;
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
    pub(crate) fn quit_all(&mut self, cfg: &ClientConfig) {
        self.update_checkpoints(cfg);
        for k in 0..self.jobs.len() {
            self.preempt(k, false);
        }
    }
}
