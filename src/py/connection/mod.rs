//! `Connection`: the PEP 249 connection object: opening (pooled or not), transactions,
//! closing, the context manager and the cyclic GC's view. Its settings and pyodbc's extensions
//! (converters, decoding, row factory, `getinfo`, `set_attr`, ...) are `settings.rs`'s.

mod settings;

use super::errors::{IntoPyResult, programming};
use super::shared::ConnShared;
use crate::types::text::TextErrors;
use pyo3::prelude::*;
use pyo3::{PyTraverseError, PyVisit};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

#[pyclass(frozen, subclass, weakref, module = "ferrodbc", name = "Connection")]
pub struct Connection {
    pub shared: Arc<ConnShared>,
}

impl Connection {
    pub(super) fn compat(&self) -> MutexGuard<'_, super::compat::ConnCompat> {
        self.shared.compat.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn with_conn<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut crate::Connection) -> crate::Result<T> + Send,
    ) -> PyResult<T> {
        let mut guard = self.shared.lock_conn(py)?;
        let conn = guard
            .as_mut()
            .ok_or_else(|| programming("Attempt to use a closed connection."))?;
        self.shared.check_process()?;
        py.detach(|| f(conn))
            .map_err(|e| self.shared.track(e))
            .py(py)
    }
}

#[pymethods]
impl Connection {
    #[new]
    #[pyo3(signature = (connection_string, autocommit = false, timeout = None, pooling = false, attrs_before = None, pool_identity = None))]
    fn new(
        py: Python<'_>,
        connection_string: &str,
        autocommit: bool,
        timeout: Option<u32>,
        pooling: bool,
        attrs_before: Option<&Bound<'_, PyAny>>,
        pool_identity: Option<&str>,
    ) -> PyResult<Self> {
        let attrs = super::compat::attrs_before(attrs_before)?;
        // A session opened with attributes set before connecting is never pooled (the next
        // user asking for the same string would inherit them), except an access-token login
        // whose identity the caller names (`pool_identity`, never the token: entra.py): it is
        // pooled under the string plus that identity, so only that identity gets it back.
        let key = match pool_identity {
            Some(id) if pooling => Some(format!(
                "{connection_string};Identity={}",
                crate::connstr::quote_value(id)
            )),
            _ if pooling && attrs.is_empty() => Some(connection_string.to_string()),
            _ => None,
        };
        let open = || {
            if attrs.is_empty() {
                crate::Connection::connect(connection_string, autocommit, timeout)
            } else {
                crate::Connection::connect_with_attrs(
                    connection_string,
                    autocommit,
                    timeout,
                    &attrs,
                )
            }
        };
        let conn = py
            .detach(|| match &key {
                Some(key) => crate::pool::connect_keyed(key, autocommit, open),
                None => open(),
            })
            .py(py)?;
        let pool_key = key.filter(|_| conn.poolable());
        let dbms = conn.dbms();
        Ok(Connection {
            shared: Arc::new(ConnShared {
                orphans: Mutex::new(Vec::new()),
                conn: Mutex::new(Some(conn)),
                closed: AtomicBool::new(false),
                generation: AtomicU64::new(0),
                converters: Mutex::new(HashMap::new()),
                text_errors: Mutex::new(TextErrors::Strict),
                cursors: Mutex::new(Vec::new()),
                dbms,
                timeout: AtomicUsize::new(0),
                max_lob_bytes: AtomicUsize::new(0),
                native_uuid: AtomicBool::new(true),
                lost: AtomicBool::new(false),
                pool_key,
                shown: crate::connstr::redact(connection_string),
                compat: Mutex::new(super::compat::ConnCompat::new(dbms)),
                row_factory: Mutex::new(None),
                error_hook: Mutex::new(None),
                conn_holder: AtomicUsize::new(0),
                owner: crate::process::Owner::current(),
                calls: super::call_gate::CallGate::new(dbms == crate::backend::Dbms::Sqlite),
            }),
        })
    }

