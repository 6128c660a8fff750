//! Decoders × bound columns → Python objects: the only place decoding meets Python.
//!
//! Filling is column-major: for each column, one `match` on its decoder picks a monomorphised
//! loop over the rows, writing straight into the value slots of pre-allocated rows. Every cell
//! that cannot become a value raises one kind of error, built in one cold place
//! ([`cell_failure`]): a DataError naming the column, its index and the result-set row.

use super::cache;
use super::decimal::{DecimalFailure, decimal_from_parts, new_decimal};
use super::objects;
use super::plan::{ColumnDecoder, PyPlan};
use super::row::{new_row, values_of};
use super::text::{TextFailure, utf16_to_str};
use crate::batch::{Batch, CellError, ColumnBuffer, cell_error};
use crate::plan::{CellKind, ResultPlan};
use crate::raw_text::RawTextEncoding;
use crate::types::decimal::DecimalParts;
use crate::types::guid::guid_to_u128;
use crate::types::temporal::{parse_offset_text, parse_time_text};
use crate::types::text::TextErrors;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTzInfo};
use std::ops::Range;

/// A cell that failed: the row (batch index) and the Python exception to raise.
pub struct CellFail {
    pub row: usize,
    pub err: PyErr,
}

/// The value slots of one row under construction (a `Row`'s inline array, or one local cell).
pub type Slots = *mut *mut ffi::PyObject;

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
    let target = Target {
        col,
        slot: col,
        rows,
        row_base,
    };
    // SAFETY: forwarded contract; slot == col.
    unsafe { fill_with(py, plan, &plan.decoders[col], buf, target, targets) }
}

/// Where decoded cells go: column `col` of the plan (for messages) into value slot `slot`.
#[derive(Clone)]
struct Target {
    col: usize,
    slot: usize,
    rows: Range<usize>,
    row_base: u64,
}

