//! The headline figures of each project: one row per project in `summary.csv`, and
//! the same values under `headline` in `summary.json`.
//!
//! Everything here is derived at the end of a run from what the run already tallied
//! ([`super::tally::Tally`], the series and histograms of [`super::metrics`]) and
//! from the hosts, so it costs nothing in the event loop. The columns, their units and
//! their exact definitions are documented in `docs/outputs.md` (`summary.csv`).

use super::metrics::{self, Hist, ProjectMetrics, rank_quantile};
use super::recorder::StatsRecorder;
use super::tally::Tally;
use crate::engine::Time;
use crate::server::config::WuTemplate;
use crate::server::types::AppId;
use crate::world::Finished;
use std::io;
use std::path::Path;

pub(crate) const SUMMARY_CSV: &str = "summary.csv";

/// The columns of `summary.csv` after `project`, in order (fixed, so a sweep file
/// can be checked against them before anything runs).
pub const COLUMNS: [&str; 67] = [
    "delay_bound_s",
    "min_quorum",
    "target_nresults",
    "workunits_created",
    "workunits_assimilated_valid",
    "workunits_assimilated_error",
    "workunits_assimilated_per_day",
    "workunits_valid_per_day",
    "workunits_error_per_day",
    "results_created",
    "results_sent",
    "results_reported",
    "results_reported_per_day",
    "results_per_workunit",
    "results_deadline_met",
    "results_deadline_missed",
    "deadline_miss_frac",
    "results_no_reply",
    "results_too_late",
    "results_deadline_passed",
    "results_deadline_late",
    "results_deadline_no_reply",
    "results_deadline_detached",
    "deadline_fail_frac",
    "results_censored",
    "error_frac",
    "invalid_frac",
    "no_reply_frac",
    "didnt_need_frac",
    "too_late_frac",
    "cpu_time_reported_s",
    "cpu_time_wasted_s",
    "wasted_cpu_frac",
    "flops_useful_flops",
    "flops_wasted_flops",
    "credit_granted_credit",
    "credit_granted_per_day_credit",
    "credit_claimed_valid_credit",
    "claimed_to_granted_ratio",
    "hosts_attached",
    "credit_per_host_mean_credit",
    "credit_per_host_p50_credit",
    "credit_per_host_p90_credit",
    "credit_per_host_gini",
    "turnaround_p50_s",
    "turnaround_p90_s",
    "turnaround_p99_s",
    "slack_p01_s",
    "slack_p10_s",
    "slack_p50_s",
    "time_to_canonical_p50_s",
    "time_to_canonical_p90_s",
    "time_to_canonical_p99_s",
    "time_to_assimilation_p50_s",
    "time_to_assimilation_p90_s",
    "time_to_assimilation_p99_s",
    "scheduler_requests",
    "scheduler_requests_per_hour",
    "client_rpcs_failed",
    "client_backoffs",
    "client_backoff_mean_s",
    "hosts_idle_frac",
    "wrong_canonical_frac",
    "workunits_wrong_canonical",
    "results_wrong_valid",
    "results_correct_invalid",
    "credit_neutrality_ratio",
];

