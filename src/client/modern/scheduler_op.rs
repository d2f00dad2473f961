//! One round of the RPC poll (`CLIENT_STATE::scheduler_rpc_poll` of
//! `client/cs_scheduler.cpp`, `find_project_with_overdue_results`, and the reply
//! handling of `SCHEDULER_OP::poll` / `handle_scheduler_reply`; spec client §2.8,
//! §2.9, §4.2). An operation takes no simulated time here. The real client starts at
//! most one operation per poll and polls again only [`SCHEDULER_RPC_POLL_PERIOD`]
//! after the last poll that acted (`last_time = now` while an operation runs), so the
//! caller runs one round per wake and the next round no earlier than that.

use super::backoff::{project_rpc_backoff, set_min_rpc_time};
use super::buf::SmallBuf;
use super::rr_sim::RrCache;
use super::work_fetch::{choose_project, handle_reply, initial_request, piggyback};
use crate::client::config::ClientConfig;
use crate::client::host::{
    Answer, ClientHost, GroupCtx, RpcReason, RpcState, RpcStatus, ServerLink, TransferFlag,
    WorkRequest,
};
use crate::engine::Time;
use crate::server::types::HostId;

/// `SCHEDULER_RPC_POLL_PERIOD` (§2.1): seconds between two polls of
/// `scheduler_rpc_poll` that may start an operation.
pub(crate) const SCHEDULER_RPC_POLL_PERIOD: f64 = 5.0;
/// `RESULT_REPORT_IF_AT_LEAST_N` (§2.1).
pub(crate) const RESULT_REPORT_IF_AT_LEAST_N: u32 = 64;
/// `MAX_REPORT_DELAY` (§2.1).
pub(crate) const MAX_REPORT_DELAY: f64 = 3600.0;
/// `REPORT_DEADLINE_CUSHION` (§2.1).
pub(crate) const REPORT_DEADLINE_CUSHION: f64 = 86_400.0;

/// Report if within this of the deadline: `max(REPORT_DEADLINE_CUSHION, work_buf_min())`.
pub(crate) fn report_cushion(host: &ClientHost, cfg: &ClientConfig) -> f64 {
    REPORT_DEADLINE_CUSHION.max(host.work_buf_min(cfg))
}

/// What a round did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Round {
    Idle,
    /// A master fetch or a scheduler RPC happened.
    Operation,
}

