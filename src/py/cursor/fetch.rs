//! The fetch side of a cursor: one prelude (`begin_fetch`) and every fetch shape over the core's
//! row stream (`RowStream::next`, GIL released around refills only): rows for
//! fetchone/fetchmany/fetchall/iteration, fetchval, skip, Arrow tables and record batches.

use super::*;
use crate::arrow::{
    ArrowLayout, ArrowOptions, BatchAssembler, Unit, assemble_batch, assemble_table,
};
use crate::py::arrow::{
    DEFAULT_ROWS_PER_BATCH, LazyBatches, RecordBatchStream, TABLE_ROWS_PER_BATCH,
};
use crate::py::decode::{RowObject, build_first_value, build_one_row, build_rows};
use crate::py::errors::{IntoPyResult, programming};
use crate::py::plan::PyPlan;
use crate::py::shape::{RowShape, build_shaped};
use crate::rowset::{DriverWait, Served};
use crate::statement::{Rows, Statement};
use crate::types::text::TextErrors;
use pyo3::exceptions::PyStopIteration;
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// What every fetch works with (see [`Cursor::begin_fetch`]): the row stream, the Python plan,
/// the slot for an error deferred to the next fetch, and the row shape with the `row_factory`
/// version it was chosen under.
pub(super) struct Fetch<'s> {
    rows: Rows<'s>,
    plan: &'s Arc<PyPlan>,
    pending: &'s mut Option<PyErr>,
    shape: &'s mut Option<RowShape>,
    shape_version: &'s mut u64,
}

/// What a row fetch works with (see [`Cursor::begin_rows`]): [`Fetch`] with its row shape.
pub(super) struct RowsStart<'s> {
    rows: Rows<'s>,
    plan: &'s Arc<PyPlan>,
    pending: &'s mut Option<PyErr>,
    shape: &'s mut RowShape,
}

/// The Python binding waits on the driver with the GIL released.
impl DriverWait for Python<'_> {
    #[inline]
    fn wait<T: Send>(&self, call: impl FnOnce() -> T + Send) -> T {
        self.detach(call)
    }
}

