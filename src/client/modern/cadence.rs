//! The real client's cadences, emulated lazily (spec client §7), and the host's next
//! wake.
//!
//! The real client reschedules CPUs when forced or 60 s after the last reschedule,
//! and runs the gated part of the RPC poll (overdue reports, work fetch) when forced
//! or 60 s after the last check; a project's backoff expiring also forces a check
//! (`possibly_backed_off`). Between two host events nothing the policy looks at
//! changes, except time itself, so every check the real client would have made
//! between our events found nothing to do, *provided* the next wake was predicted
//! correctly: that is the invariant of [`next_wake`]. What the intermediate checks
//! still change is the phase of the 60-s grid, which decides when the next one
//! happens; [`sync_schedule`] and [`sync_work_fetch`] replay it. While computing was
//! suspended the client did not reschedule, and while it was disconnected it did not
//! poll, so the grid does not advance over such intervals. The 1-s main loop is
//! treated as continuous (every integer second), and so is the 5-s RPC poll while it
//! is idle; after a poll that started an operation the next one waits
//! `SCHEDULER_RPC_POLL_PERIOD` (`ModernHost::next_rpc_poll`).

use super::buf::SmallBuf;
use super::cpu_sched;
use super::rr_sim::{RrCache, RrOut};
use super::scheduler_op::{MAX_REPORT_DELAY, RESULT_REPORT_IF_AT_LEAST_N, report_cushion};
use super::work_fetch::{WF_MAX_RUNNABLE_JOBS, zero_share_threshold};
use crate::client::config::ClientConfig;
use crate::client::host::ClientHost;
use crate::engine::Time;
use crate::server::resource::{ProcType, coproc_of};
use crate::server::types::HostId;

/// `WORK_FETCH_PERIOD` (§2.1).
pub(crate) const WORK_FETCH_PERIOD: f64 = 60.0;

/// Whether the host can make RPCs now: on and connected, with no RPC in flight
/// (the poll starts no operation while one runs, spec client §4.3).
pub(crate) fn rpc_allowed(host: &ClientHost) -> bool {
    host.avail.is_on() && host.avail.connected() && host.rpc_in_flight.is_none()
}

/// The client's first event: the start-up forces a reschedule and a work-fetch check
/// (spec client §5.2). Called after `begin_event`: a host that has not lived any
/// simulated time yet (`merit.active_time == 0`) and has zero cadence state is
/// starting. Of the work-fetch cadence it reads the time the flag makes current: the
/// pending poll while a check is requested, the last check otherwise. (The world may
/// also set `must_schedule_cpus` and `must_check_work_fetch` at creation, which has
/// the same effect.)
pub(crate) fn is_first_wake(host: &ClientHost) -> bool {
    let m = &host.modern;
    let check = if m.must_check_work_fetch {
        m.request_poll_at
    } else {
        m.last_work_fetch_check
    };
    host.merit.active_time == 0.0
        && m.rec_interval_start == 0.0
        && m.last_schedule == 0.0
        && check == 0.0
}

/// Last multiple of `period` after `last` that is ≤ `t` (or `last`).
fn grid_at_or_before(last: f64, period: f64, t: f64) -> f64 {
    if t - last >= period {
        last + period * ((t - last) / period).floor()
    } else {
        last
    }
}

/// First point of the grid `last + k·period` (k ≥ 1) at or after `t`.
fn grid_at_or_after(last: f64, period: f64, t: f64) -> f64 {
    last + period * ((t - last) / period).ceil().max(1.0)
}

/// Is a reschedule due at `now`? `continuous`: computing was allowed throughout
/// `(prev, now)`, so the client was rescheduling on its grid.
pub(crate) fn sync_schedule(host: &mut ClientHost, now: f64, continuous: bool) -> bool {
    let p = cpu_sched::CPU_SCHED_PERIOD;
    if host.modern.must_schedule_cpus {
        return true;
    }
    if now - host.modern.last_schedule < p {
        return false;
    }
    if !continuous {
        return true;
    }
    let g = grid_at_or_before(host.modern.last_schedule, p, now);
    if g >= now {
        return true;
    }
    host.modern.last_schedule = g;
    false
}

/// `possibly_backed_off` is still set at time `t` for a project whose backoff ends at
/// `min_rpc_time` (it is cleared by the first check strictly after it). A zero
/// `min_rpc_time` was never raised (`set_min_rpc_time` sets the flag only when it
/// raises the value) or was reset by a successful RPC.
fn backed_off_since(min_rpc_time: f64, t: f64) -> bool {
    min_rpc_time > 0.0 && min_rpc_time >= t
}

