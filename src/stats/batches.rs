//! Batches: when each batch a scientist submitted was done (docs/outputs.md,
//! "Batches"; spec backend §1.5).
//!
//! A scientist waits for the last job of a batch, so its figures are times from
//! its submission: to 50, 90, 99 and 100 % of its workunits assimilated with a
//! valid canonical result (the science in hand), with what the tail cost: results
//! sent again and CPU time wasted. They are tallied from each final row, as the
//! other figures are (the recorder keeps a [`BatchTally`] per project; this module
//! names no recorder, which names it), and read with the server's BATCH rows
//! at the end: `batches.csv`, `batch_progress.csv` and the batch columns of
//! `summary.csv` ([`BATCH_COLUMNS`]). A run without batches writes none of them.

use super::metrics::{Usefulness, usefulness};
use super::window::{Window, is_reported, is_valid_work};
use crate::engine::Time;
use crate::server::Project;
use crate::server::batch::BatchRow;
use crate::server::db::{ResultRow, WorkunitRow};
use crate::server::types::AssimilateState;
use std::io;
use std::path::Path;

pub(crate) const BATCHES_CSV: &str = "batches.csv";
pub(crate) const BATCH_PROGRESS_CSV: &str = "batch_progress.csv";

/// The shares of a batch's jobs whose times `batches.csv` gives, in percent.
pub const PERCENTS: [u32; 4] = [50, 90, 99, 100];

/// What the final rows of one batch add up to.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BatchAcc {
    /// `assimilated_time` of each workunit assimilated as valid work (a canonical
    /// result and no error bit), in the order the rows became final.
    pub valid_at: Vec<Time>,
    /// Workunits assimilated in error.
    pub jobs_error: u32,
    /// Results created for its workunits.
    pub results: u64,
    /// CPU time of its reported results, and of those whose work was wasted (as
    /// `cpu_time_wasted_s` of `summary.csv`).
    pub cpu_time: f64,
    pub cpu_wasted: f64,
}

/// A project's batch accumulators, batch `id` at index `id − 1`.
#[derive(Clone, Debug, Default)]
pub struct BatchTally {
    accs: Vec<BatchAcc>,
}

impl BatchTally {
    fn acc(&mut self, batch: u32) -> &mut BatchAcc {
        let k = batch as usize - 1;
        if self.accs.len() <= k {
            self.accs.resize(k + 1, BatchAcc::default());
        }
        &mut self.accs[k]
    }

    /// Whether any row of a batch was seen.
    pub fn is_empty(&self) -> bool {
        self.accs.is_empty()
    }

    /// A final workunit row.
    pub(crate) fn add_workunit(&mut self, wu: &WorkunitRow) {
        if wu.batch == 0 || wu.assimilate_state != AssimilateState::Done {
            return;
        }
        let t = Time::from(wu.assimilated_time);
        let a = self.acc(wu.batch);
        if is_valid_work(wu) {
            a.valid_at.push(t);
        } else {
            a.jobs_error += 1;
        }
    }

    /// A final result row of a workunit of batch `batch` (0: none).
    pub(crate) fn add_result(&mut self, batch: u32, r: &ResultRow) {
        if batch == 0 {
            return;
        }
        let a = self.acc(batch);
        a.results += 1;
        if is_reported(r) {
            a.cpu_time += r.cpu_time;
            if usefulness(r) == Usefulness::Wasted {
                a.cpu_wasted += r.cpu_time;
            }
        }
    }

    /// The figures of every batch of the table `rows`, in id order.
    pub fn figures(&self, rows: &[BatchRow], app_names: &[&str]) -> Vec<BatchFigures> {
        let none = BatchAcc::default();
        rows.iter()
            .map(|b| {
                let a = self.accs.get(b.id as usize - 1).unwrap_or(&none);
                BatchFigures::new(b, a, app_names)
            })
            .collect()
    }
}

/// One batch's row of `batches.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchFigures {
    pub batch: BatchRow,
    pub app: String,
    /// Seconds from submission to [`PERCENTS`] of its jobs assimilated as valid
    /// work; `None`: not reached by the end of the run.
    pub time_to: [Option<Time>; 4],
    pub jobs_valid: u32,
    pub jobs_error: u32,
    pub results_created: u64,
    /// Results beyond the first `target_nresults` of each workunit: retries after
    /// errors, timeouts and invalid results, tie-breakers, adaptive replication's
    /// second instances.
    pub results_resent: u64,
    pub cpu_time: f64,
    pub cpu_wasted: f64,
    /// Valid-assimilation times from submission, ascending (for the progress file).
    pub valid_after: Vec<Time>,
}

