//! An Arrow array's elements into a [`Sink`] (`bulkcopy_arrow`): the array's data type is
//! looked at once, then one loop per type puts one [`Value`] variant for every element (the
//! sink's `put` is inlined there, so its `match` on the variant folds away): no value pays for
//! a `match` on its type. The conversions are exact: integers, decimals as their digits, days
//! and time units as calendar fields (no floating point).
//!
//! Types and what each element becomes:
//! - Null: `Null`. Boolean: `Bool`. Int8..Int64, UInt8..UInt32: `Int`; UInt64 `Int` up to
//!   `i64::MAX`, beyond it `Decimal` text (which an integer column refuses as an overflow).
//! - Float16/32/64: `Float`. Decimal32/64/128/256(p, s): `Decimal` with the exact digits.
//! - Date32/Date64: `Date`. Time32(s, ms), Time64(us, ns): `Time`.
//! - Timestamp(unit, no zone): `Timestamp`. Timestamp(unit, zone): `TimestampOffset`, with the
//!   zone's offset if it is a fixed `+hh:mm` / `-hh:mm`, else +00:00 for `UTC` and any named
//!   zone (the instant is kept; the named zone's local time is not). ferrodbc's own Arrow output
//!   of a datetimeoffset is a `UTC` timestamp (the default) or the struct
//!   `{instant: timestamp[UTC], offset_minutes: int16}` (`datetimeoffset="struct"`): both come
//!   back as the same instant, the struct with its own offset too.
//! - Utf8, LargeUtf8, Utf8View: `Utf8`. Binary, LargeBinary, BinaryView, FixedSizeBinary:
//!   `Bytes`. Dictionary(any integer key, Utf8/LargeUtf8/Utf8View value): the key's `Utf8`.
//! - FixedSizeList, List, LargeList of Float32/Float64: `Vector` (`types/vector/bulk.rs`).
//! - Anything else (other Lists, other Structs, Map, Interval, Duration, ...): refused, naming
//!   the type.
//!
//! `encode::ParamSink` is the sink of the parameter-array path (drivers without bcp) and of the
//! ADBC driver's bound parameters: it turns each element into the
//! [`ParamValue`](crate::params::ParamValue) the parameters bind.

use super::encode::{Put, Sink};
use crate::params::Value;
use crate::types::decimal::text::unscaled_text;
use crate::types::temporal::from_arrow::{
    MS_PER_DAY, date_of_days, fixed_offset, offset_of, time_of, timestamp_of,
};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    ArrowDictionaryKeyType, Date32Type, Date64Type, Decimal32Type, Decimal64Type, Decimal128Type,
    Decimal256Type, Float16Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, Time32MillisecondType, Time32SecondType, Time64MicrosecondType,
    Time64NanosecondType, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayAccessor, StructArray};
use arrow_schema::{DataType, TimeUnit};

/// An element that could not be put: its index in the array, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failed {
    pub row: usize,
    pub reason: String,
}

type Done = Result<(), Failed>;

/// `Err` naming the Arrow type when `bulkcopy_arrow` cannot send it (checked once per field,
/// before any row is sent).
pub fn check_type(dt: &DataType) -> Result<(), String> {
    use DataType as D;
    let ok = match dt {
        D::Null
        | D::Boolean
        | D::Int8
        | D::Int16
        | D::Int32
        | D::Int64
        | D::UInt8
        | D::UInt16
        | D::UInt32
        | D::UInt64
        | D::Float16
        | D::Float32
        | D::Float64
        | D::Decimal32(..)
        | D::Decimal64(..)
        | D::Decimal128(..)
        | D::Decimal256(..)
        | D::Date32
        | D::Date64
        | D::Time32(TimeUnit::Second | TimeUnit::Millisecond)
        | D::Time64(TimeUnit::Microsecond | TimeUnit::Nanosecond)
        | D::Timestamp(..)
        | D::Utf8
        | D::LargeUtf8
        | D::Utf8View
        | D::Binary
        | D::LargeBinary
        | D::BinaryView
        | D::FixedSizeBinary(_) => true,
        D::Dictionary(key, value) => {
            key.is_dictionary_key_type() && matches!(**value, D::Utf8 | D::LargeUtf8 | D::Utf8View)
        }
        D::Struct(_) => offset_struct(dt).is_some(),
        d if crate::types::vector::bulk::is_arrow_vector(d) => true,
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("the Arrow type {dt} cannot be bulk copied"))
    }
}

