//! Time series and distributions of a run, per project: `timeseries.csv` and
//! `histograms.csv`.
//!
//! Every figure is taken from a row's own timestamps when the row is final (purged,
//! or live at the end of the run), the same moment [`super::tally::Tally`] counts
//! it. So the series cost nothing per event, and recomputing them from
//! `workunits.csv` and `results.csv` gives the same numbers: a result reported at
//! `received_time_s = t` is in the bucket `floor(t / interval)`.

use super::window::{is_reported, is_valid_work};
use crate::engine::Time;
use crate::server::db::{ResultRow, WorkunitRow};
use crate::server::types::*;
use std::io;
use std::path::Path;

pub(crate) const TIMESERIES_CSV: &str = "timeseries.csv";
pub(crate) const HISTOGRAMS_CSV: &str = "histograms.csv";

/// The series, in the order of their `metric` values (names carry their unit).
///
/// Result figures are counted at the report (`received_time`), except `results_sent`
/// (at `sent_time`) and `results_no_reply` (at the deadline that expired). The last
/// four come from the RPC path instead of final rows: `scheduler_requests` are RPCs
/// that reached an up scheduler, `client_rpcs_failed` attempts that did not (outage),
/// and `client_backoffs`/`client_backoff_s` the project backoffs clients started and
/// their total length (spec client §1.9, §2.8).
pub(crate) const SERIES: [&str; 19] = [
    "workunits_created",
    "workunits_canonical_found",
    "workunits_assimilated_valid",
    "workunits_assimilated_error",
    "results_sent",
    "results_reported",
    "results_deadline_met",
    "results_deadline_missed",
    "results_too_late",
    "results_no_reply",
    "cpu_time_reported_s",
    "cpu_time_wasted_s",
    "flops_useful_flops",
    "flops_wasted_flops",
    "credit_granted_credit",
    "scheduler_requests",
    "client_rpcs_failed",
    "client_backoffs",
    "client_backoff_s",
];
pub(crate) const WU_CREATED: usize = 0;
pub(crate) const WU_CANONICAL: usize = 1;
pub(crate) const WU_ASSIM_VALID: usize = 2;
pub(crate) const WU_ASSIM_ERROR: usize = 3;
pub(crate) const R_SENT: usize = 4;
pub(crate) const R_REPORTED: usize = 5;
pub(crate) const R_MET: usize = 6;
pub(crate) const R_MISSED: usize = 7;
pub(crate) const R_TOO_LATE: usize = 8;
pub(crate) const R_NO_REPLY: usize = 9;
pub(crate) const CPU_REPORTED: usize = 10;
pub(crate) const CPU_WASTED: usize = 11;
pub(crate) const FLOPS_USEFUL: usize = 12;
pub(crate) const FLOPS_WASTED: usize = 13;
pub(crate) const CREDIT: usize = 14;
pub(crate) const SCHED_REQUESTS: usize = 15;
pub(crate) const RPCS_FAILED: usize = 16;
pub(crate) const BACKOFFS: usize = 17;
pub(crate) const BACKOFF_S: usize = 18;

/// Instantaneous state of a project's server, sampled at the start of every bucket:
/// the database's size by state and the daemons' backlogs (work lists).
///
/// `db_workunits` is the sum of `db_workunits_open` (still collecting, validating or
/// waiting for the transitioner), the assimilator, file deleter and purge backlogs
/// (in workunits) and `db_workunits_file_delete_error`: the five stack into the
/// database's size.
pub(crate) const GAUGES: [&str; 11] = [
    "db_workunits",
    "db_workunits_open",
    "db_results_unsent",
    "db_results_in_progress",
    "db_results_over",
    "backlog_validator_workunits",
    "backlog_assimilator_workunits",
    "backlog_file_deleter_workunits",
    "backlog_file_deleter_results",
    "db_workunits_file_delete_error",
    "backlog_db_purge_workunits",
];

/// The gauges of one project's database now, in [`GAUGES`] order; O(1).
pub(crate) fn gauges(db: &crate::server::db::Db) -> [f64; GAUGES.len()] {
    let c = &db.result_state_counts;
    let queued = db.assimilate_ready.len()
        + db.fd_ready_wus.len()
        + db.fd_error_wus.len()
        + db.purge_ready.len();
    [
        db.workunits_live as f64,
        db.workunits_live.saturating_sub(queued as u64) as f64,
        c[ServerState::Unsent.code() as usize] as f64,
        c[ServerState::InProgress.code() as usize] as f64,
        c[ServerState::Over.code() as usize] as f64,
        db.need_validate.len() as f64,
        db.assimilate_ready.len() as f64,
        db.fd_ready_wus.len() as f64,
        db.fd_ready_results.len() as f64,
        db.fd_error_wus.len() as f64,
        db.purge_ready.len() as f64,
    ]
}

