//! The floating-point Python arm: `float` (REAL widened exactly, as pyodbc does).

use super::cell::{CellFail, Fill};
use crate::batch::ColumnBuffer;
use crate::params::{ArrayColumn, Put};
use crate::types::CellKind;
use pyo3::ffi;
use pyo3::prelude::*;

/// Fill a floating-point column's served range.
pub fn fill(f: &Fill<'_, '_>, buf: &ColumnBuffer, kind: CellKind) -> Result<(), CellFail> {
    let py = f.py;
    match kind {
        CellKind::F32 => f.each(buf, |r| float(py, buf.f32(r) as f64)),
        _ => f.each(buf, |r| float(py, buf.f64(r))),
    }
}

#[inline(always)]
pub fn float(py: Python<'_>, v: f64) -> PyResult<Bound<'_, PyAny>> {
    // SAFETY: a plain constructor: a new reference, or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyFloat_FromDouble(v)) }
}

/// An exact `float` into the next cell of an `executemany` parameter column (`None`: another
/// type: the caller takes `to_param`).
#[inline]
pub fn param_cell(v: &Bound<'_, PyAny>, col: &mut ArrayColumn) -> Option<Put> {
    // SAFETY: a type check, then the double of a float object, with the GIL held (`v`).
    unsafe {
        if ffi::PyFloat_CheckExact(v.as_ptr()) == 0 {
            return None;
        }
        Some(col.push_float(ffi::PyFloat_AS_DOUBLE(v.as_ptr())))
    }
}
