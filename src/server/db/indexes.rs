//! The daemons' work lists beside the rows: the transitioner's `transition_time`
//! index (spec backend §2.2), the feeder's UNSENT order (§2.3), db_purge's list of
//! workunits old enough to purge (§2.8), and the prefetching of a daemon's walk
//! over its list. Each list stands for the indexed SQL query of one BOINC daemon.

use super::{Db, WorkunitRow};
use crate::engine::Time;
use crate::server::table::{LIST_AHEAD, Load, Table};
use crate::server::types::INT_MAX;
use crate::server::types::*;
use std::ops::Bound;

/// A result's place in the feeder's order, `(priority descending, WU id, result
/// id)`, packed into one integer that sorts the same way: the list holds hundreds of
/// thousands of UNSENT results, and one integer comparison per step of a B-tree
/// search costs less than comparing three fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FeedKey(u128);

impl FeedKey {
    pub fn new(priority: i32, wuid: WuId, rid: ResultId) -> Self {
        // Flipping the sign bit maps i32 onto u32 in order; `!` reverses it.
        let descending = !((priority as u32) ^ 0x8000_0000);
        Self(u128::from(descending) << 64 | u128::from(wuid.0) << 32 | u128::from(rid.0))
    }
    pub fn wuid(self) -> WuId {
        WuId((self.0 >> 32) as u32)
    }
    pub fn rid(self) -> ResultId {
        ResultId(self.0 as u32)
    }
}

/// Entries between two prefetch stages of a daemon's walk ([`Db::prefetch_walk_step`]).
pub(crate) const WALK_AHEAD: usize = 2;

/// Which rows a daemon's walk prefetches beyond each workunit's own row.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Prefetch {
    /// The workunit's result rows.
    pub results: bool,
    /// The server host rows of its results.
    pub hosts: bool,
    /// The first host app version row of each of those hosts (a list of its own).
    pub havs: bool,
}

impl Prefetch {
    /// The workunit and its results (transitioner, assimilator, db_purge).
    pub const RESULTS: Self = Self {
        results: true,
        hosts: false,
        havs: false,
    };
    /// Also the results' hosts and their app versions (the validator's credit and
    /// HAV updates, whose first read of a HAV row misses the cache; docs/performance.md,
    /// "Measurements behind the code").
    pub const RESULTS_HOSTS_HAVS: Self = Self {
        results: true,
        hosts: true,
        havs: true,
    };

    /// Stages of the walk, each `WALK_AHEAD` entries after the one before: the
    /// workunit's index entry, then its row; its results' index entries, then their
    /// rows; the hosts' index entries, then their rows; the HAV rows. Each stage reads
    /// only what the stage before loaded.
    fn stages(self) -> usize {
        if self.havs {
            7
        } else if self.hosts {
            6
        } else if self.results {
            4
        } else {
            2
        }
    }

    /// Entries between a workunit's first prefetch and its visit.
    pub(crate) fn lag(self) -> usize {
        WALK_AHEAD * self.stages()
    }
}

impl Db {
    /// The feeder's first candidate (`feedable` in order), after starting to load
    /// the rows of the first [`LIST_AHEAD`] candidates and the index entries of as
    /// many after them ([`Self::feedable_after`]).
    pub(crate) fn first_feedable(&self) -> Option<FeedKey> {
        for (k, &key) in self.feedable.iter().take(2 * LIST_AHEAD).enumerate() {
            let load = if k < LIST_AHEAD {
                Load::Row
            } else {
                Load::Index
            };
            self.prefetch_candidate(key, load);
        }
        self.feedable.iter().next().copied()
    }

    /// The feeder's next candidate after `key`. A pass reads the rows of hundreds
    /// of UNSENT results made minutes earlier, each a cache miss in a large run
    /// (docs/performance.md, "Measurements behind the code"), so each step starts
    /// loading the rows of the candidate [`LIST_AHEAD`] ahead and the index entries
    /// of the one twice as far. A hint only: a candidate the pass no longer reaches
    /// is loaded for nothing.
    pub(crate) fn feedable_after(&self, key: FeedKey) -> Option<FeedKey> {
        let mut after = self
            .feedable
            .range((Bound::Excluded(key), Bound::Unbounded));
        let next = after.next().copied();
        if let Some(&k) = after.nth(LIST_AHEAD - 2) {
            self.prefetch_candidate(k, Load::Row);
        }
        if let Some(&k) = after.nth(LIST_AHEAD - 1) {
            self.prefetch_candidate(k, Load::Index);
        }
        next
    }

