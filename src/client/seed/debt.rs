//! Exponentially averaged CPU, resource debt, project order and the work buffer
//! estimate of the seed client (spec client §1.2–1.4).
//!
//! Everything here is a pure function of the host's state at one instant: the seed
//! client recomputes debts only when a session starts (`compute_resource_debts`, spec
//! client §1.5), and the buffer is re-estimated whenever a decision needs it.

use crate::client::config::{ClientConfig, Policy};
use crate::client::host::{ClientHost, ProjectState, SeedProject};

/// `EXP_DECAY_RATE = 1/(SECONDS_PER_DAY·7)`: the average falls by a factor of e per
/// week (spec client §1.2).
pub(crate) const EXP_DECAY_RATE: f64 = 1.0 / (SECONDS_PER_DAY * 7.0);

pub(crate) use crate::engine::time::SECONDS_PER_DAY;

/// `debt_order` of a project not ranked yet (the C code's `-1`).
pub(crate) const UNRANKED: u32 = u32::MAX;

/// `update_avg_cpu(p)`: decays `exp_avg_cpu` from `exp_avg_mod_time` to `now` (spec
/// client §1.2). A zero average stays zero; the modification time moves only forward.
/// `sign_bug` reproduces the pre-2004-04-07 `exp(+dt·rate)`, under which the value
/// grows instead of decaying (`seed_exp_sign_bug`).
pub(crate) fn update_avg_cpu(seed: &mut SeedProject, now: f64, sign_bug: bool) {
    let dt = now - seed.exp_avg_mod_time;
    if dt > 0.0 {
        if seed.exp_avg_cpu != 0.0 {
            let x = dt * EXP_DECAY_RATE;
            seed.exp_avg_cpu *= if sign_bug { x.exp() } else { (-x).exp() };
        }
        seed.exp_avg_mod_time = now;
    }
}

/// Credits a finished job (`app_finished`, spec client §1.2): decay first, then add
/// the job's final CPU time. CPU time is credited only here, never while a job runs,
/// which is why the debt of a project with a long running job does not move.
pub(crate) fn credit_finished(seed: &mut SeedProject, now: f64, cpu_time: f64, sign_bug: bool) {
    update_avg_cpu(seed, now, sign_bug);
    seed.exp_avg_cpu += cpu_time;
}

/// `compute_resource_debts()` (spec client §1.3): decays every average to `now`, sets
/// `resource_debt = resource_share / exp_avg_cpu` (the raw share for a project with no
/// CPU history) and ranks projects by decreasing debt into `debt_order`.
///
/// The rank is the seed code's selection sort: each pass keeps the first project with
/// a strictly larger debt, so ties go to the earlier project in list order. It needs
/// no scratch space, which keeps the event free of allocation.
pub(crate) fn compute_resource_debts(projects: &mut [ProjectState], now: f64, sign_bug: bool) {
    for p in projects.iter_mut() {
        update_avg_cpu(&mut p.seed, now, sign_bug);
        p.seed.resource_debt = if p.seed.exp_avg_cpu == 0.0 {
            p.resource_share
        } else {
            p.resource_share / p.seed.exp_avg_cpu
        };
        p.seed.debt_order = UNRANKED;
    }
    for rank in 0..projects.len() {
        // `best = -2` in the C code: any non-negative debt beats it, and only a
        // strictly larger debt replaces the current best.
        let mut best = -2.0;
        let mut pbest = None;
        for (j, p) in projects.iter().enumerate() {
            if p.seed.debt_order == UNRANKED && p.seed.resource_debt > best {
                best = p.seed.resource_debt;
                pbest = Some(j);
            }
        }
        // A NaN debt (or a negative share) never wins a comparison; such a project
        // takes the first rank left rather than staying unranked.
        let pbest = pbest.or_else(|| projects.iter().position(|p| p.seed.debt_order == UNRANKED));
        if let Some(j) = pbest {
            projects[j].seed.debt_order = rank as u32;
        }
    }
}

/// `next_project(old)` (spec client §1.3): the eligible project with the smallest
/// `debt_order` greater than `old`'s (any, if `old` is `None`). Projects waiting for a
/// master fetch or in backoff (`min_rpc_time > now`) are skipped.
pub(crate) fn next_project(
    projects: &[ProjectState],
    old: Option<usize>,
    now: f64,
) -> Option<usize> {
    let floor = old.map(|o| projects[o].seed.debt_order);
    let mut pbest = None;
    let mut best = UNRANKED;
    for (i, p) in projects.iter().enumerate() {
        if p.master_url_fetch_pending || p.min_rpc_time > now {
            continue;
        }
        if floor.is_some_and(|f| p.seed.debt_order <= f) {
            continue;
        }
        if pbest.is_none() || p.seed.debt_order < best {
            pbest = Some(i);
            best = p.seed.debt_order;
        }
    }
    pbest
}

/// `time_stats.active_frac` as the buffer estimate divides by it. A host whose
/// statistics say it is never active would divide by zero; the smallest positive
/// value makes any queued work look infinite and an empty queue look empty, which is
/// the limit of the formula.
fn active_frac(host: &ClientHost) -> f64 {
    let af = host.time_stats.active_frac;
    if af > 0.0 { af } else { f64::MIN_POSITIVE }
}

/// `p_ncpus` of the buffer formulas: the host's CPUs (not `max_cpus`; the 2003 code
/// has a TODO about that), at least one.
fn p_ncpus(host: &ClientHost) -> f64 {
    host.ncpus.max(1) as f64
}

/// The seconds of unfinished work that make the buffer exactly `days`: the inverse
/// of [`current_work_buf_days`], used to predict water-mark crossings.
pub(crate) fn buffer_secs_for_days(host: &ClientHost, days: f64) -> f64 {
    days * SECONDS_PER_DAY * p_ncpus(host) * active_frac(host)
}

/// `current_work_buf_days()`, 2003-12 reference (spec client §1.4): the estimated CPU
/// time left in results not finished computing, `rsc_fpops_est/p_fpops ×
/// (1 − fraction_done)`, in days, per CPU, per unit of `active_frac`, with the
/// estimate corrected by the project's DCF (§3.6, [`ClientHost::unfinished_secs`]).
pub(crate) fn current_work_buf_days(host: &ClientHost) -> f64 {
    let secs = host.unfinished_secs(Policy::SeedDebt);
    secs / SECONDS_PER_DAY / p_ncpus(host) / active_frac(host)
}

/// `work_needed_secs()` (spec client §1.4): CPU seconds that bring the buffer up to
/// the high water mark, `(work_buf_max_days − x)·86400·active_frac·p_ncpus`, or 0
/// above it.
pub(crate) fn work_needed_secs(host: &ClientHost, cfg: &ClientConfig) -> f64 {
    let x = current_work_buf_days(host);
    let max_days = host.work_buf_max_days(cfg);
    if x > max_days {
        return 0.0;
    }
    (max_days - x) * SECONDS_PER_DAY * active_frac(host) * p_ncpus(host)
}
