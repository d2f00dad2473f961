//! Work fetch: which project to ask, and for how much (`client/work_fetch.cpp`:
//! `setup`, `choose_project`, `piggyback_work_request`, `set_request`, `compute_shares`,
//! `handle_reply`, `set_initial_work_request`; spec client §2.6, §2.7), per
//! processor type: a project is chosen when a resource it may fetch for is below
//! `work_buf_min()`, and its request then asks its shortfall of each resource for
//! which no better-ranked project could fetch (the `found_project` rule); a
//! piggy-backed request decides each resource on its own. A request that gets no
//! jobs of a resource backs that resource off and marks it `sched_req_no_work`.
//! GPU exclusion, max-concurrent, "wacky DCF", anonymous-platform and upload rules
//! do not arise.

use super::backoff::{clear_resource_backoff, clear_rsc_backoff, resource_backoff, rsc_backoff};
use super::buf::SmallBuf;
use super::rec::project_priority_init;
use super::rr_sim::{RrCache, RrOut};
use crate::client::config::{ClientConfig, Policy};
use crate::client::host::{ClientHost, ProjectState, RpcReason, TransferFlag, WorkRequest};
use crate::engine::time::SECONDS_PER_DAY;
use crate::server::resource::{CPU, N_RSC, ProcType, coproc_of};

/// `WF_MAX_RUNNABLE_JOBS` (§2.1).
pub(crate) const WF_MAX_RUNNABLE_JOBS: u32 = 1000;
/// `WF_EST_FETCH_TIME` (§2.1).
pub(crate) const WF_EST_FETCH_TIME: f64 = 180.0;

/// `PROJECT_REASON_*` that can arise in the simulator, in upstream precedence.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum ProjectReason {
    #[default]
    None,
    MasterUrlFetchPending,
    /// A download of the project is waiting for its retry time, or its downloads
    /// are backed off (`PROJECT_REASON_DOWNLOAD_STALLED`, spec client §8.4).
    DownloadStalled,
    /// More results uploading than twice the host's processors
    /// (`PROJECT_REASON_TOO_MANY_UPLOADS`, §8.4).
    TooManyUploads,
    TooManyRunnable,
    MinRpcTime,
}

/// `RSC_REASON_*` of the CPU that can arise in the simulator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum RscReason {
    #[default]
    None,
    /// The project has no app version for the type (`no_rsc_apps`).
    NoApps,
    ZeroShare,
    BackedOff,
}

/// Per-project results of `setup()`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WfProject {
    pub reason: ProjectReason,
    pub rsc: RscReason,
    /// `fetchable_share` (0 for projects with a reason, as upstream leaves it).
    pub share: f64,
}

/// `setup()`: RR simulation, reasons, shares, priorities with the queued-work
/// penalty, and the priority order.
pub(crate) struct Setup {
    pub rr: RrOut,
    /// The simulation of each GPU type the host has, by processor type.
    pub gpu: [Option<RrOut>; N_RSC],
    pub proj: SmallBuf<WfProject, 16>,
    /// Project indices by decreasing `sched_priority`, ties in list order (upstream
    /// uses an unstable `std::sort`; spec §6 asks for ties to the earlier project).
    pub sorted: SmallBuf<u16, 16>,
}

/// `can_request_work()`: the participants of `project_priority_init(true)`.
pub(crate) fn can_request_work(p: &ProjectState, now: f64) -> bool {
    !p.master_url_fetch_pending && p.min_rpc_time <= now
}

/// `compute_project_reason` (§2.6 step 2).
pub(crate) fn project_reason(p: &ProjectState, now: f64) -> ProjectReason {
    if p.master_url_fetch_pending {
        ProjectReason::MasterUrlFetchPending
    } else if p.modern.transfer[TransferFlag::DownloadStalled] {
        ProjectReason::DownloadStalled
    } else if p.modern.transfer[TransferFlag::TooManyUploads] {
        ProjectReason::TooManyUploads
    } else if p.modern.n_runnable_jobs > WF_MAX_RUNNABLE_JOBS {
        ProjectReason::TooManyRunnable
    } else if p.min_rpc_time > now {
        ProjectReason::MinRpcTime
    } else {
        ProjectReason::None
    }
}

