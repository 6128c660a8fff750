//! `bulkcopy_arrow`: mssql-python 1.16's Arrow bulk copy. The source is anything with the Arrow
//! PyCapsule interface (`__arrow_c_stream__`: a pyarrow Table or RecordBatchReader, a polars
//! DataFrame, nanoarrow; or `__arrow_c_array__`: a RecordBatch, a struct array), imported into
//! arrow-rs through the C stream / C data interface without pyarrow.
//!
//! One record batch at a time, with the GIL released for the whole batch: the stream's
//! `get_next` (C code; pyarrow's Python-backed readers take the GIL themselves), the encoding of
//! every fed column (`crate::bulk::arrow`, one loop per Arrow type) and the send (through bcp,
//! on the pipe's second thread while the next chunk is encoded). Memory stays bounded by a
//! batch and two chunks: the stream is never collected.

use super::bulk::{
    Args, CHUNK_BYTES, CHUNK_ROWS, Notices, Way, bad_value, check_args, null_refused,
};
use super::*;
use crate::bulk::arrow::{ParamSink, check_type, put_array};
use crate::bulk::{ArrayLoad, CellSink, Fed, Pipe, check_param, pipelined};
use crate::error::Error;
use crate::params::ParamValue;
use crate::py::errors::to_pyerr;
use arrow_array::ffi::{FFI_ArrowArray, from_ffi};
use arrow_array::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchReader, make_array};
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{ArrowError, Schema, SchemaRef};
use pyo3::exceptions::PyTypeError;
use pyo3::types::{PyCapsule, PyCapsuleMethods, PyDict};

/// The record batches of the source.
enum Source {
    Stream(ArrowArrayStreamReader),
    /// `__arrow_c_array__`: one batch, taken by the first `next`.
    Batch(SchemaRef, Option<RecordBatch>),
}

impl Source {
    fn schema(&self) -> SchemaRef {
        match self {
            Source::Stream(r) => r.schema(),
            Source::Batch(s, _) => s.clone(),
        }
    }

    fn next(&mut self) -> Option<Result<RecordBatch, ArrowError>> {
        match self {
            Source::Stream(r) => r.next(),
            Source::Batch(_, b) => b.take().map(Ok),
        }
    }
}

/// Import `source` through its PyCapsule, taking ownership of the C structs: each is moved out
/// of its capsule, which is left released (its destructor then frees nothing).
fn import(source: &Bound<'_, PyAny>) -> PyResult<Source> {
    let bad = |e: ArrowError| {
        PyTypeError::new_err(format!(
            "bulkcopy_arrow: the source's Arrow data cannot be imported: {e}"
        ))
    };
    if source.hasattr("__arrow_c_stream__")? {
        let capsule = source.call_method0("__arrow_c_stream__")?;
        let capsule = capsule.cast::<PyCapsule>().map_err(|_| {
            PyTypeError::new_err("bulkcopy_arrow: __arrow_c_stream__() did not return a PyCapsule")
        })?;
        let ptr = capsule.pointer_checked(Some(c"arrow_array_stream"))?;
        // SAFETY: a capsule named "arrow_array_stream" holds an `ArrowArrayStream` (the Arrow
        // PyCapsule interface). `from_raw` moves the struct out and leaves a released one (NULL
        // `release`) in the capsule, so its destructor does not release it a second time.
        let stream = unsafe { FFI_ArrowArrayStream::from_raw(ptr.as_ptr().cast()) };
        return ArrowArrayStreamReader::try_new(stream)
            .map(Source::Stream)
            .map_err(bad);
    }
    if source.hasattr("__arrow_c_array__")? {
        let pair = source.call_method0("__arrow_c_array__")?;
        let (schema_capsule, array_capsule): (Bound<'_, PyCapsule>, Bound<'_, PyCapsule>) =
            pair.extract().map_err(|_| {
                PyTypeError::new_err(
                    "bulkcopy_arrow: __arrow_c_array__() did not return a pair of PyCapsules",
                )
            })?;
        let schema_ptr = schema_capsule.pointer_checked(Some(c"arrow_schema"))?;
        let array_ptr = array_capsule.pointer_checked(Some(c"arrow_array"))?;
        // SAFETY: the capsules hold an `ArrowSchema` and an `ArrowArray` (the interface's
        // names, checked above); each is moved out, leaving a released struct behind.
        let (schema, array) = unsafe {
            (
                FFI_ArrowSchema::from_raw(schema_ptr.as_ptr().cast()),
                FFI_ArrowArray::from_raw(array_ptr.as_ptr().cast()),
            )
        };
        // SAFETY: `array` and `schema` come from the same producer and describe each other.
        let data = unsafe { from_ffi(array, &schema) }.map_err(bad)?;
        let array = make_array(data);
        let Some(structs) = array.as_any().downcast_ref::<arrow_array::StructArray>() else {
            return Err(PyTypeError::new_err(format!(
                "bulkcopy_arrow: __arrow_c_array__() gave a {} array; a record batch (a struct \
                 array of the columns) is needed",
                array.data_type()
            )));
        };
        if structs.null_count() > 0 {
            return Err(PyTypeError::new_err(
                "bulkcopy_arrow: the struct array has NULL rows; a record batch has none",
            ));
        }
        let schema = std::sync::Arc::new(Schema::new(structs.fields().clone()));
        let batch =
            RecordBatch::try_new(schema.clone(), structs.columns().to_vec()).map_err(bad)?;
        return Ok(Source::Batch(schema, Some(batch)));
    }
    Err(PyTypeError::new_err(format!(
        "bulkcopy_arrow() expects Arrow data: an object with __arrow_c_stream__ (pyarrow Table or \
         RecordBatchReader, polars DataFrame, ...) or __arrow_c_array__ (a RecordBatch), got {}",
        source.get_type().name()?
    )))
}

