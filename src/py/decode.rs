//! Decoders × bound columns → Python objects: the only place decoding meets Python.
//!
//! Filling is column-major: for each column, [`fill_with`] dispatches once on its decoder (a
//! plain kind goes to its family's Python arm, `py/types/`, which picks a monomorphised loop
//! over the rows), writing straight into the value slots of pre-allocated rows. Every cell
//! that cannot become a value raises one kind of error, built in one cold place
//! (`types/cell.rs`): a DataError naming the column, its index and the result-set row.

use super::plan::{ColumnDecoder, PyPlan};
use super::row::{new_row, values_of};
use super::types::cell::Fill;
use super::types::{binary, bit, decimal, float, guid, int, temporal, text, vector};
use crate::batch::{Batch, ColumnBuffer};
use crate::plan::CellKind;
use crate::types::Family;
use crate::types::decimal::DecimalParts;
use pyo3::ffi;
use pyo3::prelude::*;
use std::ops::Range;

pub use super::types::cell::{CellFail, Slots};

/// Fill slot `col` of `targets[i]` from batch row `rows.start + i` (result-set row
/// `row_base + rows.start + i`, for error messages), one monomorphised loop per
/// decoder. On failure, rows before the failing row are filled, the rest untouched.
///
/// # Safety
/// Every entry of `targets` must point at the slots of an unshared row under construction with
/// at least `col + 1` slots, whose slot `col` is empty (NULL).
pub unsafe fn fill_column(
    py: Python<'_>,
    plan: &PyPlan,
    col: usize,
    buf: &ColumnBuffer,
    rows: Range<usize>,
    row_base: u64,
    targets: &[Slots],
) -> Result<(), CellFail> {
    // SAFETY: forwarded contract; slot == col.
    let fill = unsafe { Fill::new(py, plan, col, col, rows, row_base, targets) };
    fill_with(&fill, buf, &plan.decoders[col])
}

/// The one dispatch of a column's cells: output converters here, a plain kind to its family's
/// Python arm (one line per family).
fn fill_with(
    f: &Fill<'_, '_>,
    buf: &ColumnBuffer,
    decoder: &ColumnDecoder,
) -> Result<(), CellFail> {
    let kind = match decoder {
        ColumnDecoder::Plain(kind) => *kind,
        ColumnDecoder::TextFromRaw(_, encoding) => return text::fill_from_raw(f, buf, *encoding),
        converted => return fill_converted(f, buf, converted),
    };
    match kind.family() {
        Family::Bit => bit::fill(f, buf, kind),
        Family::Int => int::fill(f, buf, kind),
        Family::Float => float::fill(f, buf, kind),
        Family::Decimal => decimal::fill(f, buf, kind),
        Family::Temporal => temporal::fill(f, buf, kind),
        Family::Guid => guid::fill(f, buf, kind),
        Family::Text => text::fill(f, buf, kind),
        Family::Binary => binary::fill(f, buf, kind),
        Family::Variant => fill_variant(f, buf),
        Family::Vector => vector::fill(f, buf, kind),
    }
}

/// Cells handed to a pyodbc-style output converter (or refused: see [`ColumnDecoder`]).
fn fill_converted(
    f: &Fill<'_, '_>,
    buf: &ColumnBuffer,
    decoder: &ColumnDecoder,
) -> Result<(), CellFail> {
    let py = f.py;
    match decoder {
        ColumnDecoder::Converted(kind, func) => {
            let kind = *kind;
            f.each(buf, |r| {
                let raw = raw_bytes(py, buf, kind, r).map_err(|e| f.cut(e, r))?;
                func.bind(py).call1((raw,))
            })
        }
        ColumnDecoder::ConvertedUtf8(_, func) => f.each(buf, |r| {
            let units = buf.text(r).map_err(|e| f.cut(e, r))?;
            let text = String::from_utf16(units).map_err(|_| {
                f.fail(
                    r,
                    "malformed UTF-16 (a lone surrogate) cannot be encoded as the UTF-8 bytes \
                     the output converter expects"
                        .into(),
                )
            })?;
            func.bind(py)
                .call1((pyo3::types::PyBytes::new(py, text.as_bytes()),))
        }),
        _ => {
            let message = f.plan.refusal.clone().unwrap_or_default();
            f.each(buf, |_| Err(super::errors::programming(message.clone())))
        }
    }
}