/// One project's row: the column names (with their unit suffix) and values, in
/// column order. `None` is a figure without data (written as an empty field).
#[derive(Clone, Debug, PartialEq)]
pub struct Headline {
    pub project: String,
    pub values: Vec<(&'static str, Option<f64>)>,
}

/// `a / b`, or no value when `b` is zero.
fn ratio(a: f64, b: f64) -> Option<f64> {
    (b != 0.0).then(|| a / b)
}

/// A quantile of a histogram, with no value when it is empty or the quantile lies
/// beyond its range.
fn quantile(h: Option<&Hist>, q: f64) -> Option<f64> {
    h.and_then(|h| h.quantile(q)).filter(|x| x.is_finite())
}

/// The Gini coefficient of non-negative values (negative ones count as 0): 0 when
/// all are equal, `(n-1)/n` when one holds everything; no value without a positive
/// total. With `x` sorted ascending, `G = Σ (2i − n − 1)·x_i / (n Σ x)`, i = 1..n.
/// Shared by `summary.csv` and the credit chart, so both show the same figure.
pub(crate) fn gini(values: &[f64]) -> Option<f64> {
    let mut x: Vec<f64> = values.iter().map(|v| v.max(0.0)).collect();
    x.sort_by(f64::total_cmp);
    let n = x.len() as f64;
    let total: f64 = x.iter().sum();
    if x.is_empty() || total <= 0.0 {
        return None;
    }
    let weighted: f64 = x
        .iter()
        .enumerate()
        .map(|(i, v)| (2.0 * (i as f64 + 1.0) - n - 1.0) * v)
        .sum();
    Some((weighted / (n * total)).max(0.0))
}

/// What the hosts attached to one project did for it.
#[derive(Default)]
struct HostSide {
    /// Credit of each attached host, sorted ascending.
    credits: Vec<f64>,
    flops_total: f64,
    flops_used: f64,
}

fn host_side(f: &Finished<StatsRecorder>, pi: usize) -> HostSide {
    let mut s = HostSide::default();
    for h in &f.hosts {
        let Some(p) = h.projects.iter().find(|p| p.project as usize == pi) else {
            continue;
        };
        s.credits.push(super::hosts::credit(f, pi, p.hostid.0));
        s.flops_total += h.merit.flops_total;
        s.flops_used += h.merit.flops_used;
    }
    s.credits.sort_by(f64::total_cmp);
    s
}

/// Whose figures a row gives: a whole project (`summary.csv`) or one of its apps
/// (`summary_apps.csv`, [`super::apps`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Project,
    App(AppId),
}

/// The columns of `summary.csv` that exist only per project, left out of
/// `summary_apps.csv`: hosts attach to a project, not to an app (its credit per
/// host and idle capacity), and a scheduler RPC or a backoff is with a project, whatever
/// apps its jobs belong to.
pub const PROJECT_ONLY: [&str; 11] = [
    "hosts_attached",
    "credit_per_host_mean_credit",
    "credit_per_host_p50_credit",
    "credit_per_host_p90_credit",
    "credit_per_host_gini",
    "scheduler_requests",
    "scheduler_requests_per_hour",
    "client_rpcs_failed",
    "client_backoffs",
    "client_backoff_mean_s",
    "hosts_idle_frac",
];

/// The columns `summary.csv` gets after [`COLUMNS`] in a run with files (spec
/// client §8), per project only (not in `summary_apps.csv`): the transfer times of
/// the results reported with files, as the turnaround's, and the traffic of the
/// project's data server.
pub const TRANSFER_COLUMNS: [&str; 17] = [
    "results_with_files",
    "download_time_mean_s",
    "download_time_p50_s",
    "download_time_p90_s",
    "download_time_p99_s",
    "upload_time_mean_s",
    "upload_time_p50_s",
    "upload_time_p90_s",
    "upload_time_p99_s",
    "bytes_down",
    "bytes_up",
    "link_util_down_frac",
    "link_util_up_frac",
    "link_busy_down_frac",
    "link_busy_up_frac",
    "link_util_down_p90",
    "link_util_up_p90",
];

