//! bit's Python arm: `bool`.

use super::cell::{CellFail, Fill};
use crate::batch::ColumnBuffer;
use crate::params::{ArrayColumn, Put};
use crate::types::CellKind;
use pyo3::prelude::*;

/// Fill a bit column's served range.
pub fn fill(f: &Fill<'_, '_>, buf: &ColumnBuffer, _kind: CellKind) -> Result<(), CellFail> {
    let py = f.py;
    f.each(buf, |r| Ok(boolean(py, buf.bit(r))))
}

#[inline(always)]
pub fn boolean(py: Python<'_>, v: bool) -> Bound<'_, PyAny> {
    pyo3::types::PyBool::new(py, v).to_owned().into_any()
}

/// A `bool` into the next cell of an `executemany` parameter column (`None`: another type).
#[inline]
pub fn param_cell(v: &Bound<'_, PyAny>, col: &mut ArrayColumn) -> Option<Put> {
    let b = v.cast::<pyo3::types::PyBool>().ok()?;
    Some(col.push_bool(b.is_true()))
}
