//! `Connection`: the PEP 249 connection object.

use super::cursor::{Cursor, CursorState};
use super::errors::{IntoPyResult, interface, programming};
use crate::backend::Dbms;
use crate::decode::TextErrors;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::PyTuple;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// State shared by a connection and its cursors.
pub struct ConnShared {
    pub conn: Mutex<Option<crate::Connection>>,
    pub closed: AtomicBool,
    /// Bumped by every change that shapes decoding (output converters, decode errors policy,
    /// connection loss): cursors rebuild their Python plan when it moves.
    pub generation: AtomicU64,
    pub converters: Mutex<HashMap<i16, Py<PyAny>>>,
    pub text_errors: Mutex<TextErrors>,
    pub cursors: Mutex<Vec<Weak<Mutex<CursorState>>>>,
    pub dbms: Dbms,
    /// Query timeout in seconds for executes (0 = none).
    pub timeout: AtomicUsize,
    /// uniqueidentifier as `uuid.UUID` (default) or upper-case `str` (pyodbc's old default).
    pub native_uuid: AtomicBool,
    /// The link died (a communication-link error was seen): every later call on this
    /// connection's cursors is an OperationalError, not whatever state the driver is left in.
    pub lost: AtomicBool,
    /// The connection string this connection returns to the pool under on close (pooling on and
    /// a poolable session); `None`: close disconnects.
    pub pool_key: Option<String>,
}

impl ConnShared {
    pub fn bump(&self) {
        self.generation.fetch_add(1, Ordering::Relaxed);
    }
    /// Note a connection loss in `e` (the plan generation moves, later calls fail fast).
    pub fn track(&self, e: crate::Error) -> crate::Error {
        if e.is_connection_loss() {
            self.lost.store(true, Ordering::Release);
            self.bump();
        }
        e
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }
    pub fn lock_conn<'a>(&'a self, py: Python<'_>) -> MutexGuard<'a, Option<crate::Connection>> {
        self.conn
            .lock_py_attached(py)
            .unwrap_or_else(|e| e.into_inner())
    }
}

#[pyclass(frozen, subclass, module = "ferrodbc", name = "Connection")]
pub struct Connection {
    pub shared: Arc<ConnShared>,
}

impl Connection {
    fn with_conn<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut crate::Connection) -> crate::Result<T> + Send,
    ) -> PyResult<T> {
        let mut guard = self.shared.lock_conn(py);
        let conn = guard
            .as_mut()
            .ok_or_else(|| programming("Attempt to use a closed connection."))?;
        py.detach(|| f(conn)).py(py)
    }
}

#[pymethods]
impl Connection {
    #[new]
    #[pyo3(signature = (connection_string, autocommit = false, timeout = None, pooling = false))]
    fn new(
        py: Python<'_>,
        connection_string: &str,
        autocommit: bool,
        timeout: Option<u32>,
        pooling: bool,
    ) -> PyResult<Self> {
        let conn = py
            .detach(|| {
                if pooling {
                    crate::pool::connect(connection_string, autocommit, timeout)
                } else {
                    crate::Connection::connect(connection_string, autocommit, timeout)
                }
            })
            .py(py)?;
        let pool_key = (pooling && conn.poolable()).then(|| connection_string.to_string());
        let dbms = conn.dbms();
        Ok(Connection {
            shared: Arc::new(ConnShared {
                conn: Mutex::new(Some(conn)),
                closed: AtomicBool::new(false),
                generation: AtomicU64::new(0),
                converters: Mutex::new(HashMap::new()),
                text_errors: Mutex::new(TextErrors::Strict),
                cursors: Mutex::new(Vec::new()),
                dbms,
                timeout: AtomicUsize::new(0),
                native_uuid: AtomicBool::new(true),
                lost: AtomicBool::new(false),
                pool_key,
            }),
        })
    }

    fn cursor(slf: &Bound<'_, Self>) -> PyResult<Py<Cursor>> {
        let py = slf.py();
        if slf.get().shared.is_closed() {
            return Err(programming("Attempt to use a closed connection."));
        }
        Py::new(
            py,
            Cursor::new(slf.clone().unbind(), slf.get().shared.clone()),
        )
    }