/// # Safety
/// As [`fill_column`], for slot `target.slot`.
unsafe fn fill_with(
    py: Python<'_>,
    plan: &PyPlan,
    decoder: &ColumnDecoder,
    buf: &ColumnBuffer,
    target: Target,
    targets: &[Slots],
) -> Result<(), CellFail> {
    let Target {
        col,
        slot,
        rows,
        row_base,
    } = target;
    let errors = plan.errors;
    let core = &plan.core;
    let fail = |r: usize, reason: String| cell_failure(py, core, col, row_base + r as u64, reason);
    let cut = |e: CellError, r: usize| -> PyErr {
        super::errors::to_pyerr(py, cell_error(e, core, col, row_base + r as u64))
    };
    let text_failure = |f: TextFailure, units: &[u16], r: usize| -> PyErr {
        match f {
            TextFailure::Python(e) => e,
            TextFailure::LoneSurrogate(at) => fail(
                r,
                format!(
                    "malformed UTF-16 (lone surrogate 0x{:04X} at code unit {at}); \
                     set connection.decode_errors to 'replace' or 'surrogatepass' to accept it",
                    units[at]
                ),
            ),
        }
    };
    // A value the driver produced but Python cannot hold (psqlODBC hands TIMESTAMP
    // '-infinity' over as year -9999): a DataError naming the cell, not a bare ValueError.
    let unrepresentable = |e: PyErr, r: usize| -> PyErr {
        if e.is_instance_of::<pyo3::exceptions::PyValueError>(py)
            || e.is_instance_of::<pyo3::exceptions::PyOverflowError>(py)
        {
            fail(r, format!("the value cannot be represented in Python: {e}"))
        } else {
            e
        }
    };
    // One generic loop per decoder arm: the closure is inlined into its own copy of the loop.
    macro_rules! fill {
        ($make:expr) => {
            // SAFETY: forwarded caller contract on `targets`.
            unsafe { fill_loop(py, buf, slot, rows.clone(), targets, $make) }
        };
    }

    match decoder {
        ColumnDecoder::Converted(kind, func) => {
            let kind = *kind;
            fill!(|r| {
                let raw = raw_bytes(py, buf, kind, r).map_err(|e| cut(e, r))?;
                func.bind(py).call1((raw,))
            })
        }
        ColumnDecoder::ConvertedUtf8(_, func) => fill!(|r| {
            let units = buf.text(r).map_err(|e| cut(e, r))?;
            let text = String::from_utf16(units).map_err(|_| {
                fail(
                    r,
                    "malformed UTF-16 (a lone surrogate) cannot be encoded as the UTF-8 bytes \
                     the output converter expects"
                        .into(),
                )
            })?;
            func.bind(py)
                .call1((pyo3::types::PyBytes::new(py, text.as_bytes()),))
        }),
        ColumnDecoder::TextFromRaw(_, RawTextEncoding::Utf16Le) => fill!(|r| {
            let bytes = buf.bytes(r).map_err(|e| cut(e, r))?;
            if bytes.len() % 2 != 0 {
                return Err(fail(
                    r,
                    format!("{} bytes are not UTF-16 code units", bytes.len()),
                ));
            }
            // The bytes buffer has no 2-byte alignment to rely on: copy into code units.
            let units: Vec<u16> = bytes
                .chunks_exact(2)
                .map(|b| u16::from_le_bytes([b[0], b[1]]))
                .collect();
            utf16_to_str(py, &units, errors).map_err(|f| text_failure(f, &units, r))
        }),
        ColumnDecoder::TextFromRaw(_, RawTextEncoding::Utf8) => fill!(|r| {
            let bytes = buf.bytes(r).map_err(|e| cut(e, r))?;
            match std::str::from_utf8(bytes) {
                Ok(text) => Ok(PyString::new(py, text).into_any()),
                Err(_) if errors == TextErrors::Replace => {
                    Ok(PyString::new(py, &String::from_utf8_lossy(bytes)).into_any())
                }
                Err(e) => Err(fail(
                    r,
                    format!(
                        "malformed UTF-8 at byte {}; set connection.decode_errors to 'replace' \
                         to accept it",
                        e.valid_up_to()
                    ),
                )),
            }
        }),
        ColumnDecoder::Refused(..) => {
            let message = plan.refusal.clone().unwrap_or_default();
            fill!(|_| Err(super::errors::programming(message.clone())))
        }
        ColumnDecoder::Plain(kind) => match *kind {
            CellKind::Variant => fill!(|r| {
                let inner = buf.streamed.variant.as_deref().ok_or_else(|| {
                    PyErr::new::<super::errors::InternalError, _>("sql_variant cell was not read")
                })?;
                variant_value(
                    py,
                    plan,
                    inner,
                    Target {
                        col,
                        slot: 0,
                        rows: 0..1,
                        row_base: row_base + r as u64,
                    },
                )
            }),
            CellKind::Bit => fill!(|r| Ok(objects::boolean(py, buf.bit(r)))),
            CellKind::I16 => fill!(|r| objects::int(py, buf.i16(r) as i64)),
            CellKind::I32 => fill!(|r| objects::int(py, buf.i32(r) as i64)),
            CellKind::I64 => fill!(|r| objects::int(py, buf.i64(r))),
            CellKind::F32 => fill!(|r| objects::float(py, buf.f32(r) as f64)),
            CellKind::F64 => fill!(|r| objects::float(py, buf.f64(r))),
            CellKind::Decimal { .. } | CellKind::LongDecimal => fill!(|r| {
                let bytes = buf.bytes(r).map_err(|e| cut(e, r))?;
                new_decimal(py, bytes).map_err(|f| match f {
                    DecimalFailure::Python(e) => e,
                    DecimalFailure::NotDecimal => fail(
                        r,
                        format!(
                            "the driver returned {:?}, not a decimal number",
                            String::from_utf8_lossy(bytes)
                        ),
                    ),
                })
            }),
            CellKind::Numeric { .. } => fill!(|r| {
                let parts = DecimalParts::from_numeric(buf.numeric(r)).ok_or_else(|| {
                    fail(r, "the driver returned a numeric beyond 38 digits".into())
                })?;
                decimal_from_parts(py, &parts)
            }),
            CellKind::Date => {
                fill!(|r| objects::date(py, buf.date(r)).map_err(|e| unrepresentable(e, r)))
            }
            CellKind::SsTime2 => {
                fill!(|r| objects::time(py, buf.ss_time2(r)).map_err(|e| unrepresentable(e, r)))
            }
            CellKind::TimeText => fill!(|r| {
                let units = buf.text(r).map_err(|e| cut(e, r))?;
                let t = parse_time_text(units).ok_or_else(|| {
                    fail(
                        r,
                        format!("not a time: {:?}", String::from_utf16_lossy(units)),
                    )
                })?;
                objects::time(py, t).map_err(|e| unrepresentable(e, r))
            }),
            CellKind::Timestamp => {
                fill!(|r| objects::datetime(py, buf.timestamp(r), None)
                    .map_err(|e| unrepresentable(e, r)))
            }
            CellKind::TimestampOffset | CellKind::OffsetText => {
                let text = matches!(decoder, ColumnDecoder::Plain(CellKind::OffsetText));
                let mut memo: Option<(i16, Bound<'_, PyAny>)> = None;
                fill!(|r| {
                    let v = if text {
                        let units = buf.text(r).map_err(|e| cut(e, r))?;
                        parse_offset_text(units).ok_or_else(|| {
                            let text = String::from_utf16_lossy(units);
                            fail(r, format!("not a datetimeoffset: {text:?}"))
                        })?
                    } else {
                        buf.timestamp_offset(r)
                    };
                    let tz = match &memo {
                        Some((off, tz)) if *off == v.offset_minutes => tz.clone(),
                        _ => {
                            let tz = cache::timezone(py, v.offset_minutes)?;
                            memo = Some((v.offset_minutes, tz.clone()));
                            tz
                        }
                    };
                    objects::datetime(py, v.timestamp, Some(tz.cast::<PyTzInfo>()?))
                        .map_err(|e| unrepresentable(e, r))
                })
            }
            CellKind::Guid if plan.uuid_as_str => fill!(|r| {
                let text = format!("{:032X}", guid_to_u128(buf.guid(r)));
                let dashed = format!(
                    "{}-{}-{}-{}-{}",
                    &text[0..8],
                    &text[8..12],
                    &text[12..16],
                    &text[16..20],
                    &text[20..]
                );
                Ok(PyString::new(py, &dashed).into_any())
            }),
            CellKind::Guid => fill!(|r| objects::uuid(py, guid_to_u128(buf.guid(r)))),
            CellKind::WText { .. } | CellKind::LongWText => fill!(|r| {
                let units = buf.text(r).map_err(|e| cut(e, r))?;
                utf16_to_str(py, units, errors).map_err(|f| text_failure(f, units, r))
            }),
            CellKind::Binary { .. } | CellKind::LongBinary => fill!(|r| {
                let bytes = buf.bytes(r).map_err(|e| cut(e, r))?;
                objects::bytes(py, bytes)
            }),
        },
    }
}

/// The loop every decoder shares: NULL → None, else `make(row)`, written into slot `col`.
///
/// # Safety
/// As [`fill_column`]: rows under construction with slot `slot` empty.
#[inline(always)]
unsafe fn fill_loop<'py>(
    py: Python<'py>,
    buf: &ColumnBuffer,
    slot: usize,
    rows: Range<usize>,
    targets: &[Slots],
    mut make: impl FnMut(usize) -> PyResult<Bound<'py, PyAny>>,
) -> Result<(), CellFail> {
    for (i, r) in rows.enumerate().take(targets.len()) {
        let obj = if buf.is_null(r) {
            objects::none(py)
        } else {
            make(r).map_err(|err| CellFail { row: r, err })?
        };
        // SAFETY: caller contract: an empty slot of an unshared row; the reference `obj` owned
        // moves into the slot (`into_ptr` gives it up without releasing it).
        unsafe { *targets[i].add(slot) = obj.into_ptr() };
    }
    Ok(())
}

