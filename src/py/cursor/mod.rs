//! `Cursor`: execute, and every fetch shape served from the one native batch.
//!
//! `fetch.rs`: the fetch protocol and every fetch shape; `execute.rs`: execute, executemany,
//! callproc, parameters; `catalog.rs`: the ODBC catalog functions. Each file adds its own
//! `#[pymethods]` block (PyO3's `multiple-pymethods`).

mod bulk;
mod bulk_arrow;
mod catalog;
mod execute;
mod execute_many;
mod execute_rows;
mod fetch;
mod open;
pub(super) mod state;

use state::{CursorCell, CursorState, Guard, thread_token};

use crate::odbc::CancelHandle;
use crate::py::connection::Connection;
use crate::py::errors::{IntoPyResult, programming};
use crate::py::plan::ColumnDecoder;
use crate::py::plan::PyPlan;
use crate::py::row::list_row_type;
use crate::py::shape::RowShape;
use crate::py::shared::ConnShared;
use crate::statement::Statement;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use pyo3::{PyTraverseError, PyVisit};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

#[pyclass(frozen, subclass, weakref, module = "ferrodbc", name = "Cursor")]
pub struct Cursor {
    // Field order is drop order: the statement (in `cell`) must be freed while the connection
    // handle it belongs to is still alive (`shared` may hold the last reference to it). Freeing a
    // statement after its connection crashed Driver 18 at interpreter exit.
    cell: Arc<CursorCell>,
    connection: Py<Connection>,
    shared: Arc<ConnShared>,
    /// Kept outside `state` so `cancel()` works while another thread holds the state in a fetch.
    cancel: Mutex<Option<CancelHandle>>,
    arraysize: AtomicUsize,
    /// `row_factory`, kept outside `state` so reading or setting it never waits for a call
    /// running on another thread (asyncio's clean-up of a cancelled call reads it on the loop).
    /// Never held across a Python or driver call.
    row_factory: Mutex<Option<Py<PyAny>>>,
    /// Bumped under `row_factory`'s lock each time it is set: a result set's row shape chosen
    /// under an earlier factory is chosen again at the next fetch.
    row_factory_version: AtomicU64,
    /// Set by `cancel()` to stop a bulk load between rows (it runs on the connection's handle,
    /// not on a statement the driver could cancel).
    bulk_cancel: Arc<AtomicBool>,
    /// pyodbc's `fast_executemany`. ferrodbc always sends executemany as parameter arrays; the
    /// flag is kept for programs that set and read it.
    fast_executemany: AtomicBool,
    /// pyodbc's `noscan`: SQL_ATTR_NOSCAN on the statement (the driver leaves `{fn ...}` /
    /// `{d ...}` escape sequences unscanned; psqlODBC accepts it and scans anyway).
    noscan: AtomicBool,
}

impl Drop for Cursor {
    /// Leave the connection's list of cursors (with any other dead entry): a long-lived
    /// connection making a cursor per statement kept ~800 bytes per cursor it ever made.
    /// A statement still held is handed to the connection (`ConnShared::orphans`), which frees
    /// it at its next call, on that call's thread, or when it closes.
    fn drop(&mut self) {
        let stmt = match self.cell.state.try_lock() {
            Ok(mut st) => st.stmt.take(),
            Err(_) => None,
        };
        if let Some(stmt) = stmt {
            // Checked under the list's lock: `close` marks the connection closed before it
            // takes the list, so a statement is either taken by it or freed here.
            let mut orphans = self
                .shared
                .orphans
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if self.shared.is_closed() {
                drop(orphans);
                Python::attach(|py| py.detach(move || drop(stmt)));
            } else {
                orphans.push(stmt);
            }
        }
        let mut cursors = self
            .shared
            .cursors
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let me = Arc::as_ptr(&self.cell);
        cursors.retain(|w| w.strong_count() > 0 && !std::ptr::eq(w.as_ptr(), me));
    }
}