/// The unit of ferrodbc's datetimeoffset struct (`{instant: timestamp[unit, tz], offset_minutes:
/// int16}`), if `dt` is one.
fn offset_struct(dt: &DataType) -> Option<TimeUnit> {
    let DataType::Struct(fields) = dt else {
        return None;
    };
    match (fields.first(), fields.get(1), fields.len()) {
        (Some(i), Some(o), 2)
            if i.name() == "instant"
                && o.name() == "offset_minutes"
                && *o.data_type() == DataType::Int16 =>
        {
            match i.data_type() {
                DataType::Timestamp(unit, Some(_)) => Some(*unit),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Put every element of `array` into `sink`, in order. `Err` at the first element the sink
/// refuses (or the whole array, index 0, for a type [`check_type`] refuses).
pub fn put_array(array: &dyn Array, sink: &mut impl Sink) -> Done {
    use DataType as D;
    match array.data_type() {
        D::Null => {
            for row in 0..array.len() {
                sink.put(Value::Null)
                    .map_err(|reason| Failed { row, reason })?;
            }
            Ok(())
        }
        d if crate::types::vector::bulk::is_arrow_vector(d) => {
            crate::types::vector::bulk::put_arrow(array, sink)
                .map_err(|(row, reason)| Failed { row, reason })
        }
        D::Boolean => each(array.as_boolean(), sink, |s, v| s.put(Value::Bool(v))),
        D::Int8 => each(array.as_primitive::<Int8Type>(), sink, |s, v| {
            s.put(Value::Int(v.into()))
        }),
        D::Int16 => each(array.as_primitive::<Int16Type>(), sink, |s, v| {
            s.put(Value::Int(v.into()))
        }),
        D::Int32 => each(array.as_primitive::<Int32Type>(), sink, |s, v| {
            s.put(Value::Int(v.into()))
        }),
        D::Int64 => each(array.as_primitive::<Int64Type>(), sink, |s, v| {
            s.put(Value::Int(v))
        }),
        D::UInt8 => each(array.as_primitive::<UInt8Type>(), sink, |s, v| {
            s.put(Value::Int(v.into()))
        }),
        D::UInt16 => each(array.as_primitive::<UInt16Type>(), sink, |s, v| {
            s.put(Value::Int(v.into()))
        }),
        D::UInt32 => each(array.as_primitive::<UInt32Type>(), sink, |s, v| {
            s.put(Value::Int(v.into()))
        }),
        D::UInt64 => each(
            array.as_primitive::<UInt64Type>(),
            sink,
            |s, v| match i64::try_from(v) {
                Ok(i) => s.put(Value::Int(i)),
                Err(_) => s.put(Value::Decimal(&v.to_string())),
            },
        ),
        D::Float16 => each(array.as_primitive::<Float16Type>(), sink, |s, v| {
            s.put(Value::Float(v.to_f64()))
        }),
        D::Float32 => each(array.as_primitive::<Float32Type>(), sink, |s, v| {
            s.put(Value::Float(v.into()))
        }),
        D::Float64 => each(array.as_primitive::<Float64Type>(), sink, |s, v| {
            s.put(Value::Float(v))
        }),
        D::Decimal32(_, scale) => {
            let mut text = String::new();
            each(array.as_primitive::<Decimal32Type>(), sink, |s, v| {
                s.put(Value::Decimal(unscaled_text(&mut text, v, *scale)))
            })
        }
        D::Decimal64(_, scale) => {
            let mut text = String::new();
            each(array.as_primitive::<Decimal64Type>(), sink, |s, v| {
                s.put(Value::Decimal(unscaled_text(&mut text, v, *scale)))
            })
        }
        D::Decimal128(_, scale) => {
            let mut text = String::new();
            each(array.as_primitive::<Decimal128Type>(), sink, |s, v| {
                s.put(Value::Decimal(unscaled_text(&mut text, v, *scale)))
            })
        }
        D::Decimal256(_, scale) => {
            let mut text = String::new();
            each(array.as_primitive::<Decimal256Type>(), sink, |s, v| {
                s.put(Value::Decimal(unscaled_text(&mut text, v, *scale)))
            })
        }
        D::Date32 => each(array.as_primitive::<Date32Type>(), sink, |s, v| {
            s.put(Value::Date(date_of_days(v.into())?))
        }),
        D::Date64 => each(array.as_primitive::<Date64Type>(), sink, |s, v| {
            s.put(Value::Date(date_of_days(v.div_euclid(MS_PER_DAY))?))
        }),
        D::Time32(TimeUnit::Second) => {
            each(array.as_primitive::<Time32SecondType>(), sink, |s, v| {
                s.put(Value::Time(time_of(v.into(), 1_000_000_000)?))
            })
        }
        D::Time32(TimeUnit::Millisecond) => each(
            array.as_primitive::<Time32MillisecondType>(),
            sink,
            |s, v| s.put(Value::Time(time_of(v.into(), 1_000_000)?)),
        ),
        D::Time64(TimeUnit::Microsecond) => each(
            array.as_primitive::<Time64MicrosecondType>(),
            sink,
            |s, v| s.put(Value::Time(time_of(v, 1_000)?)),
        ),
        D::Time64(TimeUnit::Nanosecond) => each(
            array.as_primitive::<Time64NanosecondType>(),
            sink,
            |s, v| s.put(Value::Time(time_of(v, 1)?)),
        ),
        D::Timestamp(unit, None) => timestamps(array, *unit, sink, |s, v, unit| {
            s.put(Value::Timestamp(timestamp_of(v, unit)?))
        }),
        D::Timestamp(unit, Some(zone)) => {
            let offset = fixed_offset(zone).unwrap_or(0);
            timestamps(array, *unit, sink, move |s, v, unit| {
                s.put(Value::TimestampOffset(offset_of(v, unit, offset)?))
            })
        }
        D::Utf8 => each(array.as_string::<i32>(), sink, |s, v| s.put(Value::Utf8(v))),
        D::LargeUtf8 => each(array.as_string::<i64>(), sink, |s, v| s.put(Value::Utf8(v))),
        D::Utf8View => each(array.as_string_view(), sink, |s, v| s.put(Value::Utf8(v))),
        D::Binary => each(array.as_binary::<i32>(), sink, |s, v| {
            s.put(Value::Bytes(v))
        }),
        D::LargeBinary => each(array.as_binary::<i64>(), sink, |s, v| {
            s.put(Value::Bytes(v))
        }),
        D::BinaryView => each(array.as_binary_view(), sink, |s, v| s.put(Value::Bytes(v))),
        D::FixedSizeBinary(_) => each(array.as_fixed_size_binary(), sink, |s, v| {
            s.put(Value::Bytes(v))
        }),
        D::Dictionary(key, _) => match **key {
            D::Int8 => dictionary::<Int8Type>(array, sink),
            D::Int16 => dictionary::<Int16Type>(array, sink),
            D::Int32 => dictionary::<Int32Type>(array, sink),
            D::Int64 => dictionary::<Int64Type>(array, sink),
            D::UInt8 => dictionary::<UInt8Type>(array, sink),
            D::UInt16 => dictionary::<UInt16Type>(array, sink),
            D::UInt32 => dictionary::<UInt32Type>(array, sink),
            D::UInt64 => dictionary::<UInt64Type>(array, sink),
            _ => refused(array),
        },
        dt @ D::Struct(_) => match offset_struct(dt) {
            Some(unit) => offsets(array.as_struct(), unit, sink),
            None => refused(array),
        },
        _ => refused(array),
    }
}

fn refused(array: &dyn Array) -> Done {
    Err(Failed {
        row: 0,
        reason: check_type(array.data_type())
            .err()
            .unwrap_or_else(|| format!("the Arrow type {} is not handled", array.data_type())),
    })
}

/// The one loop: `put` for each valid element, `null` for the others.
#[inline]
#[allow(clippy::needless_pass_by_value)] // `A` is a reference (`&PrimitiveArray<T>`, ...)
fn each<A: ArrayAccessor, S: Sink>(
    array: A,
    sink: &mut S,
    mut put: impl FnMut(&mut S, A::Item) -> Put,
) -> Done {
    let len = array.len();
    match array.nulls().filter(|n| n.null_count() > 0) {
        None => {
            for row in 0..len {
                put(sink, array.value(row)).map_err(|reason| Failed { row, reason })?;
            }
        }
        Some(nulls) => {
            for row in 0..len {
                let done = if nulls.is_null(row) {
                    sink.put(Value::Null)
                } else {
                    put(sink, array.value(row))
                };
                done.map_err(|reason| Failed { row, reason })?;
            }
        }
    }
    Ok(())
}

/// A timestamp array of any unit: `put(sink, value, unit)` per valid element.
fn timestamps<S: Sink>(
    array: &dyn Array,
    unit: TimeUnit,
    sink: &mut S,
    put: impl Fn(&mut S, i64, TimeUnit) -> Put,
) -> Done {
    match unit {
        TimeUnit::Second => each(array.as_primitive::<TimestampSecondType>(), sink, |s, v| {
            put(s, v, unit)
        }),
        TimeUnit::Millisecond => each(
            array.as_primitive::<TimestampMillisecondType>(),
            sink,
            |s, v| put(s, v, unit),
        ),
        TimeUnit::Microsecond => each(
            array.as_primitive::<TimestampMicrosecondType>(),
            sink,
            |s, v| put(s, v, unit),
        ),
        TimeUnit::Nanosecond => each(
            array.as_primitive::<TimestampNanosecondType>(),
            sink,
            |s, v| put(s, v, unit),
        ),
    }
}

/// A dictionary of strings: each key's value (NULL where the key or its value is NULL).
fn dictionary<K: ArrowDictionaryKeyType>(array: &dyn Array, sink: &mut impl Sink) -> Done {
    let dict = array.as_dictionary::<K>();
    let values = dict.values();
    match values.data_type() {
        DataType::Utf8 => keyed(
            dict.downcast_dict::<arrow_array::StringArray>()
                .expect("utf8 values"),
            sink,
        ),
        DataType::LargeUtf8 => keyed(
            dict.downcast_dict::<arrow_array::LargeStringArray>()
                .expect("large utf8 values"),
            sink,
        ),
        DataType::Utf8View => keyed(
            dict.downcast_dict::<arrow_array::StringViewArray>()
                .expect("utf8 view values"),
            sink,
        ),
        _ => refused(array),
    }
}

/// The elements of a typed dictionary; its `logical_nulls` are the keys' and the values' nulls.
#[allow(clippy::needless_pass_by_value)] // a `TypedDictionaryArray` is two references
fn keyed<'a, A>(dict: A, sink: &mut impl Sink) -> Done
where
    A: ArrayAccessor<Item = &'a str>,
{
    let nulls = dict.logical_nulls().filter(|n| n.null_count() > 0);
    for row in 0..dict.len() {
        let done = if nulls.as_ref().is_some_and(|n| n.is_null(row)) {
            sink.put(Value::Null)
        } else {
            sink.put(Value::Utf8(dict.value(row)))
        };
        done.map_err(|reason| Failed { row, reason })?;
    }
    Ok(())
}

/// ferrodbc's datetimeoffset struct: the instant at its own offset.
fn offsets(array: &StructArray, unit: TimeUnit, sink: &mut impl Sink) -> Done {
    let minutes = array.column(1).as_primitive::<Int16Type>();
    let instants = array.column(0);
    let nulls = array.logical_nulls().filter(|n| n.null_count() > 0);
    let mut put_one = |row: usize, v: i64| -> Put {
        if nulls.as_ref().is_some_and(|n| n.is_null(row)) {
            return sink.put(Value::Null);
        }
        sink.put(Value::TimestampOffset(offset_of(
            v,
            unit,
            minutes.value(row),
        )?))
    };
    macro_rules! rows {
        ($t:ty) => {{
            let a = instants.as_primitive::<$t>();
            for row in 0..a.len() {
                put_one(row, a.value(row)).map_err(|reason| Failed { row, reason })?;
            }
        }};
    }
    match unit {
        TimeUnit::Second => rows!(TimestampSecondType),
        TimeUnit::Millisecond => rows!(TimestampMillisecondType),
        TimeUnit::Microsecond => rows!(TimestampMicrosecondType),
        TimeUnit::Nanosecond => rows!(TimestampNanosecondType),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::encode::ParamSink;
    use super::*;
    use crate::params::ParamValue;
    use arrow_array::builder::StringDictionaryBuilder;
    use arrow_array::{
        ArrayRef, BinaryViewArray, Decimal128Array, Int32Array, StringArray, StringViewArray,
        TimestampMicrosecondArray, UInt64Array,
    };
    use std::sync::Arc;

    /// Every put, as text, to see what the loops called.
    #[derive(Default)]
    struct Log(Vec<String>);

    impl Sink for Log {
        fn put(&mut self, v: Value<'_>) -> Put {
            use crate::types::temporal::iso::{offset_text, time_text, timestamp_text};
            let line = match v {
                Value::Null => "NULL".into(),
                Value::Bool(b) => format!("bool {b}"),
                Value::Int(i) => format!("int {i}"),
                Value::Float(f) => format!("float {f}"),
                Value::Decimal(text) => format!("decimal {text}"),
                Value::Date(d) => format!("date {}", d.to_text()),
                Value::Time(t) => format!("time {}", time_text(&t, 7)),
                Value::Timestamp(ts) => format!("ts {}", timestamp_text(&ts, 7)),
                Value::TimestampOffset(o) => format!("dto {}", offset_text(&o, 7)),
                Value::Utf8("refuse") => return Err("refused".into()),
                Value::Utf8(s) => format!("text {s}"),
                Value::Text(u) => format!("text {}", String::from_utf16_lossy(u)),
                Value::Bytes(b) => format!("bytes {b:?}"),
                Value::Guid(g) => format!("guid {g:x}"),
                Value::Vector(v) => format!("vector {v:?}"),
            };
            self.0.push(line);
            Ok(())
        }
    }

    fn log(a: &dyn Array) -> Vec<String> {
        let mut l = Log::default();
        put_array(a, &mut l).unwrap();
        l.0
    }

    #[test]
    fn offsets_keep_the_instant_and_show_local_time() {
        assert_eq!(fixed_offset("+05:30"), Some(330));
        assert_eq!(fixed_offset("-08:00"), Some(-480));
        assert_eq!(fixed_offset("+0100"), Some(60));
        assert_eq!(fixed_offset("UTC"), None);
        assert_eq!(fixed_offset("Europe/Paris"), None);
        // Not ASCII: refused, not sliced inside a character.
        assert_eq!(fixed_offset("+1é1"), None);
        assert_eq!(fixed_offset("+é:00"), None);
        let o = offset_of(0, TimeUnit::Second, -90).unwrap();
        assert_eq!(
            crate::types::temporal::iso::offset_text(&o, 0).as_str(),
            "1969-12-31 22:30:00 -01:30"
        );
        let a = TimestampMicrosecondArray::from(vec![0]).with_timezone("+02:00");
        assert_eq!(log(&a), ["dto 1970-01-01 02:00:00.0000000 +02:00"]);
        let a = TimestampMicrosecondArray::from(vec![0]).with_timezone("America/New_York");
        assert_eq!(log(&a), ["dto 1970-01-01 00:00:00.0000000 +00:00"]);
    }

    #[test]
    fn decimals_keep_every_digit() {
        let mut s = String::new();
        assert_eq!(unscaled_text(&mut s, 12345i128, 2), "123.45");
        assert_eq!(unscaled_text(&mut s, -5i128, 3), "-0.005");
        assert_eq!(unscaled_text(&mut s, 0i128, 2), "0.00");
        assert_eq!(unscaled_text(&mut s, 7i128, -3), "7000");
        assert_eq!(unscaled_text(&mut s, -7i128, -1), "-70");
        assert_eq!(unscaled_text(&mut s, 0i128, -2), "0");
        assert_eq!(
            unscaled_text(&mut s, i128::MAX, 10),
            "17014118346046923173168730371.5884105727"
        );
        let a = Decimal128Array::from(vec![Some(-123_456), None])
            .with_precision_and_scale(38, 4)
            .unwrap();
        assert_eq!(log(&a), ["decimal -12.3456", "NULL"]);
    }

    #[test]
    fn big_unsigned_values_become_decimal_text() {
        let a = UInt64Array::from(vec![1, u64::MAX]);
        assert_eq!(log(&a), ["int 1", format!("decimal {}", u64::MAX).as_str()]);
    }

    #[test]
    fn strings_views_dictionaries_and_nulls() {
        let a = StringArray::from(vec![Some("a"), None, Some("é")]);
        assert_eq!(log(&a), ["text a", "NULL", "text é"]);
        let a = StringViewArray::from(vec![Some("a long string past twelve bytes"), None]);
        assert_eq!(log(&a), ["text a long string past twelve bytes", "NULL"]);
        let a = BinaryViewArray::from(vec![&b"xy"[..]]);
        assert_eq!(log(&a), ["bytes [120, 121]"]);
        let mut b = StringDictionaryBuilder::<Int8Type>::new();
        b.append_value("x");
        b.append_null();
        b.append_value("y");
        b.append_value("x");
        let a: ArrayRef = Arc::new(b.finish());
        assert!(check_type(a.data_type()).is_ok());
        assert_eq!(log(&a), ["text x", "NULL", "text y", "text x"]);
        // A slice starts where it says.
        assert_eq!(log(&a.slice(2, 2)), ["text y", "text x"]);
    }

    #[test]
    fn a_refusal_names_its_row_and_unknown_types_are_refused() {
        let a = StringArray::from(vec!["ok", "refuse"]);
        let e = put_array(&a, &mut Log::default()).unwrap_err();
        assert_eq!(e.row, 1);
        let s = StructArray::from(vec![(
            Arc::new(arrow_schema::Field::new("x", DataType::Int32, false)),
            Arc::new(Int32Array::from(vec![1])) as ArrayRef,
        )]);
        let e = check_type(s.data_type()).unwrap_err();
        assert!(e.contains("Struct"), "{e}");
        assert!(put_array(&s, &mut Log::default()).is_err());
    }

    #[test]
    fn param_sink_sizes_decimals() {
        let mut out = Vec::new();
        ParamSink { out: &mut out }
            .put(Value::Decimal("-0012.340"))
            .unwrap();
        match &out[0] {
            ParamValue::Decimal {
                precision, scale, ..
            } => assert_eq!((*precision, *scale), (5, 3)),
            other => panic!("{other:?}"),
        }
    }
}
