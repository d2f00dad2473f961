//! A small buffer that lives on the stack up to `N` elements and spills to the heap
//! beyond, so the per-event scratch of the policy (per-CPU, per-project and run-list
//! arrays) costs no allocation on ordinary hosts and stays correct on huge ones.
//!
//! Hand-written because it measured faster than `smallvec::SmallVec` in its place
//! (bench-100k with the modern client: 31.5 s here, 35.5 s with `SmallVec`, whose
//! every index first checks whether it spilled; docs/performance.md, "Tried and
//! dropped").

use std::ops::{Deref, DerefMut};

/// Fixed stack capacity `N`, heap spill above it.
pub(crate) enum SmallBuf<T: Copy + Default, const N: usize> {
    Stack { buf: [T; N], len: usize },
    Heap(Vec<T>),
}

impl<T: Copy + Default, const N: usize> SmallBuf<T, N> {
    /// An empty buffer.
    #[inline]
    pub fn new() -> Self {
        Self::Stack {
            buf: [T::default(); N],
            len: 0,
        }
    }

    /// `n` copies of `value`.
    #[inline]
    pub(crate) fn filled(n: usize, value: T) -> Self {
        if n <= N {
            Self::Stack {
                buf: [value; N],
                len: n,
            }
        } else {
            Self::Heap(vec![value; n])
        }
    }

    #[inline]
    pub fn push(&mut self, x: T) {
        match self {
            Self::Stack { buf, len } if *len < N => {
                buf[*len] = x;
                *len += 1;
            }
            Self::Stack { buf, len } => {
                let mut v = Vec::with_capacity(2 * N + 1);
                v.extend_from_slice(&buf[..*len]);
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
                buf.copy_within(i + 1..*len, i);
                *len -= 1;
            }
            Self::Heap(v) => {
                v.remove(i);
            }
        }
    }
}

impl<T: Copy + Default, const N: usize> Deref for SmallBuf<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            Self::Stack { buf, len } => &buf[..*len],
            Self::Heap(v) => v,
        }
    }
}

impl<T: Copy + Default, const N: usize> DerefMut for SmallBuf<T, N> {
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            Self::Stack { buf, len } => &mut buf[..*len],
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
    }
}
