//! One Arrow builder per column, filled from served rows of the bound batch: fixed-width values
//! one slice copy per served range, text transcoded once into the value buffer (`text.rs`),
//! everything else cell by cell through the exact conversions of `values.rs`. A cell that
//! cannot become its column's Arrow value is an error naming the column and row, never a null
//! or a guess.
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

use super::schema::{ArrowKind, instant_and_offset_fields};
use super::text::{TextColumn, TextFail};
use super::values::{self, Unit};
use crate::batch::{CellError, ColumnBuffer, cell_error, cell_failed};
use crate::error::{Error, Result};
use crate::plan::{CellKind, ResultPlan};
use crate::types::temporal as decode;
use crate::types::text::TextErrors;
use arrow_array::builder::*;
use arrow_array::types::{
    ArrowPrimitiveType, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    TimestampMicrosecondType, TimestampNanosecondType,
};
use arrow_array::{ArrayRef, PrimitiveArray, StructArray};
use arrow_buffer::{NullBufferBuilder, ScalarBuffer};
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
    Int16(Fixed<Int16Type>),
    Int32(Fixed<Int32Type>),
    Int64(Fixed<Int64Type>),
    Float32(Fixed<Float32Type>),
    Float64(Fixed<Float64Type>),
    Decimal(Decimal128Builder, u8, i8),
    Date32(Date32Builder),
    Time64Us(Time64MicrosecondBuilder),
    Time64Ns(Time64NanosecondBuilder),
    Timestamp(Instants),
    InstantAndOffset(Instants, Int16Builder, NullBufferBuilder),
    Uuid(FixedSizeBinaryBuilder),
    UuidText(TextColumn<i32>),
    Utf8(TextColumn<i32>),
    LargeUtf8(TextColumn<i64>),
    Binary(BinaryBuilder),
    LargeBinary(LargeBinaryBuilder),
}

impl ColumnBuilder {
    pub fn new(kind: ArrowKind, rows: usize) -> ColumnBuilder {
        match kind {
            ArrowKind::Bool => Self::Bool(BooleanBuilder::with_capacity(rows)),
            ArrowKind::UInt8 => Self::UInt8(UInt8Builder::with_capacity(rows)),
            ArrowKind::Int16 => Self::Int16(Fixed::new(rows)),
            ArrowKind::Int32 => Self::Int32(Fixed::new(rows)),
            ArrowKind::Int64 => Self::Int64(Fixed::new(rows)),
            ArrowKind::Float32 => Self::Float32(Fixed::new(rows)),
            ArrowKind::Float64 => Self::Float64(Fixed::new(rows)),
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
            ArrowKind::Timestamp(unit) => Self::Timestamp(Instants::new(rows, unit, false)),
            ArrowKind::TimestampUtc(unit) => Self::Timestamp(Instants::new(rows, unit, true)),
            ArrowKind::InstantAndOffset(unit) => Self::InstantAndOffset(
                Instants::new(rows, unit, true),
                Int16Builder::with_capacity(rows),
                NullBufferBuilder::new(rows),
            ),
            ArrowKind::Uuid => Self::Uuid(FixedSizeBinaryBuilder::with_capacity(rows, 16)),
            ArrowKind::Utf8 => Self::Utf8(TextColumn::new(rows, rows * 16)),
            ArrowKind::UuidText => Self::UuidText(TextColumn::new(rows, rows * 36)),
            ArrowKind::LargeUtf8 => Self::LargeUtf8(TextColumn::new(rows, rows * 16)),
            ArrowKind::Binary => Self::Binary(BinaryBuilder::with_capacity(rows, rows * 8)),
            ArrowKind::LargeBinary => {
                Self::LargeBinary(LargeBinaryBuilder::with_capacity(rows, rows * 8))
            }
        }
    }

    /// The array of every row appended since the last `finish`. The builder starts over with
    /// room for `rows` rows of `kind` (the next batch is likely as long: growing by doubling
    /// would reallocate and copy every buffer several times a batch).
    pub fn finish(&mut self, kind: ArrowKind, rows: usize) -> ArrayRef {
        match self {
            Self::Utf8(t) | Self::UuidText(t) => return t.finish(),
            Self::LargeUtf8(t) => return t.finish(),
            _ => {}
        }
        std::mem::replace(self, ColumnBuilder::new(kind, rows)).into_array()
    }

