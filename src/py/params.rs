//! Python parameter values → engine [`ParamValue`]s, and back for output parameters. An
//! `Output` is made here too (its default scale comes from its input's conversion), so the
//! `Output` class (`output.rs`) knows nothing of the conversions.

use super::cache;
use super::errors::{data, programming};
use super::output::{Output, output_type};
use super::types::text::{TextFailure, utf16_to_str};
use super::types::{guid, temporal};
use crate::params::{InputSize, ParamValue};
use crate::types::decimal::text::{parse_decimal_str, plain_text};
use crate::types::temporal::TimestampOffset;
use crate::types::text::TextErrors;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDate, PyDateTime, PyDelta, PyDeltaAccess, PyFloat, PyInt,
    PyList, PyMemoryView, PyString, PyTime, PyTuple,
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
                    precision: u32::try_from(digits).map_err(|_| {
                        data(format!("parameter {index}: an integer of {digits} digits"))
                    })?,
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
    if let Some(v) = super::types::vector::param(value, index)? {
        return Ok(v);
    }
    if value.cast::<PyMemoryView>().is_ok() {
        let bytes = py.import("builtins")?.getattr("bytes")?.call1((value,))?;
        return Ok(ParamValue::Bytes(
            bytes.cast::<PyBytes>()?.as_bytes().to_vec(),
        ));
    }
    // datetime before date: datetime is a subclass of date.
    if let Ok(dt) = value.cast::<PyDateTime>() {
        let ts = temporal::timestamp_of(dt);
        // Naive (no tzinfo, the common case): no call into Python. A tzinfo whose utcoffset()
        // is None is naive too, as Python has it.
        if pyo3::types::PyTzInfoAccess::get_tzinfo(dt).is_none() {
            return Ok(ParamValue::Timestamp(ts));
        }
        let offset = value.call_method0(pyo3::intern!(py, "utcoffset"))?;
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
            // A utcoffset is strictly within a day (datetime's rule): at most 1439 minutes.
            offset_minutes: i16::try_from(seconds / 60)
                .map_err(|_| data(format!("parameter {index}: UTC offset of {seconds} s")))?,
        }));
    }
    if let Ok(d) = value.cast::<PyDate>() {
        return Ok(ParamValue::Date(temporal::date_of(d)));
    }
    if let Ok(t) = value.cast::<PyTime>() {
        return Ok(ParamValue::Time(temporal::time_of(t)));
    }
    if value.is_instance(cache::decimal_type(py)?)? {
        return decimal_param(value, index);
    }
    if value.is_instance(cache::uuid_type(py)?)? {
        return uuid_param(value, index);
    }
    if let Ok(out) = value.cast::<Output>() {
        let out = out.get();
        let input = to_param(out.input().bind(py), index)?;
        return Ok(out.param(input));
    }
    // A list or tuple as one parameter is a table-valued parameter, as in pyodbc.
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        return table_param(value, index);
    }
    Err(programming(format!(
        "parameter {index}: unsupported type {} (supported: None, bool, int, float, str, bytes, bytearray, \
         memoryview, Decimal, date, time, datetime, UUID)",
        value.get_type().name()?
    )))
}

