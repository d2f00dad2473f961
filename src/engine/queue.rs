//! The main event queue.
//!
//! Events are ordered by `(time, tie class, sequence number)`. The tie class encodes the
//! spec's recommended order of daemons at equal timestamps (spec backend §2.0); the
//! sequence number makes equal keys pop in insertion order, so the order of events is a
//! pure function of the scenario and the seed.
//!
//! Cancellation is lazy: an owner that wants to move a timer bumps a generation counter
//! of its own and pushes a new event; the stale one is recognised and skipped when it
//! pops. No keyed structure is needed, and nothing is allocated per event once the
//! buckets have grown.
//!
//! The store is a radix heap (`radix-heap`), which exploits what a discrete-event
//! queue guarantees: keys never go below the last one popped, so an entry is filed
//! by the highest bit in which it differs from that key, and popping sorts only the
//! smallest bucket. It is several times faster than a binary heap at the sizes a run
//! reaches (docs/performance.md, "Measurements behind the code": the event queue).
//!
//! One case breaks monotony: an event pushed below an entry already taken out of the
//! radix heap (at the current time in a *lower* tie class than the event being
//! processed, or before one of the few entries taken out early so that the world can
//! look ahead) cannot go back into it. Such entries go to a small binary heap beside
//! it (`late`), and every pop takes the smaller of the two fronts, so the order is
//! exactly `(time, class, seq)` whatever the interleaving.

use super::time::Time;
use radix_heap::{Radix, RadixHeapMap};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

/// How many entries the queue takes out of the radix heap ahead of time, so that
/// [`EventQueue::peek_ahead`] can name the next events (the world prefetches their
/// hosts in stages, docs/performance.md).
const LOOKAHEAD: usize = 5;

/// Every this many pops the radix heap's buckets give back their spare capacity.
/// Entries move down through the buckets as time advances, and a bucket's vector
/// keeps the capacity of the most it ever held, so the buckets together would hold
/// several times the live entries (docs/performance.md, "Measurements behind the
/// code"). Shrinking moves no entry within a bucket, so the order of
/// events is unchanged; it reallocates the 129 buckets once per this many events,
/// in place where the allocator can.
const SHRINK_EVERY: u64 = 1 << 16;

/// The buckets also give back their spare capacity once per this many simulated
/// seconds. A bucket's capacity is the most it held since the last shrink, so the
/// buckets' total is the sum of maxima over that window, which grows with it; where
/// events are sparse (idle daemons skipped, few hosts) 2¹⁶ pops were days of
/// simulated time, and the buckets held about three times what a pass every few
/// seconds leaves (docs/performance.md, "Measurements behind the code").
const SHRINK_PERIOD: Time = 3600;

struct Entry<E> {
    /// Packed `(time, class, seq)`: time in the top 64 bits, class in the next 8, seq
    /// in the low 56. One integer comparison orders two entries.
    key: u128,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse so the smallest key pops first.
        other.key.cmp(&self.key)
    }
}

/// What one entry of the radix heap costs: a key and the event's payload (the memory
/// budget of an event, `crate::memory_budget`).
#[cfg(test)]
pub(crate) const ENTRY_BYTES: usize = std::mem::size_of::<(RadixKey, u64)>();

/// A packed key as two `u64` halves: a `u128` is 16-byte aligned, so a radix heap
/// entry `(u128, Event)` took 32 bytes for 24 of data; as two halves it takes 24,
/// and the queue is one of a large run's big structures (docs/performance.md,
/// "Measurements behind the code"). It orders, and files into radix buckets, exactly as the
/// `u128` does (high half first, then low), so the order of events is unchanged.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct RadixKey {
    hi: u64,
    lo: u64,
}

impl RadixKey {
    fn new(k: u128) -> Self {
        Self {
            hi: (k >> 64) as u64,
            lo: k as u64,
        }
    }
    fn get(self) -> u128 {
        (self.hi as u128) << 64 | self.lo as u128
    }
}

