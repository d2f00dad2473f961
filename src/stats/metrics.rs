//! Time series and distributions of a run, per project: `timeseries.csv` and
//! `histograms.csv`.
//!
//! Every figure is taken from a row's own timestamps when the row is final (purged,
//! or live at the end of the run), the same moment [`super::tally::Tally`] counts
//! it. So the series cost nothing per event, and recomputing them from
//! `workunits.csv` and `results.csv` gives the same numbers: a result reported at
//! `received_time_s = t` is in the bucket `floor(t / interval)`.

use super::window::{is_reported, is_valid_work};
use crate::client::files::XferTimes;
use crate::engine::Time;
use crate::server::db::{ResultRow, WorkunitRow};
use crate::server::types::*;
use std::io;
use std::path::Path;

pub use super::hist::Hist;

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

/// The gauges of a project's servers under load, written after [`GAUGES`] only for
/// a project that reports its server load (a `[[project.NAME.daemon_outage]]`;
/// `server::ProjectConfig::reports_server_load`), so that no other project's rows
/// change: the transitioner's backlog (workunits with `transition_time` at or
/// before the sample), the occupied slots of the feeder's job cache, and how many
/// of the seven periodic daemons are down.
pub(crate) const LOAD_GAUGES: [&str; 3] = [
    "backlog_transitioner_workunits",
    "job_cache_fill",
    "daemons_down",
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

/// The series of a run with files, written after the gauges: the bytes the
/// project's data server carried during the bucket in each direction, and that
/// traffic over what its link could carry (spec client §8.5).
pub(crate) const NETWORK: [&str; 4] = ["bytes_down", "bytes_up", "link_util_down", "link_util_up"];

/// The distributions of a run with files, after the others in `histograms.csv`: a
/// reported result's download time (arrival on the host to runnable) and upload
/// time (end of computing to its output on the server), spec client §8.1.
pub(crate) const TRANSFER_HISTOGRAMS: [&str; 2] = ["result_download_s", "result_upload_s"];

/// The series of a project whose data server limits its connections
/// (`max_connections`, spec client §8.5), after [`NETWORK`]: the connections open
/// at the bucket's start, and the transfers refused during the bucket because all
/// were taken.
pub(crate) const CONNECTION_SERIES: [&str; 2] = ["data_connections", "transfers_refused"];

/// The data server of a project at the start of a bucket (cumulative since t = 0).
pub use crate::world::DataServerSample as ServerSample;

/// A project's transfer figures (spec client §8): kept only in a run with files.
#[derive(Clone, Debug, Default)]
pub struct Transfers {
    /// Reported results whose jobs had files.
    pub results: u64,
    /// Download times and upload times ([`TRANSFER_HISTOGRAMS`]), in seconds.
    pub hists: [Hist; 2],
    /// Their sums and counts, for exact means.
    pub sums: [f64; 2],
    pub counts: [u64; 2],
    /// The data server at the start of each bucket (index = bucket); `None` for a
    /// bucket without a sample.
    pub server: Vec<Option<ServerSample>>,
}

impl Transfers {
    fn add(&mut self, x: &XferTimes) {
        self.results += 1;
        let down = x.download_end.map(|e| e - x.received);
        let up = match (x.completed, x.upload_end) {
            (Some(c), Some(e)) => Some(e - c),
            _ => None,
        };
        for (i, v) in [down, up].into_iter().enumerate() {
            if let Some(v) = v {
                self.hists[i].add(v as f64);
                self.sums[i] += v as f64;
                self.counts[i] += 1;
            }
        }
    }

    /// Mean download time (`i` = 0) or upload time (1), s; none without results.
    pub(crate) fn mean(&self, i: usize) -> Option<f64> {
        (self.counts[i] > 0).then(|| self.sums[i] / self.counts[i] as f64)
    }

    /// Bytes carried in direction `i` (0 down, 1 up) during bucket `k` of
    /// `interval` seconds in a run ending at `end`: the cumulative count at the next
    /// bucket's sample minus the one at this bucket's (both taken after every event
    /// of their second), so the bucket covers `(k·interval, (k+1)·interval]`, the
    /// first one from 0 itself. A bucket starting at or after the end carries
    /// nothing; one whose end has no sample (the run ends inside it) is unknown.
    pub(crate) fn bucket_bytes(
        &self,
        k: usize,
        i: usize,
        interval: Time,
        end: Time,
    ) -> Option<f64> {
        if k as Time * interval >= end {
            return Some(0.0);
        }
        let at = |k: usize| self.server.get(k).copied().flatten().map(|s| s.bytes[i]);
        let before = if k == 0 { 0.0 } else { at(k)? };
        Some(at(k + 1)? - before)
    }

    /// The bucket's traffic over what the link could carry in it: bytes /
    /// (capacity × `interval`), with the capacity at the bucket's start; none when
    /// the link is unlimited or the bytes unknown.
    pub(crate) fn bucket_util(&self, k: usize, i: usize, interval: Time, end: Time) -> Option<f64> {
        let cap = self.server.get(k).copied().flatten()?.cap[i];
        let bytes = self.bucket_bytes(k, i, interval, end)?;
        (cap.is_finite() && cap > 0.0).then(|| bytes / (cap * interval as f64))
    }

    /// The bucket's [`CONNECTION_SERIES`] values, for a data server with
    /// `max_connections` (none otherwise): the connections open at its start, and
    /// the transfers refused during it, as its bytes (`(k·interval,
    /// (k+1)·interval]`; unknown without a closing sample).
    pub(crate) fn bucket_connections(&self, k: usize) -> Option<[Option<f64>; 2]> {
        let at = |k: usize| self.server.get(k).copied().flatten()?.connections;
        let a = at(k)?;
        let refused = at(k + 1).map(|b| (b.refused - a.refused) as f64);
        Some([Some(a.open as f64), refused])
    }

    /// Over the buckets [`Self::totals`] covers: the data server's
    /// `max_connections`, the share of that time all were taken, and the transfers
    /// refused. `None` for a server without the limit or without a closed bucket.
    pub(crate) fn connections(&self, interval: Time) -> Option<(u32, f64, u64)> {
        let last = self.server.iter().rposition(Option::is_some)?;
        let c = self.server[last]?.connections?;
        (last > 0).then(|| {
            (
                c.max,
                c.full_s / (last as Time * interval) as f64,
                c.refused,
            )
        })
    }

    /// The bucket's [`NETWORK`] values.
    pub(crate) fn bucket(&self, k: usize, interval: Time, end: Time) -> [Option<f64>; 4] {
        [
            self.bucket_bytes(k, 0, interval, end),
            self.bucket_bytes(k, 1, interval, end),
            self.bucket_util(k, 0, interval, end),
            self.bucket_util(k, 1, interval, end),
        ]
    }

    /// Over the buckets that are closed by a sample (the whole run when its length
    /// is a multiple of `interval`): total bytes in direction `i`, and their
    /// utilisation of the link (total bytes over Σ capacity × `interval`; none if the
    /// link was unlimited in any of them). `None` without any closed bucket.
    pub(crate) fn totals(&self, i: usize, interval: Time) -> Option<(f64, Option<f64>)> {
        let last = self.server.iter().rposition(Option::is_some)?;
        let bytes = self.server[last]?.bytes[i];
        let mut capacity = 0.0;
        for k in 0..last {
            let cap = self.server[k].map_or(f64::INFINITY, |s| s.cap[i]);
            capacity += cap * interval as f64;
        }
        let util = (capacity.is_finite() && capacity > 0.0).then(|| bytes / capacity);
        Some((bytes, util))
    }

    /// Over the buckets [`Self::totals`] covers, how saturated the link in direction
    /// `i` was, where the average hides it: the share of their time the link carried
    /// at least 95 % of its capacity (exact, from the flow model's busy seconds), and
    /// the 90th percentile of the buckets' utilisations (nearest rank, as
    /// `timeseries.csv`'s `link_util_*`). `None` without a closed bucket or when the
    /// link was unlimited in any of them.
    pub(crate) fn saturation(&self, i: usize, interval: Time) -> Option<(f64, f64)> {
        let last = self.server.iter().rposition(Option::is_some)?;
        if last == 0 {
            return None;
        }
        let mut utils = Vec::with_capacity(last);
        for k in 0..last {
            utils.push(self.bucket_util(k, i, interval, Time::MAX)?);
        }
        utils.sort_by(f64::total_cmp);
        let p90 = rank_quantile(&utils, 0.9)?;
        let busy = self.server[last]?.busy[i] / (last as Time * interval) as f64;
        Some((busy, p90))
    }
}

/// Nearest-rank `q`-quantile of values sorted ascending (the headline figures'
/// percentiles of values, as `credit_per_host_p90_credit` and `link_util_*_p90`).
pub(crate) fn rank_quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let k = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    Some(sorted[k - 1])
}

