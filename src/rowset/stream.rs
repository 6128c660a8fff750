//! The one row stream every consumer reads: [`RowStream::next`] refills the row set from its
//! source when its buffered rows are used up and serves up to `max` rows, `None` at the end of
//! the result set. Tuples of every fetch shape, `fetchval`, `skip`, lazy rows and Arrow batches
//! all take their rows through it, so the refill-and-serve step exists once.
//!
//! The stream borrows what owns the row set and refills it ([`Refill`]: the statement, which
//! adds its own end-of-result checks to [`RowSet::fill`]; one pointer, so handing the stream
//! to a consumer costs nothing per row) and runs each refill through the consumer's
//! [`DriverWait`]: the Python binding releases the GIL there, and only there, so a serve from
//! buffered rows costs no GIL hand-off.

use super::{RowSet, Served};
use crate::error::Result;
use crate::plan::ResultPlan;
use std::sync::Arc;

/// What owns a row set and refills it.
pub trait Refill: Send {
    fn row_set(&self) -> &RowSet;

    fn row_set_mut(&mut self) -> &mut RowSet;

    /// Refill the row set whose buffered rows are used up (only called when
    /// [`RowSet::needs_fetch`]): the rows now available, 0 at the end of the result set.
    fn refill(&mut self) -> Result<usize>;
}

/// How a consumer runs a call that may wait on the driver (a refill).
pub trait DriverWait {
    fn wait<T: Send>(&self, call: impl FnOnce() -> T + Send) -> T;
}

/// For consumers already off the GIL (or with none to release): the call runs as it is.
pub struct InLine;

impl DriverWait for InLine {
    #[inline]
    fn wait<T: Send>(&self, call: impl FnOnce() -> T + Send) -> T {
        call()
    }
}

/// The rows of the current result set, through what owns and refills them.
pub struct RowStream<'s, R> {
    source: &'s mut R,
}

impl<'s, R: Refill> RowStream<'s, R> {
    #[inline]
    pub fn new(source: &'s mut R) -> Self {
        RowStream { source }
    }

    /// Up to `max` rows, refilling from the source first (through `wait`) when every buffered
    /// row has been handed out; `None` at the end of the result set. When the last row array
    /// came back full, the row set is already fetching the next one on another thread, so the
    /// consumer's work on these rows overlaps with it.
    #[inline]
    pub fn next(&mut self, max: usize, wait: &impl DriverWait) -> Result<Option<Served<'_>>> {
        if self.source.row_set().needs_fetch() {
            let source = &mut *self.source;
            wait.wait(|| source.refill())?;
        }
        let rows = self.source.row_set_mut();
        if rows.buffered() == 0 {
            return Ok(None);
        }
        Ok(Some(rows.serve(max)))
    }

    /// Discard up to `n` rows without handing them out; the rows discarded.
    pub fn skip(&mut self, n: usize, wait: &impl DriverWait) -> Result<usize> {
        let mut skipped = 0;
        while skipped < n {
            let Some(served) = self.next(n - skipped, wait)? else {
                break;
            };
            skipped += served.rows.len();
        }
        Ok(skipped)
    }

    /// Whether the next [`Self::next`] refills from the source (a consumer lets go of what it
    /// kept of the served batch first, so the refill can reuse it).
    #[inline]
    pub fn needs_fetch(&self) -> bool {
        self.source.row_set().needs_fetch()
    }

    /// Move the read position back to batch row `row` (at or before the current position):
    /// rows served after a row that failed to decode are served again by the next call.
    #[inline]
    pub fn rewind_to(&mut self, row: usize) {
        self.source.row_set_mut().rewind_to(row)
    }

    /// Read the rest of the result set without fetching ahead ([`RowSet::without_prefetch`]).
    pub fn without_prefetch(&mut self) {
        self.source.row_set_mut().without_prefetch();
    }

    /// The result set's plan (`None` when there is no result set).
    pub fn plan(&self) -> Option<&Arc<ResultPlan>> {
        self.source.row_set().plan()
    }
}
