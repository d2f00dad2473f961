//! Project-level RPC backoff and per-resource work-fetch backoff
//! (`SCHEDULER_OP::backoff`, `PROJECT::set_min_rpc_time`,
//! `RSC_PROJECT_WORK_FETCH::resource_backoff`; spec client §2.7, §2.8).

use crate::client::config::ClientConfig;
use crate::client::host::{ClientHost, ModernProject, ProjectState};
use crate::server::resource::ProcType;

/// `SCHED_RETRY_DELAY_MIN` / `SCHED_RETRY_DELAY_MAX` (§2.1).
pub(crate) const SCHED_RETRY_DELAY_MIN: f64 = 60.0;
pub(crate) const SCHED_RETRY_DELAY_MAX: f64 = 14_400.0;
/// Cap on the backoff exponent (`retry_cap`).
pub(crate) const RETRY_CAP: u32 = 10;
/// After this many consecutive failures the master file is fetched again.
pub(crate) const MASTER_FETCH_PERIOD: u32 = 10;
/// After this many master-fetch failures, retry only every `MASTER_FETCH_INTERVAL`.
pub(crate) const MASTER_FETCH_RETRY_CAP: u32 = 3;
pub(crate) const MASTER_FETCH_INTERVAL: f64 = 86_400.0;
/// `WF_MIN_BACKOFF_INTERVAL` / `WF_MAX_BACKOFF_INTERVAL` (§2.7).
pub(crate) const WF_MIN_BACKOFF_INTERVAL: f64 = 600.0;
pub(crate) const WF_MAX_BACKOFF_INTERVAL: f64 = 86_400.0;

/// `set_min_rpc_time`: only ever raises `min_rpc_time` (§2.8). Upstream also sets
/// `possibly_backed_off`, which forces a work-fetch check when the backoff expires;
/// the cadence module derives that from `min_rpc_time` itself.
pub(crate) fn set_min_rpc_time(p: &mut ProjectState, t: f64) {
    if t > p.min_rpc_time {
        p.min_rpc_time = t;
    }
}

/// `project_rpc_backoff` after a failed RPC or master fetch of project `pi` (§2.8).
/// The network is never "known to be physically down" in the simulator, so every
/// failure counts. Returns the backoff's length, for the outputs
/// ([`ServerLink::backoff`](crate::client::host::ServerLink::backoff)).
pub(crate) fn project_rpc_backoff(
    host: &mut ClientHost,
    pi: usize,
    now: f64,
    cfg: &ClientConfig,
) -> f64 {
    let p = &mut host.projects[pi];
    if p.master_fetch_failures >= MASTER_FETCH_RETRY_CAP {
        p.master_url_fetch_pending = true;
        set_min_rpc_time(p, now + MASTER_FETCH_INTERVAL);
        return p.backoff_length(now);
    }
    if p.nrpc_failures == MASTER_FETCH_PERIOD {
        p.master_url_fetch_pending = true;
        p.min_rpc_time = 0.0;
        p.nrpc_failures = 0;
        p.master_fetch_failures += 1;
    }
    p.nrpc_failures += 1;
    let n = p.nrpc_failures.min(RETRY_CAP);
    let cap = (SCHED_RETRY_DELAY_MIN * 2f64.powi(n as i32)).min(SCHED_RETRY_DELAY_MAX);
    let u = host.draw_u(cfg);
    let p = &mut host.projects[pi];
    set_min_rpc_time(p, now + cap * (0.5 + 0.5 * u));
    p.backoff_length(now)
}

/// The backoff interval and end of processor type `rsc` for project `p`.
fn backoff_of(p: &mut ModernProject, rsc: ProcType) -> (&mut f64, &mut f64) {
    let k = rsc.index();
    (&mut p.backoff_interval[k], &mut p.backoff_time[k])
}

/// `resource_backoff` of the CPU (§2.7): 600 s, then doubling up to a day, times a
/// uniform factor in [0.5, 1.5).
pub(crate) fn resource_backoff(host: &mut ClientHost, pi: usize, now: f64, cfg: &ClientConfig) {
    rsc_backoff(host, pi, ProcType::Cpu, now, cfg);
}

