//! Where row arrays come from. [`RowSet`](super::RowSet) asks a [`BlockSource`] to bind its
//! buffers, fill them and fill them ahead on another thread; the statement handle is the real
//! source, and the tests use a fake one, so the row set's bookkeeping (positions, growth,
//! prefetch hand-off, deferred errors) is tested without a database.

use crate::batch::{Batch, Fetched};
use crate::error::Result;
use crate::odbc::Stmt;
use crate::plan::ResultPlan;
use crate::prefetch::{FetchJob, FetchResult};

pub trait BlockSource {
    /// Make `batch` the row array the next fetches write into.
    ///
    /// # Safety
    /// The batch must not move its buffers, and must be unbound (or the source freed or given
    /// other bindings) before it is dropped.
    unsafe fn bind(&mut self, batch: &mut Batch, plan: &ResultPlan) -> Result<()>;

    /// The statement lets go of `batch`'s buffers (rows may still read them afterwards).
    fn unbind(&mut self, batch: &Batch) -> Result<()>;

    /// The row array size the next fetch uses (the bound batch's capacity, or 1 between results).
    fn set_row_array_size(&mut self, rows: usize) -> Result<()>;

    /// Fetch the next row array into the bound `batch`, whole: `base` is the result-set position
    /// of its first row.
    fn fetch(&mut self, batch: &mut Batch, plan: &ResultPlan, base: u64) -> Fetched;

    /// A job that fetches the next row array into the bound `batch` on another thread, or
    /// `None` when this source cannot (the caller then fetches in line).
    ///
    /// # Safety
    /// Until the job has run to its end, nothing may touch the source or `batch`.
    unsafe fn fetch_ahead(&mut self, batch: &mut Batch) -> Option<FetchJob>;

    /// Read what a job left in the bound `batch` (its rows, an error after them, warnings).
    fn finish_ahead(&mut self, batch: &mut Batch, result: FetchResult) -> Fetched;

    /// Make a fetched-ahead row array whole once it is about to be served (the cursor is still
    /// on it): `base` is the result-set position of its first row.
    fn complete_ahead(
        &mut self,
        batch: &mut Batch,
        plan: &ResultPlan,
        fetched: Fetched,
        base: u64,
    ) -> Fetched;

    /// A cancel was asked for and the source stops between fetches (cooperative cancel).
    fn cancel_requested(&self) -> bool;

    /// Discard the rest of the result.
    fn close_cursor(&mut self) -> Result<()>;
}

impl BlockSource for Stmt {
    unsafe fn bind(&mut self, batch: &mut Batch, plan: &ResultPlan) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { batch.bind(self, plan) }
    }

    fn unbind(&mut self, batch: &Batch) -> Result<()> {
        batch.unbind(self)
    }

    fn set_row_array_size(&mut self, rows: usize) -> Result<()> {
        Stmt::set_row_array_size(self, rows)
    }

    fn fetch(&mut self, batch: &mut Batch, plan: &ResultPlan, base: u64) -> Fetched {
        let fetched = batch.fetch_bound(self);
        // Bound cells first (cut ones read again whole): streamed columns come after every
        // bound one.
        let fetched = crate::reread::complete(batch, self, plan, fetched, base);
        batch.read_streamed_columns(self, plan, fetched, base)
    }

    unsafe fn fetch_ahead(&mut self, batch: &mut Batch) -> Option<FetchJob> {
        batch.begin_fetch();
        // SAFETY: forwarded contract: nothing touches the handle or the bound buffers (which the
        // driver writes through) until the job has run.
        let lease = unsafe { self.lend_for_fetch() };
        Some(Box::new(move || lease.fetch()))
    }

    fn finish_ahead(&mut self, batch: &mut Batch, result: FetchResult) -> Fetched {
        match result {
            Some((outcome, records)) => batch.finish_fetch(outcome, records),
            None => Fetched::failed(crate::Error::Cancelled {
                records: Vec::new(),
            }),
        }
    }

    fn complete_ahead(
        &mut self,
        batch: &mut Batch,
        plan: &ResultPlan,
        fetched: Fetched,
        base: u64,
    ) -> Fetched {
        // Cut cells are read again on the thread that owns the statement (see reread.rs).
        crate::reread::complete(batch, self, plan, fetched, base)
    }

    fn cancel_requested(&self) -> bool {
        Stmt::cancel_requested(self)
    }

    fn close_cursor(&mut self) -> Result<()> {
        Stmt::close_cursor(self)
    }
}
