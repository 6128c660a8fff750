//! The row source of one result set: the bound row array, its growth, the pair of row arrays
//! that lets one be served while the driver fills the other on another thread, the read
//! position, and an error that arrived after rows of the same array. Every consumer (tuples
//! for every fetch shape, Arrow batches, lazy rows) takes rows from here through one step,
//! [`RowStream::next`] (`stream.rs`): [`RowSet::fill`] talks to the driver (the consumer's
//! [`DriverWait`] releases the GIL around it) only when the buffered rows are used up, and
//! [`RowSet::serve`] hands out buffered rows without any driver call.
//!
//! Batches are shared (`Arc`): a consumer may keep the batch its rows were served from (lazy
//! rows decode their cells later, from the buffers). Such a *pinned* batch is never written
//! again: where the row set would refill it (the bound batch, or the spare it binds for a
//! prefetch), it takes a fresh buffer instead and leaves the pinned one to its rows
//! ([`crate::counters::PINNED_BATCHES`] counts this).

mod source;
mod stream;
#[cfg(test)]
mod tests;

pub use source::BlockSource;
pub use stream::{DriverWait, InLine, Refill, RowStream};

use crate::batch::{Batch, FIRST_BATCH_ROWS, Fetched, grown};
use crate::counters;
use crate::error::{Error, Result};
use crate::odbc::Diagnostic;
use crate::plan::ResultPlan;
use crate::prefetch::Prefetcher;
use std::ops::Range;
use std::sync::Arc;

/// Background prefetch starts once a row array of this many cells (rows × columns) came back
/// full: smaller results end before a worker thread (started once per execute) and a second
/// row array pay for themselves (three 1,000-row result sets of 2 columns took 1.3-1.5x as
/// long prefetching from 256-row arrays). Counted in cells because the driver's work grows with
/// the cells of a row array, not its rows (callgrind, Driver 18: 100,000 rows of 1 int column
/// cost ~100 M instructions, of all 8 mixed columns ~620 M): 32 columns reach it at 256 rows.
/// On this project's 2-core machine the overlap pays for tuples (a 10,000 x 32 fetchall 29.7
/// -> 25.2 ms) but not for Arrow, whose consumer turns it off ([`RowSet::without_prefetch`]).
pub const PREFETCH_MIN_CELLS: usize = 8192;

/// Rows handed out by [`RowSet::serve`]: batch rows `rows` of `batch`, whose row 0 is row `base`
/// of the result set (error messages name that row).
pub struct Served<'a> {
    /// Shared so that a consumer may keep it (pin it) past the next fetch.
    pub batch: &'a Arc<Batch>,
    pub rows: Range<usize>,
    pub base: u64,
}

#[derive(Default)]
pub struct RowSet {
    /// The current result set's plan (`None` between result sets or when it has no columns).
    plan: Option<Arc<ResultPlan>>,
    /// The bound row array, and the plan its buffers were laid out for (which may outlive
    /// `plan` across executes: the same query executed again binds nothing).
    batch: Option<Arc<Batch>>,
    batch_plan: Option<Arc<ResultPlan>>,
    /// A layout for the rest of the result set, installed before the next block fetch: a
    /// column held more than its declared size in many cells (`reread::relayout`).
    relayout: Option<Arc<ResultPlan>>,
    /// Rows `pos..len` of the batch served from are fetched but not yet handed out.
    pos: usize,
    len: usize,
    /// The driver said (SQL_NO_DATA, an error, or a cancel) that the result set is over.
    exhausted: bool,
    /// A full row array came back: the next fetch uses a larger one.
    grow_next: bool,
    /// The row array served while the source fills the bound one on another thread: the array
    /// fetched just before, unbound (see [`RowSet::start_prefetch`]). Once its rows are handed
    /// out it is the spare the next prefetch binds.
    shadow: Option<Arc<Batch>>,
    serving_shadow: bool,
    /// The thread fetching row arrays into the bound buffers. While a fetch runs, nothing
    /// touches the source or `batch` (every method that would waits for it first).
    prefetcher: Option<Prefetcher>,
    /// The row array the source put in the bound buffers while the shadow was being served.
    next: Option<Fetched>,
    /// Result-set position of the served batch's row 0.
    batch_base: u64,
    /// An error that arrived after rows of the same row array: raised once those are served.
    deferred: Option<Error>,
    /// Rows handed out from the current result set (for error messages and `rownumber`).
    rows_served: u64,
    /// The consumer of the current result set asked for no fetching ahead.
    no_prefetch: bool,
}

