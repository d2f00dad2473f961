//! The shared-memory job cache (`sched_shmem.cpp`, spec backend §2.3) and the
//! indexes that let the feeder and the scheduler reach its slots without a walk.
//!
//! BOINC's feeder scans every slot on each pass, and `send_work_score` (spec backend
//! §2.4.4) scores every slot on each request. Both are cheap with BOINC's default 100
//! slots, but large projects configure thousands, and the simulator runs many more
//! requests per second than a real server. The cache therefore keeps, next to the
//! slots themselves:
//!
//! - the *live* slots (holding a result that is still UNSENT) grouped by score class
//!   `(result.priority, infeasible_count > 0)`, each a bit set, so that a request
//!   visits its candidates in the order of BOINC's sorted candidate list (score
//!   descending, then scan order from the random start slot) by finding the next set
//!   bit in circular order, touching only the slots it examines;
//! - the *fillable* slots (empty, or holding a result that left UNSENT: stale), so
//!   that a feeder pass visits, in index order, exactly the slots BOINC's scan would
//!   free and refill;
//! - where each cached result sits, so that a result leaving UNSENT marks its slot
//!   stale when it happens: the database logs every state change of a cached
//!   result (`Db::cache_moves`), and [`Cache::sync`] reads that log before each
//!   feeder pass and each request;
//! - in legacy mode, the slots whose result passed `MAX_INFEASIBLE_THRESHOLD`
//!   (spec backend §2.3, §5 row 4), so the feeder finds them without a walk.
//!
//! The database's list of results to feed, `Db::feedable`, holds the UNSENT results
//! that are *not* cached: BOINC's feeder skips cached ones as collisions, so leaving
//! them out gives the same picks, and a pass does not walk past thousands of them.
//!
//! All index updates go through [`Cache::fill`], [`Cache::empty`], [`Cache::forget`],
//! [`Cache::bump_infeasible`] and [`Cache::sync`]; the slots are read-only outside.

use super::db::{Db, FeedKey};
use super::types::{ResultId, ServerState};
use rustc_hash::FxHashMap;

/// Legacy `MAX_INFEASIBLE_THRESHOLD` (spec backend §2.3; §5 row 4): a cached result
/// whose `infeasible_count` passes it falls off the cache as COULDNT_SEND.
pub(crate) const MAX_INFEASIBLE_THRESHOLD: u32 = 2000;

/// Marks a slot that is in no score class (empty or stale).
const NO_CLASS: u32 = u32::MAX;

/// A fixed-size bit set with "next set bit in a range", the one query the cache
/// needs (in circular order from a start slot, over the union of at most two sets),
/// which general bit-set crates do not offer.
#[derive(Clone, Debug, Default, PartialEq)]
struct Bits {
    words: Vec<u64>,
}

impl Bits {
    fn new(n: usize) -> Self {
        Self {
            words: vec![0; n.div_ceil(64)],
        }
    }
    fn set(&mut self, i: usize, on: bool) {
        let (w, b) = (i / 64, 1u64 << (i % 64));
        if on {
            self.words[w] |= b;
        } else {
            self.words[w] &= !b;
        }
    }
    #[cfg(test)]
    fn get(&self, i: usize) -> bool {
        self.words[i / 64] & (1u64 << (i % 64)) != 0
    }
}

/// The first index in `from..to` set in `a` or in `b`.
fn next_set(a: &Bits, b: Option<&Bits>, from: usize, to: usize) -> Option<usize> {
    if from >= to {
        return None;
    }
    let mut w = from / 64;
    let mut mask = !0u64 << (from % 64);
    let last = (to - 1) / 64;
    while w <= last {
        let word = (a.words[w] | b.map_or(0, |b| b.words[w])) & mask;
        if word != 0 {
            let i = w * 64 + word.trailing_zeros() as usize;
            return (i < to).then_some(i);
        }
        w += 1;
        mask = !0;
    }
    None
}

/// The live slots whose result has one `(priority, infeasible_count > 0)`: its
/// `send_work_score` score is `priority + infeasible` (spec backend §2.4.4 step 1).
#[derive(Clone, Debug)]
struct Class {
    priority: i32,
    infeasible: bool,
    slots: Bits,
    len: usize,
}