/// The [`TRANSFER_COLUMNS`] of project `pi`, named and in order.
pub fn transfer_values(f: &Finished<StatsRecorder>, pi: usize) -> Vec<(&'static str, Option<f64>)> {
    let m = &f.recorder.tallies[pi].metrics;
    let x = m.transfers.as_deref();
    let hist = |i: usize| x.map(|x| &x.hists[i]);
    let totals = |i: usize| x.and_then(|x| x.totals(i, m.interval));
    let saturation = |i: usize| x.and_then(|x| x.saturation(i, m.interval));
    let values: [Option<f64>; TRANSFER_COLUMNS.len()] = [
        x.map(|x| x.results as f64), // results_with_files
        x.and_then(|x| x.mean(0)),   // download_time_mean_s
        quantile(hist(0), 0.5),      // download_time_p50_s
        quantile(hist(0), 0.9),      // download_time_p90_s
        quantile(hist(0), 0.99),     // download_time_p99_s
        x.and_then(|x| x.mean(1)),   // upload_time_mean_s
        quantile(hist(1), 0.5),      // upload_time_p50_s
        quantile(hist(1), 0.9),      // upload_time_p90_s
        quantile(hist(1), 0.99),     // upload_time_p99_s
        totals(0).map(|t| t.0),      // bytes_down
        totals(1).map(|t| t.0),      // bytes_up
        totals(0).and_then(|t| t.1), // link_util_down_frac
        totals(1).and_then(|t| t.1), // link_util_up_frac
        saturation(0).map(|s| s.0),  // link_busy_down_frac
        saturation(1).map(|s| s.0),  // link_busy_up_frac
        saturation(0).map(|s| s.1),  // link_util_down_p90
        saturation(1).map(|s| s.1),  // link_util_up_p90
    ];
    TRANSFER_COLUMNS.into_iter().zip(values).collect()
}

/// The columns of a run where some project's data server limits its connections
/// (`max_connections`, spec client §8.5), after the [`TRANSFER_COLUMNS`], for every
/// project (empty for a server without the limit): the limit (a setting, so that a
/// sweep can minimise it), the share of the run all connections were taken, and
/// the transfers refused then.
pub const CONNECTION_COLUMNS: [&str; 3] = [
    "data_max_connections",
    "data_connections_full_frac",
    "transfers_refused",
];

/// Whether some project of the run has a data server with `max_connections`: its
/// `summary.csv` then has the [`CONNECTION_COLUMNS`], for every project.
pub fn has_connection_limit(f: &Finished<StatsRecorder>) -> bool {
    (f.recorder.tallies.iter()).any(|t| {
        (t.metrics.transfers.as_deref())
            .and_then(|x| x.server.first().copied().flatten())
            .is_some_and(|s| s.connections.is_some())
    })
}

/// The [`CONNECTION_COLUMNS`] of project `pi`, named and in order.
pub fn connection_values(
    f: &Finished<StatsRecorder>,
    pi: usize,
) -> Vec<(&'static str, Option<f64>)> {
    let m = &f.recorder.tallies[pi].metrics;
    let c = (m.transfers.as_deref()).and_then(|x| x.connections(m.interval));
    let values = [c.map(|c| c.0 as f64), c.map(|c| c.1), c.map(|c| c.2 as f64)];
    CONNECTION_COLUMNS.into_iter().zip(values).collect()
}

/// Whether some project of the run reports its servers' load: it has a web server
/// (`[project.NAME.server]`, spec backend §2.4.0) or daemon outages
/// (`[[project.NAME.daemon_outage]]`, spec backend §2.0). Its `summary.csv` then
/// has the [`super::scheduler_load::COLUMNS`] and [`super::recovery::COLUMNS`], for
/// every project.
pub fn has_server_load(f: &Finished<StatsRecorder>) -> bool {
    (f.recorder.tallies.iter()).any(|t| reports_server_load(&t.metrics))
}

/// Whether a project's metrics have its server load (a web server, or the
/// server-load gauges of a project with daemon outages): its outages are then
/// listed with their time to recover.
pub(crate) fn reports_server_load(m: &super::metrics::ProjectMetrics) -> bool {
    m.scheduler.is_some() || m.load.is_some()
}

/// The [`super::scheduler_load::COLUMNS`] and [`super::recovery::COLUMNS`] of
/// project `pi` in a run of `duration_s` seconds, named and in order (none for a
/// project without a web server).
pub fn scheduler_values(
    f: &Finished<StatsRecorder>,
    pi: usize,
    duration_s: f64,
) -> Vec<(&'static str, Option<f64>)> {
    let m = &f.recorder.tallies[pi].metrics;
    let load = m
        .scheduler
        .as_ref()
        .map(|l| l.columns())
        .unwrap_or_default();
    let recovery = match reports_server_load(m) {
        true => super::recovery::columns(&recoveries(f, pi, duration_s)),
        false => Default::default(),
    };
    (super::scheduler_load::COLUMNS.into_iter().zip(load))
        .chain(super::recovery::COLUMNS.into_iter().zip(recovery))
        .collect()
}