/// The distributions, with their units.
pub(crate) const HISTOGRAMS: [&str; 4] = [
    "result_turnaround_s",
    "result_slack_s",
    "workunit_time_to_canonical_s",
    "workunit_time_to_assimilation_s",
];

/// A histogram with fixed-width bins from `lo`, and counts below and above the range.
#[derive(Clone, Debug, Default)]
pub struct Hist {
    pub lo: f64,
    pub width: f64,
    pub counts: Vec<u64>,
    pub below: u64,
    pub above: u64,
}

impl Hist {
    fn new(lo: f64, hi: f64, width: f64) -> Self {
        let n = ((hi - lo) / width).ceil().max(1.0) as usize;
        Hist {
            lo,
            width,
            counts: vec![0; n],
            below: 0,
            above: 0,
        }
    }

    pub fn add(&mut self, x: f64) {
        if x < self.lo {
            self.below += 1;
            return;
        }
        let k = ((x - self.lo) / self.width).floor() as usize;
        match self.counts.get_mut(k) {
            Some(c) => *c += 1,
            None => self.above += 1,
        }
    }

    pub fn total(&self) -> u64 {
        self.below + self.above + self.counts.iter().sum::<u64>()
    }

    /// The `q`-quantile (0..=1), to within one bin: the upper edge of the bin where
    /// the cumulative count reaches `q·n`. `None` without samples.
    pub(crate) fn quantile(&self, q: f64) -> Option<f64> {
        let n = self.total();
        if n == 0 {
            return None;
        }
        let target = ((q * n as f64).ceil() as u64).max(1);
        let mut cum = self.below;
        if cum >= target {
            return Some(self.lo);
        }
        for (k, c) in self.counts.iter().enumerate() {
            cum += c;
            if cum >= target {
                return Some(self.lo + (k + 1) as f64 * self.width);
            }
        }
        Some(f64::INFINITY)
    }
}

/// Per-project series and histograms.
#[derive(Clone, Debug, Default)]
pub struct ProjectMetrics {
    pub interval: Time,
    pub buckets: Vec<[f64; SERIES.len()]>,
    /// Gauges sampled at the start of each bucket (index = bucket).
    pub samples: Vec<[f64; GAUGES.len()]>,
    pub hists: Vec<Hist>,
    /// The science error figures, by the same buckets.
    pub science: super::science::Science,
}

impl ProjectMetrics {
    /// Buckets of `interval` seconds; histograms of `bin` seconds covering up to
    /// `span` (turnaround, and the workunit latencies) and ±`span` (slack).
    pub fn new(interval: Time, bin: Time, span: Time) -> Self {
        let (b, s) = (bin.max(1) as f64, span.max(1) as f64);
        ProjectMetrics {
            interval: interval.max(1),
            buckets: Vec::new(),
            samples: Vec::new(),
            science: super::science::Science::new(interval.max(1)),
            hists: vec![
                Hist::new(0.0, s, b),
                Hist::new(-s, s, b),
                Hist::new(0.0, s, b),
                Hist::new(0.0, s, b),
            ],
        }
    }

    /// Collects nothing: every update returns at once (`bench --no-metrics`).
    pub fn off() -> Self {
        ProjectMetrics::default()
    }

    fn bump(&mut self, t: Time, metric: usize, v: f64) {
        if t < 0 || self.interval <= 0 {
            return;
        }
        let k = (t / self.interval) as usize;
        if self.buckets.len() <= k {
            self.buckets.resize(k + 1, [0.0; SERIES.len()]);
        }
        self.buckets[k][metric] += v;
    }

    /// Records the gauges of bucket `k` (sampled at `k·interval`).
    pub fn sample(&mut self, k: usize, g: [f64; GAUGES.len()]) {
        if self.samples.len() <= k {
            self.samples.resize(k + 1, [0.0; GAUGES.len()]);
        }
        self.samples[k] = g;
    }

