//! `Cursor`: execute, and every fetch shape served from the one native batch.

use super::arrow::{DEFAULT_ROWS_PER_BATCH, LazyBatches, RecordBatchStream, TABLE_ROWS_PER_BATCH};
use super::connection::{ConnShared, Connection};
use super::decode::{build_first_value, build_one_row, build_rows};
use super::errors::{IntoPyResult, programming};
use super::output::Output;
use super::params::{to_input_size, to_param};
use super::plan::{ColumnDecoder, PyPlan};
use crate::arrow::{ArrowLayout, ArrowOptions, BatchAssembler};
use crate::decode::TextErrors;
use crate::odbc::CancelHandle;
use crate::params::{InputSize, ParamValue, check_procedure_name, count_markers};
use crate::rowset::Served;
use crate::statement::Statement;
use pyo3::exceptions::PyStopIteration;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use std::sync::atomic::{AtomicUsize, Ordering};
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
    /// `Output` parameters of the last execute, by parameter index: filled when its last result
    /// set has been read.
    outputs: Vec<(usize, Py<Output>)>,
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
            return Err(super::errors::OperationalError::new_err(
                "The connection to the database was lost; open a new connection.",
            ));
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
        if let Some(p) = &mut st.plan {
            if p.generation == generation && (p.epoch == epoch || *p.core == **core) {
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
        let uuid_as_str = !self.shared.native_uuid.load(Ordering::Relaxed);
        let plan = PyPlan::build(
            py,
            core.clone(),
            epoch,
            generation,
            &converters,
            errors,
            uuid_as_str,
        )?;
        drop(converters);
        st.plan = Some(plan);
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

    /// The start of every fetch: the error an earlier fetch deferred, then the result set and
    /// its Python plan. Returns the statement, the plan and the slot for a deferred error.
    fn begin_fetch<'s>(
        &self,
        py: Python<'_>,
        st: &'s mut CursorState,
    ) -> PyResult<(&'s mut Statement, &'s PyPlan, &'s mut Option<PyErr>)> {
        if let Some(err) = st.pending.take() {
            return Err(err);
        }
        self.require_results(py, st)?;
        let CursorState {
            stmt,
            plan,
            pending,
            ..
        } = st;
        let stmt = stmt.as_mut().expect("checked by require_results");
        let plan = plan.as_ref().expect("checked by require_results");
        Ok((stmt, plan, pending))
    }

    /// The one fetch protocol of every fetch shape: up to `max` buffered rows, the batch refilled
    /// from the driver (GIL released) only when it is used up; `None` at the end of the result
    /// set. When the last row array was full the statement is already fetching the next one on
    /// another thread, so decoding these rows overlaps with it.
    fn next_served<'s>(
        &self,
        py: Python<'_>,
        stmt: &'s mut Statement,
        max: usize,
    ) -> PyResult<Option<Served<'s>>> {
        if stmt.needs_fetch() {
            py.detach(|| stmt.fill())
                .map_err(|e| self.shared.track(e))
                .py(py)?;
        }
        if stmt.buffered() == 0 {
            return Ok(None);
        }
        Ok(Some(stmt.serve(max)))
    }

    /// Up to `max` rows as Python rows (fetchmany, fetchall). An error after some rows: those
    /// rows are returned and the error is raised by the next call, except for fetchall
    /// (`max == usize::MAX`), which raises at once (see `with_partial_rows`).
    fn fetch_rows(
        &self,
        py: Python<'_>,
        st: &mut CursorState,
        max: usize,
    ) -> PyResult<Vec<Py<PyAny>>> {
        let (stmt, plan, pending) = self.begin_fetch(py, st)?;
        let mut out: Vec<Py<PyAny>> = Vec::new();
        while out.len() < max {
            let err = match self.next_served(py, stmt, max - out.len()) {
                Ok(None) => break,
                Ok(Some(served)) => {
                    let (batch, rows, base) = (served.batch, served.rows, served.base);
                    match build_rows(py, plan, batch, rows, base, &mut out)? {
                        None => continue,
                        Some(fail) => {
                            // Rows before the bad one are delivered; the bad row is consumed;
                            // rows after it are served by the next fetch.
                            stmt.rewind_to(fail.row + 1);
                            fail.err
                        }
                    }
                }
                Err(err) => err,
            };
            if out.is_empty() {
                return Err(err);
            }
            if max == usize::MAX {
                return Err(with_partial_rows(py, err, out));
            }
            *pending = Some(err);
            break;
        }
        Ok(out)
    }

    /// Run an execute on the statement (GIL released), with the `setinputsizes` of this call,
    /// then plan the result set it produced.
    fn run(
        &self,
        py: Python<'_>,
        outputs: Vec<(usize, Py<Output>)>,
        op: impl FnOnce(&mut Statement, &[InputSize]) -> crate::Result<()> + Send,
    ) -> PyResult<()> {
        let mut guard = self.lock(py)?;
        let st = &mut *guard;
        st.pending = None;
        st.discard_outputs();
        for (_, out) in &outputs {
            out.get().reset();
        }
        st.outputs = outputs;
        // `st.plan` stays: `ensure_plan` reuses it only if the new result set has exactly the
        // same shape (re-executing a query), and never past a converter or setting change.
        self.apply_timeout(py, st)?;
        let sizes = std::mem::take(&mut st.input_sizes);
        let stmt = self.statement(py, st)?;
        if let Err(e) = py.detach(|| op(stmt, &sizes)) {
            st.discard_outputs();
            return Err(super::errors::to_pyerr(py, self.shared.track(e)));
        }
        self.deliver_outputs(py, st)?;
        self.ensure_plan(py, st)?;
        Ok(())
    }

    /// Hand output parameter values to their `Output` objects once the statement has them.
    fn deliver_outputs(&self, py: Python<'_>, st: &mut CursorState) -> PyResult<()> {
        let Some(values) = st.stmt.as_mut().and_then(Statement::take_outputs) else {
            return Ok(());
        };
        let errors = *self
            .shared
            .text_errors
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for (index, value) in values {
            if let Some((_, out)) = st.outputs.iter().find(|(i, _)| *i == index) {
                out.get().set_value(py, &value, errors)?;
            }
        }
        st.outputs.clear();
        Ok(())
    }

    /// Forget the current result set (an execute was rejected before reaching the driver).
    fn discard_result(&self, py: Python<'_>) -> PyResult<()> {
        let mut guard = self.lock(py)?;
        let st = &mut *guard;
        st.pending = None;
        st.plan = None;
        st.discard_outputs();
        if let Some(stmt) = st.stmt.as_mut() {
            py.detach(|| stmt.close()).py(py)?;
        }
        Ok(())
    }

    /// The next row, or None: the one-row path of fetchone, iteration and fetchmany(1), without
    /// `fetch_rows`'s vectors. A row that fails to decode is consumed: the next call continues
    /// after it.
    fn fetch_one(&self, py: Python<'_>, st: &mut CursorState) -> PyResult<Option<Py<PyAny>>> {
        let (stmt, plan, _) = self.begin_fetch(py, st)?;
        let Some(served) = self.next_served(py, stmt, 1)? else {
            return Ok(None);
        };
        build_one_row(py, plan, served.batch, served.rows.start, served.base)
            .map(Some)
            .map_err(|f| f.err)
    }

    /// Start an Arrow read of the current result set: its Arrow layout, the epoch it belongs to
    /// and the text policy. NotSupportedError for a column without an Arrow type, and when
    /// output converters apply to the result set (Arrow never calls them: the values would
    /// silently differ from the rows').
    fn arrow_start(
        &self,
        py: Python<'_>,
        options: ArrowOptions,
    ) -> PyResult<(Arc<ArrowLayout>, u64, TextErrors)> {
        let mut guard = self.lock(py)?;
        let st = &mut *guard;
        self.require_results(py, st)?;
        let plan = st.plan.as_ref().expect("checked by require_results");
        let converted = plan
            .decoders
            .iter()
            .position(|d| matches!(d, ColumnDecoder::Converted(..)));
        if let Some(i) = converted {
            return Err(super::errors::NotSupportedError::new_err(format!(
                "Arrow fetch does not apply output converters, and one is registered for the \
                 SQL type of column {:?} (index {i}); fetch rows, or clear the converters",
                plan.core.columns[i].desc.name
            )));
        }
        let layout = ArrowLayout::new(plan.core.clone(), options).py(py)?;
        let epoch = st.stmt.as_ref().map_or(0, Statement::epoch);
        Ok((Arc::new(layout), epoch, plan.errors))
    }

    /// The next record batch of up to `max` rows, assembled from served rows through the one
    /// fetch protocol (`begin_fetch`, `next_served`); `None` at the end of the result set. Any
    /// error raises at once: the rows of the batch under construction are not handed out.
    pub(super) fn next_arrow_batch(
        &self,
        py: Python<'_>,
        epoch: u64,
        assembler: &mut BatchAssembler,
        max: usize,
    ) -> PyResult<Option<arrow_array::RecordBatch>> {
        let mut guard = self.lock(py)?;
        if guard.stmt.as_ref().map(Statement::epoch) != Some(epoch) {
            return Err(programming(
                "The cursor executed again or moved to another result set: this record batch \
                 stream is over.",
            ));
        }
        let (stmt, _, _) = self.begin_fetch(py, &mut guard)?;
        while assembler.rows() < max {
            let Some(served) = self.next_served(py, stmt, max - assembler.rows())? else {
                break;
            };
            let base = served.base;
            if let Err(err) = assembler.append(&served) {
                // As for rows, the failing row is consumed and the rows after it are served by
                // the next fetch; the batch under construction is dropped.
                if let crate::Error::Decode { row, .. } = &err {
                    stmt.rewind_to((row - base) as usize + 1);
                }
                assembler.discard();
                return Err(super::errors::to_pyerr(py, err));
            }
        }
        if assembler.rows() == 0 {
            return Ok(None);
        }
        assembler.finish().py(py).map(Some)
    }

    fn apply_timeout(&self, py: Python<'_>, st: &mut CursorState) -> PyResult<()> {
        let timeout = self.shared.timeout.load(Ordering::Relaxed);
        if timeout != st.applied_timeout {
            self.statement(py, st)?.set_query_timeout(timeout).py(py)?;
            st.applied_timeout = timeout;
        }
        Ok(())
    }
}

