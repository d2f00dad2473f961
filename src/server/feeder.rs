//! Feeder and the shared-memory job cache (`feeder.cpp`, spec backend §2.3).
//!
//! The cache ([`super::job_cache`]) has `shmem_work_items` slots. Each pass fills
//! empty slots with UNSENT results not already cached (`Db::feedable`), in the
//! default order `priority DESC, workunitid ASC` (then result id), and marks results of workunits with an error OVER/DIDNT_NEED on
//! the way (without touching `transition_time`). This is the spec's "simulator
//! simplification that keeps the semantics": the scheduler re-reads a slot's result
//! before sending it, so a stale slot is harmless.

use super::Project;
use super::types::*;
use crate::engine::Time;
use std::ops::Bound;

/// Legacy infeasible-queue thresholds (pre-2007, spec backend §2.3; §5 row 4).
pub const MAX_INFEASIBLE_COUNT: u32 = 5000;
#[doc(inline)]
pub use super::job_cache::MAX_INFEASIBLE_THRESHOLD;
pub const MAX_INFEASIBLE: u32 = 500;

/// One feeder scan. Returns the number of slots filled.
///
/// BOINC's scan visits every slot in index order: a live slot (its result still
/// UNSENT) stays; a stale one is freed; a free slot takes the next eligible result,
/// and the scan stops when there is none (later stale slots stay until a pass
/// reaches them). The cache's index of fillable slots (empty or stale, see
/// [`super::job_cache`]) yields exactly the slots that scan would not skip, in the
/// same order, so a pass costs the slots it frees and fills, not the cache size.
pub fn pass(p: &mut Project, now: Time) -> usize {
    p.feeder.sync(&mut p.db);
    // Legacy mode: a cached result nobody could take too often falls off the
    // infeasible queue as COULDNT_SEND (seed BackendLogic, §5 row 4). Only slots whose
    // count passed the threshold are visited, in index order as BOINC's scan does.
    if p.sw.legacy_couldnt_send {
        let mut from = 0;
        while let Some(i) = p.feeder.next_over_threshold(from) {
            from = i + 1;
            let Some(rid) = p.feeder.get(i) else {
                continue;
            };
            let r = p.db.result(rid);
            if r.server_state == ServerState::Unsent
                && r.infeasible_count > MAX_INFEASIBLE_THRESHOLD
            {
                let wuid = r.workunitid;
                p.feeder.empty(&mut p.db, i);
                p.db.set_over(Actor::Feeder, rid, Outcome::CouldntSend);
                p.db.set_transition_time(Actor::Feeder, wuid, now);
            }
        }
    }
    let mut filled = 0;
    let mut cursor = p.db.feedable.iter().next().copied();
    let mut from = 0;
    while let Some(slot) = p.feeder.next_fillable(from) {
        from = slot + 1;
        // A slot whose result was sent or retired elsewhere is stale: free it.
        p.feeder.empty(&mut p.db, slot);
        // Find the next eligible UNSENT result.
        let mut chosen = None;
        while let Some(key) = cursor {
            cursor =
                p.db.feedable
                    .range((Bound::Excluded(key), Bound::Unbounded))
                    .next()
                    .copied();
            let (_, wuid, rid) = key;
            let wu = p.db.wu(wuid);
            // BOINC also skips a result already in a slot (a "collision"); cached
            // results are not in `feedable`, so there are none here.
            debug_assert!(
                !p.db.result(rid).in_cache,
                "cached result {rid} is feedable"
            );
            if wu.transitioner_flags != 0 {
                continue;
            }
            if wu.error_mask != 0 {
                p.db.set_over(Actor::Feeder, rid, Outcome::DidntNeed);
                continue;
            }
            chosen = Some(rid);
            break;
        }
        let Some(rid) = chosen else { break };
        p.feeder.fill(&mut p.db, slot, rid);
        filled += 1;
    }
    filled
}