impl Class {
    fn score(&self) -> i64 {
        self.priority as i64 + self.infeasible as i64
    }
}

/// The job cache: one optional result per slot, with its indexes.
#[derive(Clone, Debug)]
pub struct Cache {
    slots: Vec<Option<ResultId>>,
    occupied: usize,
    /// The slot of each cached result. Hashed with FxHash: the key is a row id the
    /// simulator hands out, not an input to guard against, and SipHash on every
    /// fill, free and state change of a cached result showed in the profile
    /// (docs/performance.md, "Measurements behind the code"). Nothing iterates the
    /// map, so the hasher cannot change an output.
    slot_of: FxHashMap<ResultId, u32>,
    /// The score class of each live slot (`NO_CLASS`: empty or stale).
    class_of: Vec<u32>,
    /// Score classes in order of first use (a project has few distinct priorities).
    classes: Vec<Class>,
    /// Empty or stale slots: the ones a feeder pass frees and refills.
    fillable: Bits,
    /// Slots whose result's `infeasible_count` passed the legacy threshold (a
    /// superset: the feeder re-checks each).
    over_threshold: Bits,
}

/// A request's walk over the live slots in `send_work_score` order (spec backend
/// §2.4.4): classes by score descending, each scanned circularly from `offset`.
///
/// BOINC sorts a snapshot of the candidates. The lazy walk gives the same sequence
/// because during one request only the slot just visited changes: it is emptied
/// (sent, or `error_mask`), or its `infeasible_count` grows, which moves it to the
/// class one point higher, a score already walked. The classes below the current
/// score are untouched until the walk reaches them.
#[derive(Clone, Copy, Debug)]
pub struct Scan {
    offset: usize,
    /// Classes with `priority >= this` are skipped (`need_reliable` jobs for a host
    /// that is not reliable).
    exclude_from: Option<i32>,
    /// The score being walked and its (at most two) classes.
    score: Option<i64>,
    /// The last score walked to its end: the walk goes on below it.
    walked: Option<i64>,
    members: [Option<u32>; 2],
    /// The next position to look at, in scan order (`k`: slot `(offset + k) % n`).
    k: usize,
}

impl Cache {
    pub fn new(n: usize) -> Self {
        let mut fillable = Bits::new(n);
        for i in 0..n {
            fillable.set(i, true);
        }
        Self {
            slots: vec![None; n],
            occupied: 0,
            slot_of: FxHashMap::default(),
            class_of: vec![NO_CLASS; n],
            classes: Vec::new(),
            fillable,
            over_threshold: Bits::new(n),
        }
    }

    /// Number of slots (`shmem_work_items`).
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Number of occupied slots (live or stale), O(1).
    pub fn occupied(&self) -> usize {
        self.occupied
    }

    /// The slots, for reading (invariant 13).
    pub(crate) fn slots(&self) -> &[Option<ResultId>] {
        &self.slots
    }

    pub fn get(&self, slot: usize) -> Option<ResultId> {
        self.slots[slot]
    }

    /// Writes a slot behind the indexes' back: only for tests of the invariant
    /// checker, which must see a corrupt cache.
    #[cfg(test)]
    pub(crate) fn corrupt_slot(&mut self, slot: usize, value: Option<ResultId>) {
        self.slots[slot] = value;
    }

    /// Puts `rid` into the empty `slot` and marks it `in_cache` (it leaves the
    /// feeder's list `Db::feedable`).
    pub(crate) fn fill(&mut self, db: &mut Db, slot: usize, rid: ResultId) {
        debug_assert!(self.slots[slot].is_none(), "slot {slot} is occupied");
        self.slots[slot] = Some(rid);
        self.occupied += 1;
        self.slot_of.insert(rid, slot as u32);
        let r = db.result_mut(rid);
        r.in_cache = true;
        let live = r.server_state == ServerState::Unsent;
        let (priority, count, wuid) = (r.priority, r.infeasible_count, r.workunitid);
        if live {
            db.feedable.remove(&FeedKey::new(priority, wuid, rid));
        }
        self.set_class(slot, live.then_some((priority, count)));
    }

