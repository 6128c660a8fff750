//! The floating-point Arrow arm: float32/float64 as one slice copy per served range.

use crate::arrow::cells::{Cells, FamilyBuilder, Fixed};
use crate::arrow::kind::{ArrowColumn, ArrowKind};
use crate::batch::ColumnBuffer;
use crate::error::Result;
use crate::types::CellKind;
use arrow_array::ArrayRef;
use arrow_array::types::{Float32Type, Float64Type};
use std::ops::Range;

pub fn kind(column: &ArrowColumn<'_>) -> Result<ArrowKind> {
    Ok(match column.col.kind {
        CellKind::F32 => ArrowKind::Float32,
        _ => ArrowKind::Float64,
    })
}

pub enum Builder {
    Float32(Fixed<Float32Type>),
    Float64(Fixed<Float64Type>),
}

impl FamilyBuilder for Builder {
    fn new(kind: ArrowKind, rows: usize) -> Self {
        match kind {
            ArrowKind::Float32 => Self::Float32(Fixed::new(rows)),
            _ => Self::Float64(Fixed::new(rows)),
        }
    }

    fn append(&mut self, buf: &ColumnBuffer, rows: Range<usize>, _: &Cells<'_>) -> Result<()> {
        match self {
            Self::Float32(b) => b.append(buf, rows),
            Self::Float64(b) => b.append(buf, rows),
        }
    }

    fn finish(&mut self, kind: ArrowKind, rows: usize) -> ArrayRef {
        match std::mem::replace(self, Self::new(kind, rows)) {
            Self::Float32(mut b) => b.finish(),
            Self::Float64(mut b) => b.finish(),
        }
    }
}