    /// `<ferrodbc.Connection 'Driver=...;PWD=***' open>`: secrets never shown.
    fn __repr__(&self) -> String {
        let state = if self.shared.is_closed() {
            "closed"
        } else {
            "open"
        };
        format!("<ferrodbc.Connection {:?} {state}>", self.shared.shown)
    }

    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        self.with_conn(py, |c| c.commit())
    }

    fn rollback(&self, py: Python<'_>) -> PyResult<()> {
        self.with_conn(py, |c| c.rollback())
    }

    #[getter]
    fn get_autocommit(&self, py: Python<'_>) -> PyResult<bool> {
        let guard = self.shared.lock_conn(py)?;
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

    /// Whether the link to the server is known to be gone (a communication-link error was seen,
    /// or the driver reports the connection dead): every later call raises OperationalError,
    /// and close() never returns it to the pool. False once closed.
    #[getter]
    fn broken(&self, py: Python<'_>) -> PyResult<bool> {
        if self.shared.lost.load(Ordering::Acquire) {
            return Ok(!self.shared.is_closed());
        }
        let mut guard = self.shared.lock_conn(py)?;
        Ok(guard
            .as_mut()
            .is_some_and(|c| py.detach(move || c.is_dead())))
    }

    /// The largest value, in bytes, a fetch reads into memory for one (MAX)/LOB cell (or any
    /// value read with SQLGetData); a bigger one raises DataError naming its column and row.
    /// None (the default) or 0: no limit.
    #[getter]
    fn get_max_lob_bytes(&self) -> Option<usize> {
        match self.shared.max_lob_bytes.load(Ordering::Relaxed) {
            0 => None,
            n => Some(n),
        }
    }

    #[setter]
    fn set_max_lob_bytes(&self, bytes: Option<i64>) -> PyResult<()> {
        let n = match bytes {
            None => 0,
            Some(n) => usize::try_from(n).map_err(|_| {
                pyo3::exceptions::PyValueError::new_err(format!(
                    "max_lob_bytes must be a positive number of bytes, 0 or None, not {n}"
                ))
            })?,
        };
        self.shared.max_lob_bytes.store(n, Ordering::Relaxed);
        Ok(())
    }

    /// The DBMS name the driver reports (e.g. "Microsoft SQL Server").
    #[getter]
    fn dbms_name(&self, py: Python<'_>) -> PyResult<String> {
        let guard = self.shared.lock_conn(py)?;
        Ok(guard
            .as_ref()
            .ok_or_else(|| programming("Attempt to use a closed connection."))?
            .dbms_name()
            .to_owned())
    }

    /// The ODBC driver's file name (`SQL_DRIVER_NAME`).
    #[getter]
    fn driver_name(&self, py: Python<'_>) -> PyResult<String> {
        let mut guard = self.shared.lock_conn(py)?;
        let conn = guard
            .as_mut()
            .ok_or_else(|| programming("Attempt to use a closed connection."))?;
        Ok(py.detach(move || conn.driver_name()))
    }

    /// Close the connection: every cursor's statement is freed first, the open transaction is
    /// rolled back, then the link is closed. Idempotent.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let busy_here = self
            .shared
            .cursors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter_map(Weak::upgrade)
            .any(|cell| cell.held_by_this_thread());
        if busy_here {
            // Closing frees every cursor's statement, waiting for the call that holds it: here
            // that call is the one running this callback.
            return Err(programming(
                "Cannot close the connection from a callback (e.g. an output converter) running inside a call of one of its cursors.",
            ));
        }
        {
            let _guard = self.shared.lock_conn(py)?;
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
            if let Some(cell) = weak.upgrade() {
                let stmt = cell.lock_state(py).release();
                py.detach(move || drop(stmt));
            }
        }
        self.shared.free_orphans(py);
        let conn = self.shared.lock_conn(py)?.take();
        if let Some(conn) = conn {
            let lost = self.shared.lost.load(Ordering::Relaxed);
            match &self.shared.pool_key {
                Some(key) if !lost => py.detach(|| crate::pool::release(key, conn)).py(py)?,
                _ => py.detach(|| conn.close()).py(py)?,
            }
        }
        Ok(())
    }

    /// The cyclic GC's view of the output converters: a converter that refers back to its
    /// connection (a closure or bound method holding it) made a cycle that was never collected,
    /// a connection left open for the life of the process. Never blocks: a map locked by another
    /// thread is skipped (its objects then just count as reachable).
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Ok(converters) = self.shared.converters.try_lock() {
            for f in converters.values() {
                visit.call(f)?;
            }
        }
        if let Ok(Some(f)) = self.shared.row_factory.try_lock().as_deref() {
            visit.call(f)?;
        }
        Ok(())
    }

    /// Break a cycle through the converters or the row factory (the connection is garbage:
    /// nobody can fetch).
    fn __clear__(&self) {
        let taken = match self.shared.converters.try_lock() {
            Ok(mut converters) => std::mem::take(&mut *converters),
            Err(_) => return,
        };
        let factory = match self.shared.row_factory.try_lock() {
            Ok(mut f) => f.take(),
            Err(_) => None,
        };
        // Dropped unlocked: a converter's finalizer may call back into this connection.
        drop((taken, factory));
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
