//! `executemany`'s rows, each read where its values already are: a tuple's items and a
//! ferrodbc `Row`'s (or the `mssql_python` face's row's) value slots are used in place; only a
//! list (or another sequence type pyodbc accepts) is copied into a tuple first.
//!
//! A Row used to be copied by `PySequence_Tuple` (its iterator makes a tuple, and the copy is
//! another): about 1.3k instructions a row, a fifth of `executemany_rows`. Tuples and Rows are
//! immutable, so their value slots cannot move or change while the row is held, even if a
//! value's conversion runs Python code; a list can, hence its copy.

use crate::py::errors::programming;
use crate::py::row::{list_row_type, row_type, values_of};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

/// One row of parameters: an exact tuple (the row itself, or the tuple copy of a list) or a
/// Row of either type, whose value slots are read in place. One pointer, as the tuples were:
/// a million rows' list of these is 8 MB, not three times that.
pub(super) struct ParamRow<'py> {
    owner: Bound<'py, PyAny>,
}

impl<'py> ParamRow<'py> {
    /// The row's values, in parameter order.
    #[inline(always)]
    pub(super) fn values(&self) -> &[Bound<'py, PyAny>] {
        let p = self.owner.as_ptr();
        // SAFETY: `owner` is an exact tuple or a complete Row (the constructors), alive for
        // `&self`. Both keep `ob_size` values inline (a tuple's `ob_item`, a Row's trailing
        // slots), which never change: tuples and Rows are immutable. `Bound<PyAny>` has the
        // layout of `*mut ffi::PyObject`, and each slot holds a strong reference owned by
        // `owner`, so borrowing them as `&Bound` for `&self`'s lifetime is sound.
        unsafe {
            let len = ffi::Py_SIZE(p).unsigned_abs();
            let items = if ffi::PyTuple_CheckExact(p) != 0 {
                (*p.cast::<ffi::PyTupleObject>()).ob_item.as_ptr()
            } else {
                values_of(p).cast_const()
            };
            std::slice::from_raw_parts(items.cast(), len)
        }
    }

    fn len(&self) -> usize {
        // SAFETY: a live object; tuples and Rows keep their length in `ob_size`.
        unsafe { ffi::Py_SIZE(self.owner.as_ptr()).unsigned_abs() }
    }

    /// The object the values are read from (a tuple or a Row), for the general way.
    pub(super) fn as_any(&self) -> &Bound<'py, PyAny> {
        &self.owner
    }

    /// `t` must be an exact tuple (`values` tells the two kinds apart by that).
    fn of_tuple(t: Bound<'py, PyTuple>) -> ParamRow<'py> {
        debug_assert!(t.is_exact_instance_of::<PyTuple>());
        ParamRow {
            owner: t.into_any(),
        }
    }

    /// # Safety
    /// `row` must be a ferrodbc Row (either type), as every Row Python code can reach is:
    /// complete, every slot filled.
    unsafe fn of_row(row: Bound<'py, PyAny>) -> ParamRow<'py> {
        ParamRow { owner: row }
    }
}

/// What a parameter row's type says about reading it, looked up once per call.
struct RowTypes {
    row: *mut ffi::PyTypeObject,
    list_row: *mut ffi::PyTypeObject,
}

/// `executemany`'s rows, each of `markers` values.
pub(super) fn param_rows<'py>(
    py: Python<'py>,
    seq_of_params: &Bound<'py, PyAny>,
    markers: usize,
) -> PyResult<Vec<ParamRow<'py>>> {
    let types = RowTypes {
        row: row_type(py)?.as_ptr().cast(),
        list_row: list_row_type(py)?.as_ptr().cast(),
    };
    let mut rows = Vec::with_capacity(seq_of_params.len().unwrap_or(0));
    // A list (the common case) by index, without an iterator object's calls.
    let list = seq_of_params.cast_exact::<PyList>().ok();
    let mut items = match list {
        Some(_) => None,
        None => Some(seq_of_params.try_iter()?),
    };
    let mut i = 0;
    loop {
        let row = match (&list, &mut items) {
            (Some(l), _) => match l.get_item(i) {
                Ok(row) => row,
                Err(_) => break,
            },
            (None, Some(it)) => match it.next() {
                Some(row) => row?,
                None => break,
            },
            (None, None) => break,
        };
        i += 1;
        let row = param_row(py, row, &types)?;
        if row.len() != markers {
            return Err(programming(format!(
                "The SQL contains {markers} parameter markers, but {} parameters were supplied",
                row.len()
            )));
        }
        rows.push(row);
    }
    Ok(rows)
}

/// One row, in place where its type allows.
#[inline]
fn param_row<'py>(
    py: Python<'py>,
    row: Bound<'py, PyAny>,
    types: &RowTypes,
) -> PyResult<ParamRow<'py>> {
    let row = match row.cast_into_exact::<PyTuple>() {
        Ok(t) => return Ok(ParamRow::of_tuple(t)),
        Err(e) => e.into_inner(),
    };
    // SAFETY: a live object's type pointer.
    let tp = unsafe { ffi::Py_TYPE(row.as_ptr()) };
    if tp == types.row || tp == types.list_row {
        // SAFETY: exactly one of the two Row types (both final: no subclass shares the check).
        return Ok(unsafe { ParamRow::of_row(row) });
    }
    if !super::execute::is_param_row(py, &row)? {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "executemany: each row of parameters must be a tuple, list or Row, not {}",
            row.get_type().name()?
        )));
    }
    // SAFETY: tuple(row) of a live object (a list or a tuple subclass), the GIL held: a new
    // reference to a tuple, or NULL with an exception set.
    let t = unsafe {
        Bound::from_owned_ptr_or_err(py, ffi::PySequence_Tuple(row.as_ptr()))?
            .cast_into_unchecked::<PyTuple>()
    };
    Ok(ParamRow::of_tuple(t))
}
