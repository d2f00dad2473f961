//! A table of rows with dense, increasing ids and deletion (db_purge).
//!
//! Ids are handed out 1, 2, 3… like a MySQL auto-increment. Memory follows the rows
//! that are live, not the ids ever handed out: one workunit that waits for a late host
//! must not keep every row created after it in memory (docs/performance.md,
//! "Measurements behind the code").
//! - Rows live in a slab of fixed-size chunks. A deleted row's slot is reused by the
//!   next insert, so the slab holds the peak number of live rows, rounded up to one
//!   chunk; growing never copies rows (no doubling). The free slots are chained
//!   through the slots themselves ([`Slot::Free`] fits in a row's niche), not kept
//!   in a list beside them, whose capacity would be memory of its own at the peak.
//! - An id maps to its slot through pages of `PAGE` ids. A page whose ids are all
//!   handed out and all deleted is freed, so a straggler costs one page, not the rows
//!   around it. A page whose ids are all handed out and whose live rows have fallen
//!   to `SPARSE` or fewer keeps only those (8 bytes each instead of 4 KiB for the
//!   page): with a delay bound of days a few stragglers keep almost every page of the
//!   run alive (docs/performance.md, "Measurements behind the code").
//!
//! Lookups are O(1) with no hashing: two array indexings (a binary search among at
//! most `SPARSE` entries on a sparse page).

use super::types::RowId;
use std::collections::VecDeque;

/// Ids per index page.
const PAGE: u32 = 1024;
/// Rows per slab chunk.
pub(crate) const CHUNK: usize = 8192;
/// How far ahead of a loop over a list of rows [`Table::prefetch_list_step`] (and
/// the feeder, over its ordered set) loads them; their index entries twice as far.
pub(crate) const LIST_AHEAD: usize = 4;

/// What a prefetch of row `id` loads ([`Table::prefetch_as`]): the index entry that
/// says where the row is, or the row itself, its entry loaded a stage earlier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Load {
    Index,
    Row,
}
/// Slot value of an id without a row.
const NONE: u32 = u32::MAX;

/// Live rows at or below which a page whose ids are all handed out turns sparse.
const SPARSE: u32 = PAGE / 16;

#[derive(Debug)]
enum Slots {
    /// The slot of each id of the page (`NONE`: no row).
    Dense(Box<[u32]>),
    /// `(offset in the page, slot)` of the ids live when the page turned sparse, by
    /// offset; a row deleted since has slot `NONE`. No id of the page is inserted
    /// again (all were handed out), so the list only empties.
    Sparse(Box<[(u16, u32)]>),
    /// Every id of the page handed out and deleted.
    Freed,
}

#[derive(Debug)]
struct Page {
    slots: Slots,
    live: u32,
}

/// Where offset `k` sits in a sparse page's entries, if it was live when the page
/// turned sparse.
fn sparse_index(v: &[(u16, u32)], k: u32) -> Option<usize> {
    v.binary_search_by_key(&(k as u16), |e| e.0).ok()
}

impl Page {
    /// The slot of offset `k` (`NONE`: no row).
    #[inline(always)]
    fn get(&self, k: u32) -> u32 {
        match &self.slots {
            Slots::Dense(s) => s[k as usize],
            _ => self.get_sparse(k),
        }
    }

    /// [`Self::get`] on a sparse or freed page: rows of old pages are rarely read,
    /// so this stays out of the inlined lookup.
    #[cold]
    #[inline(never)]
    fn get_sparse(&self, k: u32) -> u32 {
        match &self.slots {
            Slots::Sparse(v) => sparse_index(v, k).map_or(NONE, |j| v[j].1),
            _ => NONE,
        }
    }

    /// Sets the slot of offset `k`, which must be held (dense, or sparse and live).
    fn set(&mut self, k: u32, slot: u32) {
        match &mut self.slots {
            Slots::Dense(s) => s[k as usize] = slot,
            Slots::Sparse(v) => {
                if let Some(j) = sparse_index(v, k) {
                    v[j].1 = slot;
                }
            }
            Slots::Freed => {}
        }
    }

    /// Keeps only the live entries of a dense page.
    fn make_sparse(&mut self) {
        if let Slots::Dense(s) = &self.slots {
            let live: Box<[(u16, u32)]> = (0..PAGE as u16)
                .zip(s.iter().copied())
                .filter(|&(_, slot)| slot != NONE)
                .collect();
            self.slots = Slots::Sparse(live);
        }
    }
}

/// One slot of the slab: a live row, or a free slot holding the next free one
/// (`NONE`: the last). It takes no more memory than the row: the `u32` sits beside
/// a field whose spare values tell the two apart (tested for each row type).
#[derive(Debug)]
enum Slot<T> {
    Row(T),
    Free(u32),
}

