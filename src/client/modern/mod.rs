//! The modern REC-based client policy (BOINC 7.x/8.x, spec client §2–3): recent
//! estimated credit, round-robin simulation, per-resource work-fetch backoff, and
//! weighted round-robin + EDF CPU scheduling in time slices.
//!
//! One file per responsibility, after BOINC's `client/` sources:
//! - [`rec`]: REC accounting and scheduling priority (`cpu_sched.cpp`, `lib/util.cpp`);
//! - [`rr_sim`]: the round-robin simulation (`rr_sim.cpp`);
//! - [`cpu_sched`]: run list and its enforcement (`cpu_sched.cpp`);
//! - [`work_fetch`]: choosing a project and a request (`work_fetch.cpp`);
//! - [`backoff`]: project RPC and resource backoffs (`scheduler_op.cpp`, `project.cpp`);
//! - [`scheduler_op`]: one round of the RPC poll and the reply (`cs_scheduler.cpp`);
//! - [`cadence`]: the 60-s cadences emulated lazily, and the next wake.
//!
//! Jobs run on their resource: CPU jobs on `avg_ncpus` CPUs, GPU jobs on their GPU
//! type's instances; work fetch, the RR simulation and backoffs are per processor
//! type. The modern client uses no DCF. The host is event-driven: [`wake`] runs what the
//! real client would run at `now` and returns the earliest moment any rule could
//! fire next.

mod backoff;
mod buf;
mod cadence;
mod cpu_sched;
mod rec;
mod rr_sim;
mod scheduler_op;
mod work_fetch;

#[cfg(test)]
mod test_util;
#[cfg(test)]
mod tests;

use super::host::{Answer, ClientHost, GroupCtx, ServerLink};
use crate::engine::Time;
use scheduler_op::Round;

/// One host event at `now` (spec client §2.9, §3.1, §7); returns the next event time
/// (`Time::MAX`: none). Order, as in the emulator's poll loop: integrate and apply
/// availability, account REC, collect finished tasks, CPU scheduling if due, one
/// RPC-poll round if connected and the poll period allows it, then CPU scheduling
/// again if the reply asked for it. A round that starts an operation (a scheduler RPC
/// or a master fetch) sets the next poll `SCHEDULER_RPC_POLL_PERIOD` later, as
/// `scheduler_rpc_poll` does with `last_time = now`: a chain of RPCs at start-up
/// (initial RPC, then work fetch while the buffer is short) is spaced 5 s apart and
/// ends by the work-fetch and backoff rules alone.
pub(crate) fn wake<S: ServerLink + ?Sized>(
    host: &mut ClientHost,
    now: Time,
    g: &GroupCtx,
    server: &mut S,
    answer: Option<Answer>,
) -> Result<Time, S::Error> {
    let cfg = &g.cfg;
    let t = now as f64;
    let prev = host.last_advance as f64;
    // Scheduling and work fetch need the host on and allowed to compute, even in the
    // emulator-compatible mode where running tasks keep computing regardless (§5.3).
    let was_computing = host.avail.computing();
    let was_connected = cadence::rpc_allowed(host);
    cadence::use_up_request(host, t, was_connected);

    host.begin_event(now, g);
    host.update_checkpoints(cfg);
    if cadence::is_first_wake(host) {
        host.modern.rec_interval_start = t;
        for p in &mut host.projects {
            p.modern.secs_this_rec_interval = 0.0;
        }
        host.modern.must_schedule_cpus = true;
        host.modern.must_check_work_fetch = true;
    }
    rec::adjust_rec(host, t, cfg);
    if host.finish_tasks(now, &g.behaviour, |_, _| {}) > 0 {
        host.modern.must_schedule_cpus = true;
        host.modern.must_check_work_fetch = true;
    }
    let mut cache = rr_sim::RrCache::default();
    if let Some(answer) = answer {
        scheduler_op::answered(host, now, answer, g, server, &mut cache);
    }
    let computing = host.avail.computing();
    if computing && !was_computing {
        host.modern.must_schedule_cpus = true; // resume_tasks → request_schedule_cpus
    }
    let connected = cadence::rpc_allowed(host);
    let sched_due = computing && cadence::sync_schedule(host, t, was_computing);
    let mut gate = connected && cadence::sync_work_fetch(host, t, prev, was_connected);

    if computing && (sched_due || host.modern.must_schedule_cpus) {
        cpu_sched::schedule_cpus(host, t, cfg, &mut cache);
    }
    if connected
        && t >= host.modern.next_rpc_poll
        && scheduler_op::poll_round(host, now, g, server, &mut cache, &mut gate)?
            == Round::Operation
    {
        host.modern.next_rpc_poll = t + scheduler_op::SCHEDULER_RPC_POLL_PERIOD;
    }
    if computing && host.modern.must_schedule_cpus {
        cpu_sched::schedule_cpus(host, t, cfg, &mut cache);
    }
    // A request still pending is used up by the next poll that may act (while the
    // host is disconnected, by its first poll after reconnecting: its next event).
    if host.modern.must_check_work_fetch {
        host.modern.request_poll_at = if connected {
            cadence::request_poll(host, t)
        } else {
            f64::INFINITY
        };
    }
    Ok(cadence::next_wake(host, now, cfg, &mut cache))
}