/// Why the load stopped before the source's end.
enum Fail {
    /// A value of fed column `col` (index into the fed columns) at source row `row`.
    Value {
        col: usize,
        row: u64,
        reason: String,
        null: bool,
    },
    Load(Error),
    /// The source's error reading the batch after source row `after`.
    Source {
        error: ArrowError,
        after: u64,
    },
    /// The bcp sending thread stopped on an error (which is the load's).
    Sender,
    /// `progress` raised.
    Py(PyErr),
}

impl Fail {
    /// `copied`: the rows that stayed, counted once every row sent is through.
    fn into_pyerr(self, py: Python<'_>, fed: &[Fed], copied: u64) -> PyErr {
        match self {
            Fail::Value {
                col,
                row,
                reason,
                null,
            } => bad_value(py, &fed[col], row, reason, copied, null),
            Fail::Load(e) => to_pyerr(py, e),
            Fail::Source { error, after } => to_pyerr(
                py,
                Error::Bulk {
                    context: format!(
                        "bulk load: reading the Arrow source after source row {after} failed \
                         ({copied} rows copied before it)"
                    ),
                    inner: Box::new(Error::Data(error.to_string())),
                },
            ),
            Fail::Sender => to_pyerr(
                py,
                Error::Interface("bulk load: the sending thread stopped without an error".into()),
            ),
            Fail::Py(e) => e,
        }
    }
}

/// The first NULL of `part` (source rows from `first`) when the column refuses NULL.
fn check_nulls(f: &Fed, col: usize, part: &dyn Array, first: u64) -> Result<(), Fail> {
    if !f.refuses_null {
        return Ok(());
    }
    if let Some(nulls) = part.logical_nulls().filter(|n| n.null_count() > 0) {
        let at = nulls.iter().position(|valid| !valid).unwrap_or(0);
        return Err(Fail::Value {
            col,
            row: first + at as u64,
            reason: null_refused(f),
            null: true,
        });
    }
    Ok(())
}

