//! A small buffer that lives on the stack up to `N` elements and spills to the heap
//! beyond, so the per-event scratch of the policy (per-CPU, per-project and run-list
//! arrays) costs no allocation on ordinary hosts and stays correct on huge ones.
//!
//! Hand-written because it measured faster than `smallvec::SmallVec` in its place
//! (bench-100k with the modern client: 31.5 s here, 35.5 s with `SmallVec`, whose
//! every index first checks whether it spilled; docs/performance.md, "Tried and
//! dropped").
//!
//! The stack storage is left uninitialised beyond `len`: a buffer is made several
//! times per host event (the RR simulation's 64-entry active list and per-CPU busy
//! times, the run list and its sort keys), and writing `N` default values into each,
//! about 4 KiB per `schedule_cpus`, was a visible share of the client's time on the
//! short-job benchmark (docs/performance.md, "The modern client's scratch").

use std::mem::MaybeUninit;
use std::ops::{Deref, DerefMut};

/// Fixed stack capacity `N`, heap spill above it. Invariant: in `Stack`, the first
/// `len ≤ N` elements of `buf` are initialised. `T: Copy`, so nothing is ever
/// dropped and an element may be overwritten or forgotten freely.
pub(crate) enum SmallBuf<T: Copy, const N: usize> {
    Stack {
        buf: [MaybeUninit<T>; N],
        len: usize,
    },
    Heap(Vec<T>),
}

impl<T: Copy, const N: usize> SmallBuf<T, N> {
    /// An empty buffer.
    #[inline]
    pub fn new() -> Self {
        Self::Stack {
            buf: [const { MaybeUninit::uninit() }; N],
            len: 0,
        }
    }

    /// `n` copies of `value`.
    #[inline]
    pub(crate) fn filled(n: usize, value: T) -> Self {
        if n <= N {
            let mut buf = [const { MaybeUninit::uninit() }; N];
            for x in &mut buf[..n] {
                x.write(value);
            }
            Self::Stack { buf, len: n }
        } else {
            Self::Heap(vec![value; n])
        }
    }

    #[inline]
    pub fn push(&mut self, x: T) {
        match self {
            Self::Stack { buf, len } if *len < N => {
                buf[*len].write(x);
                *len += 1;
            }
            Self::Stack { .. } => {
                let mut v = Vec::with_capacity(2 * N + 1);
                v.extend_from_slice(self);
                v.push(x);
                *self = Self::Heap(v);
            }
            Self::Heap(v) => v.push(x),
        }
    }

    /// Removes element `i`, keeping the order of the others.
    #[inline]
    pub fn remove(&mut self, i: usize) {
        match self {
            Self::Stack { buf, len } => {
                // `copy_within` panics if `i ≥ len`, so `len` never underflows.
                buf.copy_within(i + 1..*len, i);
                *len -= 1;
            }
            Self::Heap(v) => {
                v.remove(i);
            }
        }
    }
}

impl<T: Copy, const N: usize> Deref for SmallBuf<T, N> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        match self {
            // SAFETY: the first `len` elements are initialised (the type's
            // invariant, kept by `new`, `filled`, `push` and `remove`), `len ≤ N`,
            // and `MaybeUninit<T>` has the layout of `T`.
            Self::Stack { buf, len } => unsafe {
                std::slice::from_raw_parts(buf.as_ptr().cast::<T>(), *len)
            },
            Self::Heap(v) => v,
        }
    }
}

impl<T: Copy, const N: usize> DerefMut for SmallBuf<T, N> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            // SAFETY: as in `deref`; the borrow is unique.
            Self::Stack { buf, len } => unsafe {
                std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<T>(), *len)
            },
            Self::Heap(v) => v,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spills_to_heap_and_keeps_order() {
        let mut b: SmallBuf<u32, 2> = SmallBuf::new();
        for i in 0..5 {
            b.push(i);
        }
        assert!(matches!(b, SmallBuf::Heap(_)));
        b.remove(1);
        assert_eq!(&*b, &[0, 2, 3, 4]);
        let mut s: SmallBuf<u32, 4> = SmallBuf::filled(3, 7);
        s.remove(0);
        assert_eq!(&*s, &[7, 7]);
        // Only the first `len` elements are ever read: a push after a remove
        // shows the pushed value, not whatever the slot held.
        s.push(9);
        s[0] = 1;
        assert_eq!(&*s, &[1, 7, 9]);
        let mut f: SmallBuf<(u32, f64), 2> = SmallBuf::filled(3, (1, 0.5));
        f.push((2, 1.5));
        assert_eq!(&*f, &[(1, 0.5), (1, 0.5), (1, 0.5), (2, 1.5)]);
        let e: SmallBuf<u64, 8> = SmallBuf::new();
        assert!(e.is_empty());
    }
}
