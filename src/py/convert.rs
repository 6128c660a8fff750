//! Decoders × bound columns → Python objects: the only place decoding meets Python.
//!
//! A [`PyPlan`] is built once per result set (and again only if the epoch moves: a converter or
//! decoding setting changed). Filling is column-major: for each column, one `match` on its
//! decoder picks a monomorphised loop over the rows, writing straight into the value slots of
//! pre-allocated rows.

use super::cache;
use super::decimal::{DecimalFailure, decimal_from_parts, new_decimal};
use super::row::{RowSchema, new_row, row_type, values_of};
use super::text::{TextFailure, utf16_to_str};
use crate::batch::{Batch, ColumnBuffer, cell_error};
use crate::decode::{self, TextErrors};
use crate::plan::{CellKind, ResultPlan};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDate, PyDateTime, PyDict, PyString, PyTime, PyTuple, PyTzInfo};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

/// How one column's cells become Python values.
pub enum ColumnDecoder {
    Plain(CellKind),
    /// A pyodbc-style output converter: called with the cell's raw bytes (see `raw_bytes`).
    Converted(CellKind, Py<PyAny>),
}

/// The Python half of a result set's plan.
pub struct PyPlan {
    pub epoch: u64,
    pub generation: u64,
    pub core: Arc<ResultPlan>,
    pub decoders: Vec<ColumnDecoder>,
    pub schema: Py<RowSchema>,
    /// `ferrodbc.Row`, held here so the hot path does not look it up.
    pub row_type: Py<pyo3::types::PyType>,
    pub errors: TextErrors,
    /// uniqueidentifier as upper-case `str` instead of `uuid.UUID` (connection.native_uuid off).
    pub uuid_as_str: bool,
}

/// The Python type a column's values have, used as `description` type code (pyodbc style).
/// Built-in and datetime types come straight from their type objects: no import per column.
fn type_code<'py>(
    py: Python<'py>,
    kind: CellKind,
    uuid_as_str: bool,
) -> PyResult<Bound<'py, PyAny>> {
    use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyString as Str};
    Ok(match kind {
        CellKind::Bit => py.get_type::<PyBool>().into_any(),
        CellKind::I16 | CellKind::I32 | CellKind::I64 => py.get_type::<PyInt>().into_any(),
        CellKind::F32 | CellKind::F64 => py.get_type::<PyFloat>().into_any(),
        CellKind::Decimal { .. } | CellKind::LongDecimal | CellKind::Numeric { .. } => {
            cache::decimal_type(py)?.clone().into_any()
        }
        CellKind::Date => py.get_type::<PyDate>().into_any(),
        CellKind::TimeText | CellKind::SsTime2 => py.get_type::<PyTime>().into_any(),
        CellKind::Timestamp | CellKind::TimestampOffset | CellKind::OffsetText => {
            py.get_type::<PyDateTime>().into_any()
        }
        CellKind::Guid if uuid_as_str => py.get_type::<Str>().into_any(),
        CellKind::Guid => cache::uuid_type(py)?.clone().into_any(),
        CellKind::WText { .. } | CellKind::LongWText => py.get_type::<Str>().into_any(),
        CellKind::Binary { .. } | CellKind::LongBinary => py.get_type::<PyBytes>().into_any(),
        CellKind::Variant => py.get_type::<PyAny>().into_any(),
    })
}

