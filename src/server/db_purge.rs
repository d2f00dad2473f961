//! db_purge (`sched/db_purge.cpp`, spec backend §2.8).
//!
//! Deletes every workunit with `file_delete_state = DONE` (older than `min_age`)
//! together with all its results, even those whose own files were never deleted (their
//! outputs are then orphaned, as in BOINC). The deleted rows are handed to the output
//! writer so that they still appear in `workunits.csv` and `results.csv`; any later
//! report of a purged result is "not in DB" (acked and ignored).

use super::Project;
use super::db::Prefetch;
use crate::engine::Time;

/// Workunits purged per query (`DB_QUERY_LIMIT` of `sched/db_purge.cpp`).
pub(crate) const BATCH: usize = 1000;

/// A pass that purged more than this many workunits is followed at once by another;
/// otherwise the daemon sleeps its period (spec backend §2.8): half a query's worth.
pub(crate) const PURGE_AGAIN_ABOVE: usize = BATCH / 2;

/// One pass. Returns the number of workunits purged.
pub fn pass(p: &mut Project, now: Time) -> usize {
    let min_age = p.cfg.db_purge.min_age;
    let mut list = std::mem::take(&mut p.scratch);
    // The first BATCH old-enough workunits in id order, as a scan of `purge_ready`
    // finds them, without the scan (a pass used to walk the whole list).
    p.db.take_purgeable(now, min_age, BATCH, &mut list);
    p.walk(&list, Prefetch::RESULTS, |p, wuid| {
        let first = p.purged_results.len();
        let wu = p.db.purge_workunit(wuid, &mut p.purged_results);
        // A deleted result must not stay in the feeder's cache: the scheduler would
        // find its slot pointing at nothing (BOINC's feeder re-reads and drops it).
        for r in p.purged_results[first..].iter().filter(|r| r.in_cache) {
            p.feeder.forget(r.id);
        }
        p.purged.push((wu, p.purged_results.len() - first));
        true
    });
    let n = list.len();
    p.scratch = list;
    n
}
