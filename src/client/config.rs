//! The `[client]` section: which policy hosts run, their preferences, and the named
//! switches of spec client §7.
//!
//! Preferences whose default differs between the two policies are `Option`s here and
//! resolved by [`ClientConfig::resolve`]: the seed-era defaults of spec client §1.1
//! (`work_buf_min_days = 1`, `work_buf_max_days = 3`, `max_cpus = 2`) and the modern
//! ones of §2.1 (`work_buf_min_days = 0.1`, `work_buf_additional_days = 0.5`).

use crate::engine::time::SECONDS_PER_DAY;
use serde::{Deserialize, Serialize};

/// Which client policy a host runs (spec client §7).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// Spec client §1: resource debt, get-work and report-result sessions, water
    /// marks, EDF run to completion, seed backoff (`SeedDebt2003`).
    #[default]
    SeedDebt,
    /// Spec client §2–3: REC, round-robin simulation, per-resource backoff, WRR + EDF
    /// CPU scheduling in time slices (`ModernRec`).
    ModernRec,
}

/// The seed backoff formula variant (spec client §1.9 step 3).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum SeedBackoff {
    /// 2003-12 reference: `int(rand_range(60, min(14400, e^n)))`.
    #[default]
    Reference2003,
    /// 2002–2003: `clamp(e^(U·n), 60, 14400)`.
    Early2002,
}

/// When the seed client reports a finished result on its own (spec client §1.8).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum SeedReporting {
    /// 2003-12 reference: when `report_deadline <= now + 21600`.
    #[default]
    Reference2003,
    /// 2003-05: every ready result is reported at once.
    Immediate,
    /// 2004-04: cushion `21600·2·(1 − connected_frac) + 21600`.
    ConnectedCushion2004,
}

/// The `[client]` section as written in the scenario.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ClientSection {
    pub policy: Policy,
    /// Low water mark (seed) / minimum buffer (modern), days.
    pub work_buf_min_days: Option<f64>,
    /// Seed high water mark, days (default 3).
    pub work_buf_max_days: Option<f64>,
    /// Modern additional buffer, days (default 0.5).
    pub work_buf_additional_days: Option<f64>,
    /// Seed `prefs.max_cpus` (default 2); modern hosts use all their CPUs.
    pub max_cpus: Option<u32>,
    /// Modern time slice, seconds (`cpu_scheduling_period_minutes·60`, default 3600).
    pub cpu_scheduling_period: f64,
    /// Modern REC half-life, seconds (default 10 days; ≤ 0 means 10 days).
    pub rec_half_life: f64,
    /// Seconds of computation between checkpoints; 0 = continuous (no work is ever
    /// lost), as in the BOINC emulator (spec client §3.4).
    pub checkpoint_period: f64,
    /// Keep preempted tasks in memory (no work lost on preemption).
    pub leave_apps_in_memory: bool,
    /// Step of the BOINC emulator used for the idle-time statistics of the monotony
    /// figure (spec client §5.4, §5.7), seconds.
    pub merit_step: f64,
    /// Replace every uniform draw `U` of the client policies by this constant, so a
    /// worked example is exact ("U fixed", spec client §6).
    pub pin_u: Option<f64>,
    pub seed_backoff: SeedBackoff,
    pub seed_reporting: SeedReporting,
    /// Historical bug: `exp_avg_cpu` grows instead of decaying (spec client §1.2).
    pub seed_exp_sign_bug: bool,
    /// Historical quirk: the session clears `min_rpc_time` after a reply with jobs,
    /// dropping the reply's `request_delay` (spec client §1.7).
    pub seed_request_delay_quirk: bool,
    /// No EDF passes in the modern CPU scheduler (`--cpu_sched_rr_only`).
    pub cpu_sched_rr_only: bool,
    /// Keep computing while the host is off or inactive, as the BOINC emulator does
    /// (spec client §5.3).
    pub bce_compat_compute_when_off: bool,
    /// Order the RR simulation's project "heap" like upstream's comparator-less
    /// `make_heap` over project pointers (spec client §2.5): highest address first,
    /// i.e. the last project in list order, instead of by priority.
    pub rrsim_pointer_heap_order: bool,
    /// A report RPC whose piggy-backed request got nothing backs the resource off, as
    /// in the emulator (spec client §2.7); off = the real client.
    pub emulator_report_backoff: bool,
}

impl Default for ClientSection {
    fn default() -> Self {
        Self {
            policy: Policy::SeedDebt,
            work_buf_min_days: None,
            work_buf_max_days: None,
            work_buf_additional_days: None,
            max_cpus: None,
            cpu_scheduling_period: 3600.0,
            rec_half_life: 864_000.0,
            checkpoint_period: 0.0,
            leave_apps_in_memory: false,
            merit_step: 60.0,
            pin_u: None,
            seed_backoff: SeedBackoff::default(),
            seed_reporting: SeedReporting::default(),
            seed_exp_sign_bug: false,
            seed_request_delay_quirk: false,
            cpu_sched_rr_only: false,
            bce_compat_compute_when_off: false,
            rrsim_pointer_heap_order: false,
            emulator_report_backoff: false,
        }
    }
}

