//! The row set over a fake block source: positions, growth, prefetch hand-off, deferred errors
//! and cancel, with no database. The fake serves one INTEGER column holding 0, 1, 2, ...

#![allow(
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    clippy::cast_possible_truncation,
    reason = "test fixtures: literal sizes and values far inside every type's range"
)]

use super::*;
use crate::backend::Dbms;
use crate::batch::MAX_BATCH_ROWS;
use crate::odbc::ColumnDescription;
use crate::odbc::Diagnostic;
use crate::odbc::Outcome;
use crate::prefetch::{FetchJob, FetchResult};

struct Fake {
    rows: usize,
    /// The result-set position of the next row the "driver" delivers.
    next: usize,
    /// An error arrives with the row array that reaches this position (rows before it first).
    error_at: Option<usize>,
    cancel: bool,
    capacity: usize,
    /// Each bind: the batch's capacity and where its buffers are.
    binds: Vec<(usize, usize)>,
    row_array_sizes: Vec<usize>,
    fetches: usize,
    ahead: usize,
    closed: bool,
}

impl Fake {
    /// The capacity of each batch bound, in order.
    fn bound_capacities(&self) -> Vec<usize> {
        self.binds.iter().map(|&(capacity, _)| capacity).collect()
    }

    fn new(rows: usize) -> Fake {
        Fake {
            rows,
            next: 0,
            error_at: None,
            cancel: false,
            capacity: 0,
            binds: Vec::new(),
            row_array_sizes: Vec::new(),
            fetches: 0,
            ahead: 0,
            closed: false,
        }
    }

    /// What the driver writes for one block fetch.
    fn deliver(&mut self, batch: &mut Batch) -> Fetched {
        assert!(batch.is_bound(), "fetch into an unbound batch");
        self.fetches += 1;
        let n = batch.capacity().min(self.rows - self.next);
        let good = match self.error_at {
            Some(e) if e < self.next + n => e - self.next,
            _ => n,
        };
        for r in 0..good {
            let v = (self.next + r) as i32;
            batch.columns[0].put_cell(r, &v.to_ne_bytes(), 4);
        }
        self.next += good;
        Fetched {
            rows: good,
            error: (good < n).then(|| Error::Data(format!("error at row {}", self.next))),
            warnings: Vec::new(),
        }
    }
}

impl BlockSource for Fake {
    unsafe fn bind(&mut self, batch: &mut Batch, _plan: &ResultPlan) -> Result<()> {
        batch.set_bound(true);
        self.capacity = batch.capacity();
        self.binds.push((batch.capacity(), batch.buffers_at()));
        Ok(())
    }

    fn unbind(&mut self, batch: &Batch) -> Result<()> {
        batch.set_bound(false);
        Ok(())
    }

    fn set_row_array_size(&mut self, rows: usize) -> Result<()> {
        self.row_array_sizes.push(rows);
        Ok(())
    }

    fn fetch(&mut self, batch: &mut Batch, _plan: &ResultPlan, base: u64) -> Fetched {
        assert_eq!(
            base, self.next as u64,
            "served rows and fetched rows disagree"
        );
        self.deliver(batch)
    }

    unsafe fn fetch_ahead(&mut self, _batch: &mut Batch) -> Option<FetchJob> {
        self.ahead += 1;
        Some(Box::new(|| Some((Outcome::Success, Vec::new()))))
    }

    fn finish_ahead(&mut self, batch: &mut Batch, result: FetchResult) -> Fetched {
        assert!(result.is_some());
        self.deliver(batch)
    }

    fn complete_ahead(
        &mut self,
        _batch: &mut Batch,
        _plan: &ResultPlan,
        fetched: Fetched,
        base: u64,
    ) -> Fetched {
        assert_eq!(base + fetched.rows as u64, self.next as u64);
        fetched
    }

    fn cancel_requested(&self) -> bool {
        self.cancel
    }

    fn close_cursor(&mut self) -> Result<()> {
        self.closed = true;
        Ok(())
    }
}

