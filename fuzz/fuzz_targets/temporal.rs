//! The temporal decoders: the ODBC date/time structs as a driver leaves them in a bound buffer
//! (any bytes), TIME and DATETIMEOFFSET text, and the Python objects built from them. A Python
//! object, when one is built, must hold exactly the decoded fields (no silent wrap); anything
//! else must be a Python exception, never a panic.
#![no_main]

use _native::types::temporal::{Date, Time, Timestamp, TimestampOffset, parse_offset_text, parse_time_text};
use _native::py::types::temporal::{date, datetime, time};
use libfuzzer_sys::fuzz_target;
use pyo3::prelude::*;
use pyo3::types::PyTzInfo;

fn get(o: &Bound<'_, PyAny>, name: &str) -> i64 {
    o.getattr(name).unwrap().extract::<i64>().unwrap()
}

fn check_time(py: Python<'_>, t: Time) {
    if let Ok(o) = time(py, t) {
        assert_eq!(get(&o, "hour"), t.hour as i64);
        assert_eq!(get(&o, "minute"), t.minute as i64);
        assert_eq!(get(&o, "second"), t.second as i64);
        assert_eq!(get(&o, "microsecond"), t.microsecond() as i64);
    }
}

fn check_date(py: Python<'_>, d: Date) {
    if let Ok(o) = date(py, d) {
        assert_eq!(get(&o, "year"), d.year as i32 as i64);
        assert_eq!(get(&o, "month"), d.month as i64);
        assert_eq!(get(&o, "day"), d.day as i64);
    }
}

fn check_timestamp(py: Python<'_>, ts: Timestamp) {
    if let Ok(o) = datetime(py, ts, None) {
        assert_eq!(get(&o, "year"), ts.date.year as i32 as i64);
        assert_eq!(get(&o, "month"), ts.date.month as i64);
        assert_eq!(get(&o, "day"), ts.date.day as i64);
        assert_eq!(get(&o, "hour"), ts.time.hour as i64);
        assert_eq!(get(&o, "minute"), ts.time.minute as i64);
        assert_eq!(get(&o, "second"), ts.time.second as i64);
        assert_eq!(get(&o, "microsecond"), ts.time.microsecond() as i64);
    }
}

/// What the fetch path does with a DATETIMEOFFSET: a fixed-offset timezone, then the datetime.
fn check_offset(py: Python<'_>, v: TimestampOffset) {
    let Ok(tz) = py.import("datetime").and_then(|m| {
        let delta = m
            .getattr("timedelta")?
            .call1((0, 0, 0, 0, v.offset_minutes))?;
        m.getattr("timezone")?.call1((delta,))
    }) else {
        assert!(
            v.offset_minutes.unsigned_abs() >= 24 * 60,
            "timezone refused {v:?}"
        );
        return;
    };
    if let Ok(o) = datetime(py, v.timestamp, Some(tz.cast::<PyTzInfo>().unwrap())) {
        let off = o.call_method0("utcoffset").unwrap();
        let secs: f64 = off
            .call_method0("total_seconds")
            .unwrap()
            .extract()
            .unwrap();
        assert_eq!(secs as i64, v.offset_minutes as i64 * 60);
        check_timestamp(py, v.timestamp);
    }
}

fuzz_target!(init: { Python::initialize(); }, |data: &[u8]| {
    let units: Vec<u16> = data
        .chunks_exact(2)
        .map(|c| u16::from_ne_bytes([c[0], c[1]]))
        .collect();
    let mut raw = [0u8; 20];
    let n = data.len().min(20);
    raw[..n].copy_from_slice(&data[..n]);
    Python::attach(|py| {
        let date = Date::from_ne_bytes(raw[..6].try_into().unwrap());
        check_date(py, date);
        let ts = Timestamp::from_ne_bytes(raw[..16].try_into().unwrap());
        assert_eq!(Timestamp::from_ne_bytes(&ts.to_ne_bytes()), ts);
        check_timestamp(py, ts);
        check_time(py, Time::from_ss_time2(raw[..12].try_into().unwrap()));
        let off = TimestampOffset::from_ne_bytes(&raw);
        check_offset(py, off);
        if let Some(t) = parse_time_text(&units) {
            assert!(t.hour < 24 && t.minute < 60 && t.second < 60 && t.nanosecond < 1_000_000_000);
            check_time(py, t);
        }
        if let Some(v) = parse_offset_text(&units) {
            assert!(v.offset_minutes.abs() <= 14 * 60 + 59);
            // The text form round-trips through the struct form exactly.
            assert_eq!(TimestampOffset::from_ne_bytes(&v.to_ne_bytes()), v);
            check_offset(py, v);
        }
    });
});