impl RowSet {
    pub fn plan(&self) -> Option<&Arc<ResultPlan>> {
        self.plan.as_ref()
    }

    /// The batch rows are currently served from (the shadow while a prefetch is pending).
    pub fn batch(&self) -> Option<&Batch> {
        self.served_batch().map(|b| &**b)
    }

    fn served_batch(&self) -> Option<&Arc<Batch>> {
        if self.serving_shadow {
            self.shadow.as_ref()
        } else {
            self.batch.as_ref()
        }
    }

    pub fn batch_base(&self) -> u64 {
        self.batch_base
    }

    pub fn rows_served(&self) -> u64 {
        self.rows_served
    }

    /// Whether serving another row needs a driver call ([`Self::fill`]).
    #[inline]
    pub fn needs_fetch(&self) -> bool {
        self.pos == self.len && (!self.exhausted || self.deferred.is_some() || self.serving_shadow)
    }

    /// Rows fetched and not yet handed out.
    #[inline]
    pub fn buffered(&self) -> usize {
        self.len - self.pos
    }

    /// The driver said the result set is over, and no error waits to be raised.
    pub fn is_over(&self) -> bool {
        self.exhausted && self.deferred.is_none() && !self.serving_shadow
    }

    /// Fetch the rest of the current result set in line, never ahead on the prefetch thread
    /// (a fetch already under way still completes). For consumers whose own work per row array
    /// is a small share of the driver's: there the overlap saves less than running the driver
    /// on a second thread costs. Measured for Arrow on this project's 2-core machine (Driver 18,
    /// the TDS peer on the same machine), medians of fresh processes, prefetching -> in line:
    /// the first read of a process, 10,000 x 32 columns 30.7 -> 23.4 ms, 100,000 mixed rows
    /// 55.2 -> 53.3 ms, 1.2 M narrow rows 213.7 -> 216.1 ms; reads after it 19.4 -> 19.2,
    /// 47.0 -> 50.3 (the one case the overlap won), 206.5 -> 201.1 ms. With another job on the
    /// second core the overlap lost every time (60 reads of the 32 columns: 26.4 -> 21.7 ms a
    /// read; perf: ~28% more driver CPU time on the prefetch thread; not the rebinding, which
    /// before every in-line fetch took 20.6 ms). Undone by the next result set.
    pub fn without_prefetch(&mut self) {
        self.no_prefetch = true;
    }

    /// An error found after the end of the rows (FreeTDS's link check): raised once the
    /// buffered rows are served.
    pub fn defer(&mut self, err: Error) {
        self.deferred = Some(err);
    }

    /// Start serving a new result set described by `plan`: keep the bound buffers when their
    /// layout matches, else allocate and bind new ones, starting small.
    pub fn open(&mut self, src: &mut impl BlockSource, plan: Arc<ResultPlan>) -> Result<()> {
        self.leave(src);
        let reuse = self.batch.is_some()
            && self
                .batch_plan
                .as_ref()
                .is_some_and(|old| old.same_buffers(&plan));
        if reuse {
            let capacity = self.batch.as_ref().map_or(1, |b| b.capacity());
            src.set_row_array_size(capacity)?;
            self.grow_next = false;
        } else {
            self.rebind(src, &plan, FIRST_BATCH_ROWS)?;
        }
        self.plan = Some(plan);
        self.exhausted = false;
        Ok(())
    }

    /// Forget the current result set (nextset): the prefetch worker is kept for the next one.
    pub fn leave(&mut self, src: &mut impl BlockSource) {
        self.join(src);
        self.deferred = None;
        self.relayout = None;
        self.serving_shadow = false;
        self.next = None;
        self.plan = None;
        self.pos = 0;
        self.len = 0;
        self.exhausted = true;
        self.rows_served = 0;
        self.batch_base = 0;
        self.no_prefetch = false;
    }