/// Rows per bcp chunk for these columns: at most [`CHUNK_ROWS`], and about [`CHUNK_BYTES`] of
/// cells going by the columns' buffers (text doubles as UTF-16; each cell has an 8-byte
/// prefix). A slice of a larger array counts the whole buffers: the estimate errs small.
fn chunk_rows(columns: &[ArrayRef], rows: usize) -> usize {
    if rows == 0 {
        return 1;
    }
    let bytes: usize = columns.iter().map(|c| c.get_buffer_memory_size()).sum();
    let per_row = 2 * bytes / rows + 8 * columns.len() + 1;
    (CHUNK_BYTES / per_row).clamp(1, CHUNK_ROWS)
}

/// Encode one batch, chunk by chunk, each handed to the pipe's sending thread.
fn send_bcp(
    pipe: &mut Pipe,
    fed: &[Fed],
    columns: &[ArrayRef],
    rows: usize,
    first_row: u64,
) -> Result<(), Fail> {
    let step = chunk_rows(columns, rows);
    let mut start = 0;
    while start < rows {
        let len = step.min(rows - start);
        let first = first_row + start as u64;
        let mut chunk = pipe.take(first).ok_or(Fail::Sender)?;
        for (i, (f, col)) in fed.iter().zip(columns).enumerate() {
            let part = col.slice(start, len);
            check_nulls(f, i, part.as_ref(), first)?;
            let mut sink = CellSink {
                form: f.form,
                out: &mut chunk.columns[i],
            };
            put_array(part.as_ref(), &mut sink).map_err(|e| Fail::Value {
                col: i,
                row: first + e.row as u64,
                reason: e.reason,
                null: false,
            })?;
        }
        if !pipe.put(chunk) {
            return Err(Fail::Sender);
        }
        start += len;
    }
    Ok(())
}

/// Rows of the parameter-array path not sent yet (a send takes `rows_per_send` rows, which may
/// span record batches).
struct Pending {
    rows: Vec<Vec<ParamValue>>,
    first: u64,
}

/// Add one batch's rows to `pending`, sending each full parameter array.
fn send_arrays(
    load: &mut ArrayLoad,
    pending: &mut Pending,
    fed: &[Fed],
    columns: &[ArrayRef],
    rows: usize,
    first_row: u64,
) -> Result<(), Fail> {
    let per_send = load.rows_per_send().max(1);
    // Each value must suit its column's type, as on the tuple path (SQLite would store text in
    // an INTEGER column); the DBMS keeps its own limits.
    let forms: Vec<_> = fed.iter().map(|f| f.form.without_limits()).collect();
    let mut scratch = crate::bulk::CellColumn::default();
    let mut start = 0;
    while start < rows {
        let len = (per_send - pending.rows.len()).min(rows - start);
        let first = first_row + start as u64;
        if pending.rows.is_empty() {
            pending.first = first;
        }
        let mut values = Vec::with_capacity(fed.len());
        for (i, (f, col)) in fed.iter().zip(columns).enumerate() {
            let part = col.slice(start, len);
            check_nulls(f, i, part.as_ref(), first)?;
            let mut out = Vec::with_capacity(len);
            put_array(part.as_ref(), &mut ParamSink { out: &mut out }).map_err(|e| {
                Fail::Value {
                    col: i,
                    row: first + e.row as u64,
                    reason: e.reason,
                    null: false,
                }
            })?;
            for (k, v) in out.iter().enumerate() {
                check_param(v, forms[i], &mut scratch).map_err(|reason| Fail::Value {
                    col: i,
                    row: first + k as u64,
                    reason,
                    null: false,
                })?;
            }
            values.push(out.into_iter());
        }
        pending.rows.extend((0..len).map(|_| {
            values
                .iter_mut()
                .map(|c| c.next().unwrap_or(ParamValue::Null))
                .collect::<Vec<_>>()
        }));
        if pending.rows.len() >= per_send {
            flush(load, pending)?;
        }
        start += len;
    }
    Ok(())
}

fn flush(load: &mut ArrayLoad, pending: &mut Pending) -> Result<(), Fail> {
    let rows = std::mem::take(&mut pending.rows);
    load.send(rows, pending.first).map_err(Fail::Load)
}