/// Per-project series and histograms.
#[derive(Clone, Debug, Default)]
pub struct ProjectMetrics {
    pub interval: Time,
    pub buckets: Vec<[f64; SERIES.len()]>,
    /// Gauges sampled at the start of each bucket (index = bucket).
    pub samples: Vec<[f64; GAUGES.len()]>,
    /// The [`LOAD_GAUGES`] of each bucket, for a project that reports its server
    /// load (`None` for every other, whose rows stay as they were).
    pub load: Option<Vec<[f64; LOAD_GAUGES.len()]>>,
    pub hists: Vec<Hist>,
    /// The science error figures, by the same buckets.
    pub science: super::science::Science,
    /// The file transfers' figures, in a run with files only (spec client §8):
    /// `None` keeps every file of a run without them as it was.
    pub transfers: Option<Box<Transfers>>,
    /// The scheduler's load, for a project with a web server only (spec backend
    /// §2.4.0): `None` keeps every file of a run without one as it was.
    pub scheduler: Option<Box<super::scheduler_load::SchedulerLoad>>,
    /// `[output] warmup`: the start of the measured window. The histograms take only
    /// values timed at or after it, and what every series counted before it is also
    /// summed in `before`, so a figure of the window is its series' total minus that
    /// ([`Self::window_total`]): with no warm-up, the very same number as the run's.
    pub warmup: Time,
    pub before: [f64; SERIES.len()],
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
            load: None,
            science: super::science::Science::new(interval.max(1)),
            transfers: None,
            scheduler: None,
            warmup: 0,
            before: [0.0; SERIES.len()],
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

