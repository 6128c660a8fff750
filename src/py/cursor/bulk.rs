//! `bulkcopy` and `bulkcopy_arrow`: mssql-python 1.16's bulk-copy API, on this cursor's own
//! connection (`crate::bulk` does the load; this file checks the arguments as mssql-python
//! does, turns rows into chunks and reports).

use super::*;
use crate::backend::Driver;
use crate::bulk::{
    ArrayLoad, BcpLoad, CellSink, Chunk, Fed, Form, LoadCount, LoadOptions, Mapping, Pipe, Put,
    Table, check_param, pipelined, put_param,
};
use crate::error::Error;
use crate::odbc::bcp::Bcp;
use crate::params::ParamValue;
use crate::py::errors::to_pyerr;
use crate::py::params::to_param;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::types::{PyBytes, PyDict, PyString};
use std::time::Instant;

/// A chunk is sent when it holds this many rows or bytes, whichever comes first: the GIL is
/// released once per chunk, and memory stays bounded (two chunks at most, one being filled and
/// one being sent) whatever the source's length.
pub(super) const CHUNK_ROWS: usize = 8192;
pub(super) const CHUNK_BYTES: usize = 8 << 20;

/// The options both methods share, checked as mssql-python checks them.
pub(super) struct Args {
    table: String,
    options: LoadOptions,
    mapping: Mapping,
    pub(super) progress: Option<Py<PyAny>>,
    pub(super) notify_after: u64,
}

#[allow(clippy::too_many_arguments)]
pub(super) fn check_args(
    table_name: &Bound<'_, PyAny>,
    batch_size: &Bound<'_, PyAny>,
    timeout: &Bound<'_, PyAny>,
    column_mappings: Option<&Bound<'_, PyAny>>,
    flags: [bool; 6],
    progress: Option<Py<PyAny>>,
    notify_after: u64,
) -> PyResult<Args> {
    let table = match table_name.cast::<PyString>() {
        Ok(s) if !s.to_str()?.is_empty() => s.to_str()?.to_owned(),
        _ => {
            return Err(PyValueError::new_err(
                "table_name must be a non-empty string",
            ));
        }
    };
    let is_int = |v: &Bound<'_, PyAny>| {
        v.is_instance_of::<pyo3::types::PyInt>() && !v.is_instance_of::<pyo3::types::PyBool>()
    };
    if !is_int(batch_size) {
        return Err(PyTypeError::new_err(format!(
            "batch_size must be a non-negative integer, got {}",
            batch_size.get_type().name()?
        )));
    }
    let batch: i64 = batch_size.extract()?;
    if batch < 0 {
        return Err(PyValueError::new_err(format!(
            "batch_size must be non-negative, got {batch}"
        )));
    }
    if !is_int(timeout) {
        return Err(PyTypeError::new_err(format!(
            "timeout must be a non-negative integer, got {}",
            timeout.get_type().name()?
        )));
    }
    let secs: i64 = timeout.extract()?;
    if secs < 0 {
        return Err(PyValueError::new_err(format!(
            "timeout must be non-negative, got {secs}"
        )));
    }
    let mapping = match column_mappings {
        None => Mapping::Position,
        Some(m) if m.is_none() => Mapping::Position,
        Some(m) => {
            let items: Vec<Bound<'_, PyAny>> = m.try_iter()?.collect::<PyResult<_>>()?;
            if items.iter().all(|i| i.is_instance_of::<PyString>()) {
                Mapping::Names(items.iter().map(|i| i.extract()).collect::<PyResult<_>>()?)
            } else {
                let pairs = items
                    .iter()
                    .map(|i| i.extract::<(usize, String)>())
                    .collect::<PyResult<Vec<_>>>()
                    .map_err(|_| {
                        PyTypeError::new_err(
                            "column_mappings must be a list of column names or of (source index, column name) tuples",
                        )
                    })?;
                Mapping::Pairs(pairs)
            }
        }
    };
    let [
        keep_identity,
        check_constraints,
        table_lock,
        keep_nulls,
        fire_triggers,
        use_internal_transaction,
    ] = flags;
    Ok(Args {
        table,
        options: LoadOptions {
            batch_size: batch as u64,
            timeout_secs: secs as u64,
            keep_identity,
            check_constraints,
            table_lock,
            keep_nulls,
            fire_triggers,
            use_internal_transaction,
        },
        mapping,
        progress,
        notify_after,
    })
}

