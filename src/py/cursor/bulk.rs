//! `bulkcopy` and `bulkcopy_arrow`: mssql-python 1.16's bulk-copy API, on this cursor's own
//! connection. `crate::bulk` does the whole load (the path, the chunks, the row loop); this file
//! checks the arguments as mssql-python does, holds the cursor and its connection, turns each
//! Python row into parameter values and reports.

use super::*;
use crate::bulk::{
    BulkError, BulkLoad, LoadCount, LoadOptions, Mapping, Progress, Request, RowSource, RowWriter,
    RowsOut,
};
use crate::error::Error;
use crate::py::errors::to_pyerr;
use crate::py::params::to_param;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::types::{PyBytes, PyDict, PyString};
use std::time::Instant;

/// The options both methods share, checked as mssql-python checks them.
pub(super) struct Args {
    request: Request,
    pub(super) progress: Option<Py<PyAny>>,
    pub(super) notify_after: u64,
}

#[allow(clippy::too_many_arguments)]
pub(super) fn check_args(
    table_name: &Bound<'_, PyAny>,
    batch_size: Option<&Bound<'_, PyAny>>,
    timeout: Option<&Bound<'_, PyAny>>,
    column_mappings: Option<&Bound<'_, PyAny>>,
    flags: [bool; 6],
    progress: Option<Py<PyAny>>,
    notify_after: u64,
) -> PyResult<Args> {
    // mssql-python's defaults: one batch, 30 seconds.
    let py = table_name.py();
    let zero = 0i64.into_pyobject(py)?.into_any();
    let thirty = 30i64.into_pyobject(py)?.into_any();
    let (batch_size, timeout) = (batch_size.unwrap_or(&zero), timeout.unwrap_or(&thirty));
    let table = match table_name.cast::<PyString>() {
        Ok(s) if !s.to_str()?.is_empty() => s.to_str()?.to_owned(),
        // An empty name is no table name: ProgrammingError as other refused names (PEP 249; the
        // mssql_python face raises mssql-python's ValueError before this).
        Ok(_) => {
            return Err(crate::py::errors::programming(
                "table_name must be a non-empty string",
            ));
        }
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
        request: Request::new(
            table,
            LoadOptions {
                // Both were refused above when negative.
                batch_size: batch.unsigned_abs(),
                timeout_secs: secs.unsigned_abs(),
                keep_identity,
                check_constraints,
                table_lock,
                keep_nulls,
                fire_triggers,
                use_internal_transaction,
            },
            mapping,
        ),
        progress,
        notify_after,
    })
}

fn looks_like_arrow(data: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(data.hasattr("__arrow_c_stream__")? || data.hasattr("__arrow_c_array__")?)
}

/// Python's lock, released around a load's driver work.
impl crate::bulk::Release for Python<'_> {
    fn release<T: Send, F: FnOnce() -> T + Send>(&self, f: F) -> T {
        self.detach(f)
    }
}

/// A failed load as Python's exception: the engine's error, or the Python error (the rows'
/// iterator's, `progress`'s) unchanged.
pub(super) fn bulk_pyerr(py: Python<'_>, e: BulkError<PyErr>) -> PyErr {
    match e.into_result() {
        Ok(e) => to_pyerr(py, e),
        Err(e) => e,
    }
}

impl Args {
    /// Run `feed` with `progress` as the load's hook (its exception stops the load).
    pub(super) fn with_progress<T>(
        &self,
        py: Python<'_>,
        feed: impl FnOnce(Progress<'_, PyErr>) -> T,
    ) -> T {
        let mut call = |rows: u64| match &self.progress {
            Some(cb) => cb.call1(py, (rows,)).map(drop),
            None => Ok(()),
        };
        let hook = self
            .progress
            .is_some()
            .then_some(&mut call as &mut dyn FnMut(u64) -> PyResult<()>);
        feed(Progress::new(self.notify_after, hook))
    }
}

impl Cursor {
    /// Hold the cursor and its connection, begin the load (`crate::bulk` describes the table
    /// and picks the path), run `feed` (which sends the rows), end the load, and report.
    pub(super) fn bulk_load(
        &self,
        py: Python<'_>,
        args: &Args,
        fields: Option<usize>,
        feed: impl FnOnce(Python<'_>, &mut BulkLoad<'_>) -> Result<(), BulkError<PyErr>>,
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
        // While an array load runs, `cursor.cancel()` reaches its statement; while a bcp load
        // runs it only sets the flag the load checks between rows (see
        // `BulkLoad::cancel_handle`). The cursor's own handle comes back after.
        let mut cursor_cancel = None;
        let result = (|| -> PyResult<LoadCount> {
            let (c, request, cancel) = (&mut *conn, &args.request, self.bulk_cancel.clone());
            let mut load = py
                .detach(move || BulkLoad::begin(c, request, fields, cancel))
                .map_err(err)?;
            cursor_cancel = Some(std::mem::replace(
                &mut *self.cancel.lock().unwrap_or_else(|e| e.into_inner()),
                load.cancel_handle(),
            ));
            if let Err(e) = feed(py, &mut load) {
                // Ending a load that failed is driver work too (abort, bcp_done, rollback).
                py.detach(move || drop(load));
                return Err(bulk_pyerr(py, e));
            }
            py.detach(|| load.finish()).map_err(err)
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
        let args = check_args(
            table_name,
            batch_size,
            timeout,
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
        self.bulk_load(py, &args, fields, |py, load| {
            let mut source = PyRows {
                py,
                rows: first.into_iter().map(Ok).chain(rows),
                fields,
            };
            args.with_progress(py, |progress| load.rows(&py, &mut source, progress))
        })
    }
}

/// The rows of `bulkcopy`: each field's value as a parameter's, checked against the first
/// row's length.
struct PyRows<'py, I> {
    py: Python<'py>,
    rows: I,
    fields: Option<usize>,
}

impl<'py, I: Iterator<Item = PyResult<Bound<'py, PyAny>>>> RowSource for PyRows<'py, I> {
    type Error = PyErr;

    fn next_row<O: RowsOut>(&mut self, w: &mut RowWriter<'_, O>) -> Result<bool, BulkError<PyErr>> {
        let py = self.py;
        let Some(row) = self.rows.next() else {
            return Ok(false);
        };
        let row = row.map_err(BulkError::Caller)?;
        let len = row_len(py, &row).map_err(BulkError::Caller)?;
        if Some(len) != self.fields {
            return Err(BulkError::Caller(programming(format!(
                "bulk load: source row {} has {len} fields; row 0 has {}",
                w.row(),
                self.fields.unwrap_or(0)
            ))));
        }
        for i in 0..w.fed().len() {
            let field = w.fed()[i].field;
            let item = row.get_item(field).map_err(BulkError::Caller)?;
            let v =
                to_param(&item, field).map_err(|e| w.refused(i, e.value(py).to_string(), false))?;
            w.put(i, v)?;
        }
        Ok(true)
    }
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