    /// The measured window starts at `warmup` (`[output] warmup`, `super::window`).
    pub(crate) fn set_warmup(&mut self, warmup: Time) {
        self.warmup = warmup;
        self.science.set_warmup(warmup);
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
        if t < self.warmup {
            self.before[metric] += v;
        }
    }

    /// A value for a histogram, timed at `t`: kept only in the measured window, so
    /// the percentiles of `summary.csv` and `histograms.csv` describe it.
    fn hist_at(&mut self, t: Time, i: usize, x: f64) {
        if t >= self.warmup {
            self.hist(i, x);
        }
    }

    /// Records the gauges of bucket `k` (sampled at `k·interval`).
    pub fn sample(&mut self, k: usize, g: [f64; GAUGES.len()]) {
        if self.samples.len() <= k {
            self.samples.resize(k + 1, [0.0; GAUGES.len()]);
        }
        self.samples[k] = g;
    }

    /// Records the [`LOAD_GAUGES`] of bucket `k`; from the first, the project's
    /// `timeseries.csv` has their rows. Nothing under [`Self::off`].
    pub(crate) fn server_load(&mut self, k: usize, g: [f64; LOAD_GAUGES.len()]) {
        if self.interval <= 0 {
            return;
        }
        let load = self.load.get_or_insert_with(Vec::new);
        if load.len() <= k {
            load.resize(k + 1, [0.0; LOAD_GAUGES.len()]);
        }
        load[k] = g;
    }

    fn hist(&mut self, i: usize, x: f64) {
        if let Some(h) = self.hists.get_mut(i) {
            h.add(x);
        }
    }

    /// The run has files: collect the transfer figures from now on, with histograms
    /// of the same bins as `result_turnaround_s`. Nothing under
    /// [`Self::off`] (`bench --no-metrics`).
    pub(crate) fn enable_transfers(&mut self) {
        if self.transfers.is_some() || self.interval <= 0 {
            return;
        }
        let Some(h) = self.hists.first() else {
            return;
        };
        let hist = Hist::new(h.lo, h.lo + h.counts.len() as f64 * h.width, h.width);
        self.transfers = Some(Box::new(Transfers {
            hists: [hist.clone(), hist],
            ..Transfers::default()
        }));
    }

