//! What one step of a project did that the world must act on. A daemon pass
//! (spec backend §2.2–§2.8) returns one [`Step`]: the results its validator decided
//! and the rows its db_purge removed, which the outputs must still hear of. The
//! world ends every step, a scheduler RPC's included, by handing these and the
//! database's audit trail of the step's writes to the recorder and the invariant
//! checker (`world::link`).
//!
//! The audit trail stays the database's own log ([`Db::audit`](super::db::Db)):
//! every audited write appends to it, wherever it happens, and the world reads and
//! empties it after each step. Moving it into each step's value would allocate a
//! new log per step.

use super::db::{ResultRow, WorkunitRow};
use super::job_log::DecidedResult;

/// What one daemon pass did for the world to act on.
#[derive(Debug, Default)]
pub struct Step {
    /// Work items the pass handled (its snapshot's length; the assimilator's ends
    /// at a handler error): db_purge runs again at once after a full pass.
    pub handled: usize,
    /// Results the validator decided (VALID or INVALID), in the order it decided
    /// them: the job log and the credit figures ([`super::job_log`]).
    pub decided: Vec<DecidedResult>,
    /// Workunits db_purge removed, each with the number of its results, which
    /// follow one another in `purged_results` in the same order ([`Self::purged`]).
    purged_workunits: Vec<(WorkunitRow, usize)>,
    purged_results: Vec<ResultRow>,
    /// How many of `purged_results` belong to a workunit already noted.
    noted_results: usize,
}

impl Step {
    /// A pass that handled `handled` items and has nothing else to say.
    pub fn handled(handled: usize) -> Self {
        Self {
            handled,
            ..Self::default()
        }
    }

    /// The list db_purge appends a workunit's purged results to, before it notes
    /// the workunit itself ([`Self::purged`]). One flat list serves the whole pass,
    /// so a pass allocates per pass, not per workunit.
    pub(crate) fn purged_results_mut(&mut self) -> &mut Vec<ResultRow> {
        &mut self.purged_results
    }

    /// Notes workunit `wu`, just purged, with the results appended since the last
    /// workunit noted.
    pub(crate) fn purged(&mut self, wu: WorkunitRow) {
        let n = self.purged_results.len() - self.noted_results;
        self.noted_results += n;
        self.purged_workunits.push((wu, n));
    }

    /// The purged workunits, each with its results, in purge order.
    pub fn purged_rows(&self) -> impl Iterator<Item = (&WorkunitRow, &[ResultRow])> {
        let mut at = 0;
        self.purged_workunits.iter().map(move |(wu, n)| {
            let results = &self.purged_results[at..at + n];
            at += n;
            (wu, results)
        })
    }
}
