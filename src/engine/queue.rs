//! The main event queue.
//!
//! Events are ordered by `(time, tie class, sequence number)`. The tie class encodes the
//! spec's recommended order of daemons at equal timestamps (spec backend §2.0); the
//! sequence number makes equal keys pop in insertion order, so the order of events is a
//! pure function of the scenario and the seed.
//!
//! Cancellation is lazy: an owner that wants to move a timer bumps a generation counter
//! of its own and pushes a new event; the stale one is recognised and skipped when it
//! pops. This keeps the heap a plain binary heap, which the measurements in
//! `shared/notes/rust-stack.md` show to be several times faster than a keyed queue at
//! scale, and means no per-event allocation once the heap has grown.

use super::time::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

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

/// A deterministic priority queue of events of type `E`.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    now: Time,
    popped: u64,
}

const SEQ_BITS: u32 = 56;
const SEQ_MASK: u128 = (1 << SEQ_BITS) - 1;
/// Offset that maps signed times onto unsigned keys while preserving order.
const TIME_BIAS: u64 = 1 << 63;

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self {
            heap: BinaryHeap::new(),
            seq: 0,
            now: 0,
            popped: 0,
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
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Schedules `event` at `time` in tie class `class` (lower classes pop first among
    /// events at the same time). Scheduling in the past is a causality error: the event
    /// is clamped to `now`, which keeps the clock monotone.
    pub fn push(&mut self, time: Time, class: u8, event: E) {
        let time = time.max(self.now);
        self.seq += 1;
        let key = (((time as u64) ^ TIME_BIAS) as u128) << 64
            | (class as u128) << SEQ_BITS
            | (self.seq as u128 & SEQ_MASK);
        self.heap.push(Entry { key, event });
    }

    /// Time of the next event, if any.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap
            .peek()
            .map(|e| (((e.key >> 64) as u64) ^ TIME_BIAS) as i64)
    }

    /// Pops the next event and advances the clock to its time.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let entry = self.heap.pop()?;
        let time = (((entry.key >> 64) as u64) ^ TIME_BIAS) as i64;
        debug_assert!(time >= self.now, "event queue went back in time");
        self.now = time;
        self.popped += 1;
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

    #[test]
    fn past_events_are_clamped_to_now() {
        let mut q = EventQueue::new();
        q.push(100, 0, 1);
        q.pop();
        q.push(50, 0, 2);
        assert_eq!(q.pop(), Some((100, 2)));
    }
}