    /// Create a cursor, execute on it and return it (pyodbc's shortcut).
    #[pyo3(signature = (sql, *params))]
    fn execute<'py>(
        slf: &Bound<'py, Self>,
        sql: &str,
        params: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, Cursor>> {
        let cursor = Self::cursor(slf)?.into_bound(slf.py());
        Cursor::execute(&cursor, sql, params)?;
        Ok(cursor)
    }

    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        self.with_conn(py, |c| c.commit())
    }

    fn rollback(&self, py: Python<'_>) -> PyResult<()> {
        self.with_conn(py, |c| c.rollback())
    }

    #[getter]
    fn get_autocommit(&self, py: Python<'_>) -> PyResult<bool> {
        let guard = self.shared.lock_conn(py);
        Ok(guard
            .as_ref()
            .ok_or_else(|| programming("Attempt to use a closed connection."))?
            .autocommit())
    }

    #[setter]
    fn set_autocommit(&self, py: Python<'_>, on: bool) -> PyResult<()> {
        self.with_conn(py, |c| c.set_autocommit(on))
    }

    /// Query timeout in seconds for later executes (0 = none).
    #[getter]
    fn get_timeout(&self) -> usize {
        self.shared.timeout.load(Ordering::Relaxed)
    }

    #[setter]
    fn set_timeout(&self, secs: usize) {
        self.shared.timeout.store(secs, Ordering::Relaxed);
    }

    #[getter]
    fn closed(&self) -> bool {
        self.shared.is_closed()
    }

    /// The DBMS name the driver reports (e.g. "Microsoft SQL Server").
    #[getter]
    fn dbms_name(&self, py: Python<'_>) -> PyResult<String> {
        let guard = self.shared.lock_conn(py);
        Ok(guard
            .as_ref()
            .ok_or_else(|| programming("Attempt to use a closed connection."))?
            .dbms_name()
            .to_owned())
    }

    /// The ODBC driver's file name (`SQL_DRIVER_NAME`).
    #[getter]
    fn driver_name(&self, py: Python<'_>) -> PyResult<String> {
        let guard = self.shared.lock_conn(py);
        Ok(guard
            .as_ref()
            .ok_or_else(|| programming("Attempt to use a closed connection."))?
            .driver_name())
    }

    /// How malformed UTF-16 in text columns is handled: "strict" (DataError, the default),
    /// "replace" (U+FFFD) or "surrogatepass" (keep the lone surrogates).
    #[getter]
    fn get_decode_errors(&self) -> &'static str {
        self.shared
            .text_errors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .name()
    }

    #[setter]
    fn set_decode_errors(&self, name: &str) -> PyResult<()> {
        let policy = TextErrors::from_name(name).ok_or_else(|| {
            interface(format!(
                "decode_errors must be 'strict', 'replace' or 'surrogatepass', not {name:?}"
            ))
        })?;
        *self
            .shared
            .text_errors
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = policy;
        self.shared.bump();
        Ok(())
    }

    /// uniqueidentifier columns as `uuid.UUID` (True, the default) or as upper-case `str`.
    #[getter]
    fn get_native_uuid(&self) -> bool {
        self.shared.native_uuid.load(Ordering::Relaxed)
    }

    #[setter]
    fn set_native_uuid(&self, on: bool) {
        self.shared.native_uuid.store(on, Ordering::Relaxed);
        self.shared.bump();
    }

    /// Register `func(raw_bytes) -> value` for columns of ODBC SQL type `sqltype` (pyodbc).
    fn add_output_converter(&self, sqltype: i16, func: Py<PyAny>) {
        self.shared
            .converters
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(sqltype, func);
        self.shared.bump();
    }

    fn get_output_converter(&self, py: Python<'_>, sqltype: i16) -> Option<Py<PyAny>> {
        self.shared
            .converters
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&sqltype)
            .map(|f| f.clone_ref(py))
    }

    fn remove_output_converter(&self, sqltype: i16) {
        self.shared
            .converters
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&sqltype);
        self.shared.bump();
    }

    fn clear_output_converters(&self) {
        self.shared
            .converters
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.shared.bump();
    }

    /// Close the connection: every cursor's statement is freed first, the open transaction is
    /// rolled back, then the link is closed. Idempotent.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        if super::cursor::in_cursor_call() {
            return Err(programming(
                "Cannot close the connection from a callback (e.g. an output converter) running inside a cursor call.",
            ));
        }
        {
            let _guard = self.shared.lock_conn(py);
            self.shared.closed.store(true, Ordering::Release);
        }
        self.shared.bump();
        let cursors: Vec<_> = std::mem::take(
            &mut *self
                .shared
                .cursors
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
        for weak in cursors {
            if let Some(state) = weak.upgrade() {
                let mut st = state
                    .lock_py_attached(py)
                    .unwrap_or_else(|e| e.into_inner());
                st.release();
            }
        }
        let conn = self.shared.lock_conn(py).take();
        if let Some(conn) = conn {
            let lost = self.shared.lost.load(Ordering::Relaxed);
            match &self.shared.pool_key {
                Some(key) if !lost => py.detach(|| crate::pool::release(key, conn)).py(py)?,
                _ => py.detach(|| conn.close()).py(py)?,
            }
        }
        Ok(())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Commit if the block succeeded, roll back if it raised (pyodbc semantics; the connection
    /// stays open).
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        if self.shared.is_closed() {
            return Ok(false);
        }
        if exc_type.is_none() {
            self.commit(py)?
        } else {
            self.rollback(py)?
        }
        Ok(false)
    }
}
