//! Recent estimated credit (REC) and the scheduling priority derived from it
//! (`update_average` of `lib/util.cpp`; `adjust_rec`, `update_rec`,
//! `project_priority_init`, `compute_sched_priority`, `adjust_rec_sched` of
//! `client/cpu_sched.cpp`; spec client §2.3, §2.4).

use crate::client::config::ClientConfig;
use crate::client::host::{ClientHost, JobUsage, ProjectState, gpu_relative_speeds};
use crate::server::resource::N_RSC;
use std::f64::consts::LN_2;

/// Credits per FLOP: 200 credits per day per GFLOPS (`COBBLESTONE_SCALE`, §2.1).
pub(crate) const COBBLESTONE_SCALE: f64 = 200.0 / 86_400e9;
use crate::engine::time::SECONDS_PER_DAY;

/// `update_average` (lib/util.cpp): exponential average of `work` per day with
/// half-life `half_life`, over the time since `avg_time` (spec client §2.3).
///
/// The `avg_time == 0` first-time branch of the C++ function is left out on purpose:
/// `update_rec` sets `rec_time` before calling it, so upstream never takes that branch
/// (a real clock is never 0), whereas our simulated clock starts at 0 and would take
/// it spuriously. Without it the update is exactly step-independent at a constant rate
/// (S4).
pub(crate) fn update_average(
    now: f64,
    work: f64,
    half_life: f64,
    avg: &mut f64,
    avg_time: &mut f64,
) {
    let diff = (now - *avg_time).max(0.0);
    let weight = (-diff * LN_2 / half_life).exp();
    *avg *= weight;
    if 1.0 - weight > 1e-6 {
        *avg += (1.0 - weight) * work / (diff / SECONDS_PER_DAY);
    } else {
        *avg += LN_2 * work * SECONDS_PER_DAY / half_life;
    }
    *avg_time = now;
}

/// `adjust_rec` (spec client §2.3): turns the instance-seconds accumulated since
/// `rec_interval_start` (by `ClientHost::advance`) into REC and starts a new interval.
///
/// The policy calls this at *every* host event, not only from `schedule_cpus`: the
/// running set is constant between two events, so each interval has a constant
/// credit rate and, `update_average` being step-independent at a constant rate, the
/// result equals the real client's 60-s updates exactly. For the same reason the
/// "interval longer than `2·rec_adjust_period` is discarded" rule is not applied: it
/// only fires upstream after the client was not running (at most the last 60 s of
/// work before a shutdown are dropped there; we keep them).
pub(crate) fn adjust_rec(host: &mut ClientHost, now: f64, cfg: &ClientConfig) {
    let elapsed = now - host.modern.rec_interval_start;
    if elapsed < 0.0 {
        reset_rec_accounting(host, now);
        return;
    }
    if elapsed < 1.0 {
        return;
    }
    update_rec(host, now, cfg);
    reset_rec_accounting(host, now);
}

fn reset_rec_accounting(host: &mut ClientHost, now: f64) {
    for p in &mut host.projects {
        p.modern.secs_this_rec_interval = 0.0;
    }
    host.modern.rec_interval_start = now;
}

/// `update_rec`: CPU-only, so `relative_speed = 1`; `cpu_usage_limit` is 100 %.
fn update_rec(host: &mut ClientHost, now: f64, cfg: &ClientConfig) {
    let f = host.p_fpops;
    let start = host.modern.rec_interval_start;
    for p in &mut host.projects {
        let x = p.modern.secs_this_rec_interval * f * COBBLESTONE_SCALE;
        if p.modern.rec_time == 0.0 {
            p.modern.rec_time = start;
        }
        update_average(
            now,
            x,
            cfg.rec_half_life,
            &mut p.modern.rec,
            &mut p.modern.rec_time,
        );
    }
}

/// The sums `project_priority_init` computes over the participating projects, and the
/// host constants `adjust_rec_sched` needs (spec client §2.4).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PrioCtx {
    /// `Σ rec` over participants (1 if that is 0).
    pub rec_sum: f64,
    /// `Σ resource_share` over participants.
    pub rs_sum: f64,
    /// `total_peak_flops / p_fpops`: the usable CPUs plus each GPU type's
    /// `relative_speed · count` (`total_peak_flops`, spec client §2.4 step 4).
    pub peak_units: f64,
}

impl PrioCtx {
    /// Sums over the projects for which `participant` holds.
    pub fn new(
        projects: &[ProjectState],
        participant: impl Fn(&ProjectState) -> bool,
        peak_units: f64,
    ) -> Self {
        let (mut rs_sum, mut rec_sum) = (0.0, 0.0);
        for p in projects.iter().filter(|p| participant(p)) {
            rs_sum += p.resource_share;
            rec_sum += p.modern.rec;
        }
        if rec_sum == 0.0 {
            rec_sum = 1.0;
        }
        Self {
            rec_sum,
            rs_sum,
            peak_units,
        }
    }