/// The `ZERO_SHARE` threshold: `min(work_buf_min_days·86400, WF_EST_FETCH_TIME)`, of
/// the host's `work_buf_min_days` ([`ClientHost::work_buf_min_days`]).
pub(crate) fn zero_share_threshold(work_buf_min_days: f64) -> f64 {
    (work_buf_min_days * SECONDS_PER_DAY).min(WF_EST_FETCH_TIME)
}

/// `compute_rsc_project_reason` for processor type `rsc`, whose simulation is `rr`
/// (§2.6 step 2).
pub(crate) fn rsc_reason(
    p: &ProjectState,
    rr: &RrOut,
    rsc: ProcType,
    now: f64,
    work_buf_min_days: f64,
) -> RscReason {
    if p.modern.no_rsc_apps[rsc.index()] {
        RscReason::NoApps
    } else if p.resource_share == 0.0 && rr.saturated_time > zero_share_threshold(work_buf_min_days)
    {
        RscReason::ZeroShare
    } else if p.modern.backoff_time[rsc.index()] > now {
        RscReason::BackedOff
    } else {
        RscReason::None
    }
}

pub fn setup(host: &mut ClientHost, now: f64, cfg: &ClientConfig, cache: &mut RrCache) -> Setup {
    let rr = cache.get(host, now, cfg);
    let mut gpu = [None; N_RSC];
    for t in &ProcType::ALL[1..] {
        if coproc_of(&host.coprocs, *t).is_some() {
            gpu[t.index()] = Some(cache.get_rsc(host, now, cfg, *t));
        }
    }
    let np = host.projects.len();
    let n = host.usable_cpus(cfg) as f64;
    let mut proj: SmallBuf<WfProject, 16> = SmallBuf::filled(np, WfProject::default());
    let min_days = host.work_buf_min_days(cfg);
    for (w, p) in proj.iter_mut().zip(&host.projects) {
        w.reason = project_reason(p, now);
        w.rsc = rsc_reason(p, &rr, ProcType::Cpu, now, min_days);
    }
    // compute_shares.
    let total: f64 = proj
        .iter()
        .zip(&host.projects)
        .filter(|(w, _)| w.reason == ProjectReason::None && w.rsc == RscReason::None)
        .map(|(_, p)| p.resource_share)
        .sum();
    for (w, p) in proj.iter_mut().zip(&host.projects) {
        if w.reason == ProjectReason::None && w.rsc == RscReason::None {
            w.share = if total > 0.0 {
                p.resource_share / total
            } else {
                1.0
            };
        }
    }
    project_priority_init(host, |p| can_request_work(p, now), n);
    // Queued-work penalty: FLOPs queued over the FLOPs of a full buffer.
    let max_queued_flops = host.work_buf_total(cfg) * host.p_fpops * n;
    for k in 0..host.jobs.len() {
        let j = &host.jobs[k];
        if j.unfinished() {
            let left = host.est_flops_left(j, Policy::ModernRec);
            host.projects[j.project as usize].modern.sched_priority -= left / max_queued_flops;
        }
    }
    // Stable insertion sort by decreasing priority.
    let mut sorted: SmallBuf<u16, 16> = SmallBuf::filled(np, 0);
    for i in 0..np {
        let prio = host.projects[i].modern.sched_priority;
        let mut k = i;
        while k > 0 && host.projects[sorted[k - 1] as usize].modern.sched_priority < prio {
            sorted[k] = sorted[k - 1];
            k -= 1;
        }
        sorted[k] = i as u16;
    }
    Setup {
        rr,
        gpu,
        proj,
        sorted,
    }
}

/// `RSC_WORK_FETCH::set_request(p)` for GPU type `t` (§2.6 step 5), added to `req`:
/// the GPU's shortfall and its idle instances (a backup project: one job, only if an
/// instance is idle). Per-project GPU usage is not counted, so the instance request
/// is the idle instances only. The caller has checked the project may ask for `t`.
/// Returns whether it asks for any seconds.
fn set_gpu_request(
    host: &ClientHost,
    pi: usize,
    rr: &RrOut,
    t: ProcType,
    req: &mut WorkRequest,
) -> bool {
    let p = &host.projects[pi];
    let (mut secs, inst) = if p.resource_share == 0.0 {
        if rr.nidle_now > 0.0 {
            (1.0, 1.0)
        } else {
            (0.0, 0.0)
        }
    } else {
        (rr.shortfall.max(0.0), rr.nidle_now)
    };
    if inst > 0.0 && secs == 0.0 {
        secs = 1.0;
    }
    if secs > 0.0 {
        req.gpu_req_secs[t.index()] = secs;
        req.gpu_req_instances[t.index()] = inst;
    }
    secs > 0.0
}

