//! Scheduler sessions of the seed client: the get-work session, the report-result
//! session and master-file fetches (the `SCHEDULER_OP` state machine, spec client
//! §1.6–1.7).
//!
//! An RPC answered at once takes no simulated time, so a whole session (an RPC chain
//! in debt order, then the pending master fetches) runs inside one host event. An
//! RPC that a project's web server queues is in flight (spec client §4.3): the
//! session pauses, and its answer's event settles it and goes on with the chain.

use super::backoff::backoff;
use super::debt::{compute_resource_debts, current_work_buf_days, next_project, work_needed_secs};
use crate::client::host::{
    Answer, ClientHost, GroupCtx, RpcReason, RpcState, RpcStatus, ServerLink, TaskState,
    WorkRequest,
};
use crate::engine::Time;
use crate::engine::time::SECONDS_PER_DAY;

/// What one RPC came to, from the session's point of view.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Outcome {
    /// Every scheduler URL failed, or the reply said `project_is_down` (an error from
    /// 2004 on, spec client §1.7).
    Error { request_delay: f64 },
    /// A reply; `nresults` counts the jobs the client did not hold yet.
    Reply { nresults: u32, request_delay: f64 },
}

/// Unfinished jobs of project `pi`: new jobs of a reply are exactly the growth of
/// this count, since an RPC removes only reported (finished) jobs and a job the client
/// already holds only gets its deadline updated (spec client §1.7 "Results the client
/// already has are ignored").
fn unfinished_of(host: &ClientHost, pi: usize) -> u32 {
    host.jobs
        .iter()
        .filter(|j| j.project as usize == pi && j.state != TaskState::Done)
        .count() as u32
}

/// One scheduler RPC to project `pi` asking for `req_secs` (spec client §1.6): it
/// reports all the project's ready results and adds the reply's jobs
/// ([`ClientHost::rpc`]). The request's `estimated_delay` is the buffer in seconds.
/// `None`: the RPC is in flight, and the session goes on when its answer comes
/// ([`answered`]); `continues` says whether a get-work chain then goes on.
fn rpc_once<S: ServerLink + ?Sized>(
    host: &mut ClientHost,
    pi: usize,
    req_secs: f64,
    now: Time,
    g: &GroupCtx,
    server: &mut S,
    continues: bool,
) -> Result<Option<Outcome>, S::Error> {
    let before = unfinished_of(host, pi);
    let detaches = host.merit.detaches;
    let work = WorkRequest {
        req_secs,
        req_instances: 0.0,
        estimated_delay: current_work_buf_days(host) * SECONDS_PER_DAY,
        ..Default::default()
    };
    Ok(
        match host.rpc(now, pi, work, &g.behaviour, &g.cfg, server)? {
            RpcState::Answered(status) => {
                // A detach inside the RPC dropped the project's jobs first.
                let kept = if host.merit.detaches != detaches {
                    0
                } else {
                    before
                };
                Some(outcome_of(host, pi, status, kept))
            }
            RpcState::InFlight => {
                if let Some(f) = &mut host.rpc_in_flight {
                    f.continues = continues;
                }
                None
            }
        },
    )
}

/// What a reply to project `pi` came to, `kept` being the project's unfinished jobs
/// just before the reply was applied.
fn outcome_of(host: &mut ClientHost, pi: usize, status: RpcStatus, kept: u32) -> Outcome {
    match status {
        RpcStatus::Failed => Outcome::Error { request_delay: 0.0 },
        RpcStatus::Down { request_delay } => Outcome::Error { request_delay },
        RpcStatus::Ok { request_delay, .. } => {
            let nresults = unfinished_of(host, pi).saturating_sub(kept);
            // The reply served any pending user/attach request (`sched_rpc_pending`).
            host.projects[pi].sched_rpc_pending = RpcReason::None;
            Outcome::Reply {
                nresults,
                request_delay,
            }
        }
    }
}

/// The answer to the host's RPC in flight arrives at `now` (spec client §1.6,
/// §4.3): it is settled as the session that sent it would have settled a reply
/// received at once, and a get-work chain goes on from its project.
pub(crate) fn answered<S: ServerLink + ?Sized>(
    host: &mut ClientHost,
    now: Time,
    answer: Answer,
    g: &GroupCtx,
    server: &mut S,
) -> Result<(), S::Error> {
    let Some(f) = host.rpc_in_flight else {
        return Ok(());
    };
    let pi = f.project as usize;
    let kept = unfinished_of(host, pi);
    let Some((_, status)) = host.rpc_answered(now, answer, &g.behaviour, &g.cfg, server) else {
        return Ok(());
    };
    let outcome = outcome_of(host, pi, status, kept);
    settle(host, pi, outcome, now, g, f.continues, server);
    if f.continues {
        // The chain walks the debt order ranked when its session began.
        let (next, req) = next_in_chain(host, pi, outcome, now as f64, g);
        chain(host, next, req, now, g, server)?;
    }
    Ok(())
}