fn int_plan() -> Arc<ResultPlan> {
    let desc = ColumnDescription {
        name: "n".into(),
        sql_type: 4,
        size: 10,
        decimal_digits: 0,
        nullable: Some(true),
        unsigned: false,
    };
    Arc::new(ResultPlan::build(vec![desc], Dbms::Other))
}

/// A row set with the fake source, as what a row stream reads (the statement adds its own
/// checks to the refill).
struct Direct<'a> {
    rs: &'a mut RowSet,
    src: &'a mut Fake,
    messages: Vec<Diagnostic>,
}

impl Refill for Direct<'_> {
    fn row_set(&self) -> &RowSet {
        self.rs
    }

    fn row_set_mut(&mut self) -> &mut RowSet {
        self.rs
    }

    fn refill(&mut self) -> Result<usize> {
        self.rs.fill(self.src, &mut self.messages)
    }
}

fn direct<'a>(rs: &'a mut RowSet, src: &'a mut Fake) -> Direct<'a> {
    Direct {
        rs,
        src,
        messages: Vec::new(),
    }
}

/// Every value served, `chunk` rows at a time, and the result-set positions `serve` reported.
fn drain(rs: &mut RowSet, src: &mut Fake, chunk: usize) -> Result<Vec<i32>> {
    let mut out = Vec::new();
    let mut source = direct(rs, src);
    let mut rows = RowStream::new(&mut source);
    while let Some(served) = rows.next(chunk, &InLine)? {
        for row in served.rows.clone() {
            assert_eq!(served.base + row as u64, out.len() as u64);
            out.push(served.batch.columns[0].i32(row));
        }
    }
    Ok(out)
}

#[test]
fn every_row_once_in_order_across_growth_and_prefetch() {
    let plan = int_plan();
    for chunk in [1, 7, 1000, usize::MAX] {
        let mut src = Fake::new(30_000);
        let mut rs = RowSet::default();
        rs.open(&mut src, plan.clone()).unwrap();
        let got = drain(&mut rs, &mut src, chunk).unwrap();
        assert_eq!(got, (0..30_000).collect::<Vec<i32>>(), "chunk {chunk}");
        assert_eq!(rs.rows_served(), 30_000);
        // 32, then x8 to 2,048, then x2 to the budget's cap.
        let cap = Batch::max_rows(&plan).min(MAX_BATCH_ROWS);
        assert_eq!(src.bound_capacities()[..4], [32, 256, 2048, 4096]);
        assert_eq!(*src.bound_capacities().last().unwrap(), cap);
        // Full arrays of 2,048 rows or more were followed by fetches ahead on the worker.
        assert!(src.ahead >= 3, "chunk {chunk}: {} fetches ahead", src.ahead);
        assert!(!rs.needs_fetch());
    }
}

#[test]
fn a_consumer_that_declines_prefetch_gets_every_row_in_line_until_the_next_result() {
    let plan = int_plan();
    let mut src = Fake::new(30_000);
    let mut rs = RowSet::default();
    rs.open(&mut src, plan.clone()).unwrap();
    rs.without_prefetch();
    assert_eq!(
        drain(&mut rs, &mut src, 1000).unwrap(),
        (0..30_000).collect::<Vec<i32>>()
    );
    assert_eq!(src.ahead, 0, "nothing fetched ahead");
    // The choice was for that result set: the next one (same plan) prefetches again.
    let mut src = Fake::new(30_000);
    rs.open(&mut src, plan.clone()).unwrap();
    assert_eq!(drain(&mut rs, &mut src, 1000).unwrap().len(), 30_000);
    assert!(src.ahead >= 1, "{} fetches ahead", src.ahead);
}

