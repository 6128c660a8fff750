//! The result of ExecuteQuery: record batches pulled from the statement's row stream on the
//! consumer's thread, one batch at a time (memory bounded by a batch), through the same
//! [`assemble_batch`] as `fetch_record_batch` / `fetch_arrow_table`. No Python anywhere: the
//! engine is built without it.
//!
//! The reader shares the statement (so releasing the ADBC statement before the stream is read
//! keeps the handle alive until the stream is released) and remembers the result set it was
//! made for: after the statement executes again, the stream ends with an error instead of
//! reading another result's rows.

use crate::statement::Inner;
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use ferrodbc::arrow::{ArrowLayout, BatchAssembler, assemble_batch};
use ferrodbc::types::text::TextErrors;
use std::sync::{Arc, Mutex};

pub struct StreamReader {
    inner: Arc<Mutex<Inner>>,
    epoch: u64,
    schema: SchemaRef,
    assembler: BatchAssembler,
    rows_per_batch: usize,
    done: bool,
}

impl StreamReader {
    pub fn new(
        inner: Arc<Mutex<Inner>>,
        epoch: u64,
        layout: &ArrowLayout,
        rows_per_batch: usize,
    ) -> StreamReader {
        let capacity = rows_per_batch.min(crate::session::DEFAULT_BATCH_ROWS);
        StreamReader {
            inner,
            epoch,
            schema: layout.schema.clone(),
            assembler: BatchAssembler::new(layout, capacity, TextErrors::Strict),
            rows_per_batch,
            done: false,
        }
    }
}

impl Iterator for StreamReader {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if inner.stmt.epoch() != self.epoch {
            self.done = true;
            return Some(Err(ArrowError::ExternalError(
                "the statement executed again: this result stream is over".into(),
            )));
        }
        match assemble_batch(
            &mut inner.stmt.rows(),
            &mut self.assembler,
            self.rows_per_batch,
        ) {
            Ok(Some(batch)) => Some(Ok(batch)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                let e = crate::error::from_engine(&e);
                Some(Err(ArrowError::ExternalError(Box::new(e))))
            }
        }
    }
}

impl RecordBatchReader for StreamReader {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}