impl PyPlan {
    #[allow(clippy::too_many_arguments)]
    pub fn build(
        py: Python<'_>,
        core: Arc<ResultPlan>,
        epoch: u64,
        generation: u64,
        converters: &HashMap<i16, Py<PyAny>>,
        errors: TextErrors,
        uuid_as_str: bool,
        lowercase: bool,
    ) -> PyResult<PyPlan> {
        let mut names = Vec::with_capacity(core.columns.len());
        let mut description = Vec::with_capacity(core.columns.len());
        let index = PyDict::new(py);
        let mut decoders = Vec::with_capacity(core.columns.len());
        for (i, col) in core.columns.iter().enumerate() {
            let name = if lowercase {
                PyString::intern(py, &col.desc.name.to_lowercase())
            } else {
                PyString::intern(py, &col.desc.name)
            };
            index.set_item(&name, i)?;
            let size = if col.desc.size == 0 {
                None
            } else {
                Some(col.desc.size)
            };
            let d = (
                name.clone(),
                type_code(py, col.kind, uuid_as_str)?,
                py.None(),
                size,
                size,
                col.desc.decimal_digits,
                col.desc.nullable.unwrap_or(true),
            );
            description.push(d.into_pyobject(py)?);
            names.push(name);
            decoders.push(match converters.get(&col.desc.sql_type) {
                Some(f) => ColumnDecoder::Converted(col.kind, f.clone_ref(py)),
                None => ColumnDecoder::Plain(col.kind),
            });
        }
        let schema = RowSchema {
            names: PyTuple::new(py, names)?.unbind(),
            index: index.unbind(),
            description: PyTuple::new(py, description)?.unbind(),
        };
        Ok(PyPlan {
            epoch,
            generation,
            core,
            decoders,
            schema: Py::new(py, schema)?,
            row_type: row_type(py)?.clone().unbind(),
            errors,
            uuid_as_str,
        })
    }
}

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
    let cell_err = |e, r: usize| -> PyErr {
        super::errors::to_pyerr(py, cell_error(e, core, col, row_base + r as u64))
    };
    // A value the driver produced but Python cannot hold (psqlODBC hands TIMESTAMP
    // '-infinity' over as year -9999): a DataError naming the cell, not a bare ValueError.
    let unrepresentable = |e: PyErr, r: usize| -> PyErr {
        if e.is_instance_of::<pyo3::exceptions::PyValueError>(py)
            || e.is_instance_of::<pyo3::exceptions::PyOverflowError>(py)
        {
            super::errors::data(format!(
                "column {:?} (index {col}), row {}: the value cannot be represented in Python: {e}",
                core.columns[col].desc.name,
                row_base + r as u64
            ))
        } else {
            e
        }
    };
    // One generic loop per decoder arm: the closure is inlined into its own copy of the loop.
    macro_rules! fill {
        ($make:expr) => {
            // SAFETY: forwarded caller contract on `targets`.
            unsafe { fill_loop(buf, slot, rows.clone(), targets, $make) }
        };
    }

    match decoder {
        ColumnDecoder::Converted(kind, func) => {
            let kind = *kind;
            fill!(|r| {
                let raw = raw_bytes(py, buf, kind, r).map_err(|e| cell_err(e, r))?;
                Ok(func.bind(py).call1((raw,))?.into_ptr())
            })
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
            CellKind::Bit => fill!(|r| Ok(py_bool(buf.bit(r)))),
            CellKind::I16 => fill!(|r| py_int(py, buf.i16(r) as i64)),
            CellKind::I32 => fill!(|r| py_int(py, buf.i32(r) as i64)),
            CellKind::I64 => fill!(|r| py_int(py, buf.i64(r))),
            CellKind::F32 => fill!(|r| py_float(py, buf.f32(r) as f64)),
            CellKind::F64 => fill!(|r| py_float(py, buf.f64(r))),
            CellKind::Decimal { .. } | CellKind::LongDecimal => fill!(|r| {
                let bytes = buf.bytes(r).map_err(|e| cell_err(e, r))?;
                new_decimal(py, bytes).map_err(|f| match f {
                    DecimalFailure::Python(e) => e,
                    DecimalFailure::NotDecimal => super::errors::data(format!(
                        "column {:?} (index {col}), row {}: the driver returned {:?}, not a decimal number",
                        core.columns[col].desc.name,
                        row_base + r as u64,
                        String::from_utf8_lossy(bytes)
                    )),
                })
            }),
            CellKind::Numeric { .. } => fill!(|r| {
                let parts = decode::DecimalParts::from_numeric(buf.numeric(r)).ok_or_else(|| {
                    super::errors::data(format!(
                        "column {:?} (index {col}), row {}: the driver returned a numeric beyond 38 digits",
                        core.columns[col].desc.name,
                        row_base + r as u64,
                    ))
                })?;
                decimal_from_parts(py, &parts)
            }),
            CellKind::Date => fill!(|r| {
                let d = buf.date(r);
                let date = PyDate::new(py, d.year as i32, d.month as u8, d.day as u8);
                Ok(date.map_err(|e| unrepresentable(e, r))?.into_ptr())
            }),
            CellKind::SsTime2 => {
                fill!(|r| time_obj(py, buf.ss_time2(r)).map_err(|e| unrepresentable(e, r)))
            }
            CellKind::TimeText => fill!(|r| {
                let units = buf.text(r).map_err(|e| cell_err(e, r))?;
                let t = decode::parse_time_text(units).ok_or_else(|| {
                    super::errors::data(format!(
                        "column index {col}, row {}: not a time: {:?}",
                        row_base + r as u64,
                        String::from_utf16_lossy(units)
                    ))
                })?;
                time_obj(py, t).map_err(|e| unrepresentable(e, r))
            }),
            CellKind::Timestamp => {
                fill!(
                    |r| datetime_obj(py, buf.timestamp(r), None).map_err(|e| unrepresentable(e, r))
                )
            }
            CellKind::TimestampOffset | CellKind::OffsetText => {
                let text = matches!(decoder, ColumnDecoder::Plain(CellKind::OffsetText));
                let mut memo: Option<(i16, Bound<'_, PyAny>)> = None;
                fill!(|r| {
                    let v = if text {
                        let units = buf.text(r).map_err(|e| cell_err(e, r))?;
                        decode::parse_offset_text(units).ok_or_else(|| {
                            super::errors::data(format!(
                                "column index {col}, row {}: not a datetimeoffset: {:?}",
                                row_base + r as u64,
                                String::from_utf16_lossy(units)
                            ))
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
                    datetime_obj(py, v.timestamp, Some(tz.cast::<PyTzInfo>()?))
                        .map_err(|e| unrepresentable(e, r))
                })
            }
            CellKind::Guid if plan.uuid_as_str => fill!(|r| {
                let text = format!("{:032X}", decode::guid_to_u128(buf.guid(r)));
                let dashed = format!(
                    "{}-{}-{}-{}-{}",
                    &text[0..8],
                    &text[8..12],
                    &text[12..16],
                    &text[16..20],
                    &text[20..]
                );
                Ok(PyString::new(py, &dashed).into_ptr())
            }),
            CellKind::Guid => fill!(|r| cache::new_uuid(py, decode::guid_to_u128(buf.guid(r)))),
            CellKind::WText { .. } | CellKind::LongWText => fill!(|r| {
                let units = buf.text(r).map_err(|e| cell_err(e, r))?;
                match utf16_to_str(py, units, errors) {
                    Ok(o) => Ok(o),
                    Err(TextFailure::Python(e)) => Err(e),
                    Err(TextFailure::LoneSurrogate(at)) => Err(super::errors::data(format!(
                        "column {:?} (index {col}), row {}: malformed UTF-16 (lone surrogate 0x{:04X} at code unit {at}); \
                         set connection.decode_errors to 'replace' or 'surrogatepass' to accept it",
                        core.columns[col].desc.name,
                        row_base + r as u64,
                        units[at]
                    ))),
                }
            }),
            CellKind::Binary { .. } | CellKind::LongBinary => fill!(|r| {
                let bytes = buf.bytes(r).map_err(|e| cell_err(e, r))?;
                py_bytes(py, bytes)
            }),
        },
    }
}

/// The loop every decoder shares: NULL → None, else `make(row)`, written into slot `col`.
///
/// # Safety
/// As [`fill_column`]: rows under construction with slot `slot` empty.
#[inline(always)]
unsafe fn fill_loop(
    buf: &ColumnBuffer,
    slot: usize,
    rows: Range<usize>,
    targets: &[Slots],
    mut make: impl FnMut(usize) -> PyResult<*mut ffi::PyObject>,
) -> Result<(), CellFail> {
    for (i, r) in rows.enumerate().take(targets.len()) {
        let obj = if buf.is_null(r) {
            py_none()
        } else {
            make(r).map_err(|err| CellFail { row: r, err })?
        };
        // SAFETY: caller contract: an empty slot of an unshared row; `obj` is an owned reference
        // whose ownership moves into the slot.
        unsafe { *targets[i].add(slot) = obj };
    }
    Ok(())
}

/// One sql_variant cell, decoded as its underlying type (read into `inner` by the batch).
fn variant_value(
    py: Python<'_>,
    plan: &PyPlan,
    inner: &ColumnBuffer,
    target: Target,
) -> PyResult<*mut ffi::PyObject> {
    let mut cell: *mut ffi::PyObject = std::ptr::null_mut();
    let decoder = ColumnDecoder::Plain(inner.kind);
    // SAFETY: one empty local slot; on success it holds an owned reference, returned as is.
    unsafe { fill_with(py, plan, &decoder, inner, target, &[&mut cell]) }.map_err(|f| f.err)?;
    Ok(cell)
}

#[inline(always)]
fn py_none() -> *mut ffi::PyObject {
    // SAFETY: None is a valid static object; we return a new (counted) reference to it.
    unsafe {
        let none = ffi::Py_None();
        ffi::Py_IncRef(none);
        none
    }
}

#[inline(always)]
fn py_bool(v: bool) -> *mut ffi::PyObject {
    // SAFETY: True/False are valid static objects; we return a new reference.
    unsafe {
        let obj = if v { ffi::Py_True() } else { ffi::Py_False() };
        ffi::Py_IncRef(obj);
        obj
    }
}

#[inline(always)]
fn owned(py: Python<'_>, obj: *mut ffi::PyObject) -> PyResult<*mut ffi::PyObject> {
    if obj.is_null() {
        Err(PyErr::fetch(py))
    } else {
        Ok(obj)
    }
}

#[inline(always)]
fn py_int(py: Python<'_>, v: i64) -> PyResult<*mut ffi::PyObject> {
    // SAFETY: plain constructor; returns a new reference or NULL with an exception set.
    owned(py, unsafe { ffi::PyLong_FromLongLong(v) })
}

#[inline(always)]
fn py_float(py: Python<'_>, v: f64) -> PyResult<*mut ffi::PyObject> {
    // SAFETY: plain constructor; returns a new reference or NULL with an exception set.
    owned(py, unsafe { ffi::PyFloat_FromDouble(v) })
}

#[inline(always)]
fn py_bytes(py: Python<'_>, v: &[u8]) -> PyResult<*mut ffi::PyObject> {
    // SAFETY: copies `v.len()` bytes from a valid slice into a new bytes object.
    owned(py, unsafe {
        ffi::PyBytes_FromStringAndSize(v.as_ptr().cast(), v.len() as ffi::Py_ssize_t)
    })
}

pub(super) fn time_obj(py: Python<'_>, t: decode::Time) -> PyResult<*mut ffi::PyObject> {
    Ok(PyTime::new(
        py,
        t.hour as u8,
        t.minute as u8,
        t.second as u8,
        t.microsecond(),
        None,
    )?
    .into_ptr())
}

pub(super) fn datetime_obj(
    py: Python<'_>,
    ts: decode::Timestamp,
    tz: Option<&Bound<'_, PyTzInfo>>,
) -> PyResult<*mut ffi::PyObject> {
    Ok(PyDateTime::new(
        py,
        ts.date.year as i32,
        ts.date.month as u8,
        ts.date.day as u8,
        ts.time.hour as u8,
        ts.time.minute as u8,
        ts.time.second as u8,
        ts.time.microsecond(),
        tz,
    )?
    .into_ptr())
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
        CellKind::Numeric { .. } => match crate::decode::DecimalParts::from_numeric(buf.numeric(r))
        {
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

/// Decode rows `range` of `batch` into new `Row` objects. Returns the rows decoded and, if a cell
/// failed, the batch row that failed and its error (rows before it are returned complete).
///
/// Rows are not tracked by the cyclic GC and no value built here is a GC container (unless an
/// output converter returns one), so building a big batch starts no collection.
pub fn build_rows(
    py: Python<'_>,
    plan: &PyPlan,
    batch: &Batch,
    range: Range<usize>,
    row_base: u64,
    out: &mut Vec<Py<PyAny>>,
) -> PyResult<Option<CellFail>> {
    let (ncols, tp) = (plan.decoders.len(), plan.row_type.bind(py));
    let mut rows: Vec<Bound<'_, PyAny>> = Vec::with_capacity(range.len());
    for _ in 0..range.len() {
        let r = new_row(py, tp, &plan.schema, ncols)?;
        // SAFETY: a new row, owned by this handle (released with empty slots on any failure).
        rows.push(unsafe { Bound::from_owned_ptr(py, r) });
    }
    // SAFETY: live rows, owned above.
    let targets: Vec<Slots> = rows
        .iter()
        .map(|r| unsafe { values_of(r.as_ptr()) })
        .collect();
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
    // Rows from `good` on are incomplete: dropped here (dealloc skips their empty slots).
    out.extend(rows.into_iter().take(good).map(Bound::unbind));
    Ok(failure)
}

/// Decode batch row `row` into one `Row` (fetchone, iteration, fetchmany(1)): the same decoders
/// as [`build_rows`], without its vectors.
pub fn build_one_row(
    py: Python<'_>,
    plan: &PyPlan,
    batch: &Batch,
    row: usize,
    row_base: u64,
) -> Result<Py<PyAny>, CellFail> {
    let obj = new_row(
        py,
        plan.row_type.bind(py),
        &plan.schema,
        plan.decoders.len(),
    )
    .map_err(|err| CellFail { row, err })?;
    // SAFETY: an owned, unshared row: released by this handle if a cell fails.
    let handle = unsafe { Bound::from_owned_ptr(py, obj) };
    // SAFETY: as above.
    let slots = [unsafe { values_of(obj) }];
    for (c, buf) in batch.columns.iter().enumerate() {
        // SAFETY: unshared row, slot `c` still empty.
        unsafe { fill_column(py, plan, c, buf, row..row + 1, row_base, &slots)? };
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
    let mut cell: *mut ffi::PyObject = std::ptr::null_mut();
    // SAFETY: one empty local slot, the slot of column 0.
    unsafe {
        fill_column(
            py,
            plan,
            0,
            &batch.columns[0],
            row..row + 1,
            row_base,
            &[&mut cell],
        )?
    };
    // SAFETY: filled with an owned reference on success.
    Ok(unsafe { Bound::from_owned_ptr(py, cell) }.unbind())
}