impl Radix for RadixKey {
    /// The leading bits the two share, as `u128::radix_similarity` counts them.
    #[inline]
    fn radix_similarity(&self, other: &Self) -> u32 {
        if self.hi != other.hi {
            (self.hi ^ other.hi).leading_zeros()
        } else {
            64 + (self.lo ^ other.lo).leading_zeros()
        }
    }
    const RADIX_BITS: u32 = 128;
}

/// A deterministic priority queue of events of type `E`.
pub struct EventQueue<E> {
    /// The bulk of the entries, keyed by the complement of the packed key (the radix
    /// heap pops its largest key first).
    radix: RadixHeapMap<RadixKey, E>,
    /// The smallest entries taken out of `radix` (up to [`LOOKAHEAD`]), in order, not
    /// yet popped by the caller.
    front: VecDeque<Entry<E>>,
    /// Entries pushed below `front` (see the module comment).
    late: BinaryHeap<Entry<E>>,
    seq: u64,
    now: Time,
    popped: u64,
    /// When the buckets next give back their spare capacity ([`SHRINK_PERIOD`]).
    next_shrink: Time,
}

const SEQ_BITS: u32 = 56;
/// The lowest explicit sequence number of [`EventQueue::push_seq`] callers: above
/// any the global counter reaches (2⁵⁵ pushes), so an event pushed with it pops after
/// every counter-numbered event of the same `(time, class)`.
pub const EXPLICIT_SEQ_BASE: u64 = 1 << 55;
const SEQ_MASK: u128 = (1 << SEQ_BITS) - 1;
/// Offset that maps signed times onto unsigned keys while preserving order.
const TIME_BIAS: u64 = 1 << 63;

