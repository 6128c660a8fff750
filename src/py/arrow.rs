//! Arrow results for Python: `Cursor.fetch_record_batch()` / `Cursor.fetch_arrow_table()`
//! return a [`RecordBatchStream`], an object with the Arrow PyCapsule interface
//! (`__arrow_c_stream__`, `__arrow_c_schema__`), which pyarrow (`pa.table(x)`,
//! `pa.RecordBatchReader.from_stream(x)`), polars (`pl.DataFrame(x)`), DuckDB and others take
//! without ferrodbc importing any of them.
//!
//! Why a capsule of our own and not pyo3-arrow: pyo3-arrow 0.20 does match PyO3 0.30, but it
//! brings arrow 59 with chrono-tz and its own array wrappers, while exporting a stream needs
//! only arrow-rs's `FFI_ArrowArrayStream` in a capsule named `arrow_array_stream` (about a
//! dozen lines below), and this keeps arrow-rs at 57, the newest line whose rust-version fits
//! the crate's (1.86). The capsule owns the stream: a consumer moves it out (setting its
//! `release` to NULL); otherwise dropping it releases it.
//!
//! A table is read whole when `fetch_arrow_table()` is called, so an error anywhere in the
//! result raises there with its PEP 249 class, never a short table. A record batch stream is
//! lazy: each pull fetches the next batch from the cursor (taking the GIL, and releasing it
//! around driver calls like every fetch); an error mid-stream ends the stream with an error
//! the consumer raises (pyarrow: `OSError`/`ArrowException`) carrying ferrodbc's class name
//! and message. A stream read after its cursor executed again or moved to another result set
//! fails instead of reading someone else's rows.

use super::cursor::Cursor;
use crate::arrow::{ArrowLayout, BatchAssembler, export_stream};
use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, Field, Schema, SchemaRef, ffi::FFI_ArrowSchema};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use pyo3::{PyTraverseError, PyVisit};
use std::sync::{Arc, Mutex};

/// Rows per record batch when `rows_per_batch` is not given: the largest row array, so a
/// batch is a few bound arrays at most and memory stays bounded by a batch.
pub const DEFAULT_ROWS_PER_BATCH: usize = crate::batch::MAX_BATCH_ROWS;
/// Rows per record batch of a table (one chunk per this many rows).
pub const TABLE_ROWS_PER_BATCH: usize = 64 * 1024;

/// A result set (or what was left of it) as Arrow record batches.
#[pyclass(frozen, weakref, module = "ferrodbc", name = "RecordBatchStream")]
pub struct RecordBatchStream {
    schema: SchemaRef,
    source: Mutex<Source>,
}

enum Source {
    /// Every batch, already read (`fetch_arrow_table`): exported as often as asked.
    Table(Vec<RecordBatch>),
    /// Batches pulled from the cursor on demand; taken by the first export.
    Lazy(Box<LazyBatches>),
    Exported,
}

/// The lazy source: the cursor, the result set it must still be on, and the builders.
pub struct LazyBatches {
    pub cursor: Py<Cursor>,
    pub epoch: u64,
    pub layout: Arc<ArrowLayout>,
    pub assembler: BatchAssembler,
    pub rows_per_batch: usize,
    pub done: bool,
}

impl Iterator for LazyBatches {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        Python::attach(|py| {
            let cursor = self.cursor.bind(py).get();
            match cursor.next_arrow_batch(py, self.epoch, &mut self.assembler, self.rows_per_batch)
            {
                Ok(Some(batch)) => Some(Ok(batch)),
                Ok(None) => {
                    self.done = true;
                    None
                }
                Err(err) => {
                    self.done = true;
                    let class = err
                        .get_type(py)
                        .name()
                        .map_or_else(|_| "Error".to_string(), |n| n.to_string());
                    let message = format!("ferrodbc.{class}: {}", err.value(py));
                    Some(Err(ArrowError::ExternalError(message.into())))
                }
            }
        })
    }
}

impl RecordBatchStream {
    pub fn table(schema: SchemaRef, batches: Vec<RecordBatch>) -> RecordBatchStream {
        RecordBatchStream {
            schema,
            source: Mutex::new(Source::Table(batches)),
        }
    }

    pub fn lazy(lazy: LazyBatches) -> RecordBatchStream {
        RecordBatchStream {
            schema: lazy.layout.schema.clone(),
            source: Mutex::new(Source::Lazy(Box::new(lazy))),
        }
    }
}

