//! `LazyRow` (`cursor.row_factory = ferrodbc.LazyRow`): a row whose cells are decoded only when
//! read, straight from the row array it was served from, and whose undecoded cells can be read
//! as the driver delivered them (`raw`).
//!
//! A lazy row pins its batch (an `Arc` on the row set's buffer): the row set never refills a
//! pinned batch, it takes a fresh buffer instead (`rowset`), so the row stays valid after the
//! cursor fetches on, executes again, closes or is collected. It also keeps the Python plan of
//! its result set, so it decodes with the converters and settings in force when it was fetched
//! (as an eager row, whose values were decoded then); converters changed later apply to rows
//! fetched later. Nothing is cached: each read decodes the cell again (a new object each time).

use super::decode::decode_cell;
use super::plan::PyPlan;
use crate::batch::{Batch, RawCell};
use crate::rowset::Served;
use pyo3::basic::CompareOp;
use pyo3::exceptions::{PyAttributeError, PyIndexError, PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PySlice, PyString, PyTuple};
use std::sync::Arc;

/// What the lazy rows served together from one batch share.
pub struct LazySource {
    plan: Arc<PyPlan>,
    batch: Arc<Batch>,
    /// Result-set position of batch row 0 (error messages name the row).
    base: u64,
}

impl LazySource {
    pub fn new(plan: Arc<PyPlan>, served: &Served<'_>) -> LazySource {
        LazySource {
            plan,
            batch: served.batch.clone(),
            base: served.base,
        }
    }

    /// Whether rows `served` can share this source (same plan, batch and position).
    pub fn serves(&self, plan: &Arc<PyPlan>, served: &Served<'_>) -> bool {
        Arc::ptr_eq(&self.plan, plan)
            && Arc::ptr_eq(&self.batch, served.batch)
            && self.base == served.base
    }
}

/// A fetched row decoded cell by cell when read. Indexing, names, iteration, comparison and
/// pickling behave as for `ferrodbc.Row` (pickled as a tuple of the decoded values).
#[pyclass(frozen, module = "ferrodbc", name = "LazyRow")]
pub struct LazyRow {
    source: Arc<LazySource>,
    /// The row's index in its batch.
    row: usize,
}

impl LazyRow {
    pub fn new(source: Arc<LazySource>, row: usize) -> LazyRow {
        LazyRow { source, row }
    }

    fn columns(&self) -> usize {
        self.source.plan.decoders.len()
    }

    /// The column a key names: an index (negative from the end) or a column name.
    fn column(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<usize> {
        if let Ok(i) = key.extract::<isize>() {
            let n = crate::checked::alloc_len(self.columns());
            let j = if i < 0 { i + n } else { i };
            if j < 0 || j >= n {
                return Err(PyIndexError::new_err("row index out of range"));
            }
            return Ok(j.unsigned_abs()); // 0 <= j < n: checked above
        }
        if key.is_instance_of::<PyString>() {
            return match self.by_name(py, key)? {
                Some(i) => Ok(i),
                None => Err(PyKeyError::new_err(key.clone().unbind())),
            };
        }
        Err(PyTypeError::new_err(
            "row indices must be integers, slices or column names",
        ))
    }

    fn by_name(&self, py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        let index = self.source.plan.schema.get().index.bind(py);
        index.get_item(name)?.map(|i| i.extract()).transpose()
    }

    fn value(&self, py: Python<'_>, col: usize) -> PyResult<Py<PyAny>> {
        let s = &self.source;
        decode_cell(py, &s.plan, &s.batch, col, self.row, s.base).map_err(|f| f.err)
    }

    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let values = (0..self.columns())
            .map(|c| self.value(py, c))
            .collect::<PyResult<Vec<_>>>()?;
        PyTuple::new(py, values)
    }
}

#[pymethods]
impl LazyRow {
    fn __len__(&self) -> usize {
        self.columns()
    }

