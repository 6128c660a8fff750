//! The bulk load's encoders: any value into any column form either makes exactly one cell or
//! refuses with a reason (never a panic, never a half-written cell); decimal text fitted to a
//! scale keeps its sign and reads back as a number within half a unit of the last digit; times
//! rounded to a scale stay valid times.
#![no_main]

use _native::types::decimal::text::fit_decimal;
use _native::types::temporal::round::rounded_time;
use _native::bulk::form::{Form, Temporal};
use _native::bulk::{CellColumn, CellSink, put_param};
use _native::params::ParamValue;
use _native::types::temporal::{Date, Time, Timestamp, TimestampOffset};
use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;

fn form(u: &mut Unstructured<'_>) -> Result<Form> {
    let scale = u.int_in_range(0..=7u8)?;
    Ok(match u.int_in_range(0..=9u8)? {
        0 => Form::Bit,
        1 => {
            let (a, b): (i64, i64) = (u.arbitrary()?, u.arbitrary()?);
            Form::Int { min: a.min(b), max: a.max(b), name: "int" }
        }
        2 => Form::Float,
        3 => {
            let p = u.int_in_range(1..=38u8)?;
            Form::Decimal { precision: p, scale: u.int_in_range(0..=p)? }
        }
        4 => Form::Temporal(Temporal::Date),
        5 => Form::Temporal(Temporal::Time { scale }),
        6 => Form::Temporal(Temporal::DateTime { scale, minutes: u.arbitrary()? }),
        7 => Form::Temporal(Temporal::Offset { scale }),
        8 => Form::Text {
            max_units: if u.arbitrary()? { Some(u.int_in_range(1..=64usize)?) } else { None },
            utf8: u.arbitrary()?,
        },
        _ => Form::Binary {
            max_bytes: if u.arbitrary()? { Some(u.int_in_range(1..=64usize)?) } else { None },
        },
    })
}

fn time(u: &mut Unstructured<'_>) -> Result<Time> {
    Ok(Time {
        hour: u.int_in_range(0..=23)?,
        minute: u.int_in_range(0..=59)?,
        second: u.int_in_range(0..=59)?,
        nanosecond: u.int_in_range(0..=999_999_999)?,
    })
}

fn timestamp(u: &mut Unstructured<'_>) -> Result<Timestamp> {
    Ok(Timestamp {
        date: Date {
            year: u.int_in_range(1..=9999)?,
            month: u.int_in_range(1..=12)?,
            day: u.int_in_range(1..=28)?,
        },
        time: time(u)?,
    })
}

fn value(u: &mut Unstructured<'_>) -> Result<ParamValue> {
    Ok(match u.int_in_range(0..=11u8)? {
        0 => ParamValue::Null,
        1 => ParamValue::Bool(u.arbitrary()?),
        2 => ParamValue::Int(u.arbitrary()?),
        3 => ParamValue::Float(u.arbitrary()?),
        4 => ParamValue::Text(u.arbitrary::<String>()?.encode_utf16().collect()),
        5 => ParamValue::Bytes(u.arbitrary()?),
        6 => {
            let text: String = u.arbitrary()?;
            ParamValue::Decimal { text, precision: 38, scale: 0 }
        }
        7 => ParamValue::Date(timestamp(u)?.date),
        8 => ParamValue::Time(time(u)?),
        9 => ParamValue::Timestamp(timestamp(u)?),
        10 => ParamValue::TimestampOffset(TimestampOffset {
            timestamp: timestamp(u)?,
            offset_minutes: u.int_in_range(-840..=840)?,
        }),
        _ => ParamValue::Guid(u.arbitrary()?),
    })
}

fn run(u: &mut Unstructured<'_>) -> Result<()> {
    let form = form(u)?;
    let mut out = CellColumn::default();
    for _ in 0..u.int_in_range(1..=8usize)? {
        let before = out.rows();
        let ok = put_param(&value(u)?, &mut CellSink { form, out: &mut out }).is_ok();
        assert_eq!(out.rows(), before + usize::from(ok), "{form:?}");
    }
    // Decimal fitting: digits only, sign kept, no more fraction digits than the scale.
    let (int, frac): (u64, u64) = (u.arbitrary()?, u.arbitrary()?);
    let negative: bool = u.arbitrary()?;
    let text = format!("{}{int}.{frac}", if negative { "-" } else { "" });
    let p = u.int_in_range(1..=38u8)?;
    let s = u.int_in_range(0..=p)?;
    if let Ok(fitted) = fit_decimal(&text, p, s) {
        let frac_digits = fitted.split_once('.').map_or(0, |(_, f)| f.len());
        assert_eq!(frac_digits, usize::from(s), "{text} -> {fitted}");
        assert!(!fitted.starts_with('-') || negative, "{text} -> {fitted}");
        assert!(fitted.bytes().all(|c| c.is_ascii_digit() || c == b'.' || c == b'-'));
    }
    let t = time(u)?;
    let (r, _) = rounded_time(t, u.int_in_range(0..=7u8)?);
    assert!(r.hour < 24 && r.minute < 60 && r.second < 60 && r.nanosecond < 1_000_000_000);
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
