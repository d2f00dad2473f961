//! The time a project takes to recover from an outage: from the outage's end until
//! the clients' RPC failure rate and every daemon backlog are back within the noise
//! of their level before it (docs/outputs.md, "Time to recover").
//!
//! Computed once, at the end of the run, from the buckets of `timeseries.csv`:
//!
//! 1. **The signals**, per bucket: the RPC failure rate (`client_rpcs_failed` over
//!    `client_rpcs_failed + scheduler_requests`; 0 without RPCs), the daemons'
//!    backlogs sampled at the bucket's start ([`BACKLOGS`], then the
//!    transitioner's, `backlog_transitioner_workunits`, and the web server's queue,
//!    for a project that samples them).
//! 2. **The level before**: over the [`BASELINE`] before the outage starts (the
//!    buckets wholly inside it, at least [`MIN_BASELINE_BUCKETS`]), each signal's
//!    mean `μ` and standard deviation `σ`. Its band is `μ ± max(3σ, floor)`, with a
//!    floor of 0.02 for the failure rate and `max(0.05·μ, 2)` for a backlog, so that
//!    a signal flat at 0 before the outage is not held to exactly 0 after it.
//! 3. **Recovered** at the start of the first bucket, from the one holding the
//!    outage's end on, from which every signal stays in its band for [`HOLD`]
//!    buckets in a row. The time to recover is that start minus the outage's end
//!    (0 when the first bucket is already in band): exact to one bucket.
//!
//! An outage without enough buckets before it, or not recovered before the run
//! ends, has no time to recover (it is counted as such).

use super::metrics::{GAUGES, ProjectMetrics, RPCS_FAILED, SCHED_REQUESTS};
use crate::engine::Time;
use serde::{Deserialize, Serialize};

/// How far before an outage its level is measured.
pub const BASELINE: Time = 86_400;
/// Fewest buckets the level before is measured on.
pub const MIN_BASELINE_BUCKETS: usize = 3;
/// Buckets in a row a recovered project stays in band.
pub const HOLD: usize = 3;

/// The gauges that are daemon backlogs ([`GAUGES`] names).
pub const BACKLOGS: [&str; 5] = [
    "backlog_validator_workunits",
    "backlog_assimilator_workunits",
    "backlog_file_deleter_workunits",
    "backlog_file_deleter_results",
    "backlog_db_purge_workunits",
];

/// One outage and how the project recovered from it. Read back from
/// `summary.json` by the `server` chart, which marks it (`plot::data`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recovery {
    /// What was down: `scheduler`, or a daemon's name.
    pub what: String,
    pub start_s: Time,
    pub end_s: Time,
    /// Seconds from the outage's end to recovery; `None`: not recovered by the end
    /// of the run, or no level before it to recover to.
    pub recovery_s: Option<Time>,
}

/// The columns `summary.csv` gets after the scheduler's load (docs/outputs.md,
/// "Time to recover").
pub const COLUMNS: [&str; 3] = ["outages", "recovery_time_max_s", "outages_unrecovered"];

/// Every outage of project `p` that began during the run, and how the project
/// recovered from each, from its metrics `m` in a run of `run_end` seconds: its
/// scheduler's windows (`[[project.NAME.outage]]`, then the database's outages,
/// `what = "database"`), then the fixed windows of its daemon outages
/// (`[[project.NAME.daemon_outage]]` with `start` and `end`, `what` the daemon),
/// in file order. A crash process's windows are not listed.
pub fn recoveries(p: &crate::server::Project, m: &ProjectMetrics, run_end: Time) -> Vec<Recovery> {
    use crate::server::config::{OutageSchedule, OutageTarget};
    let scheduler = (p.cfg.outage.iter()).map(|o| {
        let what = if o.database { "database" } else { "scheduler" };
        (
            what.to_string(),
            o.start,
            o.start.saturating_add(o.duration),
        )
    });
    let daemons = (p.cfg.daemon_outage.iter())
        .filter(|o| o.target != OutageTarget::Database)
        .filter_map(|o| match o.schedule {
            OutageSchedule::Window { start, end } => {
                let what = serde_json::to_value(o.target).ok()?.as_str()?.to_string();
                Some((what, start, end))
            }
            _ => None,
        });
    let queue = |k: usize| m.scheduler.as_ref().and_then(|l| l.queue_at(k));
    (scheduler.chain(daemons))
        .filter(|&(_, start, _)| start < run_end)
        .map(|(what, start, end)| {
            let end = end.min(run_end);
            Recovery {
                what,
                start_s: start,
                end_s: end,
                recovery_s: recovery(m, start, end, run_end, &queue),
            }
        })
        .collect()
}

