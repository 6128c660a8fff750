//! `Cursor`: execute, and every fetch shape served from the one native batch.
//!
//! `fetch.rs`: the fetch protocol and every fetch shape; `execute.rs`: execute, executemany,
//! callproc, parameters; `catalog.rs`: the ODBC catalog functions. Each file adds its own
//! `#[pymethods]` block (PyO3's `multiple-pymethods`).

mod catalog;
mod execute;
mod fetch;

use crate::odbc::CancelHandle;
use crate::params::InputSize;
use crate::py::connection::{ConnShared, Connection};
use crate::py::errors::{IntoPyResult, programming};
use crate::py::output::Output;
use crate::py::plan::PyPlan;
use crate::statement::Statement;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::PyTuple;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Everything a cursor changes while it works, behind one mutex.
#[derive(Default)]
pub struct CursorState {
    stmt: Option<Statement>,
    /// The Python half of the current result set's plan (decoders, row schema).
    plan: Option<PyPlan>,
    closed: bool,
    input_sizes: Vec<InputSize>,
    /// An error found after some rows were already delivered: raised by the next fetch.
    pending: Option<PyErr>,
    applied_timeout: usize,
    applied_max_lob_bytes: usize,
    /// `Output` parameters of the last execute, by parameter index: filled when its last result
    /// set has been read.
    outputs: Vec<(usize, Py<Output>)>,
    /// The current result set came from a catalog function: its column names are given in
    /// lower case (pyodbc does, so `row.column_name` works on every driver).
    catalog_result: bool,
    /// Whether `plan` was built with lower-case names.
    plan_lowercase: bool,
}

impl CursorState {
    /// The last execute's results are gone: its unfilled outputs never will be.
    fn discard_outputs(&mut self) {
        for (_, out) in self.outputs.drain(..) {
            out.get().discard();
        }
    }

    /// Free the statement (connection close): the cursor is unusable afterwards.
    pub fn release(&mut self) {
        self.discard_outputs();
        self.plan = None;
        self.stmt = None;
        self.closed = true;
    }
}

#[pyclass(frozen, subclass, module = "ferrodbc", name = "Cursor")]
pub struct Cursor {
    // Field order is drop order: the statement (in `state`) must be freed while the connection
    // handle it belongs to is still alive (`shared` may hold the last reference to it). Freeing a
    // statement after its connection crashed Driver 18 at interpreter exit.
    state: Arc<Mutex<CursorState>>,
    connection: Py<Connection>,
    shared: Arc<ConnShared>,
    /// Kept outside `state` so `cancel()` works while another thread holds the state in a fetch.
    cancel: Mutex<Option<CancelHandle>>,
    arraysize: AtomicUsize,
    /// Token of the thread holding `state` (0: none). A Python callback run while the cursor
    /// works (an output converter) may touch the same cursor: that must be an error, not a
    /// self-deadlock on `state`.
    owner: AtomicUsize,
    /// pyodbc's `fast_executemany`. ferrodbc always sends executemany as parameter arrays; the
    /// flag is kept for programs that set and read it.
    fast_executemany: AtomicBool,
    /// pyodbc's `noscan`: SQL_ATTR_NOSCAN on the statement (the driver leaves `{fn ...}` /
    /// `{d ...}` escape sequences unscanned; psqlODBC accepts it and scans anyway).
    noscan: AtomicBool,
    /// pyodbc's `rows_as_dicts`: fetches return `{name: value}` dicts instead of rows.
    rows_as_dicts: AtomicBool,
}

/// `state`, locked by this thread; clears the owner token before unlocking.
struct Guard<'a> {
    inner: MutexGuard<'a, CursorState>,
    owner: &'a AtomicUsize,
}

impl std::ops::Deref for Guard<'_> {
    type Target = CursorState;
    fn deref(&self) -> &CursorState {
        &self.inner
    }
}