    /// A cell by index or column name (decoded now), or a tuple for a slice.
    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if let Ok(slice) = key.cast::<PySlice>() {
            let idx = slice.indices(crate::checked::alloc_len(self.columns()))?;
            let mut out = Vec::with_capacity(idx.slicelength);
            let mut i = idx.start;
            for _ in 0..idx.slicelength {
                // `indices` keeps every one of the `slicelength` steps inside 0..columns.
                out.push(self.value(py, i.unsigned_abs())?);
                i += idx.step;
            }
            return Ok(PyTuple::new(py, out)?.into_any().unbind());
        }
        let col = self.column(py, key)?;
        self.value(py, col)
    }

    /// Column names as attributes (after the row's own methods: `row["raw"]` reads a column
    /// named `raw`).
    fn __getattr__(&self, py: Python<'_>, name: &Bound<'_, PyString>) -> PyResult<Py<PyAny>> {
        match self.by_name(py, name)? {
            Some(col) => self.value(py, col),
            None => Err(PyAttributeError::new_err(format!(
                "LazyRow has no column named {name}"
            ))),
        }
    }

    /// The cell undecoded, as the driver delivered it into the bound buffer (or read it with
    /// SQLGetData): None when its indicator is SQL_NULL_DATA; text (nchar, nvarchar, xml, and
    /// times/offsets a driver sends as text) as UTF-16LE bytes of the indicator's length, no
    /// terminator; binary as its bytes; decimals bound as text as their ASCII digits; every
    /// fixed-width type as its ODBC C struct in native byte order (int, float, bit, the
    /// DATE/TIME/TIMESTAMP structs, SQL_SS_TIME2, SQL_SS_TIMESTAMPOFFSET, SQL_GUID,
    /// SQL_NUMERIC_STRUCT); (MAX) columns and cells read again whole, the whole value;
    /// sql_variant, its value in the C type of its underlying type. A cell the driver cut
    /// (longer than the buffer, not read again) raises DataError.
    fn raw<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'_, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let col = self.column(py, key)?;
        let s = &self.source;
        let cell = s.batch.columns[col].raw(self.row).map_err(|e| {
            let err = crate::batch::cell_error(e, &s.plan.core, col, s.base + self.row as u64);
            super::errors::to_pyerr(py, err)
        })?;
        Ok(match cell {
            RawCell::Null => None,
            RawCell::Bytes(b) => Some(PyBytes::new(py, b)),
            RawCell::Units(u) => {
                let bytes: Vec<u8> = u.iter().flat_map(|c| c.to_le_bytes()).collect();
                Some(PyBytes::new(py, &bytes))
            }
        })
    }

    /// Whether the cell is NULL, without decoding it.
    fn is_null(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let col = self.column(py, key)?;
        Ok(self.source.batch.columns[col].is_null(self.row))
    }

    /// Every value, decoded now, as a plain tuple.
    fn _tuple<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        self.values(py)
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.values(py)?.as_any().try_iter()?.into_any())
    }

    fn __contains__(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.values(py)?.contains(value)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("LazyRow{}", self.values(py)?.repr()?))
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        self.values(py)?.hash()
    }

    /// Compared as the tuple of its values, with tuples, `Row`s and other lazy rows.
    fn __richcmp__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        op: CompareOp,
    ) -> PyResult<Py<PyAny>> {
        let theirs = if let Ok(lazy) = other.cast::<LazyRow>() {
            lazy.get().values(py)?.into_any()
        } else if other.is_instance_of::<PyTuple>() {
            other.clone()
        } else if super::row::is_row(py, other)? {
            other.call_method0("_tuple")?
        } else {
            return Ok(py.NotImplemented());
        };
        Ok(self.values(py)?.rich_compare(theirs, op)?.unbind())
    }

    /// Pickles (and copies) as a plain tuple of the values.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        (py.get_type::<PyTuple>(), (self.values(py)?,)).into_pyobject(py)
    }

    /// Column names, in order.
    #[getter]
    fn _fields(&self, py: Python<'_>) -> Py<PyTuple> {
        self.source.plan.schema.get().names.clone_ref(py)
    }

    /// The `cursor.description` of the result set this row came from.
    #[getter]
    fn cursor_description(&self, py: Python<'_>) -> Py<PyTuple> {
        self.source.plan.schema.get().description.clone_ref(py)
    }
}