/// The simulation of processor type `k` (by BOINC's number), if the host has it.
fn rr_of(s: &Setup, k: usize) -> Option<&RrOut> {
    if k == CPU {
        Some(&s.rr)
    } else {
        s.gpu[k].as_ref()
    }
}

/// `rsc_project_reason` of project `pi` for processor type `k`, which the host has.
fn rsc_reason_of(
    host: &ClientHost,
    s: &Setup,
    pi: usize,
    k: usize,
    now: f64,
    cfg: &ClientConfig,
) -> RscReason {
    match s.gpu[k].as_ref() {
        Some(rr) if k != CPU => rsc_reason(
            &host.projects[pi],
            rr,
            ProcType::ALL[k],
            now,
            host.work_buf_min_days(cfg),
        ),
        _ => s.proj[pi].rsc,
    }
}

/// `RSC_WORK_FETCH::set_request(p)` for processor type `k`, into `req`. Returns
/// whether it asks for any seconds (`req_secs > 0`).
fn set_rsc_request(
    host: &ClientHost,
    pi: usize,
    s: &Setup,
    k: usize,
    cfg: &ClientConfig,
    req: &mut WorkRequest,
) -> bool {
    if k == CPU {
        let (secs, inst) = set_request(host, pi, s, cfg);
        if secs > 0.0 {
            let r = request(s, secs, inst);
            req.req_secs = r.req_secs;
            req.req_instances = r.req_instances;
            req.estimated_delay = r.estimated_delay;
        }
        secs > 0.0
    } else {
        match s.gpu[k].as_ref() {
            Some(rr) => set_gpu_request(host, pi, rr, ProcType::ALL[k], req),
            None => false,
        }
    }
}

/// Whether some GPU type's simulation is saturated for less than `th` seconds.
fn gpu_below(s: &Setup, th: f64) -> bool {
    s.gpu.iter().flatten().any(|rr| rr.saturated_time < th)
}

/// `set_request(p)` for the CPU (§2.6 step 5): `(req_secs, req_instances)`.
pub(crate) fn set_request(
    host: &ClientHost,
    pi: usize,
    s: &Setup,
    cfg: &ClientConfig,
) -> (f64, f64) {
    let p = &host.projects[pi];
    let rr = &s.rr;
    if p.resource_share == 0.0 {
        // Backup project: one job, and only if an instance is idle now.
        return if rr.nidle_now > 0.0 {
            (1.0, 1.0)
        } else {
            (0.0, 0.0)
        };
    }
    let n = host.usable_cpus(cfg) as f64;
    let mut req_secs = if rr.shortfall > 0.0 {
        rr.shortfall
    } else {
        0.0
    };
    let instance_share = (n * s.proj[pi].share).min(n) - p.modern.nused_total;
    let req_instances = rr.nidle_now.max(instance_share);
    if req_instances > 0.0 && req_secs == 0.0 {
        req_secs = 1.0;
    }
    (req_secs, req_instances)
}

fn request(s: &Setup, secs: f64, inst: f64) -> WorkRequest {
    WorkRequest {
        req_secs: secs,
        req_instances: inst,
        estimated_delay: if secs > 0.0 { s.rr.busy_time } else { 0.0 },
        ..Default::default()
    }
}