impl Cursor {
    /// The start of every fetch that decodes rows: [`Self::begin_stream`], then the refusal of
    /// a plan whose columns cannot be read exactly (before any row is taken).
    #[inline]
    pub(super) fn begin_fetch<'s>(
        &self,
        py: Python<'_>,
        st: &'s mut CursorState,
    ) -> PyResult<Fetch<'s>> {
        let fetch = self.begin_stream(py, st)?;
        fetch.plan.readable()?;
        Ok(fetch)
    }

    /// The start of every fetch: the error an earlier fetch deferred, then the result set and
    /// its Python plan, and the statement's row stream. `skip` starts here (it decodes nothing).
    #[inline]
    pub(super) fn begin_stream<'s>(
        &self,
        py: Python<'_>,
        st: &'s mut CursorState,
    ) -> PyResult<Fetch<'s>> {
        if let Some(err) = st.pending.take() {
            return Err(err);
        }
        self.require_results(py, st)?;
        let CursorState {
            stmt,
            plan,
            pending,
            shape,
            shape_version,
            ..
        } = st;
        Ok(Fetch {
            rows: stmt.as_mut().expect("checked by require_results").rows(),
            plan: plan.as_ref().expect("checked by require_results"),
            pending,
            shape,
            shape_version,
        })
    }

    /// [`Self::begin_fetch`] for the fetches that return rows: also the row shape
    /// `row_factory` resolves to, chosen at the result set's first fetch.
    #[inline]
    pub(super) fn begin_rows<'s>(
        &self,
        py: Python<'_>,
        st: &'s mut CursorState,
    ) -> PyResult<RowsStart<'s>> {
        let Fetch {
            rows,
            plan,
            pending,
            shape,
            shape_version,
        } = self.begin_fetch(py, st)?;
        let version = self.row_factory_version();
        if shape.is_none() || *shape_version != version {
            // Read before the factory: a newer one set meanwhile is seen at the next fetch.
            let factory = self.current_row_factory(py);
            *shape = Some(RowShape::choose(py, factory.as_ref(), plan)?);
            *shape_version = version;
        }
        Ok(RowsStart {
            rows,
            plan,
            pending,
            shape: shape.as_mut().expect("just chosen"),
        })
    }

    /// The next rows of the stream (up to `max`; `None` at the end), a refill error marking a
    /// lost connection.
    #[inline]
    fn next_served<'r>(
        &self,
        py: Python<'_>,
        rows: &'r mut Rows<'_>,
        max: usize,
    ) -> PyResult<Option<Served<'r>>> {
        rows.next(max, &py).map_err(|e| self.shared.track(e)).py(py)
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
        let RowsStart {
            mut rows,
            plan,
            pending,
            shape,
        } = self.begin_rows(py, st)?;
        let mut out: Vec<Py<PyAny>> = Vec::new();
        while out.len() < max {
            if rows.needs_fetch() {
                shape.release_batch();
            }
            let err = match self.next_served(py, &mut rows, max - out.len()) {
                Ok(None) => break,
                Ok(Some(served)) => {
                    let built = match &mut *shape {
                        RowShape::Row => {
                            let (batch, rows, base) = (served.batch, served.rows, served.base);
                            build_rows(py, plan, RowObject::Row, batch, rows, base, &mut out)?
                        }
                        RowShape::Tuple => {
                            let (batch, rows, base) = (served.batch, served.rows, served.base);
                            build_rows(py, plan, RowObject::Tuple, batch, rows, base, &mut out)?
                        }
                        shape => build_shaped(py, plan, shape, &served, &mut out)?,
                    };
                    match built {
                        None => continue,
                        Some(fail) => {
                            // Rows before the bad one are delivered; the bad row is consumed;
                            // rows after it are served by the next fetch.
                            rows.rewind_to(fail.row + 1);
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
        let RowsStart {
            mut rows,
            plan,
            shape,
            ..
        } = self.begin_rows(py, st)?;
        if rows.needs_fetch() {
            shape.release_batch();
        }
        let Some(served) = self.next_served(py, &mut rows, 1)? else {
            return Ok(None);
        };
        let direct = match shape {
            RowShape::Row => Some(RowObject::Row),
            RowShape::Tuple => Some(RowObject::Tuple),
            _ => None,
        };
        if let Some(object) = direct {
            let (batch, row, base) = (served.batch, served.rows.start, served.base);
            return build_one_row(py, plan, object, batch, row, base)
                .map(Some)
                .map_err(|f| f.err);
        }
        let mut out = Vec::with_capacity(1);
        match build_shaped(py, plan, shape, &served, &mut out)? {
            Some(fail) => Err(fail.err),
            None => Ok(out.pop()),
        }
    }

    /// Discard up to `n` rows without building them (pyodbc's `skip`).
    pub(super) fn skip_rows(&self, py: Python<'_>, st: &mut CursorState, n: usize) -> PyResult<()> {
        let Fetch { mut rows, .. } = self.begin_stream(py, st)?;
        rows.skip(n, &py).map_err(|e| self.shared.track(e)).py(py)?;
        Ok(())
    }

    /// Start an Arrow read of the current result set: its Arrow layout, the epoch it belongs to
    /// and the text policy. NotSupportedError for a column without an Arrow type, and when
    /// output converters apply to the result set (Arrow never calls them: the values would
    /// silently differ from the rows').
    pub(super) fn arrow_start(
        &self,
        py: Python<'_>,
        st: &mut CursorState,
        options: ArrowOptions,
    ) -> PyResult<(Arc<ArrowLayout>, u64, TextErrors)> {
        self.require_results(py, st)?;
        let plan = st.plan.as_ref().expect("checked by require_results");
        let converted = plan.decoders.iter().position(|d| d.converter().is_some());
        if let Some(i) = converted {
            return Err(crate::py::errors::NotSupportedError::new_err(format!(
                "Arrow fetch does not apply output converters, and one is registered for the \
                 SQL type of column {:?} (index {i}); fetch rows, or clear the converters",
                plan.core.columns[i].desc.name
            )));
        }
        // A text column still read as the driver's bytes for a converter removed since the
        // execute: its Arrow column would be binary, not utf8. Arrow builds from the bound
        // buffers alone, so it refuses rather than hand out a differently typed column.
        if let Some(i) = plan.core.columns.iter().position(|c| c.raw_text) {
            return Err(programming(format!(
                "The output converters changed in the middle of this result set: column {:?} \
                 (index {i}) is read as the driver's bytes for the converter registered when \
                 the query was executed, which Arrow cannot give as text. Re-execute the query \
                 to apply the converters now in force.",
                plan.core.columns[i].desc.name
            )));
        }
        let layout = ArrowLayout::new(plan.core.clone(), options).py(py)?;
        // Arrow's conversion is a small share of the driver's fetch: overlapping the two costs
        // more than it saves on the machines measured (`RowSet::without_prefetch`).
        if let Some(stmt) = st.stmt.as_mut() {
            stmt.rows().without_prefetch();
        }
        let epoch = st.stmt.as_ref().map_or(0, Statement::epoch);
        Ok((Arc::new(layout), epoch, plan.errors))
    }

    /// The next record batch of up to `max` rows, assembled from served rows of the statement;
    /// `None` at the end of the result set. Any error raises at once: the rows of the batch
    /// under construction are not handed out.
    ///
    /// The whole batch is built with the GIL released (driver refills *and* the decoding into
    /// Arrow builders: no Python object is touched), so Arrow reads on several connections in
    /// several threads (`ferrodbc.read_arrow(..., partitions=n)`) run in parallel instead of
    /// taking turns at the GIL for the decoding half of the work.
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
        let Fetch { mut rows, .. } = self.begin_fetch(py, &mut guard)?;
        py.detach(|| assemble_batch(&mut rows, assembler, max))
            .map_err(|e| self.shared.track(e))
            .py(py)
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

/// The Arrow fetch options from their Python spelling.
pub(super) fn arrow_options(
    datetimeoffset: &str,
    uuid: &str,
    timestamp_unit: &str,
    large_types: bool,
) -> PyResult<ArrowOptions> {
    let uuid_text = match uuid {
        "uuid" => false,
        "string" => true,
        other => {
            return Err(programming(format!(
                "uuid must be 'uuid' or 'string', not {other:?}"
            )));
        }
    };
    let offsets = match datetimeoffset {
        "utc" => false,
        "struct" => true,
        other => {
            return Err(programming(format!(
                "datetimeoffset must be 'utc' or 'struct', not {other:?}"
            )));
        }
    };
    let unit = match timestamp_unit {
        "us" => Unit::Micros,
        "ns" => Unit::Nanos,
        other => {
            return Err(programming(format!(
                "timestamp_unit must be 'us' or 'ns', not {other:?}"
            )));
        }
    };
    Ok(ArrowOptions {
        offsets,
        uuid_text,
        unit,
        large_types,
    })
}

#[pymethods]
impl Cursor {
    fn fetchone(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let mut guard = self.lock(py).map_err(|e| self.shared.hooked(py, e))?;
        self.fetch_one(py, &mut guard)
            .map_err(|e| self.shared.hooked(py, e))
    }

    #[pyo3(signature = (size = None))]
    fn fetchmany<'py>(&self, py: Python<'py>, size: Option<isize>) -> PyResult<Bound<'py, PyList>> {
        self.fetch_many(py, size)
            .map_err(|e| self.shared.hooked(py, e))
    }

    fn fetchall<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.fetch_all(py).map_err(|e| self.shared.hooked(py, e))
    }

    /// The first column of the next row (or None when there is no row); no row object is built.
    fn fetchval(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.fetch_val(py).map_err(|e| self.shared.hooked(py, e))
    }

    /// The rest of the current result set as Arrow record batches of `rows_per_batch` rows
    /// (default 8,192), read lazily by whoever consumes the stream (`__arrow_c_stream__`).
    /// `datetimeoffset`: `"utc"` (timestamp[us, tz=UTC]) or `"struct"` (instant and offset);
    /// `uuid`: `"uuid"` (fixed_size_binary(16), `arrow.uuid`) or `"string"` (utf8).
    /// `timestamp_unit`: `"us"` (every year 1..9999; datetime2(7)'s 7th digit truncated) or
    /// `"ns"` (exact; a value outside 1677-09-21 .. 2262-04-11 raises DataError).
    /// `large_types`: every text and binary column as large_string / large_binary (by default
    /// only streamed ones, `(n)varchar(max)` and the like, are).
    #[pyo3(signature = (
        rows_per_batch = None,
        *,
        datetimeoffset = "utc",
        uuid = "uuid",
        timestamp_unit = "us",
        large_types = false
    ))]
    fn fetch_record_batch(
        slf: &Bound<'_, Self>,
        rows_per_batch: Option<usize>,
        datetimeoffset: &str,
        uuid: &str,
        timestamp_unit: &str,
        large_types: bool,
    ) -> PyResult<RecordBatchStream> {
        let py = slf.py();
        let rows = rows_per_batch.unwrap_or(DEFAULT_ROWS_PER_BATCH);
        if rows == 0 {
            return Err(programming("rows_per_batch must be at least 1"));
        }
        let options = arrow_options(datetimeoffset, uuid, timestamp_unit, large_types)?;
        let cursor = slf.get();
        let (layout, epoch, errors) = cursor.arrow_start(py, &mut *cursor.lock(py)?, options)?;
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
    /// `__arrow_c_stream__`), read now: an error anywhere raises here. `datetimeoffset`, `uuid`,
    /// `timestamp_unit` and `large_types` as for `fetch_record_batch`.
    #[pyo3(signature = (
        *, datetimeoffset = "utc", uuid = "uuid", timestamp_unit = "us", large_types = false
    ))]
    fn fetch_arrow_table(
        &self,
        py: Python<'_>,
        datetimeoffset: &str,
        uuid: &str,
        timestamp_unit: &str,
        large_types: bool,
    ) -> PyResult<RecordBatchStream> {
        let options = arrow_options(datetimeoffset, uuid, timestamp_unit, large_types)?;
        // One lock for the whole table: it is read now, so nothing can move the cursor between
        // its batches (the lazy reader locks and checks the result set per batch instead).
        let mut guard = self.lock(py)?;
        let (layout, _, errors) = self.arrow_start(py, &mut guard, options)?;
        let mut assembler = BatchAssembler::new(&layout, DEFAULT_ROWS_PER_BATCH, errors);
        let Fetch { mut rows, .. } = self.begin_fetch(py, &mut guard)?;
        let batches = py
            .detach(|| assemble_table(&mut rows, &mut assembler, TABLE_ROWS_PER_BATCH))
            .map_err(|e| self.shared.track(e))
            .py(py)?;
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
        self.skip_rows(py, &mut guard, count.unsigned_abs()) // not negative: refused above
    }
}

