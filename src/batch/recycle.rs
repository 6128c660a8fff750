//! Column buffers of dropped batches, kept for the next batch of the same size.
//!
//! A program that runs a query per cursor drops its row arrays at every cursor's end and
//! allocates them again for the next: megabytes that glibc hands back to the kernel (large
//! chunks are mmapped, and the heap's top is trimmed), so each execute page-faulted them in
//! anew. perf, Arrow fetch of 10,000 32-column rows through Driver 18: ~1,070 page faults an
//! execute, three quarters in `Batch::new` (zeroing) and in the driver's first writes into
//! text buffers; with glibc told to keep its memory the fetch took 7% less wall time. Within
//! one result set nothing is dropped (the prefetch pair alternates, lazy rows keep theirs), so
//! this is for the next execute.
//!
//! Process-wide and bounded: at most [`MAX_IDLE_BYTES`] per kind of buffer, oldest evicted
//! first; buffers below [`MIN_BYTES`] stay with the allocator, whose free lists serve them
//! without faults. The lock is only ever tried: a contended lock (another thread, or a lock a
//! thread held when the process forked) means allocating or freeing as usual, never waiting.
//! A buffer handed out again holds its previous query's bytes: values come back uninitialised
//! (readers see only what the driver writes) or zeroed, exactly as fresh ones.

use crate::odbc::sys::Len;
use std::mem::MaybeUninit;
use std::sync::Mutex;

/// Smaller buffers come from the allocator's free lists without page faults.
const MIN_BYTES: usize = 16 * 1024;
/// Idle bytes kept at most, per kind of buffer (values; indicators).
const MAX_IDLE_BYTES: usize = 16 << 20;

struct Bin<T> {
    /// Oldest first.
    idle: Vec<Box<[T]>>,
    bytes: usize,
}

impl<T> Bin<T> {
    const fn new() -> Self {
        Bin {
            idle: Vec::new(),
            bytes: 0,
        }
    }
}

static VALUES: Mutex<Bin<MaybeUninit<u64>>> = Mutex::new(Bin::new());
static INDICATORS: Mutex<Bin<Len>> = Mutex::new(Bin::new());

fn take<T>(bin: &Mutex<Bin<T>>, len: usize) -> Option<Box<[T]>> {
    if len * size_of::<T>() < MIN_BYTES {
        return None;
    }
    let mut bin = bin.try_lock().ok()?;
    let at = bin.idle.iter().rposition(|b| b.len() == len)?;
    let buffer = bin.idle.remove(at);
    bin.bytes -= len * size_of::<T>();
    Some(buffer)
}

fn give<T>(bin: &Mutex<Bin<T>>, buffer: Box<[T]>) {
    let bytes = buffer.len() * size_of::<T>();
    if !(MIN_BYTES..=MAX_IDLE_BYTES).contains(&bytes) {
        return;
    }
    let Ok(mut bin) = bin.try_lock() else {
        return;
    };
    let mut evicted = 0;
    while bin.bytes + bytes > MAX_IDLE_BYTES {
        evicted += 1;
        let oldest = bin.idle[evicted - 1].len() * size_of::<T>();
        bin.bytes -= oldest;
    }
    // Freed after the lock is released (munmap can take a while).
    let old: Vec<Box<[T]>> = bin.idle.drain(..evicted).collect();
    bin.idle.push(buffer);
    bin.bytes += bytes;
    drop(bin);
    drop(old);
}

/// Values of `words` u64 words, uninitialised: a kept buffer of that size, or a new one.
pub(super) fn values_uninit(words: usize) -> Box<[MaybeUninit<u64>]> {
    take(&VALUES, words).unwrap_or_else(|| Box::new_uninit_slice(words))
}

/// Values of `words` u64 words, all zero.
pub(super) fn values_zeroed(words: usize) -> Box<[MaybeUninit<u64>]> {
    match take(&VALUES, words) {
        Some(mut kept) => {
            kept.fill(MaybeUninit::new(0));
            kept
        }
        None => {
            // `vec![0; n]` allocates with calloc; `Box::new_zeroed_slice` would too, but needs
            // 1.92.
            let words = vec![0u64; words].into_boxed_slice();
            // SAFETY: `MaybeUninit<u64>` has the layout of `u64`, and an initialised `u64` is a
            // valid `MaybeUninit<u64>`: the same allocation, reinterpreted.
            unsafe { Box::from_raw(Box::into_raw(words) as *mut [MaybeUninit<u64>]) }
        }
    }
}

pub(super) fn give_values(words: Box<[MaybeUninit<u64>]>) {
    give(&VALUES, words);
}

/// `rows` length indicators, each `fill`.
pub(super) fn indicators(rows: usize, fill: Len) -> Vec<Len> {
    match take(&INDICATORS, rows) {
        Some(mut kept) => {
            kept.fill(fill);
            kept.into_vec()
        }
        None => vec![fill; rows],
    }
}

/// Keep `indicators` if they are a whole buffer (a `Vec` whose capacity is its length).
pub(super) fn give_indicators(indicators: Vec<Len>) {
    if indicators.len() == indicators.capacity() {
        give(&INDICATORS, indicators.into_boxed_slice());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_buffer_serves_the_next_of_its_size_and_the_bin_stays_bounded() {
        let bin: Mutex<Bin<u64>> = Mutex::new(Bin::new());
        let words = MIN_BYTES / 8;
        let first = vec![7u64; words].into_boxed_slice();
        let ptr = first.as_ptr();
        give(&bin, first);
        assert!(take(&bin, words + 1).is_none(), "only the same size");
        let again = take(&bin, words).expect("kept");
        assert_eq!(again.as_ptr(), ptr);
        assert!(take(&bin, words).is_none(), "handed out once");
        // Small buffers are left to the allocator.
        give(&bin, vec![0u64; 4].into_boxed_slice());
        assert_eq!(bin.lock().unwrap().idle.len(), 0);
        // Oldest evicted first, never above the bound.
        let big = MAX_IDLE_BYTES / 8 / 3;
        for fill in 0..5u64 {
            give(&bin, vec![fill; big].into_boxed_slice());
            assert!(bin.lock().unwrap().bytes <= MAX_IDLE_BYTES);
        }
        let b = bin.lock().unwrap();
        assert_eq!(b.idle.iter().map(|x| x[0]).collect::<Vec<_>>(), [2, 3, 4]);
        assert_eq!(b.bytes, 3 * big * 8);
    }
}
