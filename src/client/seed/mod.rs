//! The seed client policy: resource debt, get-work and report-result sessions, low
//! and high water marks, EDF run-to-completion (spec client §1, `SeedDebt2003` of §7).
//!
//! One host event ([`wake`]) does what the 2003 client's main loop does over an
//! interval in which nothing changes: integrate progress, credit finished results to
//! the exponential averages, fill free CPU slots, poll for scheduler sessions until
//! none is due, fill slots again with new work, and compute when the next decision
//! can change. There are no periodic ticks: the next event is the earliest of a task
//! finishing, the buffer falling to the low water mark, a backoff ending while the
//! host wants to contact a project, and a ready result becoming overdue.
//!
//! - [`debt`]: exponential average, debts, project order, buffer (§1.2–1.4);
//! - [`backoff`]: `backoff` and `set_min_rpc_time` (§1.9);
//! - [`session`]: get-work and report-result sessions, master fetches (§1.6–1.7).

pub mod backoff;
pub(crate) mod debt;
pub(crate) mod session;

#[cfg(test)]
mod tests;

use self::debt::{
    buffer_secs_for_days, compute_resource_debts, current_work_buf_days, work_needed_secs,
};
use self::session::{
    get_work_session, master_fetches, next_project_master_pending, report_result_session,
};
use super::config::{ClientConfig, Policy, SeedReporting};
use super::host::{Answer, ClientHost, GroupCtx, RpcReason, ServerLink, TaskState};
use crate::engine::Time;

/// `SECONDS_BEFORE_REPORT_DEADLINE_TO_REPORT` = 6 h (spec client §1.8).
pub(crate) const SECONDS_BEFORE_REPORT_DEADLINE_TO_REPORT: f64 = 21_600.0;

/// Handles one host event at `now` and returns the time of the host's next event
/// (`Time::MAX`: nothing can happen; the caller takes the minimum with the next
/// availability change and makes it at least `now + 1`).
///
/// 1. [`ClientHost::begin_event`]: progress and availability up to `now`.
/// 2. Finished tasks credit `exp_avg_cpu` (decay, then add the CPU time; §1.2).
/// 3. CPU scheduling (§1.10).
/// 4. While connected, `scheduler_rpc_poll` (§1.5) until no session is due: sessions
///    take no simulated time, and the 2003 main loop polls again at once after an
///    iteration that did something, so the real client's back-to-back polls collapse
///    into this loop, with no cap. A session reports results, clears a pending
///    request or master fetch, adds work to the buffer (estimates are > 0) or backs
///    a project off past `now`; one that changes none of these (say, no project is
///    eligible for the get-work chain) did nothing, and the 2003 main loop then
///    sleeps 1 s before polling again: the loop stops and [`next_wake`] finds the
///    session due, which the caller makes `now + 1`.
///    `answer`, the answer to the RPC in flight, is settled first (§4.3), and no
///    session starts while an RPC is in flight.
/// 5. CPU scheduling again, for the new jobs.
/// 6. [`next_wake`].
pub(crate) fn wake<S: ServerLink + ?Sized>(
    host: &mut ClientHost,
    now: Time,
    g: &GroupCtx,
    server: &mut S,
    answer: Option<Answer>,
) -> Result<Time, S::Error> {
    let cfg = &g.cfg;
    host.begin_event(now, g);
    let t = now as f64;
    let sign_bug = cfg.seed_exp_sign_bug;
    host.finish_tasks(now, &g.behaviour, |ps, job| {
        debt::credit_finished(&mut ps.seed, t, job.cpu_time, sign_bug);
    });
    schedule_cpus(host, now, cfg);
    if let Some(answer) = answer {
        session::answered(host, now, answer, g, server)?;
    }
    if host.avail.connected() {
        while host.rpc_in_flight.is_none()
            && let Some(session) = due_session(host, t, cfg)
        {
            let before = poll_state(host);
            run_session(host, session, now, g, server)?;
            if poll_state(host) == before {
                break; // nothing happened: the main loop sleeps 1 s
            }
        }
        // New jobs may fill idle slots (spec client §1.10: whenever a slot is free).
        schedule_cpus(host, now, cfg);
    }
    Ok(next_wake(host, now, cfg))
}

/// CPU scheduling of the seed era (spec client §1.10): `nslots = min(p_ncpus,
/// max_cpus)`; while the host computes, tasks that were running and got stopped (by
/// the host going off or computing being suspended) resume first, then free slots
/// take the unstarted job with the earliest `report_deadline`, ties to arrival order
/// (`next_result_to_start`). There is no time slicing and no preemption: a running
/// task keeps its slot until it finishes.
pub(crate) fn schedule_cpus(host: &mut ClientHost, now: Time, cfg: &ClientConfig) {
    if !host.computing(cfg) {
        return;
    }
    let nslots = host.usable_cpus(cfg) as usize;
    let mut running = host.jobs.iter().filter(|j| j.is_running()).count();
    while running < nslots {
        let stopped = edf_pick(host, |s| {
            matches!(s, TaskState::Quit | TaskState::Suspended)
        });
        let pick = stopped.or_else(|| edf_pick(host, |s| s == TaskState::Unstarted));
        let Some(k) = pick else {
            break;
        };
        host.start(k, now);
        running += 1;
    }
}

