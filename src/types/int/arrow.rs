//! The integers' Arrow arm: int16/int32/int64 as one slice copy per served range (the bound
//! layout is Arrow's); SQL Server's TINYINT (0..255, bound as i16) as uint8.

use crate::arrow::cells::{Cells, FamilyBuilder, Fixed, each};
use crate::arrow::kind::{ArrowColumn, ArrowKind};
use crate::backend::Dbms;
use crate::batch::ColumnBuffer;
use crate::codes::sql;
use crate::error::Result;
use crate::types::CellKind;
use arrow_array::ArrayRef;
use arrow_array::builder::UInt8Builder;
use arrow_array::types::{Int16Type, Int32Type, Int64Type};
use std::ops::Range;
use std::sync::Arc;

pub fn kind(column: &ArrowColumn<'_>) -> Result<ArrowKind> {
    let col = column.col;
    Ok(match col.kind {
        CellKind::I16 if col.desc.sql_type == sql::TINYINT && column.dbms == Dbms::SqlServer => {
            ArrowKind::UInt8
        }
        CellKind::I16 => ArrowKind::Int16,
        CellKind::I32 => ArrowKind::Int32,
        _ => ArrowKind::Int64,
    })
}

pub enum Builder {
    UInt8(UInt8Builder),
    Int16(Fixed<Int16Type>),
    Int32(Fixed<Int32Type>),
    Int64(Fixed<Int64Type>),
}

impl FamilyBuilder for Builder {
    fn new(kind: ArrowKind, rows: usize) -> Self {
        match kind {
            ArrowKind::UInt8 => Self::UInt8(UInt8Builder::with_capacity(rows)),
            ArrowKind::Int16 => Self::Int16(Fixed::new(rows)),
            ArrowKind::Int32 => Self::Int32(Fixed::new(rows)),
            _ => Self::Int64(Fixed::new(rows)),
        }
    }

    fn append(&mut self, buf: &ColumnBuffer, rows: Range<usize>, cells: &Cells<'_>) -> Result<()> {
        match self {
            Self::Int16(b) => b.append(buf, rows),
            Self::Int32(b) => b.append(buf, rows),
            Self::Int64(b) => b.append(buf, rows),
            Self::UInt8(b) => each(rows, buf, cells, b, |r| {
                u8::try_from(buf.i16(r))
                    .map_err(|_| format!("tinyint {} is outside 0..255", buf.i16(r)))
            }),
        }
    }

    fn finish(&mut self, kind: ArrowKind, rows: usize) -> ArrayRef {
        match std::mem::replace(self, Self::new(kind, rows)) {
            Self::UInt8(mut b) => Arc::new(b.finish()),
            Self::Int16(mut b) => b.finish(),
            Self::Int32(mut b) => b.finish(),
            Self::Int64(mut b) => b.finish(),
        }
    }
}