impl<T> Slot<T> {
    #[inline(always)]
    fn row(&self) -> Option<&T> {
        match self {
            Slot::Row(r) => Some(r),
            Slot::Free(_) => None,
        }
    }
    #[inline(always)]
    fn row_mut(&mut self) -> Option<&mut T> {
        match self {
            Slot::Row(r) => Some(r),
            Slot::Free(_) => None,
        }
    }
}

#[derive(Debug)]
pub struct Table<T, K = u32> {
    /// Index pages; `pages[0]` holds ids from `first_page · PAGE`.
    pages: VecDeque<Page>,
    first_page: u32,
    next_id: u32,
    /// Row storage: `chunks[s / CHUNK][s % CHUNK]`.
    chunks: Vec<Vec<Slot<T>>>,
    /// The slot freed last (`NONE`: none), head of the chain of free slots: they are
    /// reused last-in first-out.
    free: u32,
    live: usize,
    /// High-water mark of live rows, for `bench`.
    pub peak_live: usize,
    key: std::marker::PhantomData<K>,
}

impl<T, K> Default for Table<T, K> {
    fn default() -> Self {
        Self {
            pages: VecDeque::new(),
            first_page: 0,
            next_id: 1,
            chunks: Vec::new(),
            free: NONE,
            live: 0,
            peak_live: 0,
            key: std::marker::PhantomData,
        }
    }
}

impl<T, K: RowId> Table<T, K> {
    /// The id the next inserted row will get.
    pub(crate) fn next_id(&self) -> K {
        K::from_raw(self.next_id)
    }

    /// Inserts a row and returns its id.
    pub fn insert(&mut self, row: T) -> K {
        let id = self.next_id;
        self.next_id += 1;
        let slot = if self.free != NONE {
            let s = self.free;
            let cell = &mut self.chunks[s as usize / CHUNK][s as usize % CHUNK];
            match std::mem::replace(cell, Slot::Row(row)) {
                Slot::Free(next) => self.free = next,
                Slot::Row(_) => unreachable!("a free slot holds a row"),
            }
            // The next insert reads the next free slot, freed long ago (db_purge
            // frees rows by the thousand): start loading it now, so that the read
            // does not wait (docs/performance.md, "Measurements behind the code").
            // A hint only.
            if self.free != NONE {
                let f = self.free as usize;
                crate::base::prefetch::prefetch(&self.chunks[f / CHUNK][f % CHUNK]);
            }
            s
        } else {
            if self.chunks.last().is_none_or(|c| c.len() == CHUNK) {
                self.chunks.push(Vec::with_capacity(CHUNK));
            }
            let n = self.chunks.len() - 1;
            let chunk = &mut self.chunks[n];
            chunk.push(Slot::Row(row));
            (n * CHUNK + chunk.len() - 1) as u32
        };
        let page = id / PAGE;
        if self.pages.is_empty() {
            self.first_page = page;
        }
        while self.first_page + self.pages.len() as u32 <= page {
            self.pages.push_back(Page {
                slots: Slots::Dense(vec![NONE; PAGE as usize].into_boxed_slice()),
                live: 0,
            });
        }
        // The newest page still has ids to hand out: it is dense.
        let p = &mut self.pages[(page - self.first_page) as usize];
        p.live += 1;
        p.set(id % PAGE, slot);
        self.live += 1;
        self.peak_live = self.peak_live.max(self.live);
        K::from_raw(id)
    }

    #[inline(always)]
    fn slot(&self, id: u32) -> Option<u32> {
        let i = (id / PAGE).checked_sub(self.first_page)? as usize;
        let s = self.pages.get(i)?.get(id % PAGE);
        (s != NONE).then_some(s)
    }

    /// The slot row `id` lives in: a small number, reused once the row is deleted,
    /// for data kept beside the rows (`Db`'s transitioner bookkeeping).
    #[inline(always)]
    pub(crate) fn slot_of(&self, id: K) -> Option<u32> {
        self.slot(id.raw())
    }

    #[inline(always)]
    pub fn get(&self, id: K) -> Option<&T> {
        let s = self.slot(id.raw())? as usize;
        self.chunks[s / CHUNK][s % CHUNK].row()
    }

    /// Starts loading row `id` into the cache (a hint; nothing if there is no such
    /// row). Unlike [`Self::get`] it never reads the row itself, which would wait for
    /// the very load it starts. It reads the id's index entry, which misses the cache
    /// too when the ids are scattered: callers that can, prefetch the entry a stage
    /// earlier with [`Self::prefetch_index`].
    #[inline]
    pub(crate) fn prefetch(&self, id: K) {
        if let Some(s) = self.slot(id.raw()) {
            let s = s as usize;
            if let Some(row) = self.chunks[s / CHUNK].get(s % CHUNK) {
                crate::base::prefetch::prefetch(row);
            }
        }
    }

