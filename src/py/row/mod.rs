//! `Row`: what every fetch returns. One allocation per row: the values inline after a pointer to
//! the result set's shared schema (names, name → index map, description), built once per plan.
//!
//! A tuple plus a PyO3 object per row cost two allocations, a GC link and unlink each and an
//! atomic count on the schema (about 450 instructions a row, callgrind on fetchall); this type is
//! written against the C API instead, like pyodbc's `Row`. It is not tracked by the cyclic GC:
//! big fetches do not make collections slower (the trap that doubled turbodbc's fetchall time).
//! Values are atomic (int, str, Decimal, ...) unless an output converter returns containers; a
//! cycle through a row then needs a value mutated to point back at it, and would leak, as with
//! pyodbc's rows.
//!
//! Here: the two row types (`ferrodbc.Row`, the `mssql_python` face's `Row`) and what Python
//! can do with a row (the type's slots, methods and getters); `object.rs`: the row's memory
//! (layout, creation, release, accessors).

mod object;

pub use object::{RowSchema, new_row, values_of};

use super::cache;
use object::{RowObject, as_tuple, column_index, item, len_of, row_dealloc, schema, trap, values};
use pyo3::exceptions::{PyAttributeError, PyKeyError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};
use std::ffi::{CStr, c_int, c_void};
use std::ptr::null_mut;

static ROW_TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static LIST_ROW_TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// The `ferrodbc.Row` type, created once per process.
pub fn row_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    ROW_TYPE
        .get_or_try_init(py, || create_type(py, c"ferrodbc.Row", row_richcompare))
        .map(|t| t.bind(py))
}

/// The `mssql_python` face's row type: the same object as `ferrodbc.Row` (layout, slots,
/// methods) except that it also equals the list of its values, as mssql-python's rows do.
/// A sibling type, not a subclass (`Row` is final): `is_row` recognises both.
pub fn list_row_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    LIST_ROW_TYPE
        .get_or_try_init(py, || {
            create_type(py, c"ferrodbc.mssql_python.Row", list_row_richcompare)
        })
        .map(|t| t.bind(py))
}

/// Whether `obj` is a row of either type (`ferrodbc.Row`, the face's `Row`).
pub fn is_row(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(obj.is_instance(row_type(py)?)? || obj.is_instance(list_row_type(py)?)?)
}

unsafe extern "C" fn row_length(obj: *mut ffi::PyObject) -> ffi::Py_ssize_t {
    // SAFETY: CPython passes a live Row.
    unsafe { crate::checked::alloc_len(len_of(obj)) }
}

unsafe extern "C" fn row_sq_item(
    obj: *mut ffi::PyObject,
    i: ffi::Py_ssize_t,
) -> *mut ffi::PyObject {
    // SAFETY: CPython passes a live, complete Row.
    trap(|_| unsafe { item(obj, i) })
}

unsafe extern "C" fn row_subscript(
    obj: *mut ffi::PyObject,
    key: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    trap(|py| {
        // SAFETY: CPython passes a live Row and a live key.
        let key = unsafe { Bound::from_borrowed_ptr(py, key) };
        if let Ok(i) = key.extract::<isize>() {
            // SAFETY: as above.
            return unsafe { item(obj, i) };
        }
        if let Ok(slice) = key.cast::<pyo3::types::PySlice>() {
            // SAFETY: as above.
            let t = unsafe { as_tuple(py, obj) }?;
            // A slice covering the whole row is the row itself (pyodbc: `row[:] is row`).
            let whole = slice.indices(crate::checked::alloc_len(t.len()))?;
            if whole.start == 0
                && whole.step == 1
                && whole.stop == crate::checked::alloc_len(t.len())
            {
                // SAFETY: a live object; the caller receives a new reference.
                unsafe { ffi::Py_IncRef(obj) };
                return Ok(obj);
            }
            return Ok(t.as_any().get_item(key)?.into_ptr());
        }
        if key.is_instance_of::<PyString>() {
            // SAFETY: as above.
            let s = unsafe { schema(py, obj) };
            return match column_index(py, &s, &key)? {
                // SAFETY: as above.
                Some(i) => unsafe { item(obj, crate::checked::alloc_len(i)) },
                None => Err(PyKeyError::new_err(key.unbind())),
            };
        }
        Err(PyTypeError::new_err(
            "row indices must be integers, slices or column names",
        ))
    })
}

