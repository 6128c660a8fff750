//! One Arrow builder per column, filled from served rows of the bound batch: fixed-width values
//! one slice copy per served range, everything else cell by cell through the exact conversions
//! of `values.rs`. A cell that cannot become its column's Arrow value is an error naming the
//! column and row, never a null or a guess.

use super::schema::{ArrowKind, instant_and_offset_fields};
use super::values;
use crate::batch::{CellError, ColumnBuffer, cell_error, cell_failed};
use crate::decode::{self, TextErrors};
use crate::error::{Error, Result};
use crate::plan::{CellKind, ResultPlan};
use arrow_array::builder::*;
use arrow_array::types::ArrowPrimitiveType;
use arrow_array::{ArrayRef, StructArray};
use arrow_buffer::NullBufferBuilder;
use arrow_schema::DataType;
use std::ops::Range;
use std::sync::Arc;

/// Where a served range sits, for error messages, and the text policy.
pub(super) struct Cells<'a> {
    pub plan: &'a ResultPlan,
    pub column: usize,
    /// Result-set position of batch row 0.
    pub base: u64,
    pub errors: TextErrors,
}

impl Cells<'_> {
    #[cold]
    fn failed(&self, row: usize, reason: String) -> Error {
        cell_failed(self.plan, self.column, self.base + row as u64, reason)
    }
    #[cold]
    fn cut(&self, row: usize, err: CellError) -> Error {
        cell_error(err, self.plan, self.column, self.base + row as u64)
    }
}

pub(super) enum ColumnBuilder {
    Bool(BooleanBuilder),
    UInt8(UInt8Builder),
    Int16(Int16Builder),
    Int32(Int32Builder),
    Int64(Int64Builder),
    Float32(Float32Builder),
    Float64(Float64Builder),
    Decimal(Decimal128Builder, u8, i8),
    Date32(Date32Builder),
    Time64Us(Time64MicrosecondBuilder),
    Time64Ns(Time64NanosecondBuilder),
    Timestamp(TimestampMicrosecondBuilder),
    InstantAndOffset(TimestampMicrosecondBuilder, Int16Builder, NullBufferBuilder),
    Uuid(FixedSizeBinaryBuilder),
    Utf8(StringBuilder, Vec<u8>),
    LargeUtf8(LargeStringBuilder, Vec<u8>),
    Binary(BinaryBuilder),
    LargeBinary(LargeBinaryBuilder),
}

impl ColumnBuilder {
    pub fn new(kind: ArrowKind, rows: usize) -> ColumnBuilder {
        match kind {
            ArrowKind::Bool => Self::Bool(BooleanBuilder::with_capacity(rows)),
            ArrowKind::UInt8 => Self::UInt8(UInt8Builder::with_capacity(rows)),
            ArrowKind::Int16 => Self::Int16(Int16Builder::with_capacity(rows)),
            ArrowKind::Int32 => Self::Int32(Int32Builder::with_capacity(rows)),
            ArrowKind::Int64 => Self::Int64(Int64Builder::with_capacity(rows)),
            ArrowKind::Float32 => Self::Float32(Float32Builder::with_capacity(rows)),
            ArrowKind::Float64 => Self::Float64(Float64Builder::with_capacity(rows)),
            ArrowKind::Decimal128 { precision, scale } => Self::Decimal(
                Decimal128Builder::with_capacity(rows)
                    .with_data_type(DataType::Decimal128(precision, scale)),
                precision,
                scale,
            ),
            ArrowKind::Date32 => Self::Date32(Date32Builder::with_capacity(rows)),
            ArrowKind::Time64 { nanos: false } => {
                Self::Time64Us(Time64MicrosecondBuilder::with_capacity(rows))
            }
            ArrowKind::Time64 { nanos: true } => {
                Self::Time64Ns(Time64NanosecondBuilder::with_capacity(rows))
            }
            ArrowKind::Timestamp | ArrowKind::TimestampUtc => Self::Timestamp(
                TimestampMicrosecondBuilder::with_capacity(rows).with_data_type(kind.data_type()),
            ),
            ArrowKind::InstantAndOffset => Self::InstantAndOffset(
                TimestampMicrosecondBuilder::with_capacity(rows)
                    .with_data_type(ArrowKind::TimestampUtc.data_type()),
                Int16Builder::with_capacity(rows),
                NullBufferBuilder::new(rows),
            ),
            ArrowKind::Uuid => Self::Uuid(FixedSizeBinaryBuilder::with_capacity(rows, 16)),
            ArrowKind::Utf8 => Self::Utf8(StringBuilder::with_capacity(rows, rows * 8), Vec::new()),
            ArrowKind::LargeUtf8 => Self::LargeUtf8(
                LargeStringBuilder::with_capacity(rows, rows * 8),
                Vec::new(),
            ),
            ArrowKind::Binary => Self::Binary(BinaryBuilder::with_capacity(rows, rows * 8)),
            ArrowKind::LargeBinary => {
                Self::LargeBinary(LargeBinaryBuilder::with_capacity(rows, rows * 8))
            }
        }
    }

