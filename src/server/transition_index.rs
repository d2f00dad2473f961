//! The transitioner's index of workunits by `transition_time` (spec backend §2.2:
//! BOINC's transitioner selects `WHERE transition_time < now` through an index on
//! that column).
//!
//! `transition_time` moves on almost every event a workunit sees (a result sent,
//! reported, timed out, validated), so the index is written far more often than it
//! is read. A keyed priority queue with an exact `change_priority`, or a binary heap
//! with lazy deletion, spends its time on millions of pops from a heap of millions
//! (docs/performance.md, "Measurements behind the code"). The transitioner needs no
//! order among the due workunits, only their set (it sorts them by id itself), so
//! this index is a calendar: entries are filed in buckets of `BUCKET` seconds of
//! `transition_time`, a push appends to its bucket, and a pass takes the buckets
//! before `now` whole and filters the one `now - 1` falls in.
//!
//! Deletion is lazy:
//! - every move pushes a new `(transition_time, id)` entry and leaves the old one;
//! - the database says which entry is current: the time at which it indexed the
//!   workunit (`Db`'s `Indexed`, kept beside the rows) equals the entry's;
//! - stale entries (moved, taken or purged workunits) are dropped when their bucket
//!   is taken, and all at once when they outnumber the current ones (an entry left
//!   at a far-future time would otherwise stay for the whole run, and memory would
//!   grow with the workunits ever created instead of the live ones).
//!
//! The workunits a pass sees are exactly those of an exact index: an entry is current
//! only if the row still holds that time, and when two current entries of one
//! workunit exist (moved away and back to the same time) the first taken takes the
//! workunit out of the index, so the second is dropped.

use super::types::WuId;
use crate::engine::Time;
use std::collections::BTreeMap;

/// Seconds of `transition_time` per bucket: a transitioner pass every few seconds
/// refilters at most one bucket's worth of entries that are not due yet.
const BUCKET: Time = 64;

/// Entries held below which the index is never compacted.
const COMPACT_MIN: usize = 4096;

/// One entry: `transition_time` as BOINC stores it (an `int`, below `INT_MAX`),
/// and the workunit id, in 8 bytes.
type Entry = (i32, WuId);

/// What one entry costs (the memory budget of a workunit, `crate::memory_budget`).
#[cfg(test)]
pub(crate) const ENTRY_BYTES: usize = std::mem::size_of::<Entry>();

/// A lazily cleaned calendar of `(transition_time, workunit id)` entries.
#[derive(Debug, Default)]
pub struct TransitionIndex {
    /// Entries by `transition_time.div_euclid(BUCKET)`.
    buckets: BTreeMap<Time, Vec<Entry>>,
    /// Entries held, stale ones included.
    len: usize,
    /// Emptied bucket vectors kept for reuse, so a pass allocates nothing.
    spare: Vec<Vec<Entry>>,
}

impl TransitionIndex {
    /// Records that workunit `id` is due at `tt`. The caller marks the row as
    /// indexed with this time.
    pub fn push(&mut self, tt: Time, id: WuId) {
        // `transition_time` is an `int` in BOINC's schema; the index holds only
        // times below `INT_MAX` (spec backend, "Conventions").
        let t = i32::try_from(tt).expect("transition_time fits BOINC's int");
        let spare = &mut self.spare;
        self.buckets
            .entry(tt.div_euclid(BUCKET))
            .or_insert_with(|| spare.pop().unwrap_or_default())
            .push((t, id));
        self.len += 1;
    }

    /// Drops every stale entry once the index holds more than twice `current`
    /// entries (the workunits indexed now): it stays within twice the live index,
    /// at an amortised cost of O(1) per push. Which entries are current is
    /// unchanged, so passes are too. `prefetch(id)` is called on a bucket's entries
    /// before `is_current` reads their rows, to overlap the cache misses.
    pub fn compact_if_sparse(
        &mut self,
        current: usize,
        is_current: impl FnMut(WuId, Time) -> bool,
        prefetch: impl Fn(WuId),
    ) {
        if self.len > COMPACT_MIN.max(2 * current) {
            self.compact(is_current, prefetch);
        }
    }