/// Attributes: column names first (as pyodbc), then the row's own members, then AttributeError.
unsafe extern "C" fn row_getattro(
    obj: *mut ffi::PyObject,
    name: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    trap(|py| {
        // SAFETY: CPython passes a live Row and a live name.
        let name_b = unsafe { Bound::from_borrowed_ptr(py, name) };
        // SAFETY: as above.
        let s = unsafe { schema(py, obj) };
        if let Some(i) = column_index(py, &s, &name_b)? {
            // SAFETY: as above.
            return unsafe { item(obj, crate::checked::alloc_len(i)) };
        }
        // SAFETY: generic lookup of the type's methods and getters on a live object.
        let found = unsafe { ffi::PyObject_GenericGetAttr(obj, name) };
        if !found.is_null() {
            return Ok(found);
        }
        let err = PyErr::fetch(py);
        if err.is_instance_of::<PyAttributeError>(py) {
            Err(PyAttributeError::new_err(format!(
                "Row has no column named {name_b}"
            )))
        } else {
            Err(err)
        }
    })
}

/// Rows are read-only: assigning a column is an AttributeError, deleting one a TypeError (as
/// pyodbc raises for deletion); other attribute names get the generic behaviour.
unsafe extern "C" fn row_setattro(
    obj: *mut ffi::PyObject,
    name: *mut ffi::PyObject,
    value: *mut ffi::PyObject,
) -> c_int {
    // SAFETY: CPython calls slots with the GIL held, on a live Row and a live name.
    let py = unsafe { Python::assume_attached() };
    // SAFETY: as above.
    let name_b = unsafe { Bound::from_borrowed_ptr(py, name) };
    // SAFETY: as above.
    let s = unsafe { schema(py, obj) };
    let is_column = s.get().index.bind(py).contains(&name_b);
    match is_column {
        Ok(true) if value.is_null() => {
            PyTypeError::new_err(format!("Row columns cannot be deleted ({name_b})")).restore(py);
            -1
        }
        Ok(true) => {
            PyAttributeError::new_err(format!("Row columns are read-only ({name_b})")).restore(py);
            -1
        }
        // SAFETY: generic attribute assignment on a live object (raises AttributeError: a Row
        // has no instance dict).
        Ok(false) => unsafe { ffi::PyObject_GenericSetAttr(obj, name, value) },
        Err(e) => {
            e.restore(py);
            -1
        }
    }
}

