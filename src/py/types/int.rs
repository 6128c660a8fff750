//! The integers' Python arm: `int`.

use super::cell::{CellFail, Fill};
use crate::batch::ColumnBuffer;
use crate::params::{ArrayColumn, Put};
use crate::types::CellKind;
use pyo3::ffi;
use pyo3::prelude::*;

/// Fill an integer column's served range: one loop per bound width.
pub fn fill(f: &Fill<'_, '_>, buf: &ColumnBuffer, kind: CellKind) -> Result<(), CellFail> {
    let py = f.py;
    match kind {
        CellKind::I16 => f.each(buf, |r| int(py, buf.i16(r) as i64)),
        CellKind::I32 => f.each(buf, |r| int(py, buf.i32(r) as i64)),
        _ => f.each(buf, |r| int(py, buf.i64(r))),
    }
}

#[inline(always)]
pub fn int(py: Python<'_>, v: i64) -> PyResult<Bound<'_, PyAny>> {
    // SAFETY: a plain constructor: a new reference, or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyLong_FromLongLong(v)) }
}

/// An exact `int` into the next cell of an `executemany` parameter column (`None`: not an exact
/// int of 64 bits: the caller takes `to_param`, which makes a bool or a wider int its value).
#[inline]
pub fn param_cell(v: &Bound<'_, PyAny>, col: &mut ArrayColumn) -> Option<Put> {
    // SAFETY: a type check and a conversion of a live object, with the GIL held (`v`).
    unsafe {
        if ffi::PyLong_CheckExact(v.as_ptr()) == 0 {
            return None;
        }
        // PyLong_AsLongLongAndOverflow: about half the instructions of PyLong_AsLongLong
        // (which goes through _PyLong_AsByteArray), and no exception beyond 64 bits.
        let mut overflow = 0;
        let i = ffi::PyLong_AsLongLongAndOverflow(v.as_ptr(), &raw mut overflow);
        if overflow != 0 || (i == -1 && !ffi::PyErr_Occurred().is_null()) {
            ffi::PyErr_Clear();
            return None;
        }
        Some(col.push_int(i))
    }
}
