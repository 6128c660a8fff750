//! The temporal Arrow arm, and its exact conversions from the ODBC C structs and the drivers'
//! text to Arrow's physical values (no floating point anywhere: a value either converts
//! exactly or is refused): date32, time64[us|ns], timestamp[unit] with or without UTC, and a
//! datetimeoffset's struct of its instant and its own offset.

use super::{Date, Time, Timestamp, TimestampOffset, parse_offset_text, parse_time_text};
use crate::arrow::cells::{Cells, FamilyBuilder, each};
use crate::arrow::kind::{ArrowColumn, ArrowKind, Unit, instant_and_offset_fields};
use crate::batch::ColumnBuffer;
use crate::error::{Error, Result};
use crate::types::CellKind;
use arrow_array::builder::{
    Date32Builder, Int16Builder, PrimitiveBuilder, Time64MicrosecondBuilder,
    Time64NanosecondBuilder,
};
use arrow_array::types::{ArrowPrimitiveType, TimestampMicrosecondType, TimestampNanosecondType};
use arrow_array::{ArrayRef, PrimitiveArray, StructArray};
use arrow_buffer::{NullBufferBuilder, ScalarBuffer};
use std::ops::Range;
use std::sync::Arc;

pub fn kind(column: &ArrowColumn<'_>) -> Result<ArrowKind> {
    let (col, options) = (column.col, column.options);
    Ok(match col.kind {
        CellKind::Date => ArrowKind::Date32,
        CellKind::SsTime2 | CellKind::TimeText => ArrowKind::Time64 {
            nanos: col.desc.decimal_digits > 6,
        },
        CellKind::Timestamp => ArrowKind::Timestamp(options.unit),
        _ if options.offsets => ArrowKind::InstantAndOffset(options.unit),
        _ => ArrowKind::TimestampUtc(options.unit),
    })
}

pub enum Builder {
    Date32(Date32Builder),
    Time64Us(Time64MicrosecondBuilder),
    Time64Ns(Time64NanosecondBuilder),
    Timestamp(Instants),
    InstantAndOffset(Instants, Int16Builder, NullBufferBuilder),
}

impl FamilyBuilder for Builder {
    fn new(kind: ArrowKind, rows: usize) -> Self {
        match kind {
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
            other => unreachable!("{other:?} is not a temporal Arrow type"),
        }
    }

    fn append(&mut self, buf: &ColumnBuffer, rows: Range<usize>, cells: &Cells<'_>) -> Result<()> {
        match self {
            Self::Date32(b) => each(rows, buf, cells, b, |r| {
                let d = buf.date(r);
                date32(d).ok_or_else(|| format!("not a calendar date: {d:?}"))
            }),
            Self::Time64Us(b) => each_time(rows, buf, cells, b, false),
            Self::Time64Ns(b) => each_time(rows, buf, cells, b, true),
            Self::Timestamp(b) if buf.kind == CellKind::Timestamp => {
                timestamps(rows, buf, cells, b)
            }
            Self::Timestamp(b) => {
                for r in rows {
                    if buf.is_null(r) {
                        b.append_null();
                    } else {
                        let v = offset_cell(buf, r, cells)?;
                        b.append_value(instant_of(v, b.unit, r, cells)?);
                    }
                }
                Ok(())
            }
            Self::InstantAndOffset(instants, offsets, nulls) => {
                for r in rows {
                    if buf.is_null(r) {
                        // Children are never null: a placeholder under the null struct slot.
                        instants.append_value(0);
                        offsets.append_value(0);
                        nulls.append_null();
                    } else {
                        let v = offset_cell(buf, r, cells)?;
                        instants.append_value(instant_of(v, instants.unit, r, cells)?);
                        offsets.append_value(v.offset_minutes);
                        nulls.append_non_null();
                    }
                }
                Ok(())
            }
        }
    }

    fn finish(&mut self, kind: ArrowKind, rows: usize) -> ArrayRef {
        match std::mem::replace(self, Self::new(kind, rows)) {
            Self::Date32(mut b) => Arc::new(b.finish()),
            Self::Time64Us(mut b) => Arc::new(b.finish()),
            Self::Time64Ns(mut b) => Arc::new(b.finish()),
            Self::Timestamp(mut b) => b.finish(),
            Self::InstantAndOffset(mut instant, mut offset, mut nulls) => {
                Arc::new(StructArray::new(
                    instant_and_offset_fields(instant.unit),
                    vec![instant.finish(), Arc::new(offset.finish())],
                    nulls.finish(),
                ))
            }
        }
    }
}

/// Naive timestamps. Neighbouring rows mostly share their date: its day number is computed
/// once per run of equal dates (the calendar arithmetic is most of the cost).
fn timestamps(
    rows: Range<usize>,
    buf: &ColumnBuffer,
    cells: &Cells<'_>,
    b: &mut Instants,
) -> Result<()> {
    let mut day: Option<(Date, i64)> = None;
    for r in rows {
        if buf.is_null(r) {
            b.append_null();
            continue;
        }
        let ts = buf.timestamp(r);
        let days = match day {
            Some((d, n)) if d == ts.date => Some(n),
            _ => date32(ts.date).map(|n| {
                day = Some((ts.date, n as i64));
                n as i64
            }),
        };
        let v = days.and_then(|days| timestamp_at(days, ts.time, b.unit));
        b.append_value(v.ok_or_else(|| bad_timestamp(cells, r, ts, b.unit))?);
    }
    Ok(())
}