/// One poll round at `now`. `gate_open` is the 60-s work-fetch gate as established by
/// the cadence module; it is consumed when the gated part runs.
pub(crate) fn poll_round<S: ServerLink + ?Sized>(
    host: &mut ClientHost,
    now: Time,
    g: &GroupCtx,
    server: &mut S,
    cache: &mut RrCache,
    gate_open: &mut bool,
) -> Result<Round, S::Error> {
    let cfg = &g.cfg;
    let t = now as f64;
    // 2. A pending master fetch (check_master_fetch_start), first in list order.
    if let Some(pi) = host
        .projects
        .iter()
        .position(|p| p.master_url_fetch_pending && p.min_rpc_time <= t)
    {
        master_fetch(host, pi, now, cfg, server);
        return Ok(Round::Operation);
    }
    // 3. The initial RPC of a project never contacted (RPC_REASON_INIT): honours the
    //    backoff, ignores suspension.
    if let Some(pi) = host
        .projects
        .iter()
        .position(|p| p.hostid == HostId(0) && p.min_rpc_time <= t)
    {
        // piggyback_work_request, then set_initial_work_request overrides it.
        let req = initial_request(&host.projects[pi]);
        host.projects[pi].sched_rpc_pending = RpcReason::Init;
        do_rpc(host, pi, now, g, server, cache, req)?;
        return Ok(Round::Operation);
    }
    // 5. The gate: 60 s since the last check, or forced.
    if !(*gate_open || host.modern.must_check_work_fetch) {
        return Ok(Round::Idle);
    }
    *gate_open = false;
    host.modern.must_check_work_fetch = false;
    host.modern.last_work_fetch_check = t;
    // 6. Overdue results.
    if let Some(pi) = project_with_overdue_results(host, t, cfg) {
        let req = piggyback(host, pi, t, cfg, cache);
        // Only the emulator stores RESULTS_DUE in sched_rpc_pending (§2.7 subtlety).
        host.projects[pi].sched_rpc_pending = if cfg.emulator_report_backoff {
            RpcReason::ResultsDue
        } else {
            RpcReason::None
        };
        do_rpc(host, pi, now, g, server, cache, req)?;
        return Ok(Round::Operation);
    }
    // 7. Work fetch, unless computing is suspended.
    if !host.avail.computing() {
        return Ok(Round::Idle);
    }
    if let Some((pi, mut req)) = choose_project(host, t, cfg, cache) {
        // A project uploading a job it started less than WF_UPLOAD_DEFER_INTERVAL
        // ago is asked only for idle instances (spec client §8.4): its report then
        // goes with the next request.
        let p = &host.projects[pi];
        let idle = req.req_instances > 0.0 || req.gpu_req_instances.iter().any(|&x| x > 0.0);
        if p.modern.transfer[TransferFlag::ActivelyUploading]
            && !(p.modern.transfer[TransferFlag::RequestIfIdleAndUploading] && idle)
        {
            host.projects[pi].sched_rpc_pending = RpcReason::None;
            return Ok(Round::Idle);
        }
        if p.modern.transfer[TransferFlag::ActivelyUploading] {
            // `idle_request()`: only the requests for idle instances stay.
            if req.req_instances == 0.0 {
                req.req_secs = 0.0;
            }
            for r in 1..req.gpu_req_secs.len() {
                if req.gpu_req_instances[r] == 0.0 {
                    req.gpu_req_secs[r] = 0.0;
                }
            }
        }
        host.projects[pi].sched_rpc_pending = RpcReason::NeedWork;
        do_rpc(host, pi, now, g, server, cache, req)?;
        return Ok(Round::Operation);
    }
    Ok(Round::Idle)
}

/// `find_project_with_overdue_results` (§2.9 step 6): the project of the first ready
/// result (arrival order) that is due, skipping projects in backoff. Projects are
/// never suspended, "no new tasks", sporadic or report-immediately here, the network
/// is never about to be suspended, and uploads take no time.
pub(crate) fn project_with_overdue_results(
    host: &ClientHost,
    now: f64,
    cfg: &ClientConfig,
) -> Option<usize> {
    let cushion = report_cushion(host, cfg);
    let mut n_ready: SmallBuf<u32, 16> = SmallBuf::filled(host.projects.len(), 0);
    for j in host.jobs.iter().filter(|j| j.ready_to_report()) {
        let pi = j.project as usize;
        // dont_contact: in backoff, or actively uploading (spec client §8.4).
        if host.projects[pi].min_rpc_time > now
            || host.projects[pi].modern.transfer[TransferFlag::ActivelyUploading]
        {
            continue;
        }
        if now > j.report_deadline as f64 - cushion
            || now > j.completed_time as f64 + MAX_REPORT_DELAY
        {
            return Some(pi);
        }
        n_ready[pi] += 1;
        if n_ready[pi] >= RESULT_REPORT_IF_AT_LEAST_N {
            return Some(pi);
        }
    }
    None
}

/// A master-file fetch. Our master files list the same scheduler URLs as before, so
/// a successful fetch never resets `min_rpc_time` or `nrpc_failures` (§2.8). A failed
/// fetch leaves the fetch pending: the poll retries it when the backoff ends, and
/// each failure counts towards `master_fetch_retry_cap` (spec client §6 S1:
/// "by 1 per failed master fetch"; "a master fetch is pending").
fn master_fetch<S: ServerLink + ?Sized>(
    host: &mut ClientHost,
    pi: usize,
    now: Time,
    cfg: &ClientConfig,
    server: &mut S,
) {
    let ok = server.master_fetch(now, host.projects[pi].project);
    let p = &mut host.projects[pi];
    if ok {
        p.master_url_fetch_pending = false;
        p.master_fetch_failures = 0;
    } else {
        p.master_fetch_failures += 1;
        let secs = project_rpc_backoff(host, pi, now as f64, cfg);
        server.backoff(now, host.projects[pi].project, secs);
    }
    host.modern.must_check_work_fetch = true; // "Master fetch complete"
}