    /// Empties `slot`, clearing its result's `in_cache` if the row still exists (a
    /// result still UNSENT goes back to the feeder's list `Db::feedable`).
    pub fn empty(&mut self, db: &mut Db, slot: usize) {
        if let Some(rid) = self.take(slot)
            && let Some(r) = db.results.get_mut(rid)
        {
            r.in_cache = false;
            if r.server_state == ServerState::Unsent {
                db.feedable
                    .insert(FeedKey::new(r.priority, r.workunitid, rid));
            }
        }
    }

    /// Drops a result deleted by db_purge from its slot, if it has one.
    pub(crate) fn forget(&mut self, rid: ResultId) {
        if let Some(&slot) = self.slot_of.get(&rid) {
            self.take(slot as usize);
        }
    }

    fn take(&mut self, slot: usize) -> Option<ResultId> {
        let rid = self.slots[slot].take()?;
        self.occupied -= 1;
        self.slot_of.remove(&rid);
        self.set_class(slot, None);
        self.over_threshold.set(slot, false);
        Some(rid)
    }

    /// `infeasible_count++` of the live result in `slot` (spec backend §2.4.4): its
    /// score may rise by one, so it moves class.
    pub(crate) fn bump_infeasible(&mut self, db: &mut Db, slot: usize) {
        let rid = self.slots[slot].expect("slot is occupied");
        let r = db.result_mut(rid);
        r.infeasible_count += 1;
        let (priority, count) = (r.priority, r.infeasible_count);
        if self.class_of[slot] != NO_CLASS {
            self.set_class(slot, Some((priority, count)));
        }
    }

    /// Reads the database's log of cached results that entered or left UNSENT and
    /// marks their slots live or stale (spec backend §2.3: a slot whose result was
    /// sent or retired elsewhere is stale until the feeder frees it).
    pub fn sync(&mut self, db: &mut Db) {
        if db.cache_moves.is_empty() {
            return;
        }
        let mut moves = std::mem::take(&mut db.cache_moves);
        for &rid in &moves {
            let Some(&slot) = self.slot_of.get(&rid) else {
                continue; // emptied since
            };
            let live = db
                .results
                .get(rid)
                .filter(|r| r.server_state == ServerState::Unsent)
                .map(|r| (r.priority, r.infeasible_count));
            self.set_class(slot as usize, live);
        }
        moves.clear();
        db.cache_moves = moves;
    }

    /// Puts a slot in the class of `(priority, infeasible_count)`, or in none (`None`:
    /// empty or stale, so fillable).
    fn set_class(&mut self, slot: usize, live: Option<(i32, u32)>) {
        let old = self.class_of[slot];
        if old != NO_CLASS {
            let c = &mut self.classes[old as usize];
            c.slots.set(slot, false);
            c.len -= 1;
        }
        let new = match live {
            None => NO_CLASS,
            Some((priority, count)) => {
                if count > MAX_INFEASIBLE_THRESHOLD {
                    self.over_threshold.set(slot, true);
                }
                let infeasible = count > 0;
                let i = match self
                    .classes
                    .iter()
                    .position(|c| c.priority == priority && c.infeasible == infeasible)
                {
                    Some(i) => i,
                    None => {
                        self.classes.push(Class {
                            priority,
                            infeasible,
                            slots: Bits::new(self.slots.len()),
                            len: 0,
                        });
                        self.classes.len() - 1
                    }
                };
                let c = &mut self.classes[i];
                c.slots.set(slot, true);
                c.len += 1;
                i as u32
            }
        };
        self.class_of[slot] = new;
        self.fillable.set(slot, new == NO_CLASS);
    }

    /// Whether some slot is empty or stale (as of the last [`Self::sync`]): the
    /// live slots are counted per score class, and classes are few.
    pub(crate) fn has_fillable(&self) -> bool {
        let live: usize = self.classes.iter().map(|c| c.len).sum();
        live < self.slots.len()
    }

    /// The first empty or stale slot at or after `from`, in index order: the next slot
    /// BOINC's feeder scan would free and refill (spec backend §2.3).
    pub(crate) fn next_fillable(&self, from: usize) -> Option<usize> {
        next_set(&self.fillable, None, from, self.slots.len())
    }