/// The job in a state accepted by `want` with the earliest `report_deadline`; the
/// first in arrival order among equal deadlines (only a strictly earlier deadline
/// replaces the current pick).
fn edf_pick(host: &ClientHost, want: impl Fn(TaskState) -> bool) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (k, j) in host.jobs.iter().enumerate() {
        if want(j.state) && best.is_none_or(|b| j.report_deadline < host.jobs[b].report_deadline) {
            best = Some(k);
        }
    }
    best
}

/// A fingerprint of everything [`due_session`] looks at: the buffer, the jobs held,
/// and each project's backoff and pending flags (not counters such as `nrpcs`, which
/// change without progress).
fn poll_state(host: &ClientHost) -> u64 {
    let mut h = crate::base::hash::fnv1a64(&host.unfinished_secs(Policy::SeedDebt).to_le_bytes());
    let mut mix = |x: u64| h = (h ^ x).wrapping_mul(0x0000_0100_0000_01b3);
    mix(host.jobs.len() as u64);
    for j in &host.jobs {
        mix(j.ready_to_report() as u64);
    }
    for p in &host.projects {
        mix(p.min_rpc_time.to_bits());
        mix(p.master_url_fetch_pending as u64);
        mix(p.sched_rpc_pending as u64);
    }
    h
}

/// A session the poll logic starts (spec client §1.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Session {
    /// Step 1: buffer at or below the low water mark.
    GetWork,
    /// Step 2: a pending master fetch of a project not in backoff.
    Master,
    /// Step 3: a project with `sched_rpc_pending`: report-result, work request 0.
    Pending(usize),
    /// Step 4: a project with an overdue result: report-result.
    Overdue(usize),
}

/// `scheduler_rpc_poll()` (spec client §1.5): which session starts now, if any.
///
/// 1. Get work if `current_work_buf_days() <= work_buf_min_days` (inclusive) and some
///    project has `min_rpc_time < now` (strict; `some_project_rpc_ok`).
/// 2. Else master fetches for a pending project not in backoff.
/// 3. Else a report-result session for a project not in backoff with
///    `sched_rpc_pending`.
/// 4. Else a report-result session for a project with an overdue result (§1.8).
fn due_session(host: &ClientHost, now: f64, cfg: &ClientConfig) -> Option<Session> {
    if current_work_buf_days(host) <= host.work_buf_min_days(cfg)
        && host.projects.iter().any(|p| p.min_rpc_time < now)
    {
        return Some(Session::GetWork);
    }
    if next_project_master_pending(host, now).is_some() {
        return Some(Session::Master);
    }
    if let Some(pi) = host
        .projects
        .iter()
        .position(|p| p.sched_rpc_pending != RpcReason::None && p.min_rpc_time <= now)
    {
        return Some(Session::Pending(pi));
    }
    find_project_with_overdue_results(host, now, cfg).map(Session::Overdue)
}

/// Runs one session (spec client §1.5–1.6).
fn run_session<S: ServerLink + ?Sized>(
    host: &mut ClientHost,
    session: Session,
    now: Time,
    g: &GroupCtx,
    server: &mut S,
) -> Result<(), S::Error> {
    match session {
        Session::GetWork => get_work_session(host, now, g, server),
        // §1.5 step 2. The 2003 code enters this case through `init_get_work()`,
        // which would first run an RPC chain (with the last debt order, asking for
        // `work_needed_secs()`) to the projects not waiting for their master file,
        // even above the low water mark. We run only the master fetches; the poll
        // then starts a get-work session if the buffer calls for one.
        Session::Master => {
            master_fetches(host, now, g, server);
            Ok(())
        }
        Session::Pending(pi) => report_result_session(host, pi, 0.0, now, g, server),
        Session::Overdue(pi) => {
            // §1.5 step 4: ask for work only if this project has the largest debt.
            compute_resource_debts(&mut host.projects, now as f64, g.cfg.seed_exp_sign_bug);
            let req = if host.projects[pi].seed.debt_order == 0 {
                work_needed_secs(host, &g.cfg)
            } else {
                0.0
            };
            report_result_session(host, pi, req, now, g, server)
        }
    }
}

