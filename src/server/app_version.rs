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
use super::types::{AppId, HostId};

/// One APP_VERSION row with the usage its plan class gives (spec backend §1.4).
#[derive(Clone, Debug, PartialEq)]
pub struct AppVersion {
    /// 1, 2, … across the project's apps, in the order the scenario lists them.
    pub id: u32,
    /// The app it is a version of (`app_version.appid`).
    pub appid: AppId,
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

/// The versions of app `appid`, numbered from `first_id`: those the scenario
/// lists, or one plain CPU version.
pub fn resolve(app: &AppConfig, appid: AppId, first_id: u32) -> Vec<AppVersion> {
    if app.version.is_empty() {
        return vec![AppVersion {
            id: first_id,
            appid,
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
            id: first_id + i as u32,
            appid,
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
pub(crate) struct Bav {
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
pub(crate) fn runs_on(av: &AppVersion, host: &HostRow) -> bool {
    if let Some(pf) = &av.platform
        && host_platform(&host.names.os_name, &host.names.p_vendor) != Some(pf.as_str())
    {
        return false;
    }
    av.proc_type == ProcType::Cpu || coproc_of(&host.coprocs, av.proc_type).is_some()
}

/// `avg_ncpus` of `av` on a host whose scheduler sees `ncpus` CPUs: capped at the
/// host's CPUs, as BOINC's multi-threaded plan classes set it.
pub(crate) fn usage_ncpus(av: &AppVersion, ncpus: i32) -> f64 {
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

/// The version's `pfc` average (spec backend §6.2), kept by the credit engine
/// ([`super::credit_new`]) per version: the only place that reads it for the choice
/// of a version.
pub(crate) fn version_pfc(p: &Project, av: u32) -> Average {
    p.credit.version(av).map(|v| v.pfc).unwrap_or_default()
}

/// `projected_flops` of `av` on the host (§2.4.4 step 4): the peak without
/// statistics, `1/hav.et.avg` once the HAV has more than 10 elapsed-time samples,
/// or `peak_flops / av.pfc.avg` once the version has more than 100 samples.
pub(crate) fn projected_flops(p: &Project, host: &HostRow, av: u32, peak: f64) -> f64 {
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
pub(crate) fn quota_exceeded(p: &Project, host: &HostRow, av: &AppVersion, ncpus: i32) -> bool {
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
    // In 64 bits: a large quota times the CPUs must not wrap around.
    let per_day = i64::from(hav.max_jobs_per_day);
    let limit = if hav.max_jobs_per_day == 1 {
        1
    } else if av.proc_type == ProcType::Cpu {
        per_day * i64::from(ncpus)
    } else {
        let ngpus = coproc_of(&host.coprocs, av.proc_type).map_or(0, |c| c.count as i32);
        per_day * i64::from(ngpus) * i64::from(p.cfg.config.gpu_multiplier.max(1))
    };
    i64::from(hav.n_jobs_today) >= limit
}

/// What `get_app_version` may choose from.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Want {
    /// The job's app: only its versions.
    pub appid: AppId,
    /// Only versions of this processor type (the `send_work` pass), or any.
    pub proc_type: Option<ProcType>,
    /// Skip versions whose daily quota is used up (not for resends).
    pub check_quota: bool,
    /// The version the workunit is committed to (homogeneous app version), or 0.
    pub committed: u32,
    /// CPUs the scheduler sees on the host (`effective_ncpus`).
    pub ncpus: i32,
}

/// `get_app_version` (§2.4.4 step 1): the version of the job's app of highest
/// projected FLOPS the host can run among those `want` allows; ties go to the
/// lower id.
pub(crate) fn get_app_version(p: &Project, hostid: HostId, want: Want) -> Option<Bav> {
    let host = p.db.host(hostid);
    let mut best: Option<Bav> = None;
    for av in p.versions_of(want.appid) {
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

/// Whether every version of type `t` the host can run, of any app, has its daily
/// quota used up: `send_work` then stops filling that resource (§2.4.4 step 2).
/// False if the host can run none.
pub(crate) fn all_quota_exceeded(p: &Project, hostid: HostId, t: ProcType, ncpus: i32) -> bool {
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

#[cfg(test)]
mod tests {
    use super::super::ProjectConfig;
    use super::super::config::{AppVersionConfig, CoprocUsage};
    use super::super::db::{HavRow, HostNames, ResultRow, WorkunitRow};
    use super::super::resource::GpuType;
    use super::super::scheduler::{Reply, Request, process_request};
    use super::super::types::{Actor, ServerState};
    use super::*;
    use std::sync::Arc;

    const NOW: i64 = 1000;

    /// A GPU version: `count` NVIDIA GPUs and half a CPU per job.
    fn gpu_version(count: f64) -> AppVersionConfig {
        AppVersionConfig {
            plan_class: "cuda".into(),
            avg_ncpus: 0.5,
            coproc: Some(CoprocUsage {
                kind: GpuType::Nvidia,
                count,
            }),
            ..Default::default()
        }
    }

    /// A project with these versions and `nslots` jobs of the default template
    /// (3.6e12 FLOPs, one instance) in its cache.
    fn project(versions: Vec<AppVersionConfig>, nslots: usize) -> Project {
        let mut cfg = ProjectConfig::default();
        cfg.apps[0].version = versions;
        cfg.config.shmem_work_items = nslots as u32;
        let mut p = Project::new(0, "main", cfg, 7, false);
        for slot in 0..nslots {
            let wu = WorkunitRow::from_template(&p.apps[0].cfg.workunit, 0);
            let wuid = p.db.insert_workunit(Actor::WorkGenerator, wu);
            let r = ResultRow::new(wuid, 0, 0, 0, 0, ServerState::Unsent);
            let rid = p.db.insert_result(Actor::Transitioner, r);
            p.feeder.fill(&mut p.db, slot, rid);
        }
        p
    }

    /// A 1 GFLOPS-per-CPU Linux host with `ncpus` CPUs and `ngpus` NVIDIA GPUs of
    /// 100 GFLOPS each, always on.
    fn host(p: &mut Project, ncpus: i32, ngpus: u32) -> HostId {
        let id = p.db.hosts.next_id();
        let coprocs: Box<[Coproc]> = if ngpus == 0 {
            Box::default()
        } else {
            Box::new([Coproc {
                kind: ProcType::Nvidia,
                count: ngpus,
                peak_flops: 1e11,
            }])
        };
        p.db.hosts.insert(HostRow {
            id,
            userid: id.0,
            p_ncpus: ncpus,
            p_fpops: 1e9,
            m_nbytes: 1e10,
            d_free: 1e12,
            on_frac: 1.0,
            active_frac: 1.0,
            gpu_active_frac: 1.0,
            coprocs,
            names: HostNames::shared("Linux", "GenuineIntel", ""),
            ..Default::default()
        });
        id
    }

    /// One RPC asking for `cpu` CPU seconds and `gpu` NVIDIA seconds.
    fn rpc(p: &mut Project, hostid: HostId, cpu: f64, gpu: f64) -> Reply {
        let mut req = Request {
            hostid,
            ..Request::default()
        };
        req.work.req_secs = cpu;
        req.work.gpu_req_secs[1] = gpu;
        let mut reply = Reply::default();
        process_request(p, NOW, &req, &mut reply);
        reply
    }

    fn any(ncpus: i32) -> Want {
        Want {
            appid: 1,
            proc_type: None,
            check_quota: true,
            committed: 0,
            ncpus,
        }
    }

    #[test]
    fn an_app_that_lists_no_version_has_one_plain_cpu_version() {
        let p = project(Vec::new(), 0);
        assert_eq!(p.app_versions.len(), 1);
        let v = &p.app_versions[0];
        assert_eq!((v.id, v.proc_type, v.avg_ncpus), (1, ProcType::Cpu, 1.0));
        assert_eq!(v.platform, None);
    }

    #[test]
    fn the_version_of_highest_projected_flops_wins() {
        let mut p = project(vec![AppVersionConfig::default(), gpu_version(1.0)], 0);
        let (gpu_host, cpu_host) = (host(&mut p, 4, 1), host(&mut p, 4, 0));
        let b = get_app_version(&p, gpu_host, any(4)).expect("a version");
        // 0.5 CPU × 1 GFLOPS + 1 GPU × 100 GFLOPS.
        assert_eq!((b.av, b.proc_type), (2, ProcType::Nvidia));
        assert_eq!((b.peak_flops, b.projected_flops), (1.005e11, 1.005e11));
        assert_eq!((b.avg_ncpus, b.gpu_usage), (0.5, 1.0));
        // The host without a GPU never gets the GPU version.
        let b = get_app_version(&p, cpu_host, any(4)).expect("a version");
        assert_eq!((b.av, b.peak_flops), (1, 1e9));
        // A plan class that makes the GPU slower than one CPU loses to the CPU.
        p.app_versions[1].flops_scale = 0.001;
        let b = get_app_version(&p, gpu_host, any(4)).expect("a version");
        assert_eq!(b.av, 1);
        // A wrong estimate is what the server believes.
        p.app_versions[1].flops_estimate_error = 10.0;
        p.app_versions[1].flops_scale = 1.0;
        let b = get_app_version(&p, gpu_host, any(4)).expect("a version");
        assert_eq!((b.av, b.peak_flops), (2, 1.005e12));
    }

    #[test]
    fn statistics_replace_the_peak_as_in_boinc() {
        let mut p = project(vec![AppVersionConfig::default(), gpu_version(1.0)], 0);
        let h = host(&mut p, 4, 1);
        // More than 10 elapsed-time samples of the CPU version on this host: it is
        // projected at 1/et.avg and now beats the GPU version.
        let mut hav = HavRow {
            app_version_id: 1,
            max_jobs_per_day: 500,
            ..Default::default()
        };
        hav.et.avg = Average { n: 11, avg: 1e-12 };
        p.db.host_mut(h).havs.push(hav);
        let b = get_app_version(&p, h, any(4)).expect("a version");
        assert_eq!((b.av, b.projected_flops, b.peak_flops), (1, 1e12, 1e9));
    }

    #[test]
    fn platform_and_committed_version_restrict_the_choice() {
        let windows = AppVersionConfig {
            platform: "windows_x86_64".into(),
            flops_scale: 2.0,
            ..Default::default()
        };
        let mut p = project(vec![AppVersionConfig::default(), windows], 0);
        let h = host(&mut p, 1, 0);
        assert_eq!(get_app_version(&p, h, any(1)).map(|b| b.av), Some(1));
        Arc::make_mut(&mut p.db.host_mut(h).names).os_name = "Microsoft Windows".into();
        assert_eq!(get_app_version(&p, h, any(1)).map(|b| b.av), Some(2));
        let committed = Want {
            committed: 1,
            ..any(1)
        };
        assert_eq!(get_app_version(&p, h, committed).map(|b| b.av), Some(1));
    }

    #[test]
    fn requests_are_filled_gpu_first_and_decremented_per_resource() {
        let mut p = project(vec![AppVersionConfig::default(), gpu_version(1.0)], 20);
        let h = host(&mut p, 4, 1);
        // GPU: 3.6e12 / 1.005e11 = 35.8 s a job, so 100 s take three jobs; CPU:
        // 3600 s a job, so 7200 s take two.
        let reply = rpc(&mut p, h, 7200.0, 100.0);
        let sent: Vec<(u32, ProcType)> = reply
            .jobs
            .iter()
            .map(|j| (j.app_version_id, j.proc_type))
            .collect();
        let (g, c) = ((2, ProcType::Nvidia), (1, ProcType::Cpu));
        assert_eq!(sent, [g, g, g, c, c]);
        for j in &reply.jobs {
            let r = p.db.result(j.result_id);
            assert_eq!(r.app_version_id, j.app_version_id);
            let peak = if j.proc_type == ProcType::Cpu {
                1e9
            } else {
                1.005e11
            };
            assert_eq!((r.flops_estimate, j.flops), (peak, peak));
        }
        // One HAV per (host, version), counting the jobs sent with it.
        let havs: Vec<(u32, i32)> =
            p.db.host(h)
                .havs
                .iter()
                .map(|h| (h.app_version_id, h.n_jobs_today))
                .collect();
        assert_eq!(havs, [(1, 2), (2, 3)]);
        // The CPU queue grew by 3600 s / 4 CPUs per CPU job; GPU jobs are not in it.
        assert_eq!(p.db.host(h).estimated_delay, 1800.0);
    }

    #[test]
    fn a_host_without_a_gpu_gets_only_cpu_jobs() {
        let mut p = project(vec![AppVersionConfig::default(), gpu_version(1.0)], 20);
        let h = host(&mut p, 4, 0);
        let reply = rpc(&mut p, h, 0.0, 1e6);
        assert!(reply.jobs.is_empty() && reply.no_work);
        let reply = rpc(&mut p, h, 3600.0, 1e6);
        let sent: Vec<u32> = reply.jobs.iter().map(|j| j.app_version_id).collect();
        assert_eq!(sent, [1]);
    }

    #[test]
    fn multi_threaded_jobs_count_their_cpus_in_the_request() {
        let mt = AppVersionConfig {
            plan_class: "mt".into(),
            avg_ncpus: 2.0,
            ..Default::default()
        };
        let mut p = project(vec![mt], 20);
        let h = host(&mut p, 4, 0);
        // 2 CPUs × 1 GFLOPS: 1800 s a job, 3600 CPU seconds of the request.
        let reply = rpc(&mut p, h, 7200.0, 0.0);
        assert_eq!(reply.jobs.len(), 2);
        assert!(
            reply
                .jobs
                .iter()
                .all(|j| j.avg_ncpus == 2.0 && j.flops == 2e9)
        );
        // The queue grows by 1800 s × 2 CPUs / 4 CPUs per job.
        assert_eq!(p.db.host(h).estimated_delay, 1800.0);
        // A one-CPU host runs the version on its one CPU.
        let one = host(&mut p, 1, 0);
        let reply = rpc(&mut p, one, 3600.0, 0.0);
        assert_eq!(reply.jobs.len(), 1);
        assert_eq!((reply.jobs[0].avg_ncpus, reply.jobs[0].flops), (1.0, 1e9));
    }

    #[test]
    fn daily_quota_is_per_version_and_scaled_by_gpu_multiplier() {
        for (multiplier, gpu_jobs) in [(3, 1), (1, 0)] {
            let mut p = project(vec![AppVersionConfig::default(), gpu_version(1.0)], 20);
            p.cfg.config.daily_result_quota = 2;
            p.cfg.config.gpu_multiplier = multiplier;
            let h = host(&mut p, 4, 2);
            let row = p.db.host_mut(h);
            row.rpc_time = NOW - 1; // the same day: no reset
            // CPU: 8 of 2 × 4 CPUs used; GPU: 11 of 2 × 2 GPUs × multiplier.
            for (av, n) in [(1, 8), (2, 11)] {
                row.havs.push(HavRow {
                    app_version_id: av,
                    max_jobs_per_day: 2,
                    n_jobs_today: n,
                    ..Default::default()
                });
            }
            let reply = rpc(&mut p, h, 1e6, 1e6);
            let sent: Vec<u32> = reply.jobs.iter().map(|j| j.app_version_id).collect();
            assert_eq!(sent, vec![2; gpu_jobs], "gpu_multiplier = {multiplier}");
            assert_eq!(
                p.db.host(h).hav(2).map(|h| h.n_jobs_today),
                Some(11 + gpu_jobs as i32)
            );
        }
    }
}
