//! Headline figures of a run, tallied from the final rows of every workunit and
//! result (purged rows when they are purged, live rows at the end), so they agree
//! exactly with `workunits.csv` and `results.csv`.
//!
//! A [`Tally`] is fed row by row by the recorder (`super::recorder`) and read at the
//! end by the headline figures (`super::headline`) and `summary.json`
//! (`super::summary`); it names none of them, only the window its figures describe
//! (`super::window`) and the time series and histograms it feeds
//! (`super::metrics`), so the data flows one way.

use super::metrics::ProjectMetrics;
use super::window::{self, DeadlineCounts, Window};
use crate::server::db::{ResultRow, WorkunitRow};
use crate::server::types::*;
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
    pub metrics: ProjectMetrics,
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
    pub fn new(metrics: ProjectMetrics, window: Window) -> Self {
        Tally {
            metrics,
            window,
            ..Default::default()
        }
    }

    pub(crate) fn add_workunit(&mut self, wu: &WorkunitRow, purged: bool) {
        self.metrics.add_workunit(wu);
        self.workunits += 1;
        if wu.canonical_resultid != ResultId(0) {
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

    pub(crate) fn add_result(&mut self, r: &ResultRow) {
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
    pub(crate) fn outcome_count(&self, name: &str) -> u64 {
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