    /// Drops every stale entry, and the capacity they held: a bucket days ahead
    /// collects the deadlines of every result sent in its minute, most of which go
    /// stale when the results return, and kept that capacity until its minute came
    /// (docs/performance.md, "Measurements behind the code").
    fn compact(&mut self, mut is_current: impl FnMut(WuId, Time) -> bool, prefetch: impl Fn(WuId)) {
        self.len = 0;
        let spare = &mut self.spare;
        self.buckets.retain(|_, v| {
            v.iter().for_each(|&(_, id)| prefetch(id));
            v.retain(|&(tt, id)| is_current(id, tt.into()));
            if v.is_empty() {
                spare.push(std::mem::take(v));
                return false;
            }
            if v.capacity() > 2 * v.len() {
                v.shrink_to(v.len() + v.len() / 2);
            }
            true
        });
        self.len = self.buckets.values().map(Vec::len).sum();
    }

    /// Takes every current entry with time `< now` into `out` (in no particular
    /// order), calling `take(id, tt)` on each entry with time `< now`: it returns
    /// whether the entry is current, and if so takes the workunit out of the index.
    /// `prefetch(rows, id)` is called on entries a few places ahead of `take`, which
    /// reads their rows, to overlap the cache misses; both get `rows`.
    pub fn pop_due<R>(
        &mut self,
        now: Time,
        out: &mut Vec<WuId>,
        rows: &mut R,
        mut take: impl FnMut(&mut R, WuId, Time) -> bool,
        prefetch: impl Fn(&R, WuId),
    ) {
        const AHEAD: usize = 8;
        let last = (now - 1).div_euclid(BUCKET);
        while let Some(mut entry) = self.buckets.first_entry() {
            if *entry.key() > last {
                break;
            }
            let whole = *entry.key() < last;
            let bucket = entry.get_mut();
            let before = bucket.len();
            if whole {
                // Every entry is before `now`.
                bucket
                    .iter()
                    .take(AHEAD)
                    .for_each(|&(_, id)| prefetch(rows, id));
                for k in 0..bucket.len() {
                    if let Some(&(_, ahead)) = bucket.get(k + AHEAD) {
                        prefetch(rows, ahead);
                    }
                    let (tt, id) = bucket[k];
                    if take(rows, id, tt.into()) {
                        out.push(id);
                    }
                }
                bucket.clear();
            } else {
                // The bucket of `now - 1`: keep what is not due yet.
                bucket.iter().for_each(|&(_, id)| prefetch(rows, id));
                bucket.retain(|&(tt, id)| {
                    let tt = Time::from(tt);
                    if tt >= now {
                        return true;
                    }
                    if take(rows, id, tt) {
                        out.push(id);
                    }
                    false
                });
            }
            self.len -= before - bucket.len();
            if !bucket.is_empty() {
                break;
            }
            self.spare.push(entry.remove());
        }
    }

    /// The earliest current time, dropping the stale entries of the buckets before
    /// it; `current(id, tt)` says whether an entry is current.
    pub fn peek(&mut self, mut current: impl FnMut(WuId, Time) -> bool) -> Option<Time> {
        while let Some(mut entry) = self.buckets.first_entry() {
            let bucket = entry.get_mut();
            let before = bucket.len();
            bucket.retain(|&(tt, id)| current(id, tt.into()));
            self.len -= before - bucket.len();
            if let Some(t) = bucket.iter().map(|e| Time::from(e.0)).min() {
                return Some(t);
            }
            self.spare.push(entry.remove());
        }
        None
    }

    /// Whether an entry `(tt, id)` is held (for the invariant checks).
    pub fn holds(&self, tt: Time, id: WuId) -> bool {
        i32::try_from(tt).is_ok_and(|t| {
            self.buckets
                .get(&tt.div_euclid(BUCKET))
                .is_some_and(|b| b.contains(&(t, id)))
        })
    }

    /// Entries held, stale ones included (for memory accounting).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// An exact count of the indexed workunits whose `transition_time` is at or before
/// a time that only moves forward: the transitioner's backlog as the samples of
/// `timeseries.csv` read it (`backlog_transitioner_workunits`). The calendar above
/// cannot count its current entries without a walk; this keeps the indexed times
/// apart, told of every workunit that enters or leaves the index, at O(log n) per
/// change and, per sample, O(log n) for each time the sample passes. Kept only for
/// a project whose server load is sampled.
#[derive(Debug, Default)]
pub struct DueCount {
    /// The time the last count was taken at.
    swept: Time,
    /// Indexed workunits with `transition_time <= swept`.
    due: u64,
    /// The other indexed workunits, counted by `transition_time`.
    ahead: BTreeMap<Time, u32>,
}

impl DueCount {
    /// A count that has seen no workunit, before any time.
    pub fn new() -> Self {
        Self {
            swept: Time::MIN,
            ..Default::default()
        }
    }