    /// The array of every row appended since the last `finish` (the builder starts over).
    pub fn finish(&mut self) -> ArrayRef {
        match self {
            Self::Bool(b) => Arc::new(b.finish()),
            Self::UInt8(b) => Arc::new(b.finish()),
            Self::Int16(b) => Arc::new(b.finish()),
            Self::Int32(b) => Arc::new(b.finish()),
            Self::Int64(b) => Arc::new(b.finish()),
            Self::Float32(b) => Arc::new(b.finish()),
            Self::Float64(b) => Arc::new(b.finish()),
            Self::Decimal(b, ..) => Arc::new(b.finish()),
            Self::Date32(b) => Arc::new(b.finish()),
            Self::Time64Us(b) => Arc::new(b.finish()),
            Self::Time64Ns(b) => Arc::new(b.finish()),
            Self::Timestamp(b) => Arc::new(b.finish()),
            Self::InstantAndOffset(instant, offset, nulls) => Arc::new(StructArray::new(
                instant_and_offset_fields(),
                vec![Arc::new(instant.finish()), Arc::new(offset.finish())],
                nulls.finish(),
            )),
            Self::Uuid(b) => Arc::new(b.finish()),
            Self::Utf8(b, _) => Arc::new(b.finish()),
            Self::LargeUtf8(b, _) => Arc::new(b.finish()),
            Self::Binary(b) => Arc::new(b.finish()),
            Self::LargeBinary(b) => Arc::new(b.finish()),
        }
    }

    /// Append batch rows `rows` of `buf`. `valid` is scratch space for the validity of a range.
    pub fn append(
        &mut self,
        buf: &ColumnBuffer,
        rows: Range<usize>,
        cells: &Cells<'_>,
        valid: &mut Vec<bool>,
    ) -> Result<()> {
        valid.clear();
        valid.extend(rows.clone().map(|r| !buf.is_null(r)));
        match self {
            Self::Int16(b) => primitive(b, buf.values::<i16>(rows), valid),
            Self::Int32(b) => primitive(b, buf.values::<i32>(rows), valid),
            Self::Int64(b) => primitive(b, buf.values::<i64>(rows), valid),
            Self::Float32(b) => primitive(b, buf.values::<f32>(rows), valid),
            Self::Float64(b) => primitive(b, buf.values::<f64>(rows), valid),
            Self::Bool(b) => {
                for r in rows {
                    b.append_option((!buf.is_null(r)).then(|| buf.bit(r)));
                }
                Ok(())
            }
            Self::UInt8(b) => each(rows, buf, cells, b, |r| {
                u8::try_from(buf.i16(r))
                    .map_err(|_| format!("tinyint {} is outside 0..255", buf.i16(r)))
            }),
            Self::Decimal(b, precision, scale) => {
                let (precision, scale) = (*precision, *scale);
                match buf.kind {
                    CellKind::Numeric { .. } => each(rows, buf, cells, b, |r| {
                        values::numeric_to_i128(buf.numeric(r), scale).ok_or_else(|| {
                            "the driver returned a numeric struct of another scale or beyond 38 \
                             digits"
                                .to_string()
                        })
                    }),
                    _ => {
                        for r in rows {
                            if buf.is_null(r) {
                                b.append_null();
                                continue;
                            }
                            let text = buf.bytes(r).map_err(|e| cells.cut(r, e))?;
                            let v = values::decimal_text_to_i128(text, precision, scale)
                                .ok_or_else(|| {
                                    cells.failed(
                                        r,
                                        format!(
                                            "the driver returned {:?}, not a decimal({precision},\
                                             {scale}) value (it is never rounded)",
                                            String::from_utf8_lossy(text)
                                        ),
                                    )
                                })?;
                            b.append_value(v);
                        }
                        Ok(())
                    }
                }
            }
            Self::Date32(b) => each(rows, buf, cells, b, |r| {
                let d = buf.date(r);
                values::date32(d).ok_or_else(|| format!("not a calendar date: {d:?}"))
            }),
            Self::Time64Us(b) => each_time(rows, buf, cells, b, false),
            Self::Time64Ns(b) => each_time(rows, buf, cells, b, true),
            Self::Timestamp(b) => match buf.kind {
                CellKind::Timestamp => each(rows, buf, cells, b, |r| {
                    let ts = buf.timestamp(r);
                    values::timestamp_us(ts).ok_or_else(|| format!("not a timestamp: {ts:?}"))
                }),
                _ => {
                    for r in rows {
                        if buf.is_null(r) {
                            b.append_null();
                        } else {
                            let v = offset_cell(buf, r, cells)?;
                            b.append_value(instant(v, r, cells)?);
                        }
                    }
                    Ok(())
                }
            },
            Self::InstantAndOffset(instants, offsets, nulls) => {
                for r in rows {
                    if buf.is_null(r) {
                        // Children are never null: a placeholder under the null struct slot.
                        instants.append_value(0);
                        offsets.append_value(0);
                        nulls.append_null();
                    } else {
                        let v = offset_cell(buf, r, cells)?;
                        instants.append_value(instant(v, r, cells)?);
                        offsets.append_value(v.offset_minutes);
                        nulls.append_non_null();
                    }
                }
                Ok(())
            }
            Self::Uuid(b) => {
                for r in rows {
                    if buf.is_null(r) {
                        b.append_null();
                    } else {
                        b.append_value(values::uuid_bytes(buf.guid(r)))
                            .map_err(|e| Error::Internal(e.to_string()))?;
                    }
                }
                Ok(())
            }
            Self::Utf8(b, scratch) => text(rows, buf, cells, b, scratch),
            Self::LargeUtf8(b, scratch) => text(rows, buf, cells, b, scratch),
            Self::Binary(b) => binary(rows, buf, cells, b),
            Self::LargeBinary(b) => binary(rows, buf, cells, b),
        }
    }
}

