//! App versions and the scheduler's choice among them (`sched_version.cpp`
//! `get_app_version`; spec backend §1.4, §2.4.4 steps 1 and 4, §2.4.7).
//!
//! A project's app has one or more versions, each for a platform, with a plan class
//! that sets its resource usage (`avg_ncpus`, a GPU type and instance count) and its
//! speed. For each job the scheduler picks the version with the highest projected
//! FLOPS among those the host can run, whose resource the request asks for, and
//! whose daily quota is not used up.

use super::Project;
use super::config::AppConfig;
use super::credit::Average;
use super::db::HostRow;
use super::resource::{Coproc, ProcType, coproc_of, host_platform};
use super::types::HostId;

/// One APP_VERSION row with the usage its plan class gives (spec backend §1.4).
#[derive(Clone, Debug, PartialEq)]
pub struct AppVersion {
    /// 1, 2, … in the order the scenario lists the versions.
    pub id: u32,
    /// BOINC platform name; `None` = every host's own platform.
    pub platform: Option<String>,
    pub plan_class: String,
    /// CPUs a job uses (before the host's cap, see [`usage`]).
    pub avg_ncpus: f64,
    /// The processor type a job is scheduled on (`HOST_USAGE::proc_type`).
    pub proc_type: ProcType,
    /// GPU instances a job uses (0 for a CPU version).
    pub gpu_usage: f64,
    pub flops_scale: f64,
    pub flops_estimate_error: f64,
}

/// The app's versions: those the scenario lists, or one plain CPU version.
pub fn resolve(app: &AppConfig) -> Vec<AppVersion> {
    if app.version.is_empty() {
        return vec![AppVersion {
            id: super::APP_VERSION_ID,
            platform: None,
            plan_class: String::new(),
            avg_ncpus: 1.0,
            proc_type: ProcType::Cpu,
            gpu_usage: 0.0,
            flops_scale: 1.0,
            flops_estimate_error: 1.0,
        }];
    }
    app.version
        .iter()
        .enumerate()
        .map(|(i, v)| AppVersion {
            id: i as u32 + 1,
            platform: (!v.platform.is_empty()).then(|| v.platform.clone()),
            plan_class: v.plan_class.clone(),
            avg_ncpus: v.avg_ncpus,
            proc_type: v.coproc.map_or(ProcType::Cpu, |c| c.kind.proc_type()),
            gpu_usage: v.coproc.map_or(0.0, |c| c.count),
            flops_scale: v.flops_scale,
            flops_estimate_error: v.flops_estimate_error,
        })
        .collect()
}

/// The chosen version of a job on a host (`BEST_APP_VERSION` with its `HOST_USAGE`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bav {
    pub av: u32,
    pub proc_type: ProcType,
    /// CPUs a job uses on this host.
    pub avg_ncpus: f64,
    pub gpu_usage: f64,
    /// `peak_flops` the server believes (`flops_estimate` of the result, §2.4.4
    /// `add_result_to_reply` step 1).
    pub peak_flops: f64,
    /// `projected_flops` (§2.4.4 step 4), sent as the version's `flops`.
    pub projected_flops: f64,
}

impl Bav {
    /// Instances of its processor type a job uses.
    pub fn instances(&self) -> f64 {
        if self.proc_type == ProcType::Cpu {
            self.avg_ncpus
        } else {
            self.gpu_usage
        }
    }
}

/// Whether `av` can run on `host` at all: its platform and its GPU.
pub fn runs_on(av: &AppVersion, host: &HostRow) -> bool {
    if let Some(pf) = &av.platform
        && host_platform(&host.os_name, &host.p_vendor) != Some(pf.as_str())
    {
        return false;
    }
    av.proc_type == ProcType::Cpu || coproc_of(&host.coprocs, av.proc_type).is_some()
}

/// `avg_ncpus` of `av` on a host whose scheduler sees `ncpus` CPUs: capped at the
/// host's CPUs, as BOINC's multi-threaded plan classes set it.
pub fn usage_ncpus(av: &AppVersion, ncpus: i32) -> f64 {
    av.avg_ncpus.min(ncpus.max(1) as f64)
}

/// Peak FLOPS the server believes `av` has on this host: the plan class's speed
/// times the devices it uses, times the version's estimate error.
pub fn peak_flops(av: &AppVersion, p_fpops: f64, coprocs: &[Coproc], ncpus: i32) -> f64 {
    let gpu = coproc_of(coprocs, av.proc_type)
        .filter(|_| av.proc_type != ProcType::Cpu)
        .map_or(0.0, |c| c.peak_flops * av.gpu_usage);
    (p_fpops * usage_ncpus(av, ncpus) + gpu) * av.flops_scale * av.flops_estimate_error
}

