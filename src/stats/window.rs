//! The measured window of the headline figures, and what each row counts for in it.
//!
//! A designer compares runs by their steady state, so every rate, fraction and
//! percentile of `summary.csv` skips a warm-up (`[output] warmup`; which time of a row
//! decides is in docs/outputs.md, "The measured window", and the other figures are the
//! run's minus what `super::tally::Before` and `super::metrics` counted before it).
//! The throughput and deadline figures, defined here, also leave out what the run
//! cannot judge yet:
//!
//! * **Throughput** is valid work: a workunit counts when it is assimilated with a
//!   canonical result and no error bit (spec backend §2.6: the assimilator hands the
//!   canonical result to the science), at its `assimilated_time` inside the window.
//!   Workunits assimilated in error (`error_mask ≠ 0`, no canonical result) count
//!   apart.
//! * **Deadline outcomes** are judged per result sent at or after the warm-up,
//!   against the deadline in the database (`report_deadline`: the deadline told to the
//!   client plus `report_grace_period`, the moment the transitioner gives up on the
//!   result, spec backend §2.4.4 and §2.4.5). Each such result falls in exactly one
//!   [`DeadlineFate`]. A result whose deadline has not passed by the end of the run
//!   has no outcome yet: it is *censored* and left out of every deadline share.
//!
//! Everything here is a pure function of one row and the window, so `summary.csv`
//! can be recomputed from `results.csv` and `workunits.csv` alone. What a row counts
//! as ([`is_reported`], [`is_valid_work`]) is decided here once, for the time series
//! of `super::metrics` too, so this module names no other of stats.

use crate::engine::Time;
use crate::server::db::{ResultRow, WorkunitRow};
use crate::server::types::*;

/// The part of the run the headline figures describe: `[warmup, end]`, seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Window {
    /// `[output] warmup`: what starts before it is skipped.
    pub warmup: Time,
    /// The end of the run (`simulation.duration`).
    pub end: Time,
}

impl Window {
    /// The window's length in days (for the `*_per_day` figures).
    pub fn days(&self) -> f64 {
        (self.end - self.warmup) as f64 / 86_400.0
    }
}

/// What became of a result sent in the window, judged at its deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeadlineFate {
    /// Reported (output or error) no later than its deadline.
    Met,
    /// Reported after its deadline.
    Late,
    /// Never reported and not given up by a detach: the transitioner timed it out
    /// (outcome NO_REPLY), or it was still in progress at the end with its deadline
    /// past. The jobs of a volunteer who left for good end here: BOINC's server only
    /// sees their silence.
    NoReply,
    /// Lost with a host that detached or re-attached under a new host ID: the
    /// scheduler marked it over at once (`mark_results_over`, spec backend §2.4.2;
    /// outcome CLIENT_DETACHED, or NO_REPLY with a receive time under the seed's
    /// rule), and it never came back.
    Detached,
    /// Its deadline falls at or after the end of the run: no outcome yet.
    Censored,
}

/// Whether a workunit counts as throughput (`Some(true)`), as work ending in error
/// (`Some(false)`), or not at all (not assimilated in the window).
pub(crate) fn assimilated_in_window(wu: &WorkunitRow, w: Window) -> Option<bool> {
    let done = wu.assimilate_state == AssimilateState::Done && wu.assimilated_time != 0;
    let t = Time::from(wu.assimilated_time);
    if !done || t < w.warmup || t > w.end {
        return None;
    }
    Some(is_valid_work(wu))
}

/// A result the client reported with its output or an error (not a no-reply or a
/// server-side outcome).
pub(crate) fn is_reported(r: &ResultRow) -> bool {
    r.received_time != 0
        && matches!(
            r.outcome,
            Outcome::Success | Outcome::ClientError | Outcome::ValidateError
        )
}

/// Valid work: a canonical result and no error bit.
pub(crate) fn is_valid_work(wu: &WorkunitRow) -> bool {
    wu.canonical_resultid != ResultId(0) && wu.error_mask == 0
}