/// Project `pi`'s outages and its recovery from each, in a run of `duration_s`
/// seconds ([`super::recovery`]).
pub fn recoveries(
    f: &Finished<StatsRecorder>,
    pi: usize,
    duration_s: f64,
) -> Vec<super::recovery::Recovery> {
    let m = &f.recorder.tallies[pi].metrics;
    super::recovery::recoveries(&f.projects[pi], m, duration_s as Time)
}

/// The headline row of project `pi`: [`COLUMNS`], then [`TRANSFER_COLUMNS`] in a
/// run with files (and [`CONNECTION_COLUMNS`] when a data server limits its
/// connections), then the scheduler's columns in a run with a web server, then
/// the batch columns in a run with batches ([`super::batches::BATCH_COLUMNS`]).
fn headline(f: &Finished<StatsRecorder>, pi: usize, duration_s: f64) -> Headline {
    let mut values = values(f, pi, Scope::Project, duration_s);
    if f.recorder.files {
        values.extend(transfer_values(f, pi));
        if has_connection_limit(f) {
            values.extend(connection_values(f, pi));
        }
    }
    if has_server_load(f) {
        values.extend(scheduler_values(f, pi, duration_s));
    }
    if super::batches::has_batches(&f.projects) {
        let figs = super::batches::project_figures(&f.projects[pi], &f.recorder.batches[pi]);
        values.extend(super::batches::batch_values(
            &figs,
            f.recorder.tallies[pi].window,
        ));
    }
    Headline {
        project: f.projects[pi].name.clone(),
        values,
    }
}

/// The columns of `summary_apps.csv` after its keys: those of `summary.csv` but the
/// [`PROJECT_ONLY`] ones, in the same order.
pub fn app_columns() -> impl Iterator<Item = &'static str> {
    COLUMNS.into_iter().filter(|c| !PROJECT_ONLY.contains(c))
}

