//! Row factories: what each fetched row becomes, chosen once per result set from
//! `cursor.row_factory` (the per-row work only indexes decoders and builds the chosen object).
//!
//! The protocol follows sqlite3's and psycopg's row factories, with the description as the
//! argument (it is all a row needs): `factory(cursor.description)` is called once per result
//! set and returns a *maker*; the maker is called with each row's values as a tuple and returns
//! the row. Three values are recognised instead of called: `None` (`ferrodbc.Row`, the path as
//! it was), `dict` (`{name: value}`, a later column of the same name wins) and `tuple` (plain
//! tuples); `ferrodbc.LazyRow` gives lazy rows (`lazy.rs`); `_native._ListRow` the `mssql_python` face's
//! rows (`Row`s that also equal lists).

use super::decode::{CellFail, ValueGrid};
use super::lazy::{LazyRow, LazySource};
use super::plan::PyPlan;
use crate::rowset::Served;
use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::sync::Arc;

/// What `row_factory` resolved to for one result set.
pub enum RowShape {
    /// `ferrodbc.Row` (no factory): rows are built by `py::decode::build_rows` as before.
    Row,
    /// `dict`: the column names, in order, and a dict of those keys (values None) that each
    /// row's dict is copied from: a copy clones the key table (one allocation, no hashing or
    /// growing), and setting a key it holds replaces in place (a third fewer instructions than
    /// inserting into a new dict, callgrind on 100,000 mixed rows).
    Dict(Py<PyTuple>, Py<PyDict>),
    /// `tuple`: built by the direct fill, as `Row` (`py::decode::build_rows`).
    Tuple,
    /// `ferrodbc.LazyRow`, with the source of the rows served last (rows served together from
    /// one batch share it; dropped before the next fill so the batch is not pinned by it).
    Lazy(Option<Arc<LazySource>>),
    /// What `factory(description)` returned.
    Maker(Py<PyAny>),
}

/// The value for `row_factory`: None, or a callable (TypeError otherwise, at assignment).
pub fn check_factory(factory: Option<Bound<'_, PyAny>>) -> PyResult<Option<Py<PyAny>>> {
    match factory {
        None => Ok(None),
        Some(f) if f.is_callable() => Ok(Some(f.unbind())),
        Some(f) => Err(PyTypeError::new_err(format!(
            "row_factory must be None, dict, tuple, ferrodbc.LazyRow or a callable taking the \
             description, not {}",
            f.get_type().name()?
        ))),
    }
}

impl RowShape {
    /// Resolve `factory` for the result set `plan` describes (calls a user factory once).
    pub fn choose(
        py: Python<'_>,
        factory: Option<&Py<PyAny>>,
        plan: &PyPlan,
    ) -> PyResult<RowShape> {
        let Some(f) = factory.map(|f| f.bind(py)) else {
            return Ok(RowShape::Row);
        };
        if f.is(py.get_type::<PyDict>()) {
            let names = plan.schema.get().names.clone_ref(py);
            let template = PyDict::new(py);
            for name in names.bind(py).iter() {
                template.set_item(name, py.None())?;
            }
            return Ok(RowShape::Dict(names, template.unbind()));
        }
        if f.is(py.get_type::<PyTuple>()) {
            return Ok(RowShape::Tuple);
        }
        if f.is(py.get_type::<LazyRow>()) {
            return Ok(RowShape::Lazy(None));
        }
        if f.is(super::row::list_row_type(py)?) {
            // The face's rows: built as `Row`s, of the type the plan holds (see
            // `PyPlan::build`'s `list_rows`).
            return Ok(RowShape::Row);
        }
        let maker = f.call1((plan.schema.get().description.clone_ref(py),))?;
        if !maker.is_callable() {
            return Err(PyTypeError::new_err(format!(
                "row_factory(description) must return a callable of the row's values, not {}",
                maker.get_type().name()?
            )));
        }
        Ok(RowShape::Maker(maker.unbind()))
    }

    /// Let go of the batch a lazy source pins (before the row set refills: an unpinned batch is
    /// refilled in place).
    #[inline]
    pub fn release_batch(&mut self) {
        if let RowShape::Lazy(source) = self {
            *source = None;
        }
    }
}