fn looks_like_arrow(data: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(data.hasattr("__arrow_c_stream__")? || data.hasattr("__arrow_c_array__")?)
}

/// A load on either path: one per call, on its stack.
#[allow(clippy::large_enum_variant)]
pub(super) enum Way<'c> {
    Bcp(BcpLoad<'c>),
    Arrays(ArrayLoad<'c>),
}

impl Way<'_> {
    pub(super) fn fed(&self) -> &[Fed] {
        match self {
            Way::Bcp(l) => l.fed(),
            Way::Arrays(l) => l.fed(),
        }
    }

    pub(super) fn count(&self) -> LoadCount {
        match self {
            Way::Bcp(l) => l.count(),
            Way::Arrays(l) => l.count(),
        }
    }
}

/// The context an error gets: where, and how many rows stayed copied.
fn at(e: Error, context: String) -> Error {
    Error::Bulk {
        context,
        inner: Box::new(e),
    }
}

impl Cursor {
    /// Describe the table, pick the path, run `feed` (which sends the rows), end the load.
    pub(super) fn bulk_load(
        &self,
        py: Python<'_>,
        args: &Args,
        fields: Option<usize>,
        feed: impl FnOnce(Python<'_>, &mut Way<'_>) -> PyResult<()>,
    ) -> PyResult<Py<PyDict>> {
        let started = Instant::now();
        let mut guard = self.lock(py)?;
        // The cursor's current result ends here, as with any other statement.
        if let Some(stmt) = guard.stmt.as_mut() {
            py.detach(|| stmt.close()).py(py)?;
        }
        guard.plan = None;
        self.bulk_cancel.store(false, Ordering::Relaxed);
        // A lost link noted once, as any other call notes it (later calls fail fast).
        let err = |e: Error| to_pyerr(py, self.shared.track(e));
        let mut conn_guard = self.shared.lock_conn(py)?;
        let conn = conn_guard
            .as_mut()
            .ok_or_else(|| programming("The cursor's connection has been closed."))?;
        // The rows' iterator and `progress` run while the connection is held.
        let _holding = Holding::new(&self.shared.conn_holder);
        let dbms = conn.dbms();
        if args.options.use_internal_transaction && !conn.autocommit() {
            // In manual-commit mode an ODBC connection is always inside a transaction (SQL
            // Server's drivers begin the next one at each commit: @@TRANCOUNT is 1 right after
            // it), so a batch committing on its own would commit the caller's work with it.
            // In autocommit each batch already is its own transaction.
            return Err(programming(
                "use_internal_transaction=True needs autocommit: in manual-commit mode the \
                 connection is always inside the caller's transaction, which a batch's own \
                 commit would commit too",
            ));
        }
        let dbc = conn.dbc_mut();
        let name = args.table.as_str();
        let table = py
            .detach(move || Table::describe(dbc, dbms, name))
            .map_err(err)?;
        let fed = table
            .feed(
                &args.mapping,
                fields,
                args.options.keep_identity,
                args.options.keep_nulls,
            )
            .map_err(err)?;
        let backend = conn.backend();
        // FreeTDS 1.3's bcp cannot take two kinds of column: a (MAX) one aborts the process (an
        // assertion in its row writer), and it parses no datetimeoffset text with an offset
        // (22018 for every form tried). Loads with such columns go as parameter arrays on the
        // same connection, where the server converts.
        let freetds_arrays =
            backend.driver == Driver::FreeTds && fed.iter().any(|f| f.form.freetds_bcp_cannot());
        let bcp = if conn.bcp_on()
            && !freetds_arrays
            && matches!(backend.driver, Driver::MsOdbc | Driver::FreeTds)
        {
            // `&mut`: a `&Dbc` is not `Send` (the handle is a raw pointer).
            let dbc = conn.dbc_mut();
            Some(
                py.detach(move || Bcp::of(dbc, backend.driver))
                    .map_err(err)?,
            )
        } else {
            None
        };
        // While an array load runs, `cursor.cancel()` reaches its statement (SQLCancel on an
        // array waiting on the server). While a bcp load runs it only sets the flag the load
        // checks between rows: the cursor's own statement has nothing running, and an SQLCancel
        // on it would enter the driver while the pipe's thread is inside bcp_sendrow on the
        // same connection. The cursor's own handle comes back after.
        let mut cursor_cancel = None;
        let result = (|| -> PyResult<LoadCount> {
            let mut way = match bcp {
                Some(bcp) => {
                    crate::counters::bump(&crate::counters::BULK_BCP_LOADS);
                    let cancel = self.bulk_cancel.clone();
                    let autocommit = conn.autocommit();
                    let dbc = conn.dbc_mut();
                    Way::Bcp(
                        py.detach(|| {
                            let options = args.options.clone();
                            BcpLoad::begin(dbc, bcp, &table, fed, options, autocommit, cancel)
                        })
                        .map_err(|e| {
                            err(at(e, format!("bulk load into {}: bcp_init", args.table)))
                        })?,
                    )
                }
                None => {
                    crate::counters::bump(&crate::counters::BULK_ARRAY_LOADS);
                    let c = &mut *conn;
                    let stmt = py.detach(move || c.new_statement()).map_err(err)?;
                    let dbc = conn.autocommit().then(|| conn.dbc_mut());
                    let options = args.options.clone();
                    let cancel = self.bulk_cancel.clone();
                    Way::Arrays(
                        py.detach(move || {
                            ArrayLoad::begin(dbc, stmt, backend, &table, fed, options, cancel)
                        })
                        .map_err(err)?,
                    )
                }
            };
            let during = match &way {
                Way::Arrays(load) => Some(load.cancel_handle()),
                Way::Bcp(_) => None,
            };
            cursor_cancel = Some(std::mem::replace(
                &mut *self.cancel.lock().unwrap_or_else(|e| e.into_inner()),
                during,
            ));
            if let Err(e) = feed(py, &mut way) {
                // Ending a load that failed is driver work too (abort, bcp_done, rollback).
                py.detach(move || drop(way));
                return Err(e);
            }
            match way {
                Way::Bcp(load) => py.detach(|| load.done()).map_err(err),
                Way::Arrays(load) => py.detach(|| load.finish()).map_err(err),
            }
        })();
        if let Some(previous) = cursor_cancel {
            *self.cancel.lock().unwrap_or_else(|e| e.into_inner()) = previous;
        }
        if result.is_err() && !self.shared.lost.load(Ordering::Acquire) {
            // A failure while sending (the rows' errors go through the load, not `err`): a dead
            // link is noted as any other call notes it.
            let c = &mut *conn;
            if py.detach(move || c.is_dead()) {
                self.shared.lost.store(true, Ordering::Release);
                self.shared.bump();
            }
        }
        drop(_holding);
        drop(conn_guard);
        drop(guard);
        let count = result?;
        let elapsed = started.elapsed().as_secs_f64();
        let out = PyDict::new(py);
        out.set_item("rows_copied", count.rows_copied)?;
        out.set_item("batch_count", count.batch_count)?;
        out.set_item("elapsed_time", elapsed)?;
        let rate = if elapsed > 0.0 {
            count.rows_copied as f64 / elapsed
        } else {
            0.0
        };
        out.set_item("rows_per_second", rate)?;
        Ok(out.unbind())
    }
}