    /// Starts loading the workunit and result rows of the feeder's candidate `key`,
    /// or the index entries that say where they are.
    fn prefetch_candidate(&self, key: FeedKey, load: Load) {
        self.workunits.prefetch_as(key.wuid(), load);
        self.results.prefetch_as(key.rid(), load);
    }

    /// Step `t` of a daemon's walk over its work list `list` ([`crate::server::Project::walk_workunits`]
    /// visits entry `t − what.lag()` after it): stage `k` of [`Prefetch::stages`]
    /// works on entry `t − k·WALK_AHEAD`. A row is reached through its table's index
    /// entry, and with millions of rows alive both miss the cache: reading the index
    /// entry to prefetch the row stalled on the entry (a pass visits workunits
    /// scattered over the whole table), so the entry is prefetched one stage before
    /// the row. The misses of several workunits overlap instead of following one
    /// another (docs/performance.md, "Measurements behind the code"). A hint only: it
    /// changes no value.
    pub(crate) fn prefetch_walk_step(&self, list: &[WuId], t: usize, what: Prefetch) {
        let id = |stage: usize| {
            t.checked_sub(stage * WALK_AHEAD)
                .and_then(|k| list.get(k))
                .copied()
        };
        let wu = |stage: usize| id(stage).and_then(|w| self.workunits.get(w));
        if let Some(w) = id(0) {
            self.workunits.prefetch_index(w);
        }
        if let Some(w) = id(1) {
            self.workunits.prefetch(w);
        }
        if !what.results {
            return;
        }
        if let Some(wu) = wu(2) {
            wu.results
                .iter()
                .for_each(|&r| self.results.prefetch_index(r));
        }
        if let Some(wu) = wu(3) {
            wu.results.iter().for_each(|&r| self.results.prefetch(r));
        }
        if !what.hosts {
            return;
        }
        if let Some(wu) = wu(4) {
            self.result_rows(wu)
                .for_each(|r| self.hosts.prefetch_index(r.hostid));
        }
        if let Some(wu) = wu(5) {
            self.result_rows(wu)
                .for_each(|r| self.hosts.prefetch(r.hostid));
        }
        if what.havs
            && let Some(wu) = wu(6)
        {
            for r in self.result_rows(wu) {
                if let Some(hav) = self.hosts.get(r.hostid).and_then(|h| h.havs.first()) {
                    crate::base::prefetch::prefetch(hav);
                }
            }
        }
    }

    /// Pops every workunit with `transition_time < now` into `out`, in ascending id
    /// (the transitioner's snapshot, spec backend §2.0, §2.2).
    pub(crate) fn take_due_workunits(&mut self, now: Time, out: &mut Vec<WuId>) {
        out.clear();
        let count = &mut self.transition_indexed;
        let mut due = self.transition_due.as_deref_mut();
        self.transition_index.pop_due(
            now,
            out,
            &mut (&mut self.workunits, &mut self.indexed),
            |(rows, indexed), id, tt| {
                let current = indexed.is_current(rows, id, tt);
                if current {
                    indexed.store(rows, id, INT_MAX);
                    rows.get_mut(id)
                        .expect("an indexed workunit exists")
                        .in_transition_index = false;
                    *count -= 1;
                    if let Some(c) = due.as_deref_mut() {
                        c.remove(tt);
                    }
                }
                current
            },
            // The row too: a due workunit's is written here, and read by the
            // transitioner right after.
            |(rows, indexed), id| {
                indexed.prefetch(rows, id);
                rows.prefetch(id);
            },
        );
        out.sort_unstable();
    }

