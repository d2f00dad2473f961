//! The names of a sweep's tables and of their columns (docs/sweep.md, "Output
//! folder"). `sweep::aggregate` writes `sweep.csv` and `sweep-summary.csv`; the sweep
//! charts read the summary back. Both name the columns through these constants, so
//! the writer and the reader cannot drift apart; they live here, beside the reader,
//! because the sweep names the charts and the charts never name the sweep.
//! Parameters and metrics are named by their own keys.

/// Every run of every point, one row each.
pub const SWEEP_CSV: &str = "sweep.csv";
/// Each point's statistics over its runs, one row per point.
pub const SUMMARY_CSV: &str = "sweep-summary.csv";

/// The point's number, 0-based in design order (both tables).
pub(crate) const POINT: &str = "point";
/// The point's case (`[[case]]`), by name: the first parameter column of a
/// sweep with cases (both tables, `design.json`, `best.json`).
pub const CASE: &str = "case";
/// The replication's number within its point (`sweep.csv`).
pub(crate) const REPLICATION: &str = "replication";
/// The run's seed (`sweep.csv`).
pub(crate) const SEED: &str = "seed";
/// The number of runs of the point (`sweep-summary.csv`).
pub(crate) const N: &str = "n";
/// The statistics of each metric over a point's runs, in column order
/// (`sweep-summary.csv`, `<metric>_<stat>`).
pub(crate) const MEAN: &str = "mean";
pub(crate) const SD: &str = "sd";
pub(crate) const CI95_LOW: &str = "ci95_low";
pub(crate) const CI95_HIGH: &str = "ci95_high";
pub(crate) const STATS: [&str; 4] = [MEAN, SD, CI95_LOW, CI95_HIGH];

/// The column of statistic `stat` of `metric`: `<metric>_<stat>`.
pub(crate) fn stat(metric: &str, stat: &str) -> String {
    format!("{metric}_{stat}")
}

/// The numeric column in seconds beside a duration parameter `key`: `<key>_s`.
pub fn seconds(key: &str) -> String {
    format!("{key}_s")
}
