//! An ordered set of row ids, for the daemons' work lists (spec backend §2.5–§2.8:
//! the validator's `need_validate > 0`, the assimilator's `assimilate_state =
//! READY`, the file deleter's and db_purge's states). BOINC's daemons select these
//! rows through an index and walk them in ascending id; the simulator keeps each
//! list as a set of ids next to the rows.
//!
//! Every workunit passes through five of these lists, so they see about ten inserts
//! and removals per workunit. In a B-tree each costs a walk down several nodes; here
//! each is one bit (docs/performance.md, "Measurements behind the code"). Ids are
//! handed out in ascending order and leave the lists roughly in the order they
//! entered, so the set keeps bits only for a window of ids: blocks
//! of [`BLOCK_IDS`] ids, from the block of the lowest id held to that of the
//! highest. A block with no id leaves the window (its bits are kept for the next
//! block made), and the window drops empty blocks at its front, so memory follows
//! the most ids the list held at once, not the ids ever handed out.

use super::types::RowId;
use std::collections::VecDeque;
use std::marker::PhantomData;

/// Words of 64 ids per block.
const BLOCK_WORDS: usize = 64;
/// Ids per block (4,096: one block is 512 bytes of bits).
const BLOCK_IDS: u32 = (BLOCK_WORDS * 64) as u32;

/// One block's bits and how many ids it holds.
#[derive(Clone, Debug)]
struct Block {
    count: u32,
    /// Bit `w` is set when word `w` of `bits` holds an id, so that a walk goes
    /// straight from one id to the next: the daemons' lists hold a few ids per block
    /// (ids leave them out of order), so reading all 64 words of each block would
    /// read mostly empty words (docs/performance.md, "Measurements behind the code").
    words: u64,
    bits: Bits,
}

impl Block {
    /// The first word after `word` that holds an id.
    fn word_after(&self, word: usize) -> Option<usize> {
        let later = self.words & (!0u64).checked_shl(word as u32 + 1).unwrap_or(0);
        (later != 0).then(|| later.trailing_zeros() as usize)
    }

    /// The first word that holds an id (a block in the window holds one).
    fn first_word(&self) -> usize {
        self.words.trailing_zeros() as usize
    }
}

/// A set of ids in ascending order, with O(1) insert, remove and length.
#[derive(Clone, Debug)]
pub struct IdSet<K> {
    /// Blocks from `base` on: `blocks[i]` holds the ids of block `base + i`, or
    /// `None` when it holds none. The first and last are never `None`.
    blocks: VecDeque<Option<Block>>,
    /// The block number of `blocks[0]`.
    base: u32,
    len: usize,
    /// Bits of freed blocks (all zero), kept for the next blocks to be made: a list
    /// holds a few ids per block, so its blocks empty and fill again all the time,
    /// and making each anew would call the allocator each time. A daemon's pass
    /// empties many blocks at once, which new ids fill again over the next minutes,
    /// so every freed block is kept, not only a few (docs/performance.md,
    /// "Measurements behind the code"). The set's blocks, spare or not, are never
    /// more than it held at its fullest.
    spare: Vec<Bits>,
    _ids: PhantomData<K>,
}

/// One block's bits.
type Bits = Box<[u64; BLOCK_WORDS]>;

impl<K> Default for IdSet<K> {
    fn default() -> Self {
        Self {
            blocks: VecDeque::new(),
            base: 0,
            len: 0,
            spare: Vec::new(),
            _ids: PhantomData,
        }
    }
}

impl<K: RowId> IdSet<K> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The block's index in `blocks` and the id's word and bit in it; the block
    /// number itself if it is before the window.
    fn place(&self, id: K) -> (Result<usize, u32>, usize, u64) {
        let raw = id.raw();
        let block = raw / BLOCK_IDS;
        let off = (raw % BLOCK_IDS) as usize;
        let at = if block >= self.base {
            Ok((block - self.base) as usize)
        } else {
            Err(block)
        };
        (at, off / 64, 1u64 << (off % 64))
    }

    /// Adds `id`; returns whether it was not there.
    pub fn insert(&mut self, id: K) -> bool {
        let (at, word, bit) = self.place(id);
        let i = match at {
            _ if self.blocks.is_empty() => {
                self.base = id.raw() / BLOCK_IDS;
                self.blocks.push_back(None);
                0
            }
            Ok(i) => {
                if i >= self.blocks.len() {
                    self.blocks.resize(i + 1, None);
                }
                i
            }
            Err(block) => {
                // Before the window: extend it to the front.
                for _ in block..self.base {
                    self.blocks.push_front(None);
                }
                self.base = block;
                0
            }
        };
        let spare = &mut self.spare;
        let b = self.blocks[i].get_or_insert_with(|| Block {
            count: 0,
            words: 0,
            bits: spare.pop().unwrap_or_else(|| Box::new([0; BLOCK_WORDS])),
        });
        if b.bits[word] & bit != 0 {
            return false;
        }
        b.bits[word] |= bit;
        b.words |= 1 << word;
        b.count += 1;
        self.len += 1;
        true
    }

    /// Removes `id`; returns whether it was there.
    pub fn remove(&mut self, id: K) -> bool {
        let (Ok(i), word, bit) = self.place(id) else {
            return false;
        };
        let Some(Some(b)) = self.blocks.get_mut(i) else {
            return false;
        };
        if b.bits[word] & bit == 0 {
            return false;
        }
        b.bits[word] &= !bit;
        if b.bits[word] == 0 {
            b.words &= !(1 << word);
        }
        b.count -= 1;
        self.len -= 1;
        if b.count == 0 {
            // Every bit is clear again: the bits can serve the next block.
            if let Some(b) = self.blocks[i].take() {
                debug_assert!(b.bits.iter().all(|&w| w == 0));
                self.spare.push(b.bits);
            }
            // Keep the window's ends on blocks that hold ids.
            while let Some(None) = self.blocks.front() {
                self.blocks.pop_front();
                self.base += 1;
            }
            while let Some(None) = self.blocks.back() {
                self.blocks.pop_back();
            }
        }
        true
    }

    pub fn contains(&self, id: K) -> bool {
        let (Ok(i), word, bit) = self.place(id) else {
            return false;
        };
        matches!(self.blocks.get(i), Some(Some(b)) if b.bits[word] & bit != 0)
    }

    /// The ids in ascending order.
    pub fn iter(&self) -> Iter<'_, K> {
        // The window's first block holds ids (or there is none).
        let (word, bits) = match self.blocks.front().and_then(Option::as_ref) {
            Some(b) => (b.first_word(), b.bits[b.first_word()]),
            None => (0, 0),
        };
        Iter {
            set: self,
            block: 0,
            word,
            bits,
            left: self.len,
        }
    }
}