/// The figures of project `pi` ([`COLUMNS`]) or of one of its apps
/// ([`app_columns`]), named and in column order: one definition of every column for
/// both files. An app's figures come from its own tally (the rows of its
/// workunits), its own workunit template and its own credit neutrality. The rates
/// divide by the tally's measured window, which ends at the run's end: the run's
/// length (`_duration_s`) is kept in the signature for the callers.
pub fn values(
    f: &Finished<StatsRecorder>,
    pi: usize,
    scope: Scope,
    _duration_s: f64,
) -> Vec<(&'static str, Option<f64>)> {
    let p = &f.projects[pi];
    let t: &Tally = match scope {
        Scope::Project => &f.recorder.tallies[pi],
        Scope::App(a) => f.recorder.app_tally(pi, a),
    };
    // A value of the workunit template: the app's own, or the one all apps share.
    let template_of = |g: fn(&WuTemplate) -> f64| match scope {
        Scope::Project => all_apps(p, g),
        Scope::App(a) => Some(g(&p.app(a).cfg.workunit)),
    };
    let neutrality = match scope {
        Scope::Project => f.recorder.credit[pi].worst_neutrality(),
        Scope::App(a) => f.recorder.credit[pi]
            .neutrality()
            .get(&a)
            .and_then(|r| r.ok()),
    };
    let m: &ProjectMetrics = &t.metrics;
    // The rates, fractions and percentiles describe the measured window
    // (`super::window`, docs/outputs.md "The measured window"); the plain counts
    // the whole run. Each windowed figure is the run's minus what came before the
    // warm-up, so with no warm-up it is the run's, to the bit.
    let days = t.window.days();
    let hours = (t.window.end - t.window.warmup) as f64 / 3_600.0;
    let total = |k| m.total(k);
    let win = |k| m.window_total(k);
    let hist = |name: &str| {
        metrics::HISTOGRAMS
            .iter()
            .position(|h| *h == name)
            .and_then(|i| m.hists.get(i))
    };
    let b = &t.before;
    let with_outcome = t.window_with_outcome() as f64;
    let frac_of = |name: &str| ratio(t.window_count(name) as f64, with_outcome);
    let met = total(metrics::R_MET);
    let missed = total(metrics::R_MISSED);
    let assim_valid = total(metrics::WU_ASSIM_VALID);
    let assim_error = total(metrics::WU_ASSIM_ERROR);
    let reported = total(metrics::R_REPORTED);
    let cpu_reported = total(metrics::CPU_REPORTED);
    let cpu_wasted = total(metrics::CPU_WASTED);
    let backoffs = total(metrics::BACKOFFS);
    let hosts = match scope {
        Scope::Project => host_side(f, pi),
        Scope::App(_) => HostSide::default(),
    };
    let turnaround = hist("result_turnaround_s");
    let slack = hist("result_slack_s");
    let canonical = hist("workunit_time_to_canonical_s");
    let assimilation = hist("workunit_time_to_assimilation_s");
    let n = |x: u64| Some(x as f64);
    let science = m.science.window_total();
    let dl = t.deadline;
    let valid_claimed = t.valid_claimed_credit - b.valid_claimed_credit;
    let valid_granted = t.valid_granted_credit - b.valid_granted_credit;
    // In the order of COLUMNS.
    let values: [Option<f64>; COLUMNS.len()] = [
        template_of(|w| w.delay_bound as f64),     // delay_bound_s
        template_of(|w| w.min_quorum as f64),      // min_quorum
        template_of(|w| w.target_nresults as f64), // target_nresults
        n(t.workunits),                            // workunits_created
        Some(assim_valid),                         // workunits_assimilated_valid
        Some(assim_error),                         // workunits_assimilated_error
        ratio(
            win(metrics::WU_ASSIM_VALID) + win(metrics::WU_ASSIM_ERROR),
            days,
        ), // workunits_assimilated_per_day
        ratio(t.workunits_valid_in_window as f64, t.window.days()), // workunits_valid_per_day
        ratio(t.workunits_error_in_window as f64, t.window.days()), // workunits_error_per_day
        n(t.results),                              // results_created
        n(t.results_sent),                         // results_sent
        Some(reported),                            // results_reported
        ratio(win(metrics::R_REPORTED), days),     // results_reported_per_day
        ratio(
            (t.results - b.results) as f64,
            (t.workunits - b.workunits) as f64,
        ), // results_per_workunit
        Some(met),                                 // results_deadline_met
        Some(missed),                              // results_deadline_missed
        ratio(
            win(metrics::R_MISSED),
            win(metrics::R_MET) + win(metrics::R_MISSED),
        ), // deadline_miss_frac
        n(t.outcome_count("no_reply")),            // results_no_reply
        n(t.validate_count("too_late")),           // results_too_late
        n(dl.passed()),                            // results_deadline_passed
        n(dl.late),                                // results_deadline_late
        n(dl.no_reply),                            // results_deadline_no_reply
        n(dl.detached),                            // results_deadline_detached
        ratio(dl.failed() as f64, dl.passed() as f64), // deadline_fail_frac
        n(dl.censored),                            // results_censored
        frac_of("client_error"),                   // error_frac
        ratio(
            (t.results_judged_invalid - b.judged_invalid) as f64,
            (t.results_judged - b.judged) as f64,
        ), // invalid_frac
        frac_of("no_reply"),                       // no_reply_frac
        frac_of("didnt_need"),                     // didnt_need_frac
        frac_of("too_late"),                       // too_late_frac
        Some(cpu_reported),                        // cpu_time_reported_s
        Some(cpu_wasted),                          // cpu_time_wasted_s
        ratio(win(metrics::CPU_WASTED), win(metrics::CPU_REPORTED)), // wasted_cpu_frac
        Some(total(metrics::FLOPS_USEFUL)),        // flops_useful_flops
        Some(total(metrics::FLOPS_WASTED)),        // flops_wasted_flops
        Some(t.granted_credit_total),              // credit_granted_credit
        ratio(t.granted_credit_total - b.granted_credit, days), // credit_granted_per_day_credit
        Some(t.valid_claimed_credit),              // credit_claimed_valid_credit
        // Under credit_new BOINC stores no claims (claimed_credit = 0, spec
        // backend §1.2): the ratio then has no value rather than a misleading 0.
        ratio(valid_claimed, valid_granted).filter(|_| valid_claimed > 0.0), // claimed_to_granted_ratio
        Some(hosts.credits.len() as f64),                                    // hosts_attached
        ratio(hosts.credits.iter().sum(), hosts.credits.len() as f64), // credit_per_host_mean_credit
        rank_quantile(&hosts.credits, 0.5),                            // credit_per_host_p50_credit
        rank_quantile(&hosts.credits, 0.9),                            // credit_per_host_p90_credit
        gini(&hosts.credits),                                          // credit_per_host_gini
        quantile(turnaround, 0.5),                                     // turnaround_p50_s
        quantile(turnaround, 0.9),                                     // turnaround_p90_s
        quantile(turnaround, 0.99),                                    // turnaround_p99_s
        quantile(slack, 0.01),                                         // slack_p01_s
        quantile(slack, 0.1),                                          // slack_p10_s
        quantile(slack, 0.5),                                          // slack_p50_s
        quantile(canonical, 0.5),                                      // time_to_canonical_p50_s
        quantile(canonical, 0.9),                                      // time_to_canonical_p90_s
        quantile(canonical, 0.99),                                     // time_to_canonical_p99_s
        quantile(assimilation, 0.5),                                   // time_to_assimilation_p50_s
        quantile(assimilation, 0.9),                                   // time_to_assimilation_p90_s
        quantile(assimilation, 0.99),                                  // time_to_assimilation_p99_s
        Some(total(metrics::SCHED_REQUESTS)),                          // scheduler_requests
        ratio(win(metrics::SCHED_REQUESTS), hours), // scheduler_requests_per_hour
        Some(total(metrics::RPCS_FAILED)),          // client_rpcs_failed
        Some(backoffs),                             // client_backoffs
        ratio(win(metrics::BACKOFF_S), win(metrics::BACKOFFS)), // client_backoff_mean_s
        ratio(
            (hosts.flops_total - hosts.flops_used).max(0.0),
            hosts.flops_total,
        ), // hosts_idle_frac
        science.wrong_canonical_frac(),             // wrong_canonical_frac
        n(science.wrong_canonical),                 // workunits_wrong_canonical
        n(science.wrong_valid),                     // results_wrong_valid
        n(science.correct_invalid),                 // results_correct_invalid
        neutrality,                                 // credit_neutrality_ratio
    ];
    COLUMNS
        .into_iter()
        .zip(values)
        .filter(|(c, _)| scope == Scope::Project || !PROJECT_ONLY.contains(c))
        .collect()
}