    /// The first slot at or after `from`, in index order, whose result may have
    /// passed the legacy `MAX_INFEASIBLE_THRESHOLD` (the caller re-checks it).
    pub(crate) fn next_over_threshold(&self, from: usize) -> Option<usize> {
        next_set(&self.over_threshold, None, from, self.slots.len())
    }

    /// Starts a request's walk (spec backend §2.4.4 step 1) from the random start
    /// slot `offset`, skipping results with `priority >= exclude_from`.
    pub(crate) fn scan(&self, offset: usize, exclude_from: Option<i32>) -> Scan {
        Scan {
            offset,
            exclude_from,
            score: None,
            walked: None,
            members: [None; 2],
            k: 0,
        }
    }

    fn eligible(&self, c: &Class, scan: &Scan) -> bool {
        c.len > 0 && scan.exclude_from.is_none_or(|x| c.priority < x)
    }

    /// The next candidate of the walk, `(slot, result)`: the one after the previous
    /// in BOINC's sorted candidate list (score descending, then scan order from the
    /// start slot), or `None` when the list is exhausted.
    pub fn next(&self, scan: &mut Scan) -> Option<(usize, ResultId)> {
        let n = self.slots.len();
        loop {
            if scan.score.is_none() {
                // The highest eligible score below the one just walked.
                let below = scan.walked;
                let score = self
                    .classes
                    .iter()
                    .filter(|c| self.eligible(c, scan))
                    .map(Class::score)
                    .filter(|&s| below.is_none_or(|b| s < b))
                    .max()?;
                let mut members = self
                    .classes
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| self.eligible(c, scan) && c.score() == score)
                    .map(|(i, _)| i as u32);
                scan.members = [members.next(), members.next()];
                scan.score = Some(score);
                scan.k = 0;
            }
            let a = &self.classes[scan.members[0].expect("a class") as usize].slots;
            let b = scan.members[1].map(|i| &self.classes[i as usize].slots);
            // Scan order k = 0.. is slots offset..n, then 0..offset.
            let split = n - scan.offset;
            let found = if scan.k < split {
                next_set(a, b, scan.offset + scan.k, n).or_else(|| next_set(a, b, 0, scan.offset))
            } else {
                next_set(a, b, scan.k - split, scan.offset)
            };
            match found {
                Some(slot) => {
                    scan.k = (slot + n - scan.offset) % n + 1;
                    let rid = self.slots[slot].expect("a live slot is occupied");
                    return Some((slot, rid));
                }
                None => scan.walked = scan.score.take(),
            }
        }
    }
}

#[cfg(test)]
impl Cache {
    /// Asserts that every index agrees with the slots and the database (after
    /// [`Cache::sync`]).
    pub(crate) fn check_index(&self, db: &Db) {
        assert!(db.cache_moves.is_empty(), "unsynced moves");
        let mut occupied = 0;
        for (i, slot) in self.slots.iter().enumerate() {
            let live = slot.and_then(|rid| {
                occupied += 1;
                assert_eq!(self.slot_of.get(&rid), Some(&(i as u32)), "slot_of {rid}");
                db.results
                    .get(rid)
                    .filter(|r| r.server_state == ServerState::Unsent)
            });
            assert_eq!(self.fillable.get(i), live.is_none(), "fillable {i}");
            match live {
                None => assert_eq!(self.class_of[i], NO_CLASS, "class of {i}"),
                Some(r) => {
                    let c = &self.classes[self.class_of[i] as usize];
                    assert_eq!(
                        (c.priority, c.infeasible),
                        (r.priority, r.infeasible_count > 0)
                    );
                    if r.infeasible_count > MAX_INFEASIBLE_THRESHOLD {
                        assert!(self.over_threshold.get(i), "over threshold {i}");
                    }
                }
            }
            for (ci, c) in self.classes.iter().enumerate() {
                assert_eq!(
                    c.slots.get(i),
                    self.class_of[i] == ci as u32,
                    "class bit {i}"
                );
            }
        }
        assert_eq!(self.occupied, occupied);
        assert_eq!(self.slot_of.len(), occupied);
        for c in &self.classes {
            let n = (0..self.slots.len()).filter(|&i| c.slots.get(i)).count();
            assert_eq!(c.len, n);
        }
    }
}