    /// Whether the lazy transitioner index agrees with the rows (checked under
    /// `--check-invariants`): every workunit marked indexed has a time below
    /// `INT_MAX` and an entry at that time, and the count of marked workunits, which
    /// sizes compaction, is right. `None` when it does; otherwise what is wrong.
    pub(crate) fn transition_index_error(&self) -> Option<String> {
        let mut marked = 0;
        for (id, wu) in self.workunits.iter() {
            let at = self.indexed.get(&self.workunits, id);
            if at
                != wu
                    .in_transition_index
                    .then_some(Time::from(wu.transition_time))
            {
                return Some(format!(
                    "workunit {id} (transition_time {}, marked indexed: {}) is indexed at {at:?} beside the rows",
                    wu.transition_time, wu.in_transition_index
                ));
            }
            if !wu.in_transition_index {
                continue;
            }
            marked += 1;
            let tt = Time::from(wu.transition_time);
            if tt >= INT_MAX || !self.transition_index.holds(tt, id) {
                return Some(format!(
                    "workunit {id} is marked in the transitioner index at {} but has no entry there",
                    wu.transition_time
                ));
            }
        }
        (marked != self.transition_indexed).then(|| {
            format!(
                "{} workunits are marked in the transitioner index, the count says {}",
                marked, self.transition_indexed
            )
        })
    }

    pub(super) fn note_transition(&mut self, tt: Time) {
        self.transition_lowered = Some(self.transition_lowered.map_or(tt, |t| t.min(tt)));
    }

    /// The smallest `transition_time` indexed since the last call, if any, and
    /// forgets it: what a sleeping transitioner must wake for besides the time it
    /// went to sleep with.
    pub(crate) fn take_transition_lowered(&mut self) -> Option<Time> {
        self.transition_lowered.take()
    }

    /// The first `limit` workunits of `purge_ready`, in ascending id, whose
    /// `files_deleted_time` is at least `min_age` before `now` (db_purge's query,
    /// spec backend §2.8), into `out`: exactly those the scan of the whole list
    /// found, at the cost of the workunits that became old enough since the last
    /// call. `now` never decreases between calls.
    pub(crate) fn take_purgeable(
        &mut self,
        now: Time,
        min_age: Time,
        limit: usize,
        out: &mut Vec<WuId>,
    ) {
        while let Some(&(t, id)) = self.purge_queue.front() {
            if now - t < min_age {
                break;
            }
            self.purge_queue.pop_front();
            let current = self.purge_ready.contains(id)
                && self
                    .workunits
                    .get(id)
                    .is_some_and(|w| Time::from(w.files_deleted_time) == t);
            if current {
                self.purge_eligible.insert(id);
            }
        }
        out.clear();
        out.extend(self.purge_eligible.iter().take(limit).copied());
    }

    /// The earliest time at which [`Self::take_purgeable`] may find a workunit
    /// with this `min_age` (`None`: none waits). May be early, never late.
    pub(crate) fn next_purgeable(&self, min_age: Time) -> Option<Time> {
        if !self.purge_eligible.is_empty() {
            return Some(Time::MIN);
        }
        self.purge_queue
            .front()
            .map(|&(t, _)| t.saturating_add(min_age))
    }

    /// Earliest `transition_time` in the index, if any.
    pub fn next_transition_time(&mut self) -> Option<Time> {
        let (rows, indexed) = (&self.workunits, &self.indexed);
        self.transition_index
            .peek(|id, tt| indexed.is_current(rows, id, tt))
    }
}

/// A copy, beside the rows, of the time at which the transitioner index holds each
/// workunit (the row's `transition_time` when `in_transition_index` is set): the
/// index is lazy ([`TransitionIndex`]), and an entry `(tt, id)` is current only if
/// the workunit is indexed at exactly `tt`.
///
/// One `i32` per row slot of the workunit table: most entries the index drops are
/// stale (a result's deadline, left behind when the result came back early), and
/// checking one against its row missed the cache for each, hours after the row was
/// last touched; sixteen slots share a cache line here. The setters write
/// it without reading it (they know the old state from the row they hold), so a
/// write that misses does not stall.
#[derive(Debug, Default)]
pub(super) struct Indexed {
    /// By row slot; [`Self::NOT`] when the workunit is not indexed. A time in the
    /// index is below `INT_MAX`, as BOINC's `int` column.
    tt: Vec<i32>,
}

impl Indexed {
    const NOT: i32 = i32::MIN;