    fn hist(&mut self, i: usize, x: f64) {
        if let Some(h) = self.hists.get_mut(i) {
            h.add(x);
        }
    }

    pub(crate) fn add_workunit(&mut self, wu: &WorkunitRow) {
        self.science.add_workunit(wu);
        self.bump(wu.create_time.into(), WU_CREATED, 1.0);
        if wu.canonical_resultid != ResultId(0) {
            self.bump(wu.canonical_found_time.into(), WU_CANONICAL, 1.0);
            self.hist(2, (wu.canonical_found_time - wu.create_time) as f64);
        }
        if wu.assimilate_state == AssimilateState::Done && wu.assimilated_time != 0 {
            let m = if is_valid_work(wu) {
                WU_ASSIM_VALID
            } else {
                WU_ASSIM_ERROR
            };
            self.bump(wu.assimilated_time.into(), m, 1.0);
            self.hist(3, (wu.assimilated_time - wu.create_time) as f64);
        }
    }

    pub(crate) fn add_result(&mut self, r: &ResultRow) {
        self.science.add_result(r);
        if r.sent_time != 0 {
            self.bump(r.sent_time, R_SENT, 1.0);
        }
        if is_reported(r) {
            let t = r.received_time;
            self.bump(t, R_REPORTED, 1.0);
            self.bump(t, CPU_REPORTED, r.cpu_time);
            self.bump(t, CREDIT, r.granted_credit);
            let met = t <= r.report_deadline;
            self.bump(t, if met { R_MET } else { R_MISSED }, 1.0);
            if r.validate_state == ValidateState::TooLate {
                self.bump(t, R_TOO_LATE, 1.0);
            }
            match usefulness(r) {
                Usefulness::Useful => self.bump(t, FLOPS_USEFUL, flops(r)),
                Usefulness::Wasted => {
                    self.bump(t, FLOPS_WASTED, flops(r));
                    self.bump(t, CPU_WASTED, r.cpu_time);
                }
                Usefulness::Pending => {}
            }
            self.hist(0, (t - r.sent_time) as f64);
            self.hist(1, (r.report_deadline - t) as f64);
        } else if r.outcome == Outcome::NoReply {
            self.bump(r.report_deadline, R_NO_REPLY, 1.0);
        }
    }

    /// A scheduler RPC at `now`: reached an up server, or failed (outage).
    pub(crate) fn note_rpc(&mut self, now: Time, reached: bool) {
        let m = if reached { SCHED_REQUESTS } else { RPCS_FAILED };
        self.bump(now, m, 1.0);
    }

    /// `n` project backoffs started at `now`, `secs` long in total.
    pub(crate) fn note_backoffs(&mut self, now: Time, n: u32, secs: f64) {
        self.bump(now, BACKOFFS, n as f64);
        self.bump(now, BACKOFF_S, secs);
    }

    /// The total of one series over the run.
    pub fn total(&self, metric: usize) -> f64 {
        self.buckets.iter().map(|b| b[metric]).sum()
    }
}

/// Whether a reported result's computation served the project.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Usefulness {
    /// Validated (`VALID`): its work counted towards a canonical result, whether it
    /// became the canonical one or completed the quorum.
    Useful,
    /// An error, invalid, too late, or never checked because its workunit failed
    /// (`NO_CHECK`): the CPU was spent for nothing.
    Wasted,
    /// Still waiting for validation when the run ended (`INIT`, `INCONCLUSIVE`).
    Pending,
}

pub(crate) fn usefulness(r: &ResultRow) -> Usefulness {
    if r.outcome != Outcome::Success {
        return Usefulness::Wasted;
    }
    match r.validate_state {
        ValidateState::Valid => Usefulness::Useful,
        ValidateState::Init | ValidateState::Inconclusive => Usefulness::Pending,
        ValidateState::Invalid | ValidateState::TooLate | ValidateState::NoCheck => {
            Usefulness::Wasted
        }
    }
}

/// FLOPs a reported result cost: its CPU time at the speed the scheduler recorded
/// for the host (`flops_estimate`, the host's `p_fpops` with one CPU app version).
pub fn flops(r: &ResultRow) -> f64 {
    r.cpu_time * r.flops_estimate
}