/// The bodies of the fetch methods (their errors go through the connection's `error_hook`).
impl Cursor {
    fn fetch_many<'py>(
        &self,
        py: Python<'py>,
        size: Option<isize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let n = match size {
            None => self.arraysize.load(Ordering::Relaxed),
            Some(n) if n < 0 => return Err(programming("fetchmany size must not be negative")),
            Some(n) => n.unsigned_abs(), // not negative: refused above
        };
        let mut guard = self.lock(py)?;
        if n == 1 {
            let row = self.fetch_one(py, &mut guard)?;
            drop(guard);
            return PyList::new(py, row);
        }
        let rows = self.fetch_rows(py, &mut guard, n)?;
        drop(guard);
        PyList::new(py, rows)
    }

    fn fetch_all<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut guard = self.lock(py)?;
        let rows = self.fetch_rows(py, &mut guard, usize::MAX)?;
        drop(guard);
        PyList::new(py, rows)
    }

    fn fetch_val(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let mut guard = self.lock(py)?;
        let Fetch { mut rows, plan, .. } = self.begin_fetch(py, &mut guard)?;
        let Some(served) = self.next_served(py, &mut rows, 1)? else {
            return Ok(None);
        };
        build_first_value(py, plan, served.batch, served.rows.start, served.base)
            .map(Some)
            .map_err(|f| f.err)
    }
}
