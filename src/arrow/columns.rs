//! One Arrow builder per column, filled from served rows of the bound batch: a thin dispatch to
//! the column's type family (`types/<family>/arrow.rs`), which decides on its kind once per
//! served range and loops over the rows (the kit they share, and why fixed-width values are
//! copied once: `cells.rs`). A cell that cannot become its column's Arrow value is an error
//! naming the column and row, never a null or a guess.

use super::cells::FamilyBuilder;
use super::kind::ArrowKind;
use crate::batch::ColumnBuffer;
use crate::error::Result;
use crate::types::{binary, bit, decimal, float, guid, int, temporal, text, vector};
use arrow_array::ArrayRef;
use std::ops::Range;

pub(super) use super::cells::Cells;

/// One column's builder: its family's, chosen once per column from its Arrow kind.
pub(super) enum ColumnBuilder {
    Bit(bit::arrow::Builder),
    Int(int::arrow::Builder),
    Float(float::arrow::Builder),
    Decimal(decimal::arrow::Builder),
    Temporal(temporal::arrow::Builder),
    Guid(guid::arrow::Builder),
    Text(text::arrow::Builder),
    Binary(binary::arrow::Builder),
    Vector(vector::arrow::Builder),
}

impl ColumnBuilder {
    pub fn new(kind: ArrowKind, rows: usize) -> ColumnBuilder {
        use ArrowKind as K;
        match kind {
            K::Bool => Self::Bit(FamilyBuilder::new(kind, rows)),
            K::UInt8 | K::Int16 | K::Int32 | K::Int64 => Self::Int(FamilyBuilder::new(kind, rows)),
            K::Float32 | K::Float64 => Self::Float(FamilyBuilder::new(kind, rows)),
            K::Decimal128 { .. } => Self::Decimal(FamilyBuilder::new(kind, rows)),
            K::Date32
            | K::Time64 { .. }
            | K::Timestamp(_)
            | K::TimestampUtc(_)
            | K::InstantAndOffset(_) => Self::Temporal(FamilyBuilder::new(kind, rows)),
            K::Uuid | K::UuidText => Self::Guid(FamilyBuilder::new(kind, rows)),
            K::Utf8 | K::LargeUtf8 => Self::Text(FamilyBuilder::new(kind, rows)),
            K::Binary | K::LargeBinary => Self::Binary(FamilyBuilder::new(kind, rows)),
            K::Float32List { .. } => Self::Vector(FamilyBuilder::new(kind, rows)),
        }
    }

    /// The array of every row appended since the last `finish`. The builder starts over with
    /// room for `rows` rows of `kind` (see [`FamilyBuilder::finish`]).
    pub fn finish(&mut self, kind: ArrowKind, rows: usize) -> ArrayRef {
        match self {
            Self::Bit(b) => b.finish(kind, rows),
            Self::Int(b) => b.finish(kind, rows),
            Self::Float(b) => b.finish(kind, rows),
            Self::Decimal(b) => b.finish(kind, rows),
            Self::Temporal(b) => b.finish(kind, rows),
            Self::Guid(b) => b.finish(kind, rows),
            Self::Text(b) => b.finish(kind, rows),
            Self::Binary(b) => b.finish(kind, rows),
            Self::Vector(b) => b.finish(kind, rows),
        }
    }

    /// Append batch rows `rows` of `buf`.
    pub fn append(
        &mut self,
        buf: &ColumnBuffer,
        rows: Range<usize>,
        cells: &Cells<'_>,
    ) -> Result<()> {
        match self {
            Self::Bit(b) => b.append(buf, rows, cells),
            Self::Int(b) => b.append(buf, rows, cells),
            Self::Float(b) => b.append(buf, rows, cells),
            Self::Decimal(b) => b.append(buf, rows, cells),
            Self::Temporal(b) => b.append(buf, rows, cells),
            Self::Guid(b) => b.append(buf, rows, cells),
            Self::Text(b) => b.append(buf, rows, cells),
            Self::Binary(b) => b.append(buf, rows, cells),
            Self::Vector(b) => b.append(buf, rows, cells),
        }
    }
}