impl Cursor {
    pub fn new(py: Python<'_>, connection: Py<Connection>, shared: Arc<ConnShared>) -> Cursor {
        // A cursor starts with its connection's row factory (as in sqlite3).
        let row_factory = shared
            .row_factory
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|f| f.clone_ref(py));
        let cell = Arc::new(CursorCell {
            state: Mutex::new(CursorState::default()),
            owner: AtomicUsize::new(0),
        });
        shared
            .cursors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arc::downgrade(&cell));
        Cursor {
            connection,
            shared,
            cell,
            cancel: Mutex::new(None),
            bulk_cancel: Arc::new(AtomicBool::new(false)),
            arraysize: AtomicUsize::new(1),
            row_factory: Mutex::new(row_factory),
            row_factory_version: AtomicU64::new(0),
            fast_executemany: AtomicBool::new(false),
            noscan: AtomicBool::new(false),
        }
    }

    /// `row_factory` now (None: `ferrodbc.Row`).
    pub(super) fn current_row_factory(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        let factory = self.row_factory.lock().unwrap_or_else(|e| e.into_inner());
        factory.as_ref().map(|f| f.clone_ref(py))
    }

    /// The version `current_row_factory` belongs to (see `row_factory_version`).
    pub(super) fn row_factory_version(&self) -> u64 {
        self.row_factory_version.load(Ordering::Acquire)
    }

    fn replace_row_factory(&self, factory: Option<Py<PyAny>>) {
        let mut slot = self.row_factory.lock().unwrap_or_else(|e| e.into_inner());
        let old = std::mem::replace(&mut *slot, factory);
        self.row_factory_version.fetch_add(1, Ordering::AcqRel);
        drop(slot);
        // Dropped unlocked: a finalizer may read this cursor's row_factory.
        drop(old);
    }

    /// Lock the cursor's state, refusing re-entrant use from the thread that already holds it.
    fn lock_any(&self, py: Python<'_>) -> PyResult<Guard<'_>> {
        if self.cell.held_by_this_thread() {
            return Err(programming(
                "The cursor is busy: it was used from a callback (e.g. an output converter) running inside one of its own calls.",
            ));
        }
        let gate = self.shared.calls.enter(py);
        let inner = self.cell.lock_state(py);
        self.cell.owner.store(thread_token(), Ordering::Release);
        Ok(Guard {
            inner,
            owner: &self.cell.owner,
            _gate: gate,
        })
    }

    /// [`Self::lock_any`] for an open cursor on an open connection.
    fn lock(&self, py: Python<'_>) -> PyResult<Guard<'_>> {
        let guard = self.lock_any(py)?;
        self.shared.free_orphans(py);
        // The connection first: closing it closes its cursors, and the message should say which.
        if self.shared.is_closed() {
            return Err(programming("The cursor's connection has been closed."));
        }
        if guard.closed {
            return Err(programming("Attempt to use a closed cursor."));
        }
        self.shared.check_process()?;
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
            let mut conn = self.shared.lock_conn(py)?;
            let conn = conn
                .as_mut()
                .ok_or_else(|| programming("The cursor's connection has been closed."))?;
            let alloc = &mut *conn;
            let stmt = py.detach(move || alloc.new_statement()).py(py)?;
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
        let Some(core) = stmt.row_set().plan() else {
            return Ok(false);
        };
        let generation = self.shared.generation.load(Ordering::Relaxed);
        let epoch = stmt.epoch();
        let same_names = st.plan_lowercase == st.catalog_result;
        if let Some(p) = &mut st.plan {
            if same_names && p.generation == generation && (p.epoch == epoch || *p.core == **core) {
                // Same epoch, or a new result set shaped exactly like the last one (the same
                // query executed again): the decoders, names and description still hold.
                if p.epoch != epoch || !Arc::ptr_eq(&p.core, core) {
                    if p.epoch != epoch {
                        st.shape = None;
                    }
                    match Arc::get_mut(p) {
                        Some(p) => {
                            p.epoch = epoch;
                            p.core = core.clone();
                        }
                        // Lazy rows of the earlier result set still decode with it.
                        None => *p = Arc::new(p.rebased(py, epoch, core.clone())),
                    }
                }
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
        // The face's row factory: `Row`s of its own type (a later change of factory is seen by
        // the next result set's plan).
        let list_rows = self
            .current_row_factory(py)
            .is_some_and(|f| list_row_type(py).is_ok_and(|t| f.bind(py).is(t)));
        let plan = PyPlan::build(
            py,
            core.clone(),
            epoch,
            generation,
            &converters,
            errors,
            uuid_as_str,
            flags.lowercase || st.catalog_result,
            list_rows,
        )?;
        drop(converters);
        st.plan = Some(Arc::new(plan));
        st.shape = None;
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

    /// Put the connection's query timeout and LOB limit on the statement, if they changed. The
    /// GIL is released: the statement first waits for a prefetch still fetching ahead, which
    /// can take as long as the server does.
    fn apply_timeout(&self, py: Python<'_>, st: &mut CursorState) -> PyResult<()> {
        let timeout = self.shared.timeout.load(Ordering::Relaxed);
        let lob = self.shared.max_lob_bytes.load(Ordering::Relaxed);
        let (new_timeout, new_lob) = (
            timeout != st.applied_timeout,
            lob != st.applied_max_lob_bytes,
        );
        if !new_timeout && !new_lob {
            return Ok(());
        }
        let stmt = self.statement(py, st)?;
        py.detach(|| {
            if new_timeout {
                stmt.set_query_timeout(timeout)?;
            }
            if new_lob {
                stmt.set_max_lob_bytes(lob);
            }
            Ok(())
        })
        .py(py)?;
        st.applied_timeout = timeout;
        st.applied_max_lob_bytes = lob;
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
            connection.py(),
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
        // -1 on a closed cursor (or one whose connection is closed), as pyodbc answers:
        // SQLAlchemy's pyodbc dialect reads it after a fully fetched result closed its cursor.
        let guard = self.lock_any(py)?;
        if guard.closed || self.shared.is_closed() {
            return Ok(-1);
        }
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
            .map(|s| s.row_set().rows_served()))
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
        self.bulk_cancel.store(true, Ordering::Relaxed);
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
        let mut stmt = guard.release();
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

    /// pyodbc's `rows_as_dicts`: the same as `row_factory` being `dict`.
    #[getter]
    fn get_rows_as_dicts(&self, py: Python<'_>) -> bool {
        self.current_row_factory(py)
            .is_some_and(|f| f.is(py.get_type::<pyo3::types::PyDict>()))
    }

    /// Sets `row_factory` to `dict` (True) or back to None (False, if it was `dict`).
    #[setter]
    fn set_rows_as_dicts(&self, py: Python<'_>, on: bool) {
        if on != self.get_rows_as_dicts(py) {
            let dict = on.then(|| py.get_type::<pyo3::types::PyDict>().into_any().unbind());
            self.replace_row_factory(dict);
        }
    }

    /// How rows are returned: None (`ferrodbc.Row`), `dict`, `ferrodbc.LazyRow`, or a factory
    /// called as `factory(cursor.description)` once per result set, whose result is called with
    /// each row's values as a tuple (see `ferrodbc.namedtuple_row`). Takes effect at the next
    /// fetch.
    #[getter]
    fn get_row_factory(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.current_row_factory(py)
    }

    #[setter]
    fn set_row_factory(&self, factory: Option<Bound<'_, PyAny>>) -> PyResult<()> {
        let factory = crate::py::shape::check_factory(factory)?;
        self.replace_row_factory(factory);
        Ok(())
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

    /// The cyclic GC's view of what the cursor holds: its connection, the current plan's
    /// converters and row schema, the `Output` parameters. Never blocks: a state locked by a
    /// running call (which holds the cursor alive anyway) is skipped.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.connection)?;
        if let Ok(f) = self.row_factory.try_lock()
            && let Some(f) = &*f
        {
            visit.call(f)?;
        }
        if let Ok(st) = self.cell.state.try_lock() {
            if let Some(plan) = &st.plan {
                visit.call(&plan.schema)?;
                for f in plan.decoders.iter().filter_map(ColumnDecoder::converter) {
                    visit.call(f)?;
                }
            }
            for (_, out) in &st.outputs {
                visit.call(out)?;
            }
            if let Some(RowShape::Maker(maker)) = &st.shape {
                visit.call(maker)?;
            }
        }
        Ok(())
    }

    /// Break cycles through the plan, the outputs, a deferred error and the row factory (the
    /// cursor is garbage).
    fn __clear__(&self) {
        let taken = match self.cell.state.try_lock() {
            Ok(mut st) => (
                st.plan.take(),
                std::mem::take(&mut st.outputs),
                st.pending.take(),
                st.shape.take(),
            ),
            Err(_) => return,
        };
        let factory = self.row_factory.try_lock().ok().and_then(|mut f| f.take());
        drop(factory);
        // Dropped unlocked: finalizers may call back into this cursor.
        drop(taken);
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