    fn into_array(mut self) -> ArrayRef {
        match &mut self {
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
            Self::Timestamp(b) => b.finish(),
            Self::InstantAndOffset(instant, offset, nulls) => Arc::new(StructArray::new(
                instant_and_offset_fields(instant.unit),
                vec![instant.finish(), Arc::new(offset.finish())],
                nulls.finish(),
            )),
            Self::Uuid(b) => Arc::new(b.finish()),
            Self::Utf8(t) | Self::UuidText(t) => t.finish(),
            Self::LargeUtf8(t) => t.finish(),
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
    ) -> Result<()> {
        match self {
            Self::Int16(b) => b.append(buf, rows),
            Self::Int32(b) => b.append(buf, rows),
            Self::Int64(b) => b.append(buf, rows),
            Self::Float32(b) => b.append(buf, rows),
            Self::Float64(b) => b.append(buf, rows),
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
                CellKind::Timestamp => {
                    // Neighbouring rows mostly share their date: its day number is computed
                    // once per run of equal dates (the calendar arithmetic is most of the cost).
                    let mut day: Option<(decode::Date, i64)> = None;
                    for r in rows {
                        if buf.is_null(r) {
                            b.append_null();
                            continue;
                        }
                        let ts = buf.timestamp(r);
                        let days = match day {
                            Some((d, n)) if d == ts.date => Some(n),
                            _ => values::date32(ts.date).map(|n| {
                                day = Some((ts.date, n as i64));
                                n as i64
                            }),
                        };
                        let v = days.and_then(|days| values::timestamp_at(days, ts.time, b.unit));
                        b.append_value(v.ok_or_else(|| bad_timestamp(cells, r, ts, b.unit))?);
                    }
                    Ok(())
                }
                _ => {
                    for r in rows {
                        if buf.is_null(r) {
                            b.append_null();
                        } else {
                            let v = offset_cell(buf, r, cells)?;
                            b.append_value(instant(v, b.unit, r, cells)?);
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
                        instants.append_value(instant(v, instants.unit, r, cells)?);
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
            Self::UuidText(t) => {
                for r in rows {
                    if buf.is_null(r) {
                        t.append_null();
                    } else {
                        t.append_ascii(&values::uuid_text(buf.guid(r)))
                            .map_err(|_| too_large(cells, r))?;
                    }
                }
                Ok(())
            }
            Self::Utf8(t) => text(rows, buf, cells, t),
            Self::LargeUtf8(t) => text(rows, buf, cells, t),
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

fn instant(v: decode::TimestampOffset, unit: Unit, r: usize, cells: &Cells<'_>) -> Result<i64> {
    values::instant(v, unit).ok_or_else(|| {
        if values::instant(v, Unit::Micros).is_some() {
            let text = timestamp_text(v.timestamp);
            let offset = v.offset_minutes;
            cells.failed(r, format!("{text} {offset:+} min is outside {NANOS_RANGE}"))
        } else {
            cells.failed(r, format!("not a datetimeoffset: {v:?}"))
        }
    })
}

/// What a nanosecond timestamp array cannot hold, and what to do about it.
const NANOS_RANGE: &str = "timestamp[ns]'s range (1677-09-21 00:12:43.145224192 .. \
    2262-04-11 23:47:16.854775807); fetch with timestamp_unit='us'";

#[cold]
fn bad_timestamp(cells: &Cells<'_>, r: usize, ts: decode::Timestamp, unit: Unit) -> Error {
    if values::out_of_range(ts, unit) {
        let text = timestamp_text(ts);
        cells.failed(r, format!("{text} is outside {NANOS_RANGE}"))
    } else {
        cells.failed(r, format!("not a timestamp: {ts:?}"))
    }
}

fn timestamp_text(ts: decode::Timestamp) -> String {
    let (d, t) = (ts.date, ts.time);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:09}",
        d.year, d.month, d.day, t.hour, t.minute, t.second, t.nanosecond
    )
}

/// One timestamp column's values and validity. Built here rather than with arrow-rs's builders:
/// those are one type per unit, and the unit is chosen per fetch.
pub(super) struct Instants {
    values: Vec<i64>,
    nulls: NullBufferBuilder,
    unit: Unit,
    utc: bool,
}

impl Instants {
    fn new(rows: usize, unit: Unit, utc: bool) -> Self {
        Instants {
            values: Vec::with_capacity(rows),
            nulls: NullBufferBuilder::new(rows),
            unit,
            utc,
        }
    }

    #[inline]
    fn append_null(&mut self) {
        self.values.push(0);
        self.nulls.append_null();
    }

    #[inline]
    fn append_value(&mut self, v: i64) {
        self.values.push(v);
        self.nulls.append_non_null();
    }

    fn finish(&mut self) -> ArrayRef {
        let values = ScalarBuffer::from(std::mem::take(&mut self.values));
        let nulls = self.nulls.finish();
        let zone = self.utc.then_some("UTC");
        match self.unit {
            Unit::Micros => Arc::new(
                PrimitiveArray::<TimestampMicrosecondType>::new(values, nulls)
                    .with_timezone_opt(zone),
            ),
            Unit::Nanos => Arc::new(
                PrimitiveArray::<TimestampNanosecondType>::new(values, nulls)
                    .with_timezone_opt(zone),
            ),
        }
    }
}

/// A column whose bound layout already is Arrow's (little-endian i16/i32/i64/f32/f64): the
/// values of a served range are one slice copy, the validity is packed only if a cell of the
/// range is NULL (the value under a NULL slot is whatever the buffer held: the bitmap masks it).
pub(super) struct Fixed<T: ArrowPrimitiveType> {
    values: Vec<T::Native>,
    nulls: NullBufferBuilder,
}

impl<T: ArrowPrimitiveType> Fixed<T>
where
    T::Native: crate::batch::FixedWidth,
{
    fn new(rows: usize) -> Self {
        Fixed {
            values: Vec::with_capacity(rows),
            nulls: NullBufferBuilder::new(rows),
        }
    }

    fn append(&mut self, buf: &ColumnBuffer, rows: Range<usize>) -> Result<()> {
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

    fn finish(&mut self) -> ArrayRef {
        let values = std::mem::take(&mut self.values);
        // The buffer moves into the array as it is (`Vec` → Arrow buffer, no copy).
        Arc::new(PrimitiveArray::<T>::new(
            ScalarBuffer::from(values),
            self.nulls.finish(),
        ))
    }
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

#[cold]
fn too_large(cells: &Cells<'_>, r: usize) -> Error {
    cells.failed(
        r,
        "the record batch's text outgrew utf8's 2 GiB of offsets; ask for fewer rows per batch"
            .to_string(),
    )
}

/// UTF-16 cells transcoded to UTF-8 once, with the connection's lone-surrogate policy.
fn text<O: arrow_array::OffsetSizeTrait>(
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