#[test]
fn prefetching_alternates_two_batches_once_the_array_stops_growing() {
    // The driver fills one batch while the other is served; the served one, all its rows handed
    // out, is bound for the next fetch ahead: no copy, and no fresh buffer per row array.
    let plan = int_plan();
    let mut src = Fake::new(200_000);
    let mut rs = RowSet::default();
    rs.open(&mut src, plan.clone()).unwrap();
    let got = drain(&mut rs, &mut src, 1000).unwrap();
    assert_eq!(got, (0..200_000).collect::<Vec<i32>>());
    let cap = Batch::max_rows(&plan).min(MAX_BATCH_ROWS);
    let full: Vec<usize> = src
        .binds
        .iter()
        .filter(|(c, _)| *c == cap)
        .map(|&(_, at)| at)
        .collect();
    assert!(full.len() >= 10, "{} binds at {cap} rows", full.len());
    let mut distinct = full.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), 2, "{full:x?}");
    assert!(full.windows(2).all(|w| w[0] != w[1]), "{full:x?}");
}

#[test]
fn rows_before_a_mid_stream_error_come_first_then_the_error_once() {
    let plan = int_plan();
    for error_at in [0, 5, 31, 32, 300, 5000] {
        let mut src = Fake::new(10_000);
        src.error_at = Some(error_at);
        let mut rs = RowSet::default();
        rs.open(&mut src, plan.clone()).unwrap();
        let err = match drain(&mut rs, &mut src, 3) {
            Ok(rows) => panic!("no error after {} rows", rows.len()),
            Err(e) => e,
        };
        assert_eq!(rs.rows_served(), error_at as u64, "error_at {error_at}");
        assert!(matches!(err, Error::Data(m) if m == format!("error at row {error_at}")));
        // The error is raised once; afterwards the result set is simply over.
        assert!(!rs.needs_fetch());
        assert_eq!(rs.fill(&mut src, &mut Vec::new()).unwrap(), 0);
    }
}

#[test]
fn a_cancel_between_fetches_ends_the_result_and_closes_the_cursor() {
    let mut src = Fake::new(1000);
    let mut rs = RowSet::default();
    rs.open(&mut src, int_plan()).unwrap();
    assert_eq!(rs.fill(&mut src, &mut Vec::new()).unwrap(), 32);
    assert_eq!(rs.serve(40).rows, 0..32);
    src.cancel = true;
    let err = rs.fill(&mut src, &mut Vec::new()).unwrap_err();
    assert!(matches!(err, Error::Cancelled { .. }));
    assert!(src.closed && !rs.needs_fetch());
}

#[test]
fn the_same_plan_again_binds_nothing_and_reset_restores_one_row_arrays() {
    let plan = int_plan();
    let mut src = Fake::new(100);
    let mut rs = RowSet::default();
    rs.open(&mut src, plan.clone()).unwrap();
    drain(&mut rs, &mut src, 10).unwrap();
    let binds = src.binds.len();
    rs.reset(&mut src).unwrap();
    assert_eq!(
        src.row_array_sizes.last(),
        Some(&1),
        "row array size 1 at execute time"
    );
    src.next = 0;
    rs.open(&mut src, plan).unwrap();
    assert_eq!(
        src.binds.len(),
        binds,
        "re-executing the query binds nothing"
    );
    assert_eq!(src.row_array_sizes.last(), Some(&src.capacity));
    assert_eq!(
        drain(&mut rs, &mut src, 10).unwrap(),
        (0..100).collect::<Vec<i32>>()
    );
}

#[test]
fn rewind_hands_rows_out_again() {
    let mut src = Fake::new(10);
    let mut rs = RowSet::default();
    rs.open(&mut src, int_plan()).unwrap();
    rs.fill(&mut src, &mut Vec::new()).unwrap();
    assert_eq!(rs.serve(6).rows, 0..6);
    rs.rewind_to(4);
    assert_eq!(rs.rows_served(), 4);
    assert_eq!(rs.serve(100).rows, 4..10);
    assert_eq!(rs.rows_served(), 10);
}

