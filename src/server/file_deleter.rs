//! File deleter (`sched/file_deleter.cpp`, spec backend §2.7).
//!
//! Each pass deletes the output files of up to 1500 results and then the input files
//! of up to 500 workunits whose `file_delete_state = READY`. Deletion succeeds unless
//! the scenario gives a failure probability, in which case the item goes to
//! `FILE_DELETE_ERROR` and is retried once an hour (if the `file_delete_error_state`
//! switch is on; the seed has no error state).

use super::Project;
use super::db::{Db, Prefetch};
use super::step::Step;
use super::types::*;
use crate::engine::Time;
use rand::RngExt;

const ACTOR: Actor = Actor::FileDeleter;
/// Results handled per pass.
pub(crate) const RESULTS_PER_PASS: usize = 1500;
/// Workunits handled per pass.
pub(crate) const WUS_PER_PASS: usize = 500;
/// Retry period of items in ERROR.
pub(crate) const ERROR_RETRY_SECS: Time = 3600;

/// Deleter progress kept across passes.
#[derive(Clone, Debug, Default)]
pub struct State {
    /// Time of the last retry of ERROR items.
    pub last_error_retry: Time,
}

impl State {
    /// The state the deleter would have before a pass at `now` had it run at every
    /// tick `0, period, 2·period, …` before it: an idle pass changes only
    /// `last_error_retry`, which on that lattice is a pure function of time (the
    /// retries fall on the multiples of [`retry_every`]). The world calls it
    /// before a pass of a deleter that slept (docs/performance.md "Idle daemons").
    pub fn fast_forward(&mut self, now: Time, period: Time) {
        let m = retry_every(period);
        self.last_error_retry = if now >= period {
            (now - period).div_euclid(m) * m
        } else {
            0
        };
    }

    /// The retry clock at a tick at `now`: whether the items in ERROR are retried
    /// now (an hour has passed since the last retry), which restarts the hour. A
    /// pass calls it; so does a tick at which the deleter is down (the world's
    /// `Backend::run_daemon`): the retries keep the schedule of a deleter run at
    /// every tick, which [`Self::fast_forward`] reproduces, so a restarted deleter
    /// retries at the schedule's next time, not at once.
    pub fn tick(&mut self, now: Time) -> bool {
        let due = now - self.last_error_retry >= ERROR_RETRY_SECS;
        if due {
            self.last_error_retry = now;
        }
        due
    }
}

/// The spacing of the error retries of a deleter run every `period` seconds:
/// from a retry at `r`, the next is at the first tick `t` with `t − r ≥ 3600`.
pub fn retry_every(period: Time) -> Time {
    let period = period.max(1);
    (ERROR_RETRY_SECS + period - 1) / period * period
}

/// The earliest time at which a pass of a deleter run every `period` seconds
/// could delete or retry anything (`None`: not before a step changes the lists).
/// Early rather than late.
pub fn next_work(p: &Project, now: Time, period: Time) -> Option<Time> {
    let db = &p.db;
    if !db.fd_ready_results.is_empty() || !db.fd_ready_wus.is_empty() {
        return Some(now);
    }
    if !db.fd_error_results.is_empty() || !db.fd_error_wus.is_empty() {
        let m = retry_every(period);
        // The first retry at or after `now` (a retry is never at 0).
        return Some((now.max(0) + m - 1) / m * m).map(|t| t.max(m));
    }
    None
}

/// Draws whether one deletion fails.
fn fails(p: &mut Project) -> bool {
    let prob = p.cfg.file_deleter.failure_prob;
    if prob <= 0.0 || !p.sw.file_delete_error_state {
        return false;
    }
    let u = match p.cfg.pin.file_delete {
        Some(u) => u,
        None => p.rng.random::<f64>(),
    };
    u < prob
}

fn outcome(p: &mut Project) -> FileDeleteState {
    if fails(p) {
        FileDeleteState::Error
    } else {
        FileDeleteState::Done
    }
}

/// One pass: the results whose files are ready to delete, then the workunits
/// (with those that failed before, once every [`ERROR_RETRY_SECS`]).
pub fn pass(p: &mut Project, now: Time, state: &mut State) -> Step {
    let retry_errors = state.tick(now);
    let results = |db: &mut Db, list: &mut Vec<ResultId>| {
        list.extend(db.fd_ready_results.iter().take(RESULTS_PER_PASS));
        if retry_errors {
            list.extend(db.fd_error_results.iter());
        }
    };
    let mut n = p.walk_results(results, |p, rid| {
        let s = outcome(p);
        p.db.set_result_file_delete_state(ACTOR, rid, s);
    });
    let wus = |db: &mut Db, list: &mut Vec<WuId>| {
        list.extend(db.fd_ready_wus.iter().take(WUS_PER_PASS));
        if retry_errors {
            list.extend(db.fd_error_wus.iter());
        }
    };
    n += p.walk_workunits(Prefetch::default(), wus, |p, wuid| {
        let s = outcome(p);
        p.db.set_wu_file_delete_state(ACTOR, wuid, s, now);
        true
    });
    Step::handled(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast-forwarded state equals the one of a deleter that ran at every tick,
    /// whatever the period.
    #[test]
    fn fast_forward_matches_every_tick() {
        for period in [1, 5, 7, 60, 300, 599, 3599, 3600, 3601, 5000] {
            let mut every = State::default();
            let mut t = 0;
            while t < 5 * 86_400 {
                let mut ff = State::default();
                ff.fast_forward(t, period);
                assert_eq!(
                    ff.last_error_retry, every.last_error_retry,
                    "p={period} t={t}"
                );
                // The pass's own update (file_deleter::pass).
                if every.tick(t) {
                    assert_eq!(t % retry_every(period), 0);
                }
                t += period;
            }
        }
    }
}
