//! The kit every family's Python arm fills cells with: where the values go ([`Fill`]: a column's
//! served range and the value slots of the rows under construction), the one loop they share
//! ([`Fill::each`]: NULL → `None`, else the family's value, moved into its slot), and the cold
//! constructors of the errors that name a cell.
//!
//! Values are returned as `Bound<'py, PyAny>`, which owns its reference (dropped means
//! released) and cannot outlive the GIL; only [`Fill::each`] turns one into a bare pointer, when
//! it moves it into a row's slot.

use super::super::errors::to_pyerr;
use super::super::plan::PyPlan;
use crate::batch::{CellError, ColumnBuffer, cell_error, cell_failed};
use crate::plan::ResultPlan;
use pyo3::ffi;
use pyo3::prelude::*;
use std::ops::Range;

/// A cell that failed: the row (batch index) and the Python exception to raise.
pub struct CellFail {
    pub row: usize,
    pub err: PyErr,
}

/// The value slots of one row under construction (a `Row`'s inline array, or one local cell).
pub type Slots = *mut *mut ffi::PyObject;

/// One column's served range and where its values go: value slot `slot` of `targets[i]` gets
/// batch row `rows.start + i` of the column's buffer (result-set row `row_base + rows.start +
/// i`, and plan column `col`, for messages).
///
/// The buffer itself is not a field: every arm takes it as an argument (`&ColumnBuffer`), so
/// that the compiler knows the row slots written in the loop are not the buffer and keeps its
/// fields in registers. Read through a struct field, each was loaded again after every value
/// (+1.1 % instructions on fetchall_mixed, measured).
pub struct Fill<'a, 'py> {
    pub py: Python<'py>,
    pub plan: &'a PyPlan,
    pub col: usize,
    slot: usize,
    rows: Range<usize>,
    row_base: u64,
    targets: &'a [Slots],
}

impl<'a, 'py> Fill<'a, 'py> {
    /// # Safety
    /// Every entry of `targets` must point at the slots of an unshared row under construction
    /// with at least `slot + 1` slots, whose slot `slot` is empty (NULL), for as long as the
    /// `Fill` lives.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn new(
        py: Python<'py>,
        plan: &'a PyPlan,
        col: usize,
        slot: usize,
        rows: Range<usize>,
        row_base: u64,
        targets: &'a [Slots],
    ) -> Self {
        Fill {
            py,
            plan,
            col,
            slot,
            rows,
            row_base,
            targets,
        }
    }

    /// Result-set row of batch row `r`.
    pub fn row_of(&self, r: usize) -> u64 {
        self.row_base + r as u64
    }

    /// The loop every family shares: NULL → None, else `make(row)`, moved into the row's slot.
    /// On failure, rows before the failing row are filled, the rest untouched. Inlined into
    /// each family's arm, one monomorphic copy per kind.
    #[inline(always)]
    pub fn each(
        &self,
        buf: &ColumnBuffer,
        mut make: impl FnMut(usize) -> PyResult<Bound<'py, PyAny>>,
    ) -> Result<(), CellFail> {
        let (py, slot, targets) = (self.py, self.slot, self.targets);
        for (i, r) in self.rows.clone().enumerate().take(targets.len()) {
            let obj = if buf.is_null(r) {
                none(py)
            } else {
                make(r).map_err(|err| CellFail { row: r, err })?
            };
            // SAFETY: `new`'s contract: an empty slot of an unshared row; the reference `obj`
            // owned moves into the slot (`into_ptr` gives it up without releasing it).
            unsafe { *targets[i].add(slot) = obj.into_ptr() };
        }
        Ok(())
    }

    /// A DataError for row `r`'s cell, saying why it cannot become a value.
    pub fn fail(&self, r: usize, reason: String) -> PyErr {
        cell_failure(self.py, &self.plan.core, self.col, self.row_of(r), reason)
    }

    /// The error of a cell the buffer cut or could not read (`CellError`).
    #[cold]
    pub fn cut(&self, e: CellError, r: usize) -> PyErr {
        to_pyerr(
            self.py,
            cell_error(e, &self.plan.core, self.col, self.row_of(r)),
        )
    }

    /// A value the driver produced but Python cannot hold (psqlODBC hands TIMESTAMP
    /// '-infinity' over as year -9999): a DataError naming the cell, not a bare ValueError.
    pub fn unrepresentable(&self, e: PyErr, r: usize) -> PyErr {
        if e.is_instance_of::<pyo3::exceptions::PyValueError>(self.py)
            || e.is_instance_of::<pyo3::exceptions::PyOverflowError>(self.py)
        {
            self.fail(r, format!("the value cannot be represented in Python: {e}"))
        } else {
            e
        }
    }
}

/// A DataError for a cell that cannot become a value: column name, index and result-set row
/// always, then why. The one constructor of cell errors (cold: never on a good row's path).
#[cold]
#[inline(never)]
pub fn cell_failure(
    py: Python<'_>,
    core: &ResultPlan,
    col: usize,
    row: u64,
    reason: String,
) -> PyErr {
    to_pyerr(py, cell_failed(core, col, row, reason))
}

#[inline(always)]
pub fn none(py: Python<'_>) -> Bound<'_, PyAny> {
    py.None().into_bound(py)
}