/// Applies one RPC's outcome to project `pi` (spec client §1.6–1.7): an error backs
/// off; a reply is a success (`nrpc_failures = 0`, `min_rpc_time = 0`) unless
/// `no_work_is_failure` and it brought no new job, which backs off ("No work from
/// project"). A reply's `request_delay` then raises `min_rpc_time` to at least
/// `now + request_delay`.
///
/// With `seed_request_delay_quirk` the historical order applies instead: the reply
/// handler sets `min_rpc_time = now + request_delay` first and the success/backoff
/// step overwrites it, so the delay is lost (spec client §1.7).
fn settle<S: ServerLink + ?Sized>(
    host: &mut ClientHost,
    pi: usize,
    outcome: Outcome,
    now: Time,
    g: &GroupCtx,
    no_work_is_failure: bool,
    server: &mut S,
) {
    let t = now as f64;
    let (failed, request_delay) = match outcome {
        Outcome::Error { request_delay } => (true, request_delay),
        Outcome::Reply {
            nresults,
            request_delay,
        } => (no_work_is_failure && nresults == 0, request_delay),
    };
    let quirk = g.cfg.seed_request_delay_quirk;
    if quirk && request_delay > 0.0 {
        host.projects[pi].min_rpc_time = t + request_delay;
    }
    if failed {
        let secs = backoff(host, pi, t, &g.cfg);
        server.backoff(now, host.projects[pi].project, secs);
    } else {
        let p = &mut host.projects[pi];
        p.nrpc_failures = 0;
        p.min_rpc_time = 0.0;
    }
    if !quirk && request_delay > 0.0 {
        let p = &mut host.projects[pi];
        p.min_rpc_time = p.min_rpc_time.max(t + request_delay);
    }
}

/// A get-work session (`must_get_work = true`, spec client §1.6).
///
/// Debts are ranked first (`compute_resource_debts`, §1.5 step 1). The first RPC goes
/// to `next_project(null)` with `work_needed_secs()`. After an error the session backs
/// the project off and asks the next project in debt order for the current need.
/// After a reply (a no-work reply backs off, any other resets) it continues with the
/// next project for the **whole remaining need**, not a share of it, while that need
/// is positive. When the chain ends, pending master fetches run.
pub(crate) fn get_work_session<S: ServerLink + ?Sized>(
    host: &mut ClientHost,
    now: Time,
    g: &GroupCtx,
    server: &mut S,
) -> Result<(), S::Error> {
    let t = now as f64;
    compute_resource_debts(&mut host.projects, t, g.cfg.seed_exp_sign_bug);
    let req = work_needed_secs(host, &g.cfg);
    let first = next_project(&host.projects, None, t);
    chain(host, first, req, now, g, server)
}

/// The get-work chain from project `cur`, asking for `req` seconds (spec client
/// §1.6), then the pending master fetches. It pauses at an RPC in flight, and
/// [`answered`] takes it up again.
fn chain<S: ServerLink + ?Sized>(
    host: &mut ClientHost,
    mut cur: Option<usize>,
    mut req: f64,
    now: Time,
    g: &GroupCtx,
    server: &mut S,
) -> Result<(), S::Error> {
    let t = now as f64;
    while let Some(pi) = cur {
        let Some(outcome) = rpc_once(host, pi, req, now, g, server, true)? else {
            return Ok(());
        };
        settle(host, pi, outcome, now, g, true, server);
        (cur, req) = next_in_chain(host, pi, outcome, t, g);
    }
    master_fetches(host, now, g, server);
    Ok(())
}

/// Where a get-work chain goes after project `pi`'s RPC came to `outcome`: the
/// next project in debt order and the whole remaining need; after a reply, only
/// while that need is positive.
fn next_in_chain(
    host: &ClientHost,
    pi: usize,
    outcome: Outcome,
    t: f64,
    g: &GroupCtx,
) -> (Option<usize>, f64) {
    let req = work_needed_secs(host, &g.cfg);
    let next = match outcome {
        Outcome::Reply { .. } if req <= 0.0 => None,
        _ => next_project(&host.projects, Some(pi), t),
    };
    (next, req)
}

/// A report-result session (`must_get_work = false`, spec client §1.6): one RPC to
/// project `pi` asking for `req_secs` (0, or `work_needed_secs()` when the project has
/// the largest debt). Any reply, even one without jobs, is a success; only an error
/// backs off.
pub(crate) fn report_result_session<S: ServerLink + ?Sized>(
    host: &mut ClientHost,
    pi: usize,
    req_secs: f64,
    now: Time,
    g: &GroupCtx,
    server: &mut S,
) -> Result<(), S::Error> {
    if let Some(outcome) = rpc_once(host, pi, req_secs, now, g, server, false)? {
        settle(host, pi, outcome, now, g, false, server);
    }
    Ok(())
}

/// `next_project_master_pending()`: the first project in list order whose master file
/// must be read and that is not in backoff (`min_rpc_time <= now`).
pub(crate) fn next_project_master_pending(host: &ClientHost, now: f64) -> Option<usize> {
    host.projects
        .iter()
        .position(|p| p.master_url_fetch_pending && p.min_rpc_time <= now)
}

/// Reads the master file of every project that needs it (spec client §1.6, end of a
/// get-work session; §1.5 step 2).
///
/// A failed fetch counts `master_fetch_failures++` and backs off; the fetch stays
/// pending and is retried when the backoff ends. A successful fetch clears
/// `master_url_fetch_pending` and nothing else: our simulated master files always list
/// the same scheduler URL, never a new one, so the "new URLs" reset of
/// `min_rpc_time`, `nrpc_failures` and `master_fetch_failures` never applies.
pub(crate) fn master_fetches<S: ServerLink + ?Sized>(
    host: &mut ClientHost,
    now: Time,
    g: &GroupCtx,
    server: &mut S,
) {
    let t = now as f64;
    while let Some(pi) = next_project_master_pending(host, t) {
        let project = host.projects[pi].project;
        if server.master_fetch(now, project) {
            host.projects[pi].master_url_fetch_pending = false;
        } else {
            host.projects[pi].master_fetch_failures += 1;
            let secs = backoff(host, pi, t, &g.cfg);
            server.backoff(now, project, secs);
        }
    }
}