/// `fetchall()` promises every remaining row, so an error after some rows raises right away
/// (a short list would be silently truncated data); the rows already read ride on the exception
/// as `partial_rows`. `fetchone`/`fetchmany` instead hand those rows out and raise on the next
/// call.
fn with_partial_rows(py: Python<'_>, err: PyErr, rows: Vec<Py<PyAny>>) -> PyErr {
    if let Ok(list) = PyList::new(py, rows) {
        let _ = err.value(py).setattr("partial_rows", list);
    }
    err
}

/// The Arrow fetch options from their Python spelling.
fn arrow_options(datetimeoffset: &str) -> PyResult<ArrowOptions> {
    let offsets = match datetimeoffset {
        "utc" => false,
        "struct" => true,
        other => {
            return Err(programming(format!(
                "datetimeoffset must be 'utc' or 'struct', not {other:?}"
            )));
        }
    };
    Ok(ArrowOptions { offsets })
}

/// `execute(sql, a, b)` and `execute(sql, [a, b])` / `execute(sql, (a, b))` are both accepted.
fn flatten_params<'py>(params: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyAny>> {
    if params.len() == 1 {
        let first = params.get_item(0)?;
        let is_sequence = (first.is_instance_of::<PyTuple>() || first.is_instance_of::<PyList>())
            && !first.is_instance_of::<PyString>()
            && !first.is_instance_of::<PyBytes>();
        if is_sequence {
            return Ok(first);
        }
    }
    Ok(params.clone().into_any())
}