/// The fate of a result, or `None` when it was never sent or sent before the
/// warm-up ended.
pub(crate) fn deadline_fate(r: &ResultRow, w: Window) -> Option<DeadlineFate> {
    if r.sent_time == 0 || Time::from(r.sent_time) < w.warmup {
        return None;
    }
    // The transitioner gives up when `report_deadline < now`: only then is a
    // silent result a failure.
    if r.report_deadline >= w.end {
        return Some(DeadlineFate::Censored);
    }
    Some(if is_reported(r) {
        if Time::from(r.received_time) <= r.report_deadline {
            DeadlineFate::Met
        } else {
            DeadlineFate::Late
        }
    } else if r.outcome == Outcome::ClientDetached
        || (r.outcome == Outcome::NoReply && r.received_time != 0)
    {
        DeadlineFate::Detached
    } else {
        DeadlineFate::NoReply
    })
}

/// The censoring warning of a project, or of an app (`summary.json` `warnings`, and
/// stderr): when `delay_bound` exceeds a third of the measured window, a large part
/// of the results sent have no outcome at the end, and the ones that do are the
/// quick ones, so the deadline figures lean optimistic. `who` starts the message:
/// `project main`, or `project main, app search`.
pub(crate) fn censoring_warning(
    who: &str,
    delay_bound: Time,
    w: Window,
    censored: u64,
) -> Option<String> {
    let span = w.end - w.warmup;
    (3 * delay_bound > span).then(|| {
        format!(
            "{who}: delay_bound ({}) is more than a third of the measured {} \
             (simulation.duration minus [output] warmup): {censored} results sent have their \
             deadline after the end and are left out of the deadline figures; \
             simulate at least 3 × delay_bound for figures that describe the steady state",
            days(delay_bound),
            days(span)
        )
    })
}

/// A duration in days for a message, e.g. `2.5 d`.
fn days(secs: Time) -> String {
    format!("{} d", (secs as f64 / 86_400.0 * 100.0).round() / 100.0)
}

/// Counts of [`DeadlineFate`] over a project's results.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct DeadlineCounts {
    pub met: u64,
    pub late: u64,
    pub no_reply: u64,
    pub detached: u64,
    pub censored: u64,
}

impl DeadlineCounts {
    pub fn add(&mut self, fate: DeadlineFate) {
        match fate {
            DeadlineFate::Met => self.met += 1,
            DeadlineFate::Late => self.late += 1,
            DeadlineFate::NoReply => self.no_reply += 1,
            DeadlineFate::Detached => self.detached += 1,
            DeadlineFate::Censored => self.censored += 1,
        }
    }

    /// Results whose deadline passed: every one has an outcome.
    pub fn passed(&self) -> u64 {
        self.met + self.failed()
    }