/// `WORK_FETCH::choose_project()` (spec client §2.6 steps 2–6), per processor type.
/// Projects are scanned by decreasing priority; a project with a `project_reason`
/// is skipped. For each type in BOINC's order (CPU first) that the project may ask
/// for (no `rsc_project_reason`), the first such project is that type's
/// `found_project`; the first type whose buffer is below `work_buf_min()`
/// (hysteresis) triggers the project. A triggered project then asks for the
/// triggering type and for every other type whose buffer is below
/// `work_buf_total()`, whose reason is none or only a backoff ("request even if
/// backed off"), and for which no better-ranked project is the `found_project`: a
/// type a better project could fetch is left to it (the `found_project` rule of
/// `choose_project`, `client/work_fetch.cpp`). If nothing is asked, the scan goes
/// on to the next project.
pub(crate) fn choose_project(
    host: &mut ClientHost,
    now: f64,
    cfg: &ClientConfig,
    cache: &mut RrCache,
) -> Option<(usize, WorkRequest)> {
    let s = setup(host, now, cfg, cache);
    let min = host.work_buf_min(cfg);
    let total = host.work_buf_total(cfg);
    if s.rr.saturated_time >= min && !gpu_below(&s, min) {
        return None; // no type can trigger: the scan would find nothing
    }
    let mut found_project: [Option<usize>; N_RSC] = [None; N_RSC];
    for &pi in s.sorted.iter() {
        let pi = pi as usize;
        if s.proj[pi].reason != ProjectReason::None {
            continue;
        }
        let mut trigger = None;
        for (k, found) in found_project.iter_mut().enumerate() {
            let Some(rr) = rr_of(&s, k) else {
                continue;
            };
            if rsc_reason_of(host, &s, pi, k, now, cfg) != RscReason::None {
                continue;
            }
            found.get_or_insert(pi);
            if rr.saturated_time < min {
                trigger = Some(k);
                break;
            }
        }
        let Some(tk) = trigger else {
            continue;
        };
        let mut req = WorkRequest::default();
        let mut any = false;
        for (k, found) in found_project.iter().enumerate() {
            let Some(rr) = rr_of(&s, k) else {
                continue;
            };
            if k != tk
                && (found.is_some_and(|f| f != pi)
                    || rr.saturated_time >= total
                    || !matches!(
                        rsc_reason_of(host, &s, pi, k, now, cfg),
                        RscReason::None | RscReason::BackedOff
                    ))
            {
                continue;
            }
            any |= set_rsc_request(host, pi, &s, k, cfg, &mut req);
        }
        if any {
            return Some((pi, req));
        }
    }
    None
}

/// `WORK_FETCH::piggyback_work_request(p)` (spec client §2.6 "Piggyback"): the
/// request added to an RPC made for another reason, decided for each processor type
/// separately. A type is asked for when the project's reason for it is none or only
/// a backoff, its buffer is below `work_buf_total()` (no hysteresis here), and no
/// strictly better-ranked project without a `project_reason` could fetch it; a
/// better project whose last request got no jobs of that type
/// (`sched_req_no_work[i]`) does not count. So a CPU that a better project could
/// feed does not stop the GPU from being topped up on a report RPC.
pub(crate) fn piggyback(
    host: &mut ClientHost,
    pi: usize,
    now: f64,
    cfg: &ClientConfig,
    cache: &mut RrCache,
) -> WorkRequest {
    let s = setup(host, now, cfg, cache);
    let mut req = WorkRequest::default();
    if !matches!(
        s.proj[pi].reason,
        ProjectReason::None | ProjectReason::MinRpcTime
    ) {
        return req;
    }
    let total = host.work_buf_total(cfg);
    let prio = host.projects[pi].modern.sched_priority;
    for k in 0..N_RSC {
        let Some(rr) = rr_of(&s, k) else {
            continue;
        };
        if !matches!(
            rsc_reason_of(host, &s, pi, k, now, cfg),
            RscReason::None | RscReason::BackedOff
        ) || rr.saturated_time >= total
        {
            continue;
        }
        let better = s
            .sorted
            .iter()
            .map(|&p2| p2 as usize)
            .take_while(|&p2| p2 != pi)
            .any(|p2| {
                let q = &host.projects[p2];
                q.modern.sched_priority != prio
                    && !q.modern.sched_req_no_work[k]
                    && s.proj[p2].reason == ProjectReason::None
                    && rsc_reason_of(host, &s, p2, k, now, cfg) == RscReason::None
            });
        if !better {
            set_rsc_request(host, pi, &s, k, cfg, &mut req);
        }
    }
    req
}

/// `set_initial_work_request` (RPC_REASON_INIT, §2.6): one second of work, to get one
/// job, since there are no runtime estimates yet.
pub(crate) fn initial_request(p: &ProjectState) -> WorkRequest {
    WorkRequest {
        req_secs: if p.resource_share > 0.0 { 1.0 } else { 0.0 },
        req_instances: 0.0,
        estimated_delay: 0.0,
        ..Default::default()
    }
}