/// When `progress` is due: each time the source rows taken pass a multiple of `every` (a record
/// batch passing several at once makes one call); never when `every` is 0.
pub(super) struct Notices {
    every: u64,
    next: u64,
}

impl Notices {
    pub(super) fn new(every: u64) -> Self {
        Notices { every, next: every }
    }

    pub(super) fn due(&mut self, rows: u64) -> bool {
        if self.every == 0 || rows < self.next {
            return false;
        }
        self.next = (rows / self.every + 1) * self.every;
        true
    }
}

/// Marks the connection held by this thread for as long as it lives (see
/// `ConnShared::conn_holder`).
struct Holding<'a>(&'a std::sync::atomic::AtomicUsize);

impl<'a> Holding<'a> {
    fn new(holder: &'a std::sync::atomic::AtomicUsize) -> Self {
        holder.store(super::state::thread_token(), Ordering::Release);
        Holding(holder)
    }
}

impl Drop for Holding<'_> {
    fn drop(&mut self) {
        self.0.store(0, Ordering::Release);
    }
}

/// The error of a value that cannot go into its column.
pub(super) fn bad_value(
    py: Python<'_>,
    f: &Fed,
    row: u64,
    reason: String,
    copied: u64,
    null: bool,
) -> PyErr {
    let context = format!(
        "bulk load: column {:?}, source row {row} ({copied} rows copied before it)",
        f.name
    );
    let inner = if null {
        Error::Integrity(reason)
    } else {
        Error::Data(reason)
    };
    to_pyerr(py, at(inner, context))
}