/// Writes `timeseries.csv` (`time_s,project,metric,value`: every bucket of every
/// project and metric up to `end`, zeros included) and `histograms.csv`
/// (`project,metric,bin_lower,bin_upper,count`, non-empty bins only; the unit is the
/// metric's suffix; out-of-range counts have an empty bound).
pub fn write(dir: &Path, names: &[&str], metrics: &[&ProjectMetrics], end: Time) -> io::Result<()> {
    let mut w = csv::Writer::from_path(dir.join(TIMESERIES_CSV))?;
    w.write_record(["time_s", "project", "metric", "value"])?;
    for (name, m) in names.iter().zip(metrics) {
        let n = (end / m.interval + 1) as usize;
        let science = m.science.rows(n.max(m.buckets.len()));
        for k in 0..n.max(m.buckets.len()) {
            let t = (k as Time * m.interval).to_string();
            let row = m.buckets.get(k).copied().unwrap_or([0.0; SERIES.len()]);
            for (metric, v) in SERIES.iter().zip(row) {
                w.write_record([t.as_str(), name, metric, &format!("{v:?}")])?;
            }
            let sci = science.get(k).copied().unwrap_or_default();
            for (metric, v) in super::science::SERIES.iter().zip(sci) {
                w.write_record([t.as_str(), name, metric, &format!("{v:?}")])?;
            }
            let g = m.samples.get(k).copied().unwrap_or([0.0; GAUGES.len()]);
            for (metric, v) in GAUGES.iter().zip(g) {
                w.write_record([t.as_str(), name, metric, &format!("{v:?}")])?;
            }
        }
    }
    w.flush()?;
    let mut w = csv::Writer::from_path(dir.join(HISTOGRAMS_CSV))?;
    w.write_record(["project", "metric", "bin_lower", "bin_upper", "count"])?;
    for (name, m) in names.iter().zip(metrics) {
        for (metric, h) in HISTOGRAMS.iter().zip(&m.hists) {
            if h.below > 0 {
                w.write_record([
                    *name,
                    metric,
                    "",
                    &format!("{:?}", h.lo),
                    &h.below.to_string(),
                ])?;
            }
            for (k, c) in h.counts.iter().enumerate().filter(|(_, c)| **c > 0) {
                let lo = h.lo + k as f64 * h.width;
                w.write_record([
                    *name,
                    metric,
                    &format!("{lo:?}"),
                    &format!("{:?}", lo + h.width),
                    &c.to_string(),
                ])?;
            }
            if h.above > 0 {
                let hi = h.lo + h.counts.len() as f64 * h.width;
                w.write_record([*name, metric, &format!("{hi:?}"), "", &h.above.to_string()])?;
            }
        }
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_bins_and_quantiles() {
        let mut h = Hist::new(0.0, 100.0, 10.0);
        for x in [5.0, 15.0, 15.0, 95.0, 150.0, -1.0] {
            h.add(x);
        }
        assert_eq!(h.counts[0], 1);
        assert_eq!(h.counts[1], 2);
        assert_eq!(h.counts[9], 1);
        assert_eq!((h.below, h.above, h.total()), (1, 1, 6));
        assert_eq!(h.quantile(0.5), Some(20.0));
        assert_eq!(h.quantile(1.0), Some(f64::INFINITY));
        assert_eq!(Hist::new(0.0, 1.0, 1.0).quantile(0.5), None);
    }

    #[test]
    fn results_land_in_the_bucket_of_their_own_times() {
        let mut m = ProjectMetrics::new(3600, 60, 86_400);
        let mut r = ResultRow::new(WuId(1), 0, 0, 0, 0, ServerState::Over);
        r.sent_time = 100;
        r.received_time = 7300;
        r.report_deadline = 7200;
        r.outcome = Outcome::Success;
        r.cpu_time = 5000.0;
        r.granted_credit = 2.0;
        m.add_result(&r);
        r.outcome = Outcome::NoReply;
        r.received_time = 0;
        m.add_result(&r);
        assert_eq!(m.buckets[0][R_SENT], 2.0);
        assert_eq!(m.buckets[2][R_REPORTED], 1.0);
        assert_eq!(m.buckets[2][R_MISSED], 1.0);
        assert_eq!(m.buckets[2][R_NO_REPLY], 1.0);
        assert_eq!(m.buckets[2][CPU_REPORTED], 5000.0);
        assert_eq!(m.hists[0].counts[(7200 / 60) as usize], 1);
        assert_eq!(m.hists[1].below + m.hists[1].counts.iter().sum::<u64>(), 1);
    }
}
