//! `Connection`: the PEP 249 connection object.

use super::errors::{IntoPyResult, interface, programming};
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
    fn compat(&self) -> MutexGuard<'_, super::compat::ConnCompat> {
        self.shared.compat.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn with_conn<T: Send>(
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

    /// The `row_factory` new cursors start with (None: `ferrodbc.Row`).
    #[getter]
    fn get_row_factory(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.shared
            .row_factory
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|f| f.clone_ref(py))
    }

    /// The `row_factory` of cursors created afterwards (existing cursors keep theirs).
    #[setter]
    fn set_row_factory(&self, factory: Option<Bound<'_, PyAny>>) -> PyResult<()> {
        let factory = super::shape::check_factory(factory)?;
        *self
            .shared
            .row_factory
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = factory;
        Ok(())
    }

    /// `hook(exception) -> exception` for the errors fetches raise (the `mssql_python` face
    /// gives its exception classes this way: no Python layer per fetched row); None: none.
    #[getter(_error_hook)]
    fn get_error_hook(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.shared
            .error_hook
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|h| h.clone_ref(py))
    }

    #[setter(_error_hook)]
    fn set_error_hook(&self, hook: Option<Py<PyAny>>) {
        *self
            .shared
            .error_hook
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = hook;
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

    /// Register `func(raw_bytes) -> value` for columns of ODBC SQL type `sqltype` (pyodbc);
    /// `None` removes the one registered, as in pyodbc.
    fn add_output_converter(&self, sqltype: i16, func: Option<Py<PyAny>>) {
        let mut converters = self
            .shared
            .converters
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let replaced = match func {
            Some(func) => converters.insert(sqltype, func),
            None => converters.remove(&sqltype),
        };
        drop(converters);
        self.shared.bump();
        // Released after the lock: its finalizer may call back into this connection.
        drop(replaced);
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
        let removed = self
            .shared
            .converters
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&sqltype);
        self.shared.bump();
        drop(removed);
    }

    fn clear_output_converters(&self) {
        let cleared = std::mem::take(
            &mut *self
                .shared
                .converters
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
        self.shared.bump();
        drop(cleared);
    }

    /// pyodbc's `setdecoding(sqltype, encoding=None, ctype=None)`: UTF-8 / UTF-16 accepted
    /// (the text ferrodbc reads is the same), anything else NotSupportedError.
    #[pyo3(signature = (sqltype, encoding = None, ctype = None))]
    fn setdecoding(
        &self,
        py: Python<'_>,
        sqltype: i16,
        encoding: Option<&str>,
        ctype: Option<i16>,
    ) -> PyResult<()> {
        if self.shared.is_closed() {
            return Err(programming("Attempt to use a closed connection."));
        }
        super::compat::check_text_setting(py, Some(sqltype), encoding, ctype)
    }

    /// pyodbc's `setencoding(encoding=None, ctype=None)` for parameters: parameters are always
    /// bound as UTF-16 text, so UTF-8 / UTF-16 are accepted and anything else refused.
    #[pyo3(signature = (encoding = None, ctype = None))]
    fn setencoding(
        &self,
        py: Python<'_>,
        encoding: Option<&str>,
        ctype: Option<i16>,
    ) -> PyResult<()> {
        if self.shared.is_closed() {
            return Err(programming("Attempt to use a closed connection."));
        }
        super::compat::check_text_setting(py, None, encoding, ctype)
    }

    /// `SQLGetInfo(info_type)`: str, bool or int as the information type is (pyodbc).
    fn getinfo(&self, py: Python<'_>, info_type: u16) -> PyResult<Py<PyAny>> {
        let kind = crate::info::info_kind(info_type)
            .ok_or_else(|| programming(format!("Invalid getinfo value: {info_type}")))?;
        let value = self.with_conn(py, |c| c.info(info_type, kind))?;
        super::compat::info_to_py(py, value)
    }

    /// `SQLSetConnectAttr(attr, value)`: value an int, str or bytes (pyodbc).
    fn set_attr(
        &self,
        py: Python<'_>,
        attr: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let attr = super::compat::attr_key(attr)?;
        let value = super::compat::attr_value(value)?;
        self.with_conn(py, |c| c.set_attr(attr, &value))
    }

    /// The escape character for catalog search patterns (`SQL_SEARCH_PATTERN_ESCAPE`).
    #[getter]
    fn searchescape(&self, py: Python<'_>) -> PyResult<String> {
        const SQL_SEARCH_PATTERN_ESCAPE: u16 = 14;
        let value = self.with_conn(py, |c| {
            c.info(SQL_SEARCH_PATTERN_ESCAPE, crate::info::InfoKind::Text)
        })?;
        match value {
            crate::info::InfoValue::Text(s) => Ok(s),
            _ => Ok(String::new()),
        }
    }

    /// The connection handle as a `ctypes.c_void_p` (None once closed), as pyodbc has it.
    #[getter]
    fn hdbc(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let address = self
            .shared
            .lock_conn(py)?
            .as_ref()
            .map(|c| c.handle_address());
        address.map(|a| super::compat::void_p(py, a)).transpose()
    }

    /// pyodbc 5.5's decimal read mode ('binary', 'text', 'locale'). ferrodbc reads decimals
    /// exactly in every mode (driver text parsed without the locale); the value is kept.
    #[getter]
    fn get_decimal_mode(&self) -> &'static str {
        self.compat().decimal_mode.name()
    }

    #[setter]
    fn set_decimal_mode(&self, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let mode = super::compat::parse_decimal_mode(value, "decimal_mode")?;
        self.compat().decimal_mode = mode;
        Ok(())
    }

    #[deleter]
    fn delete_decimal_mode(&self) -> PyResult<()> {
        Err(super::compat::cannot_delete("decimal_mode"))
    }

    /// Deprecated in pyodbc 5.5 (FutureWarning): True is decimal_mode 'locale', False 'binary'.
    #[getter]
    fn get_fetch_decimal_as_string(&self, py: Python<'_>) -> PyResult<bool> {
        let mode = self.compat().decimal_mode;
        super::compat::fetch_decimal_as_string(py, mode)
    }

    #[setter]
    fn set_fetch_decimal_as_string(&self, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let mode = super::compat::parse_decimal_mode(value, "fetch_decimal_as_string")?;
        let mut compat = self.compat();
        // Writing back what was read (saving and restoring the flag) keeps 'text' as 'text'.
        let same = (mode != super::compat::DecimalMode::Binary)
            == (compat.decimal_mode != super::compat::DecimalMode::Binary);
        if !same {
            compat.decimal_mode = mode;
        }
        Ok(())
    }

    /// pyodbc's first buffer size for long values read with SQLGetData. ferrodbc sizes its own
    /// buffers from the column description and grows them; the value is kept and validated.
    #[getter]
    fn get_readvar_initsize(&self) -> usize {
        self.compat().readvar_initsize
    }

    #[setter]
    fn set_readvar_initsize(&self, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let n = super::compat::parse_size(value, "readvar_initsize")?;
        self.compat().readvar_initsize = n;
        Ok(())
    }

    #[deleter]
    fn delete_readvar_initsize(&self) -> PyResult<()> {
        Err(super::compat::cannot_delete("readvar_initsize"))
    }

    /// pyodbc's size above which parameters are streamed with SQLPutData (0: its default). The
    /// value is kept; ferrodbc binds each parameter value whole.
    #[getter]
    fn get_maxwrite(&self) -> usize {
        self.compat().maxwrite
    }

    #[setter]
    fn set_maxwrite(&self, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let n = super::compat::parse_size(value, "maxwrite")?;
        self.compat().maxwrite = n;
        Ok(())
    }

    #[deleter]
    fn delete_maxwrite(&self) -> PyResult<()> {
        Err(super::compat::cannot_delete("maxwrite"))
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
