//! Python parameter values → engine [`ParamValue`]s.

use super::cache;
use super::errors::{data, programming};
use super::objects;
use super::output::Output;
use super::text::{TextFailure, utf16_to_str};
use crate::decode::TextErrors;
use crate::decode::{Date, Time, Timestamp, TimestampOffset};
use crate::params::{InputSize, ParamValue};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDate, PyDateAccess, PyDateTime, PyDelta, PyDeltaAccess,
    PyFloat, PyInt, PyMemoryView, PyString, PyTime, PyTimeAccess, PyTuple,
};

pub fn to_param(value: &Bound<'_, PyAny>, index: usize) -> PyResult<ParamValue> {
    let py = value.py();
    if value.is_none() {
        return Ok(ParamValue::Null);
    }
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(ParamValue::Bool(b.is_true()));
    }
    if let Ok(i) = value.cast::<PyInt>() {
        return match i.extract::<i64>() {
            Ok(v) => Ok(ParamValue::Int(v)),
            // Beyond 64 bits: exact, as decimal text (the engine checks it fits the DBMS).
            Err(_) => {
                let text = i
                    .str()
                    .map_err(|e| {
                        data(format!("parameter {index}: integer too large to send: {e}"))
                    })?
                    .to_string();
                let digits = text.trim_start_matches('-').len();
                Ok(ParamValue::Decimal {
                    text,
                    precision: digits as u32,
                    scale: 0,
                })
            }
        };
    }
    if let Ok(f) = value.cast::<PyFloat>() {
        return Ok(ParamValue::Float(f.value()));
    }
    if let Ok(s) = value.cast::<PyString>() {
        let text = s.to_str().map_err(|_| {
            data(format!("parameter {index}: the string contains lone surrogates and cannot be sent as UTF-16"))
        })?;
        return Ok(ParamValue::Text(text.encode_utf16().collect()));
    }
    if let Ok(b) = value.cast::<PyBytes>() {
        return Ok(ParamValue::Bytes(b.as_bytes().to_vec()));
    }
    if let Ok(b) = value.cast::<PyByteArray>() {
        return Ok(ParamValue::Bytes(b.to_vec()));
    }
    if value.cast::<PyMemoryView>().is_ok() {
        let bytes = py.import("builtins")?.getattr("bytes")?.call1((value,))?;
        return Ok(ParamValue::Bytes(
            bytes.cast::<PyBytes>()?.as_bytes().to_vec(),
        ));
    }
    // datetime before date: datetime is a subclass of date.
    if let Ok(dt) = value.cast::<PyDateTime>() {
        let ts = Timestamp {
            date: Date {
                year: dt.get_year() as i16,
                month: dt.get_month() as u16,
                day: dt.get_day() as u16,
            },
            time: Time {
                hour: dt.get_hour() as u16,
                minute: dt.get_minute() as u16,
                second: dt.get_second() as u16,
                nanosecond: dt.get_microsecond() * 1000,
            },
        };
        let offset = value.call_method0("utcoffset")?;
        if offset.is_none() {
            return Ok(ParamValue::Timestamp(ts));
        }
        let delta = offset.cast::<PyDelta>()?;
        let seconds = delta.get_days() as i64 * 86400 + delta.get_seconds() as i64;
        if seconds % 60 != 0 || delta.get_microseconds() != 0 {
            return Err(data(format!(
                "parameter {index}: UTC offsets must be whole minutes"
            )));
        }
        return Ok(ParamValue::TimestampOffset(TimestampOffset {
            timestamp: ts,
            offset_minutes: (seconds / 60) as i16,
        }));
    }
    if let Ok(d) = value.cast::<PyDate>() {
        return Ok(ParamValue::Date(Date {
            year: d.get_year() as i16,
            month: d.get_month() as u16,
            day: d.get_day() as u16,
        }));
    }
    if let Ok(t) = value.cast::<PyTime>() {
        return Ok(ParamValue::Time(Time {
            hour: t.get_hour() as u16,
            minute: t.get_minute() as u16,
            second: t.get_second() as u16,
            nanosecond: t.get_microsecond() * 1000,
        }));
    }
    if value.is_instance(cache::decimal_type(py)?)? {
        return decimal_param(value, index);
    }
    if value.is_instance(cache::uuid_type(py)?)? {
        return Ok(ParamValue::Guid(value.getattr("int")?.extract()?));
    }
    if let Ok(out) = value.cast::<Output>() {
        return out.get().to_param(py, index);
    }
    Err(programming(format!(
        "parameter {index}: unsupported type {} (supported: None, bool, int, float, str, bytes, bytearray, \
         memoryview, Decimal, date, time, datetime, UUID)",
        value.get_type().name()?
    )))
}