/// `Row(description, name_map, *values)`, as pyodbc's Row can be built: `description` is a
/// `cursor.description`-like sequence, `name_map` maps each column name to its index.
unsafe extern "C" fn row_new(
    tp: *mut ffi::PyTypeObject,
    args: *mut ffi::PyObject,
    kwargs: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    trap(|py| {
        if !kwargs.is_null() {
            // SAFETY: a live dict when not NULL.
            let kw = unsafe { Bound::from_borrowed_ptr(py, kwargs) };
            if kw.len()? > 0 {
                return Err(PyTypeError::new_err("Row() takes no keyword arguments"));
            }
        }
        // SAFETY: CPython passes the positional arguments as a live tuple.
        let args = unsafe { Bound::from_borrowed_ptr(py, args) }.cast_into::<PyTuple>()?;
        if args.len() < 2 {
            return Err(PyTypeError::new_err(
                "Row(description, name_map, *values): description and name_map are required",
            ));
        }
        let description = PyTuple::new(
            py,
            args.get_item(0)?
                .try_iter()?
                .collect::<PyResult<Vec<_>>>()?,
        )?;
        let map = args
            .get_item(1)?
            .cast_into::<PyDict>()
            .map_err(|_| PyTypeError::new_err("Row(): name_map must be a dict"))?;
        let values: Vec<Bound<'_, PyAny>> = args.iter().skip(2).collect();
        let mut names: Vec<(isize, Bound<'_, PyAny>)> = Vec::new();
        for (name, index) in map.iter() {
            names.push((index.extract::<isize>()?, name));
        }
        names.sort_by_key(|(i, _)| *i);
        let schema = Py::new(
            py,
            RowSchema {
                names: PyTuple::new(py, names.into_iter().map(|(_, n)| n))?.unbind(),
                index: map.copy()?.unbind(),
                description: description.unbind(),
            },
        )?;
        // SAFETY: `tp` is this Row type (or a subtype CPython checked), alive for the call.
        let tp = unsafe { Bound::from_borrowed_ptr(py, tp.cast()) }.cast_into::<PyType>()?;
        let row = new_row(py, &tp, &schema, values.len())?;
        for (i, v) in values.into_iter().enumerate() {
            // SAFETY: `row` was just made with `values.len()` empty slots; each gets an owned
            // reference.
            unsafe { *values_of(row).add(i) = v.into_ptr() };
        }
        Ok(row)
    })
}

unsafe extern "C" fn row_richcompare(
    a: *mut ffi::PyObject,
    b: *mut ffi::PyObject,
    op: c_int,
) -> *mut ffi::PyObject {
    trap(|py| {
        // SAFETY: CPython passes a live Row `a` and a live `b`.
        let other = unsafe { Bound::from_borrowed_ptr(py, b) };
        let other_values = if is_row(py, &other)? {
            // SAFETY: `b` is a Row.
            unsafe { as_tuple(py, b) }?.into_any()
        } else if other.is_instance_of::<PyTuple>() {
            other
        } else {
            return Ok(py.NotImplemented().into_ptr());
        };
        // SAFETY: `a` is a live Row.
        let mine = unsafe { as_tuple(py, a) }?;
        // SAFETY: both operands are live; `op` is the comparison CPython asked for.
        let r = unsafe { ffi::PyObject_RichCompare(mine.as_ptr(), other_values.as_ptr(), op) };
        if r.is_null() {
            Err(PyErr::fetch(py))
        } else {
            Ok(r)
        }
    })
}

/// The face's rows: a list of the same values is equal (mssql-python's rule, `row == [1, "x"]`);
/// lists are not ordered against rows. Everything else as `ferrodbc.Row`.
unsafe extern "C" fn list_row_richcompare(
    a: *mut ffi::PyObject,
    b: *mut ffi::PyObject,
    op: c_int,
) -> *mut ffi::PyObject {
    // SAFETY: CPython passes live operands; `PyList_Check` only reads the type.
    let is_list = unsafe { ffi::PyList_Check(b) } != 0;
    if !is_list || (op != ffi::Py_EQ && op != ffi::Py_NE) {
        // SAFETY: the same call CPython made, passed on.
        return unsafe { row_richcompare(a, b, op) };
    }
    trap(|py| {
        // SAFETY: `b` is a live list, `a` a live row (of this type).
        let other = unsafe { ffi::PyList_AsTuple(b) };
        if other.is_null() {
            return Err(PyErr::fetch(py));
        }
        // SAFETY: `other` is the new reference just made.
        let other = unsafe { Bound::from_owned_ptr(py, other) };
        // SAFETY: `a` is a live row.
        let mine = unsafe { as_tuple(py, a) }?;
        // SAFETY: both operands are live; `op` is EQ or NE.
        let r = unsafe { ffi::PyObject_RichCompare(mine.as_ptr(), other.as_ptr(), op) };
        if r.is_null() {
            Err(PyErr::fetch(py))
        } else {
            Ok(r)
        }
    })
}

unsafe extern "C" fn row_hash(obj: *mut ffi::PyObject) -> ffi::Py_hash_t {
    // SAFETY: CPython calls slots with the GIL held, on a live Row.
    let py = unsafe { Python::assume_attached() };
    // SAFETY: as above.
    match unsafe { as_tuple(py, obj) }.and_then(|t| t.hash()) {
        Ok(h) => h,
        Err(e) => {
            e.restore(py);
            -1
        }
    }
}

unsafe extern "C" fn row_repr(obj: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: CPython passes a live, complete Row.
    trap(|py| Ok(unsafe { as_tuple(py, obj) }?.repr()?.into_ptr()))
}

unsafe extern "C" fn row_iter(obj: *mut ffi::PyObject) -> *mut ffi::PyObject {
    trap(|py| {
        // SAFETY: CPython passes a live, complete Row.
        Ok(unsafe { as_tuple(py, obj) }?
            .as_any()
            .try_iter()?
            .into_ptr())
    })
}

unsafe extern "C" fn row_contains(obj: *mut ffi::PyObject, value: *mut ffi::PyObject) -> c_int {
    // SAFETY: CPython calls slots with the GIL held, on a live Row and a live value.
    unsafe {
        for &v in values(obj) {
            match ffi::PyObject_RichCompareBool(v, value, ffi::Py_EQ) {
                0 => {}
                r => return r, // 1: found; -1: error set
            }
        }
    }
    0
}

/// `__reduce__`: rows pickle (and copy) as a plain tuple of the values.
unsafe extern "C" fn row_reduce(
    obj: *mut ffi::PyObject,
    _: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    trap(|py| {
        // SAFETY: CPython passes a live, complete Row.
        let t = unsafe { as_tuple(py, obj) }?;
        Ok((py.get_type::<PyTuple>(), (t,))
            .into_pyobject(py)?
            .into_ptr())
    })
}

/// `_tuple()`: the values as a plain tuple.
unsafe extern "C" fn row_tuple(
    obj: *mut ffi::PyObject,
    _: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython passes a live, complete Row.
    trap(|py| Ok(unsafe { as_tuple(py, obj) }?.into_ptr()))
}

/// `_mapping`: a read-only mapping of column name → value (`dict(row._mapping)`).
unsafe extern "C" fn row_mapping(obj: *mut ffi::PyObject, _: *mut c_void) -> *mut ffi::PyObject {
    trap(|py| {
        // SAFETY: CPython passes a live, complete Row.
        let (s, vals) = unsafe { (schema(py, obj), values(obj)) };
        let dict = PyDict::new(py);
        for (name, &v) in s.get().names.bind(py).iter().zip(vals) {
            // SAFETY: a live value, borrowed for the insertion.
            dict.set_item(name, unsafe { Bound::from_borrowed_ptr(py, v) })?;
        }
        Ok(cache::mapping_proxy_type(py)?.call1((dict,))?.into_ptr())
    })
}

/// `cursor_description`: the `cursor.description` of the result set (pyodbc).
unsafe extern "C" fn row_description(
    obj: *mut ffi::PyObject,
    _: *mut c_void,
) -> *mut ffi::PyObject {
    trap(|py| {
        // SAFETY: CPython passes a live Row.
        Ok(unsafe { schema(py, obj) }
            .get()
            .description
            .clone_ref(py)
            .into_ptr())
    })
}

/// `_fields`: the column names, in order (like a namedtuple's).
unsafe extern "C" fn row_fields(obj: *mut ffi::PyObject, _: *mut c_void) -> *mut ffi::PyObject {
    trap(|py| {
        // SAFETY: CPython passes a live Row.
        Ok(unsafe { schema(py, obj) }
            .get()
            .names
            .clone_ref(py)
            .into_ptr())
    })
}

type RichCompare =
    unsafe extern "C" fn(*mut ffi::PyObject, *mut ffi::PyObject, c_int) -> *mut ffi::PyObject;

fn create_type(
    py: Python<'_>,
    name: &'static CStr,
    richcompare: RichCompare,
) -> PyResult<Py<PyType>> {
    // Method and getter tables must outlive the type (one per process): leaked on purpose. The
    // spec and its slot array are read by PyType_FromSpec only (it keeps `spec.name`, a static
    // literal); leaked too, they were the one block memcheck found "definitely lost".
    let methods: &'static mut [ffi::PyMethodDef] = Box::leak(Box::new([
        ffi::PyMethodDef {
            ml_name: c"__reduce__".as_ptr(),
            ml_meth: ffi::PyMethodDefPointer {
                PyCFunction: row_reduce,
            },
            ml_flags: ffi::METH_NOARGS,
            ml_doc: c"Pickle and copy as a plain tuple of the values.".as_ptr(),
        },
        ffi::PyMethodDef {
            ml_name: c"_tuple".as_ptr(),
            ml_meth: ffi::PyMethodDefPointer {
                PyCFunction: row_tuple,
            },
            ml_flags: ffi::METH_NOARGS,
            ml_doc: c"The values as a plain tuple.".as_ptr(),
        },
        ffi::PyMethodDef::zeroed(),
    ]));
    let getsets: &'static mut [ffi::PyGetSetDef] = Box::leak(Box::new([
        ffi::PyGetSetDef {
            name: c"_mapping".as_ptr(),
            get: Some(row_mapping),
            set: None,
            doc: c"A read-only mapping of column name to value.".as_ptr(),
            closure: null_mut(),
        },
        ffi::PyGetSetDef {
            name: c"cursor_description".as_ptr(),
            get: Some(row_description),
            set: None,
            doc: c"The cursor.description of the result set this row came from.".as_ptr(),
            closure: null_mut(),
        },
        ffi::PyGetSetDef {
            name: c"_fields".as_ptr(),
            get: Some(row_fields),
            set: None,
            doc: c"Column names, in order.".as_ptr(),
            closure: null_mut(),
        },
        ffi::PyGetSetDef::default(),
    ]));
    let slot = |slot: c_int, pfunc: *mut c_void| ffi::PyType_Slot { slot, pfunc };
    let mut slots = [
        slot(
            ffi::Py_tp_doc,
            c"A fetched row: a tuple of the values, addressable by column name.".as_ptr()
                as *mut c_void,
        ),
        slot(ffi::Py_tp_dealloc, row_dealloc as *mut c_void),
        slot(ffi::Py_tp_repr, row_repr as *mut c_void),
        slot(ffi::Py_tp_hash, row_hash as *mut c_void),
        slot(ffi::Py_tp_richcompare, richcompare as *mut c_void),
        slot(ffi::Py_tp_iter, row_iter as *mut c_void),
        slot(ffi::Py_tp_getattro, row_getattro as *mut c_void),
        slot(ffi::Py_tp_setattro, row_setattro as *mut c_void),
        slot(ffi::Py_tp_new, row_new as *mut c_void),
        slot(ffi::Py_sq_length, row_length as *mut c_void),
        slot(ffi::Py_sq_item, row_sq_item as *mut c_void),
        slot(ffi::Py_sq_contains, row_contains as *mut c_void),
        slot(ffi::Py_mp_length, row_length as *mut c_void),
        slot(ffi::Py_mp_subscript, row_subscript as *mut c_void),
        slot(ffi::Py_tp_methods, methods.as_mut_ptr().cast()),
        slot(ffi::Py_tp_getset, getsets.as_mut_ptr().cast()),
        slot(0, null_mut()),
    ];
    let mut spec = ffi::PyType_Spec {
        name: name.as_ptr(),
        // A few dozen bytes and one pointer: far inside a C int.
        basicsize: c_int::try_from(std::mem::size_of::<RowObject>()).unwrap_or(c_int::MAX),
        itemsize: c_int::try_from(std::mem::size_of::<*mut ffi::PyObject>()).unwrap_or(c_int::MAX),
        // The type flags are bits below 2^32 (PyType_Spec.flags is a C unsigned int).
        flags: u32::try_from(
            ffi::Py_TPFLAGS_DEFAULT | ffi::Py_TPFLAGS_IMMUTABLETYPE | ffi::Py_TPFLAGS_SEQUENCE,
        )
        .unwrap_or(0),
        slots: slots.as_mut_ptr(),
    };
    // SAFETY: the spec and its slots are valid for the call, which copies them; what the type
    // keeps pointing to (the name literal, the method and getset tables) is 'static; the slot
    // functions have the signatures CPython expects for their slots.
    let tp = unsafe { ffi::PyType_FromSpec(&raw mut spec) };
    if tp.is_null() {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: a new reference to the type object just created.
    Ok(unsafe { Bound::from_owned_ptr(py, tp).cast_into_unchecked::<PyType>() }.unbind())
}