/// The ids of an [`IdSet`] in ascending order.
pub struct Iter<'a, K> {
    set: &'a IdSet<K>,
    /// The block and word `bits` was read from.
    block: usize,
    word: usize,
    /// The ids of that word not yet returned.
    bits: u64,
    /// Ids not yet returned (for `size_hint`, and to stop without scanning the
    /// window's tail).
    left: usize,
}

impl<K: RowId> Iterator for Iter<'_, K> {
    type Item = K;

    fn next(&mut self) -> Option<K> {
        if self.left == 0 {
            return None;
        }
        while self.bits == 0 {
            // The next word that holds ids; after a block's last, the first of the
            // next block that holds ids.
            let b = self.set.blocks.get(self.block)?.as_ref()?;
            let (b, word) = match b.word_after(self.word) {
                Some(w) => (b, w),
                None => {
                    self.block += 1;
                    while matches!(self.set.blocks.get(self.block), Some(None)) {
                        self.block += 1;
                    }
                    let b = self.set.blocks.get(self.block)?.as_ref()?;
                    (b, b.first_word())
                }
            };
            self.word = word;
            self.bits = b.bits[word];
        }
        let bit = self.bits.trailing_zeros();
        self.bits &= self.bits - 1;
        self.left -= 1;
        let block = self.set.base + self.block as u32;
        Some(K::from_raw(
            block * BLOCK_IDS + (self.word as u32) * 64 + bit,
        ))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use std::collections::BTreeSet;

    /// Random inserts and removals over ids near and far apart (within a block,
    /// across blocks, before the window, at the top of the id range): the set holds
    /// and lists exactly what a `BTreeSet` does, and its window shrinks back to
    /// nothing when emptied.
    #[test]
    fn behaves_as_an_ordered_set() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(3);
        // One set for every round: the blocks a round frees (kept as spares) serve
        // the next rounds' blocks, which must start empty.
        let mut ours = IdSet::<u32>::default();
        for round in 0..200 {
            let mut theirs = BTreeSet::new();
            let spread = [70, 5_000, 100_000, u32::MAX][round % 4];
            let start = rng.random_range(0..=u32::MAX - spread);
            for _ in 0..rng.random_range(1..600) {
                let id = start + rng.random_range(0..=spread);
                if rng.random_bool(0.6) {
                    assert_eq!(ours.insert(id), theirs.insert(id));
                } else {
                    assert_eq!(ours.remove(id), theirs.remove(&id));
                }
                assert_eq!(ours.contains(id), theirs.contains(&id));
                assert_eq!(ours.len(), theirs.len());
            }
            assert!(ours.iter().eq(theirs.iter().copied()));
            for b in ours.blocks.iter().flatten() {
                let held = (0..BLOCK_WORDS).filter(|&w| b.bits[w] != 0);
                assert_eq!(b.words, held.fold(0, |m, w| m | 1 << w), "words in use");
            }
            assert_eq!(ours.iter().size_hint(), (theirs.len(), Some(theirs.len())));
            let n = rng.random_range(0..=theirs.len());
            assert!(ours.iter().take(n).eq(theirs.iter().take(n).copied()));
            for id in std::mem::take(&mut theirs) {
                assert!(ours.remove(id));
            }
            assert!(ours.is_empty());
            assert!(ours.blocks.is_empty(), "an empty set holds no block");
            assert!(!ours.spare.is_empty(), "the freed blocks are kept");
            assert_eq!(ours.iter().next(), None);
        }
    }

    /// Ids entering in ascending order and leaving in about the same order (a work
    /// list's traffic) keep the window to the blocks between the oldest and the
    /// newest id held.
    #[test]
    fn the_window_follows_the_ids_held() {
        let mut s = IdSet::<u32>::default();
        for id in 0..100_000u32 {
            s.insert(id);
            if id >= 10_000 {
                s.remove(id - 10_000);
            }
        }
        assert_eq!(s.len(), 10_000);
        assert_eq!(s.base, 90_000 / BLOCK_IDS);
        assert_eq!(
            s.blocks.len(),
            (99_999 / BLOCK_IDS - 90_000 / BLOCK_IDS + 1) as usize
        );
        assert!(s.iter().eq(90_000..100_000));
        // The blocks freed behind the window served the ones made ahead of it:
        // never more blocks, spare or not, than the window held at its widest.
        assert!(
            s.blocks.len() + s.spare.len() <= 4,
            "{} spare",
            s.spare.len()
        );
    }
}
