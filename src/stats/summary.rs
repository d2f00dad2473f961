//! Headline figures of a run, tallied from the final rows of every workunit and
//! result (purged rows when they are purged, live rows at the end), so they agree
//! exactly with `workunits.csv` and `results.csv`.

use super::recorder::StatsRecorder;
use super::window::{self, DeadlineCounts, Window};
use crate::server::db::{ResultRow, WorkunitRow};
use crate::server::types::*;
use crate::world::Finished;
use serde::Serialize;
use std::collections::BTreeMap;

/// Per-project tally.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Tally {
    pub workunits: u64,
    pub results: u64,
    pub workunits_with_canonical: u64,
    pub workunits_with_error: u64,
    pub workunits_assimilated: u64,
    pub workunits_purged: u64,
    /// Results by BOINC outcome name (`success`, `client_error`, ...). Static keys:
    /// counting a result allocates nothing.
    pub results_by_outcome: BTreeMap<&'static str, u64>,
    /// Results by validate state name.
    pub results_by_validate_state: BTreeMap<&'static str, u64>,
    pub results_sent: u64,
    /// Reported results whose report came after the deadline told to the client.
    pub results_reported_late: u64,
    pub granted_credit_total: f64,
    /// Claimed and granted credit of validated results: their ratio says how far
    /// hosts' claims are from what the project grants (spec backend §6).
    pub valid_claimed_credit: f64,
    pub valid_granted_credit: f64,
    /// Mean seconds from creation to canonical result, over WUs that have one.
    pub mean_time_to_canonical_s: f64,
    #[serde(skip)]
    sum_time_to_canonical: f64,
    /// Time series and histograms, fed from the same final rows.
    #[serde(skip)]
    pub metrics: super::metrics::ProjectMetrics,
    /// The window of the throughput and deadline figures (`summary.csv`).
    #[serde(skip)]
    pub window: Window,
    /// Workunits assimilated in the window as valid work, and in error.
    #[serde(skip)]
    pub workunits_valid_in_window: u64,
    #[serde(skip)]
    pub workunits_error_in_window: u64,
    /// Results sent in the window, by what became of them at their deadline.
    #[serde(skip)]
    pub deadline: DeadlineCounts,
    /// Reported results the validator judged (outcome SUCCESS, validate state VALID
    /// or INVALID), and those it judged INVALID (spec backend §2.5).
    #[serde(skip)]
    pub results_judged: u64,
    #[serde(skip)]
    pub results_judged_invalid: u64,
}

fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Init => "init",
        Outcome::Success => "success",
        Outcome::CouldntSend => "couldnt_send",
        Outcome::ClientError => "client_error",
        Outcome::NoReply => "no_reply",
        Outcome::DidntNeed => "didnt_need",
        Outcome::ValidateError => "validate_error",
        Outcome::ClientDetached => "client_detached",
    }
}

fn validate_name(v: ValidateState) -> &'static str {
    match v {
        ValidateState::Init => "init",
        ValidateState::Valid => "valid",
        ValidateState::Invalid => "invalid",
        ValidateState::NoCheck => "no_check",
        ValidateState::Inconclusive => "inconclusive",
        ValidateState::TooLate => "too_late",
    }
}

impl Tally {
    /// An empty tally whose headline figures describe `window`.
    pub fn new(metrics: super::metrics::ProjectMetrics, window: Window) -> Self {
        Tally {
            metrics,
            window,
            ..Default::default()
        }
    }

    pub fn add_workunit(&mut self, wu: &WorkunitRow, purged: bool) {
        self.metrics.add_workunit(wu);
        self.workunits += 1;
        if wu.canonical_resultid != 0 {
            self.workunits_with_canonical += 1;
            self.sum_time_to_canonical += (wu.canonical_found_time - wu.create_time) as f64;
            self.mean_time_to_canonical_s =
                self.sum_time_to_canonical / self.workunits_with_canonical as f64;
        }
        if wu.error_mask != 0 {
            self.workunits_with_error += 1;
        }
        if wu.assimilate_state == AssimilateState::Done {
            self.workunits_assimilated += 1;
        }
        if purged {
            self.workunits_purged += 1;
        }
        match window::assimilated_in_window(wu, self.window) {
            Some(true) => self.workunits_valid_in_window += 1,
            Some(false) => self.workunits_error_in_window += 1,
            None => {}
        }
    }

