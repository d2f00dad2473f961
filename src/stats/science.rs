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

/// The series this module adds to `timeseries.csv`, per bucket, in this order.
pub(crate) const SERIES: [&str; 4] = [
    "workunits_wrong_canonical",
    "results_wrong_valid",
    "results_correct_invalid",
    "wrong_canonical_frac",
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
    fn add(&mut self, o: &Counts) {
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
}

/// A project's science figures, by bucket of `interval` seconds.
#[derive(Clone, Debug, Default)]
pub struct Science {
    interval: Time,
    buckets: Vec<Counts>,
}

impl Science {
    /// Buckets of `interval` seconds (0: collect nothing, as `bench --no-metrics`).
    pub fn new(interval: Time) -> Self {
        Science {
            interval,
            buckets: Vec::new(),
        }
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
        if let Some(b) = self.bucket(wu.canonical_found_time.into()) {
            b.canonical_known += 1;
            b.wrong_canonical += u64::from(!correct);
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
        if let Some(b) = self.bucket(r.received_time) {
            b.wrong_valid += u64::from(wrong_valid);
            b.correct_invalid += u64::from(correct_invalid);
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

    /// The [`SERIES`] values of buckets `0..n`. `wrong_canonical_frac` is cumulative:
    /// wrong canonical results over canonical results found up to the end of the
    /// bucket (0 before the first), so its last value is the run's.
    pub fn rows(&self, n: usize) -> Vec<[f64; SERIES.len()]> {
        let mut cum = Counts::default();
        (0..n.max(self.buckets.len()))
            .map(|k| {
                let b = self.buckets.get(k).copied().unwrap_or_default();
                cum.add(&b);
                [
                    b.wrong_canonical as f64,
                    b.wrong_valid as f64,
                    b.correct_invalid as f64,
                    cum.wrong_canonical_frac().unwrap_or(0.0),
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
        w.canonical_found_time = crate::engine::db_time(found);
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
        assert_eq!(rows[0], [0.0, 0.0, 0.0, 0.0]);
        assert_eq!(rows[1], [1.0, 0.0, 0.0, 1.0 / 3.0]);
        assert_eq!(rows[2], [0.0, 1.0, 1.0, 1.0 / 3.0]);
        assert_eq!(rows[3], [0.0, 0.0, 0.0, 1.0 / 3.0]);
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
    }
}