/// A `Decimal` as plain text (no exponent) with its precision and scale.
fn decimal_param(value: &Bound<'_, PyAny>, index: usize) -> PyResult<ParamValue> {
    let t = value.call_method0("as_tuple")?;
    let t = t.cast::<PyTuple>()?;
    let sign: i64 = t.get_item(0)?.extract()?;
    let digits: Vec<u8> = t.get_item(1)?.extract()?;
    let exponent = t.get_item(2)?;
    let Ok(exponent) = exponent.extract::<i64>() else {
        return Err(data(format!(
            "parameter {index}: Decimal {} (NaN or infinity) cannot be sent",
            value.str()?
        )));
    };
    // The plain text spells out every zero of the exponent: Decimal('1E+999999999999999999')
    // would be an exabyte string (the allocation aborted the interpreter). No database takes
    // more digits than PostgreSQL's numeric (131,072 before the point, 16,383 after).
    const MAX_TEXT_DIGITS: i64 = 131_072 + 16_383;
    let spelled = digits.len() as i64 + exponent.abs();
    if spelled > MAX_TEXT_DIGITS {
        return Err(data(format!(
            "parameter {index}: Decimal {} has too many digits to send (more than \
             {MAX_TEXT_DIGITS} written out; Numeric overflow)",
            value.str()?
        )));
    }
    let mut text = String::with_capacity(digits.len() + 4);
    if sign == 1 {
        text.push('-');
    }
    let digit_chars: String = digits.iter().map(|d| (b'0' + d) as char).collect();
    let (precision, scale);
    if exponent >= 0 {
        text.push_str(&digit_chars);
        text.extend(std::iter::repeat_n('0', exponent as usize));
        precision = digits.len() + exponent as usize;
        scale = 0;
    } else {
        let s = (-exponent) as usize;
        if digits.len() > s {
            let (int_part, frac) = digit_chars.split_at(digits.len() - s);
            text.push_str(int_part);
            text.push('.');
            text.push_str(frac);
            precision = digits.len();
        } else {
            text.push_str("0.");
            text.extend(std::iter::repeat_n('0', s - digits.len()));
            text.push_str(&digit_chars);
            // The leading zero is not a digit of precision: 1E-38 fits DECIMAL(38, 38).
            precision = s;
        }
        scale = s;
    }
    Ok(ParamValue::Decimal {
        text,
        precision: precision.max(1) as u32,
        scale: scale as u32,
    })
}

/// One `setinputsizes` entry: `None`, an int SQL type, a `(sql_type, size[, digits])` tuple, or a
/// Python type (`str`, `bytes`, ... → the SQL type ferrodbc would pick anyway: ignored).
pub fn to_input_size(item: &Bound<'_, PyAny>) -> PyResult<InputSize> {
    if item.is_none() {
        return Ok(InputSize::default());
    }
    if let Ok(t) = item.extract::<i16>() {
        return Ok(InputSize {
            sql_type: Some(t),
            ..Default::default()
        });
    }
    // A tuple or a list: (sql_type[, column_size[, decimal_digits]]), as pyodbc reads any
    // sequence there.
    let seq = item
        .cast::<PyTuple>()
        .cloned()
        .or_else(|_| item.cast::<pyo3::types::PyList>().map(|l| l.to_tuple()));
    if let Ok(t) = seq {
        let sql_type = t.get_item(0).ok().and_then(|v| v.extract::<i16>().ok());
        let column_size = t.get_item(1).ok().and_then(|v| v.extract::<usize>().ok());
        let decimal_digits = t.get_item(2).ok().and_then(|v| v.extract::<i16>().ok());
        return Ok(InputSize {
            sql_type,
            column_size,
            decimal_digits,
        });
    }
    if item.is_instance_of::<pyo3::types::PyType>() {
        return Ok(InputSize::default());
    }
    Err(programming(
        "setinputsizes entries must be None, an SQL type code or a (type, size[, digits]) tuple",
    ))
}

/// An engine value (an output parameter's) as the Python object a fetch would give.
pub fn from_param(py: Python<'_>, v: &ParamValue, errors: TextErrors) -> PyResult<Py<PyAny>> {
    Ok(match v {
        ParamValue::Null => py.None(),
        ParamValue::Bool(b) => PyBool::new(py, *b).to_owned().into_any().unbind(),
        ParamValue::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        ParamValue::Float(f) => PyFloat::new(py, *f).into_any().unbind(),
        ParamValue::Text(units) => match utf16_to_str(py, units, errors) {
            Ok(p) => p.unbind(),
            Err(TextFailure::Python(e)) => return Err(e),
            Err(TextFailure::LoneSurrogate(at)) => {
                return Err(data(format!(
                    "output parameter text has a lone surrogate at code unit {at}"
                )));
            }
        },
        ParamValue::Bytes(b) => PyBytes::new(py, b).into_any().unbind(),
        ParamValue::Decimal { text, .. } => cache::decimal_type(py)?.call1((text,))?.unbind(),
        ParamValue::Date(d) => objects::date(py, *d)?.into_any().unbind(),
        ParamValue::Time(t) => objects::time(py, *t)?.unbind(),
        ParamValue::Timestamp(ts) => objects::datetime(py, *ts, None)?.unbind(),
        ParamValue::TimestampOffset(v) => {
            let tz = cache::timezone(py, v.offset_minutes)?;
            objects::datetime(py, v.timestamp, Some(tz.cast()?))?.unbind()
        }
        ParamValue::Guid(g) => objects::uuid(py, *g)?.unbind(),
        ParamValue::Output(_) => {
            return Err(programming("an output parameter cannot hold another one"));
        }
    })
}
