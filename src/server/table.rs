//! A table of rows with dense, increasing ids and deletion (db_purge).
//!
//! Ids are handed out 1, 2, 3… like a MySQL auto-increment. Memory follows the rows
//! that are live, not the ids ever handed out: one workunit that waits for a late host
//! must not keep every row created after it in memory (a table that kept the window
//! from the oldest live id held 7.2 million result slots for 2 million live results).
//! - Rows live in a slab of fixed-size chunks. A deleted row's slot is reused by the
//!   next insert, so the slab holds the peak number of live rows, rounded up to one
//!   chunk; growing never copies rows (no doubling).
//! - An id maps to its slot through pages of `PAGE` ids. A page whose ids are all
//!   handed out and all deleted is freed, so a straggler costs one page (4 KiB), not
//!   the rows around it.
//!
//! Lookups are O(1) with no hashing: two array indexings.

use super::types::RowId;
use std::collections::VecDeque;

/// Ids per index page.
const PAGE: u32 = 1024;
/// Rows per slab chunk.
const CHUNK: usize = 8192;
/// Slot value of an id without a row.
const NONE: u32 = u32::MAX;

#[derive(Debug)]
struct Page {
    /// Slot of each id of the page (`NONE`: no row); `None` once the page is freed.
    slots: Option<Box<[u32]>>,
    live: u32,
}

#[derive(Debug)]
pub struct Table<T, K = u32> {
    /// Index pages; `pages[0]` holds ids from `first_page · PAGE`.
    pages: VecDeque<Page>,
    first_page: u32,
    next_id: u32,
    /// Row storage: `chunks[s / CHUNK][s % CHUNK]`.
    chunks: Vec<Vec<Option<T>>>,
    /// Slots freed by deletions, reused last-in first-out.
    free: Vec<u32>,
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
            free: Vec::new(),
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
        let slot = match self.free.pop() {
            Some(s) => {
                self.chunks[s as usize / CHUNK][s as usize % CHUNK] = Some(row);
                s
            }
            None => {
                if self.chunks.last().is_none_or(|c| c.len() == CHUNK) {
                    self.chunks.push(Vec::with_capacity(CHUNK));
                }
                let n = self.chunks.len() - 1;
                let chunk = &mut self.chunks[n];
                chunk.push(Some(row));
                (n * CHUNK + chunk.len() - 1) as u32
            }
        };
        let page = id / PAGE;
        if self.pages.is_empty() {
            self.first_page = page;
        }
        while self.first_page + self.pages.len() as u32 <= page {
            self.pages.push_back(Page {
                slots: Some(vec![NONE; PAGE as usize].into_boxed_slice()),
                live: 0,
            });
        }
        let p = &mut self.pages[(page - self.first_page) as usize];
        p.live += 1;
        p.slots.as_mut().expect("the newest page is never freed")[(id % PAGE) as usize] = slot;
        self.live += 1;
        self.peak_live = self.peak_live.max(self.live);
        K::from_raw(id)
    }

    #[inline]
    fn slot(&self, id: u32) -> Option<u32> {
        let i = (id / PAGE).checked_sub(self.first_page)? as usize;
        let s = self.pages.get(i)?.slots.as_ref()?[(id % PAGE) as usize];
        (s != NONE).then_some(s)
    }

    #[inline]
    pub fn get(&self, id: K) -> Option<&T> {
        let s = self.slot(id.raw())? as usize;
        self.chunks[s / CHUNK][s % CHUNK].as_ref()
    }

    /// Starts loading row `id` into the cache (a hint; nothing if there is no such
    /// row). The id's index entry is read now: callers prefetch rows in id order, so
    /// it is usually near the one read before.
    #[inline]
    pub(crate) fn prefetch(&self, id: K) {
        if let Some(s) = self.slot(id.raw()) {
            let s = s as usize;
            if let Some(row) = self.chunks[s / CHUNK].get(s % CHUNK) {
                crate::base::prefetch::prefetch(row);
            }
        }
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, id: K) -> Option<&mut T> {
        let s = self.slot(id.raw())? as usize;
        self.chunks[s / CHUNK][s % CHUNK].as_mut()
    }

    /// Deletes a row, returning it.
    pub fn remove(&mut self, id: K) -> Option<T> {
        let id = id.raw();
        let s = self.slot(id)?;
        let row = self.chunks[s as usize / CHUNK][s as usize % CHUNK].take()?;
        self.free.push(s);
        self.live -= 1;
        let page = id / PAGE;
        let i = (page - self.first_page) as usize;
        let p = &mut self.pages[i];
        p.slots.as_mut().expect("a page with a row is held")[(id % PAGE) as usize] = NONE;
        p.live -= 1;
        // A page all of whose ids are handed out and deleted is freed; empty pages
        // at the front leave the deque.
        let handed_out = (page + 1) * PAGE <= self.next_id;
        if p.live == 0 && handed_out {
            p.slots = None;
            while self.pages.front().is_some_and(|p| p.slots.is_none()) {
                self.pages.pop_front();
                self.first_page += 1;
            }
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
        self.pages.iter().filter(|p| p.slots.is_some()).count()
    }

    /// Live rows in ascending id order.
    pub fn iter(&self) -> impl Iterator<Item = (K, &T)> {
        let first = self.first_page;
        self.pages.iter().enumerate().flat_map(move |(pi, p)| {
            let base = (first + pi as u32) * PAGE;
            p.slots.iter().flat_map(move |slots| {
                slots
                    .iter()
                    .enumerate()
                    .filter(|&(_, &s)| s != NONE)
                    .map(move |(k, &s)| {
                        let s = s as usize;
                        let row = self.chunks[s / CHUNK][s % CHUNK]
                            .as_ref()
                            .expect("an indexed slot holds a row");
                        (K::from_raw(base + k as u32), row)
                    })
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use std::collections::BTreeMap;

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
    }
}