/// The headline rows of every project, in scenario order.
pub fn headlines(f: &Finished<StatsRecorder>, duration_s: f64) -> Vec<Headline> {
    (0..f.projects.len())
        .map(|pi| headline(f, pi, duration_s))
        .collect()
}

/// `summary.json`'s `headline` object of one project (missing values are `null`).
pub(crate) fn to_json(h: &Headline) -> serde_json::Value {
    let map: serde_json::Map<_, _> = h
        .values
        .iter()
        .map(|(c, v)| (c.to_string(), serde_json::json!(v)))
        .collect();
    serde_json::Value::Object(map)
}

/// Writes `summary.csv`: a `project` column, then one column per figure, floats in
/// the shortest round-trip form, an empty field for a figure without data.
pub fn write_csv(dir: &Path, rows: &[Headline]) -> io::Result<()> {
    let mut w = csv::Writer::from_path(dir.join(SUMMARY_CSV))?;
    let mut header = vec!["project"];
    if let Some(first) = rows.first() {
        header.extend(first.values.iter().map(|(c, _)| *c));
    }
    w.write_record(&header)?;
    for h in rows {
        let mut rec = vec![h.project.clone()];
        rec.extend(h.values.iter().map(|(_, v)| field(*v)));
        w.write_record(&rec)?;
    }
    w.flush()
}