/// A `Decimal` as plain text (no exponent) with its precision and scale, read from its
/// `as_tuple()` and checked as pyodbc checks it: a subclass whose `as_tuple()` returns nonsense
/// is a TypeError (never garbage sent), a signaling NaN or an exponent no database could take a
/// ProgrammingError. Quiet NaN and the infinities are sent as text, as pyodbc sends them:
/// PostgreSQL stores them, SQL Server's driver refuses them (DataError).
fn decimal_param(value: &Bound<'_, PyAny>, index: usize) -> PyResult<ParamValue> {
    use pyo3::exceptions::PyTypeError;
    // The exact Decimal type: its str() says the same as as_tuple() without building a tuple
    // of digit objects (as_tuple was a quarter of a mixed 8-column bulk load's instructions).
    // Subclasses, NaN and the infinities take the as_tuple() path below.
    if value.get_type().is(cache::decimal_type(value.py())?) {
        let text = value.str()?;
        if let Some((negative, digits, exponent)) = parse_decimal_str(text.to_str()?) {
            return decimal_from_parts(negative, &digits, exponent, index);
        }
    }
    let bad = |what: &str| {
        PyTypeError::new_err(format!(
            "parameter {index}: Decimal.as_tuple() returned {what}; expected (sign 0 or 1, \
             a non-empty tuple of digits 0-9, an int exponent or 'n', 'N', 'F')"
        ))
    };
    let t = value.call_method0(pyo3::intern!(value.py(), "as_tuple"))?;
    let t = t
        .cast::<PyTuple>()
        .map_err(|_| bad("something that is not a tuple"))?;
    if t.len() != 3 {
        return Err(bad(&format!("a tuple of {} items", t.len())));
    }
    let sign = match t.get_item(0)?.extract::<i64>() {
        Ok(s @ (0 | 1)) => s,
        _ => return Err(bad("an invalid sign (not 0 or 1)")),
    };
    let digit_items = t.get_item(1)?;
    let digit_items = digit_items
        .cast::<PyTuple>()
        .map_err(|_| bad("digits that are not a tuple"))?;
    let mut digits: Vec<u8> = Vec::with_capacity(digit_items.len());
    for d in digit_items.iter() {
        match d.extract::<u8>() {
            Ok(d @ 0..=9) => digits.push(d),
            _ => return Err(bad("a digit that is not an int from 0 to 9")),
        }
    }
    let exponent = t.get_item(2)?;
    if let Ok(special) = exponent.extract::<String>() {
        let text = match (special.as_str(), sign) {
            ("n", _) => "NaN",
            ("F", 0) => "Infinity",
            ("F", _) => "-Infinity",
            ("N", _) => {
                return Err(programming(format!(
                    "parameter {index}: Decimal {} is a signaling NaN, which no database stores",
                    value.str()?
                )));
            }
            _ => return Err(bad("an exponent that is neither an int nor 'n', 'N', 'F'")),
        };
        return Ok(ParamValue::Decimal {
            text: text.to_string(),
            precision: 1,
            scale: 0,
        });
    }
    let exponent_int = exponent
        .cast::<PyInt>()
        .map_err(|_| bad("an exponent that is neither an int nor 'n', 'N', 'F'"))?;
    if digits.is_empty() {
        return Err(bad("no digits"));
    }
    let exponent: i64 = match exponent_int.extract::<i64>() {
        Ok(e) => e,
        // Beyond 64 bits (only a subclass can say that): the same errors as a large i64.
        Err(_) if exponent_int.lt(0)? => i64::MIN,
        Err(_) => i64::MAX,
    };
    decimal_from_parts(sign == 1, &digits, exponent, index)
}

/// The plain text of a decimal `(-1)^negative * digits * 10^exponent`, checked as pyodbc
/// checks it (see [`decimal_param`]).
fn decimal_from_parts(
    negative: bool,
    digits: &[u8],
    exponent: i64,
    index: usize,
) -> PyResult<ParamValue> {
    let (text, precision, scale) = plain_text(negative, digits, exponent)
        .map_err(|reason| programming(format!("parameter {index}: {reason}")))?;
    Ok(ParamValue::Decimal {
        text,
        precision,
        scale,
    })
}

