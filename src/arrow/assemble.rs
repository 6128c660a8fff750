//! Record batches from the row stream: [`BatchAssembler`] copies served row ranges into Arrow
//! builders, and [`assemble_batch`] / [`assemble_table`] take the rows from the result set's
//! [`RowStream`] (the same step every fetch shape uses) until a batch has the rows asked for or
//! the result set ends.
//!
//! Nothing here touches Python: the binding layer runs a whole batch (or table) with the GIL
//! released, so Arrow reads on several connections in several threads run in parallel. Refills
//! run in line ([`InLine`]): the caller has already let go of the GIL.

use super::columns::{Cells, ColumnBuilder};
use super::schema::ArrowLayout;
use crate::error::{Error, Result};
use crate::plan::ResultPlan;
use crate::rowset::{InLine, Refill, RowStream, Served};
use crate::types::text::TextErrors;
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
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

/// Up to `max` rows of `rows` appended to `assembler` and finished into a batch (`None` when
/// the result set has no more rows). A decode error consumes the failing row (the rows after it
/// are served by the next call, as for tuples) and drops the batch under construction.
pub fn assemble_batch<R: Refill>(
    rows: &mut RowStream<'_, R>,
    assembler: &mut BatchAssembler,
    max: usize,
) -> Result<Option<RecordBatch>> {
    while assembler.rows() < max {
        let Some(served) = rows.next(max - assembler.rows(), &InLine)? else {
            break;
        };
        let base = served.base;
        if let Err(err) = assembler.append(&served) {
            if let Error::Decode { row, .. } = &err {
                // The failed row lies in the batch just served, whose rows are in memory.
                if let Ok(offset) = usize::try_from(row - base) {
                    rows.rewind_to(offset + 1);
                }
            }
            assembler.discard();
            return Err(err);
        }
    }
    if assembler.rows() == 0 {
        return Ok(None);
    }
    assembler.finish().map(Some)
}

/// The rest of the result set as record batches of up to `rows_per_batch` rows each; any error
/// raises (no short table).
pub fn assemble_table<R: Refill>(
    rows: &mut RowStream<'_, R>,
    assembler: &mut BatchAssembler,
    rows_per_batch: usize,
) -> Result<Vec<RecordBatch>> {
    let mut batches = Vec::new();
    while let Some(batch) = assemble_batch(rows, assembler, rows_per_batch)? {
        batches.push(batch);
    }
    Ok(batches)
}