    /// `compute_sched_priority` for a project with `rec_temp` and share `rs`: higher is
    /// better; a zero-share (backup) project is always below the others.
    pub fn priority(&self, rec_temp: f64, rs: f64) -> f64 {
        let rec_frac = rec_temp / self.rec_sum;
        if rs == 0.0 {
            return -1e3 - rec_frac;
        }
        let rs_frac = if self.rs_sum > 0.0 {
            rs / self.rs_sum
        } else {
            0.0
        };
        if rs_frac > 0.0 {
            -rec_frac / rs_frac
        } else {
            -rec_frac
        }
    }

    /// What `adjust_rec_sched` adds to `rec_temp` per unit of a job's
    /// [`job_peak_units`]: one hour of credit at the `rec_sum` scale,
    /// `peak_flops/total_peak_flops · rec_sum/24` for a 1-CPU job.
    pub(crate) fn rec_increment(&self) -> f64 {
        self.rec_sum / (24.0 * self.peak_units)
    }
}

/// `total_peak_flops / p_fpops` of a host using `ncpus` CPUs (spec client §2.4 step
/// 4): `ncpus + Σ_gpu relative_speed · count`.
pub(crate) fn total_peak_units(host: &ClientHost, ncpus: f64) -> f64 {
    let rel = gpu_relative_speeds(&host.coprocs, host.p_fpops);
    let mut t = ncpus;
    for c in host.coprocs.iter() {
        t += rel[c.kind.index()] * c.count as f64;
    }
    t
}

/// `peak_flops(job) / p_fpops` for a job of app version `u` (spec client §2.4 step
/// 4): `avg_ncpus`, plus `coproc_usage · relative_speed` of its GPU type; `rel` from
/// [`gpu_relative_speeds`]. So a 4-CPU job lowers its project's priority four times
/// as much as a 1-CPU job.
pub(crate) fn job_peak_units(u: &JobUsage, rel: &[f64; N_RSC]) -> f64 {
    if u.uses_gpu() {
        u.avg_ncpus + u.gpu_usage * rel[u.proc_type.index()]
    } else {
        u.avg_ncpus
    }
}

/// `project_priority_init`: sets `rec_temp = rec` and `sched_priority` of every
/// project and returns the sums. Simplification: upstream resets `rec_temp` only for
/// participants, leaving a stale value (from the last RR simulation) in the others;
/// here every project starts from its `rec`. Non-participants never get CPU or work,
/// so only the ordering of projects that are skipped anyway can differ.
pub(crate) fn project_priority_init(
    host: &mut ClientHost,
    participant: impl Fn(&ProjectState) -> bool,
    ncpus: f64,
) -> PrioCtx {
    let ctx = PrioCtx::new(&host.projects, participant, total_peak_units(host, ncpus));
    for p in &mut host.projects {
        p.modern.rec_temp = p.modern.rec;
        p.modern.sched_priority = if ctx.rs_sum == 0.0 {
            0.0
        } else {
            ctx.priority(p.modern.rec_temp, p.resource_share)
        };
    }
    ctx
}

/// `adjust_rec_sched`: a job of `p` of `units` peak units ([`job_peak_units`]) was
/// added to a run list.
pub fn adjust_rec_sched(p: &mut ProjectState, ctx: &PrioCtx, units: f64) {
    p.modern.rec_temp += ctx.rec_increment() * units;
    p.modern.sched_priority = ctx.priority(p.modern.rec_temp, p.resource_share);
}

/// Credit per day one busy CPU earns (`p_fpops · 200/1e9`), the rate `R` of §2.3.
pub(crate) fn credit_per_cpu_day(p_fpops: f64) -> f64 {
    p_fpops * COBBLESTONE_SCALE * SECONDS_PER_DAY
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_average_is_step_independent() {
        // 1 GFLOPS for 1 h in one step, or in 60 steps of a minute (spec S4).
        let work_per_sec = 1e9 * COBBLESTONE_SCALE;
        let (mut a, mut at) = (0.0, 0.0);
        update_average(3600.0, 3600.0 * work_per_sec, 864_000.0, &mut a, &mut at);
        let (mut b, mut bt) = (0.0, 0.0);
        for k in 1..=60 {
            update_average(
                60.0 * k as f64,
                60.0 * work_per_sec,
                864_000.0,
                &mut b,
                &mut bt,
            );
        }
        assert!((a - 0.576789).abs() < 5e-7, "{a}");
        assert!((a - b).abs() < 1e-12);
        // Tiny interval: the linear branch.
        let (mut c, mut ct) = (10.0, 100.0);
        update_average(101.0, work_per_sec, 864_000.0, &mut c, &mut ct);
        assert!(c > 9.99 && c < 10.01);
    }

    #[test]
    fn priority_prefers_smaller_rec_per_share_and_backup_last() {
        let ctx = PrioCtx {
            rec_sum: 10.0,
            rs_sum: 400.0,
            peak_units: 1.0,
        };
        let a = ctx.priority(2.0, 100.0);
        let b = ctx.priority(8.0, 300.0);
        assert!((a - (-0.8)).abs() < 1e-12);
        assert!((b - (-0.8 / 0.75)).abs() < 1e-12);
        assert!(a > b);
        assert!(ctx.priority(0.0, 0.0) < b);
        assert!((ctx.rec_increment() - 10.0 / 24.0).abs() < 1e-12);
        assert!((credit_per_cpu_day(1e9) - 200.0).abs() < 1e-9);
    }
}
