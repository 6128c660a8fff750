//! The vector Arrow arm: `fixed_size_list<float32>[n]` (child field `item`, as pyarrow's
//! `pa.list_(pa.float32(), n)`). The floats of each served cell are copied once into the child
//! values; a NULL row is a null list slot over n zeros (a fixed-size list keeps its slots).

use super::float_bytes;
use crate::arrow::cells::{Cells, FamilyBuilder};
use crate::arrow::kind::{ArrowColumn, ArrowKind};
use crate::batch::ColumnBuffer;
use crate::error::Result;
use crate::types::CellKind;
use arrow_array::{ArrayRef, FixedSizeListArray, Float32Array};
use arrow_buffer::{NullBufferBuilder, ScalarBuffer};
use arrow_schema::{DataType, Field};
use std::ops::Range;
use std::sync::Arc;

pub fn kind(column: &ArrowColumn<'_>) -> Result<ArrowKind> {
    match column.col.kind {
        CellKind::Vector { dims } => Ok(ArrowKind::Float32List { dims }),
        _ => Err(column.refuse("is not a float32 vector")),
    }
}

/// The list's child field.
pub fn item_field() -> Arc<Field> {
    Arc::new(Field::new("item", DataType::Float32, true))
}

pub struct Builder {
    dims: u16,
    values: Vec<f32>,
    nulls: NullBufferBuilder,
}

impl FamilyBuilder for Builder {
    fn new(kind: ArrowKind, rows: usize) -> Self {
        let dims = match kind {
            ArrowKind::Float32List { dims } => dims,
            _ => 0,
        };
        Builder {
            dims,
            values: Vec::with_capacity(rows * usize::from(dims)),
            nulls: NullBufferBuilder::new(rows),
        }
    }

    fn append(&mut self, buf: &ColumnBuffer, rows: Range<usize>, cells: &Cells<'_>) -> Result<()> {
        let n = usize::from(self.dims);
        for r in rows {
            if buf.is_null(r) {
                self.values.resize(self.values.len() + n, 0.0);
                self.nulls.append_null();
                continue;
            }
            let cell = buf.bytes(r).map_err(|e| cells.cut(r, e))?;
            let floats = float_bytes(cell, self.dims).map_err(|why| cells.failed(r, why))?;
            self.values.extend(
                floats
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            );
            self.nulls.append_non_null();
        }
        Ok(())
    }

    fn finish(&mut self, kind: ArrowKind, rows: usize) -> ArrayRef {
        let done = std::mem::replace(self, Self::new(kind, rows));
        let values = Float32Array::new(ScalarBuffer::from(done.values), None);
        let mut nulls = done.nulls;
        Arc::new(FixedSizeListArray::new(
            item_field(),
            i32::from(done.dims),
            Arc::new(values),
            nulls.finish(),
        ))
    }
}