/// `RSC_PROJECT_WORK_FETCH::resource_backoff` of processor type `rsc` (§2.7).
pub(crate) fn rsc_backoff(
    host: &mut ClientHost,
    pi: usize,
    rsc: ProcType,
    now: f64,
    cfg: &ClientConfig,
) {
    let (ival, _) = backoff_of(&mut host.projects[pi].modern, rsc);
    *ival = if *ival > 0.0 {
        (2.0 * *ival).min(WF_MAX_BACKOFF_INTERVAL)
    } else {
        WF_MIN_BACKOFF_INTERVAL
    };
    let u = host.draw_u(cfg);
    let (ival, time) = backoff_of(&mut host.projects[pi].modern, rsc);
    *time = now + (0.5 + u) * *ival;
}

/// `clear_backoff` of the CPU: jobs arrived.
pub(crate) fn clear_resource_backoff(p: &mut ModernProject) {
    clear_rsc_backoff(p, ProcType::Cpu);
}

/// `clear_backoff` of processor type `rsc`: jobs of it arrived.
pub(crate) fn clear_rsc_backoff(p: &mut ModernProject, rsc: ProcType) {
    let (ival, time) = backoff_of(p, rsc);
    *time = 0.0;
    *ival = 0.0;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::modern::test_util::*;
    use crate::server::resource::CPU;

    fn delays(u: f64) -> Vec<f64> {
        let (mut h, mut g) = host_and_ctx(1, &[100.0], |_| {});
        g.cfg.pin_u = Some(u);
        let mut out = Vec::new();
        for k in 0..10 {
            let now = 1_000_000.0 * (k + 1) as f64;
            project_rpc_backoff(&mut h, 0, now, &g.cfg);
            out.push(h.projects[0].min_rpc_time - now);
        }
        out
    }

    #[test]
    fn s1_backoff_sequence() {
        assert_eq!(
            delays(0.0),
            [
                60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 3840.0, 7200.0, 7200.0, 7200.0
            ]
        );
        let upper = [
            120.0, 240.0, 480.0, 960.0, 1920.0, 3840.0, 7680.0, 14400.0, 14400.0, 14400.0,
        ];
        for (d, u) in delays(1.0 - 1e-12).iter().zip(upper) {
            assert!(*d < u && u - d < 1e-6, "{d} vs {u}");
        }
    }

    #[test]
    fn s1_eleventh_failure_and_master_cap() {
        let (mut h, mut g) = host_and_ctx(1, &[100.0], |_| {});
        g.cfg.pin_u = Some(0.5);
        for k in 0..10 {
            project_rpc_backoff(&mut h, 0, 1e6 * (k + 1) as f64, &g.cfg);
        }
        let p = &h.projects[0];
        assert_eq!(p.nrpc_failures, 10);
        assert!(!p.master_url_fetch_pending);
        let now = 2e7;
        project_rpc_backoff(&mut h, 0, now, &g.cfg);
        let p = &h.projects[0];
        assert!(p.master_url_fetch_pending);
        assert_eq!(p.master_fetch_failures, 1);
        assert_eq!(p.nrpc_failures, 1);
        let d = p.min_rpc_time - now;
        assert!((60.0..120.0).contains(&d), "{d}");
        // With three master failures: exactly a day, no draw, fetch pending.
        h.projects[0].master_fetch_failures = 3;
        h.projects[0].master_url_fetch_pending = false;
        let now = 3e7;
        project_rpc_backoff(&mut h, 0, now, &g.cfg);
        assert_eq!(h.projects[0].min_rpc_time, now + 86_400.0);
        assert!(h.projects[0].master_url_fetch_pending);
        // set_min_rpc_time only raises.
        set_min_rpc_time(&mut h.projects[0], 5.0);
        assert_eq!(h.projects[0].min_rpc_time, now + 86_400.0);
    }

    #[test]
    fn resource_backoff_doubles_to_a_day_and_clears() {
        let (mut h, mut g) = host_and_ctx(1, &[100.0], |_| {});
        g.cfg.pin_u = Some(0.0);
        let mut ivals = Vec::new();
        for _ in 0..10 {
            resource_backoff(&mut h, 0, 100.0, &g.cfg);
            ivals.push(h.projects[0].modern.backoff_interval[CPU]);
        }
        assert_eq!(
            &ivals[..9],
            &[
                600.0, 1200.0, 2400.0, 4800.0, 9600.0, 19200.0, 38400.0, 76800.0, 86400.0
            ]
        );
        assert_eq!(
            h.projects[0].modern.backoff_time[CPU],
            100.0 + 0.5 * 86_400.0
        );
        clear_resource_backoff(&mut h.projects[0].modern);
        assert_eq!(h.projects[0].modern.backoff_interval[CPU], 0.0);
    }
}