/// The [`COLUMNS`] of a project's recoveries: how many outages, the longest time
/// to recover of those that recovered, and how many did not (or had no level
/// before them).
pub fn columns(rs: &[Recovery]) -> [Option<f64>; COLUMNS.len()] {
    let max = rs.iter().filter_map(|r| r.recovery_s).max();
    let unrecovered = rs.iter().filter(|r| r.recovery_s.is_none()).count();
    [
        Some(rs.len() as f64),
        max.map(|t| t as f64),
        Some(unrecovered as f64),
    ]
}

/// The signals of bucket `k`: the failure rate, then the backlogs, then
/// `extra(k)` (the web server's queue).
fn signals(m: &ProjectMetrics, k: usize, extra: &dyn Fn(usize) -> Option<f64>) -> Vec<f64> {
    let counts = m.buckets.get(k);
    let failed = counts.map_or(0.0, |b| b[RPCS_FAILED]);
    let served = counts.map_or(0.0, |b| b[SCHED_REQUESTS]);
    let rate = if failed + served > 0.0 {
        failed / (failed + served)
    } else {
        0.0
    };
    let gauges = m.samples.get(k);
    let mut v = vec![rate];
    for name in BACKLOGS {
        let i = GAUGES.iter().position(|g| *g == name).expect("a gauge");
        v.push(gauges.map_or(0.0, |g| g[i]));
    }
    // The transitioner's backlog, sampled for a project that reports its server
    // load.
    if let Some(load) = &m.load {
        v.push(load.get(k).map_or(0.0, |g| g[0])); // backlog_transitioner_workunits
    }
    if let Some(x) = extra(k) {
        v.push(x);
    }
    v
}