    /// A workunit is indexed at `tt`.
    pub fn add(&mut self, tt: Time) {
        if tt <= self.swept {
            self.due += 1;
        } else {
            *self.ahead.entry(tt).or_default() += 1;
        }
    }

    /// A workunit indexed at `tt` leaves the index (moved, taken or purged).
    pub fn remove(&mut self, tt: Time) {
        if tt <= self.swept {
            self.due -= 1;
        } else if let Some(n) = self.ahead.get_mut(&tt) {
            *n -= 1;
            if *n == 0 {
                self.ahead.remove(&tt);
            }
        }
    }

    /// Indexed workunits with `transition_time <= now`; `now` never decreases
    /// between calls.
    pub fn at(&mut self, now: Time) -> u64 {
        debug_assert!(now >= self.swept, "counts go forward in time");
        while let Some(e) = self.ahead.first_entry() {
            if *e.key() > now {
                break;
            }
            self.due += u64::from(e.remove());
        }
        self.swept = now;
        self.due
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};

    /// Random moves, removals, compactions and passes over spans of several
    /// buckets: the lazy calendar hands each pass exactly the workunits an exact
    /// index (a map of current times) would.
    #[test]
    fn lazy_index_matches_an_exact_one() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(12);
        for _ in 0..60 {
            let mut idx = TransitionIndex::default();
            // Row state: (in index, transition_time).
            let mut rows: BTreeMap<WuId, (bool, Time)> = BTreeMap::new();
            let mut exact: BTreeMap<WuId, Time> = BTreeMap::new();
            let mut now: Time = rng.random_range(-100..100);
            for _ in 0..600 {
                let id = rng.random_range(1..40u32);
                match rng.random_range(0..12u32) {
                    0..=6 => {
                        let tt = now
                            + [0, 1, 63, 64, 65, 300][rng.random_range(0..6usize)]
                            + rng.random_range(0..3i64);
                        rows.insert(WuId(id), (true, tt));
                        exact.insert(WuId(id), tt);
                        idx.push(tt, WuId(id));
                    }
                    7 => {
                        rows.remove(&WuId(id));
                        exact.remove(&WuId(id));
                    }
                    8 => {
                        let before = idx.len();
                        idx.compact(|id, tt| rows.get(&id) == Some(&(true, tt)), |_| {});
                        assert!(idx.len() <= before);
                        assert_eq!(idx.len(), idx.buckets.values().map(Vec::len).sum::<usize>());
                    }
                    _ => {
                        now += rng.random_range(0..90i64);
                        let mut got = Vec::new();
                        idx.pop_due(
                            now,
                            &mut got,
                            &mut rows,
                            |rows, id, tt| match rows.get_mut(&id) {
                                Some(r) if r.0 && r.1 == tt => {
                                    r.0 = false;
                                    true
                                }
                                _ => false,
                            },
                            |_, _| {},
                        );
                        got.sort_unstable();
                        let want: Vec<WuId> = exact
                            .iter()
                            .filter(|(_, t)| **t < now)
                            .map(|(id, _)| *id)
                            .collect();
                        for id in &want {
                            exact.remove(id);
                        }
                        assert_eq!(got, want);
                        assert_eq!(idx.len(), idx.buckets.values().map(Vec::len).sum::<usize>());
                        for (id, &(indexed, tt)) in &rows {
                            assert_eq!(indexed, idx.holds(tt, *id) && exact.get(id) == Some(&tt));
                        }
                        let next = idx.peek(|id, tt| rows.get(&id) == Some(&(true, tt)));
                        assert_eq!(next, exact.values().min().copied());
                    }
                }
            }
        }
    }

    /// Random moves, removals and counts forward in time: the count equals an
    /// exact one.
    #[test]
    fn due_count_matches_a_recount() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(5);
        let mut exact: BTreeMap<u32, Time> = BTreeMap::new();
        let mut c = DueCount::new();
        let mut now: Time = -50;
        for _ in 0..20_000 {
            let id = rng.random_range(0..200u32);
            match rng.random_range(0..10u32) {
                0..=5 => {
                    let tt = now + rng.random_range(-30..300i64);
                    if let Some(old) = exact.insert(id, tt) {
                        c.remove(old);
                    }
                    c.add(tt);
                }
                6..=7 => {
                    if let Some(old) = exact.remove(&id) {
                        c.remove(old);
                    }
                }
                _ => {
                    now += rng.random_range(0..40i64);
                    let want = exact.values().filter(|&&t| t <= now).count() as u64;
                    assert_eq!(c.at(now), want);
                }
            }
        }
    }
}