fn convert_row(seq: &Bound<'_, PyAny>) -> PyResult<Vec<ParamValue>> {
    let mut out = Vec::new();
    for (i, item) in seq.try_iter()?.enumerate() {
        out.push(to_param(&item?, i)?);
    }
    Ok(out)
}

/// The `Output` objects among one row of parameters, by index.
fn outputs_of(seq: &Bound<'_, PyAny>) -> PyResult<Vec<(usize, Py<Output>)>> {
    let mut out = Vec::new();
    for (i, item) in seq.try_iter()?.enumerate() {
        if let Ok(o) = item?.cast_into::<Output>() {
            out.push((i, o.unbind()));
        }
    }
    Ok(out)
}

fn check_count(sql: &str, supplied: usize, dbms: crate::backend::Dbms) -> PyResult<()> {
    let markers = count_markers(sql, dbms);
    if markers != supplied {
        return Err(programming(format!(
            "The SQL contains {markers} parameter markers, but {supplied} parameters were supplied"
        )));
    }
    Ok(())
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

    /// Execute `sql` with qmark (`?`) parameters; returns the cursor.
    #[pyo3(signature = (sql, *params))]
    pub fn execute<'py>(
        slf: &Bound<'py, Self>,
        sql: &str,
        params: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, Self>> {
        let py = slf.py();
        let this = slf.get();
        let params = flatten_params(params)?;
        let converted = convert_row(&params)
            .and_then(|v| check_count(sql, v.len(), this.shared.dbms).map(|_| v))
            .and_then(|v| Ok((v, outputs_of(&params)?)));
        let (values, outputs) = match converted {
            Ok(v) => v,
            Err(e) => {
                // A rejected execute still ends the previous result: no stale row may follow.
                this.discard_result(py)?;
                return Err(e);
            }
        };
        this.run(py, outputs, move |stmt, sizes| {
            stmt.execute(sql, values, sizes)
        })?;
        Ok(slf.clone())
    }

    /// Execute `sql` once per parameter row, as one parameter array per call (one round trip)
    /// when each column's values share a binding type.
    fn executemany<'py>(
        slf: &Bound<'py, Self>,
        sql: &str,
        seq_of_params: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        let py = slf.py();
        let this = slf.get();
        let mut rows = Vec::new();
        let converted = (|| -> PyResult<()> {
            for row in seq_of_params.try_iter()? {
                let row = convert_row(&row?)?;
                check_count(sql, row.len(), this.shared.dbms)?;
                rows.push(row);
            }
            Ok(())
        })();
        if let Err(e) = converted {
            this.discard_result(py)?;
            return Err(e);
        }
        this.run(py, Vec::new(), move |stmt, sizes| {
            stmt.execute_many(sql, rows, sizes)
        })?;
        Ok(slf.clone())
    }

    fn fetchone(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let mut guard = self.lock(py)?;
        self.fetch_one(py, &mut guard)
    }

    /// Call a stored procedure as `{CALL procname(?, ...)}`. Row counts before the procedure's
    /// first result set are skipped, so the cursor is on its rows (if any). Returns a copy of
    /// `parameters` with each `Output` replaced by its value when the value has arrived (the
    /// call produced no result set); otherwise the `Output` objects stay in the copy and their
    /// `.value` is set once the last result set has been read.
    #[pyo3(signature = (procname, parameters = None))]
    fn callproc<'py>(
        slf: &Bound<'py, Self>,
        procname: &str,
        parameters: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        check_procedure_name(procname).py(py)?;
        let params: Vec<Bound<'py, PyAny>> = match parameters {
            Some(p) => p.try_iter()?.collect::<PyResult<_>>()?,
            None => Vec::new(),
        };
        let sql = if params.is_empty() {
            format!("{{CALL {procname}}}")
        } else {
            format!(
                "{{CALL {procname}({})}}",
                vec!["?"; params.len()].join(", ")
            )
        };
        Self::execute(slf, &sql, &PyTuple::new(py, [PyList::new(py, &params)?])?)?;
        let this = slf.get();
        loop {
            let on_rows = this
                .lock(py)?
                .stmt
                .as_ref()
                .is_some_and(Statement::has_result_set);
            if on_rows || !this.nextset(py)? {
                break;
            }
        }
        let copy = params
            .iter()
            .map(|p| {
                match p
                    .cast::<Output>()
                    .ok()
                    .and_then(|o| o.get().ready_value(py))
                {
                    Some(v) => v.into_bound(py),
                    None => p.clone(),
                }
            })
            .collect::<Vec<_>>();
        if parameters.is_some_and(|p| p.is_instance_of::<PyList>()) {
            Ok(PyList::new(py, copy)?.into_any())
        } else {
            Ok(PyTuple::new(py, copy)?.into_any())
        }
    }

    #[pyo3(signature = (size = None))]
    fn fetchmany<'py>(&self, py: Python<'py>, size: Option<isize>) -> PyResult<Bound<'py, PyList>> {
        let n = match size {
            None => self.arraysize.load(Ordering::Relaxed),
            Some(n) if n < 0 => return Err(programming("fetchmany size must not be negative")),
            Some(n) => n as usize,
        };
        let mut guard = self.lock(py)?;
        if n == 1 {
            let row = self.fetch_one(py, &mut guard)?;
            return PyList::new(py, row);
        }
        PyList::new(py, self.fetch_rows(py, &mut guard, n)?)
    }

    fn fetchall<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut guard = self.lock(py)?;
        PyList::new(py, self.fetch_rows(py, &mut guard, usize::MAX)?)
    }

    /// The first column of the next row (or None when there is no row); no row object is built.
    fn fetchval(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let mut guard = self.lock(py)?;
        let (stmt, plan, _) = self.begin_fetch(py, &mut guard)?;
        let Some(served) = self.next_served(py, stmt, 1)? else {
            return Ok(None);
        };
        build_first_value(py, plan, served.batch, served.rows.start, served.base)
            .map(Some)
            .map_err(|f| f.err)
    }

    /// The rest of the current result set as Arrow record batches of `rows_per_batch` rows
    /// (default 8,192), read lazily by whoever consumes the stream (`__arrow_c_stream__`).
    /// `datetimeoffset`: `"utc"` (timestamp[us, tz=UTC]) or `"struct"` (instant and offset).
    #[pyo3(signature = (rows_per_batch = None, *, datetimeoffset = "utc"))]
    fn fetch_record_batch(
        slf: &Bound<'_, Self>,
        rows_per_batch: Option<usize>,
        datetimeoffset: &str,
    ) -> PyResult<RecordBatchStream> {
        let py = slf.py();
        let rows = rows_per_batch.unwrap_or(DEFAULT_ROWS_PER_BATCH);
        if rows == 0 {
            return Err(programming("rows_per_batch must be at least 1"));
        }
        let (layout, epoch, errors) = slf.get().arrow_start(py, arrow_options(datetimeoffset)?)?;
        Ok(RecordBatchStream::lazy(LazyBatches {
            cursor: slf.clone().unbind(),
            epoch,
            assembler: BatchAssembler::new(&layout, rows.min(DEFAULT_ROWS_PER_BATCH), errors),
            layout,
            rows_per_batch: rows,
            done: false,
        }))
    }

    /// The rest of the current result set as one Arrow table (an object with
    /// `__arrow_c_stream__`), read now: an error anywhere raises here. `datetimeoffset` as
    /// for `fetch_record_batch`.
    #[pyo3(signature = (*, datetimeoffset = "utc"))]
    fn fetch_arrow_table(
        &self,
        py: Python<'_>,
        datetimeoffset: &str,
    ) -> PyResult<RecordBatchStream> {
        let (layout, epoch, errors) = self.arrow_start(py, arrow_options(datetimeoffset)?)?;
        let mut assembler = BatchAssembler::new(&layout, DEFAULT_ROWS_PER_BATCH, errors);
        let mut batches = Vec::new();
        while let Some(b) =
            self.next_arrow_batch(py, epoch, &mut assembler, TABLE_ROWS_PER_BATCH)?
        {
            batches.push(b);
        }
        Ok(RecordBatchStream::table(layout.schema.clone(), batches))
    }

    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self.fetchone(py)? {
            Some(row) => Ok(row),
            None => Err(PyStopIteration::new_err(())),
        }
    }

    /// Move to the next result set; False when there is none.
    fn nextset(&self, py: Python<'_>) -> PyResult<bool> {
        let mut guard = self.lock(py)?;
        let st = &mut *guard;
        st.pending = None;
        st.plan = None;
        let Some(stmt) = st.stmt.as_mut() else {
            return Ok(false);
        };
        let more = py
            .detach(|| stmt.next_result())
            .map_err(|e| self.shared.track(e))
            .py(py)?;
        if more {
            self.ensure_plan(py, st)?;
        } else {
            self.deliver_outputs(py, st)?;
        }
        Ok(more)
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

    /// Declare parameter types for the next execute/executemany: a sequence with one entry per
    /// parameter: None, an SQL type code, or `(sql_type, size[, decimal_digits])`.
    fn setinputsizes(&self, py: Python<'_>, sizes: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut parsed = Vec::new();
        if !sizes.is_none() {
            for item in sizes.try_iter()? {
                parsed.push(to_input_size(&item?)?);
            }
        }
        self.lock(py)?.input_sizes = parsed;
        Ok(())
    }

    #[pyo3(signature = (size, column = None))]
    fn setoutputsize(&self, size: isize, column: Option<isize>) {
        // PEP 249 allows a no-op: (MAX) columns are streamed whole anyway.
        let _ = (size, column);
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
