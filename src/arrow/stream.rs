//! Record batches from served row ranges ([`BatchAssembler`]), and the Arrow C stream that
//! hands them to another library ([`export_stream`]).
//!
//! The assembler never calls the driver: the binding layer takes rows from the statement
//! through the same fetch protocol as tuples (GIL released around each refill) and appends each
//! served range here, until a batch has the rows asked for or the result set ends.

use super::columns::{Cells, ColumnBuilder};
use super::schema::ArrowLayout;
use crate::error::{Error, Result};
use crate::plan::ResultPlan;
use crate::rowset::Served;
use crate::types::text::TextErrors;
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchIterator};
use arrow_schema::{ArrowError, SchemaRef};
use std::sync::Arc;

/// Builds one record batch at a time from served ranges of a result set's bound batches.
pub struct BatchAssembler {
    schema: SchemaRef,
    plan: Arc<ResultPlan>,
    columns: Vec<ColumnBuilder>,
    rows: usize,
    errors: TextErrors,
    kinds: Vec<super::ArrowKind>,
    /// Rows the builders are sized for after each batch.
    capacity: usize,
}

impl BatchAssembler {
    /// Builders for `layout`'s columns, with room for `rows` rows (they grow past it).
    pub fn new(layout: &ArrowLayout, rows: usize, errors: TextErrors) -> BatchAssembler {
        BatchAssembler {
            schema: layout.schema.clone(),
            plan: layout.plan.clone(),
            columns: layout
                .kinds
                .iter()
                .map(|&k| ColumnBuilder::new(k, rows))
                .collect(),
            rows: 0,
            errors,
            kinds: layout.kinds.clone(),
            capacity: rows,
        }
    }

    /// Rows appended since the last [`Self::finish`].
    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Append the served rows (every column). On error the batch under construction is
    /// unusable: the caller raises and drops it (no short or partly filled batch is handed out).
    pub fn append(&mut self, served: &Served<'_>) -> Result<()> {
        for (i, (builder, buf)) in self
            .columns
            .iter_mut()
            .zip(&served.batch.columns)
            .enumerate()
        {
            let cells = Cells {
                plan: &self.plan,
                column: i,
                base: served.base,
                errors: self.errors,
            };
            builder.append(buf, served.rows.clone(), &cells)?;
        }
        self.rows += served.rows.len();
        Ok(())
    }

    /// Drop the rows appended so far (after an error: columns may differ in length).
    pub fn discard(&mut self) {
        for (c, &kind) in self.columns.iter_mut().zip(&self.kinds) {
            c.finish(kind, self.capacity);
        }
        self.rows = 0;
    }

    /// The record batch of the rows appended so far; the builders start over.
    pub fn finish(&mut self) -> Result<RecordBatch> {
        // The next batch is sized like this one (the last one of a result is shorter).
        self.capacity = self.capacity.max(self.rows);
        let arrays = self
            .columns
            .iter_mut()
            .zip(&self.kinds)
            .map(|(c, &kind)| c.finish(kind, self.capacity))
            .collect();
        self.rows = 0;
        RecordBatch::try_new(self.schema.clone(), arrays)
            .map_err(|e| Error::Internal(format!("an Arrow batch did not match its schema: {e}")))
    }
}

/// An Arrow C stream (`ArrowArrayStream`) over `batches`, for a PyCapsule or any C consumer.
/// The consumer pulls; each pull runs `batches.next()` on the consumer's thread.
pub fn export_stream(
    schema: SchemaRef,
    batches: impl Iterator<Item = std::result::Result<RecordBatch, ArrowError>> + Send + 'static,
) -> FFI_ArrowArrayStream {
    FFI_ArrowArrayStream::new(Box::new(RecordBatchIterator::new(batches, schema)))
}