/// Makes the RPC and applies the reply (§2.8, §4.2, §2.7); an RPC in flight is
/// applied when its answer comes ([`answered`]).
fn do_rpc<S: ServerLink + ?Sized>(
    host: &mut ClientHost,
    pi: usize,
    now: Time,
    g: &GroupCtx,
    server: &mut S,
    cache: &mut RrCache,
    req: WorkRequest,
) -> Result<(), S::Error> {
    match host.rpc(now, pi, req, &g.behaviour, &g.cfg, server)? {
        RpcState::Answered(status) => completed(host, pi, now, g, server, cache, req, status),
        RpcState::InFlight => {}
    }
    Ok(())
}

/// The answer to the host's RPC in flight arrives at `now` (spec client §4.3):
/// applied as a reply received at once. The poll that sees the operation end
/// counts as one that acted: the next may act [`SCHEDULER_RPC_POLL_PERIOD`] later
/// (`scheduler_rpc_poll` sets `last_time = now` while an operation runs).
pub(crate) fn answered<S: ServerLink + ?Sized>(
    host: &mut ClientHost,
    now: Time,
    answer: Answer,
    g: &GroupCtx,
    server: &mut S,
    cache: &mut RrCache,
) {
    let req = answer.work;
    if let Some((pi, status)) = host.rpc_answered(now, answer, &g.behaviour, &g.cfg, server) {
        completed(host, pi, now, g, server, cache, req, status);
        host.modern.next_rpc_poll = now as f64 + SCHEDULER_RPC_POLL_PERIOD;
    }
}

/// What the client does when project `pi`'s RPC, which asked for `req`, ends
/// with `status` (§2.8, §4.2, §2.7).
#[allow(clippy::too_many_arguments)]
fn completed<S: ServerLink + ?Sized>(
    host: &mut ClientHost,
    pi: usize,
    now: Time,
    g: &GroupCtx,
    server: &mut S,
    cache: &mut RrCache,
    req: WorkRequest,
    status: RpcStatus,
) {
    let cfg = &g.cfg;
    let t = now as f64;
    cache.invalidate();
    match status {
        RpcStatus::Failed => {
            let secs = project_rpc_backoff(host, pi, t, cfg);
            server.backoff(now, host.projects[pi].project, secs);
        }
        RpcStatus::Down { request_delay } => {
            if request_delay > 0.0 {
                set_min_rpc_time(&mut host.projects[pi], t + request_delay);
            }
            let secs = project_rpc_backoff(host, pi, t, cfg);
            server.backoff(now, host.projects[pi].project, secs);
        }
        RpcStatus::Ok {
            new_jobs,
            request_delay,
            ..
        } => {
            let p = &mut host.projects[pi];
            p.nrpc_failures = 0;
            p.min_rpc_time = 0.0;
            // Only a reply that carries a `request_delay` sets one (a zero delay would
            // only re-arm `possibly_backed_off` and force a spurious check).
            if request_delay > 0.0 {
                set_min_rpc_time(p, t + request_delay);
            }
            handle_reply(host, pi, t, cfg, &req, new_jobs);
            host.projects[pi]
                .modern
                .transfer
                .set(TransferFlag::RequestIfIdleAndUploading, false);
            host.modern.must_schedule_cpus = true;
        }
    }
    host.projects[pi].sched_rpc_pending = RpcReason::None;
    host.modern.must_check_work_fetch = true; // "RPC complete"
}