impl std::ops::DerefMut for Guard<'_> {
    fn deref_mut(&mut self) -> &mut CursorState {
        &mut self.inner
    }
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        self.owner.store(0, Ordering::Release);
        IN_CURSOR_CALL.with(|n| n.set(n.get() - 1));
    }
}

thread_local! {
    /// How many cursor states this thread holds (its calls nest only through callbacks).
    static IN_CURSOR_CALL: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Whether this thread is inside a cursor call (so a callback is running, e.g. a converter):
/// closing the connection from there would wait on that very cursor.
pub fn in_cursor_call() -> bool {
    IN_CURSOR_CALL.with(|n| n.get() > 0)
}

/// A per-thread token (the address of a thread-local).
fn thread_token() -> usize {
    thread_local!(static TOKEN: u8 = const { 0 });
    TOKEN.with(|t| t as *const u8 as usize)
}

impl Cursor {
    pub fn new(connection: Py<Connection>, shared: Arc<ConnShared>) -> Cursor {
        let state = Arc::new(Mutex::new(CursorState::default()));
        shared
            .cursors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arc::downgrade(&state));
        Cursor {
            connection,
            shared,
            state,
            cancel: Mutex::new(None),
            arraysize: AtomicUsize::new(1),
            owner: AtomicUsize::new(0),
            fast_executemany: AtomicBool::new(false),
            noscan: AtomicBool::new(false),
            rows_as_dicts: AtomicBool::new(false),
        }
    }

    /// Lock the cursor's state, refusing re-entrant use from the thread that already holds it.
    fn lock_any(&self, py: Python<'_>) -> PyResult<Guard<'_>> {
        let me = thread_token();
        if self.owner.load(Ordering::Acquire) == me {
            return Err(programming(
                "The cursor is busy: it was used from a callback (e.g. an output converter) running inside one of its own calls.",
            ));
        }
        let inner = self
            .state
            .lock_py_attached(py)
            .unwrap_or_else(|e| e.into_inner());
        self.owner.store(me, Ordering::Release);
        IN_CURSOR_CALL.with(|n| n.set(n.get() + 1));
        Ok(Guard {
            inner,
            owner: &self.owner,
        })
    }

    /// [`Self::lock_any`] for an open cursor on an open connection.
    fn lock(&self, py: Python<'_>) -> PyResult<Guard<'_>> {
        let guard = self.lock_any(py)?;
        if guard.closed {
            return Err(programming("Attempt to use a closed cursor."));
        }
        if self.shared.is_closed() {
            return Err(programming("The cursor's connection has been closed."));
        }
        if self.shared.lost.load(Ordering::Acquire) {
            return Err(crate::py::errors::lost_link(py));
        }
        Ok(guard)
    }

    /// The statement, allocated on first use.
    fn statement<'a>(
        &self,
        py: Python<'_>,
        st: &'a mut CursorState,
    ) -> PyResult<&'a mut Statement> {
        if st.stmt.is_none() {
            let conn = self.shared.lock_conn(py);
            let conn = conn
                .as_ref()
                .ok_or_else(|| programming("The cursor's connection has been closed."))?;
            let stmt = conn.new_statement().py(py)?;
            *self.cancel.lock().unwrap_or_else(|e| e.into_inner()) = Some(stmt.cancel_handle());
            st.stmt = Some(Statement::new(stmt, conn.backend()));
        }
        Ok(st.stmt.as_mut().expect("just allocated"))
    }

    /// Make sure the Python plan matches the statement's epoch and the connection's generation;
    /// rebuild it (never the bound buffers) if not. `Ok(false)` when there is no result set.
    fn ensure_plan(&self, py: Python<'_>, st: &mut CursorState) -> PyResult<bool> {
        let Some(stmt) = st.stmt.as_ref() else {
            return Ok(false);
        };
        let Some(core) = stmt.plan() else {
            return Ok(false);
        };
        let generation = self.shared.generation.load(Ordering::Relaxed);
        let epoch = stmt.epoch();
        let same_names = st.plan_lowercase == st.catalog_result;
        if let Some(p) = &mut st.plan {
            if same_names && p.generation == generation && (p.epoch == epoch || *p.core == **core) {
                // Same epoch, or a new result set shaped exactly like the last one (the same
                // query executed again): the decoders, names and description still hold.
                p.epoch = epoch;
                p.core = core.clone();
                return Ok(true);
            }
        }
        let errors = *self
            .shared
            .text_errors
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let converters = self
            .shared
            .converters
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let flags = crate::py::compat::ModuleFlags::read(py);
        let uuid_as_str = !self.shared.native_uuid.load(Ordering::Relaxed) || !flags.native_uuid;
        let plan = PyPlan::build(
            py,
            core.clone(),
            epoch,
            generation,
            &converters,
            errors,
            uuid_as_str,
            flags.lowercase || st.catalog_result,
        )?;
        drop(converters);
        st.plan = Some(plan);
        st.plan_lowercase = st.catalog_result;
        Ok(true)
    }

    fn require_results(&self, py: Python<'_>, st: &mut CursorState) -> PyResult<()> {
        if st.stmt.is_none() {
            return Err(programming("No results. Execute a query before fetching."));
        }
        if !self.ensure_plan(py, st)? {
            return Err(programming("No results. Previous SQL was not a query."));
        }
        Ok(())
    }

    fn apply_timeout(&self, py: Python<'_>, st: &mut CursorState) -> PyResult<()> {
        let timeout = self.shared.timeout.load(Ordering::Relaxed);
        if timeout != st.applied_timeout {
            self.statement(py, st)?.set_query_timeout(timeout).py(py)?;
            st.applied_timeout = timeout;
        }
        let lob = self.shared.max_lob_bytes.load(Ordering::Relaxed);
        if lob != st.applied_max_lob_bytes {
            self.statement(py, st)?.set_max_lob_bytes(lob);
            st.applied_max_lob_bytes = lob;
        }
        Ok(())
    }
}