/// sql_variant cells, each decoded as its underlying type (read into the column's `variant`
/// buffer by the batch) through that type's family: the dispatch again, for one cell.
fn fill_variant(f: &Fill<'_, '_>, buf: &ColumnBuffer) -> Result<(), CellFail> {
    let py = f.py;
    f.each(buf, |r| {
        let inner = buf.streamed.variant.as_deref().ok_or_else(|| {
            PyErr::new::<super::errors::InternalError, _>("sql_variant cell was not read")
        })?;
        let mut cell: *mut ffi::PyObject = std::ptr::null_mut();
        let targets: [Slots; 1] = [&raw mut cell];
        // SAFETY: one empty local slot; on success it holds an owned reference.
        let one = unsafe { Fill::new(py, f.plan, f.col, 0, 0..1, f.row_of(r), &targets) };
        fill_with(&one, inner, &ColumnDecoder::Plain(inner.kind)).map_err(|fail| fail.err)?;
        // SAFETY: the slot's owned reference, taken over by the returned `Bound`.
        Ok(unsafe { Bound::from_owned_ptr(py, cell) })
    })
}

/// The bytes an output converter receives (pyodbc passes the raw value): text as UTF-16LE,
/// binary as is, decimals as their ASCII digits, fixed-size values as their ODBC C struct
/// (e.g. DATETIMEOFFSET as the 20-byte `SQL_SS_TIMESTAMPOFFSET_STRUCT`, unpackable with
/// `struct.unpack("<6hI2h", raw)`), integers and floats as native-endian C values.
fn raw_bytes<'py>(
    py: Python<'py>,
    buf: &ColumnBuffer,
    kind: CellKind,
    r: usize,
) -> Result<Bound<'py, pyo3::types::PyBytes>, crate::batch::CellError> {
    use pyo3::types::PyBytes;
    Ok(match kind {
        CellKind::WText { .. }
        | CellKind::LongWText
        | CellKind::TimeText
        | CellKind::OffsetText => {
            let units = buf.text(r)?;
            let bytes: Vec<u8> = units.iter().flat_map(|u| u.to_le_bytes()).collect();
            PyBytes::new(py, &bytes)
        }
        CellKind::Binary { .. }
        | CellKind::LongBinary
        | CellKind::Decimal { .. }
        | CellKind::LongDecimal => PyBytes::new(py, buf.bytes(r)?),
        // Converters get a decimal's ASCII digits whatever it was bound as (pyodbc passes text).
        CellKind::Numeric { .. } => match DecimalParts::from_numeric(buf.numeric(r)) {
            Some(parts) => PyBytes::new(py, parts.to_text().as_bytes()),
            None => PyBytes::new(py, buf.numeric(r)),
        },
        CellKind::Variant => match buf.streamed.variant.as_deref() {
            Some(inner) if inner.kind.is_long() => PyBytes::new(py, &inner.streamed.bytes),
            Some(inner) => PyBytes::new(py, inner.element(0)),
            None => PyBytes::new(py, &[]),
        },
        _ => PyBytes::new(py, buf.element(r)),
    })
}

/// The object the direct fill builds for each row (the row factories `None` and `tuple`; the
/// other factories build from a [`ValueGrid`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RowObject {
    /// `ferrodbc.Row` (untracked by the GC, names and description through its schema).
    Row,
    /// A plain tuple (`row_factory = tuple`; the mssql+ferrodbc dialect's cursors).
    Tuple,
}

/// A new row object of `n` empty (NULL) value slots, as an owned reference, and its slots.
fn new_empty(
    py: Python<'_>,
    plan: &PyPlan,
    object: RowObject,
    n: usize,
) -> PyResult<(*mut ffi::PyObject, Slots)> {
    match object {
        RowObject::Row => {
            let r = new_row(py, plan.row_type.bind(py), &plan.schema, n)?;
            // SAFETY: a live Row just made.
            Ok((r, unsafe { values_of(r) }))
        }
        RowObject::Tuple => {
            // SAFETY: PyTuple_New gives a tuple of `n` NULL items (or NULL with an exception
            // set); its items array is ob_item, filled before the tuple is shared. A tuple left
            // partly filled is released safely (tuple dealloc and traversal skip NULL items).
            unsafe {
                let t = ffi::PyTuple_New(n as ffi::Py_ssize_t);
                if t.is_null() {
                    return Err(PyErr::fetch(py));
                }
                let items = (*t.cast::<ffi::PyTupleObject>()).ob_item.as_mut_ptr();
                Ok((t, items))
            }
        }
    }
}

