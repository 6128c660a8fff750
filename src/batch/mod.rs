//! Column buffers bound to a statement, and the block fetch that fills them.
//!
//! One `Batch` serves every fetch shape: the cursor hands out rows `pos..len` of it and calls the
//! driver only when they are used up. Buffers are column-wise (`SQL_BIND_BY_COLUMN`) and owned
//! here; the statement holds raw pointers into them while bound, so a `Batch` is only dropped or
//! reallocated after [`Batch::unbind`] (or after the statement is gone).
//!
//! `column.rs`: one column's buffers and cell accessors; `streamed.rs`: SQLGetData reads;
//! `recycle.rs`: buffers of dropped batches kept for the next execute.

mod column;
mod recycle;
mod streamed;
#[cfg(test)]
mod tests;

pub use column::{
    CellError, ColumnBuffer, FixedWidth, RawCell, StreamedCell, cell_error, cell_failed,
};
pub use streamed::LOB_CHUNK_BYTES;

use crate::error::{Error, Result};
use crate::odbc::sys::ULen;
use crate::odbc::{Outcome, Stmt};
use crate::plan::ResultPlan;
use std::sync::atomic::{AtomicBool, Ordering};

/// Bytes a batch may use for bound buffers before it stops growing. Small enough that wide rows
/// pipeline (decoding one array overlaps fetching the next, and the last array, decoded with
/// nothing to overlap, stays short): 10,000 rows x 32 columns took 38 ms with a 16 MiB budget
/// and 25 ms with 2 MiB; narrow rows still reach the 8,192-row cap.
pub const BATCH_BYTE_BUDGET: usize = 2 << 20;
/// Row cap for one row array (some drivers count rows in 16 bits).
pub const MAX_BATCH_ROWS: usize = 8192;
/// Rows in the first row array of a result set: small, so `SELECT 1` costs nothing extra.
pub const FIRST_BATCH_ROWS: usize = 32;

/// The row array after a full one of `rows`: ×8 up to 2,048 rows, then ×2 up to the cap.
///
/// Big arrays cost Driver 18 fewer calls (a fetch-bound 1.2M-row result: 258 ms with 8,192-row
/// arrays, 328 ms with 2,048), but the last array of a result is decoded with no fetch left to
/// overlap: growing by 2 past 2,048 keeps that tail shorter (10,000 rows x 32 columns: 47 ms
/// growing straight to 8,192, 38 ms this way; see also [`BATCH_BYTE_BUDGET`]).
pub fn grown(rows: usize) -> usize {
    if rows < 2048 { rows * 8 } else { rows * 2 }
}

/// Bound buffers for one plan, plus the row count the driver reports per fetch.
pub struct Batch {
    pub columns: Vec<ColumnBuffer>,
    capacity: usize,
    /// Heap-stable target of `SQL_ATTR_ROWS_FETCHED_PTR`.
    rows_fetched: Box<ULen>,
    /// `SQL_ATTR_ROW_STATUS_PTR` target: which rows of the array the driver filled, and which one
    /// failed when an error arrives in the middle of an array.
    row_status: Vec<u16>,
    /// Whether the statement holds pointers into the buffers. Atomic so that a batch shared with
    /// rows that pin it can still be unbound (`&self`) when the row set replaces it.
    bound: AtomicBool,
}