pub(super) fn null_refused(f: &Fed) -> String {
    if f.default_lost {
        return format!(
            "NULL into column {:?}, which has a DEFAULT: this load goes as INSERT parameter arrays \
             (the driver's bulk copy cannot take this table), which would store NULL where a \
             bulk copy stores the default; pass keep_nulls=True to store NULL, or leave the \
             column out of the mapping to take its default",
            f.name
        );
    }
    format!(
        "NULL cannot go into column {:?}: it is NOT NULL and has no default (or keep_nulls=True)",
        f.name
    )
}

#[pymethods]
impl Cursor {
    /// Copy rows (tuples, lists or Rows) into `table_name` with the driver's bulk-copy API on
    /// this connection (parameter arrays where the driver has none). mssql-python 1.16's
    /// signature and result; `progress(rows)` is called with the source rows taken so far every
    /// `notify_after` rows (sent, or in the chunk about to go).
    #[pyo3(signature = (table_name, data, batch_size = None, timeout = None, column_mappings = None,
        keep_identity = false, check_constraints = false, table_lock = false, keep_nulls = false,
        fire_triggers = false, use_internal_transaction = false, *, progress = None, notify_after = 10000))]
    #[allow(clippy::too_many_arguments)]
    fn bulkcopy(
        &self,
        py: Python<'_>,
        table_name: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
        batch_size: Option<&Bound<'_, PyAny>>,
        timeout: Option<&Bound<'_, PyAny>>,
        column_mappings: Option<&Bound<'_, PyAny>>,
        keep_identity: bool,
        check_constraints: bool,
        table_lock: bool,
        keep_nulls: bool,
        fire_triggers: bool,
        use_internal_transaction: bool,
        progress: Option<Py<PyAny>>,
        notify_after: u64,
    ) -> PyResult<Py<PyDict>> {
        if looks_like_arrow(data)? {
            return Err(PyTypeError::new_err(
                "bulkcopy() expects an iterable of row tuples or Row objects; for Arrow data (pyarrow Table, RecordBatch, RecordBatchReader, polars DataFrame or any __arrow_c_stream__ / __arrow_c_array__ object) call cursor.bulkcopy_arrow()",
            ));
        }
        let zero = 0i64.into_pyobject(py)?.into_any();
        let thirty = 30i64.into_pyobject(py)?.into_any();
        let args = check_args(
            table_name,
            batch_size.unwrap_or(&zero),
            timeout.unwrap_or(&thirty),
            column_mappings,
            [
                keep_identity,
                check_constraints,
                table_lock,
                keep_nulls,
                fire_triggers,
                use_internal_transaction,
            ],
            progress,
            notify_after,
        )?;
        if data.is_none() {
            return Err(PyTypeError::new_err(
                "data must be an iterable of tuples or lists, got None",
            ));
        }
        if data.is_instance_of::<PyString>() || data.is_instance_of::<PyBytes>() {
            return Err(PyTypeError::new_err(format!(
                "data must be an iterable of tuples or lists, got {}. Strings and bytes are not valid row collections.",
                data.get_type().name()?
            )));
        }
        let mut rows = data.try_iter().map_err(|_| {
            PyTypeError::new_err(format!(
                "data must be an iterable of tuples or lists, got non-iterable {}",
                data.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?;
        // The first row says how many fields a row has (mapping by position needs it).
        let first = rows.next().transpose()?;
        let fields = match &first {
            Some(r) => Some(row_len(py, r)?),
            None => None,
        };
        self.bulk_load(py, &args, fields, |py, way| {
            let fed: Vec<Fed> = way.fed().to_vec();
            let source = first.into_iter().map(Ok).chain(rows);
            // The destination of the values is decided here, once: the row loop is generic
            // over it.
            let stopped = match way {
                Way::Bcp(load) => {
                    let forms = fed.iter().map(|f| f.form).collect();
                    let (stopped, sent) = pipelined(
                        fed.len(),
                        |chunk| load.send(chunk),
                        |pipe| {
                            let stopped = match py.detach(|| pipe.take(0)) {
                                Some(chunk) => {
                                    let mut out = CellsOut { pipe, chunk, forms };
                                    copy_rows(py, &mut out, source, fields, &fed, &args)
                                }
                                None => Err(Stop::Sender),
                            };
                            py.detach(|| pipe.close());
                            stopped
                        },
                    );
                    // A send that failed failed first: the rows after it were not sent.
                    sent.map_err(|e| to_pyerr(py, e))?;
                    stopped
                }
                Way::Arrays(load) => {
                    let mut out = ParamsOut {
                        per_send: load.rows_per_send(),
                        load,
                        rows: Vec::new(),
                        row: Vec::with_capacity(fed.len()),
                        // The type is checked; limits are the DBMS's (SQLite enforces no
                        // declared length or width).
                        forms: fed.iter().map(|f| f.form.without_limits()).collect(),
                        scratch: crate::bulk::CellColumn::default(),
                        first: 0,
                    };
                    copy_rows(py, &mut out, source, fields, &fed, &args)
                }
            };
            // The count once the rows sent are all through: the error says how many stayed.
            stopped.map_err(|stop| stop.into_pyerr(py, &fed, way.count().rows_copied))
        })
    }
}

/// Why the tuple path's row loop stopped before the source's end.
enum Stop {
    /// A value that cannot go into column `fed[col]`, at source row `row`.
    Value {
        col: usize,
        row: u64,
        reason: String,
        null: bool,
    },
    /// The sending thread stopped on an error (which is the load's).
    Sender,
    Py(PyErr),
}

impl From<PyErr> for Stop {
    fn from(e: PyErr) -> Self {
        Stop::Py(e)
    }
}

impl Stop {
    fn into_pyerr(self, py: Python<'_>, fed: &[Fed], copied: u64) -> PyErr {
        match self {
            Stop::Value {
                col,
                row,
                reason,
                null,
            } => bad_value(py, &fed[col], row, reason, copied, null),
            Stop::Sender => to_pyerr(
                py,
                Error::Interface("bulk load: the sending thread stopped without an error".into()),
            ),
            Stop::Py(e) => e,
        }
    }
}

/// Where the tuple path puts each row's values: encoded cells for the bcp API, or parameter
/// rows for an INSERT array. One of the two per load.
trait RowsOut {
    /// Column `i`'s value of the current row, checked against the column.
    fn value(&mut self, i: usize, v: ParamValue) -> Put;
    /// The current row has all its values.
    fn end_row(&mut self);
    fn full(&self) -> bool;
    /// Send what is held; `next_first` numbers the rows that come after.
    fn send(&mut self, py: Python<'_>, next_first: u64) -> Result<(), Stop>;
}

/// Cells for the bcp API: a chunk filled here while the pipe's other one is sent.
struct CellsOut<'p> {
    pipe: &'p mut Pipe,
    chunk: Chunk,
    forms: Vec<Form>,
}

impl RowsOut for CellsOut<'_> {
    fn value(&mut self, i: usize, v: ParamValue) -> Put {
        put_param(
            &v,
            &mut CellSink {
                form: self.forms[i],
                out: &mut self.chunk.columns[i],
            },
        )
    }

    fn end_row(&mut self) {}

    fn full(&self) -> bool {
        self.chunk.rows() >= CHUNK_ROWS || self.chunk.bytes_held() >= CHUNK_BYTES
    }

    fn send(&mut self, py: Python<'_>, next_first: u64) -> Result<(), Stop> {
        if self.chunk.rows() == 0 {
            return Ok(());
        }
        if !self.pipe.put(std::mem::take(&mut self.chunk)) {
            return Err(Stop::Sender);
        }
        let pipe = &mut *self.pipe;
        self.chunk = py.detach(|| pipe.take(next_first)).ok_or(Stop::Sender)?;
        Ok(())
    }
}

/// Parameter rows for an INSERT array, sent on this thread.
struct ParamsOut<'a, 'c> {
    load: &'a mut ArrayLoad<'c>,
    rows: Vec<Vec<ParamValue>>,
    row: Vec<ParamValue>,
    forms: Vec<Form>,
    scratch: crate::bulk::CellColumn,
    per_send: usize,
    /// Source row number of `rows[0]`.
    first: u64,
}

impl RowsOut for ParamsOut<'_, '_> {
    fn value(&mut self, i: usize, v: ParamValue) -> Put {
        check_param(&v, self.forms[i], &mut self.scratch)?;
        self.row.push(v);
        Ok(())
    }

    fn end_row(&mut self) {
        let width = self.row.len();
        self.rows
            .push(std::mem::replace(&mut self.row, Vec::with_capacity(width)));
    }

    fn full(&self) -> bool {
        self.rows.len() >= self.per_send
    }

    fn send(&mut self, py: Python<'_>, next_first: u64) -> Result<(), Stop> {
        let batch = std::mem::take(&mut self.rows);
        let (load, first) = (&mut *self.load, self.first);
        py.detach(|| load.send(batch, first))
            .map_err(|e| to_pyerr(py, e))?;
        self.first = next_first;
        Ok(())
    }
}

/// The tuple path's row loop: each source row's fields converted, checked and put into `out`,
/// which is sent whenever full and at the end; `progress` called as due.
fn copy_rows<'py>(
    py: Python<'py>,
    out: &mut impl RowsOut,
    source: impl Iterator<Item = PyResult<Bound<'py, PyAny>>>,
    fields: Option<usize>,
    fed: &[Fed],
    args: &Args,
) -> Result<(), Stop> {
    let mut notices = Notices::new(args.notify_after);
    let mut n: u64 = 0;
    for row in source {
        let row = row?;
        let len = row_len(py, &row)?;
        if Some(len) != fields {
            return Err(Stop::Py(programming(format!(
                "bulk load: source row {n} has {len} fields; row 0 has {}",
                fields.unwrap_or(0)
            ))));
        }
        for (i, f) in fed.iter().enumerate() {
            let item = row.get_item(f.field)?;
            let refused = |reason: String, null: bool| Stop::Value {
                col: i,
                row: n,
                reason,
                null,
            };
            let v =
                to_param(&item, f.field).map_err(|e| refused(e.value(py).to_string(), false))?;
            if f.refuses_null && matches!(v, ParamValue::Null) {
                return Err(refused(null_refused(f), true));
            }
            out.value(i, v).map_err(|reason| refused(reason, false))?;
        }
        out.end_row();
        n += 1;
        if out.full() {
            out.send(py, n)?;
        }
        if let Some(cb) = &args.progress {
            if notices.due(n) {
                cb.call1(py, (n,))?;
            }
        }
    }
    out.send(py, n)
}

fn row_len(py: Python<'_>, row: &Bound<'_, PyAny>) -> PyResult<usize> {
    if !super::execute::is_param_row(py, row)? {
        return Err(PyTypeError::new_err(format!(
            "bulkcopy data rows must be tuples, lists or Row objects, got {}",
            row.get_type().name()?
        )));
    }
    row.len()
}