#[pymethods]
impl Cursor {
    #[new]
    fn py_new(connection: &Bound<'_, Connection>) -> PyResult<Cursor> {
        if connection.get().shared.is_closed() {
            return Err(programming("Attempt to use a closed connection."));
        }
        Ok(Cursor::new(
            connection.clone().unbind(),
            connection.get().shared.clone(),
        ))
    }

    /// Column descriptions of the current result set (7-tuples), or None.
    #[getter]
    fn description(&self, py: Python<'_>) -> PyResult<Option<Py<PyTuple>>> {
        let mut guard = self.lock(py)?;
        if !self.ensure_plan(py, &mut guard)? {
            return Ok(None);
        }
        Ok(guard
            .plan
            .as_ref()
            .map(|p| p.schema.get().description.clone_ref(py)))
    }

    /// Rows affected by the last INSERT/UPDATE/DELETE; -1 for result sets and when unknown.
    #[getter]
    fn rowcount(&self, py: Python<'_>) -> PyResult<isize> {
        let guard = self.lock(py)?;
        Ok(guard.stmt.as_ref().map_or(-1, |s| s.row_count()))
    }

    /// Zero-based index of the next row in the current result set.
    #[getter]
    fn rownumber(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        let guard = self.lock(py)?;
        Ok(guard
            .stmt
            .as_ref()
            .filter(|s| s.has_result_set())
            .map(|s| s.rows_served()))
    }

    /// Informational messages (PRINT, low-severity RAISERROR, warnings) of the last execute or
    /// nextset, as `(f"[{sqlstate}] ({native_error})", message)` tuples like pyodbc.
    #[getter]
    fn messages(&self, py: Python<'_>) -> PyResult<Vec<(String, String)>> {
        let guard = self.lock(py)?;
        Ok(guard.stmt.as_ref().map_or_else(Vec::new, |s| {
            s.messages()
                .iter()
                .map(|d| {
                    (
                        format!("[{}] ({})", d.sqlstate, d.native_error),
                        d.message.clone(),
                    )
                })
                .collect()
        }))
    }