/// A datetimeoffset cell: the driver's struct, or its text rendering parsed as the row path
/// does (FreeTDS).
fn offset_cell(buf: &ColumnBuffer, r: usize, cells: &Cells<'_>) -> Result<TimestampOffset> {
    if buf.kind == CellKind::TimestampOffset {
        return Ok(buf.timestamp_offset(r));
    }
    let units = buf.text(r).map_err(|e| cells.cut(r, e))?;
    parse_offset_text(units).ok_or_else(|| {
        let text = String::from_utf16_lossy(units);
        cells.failed(r, format!("not a datetimeoffset: {text:?}"))
    })
}

fn instant_of(v: TimestampOffset, unit: Unit, r: usize, cells: &Cells<'_>) -> Result<i64> {
    instant(v, unit).ok_or_else(|| {
        if instant(v, Unit::Micros).is_some() {
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
fn bad_timestamp(cells: &Cells<'_>, r: usize, ts: Timestamp, unit: Unit) -> Error {
    if out_of_range(ts, unit) {
        let text = timestamp_text(ts);
        cells.failed(r, format!("{text} is outside {NANOS_RANGE}"))
    } else {
        cells.failed(r, format!("not a timestamp: {ts:?}"))
    }
}

fn timestamp_text(ts: Timestamp) -> String {
    super::iso::timestamp_text(&ts, 9).to_string()
}

/// One timestamp column's values and validity. Built here rather than with arrow-rs's builders:
/// those are one type per unit, and the unit is chosen per fetch.
pub struct Instants {
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
            parse_time_text(units)
        };
        let v = t
            .and_then(|t| time64(t, nanos))
            .ok_or_else(|| cells.failed(r, format!("not a time of day: {t:?}")))?;
        b.append_value(v);
    }
    Ok(())
}

/// Days from 1970-01-01 to a proleptic Gregorian date (negative before it), for any year
/// SQL Server has (1..9999) and far beyond. Howard Hinnant's `days_from_civil` algorithm.
pub fn days_from_civil(year: i32, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year } as i64;
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = month as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The `(year, month, day)` of a day number (days since 1970-01-01), proleptic Gregorian:
/// Howard Hinnant's `civil_from_days`, the inverse of `days_from_civil`.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Whether a date's fields are a real calendar day (drivers can hand out junk, e.g.
/// psqlODBC's `-infinity`): the row path's `date()` refuses those too.
pub fn valid_date(d: Date) -> bool {
    let leap = (d.year % 4 == 0 && d.year % 100 != 0) || d.year % 400 == 0;
    let days = match d.month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=9999).contains(&d.year) && (1..=days).contains(&d.day)
}

/// date32: days since the epoch, or `None` for an impossible date.
pub fn date32(d: Date) -> Option<i32> {
    valid_date(d).then(|| days_from_civil(d.year as i32, d.month as u32, d.day as u32) as i32)
}

fn valid_time(t: Time) -> bool {
    t.hour < 24 && t.minute < 60 && t.second < 60 && t.nanosecond < 1_000_000_000
}

/// time64 at nanoseconds or (truncated) microseconds since midnight.
pub fn time64(t: Time, nanos: bool) -> Option<i64> {
    if !valid_time(t) {
        return None;
    }
    let secs = t.hour as i64 * 3600 + t.minute as i64 * 60 + t.second as i64;
    Some(if nanos {
        secs * 1_000_000_000 + t.nanosecond as i64
    } else {
        secs * 1_000_000 + (t.nanosecond / 1000) as i64
    })
}

/// A timestamp in `unit` since the epoch, from its day number and time of day: `None` for an
/// impossible time, or past i64 (nanoseconds outside 1677..2262).
#[inline]
pub fn timestamp_at(days: i64, time: Time, unit: Unit) -> Option<i64> {
    i64::try_from(ticks(days, time, unit, 0)?).ok()
}

/// `days` and `time` in `unit`, less `offset_minutes`. In i128: the day's start alone, or a
/// local time before its offset is taken away, can be past i64 while the result is not
/// (1677-09-21; a datetimeoffset at +14:00 just past 2262-04-11).
#[inline]
fn ticks(days: i64, time: Time, unit: Unit, offset_minutes: i16) -> Option<i128> {
    let of_day = time64(time, unit == Unit::Nanos)? as i128;
    let per_second = unit.per_second() as i128;
    Some((days as i128 * 86_400 - offset_minutes as i128 * 60) * per_second + of_day)
}

/// A timestamp in `unit` since the epoch. In microseconds 0001-01-01 is
/// -62,135,596,800,000,000 and every year 1..9999 fits in i64.
pub fn timestamp(ts: Timestamp, unit: Unit) -> Option<i64> {
    timestamp_at(date32(ts.date)? as i64, ts.time, unit)
}

/// The UTC instant of a datetimeoffset in `unit` (its local time minus its offset).
pub fn instant(v: TimestampOffset, unit: Unit) -> Option<i64> {
    if !(-14 * 60..=14 * 60).contains(&v.offset_minutes) {
        return None;
    }
    let days = date32(v.timestamp.date)? as i64;
    i64::try_from(ticks(days, v.timestamp.time, unit, v.offset_minutes)?).ok()
}

/// Whether a refused timestamp is a valid value outside the unit's range (the message then
/// says to fetch in microseconds), rather than no timestamp at all.
pub fn out_of_range(ts: Timestamp, unit: Unit) -> bool {
    unit == Unit::Nanos && timestamp(ts, Unit::Micros).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(year: i16, month: u16, day: u16, h: u16, m: u16, s: u16, ns: u32) -> Timestamp {
        Timestamp {
            date: Date { year, month, day },
            time: Time {
                hour: h,
                minute: m,
                second: s,
                nanosecond: ns,
            },
        }
    }

    #[test]
    fn days_cover_sql_servers_whole_date_range() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(1, 1, 1), -719_162);
        assert_eq!(days_from_civil(9999, 12, 31), 2_932_896);
        assert_eq!(days_from_civil(2000, 2, 29), 11_016);
        assert_eq!(
            date32(Date {
                year: 2023,
                month: 2,
                day: 29
            }),
            None
        );
        assert_eq!(
            date32(Date {
                year: -9999,
                month: 1,
                day: 1
            }),
            None
        );
    }

    fn micros(t: Timestamp) -> Option<i64> {
        timestamp(t, Unit::Micros)
    }

    fn instant_micros(v: TimestampOffset) -> Option<i64> {
        instant(v, Unit::Micros)
    }

    #[test]
    fn microsecond_timestamps_hold_0001_and_9999_and_truncate_the_7th_digit() {
        assert_eq!(
            micros(ts(1, 1, 1, 0, 0, 0, 0)),
            Some(-62_135_596_800_000_000)
        );
        assert_eq!(
            micros(ts(9999, 12, 31, 23, 59, 59, 999_999_900)),
            Some(253_402_300_799_999_999)
        );
        assert_eq!(micros(ts(1970, 1, 1, 0, 0, 0, 1_900)), Some(1));
        assert_eq!(micros(ts(1970, 1, 1, 24, 0, 0, 0)), None);
    }

    #[test]
    fn nanosecond_timestamps_keep_the_7th_digit_and_refuse_what_i64_cannot_hold() {
        let nanos = |t| timestamp(t, Unit::Nanos);
        assert_eq!(nanos(ts(1970, 1, 1, 0, 0, 0, 100)), Some(100));
        assert_eq!(
            nanos(ts(2024, 2, 29, 23, 59, 59, 999_999_900)),
            Some(1_709_251_199_999_999_900)
        );
        // i64 nanoseconds span 1677-09-21 00:12:43.145224192 .. 2262-04-11 23:47:16.854775807.
        assert_eq!(
            nanos(ts(1677, 9, 21, 0, 12, 43, 145_224_192)),
            Some(i64::MIN)
        );
        assert_eq!(
            nanos(ts(2262, 4, 11, 23, 47, 16, 854_775_807)),
            Some(i64::MAX)
        );
        for edge in [
            ts(1677, 9, 21, 0, 12, 43, 145_224_191),
            ts(2262, 4, 11, 23, 47, 16, 854_775_808),
            ts(1, 1, 1, 0, 0, 0, 0),
            ts(9999, 12, 31, 23, 59, 59, 999_999_900),
        ] {
            assert_eq!(nanos(edge), None, "{edge:?}");
            assert!(
                out_of_range(edge, Unit::Nanos),
                "a valid value, out of range: {edge:?}"
            );
        }
        assert!(!out_of_range(ts(1970, 1, 1, 24, 0, 0, 0), Unit::Nanos));
        let east = TimestampOffset {
            timestamp: ts(2262, 4, 12, 1, 0, 0, 0),
            offset_minutes: 14 * 60,
        };
        assert_eq!(
            instant(east, Unit::Nanos),
            nanos(ts(2262, 4, 11, 11, 0, 0, 0))
        );
    }

    #[test]
    fn datetimeoffset_instants_subtract_the_offset() {
        let local = ts(2024, 1, 1, 5, 30, 0, 0);
        let v = TimestampOffset {
            timestamp: local,
            offset_minutes: 5 * 60 + 30,
        };
        assert_eq!(instant_micros(v), micros(ts(2024, 1, 1, 0, 0, 0, 0)));
        let west = TimestampOffset {
            timestamp: ts(1, 1, 1, 0, 0, 0, 0),
            offset_minutes: -14 * 60,
        };
        assert_eq!(
            instant_micros(west),
            Some(-62_135_596_800_000_000 + 14 * 3_600_000_000)
        );
        let bad = TimestampOffset {
            timestamp: local,
            offset_minutes: 15 * 60,
        };
        assert_eq!(instant_micros(bad), None);
    }
}
