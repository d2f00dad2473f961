//! Software prefetch: asking the CPU to start loading memory the program will read
//! soon, so that several cache misses overlap instead of stalling one after another.
//!
//! With a large population every row a daemon or an RPC touches lies somewhere in
//! gigabytes of memory and its first touch misses the cache (docs/performance.md).
//! When a loop knows which rows it will visit next (a daemon's work list, the next
//! event's host), it prefetches them a few iterations ahead. A prefetch is a hint
//! only: it never faults, and it changes no value the program computes.

/// Prefetches the cache lines of the `bytes` bytes starting at `p`.
#[inline(always)]
pub fn prefetch_bytes<T>(p: *const T, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let p = p.cast::<i8>();
        for k in 0..bytes.div_ceil(64) {
            // SAFETY: a prefetch never faults, whatever the address; the offsets
            // stay within the `bytes` bytes the caller names, all within one
            // object, so the pointer arithmetic stays in bounds.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(k * 64)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, bytes);
}

/// Prefetches every cache line of `*r`.
#[inline(always)]
pub fn prefetch<T>(r: &T) {
    prefetch_bytes(r as *const T, std::mem::size_of::<T>());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefetch_of_any_object_changes_nothing() {
        let v = vec![3u64; 100];
        prefetch_bytes(v.as_ptr(), 800);
        prefetch(&v[5]);
        assert_eq!(v.iter().sum::<u64>(), 300);
    }
}