/// The RPC poll that uses up a work-fetch request still pending at the end of an
/// event at `now`: the next poll that may act, `SCHEDULER_RPC_POLL_PERIOD` after an
/// operation, otherwise the next second (spec client §2.9). `request_work_fetch` only
/// sets `must_check_work_fetch`; `CLIENT_STATE::scheduler_rpc_poll`
/// (`client/cs_scheduler.cpp`) clears it at its next gated check and sets
/// `last_work_fetch_time = now` there, whether or not that check then finds a
/// project. So "RPC complete" forces one check 5 s after the RPC, and from then on
/// the 60-s grid runs from that check.
pub(crate) fn request_poll(host: &ClientHost, now: f64) -> f64 {
    (now + 1.0).max(host.modern.next_rpc_poll)
}

/// Called first in an event at `now`, before anything raises a new request: a
/// work-fetch request pending since the last event was used up by the poll
/// [`request_poll`] found for it, if that came before `now` and the host stayed
/// connected (`continuous`). That check found nothing to do, by [`next_wake`]'s
/// invariant, and restarted the 60-s grid: it is the last check.
pub(crate) fn use_up_request(host: &mut ClientHost, now: f64, continuous: bool) {
    let m = &mut host.modern;
    if m.must_check_work_fetch && continuous && m.request_poll_at < now {
        m.must_check_work_fetch = false;
        m.last_work_fetch_check = m.request_poll_at;
    }
}

/// Is the gated part of the RPC poll due at `now`? `continuous`: the host was on and
/// connected throughout `(prev, now)`. Replays the forced checks of backoffs that
/// expired in between (a project's `min_rpc_time` in `[prev, now)` forced a check at
/// `floor(min_rpc_time) + 1`).
pub(crate) fn sync_work_fetch(
    host: &mut ClientHost,
    now: f64,
    prev: f64,
    continuous: bool,
) -> bool {
    if host.modern.must_check_work_fetch {
        return true;
    }
    let mut l = host.modern.last_work_fetch_check;
    if !continuous {
        return now - l >= WORK_FETCH_PERIOD;
    }
    loop {
        let f = host
            .projects
            .iter()
            .map(|p| p.min_rpc_time)
            .filter(|&m| backed_off_since(m, prev) && m < now)
            .map(|m| m.floor() + 1.0)
            .filter(|&f| f > l)
            .fold(f64::INFINITY, f64::min);
        if !f.is_finite() {
            break;
        }
        if f >= now {
            return true;
        }
        l = f;
    }
    let g = grid_at_or_before(l, WORK_FETCH_PERIOD, now);
    if g >= now && g > l {
        return true;
    }
    host.modern.last_work_fetch_check = g;
    false
}

/// The first gated check at or after `t` (> `now`): the 60-s grid, restarted by the
/// forced checks of expiring backoffs. A pending work-fetch request is one check, at
/// [`request_poll`], and the grid restarts there: the end of a resource backoff
/// forces nothing (`RSC_PROJECT_WORK_FETCH::resource_backoff`,
/// `client/work_fetch.cpp`), so an ask after an empty reply waits for the grid.
fn work_fetch_check_time(host: &ClientHost, now: f64, t: f64) -> f64 {
    let t = t.max(now + 1.0);
    let mut last = host.modern.last_work_fetch_check;
    if host.modern.must_check_work_fetch {
        let c = request_poll(host, now);
        if t <= c {
            return c;
        }
        last = c;
    }
    let (mut f_low, mut f_high) = (f64::NEG_INFINITY, f64::INFINITY);
    for p in &host.projects {
        if backed_off_since(p.min_rpc_time, now) {
            let f = p.min_rpc_time.floor() + 1.0;
            if f < t {
                f_low = f_low.max(f);
            } else {
                f_high = f_high.min(f);
            }
        }
    }
    let base = last.max(f_low);
    grid_at_or_after(base, WORK_FETCH_PERIOD, t).min(f_high)
}

