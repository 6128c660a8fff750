//! bit's Arrow arm: bool (a bit per cell, from a byte per cell).

use crate::arrow::cells::{Cells, FamilyBuilder};
use crate::arrow::kind::{ArrowColumn, ArrowKind};
use crate::batch::ColumnBuffer;
use crate::error::Result;
use arrow_array::ArrayRef;
use arrow_array::builder::BooleanBuilder;
use std::ops::Range;
use std::sync::Arc;

pub fn kind(_column: &ArrowColumn<'_>) -> Result<ArrowKind> {
    Ok(ArrowKind::Bool)
}

pub struct Builder(BooleanBuilder);

impl FamilyBuilder for Builder {
    fn new(_kind: ArrowKind, rows: usize) -> Self {
        Builder(BooleanBuilder::with_capacity(rows))
    }

    fn append(&mut self, buf: &ColumnBuffer, rows: Range<usize>, _: &Cells<'_>) -> Result<()> {
        for r in rows {
            self.0.append_option((!buf.is_null(r)).then(|| buf.bit(r)));
        }
        Ok(())
    }

    fn finish(&mut self, kind: ArrowKind, rows: usize) -> ArrayRef {
        let mut done = std::mem::replace(self, Self::new(kind, rows));
        Arc::new(done.0.finish())
    }
}