    /// The project has a web server with `processes` scheduler processes: collect
    /// its figures from now on. Nothing under [`Self::off`].
    pub(crate) fn enable_scheduler(&mut self, processes: u32) {
        if self.scheduler.is_none() && self.interval > 0 {
            self.scheduler = Some(Box::new(super::scheduler_load::SchedulerLoad::new(
                processes,
                self.interval,
                self.warmup,
            )));
        }
    }

    /// A result reported with files (spec client §8.1): its transfer times.
    pub(crate) fn add_transfers(&mut self, x: &XferTimes) {
        if let Some(t) = &mut self.transfers {
            t.add(x);
        }
    }

    /// The data server at the start of bucket `k` (after every event of that
    /// second): its cumulative bytes `[down, up]`, capacities and connections.
    pub(crate) fn data_server(&mut self, k: usize, sample: ServerSample) {
        if let Some(t) = &mut self.transfers {
            if t.server.len() <= k {
                t.server.resize(k + 1, None);
            }
            t.server[k] = Some(sample);
        }
    }

    pub(crate) fn add_workunit(&mut self, wu: &WorkunitRow) {
        self.science.add_workunit(wu);
        self.bump(wu.create_time.into(), WU_CREATED, 1.0);
        if wu.canonical_resultid != ResultId(0) {
            let t: Time = wu.canonical_found_time.into();
            self.bump(t, WU_CANONICAL, 1.0);
            self.hist_at(t, 2, (wu.canonical_found_time - wu.create_time) as f64);
        }
        if wu.assimilate_state == AssimilateState::Done && wu.assimilated_time != 0 {
            let m = if is_valid_work(wu) {
                WU_ASSIM_VALID
            } else {
                WU_ASSIM_ERROR
            };
            let t: Time = wu.assimilated_time.into();
            self.bump(t, m, 1.0);
            self.hist_at(t, 3, (wu.assimilated_time - wu.create_time) as f64);
        }
    }