/// The earliest moment any rule of the policy could fire, with nothing else
/// happening (spec client §7); `Time::MAX` if none.
pub(crate) fn next_wake(
    host: &mut ClientHost,
    now: Time,
    cfg: &ClientConfig,
    cache: &mut RrCache,
) -> Time {
    let t = now as f64;
    let computing = host.avail.computing();
    let mut next = f64::INFINITY;
    if computing {
        if host.modern.must_schedule_cpus {
            next = t + 1.0;
        }
        let (slice, prio) = cpu_sched::next_change(host, t, cfg);
        let p = cpu_sched::CPU_SCHED_PERIOD;
        if slice.is_finite() {
            next = next.min(grid_at_or_after(host.modern.last_schedule, p, slice));
        }
        if prio.is_finite() {
            // Strictly after the crossing.
            next = next.min(grid_at_or_after(
                host.modern.last_schedule,
                p,
                prio.floor() + 1.0,
            ));
        }
    }
    if rpc_allowed(host) {
        // Nothing the poll would do can happen before the poll period allows it.
        next = next.min(rpc_wake(host, t, cfg, cache, computing).max(host.modern.next_rpc_poll));
    }
    let next = if next.is_finite() && next < (Time::MAX / 2) as f64 {
        next.ceil() as Time
    } else {
        Time::MAX
    };
    next.min(host.next_completion(cfg))
}

/// When the RPC poll can next act: a master fetch or initial RPC waiting on its
/// backoff, a report trigger (§2.9-6), or the buffer falling below `work_buf_min()`
/// for a project allowed to fetch (§2.6).
fn rpc_wake(
    host: &mut ClientHost,
    now: f64,
    cfg: &ClientConfig,
    cache: &mut RrCache,
    computing: bool,
) -> f64 {
    let mut next = f64::INFINITY;
    // Master fetches and initial RPCs are not gated.
    for p in &host.projects {
        if p.master_url_fetch_pending || p.hostid == HostId(0) {
            next = next.min(p.min_rpc_time.max(now).ceil());
        }
    }
    // Report triggers, per project: the earliest result to become due (strict `>`).
    let np = host.projects.len();
    let mut due: SmallBuf<(f64, u32), 16> = SmallBuf::filled(np, (f64::INFINITY, 0));
    let cushion = report_cushion(host, cfg);
    for j in host.jobs.iter().filter(|j| j.ready_to_report()) {
        let d = &mut due[j.project as usize];
        let by_age = (j.completed_time as f64 + MAX_REPORT_DELAY).floor() + 1.0;
        let by_deadline = (j.report_deadline as f64 - cushion).floor() + 1.0;
        d.0 = d.0.min(by_age).min(by_deadline);
        d.1 += 1;
    }
    for (p, &(trig, n)) in host.projects.iter().zip(due.iter()) {
        if n == 0 {
            continue;
        }
        let trig = if n >= RESULT_REPORT_IF_AT_LEAST_N {
            now
        } else {
            trig
        };
        let at = trig.max(p.min_rpc_time.ceil());
        next = next.min(work_fetch_check_time(host, now, at));
    }
    // Work fetch, per processor type the host has.
    if computing {
        let mut fetch = f64::INFINITY;
        for t in ProcType::ALL {
            if t == ProcType::Cpu || coproc_of(&host.coprocs, t).is_some() {
                let rr = cache.get_rsc(host, now, cfg, t);
                fetch = fetch.min(fetch_time(host, &rr, t, now, cfg));
            }
        }
        if fetch.is_finite() {
            next = next.min(work_fetch_check_time(host, now, fetch));
        }
    }
    next
}

