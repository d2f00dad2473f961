//! Time series and distributions of a run, per project: `timeseries.csv` and
//! `histograms.csv`.
//!
//! Every figure is taken from a row's own timestamps when the row is final (purged,
//! or live at the end of the run), the same moment [`super::summary::Tally`] counts
//! it. So the series cost nothing per event, and recomputing them from
//! `workunits.csv` and `results.csv` gives the same numbers: a result reported at
//! `received_time_s = t` is in the bucket `floor(t / interval)`.

use crate::engine::Time;
use crate::server::db::{ResultRow, WorkunitRow};
use crate::server::types::*;
use std::io;
use std::path::Path;

pub const TIMESERIES_CSV: &str = "timeseries.csv";
pub const HISTOGRAMS_CSV: &str = "histograms.csv";

/// The series, in column order of the `metric` values (names carry their unit).
pub const SERIES: [&str; 11] = [
    "workunits_created",
    "workunits_canonical_found",
    "workunits_assimilated_valid",
    "workunits_assimilated_error",
    "results_sent",
    "results_reported",
    "results_deadline_met",
    "results_deadline_missed",
    "results_no_reply",
    "cpu_time_reported_s",
    "credit_granted_credit",
];
const WU_CREATED: usize = 0;
const WU_CANONICAL: usize = 1;
const WU_ASSIM_VALID: usize = 2;
const WU_ASSIM_ERROR: usize = 3;
const R_SENT: usize = 4;
const R_REPORTED: usize = 5;
const R_MET: usize = 6;
const R_MISSED: usize = 7;
const R_NO_REPLY: usize = 8;
const CPU_REPORTED: usize = 9;
const CREDIT: usize = 10;

/// Instantaneous state of a project's server, sampled at the start of every bucket:
/// the database's size by state and the daemons' backlogs (work lists).
pub const GAUGES: [&str; 8] = [
    "db_workunits",
    "db_results_unsent",
    "db_results_in_progress",
    "db_results_over",
    "backlog_validator_workunits",
    "backlog_assimilator_workunits",
    "backlog_file_deleter_files",
    "backlog_db_purge_workunits",
];

/// The gauges of one project's database now, in [`GAUGES`] order; O(1).
pub fn gauges(db: &crate::server::db::Db) -> [f64; GAUGES.len()] {
    let c = &db.result_state_counts;
    [
        db.workunits_live as f64,
        c[ServerState::Unsent.code() as usize] as f64,
        c[ServerState::InProgress.code() as usize] as f64,
        c[ServerState::Over.code() as usize] as f64,
        db.need_validate.len() as f64,
        db.assimilate_ready.len() as f64,
        (db.fd_ready_results.len() + db.fd_ready_wus.len()) as f64,
        db.purge_ready.len() as f64,
    ]
}

/// The distributions, with their units.
pub const HISTOGRAMS: [&str; 4] = [
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
    pub fn quantile(&self, q: f64) -> Option<f64> {
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
            hists: vec![
                Hist::new(0.0, s, b),
                Hist::new(-s, s, b),
                Hist::new(0.0, s, b),
                Hist::new(0.0, s, b),
            ],
        }
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

    pub fn add_workunit(&mut self, wu: &WorkunitRow) {
        self.bump(wu.create_time, WU_CREATED, 1.0);
        if wu.canonical_resultid != 0 {
            self.bump(wu.canonical_found_time, WU_CANONICAL, 1.0);
            self.hist(2, (wu.canonical_found_time - wu.create_time) as f64);
        }
        if wu.assimilate_state == AssimilateState::Done && wu.assimilated_time != 0 {
            let m = if wu.canonical_resultid != 0 {
                WU_ASSIM_VALID
            } else {
                WU_ASSIM_ERROR
            };
            self.bump(wu.assimilated_time, m, 1.0);
            self.hist(3, (wu.assimilated_time - wu.create_time) as f64);
        }
    }

    pub fn add_result(&mut self, r: &ResultRow) {
        if r.sent_time != 0 {
            self.bump(r.sent_time, R_SENT, 1.0);
        }
        let reported = r.received_time != 0
            && matches!(
                r.outcome,
                Outcome::Success | Outcome::ClientError | Outcome::ValidateError
            );
        if reported {
            self.bump(r.received_time, R_REPORTED, 1.0);
            self.bump(r.received_time, CPU_REPORTED, r.cpu_time);
            self.bump(r.received_time, CREDIT, r.granted_credit);
            let met = r.received_time <= r.report_deadline;
            self.bump(r.received_time, if met { R_MET } else { R_MISSED }, 1.0);
            self.hist(0, (r.received_time - r.sent_time) as f64);
            self.hist(1, (r.report_deadline - r.received_time) as f64);
        } else if r.outcome == Outcome::NoReply {
            self.bump(r.report_deadline, R_NO_REPLY, 1.0);
        }
    }
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
        for k in 0..n.max(m.buckets.len()) {
            let t = (k as Time * m.interval).to_string();
            let row = m.buckets.get(k).copied().unwrap_or([0.0; SERIES.len()]);
            for (metric, v) in SERIES.iter().zip(row) {
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
        let mut r = ResultRow::new(1, 0, 0, 0, 0, ServerState::Over);
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