fn time_of(key: u128) -> Time {
    (((key >> 64) as u64) ^ TIME_BIAS) as i64
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self {
            radix: RadixHeapMap::new(),
            front: VecDeque::with_capacity(LOOKAHEAD),
            late: BinaryHeap::new(),
            seq: 0,
            now: 0,
            popped: 0,
            next_shrink: SHRINK_PERIOD,
        }
    }

    /// Current simulated time: the time of the last popped event.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Number of events popped so far (stale ones included).
    pub fn popped(&self) -> u64 {
        self.popped
    }

    /// Number of pending entries (stale ones included).
    pub fn len(&self) -> usize {
        self.radix.len() + self.late.len() + self.front.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Schedules `event` at `time` in tie class `class` (lower classes pop first among
    /// events at the same time). Scheduling in the past is a causality error: the event
    /// is clamped to `now`, which keeps the clock monotone.
    pub fn push(&mut self, time: Time, class: u8, event: E) {
        self.seq += 1;
        self.push_key(time, class, self.seq, event);
    }

    /// Schedules `event` at `time` in tie class `class` with the explicit sequence
    /// number `seq` instead of the next one of the global counter: among events of
    /// equal `(time, class)` it pops in `seq` order. The world uses it for a daemon
    /// pass woken after sleeping, so that it pops exactly where its periodic
    /// re-push would have put it (see `World::wake_daemons`). A `seq` at or above
    /// [`EXPLICIT_SEQ_BASE`] never meets the counter's, which stays far below. The
    /// global counter is not advanced.
    pub fn push_seq(&mut self, time: Time, class: u8, seq: u64, event: E) {
        self.push_key(time, class, seq, event);
    }

    fn push_key(&mut self, time: Time, class: u8, seq: u64, event: E) {
        let time = time.max(self.now);
        let key = (((time as u64) ^ TIME_BIAS) as u128) << 64
            | (class as u128) << SEQ_BITS
            | (seq as u128 & SEQ_MASK);
        // The radix heap accepts keys from its last popped one on (`!key <= top`).
        match self.radix.top() {
            Some(top) if !key > top.get() => self.late.push(Entry { key, event }),
            _ => self.radix.push(RadixKey::new(!key), event),
        }
    }

    /// Moves the smallest entries of `radix` to `front` until it holds [`LOOKAHEAD`]
    /// (or `radix` is empty).
    fn fill_front(&mut self) {
        while self.front.len() < LOOKAHEAD
            && let Some((k, event)) = self.radix.pop()
        {
            self.front.push_back(Entry {
                key: !k.get(),
                event,
            });
        }
    }

    /// Time of the next event, if any.
    pub(crate) fn peek_time(&mut self) -> Option<Time> {
        self.fill_front();
        let f = self.front.front().map(|e| e.key);
        let l = self.late.peek().map(|e| e.key);
        match (f, l) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
        .map(time_of)
    }

    /// The events that will most likely pop next, in order: the entries taken out of
    /// the radix heap ahead of time. A hint for prefetching, not a promise: an entry
    /// of `late`, or an event pushed later below these, pops before them. Taking
    /// entries out early only sends pushes below them to `late`, so the order of
    /// pops is unchanged.
    pub(crate) fn peek_ahead(&mut self) -> impl Iterator<Item = &E> {
        self.fill_front();
        self.front.iter().map(|e| &e.event)
    }

    /// Pops the next event and advances the clock to its time.
    pub(crate) fn pop(&mut self) -> Option<(Time, E)> {
        self.fill_front();
        let take_late = match (self.front.front(), self.late.peek()) {
            (Some(f), Some(l)) => l.key < f.key,
            (None, Some(_)) => true,
            _ => false,
        };
        let entry = if take_late {
            self.late.pop()?
        } else {
            self.front.pop_front()?
        };
        let time = time_of(entry.key);
        debug_assert!(time >= self.now, "event queue went back in time");
        self.now = time;
        self.popped += 1;
        if self.popped.is_multiple_of(SHRINK_EVERY) || time >= self.next_shrink {
            self.next_shrink = time.saturating_add(SHRINK_PERIOD);
            self.radix.shrink_to_fit();
        }
        Some((time, entry.event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_class_then_insertion() {
        let mut q = EventQueue::new();
        q.push(10, 2, "t10c2");
        q.push(5, 7, "t5c7");
        q.push(10, 0, "t10c0-a");
        q.push(10, 0, "t10c0-b");
        q.push(-3, 9, "neg");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ["neg", "t5c7", "t10c0-a", "t10c0-b", "t10c2"]);
        assert_eq!(q.now(), 10);
    }

    /// Random pushes between pops, some at the current time in a lower class than
    /// the event just popped: the queue pops exactly in `(time, class, insertion)`
    /// order, as a sorted reference does.
    #[test]
    fn matches_a_sorted_reference_under_random_interleavings() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(9);
        for _ in 0..100 {
            let mut q = EventQueue::new();
            let mut reference: Vec<(Time, u8, u64)> = Vec::new();
            let mut n = 0u64;
            let mut now = 0;
            for _ in 0..500 {
                for _ in 0..rng.random_range(0..4) {
                    let t = now + [0, 0, 1, 5, 100][rng.random_range(0..5)];
                    let c = rng.random_range(0..4u8);
                    n += 1;
                    q.push(t, c, n);
                    reference.push((t, c, n));
                }
                if rng.random_range(0..3) > 0 {
                    reference.sort_unstable();
                    let want = (!reference.is_empty()).then(|| reference.remove(0));
                    assert_eq!(q.peek_time(), want.map(|w| w.0));
                    let got = q.pop();
                    assert_eq!(got, want.map(|(t, _, id)| (t, id)));
                    if let Some((t, _)) = got {
                        now = t;
                    }
                }
            }
            assert_eq!(q.len(), reference.len());
        }
    }

    /// `peek_ahead` names the next events in order, and looking ahead (which takes
    /// entries out of the radix heap early) changes no pop, whatever is pushed after.
    #[test]
    fn peeking_ahead_names_the_next_events_and_changes_no_pop() {
        use rand::{RngExt, SeedableRng};
        let mut q = EventQueue::new();
        for (t, e) in [
            (30, "c"),
            (10, "a"),
            (20, "b"),
            (50, "e"),
            (40, "d"),
            (60, "f"),
        ] {
            q.push(t, 0, e);
        }
        let ahead: Vec<_> = q.peek_ahead().copied().collect();
        assert_eq!(ahead, ["a", "b", "c", "d", "e", "f"][..LOOKAHEAD]);
        // Pushed below entries already taken out: it still pops in its place.
        q.push(25, 0, "between");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ["a", "b", "between", "c", "d", "e", "f"]);

        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(4);
        for _ in 0..50 {
            let (mut peeking, mut plain) = (EventQueue::new(), EventQueue::new());
            let mut now = 0;
            for n in 0..400u64 {
                let t = now + [0, 1, 3, 50][rng.random_range(0..4)];
                let c = rng.random_range(0..3u8);
                peeking.push(t, c, n);
                plain.push(t, c, n);
                if rng.random_range(0..2) == 0 {
                    let _ = peeking.peek_ahead().count();
                    let got = peeking.pop();
                    assert_eq!(got, plain.pop());
                    now = got.map_or(now, |g| g.0);
                }
            }
            while let Some(e) = plain.pop() {
                assert_eq!(peeking.pop(), Some(e));
            }
            assert!(peeking.is_empty());
        }
    }

    /// The two-half key files entries into the radix buckets and orders them exactly
    /// as the `u128` did, and an entry with an 8-byte event (the world's `Event` is
    /// 8 bytes) is 24 bytes, not 32.
    #[test]
    fn radix_key_matches_u128() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(11);
        let edges = [
            0u128,
            1,
            u64::MAX as u128,
            1 << 64,
            u128::MAX,
            u128::MAX - 1,
        ];
        for i in 0..20_000 {
            let a: u128 = if i % 5 == 0 {
                edges[i % 6]
            } else {
                rng.random()
            };
            let b: u128 = match i % 3 {
                0 => rng.random(),
                1 => a ^ (1 << rng.random_range(0..64)),
                _ => a ^ (1 << rng.random_range(64..128)),
            };
            let (ka, kb) = (RadixKey::new(a), RadixKey::new(b));
            assert_eq!(ka.get(), a);
            assert_eq!(ka.cmp(&kb), a.cmp(&b));
            assert_eq!(ka.radix_similarity(&kb), a.radix_similarity(&b));
        }
        // Two halves take 24 bytes where a `u128` key took 32 (its 16-byte alignment).
        assert!(ENTRY_BYTES < std::mem::size_of::<(u128, u64)>());
    }

    /// Explicit sequence numbers order events of one `(time, class)` among
    /// themselves, after the counter-numbered ones, also when pushed below entries
    /// already taken out of the radix heap (to `late`), and never move the counter.
    #[test]
    fn explicit_sequence_numbers_order_ties() {
        let mut q = EventQueue::new();
        q.push(5, 1, "first-counter");
        q.push_seq(10, 1, EXPLICIT_SEQ_BASE + 2, "x2");
        q.push_seq(10, 1, EXPLICIT_SEQ_BASE, "x0");
        q.push(10, 1, "counter");
        q.push_seq(10, 0, EXPLICIT_SEQ_BASE + 9, "class0");
        q.push(20, 0, "later");
        assert_eq!(q.pop(), Some((5, "first-counter")));
        // Entries up to "later" are taken out ahead; this one goes to `late`.
        let _ = q.peek_ahead().count();
        q.push_seq(10, 1, EXPLICIT_SEQ_BASE + 1, "x1");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ["class0", "counter", "x0", "x1", "x2", "later"]);
        assert_eq!(q.seq, 3);
    }

    #[test]
    fn past_events_are_clamped_to_now() {
        let mut q = EventQueue::new();
        q.push(100, 0, 1);
        q.pop();
        q.push(50, 0, 2);
        assert_eq!(q.pop(), Some((100, 2)));
    }
}