/// The earliest time work fetch can choose a project for processor type `rsc`,
/// whose simulation is `rr`: its saturated time drains at most `1/overall_frac` s per
/// second, so it cannot cross a threshold `th` before `now + f·(saturated_time −
/// th)`; a project also waits for its RPC backoff and its backoff of `rsc`.
fn fetch_time(host: &ClientHost, rr: &RrOut, rsc: ProcType, now: f64, cfg: &ClientConfig) -> f64 {
    let f = rr.overall_frac;
    let cross = |th: f64| {
        if rr.saturated_time < th {
            now
        } else {
            (now + f * (rr.saturated_time - th)).floor() + 1.0
        }
    };
    let mut fetch = f64::INFINITY;
    for p in &host.projects {
        if p.master_url_fetch_pending
            || p.hostid == HostId(0)
            || p.modern.n_runnable_jobs > WF_MAX_RUNNABLE_JOBS
            || p.modern.no_rsc_apps[rsc.index()]
        {
            continue;
        }
        let buf = if p.resource_share == 0.0 {
            if rr.nidle_now <= 0.0 {
                continue; // a backup project asks only when an instance is idle now
            }
            cross(zero_share_threshold(host.work_buf_min_days(cfg)))
        } else {
            cross(host.work_buf_min(cfg))
        };
        fetch = fetch.min(
            buf.max(p.min_rpc_time.ceil())
                .max(p.modern.backoff_time[rsc.index()].ceil()),
        );
    }
    fetch
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::modern::test_util::*;

    #[test]
    fn grids() {
        assert_eq!(grid_at_or_before(0.0, 60.0, 59.0), 0.0);
        assert_eq!(grid_at_or_before(0.0, 60.0, 130.0), 120.0);
        assert_eq!(grid_at_or_after(0.0, 60.0, 3601.0), 3660.0);
        assert_eq!(grid_at_or_after(10.0, 60.0, 10.0), 70.0);
    }

    #[test]
    fn schedule_grid_replays_missed_checks() {
        let (mut h, _) = host_and_ctx(1, &[100.0], |_| {});
        h.modern.last_schedule = 100.0;
        assert!(!sync_schedule(&mut h, 130.0, true));
        assert!(!sync_schedule(&mut h, 250.0, true));
        assert_eq!(h.modern.last_schedule, 220.0);
        assert!(sync_schedule(&mut h, 280.0, true));
        // After a suspension the first chance runs it.
        h.modern.last_schedule = 100.0;
        assert!(sync_schedule(&mut h, 250.0, false));
    }

    #[test]
    fn work_fetch_gate_replays_forced_checks() {
        let (mut h, _) = host_and_ctx(1, &[100.0, 100.0], |_| {});
        h.modern.last_work_fetch_check = 0.0;
        // A backoff expired at 29.5: forced check at 30, then the grid is 90, 150...
        h.projects[0].min_rpc_time = 29.5;
        assert!(!sync_work_fetch(&mut h, 100.0, 10.0, true));
        assert_eq!(h.modern.last_work_fetch_check, 90.0);
        assert!(sync_work_fetch(&mut h, 150.0, 100.0, true));
        // The next check time for a trigger at 200: grid from 90 → 210, unless a
        // backoff expiry forces one earlier.
        assert_eq!(work_fetch_check_time(&h, 150.0, 200.0), 210.0);
        h.projects[1].min_rpc_time = 204.2;
        assert_eq!(work_fetch_check_time(&h, 150.0, 200.0), 205.0);
        h.projects[1].min_rpc_time = 170.0;
        assert_eq!(work_fetch_check_time(&h, 150.0, 200.0), 231.0);
    }

    #[test]
    fn rpc_complete_is_used_up_by_the_next_poll() {
        let (mut h, _) = host_and_ctx(1, &[100.0], |_| {});
        // An RPC at 65 left the request pending; the next poll may act at 70.
        h.modern.must_check_work_fetch = true;
        h.modern.next_rpc_poll = 70.0;
        assert_eq!(request_poll(&h, 65.0), 70.0);
        // A resource backoff ending at 365 is asked on the grid 70 + 60·k: 370.
        assert_eq!(work_fetch_check_time(&h, 65.0, 365.0), 370.0);
        // A trigger before the poll waits for it.
        assert_eq!(work_fetch_check_time(&h, 65.0, 66.0), 70.0);
        // Waking at 370, the request was used up at 70 and the grid point is due.
        h.modern.request_poll_at = 70.0;
        use_up_request(&mut h, 370.0, true);
        assert!(!h.modern.must_check_work_fetch);
        assert_eq!(h.modern.last_work_fetch_check, 70.0);
        assert!(sync_work_fetch(&mut h, 370.0, 65.0, true));
        // Waking at 340 instead: no check is due, the grid is at 310.
        h.modern.must_check_work_fetch = true;
        h.modern.request_poll_at = 70.0;
        use_up_request(&mut h, 340.0, true);
        assert!(!sync_work_fetch(&mut h, 340.0, 65.0, true));
        assert_eq!(h.modern.last_work_fetch_check, 310.0);
        // A request raised since the last event (f64::INFINITY) is due now.
        h.modern.must_check_work_fetch = true;
        h.modern.request_poll_at = f64::INFINITY;
        use_up_request(&mut h, 340.0, true);
        assert!(sync_work_fetch(&mut h, 340.0, 65.0, true));
        // After a disconnection the first poll uses it up.
        h.modern.request_poll_at = 70.0;
        use_up_request(&mut h, 340.0, false);
        assert!(sync_work_fetch(&mut h, 340.0, 65.0, false));
    }
}