/// A DataError for a cell that cannot become a value: column name, index and result-set row
/// always, then why. The one constructor of cell errors (cold: never on a good row's path).
#[cold]
#[inline(never)]
fn cell_failure(py: Python<'_>, core: &ResultPlan, col: usize, row: u64, reason: String) -> PyErr {
    super::errors::to_pyerr(py, crate::batch::cell_failed(core, col, row, reason))
}

/// One sql_variant cell, decoded as its underlying type (read into `inner` by the batch).
fn variant_value<'py>(
    py: Python<'py>,
    plan: &PyPlan,
    inner: &ColumnBuffer,
    target: Target,
) -> PyResult<Bound<'py, PyAny>> {
    let mut cell: *mut ffi::PyObject = std::ptr::null_mut();
    let decoder = ColumnDecoder::Plain(inner.kind);
    // SAFETY: one empty local slot; on success it holds an owned reference.
    unsafe { fill_with(py, plan, &decoder, inner, target, &[&mut cell]) }.map_err(|f| f.err)?;
    // SAFETY: the slot's owned reference, taken over by the returned `Bound`.
    Ok(unsafe { Bound::from_owned_ptr(py, cell) })
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
    // SAFETY: one empty local slot, standing for slot `col` of a row.
    unsafe {
        fill_with(
            py,
            plan,
            &plan.decoders[col],
            &batch.columns[col],
            Target {
                col,
                slot: 0,
                rows: row..row + 1,
                row_base,
            },
            &[&mut cell],
        )?
    };
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