    /// [`Self::prefetch_index`] or [`Self::prefetch`], as `load` says: for a stage
    /// of prefetching that may load either.
    #[inline]
    pub(crate) fn prefetch_as(&self, id: K, load: Load) {
        match load {
            Load::Index => self.prefetch_index(id),
            Load::Row => self.prefetch(id),
        }
    }

    /// Step `i` of a loop over the rows of `list` in order: starts loading the row
    /// of entry `i + LIST_AHEAD` and the index entry of entry `i + 2·LIST_AHEAD`,
    /// so that neither the row nor its entry is waited for when the loop gets there
    /// (a loop over ids made or last touched long ago misses the cache on each).
    /// A hint only.
    #[inline]
    pub(crate) fn prefetch_list_step(&self, list: &[K], i: usize) {
        if let Some(&id) = list.get(i + LIST_AHEAD) {
            self.prefetch(id);
        }
        if let Some(&id) = list.get(i + 2 * LIST_AHEAD) {
            self.prefetch_index(id);
        }
    }

    /// Starts loading the index entry that says where row `id` lives, so that a
    /// later [`Self::prefetch`] or [`Self::get`] does not wait for it. Entries of a
    /// dense page only: a sparse page's rows are old and rarely read.
    #[inline]
    pub(crate) fn prefetch_index(&self, id: K) {
        let id = id.raw();
        let page = (id / PAGE)
            .checked_sub(self.first_page)
            .and_then(|i| self.pages.get(i as usize));
        if let Some(Page {
            slots: Slots::Dense(s),
            ..
        }) = page
            && let Some(entry) = s.get((id % PAGE) as usize)
        {
            crate::base::prefetch::prefetch(entry);
        }
    }

    #[inline(always)]
    pub(crate) fn get_mut(&mut self, id: K) -> Option<&mut T> {
        let s = self.slot(id.raw())? as usize;
        self.chunks[s / CHUNK][s % CHUNK].row_mut()
    }

    /// Deletes a row, returning it.
    pub fn remove(&mut self, id: K) -> Option<T> {
        let id = id.raw();
        let s = self.slot(id)?;
        let cell = &mut self.chunks[s as usize / CHUNK][s as usize % CHUNK];
        let Slot::Row(row) = std::mem::replace(cell, Slot::Free(self.free)) else {
            unreachable!("an indexed slot holds a row");
        };
        self.free = s;
        self.live -= 1;
        let page = id / PAGE;
        let i = (page - self.first_page) as usize;
        let p = &mut self.pages[i];
        p.set(id % PAGE, NONE);
        p.live -= 1;
        // A page all of whose ids are handed out and deleted is freed; empty pages
        // at the front leave the deque. One with few rows left turns sparse.
        let handed_out = (page + 1) * PAGE <= self.next_id;
        if p.live == 0 && handed_out {
            p.slots = Slots::Freed;
            while self
                .pages
                .front()
                .is_some_and(|p| matches!(p.slots, Slots::Freed))
            {
                self.pages.pop_front();
                self.first_page += 1;
            }
        } else if p.live <= SPARSE && handed_out {
            p.make_sparse();
        }
        Some(row)
    }

    /// Number of live rows.
    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Index pages held (each `PAGE` ids), for memory accounting.
    pub fn pages_held(&self) -> usize {
        self.pages
            .iter()
            .filter(|p| !matches!(p.slots, Slots::Freed))
            .count()
    }

