//! The binary Arrow arm: binary for bound columns, large_binary for streamed ones (and for
//! every column with [`ArrowOptions::large_types`](crate::arrow::ArrowOptions::large_types)).

use crate::arrow::cells::{Cells, FamilyBuilder};
use crate::arrow::kind::{ArrowColumn, ArrowKind};
use crate::batch::ColumnBuffer;
use crate::error::Result;
use crate::types::CellKind;
use arrow_array::builder::{BinaryBuilder, GenericBinaryBuilder, LargeBinaryBuilder};
use arrow_array::{ArrayRef, OffsetSizeTrait};
use std::ops::Range;
use std::sync::Arc;

pub fn kind(column: &ArrowColumn<'_>) -> Result<ArrowKind> {
    Ok(match column.col.kind {
        CellKind::Binary { .. } if !column.options.large_types => ArrowKind::Binary,
        _ => ArrowKind::LargeBinary,
    })
}

pub enum Builder {
    Binary(BinaryBuilder),
    Large(LargeBinaryBuilder),
}

impl FamilyBuilder for Builder {
    fn new(kind: ArrowKind, rows: usize) -> Self {
        match kind {
            ArrowKind::Binary => Self::Binary(BinaryBuilder::with_capacity(rows, rows * 8)),
            _ => Self::Large(LargeBinaryBuilder::with_capacity(rows, rows * 8)),
        }
    }

    fn append(&mut self, buf: &ColumnBuffer, rows: Range<usize>, cells: &Cells<'_>) -> Result<()> {
        match self {
            Self::Binary(b) => binary(rows, buf, cells, b),
            Self::Large(b) => binary(rows, buf, cells, b),
        }
    }

    fn finish(&mut self, kind: ArrowKind, rows: usize) -> ArrayRef {
        match std::mem::replace(self, Self::new(kind, rows)) {
            Self::Binary(mut b) => Arc::new(b.finish()),
            Self::Large(mut b) => Arc::new(b.finish()),
        }
    }
}

fn binary<O: OffsetSizeTrait>(
    rows: Range<usize>,
    buf: &ColumnBuffer,
    cells: &Cells<'_>,
    b: &mut GenericBinaryBuilder<O>,
) -> Result<()> {
    for r in rows {
        if buf.is_null(r) {
            b.append_null();
        } else {
            b.append_value(buf.bytes(r).map_err(|e| cells.cut(r, e))?);
        }
    }
    Ok(())
}
