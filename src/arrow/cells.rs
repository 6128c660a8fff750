//! The kit every family's Arrow builder is made of: where a served range sits ([`Cells`], for
//! the errors that name a cell), the contract of a family builder ([`FamilyBuilder`]), the
//! slice-copy column of the fixed-width kinds ([`Fixed`]) and the cell-by-cell loop ([`each`]).
//!
//! Why fixed-width values are copied once and not handed over: the served rows sit in the row
//! source's bound buffers, and those are reused for later row arrays. Handing a
//! buffer to Arrow would mean a fresh allocation per row array, and faulting in a fresh 4 KiB page
//! costs more than copying 4 KiB; a record batch of a table spans several row arrays anyway.
//! The validity bitmap cannot be shared: ODBC gives a length indicator (8 bytes) per cell,
//! Arrow a bit; it is packed only when the range has a NULL. Other kinds have no Arrow layout
//! to share: bit is a byte per cell (Arrow: a bit), tinyint is bound as i16 (uint8), dates,
//! times and timestamps are C structs (Arrow: day or microsecond counts), decimals a numeric
//! struct (sign + magnitude, Arrow: two's-complement i128), GUIDs native-endian fields.

use super::kind::ArrowKind;
use crate::batch::{CellError, ColumnBuffer, cell_error, cell_failed};
use crate::error::{Error, Result};
use crate::plan::ResultPlan;
use crate::types::text::TextErrors;
use arrow_array::builder::PrimitiveBuilder;
use arrow_array::types::ArrowPrimitiveType;
use arrow_array::{ArrayRef, PrimitiveArray};
use arrow_buffer::{NullBufferBuilder, ScalarBuffer};
use std::ops::Range;
use std::sync::Arc;

/// The Arrow builder of one type family (`types/<family>/arrow.rs`), for one column: chosen once
/// per column from its [`ArrowKind`], then fed served ranges. Statically dispatched
/// (`arrow/columns.rs` holds one variant per family): `append` decides on its kind once per
/// range and loops over the rows.
pub trait FamilyBuilder: Sized {
    /// Room for `rows` rows of `kind` (one of the family's kinds).
    fn new(kind: ArrowKind, rows: usize) -> Self;
    /// Append batch rows `rows` of `buf`; a cell that cannot become its column's Arrow value is
    /// an error naming the column and row (`cells`), never a null or a guess.
    fn append(&mut self, buf: &ColumnBuffer, rows: Range<usize>, cells: &Cells<'_>) -> Result<()>;
    /// The array of every row appended since the last `finish`; the builder starts over with
    /// room for `rows` rows of `kind` (the next batch is likely as long: growing by doubling
    /// would reallocate and copy every buffer several times a batch).
    fn finish(&mut self, kind: ArrowKind, rows: usize) -> ArrayRef;
}

/// Where a served range sits, for error messages, and the text policy.
pub struct Cells<'a> {
    pub plan: &'a ResultPlan,
    pub column: usize,
    /// Result-set position of batch row 0.
    pub base: u64,
    pub errors: TextErrors,
}

impl Cells<'_> {
    #[cold]
    pub fn failed(&self, row: usize, reason: String) -> Error {
        cell_failed(self.plan, self.column, self.base + row as u64, reason)
    }
    #[cold]
    pub fn cut(&self, row: usize, err: CellError) -> Error {
        cell_error(err, self.plan, self.column, self.base + row as u64)
    }
}

/// A column whose bound layout already is Arrow's (little-endian i16/i32/i64/f32/f64): the
/// values of a served range are one slice copy, the validity is packed only if a cell of the
/// range is NULL (the value under a NULL slot is whatever the buffer held: the bitmap masks it).
pub struct Fixed<T: ArrowPrimitiveType> {
    values: Vec<T::Native>,
    nulls: NullBufferBuilder,
}

impl<T: ArrowPrimitiveType> Fixed<T>
where
    T::Native: crate::batch::FixedWidth,
{
    pub fn new(rows: usize) -> Self {
        Fixed {
            values: Vec::with_capacity(rows),
            nulls: NullBufferBuilder::new(rows),
        }
    }

    pub fn append(&mut self, buf: &ColumnBuffer, rows: Range<usize>) -> Result<()> {
        self.values
            .extend_from_slice(buf.values::<T::Native>(rows.clone()));
        if buf.any_null(rows.clone()) {
            for r in rows {
                self.nulls.append(!buf.is_null(r));
            }
        } else {
            self.nulls.append_n_non_nulls(rows.len());
        }
        Ok(())
    }

    pub fn finish(&mut self) -> ArrayRef {
        let values = std::mem::take(&mut self.values);
        // The buffer moves into the array as it is (`Vec` → Arrow buffer, no copy).
        Arc::new(PrimitiveArray::<T>::new(
            ScalarBuffer::from(values),
            self.nulls.finish(),
        ))
    }
}

/// Cell by cell through `make`; NULL cells are null slots.
pub fn each<T: ArrowPrimitiveType>(
    rows: Range<usize>,
    buf: &ColumnBuffer,
    cells: &Cells<'_>,
    b: &mut PrimitiveBuilder<T>,
    mut make: impl FnMut(usize) -> std::result::Result<T::Native, String>,
) -> Result<()> {
    for r in rows {
        if buf.is_null(r) {
            b.append_null();
        } else {
            b.append_value(make(r).map_err(|why| cells.failed(r, why))?);
        }
    }
    Ok(())
}

#[cold]
pub fn too_large(cells: &Cells<'_>, r: usize) -> Error {
    cells.failed(
        r,
        "the record batch's text outgrew utf8's 2 GiB of offsets; ask for fewer rows per batch"
            .to_string(),
    )
}