    #[getter]
    fn get_arraysize(&self) -> usize {
        self.arraysize.load(Ordering::Relaxed)
    }

    #[setter]
    fn set_arraysize(&self, n: usize) -> PyResult<()> {
        if n == 0 {
            return Err(programming("arraysize must be at least 1"));
        }
        self.arraysize.store(n, Ordering::Relaxed);
        Ok(())
    }

    #[getter]
    fn connection(&self, py: Python<'_>) -> Py<Connection> {
        self.connection.clone_ref(py)
    }

    /// Ask the driver to stop what this cursor is doing (safe from another thread). The
    /// interrupted call raises OperationalError (HY008).
    fn cancel(&self, py: Python<'_>) -> PyResult<()> {
        let handle = self
            .cancel
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        match handle {
            Some(h) => py.detach(|| h.cancel()).py(py),
            None => Ok(()),
        }
    }

    /// Close the cursor: pending results are discarded and the statement freed. Idempotent.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let mut guard = self.lock_any(py)?;
        if guard.closed {
            return Ok(());
        }
        *self.cancel.lock().unwrap_or_else(|e| e.into_inner()) = None;
        let mut stmt = guard.stmt.take();
        guard.release();
        drop(guard);
        if let Some(s) = stmt.as_mut() {
            // Discarding pending rows may wait for the server's ATTENTION acknowledgement.
            let result = py.detach(|| s.close());
            py.detach(move || drop(stmt));
            if !self.shared.is_closed() {
                result.py(py)?;
            }
        }
        Ok(())
    }

    #[getter]
    fn closed(&self, py: Python<'_>) -> PyResult<bool> {
        if self.shared.is_closed() {
            return Ok(true);
        }
        // Waits (GIL released) for a call running on another thread; inside one of this
        // cursor's own calls it is an error like any other re-entrant use.
        Ok(self.lock_any(py)?.closed)
    }

    /// Commit the connection's transaction (pyodbc's `cursor.commit()`).
    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        drop(self.lock(py)?);
        self.connection.bind(py).call_method0("commit")?;
        Ok(())
    }

    /// Roll back the connection's transaction (pyodbc's `cursor.rollback()`).
    fn rollback(&self, py: Python<'_>) -> PyResult<()> {
        drop(self.lock(py)?);
        self.connection.bind(py).call_method0("rollback")?;
        Ok(())
    }

    #[getter]
    fn get_fast_executemany(&self) -> bool {
        self.fast_executemany.load(Ordering::Relaxed)
    }

    #[setter]
    fn set_fast_executemany(&self, on: bool) {
        self.fast_executemany.store(on, Ordering::Relaxed);
    }

    #[getter]
    fn get_rows_as_dicts(&self) -> bool {
        self.rows_as_dicts.load(Ordering::Relaxed)
    }

    #[setter]
    fn set_rows_as_dicts(&self, on: bool) {
        self.rows_as_dicts.store(on, Ordering::Relaxed);
    }

    #[getter]
    fn get_noscan(&self) -> bool {
        self.noscan.load(Ordering::Relaxed)
    }

    /// Set on the statement handle at once (as pyodbc does): a driver that does not support
    /// SQL_ATTR_NOSCAN (SQLite3 ODBC) raises here, not at some later execute.
    #[setter]
    fn set_noscan(&self, py: Python<'_>, on: bool) -> PyResult<()> {
        let mut guard = self.lock(py)?;
        let stmt = self.statement(py, &mut guard)?;
        py.detach(|| stmt.set_noscan(on)).py(py)?;
        self.noscan.store(on, Ordering::Relaxed);
        Ok(())
    }

    /// The statement handle as a `ctypes.c_void_p`; None before first use and once closed.
    #[getter]
    fn hstmt(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let address = {
            let guard = self.lock_any(py)?;
            guard.stmt.as_ref().map(Statement::handle_address)
        };
        address
            .map(|a| crate::py::compat::void_p(py, a))
            .transpose()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _t: Option<&Bound<'_, PyAny>>,
        _v: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }
}