/// Decode rows `range` of `batch` into new `Row` objects (or tuples, per `object`). Returns the rows decoded and, if a cell
/// failed, the batch row that failed and its error (rows before it are returned complete).
///
/// Rows are not tracked by the cyclic GC and no value built here is a GC container (unless an
/// output converter returns one), so building a big batch starts no collection.
pub fn build_rows(
    py: Python<'_>,
    plan: &PyPlan,
    object: RowObject,
    batch: &Batch,
    range: Range<usize>,
    row_base: u64,
    out: &mut Vec<Py<PyAny>>,
) -> PyResult<Option<CellFail>> {
    let ncols = plan.decoders.len();
    let mut rows: Vec<Bound<'_, PyAny>> = Vec::with_capacity(range.len());
    let mut targets: Vec<Slots> = Vec::with_capacity(range.len());
    for _ in 0..range.len() {
        let (r, slots) = new_empty(py, plan, object, ncols)?;
        // SAFETY: a new object, owned by this handle (released with empty slots on any failure).
        rows.push(unsafe { Bound::from_owned_ptr(py, r) });
        targets.push(slots);
    }
    let mut good = rows.len();
    let mut failure = None;
    for (c, buf) in batch.columns.iter().enumerate() {
        // SAFETY: the rows are unshared and slot `c` of rows < good is still empty.
        if let Err(fail) = unsafe {
            fill_column(
                py,
                plan,
                c,
                buf,
                range.start..range.start + good,
                row_base,
                &targets[..good],
            )
        } {
            good = fail.row - range.start;
            failure = Some(fail);
        }
    }
    if object == RowObject::Tuple {
        for (t, &slots) in rows.iter().zip(&targets).take(good) {
            // SAFETY: complete tuples of `ncols` live items, not yet shared.
            unsafe { untrack_if_atomic(t.as_ptr(), slots, ncols) };
        }
    }
    // Rows from `good` on are incomplete: dropped here (dealloc skips their empty slots).
    out.extend(rows.into_iter().take(good).map(Bound::unbind));
    Ok(failure)
}

/// Take a tuple whose items are all atomic (int, str, Decimal, datetime, None: no GC container)
/// off the cyclic GC's lists, as CPython's own collector does with such tuples once it meets
/// them: a fetch of 100,000 rows as tuples otherwise made every collection it triggered walk
/// them all (a Row is never tracked). A tuple holding a container (a `uuid.UUID`, whatever an
/// output converter returns) stays tracked.
///
/// # Safety
/// `t` is a live tracked tuple whose `n` items at `items` are all filled; the GIL is held.
unsafe fn untrack_if_atomic(t: *mut ffi::PyObject, items: Slots, n: usize) {
    // SAFETY: caller contract.
    unsafe {
        let items = std::slice::from_raw_parts(items, n);
        if items.iter().all(|&v| ffi::PyObject_IS_GC(v) == 0) {
            ffi::PyObject_GC_UnTrack(t.cast());
        }
    }
}

/// Decode batch row `row` into one `Row` (fetchone, iteration, fetchmany(1)): the same decoders
/// as [`build_rows`], without its vectors.
pub fn build_one_row(
    py: Python<'_>,
    plan: &PyPlan,
    object: RowObject,
    batch: &Batch,
    row: usize,
    row_base: u64,
) -> Result<Py<PyAny>, CellFail> {
    let (obj, slots) =
        new_empty(py, plan, object, plan.decoders.len()).map_err(|err| CellFail { row, err })?;
    // SAFETY: an owned, unshared row: released by this handle if a cell fails.
    let handle = unsafe { Bound::from_owned_ptr(py, obj) };
    let slots = [slots];
    for (c, buf) in batch.columns.iter().enumerate() {
        // SAFETY: unshared row, slot `c` still empty.
        unsafe { fill_column(py, plan, c, buf, row..row + 1, row_base, &slots)? };
    }
    if object == RowObject::Tuple {
        // SAFETY: a complete tuple, not yet shared.
        unsafe { untrack_if_atomic(obj, slots[0], plan.decoders.len()) };
    }
    Ok(handle.unbind())
}

