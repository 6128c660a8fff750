//! Bound Arrow parameters (`bind`, `bind_stream`) as the engine's parameter rows: one value per
//! cell, then the engine binds them as it binds `executemany`'s rows (parameter arrays, one round
//! trip per ~16 MiB request), so the `?` markers get the same SQL types as from Python.
//!
//! Each Arrow type maps to the engine value that keeps it exact: integers to `Int` (uint64 above
//! i64's range to an exact `Decimal(20,0)`), decimal128(p,s) to `Decimal` text with its precision
//! and scale, timestamps without a zone to `Timestamp`, with a zone to `TimestampOffset` at +00:00
//! (the instant), `arrow.uuid` / fixed_size_binary(16) with that extension to `Guid`, strings to
//! UTF-16 text, binary to bytes. Other types are refused (NOT_IMPLEMENTED naming the column).

use crate::error::{Result, err, not_implemented};
use adbc_core::error::Status;
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, Field, TimeUnit};
use ferrodbc::params::ParamValue;
use ferrodbc::types::temporal::{Date, Time, Timestamp, TimestampOffset};

/// Days from 1970-01-01 to a civil date (proleptic Gregorian), Howard Hinnant's algorithm.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn date(days: i64, field: &Field) -> Result<Date> {
    let (y, m, d) = civil_from_days(days);
    if !(1..=9999).contains(&y) {
        return Err(err(
            Status::InvalidData,
            format!("parameter {:?}: year {y} is outside 1..9999", field.name()),
        ));
    }
    Ok(Date {
        year: y as i16,
        month: m as u16,
        day: d as u16,
    })
}

fn time_of_day(nanos: i64) -> Time {
    let secs = nanos / 1_000_000_000;
    Time {
        hour: (secs / 3600) as u16,
        minute: (secs / 60 % 60) as u16,
        second: (secs % 60) as u16,
        nanosecond: (nanos % 1_000_000_000) as u32,
    }
}

fn per_second(unit: &TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    }
}

fn timestamp(value: i64, unit: &TimeUnit, field: &Field) -> Result<Timestamp> {
    let per = per_second(unit);
    let secs = value.div_euclid(per);
    let nanos = value.rem_euclid(per) * (1_000_000_000 / per);
    let days = secs.div_euclid(86_400);
    let in_day = secs.rem_euclid(86_400);
    Ok(Timestamp {
        date: date(days, field)?,
        time: time_of_day(in_day * 1_000_000_000 + nanos),
    })
}

/// decimal128's unscaled value as plain text with `scale` fraction digits.
pub fn decimal_text(unscaled: i128, scale: i8) -> String {
    let neg = unscaled < 0;
    let digits = unscaled.unsigned_abs().to_string();
    let text = if scale <= 0 {
        format!("{digits}{}", "0".repeat((-scale) as usize))
    } else {
        let s = scale as usize;
        let padded = format!("{digits:0>width$}", width = s + 1);
        let (int, frac) = padded.split_at(padded.len() - s);
        format!("{int}.{frac}")
    };
    if neg { format!("-{text}") } else { text }
}

fn is_uuid(field: &Field) -> bool {
    field
        .metadata()
        .get("ARROW:extension:name")
        .is_some_and(|n| n == "arrow.uuid")
}

