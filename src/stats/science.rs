//! The science error figures: what happened to the truth of each output
//! (`output_correct` in `results.csv`, `canonical_correct` in `workunits.csv`; see
//! [`crate::client::truth`]).
//!
//! Replication exists to catch wrong results (spec backend §2.5: the validator
//! accepts a canonical result when `⌊min_quorum/2⌋ + 1` outputs agree). These figures
//! count what it let through: workunits whose canonical result is wrong, wrong results
//! judged VALID (and credited), and correct results judged INVALID. Like the other
//! series they are tallied from each row's own timestamps when the row is final, so
//! they can be recomputed exactly from the two tables. Rows whose truth is unknown
//! (scripted reports that do not say) count in none of them.

use crate::engine::Time;
use crate::server::db::{ResultRow, WorkunitRow};
use crate::server::types::{ResultId, ValidateState};

/// The series this module adds to `timeseries.csv`, per bucket, in this order. The
/// last two make the rate of each bucket readable directly, where the cumulative
/// `wrong_canonical_frac` hides a rise late in a long run under everything before it.
pub(crate) const SERIES: [&str; 6] = [
    "workunits_wrong_canonical",
    "results_wrong_valid",
    "results_correct_invalid",
    "wrong_canonical_frac",
    "workunits_canonical_known",
    "wrong_canonical_frac_interval",
];

/// Counters of one bucket (or of the run).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counts {
    /// Workunits whose canonical result has a known truth (at `canonical_found_time`).
    pub canonical_known: u64,
    /// Of those, the ones whose canonical result is wrong.
    pub wrong_canonical: u64,
    /// Wrong results judged VALID (at `received_time`).
    pub wrong_valid: u64,
    /// Correct results judged INVALID (at `received_time`).
    pub correct_invalid: u64,
}

impl Counts {
    pub(crate) fn add(&mut self, o: &Counts) {
        self.canonical_known += o.canonical_known;
        self.wrong_canonical += o.wrong_canonical;
        self.wrong_valid += o.wrong_valid;
        self.correct_invalid += o.correct_invalid;
    }

    /// Wrong canonical results over canonical results of known truth; no value
    /// without any.
    pub fn wrong_canonical_frac(&self) -> Option<f64> {
        (self.canonical_known > 0)
            .then(|| self.wrong_canonical as f64 / self.canonical_known as f64)
    }

    /// `self − o`, each count (what is left of the run's counts once those before
    /// the warm-up are taken out).
    fn minus(&self, o: &Counts) -> Counts {
        Counts {
            canonical_known: self.canonical_known.saturating_sub(o.canonical_known),
            wrong_canonical: self.wrong_canonical.saturating_sub(o.wrong_canonical),
            wrong_valid: self.wrong_valid.saturating_sub(o.wrong_valid),
            correct_invalid: self.correct_invalid.saturating_sub(o.correct_invalid),
        }
    }
}

/// A project's science figures, by bucket of `interval` seconds.
#[derive(Clone, Debug, Default)]
pub struct Science {
    interval: Time,
    buckets: Vec<Counts>,
    /// `[output] warmup`: the counts of rows timed before it are also kept in
    /// `before`, so the measured window's are the run's minus those.
    warmup: Time,
    before: Counts,
}

impl Science {
    /// Buckets of `interval` seconds (0: collect nothing, as `bench --no-metrics`).
    pub fn new(interval: Time) -> Self {
        Science {
            interval,
            ..Default::default()
        }
    }

    /// The measured window starts at `warmup` (`[output] warmup`).
    pub(crate) fn set_warmup(&mut self, warmup: Time) {
        self.warmup = warmup;
    }

    fn bucket(&mut self, t: Time) -> Option<&mut Counts> {
        if t < 0 || self.interval <= 0 {
            return None;
        }
        let k = (t / self.interval) as usize;
        if self.buckets.len() <= k {
            self.buckets.resize(k + 1, Counts::default());
        }
        self.buckets.get_mut(k)
    }

    /// A final workunit row: its canonical result's truth, at the time it was found.
    pub(crate) fn add_workunit(&mut self, wu: &WorkunitRow) {
        if wu.canonical_resultid == ResultId(0) {
            return;
        }
        let Some(correct) = wu.canonical_correct else {
            return;
        };
        let t: Time = wu.canonical_found_time.into();
        let before = t < self.warmup;
        if let Some(b) = self.bucket(t) {
            b.canonical_known += 1;
            b.wrong_canonical += u64::from(!correct);
            if before {
                self.before.canonical_known += 1;
                self.before.wrong_canonical += u64::from(!correct);
            }
        }
    }

    /// A final result row: a wrong VALID or a correct INVALID result, at its report.
    pub(crate) fn add_result(&mut self, r: &ResultRow) {
        let wrong_valid =
            r.output_correct == Some(false) && r.validate_state == ValidateState::Valid;
        let correct_invalid =
            r.output_correct == Some(true) && r.validate_state == ValidateState::Invalid;
        if !(wrong_valid || correct_invalid) {
            return;
        }
        let received = Time::from(r.received_time);
        let before = received < self.warmup;
        if let Some(b) = self.bucket(received) {
            b.wrong_valid += u64::from(wrong_valid);
            b.correct_invalid += u64::from(correct_invalid);
            if before {
                self.before.wrong_valid += u64::from(wrong_valid);
                self.before.correct_invalid += u64::from(correct_invalid);
            }
        }
    }

