//! db_purge (`sched/db_purge.cpp`, spec backend §2.8).
//!
//! Deletes every workunit with `file_delete_state = DONE` (older than `min_age`)
//! together with all its results, even those whose own files were never deleted (their
//! outputs are then orphaned, as in BOINC). The deleted rows are handed to the output
//! writer so that they still appear in `workunits.csv` and `results.csv`; any later
//! report of a purged result is "not in DB" (acked and ignored).

use super::Project;
use super::db::{Db, Prefetch};
use super::step::Step;
use super::types::WuId;
use crate::engine::Time;

/// Workunits purged per query (`DB_QUERY_LIMIT` of `sched/db_purge.cpp`).
pub(crate) const BATCH: usize = 1000;

/// A pass that purged more than this many workunits is followed at once by another;
/// otherwise the daemon sleeps its period (spec backend §2.8): half a query's worth.
pub(crate) const PURGE_AGAIN_ABOVE: usize = BATCH / 2;

/// One pass: the purged rows are in the step, for the outputs.
pub fn pass(p: &mut Project, now: Time) -> Step {
    let min_age = p.cfg.db_purge.min_age;
    // The first BATCH old-enough workunits in id order, as a scan of `purge_ready`
    // finds them, without the scan (a pass used to walk the whole list).
    let query = |db: &mut Db, list: &mut Vec<WuId>| db.take_purgeable(now, min_age, BATCH, list);
    let mut step = Step::default();
    step.handled = p.walk_workunits(Prefetch::RESULTS, query, |p, wuid| {
        let results = step.purged_results_mut();
        let first = results.len();
        let wu = p.db.purge_workunit(wuid, results);
        // A deleted result must not stay in the feeder's cache: the scheduler would
        // find its slot pointing at nothing (BOINC's feeder re-reads and drops it).
        for r in results[first..].iter().filter(|r| r.in_cache) {
            p.feeder.forget(r.id);
        }
        step.purged(wu);
        true
    });
    step
}