/// How far before its deadline a ready result is reported on its own (spec client
/// §1.8): 21600 s in the 2003-12 reference; `21600·2·(1 − connected_frac) + 21600` in
/// the 2004-04 variant; `None` for the 2003-05 variant, which reports every ready
/// result at once.
fn report_cushion(host: &ClientHost, cfg: &ClientConfig) -> Option<f64> {
    let c = SECONDS_BEFORE_REPORT_DEADLINE_TO_REPORT;
    match cfg.seed_reporting {
        SeedReporting::Reference2003 => Some(c),
        SeedReporting::Immediate => None,
        SeedReporting::ConnectedCushion2004 => {
            Some(c * 2.0 * (1.0 - host.time_stats.connected_frac) + c)
        }
    }
}

/// `find_project_with_overdue_results()` (spec client §1.8): the project of the first
/// result in list (arrival) order that is ready to report, overdue by the configured
/// rule, and whose project is not in backoff (`min_rpc_time <= now`).
fn find_project_with_overdue_results(
    host: &ClientHost,
    now: f64,
    cfg: &ClientConfig,
) -> Option<usize> {
    let cushion = report_cushion(host, cfg);
    host.jobs.iter().find_map(|j| {
        let pi = j.project as usize;
        let overdue = cushion.is_none_or(|c| j.report_deadline as f64 <= now + c);
        (j.ready_to_report() && overdue && host.projects[pi].min_rpc_time <= now).then_some(pi)
    })
}

/// The smallest integer time `>= x` (`Time::MAX` if out of range or NaN).
fn ceil_time(x: f64) -> Time {
    if x.is_nan() || x >= Time::MAX as f64 {
        Time::MAX
    } else {
        x.ceil() as Time
    }
}

/// The smallest integer time `> x`.
fn first_time_after(x: f64) -> Time {
    if x.is_nan() || x >= Time::MAX as f64 {
        Time::MAX
    } else {
        x.floor() as Time + 1
    }
}

/// The time of the host's next event (spec client §1.5 evaluated lazily): the
/// earliest of
/// - the next task completion ([`ClientHost::next_completion`]);
/// - when connected, the first integer time at which [`due_session`] would start a
///   session if nothing else happened before: the buffer reaching the low water mark
///   while some project's backoff has ended (`min_rpc_time < t`), a pending master
///   fetch or `sched_rpc_pending` whose backoff has ended (`min_rpc_time <= t`), and a
///   ready result becoming overdue while its project is not in backoff.
///
/// Between events the set of running tasks is constant, so the buffer falls linearly,
/// by one second per second per running task with work left; the crossing of the low
/// water mark is solved in closed form (if it lies beyond the next completion, the
/// completion event recomputes it). Every condition is monotone in time between
/// events, so the earliest time a combination holds is the latest of its parts.
/// While disconnected no session can start and the availability change that
/// reconnects the host wakes it. A result `<= now` means a session is due that did
/// nothing at `now`; the caller makes it `now + 1`, the 2003 main loop's 1-s sleep.
pub(crate) fn next_wake(host: &ClientHost, now: Time, cfg: &ClientConfig) -> Time {
    let mut next = host.next_completion(cfg);
    // No session starts while an RPC is in flight: its answer wakes the host.
    if !host.avail.connected() || host.rpc_in_flight.is_some() {
        return next;
    }
    // 1. Get work: buffer at or below the low water mark and some backoff over.
    let t_rpc = host
        .projects
        .iter()
        .map(|p| first_time_after(p.min_rpc_time))
        .min()
        .unwrap_or(Time::MAX);
    if t_rpc < next {
        let t_buf = if current_work_buf_days(host) <= host.work_buf_min_days(cfg) {
            now
        } else {
            // Estimated seconds the running jobs remove from the buffer per second.
            let rate = if host.computing(cfg) {
                host.jobs
                    .iter()
                    .filter(|j| j.is_running() && j.flops_left > 0.0)
                    .map(|j| host.est_ratio(j, Policy::SeedDebt))
                    .sum()
            } else {
                0.0
            };
            if rate > 0.0 {
                let excess = host.unfinished_secs(Policy::SeedDebt)
                    - buffer_secs_for_days(host, host.work_buf_min_days(cfg));
                now.saturating_add(ceil_time(excess.max(0.0) / rate).max(1))
            } else {
                Time::MAX
            }
        };
        next = next.min(t_buf.max(t_rpc));
    }
    // 2–3. Pending master fetches and pending RPC requests, once their backoff ends.
    for p in &host.projects {
        if p.master_url_fetch_pending || p.sched_rpc_pending != RpcReason::None {
            next = next.min(ceil_time(p.min_rpc_time));
        }
    }
    // 4. Ready results becoming overdue.
    let cushion = report_cushion(host, cfg);
    for j in host.jobs.iter().filter(|j| j.ready_to_report()) {
        let backoff_end = ceil_time(host.projects[j.project as usize].min_rpc_time);
        let overdue_at = match cushion {
            Some(c) => ceil_time(j.report_deadline as f64 - c),
            None => Time::MIN,
        };
        next = next.min(backoff_end.max(overdue_at));
    }
    next
}
