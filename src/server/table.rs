//! A table of rows with dense, increasing ids and deletion (db_purge).
//!
//! Ids are handed out 1, 2, 3… like a MySQL auto-increment. Rows live in a deque
//! indexed by `id - base`; purged rows leave a hole, and holes at the front are
//! dropped, so memory follows the window of live rows rather than every row ever
//! created. Lookups are O(1) with no hashing.

use std::collections::VecDeque;

#[derive(Debug)]
pub struct Table<T> {
    base: u32,
    rows: VecDeque<Option<T>>,
    live: usize,
    /// High-water marks of `live` and of the id window, for `bench`.
    pub peak_live: usize,
    pub peak_window: usize,
}

impl<T> Default for Table<T> {
    fn default() -> Self {
        Self {
            base: 1,
            rows: VecDeque::new(),
            live: 0,
            peak_live: 0,
            peak_window: 0,
        }
    }
}

impl<T> Table<T> {
    /// The id the next inserted row will get.
    pub fn next_id(&self) -> u32 {
        self.base + self.rows.len() as u32
    }

    /// Inserts a row and returns its id.
    pub fn insert(&mut self, row: T) -> u32 {
        let id = self.next_id();
        self.rows.push_back(Some(row));
        self.live += 1;
        self.peak_live = self.peak_live.max(self.live);
        self.peak_window = self.peak_window.max(self.rows.len());
        id
    }

    pub fn get(&self, id: u32) -> Option<&T> {
        let i = id.checked_sub(self.base)? as usize;
        self.rows.get(i)?.as_ref()
    }

    pub fn get_mut(&mut self, id: u32) -> Option<&mut T> {
        let i = id.checked_sub(self.base)? as usize;
        self.rows.get_mut(i)?.as_mut()
    }

    /// Deletes a row, returning it.
    pub fn remove(&mut self, id: u32) -> Option<T> {
        let i = id.checked_sub(self.base)? as usize;
        let row = self.rows.get_mut(i)?.take()?;
        self.live -= 1;
        while matches!(self.rows.front(), Some(None)) {
            self.rows.pop_front();
            self.base += 1;
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

    /// Live rows in ascending id order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> {
        let base = self.base;
        self.rows
            .iter()
            .enumerate()
            .filter_map(move |(i, r)| r.as_ref().map(|r| (base + i as u32, r)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