    /// Records that the workunit's `transition_time` is `tt`: indexed at `tt` if
    /// below `INT_MAX`, not indexed otherwise.
    pub(super) fn store(&mut self, rows: &Table<WorkunitRow, WuId>, id: WuId, tt: Time) {
        let s = rows.slot_of(id).expect("workunit exists") as usize;
        if s >= self.tt.len() {
            // In steps of the table's slab chunk: the slab never shrinks either.
            self.tt.resize(
                (s + 1).next_multiple_of(crate::server::table::CHUNK),
                Self::NOT,
            );
        }
        self.tt[s] = if tt < INT_MAX {
            let t = i32::try_from(tt).expect("transition_time fits BOINC's int");
            debug_assert_ne!(t, Self::NOT);
            t
        } else {
            Self::NOT
        };
    }

    /// The time the workunit is indexed at, if it is.
    pub(super) fn get(&self, rows: &Table<WorkunitRow, WuId>, id: WuId) -> Option<Time> {
        let s = rows.slot_of(id)? as usize;
        let t = *self.tt.get(s)?;
        (t != Self::NOT).then_some(Time::from(t))
    }

    /// Whether the index entry `(tt, id)` is the workunit's current one.
    pub(super) fn is_current(&self, rows: &Table<WorkunitRow, WuId>, id: WuId, tt: Time) -> bool {
        self.get(rows, id) == Some(tt)
    }

    pub(super) fn prefetch(&self, rows: &Table<WorkunitRow, WuId>, id: WuId) {
        if let Some(t) = rows.slot_of(id).and_then(|s| self.tt.get(s as usize)) {
            crate::base::prefetch::prefetch(t);
        }
    }
}

#[cfg(test)]
mod feed_key_tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use std::cmp::Reverse;

    /// Packed keys sort exactly as `(Reverse(priority), WU id, result id)` does, the
    /// extremes of each field included, and give their ids back.
    #[test]
    fn packed_keys_sort_as_the_triples() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(8);
        let edges = [i32::MIN, -1, 0, 1, i32::MAX];
        let mut triples: Vec<(i32, u32, u32)> = (0..5000)
            .map(|k| {
                let p = if k % 7 == 0 {
                    edges[k % 5]
                } else {
                    rng.random_range(-3..3)
                };
                let w = [0, 1, u32::MAX][k % 3].max(rng.random_range(0..50));
                (p, w, rng.random_range(0..u32::MAX))
            })
            .collect();
        triples.push((i32::MAX, u32::MAX, u32::MAX));
        triples.push((i32::MIN, 0, 0));
        let mut by_tuple = triples.clone();
        by_tuple.sort_by_key(|&(p, w, r)| (Reverse(p), w, r));
        let mut by_key = triples;
        by_key.sort_by_key(|&(p, w, r)| FeedKey::new(p, WuId(w), ResultId(r)));
        assert_eq!(by_key, by_tuple);
        let k = FeedKey::new(-5, WuId(u32::MAX), ResultId(7));
        assert_eq!((k.wuid(), k.rid()), (WuId(u32::MAX), ResultId(7)));
    }
}

#[cfg(test)]
mod indexed_tests {
    use super::*;
    use crate::server::invariants::test_rows;
    use crate::server::types::db_time;
    use rand::{RngExt, SeedableRng};
    use std::collections::BTreeMap;