#[test]
fn skip_discards_rows_across_refills_and_stops_at_the_end() {
    let mut src = Fake::new(3000);
    let mut rs = RowSet::default();
    rs.open(&mut src, int_plan()).unwrap();
    let mut source = direct(&mut rs, &mut src);
    let mut rows = RowStream::new(&mut source);
    assert_eq!(rows.skip(1000, &InLine).unwrap(), 1000);
    let served = rows.next(1, &InLine).unwrap().expect("row 1000");
    assert_eq!(served.base + served.rows.start as u64, 1000);
    assert_eq!(rows.skip(usize::MAX, &InLine).unwrap(), 1999);
    assert!(rows.next(1, &InLine).unwrap().is_none());
}

#[test]
fn leaving_a_result_set_mid_prefetch_waits_for_the_worker() {
    let plan = int_plan();
    let mut src = Fake::new(100_000);
    let mut rs = RowSet::default();
    rs.open(&mut src, plan.clone()).unwrap();
    // Up to the first 2,048-row array: its rows are served from the shadow while the next
    // array is fetched ahead.
    let mut messages = Vec::new();
    while src.ahead == 0 {
        rs.fill(&mut src, &mut messages).unwrap();
        let n = rs.buffered();
        rs.serve(n);
    }
    assert!(rs.needs_fetch());
    rs.leave(&mut src);
    assert!(rs.plan().is_none() && !rs.needs_fetch() && rs.rows_served() == 0);
    // The next result set starts clean on the same worker.
    src.next = 0;
    rs.open(&mut src, plan).unwrap();
    assert_eq!(drain(&mut rs, &mut src, 500).unwrap().len(), 100_000);
}

/// Every row served, `chunk` at a time, each kept with the batch it was served from (as lazy
/// rows keep theirs), then checked after the whole result set was fetched.
fn drain_pinned(rs: &mut RowSet, src: &mut Fake, chunk: usize) -> usize {
    let mut kept: Vec<(Arc<Batch>, std::ops::Range<usize>, u64)> = Vec::new();
    let mut source = direct(rs, src);
    let mut rows = RowStream::new(&mut source);
    while let Some(served) = rows.next(chunk, &InLine).unwrap() {
        kept.push((served.batch.clone(), served.rows.clone(), served.base));
    }
    let mut checked = 0;
    for (batch, rows, base) in &kept {
        for r in rows.clone() {
            assert_eq!(
                batch.columns[0].i32(r) as u64,
                base + r as u64,
                "row refilled"
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn a_pinned_batch_is_never_refilled_a_fresh_one_takes_its_place() {
    let plan = int_plan();
    for chunk in [1, 7, 1000, usize::MAX] {
        let mut src = Fake::new(30_000);
        let mut rs = RowSet::default();
        rs.open(&mut src, plan.clone()).unwrap();
        assert_eq!(
            drain_pinned(&mut rs, &mut src, chunk),
            30_000,
            "chunk {chunk}"
        );
        assert!(
            src.ahead >= 3,
            "pinning keeps the prefetch: {} ahead",
            src.ahead
        );
    }
}

#[test]
fn unpinned_batches_are_refilled_in_place_pinned_ones_rebound() {
    let plan = int_plan();
    // 1,000 rows in 32-, 256- and 2,048-row arrays (no prefetch: the last one is short), then
    // the fetch that finds the end: unpinned, one bind per size.
    let mut src = Fake::new(1000);
    let mut rs = RowSet::default();
    rs.open(&mut src, plan.clone()).unwrap();
    drain(&mut rs, &mut src, 10).unwrap();
    assert_eq!(src.bound_capacities(), [32, 256, 2048]);
    // Pinned: a refill of the same size (the fetch that finds the end) binds a fresh batch.
    let mut src = Fake::new(1000);
    let mut rs = RowSet::default();
    rs.open(&mut src, plan).unwrap();
    assert_eq!(drain_pinned(&mut rs, &mut src, 10), 1000);
    assert_eq!(src.bound_capacities(), [32, 256, 2048, 2048]);
}
