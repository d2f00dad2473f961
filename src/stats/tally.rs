//! Headline figures of a run, tallied from the final rows of every workunit and
//! result (purged rows when they are purged, live rows at the end), so they agree
//! exactly with `workunits.csv` and `results.csv`.
//!
//! A [`Tally`] is fed row by row by the recorder (`super::recorder`) and read at the
//! end by the headline figures (`super::headline`) and `summary.json`
//! (`super::summary`); it names none of them, only the window its figures describe
//! (`super::window`) and the time series and histograms it feeds
//! (`super::metrics`), so the data flows one way.

use super::drift::Thirds;
use super::metrics::ProjectMetrics;
use super::window::{self, DeadlineCounts, Window};
use crate::engine::Time;
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
    /// What the figures above counted before the warm-up, by the time each figure
    /// of the measured window goes by: the window's are the run's minus these, so
    /// with no warm-up they are the run's to the bit.
    #[serde(skip)]
    pub before: Before,
    /// The first and last thirds of the window, for the drift warnings.
    #[serde(skip)]
    pub thirds: Thirds,
}

/// The rows a [`Tally`] counted before the warm-up, for the figures of the
/// measured window (`docs/outputs.md`, "The measured window"): workunits by
/// `create_time`, results by `sent_time` (a result never sent has no time of its
/// own in `results.csv` and counts in the window), and what a reported result
/// counts for by its `received_time`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Before {
    /// Workunits created, and results sent, before the warm-up.
    pub workunits: u64,
    pub results: u64,
    /// Of those results, by outcome: still INIT, CLIENT_ERROR, NO_REPLY,
    /// DIDNT_NEED, and validate state TOO_LATE.
    pub init: u64,
    pub client_error: u64,
    pub no_reply: u64,
    pub didnt_need: u64,
    pub too_late: u64,
    /// Results received before the warm-up (or never: `received_time` 0): judged,
    /// judged INVALID, their granted credit, and claimed and granted credit of the
    /// VALID ones.
    pub judged: u64,
    pub judged_invalid: u64,
    pub granted_credit: f64,
    pub valid_claimed_credit: f64,
    pub valid_granted_credit: f64,
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
    pub fn new(mut metrics: ProjectMetrics, window: Window) -> Self {
        metrics.set_warmup(window.warmup);
        let thirds = Thirds::new(window, metrics.hists.first());
        Tally {
            metrics,
            window,
            thirds,
            ..Default::default()
        }
    }

    pub(crate) fn add_workunit(&mut self, wu: &WorkunitRow, purged: bool) {
        self.metrics.add_workunit(wu);
        self.thirds.add_workunit(wu);
        self.workunits += 1;
        if Time::from(wu.create_time) < self.window.warmup {
            self.before.workunits += 1;
        }
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
        self.thirds.add_result(r);
        self.results += 1;
        self.add_before(r);
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
        if r.received_time != 0 && Time::from(r.received_time) > r.report_deadline {
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

    /// What `r` counts for in [`Before`], mirroring [`Self::add_result`].
    fn add_before(&mut self, r: &ResultRow) {
        let b = &mut self.before;
        if r.sent_time != 0 && Time::from(r.sent_time) < self.window.warmup {
            b.results += 1;
            match r.outcome {
                Outcome::Init => b.init += 1,
                Outcome::ClientError => b.client_error += 1,
                Outcome::NoReply => b.no_reply += 1,
                Outcome::DidntNeed => b.didnt_need += 1,
                _ => {}
            }
            b.too_late += u64::from(r.validate_state == ValidateState::TooLate);
        }
        if Time::from(r.received_time) >= self.window.warmup {
            return;
        }
        if r.outcome == Outcome::Success {
            match r.validate_state {
                ValidateState::Valid => b.judged += 1,
                ValidateState::Invalid => {
                    b.judged += 1;
                    b.judged_invalid += 1;
                }
                _ => {}
            }
        }
        b.granted_credit += r.granted_credit;
        if r.validate_state == ValidateState::Valid {
            b.valid_claimed_credit += r.claimed_credit;
            b.valid_granted_credit += r.granted_credit;
        }
    }

    /// Results of the measured window (sent in it, or never sent) that have an
    /// outcome (not INIT).
    pub(crate) fn window_with_outcome(&self) -> u64 {
        let b = &self.before;
        (self.results - b.results) - (self.outcome_count("init") - b.init)
    }

    /// Results of the measured window with this outcome name (`client_error`,
    /// `no_reply`, `didnt_need`), or validate state `too_late`.
    pub(crate) fn window_count(&self, name: &str) -> u64 {
        let b = &self.before;
        match name {
            "client_error" => self.outcome_count(name) - b.client_error,
            "no_reply" => self.outcome_count(name) - b.no_reply,
            "didnt_need" => self.outcome_count(name) - b.didnt_need,
            "too_late" => self.validate_count(name) - b.too_late,
            _ => 0,
        }
    }

    /// The drift warnings of this tally (`super::drift`), each starting with `who`.
    pub fn drift_warnings(&self, who: &str) -> Vec<(&'static str, String)> {
        let days = self.thirds.days();
        self.thirds
            .drifts()
            .iter()
            .map(|d| (d.figure, super::drift::message(who, d, &days)))
            .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::metrics::{self, ProjectMetrics};

    /// Results created at `created`, sent 10 s later and reported at `received`
    /// with `outcome` and `validate`, 100 CPU seconds, and 2 credits when VALID.
    fn result(
        created: Time,
        received: Time,
        outcome: Outcome,
        validate: ValidateState,
    ) -> ResultRow {
        let mut r = ResultRow::new(WuId(1), 0, 0, 0, 0, ServerState::Over);
        r.create_time = crate::server::types::db_time(created);
        r.sent_time = crate::server::types::db_time(created + 10);
        r.report_deadline = created + 5000;
        r.received_time = crate::server::types::db_time(received);
        r.outcome = outcome;
        r.validate_state = validate;
        r.cpu_time = 100.0;
        r.granted_credit = if validate == ValidateState::Valid {
            2.0
        } else {
            0.0
        };
        r
    }

    fn tally(warmup: Time) -> Tally {
        let mut t = Tally::new(
            ProjectMetrics::new(600, 60, 10_000),
            Window {
                warmup,
                end: 10_000,
            },
        );
        use Outcome::*;
        use ValidateState as V;
        for r in [
            // Created and reported in the warm-up of 1000 s.
            result(100, 900, Success, V::Valid),
            result(200, 950, ClientError, V::Init),
            // Created in the warm-up, reported after it.
            result(500, 1500, Success, V::Invalid),
            // Created and reported after it.
            result(2000, 2600, Success, V::Valid),
            result(2100, 2700, Success, V::Valid),
            result(3000, 0, NoReply, V::Init),
        ] {
            t.add_result(&r);
        }
        t
    }

    /// The window's figures are the run's minus what came before the warm-up:
    /// exact counts on constructed rows, and with no warm-up the run's.
    #[test]
    fn the_window_leaves_the_warm_up_out() {
        let t = tally(1000);
        let b = t.before;
        assert_eq!((b.results, b.client_error, b.init), (3, 1, 0));
        assert_eq!((b.judged, b.judged_invalid, b.granted_credit), (1, 0, 2.0));
        // Sent in the window: 3 results with an outcome, one NO_REPLY.
        assert_eq!(t.window_with_outcome(), 3);
        assert_eq!(t.window_count("no_reply"), 1);
        assert_eq!(t.window_count("client_error"), 0);
        // Reported in the window: 3, one INVALID (wasted 100 of 300 CPU s).
        let m = &t.metrics;
        assert_eq!(m.window_total(metrics::R_REPORTED), 3.0);
        assert_eq!(m.total(metrics::R_REPORTED), 5.0);
        assert_eq!(m.window_total(metrics::CPU_WASTED), 100.0);
        assert_eq!(m.window_total(metrics::CPU_REPORTED), 300.0);
        assert_eq!(t.results_judged - b.judged, 3);
        assert_eq!(t.results_judged_invalid - b.judged_invalid, 1);
        // The turnaround histogram holds only the 3 reported after the warm-up.
        assert_eq!(m.hists[0].total(), 3);
        // Sent at or after the warm-up: the last three, one of which no reply.
        assert_eq!((t.deadline.passed(), t.deadline.no_reply), (3, 1));

        let whole = tally(0);
        assert_eq!(whole.before, Before::default());
        assert_eq!(whole.window_with_outcome(), 6);
        assert_eq!(whole.window_count("client_error"), 1);
        let m = &whole.metrics;
        assert_eq!(
            m.window_total(metrics::R_REPORTED),
            m.total(metrics::R_REPORTED)
        );
        assert_eq!(m.window_total(metrics::CPU_WASTED), 200.0);
        assert_eq!(m.hists[0].total(), 5);
    }
}