/// BOINC's `send_work_score` candidate list, as the scheduler built it before the
/// index (spec backend §2.4.4 step 1): every occupied slot from `offset`, scored,
/// `need_reliable` jobs dropped, stably sorted by score descending. The reference the
/// index's walk is tested against.
#[cfg(test)]
pub(crate) fn reference_candidates(
    slots: &[Option<ResultId>],
    db: &Db,
    offset: usize,
    exclude_from: Option<i32>,
) -> Vec<(usize, ResultId)> {
    let n = slots.len();
    let mut cands: Vec<(i64, usize, ResultId)> = Vec::new();
    for k in 0..n {
        let slot = (offset + k) % n;
        let Some(rid) = slots[slot] else { continue };
        let r = db.result(rid);
        if exclude_from.is_some_and(|x| r.priority >= x) {
            continue;
        }
        let score = r.priority as i64 + (r.infeasible_count > 0) as i64;
        cands.push((score, k, rid));
    }
    cands.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    cands
        .into_iter()
        .map(|(_, k, rid)| ((offset + k) % n, rid))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::db::ResultRow;
    use super::super::invariants::test_rows;
    use super::super::types::{Actor, Outcome};
    use super::*;
    use proptest::prelude::*;

    /// What a slot holds in a generated cache.
    #[derive(Clone, Copy, Debug)]
    enum Fill {
        Empty,
        /// A live result of this priority and `infeasible_count`.
        Live(i32, u32),
        /// A result sent or retired since it was cached.
        Stale(i32),
    }

    fn fill_strategy() -> impl Strategy<Value = Fill> {
        prop_oneof![
            2 => Just(Fill::Empty),
            5 => (0..3i32, prop_oneof![Just(0u32), Just(1), Just(3)])
                .prop_map(|(p, c)| Fill::Live(p, c)),
            1 => (0..3i32).prop_map(Fill::Stale),
        ]
    }

    /// A database and a synced cache holding `fills`.
    fn build(fills: &[Fill]) -> (Db, Cache) {
        let mut db = Db::new(false);
        let wuid = db.insert_workunit(Actor::WorkGenerator, test_rows::workunit());
        let mut cache = Cache::new(fills.len());
        for (slot, f) in fills.iter().enumerate() {
            let (priority, count) = match *f {
                Fill::Empty => continue,
                Fill::Live(p, c) => (p, c),
                Fill::Stale(p) => (p, 0),
            };
            let mut r = ResultRow::new(wuid, slot as u16, 0, priority, 0, ServerState::Unsent);
            r.infeasible_count = count;
            let rid = db.insert_result(Actor::Transitioner, r);
            cache.fill(&mut db, slot, rid);
            if let Fill::Stale(_) = f {
                db.set_over(Actor::Transitioner, rid, Outcome::DidntNeed);
            }
        }
        cache.sync(&mut db);
        cache.check_index(&db);
        (db, cache)
    }

    #[test]
    fn next_set_finds_bits_across_words() {
        let mut a = Bits::new(200);
        let mut b = Bits::new(200);
        a.set(3, true);
        a.set(130, true);
        b.set(64, true);
        assert_eq!(next_set(&a, None, 0, 200), Some(3));
        assert_eq!(next_set(&a, None, 4, 200), Some(130));
        assert_eq!(next_set(&a, Some(&b), 4, 200), Some(64));
        assert_eq!(next_set(&a, Some(&b), 65, 130), None);
        assert_eq!(next_set(&a, Some(&b), 65, 131), Some(130));
        assert_eq!(next_set(&a, None, 131, 200), None);
        assert_eq!(next_set(&a, None, 5, 5), None);
    }

    #[test]
    fn walk_orders_by_score_then_from_the_start_slot() {
        // Slots 0..6: priorities 0, 1, 0, stale, 1 with infeasible_count 1 (score 2),
        // empty. From slot 3: score 2 (slot 4), score 1 (slot 1), score 0 (0, 2 after
        // the wrap).
        let fills = [
            Fill::Live(0, 0),
            Fill::Live(1, 0),
            Fill::Live(0, 0),
            Fill::Stale(2),
            Fill::Live(1, 1),
            Fill::Empty,
        ];
        let (db, cache) = build(&fills);
        let mut scan = cache.scan(3, None);
        let mut order = Vec::new();
        while let Some((slot, _)) = cache.next(&mut scan) {
            order.push(slot);
        }
        assert_eq!(order, [4, 1, 0, 2]);
        assert_eq!(cache.occupied(), 5);
        assert_eq!(
            (cache.next_fillable(0), cache.next_fillable(4)),
            (Some(3), Some(5))
        );
        // Not reliable, `reliable_on_priority = 1`: only priority 0.
        let mut scan = cache.scan(3, Some(1));
        assert_eq!(cache.next(&mut scan).map(|c| c.0), Some(0));
        assert_eq!(cache.next(&mut scan).map(|c| c.0), Some(2));
        assert_eq!(cache.next(&mut scan), None);
        let reference: Vec<usize> = reference_candidates(cache.slots(), &db, 3, None)
            .into_iter()
            .map(|c| c.0)
            .collect();
        assert_eq!(reference, [3, 4, 1, 0, 2]); // the stale slot 3 is then skipped
    }

    #[test]
    fn stale_and_purged_slots_become_fillable_without_a_walk() {
        let fills = [Fill::Live(0, 0), Fill::Live(0, 0), Fill::Live(1, 0)];
        let (mut db, mut cache) = build(&fills);
        assert_eq!((cache.occupied(), cache.next_fillable(0)), (3, None));
        let (r0, r2) = (cache.get(0).unwrap(), cache.get(2).unwrap());
        // Sent elsewhere: logged by the database, stale after `sync`, still occupied.
        db.set_server_state(Actor::Scheduler, r0, ServerState::InProgress);
        assert_eq!(db.cache_moves, [r0]);
        cache.sync(&mut db);
        assert!(db.cache_moves.is_empty());
        assert_eq!((cache.occupied(), cache.next_fillable(0)), (3, Some(0)));
        cache.check_index(&db);
        // Purged: the slot is emptied at once.
        cache.forget(r2);
        assert_eq!((cache.occupied(), cache.next_fillable(1)), (2, Some(2)));
        cache.check_index(&db);
        // The walk sees only the live slot 1; emptying it puts its result back on the
        // feeder's list.
        let mut scan = cache.scan(2, None);
        assert_eq!(cache.next(&mut scan).map(|c| c.0), Some(1));
        assert_eq!(cache.next(&mut scan), None);
        let r1 = cache.get(1).unwrap();
        assert!(db.feedable.iter().all(|k| k.rid() != r1));
        cache.empty(&mut db, 1);
        assert!(!db.result(r1).in_cache);
        assert!(db.feedable.iter().any(|k| k.rid() == r1));
        cache.empty(&mut db, 0);
        assert_eq!(cache.occupied(), 0);
        cache.check_index(&db);
    }

    proptest! {
        /// For random fillings, start slots, scores and exclusions, and whatever the
        /// request does to each slot it visits (nothing, send or empty it, bump its
        /// `infeasible_count`), the walk visits exactly BOINC's candidate list minus
        /// the stale slots BOINC skips, in the same order.
        #[test]
        fn walk_equals_reference_scan(
            fills in prop::collection::vec(fill_strategy(), 1..150),
            offset_seed in 0usize..10_000,
            exclude_from in prop_oneof![Just(None), (1..3i32).prop_map(Some)],
            actions in prop::collection::vec(0u8..3, 150),
        ) {
            let (mut db, mut cache) = build(&fills);
            let offset = offset_seed % fills.len();
            let expected: Vec<(usize, ResultId)> =
                reference_candidates(cache.slots(), &db, offset, exclude_from)
                    .into_iter()
                    .filter(|&(_, rid)| db.result(rid).server_state == ServerState::Unsent)
                    .collect();
            let mut scan = cache.scan(offset, exclude_from);
            let mut seen = Vec::new();
            while let Some((slot, rid)) = cache.next(&mut scan) {
                match actions[seen.len() % actions.len()] {
                    1 => cache.empty(&mut db, slot),
                    2 => cache.bump_infeasible(&mut db, slot),
                    _ => {}
                }
                seen.push((slot, rid));
                prop_assert!(seen.len() <= fills.len(), "the walk does not end");
            }
            prop_assert_eq!(seen, expected);
            cache.check_index(&db);
        }
    }
}