impl BatchFigures {
    fn new(b: &BatchRow, a: &BatchAcc, app_names: &[&str]) -> Self {
        let mut valid_after: Vec<Time> = a.valid_at.iter().map(|t| t - b.create_time).collect();
        valid_after.sort_unstable();
        let time_to = PERCENTS.map(|pct| time_to(&valid_after, b.njobs, pct));
        let initial = u64::from(b.njobs) * u64::from(b.initial_results);
        BatchFigures {
            batch: b.clone(),
            app: app_names
                .get(b.app_id as usize - 1)
                .map_or(String::new(), |s| s.to_string()),
            time_to,
            jobs_valid: valid_after.len() as u32,
            jobs_error: a.jobs_error,
            results_created: a.results,
            results_resent: a.results.saturating_sub(initial),
            cpu_time: a.cpu_time,
            cpu_wasted: a.cpu_wasted,
            valid_after,
        }
    }

    /// Its time to 100 %: the batch's completion (valid work only).
    pub fn completion(&self) -> Option<Time> {
        self.time_to[3]
    }
}

/// The time from submission until `pct` % of `njobs` jobs were valid: the
/// `⌈pct · njobs / 100⌉`-th smallest of `sorted`, in whole jobs (integer arithmetic,
/// so that 90 % of 10 jobs is 9 jobs, never 10 by a rounding error).
fn time_to(sorted: &[Time], njobs: u32, pct: u32) -> Option<Time> {
    let need = (u64::from(pct) * u64::from(njobs)).div_ceil(100).max(1) as usize;
    sorted.get(need - 1).copied()
}

/// Whether the run submitted any batch (then it writes the batch files and
/// columns).
pub fn has_batches(projects: &[Project]) -> bool {
    projects.iter().any(|p| !p.db.batches.rows.is_empty())
}

/// Whether a drift of `figure` in project `pi` means what the drift warning says
/// (docs/outputs.md, "Drift warnings"): a project that submits batches gets its
/// work when the scientist submits it, so its throughput follows the submissions,
/// not a steady state, and is not tested.
pub fn drift_applies(p: &Project, figure: &str) -> bool {
    figure != "workunits_valid_per_day" || p.db.batches.rows.is_empty()
}

/// The figures of every batch of project `p`, in id order, from its tally.
pub fn project_figures(p: &Project, tally: &BatchTally) -> Vec<BatchFigures> {
    let names: Vec<&str> = p.apps.iter().map(|a| a.cfg.name.as_str()).collect();
    tally.figures(&p.db.batches.rows, &names)
}

/// Writes `batches.csv` and `batch_progress.csv` of a run with batches; nothing
/// otherwise.
pub fn write(
    dir: &Path,
    projects: &[Project],
    tallies: &[BatchTally],
    interval: Time,
    end: Time,
) -> io::Result<()> {
    if !has_batches(projects) {
        return Ok(());
    }
    let figs: Vec<Vec<BatchFigures>> = (projects.iter().zip(tallies))
        .map(|(p, t)| project_figures(p, t))
        .collect();
    let projects: Vec<(&str, &[BatchFigures])> = (projects.iter())
        .zip(&figs)
        .map(|(p, v)| (p.name.as_str(), &v[..]))
        .collect();
    write_batches_csv(dir, &projects)?;
    write_progress_csv(dir, &projects, interval, end)
}

/// The columns `summary.csv` gets after the others in a run with batches, per
/// project: over the batches submitted in the measured window.
pub const BATCH_COLUMNS: [&str; 9] = [
    "batches_submitted",
    "batches_completed",
    "batch_time_to_90_p50_s",
    "batch_time_to_90_p90_s",
    "batch_completion_p50_s",
    "batch_completion_p90_s",
    "batch_completion_max_s",
    "batch_results_resent",
    "batch_cpu_time_wasted_s",
];

/// The nearest-rank `q` quantile of per-batch times, a batch that never got there
/// counting as longer than any: `None` when the rank falls on one of those, since
/// its time is unknown (censored by the end of the run), or without batches.
pub(crate) fn censored_quantile(times: &[Option<Time>], q: f64) -> Option<f64> {
    if times.is_empty() {
        return None;
    }
    let mut known: Vec<Time> = times.iter().flatten().copied().collect();
    known.sort_unstable();
    let rank = ((q * times.len() as f64).ceil() as usize).clamp(1, times.len());
    known.get(rank - 1).map(|&t| t as f64)
}

/// The [`BATCH_COLUMNS`] of one project's batches, those submitted in `w`.
pub fn batch_values(figs: &[BatchFigures], w: Window) -> Vec<(&'static str, Option<f64>)> {
    let inside: Vec<&BatchFigures> = figs
        .iter()
        .filter(|f| f.batch.create_time >= w.warmup)
        .collect();
    let t90: Vec<Option<Time>> = inside.iter().map(|f| f.time_to[1]).collect();
    let t100: Vec<Option<Time>> = inside.iter().map(|f| f.completion()).collect();
    let values = [
        Some(inside.len() as f64),
        Some(t100.iter().flatten().count() as f64),
        censored_quantile(&t90, 0.5),
        censored_quantile(&t90, 0.9),
        censored_quantile(&t100, 0.5),
        censored_quantile(&t100, 0.9),
        censored_quantile(&t100, 1.0),
        Some(inside.iter().map(|f| f.results_resent as f64).sum()),
        Some(inside.iter().map(|f| f.cpu_wasted).sum()),
    ];
    BATCH_COLUMNS.into_iter().zip(values).collect()
}