/// Build the served rows in `shape` (dict, lazy or a maker's rows; `Row` and `tuple` are the
/// direct fill of `py::decode::build_rows`) onto `out`. As `build_rows`: a cell
/// that fails to decode, or a maker that raises, stops there; rows before it are in `out` and
/// the failure names its batch row.
pub fn build_shaped(
    py: Python<'_>,
    plan: &Arc<PyPlan>,
    shape: &mut RowShape,
    served: &Served<'_>,
    out: &mut Vec<Py<PyAny>>,
) -> PyResult<Option<CellFail>> {
    let rows = served.rows.clone();
    if let RowShape::Lazy(cached) = shape {
        let source = match cached {
            Some(s) if s.serves(plan, served) => s.clone(),
            _ => {
                let s = Arc::new(LazySource::new(plan.clone(), served));
                *cached = Some(s.clone());
                s
            }
        };
        out.reserve(rows.len());
        for r in rows {
            let row = Py::new(py, LazyRow::new(source.clone(), r))?;
            // SAFETY: a live object of a GC type, just created. Untracked as `Row`s are: a lazy
            // row refers to no Python object that could refer back to it (only its result
            // set's plan: decoders, names, description), so it can be in no cycle, and a big
            // lazy fetch starts no collections (which traversed every row: 10 % of the work).
            unsafe { ffi::PyObject_GC_UnTrack(row.as_ptr().cast()) };
            out.push(row.into_any());
        }
        return Ok(None);
    }
    let build = match shape {
        RowShape::Dict(names, template) => Build::Dict(names, template),
        RowShape::Maker(maker) => Build::Maker(maker),
        RowShape::Row | RowShape::Tuple | RowShape::Lazy(_) => {
            return Err(super::errors::InternalError::new_err(
                "rows of this shape are not built from decoded values",
            ));
        }
    };
    let (mut grid, failure) = ValueGrid::decode(py, plan, served.batch, rows.clone(), served.base);
    let columns = plan.decoders.len();
    out.reserve(grid.complete);
    for i in 0..grid.complete {
        let made = match build {
            Build::Dict(names, template) => {
                let dict = template.bind(py).copy()?;
                for (c, name) in names.bind(py).iter().enumerate() {
                    // SAFETY: row `i` is complete and each cell is taken once; the dict, name
                    // and value are live; PyDict_SetItem takes its own references, the value's
                    // owned one is released after it.
                    let failed = unsafe {
                        let v = grid.take(i, c);
                        let rc = ffi::PyDict_SetItem(dict.as_ptr(), name.as_ptr(), v);
                        ffi::Py_DecRef(v);
                        rc != 0
                    };
                    if failed {
                        return Err(PyErr::fetch(py));
                    }
                }
                Ok(dict.into_any())
            }
            Build::Maker(maker) => {
                let tuple = values_tuple(py, &mut grid, i, columns)?;
                maker.bind(py).call1((tuple,))
            }
        };
        match made {
            Ok(row) => out.push(row.unbind()),
            Err(err) => {
                return Ok(Some(CellFail {
                    row: rows.start + i,
                    err,
                }));
            }
        }
    }
    Ok(failure)
}

/// The shapes built from a [`ValueGrid`].
#[derive(Clone, Copy)]
enum Build<'a> {
    Dict(&'a Py<PyTuple>, &'a Py<PyDict>),
    Maker(&'a Py<PyAny>),
}

/// Row `i` of `grid` as a new tuple (its values moved in).
fn values_tuple<'py>(
    py: Python<'py>,
    grid: &mut ValueGrid,
    i: usize,
    columns: usize,
) -> PyResult<Bound<'py, PyTuple>> {
    // SAFETY: a new tuple of `columns` empty items, each set once below (SET_ITEM steals the
    // reference taken from the grid) before the tuple is seen by anything else.
    unsafe {
        let t = ffi::PyTuple_New(crate::checked::alloc_len(columns));
        if t.is_null() {
            return Err(PyErr::fetch(py));
        }
        for c in 0..columns {
            ffi::PyTuple_SET_ITEM(t, crate::checked::alloc_len(c), grid.take(i, c));
        }
        Ok(Bound::from_owned_ptr(py, t).cast_into_unchecked())
    }
}
