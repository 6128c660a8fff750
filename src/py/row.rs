//! `Row`: what every fetch returns. A tuple of the values plus the result set's shared schema
//! (names, name → index map, description), built once per result set.
//!
//! Not tracked by the cyclic GC (no `__traverse__`): big fetches do not make collections slower,
//! the trap that doubled turbodbc's fetchall time.

use pyo3::IntoPyObjectExt;
use pyo3::exceptions::{PyAttributeError, PyIndexError, PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::types::{PyDict, PySlice, PyString, PyTuple};
use std::sync::Arc;

/// Column names and description of one result set, shared by all its rows.
pub struct RowSchema {
    pub names: Py<PyTuple>,
    /// name → index; with duplicate names the last column wins (pyodbc, mssql-python).
    pub index: Py<PyDict>,
    pub description: Py<PyTuple>,
}

#[pyclass(frozen, sequence, module = "ferrodbc", name = "Row")]
pub struct Row {
    pub values: Py<PyTuple>,
    pub schema: Arc<RowSchema>,
}

impl Row {
    fn index_of(&self, py: Python<'_>, name: &Bound<'_, PyString>) -> PyResult<Option<usize>> {
        match self.schema.index.bind(py).get_item(name)? {
            Some(i) => Ok(Some(i.extract()?)),
            None => Ok(None),
        }
    }
}

#[pymethods]
impl Row {
    fn __len__(&self, py: Python<'_>) -> usize {
        self.values.bind(py).len()
    }

    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let values = self.values.bind(py);
        if let Ok(i) = key.extract::<isize>() {
            let len = values.len() as isize;
            let j = if i < 0 { i + len } else { i };
            if j < 0 || j >= len {
                return Err(PyIndexError::new_err("row index out of range"));
            }
            return values.get_item(j as usize);
        }
        if let Ok(slice) = key.cast::<PySlice>() {
            return values.as_any().get_item(slice);
        }
        if let Ok(name) = key.cast::<PyString>() {
            return match self.index_of(py, name)? {
                Some(i) => values.get_item(i),
                None => Err(PyKeyError::new_err(name.clone().unbind())),
            };
        }
        Err(PyTypeError::new_err(
            "row indices must be integers, slices or column names",
        ))
    }

    fn __getattr__<'py>(
        &self,
        py: Python<'py>,
        name: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match self.index_of(py, name)? {
            Some(i) => self.values.bind(py).get_item(i),
            None => Err(PyAttributeError::new_err(format!(
                "Row has no column named {name}"
            ))),
        }
    }

    fn __contains__(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.values.bind(py).contains(value)
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.values.bind(py).as_any().try_iter()?.into_any())
    }

    fn __richcmp__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        op: CompareOp,
    ) -> PyResult<Py<PyAny>> {
        let values = self.values.bind(py);
        let other_values: Bound<'_, PyAny> = if let Ok(row) = other.cast::<Row>() {
            row.get().values.bind(py).clone().into_any()
        } else if other.is_instance_of::<PyTuple>() {
            other.clone()
        } else {
            return Ok(py.NotImplemented());
        };
        values
            .as_any()
            .rich_compare(other_values, op)?
            .into_py_any(py)
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        self.values.bind(py).hash()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.values.bind(py).repr()?.to_string())
    }

    /// Pickles (and copies) as a plain tuple of the values.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (Py<PyTuple>,))> {
        Ok((
            py.get_type::<PyTuple>().into_any(),
            (self.values.clone_ref(py),),
        ))
    }

    /// A read-only mapping of column name → value (`dict(row._mapping)`).
    #[getter]
    fn _mapping<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let dict = PyDict::new(py);
        for (name, value) in self
            .schema
            .names
            .bind(py)
            .iter()
            .zip(self.values.bind(py).iter())
        {
            dict.set_item(name, value)?;
        }
        super::cache::mapping_proxy_type(py)?.call1((dict,))
    }

    /// The `cursor.description` of the result set this row came from (pyodbc).
    #[getter]
    fn cursor_description(&self, py: Python<'_>) -> Py<PyTuple> {
        self.schema.description.clone_ref(py)
    }

    /// The values as a plain tuple (no copy).
    fn _tuple(&self, py: Python<'_>) -> Py<PyTuple> {
        self.values.clone_ref(py)
    }

    /// Column names, in order (like a namedtuple's `_fields`).
    #[getter]
    fn _fields(&self, py: Python<'_>) -> Py<PyTuple> {
        self.schema.names.clone_ref(py)
    }
}
