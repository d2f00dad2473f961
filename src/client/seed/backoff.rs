//! Project-level backoff of the seed client: `SCHEDULER_OP::backoff` and
//! `set_min_rpc_time` (spec client §1.9).

use crate::client::config::{ClientConfig, SeedBackoff};
use crate::client::host::ClientHost;

/// Consecutive failures after which the master file is re-read (`MASTER_FETCH_PERIOD`).
pub(crate) const MASTER_FETCH_PERIOD: u32 = 10;
/// `RETRY_BASE_PERIOD`, seconds: the factor in front of `e^n`.
pub(crate) const RETRY_BASE_PERIOD: f64 = 1.0;
/// `RETRY_CAP`: the exponent `n` never exceeds this.
pub(crate) const RETRY_CAP: u32 = 10;
/// `MASTER_FETCH_RETRY_CAP`: from this many master-file failures on, the long backoff
/// applies and the master file stays pending.
pub(crate) const MASTER_FETCH_RETRY_CAP: u32 = 3;
/// `MASTER_FETCH_INTERVAL`, seconds (2 weeks): cap of the long backoff.
pub(crate) const MASTER_FETCH_INTERVAL: f64 = 1_209_600.0;
/// `SCHED_RETRY_DELAY_MIN`, seconds.
pub(crate) const SCHED_RETRY_DELAY_MIN: f64 = 60.0;
/// `SCHED_RETRY_DELAY_MAX`, seconds (4 h).
pub(crate) const SCHED_RETRY_DELAY_MAX: f64 = 14_400.0;

/// `rand_range(a, b)` of `lib/util.C`: `a + U·(b − a)` if `a < b`, else `a` (spec
/// client §1.9).
pub(crate) fn rand_range(a: f64, b: f64, u: f64) -> f64 {
    if a < b { a + u * (b - a) } else { a }
}

/// The delay `set_min_rpc_time` adds to `now`, in whole seconds (spec client §1.9
/// step 3), for `nrpc_failures` and `master_fetch_failures` after the failure was
/// counted and one uniform draw `u`.
///
/// * `master_fetch_failures >= 3`: `int(rand_range(60, min(1209600, e^mff)))`, in both
///   variants (the spec gives this branch once, beside both formulas);
/// * `Reference2003`: `int(rand_range(60, min(14400, RETRY_BASE_PERIOD·e^n)))`;
/// * `Early2002`: `int(clamp(RETRY_BASE_PERIOD·e^(U·n), 60, 14400))`;
///
/// with `n = min(nrpc_failures, RETRY_CAP)`. In the reference formula `e^n < 60` for
/// `n ≤ 4`, so the first four failures give exactly 60 s.
pub(crate) fn retry_delay(
    variant: SeedBackoff,
    nrpc_failures: u32,
    master_fetch_failures: u32,
    u: f64,
) -> f64 {
    if master_fetch_failures >= MASTER_FETCH_RETRY_CAP {
        let hi = MASTER_FETCH_INTERVAL.min((master_fetch_failures as f64).exp());
        return rand_range(SCHED_RETRY_DELAY_MIN, hi, u).trunc();
    }
    let n = nrpc_failures.min(RETRY_CAP) as f64;
    match variant {
        SeedBackoff::Reference2003 => {
            let hi = SCHED_RETRY_DELAY_MAX.min(RETRY_BASE_PERIOD * n.exp());
            rand_range(SCHED_RETRY_DELAY_MIN, hi, u).trunc()
        }
        SeedBackoff::Early2002 => (RETRY_BASE_PERIOD * (u * n).exp())
            .clamp(SCHED_RETRY_DELAY_MIN, SCHED_RETRY_DELAY_MAX)
            .trunc(),
    }
}

/// `SCHEDULER_OP::backoff(P)` (spec client §1.9): counts a failure of project `pi` and
/// sets its `min_rpc_time`.
///
/// 1. With `master_fetch_failures >= 3` the master file is marked pending and the
///    failure is *not* counted in `nrpc_failures` (the C code returns early).
/// 2. Otherwise, at the 10th consecutive failure (`MASTER_FETCH_PERIOD`) the master
///    file is marked pending, `min_rpc_time` and `nrpc_failures` are cleared and
///    `master_fetch_failures` grows; in both cases `nrpc_failures++`.
/// 3. `min_rpc_time = now + retry_delay(..)`, evaluated with the counters as updated,
///    so the cycle that brings `master_fetch_failures` to 3 already gets the long
///    formula.
///
/// One `U` is drawn per backoff, from [`ClientHost::draw_u`], so `pin_u` makes the
/// delay exact. Returns the backoff's length, for the outputs
/// ([`ServerLink::backoff`](crate::client::host::ServerLink::backoff)).
pub fn backoff(host: &mut ClientHost, pi: usize, now: f64, cfg: &ClientConfig) -> f64 {
    let u = host.draw_u(cfg);
    let p = &mut host.projects[pi];
    if p.master_fetch_failures >= MASTER_FETCH_RETRY_CAP {
        p.master_url_fetch_pending = true;
    } else {
        if p.nrpc_failures == MASTER_FETCH_PERIOD {
            p.master_url_fetch_pending = true;
            p.min_rpc_time = 0.0;
            p.nrpc_failures = 0;
            p.master_fetch_failures += 1;
        }
        p.nrpc_failures += 1;
    }
    let delay = retry_delay(
        cfg.seed_backoff,
        p.nrpc_failures,
        p.master_fetch_failures,
        u,
    );
    p.min_rpc_time = now + delay;
    p.backoff_length(now)
}