    /// The counts of the whole run.
    pub fn total(&self) -> Counts {
        let mut t = Counts::default();
        for b in &self.buckets {
            t.add(b);
        }
        t
    }

    /// The counts of the measured window: rows timed at or after the warm-up (the
    /// run's counts when there is none).
    pub fn window_total(&self) -> Counts {
        self.total().minus(&self.before)
    }

    /// The counts of bucket `k` (zero past the last one).
    pub fn bucket_counts(&self, k: usize) -> Counts {
        self.buckets.get(k).copied().unwrap_or_default()
    }

    /// The [`SERIES`] values of buckets `0..n`. `wrong_canonical_frac` is cumulative:
    /// wrong canonical results over canonical results found up to the end of the
    /// bucket (0 before the first), so its last value is the whole run's.
    /// `wrong_canonical_frac_interval` is the bucket's own rate, `None` (an empty
    /// field) in a bucket without a canonical result of known truth: no rate, rather
    /// than a 0 that reads as "no error".
    pub fn rows(&self, n: usize) -> Vec<[Option<f64>; SERIES.len()]> {
        let mut cum = Counts::default();
        (0..n.max(self.buckets.len()))
            .map(|k| {
                let b = self.bucket_counts(k);
                cum.add(&b);
                [
                    Some(b.wrong_canonical as f64),
                    Some(b.wrong_valid as f64),
                    Some(b.correct_invalid as f64),
                    Some(cum.wrong_canonical_frac().unwrap_or(0.0)),
                    Some(b.canonical_known as f64),
                    b.wrong_canonical_frac(),
                ]
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::types::ServerState;
    use crate::server::types::WuId;

    fn wu(found: Time, correct: Option<bool>) -> WorkunitRow {
        let t = crate::server::config::WuTemplate::default();
        let mut w = WorkunitRow::from_template(&t, 0);
        w.canonical_resultid = ResultId(1);
        w.canonical_found_time = crate::server::types::db_time(found);
        w.canonical_correct = correct;
        w
    }

    #[test]
    fn counts_land_in_their_buckets_and_the_fraction_accumulates() {
        let mut s = Science::new(100);
        s.add_workunit(&wu(50, Some(true)));
        s.add_workunit(&wu(150, Some(false)));
        s.add_workunit(&wu(160, Some(true)));
        s.add_workunit(&wu(170, None));
        let mut no_canonical = wu(10, None);
        no_canonical.canonical_resultid = ResultId(0);
        s.add_workunit(&no_canonical);
        let mut r = ResultRow::new(WuId(1), 0, 0, 0, 0, ServerState::Over);
        r.received_time = 250;
        r.output_correct = Some(false);
        r.validate_state = ValidateState::Valid;
        s.add_result(&r);
        r.output_correct = Some(true);
        r.validate_state = ValidateState::Invalid;
        s.add_result(&r);
        r.validate_state = ValidateState::Valid;
        s.add_result(&r);
        let rows = s.rows(4);
        let some = |v: [f64; 5], last: Option<f64>| {
            [
                Some(v[0]),
                Some(v[1]),
                Some(v[2]),
                Some(v[3]),
                Some(v[4]),
                last,
            ]
        };
        // Bucket 0: one correct canonical result; bucket 1: one wrong of two.
        assert_eq!(rows[0], some([0.0, 0.0, 0.0, 0.0, 1.0], Some(0.0)));
        assert_eq!(rows[1], some([1.0, 0.0, 0.0, 1.0 / 3.0, 2.0], Some(0.5)));
        // No canonical result of known truth: no rate of its own.
        assert_eq!(rows[2], some([0.0, 1.0, 1.0, 1.0 / 3.0, 0.0], None));
        assert_eq!(rows[3], some([0.0, 0.0, 0.0, 1.0 / 3.0, 0.0], None));
        let t = s.total();
        assert_eq!(
            (
                t.canonical_known,
                t.wrong_canonical,
                t.wrong_valid,
                t.correct_invalid
            ),
            (3, 1, 1, 1)
        );
        assert_eq!(t.wrong_canonical_frac(), Some(1.0 / 3.0));
        assert_eq!(Counts::default().wrong_canonical_frac(), None);
        assert_eq!(s.window_total(), t, "no warm-up: the window is the run");
    }

    /// With a warm-up of 100 s, the window keeps the canonical results found at or
    /// after it and the results reported at or after it.
    #[test]
    fn the_window_leaves_out_what_came_before_the_warm_up() {
        let mut s = Science::new(60);
        s.set_warmup(100);
        s.add_workunit(&wu(50, Some(false)));
        s.add_workunit(&wu(99, Some(true)));
        s.add_workunit(&wu(100, Some(false)));
        s.add_workunit(&wu(170, Some(true)));
        s.add_workunit(&wu(170, Some(true)));
        let mut r = ResultRow::new(WuId(1), 0, 0, 0, 0, ServerState::Over);
        r.output_correct = Some(false);
        r.validate_state = ValidateState::Valid;
        r.received_time = 99;
        s.add_result(&r);
        r.received_time = 100;
        s.add_result(&r);
        let w = s.window_total();
        assert_eq!(
            (
                w.canonical_known,
                w.wrong_canonical,
                w.wrong_valid,
                w.correct_invalid
            ),
            (3, 1, 1, 0)
        );
        assert_eq!(w.wrong_canonical_frac(), Some(1.0 / 3.0));
        assert_eq!(s.total().wrong_canonical_frac(), Some(0.4));
    }
}