    /// Live rows in ascending id order.
    pub fn iter(&self) -> impl Iterator<Item = (K, &T)> {
        let first = self.first_page;
        self.pages.iter().enumerate().flat_map(move |(pi, p)| {
            let base = (first + pi as u32) * PAGE;
            let entries: Box<dyn Iterator<Item = (u32, u32)>> = match &p.slots {
                Slots::Dense(s) => Box::new((0..PAGE).zip(s.iter().copied())),
                Slots::Sparse(v) => Box::new(v.iter().map(|&(k, s)| (u32::from(k), s))),
                Slots::Freed => Box::new(std::iter::empty()),
            };
            entries.filter(|&(_, s)| s != NONE).map(move |(k, s)| {
                let s = s as usize;
                let row = self.chunks[s / CHUNK][s % CHUNK]
                    .row()
                    .expect("an indexed slot holds a row");
                (K::from_raw(base + k), row)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use std::collections::BTreeMap;

    /// A free slot's link fits in the rows' niches: the slab costs no more than the
    /// rows.
    #[test]
    fn a_slot_is_no_bigger_than_its_row() {
        use crate::server::db::{HostRow, ResultRow, WorkunitRow};
        use std::mem::size_of;
        assert_eq!(size_of::<Slot<ResultRow>>(), size_of::<ResultRow>());
        assert_eq!(size_of::<Slot<WorkunitRow>>(), size_of::<WorkunitRow>());
        assert_eq!(size_of::<Slot<HostRow>>(), size_of::<HostRow>());
    }

    #[test]
    fn ids_stay_stable_across_removals() {
        let mut t = Table::default();
        let a = t.insert("a");
        let b = t.insert("b");
        let c = t.insert("c");
        assert_eq!((a, b, c), (1, 2, 3));
        assert_eq!(t.remove(2), Some("b"));
        assert_eq!(t.get(2), None);
        assert_eq!(t.remove(1), Some("a"));
        assert_eq!(t.get(3), Some(&"c"));
        assert_eq!(t.insert("d"), 4);
        assert_eq!(t.len(), 2);
        assert_eq!(t.iter().map(|(i, _)| i).collect::<Vec<_>>(), [3, 4]);
        assert_eq!(t.remove(9), None);
        assert_eq!(t.remove(2), None);
    }

    /// A handed-out page with few rows left keeps only those: lookups, iteration
    /// and deletion still see exactly the live rows, and the last deletion frees it.
    #[test]
    fn a_page_of_stragglers_turns_sparse_and_still_answers() {
        let mut t: Table<u32> = Table::default();
        for i in 1..=3 * PAGE {
            assert_eq!(t.insert(i * 10), i);
        }
        // Ids 1..PAGE-1 sit on page 0 (id 0 is never handed out).
        let keep = [5u32, 700, 1023];
        for id in 1..PAGE {
            if !keep.contains(&id) {
                assert_eq!(t.remove(id), Some(id * 10));
            }
        }
        assert!(matches!(t.pages[0].slots, Slots::Sparse(_)));
        assert!(matches!(t.pages[1].slots, Slots::Dense(_)));
        for id in 1..PAGE {
            let want = keep.contains(&id).then_some(id * 10);
            assert_eq!(t.get(id).copied(), want, "id {id}");
        }
        *t.get_mut(700).unwrap() += 1;
        let first: Vec<_> = t.iter().take(4).map(|(i, r)| (i, *r)).collect();
        assert_eq!(first, [(5, 50), (700, 7001), (1023, 10230), (1024, 10240)]);
        assert_eq!(t.remove(700), Some(7001));
        assert_eq!(t.remove(700), None);
        assert_eq!(t.get(700), None);
        assert_eq!(t.pages_held(), 4);
        t.remove(5);
        t.remove(1023);
        // The page is freed and leaves the front.
        assert_eq!(t.pages_held(), 3);
        assert_eq!(t.first_page, 1);
        assert_eq!(t.len(), 2 * PAGE as usize + 1);
    }

    /// Random inserts and deletions behave as a map of id to row, and memory
    /// follows the live rows: a straggler keeps one page, not the ids after it.
    #[test]
    fn behaves_as_a_map_and_frees_pages() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(3);
        let mut t: Table<u32> = Table::default();
        let mut m = BTreeMap::new();
        for step in 0..60_000u32 {
            if rng.random_range(0..3) > 0 || m.is_empty() {
                let id = t.insert(step);
                m.insert(id, step);
            } else {
                // Mostly old rows go, as db_purge removes them.
                let k = *m.keys().nth(rng.random_range(0..m.len().min(8))).unwrap();
                assert_eq!(t.remove(k), m.remove(&k));
            }
            if step % 5_000 == 0 {
                assert!(
                    t.iter()
                        .map(|(i, r)| (i, *r))
                        .eq(m.iter().map(|(i, r)| (*i, *r)))
                );
            }
        }
        assert_eq!(t.len(), m.len());
        for (id, r) in &m {
            assert_eq!(t.get(*id), Some(r));
        }
        // Live rows span few pages although 60,000 ids were handed out.
        let span = (m.keys().last().unwrap() - m.keys().next().unwrap()) / PAGE + 2;
        assert!(
            t.pages_held() as u32 <= span,
            "{} pages held",
            t.pages_held()
        );
        let straggler = *m.keys().next().unwrap();
        for _ in 0..10 * PAGE {
            let id = t.insert(0);
            t.remove(id);
        }
        assert!(t.pages_held() as u32 <= span + 1);
        assert!(t.get(straggler).is_some());
        // Freed slots are reused: the slab never grew past the peak.
        let slots: usize = t.chunks.iter().map(|c| c.len()).sum();
        assert!(slots <= t.peak_live);
        // The chain of free slots holds exactly the slots without a row.
        let (mut chained, mut s) = (0, t.free);
        while s != NONE {
            match t.chunks[s as usize / CHUNK][s as usize % CHUNK] {
                Slot::Free(next) => s = next,
                Slot::Row(_) => panic!("slot {s} is chained but holds a row"),
            }
            chained += 1;
        }
        assert_eq!(chained, slots - t.len());
    }
}
