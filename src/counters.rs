//! Process-wide counters that prove which path ran (tests and the profiler assert on them).
//!
//! Relaxed atomics: each is one uncontended `lock add` per driver call, negligible next to the
//! call itself, and never touched per cell.

use std::sync::atomic::{AtomicU64, Ordering};

/// `SQLFetch` calls (one per row array on the bound path, one per row on the LOB path).
pub static FETCH_CALLS: AtomicU64 = AtomicU64::new(0);
/// `SQLGetData` calls (LOB / unbounded columns only).
pub static GETDATA_CALLS: AtomicU64 = AtomicU64::new(0);
/// Fetch plans built (one per result set, never per batch).
pub static PLANS_BUILT: AtomicU64 = AtomicU64::new(0);
/// `SQLBindCol` calls.
pub static BINDS: AtomicU64 = AtomicU64::new(0);
/// Column buffers set up, fresh or taken from the recycle bin of dropped row arrays (a plan
/// hit on re-execute sets up none).
pub static BUFFER_ALLOCS: AtomicU64 = AtomicU64::new(0);
/// `SQLExecute` / `SQLExecDirect` calls.
pub static EXECUTES: AtomicU64 = AtomicU64::new(0);
/// `SQLDriverConnect` calls (a connection taken from the pool makes none).
pub static CONNECTS: AtomicU64 = AtomicU64::new(0);
/// Row arrays left to the rows that pin them (lazy rows): a fresh buffer took their place
/// instead of the row set refilling them.
pub static PINNED_BATCHES: AtomicU64 = AtomicU64::new(0);
/// Row arrays fetched on the prefetch thread while the rows of the one before were served.
pub static PREFETCHES: AtomicU64 = AtomicU64::new(0);
/// Round trips the pool made to check a parked session before handing it on (each is also one
/// of `EXECUTES`: a `SELECT 1`).
pub static POOL_CHECKS: AtomicU64 = AtomicU64::new(0);

/// Bulk loads through the driver's bcp API / through parameter arrays.
pub static BULK_BCP_LOADS: AtomicU64 = AtomicU64::new(0);
pub static BULK_ARRAY_LOADS: AtomicU64 = AtomicU64::new(0);

#[inline]
pub fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// Snapshot of every counter, by name.
pub fn snapshot() -> [(&'static str, u64); 12] {
    [
        ("fetch_calls", FETCH_CALLS.load(Ordering::Relaxed)),
        ("getdata_calls", GETDATA_CALLS.load(Ordering::Relaxed)),
        ("plans_built", PLANS_BUILT.load(Ordering::Relaxed)),
        ("binds", BINDS.load(Ordering::Relaxed)),
        ("buffer_allocs", BUFFER_ALLOCS.load(Ordering::Relaxed)),
        ("executes", EXECUTES.load(Ordering::Relaxed)),
        ("connects", CONNECTS.load(Ordering::Relaxed)),
        ("pinned_batches", PINNED_BATCHES.load(Ordering::Relaxed)),
        ("pool_checks", POOL_CHECKS.load(Ordering::Relaxed)),
        ("prefetches", PREFETCHES.load(Ordering::Relaxed)),
        ("bulk_bcp_loads", BULK_BCP_LOADS.load(Ordering::Relaxed)),
        ("bulk_array_loads", BULK_ARRAY_LOADS.load(Ordering::Relaxed)),
    ]
}

pub fn reset() {
    for c in [
        &FETCH_CALLS,
        &GETDATA_CALLS,
        &PLANS_BUILT,
        &BINDS,
        &BUFFER_ALLOCS,
        &EXECUTES,
        &CONNECTS,
        &PINNED_BATCHES,
        &POOL_CHECKS,
        &PREFETCHES,
        &BULK_BCP_LOADS,
        &BULK_ARRAY_LOADS,
    ] {
        c.store(0, Ordering::Relaxed);
    }
}
