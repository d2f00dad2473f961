//! The transitioner's index of workunits by `transition_time` (spec backend §2.2:
//! BOINC's transitioner selects `WHERE transition_time < now` through an index on
//! that column).
//!
//! `transition_time` moves on almost every event a workunit sees (a result sent,
//! reported, timed out, validated), so the index is written far more often than it
//! is read. A keyed priority queue with an exact `change_priority` cost about 30 % of
//! a 100,000-host run (issue 12's profile); this index is a plain binary heap with
//! lazy deletion instead, as the main event queue is (`engine::queue`):
//! - every move pushes a new `(transition_time, id)` entry and leaves the old one in
//!   the heap;
//! - the workunit row says which entry is current: it is in the index
//!   (`WorkunitRow::in_transition_index`) and its `transition_time` equals the
//!   entry's;
//! - stale entries (moved, popped or purged workunits) are dropped when they reach
//!   the top, and all at once when they outnumber the current ones (an entry left
//!   at a far-future time would otherwise stay for the whole run, and memory would
//!   grow with the workunits ever created instead of the live ones).
//!
//! The workunits a pass sees, and their order, are exactly those of an exact index:
//! an entry is current only if the row still holds that time, and two current entries
//! of one workunit (moved away and back to the same time) pop one after the other,
//! the second being dropped because the first took the workunit out of the index.

use super::types::WuId;
use crate::engine::Time;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A lazily cleaned min-heap of `(transition_time, workunit id)`.
#[derive(Debug, Default)]
pub struct TransitionIndex {
    heap: BinaryHeap<Reverse<(Time, WuId)>>,
}

/// Entries held below which the index is never compacted.
const COMPACT_MIN: usize = 4096;

impl TransitionIndex {
    /// Records that workunit `id` is due at `tt`. The caller marks the row as
    /// indexed with this time.
    pub fn push(&mut self, tt: Time, id: WuId) {
        self.heap.push(Reverse((tt, id)));
    }

    /// Drops every stale entry once the heap holds more than twice `current`
    /// entries (the workunits indexed now): the heap stays within twice the live
    /// index, at an amortised cost of O(1) per push. Which entries are current is
    /// unchanged, so passes are too.
    pub fn compact_if_sparse(
        &mut self,
        current: usize,
        mut is_current: impl FnMut(WuId, Time) -> bool,
    ) {
        if self.heap.len() > COMPACT_MIN.max(2 * current) {
            self.heap.retain(|&Reverse((tt, id))| is_current(id, tt));
        }
    }

    /// Pops every current entry with time `< now` into `out` (unsorted), calling
    /// `take(id, tt)` on each entry: it returns whether the entry is current, and if
    /// so takes the workunit out of the index.
    pub fn pop_due(
        &mut self,
        now: Time,
        out: &mut Vec<WuId>,
        mut take: impl FnMut(WuId, Time) -> bool,
    ) {
        while let Some(&Reverse((tt, id))) = self.heap.peek() {
            if tt >= now {
                break;
            }
            self.heap.pop();
            if take(id, tt) {
                out.push(id);
            }
        }
    }

    /// The earliest current time, dropping stale entries on top; `current(id, tt)`
    /// says whether an entry is current.
    pub fn peek(&mut self, mut current: impl FnMut(WuId, Time) -> bool) -> Option<Time> {
        while let Some(&Reverse((tt, id))) = self.heap.peek() {
            if current(id, tt) {
                return Some(tt);
            }
            self.heap.pop();
        }
        None
    }

    /// Entries held, stale ones included (for memory accounting).
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use std::collections::BTreeMap;

    /// Random moves, removals and passes: the lazy index hands each pass exactly the
    /// workunits an exact index (a map of current times) would.
    #[test]
    fn lazy_index_matches_an_exact_one() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(12);
        for _ in 0..50 {
            let mut idx = TransitionIndex::default();
            // Row state: (in index, transition_time).
            let mut rows: BTreeMap<WuId, (bool, Time)> = BTreeMap::new();
            let mut exact: BTreeMap<WuId, Time> = BTreeMap::new();
            let mut now: Time = 0;
            for _ in 0..400 {
                let id = rng.random_range(1..30u32);
                match rng.random_range(0..10) {
                    0..=5 => {
                        let tt = now + rng.random_range(0..20);
                        rows.insert(id, (true, tt));
                        exact.insert(id, tt);
                        idx.push(tt, id);
                    }
                    6 => {
                        rows.remove(&id);
                        exact.remove(&id);
                    }
                    7 => {
                        let before = idx.len();
                        idx.compact_if_sparse(0, |id, tt| rows.get(&id) == Some(&(true, tt)));
                        assert!(idx.len() <= before);
                    }
                    _ => {
                        now += rng.random_range(0..8);
                        if rng.random_range(0..4) == 0 {
                            // Compacting keeps every current entry.
                            let mut all = TransitionIndex::default();
                            std::mem::swap(&mut all, &mut idx);
                            let mut heap = all.heap;
                            heap.retain(|&Reverse((tt, id))| rows.get(&id) == Some(&(true, tt)));
                            idx.heap = heap;
                        }
                        let mut got = Vec::new();
                        idx.pop_due(now, &mut got, |id, tt| match rows.get_mut(&id) {
                            Some(r) if r.0 && r.1 == tt => {
                                r.0 = false;
                                true
                            }
                            _ => false,
                        });
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
                        let next = idx.peek(|id, tt| rows.get(&id) == Some(&(true, tt)));
                        assert_eq!(next, exact.values().min().copied());
                    }
                }
            }
        }
    }
}
