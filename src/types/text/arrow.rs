//! The text Arrow arm: utf8 for bound columns, large_utf8 for streamed ones (and for every
//! column with [`ArrowOptions::large_types`](crate::arrow::ArrowOptions::large_types)), each cell
//! transcoded once from UTF-16 into the value buffer (`arrow/text.rs`), with the connection's
//! lone-surrogate policy.

use super::TextErrors;
use crate::arrow::cells::{Cells, FamilyBuilder, too_large};
use crate::arrow::kind::{ArrowColumn, ArrowKind};
use crate::arrow::text::{TextColumn, TextFail};
use crate::batch::ColumnBuffer;
use crate::error::Result;
use crate::types::CellKind;
use arrow_array::{ArrayRef, OffsetSizeTrait};
use std::ops::Range;

pub fn kind(column: &ArrowColumn<'_>) -> Result<ArrowKind> {
    Ok(match column.col.kind {
        CellKind::WText { .. } if !column.options.large_types => ArrowKind::Utf8,
        _ => ArrowKind::LargeUtf8,
    })
}

pub enum Builder {
    Utf8(TextColumn<i32>),
    Large(TextColumn<i64>),
}

impl FamilyBuilder for Builder {
    fn new(kind: ArrowKind, rows: usize) -> Self {
        match kind {
            ArrowKind::Utf8 => Self::Utf8(TextColumn::new(rows, rows * 16)),
            _ => Self::Large(TextColumn::new(rows, rows * 16)),
        }
    }

    fn append(&mut self, buf: &ColumnBuffer, rows: Range<usize>, cells: &Cells<'_>) -> Result<()> {
        match self {
            Self::Utf8(t) => text(rows, buf, cells, t),
            Self::Large(t) => text(rows, buf, cells, t),
        }
    }

    /// Text columns keep their buffers' size from one batch to the next (`arrow/text.rs`).
    fn finish(&mut self, _kind: ArrowKind, _rows: usize) -> ArrayRef {
        match self {
            Self::Utf8(t) => t.finish(),
            Self::Large(t) => t.finish(),
        }
    }
}

/// UTF-16 cells transcoded to UTF-8 once, with the connection's lone-surrogate policy.
fn text<O: OffsetSizeTrait>(
    rows: Range<usize>,
    buf: &ColumnBuffer,
    cells: &Cells<'_>,
    t: &mut TextColumn<O>,
) -> Result<()> {
    let replace = cells.errors == TextErrors::Replace;
    for r in rows {
        if buf.is_null(r) {
            t.append_null();
            continue;
        }
        let units = buf.text(r).map_err(|e| cells.cut(r, e))?;
        match t.append_utf16(units, replace) {
            Ok(()) => {}
            Err(TextFail::TooLarge) => return Err(too_large(cells, r)),
            Err(TextFail::Lone(e)) => {
                let why = if cells.errors == TextErrors::SurrogatePass {
                    "Arrow utf8 cannot hold it, whatever connection.decode_errors says \
                     ('replace' turns it into U+FFFD)"
                } else {
                    "set connection.decode_errors to 'replace' to accept it"
                };
                return Err(cells.failed(
                    r,
                    format!(
                        "malformed UTF-16 (lone surrogate 0x{:04X} near character {}); {why}",
                        e.unit, e.at
                    ),
                ));
            }
        }
    }
    Ok(())
}