    pub fn add_result(&mut self, r: &ResultRow) {
        self.metrics.add_result(r);
        self.results += 1;
        *self
            .results_by_outcome
            .entry(outcome_name(r.outcome))
            .or_default() += 1;
        *self
            .results_by_validate_state
            .entry(validate_name(r.validate_state))
            .or_default() += 1;
        if r.sent_time != 0 {
            self.results_sent += 1;
        }
        if r.received_time != 0 && r.received_time > r.report_deadline {
            self.results_reported_late += 1;
        }
        if let Some(fate) = window::deadline_fate(r, self.window) {
            self.deadline.add(fate);
        }
        if r.outcome == Outcome::Success {
            match r.validate_state {
                ValidateState::Valid => self.results_judged += 1,
                ValidateState::Invalid => {
                    self.results_judged += 1;
                    self.results_judged_invalid += 1;
                }
                _ => {}
            }
        }
        self.granted_credit_total += r.granted_credit;
        if r.validate_state == ValidateState::Valid {
            self.valid_claimed_credit += r.claimed_credit;
            self.valid_granted_credit += r.granted_credit;
        }
    }

    /// Results with this outcome name (see [`outcome_name`]).
    pub fn outcome_count(&self, name: &str) -> u64 {
        self.results_by_outcome.get(name).copied().unwrap_or(0)
    }

    /// Results with this validate state name.
    pub fn validate_count(&self, name: &str) -> u64 {
        self.results_by_validate_state
            .get(name)
            .copied()
            .unwrap_or(0)
    }
}

/// The censoring warnings of a run, one per project whose `delay_bound` exceeds a
/// third of the measured window ([`window::censoring_warning`]), in scenario order;
/// in a project with several apps, one per such app, with the app's own censored
/// results.
pub fn censoring_warnings(f: &Finished<StatsRecorder>) -> Vec<String> {
    let mut out = Vec::new();
    for (pi, p) in f.projects.iter().enumerate() {
        for app in &p.apps {
            let who = if p.apps.len() > 1 {
                format!("project {}, app {}", p.name, app.cfg.name)
            } else {
                format!("project {}", p.name)
            };
            let t = f.recorder.app_tally(pi, app.id);
            let bound = app.workunit.delay_bound.get();
            out.extend(window::censoring_warning(
                &who,
                bound,
                t.window,
                t.deadline.censored,
            ));
        }
    }
    out
}

/// `summary.json`: headline figures and the effective configuration. Contains no
/// wall-clock figure, so two runs of one scenario give identical files.
///
/// Each project holds its tally and, under `headline`, the figures of its
/// `summary.csv` row.
pub fn summary_json(
    loaded: &crate::scenario::load::Loaded,
    f: &Finished<StatsRecorder>,
    headlines: &[super::headline::Headline],
) -> serde_json::Value {
    let mut projects = serde_json::Map::new();
    for (((p, t), h), c) in f
        .projects
        .iter()
        .zip(&f.recorder.tallies)
        .zip(headlines)
        .zip(&f.recorder.credit)
    {
        let mut v = serde_json::to_value(t).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert("headline".into(), super::headline::to_json(h));
            o.insert("credit_neutrality".into(), c.neutrality_json());
        }
        projects.insert(p.name.clone(), v);
    }
    serde_json::json!({
        "scenario": loaded.file.simulation.name,
        "scenario_hash": loaded.hash,
        "seed": loaded.file.simulation.seed,
        "duration_s": loaded.file.simulation.duration.get(),
        "warmup_s": loaded.file.output.warmup.get(),
        "crate_version": env!("CARGO_PKG_VERSION"),
        "events": f.counters.events,
        "scheduler_rpcs": f.counters.rpcs,
        "daemon_passes": f.counters.daemon_passes,
        "scheduler_rpcs_failed": f.counters.rpcs_failed,
        "projects": projects,
        "warnings": censoring_warnings(f),
        "clients": serde_json::to_value(super::hosts::client_summary(f)).unwrap_or_default(),
        "effective_config": serde_json::to_value(&loaded.file).unwrap_or_default(),
    })
}
