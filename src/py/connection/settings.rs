//! The connection's settings and pyodbc's extensions beyond PEP 249: what its cursors read
//! (text decoding policy, row factory, output converters, uuid form, the error hook), pyodbc's
//! `getinfo`, `set_attr`, `setdecoding`/`setencoding`, handle and search escape, and the
//! settings pyodbc 5.5 has that ferrodbc keeps and validates without needing them.

use super::Connection;
use crate::py::errors::{interface, programming};
use crate::types::text::TextErrors;
use pyo3::prelude::*;
use std::sync::atomic::Ordering;

#[pymethods]
impl Connection {
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
        let factory = crate::py::shape::check_factory(factory)?;
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
        crate::py::compat::check_text_setting(py, Some(sqltype), encoding, ctype)
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
        crate::py::compat::check_text_setting(py, None, encoding, ctype)
    }

    /// `SQLGetInfo(info_type)`: str, bool or int as the information type is (pyodbc).
    fn getinfo(&self, py: Python<'_>, info_type: u16) -> PyResult<Py<PyAny>> {
        let kind = crate::info::info_kind(info_type)
            .ok_or_else(|| programming(format!("Invalid getinfo value: {info_type}")))?;
        let value = self.with_conn(py, |c| c.info(info_type, kind))?;
        crate::py::compat::info_to_py(py, value)
    }

    /// `SQLSetConnectAttr(attr, value)`: value an int, str or bytes (pyodbc).
    fn set_attr(
        &self,
        py: Python<'_>,
        attr: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let attr = crate::py::compat::attr_key(attr)?;
        let value = crate::py::compat::attr_value(value)?;
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
        address
            .map(|a| crate::py::compat::void_p(py, a))
            .transpose()
    }

    /// pyodbc 5.5's decimal read mode ('binary', 'text', 'locale'). ferrodbc reads decimals
    /// exactly in every mode (driver text parsed without the locale); the value is kept.
    #[getter]
    fn get_decimal_mode(&self) -> &'static str {
        self.compat().decimal_mode.name()
    }

    #[setter]
    fn set_decimal_mode(&self, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let mode = crate::py::compat::parse_decimal_mode(value, "decimal_mode")?;
        self.compat().decimal_mode = mode;
        Ok(())
    }

    #[deleter]
    fn delete_decimal_mode(&self) -> PyResult<()> {
        Err(crate::py::compat::cannot_delete("decimal_mode"))
    }

    /// Deprecated in pyodbc 5.5 (FutureWarning): True is decimal_mode 'locale', False 'binary'.
    #[getter]
    fn get_fetch_decimal_as_string(&self, py: Python<'_>) -> PyResult<bool> {
        let mode = self.compat().decimal_mode;
        crate::py::compat::fetch_decimal_as_string(py, mode)
    }

    #[setter]
    fn set_fetch_decimal_as_string(&self, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let mode = crate::py::compat::parse_decimal_mode(value, "fetch_decimal_as_string")?;
        let mut compat = self.compat();
        // Writing back what was read (saving and restoring the flag) keeps 'text' as 'text'.
        let same = (mode != crate::py::compat::DecimalMode::Binary)
            == (compat.decimal_mode != crate::py::compat::DecimalMode::Binary);
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
        let n = crate::py::compat::parse_size(value, "readvar_initsize")?;
        self.compat().readvar_initsize = n;
        Ok(())
    }

    #[deleter]
    fn delete_readvar_initsize(&self) -> PyResult<()> {
        Err(crate::py::compat::cannot_delete("readvar_initsize"))
    }

    /// pyodbc's size above which parameters are streamed with SQLPutData (0: its default). The
    /// value is kept; ferrodbc binds each parameter value whole.
    #[getter]
    fn get_maxwrite(&self) -> usize {
        self.compat().maxwrite
    }

    #[setter]
    fn set_maxwrite(&self, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let n = crate::py::compat::parse_size(value, "maxwrite")?;
        self.compat().maxwrite = n;
        Ok(())
    }

    #[deleter]
    fn delete_maxwrite(&self) -> PyResult<()> {
        Err(crate::py::compat::cannot_delete("maxwrite"))
    }
}