/// The resolved client configuration of one host group.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientConfig {
    pub policy: Policy,
    pub work_buf_min_days: f64,
    pub work_buf_max_days: f64,
    pub work_buf_additional_days: f64,
    pub max_cpus: u32,
    pub cpu_scheduling_period: f64,
    pub rec_half_life: f64,
    pub checkpoint_period: f64,
    pub leave_apps_in_memory: bool,
    pub merit_step: f64,
    pub pin_u: Option<f64>,
    pub seed_backoff: SeedBackoff,
    pub seed_reporting: SeedReporting,
    pub seed_exp_sign_bug: bool,
    pub seed_request_delay_quirk: bool,
    pub cpu_sched_rr_only: bool,
    pub bce_compat_compute_when_off: bool,
    pub rrsim_pointer_heap_order: bool,
    pub emulator_report_backoff: bool,
    /// The group's `gpu_active_frac`: the fraction of the time GPU computing is
    /// allowed while the host computes (spec client §3.5). 1 unless the world sets it.
    pub gpu_active_frac: f64,
    /// Whether hosts keep the work request of each project's last RPC
    /// ([`ProjectState::last_request`](super::host::ProjectState::last_request)),
    /// which only `[[expect]]` entries read: the plan sets it when the scenario has
    /// any. Without it the request is not kept, which changes no output.
    pub keep_last_request: bool,
}

impl ClientConfig {
    /// Fills the policy-dependent defaults. `policy` overrides the section's policy
    /// (a host group may choose its own).
    pub fn resolve(s: &ClientSection, policy: Option<Policy>) -> Self {
        let policy = policy.unwrap_or(s.policy);
        let seed = policy == Policy::SeedDebt;
        Self {
            policy,
            work_buf_min_days: s.work_buf_min_days.unwrap_or(if seed { 1.0 } else { 0.1 }),
            work_buf_max_days: s.work_buf_max_days.unwrap_or(3.0),
            work_buf_additional_days: s.work_buf_additional_days.unwrap_or(0.5),
            max_cpus: s.max_cpus.unwrap_or(if seed { 2 } else { u32::MAX }),
            cpu_scheduling_period: s.cpu_scheduling_period,
            rec_half_life: if s.rec_half_life <= 0.0 {
                864_000.0
            } else {
                s.rec_half_life
            },
            checkpoint_period: s.checkpoint_period,
            leave_apps_in_memory: s.leave_apps_in_memory,
            merit_step: s.merit_step,
            pin_u: s.pin_u,
            seed_backoff: s.seed_backoff,
            seed_reporting: s.seed_reporting,
            seed_exp_sign_bug: s.seed_exp_sign_bug,
            seed_request_delay_quirk: s.seed_request_delay_quirk,
            cpu_sched_rr_only: s.cpu_sched_rr_only,
            bce_compat_compute_when_off: s.bce_compat_compute_when_off,
            rrsim_pointer_heap_order: s.rrsim_pointer_heap_order,
            emulator_report_backoff: s.emulator_report_backoff,
            gpu_active_frac: 1.0,
            keep_last_request: false,
        }
    }

    /// Modern `work_buf_min()` = `max(work_buf_min_days·86400, 180)` (spec client §2.2).
    pub(crate) fn work_buf_min(&self) -> f64 {
        Self::buf_min(self.work_buf_min_days)
    }

    /// Modern `work_buf_total()` = `max(work_buf_min() + additional, 1)` (§2.2).
    pub(crate) fn work_buf_total(&self) -> f64 {
        Self::buf_total(self.work_buf_min_days, self.work_buf_additional_days)
    }

    /// `work_buf_min()` of a `work_buf_min_days` (a host's own or the group's).
    pub(crate) fn buf_min(min_days: f64) -> f64 {
        (min_days * SECONDS_PER_DAY).max(180.0)
    }

    /// `work_buf_total()` of a `work_buf_min_days` and `work_buf_additional_days`.
    pub(crate) fn buf_total(min_days: f64, additional_days: f64) -> f64 {
        (Self::buf_min(min_days) + additional_days * SECONDS_PER_DAY).max(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_dependent_defaults() {
        let s = ClientSection::default();
        let seed = ClientConfig::resolve(&s, None);
        assert_eq!(seed.work_buf_min_days, 1.0);
        assert_eq!(seed.max_cpus, 2);
        let modern = ClientConfig::resolve(&s, Some(Policy::ModernRec));
        assert_eq!(modern.work_buf_min(), 8640.0);
        assert_eq!(modern.work_buf_total(), 51_840.0);
    }
}
