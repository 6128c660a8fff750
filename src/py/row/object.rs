//! The row object's memory: its layout (a var-sized header, the shared schema, the values
//! inline), its creation and release, and the accessors every slot uses. Python-facing
//! behaviour is `mod.rs`'s (the type's slots); the fetch paths fill rows through
//! [`new_row`] and [`values_of`] (`py/decode.rs`).

use pyo3::exceptions::PyIndexError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple, PyType};
use std::ptr::null_mut;

/// Column names and description of one result set, shared by all its rows.
#[pyclass(frozen, module = "ferrodbc", name = "RowSchema")]
pub struct RowSchema {
    pub names: Py<PyTuple>,
    /// name → index; with duplicate names the last column wins (pyodbc, mssql-python).
    pub index: Py<PyDict>,
    pub description: Py<PyTuple>,
}

/// The object layout: a var-sized header (`ob_size` = number of values), the schema, the values.
#[repr(C)]
pub(super) struct RowObject {
    ob_base: ffi::PyVarObject,
    schema: *mut ffi::PyObject,
    values: [*mut ffi::PyObject; 0],
}

/// A new row of `n` values, every value slot empty (NULL), sharing `schema`: an owned
/// reference. A row whose slots are not all filled must only be released.
pub fn new_row(
    _py: Python<'_>,
    tp: &Bound<'_, PyType>,
    schema: &Py<RowSchema>,
    n: usize,
) -> PyResult<*mut ffi::PyObject> {
    let size = std::mem::size_of::<RowObject>() + n * std::mem::size_of::<*mut ffi::PyObject>();
    // SAFETY: a fresh block of `size` bytes is initialised as a `RowObject` of `n` values
    // (header by PyObject_InitVar, which also takes the reference a heap type's instance holds
    // on it; schema; NULL slots) before anything else sees it.
    unsafe {
        let obj = ffi::PyObject_Malloc(size).cast::<ffi::PyObject>();
        if obj.is_null() {
            return Err(pyo3::exceptions::PyMemoryError::new_err(
                "out of memory for a row",
            ));
        }
        ffi::PyObject_InitVar(obj.cast(), tp.as_ptr().cast(), crate::checked::alloc_len(n));
        let row = obj.cast::<RowObject>();
        ffi::Py_IncRef(schema.as_ptr());
        (*row).schema = schema.as_ptr();
        std::ptr::write_bytes(values_of(obj), 0, n);
        Ok(obj)
    }
}

/// The value slots of a row (see [`new_row`]).
///
/// # Safety
/// `row` must be a live `Row`.
#[inline(always)]
pub unsafe fn values_of(row: *mut ffi::PyObject) -> *mut *mut ffi::PyObject {
    // SAFETY: caller contract; `values` is the trailing array of the layout.
    unsafe { (*row.cast::<RowObject>()).values.as_mut_ptr() }
}

/// # Safety
/// `obj` must be a live `Row`.
pub(super) unsafe fn len_of(obj: *mut ffi::PyObject) -> usize {
    // SAFETY: caller contract.
    // A Row's ob_size is its value count, set from a usize by `new_row`: never negative.
    unsafe { (*obj.cast::<RowObject>()).ob_base.ob_size.unsigned_abs() }
}

/// # Safety
/// `obj` must be a live, complete `Row` (every slot filled).
pub(super) unsafe fn values<'a>(obj: *mut ffi::PyObject) -> &'a [*mut ffi::PyObject] {
    // SAFETY: caller contract: `len_of` initialised slots.
    unsafe { std::slice::from_raw_parts(values_of(obj), len_of(obj)) }
}

/// # Safety
/// `obj` must be a live `Row`; the GIL is held.
pub(super) unsafe fn schema<'py>(
    py: Python<'py>,
    obj: *mut ffi::PyObject,
) -> Bound<'py, RowSchema> {
    // SAFETY: caller contract; every row holds a strong reference to a `RowSchema`.
    unsafe { Bound::from_borrowed_ptr(py, (*obj.cast::<RowObject>()).schema).cast_into_unchecked() }
}

/// The values as a new tuple (for repr, hash, comparison, slicing, iteration, pickling).
///
/// # Safety
/// `obj` must be a live, complete `Row`; the GIL is held.
pub(super) unsafe fn as_tuple<'py>(
    py: Python<'py>,
    obj: *mut ffi::PyObject,
) -> PyResult<Bound<'py, PyTuple>> {
    // SAFETY: caller contract; the values are borrowed for the copy.
    let vals = unsafe { values(obj) };
    let items = vals
        .iter()
        // SAFETY: every slot holds a live object.
        .map(|&v| unsafe { Bound::from_borrowed_ptr(py, v) });
    PyTuple::new(py, items)
}

/// Index of column `name`, if there is one.
pub(super) fn column_index(
    py: Python<'_>,
    schema: &Bound<'_, RowSchema>,
    name: &Bound<'_, PyAny>,
) -> PyResult<Option<usize>> {
    match schema.get().index.bind(py).get_item(name)? {
        // A map built by `Row(...)` from Python may point anywhere: negative is out of range.
        Some(i) => usize::try_from(i.extract::<isize>()?)
            .map(Some)
            .map_err(|_| PyIndexError::new_err("row index out of range")),
        None => Ok(None),
    }
}

/// Run a slot body, turning a `PyErr` into the C convention (exception set, NULL returned).
pub(super) fn trap(
    body: impl FnOnce(Python<'_>) -> PyResult<*mut ffi::PyObject>,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls type slots with the GIL held.
    let py = unsafe { Python::assume_attached() };
    match body(py) {
        Ok(obj) => obj,
        Err(e) => {
            e.restore(py);
            null_mut()
        }
    }
}

pub(super) unsafe extern "C" fn row_dealloc(obj: *mut ffi::PyObject) {
    // SAFETY: CPython deallocates a Row exactly once, when its count reaches zero; the slots and
    // schema are owned references (or NULL for a row that failed half-built).
    unsafe {
        let row = obj.cast::<RowObject>();
        for i in 0..len_of(obj) {
            let v = *values_of(obj).add(i);
            if !v.is_null() {
                ffi::Py_DecRef(v);
            }
        }
        if !(*row).schema.is_null() {
            ffi::Py_DecRef((*row).schema);
        }
        let tp = ffi::Py_TYPE(obj);
        ffi::PyObject_Free(obj.cast());
        // Instances of heap types hold a reference to their type (taken by PyObject_InitVar).
        ffi::Py_DecRef(tp.cast());
    }
}

/// The value at `i` (negative counts from the end), or IndexError.
///
/// # Safety
/// `obj` must be a live, complete `Row`.
pub(super) unsafe fn item(obj: *mut ffi::PyObject, i: isize) -> PyResult<*mut ffi::PyObject> {
    // SAFETY: caller contract.
    let vals = unsafe { values(obj) };
    let j = if i < 0 {
        i + crate::checked::alloc_len(vals.len())
    } else {
        i
    };
    let Some(j) = usize::try_from(j).ok().filter(|&j| j < vals.len()) else {
        return Err(PyIndexError::new_err("row index out of range"));
    };
    let v = vals[j];
    // SAFETY: a live object; the caller receives a new reference.
    unsafe { ffi::Py_IncRef(v) };
    Ok(v)
}