    /// db_purge's pick without a scan (`take_purgeable`) equals the old scan of the
    /// whole `purge_ready` list (first `limit` in id order with `now −
    /// files_deleted_time ≥ min_age`), under random inserts, deletions that end in
    /// DONE (again, too, with a new time), other file-delete states and purges.
    #[test]
    fn purgeable_pick_equals_the_scan_of_purge_ready() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(33);
        for round in 0..60 {
            let mut db = Db::new(false);
            let min_age: Time = [0, 1, 30, 600][round % 4];
            let limit = [1, 3, 1000][round % 3];
            let mut live: Vec<WuId> = Vec::new();
            let mut now: Time = 0;
            let mut out = Vec::new();
            for _ in 0..600 {
                match rng.random_range(0..10u32) {
                    0..=2 => {
                        let id = db.insert_workunit(Actor::WorkGenerator, test_rows::workunit());
                        live.push(id);
                    }
                    3..=5 if !live.is_empty() => {
                        let id = live[rng.random_range(0..live.len())];
                        let s = [
                            FileDeleteState::Done,
                            FileDeleteState::Done,
                            FileDeleteState::Ready,
                            FileDeleteState::Error,
                            FileDeleteState::Init,
                        ][rng.random_range(0..5)];
                        db.set_wu_file_delete_state(Actor::FileDeleter, id, s, now);
                    }
                    6 if !live.is_empty() => {
                        let id = live.swap_remove(rng.random_range(0..live.len()));
                        db.purge_workunit(id, &mut Vec::new());
                    }
                    7 => now += rng.random_range(0..400),
                    _ => {
                        let scan: Vec<WuId> = (db.purge_ready.iter())
                            .filter(|&id| now - Time::from(db.wu(id).files_deleted_time) >= min_age)
                            .take(limit)
                            .collect();
                        db.take_purgeable(now, min_age, limit, &mut out);
                        assert_eq!(out, scan, "t={now}");
                        // The wake time is never later than the first purgeable one.
                        let first = (db.purge_ready.iter())
                            .map(|id| Time::from(db.wu(id).files_deleted_time) + min_age)
                            .min();
                        if let Some(first) = first {
                            assert!(db.next_purgeable(min_age).is_some_and(|t| t <= first));
                        }
                        // Purge what was picked, as a pass does.
                        for &id in &out {
                            live.retain(|&w| w != id);
                            db.purge_workunit(id, &mut Vec::new());
                        }
                    }
                }
            }
        }
    }

    /// Random inserts, moves (to `INT_MAX` too), purges (whose row slots the next
    /// inserts reuse) and transitioner snapshots: each snapshot is exactly the
    /// workunits an exact index holds below `now`, and the lazy index stays
    /// consistent with the rows (`transition_index_error`) after every step.
    #[test]
    fn the_lazy_index_agrees_with_an_exact_one() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(21);
        for _ in 0..40 {
            let mut db = Db::new(false);
            let mut exact: BTreeMap<WuId, Time> = BTreeMap::new();
            let mut live: Vec<WuId> = Vec::new();
            let mut now: Time = 0;
            for _ in 0..800 {
                let pick = |rng: &mut rand_pcg::Pcg64Mcg, live: &[WuId]| {
                    live[rng.random_range(0..live.len())]
                };
                let tt = |rng: &mut rand_pcg::Pcg64Mcg, now: Time| {
                    if rng.random_bool(0.15) {
                        INT_MAX
                    } else {
                        (now + rng.random_range(-5..400)).max(0)
                    }
                };
                match rng.random_range(0..10u32) {
                    0..=2 => {
                        let mut wu = test_rows::workunit();
                        let t = tt(&mut rng, now);
                        wu.transition_time = db_time(t);
                        let id = db.insert_workunit(Actor::WorkGenerator, wu);
                        live.push(id);
                        if t < INT_MAX {
                            exact.insert(id, t);
                        }
                    }
                    3..=5 if !live.is_empty() => {
                        let id = pick(&mut rng, &live);
                        let t = tt(&mut rng, now);
                        db.set_transition_time(Actor::Transitioner, id, t);
                        if t < INT_MAX {
                            exact.insert(id, t);
                        } else {
                            exact.remove(&id);
                        }
                    }
                    6 if !live.is_empty() => {
                        let id = pick(&mut rng, &live);
                        live.retain(|&w| w != id);
                        exact.remove(&id);
                        db.purge_workunit(id, &mut Vec::new());
                    }
                    _ => {
                        now += rng.random_range(0..120);
                        let mut got = Vec::new();
                        db.take_due_workunits(now, &mut got);
                        let want: Vec<WuId> = exact
                            .iter()
                            .filter(|&(_, &t)| t < now)
                            .map(|(&id, _)| id)
                            .collect();
                        for id in &want {
                            exact.remove(id);
                        }
                        assert_eq!(got, want);
                        assert_eq!(db.next_transition_time(), exact.values().min().copied());
                    }
                }
                assert_eq!(db.transition_index_error(), None);
                assert_eq!(db.transition_indexed, exact.len());
            }
        }
    }
}