    /// Forget the current result set and end the prefetch worker (a new execute, or close).
    ///
    /// Also puts the row array size back to 1: Microsoft's driver answers an execute with a
    /// server cursor (`sp_cursoropen`, a round trip per fetch) when the row array size is above
    /// 1 *at execute time*, and with the default (firehose) result set otherwise. The bound size
    /// is restored by [`Self::open`].
    pub fn reset(&mut self, src: &mut impl BlockSource) -> Result<()> {
        self.leave(src);
        self.prefetcher = None;
        if self
            .batch
            .as_ref()
            .is_some_and(|b| b.is_bound() && b.capacity() > 1)
        {
            src.set_row_array_size(1)?;
        }
        Ok(())
    }

    fn rebind(
        &mut self,
        src: &mut impl BlockSource,
        plan: &Arc<ResultPlan>,
        capacity: usize,
    ) -> Result<()> {
        self.unbind_bound(src)?;
        self.batch = None;
        self.bind_batch(
            src,
            plan,
            Batch::new(plan, capacity.min(Batch::max_rows(plan))),
        )
    }

    /// The statement lets go of the bound batch (also when rows still pin it: from here on the
    /// driver holds no pointer into it). On an error the batch stays where it is: the driver
    /// may still write into it.
    fn unbind_bound(&mut self, src: &mut impl BlockSource) -> Result<()> {
        match &self.batch {
            Some(old) => src.unbind(old),
            None => Ok(()),
        }
    }

    /// Bind `batch` (the previous one was unbound and taken) as the row array the next fetches
    /// fill.
    fn bind_batch(
        &mut self,
        src: &mut impl BlockSource,
        plan: &Arc<ResultPlan>,
        mut batch: Batch,
    ) -> Result<()> {
        // SAFETY: the batch is stored in `self.batch` and only dropped after `unbind`, or after
        // the source (which the owner frees first) is gone; its buffers are heap allocations
        // that do not move with the `Batch` value.
        unsafe { src.bind(&mut batch, plan)? };
        self.batch = Some(Arc::new(batch));
        self.batch_plan = Some(plan.clone());
        self.grow_next = false;
        Ok(())
    }

    /// Make sure the bound batch can be written: one that served rows still pinning it is left
    /// to them, and a fresh batch of the same layout and capacity is bound in its place.
    fn unpin_bound(&mut self, src: &mut impl BlockSource) -> Result<()> {
        let pinned = self
            .batch
            .as_ref()
            .is_some_and(|b| Arc::strong_count(b) > 1);
        if pinned && let Some(plan) = self.batch_plan.clone() {
            counters::bump(&counters::PINNED_BATCHES);
            let capacity = self
                .batch
                .as_ref()
                .map_or(FIRST_BATCH_ROWS, |b| b.capacity());
            let grow = self.grow_next;
            self.rebind(src, &plan, capacity)?;
            self.grow_next = grow;
        }
        Ok(())
    }

    /// The bound batch, for the source to write into: only when no served rows pin it.
    fn bound_mut(batch: &mut Option<Arc<Batch>>) -> Option<&mut Batch> {
        batch.as_mut().and_then(Arc::get_mut)
    }

    /// Refill from the source (only call when [`Self::needs_fetch`]): the rows now available,
    /// 0 at the end of the result set. Warnings of the fetch go to `messages`.
    pub fn fill(
        &mut self,
        src: &mut impl BlockSource,
        messages: &mut Vec<Diagnostic>,
    ) -> Result<usize> {
        self.join(src);
        if let Some(err) = self.deferred.take() {
            return Err(err);
        }
        if !self.needs_fetch() {
            // Nothing to fetch (the end, or rows still buffered): never a driver call.
            return Ok(self.buffered());
        }
        if src.cancel_requested() {
            // A cooperative cancel (or one that arrived between driver calls): stop here, in
            // the thread that owns the statement, and discard the rest of the result.
            self.exhausted = true;
            self.serving_shadow = false;
            self.next = None;
            self.len = self.pos;
            let _ = src.close_cursor();
            return Err(Error::Cancelled {
                records: Vec::new(),
            });
        }
        let Some(mut plan) = self.plan.clone() else {
            self.exhausted = true;
            return Ok(0);
        };
        self.batch_base = self.rows_served;
        if self.serving_shadow {
            // The next row array is already in the bound buffers: switch to it.
            self.serving_shadow = false;
            if let Some(fetched) = self.next.take() {
                let batch = Self::bound_mut(&mut self.batch)
                    .expect("a prefetch runs on the bound batch, which served no rows since");
                let fetched = src.complete_ahead(batch, &plan, fetched, self.batch_base);
                return self.accept_and_prefetch(src, fetched, &plan, messages);
            }
        }
        let bound_capacity = self
            .batch
            .as_ref()
            .map_or(FIRST_BATCH_ROWS, |b| b.capacity());
        if let Some(relaid) = self.relayout.take() {
            // Every row of the bound buffers has been served: lay them out for what the column
            // really holds (the decoders do not change: same kinds of value).
            let capacity = if self.grow_next {
                grown(bound_capacity)
            } else {
                bound_capacity
            };
            self.plan = Some(relaid.clone());
            plan = relaid;
            self.rebind(src, &plan, capacity)?;
        } else if self.grow_next {
            self.rebind(src, &plan, grown(bound_capacity))?;
        } else if self.batch.is_none() {
            // A prefetch failed to bind its spare (its error was raised): bind afresh.
            self.rebind(src, &plan, FIRST_BATCH_ROWS)?;
        } else {
            self.unpin_bound(src)?;
        }
        let batch = Self::bound_mut(&mut self.batch)
            .expect("a planned result set has a bound batch no rows pin");
        let fetched = src.fetch(batch, &plan, self.batch_base);
        self.accept_and_prefetch(src, fetched, &plan, messages)
    }