/// The version's `pfc` average (spec backend §6.2). Every version shares the
/// project's one statistics row until the credit engine keeps one per version: this
/// is the only place that reads it for the choice of a version.
pub fn version_pfc(p: &Project, _av: u32) -> &Average {
    &p.app_version.pfc
}

/// `projected_flops` of `av` on the host (§2.4.4 step 4): the peak without
/// statistics, `1/hav.et.avg` once the HAV has more than 10 elapsed-time samples,
/// or `peak_flops / av.pfc.avg` once the version has more than 100 samples.
pub fn projected_flops(p: &Project, host: &HostRow, av: u32, peak: f64) -> f64 {
    let pfc = version_pfc(p, av);
    match host.hav(av) {
        Some(h) if h.et.avg.n > 10 && h.et.avg.avg > 0.0 => 1.0 / h.et.avg.avg,
        _ if pfc.n > 100 && pfc.avg > 0.0 => peak / pfc.avg,
        _ => peak,
    }
}

/// Whether the host's daily quota of `av` is used up (§2.4.7): `n_jobs_today ≥ q`
/// with `q = MJPD` if MJPD = 1, else `MJPD × ncpus` (CPU) or `MJPD × ngpus ×
/// gpu_multiplier` (GPU; a multiplier of 0 counts as 1).
pub fn quota_exceeded(p: &Project, host: &HostRow, av: &AppVersion, ncpus: i32) -> bool {
    if !p.sw.hav_accounting {
        return false;
    }
    let q = p.cfg.config.daily_result_quota;
    if q == 0 && !p.sw.zero_quota_blocks {
        return false;
    }
    let Some(hav) = host.hav(av.id) else {
        return false; // no HAV yet: first RPC
    };
    let limit = if hav.max_jobs_per_day == 1 {
        1
    } else if av.proc_type == ProcType::Cpu {
        hav.max_jobs_per_day * ncpus
    } else {
        let ngpus = coproc_of(&host.coprocs, av.proc_type).map_or(0, |c| c.count as i32);
        hav.max_jobs_per_day * ngpus * p.cfg.config.gpu_multiplier.max(1)
    };
    hav.n_jobs_today >= limit
}

/// What `get_app_version` may choose from.
#[derive(Clone, Copy, Debug)]
pub struct Want {
    /// Only versions of this processor type (the `send_work` pass), or any.
    pub proc_type: Option<ProcType>,
    /// Skip versions whose daily quota is used up (not for resends).
    pub check_quota: bool,
    /// The version the workunit is committed to (homogeneous app version), or 0.
    pub committed: u32,
    /// CPUs the scheduler sees on the host (`effective_ncpus`).
    pub ncpus: i32,
}

/// `get_app_version` (§2.4.4 step 1): the version of highest projected FLOPS the
/// host can run among those `want` allows; ties go to the lower id.
pub fn get_app_version(p: &Project, hostid: HostId, want: Want) -> Option<Bav> {
    let host = p.db.host(hostid);
    let mut best: Option<Bav> = None;
    for av in &p.app_versions {
        if want.committed != 0 && av.id != want.committed {
            continue;
        }
        if want.proc_type.is_some_and(|t| t != av.proc_type) || !runs_on(av, host) {
            continue;
        }
        if want.check_quota && quota_exceeded(p, host, av, want.ncpus) {
            continue;
        }
        let peak = peak_flops(av, host.p_fpops, &host.coprocs, want.ncpus);
        let projected = projected_flops(p, host, av.id, peak);
        if best.is_none_or(|b| projected > b.projected_flops) {
            best = Some(Bav {
                av: av.id,
                proc_type: av.proc_type,
                avg_ncpus: usage_ncpus(av, want.ncpus),
                gpu_usage: av.gpu_usage,
                peak_flops: peak,
                projected_flops: projected,
            });
        }
    }
    best
}

/// Whether every version of type `t` the host can run has its daily quota used
/// up: `send_work` then stops filling that resource (§2.4.4 step 2). False if the
/// host can run none.
pub fn all_quota_exceeded(p: &Project, hostid: HostId, t: ProcType, ncpus: i32) -> bool {
    let host = p.db.host(hostid);
    let mut any = false;
    for av in p.app_versions.iter().filter(|av| av.proc_type == t) {
        if runs_on(av, host) {
            if !quota_exceeded(p, host, av, ncpus) {
                return false;
            }
            any = true;
        }
    }
    any
}
