//! The BATCH table (spec backend §1.5): one row per submitted batch, kept up to
//! date as its workunits finish. Submission itself, which inserts the workunits,
//! is `server::batch`; the database only keeps the rows.

use crate::engine::Time;
use crate::server::types::*;
use std::sync::Arc;

/// A BATCH row (spec backend §1.5): the fields BOINC's batch table keeps that the
/// simulation can fill.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchRow {
    /// 1-based, in submission order (`workunit.batch`).
    pub id: u32,
    pub app_id: AppId,
    /// The submitter's name for it (`batch<id>` unless the scenario names it).
    pub name: Arc<str>,
    pub create_time: Time,
    /// Jobs (workunits) in the batch.
    pub njobs: u32,
    /// Workunits with a canonical result (`njobs_success`).
    pub njobs_success: u32,
    /// Workunits with an error bit and no canonical result (`nerror_jobs`).
    pub nerror_jobs: u32,
    /// `(njobs_success + nerror_jobs) / njobs`.
    pub fraction_done: f64,
    pub state: BatchState,
    /// When the last workunit got its canonical result or gave up (0 = not yet).
    pub completion_time: Time,
    /// The priority its workunits and results were given.
    pub priority: i32,
    /// Its workunits' ids are `first_wu .. first_wu + njobs`: one submission
    /// inserts them together.
    pub first_wu: WuId,
    /// Instances each workunit got at first (the template's `target_nresults`):
    /// results beyond these are retries.
    pub initial_results: u32,
}

impl BatchRow {
    /// Whether workunit `id` belongs to this batch.
    pub fn holds(&self, id: WuId) -> bool {
        id.0 >= self.first_wu.0 && id.0 - self.first_wu.0 < self.njobs
    }
}

/// A project's batch table.
#[derive(Clone, Debug, Default)]
pub struct Batches {
    /// Row `k` is batch `k + 1`.
    pub rows: Vec<BatchRow>,
}

impl Batches {
    /// Batch `id` (`workunit.batch`; 0 = none).
    pub fn get(&self, id: u32) -> Option<&BatchRow> {
        self.rows.get((id as usize).wrapping_sub(1))
    }

    /// A workunit of batch `batch` has just become ready to assimilate, at `now`:
    /// it has a canonical result (`success`) or an error bit (`get_batch_params`).
    /// Called once per workunit, when `assimilate_state` leaves INIT.
    pub(crate) fn workunit_done(&mut self, batch: u32, success: bool, now: Time) {
        let Some(b) = self.rows.get_mut((batch as usize).wrapping_sub(1)) else {
            return;
        };
        if success {
            b.njobs_success += 1;
        } else {
            b.nerror_jobs += 1;
        }
        let done = b.njobs_success + b.nerror_jobs;
        b.fraction_done = f64::from(done) / f64::from(b.njobs.max(1));
        if done >= b.njobs && b.state == BatchState::InProgress {
            b.state = BatchState::Complete;
            b.completion_time = now;
        }
    }
}
