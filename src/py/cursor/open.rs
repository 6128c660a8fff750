//! `Connection.cursor()` and `Connection.execute()`: where cursors are made. They are methods
//! of the connection (PyO3's `multiple-pymethods`) written beside the cursor, so the connection
//! never names the cursor type: a cursor refers to its connection, not the other way round.

use super::Cursor;
use crate::py::connection::Connection;
use crate::py::errors::programming;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

#[pymethods]
impl Connection {
    fn cursor(slf: &Bound<'_, Self>) -> PyResult<Py<Cursor>> {
        let py = slf.py();
        if slf.get().shared.is_closed() {
            return Err(programming("Attempt to use a closed connection."));
        }
        Py::new(
            py,
            Cursor::new(py, slf.clone().unbind(), slf.get().shared.clone()),
        )
    }

    /// Create a cursor, execute on it and return it (pyodbc's shortcut).
    #[pyo3(signature = (sql, *params))]
    fn execute<'py>(
        slf: &Bound<'py, Self>,
        sql: &str,
        params: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, Cursor>> {
        let cursor = Connection::cursor(slf)?.into_bound(slf.py());
        Cursor::execute(&cursor, sql, params)?;
        Ok(cursor)
    }
}
