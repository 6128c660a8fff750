//! The fetch side of a cursor: one fetch protocol (`begin_fetch`, `next_served`) and its
//! consumers: rows for fetchone/fetchmany/fetchall/iteration, fetchval, skip, Arrow batches.

use super::*;
use crate::arrow::{ArrowLayout, ArrowOptions, BatchAssembler};
use crate::decode::TextErrors;
use crate::py::arrow::{
    DEFAULT_ROWS_PER_BATCH, LazyBatches, RecordBatchStream, TABLE_ROWS_PER_BATCH,
};
use crate::py::decode::{build_first_value, build_one_row, build_rows};
use crate::py::errors::{IntoPyResult, programming};
use crate::py::plan::{ColumnDecoder, PyPlan};
use crate::rowset::Served;
use crate::statement::Statement;
use pyo3::exceptions::PyStopIteration;
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::sync::Arc;
use std::sync::atomic::Ordering;

impl Cursor {
    /// The start of every fetch: the error an earlier fetch deferred, then the result set and
    /// its Python plan. Returns the statement, the plan and the slot for a deferred error.
    pub(super) fn begin_fetch<'s>(
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
    pub(super) fn next_served<'s>(
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
    pub(super) fn fetch_rows(
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

    /// The next row, or None: the one-row path of fetchone, iteration and fetchmany(1), without
    /// `fetch_rows`'s vectors. A row that fails to decode is consumed: the next call continues
    /// after it.
    pub(super) fn fetch_one(
        &self,
        py: Python<'_>,
        st: &mut CursorState,
    ) -> PyResult<Option<Py<PyAny>>> {
        let (stmt, plan, _) = self.begin_fetch(py, st)?;
        let Some(served) = self.next_served(py, stmt, 1)? else {
            return Ok(None);
        };
        build_one_row(py, plan, served.batch, served.rows.start, served.base)
            .map(Some)
            .map_err(|f| f.err)
    }

    /// Rows as dicts when `rows_as_dicts` is on (a later column of the same name wins).
    pub(super) fn shape_rows(
        &self,
        py: Python<'_>,
        rows: Vec<Py<PyAny>>,
    ) -> PyResult<Vec<Py<PyAny>>> {
        if !self.rows_as_dicts.load(Ordering::Relaxed) {
            return Ok(rows);
        }
        rows.into_iter().map(|r| row_as_dict(py, r)).collect()
    }

    pub(super) fn shape_row(
        &self,
        py: Python<'_>,
        row: Option<Py<PyAny>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        match row {
            Some(r) if self.rows_as_dicts.load(Ordering::Relaxed) => row_as_dict(py, r).map(Some),
            other => Ok(other),
        }
    }

    /// Discard up to `n` rows without building them (pyodbc's `skip`).
    pub(super) fn skip_rows(
        &self,
        py: Python<'_>,
        st: &mut CursorState,
        mut n: usize,
    ) -> PyResult<()> {
        if let Some(err) = st.pending.take() {
            return Err(err);
        }
        self.require_results(py, st)?;
        let stmt = st.stmt.as_mut().expect("checked by require_results");
        while n > 0 {
            if stmt.needs_fetch() {
                py.detach(|| stmt.fill())
                    .map_err(|e| self.shared.track(e))
                    .py(py)?;
            }
            let available = stmt.buffered();
            if available == 0 {
                break;
            }
            let taken = available.min(n);
            stmt.take(taken);
            n -= taken;
        }
        Ok(())
    }

    /// Start an Arrow read of the current result set: its Arrow layout, the epoch it belongs to
    /// and the text policy. NotSupportedError for a column without an Arrow type, and when
    /// output converters apply to the result set (Arrow never calls them: the values would
    /// silently differ from the rows').
    pub(super) fn arrow_start(
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
            return Err(crate::py::errors::NotSupportedError::new_err(format!(
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
    pub(in crate::py) fn next_arrow_batch(
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
                return Err(crate::py::errors::to_pyerr(py, err));
            }
        }
        if assembler.rows() == 0 {
            return Ok(None);
        }
        assembler.finish().py(py).map(Some)
    }
}

/// `fetchall()` promises every remaining row, so an error after some rows raises right away
/// (a short list would be silently truncated data); the rows already read ride on the exception
/// as `partial_rows`. `fetchone`/`fetchmany` instead hand those rows out and raise on the next
/// call.
pub(super) fn with_partial_rows(py: Python<'_>, err: PyErr, rows: Vec<Py<PyAny>>) -> PyErr {
    if let Ok(list) = PyList::new(py, rows) {
        let _ = err.value(py).setattr("partial_rows", list);
    }
    err
}

pub(super) fn row_as_dict(py: Python<'_>, row: Py<PyAny>) -> PyResult<Py<PyAny>> {
    let row = row.into_bound(py);
    let dict = pyo3::types::PyDict::new(py);
    for (name, value) in row.getattr("_fields")?.try_iter()?.zip(row.try_iter()?) {
        dict.set_item(name?, value?)?;
    }
    Ok(dict.into_any().unbind())
}

/// The Arrow fetch options from their Python spelling.
pub(super) fn arrow_options(datetimeoffset: &str) -> PyResult<ArrowOptions> {
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

#[pymethods]
impl Cursor {
    fn fetchone(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let mut guard = self.lock(py)?;
        let row = self.fetch_one(py, &mut guard)?;
        drop(guard);
        self.shape_row(py, row)
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
            drop(guard);
            return PyList::new(py, self.shape_row(py, row)?);
        }
        let rows = self.fetch_rows(py, &mut guard, n)?;
        drop(guard);
        PyList::new(py, self.shape_rows(py, rows)?)
    }

    fn fetchall<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut guard = self.lock(py)?;
        let rows = self.fetch_rows(py, &mut guard, usize::MAX)?;
        drop(guard);
        PyList::new(py, self.shape_rows(py, rows)?)
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
    pub(super) fn nextset(&self, py: Python<'_>) -> PyResult<bool> {
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

    /// Skip the next `count` rows of the result set (pyodbc).
    fn skip(&self, py: Python<'_>, count: isize) -> PyResult<()> {
        if count < 0 {
            return Err(programming("skip count must not be negative"));
        }
        let mut guard = self.lock(py)?;
        self.skip_rows(py, &mut guard, count as usize)
    }
}