/// The batch loop: each record batch pulled and handed to `send` (with the source row number
/// of its first row) with the GIL released; `progress` called as due. `Ok` at the stream's end.
fn each_batch(
    py: Python<'_>,
    source: &mut Source,
    fed: &[Fed],
    args: &Args,
    mut send: impl FnMut(&[ArrayRef], usize, u64) -> Result<(), Fail> + Send,
) -> Result<(), Fail> {
    let mut n: u64 = 0;
    let mut notices = Notices::new(args.notify_after);
    loop {
        let first = n;
        let rows = py.detach(|| -> Result<Option<usize>, Fail> {
            let Some(batch) = source.next() else {
                return Ok(None);
            };
            let batch = batch.map_err(|error| Fail::Source {
                error,
                after: first,
            })?;
            let rows = batch.num_rows();
            let columns: Vec<ArrayRef> =
                fed.iter().map(|f| batch.column(f.field).clone()).collect();
            send(&columns, rows, first)?;
            Ok(Some(rows))
        })?;
        let Some(rows) = rows else {
            return Ok(());
        };
        n += rows as u64;
        if let Some(cb) = &args.progress {
            if notices.due(n) {
                cb.call1(py, (n,)).map_err(Fail::Py)?;
            }
        }
    }
}

#[pymethods]
impl Cursor {
    /// Copy Arrow data (any object with `__arrow_c_stream__` or `__arrow_c_array__`) into
    /// `table_name` with the driver's bulk-copy API on this connection (parameter arrays where
    /// the driver has none), one record batch at a time. mssql-python 1.16's signature and
    /// result; `progress(rows)` is called with the source rows taken so far after the batch that passes
    /// each `notify_after` (they are sent, or in the chunk about to go).
    #[pyo3(signature = (table_name, source, batch_size = None, timeout = None, column_mappings = None,
        keep_identity = false, check_constraints = false, table_lock = false, keep_nulls = false,
        fire_triggers = false, use_internal_transaction = false, *, progress = None, notify_after = 10000))]
    #[allow(clippy::too_many_arguments)]
    fn bulkcopy_arrow(
        &self,
        py: Python<'_>,
        table_name: &Bound<'_, PyAny>,
        source: &Bound<'_, PyAny>,
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
        let zero = 0i64.into_pyobject(py)?.into_any();
        let thirty = 30i64.into_pyobject(py)?.into_any();
        let args: Args = check_args(
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
        let mut source = import(source)?;
        let schema = source.schema();
        let fields = schema.fields().len();
        self.bulk_load(py, &args, Some(fields), |py, way| {
            let fed: Vec<Fed> = way.fed().to_vec();
            for f in &fed {
                let field = schema.field(f.field);
                check_type(field.data_type()).map_err(|reason| {
                    let context = format!(
                        "bulk load: column {:?} from source field {} ({:?})",
                        f.name,
                        f.field,
                        field.name()
                    );
                    to_pyerr(
                        py,
                        Error::Bulk {
                            context,
                            inner: Box::new(Error::NotSupported(reason)),
                        },
                    )
                })?;
            }
            let stopped = match way {
                Way::Bcp(load) => {
                    let (stopped, sent) = pipelined(
                        fed.len(),
                        |chunk| load.send(chunk),
                        |pipe| {
                            let stopped =
                                each_batch(py, &mut source, &fed, &args, |columns, rows, first| {
                                    send_bcp(pipe, &fed, columns, rows, first)
                                });
                            py.detach(|| pipe.close());
                            stopped
                        },
                    );
                    // A send that failed failed first: the rows after it were not sent.
                    sent.map_err(|e| to_pyerr(py, e))?;
                    stopped
                }
                Way::Arrays(load) => {
                    let mut pending = Pending {
                        rows: Vec::new(),
                        first: 0,
                    };
                    each_batch(py, &mut source, &fed, &args, |columns, rows, first| {
                        send_arrays(load, &mut pending, &fed, columns, rows, first)
                    })
                    .and_then(|()| {
                        if pending.rows.is_empty() {
                            return Ok(());
                        }
                        py.detach(|| flush(load, &mut pending))
                    })
                }
            };
            stopped.map_err(|fail| fail.into_pyerr(py, &fed, way.count().rows_copied))
        })
    }
}