    /// Results that did not come back in time.
    pub fn failed(&self) -> u64 {
        self.late + self.no_reply + self.detached
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(sent: Time, deadline: Time) -> ResultRow {
        let mut r = ResultRow::new(WuId(1), 0, 0, 0, 0, ServerState::InProgress);
        r.sent_time = crate::server::types::db_time(sent);
        r.report_deadline = deadline;
        r
    }

    fn reported(mut r: ResultRow, at: Time, outcome: Outcome) -> ResultRow {
        r.server_state = ServerState::Over;
        r.outcome = outcome;
        r.received_time = crate::server::types::db_time(at);
        r
    }

    fn over(mut r: ResultRow, outcome: Outcome, at: Time) -> ResultRow {
        r.server_state = ServerState::Over;
        r.outcome = outcome;
        r.received_time = crate::server::types::db_time(at);
        r
    }

    /// One row of every kind in a window `[1000, 10000]`: each result falls in
    /// exactly one fate, and the share is failed / passed.
    #[test]
    fn every_sent_result_has_one_fate() {
        let w = Window {
            warmup: 1000,
            end: 10_000,
        };
        let rows = [
            // Sent before the warm-up ended: skipped.
            (reported(sent(999, 5000), 6000, Outcome::Success), None),
            // Never sent.
            (sent(0, 0), None),
            // Reported exactly at the deadline: met.
            (
                reported(sent(1000, 5000), 5000, Outcome::Success),
                Some(DeadlineFate::Met),
            ),
            // A client error reported in time came back in time (error_frac counts it).
            (
                reported(sent(2000, 6000), 3000, Outcome::ClientError),
                Some(DeadlineFate::Met),
            ),
            // One second late.
            (
                reported(sent(2000, 6000), 6001, Outcome::Success),
                Some(DeadlineFate::Late),
            ),
            // Timed out by the transitioner.
            (
                over(sent(2000, 6000), Outcome::NoReply, 0),
                Some(DeadlineFate::NoReply),
            ),
            // Still in progress at the end, deadline past (transitioner not yet run).
            (sent(3000, 9999), Some(DeadlineFate::NoReply)),
            // Host detached: CLIENT_DETACHED, received at the detach.
            (
                over(sent(3000, 8000), Outcome::ClientDetached, 4000),
                Some(DeadlineFate::Detached),
            ),
            // Seed rule: mark_results_over gives NO_REPLY with a receive time.
            (
                over(sent(3000, 8000), Outcome::NoReply, 4000),
                Some(DeadlineFate::Detached),
            ),
            // Deadline at the end: not passed yet, even though already reported.
            (
                reported(sent(5000, 10_000), 6000, Outcome::Success),
                Some(DeadlineFate::Censored),
            ),
            (sent(9000, 20_000), Some(DeadlineFate::Censored)),
        ];
        let mut c = DeadlineCounts::default();
        for (i, (r, want)) in rows.iter().enumerate() {
            assert_eq!(deadline_fate(r, w), *want, "row {i}");
            if let Some(f) = deadline_fate(r, w) {
                c.add(f);
            }
        }
        assert_eq!(
            c,
            DeadlineCounts {
                met: 2,
                late: 1,
                no_reply: 2,
                detached: 2,
                censored: 2
            }
        );
        assert_eq!((c.passed(), c.failed()), (7, 5));
    }

    #[test]
    fn censoring_warning_above_a_third_of_the_window() {
        let w = Window {
            warmup: 86_400,
            end: 10 * 86_400,
        };
        assert_eq!(censoring_warning("project main", 3 * 86_400, w, 5), None);
        let msg = censoring_warning("project main", 3 * 86_400 + 1, w, 5).unwrap();
        assert!(
            msg.starts_with(
                "project main: delay_bound (3 d) is more than a third of the measured 9 d"
            ),
            "{msg}"
        );
        assert!(msg.contains(": 5 results sent"), "{msg}");
    }

    #[test]
    fn throughput_is_valid_work_assimilated_in_the_window() {
        let w = Window {
            warmup: 1000,
            end: 10_000,
        };
        let mut wu = WorkunitRow::from_template(&Default::default(), 0);
        assert_eq!(assimilated_in_window(&wu, w), None, "not assimilated");
        wu.assimilate_state = AssimilateState::Done;
        wu.assimilated_time = 2000;
        assert_eq!(assimilated_in_window(&wu, w), Some(false), "no canonical");
        wu.canonical_resultid = ResultId(7);
        assert_eq!(assimilated_in_window(&wu, w), Some(true));
        wu.error_mask = 2;
        assert_eq!(assimilated_in_window(&wu, w), Some(false), "error bit");
        wu.error_mask = 0;
        wu.assimilated_time = 999;
        assert_eq!(assimilated_in_window(&wu, w), None, "in the warm-up");
        wu.assimilated_time = 1000;
        assert_eq!(assimilated_in_window(&wu, w), Some(true));
        assert_eq!(w.days(), 9000.0 / 86_400.0);
    }
}