/// How project `m` recovered from the outage `[start, end)` in a run of `run_end`
/// seconds. `extra(k)`: one more signal of bucket `k`, if the project has it.
pub fn recovery(
    m: &ProjectMetrics,
    start: Time,
    end: Time,
    run_end: Time,
    extra: &dyn Fn(usize) -> Option<f64>,
) -> Option<Time> {
    let i = m.interval.max(1);
    // Buckets wholly inside [start − BASELINE, start).
    let first = ((start - BASELINE).max(0) + i - 1) / i;
    let last = start / i; // exclusive
    if last - first < MIN_BASELINE_BUCKETS as Time {
        return None;
    }
    let base: Vec<Vec<f64>> = (first..last)
        .map(|k| signals(m, k as usize, extra))
        .collect();
    let n = base.len() as f64;
    let width = base[0].len();
    let bands: Vec<(f64, f64)> = (0..width)
        .map(|s| {
            let mean = base.iter().map(|v| v[s]).sum::<f64>() / n;
            let var = base.iter().map(|v| (v[s] - mean).powi(2)).sum::<f64>() / n;
            let floor = if s == 0 { 0.02 } else { (0.05 * mean).max(2.0) };
            let half = (3.0 * var.sqrt()).max(floor);
            (mean - half, mean + half)
        })
        .collect();
    let in_band = |k: Time| {
        let v = signals(m, k as usize, extra);
        v.len() == width && v.iter().zip(&bands).all(|(x, (lo, hi))| x >= lo && x <= hi)
    };
    // Only buckets the run fills: the last one must end by the run's end.
    let complete = |k: Time| (k + 1) * i <= run_end;
    let mut k = end / i;
    while complete(k + HOLD as Time - 1) {
        if (0..HOLD as Time).all(|d| in_band(k + d)) {
            return Some((k * i - end).max(0));
        }
        k += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::metrics::SERIES;

    /// Hourly buckets: `rate(k)` failed of 100 RPCs, validator backlog `v(k)`.
    fn metrics(
        n: usize,
        failed: impl Fn(usize) -> f64,
        v: impl Fn(usize) -> f64,
    ) -> ProjectMetrics {
        let mut m = ProjectMetrics::new(3600, 60, 86_400);
        for k in 0..n {
            let mut b = [0.0; SERIES.len()];
            b[RPCS_FAILED] = failed(k);
            b[SCHED_REQUESTS] = 100.0 - failed(k);
            m.buckets.push(b);
            let mut g = [0.0; GAUGES.len()];
            g[GAUGES.iter().position(|g| *g == BACKLOGS[0]).unwrap()] = v(k);
            m.samples.push(g);
        }
        m
    }

    #[test]
    fn recovery_is_the_first_bucket_from_which_every_signal_holds_its_band() {
        // An outage in hours 30–33: every RPC fails, then the validator's backlog
        // (50 before) drains from 400 by 100 an hour: back in band (≤ 52.5) at hour
        // 37, held from then on.
        let v = |k: usize| match k {
            34 => 400.0,
            35 => 300.0,
            36 => 200.0,
            37.. => 50.0,
            _ => 50.0 + (k % 2) as f64,
        };
        let f = |k: usize| if (30..34).contains(&k) { 100.0 } else { 0.0 };
        let m = metrics(60, f, v);
        let r = recovery(&m, 30 * 3600, 34 * 3600, 60 * 3600, &|_| None);
        assert_eq!(r, Some(3 * 3600));
        // Ending mid-bucket: measured from the end itself.
        let r = recovery(&m, 30 * 3600, 34 * 3600 - 600, 60 * 3600, &|_| None);
        assert_eq!(r, Some(3 * 3600 + 600));
    }

    #[test]
    fn no_recovery_before_the_end_or_without_a_level_before() {
        let m = metrics(40, |k| if k >= 30 { 100.0 } else { 0.0 }, |_| 10.0);
        assert_eq!(
            recovery(&m, 30 * 3600, 31 * 3600, 40 * 3600, &|_| None),
            None
        );
        // Two buckets before the outage are not a level.
        assert_eq!(recovery(&m, 2 * 3600, 3 * 3600, 40 * 3600, &|_| None), None);
        // An extra signal out of band holds recovery back.
        let calm = metrics(40, |_| 0.0, |_| 10.0);
        let queue = |k: usize| Some(if k < 36 { 0.0 } else { 500.0 });
        assert_eq!(
            recovery(&calm, 30 * 3600, 31 * 3600, 40 * 3600, &|_| Some(0.0)),
            Some(0)
        );
        assert_eq!(
            recovery(&calm, 30 * 3600, 34 * 3600, 40 * 3600, &queue),
            None
        );
    }

    #[test]
    fn the_transitioner_backlog_counts_when_it_is_sampled() {
        // Every other signal is calm; the transitioner's backlog (0 before) is 900
        // in the two hours after the outage ends at hour 31, then 0 again.
        let mut m = metrics(50, |_| 0.0, |_| 10.0);
        assert_eq!(
            recovery(&m, 30 * 3600, 31 * 3600, 50 * 3600, &|_| None),
            Some(0)
        );
        let backlog = |k: usize| if (31..33).contains(&k) { 900.0 } else { 0.0 };
        m.load = Some((0..50).map(|k| [backlog(k), 0.0, 0.0]).collect());
        assert_eq!(
            recovery(&m, 30 * 3600, 31 * 3600, 50 * 3600, &|_| None),
            Some(2 * 3600)
        );
    }
}