fn opt(t: Option<Time>) -> String {
    t.map_or(String::new(), |t| t.to_string())
}

/// Writes `batches.csv`: one row per batch of every project (projects in scenario
/// order, batches in id order).
pub fn write_batches_csv(dir: &Path, projects: &[(&str, &[BatchFigures])]) -> io::Result<()> {
    let mut w = csv::Writer::from_path(dir.join(BATCHES_CSV))?;
    w.write_record([
        "project",
        "batch",
        "name",
        "app",
        "submitted_s",
        "jobs",
        "priority",
        "state",
        "fraction_done",
        "completion_time_s",
        "jobs_valid",
        "jobs_error",
        "time_to_50_s",
        "time_to_90_s",
        "time_to_99_s",
        "time_to_100_s",
        "results_created",
        "results_resent",
        "cpu_time_s",
        "cpu_time_wasted_s",
    ])?;
    for (project, figs) in projects {
        for f in *figs {
            let b = &f.batch;
            let completed = (b.completion_time != 0 || b.njobs == 0).then_some(b.completion_time);
            w.write_record([
                project.to_string(),
                b.id.to_string(),
                b.name.to_string(),
                f.app.clone(),
                b.create_time.to_string(),
                b.njobs.to_string(),
                b.priority.to_string(),
                b.state.code().to_string(),
                format!("{:?}", b.fraction_done),
                opt(completed),
                f.jobs_valid.to_string(),
                f.jobs_error.to_string(),
                opt(f.time_to[0]),
                opt(f.time_to[1]),
                opt(f.time_to[2]),
                opt(f.time_to[3]),
                f.results_created.to_string(),
                f.results_resent.to_string(),
                format!("{:?}", f.cpu_time),
                format!("{:?}", f.cpu_wasted),
            ])?;
        }
    }
    w.flush()
}

/// Writes `batch_progress.csv`: for each batch, at the end of every `interval`
/// from its submission until it is complete or the run ends, the jobs assimilated
/// as valid work so far and their share of the batch (the fraction-done chart).
pub fn write_progress_csv(
    dir: &Path,
    projects: &[(&str, &[BatchFigures])],
    interval: Time,
    end: Time,
) -> io::Result<()> {
    let mut w = csv::Writer::from_path(dir.join(BATCH_PROGRESS_CSV))?;
    w.write_record([
        "project",
        "batch",
        "time_s",
        "since_submit_s",
        "jobs_valid",
        "fraction_valid",
    ])?;
    let step = interval.max(1);
    for (project, figs) in projects {
        for f in *figs {
            let b = &f.batch;
            let mut t = b.create_time;
            let mut k = 0;
            loop {
                let since = t - b.create_time;
                while k < f.valid_after.len() && f.valid_after[k] <= since {
                    k += 1;
                }
                let frac = if b.njobs == 0 {
                    1.0
                } else {
                    k as f64 / f64::from(b.njobs)
                };
                w.write_record([
                    project.to_string(),
                    b.id.to_string(),
                    t.to_string(),
                    since.to_string(),
                    k.to_string(),
                    format!("{frac:?}"),
                ])?;
                if frac >= 1.0 || t >= end {
                    break;
                }
                t = (t + step).min(end);
            }
        }
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_to_a_share_count_whole_jobs() {
        let sorted = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100];
        assert_eq!(time_to(&sorted, 10, 50), Some(50));
        assert_eq!(time_to(&sorted, 10, 90), Some(90));
        assert_eq!(time_to(&sorted, 10, 99), Some(100));
        assert_eq!(time_to(&sorted, 10, 100), Some(100));
        // Two jobs never came back valid: 90 % of 12 is 11 jobs, not reached.
        assert_eq!(time_to(&sorted, 12, 90), None);
        assert_eq!(time_to(&sorted, 12, 50), Some(60));
    }

    #[test]
    fn a_quantile_on_an_unfinished_batch_is_unknown() {
        let t = [Some(5), None, Some(1), Some(3)];
        assert_eq!(censored_quantile(&t, 0.5), Some(3.0));
        assert_eq!(censored_quantile(&t, 0.75), Some(5.0));
        assert_eq!(censored_quantile(&t, 0.9), None);
        assert_eq!(censored_quantile(&t, 1.0), None);
        assert_eq!(censored_quantile(&[], 0.5), None);
    }
}