impl Batch {
    pub fn new(plan: &ResultPlan, capacity: usize) -> Batch {
        let capacity = if plan.has_streamed() {
            1
        } else {
            capacity.max(1)
        };
        let columns = plan
            .columns
            .iter()
            .map(|c| ColumnBuffer::new(c.kind, if c.kind.is_long() { 0 } else { capacity }))
            .collect();
        Batch {
            columns,
            capacity,
            rows_fetched: Box::new(0),
            row_status: vec![ROW_NOROW; capacity],
            bound: AtomicBool::new(false),
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn is_bound(&self) -> bool {
        self.bound.load(Ordering::Relaxed)
    }

    /// Where the first column's values live: which buffers a fake block source was given.
    #[cfg(test)]
    pub(crate) fn buffers_at(&self) -> usize {
        self.columns[0].values.as_ptr() as usize
    }

    /// A fake block source's binding (tests of the row set without a driver).
    #[cfg(test)]
    pub(crate) fn set_bound(&self, bound: bool) {
        self.bound.store(bound, Ordering::Relaxed);
    }

    /// Largest row array this plan may use, from the byte budget.
    pub fn max_rows(plan: &ResultPlan) -> usize {
        if plan.has_streamed() {
            return 1;
        }
        (BATCH_BYTE_BUDGET / plan.row_bytes.max(1)).clamp(1, MAX_BATCH_ROWS)
    }

    /// Install the bindings on `stmt`.
    ///
    /// # Safety
    /// The batch must not move its buffers, and must be unbound (or the statement freed or given
    /// other bindings) before it is dropped. Column buffers live on the heap, so moving the
    /// `Batch` value itself is fine.
    pub unsafe fn bind(&mut self, stmt: &mut Stmt, plan: &ResultPlan) -> Result<()> {
        stmt.set_row_array_size(self.capacity)?;
        // SAFETY: `rows_fetched` is boxed, so its address is stable for the batch's life.
        unsafe { stmt.set_rows_fetched_ptr(&raw mut *self.rows_fetched)? };
        // SAFETY: `row_status` holds `capacity` entries and is never resized after construction.
        unsafe { stmt.set_row_status_ptr(self.row_status.as_mut_ptr())? };
        for (i, col) in self.columns.iter_mut().enumerate().take(plan.bound_prefix) {
            // SAFETY: forwarded contract.
            unsafe { col.bind(stmt, crate::checked::column_number(i))? };
        }
        self.bound.store(true, Ordering::Relaxed);
        Ok(())
    }

    pub fn unbind(&self, stmt: &mut Stmt) -> Result<()> {
        if self.is_bound() {
            stmt.unbind_cols()?;
            self.bound.store(false, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Fetch the next row array into the bound columns (the whole fetch, with cut cells read
    /// again and streamed columns read, is `BlockSource::fetch` in `rowset/source.rs`).
    ///
    /// An error can arrive in the middle of an array (SQL Server sends rows, then an error token):
    /// the driver then reports the rows before it as fetched and the failing one by its row
    /// status. Those rows are delivered first: the result says how many, and the error.
    pub fn fetch_bound(&mut self, stmt: &mut Stmt) -> Fetched {
        self.begin_fetch();
        let outcome = stmt.fetch_raw();
        let records = match outcome {
            Outcome::Success | Outcome::NoData => Vec::new(),
            _ => stmt.diagnostics(),
        };
        self.finish_fetch(outcome, records)
    }

    /// Read the streamed columns (SQLGetData) of the row just fetched, after every bound one.
    /// `base` is the result-set position of the array's first row (errors name the row).
    pub fn read_streamed_columns(
        &mut self,
        stmt: &mut Stmt,
        plan: &ResultPlan,
        fetched: Fetched,
        base: u64,
    ) -> Fetched {
        if fetched.error.is_some() || fetched.rows == 0 || !plan.has_streamed() {
            return fetched;
        }
        for i in plan.bound_prefix..self.columns.len() {
            if let Err(e) = self.columns[i].read_streamed(stmt, crate::checked::column_number(i)) {
                return Fetched {
                    rows: 0,
                    error: Some(name_cell(e, plan, i, base)),
                    warnings: fetched.warnings,
                };
            }
        }
        fetched
    }

    /// Reset what the driver reports through (rows fetched, row status) before a block fetch.
    pub fn begin_fetch(&mut self) {
        debug_assert!(self.is_bound());
        *self.rows_fetched = 0;
        self.row_status.fill(ROW_NOROW);
        for col in &mut self.columns {
            col.clear_reread();
        }
    }

    /// Read a block fetch's result (its return code and diagnostic records, taken right after
    /// the call) from what the driver wrote into this batch. Bound columns only: streamed
    /// columns are read by [`Self::read_streamed_columns`].
    pub fn finish_fetch(
        &mut self,
        outcome: Outcome,
        records: Vec<crate::odbc::Diagnostic>,
    ) -> Fetched {
        let reported = (*self.rows_fetched).min(self.capacity);
        match outcome {
            Outcome::NoData => Fetched {
                rows: 0,
                error: None,
                warnings: Vec::new(),
            },
            // Warnings (01xxx) are messages; any error record ends the result after the good
            // rows before it.
            Outcome::Success | Outcome::SuccessWithInfo => {
                let (warnings, errors): (Vec<_>, Vec<_>) =
                    records.into_iter().partition(|d| !d.is_error());
                if errors.is_empty() {
                    Fetched {
                        rows: reported,
                        error: None,
                        warnings,
                    }
                } else {
                    Fetched {
                        rows: self.leading_good_rows(reported),
                        error: Some(Error::odbc("SQLFetch", errors)),
                        warnings,
                    }
                }
            }
            _ => Fetched {
                rows: self.leading_good_rows(reported),
                error: Some(Error::odbc("SQLFetch", records)),
                warnings: Vec::new(),
            },
        }
    }

    /// Rows at the start of the array whose status is success (with or without info).
    fn leading_good_rows(&self, reported: usize) -> usize {
        self.row_status[..reported]
            .iter()
            .take_while(|&&s| s == ROW_SUCCESS || s == ROW_SUCCESS_WITH_INFO)
            .count()
    }
}

/// A value a streamed read refused (too long, impossible length): the error names its cell.
pub(crate) fn name_cell(e: Error, plan: &ResultPlan, column: usize, row: u64) -> Error {
    match e {
        Error::Data(reason) => cell_failed(plan, column, row, reason),
        other => other,
    }
}

/// `SQL_ROW_SUCCESS`, `SQL_ROW_SUCCESS_WITH_INFO`, `SQL_ROW_NOROW` (row status array values).
const ROW_SUCCESS: u16 = 0;
const ROW_SUCCESS_WITH_INFO: u16 = 6;
const ROW_NOROW: u16 = 3;

/// What one block fetch produced: `rows` usable rows, then possibly an error that ends the
/// result set (raised after those rows are handed out), and warnings for `messages`.
pub struct Fetched {
    pub rows: usize,
    pub error: Option<Error>,
    pub warnings: Vec<crate::odbc::Diagnostic>,
}

impl Fetched {
    pub fn failed(error: Error) -> Fetched {
        Fetched {
            rows: 0,
            error: Some(error),
            warnings: Vec::new(),
        }
    }
}