    pub(crate) fn add_result(&mut self, r: &ResultRow) {
        self.science.add_result(r);
        if r.sent_time != 0 {
            self.bump(r.sent_time.into(), R_SENT, 1.0);
        }
        if is_reported(r) {
            let t = Time::from(r.received_time);
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
            self.hist_at(t, 0, (t - Time::from(r.sent_time)) as f64);
            self.hist_at(t, 1, (r.report_deadline - t) as f64);
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

    /// The total of one series over the measured window (timed at or after the
    /// warm-up): the run's total minus what came before, exactly the run's total
    /// when there is no warm-up.
    pub fn window_total(&self, metric: usize) -> f64 {
        self.total(metric) - self.before[metric]
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
                let v = v.map_or(String::new(), |v| format!("{v:?}"));
                w.write_record([t.as_str(), name, metric, &v])?;
            }
            let g = m.samples.get(k).copied().unwrap_or([0.0; GAUGES.len()]);
            for (metric, v) in GAUGES.iter().zip(g) {
                w.write_record([t.as_str(), name, metric, &format!("{v:?}")])?;
            }
            if let Some(load) = &m.load {
                let g = load.get(k).copied().unwrap_or([0.0; LOAD_GAUGES.len()]);
                for (metric, v) in LOAD_GAUGES.iter().zip(g) {
                    w.write_record([t.as_str(), name, metric, &format!("{v:?}")])?;
                }
            }
            if let Some(x) = &m.transfers {
                for (metric, v) in NETWORK.iter().zip(x.bucket(k, m.interval, end)) {
                    let v = v.map_or(String::new(), |v| format!("{v:?}"));
                    w.write_record([t.as_str(), name, metric, &v])?;
                }
                if let Some(c) = x.bucket_connections(k) {
                    for (metric, v) in CONNECTION_SERIES.iter().zip(c) {
                        let v = v.map_or(String::new(), |v| format!("{v:?}"));
                        w.write_record([t.as_str(), name, metric, &v])?;
                    }
                }
            }
            if let Some(x) = &m.scheduler {
                let series = super::scheduler_load::SERIES;
                for (metric, v) in series.iter().zip(x.bucket(k)) {
                    let v = v.map_or(String::new(), |v| format!("{v:?}"));
                    w.write_record([t.as_str(), name, metric, &v])?;
                }
            }
        }
    }
    w.flush()?;
    let mut w = csv::Writer::from_path(dir.join(HISTOGRAMS_CSV))?;
    w.write_record(["project", "metric", "bin_lower", "bin_upper", "count"])?;
    for (name, m) in names.iter().zip(metrics) {
        let transfers = m
            .transfers
            .iter()
            .flat_map(|x| TRANSFER_HISTOGRAMS.iter().zip(&x.hists));
        for (metric, h) in HISTOGRAMS.iter().zip(&m.hists).chain(transfers) {
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

    /// A result that downloaded 300 s and uploaded 600 s, and one whose upload
    /// never ended.
    fn two_transfers() -> [XferTimes; 2] {
        let a = XferTimes {
            received: 100,
            download_start: Some(110),
            download_end: Some(400),
            completed: Some(5000),
            upload_start: Some(5010),
            upload_end: Some(5600),
            download_bytes: 2e6,
            upload_bytes: 1e5,
        };
        let b = XferTimes {
            received: 200,
            download_start: Some(200),
            download_end: Some(290),
            completed: Some(3000),
            ..XferTimes::default()
        };
        [a, b]
    }

    /// Data-server samples at the start of buckets 0–3 of an hour in a 3-hour run:
    /// 1000 bytes down at t = 0 itself, then 17000, 9000, 3600 in the buckets; a
    /// 10 B/s download link and an unlimited upload link.
    fn with_server(m: &mut ProjectMetrics) {
        let cap = [10.0, f64::INFINITY];
        for (k, bytes) in [
            [1000.0, 0.0],
            [18_000.0, 500.0],
            [27_000.0, 500.0],
            [30_600.0, 500.0],
        ]
        .into_iter()
        .enumerate()
        {
            m.data_server(
                k,
                ServerSample {
                    bytes,
                    busy: [0.0; 2],
                    cap,
                    connections: None,
                },
            );
        }
    }

    #[test]
    fn transfers_are_collected_only_when_enabled() {
        let mut m = ProjectMetrics::new(3600, 60, 86_400);
        m.add_transfers(&two_transfers()[0]);
        with_server(&mut m);
        assert!(m.transfers.is_none());
        let mut off = ProjectMetrics::off();
        off.enable_transfers();
        assert!(
            off.transfers.is_none(),
            "bench --no-metrics collects nothing"
        );
    }

    #[test]
    fn transfer_times_are_tallied_like_the_turnaround() {
        let mut m = ProjectMetrics::new(3600, 60, 86_400);
        m.enable_transfers();
        for x in two_transfers() {
            m.add_transfers(&x);
        }
        let x = m.transfers.as_deref().unwrap();
        assert_eq!(x.results, 2);
        // Downloads: 300 s and 90 s; uploads: only the first one's 600 s.
        assert_eq!((x.counts, x.sums), ([2, 1], [390.0, 600.0]));
        assert_eq!((x.mean(0), x.mean(1)), (Some(195.0), Some(600.0)));
        assert_eq!(x.hists[0].counts[300 / 60], 1);
        assert_eq!(x.hists[0].counts[1], 1);
        assert_eq!(x.hists[1].counts[600 / 60], 1);
        // The upper edge of the bin, as turnaround_p50_s.
        assert_eq!(x.hists[0].quantile(0.5), Some(120.0));
        assert_eq!(x.hists[0].quantile(0.99), Some(360.0));
        assert_eq!(x.hists[0].width, 60.0);
        assert_eq!(x.hists[0].counts.len(), 86_400 / 60);
    }

    #[test]
    fn bucket_bytes_are_differences_of_the_samples() {
        let mut m = ProjectMetrics::new(3600, 60, 86_400);
        m.enable_transfers();
        with_server(&mut m);
        let x = m.transfers.as_deref().unwrap();
        let end = 3 * 3600;
        // Bucket 0 counts from 0 itself: the 1000 bytes carried at t = 0 are in it.
        assert_eq!(
            x.bucket(0, 3600, end),
            [Some(18_000.0), Some(500.0), Some(0.5), None]
        );
        assert_eq!(
            x.bucket(1, 3600, end),
            [Some(9000.0), Some(0.0), Some(0.25), None]
        );
        assert_eq!(
            x.bucket(2, 3600, end),
            [Some(3600.0), Some(0.0), Some(0.1), None]
        );
        // The bucket at the end itself carries nothing.
        assert_eq!(
            x.bucket(3, 3600, end),
            [Some(0.0), Some(0.0), Some(0.0), None]
        );
        // A run ending inside bucket 2 (no sample closes it): unknown.
        let mut cut = x.clone();
        cut.server.truncate(3);
        assert_eq!(cut.bucket(2, 3600, end - 1), [None, None, None, None]);
        // Totals over the closed buckets: the last sample, and its share of the
        // download link over three hours.
        assert_eq!(
            x.totals(0, 3600),
            Some((30_600.0, Some(30_600.0 / 108_000.0)))
        );
        assert_eq!(x.totals(1, 3600), Some((500.0, None)));
        // Saturation: the buckets' utilisations are 18000/36000 (the bytes at 0
        // itself count in the first), 9000/36000 and 3600/36000, the 90th percentile
        // by nearest rank the largest of three; with
        // the busy seconds of the last sample, 2 h of 3 h at 95 % or more.
        let mut busy = x.clone();
        busy.server[3].as_mut().unwrap().busy = [7200.0, 0.0];
        assert_eq!(busy.saturation(0, 3600), Some((2.0 / 3.0, 0.5)));
        assert_eq!(busy.saturation(1, 3600), None, "an unlimited link");
        assert_eq!(cut.saturation(0, 3600).map(|s| s.1), Some(0.5));
    }

    fn lines(path: &Path) -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(String::from)
            .collect()
    }

    #[test]
    fn network_series_and_transfer_histograms_only_with_files() {
        let tmp = tempfile::tempdir().unwrap();
        let mut plain = ProjectMetrics::new(3600, 60, 3 * 3600);
        plain.add_transfers(&two_transfers()[0]);
        with_server(&mut plain);
        write(tmp.path(), &["p"], &[&plain], 3 * 3600).unwrap();
        let ts = lines(&tmp.path().join(TIMESERIES_CSV));
        let per_bucket = SERIES.len() + super::super::science::SERIES.len() + GAUGES.len();
        assert_eq!(ts.len(), 1 + 4 * per_bucket);
        assert!(
            !ts.iter()
                .any(|l| l.contains("bytes_") || l.contains("link_util"))
        );
        let hs = lines(&tmp.path().join(HISTOGRAMS_CSV));
        assert!(!hs.iter().any(|l| l.contains("result_download_s")));

        let mut m = ProjectMetrics::new(3600, 60, 3 * 3600);
        m.enable_transfers();
        for x in two_transfers() {
            m.add_transfers(&x);
        }
        with_server(&mut m);
        write(tmp.path(), &["p"], &[&m], 3 * 3600).unwrap();
        let ts = lines(&tmp.path().join(TIMESERIES_CSV));
        assert_eq!(ts.len(), 1 + 4 * (per_bucket + NETWORK.len()));
        let network: Vec<&str> = ts
            .iter()
            .filter(|l| NETWORK.iter().any(|n| l.contains(n)))
            .map(String::as_str)
            .collect();
        assert_eq!(
            network,
            [
                "0,p,bytes_down,18000.0",
                "0,p,bytes_up,500.0",
                "0,p,link_util_down,0.5",
                "0,p,link_util_up,",
                "3600,p,bytes_down,9000.0",
                "3600,p,bytes_up,0.0",
                "3600,p,link_util_down,0.25",
                "3600,p,link_util_up,",
                "7200,p,bytes_down,3600.0",
                "7200,p,bytes_up,0.0",
                "7200,p,link_util_down,0.1",
                "7200,p,link_util_up,",
                "10800,p,bytes_down,0.0",
                "10800,p,bytes_up,0.0",
                "10800,p,link_util_down,0.0",
                "10800,p,link_util_up,",
            ]
        );
        // The network rows follow each bucket's gauges.
        let first = ts.iter().position(|l| l.contains("bytes_down")).unwrap();
        assert!(ts[first - 1].contains("backlog_db_purge_workunits"));
        let hs = lines(&tmp.path().join(HISTOGRAMS_CSV));
        let transfer: Vec<&str> = hs
            .iter()
            .filter(|l| l.contains("result_download_s") || l.contains("result_upload_s"))
            .map(String::as_str)
            .collect();
        assert_eq!(
            transfer,
            [
                "p,result_download_s,60.0,120.0,1",
                "p,result_download_s,300.0,360.0,1",
                "p,result_upload_s,600.0,660.0,1",
            ]
        );
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