/// A datetimeoffset cell: the driver's struct, or its text rendering parsed as the row path
/// does (FreeTDS).
fn offset_cell(buf: &ColumnBuffer, r: usize, cells: &Cells<'_>) -> Result<decode::TimestampOffset> {
    if buf.kind == CellKind::TimestampOffset {
        return Ok(buf.timestamp_offset(r));
    }
    let units = buf.text(r).map_err(|e| cells.cut(r, e))?;
    decode::parse_offset_text(units).ok_or_else(|| {
        let text = String::from_utf16_lossy(units);
        cells.failed(r, format!("not a datetimeoffset: {text:?}"))
    })
}

fn instant(v: decode::TimestampOffset, r: usize, cells: &Cells<'_>) -> Result<i64> {
    values::instant_us(v).ok_or_else(|| cells.failed(r, format!("not a datetimeoffset: {v:?}")))
}

/// Fixed-width values whose bound layout already is Arrow's: one copy of the range.
fn primitive<T: ArrowPrimitiveType>(
    b: &mut PrimitiveBuilder<T>,
    values: &[T::Native],
    valid: &[bool],
) -> Result<()> {
    if valid.iter().all(|&v| v) {
        b.append_slice(values);
    } else {
        // The element of a NULL cell is whatever the buffer held: masked by the validity.
        b.append_values(values, valid);
    }
    Ok(())
}

/// Cell by cell through `make`; NULL cells are null slots.
fn each<T: ArrowPrimitiveType>(
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

fn each_time<T: ArrowPrimitiveType<Native = i64>>(
    rows: Range<usize>,
    buf: &ColumnBuffer,
    cells: &Cells<'_>,
    b: &mut PrimitiveBuilder<T>,
    nanos: bool,
) -> Result<()> {
    for r in rows {
        if buf.is_null(r) {
            b.append_null();
            continue;
        }
        let t = if buf.kind == CellKind::SsTime2 {
            Some(buf.ss_time2(r))
        } else {
            let units = buf.text(r).map_err(|e| cells.cut(r, e))?;
            decode::parse_time_text(units)
        };
        let v = t
            .and_then(|t| values::time64(t, nanos))
            .ok_or_else(|| cells.failed(r, format!("not a time of day: {t:?}")))?;
        b.append_value(v);
    }
    Ok(())
}

/// UTF-16 cells transcoded to UTF-8 once, with the connection's lone-surrogate policy.
fn text<O: arrow_array::OffsetSizeTrait>(
    rows: Range<usize>,
    buf: &ColumnBuffer,
    cells: &Cells<'_>,
    b: &mut GenericStringBuilder<O>,
    scratch: &mut Vec<u8>,
) -> Result<()> {
    for r in rows {
        if buf.is_null(r) {
            b.append_null();
            continue;
        }
        let units = buf.text(r).map_err(|e| cells.cut(r, e))?;
        scratch.clear();
        // The OR reduction vectorises (an early-exit `all` does not).
        if units.iter().fold(0u16, |acc, &u| acc | u) < 0x80 {
            // ASCII: one byte per unit, no decoding.
            scratch.extend(units.iter().map(|&u| u as u8));
        } else {
            for (at, c) in char::decode_utf16(units.iter().copied()).enumerate() {
                let c = match c {
                    Ok(c) => c,
                    Err(_) if cells.errors == TextErrors::Replace => '\u{FFFD}',
                    Err(e) => {
                        let why = if cells.errors == TextErrors::SurrogatePass {
                            "Arrow utf8 cannot hold it, whatever connection.decode_errors says \
                             ('replace' turns it into U+FFFD)"
                        } else {
                            "set connection.decode_errors to 'replace' to accept it"
                        };
                        return Err(cells.failed(
                            r,
                            format!(
                                "malformed UTF-16 (lone surrogate 0x{:04X} near character \
                                 {at}); {why}",
                                e.unpaired_surrogate()
                            ),
                        ));
                    }
                };
                let mut utf8 = [0u8; 4];
                scratch.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
            }
        }
        // SAFETY: `scratch` holds ASCII bytes, or the UTF-8 encodings of whole `char`s.
        b.append_value(unsafe { std::str::from_utf8_unchecked(scratch) });
    }
    Ok(())
}

fn binary<O: arrow_array::OffsetSizeTrait>(
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