    /// Hand out up to `n` buffered rows (no driver call).
    #[inline]
    pub fn serve(&mut self, n: usize) -> Served<'_> {
        let rows = self.take(n);
        Served {
            batch: self
                .served_batch()
                .expect("rows are served from a planned result set"),
            rows,
            base: self.batch_base,
        }
    }

    /// Hand out up to `n` buffered rows: the batch row range `start..end`.
    #[inline]
    pub fn take(&mut self, n: usize) -> Range<usize> {
        let start = self.pos;
        let end = start + n.min(self.len - self.pos);
        self.pos = end;
        self.rows_served += (end - start) as u64;
        start..end
    }

    /// Move the read position back to batch row `row` (at or before the current position):
    /// rows taken after a row that failed to decode are handed out again by the next fetch.
    pub fn rewind_to(&mut self, row: usize) {
        if row < self.pos {
            self.rows_served -= (self.pos - row) as u64;
            self.pos = row;
        }
    }

    /// [`Self::accept`], then, if the array was full, start fetching the next one on another
    /// thread while the caller decodes this one (every fetch shape gains: fetchall, fetchmany,
    /// fetchone). Returns the rows available.
    fn accept_and_prefetch(
        &mut self,
        src: &mut impl BlockSource,
        fetched: Fetched,
        plan: &Arc<ResultPlan>,
        messages: &mut Vec<Diagnostic>,
    ) -> Result<usize> {
        let available = self.accept(fetched, plan, messages)?;
        let capacity = self.batch.as_ref().map_or(0, |b| b.capacity());
        if available == capacity
            && capacity * plan.columns.len().max(4) >= PREFETCH_MIN_CELLS
            && self.can_prefetch()
        {
            self.start_prefetch(src)?;
        }
        Ok(available)
    }

    /// Take in a row array the source produced: rows to serve, an error after them, warnings.
    fn accept(
        &mut self,
        fetched: Fetched,
        plan: &ResultPlan,
        messages: &mut Vec<Diagnostic>,
    ) -> Result<usize> {
        let capacity = self.batch.as_ref().map_or(0, |b| b.capacity());
        messages.extend(fetched.warnings);
        self.pos = 0;
        self.len = fetched.rows;
        if let Some(err) = fetched.error {
            // The rows before the failure are served first; the error comes right after them.
            self.exhausted = true;
            if self.len == 0 {
                return Err(err);
            }
            self.deferred = Some(err);
        } else if fetched.rows == 0
            || (fetched.rows < capacity && plan.backend.ends_on_short_array())
        {
            self.exhausted = true;
        } else if plan.rereads
            && let Some(relaid) = self
                .batch
                .as_ref()
                .and_then(|b| crate::reread::relayout(plan, b, fetched.rows))
        {
            self.relayout = Some(Arc::new(relaid));
        } else if fetched.rows == capacity && capacity < Batch::max_rows(plan) {
            // A partial row array is *not* taken as the end: Driver 18 returns the rows before
            // a mid-stream error as a short, successful array and reports the error only on
            // the next SQLFetch (seen against the TDS peer's error_after fault). Stopping early
            // would silently drop the error and every row after it.
            self.grow_next = true;
        }
        Ok(self.len - self.pos)
    }

    /// Whether the next row array can be fetched on another thread while the buffered rows are
    /// decoded: only bound-only plans (streamed columns need SQLGetData per row), only when the
    /// bound buffers hold the rows being served, and not past the end or a pending error.
    fn can_prefetch(&self) -> bool {
        !self.no_prefetch
            && self.plan.as_ref().is_some_and(|p| !p.has_streamed())
            && self.relayout.is_none()
            && !self.serving_shadow
            && !self.prefetcher.as_ref().is_some_and(Prefetcher::busy)
            && !self.exhausted
            && self.deferred.is_none()
            && self.pos < self.len
    }

    /// Serve the rows just fetched from the batch they were fetched into, and let another
    /// thread fetch the next row array into the other batch of the pair, bound in its place:
    /// double buffering by rebinding, so no row is copied. The other batch is the one served
    /// before (all its rows handed out), unless rows pin it or the array grows: then a fresh
    /// one. Rebinding costs a `SQLBindCol` per column per row array; the copy it replaced was
    /// every fetched byte (callgrind: ~31 M of 723 M instructions for 100,000 mixed rows as
    /// Arrow, even copying text cells by their indicators).
    fn start_prefetch(&mut self, src: &mut impl BlockSource) -> Result<()> {
        let plan = self.plan.clone().expect("can_prefetch checked the plan");
        let bound_capacity = self
            .batch
            .as_ref()
            .map_or(FIRST_BATCH_ROWS, |b| b.capacity());
        let capacity = if self.grow_next {
            grown(bound_capacity).min(Batch::max_rows(&plan))
        } else {
            bound_capacity
        };
        let spare = match self.shadow.take().map(Arc::try_unwrap) {
            Some(Ok(spare))
                if spare.capacity() == capacity
                    && spare
                        .columns
                        .iter()
                        .map(|c| c.kind)
                        .eq(plan.columns.iter().map(|c| c.kind)) =>
            {
                spare
            }
            Some(Err(_pinned)) => {
                // Rows still hold the last array served: it is theirs now.
                counters::bump(&counters::PINNED_BATCHES);
                Batch::new(&plan, capacity)
            }
            _ => Batch::new(&plan, capacity),
        };
        self.unbind_bound(src)?;
        self.shadow = self.batch.take();
        self.serving_shadow = true;
        self.bind_batch(src, &plan, spare)?;
        if self.prefetcher.is_none() {
            // No thread to be had: the shadow is served, then the next fill fetches in line.
            self.prefetcher = Prefetcher::start().ok();
        }
        let Some(prefetcher) = self.prefetcher.as_mut() else {
            return Ok(());
        };
        // The bound batch was just bound, and nothing was served from it: nothing pins it.
        let Some(batch) = self.batch.as_mut().and_then(Arc::get_mut) else {
            self.next = None;
            return Ok(());
        };
        // SAFETY: until `join` has waited for this job, nothing touches the source or `batch`:
        // every method that would calls `join` first (the owner's `Drop` included), and the rows
        // being served come from the shadow, an unbound batch. The bound buffers are heap
        // allocations owned by `batch`, which is neither rebound nor dropped before that wait.
        let job = unsafe { src.fetch_ahead(batch) };
        if job.is_some_and(|job| prefetcher.submit(job)) {
            counters::bump(&counters::PREFETCHES);
        } else {
            self.next = None;
        }
        Ok(())
    }

    /// Wait for the running prefetch (if any) and keep the row array it fetched for the next
    /// fill. The owner calls this before freeing the source (the driver writes into `batch`).
    pub fn join(&mut self, src: &mut impl BlockSource) {
        let Some(result) = self.prefetcher.as_mut().and_then(Prefetcher::wait) else {
            return;
        };
        let batch = self
            .batch
            .as_mut()
            .and_then(Arc::get_mut)
            .expect("a prefetch runs on the bound batch, which serves no rows meanwhile");
        self.next = Some(match result {
            Ok(result) => src.finish_ahead(batch, result),
            Err(()) => Fetched::failed(Error::Internal("the prefetch thread panicked".into())),
        });
    }
}
