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

/// Legacy infeasible-queue thresholds (pre-2007, spec backend §2.3; §5 row 4).
pub const MAX_INFEASIBLE_COUNT: u32 = 5000;
#[doc(inline)]
pub(crate) use super::job_cache::MAX_INFEASIBLE_THRESHOLD;
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
    // The master feeder's `update_av_scales`, every 600 s (spec backend §6.2).
    p.credit.av_scales_if_due(now);
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
    let mut cursor = p.db.first_feedable();
    let mut from = 0;
    while let Some(slot) = p.feeder.next_fillable(from) {
        from = slot + 1;
        // A slot whose result was sent or retired elsewhere is stale: free it.
        p.feeder.empty(&mut p.db, slot);
        // Find the next eligible UNSENT result.
        let mut chosen = None;
        while let Some(key) = cursor {
            cursor = p.db.feedable_after(key);
            let (wuid, rid) = (key.wuid(), key.rid());
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

/// The earliest time at which a feeder pass could change anything (`None`: not
/// before a step changes the database), never later than the truth: the credit
/// scales' update when due; at once if a slot may be fillable (after the cache reads
/// its log of moves) while results wait to be fed, or in legacy mode (whose
/// infeasible-queue check is not tracked). An idle pass changes nothing but the
/// cache's sync, which the scheduler also does before reading the cache, so the
/// world may skip it (docs/performance.md "Idle daemons").
pub fn next_work(p: &Project, now: Time) -> Option<Time> {
    let fill =
        !p.db.feedable.is_empty() && (p.feeder.has_fillable() || !p.db.cache_moves.is_empty());
    let t = p.credit.next_av_scales();
    Some(if fill || p.sw.legacy_couldnt_send {
        t.min(now)
    } else {
        t
    })
}

/// The feeder pass as it was written before the cache had indexes: a walk over every
/// slot, and over every UNSENT result (cached ones skipped) from the first, in
/// `(priority desc, WU id, result id)` order. The reference the indexed pass is
/// tested against; `slots` stands for the cache.
#[cfg(test)]
pub(crate) fn reference_pass(
    slots: &mut [Option<ResultId>],
    db: &mut super::db::Db,
    legacy: bool,
    now: Time,
) -> usize {
    use std::cmp::Reverse;
    if legacy {
        for slot in slots.iter_mut() {
            let Some(rid) = *slot else { continue };
            let r = db.result(rid);
            if r.server_state == ServerState::Unsent
                && r.infeasible_count > MAX_INFEASIBLE_THRESHOLD
            {
                let wuid = r.workunitid;
                *slot = None;
                db.result_mut(rid).in_cache = false;
                db.set_over(Actor::Feeder, rid, Outcome::CouldntSend);
                db.set_transition_time(Actor::Feeder, wuid, now);
            }
        }
    }
    // Only the result just examined changes state during the walk, so a snapshot
    // of the UNSENT order is the order the old cursor followed.
    let mut unsent: Vec<(Reverse<i32>, WuId, ResultId)> = (1..db.results.next_id().0)
        .filter_map(|id| db.results.get(ResultId(id)))
        .filter(|r| r.server_state == ServerState::Unsent)
        .map(|r| (Reverse(r.priority), r.workunitid, r.id))
        .collect();
    unsent.sort();
    let mut cursor = unsent.into_iter();
    let mut filled = 0;
    for slot in slots.iter_mut() {
        if let Some(rid) = *slot {
            match db.results.get(rid) {
                Some(r) if r.server_state == ServerState::Unsent => continue,
                Some(_) => db.result_mut(rid).in_cache = false,
                None => {}
            }
            *slot = None;
        }
        let mut chosen = None;
        for (_, wuid, rid) in cursor.by_ref() {
            let wu = db.wu(wuid);
            if wu.transitioner_flags != 0 || db.result(rid).in_cache {
                continue;
            }
            if wu.error_mask != 0 {
                db.set_over(Actor::Feeder, rid, Outcome::DidntNeed);
                continue;
            }
            chosen = Some(rid);
            break;
        }
        let Some(rid) = chosen else { break };
        *slot = Some(rid);
        db.result_mut(rid).in_cache = true;
        filled += 1;
    }
    filled
}

#[cfg(test)]
mod tests {
    use super::super::ProjectConfig;
    use super::super::db::{Db, FeedKey, ResultRow};
    use super::super::invariants::test_rows;
    use super::*;
    use proptest::prelude::*;

    /// A generated result: its workunit's kind (0 plain, 1 errored, 2 flagged by
    /// the transitioner), priority, whether it passed the legacy threshold, and where
    /// it is: 0 UNSENT, 1 IN_PROGRESS, 2 cached in its slot, 3 cached then retired
    /// (stale).
    type Spec = (u8, i32, bool, u8);

    fn spec() -> impl Strategy<Value = Spec> {
        (
            prop_oneof![6 => Just(0u8), 1 => Just(1), 1 => Just(2)],
            0..2i32,
            prop::bool::weighted(0.2),
            0..4u8,
        )
    }

    /// Two identical databases from `specs`: one with the indexed cache, one with
    /// plain slots for [`reference_pass`]. Result `i` with a slot is cached in slot
    /// `i % nslots` (later ones skip an occupied slot).
    fn build(specs: &[Spec], nslots: usize, legacy: bool) -> (Project, Vec<Option<ResultId>>, Db) {
        let mut p = Project::new(0, "main", ProjectConfig::default(), 1, true);
        p.sw.legacy_couldnt_send = legacy;
        p.feeder = super::super::job_cache::Cache::new(nslots);
        let mut reference = Db::new(true);
        let mut slots = vec![None; nslots];
        for (i, &(kind, priority, over, place)) in specs.iter().enumerate() {
            for db in [&mut p.db, &mut reference] {
                let w = db.insert_workunit(Actor::WorkGenerator, test_rows::workunit());
                db.wu_mut(w).error_mask = (kind == 1) as i32;
                db.wu_mut(w).transitioner_flags = (kind == 2) as u8;
                let mut r = ResultRow::new(w, 0, 0, priority, 0, ServerState::Unsent);
                r.infeasible_count = if over {
                    MAX_INFEASIBLE_THRESHOLD + 1
                } else {
                    0
                };
                db.insert_result(Actor::Transitioner, r);
            }
            let rid = ResultId(p.db.results.next_id().0 - 1);
            let slot = i % nslots;
            let cached = place >= 2 && slots[slot].is_none();
            if cached {
                p.feeder.fill(&mut p.db, slot, rid);
                slots[slot] = Some(rid);
                reference.result_mut(rid).in_cache = true;
            }
            if place == 1 || (place == 3 && cached) {
                p.db.set_over(Actor::Transitioner, rid, Outcome::DidntNeed);
                reference.set_over(Actor::Transitioner, rid, Outcome::DidntNeed);
            }
        }
        p.db.audit.clear();
        reference.audit.clear();
        (p, slots, reference)
    }

    /// Asserts that both sides agree: slots, result and workunit rows, audit trail,
    /// and the cache's indexes and `feedable` are consistent.
    fn same(p: &mut Project, slots: &[Option<ResultId>], reference: &Db) {
        assert_eq!(p.feeder.slots(), slots);
        assert_eq!(p.feeder.occupied(), slots.iter().flatten().count());
        assert_eq!(p.db.audit, reference.audit);
        for id in 1..reference.results.next_id().0 {
            let (a, b) = (p.db.result(ResultId(id)), reference.result(ResultId(id)));
            let fields =
                |r: &ResultRow| (r.server_state, r.outcome, r.in_cache, r.infeasible_count);
            assert_eq!(fields(a), fields(b), "result {id}");
            let (a, b) = (p.db.wu(a.workunitid), reference.wu(b.workunitid));
            assert_eq!(a.transition_time, b.transition_time);
        }
        p.feeder.sync(&mut p.db);
        p.feeder.check_index(&p.db);
        let feedable: Vec<_> = (1..reference.results.next_id().0)
            .map(|id| p.db.result(ResultId(id)))
            .filter(|r| r.server_state == ServerState::Unsent && !r.in_cache)
            .map(|r| FeedKey::new(r.priority, r.workunitid, r.id))
            .collect();
        let mut expected = feedable;
        expected.sort();
        assert_eq!(p.db.feedable.iter().copied().collect::<Vec<_>>(), expected);
    }

    proptest! {
        /// For random caches (empty, live and stale slots), random pools (errored and
        /// flagged workunits, too few or enough results), legacy mode on or off, the
        /// indexed pass fills the same slots with the same results and has the same
        /// side effects, in the same order, as the reference walk; again after some
        /// cached results are retired between two passes.
        #[test]
        fn pass_equals_reference_walk(
            specs in prop::collection::vec(spec(), 0..80),
            nslots in 1usize..40,
            legacy in any::<bool>(),
            retire in prop::collection::vec(any::<bool>(), 40),
        ) {
            let (mut p, mut slots, mut reference) = build(&specs, nslots, legacy);
            let n = pass(&mut p, 7);
            prop_assert_eq!(n, reference_pass(&mut slots, &mut reference, legacy, 7));
            same(&mut p, &slots, &reference);
            for (slot, _) in retire.iter().enumerate().filter(|&(s, &r)| r && s < nslots) {
                if let Some(rid) = slots[slot]
                    && reference.result(rid).server_state == ServerState::Unsent
                {
                    p.db.set_over(Actor::Transitioner, rid, Outcome::DidntNeed);
                    reference.set_over(Actor::Transitioner, rid, Outcome::DidntNeed);
                }
            }
            let n = pass(&mut p, 8);
            prop_assert_eq!(n, reference_pass(&mut slots, &mut reference, legacy, 8));
            same(&mut p, &slots, &reference);
        }
    }
}