/// A table-valued parameter as pyodbc takes one: a list or tuple whose first item may be the
/// table type's name and its second the schema's (str), and whose other items are the rows
/// (sequences, one value per column). Each column takes the Python type of its first non-None
/// value (pyodbc binds a column by it): a later value of another type is a TypeError.
fn table_param(value: &Bound<'_, PyAny>, index: usize) -> PyResult<ParamValue> {
    use pyo3::exceptions::PyTypeError;
    let items: Vec<Bound<'_, PyAny>> = value.try_iter()?.collect::<PyResult<_>>()?;
    let is_name =
        |v: &Bound<'_, PyAny>| v.is_instance_of::<PyString>() || v.is_instance_of::<PyBytes>();
    let mut names: Vec<Vec<u16>> = Vec::new();
    for item in items.iter().take(2) {
        if !is_name(item) {
            break;
        }
        let text = item.cast::<PyString>().map_err(|_| {
            PyTypeError::new_err(format!(
                "table-valued parameter {index}: the type and schema names must be str, not {}",
                item.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?;
        // A lone surrogate raises UnicodeEncodeError here, as in pyodbc.
        names.push(text.to_str()?.encode_utf16().collect());
    }
    let row_items = &items[names.len()..];
    let row_len =
        |r: usize, row: &Bound<'_, PyAny>| {
            row.len().map_err(|_| {
            programming(format!(
                "table-valued parameter {index}: row {r} is {}, not a sequence of column values \
                 (a list or tuple parameter is a table-valued parameter, as in pyodbc)",
                row.get_type().name().map(|n| n.to_string()).unwrap_or_default()
            ))
        })
        };
    let width = match row_items.first() {
        Some(row) => row_len(0, row)?,
        None => 0,
    };
    let mut column_types: Vec<Option<Bound<'_, PyAny>>> = vec![None; width];
    let mut rows = Vec::with_capacity(row_items.len());
    for (r, row) in row_items.iter().enumerate() {
        let n = row_len(r, row)?;
        if n != width {
            return Err(programming(format!(
                "table-valued parameter {index}: every row must be the same size (row {r} has \
                 {n} values, row 0 has {width})"
            )));
        }
        let mut values = Vec::with_capacity(n);
        for (c, expected) in column_types.iter_mut().enumerate() {
            let cell = row.get_item(c)?;
            if !cell.is_none() {
                match expected {
                    None => *expected = Some(cell.get_type().into_any()),
                    Some(first) if !cell.is_instance(first)? => {
                        return Err(PyTypeError::new_err(format!(
                            "table-valued parameter {index}, row {r}, column {c}: Expected {} \
                             (the column's type in its first row), got {}",
                            first.getattr("__name__")?,
                            cell.get_type().name()?
                        )));
                    }
                    Some(_) => {}
                }
            }
            values.push(to_param(&cell, c)?);
        }
        rows.push(values);
    }
    let mut names = names.into_iter();
    Ok(ParamValue::Table(Box::new(crate::params::TableParam {
        type_name: names.next().unwrap_or_default(),
        schema: names.next().unwrap_or_default(),
        rows,
    })))
}

/// A `uuid.UUID` from its `bytes_le` (what pyodbc binds as SQL_GUID), so a subclass whose
/// `bytes_le` is not 16 bytes is a TypeError, as in pyodbc, not a wrong value.
fn uuid_param(value: &Bound<'_, PyAny>, index: usize) -> PyResult<ParamValue> {
    let le = value.getattr(pyo3::intern!(value.py(), "bytes_le"))?;
    let le: [u8; 16] = le
        .cast::<PyBytes>()
        .ok()
        .and_then(|b| b.as_bytes().try_into().ok())
        .ok_or_else(|| {
            pyo3::exceptions::PyTypeError::new_err(format!(
                "parameter {index}: UUID.bytes_le must be 16 bytes"
            ))
        })?;
    // bytes_le stores the first three fields little-endian; the u128 is the big-endian order.
    let mut be = le;
    be[..4].reverse();
    be[4..6].reverse();
    be[6..8].reverse();
    Ok(ParamValue::Guid(u128::from_be_bytes(be)))
}

/// One `setinputsizes` entry: `None`, an int column size, a `(sql_type, size[, digits])` tuple, or a
/// Python type (`str`, `bytes`, ... → the SQL type ferrodbc would pick anyway: ignored).
pub fn to_input_size(item: &Bound<'_, PyAny>) -> PyResult<InputSize> {
    if item.is_none() {
        return Ok(InputSize::default());
    }
    // A bare int is a column size (pyodbc: the size of a string or binary parameter), the SQL
    // type being the one the value picks.
    if item.is_instance_of::<PyInt>() && !item.is_instance_of::<PyBool>() {
        let size = item
            .extract::<usize>()
            .map_err(|_| programming("setinputsizes: a column size must be a non-negative int"))?;
        return Ok(InputSize {
            column_size: Some(size),
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
        ParamValue::Date(d) => temporal::date(py, *d)?.into_any().unbind(),
        ParamValue::Time(t) => temporal::time(py, *t)?.unbind(),
        ParamValue::Timestamp(ts) => temporal::datetime(py, *ts, None)?.unbind(),
        ParamValue::TimestampOffset(v) => {
            let tz = cache::timezone(py, v.offset_minutes)?;
            temporal::datetime(py, v.timestamp, Some(tz.cast()?))?.unbind()
        }
        ParamValue::Guid(g) => guid::uuid(py, *g)?.unbind(),
        ParamValue::Vector(v) => super::types::vector::array_of(py, v)?.unbind(),
        ParamValue::Output(_) => {
            return Err(programming("an output parameter cannot hold another one"));
        }
        ParamValue::Table(_) => {
            return Err(programming("an output parameter cannot be a table"));
        }
    })
}

#[pymethods]
impl Output {
    #[new]
    #[pyo3(signature = (r#type, value = None, *, size = None, precision = 38, scale = None, tz = false))]
    fn py_new(
        py: Python<'_>,
        r#type: &Bound<'_, PyAny>,
        value: Option<Py<PyAny>>,
        size: Option<usize>,
        precision: u32,
        scale: Option<u32>,
        tz: bool,
    ) -> PyResult<Output> {
        let ty = output_type(py, r#type, tz)?;
        let input = value.unwrap_or_else(|| py.None());
        // A decimal's scale: as given, else 10 or the input value's if larger (SQL Server rounds
        // an output with more places to the declared scale: pass `scale=` for those).
        let scale = match (scale, to_param(input.bind(py), 0)?) {
            (Some(s), _) => s,
            (None, ParamValue::Decimal { scale, .. }) => scale.max(10).min(precision),
            (None, _) => 10.min(precision),
        };
        let type_name = r#type.getattr("__name__")?.extract()?;
        Ok(Output::new(ty, type_name, input, size, precision, scale))
    }
}
