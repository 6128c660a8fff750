//! The vector Python arm: `array.array('f')`, a float32 array that numpy takes without a copy
//! (`numpy.asarray(v)` shares its buffer through the buffer protocol), pickles, compares, and
//! lists as floats. One bytes object and one constructor call per cell.

use super::binary::bytes_object;
use super::cell::{CellFail, Fill};
use crate::batch::ColumnBuffer;
use crate::types::CellKind;
use crate::types::vector::float_bytes;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyString;

static ARRAY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static TYPECODE: PyOnceLock<Py<PyString>> = PyOnceLock::new();

/// Fill a vector column's served range.
pub fn fill(f: &Fill<'_, '_>, buf: &ColumnBuffer, kind: CellKind) -> Result<(), CellFail> {
    let py = f.py;
    let CellKind::Vector { dims } = kind else {
        return Ok(());
    };
    let (array, code) = match classes(py) {
        Ok(c) => c,
        Err(err) => return Err(CellFail { row: 0, err }),
    };
    f.each(buf, |r| {
        let cell = buf.bytes(r).map_err(|e| f.cut(e, r))?;
        let floats = float_bytes(cell, dims).map_err(|why| f.fail(r, why))?;
        float32_array(py, array, code, floats)
    })
}

fn classes(py: Python<'_>) -> PyResult<(&Bound<'_, PyAny>, &Bound<'_, PyString>)> {
    let array = ARRAY.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(py.import("array")?.getattr("array")?.unbind())
    })?;
    let code = TYPECODE.get_or_init(py, || PyString::new(py, "f").unbind());
    Ok((array.bind(py), code.bind(py)))
}

/// `array('f', <the little-endian float bytes>)` (the platform is little-endian: checked at
/// compile time below).
pub fn float32_array<'py>(
    py: Python<'py>,
    array: &Bound<'py, PyAny>,
    code: &Bound<'py, PyString>,
    le_floats: &[u8],
) -> PyResult<Bound<'py, PyAny>> {
    array.call1((code, bytes_object(py, le_floats)?))
}

const _: () = assert!(
    cfg!(target_endian = "little"),
    "vector cells are little-endian floats"
);
