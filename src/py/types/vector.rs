//! The vector Python arm: `array.array('f')`, a float32 array that numpy takes without a copy
//! (`numpy.asarray(v)` shares its buffer through the buffer protocol), pickles, compares, and
//! lists as floats. One bytes object and one constructor call per cell.

use super::super::errors::{data, programming};
use super::binary::bytes_object;
use super::cell::{CellFail, Fill};
use crate::batch::ColumnBuffer;
use crate::params::ParamValue;
use crate::types::CellKind;
use crate::types::vector::{MAX_DIMS, element, float_bytes};
use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PyString, PyTuple};

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

/// A vector as `array('f')` (an output parameter's value).
pub fn array_of<'py>(py: Python<'py>, vals: &[f32]) -> PyResult<Bound<'py, PyAny>> {
    let (array, code) = classes(py)?;
    let bytes: Vec<u8> = vals.iter().flat_map(|f| f.to_le_bytes()).collect();
    float32_array(py, array, code, &bytes)
}

/// The Python values that are vector parameters: a 1-D buffer of float32 or float64 (an
/// `array('f')` / `array('d')`, a numpy array, a memoryview of either), or a list or tuple whose
/// first item is a number (a list of rows stays a table-valued parameter). None: not one of
/// these. Every element must be a finite number within float32's range: NaN, infinities and
/// larger numbers are a DataError, anything else in a list a ProgrammingError.
pub fn param(value: &Bound<'_, PyAny>, index: usize) -> PyResult<Option<ParamValue>> {
    let py = value.py();
    let floats: Vec<f64> = if is_sequence_of_numbers(value) {
        let mut out = Vec::with_capacity(value.len()?);
        for (i, item) in value.try_iter()?.enumerate() {
            let item = item?;
            if item.is_instance_of::<PyBool>()
                || !(item.is_instance_of::<PyFloat>() || item.is_instance_of::<PyInt>())
            {
                return Err(programming(format!(
                    "parameter {index}: vector element {i} is {}, not a number",
                    item.get_type().name()?
                )));
            }
            out.push(item.extract::<f64>()?);
        }
        out
    } else if has_buffer(value) {
        if let Ok(b) = PyBuffer::<f32>::get(value) {
            if b.dimensions() != 1 {
                return Err(shape(index, b.dimensions()));
            }
            // float32 elements are the vector's as they are (one copy), once known finite.
            return float32_param(b.to_vec(py)?, index).map(Some);
        } else if let Ok(b) = PyBuffer::<f64>::get(value) {
            if b.dimensions() != 1 {
                return Err(shape(index, b.dimensions()));
            }
            b.to_vec(py)?
        } else {
            return Ok(None);
        }
    } else {
        return Ok(None);
    };
    check_len(floats.len(), index)?;
    let vals = floats
        .iter()
        .enumerate()
        .map(|(i, &v)| element(v, i))
        .collect::<Result<Vec<f32>, String>>()
        .map_err(|why| data(format!("parameter {index}: {why}")))?;
    Ok(Some(ParamValue::Vector(vals)))
}

/// A vector of float32 elements: refused if empty, too long, or holding a NaN or an infinity.
fn float32_param(vals: Vec<f32>, index: usize) -> PyResult<ParamValue> {
    check_len(vals.len(), index)?;
    if let Some(i) = vals.iter().position(|f| !f.is_finite()) {
        let why = element(f64::from(vals[i]), i).err().unwrap_or_default();
        return Err(data(format!("parameter {index}: {why}")));
    }
    Ok(ParamValue::Vector(vals))
}

fn check_len(len: usize, index: usize) -> PyResult<()> {
    if len == 0 || len > usize::from(MAX_DIMS) {
        return Err(programming(format!(
            "parameter {index}: a vector of {len} elements (SQL Server's vectors have 1 to \
             {MAX_DIMS} dimensions)"
        )));
    }
    Ok(())
}

fn shape(index: usize, dims: usize) -> PyErr {
    programming(format!(
        "parameter {index}: a {dims}-dimensional array; a vector parameter is one-dimensional"
    ))
}

fn is_sequence_of_numbers(value: &Bound<'_, PyAny>) -> bool {
    let first = if let Ok(l) = value.cast::<PyList>() {
        l.get_item(0).ok()
    } else if let Ok(t) = value.cast::<PyTuple>() {
        t.get_item(0).ok()
    } else {
        return false;
    };
    first.is_some_and(|f| {
        !f.is_instance_of::<PyBool>()
            && (f.is_instance_of::<PyFloat>() || f.is_instance_of::<PyInt>())
    })
}

/// Whether the object exposes the buffer protocol (no exception is raised when it does not).
fn has_buffer(value: &Bound<'_, PyAny>) -> bool {
    // SAFETY: a type-slot check on a live object; the GIL is held (`Bound`).
    unsafe { pyo3::ffi::PyObject_CheckBuffer(value.as_ptr()) == 1 }
}
