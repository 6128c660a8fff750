//! The integers' Python arm: `int`.

use super::cell::{CellFail, Fill};
use crate::batch::ColumnBuffer;
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
