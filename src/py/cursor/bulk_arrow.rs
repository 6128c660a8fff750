//! `bulkcopy_arrow`: mssql-python 1.16's Arrow bulk copy. The source is anything with the Arrow
//! PyCapsule interface (`__arrow_c_stream__`: a pyarrow Table or RecordBatchReader, a polars
//! DataFrame, nanoarrow; or `__arrow_c_array__`: a RecordBatch, a struct array), imported into
//! arrow-rs through the C stream / C data interface without pyarrow.
//!
//! The load is `crate::bulk::BulkLoad::arrow` (`bulk/stream.rs`): one record batch at a time,
//! with the GIL released for the whole batch (the stream's `get_next` is C code; pyarrow's
//! Python-backed readers take the GIL themselves).

use super::bulk::{Args, check_args};
use super::*;
use arrow_array::ffi::{FFI_ArrowArray, from_ffi};
use arrow_array::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use arrow_array::{Array, RecordBatch, RecordBatchReader, make_array};
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

impl Iterator for Source {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Source::Stream(r) => r.next(),
            Source::Batch(_, b) => b.take().map(Ok),
        }
    }
}

impl RecordBatchReader for Source {
    fn schema(&self) -> SchemaRef {
        match self {
            Source::Stream(r) => r.schema(),
            Source::Batch(s, _) => s.clone(),
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
        let args: Args = check_args(
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
        let source = import(source)?;
        let fields = source.schema().fields().len();
        self.bulk_load(py, &args, Some(fields), |py, load| {
            args.with_progress(py, |progress| load.arrow(&py, source, progress))
        })
    }
}