/// One column of `batch` as engine values, row by row.
fn column_values(array: &dyn Array, field: &Field) -> Result<Vec<ParamValue>> {
    let n = array.len();
    let mut out = Vec::with_capacity(n);
    macro_rules! each {
        ($arr:expr, |$v:ident| $make:expr) => {{
            let arr = $arr;
            for i in 0..n {
                if arr.is_null(i) {
                    out.push(ParamValue::Null);
                } else {
                    let $v = arr.value(i);
                    out.push($make);
                }
            }
        }};
    }
    match array.data_type() {
        DataType::Null => out.resize(n, ParamValue::Null),
        DataType::Boolean => each!(array.as_boolean(), |v| ParamValue::Bool(v)),
        DataType::Int8 => each!(array.as_primitive::<Int8Type>(), |v| ParamValue::Int(
            v.into()
        )),
        DataType::Int16 => each!(array.as_primitive::<Int16Type>(), |v| ParamValue::Int(
            v.into()
        )),
        DataType::Int32 => each!(array.as_primitive::<Int32Type>(), |v| ParamValue::Int(
            v.into()
        )),
        DataType::Int64 => each!(array.as_primitive::<Int64Type>(), |v| ParamValue::Int(v)),
        DataType::UInt8 => each!(array.as_primitive::<UInt8Type>(), |v| ParamValue::Int(
            v.into()
        )),
        DataType::UInt16 => {
            each!(array.as_primitive::<UInt16Type>(), |v| ParamValue::Int(
                v.into()
            ))
        }
        DataType::UInt32 => {
            each!(array.as_primitive::<UInt32Type>(), |v| ParamValue::Int(
                v.into()
            ))
        }
        DataType::UInt64 => each!(
            array.as_primitive::<UInt64Type>(),
            |v| match i64::try_from(v) {
                Ok(i) => ParamValue::Int(i),
                Err(_) => ParamValue::Decimal {
                    text: v.to_string(),
                    precision: 20,
                    scale: 0,
                },
            }
        ),
        DataType::Float32 => {
            each!(array.as_primitive::<Float32Type>(), |v| ParamValue::Float(
                v.into()
            ))
        }
        DataType::Float64 => each!(array.as_primitive::<Float64Type>(), |v| ParamValue::Float(
            v
        )),
        DataType::Utf8 => each!(array.as_string::<i32>(), |v| ParamValue::Text(
            v.encode_utf16().collect()
        )),
        DataType::LargeUtf8 => each!(array.as_string::<i64>(), |v| ParamValue::Text(
            v.encode_utf16().collect()
        )),
        DataType::Utf8View => each!(array.as_string_view(), |v| ParamValue::Text(
            v.encode_utf16().collect()
        )),
        DataType::Binary => each!(array.as_binary::<i32>(), |v| ParamValue::Bytes(v.to_vec())),
        DataType::LargeBinary => {
            each!(array.as_binary::<i64>(), |v| ParamValue::Bytes(v.to_vec()))
        }
        DataType::BinaryView => each!(array.as_binary_view(), |v| ParamValue::Bytes(v.to_vec())),
        DataType::FixedSizeBinary(16) if is_uuid(field) => {
            each!(array.as_fixed_size_binary(), |v| ParamValue::Guid(
                u128::from_be_bytes(v.try_into().expect("16 bytes"))
            ))
        }
        DataType::FixedSizeBinary(_) => {
            each!(array.as_fixed_size_binary(), |v| ParamValue::Bytes(
                v.to_vec()
            ))
        }
        DataType::Decimal128(p, s) => {
            let (p, s) = (*p, *s);
            if s < 0 {
                return Err(not_implemented(&format!(
                    "parameter {:?}: a decimal with a negative scale",
                    field.name()
                )));
            }
            each!(array.as_primitive::<Decimal128Type>(), |v| {
                ParamValue::Decimal {
                    text: decimal_text(v, s),
                    precision: p.into(),
                    scale: s as u32,
                }
            })
        }
        DataType::Date32 => {
            let arr = array.as_primitive::<Date32Type>();
            for i in 0..n {
                out.push(if arr.is_null(i) {
                    ParamValue::Null
                } else {
                    ParamValue::Date(date(arr.value(i).into(), field)?)
                });
            }
        }
        DataType::Date64 => {
            let arr = array.as_primitive::<Date64Type>();
            for i in 0..n {
                out.push(if arr.is_null(i) {
                    ParamValue::Null
                } else {
                    ParamValue::Date(date(arr.value(i).div_euclid(86_400_000), field)?)
                });
            }
        }
        DataType::Time32(unit) => {
            let per = per_second(unit);
            let nanos: Box<dyn Fn(usize) -> i64> = match unit {
                TimeUnit::Second => {
                    let a = array.as_primitive::<Time32SecondType>();
                    Box::new(move |i| i64::from(a.value(i)) * (1_000_000_000 / per))
                }
                _ => {
                    let a = array.as_primitive::<Time32MillisecondType>();
                    Box::new(move |i| i64::from(a.value(i)) * (1_000_000_000 / per))
                }
            };
            for i in 0..n {
                out.push(if array.is_null(i) {
                    ParamValue::Null
                } else {
                    ParamValue::Time(time_of_day(nanos(i)))
                });
            }
        }
        DataType::Time64(unit) => {
            let nanos: Box<dyn Fn(usize) -> i64> = match unit {
                TimeUnit::Nanosecond => {
                    let a = array.as_primitive::<Time64NanosecondType>();
                    Box::new(move |i| a.value(i))
                }
                _ => {
                    let a = array.as_primitive::<Time64MicrosecondType>();
                    Box::new(move |i| a.value(i) * 1_000)
                }
            };
            for i in 0..n {
                out.push(if array.is_null(i) {
                    ParamValue::Null
                } else {
                    ParamValue::Time(time_of_day(nanos(i)))
                });
            }
        }
        DataType::Timestamp(unit, tz) => {
            let values: Vec<Option<i64>> = match unit {
                TimeUnit::Second => array.as_primitive::<TimestampSecondType>().iter().collect(),
                TimeUnit::Millisecond => array
                    .as_primitive::<TimestampMillisecondType>()
                    .iter()
                    .collect(),
                TimeUnit::Microsecond => array
                    .as_primitive::<TimestampMicrosecondType>()
                    .iter()
                    .collect(),
                TimeUnit::Nanosecond => array
                    .as_primitive::<TimestampNanosecondType>()
                    .iter()
                    .collect(),
            };
            for v in values {
                out.push(match v {
                    None => ParamValue::Null,
                    Some(v) => {
                        let ts = timestamp(v, unit, field)?;
                        if tz.is_some() {
                            // The instant in UTC: an Arrow timestamp with a zone stores UTC.
                            ParamValue::TimestampOffset(TimestampOffset {
                                timestamp: ts,
                                offset_minutes: 0,
                            })
                        } else {
                            ParamValue::Timestamp(ts)
                        }
                    }
                });
            }
        }
        DataType::Dictionary(_, _) => {
            return Err(not_implemented(&format!(
                "parameter {:?}: dictionary arrays cannot be bound (decode them first)",
                field.name()
            )));
        }
        other => {
            return Err(not_implemented(&format!(
                "parameter {:?}: Arrow type {other} cannot be bound",
                field.name()
            )));
        }
    }
    Ok(out)
}

/// The rows of `batches` as parameter rows (row-major, as the engine binds them).
pub fn rows_of(batches: &[RecordBatch]) -> Result<Vec<Vec<ParamValue>>> {
    let mut rows = Vec::new();
    for batch in batches {
        let schema = batch.schema();
        let mut cols = Vec::with_capacity(batch.num_columns());
        for (array, field) in batch.columns().iter().zip(schema.fields()) {
            cols.push(column_values(array.as_ref(), field)?.into_iter());
        }
        for _ in 0..batch.num_rows() {
            rows.push(
                cols.iter_mut()
                    .map(|c| c.next().unwrap_or(ParamValue::Null))
                    .collect(),
            );
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(-719_162), (1, 1, 1));
        assert_eq!(civil_from_days(2_932_896), (9999, 12, 31));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
    }

    #[test]
    fn decimals_keep_every_digit() {
        assert_eq!(decimal_text(12_345, 2), "123.45");
        assert_eq!(decimal_text(-5, 3), "-0.005");
        assert_eq!(decimal_text(7, 0), "7");
        assert_eq!(decimal_text(7, -2), "700");
        assert_eq!(
            decimal_text(i128::MAX / 10, 10),
            "1701411834604692317316873037.1588410572"
        );
    }
}