/// A figure as a CSV field: the shortest round-trip form, empty without data.
pub fn field(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| format!("{x:?}"))
}

/// A template value of the project's apps: the value when every app has the same,
/// empty when they differ (a project with several apps and, say, two delay bounds
/// has no one delay bound to show; `workunits.csv` has each workunit's).
fn all_apps(
    p: &crate::server::Project,
    f: impl Fn(&crate::server::config::WuTemplate) -> f64,
) -> Option<f64> {
    let first = f(&p.apps[0].cfg.workunit);
    p.apps
        .iter()
        .all(|a| f(&a.cfg.workunit) == first)
        .then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::files::XferTimes;
    use crate::server::types::ResultId;
    use crate::stats::output::{RESULT_COLUMNS, RESULT_FILE_COLUMNS, RESULTS_CSV, RunOutput};
    use crate::world::{Recorder, RunOptions};

    /// A day of two hosts into a run folder in `dir`; `hooks` is called on the
    /// recorder before the run, as the world of a run with files would.
    fn run(
        dir: &Path,
        hooks: impl FnOnce(&mut StatsRecorder),
    ) -> (Finished<StatsRecorder>, Vec<String>) {
        let text = "[simulation]\nduration = \"1d\"\n[project.main.work_generator]\nmode = \"cushion\"\ncushion = 4\n[[host_group]]\nname = \"v\"\ncount = 2\n";
        let loaded = crate::scenario::load::load_str(text, "t.toml", &[], None).unwrap();
        let output = RunOutput::create(dir, false).unwrap();
        let mut world = StatsRecorder::world(&loaded, &RunOptions::default(), Some(output));
        hooks(world.recorder_mut());
        let mut f = world.run().unwrap();
        f.recorder
            .output
            .take()
            .unwrap()
            .finish(&serde_json::Value::Null)
            .unwrap();
        let results = std::fs::read_to_string(dir.join(RESULTS_CSV)).unwrap();
        (f, results.lines().map(String::from).collect())
    }

    #[test]
    fn without_files_no_column_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let (f, results) = run(&tmp.path().join("run"), |_| {});
        assert!(!f.recorder.files);
        assert_eq!(results[0], RESULT_COLUMNS.join(","));
        assert!(results.len() > 1, "the day sends some results");
        let h = &headlines(&f, 86_400.0)[0];
        let names: Vec<&str> = h.values.iter().map(|(c, _)| *c).collect();
        assert_eq!(names, COLUMNS);
        assert!(f.recorder.tallies[0].metrics.transfers.is_none());
    }

    /// The hooks called directly: result 1's row gets its transfer times (and the
    /// map lets go of them), every other row empty transfer columns, and the
    /// summary the transfer figures.
    #[test]
    fn with_files_results_and_summary_get_the_transfers() {
        let tmp = tempfile::tempdir().unwrap();
        let x = XferTimes {
            received: 100,
            download_start: Some(100),
            download_end: Some(250),
            completed: Some(4000),
            upload_start: Some(4000),
            upload_end: Some(4030),
            download_bytes: 1e6,
            upload_bytes: 2e3,
        };
        let (f, results) = run(&tmp.path().join("run"), |r| {
            r.files_enabled();
            r.result_transfers(0, ResultId(1), &x);
            let cap = [1000.0, f64::INFINITY];
            let at = |bytes, busy| crate::world::DataServerSample {
                bytes,
                busy,
                cap,
                connections: None,
            };
            r.data_server(0, 0, at([0.0; 2], [0.0; 2]));
            r.data_server(0, 1, at([1.8e6, 0.0], [900.0, 0.0]));
        });
        assert!(f.recorder.files);
        assert!(f.recorder.transfer_times.is_empty(), "written, then let go");
        assert_eq!(
            results[0],
            [RESULT_COLUMNS, RESULT_FILE_COLUMNS].concat().join(",")
        );
        let n = RESULT_COLUMNS.len();
        let row = |id: &str| {
            let r = results
                .iter()
                .find(|l| l.split(',').nth(1) == Some(id))
                .unwrap_or_else(|| panic!("no result {id}"));
            r.split(',').skip(n).collect::<Vec<_>>().join(",")
        };
        assert_eq!(row("1"), "100,250,4000,4030,180.0,1000000.0,2000.0");
        assert_eq!(row("2"), ",,,,,,");
        let h = &headlines(&f, 86_400.0)[0];
        let names: Vec<&str> = h.values.iter().map(|(c, _)| *c).collect();
        assert_eq!(names, [&COLUMNS[..], &TRANSFER_COLUMNS[..]].concat());
        let v: Vec<Option<f64>> = h.values[COLUMNS.len()..].iter().map(|v| v.1).collect();
        assert_eq!(
            v,
            [
                Some(1.0),   // results_with_files
                Some(150.0), // download_time_mean_s
                Some(180.0), // download_time_p50_s: the upper edge of its 60 s bin
                Some(180.0), // download_time_p90_s
                Some(180.0), // download_time_p99_s
                Some(30.0),  // upload_time_mean_s
                Some(60.0),  // upload_time_p50_s
                Some(60.0),  // upload_time_p90_s
                Some(60.0),  // upload_time_p99_s
                Some(1.8e6), // bytes_down: the last sample
                Some(0.0),   // bytes_up
                Some(0.5),   // link_util_down_frac: 1.8e6 / (1000 B/s × 3600 s)
                None,        // link_util_up_frac: unlimited
                Some(0.25),  // link_busy_down_frac: 900 s saturated of 3600
                None,        // link_busy_up_frac
                Some(0.5),   // link_util_down_p90: the one bucket's
                None,        // link_util_up_p90
            ]
        );
    }

    #[test]
    fn gini_of_known_distributions() {
        assert_eq!(gini(&[5.0, 5.0, 5.0, 5.0]), Some(0.0));
        assert_eq!(gini(&[0.0, 0.0, 0.0, 8.0]), Some(0.75));
        assert_eq!(gini(&[]), None);
        assert_eq!(gini(&[0.0, 0.0]), None);
        // 1,2,3,4: Σ(2i-n-1)x = -3-2+3+12 = 10; 10 / (4·10) = 0.25.
        assert_eq!(gini(&[1.0, 2.0, 3.0, 4.0]), Some(0.25));
        // Unsorted input: 1,2,3 → (-2·1 + 0·2 + 2·3) / (3·6) = 2/9.
        assert!((gini(&[3.0, 1.0, 2.0]).unwrap() - 2.0 / 9.0).abs() < 1e-15);
        for n in [1usize, 2, 1000] {
            let mut v = vec![0.0; n];
            v[n / 2] = 42.0;
            let g = gini(&v).unwrap();
            assert!(
                (g - (n as f64 - 1.0) / n as f64).abs() < 1e-12,
                "n={n}: {g}"
            );
        }
    }

    #[test]
    fn nearest_rank_quantiles() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0];
        assert_eq!(rank_quantile(&v, 0.5), Some(5.0));
        assert_eq!(rank_quantile(&v, 0.9), Some(9.0));
        assert_eq!(rank_quantile(&v, 0.0), Some(1.0));
        assert_eq!(rank_quantile(&[], 0.5), None);
    }

    #[test]
    fn ratios_without_a_denominator_have_no_value() {
        assert_eq!(ratio(1.0, 0.0), None);
        assert_eq!(ratio(1.0, 4.0), Some(0.25));
    }
}
