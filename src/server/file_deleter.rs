//! File deleter (`sched/file_deleter.cpp`, spec backend §2.7).
//!
//! Each pass deletes the output files of up to 1500 results and then the input files
//! of up to 500 workunits whose `file_delete_state = READY`. Deletion succeeds unless
//! the scenario gives a failure probability, in which case the item goes to
//! `FILE_DELETE_ERROR` and is retried once an hour (if the `file_delete_error_state`
//! switch is on; the seed has no error state).

use super::Project;
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

/// One pass. Returns the number of items handled.
pub fn pass(p: &mut Project, now: Time, state: &mut State) -> usize {
    let retry_errors = now - state.last_error_retry >= ERROR_RETRY_SECS;
    if retry_errors {
        state.last_error_retry = now;
    }
    let mut results = std::mem::take(&mut p.scratch_results);
    let mut n = 0;

    results.clear();
    results.extend(p.db.fd_ready_results.iter().take(RESULTS_PER_PASS));
    if retry_errors {
        results.extend(p.db.fd_error_results.iter());
    }
    for (i, &rid) in results.iter().enumerate() {
        p.db.results.prefetch_list_step(&results, i);
        let s = outcome(p);
        p.db.set_result_file_delete_state(ACTOR, rid, s);
    }
    n += results.len();
    p.scratch_results = results;

    let mut list = std::mem::take(&mut p.scratch);
    list.clear();
    list.extend(p.db.fd_ready_wus.iter().take(WUS_PER_PASS));
    if retry_errors {
        list.extend(p.db.fd_error_wus.iter());
    }
    for (i, &wuid) in list.iter().enumerate() {
        p.db.workunits.prefetch_list_step(&list, i);
        let s = outcome(p);
        p.db.set_wu_file_delete_state(ACTOR, wuid, s, now);
    }
    n += list.len();
    p.scratch = list;
    n
}
