//! The binary Python arm: `bytes`.

use super::cell::{CellFail, Fill};
use crate::batch::ColumnBuffer;
use crate::params::{ArrayColumn, Put};
use crate::types::CellKind;
use pyo3::ffi;
use pyo3::prelude::*;

/// Fill a binary column's served range (bound or streamed alike).
pub fn fill(f: &Fill<'_, '_>, buf: &ColumnBuffer, _kind: CellKind) -> Result<(), CellFail> {
    let py = f.py;
    f.each(buf, |r| {
        let bytes = buf.bytes(r).map_err(|e| f.cut(e, r))?;
        bytes_object(py, bytes)
    })
}

#[inline(always)]
pub fn bytes_object<'py>(py: Python<'py>, v: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: copies `v.len()` bytes of a valid slice into a new bytes object (or NULL + error).
    unsafe {
        Bound::from_owned_ptr_or_err(
            py,
            ffi::PyBytes_FromStringAndSize(v.as_ptr().cast(), crate::checked::alloc_len(v.len())),
        )
    }
}

/// Exact `bytes` into the next cell of an `executemany` parameter column (`None`: another type:
/// `to_param` takes bytearray and memoryview).
#[inline]
pub fn param_cell(v: &Bound<'_, PyAny>, col: &mut ArrayColumn) -> Option<Put> {
    let b = v.cast_exact::<pyo3::types::PyBytes>().ok()?;
    Some(col.push_bytes(b.as_bytes()))
}