/// Decode the first cell of batch row `row` (for `fetchval`: no row object is built).
pub fn build_first_value(
    py: Python<'_>,
    plan: &PyPlan,
    batch: &Batch,
    row: usize,
    row_base: u64,
) -> Result<Py<PyAny>, CellFail> {
    decode_cell(py, plan, batch, 0, row, row_base)
}

/// Decode one cell, column `col` of batch row `row`, with the same decoders as every row shape
/// (fetchval; a lazy row's cell when it is read).
pub fn decode_cell(
    py: Python<'_>,
    plan: &PyPlan,
    batch: &Batch,
    col: usize,
    row: usize,
    row_base: u64,
) -> Result<Py<PyAny>, CellFail> {
    let mut cell: *mut ffi::PyObject = std::ptr::null_mut();
    let targets: [Slots; 1] = [&raw mut cell];
    // SAFETY: one empty local slot, standing for slot `col` of a row.
    let fill = unsafe { Fill::new(py, plan, col, 0, row..row + 1, row_base, &targets) };
    fill_with(&fill, &batch.columns[col], &plan.decoders[col])?;
    // SAFETY: filled with an owned reference on success.
    Ok(unsafe { Bound::from_owned_ptr(py, cell) }.unbind())
}

/// The decoded values of a range of rows, row-major (`rows × columns` owned references, NULL
/// where nothing was decoded): what the row shapes other than `Row` (dicts, tuples, a row
/// factory's maker) are built from. The same column-major loops as [`build_rows`] fill it.
///
/// Only used and dropped while attached to the interpreter (it releases references).
pub struct ValueGrid {
    cells: Vec<*mut ffi::PyObject>,
    columns: usize,
    /// Rows `0..complete` have every value.
    pub complete: usize,
}

impl ValueGrid {
    /// Decode rows `range` of `batch`; a cell that fails stops the decoding there: rows before
    /// it are complete, the failure is returned with its batch row.
    pub fn decode(
        py: Python<'_>,
        plan: &PyPlan,
        batch: &Batch,
        range: Range<usize>,
        row_base: u64,
    ) -> (ValueGrid, Option<CellFail>) {
        let columns = plan.decoders.len();
        let mut grid = ValueGrid {
            cells: vec![std::ptr::null_mut(); range.len() * columns],
            columns,
            complete: range.len(),
        };
        let base = grid.cells.as_mut_ptr();
        // SAFETY: row `i`'s slots are `columns` cells from `i * columns`, inside `cells`.
        let targets: Vec<Slots> = (0..range.len())
            .map(|i| unsafe { base.add(i * columns) })
            .collect();
        let mut failure = None;
        for (c, buf) in batch.columns.iter().enumerate() {
            let good = grid.complete;
            // SAFETY: the grid is unshared and slot `c` of every row < good is still empty.
            if let Err(fail) = unsafe {
                fill_column(
                    py,
                    plan,
                    c,
                    buf,
                    range.start..range.start + good,
                    row_base,
                    &targets[..good],
                )
            } {
                grid.complete = fail.row - range.start;
                failure = Some(fail);
            }
        }
        (grid, failure)
    }

    /// Take the value of row `row`, column `col` (owned), leaving its cell empty.
    ///
    /// # Safety
    /// `row < self.complete`, and each cell is taken at most once.
    #[inline]
    pub unsafe fn take(&mut self, row: usize, col: usize) -> *mut ffi::PyObject {
        std::mem::replace(
            &mut self.cells[row * self.columns + col],
            std::ptr::null_mut(),
        )
    }
}

impl Drop for ValueGrid {
    fn drop(&mut self) {
        for &v in &self.cells {
            if !v.is_null() {
                // SAFETY: an owned reference not taken; the grid lives only while attached.
                unsafe { ffi::Py_DecRef(v) };
            }
        }
    }
}