/// `handle_reply` (§2.7) and `sched_req_no_work`, after a successful reply. Must run
/// before `sched_rpc_pending` is cleared.
pub(crate) fn handle_reply(
    host: &mut ClientHost,
    pi: usize,
    now: f64,
    cfg: &ClientConfig,
    req: &WorkRequest,
    new_jobs: u32,
) {
    // The GPU jobs of the reply, by type: the jobs of the project received now.
    let mut got = [0u32; N_RSC];
    for j in &host.jobs {
        let u = host.usage(j);
        if j.project as usize == pi && j.received_time as f64 == now && u.uses_gpu() {
            got[u.proc_type.index()] += 1;
        }
    }
    let gpu_jobs: u32 = got.iter().sum();
    let cpu_jobs = new_jobs.saturating_sub(gpu_jobs);
    let p = &mut host.projects[pi];
    // "Not currently backed off": upstream `backoff_time < now`; `<=` so that a
    // never-set backoff (0) counts at simulated time 0 too.
    if req.req_secs > 0.0
        && cpu_jobs == 0
        && p.modern.backoff_time[CPU] <= now
        && matches!(
            p.sched_rpc_pending,
            RpcReason::ResultsDue | RpcReason::NeedWork
        )
    {
        resource_backoff(host, pi, now, cfg);
    }
    let automatic = matches!(
        host.projects[pi].sched_rpc_pending,
        RpcReason::ResultsDue | RpcReason::NeedWork
    );
    for t in &ProcType::ALL[1..] {
        let k = t.index();
        if got[k] > 0 {
            clear_rsc_backoff(&mut host.projects[pi].modern, *t);
        } else if req.gpu_req_secs[k] > 0.0
            && host.projects[pi].modern.backoff_time[k] <= now
            && automatic
        {
            rsc_backoff(host, pi, *t, now, cfg);
        }
    }
    let p = &mut host.projects[pi];
    if cpu_jobs > 0 {
        clear_resource_backoff(&mut p.modern);
    }
    // `sched_req_no_work[i]` (`CLIENT_STATE::handle_scheduler_reply`,
    // `client/cs_scheduler.cpp`): cleared for each type the reply brought jobs of,
    // set for each other type the request asked for, left alone otherwise.
    got[CPU] = cpu_jobs;
    for (k, &n) in got.iter().enumerate() {
        let asked = if k == CPU {
            req.req_secs > 0.0 || req.req_instances > 0.0
        } else {
            req.gpu_req_secs[k] > 0.0 || req.gpu_req_instances[k] > 0.0
        };
        if n > 0 {
            p.modern.sched_req_no_work.set(k, false);
        } else if asked {
            p.modern.sched_req_no_work.set(k, true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::modern::test_util::*;
    use crate::server::types::HostId;

    #[test]
    fn empty_two_cpu_host_asks_whole_shortfall_and_two_instances() {
        let (mut h, g) = host_and_ctx(2, &[100.0], |_| {});
        h.projects[0].hostid = HostId(1);
        let (pi, req) = choose_project(&mut h, 0.0, &g.cfg, &mut RrCache::default()).unwrap();
        assert_eq!(pi, 0);
        assert_eq!(req.req_secs, 2.0 * 51_840.0);
        assert_eq!(req.req_instances, 2.0);
        assert_eq!(req.estimated_delay, 0.0);
    }

    #[test]
    fn hysteresis_and_priority_order() {
        let (mut h, g) = host_and_ctx(1, &[100.0, 100.0], |_| {});
        h.projects[1].modern.rec = 0.0;
        h.projects[0].modern.rec = 5.0;
        // 9000 s queued ≥ work_buf_min 8640: no fetch.
        add_job(&mut h, 0, 9000.0, 10_000_000);
        assert!(choose_project(&mut h, 0.0, &g.cfg, &mut RrCache::default()).is_none());
        // 8000 s: fetch from the lower-REC project B for the whole shortfall.
        h.jobs[0].flops_left = 8000e9;
        let (pi, req) = choose_project(&mut h, 0.0, &g.cfg, &mut RrCache::default()).unwrap();
        assert_eq!(pi, 1);
        assert_eq!(req.req_secs, 51_840.0 - 8000.0);
        // Backed-off B is skipped; MIN_RPC_TIME A too.
        h.projects[1].modern.backoff_time[CPU] = 10.0;
        let (pi, _) = choose_project(&mut h, 0.0, &g.cfg, &mut RrCache::default()).unwrap();
        assert_eq!(pi, 0);
        h.projects[0].min_rpc_time = 10.0;
        assert!(choose_project(&mut h, 0.0, &g.cfg, &mut RrCache::default()).is_none());
        // ...but a report RPC to B may piggyback a request (BACKED_OFF is allowed).
        let req = piggyback(&mut h, 1, 0.0, &g.cfg, &mut RrCache::default());
        assert_eq!(req.req_secs, 51_840.0 - 8000.0);
    }

    #[test]
    fn piggyback_defers_to_a_strictly_better_project() {
        let (mut h, g) = host_and_ctx(1, &[100.0, 100.0], |_| {});
        h.projects[0].modern.rec = 5.0;
        let req = piggyback(&mut h, 0, 0.0, &g.cfg, &mut RrCache::default());
        assert_eq!(req, WorkRequest::default());
        let req = piggyback(&mut h, 1, 0.0, &g.cfg, &mut RrCache::default());
        assert_eq!(req.req_secs, 51_840.0);
        // B asked and got nothing: A may now piggyback.
        h.projects[1].modern.sched_req_no_work.set(CPU, true);
        let req = piggyback(&mut h, 0, 0.0, &g.cfg, &mut RrCache::default());
        assert_eq!(req.req_secs, 51_840.0);
    }

    #[test]
    fn backup_project_asks_one_job_only_when_idle() {
        let (mut h, g) = host_and_ctx(1, &[0.0], |_| {});
        let (_, req) = choose_project(&mut h, 0.0, &g.cfg, &mut RrCache::default()).unwrap();
        assert_eq!((req.req_secs, req.req_instances), (1.0, 1.0));
        add_job(&mut h, 0, 100.0, 10_000_000);
        assert!(choose_project(&mut h, 0.0, &g.cfg, &mut RrCache::default()).is_none());
    }

    /// A host with 2 CPUs and one GPU, its CPU queue full: the GPU triggers the
    /// fetch, the request asks the GPU's whole window and its idle instance; a reply
    /// with no GPU jobs backs off the GPU alone, and the backed-off GPU is not asked.
    #[test]
    fn gpu_shortfall_triggers_a_per_resource_request_and_backoff() {
        let (mut h, mut g) = host_and_ctx(2, &[100.0], |_| {});
        g.cfg.pin_u = Some(0.5);
        give_gpus(&mut h, 1, 1e12);
        h.projects[0].hostid = HostId(1);
        for _ in 0..2 {
            add_job(&mut h, 0, 60_000.0, 10_000_000);
        }
        let (pi, req) = choose_project(&mut h, 0.0, &g.cfg, &mut RrCache::default()).unwrap();
        assert_eq!(pi, 0);
        assert_eq!(req.req_secs, 0.0, "the CPUs are busy past the window");
        let nv = ProcType::Nvidia.index();
        assert_eq!(req.gpu_req_secs[nv], 51_840.0);
        assert_eq!(req.gpu_req_instances[nv], 1.0);
        h.projects[0].sched_rpc_pending = RpcReason::NeedWork;
        handle_reply(&mut h, 0, 0.0, &g.cfg, &req, 0);
        assert_eq!(h.projects[0].modern.backoff_time[nv], 600.0);
        assert_eq!(h.projects[0].modern.backoff_time[CPU], 0.0);
        assert!(choose_project(&mut h, 1.0, &g.cfg, &mut RrCache::default()).is_none());
        // A GPU job queued for the window: the GPU is saturated, nothing to ask.
        h.projects[0].modern.backoff_time[nv] = 0.0;
        add_usage_job(&mut h, 0, 60_000.0, 1e11, 0.2, 1.0);
        assert!(choose_project(&mut h, 1.0, &g.cfg, &mut RrCache::default()).is_none());
    }

    /// One CPU and one GPU; A has no GPU version and ranks first, B has both. The CPU
    /// holds 20000 s of A's work (above `work_buf_min` 8640, below `work_buf_total`
    /// 51840), the GPU nothing.
    fn cpu_project_and_gpu_project() -> (ClientHost, crate::client::host::GroupCtx) {
        let (mut h, g) = host_and_ctx(1, &[100.0, 100.0], |_| {});
        give_gpus(&mut h, 1, 1e12);
        h.projects[0]
            .modern
            .no_rsc_apps
            .set(ProcType::Nvidia.index(), true);
        h.projects[1].modern.rec = 5.0;
        add_job(&mut h, 0, 20_000.0, 10_000_000);
        (h, g)
    }

    /// `choose_project`'s `found_project` rule (spec client §2.6 steps 3–4): B is
    /// chosen for its empty GPU and asks the GPU's whole window and instance, but not
    /// the CPU's shortfall 51840 − 20000 = 31840 s, which A ranks first for. With A
    /// backed off for the CPU, B is the CPU's first project and asks for it too.
    #[test]
    fn gpu_triggered_fetch_leaves_the_cpu_to_a_better_project() {
        let (mut h, g) = cpu_project_and_gpu_project();
        let s = setup(&mut h, 0.0, &g.cfg, &mut RrCache::default());
        assert_eq!(&s.sorted[..], &[0, 1], "A ranks first");
        let nv = ProcType::Nvidia.index();
        let (pi, req) = choose_project(&mut h, 0.0, &g.cfg, &mut RrCache::default()).unwrap();
        assert_eq!(pi, 1);
        assert_eq!((req.req_secs, req.req_instances), (0.0, 0.0));
        assert_eq!(req.estimated_delay, 0.0);
        assert_eq!(req.gpu_req_secs[nv], 51_840.0);
        assert_eq!(req.gpu_req_instances[nv], 1.0);
        h.projects[0].modern.backoff_time[CPU] = 10.0;
        let (pi, req) = choose_project(&mut h, 0.0, &g.cfg, &mut RrCache::default()).unwrap();
        assert_eq!(pi, 1);
        // B's fetchable share is now 1: one CPU instance (`n·share − nused_total`).
        assert_eq!((req.req_secs, req.req_instances), (31_840.0, 1.0));
        assert_eq!(req.estimated_delay, 0.0); // busy time: no projected miss
        assert_eq!(req.gpu_req_secs[nv], 51_840.0);
    }

    /// A type triggers only through a project that may fetch it: with the GPU backed
    /// off for B, nothing is below the minimum that anyone may ask for, so no fetch;
    /// a backed-off type still rides along with a fetch another type triggers
    /// ("request even if backed off").
    #[test]
    fn backed_off_type_rides_along_but_never_triggers() {
        let (mut h, g) = cpu_project_and_gpu_project();
        let nv = ProcType::Nvidia.index();
        h.projects[1].modern.backoff_time[nv] = 10.0;
        assert!(choose_project(&mut h, 0.0, &g.cfg, &mut RrCache::default()).is_none());
        // A's CPU work down to 8000 s < 8640: A (first) triggers on the CPU and asks
        // 43840 s; B would ride along on the GPU, but A has no GPU version.
        h.jobs[0].flops_left = 8000e9;
        let (pi, req) = choose_project(&mut h, 0.0, &g.cfg, &mut RrCache::default()).unwrap();
        assert_eq!((pi, req.req_secs, req.gpu_req_secs[nv]), (0, 43_840.0, 0.0));
        // With A backed off for the CPU, B triggers on the CPU and its backed-off GPU
        // rides along: 51840 s and one instance.
        h.projects[0].modern.backoff_time[CPU] = 10.0;
        let (pi, req) = choose_project(&mut h, 0.0, &g.cfg, &mut RrCache::default()).unwrap();
        assert_eq!(
            (pi, req.req_secs, req.gpu_req_secs[nv]),
            (1, 43_840.0, 51_840.0)
        );
        assert_eq!(req.gpu_req_instances[nv], 1.0);
    }

    /// `piggyback_work_request` per type (spec client §2.6 "Piggyback"): a report RPC
    /// to B tops up the GPU although A could fetch the CPU; the CPU is asked only once
    /// A's last request got no CPU jobs (`sched_req_no_work[CPU]`). A's own
    /// piggy-backed request asks the CPU alone (no GPU version).
    #[test]
    fn piggyback_decides_each_type_on_its_own() {
        let (mut h, g) = cpu_project_and_gpu_project();
        let nv = ProcType::Nvidia.index();
        let req = piggyback(&mut h, 1, 0.0, &g.cfg, &mut RrCache::default());
        assert_eq!((req.req_secs, req.gpu_req_secs[nv]), (0.0, 51_840.0));
        assert_eq!(req.gpu_req_instances[nv], 1.0);
        h.projects[0].modern.sched_req_no_work.set(nv, true); // another type: no effect
        let req = piggyback(&mut h, 1, 0.0, &g.cfg, &mut RrCache::default());
        assert_eq!(req.req_secs, 0.0);
        h.projects[0].modern.sched_req_no_work.set(CPU, true);
        let req = piggyback(&mut h, 1, 0.0, &g.cfg, &mut RrCache::default());
        assert_eq!((req.req_secs, req.gpu_req_secs[nv]), (31_840.0, 51_840.0));
        let req = piggyback(&mut h, 0, 0.0, &g.cfg, &mut RrCache::default());
        assert_eq!((req.req_secs, req.gpu_req_secs[nv]), (31_840.0, 0.0));
    }

    /// `sched_req_no_work` per type (`handle_scheduler_reply`): set for each type
    /// asked that brought nothing, cleared by jobs of the type, untouched otherwise.
    #[test]
    fn sched_req_no_work_is_kept_per_type() {
        let (mut h, g) = host_and_ctx(1, &[100.0], |_| {});
        give_gpus(&mut h, 1, 1e12);
        let nv = ProcType::Nvidia.index();
        let mut both = WorkRequest {
            req_secs: 100.0,
            ..Default::default()
        };
        both.gpu_req_secs[nv] = 100.0;
        handle_reply(&mut h, 0, 100.0, &g.cfg, &both, 0);
        assert_eq!(
            h.projects[0].modern.sched_req_no_work,
            [true, true, false, false]
        );
        // A GPU-only request that brings one GPU job: the CPU's flag stays.
        add_usage_job(&mut h, 0, 600.0, 1e11, 0.2, 1.0);
        h.jobs[0].received_time = 200;
        let mut gpu = WorkRequest::default();
        gpu.gpu_req_secs[nv] = 100.0;
        handle_reply(&mut h, 0, 200.0, &g.cfg, &gpu, 1);
        assert_eq!(
            h.projects[0].modern.sched_req_no_work,
            [true, false, false, false]
        );
        // A CPU job clears the CPU's.
        add_job(&mut h, 0, 600.0, 10_000_000);
        h.jobs[1].received_time = 300;
        handle_reply(&mut h, 0, 300.0, &g.cfg, &both, 1);
        assert_eq!(
            h.projects[0].modern.sched_req_no_work,
            [false, true, false, false]
        );
    }

    /// Jobs of the GPU type in a reply clear that type's backoff only.
    #[test]
    fn gpu_jobs_clear_the_gpu_backoff() {
        let (mut h, g) = host_and_ctx(1, &[100.0], |_| {});
        give_gpus(&mut h, 1, 1e12);
        let nv = ProcType::Nvidia.index();
        h.projects[0].modern.backoff_time[nv] = 50.0;
        h.projects[0].modern.backoff_interval[nv] = 600.0;
        h.projects[0].modern.backoff_time[CPU] = 70.0;
        add_usage_job(&mut h, 0, 600.0, 1e11, 0.2, 1.0);
        h.jobs[0].received_time = 100;
        let mut req = WorkRequest::default();
        req.gpu_req_secs[nv] = 100.0;
        handle_reply(&mut h, 0, 100.0, &g.cfg, &req, 1);
        assert_eq!(h.projects[0].modern.backoff_time[nv], 0.0);
        assert_eq!(h.projects[0].modern.backoff_interval[nv], 0.0);
        assert_eq!(h.projects[0].modern.backoff_time[CPU], 70.0);
    }

    #[test]
    fn reply_backoff_only_for_automatic_reasons() {
        let (mut h, mut g) = host_and_ctx(1, &[100.0], |_| {});
        g.cfg.pin_u = Some(0.0);
        let req = WorkRequest {
            req_secs: 100.0,
            ..Default::default()
        };
        h.projects[0].sched_rpc_pending = RpcReason::None; // a real-client report RPC
        handle_reply(&mut h, 0, 50.0, &g.cfg, &req, 0);
        assert_eq!(h.projects[0].modern.backoff_interval[CPU], 0.0);
        assert!(h.projects[0].modern.sched_req_no_work[CPU]);
        h.projects[0].sched_rpc_pending = RpcReason::NeedWork;
        handle_reply(&mut h, 0, 50.0, &g.cfg, &req, 0);
        assert_eq!(h.projects[0].modern.backoff_time[CPU], 50.0 + 300.0);
        // Still backed off: a piggy-backed request that gets nothing does not extend it.
        handle_reply(&mut h, 0, 60.0, &g.cfg, &req, 0);
        assert_eq!(h.projects[0].modern.backoff_interval[CPU], 600.0);
        handle_reply(&mut h, 0, 60.0, &g.cfg, &req, 2);
        assert_eq!(h.projects[0].modern.backoff_time[CPU], 0.0);
        assert!(!h.projects[0].modern.sched_req_no_work[CPU]);
    }
}
