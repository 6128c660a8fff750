//! The temporal Python arm: `date`, `time`, naive `datetime`, and aware `datetime` with a
//! cached fixed-offset zone per offset.

use super::super::cache;
use super::cell::{CellFail, Fill};
use crate::batch::ColumnBuffer;
use crate::params::{ArrayColumn, Put};
use crate::types::CellKind;
use crate::types::temporal::{self, parse_offset_text, parse_time_text};
use pyo3::prelude::*;
use pyo3::types::{PyDate, PyDateAccess, PyDateTime, PyTime, PyTimeAccess, PyTzInfo};

/// Fill a temporal column's served range: one loop per kind.
pub fn fill(f: &Fill<'_, '_>, buf: &ColumnBuffer, kind: CellKind) -> Result<(), CellFail> {
    let py = f.py;
    match kind {
        CellKind::Date => f.each(buf, |r| {
            date(py, buf.date(r)).map_err(|e| f.unrepresentable(e, r))
        }),
        CellKind::SsTime2 => f.each(buf, |r| {
            time(py, buf.ss_time2(r)).map_err(|e| f.unrepresentable(e, r))
        }),
        CellKind::TimeText => f.each(buf, |r| {
            let units = buf.text(r).map_err(|e| f.cut(e, r))?;
            let t = parse_time_text(units).ok_or_else(|| {
                f.fail(
                    r,
                    format!("not a time: {:?}", String::from_utf16_lossy(units)),
                )
            })?;
            time(py, t).map_err(|e| f.unrepresentable(e, r))
        }),
        CellKind::Timestamp => f.each(buf, |r| {
            datetime(py, buf.timestamp(r), None).map_err(|e| f.unrepresentable(e, r))
        }),
        _ => offsets(f, buf, kind == CellKind::OffsetText),
    }
}

/// Aware datetimes from the driver's struct, or its text rendering (FreeTDS). Neighbouring
/// rows mostly share their offset: its zone object is looked up once per run.
fn offsets(f: &Fill<'_, '_>, buf: &ColumnBuffer, text: bool) -> Result<(), CellFail> {
    let py = f.py;
    let mut memo: Option<(i16, Bound<'_, PyAny>)> = None;
    f.each(buf, |r| {
        let v = if text {
            let units = buf.text(r).map_err(|e| f.cut(e, r))?;
            parse_offset_text(units).ok_or_else(|| {
                let text = String::from_utf16_lossy(units);
                f.fail(r, format!("not a datetimeoffset: {text:?}"))
            })?
        } else {
            buf.timestamp_offset(r)
        };
        let tz = match &memo {
            Some((off, tz)) if *off == v.offset_minutes => tz.clone(),
            _ => {
                let tz = cache::timezone(py, v.offset_minutes)?;
                memo = Some((v.offset_minutes, tz.clone()));
                tz
            }
        };
        datetime(py, v.timestamp, Some(tz.cast::<PyTzInfo>()?)).map_err(|e| f.unrepresentable(e, r))
    })
}

/// A struct field as the `u8` Python's constructors take. `as u8` would wrap a malformed
/// field into a valid-looking one (hour 256 became 0, month 257 became 1: found by
/// fuzz/temporal, by reading); out of range raises ValueError naming the field instead.
pub fn field(value: u16, name: &str) -> PyResult<u8> {
    u8::try_from(value).map_err(|_| {
        pyo3::exceptions::PyValueError::new_err(format!("{name} {value} is out of range"))
    })
}

pub fn date(py: Python<'_>, d: temporal::Date) -> PyResult<Bound<'_, PyAny>> {
    let (m, day) = (field(d.month, "month")?, field(d.day, "day")?);
    Ok(PyDate::new(py, d.year as i32, m, day)?.into_any())
}

pub fn time(py: Python<'_>, t: temporal::Time) -> PyResult<Bound<'_, PyAny>> {
    let h = field(t.hour, "hour")?;
    let (m, s) = (field(t.minute, "minute")?, field(t.second, "second")?);
    Ok(PyTime::new(py, h, m, s, t.microsecond(), None)?.into_any())
}

pub fn datetime<'py>(
    py: Python<'py>,
    ts: temporal::Timestamp,
    tz: Option<&Bound<'py, PyTzInfo>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (d, t) = (ts.date, ts.time);
    Ok(PyDateTime::new(
        py,
        d.year as i32,
        field(d.month, "month")?,
        field(d.day, "day")?,
        field(t.hour, "hour")?,
        field(t.minute, "minute")?,
        field(t.second, "second")?,
        t.microsecond(),
        tz,
    )?
    .into_any())
}

/// A Python date's (or datetime's) calendar fields.
pub fn date_of(d: &impl PyDateAccess) -> temporal::Date {
    temporal::Date {
        year: year_of(d.get_year()),
        month: u16::from(d.get_month()),
        day: u16::from(d.get_day()),
    }
}

/// A Python time's (or datetime's) clock fields; its tzinfo is not looked at.
pub fn time_of(t: &impl PyTimeAccess) -> temporal::Time {
    temporal::Time {
        hour: u16::from(t.get_hour()),
        minute: u16::from(t.get_minute()),
        second: u16::from(t.get_second()),
        // At most 999,999 µs: 999,999,000 ns fits a u32.
        nanosecond: t.get_microsecond() * 1000,
    }
}

/// A datetime's fields, its tzinfo not looked at.
pub fn timestamp_of(dt: &Bound<'_, PyDateTime>) -> temporal::Timestamp {
    temporal::Timestamp {
        date: date_of(dt),
        time: time_of(dt),
    }
}

/// A Python date's year as the engine's `i16`: datetime keeps years in MINYEAR..=MAXYEAR
/// (1..=9999), so it always fits.
#[allow(
    clippy::cast_possible_truncation,
    reason = "datetime years are 1..=9999 (MINYEAR..=MAXYEAR)"
)]
fn year_of(year: i32) -> i16 {
    year as i16
}

/// A naive `datetime`, a `date` or a `time` into the next cell of an `executemany` parameter
/// column (`None`: another type, or an aware datetime: `to_param` asks its `utcoffset()`).
pub fn param_cell(v: &Bound<'_, PyAny>, col: &mut ArrayColumn) -> Option<Put> {
    // datetime before date: datetime is a subclass of date.
    if let Ok(dt) = v.cast::<PyDateTime>() {
        if pyo3::types::PyTzInfoAccess::get_tzinfo(dt).is_some() {
            return None;
        }
        return Some(col.push_timestamp(timestamp_of(dt)));
    }
    if let Ok(d) = v.cast::<PyDate>() {
        return Some(col.push_date(date_of(d)));
    }
    let t = v.cast::<PyTime>().ok()?;
    Some(col.push_time(time_of(t)))
}