#[pymethods]
impl RecordBatchStream {
    /// The Arrow PyCapsule stream interface. `requested_schema` is accepted and not applied
    /// (the interface allows that): the schema is the one documented per SQL type.
    #[pyo3(signature = (requested_schema = None))]
    #[allow(clippy::needless_pass_by_value)] // PyO3 hands arguments over owned
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let mut source = self.source.lock().unwrap_or_else(|e| e.into_inner());
        let stream = match std::mem::replace(&mut *source, Source::Exported) {
            Source::Table(batches) => {
                *source = Source::Table(batches.clone());
                export_stream(self.schema.clone(), batches.into_iter().map(Ok))
            }
            Source::Lazy(lazy) => export_stream(self.schema.clone(), *lazy),
            Source::Exported => {
                return Err(super::errors::programming(
                    "This record batch stream was already consumed (a stream is read once; \
                     fetch_arrow_table() can be exported again).",
                ));
            }
        };
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }

    /// The Arrow PyCapsule schema interface: the stream's schema.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let schema = FFI_ArrowSchema::try_from(self.schema.as_ref())
            .map_err(|e| super::errors::InternalError::new_err(e.to_string()))?;
        PyCapsule::new_with_value(py, schema, c"arrow_schema")
    }

    /// One table of the batches of several tables (`fetch_arrow_table()` results), in order,
    /// without copying a value: the gather step of `ferrodbc.read_arrow`, which must work
    /// without pyarrow. The tables must have the same column names and types; a column is
    /// nullable in the result when it is in any part (the same query on several connections can
    /// describe a column's nullability differently only through a driver's whim, and a
    /// non-nullable field over a part with NULLs would be invalid Arrow).
    #[staticmethod]
    #[allow(clippy::needless_pass_by_value)] // PyO3 hands arguments over owned
    fn concat(parts: Vec<PyRef<'_, RecordBatchStream>>) -> PyResult<RecordBatchStream> {
        let Some(first) = parts.first() else {
            return Err(super::errors::programming(
                "concat needs at least one table",
            ));
        };
        let mut fields: Vec<Field> = first
            .schema
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        let mut tables = Vec::with_capacity(parts.len());
        for (i, part) in parts.iter().enumerate() {
            let batches = match &*part.source.lock().unwrap_or_else(|e| e.into_inner()) {
                Source::Table(batches) => batches.clone(),
                _ => {
                    return Err(super::errors::programming(format!(
                        "concat takes tables (fetch_arrow_table()); part {i} is a record batch \
                         stream"
                    )));
                }
            };
            let theirs = part.schema.fields();
            let same_shape = theirs.len() == fields.len()
                && theirs
                    .iter()
                    .zip(&fields)
                    .all(|(a, b)| a.name() == b.name() && a.data_type() == b.data_type());
            if !same_shape {
                return Err(super::errors::programming(format!(
                    "the parts' columns differ: part 0 has {}, part {i} has {}",
                    describe(&first.schema),
                    describe(&part.schema)
                )));
            }
            for (mine, theirs) in fields.iter_mut().zip(theirs.iter()) {
                if theirs.is_nullable() && !mine.is_nullable() {
                    *mine = mine.clone().with_nullable(true);
                }
            }
            tables.push(batches);
        }
        let schema: SchemaRef = Arc::new(Schema::new(fields));
        let mut batches = Vec::new();
        for batch in tables.into_iter().flatten() {
            let batch = RecordBatch::try_new(schema.clone(), batch.columns().to_vec())
                .map_err(|e| super::errors::InternalError::new_err(e.to_string()))?;
            batches.push(batch);
        }
        Ok(RecordBatchStream::table(schema, batches))
    }

    /// The cyclic GC's view: a lazy stream holds its cursor. Never blocks.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Ok(source) = self.source.try_lock()
            && let Source::Lazy(lazy) = &*source
        {
            visit.call(&lazy.cursor)?;
        }
        Ok(())
    }

    /// Break a cycle through the cursor of a lazy stream nobody can read any more.
    fn __clear__(&self) {
        let taken = match self.source.try_lock() {
            Ok(mut source) if matches!(*source, Source::Lazy(_)) => {
                std::mem::replace(&mut *source, Source::Exported)
            }
            _ => return,
        };
        drop(taken);
    }

    /// Rows held (a table) or None (a lazy stream, whose length is unknown until read).
    #[getter]
    fn num_rows(&self) -> Option<usize> {
        match &*self.source.lock().unwrap_or_else(|e| e.into_inner()) {
            Source::Table(batches) => Some(batches.iter().map(RecordBatch::num_rows).sum()),
            _ => None,
        }
    }
}

/// `name: type, ...` of a schema, for an error message.
fn describe(schema: &Schema) -> String {
    let cols: Vec<String> = schema
        .fields()
        .iter()
        .map(|f| format!("{}: {}", f.name(), f.data_type()))
        .collect();
    format!("({})", cols.join(", "))
}
