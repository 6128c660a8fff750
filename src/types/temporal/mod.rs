//! The temporal family: DATE, TIME(n), DATETIME/DATETIME2/SMALLDATETIME and DATETIMEOFFSET,
//! as the ODBC date/time C structs (or text where a driver has no struct: generic TIME, and
//! DATETIMEOFFSET through FreeTDS). Here: the binding, the structs read from bound bytes and the
//! drivers' text parsed. Arrow arm: `arrow.rs` (date32, time64, timestamp, the offset struct);
//! Python arm: `py/types/temporal.rs` (`date`, `time`, `datetime`).
//!
//! Layouts (native endian, as unixODBC on x86_64 lays them out):
//! - `SQL_DATE_STRUCT`: year i16, month u16, day u16 (6 bytes)
//! - `SQL_TIMESTAMP_STRUCT`: + hour, minute, second u16, fraction u32 nanoseconds (16 bytes)
//! - `SQL_SS_TIME2_STRUCT`: hour, minute, second u16, 2 bytes padding, fraction u32 ns (12 bytes)
//! - `SQL_SS_TIMESTAMPOFFSET_STRUCT`: timestamp + timezone_hour i16, timezone_minute i16 (20 bytes);
//!   the minute carries the sign of the offset (-05:30 is hour -5, minute -30).

use super::kind::{Binding, CellKind};
use crate::backend::Backend;
use crate::codes::sql;
use crate::odbc::ColumnDescription;
use crate::odbc::sys::CDataType;

pub(crate) mod arrow;
pub mod bulk;
pub mod from_arrow;
pub mod iso;
pub mod round;

/// Code units reserved for a TIME rendered as text: "HH:MM:SS.fffffffff" plus slack.
pub const TIME_TEXT_UNITS: usize = 32;
/// Code units reserved for a DATETIMEOFFSET rendered as text (34 characters at most).
pub const OFFSET_TEXT_UNITS: usize = 48;

/// The kind of a date or time column: the C struct where the driver has one, else text
/// (generic TIME has no fraction in `SQL_C_TYPE_TIME`; FreeTDS has neither SQL Server struct).
pub fn kind_for(desc: &ColumnDescription, backend: Backend) -> CellKind {
    match desc.sql_type {
        sql::TYPE_DATE | sql::DATETIME => CellKind::Date,
        sql::SS_TIME2 if backend.ss_c_types() => CellKind::SsTime2,
        sql::TYPE_TIME | sql::TIME_OR_INTERVAL | sql::SS_TIME2 => CellKind::TimeText,
        sql::SS_TIMESTAMPOFFSET if backend.ss_c_types() => CellKind::TimestampOffset,
        sql::SS_TIMESTAMPOFFSET => CellKind::OffsetText,
        _ => CellKind::Timestamp,
    }
}

/// The binding of a temporal kind: its struct, or room for its text rendering.
pub fn binding(kind: CellKind) -> Binding {
    match kind {
        CellKind::Date => Binding::new(CDataType::TypeDate, 6),
        CellKind::TimeText => Binding::new(CDataType::WChar, TIME_TEXT_UNITS * 2),
        CellKind::OffsetText => Binding::new(CDataType::WChar, OFFSET_TEXT_UNITS * 2),
        CellKind::SsTime2 => Binding::new(CDataType::SsTime2, 12),
        CellKind::Timestamp => Binding::new(CDataType::TypeTimestamp, 16),
        _ => Binding::new(CDataType::SsTimestampOffset, 20),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Date {
    pub year: i16,
    pub month: u16,
    pub day: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Time {
    pub hour: u16,
    pub minute: u16,
    pub second: u16,
    pub nanosecond: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timestamp {
    pub date: Date,
    pub time: Time,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimestampOffset {
    pub timestamp: Timestamp,
    /// Offset from UTC in minutes (hour * 60 + minute, both signed alike).
    pub offset_minutes: i16,
}

/// The offset a malformed `SQL_SS_TIMESTAMPOFFSET_STRUCT` decodes to when its hour and minute
/// do not fit 16 bits of minutes: beyond Python's ±24 h, so building the value fails.
pub const IMPOSSIBLE_OFFSET: i16 = i16::MIN;

fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_ne_bytes([b[i], b[i + 1]])
}
fn i16_at(b: &[u8], i: usize) -> i16 {
    i16::from_ne_bytes([b[i], b[i + 1]])
}
fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_ne_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

impl Date {
    pub fn from_ne_bytes(b: &[u8; 6]) -> Date {
        Date {
            year: i16_at(b, 0),
            month: u16_at(b, 2),
            day: u16_at(b, 4),
        }
    }
}

impl Time {
    pub fn from_ss_time2(b: &[u8; 12]) -> Time {
        Time {
            hour: u16_at(b, 0),
            minute: u16_at(b, 2),
            second: u16_at(b, 4),
            nanosecond: u32_at(b, 8),
        }
    }
    /// Python's `time`/`datetime` hold microseconds: the 7th digit of TIME(7)/DATETIME2(7) is
    /// truncated (100 ns → 0 µs), as pyodbc and mssql-python do.
    pub fn microsecond(&self) -> u32 {
        self.nanosecond / 1000
    }
}

impl Timestamp {
    pub fn from_ne_bytes(b: &[u8; 16]) -> Timestamp {
        Timestamp {
            date: Date {
                year: i16_at(b, 0),
                month: u16_at(b, 2),
                day: u16_at(b, 4),
            },
            time: Time {
                hour: u16_at(b, 6),
                minute: u16_at(b, 8),
                second: u16_at(b, 10),
                nanosecond: u32_at(b, 12),
            },
        }
    }

    pub fn to_ne_bytes(&self) -> [u8; 16] {
        let mut out = [0u8; 16];
        out[0..2].copy_from_slice(&self.date.year.to_ne_bytes());
        out[2..4].copy_from_slice(&self.date.month.to_ne_bytes());
        out[4..6].copy_from_slice(&self.date.day.to_ne_bytes());
        out[6..8].copy_from_slice(&self.time.hour.to_ne_bytes());
        out[8..10].copy_from_slice(&self.time.minute.to_ne_bytes());
        out[10..12].copy_from_slice(&self.time.second.to_ne_bytes());
        out[12..16].copy_from_slice(&self.time.nanosecond.to_ne_bytes());
        out
    }
}

impl TimestampOffset {
    pub fn from_ne_bytes(b: &[u8; 20]) -> TimestampOffset {
        let mut ts = [0u8; 16];
        ts.copy_from_slice(&b[..16]);
        let hours = i16_at(b, 16) as i32;
        let minutes = i16_at(b, 18) as i32;
        // A malformed struct (hour beyond ±546) overflowed `i16` here: a panic in debug builds,
        // a wrapped, plausible-looking offset in release. Such an offset becomes IMPOSSIBLE_OFFSET,
        // which no timezone accepts, so the cell raises instead of changing.
        let offset_minutes = i16::try_from(hours * 60 + minutes).unwrap_or(IMPOSSIBLE_OFFSET);
        TimestampOffset {
            timestamp: Timestamp::from_ne_bytes(&ts),
            offset_minutes,
        }
    }

    pub fn to_ne_bytes(&self) -> [u8; 20] {
        let mut out = [0u8; 20];
        out[..16].copy_from_slice(&self.timestamp.to_ne_bytes());
        let hours = self.offset_minutes / 60;
        let minutes = self.offset_minutes % 60;
        out[16..18].copy_from_slice(&hours.to_ne_bytes());
        out[18..20].copy_from_slice(&minutes.to_ne_bytes());
        out
    }
}

/// Parse `HH:MM:SS[.fffffffff]` (what drivers render a TIME as) into a [`Time`].
#[allow(
    clippy::cast_possible_truncation,
    reason = "at most 9 fraction digits are read"
)]
pub fn parse_time_text(units: &[u16]) -> Option<Time> {
    let s: String = char::decode_utf16(units.iter().copied())
        .collect::<Result<_, _>>()
        .ok()?;
    let s = s.trim();
    let (hms, frac) = match s.split_once('.') {
        Some((a, b)) => (a, b),
        None => (s, ""),
    };
    let mut parts = hms.split(':');
    let hour: u16 = parts.next()?.parse().ok()?;
    let minute: u16 = parts.next()?.parse().ok()?;
    // Seconds are optional: SQLite's documented time format 2 is 'HH:MM'.
    let second: u16 = match parts.next() {
        Some(p) => p.parse().ok()?,
        None if frac.is_empty() => 0,
        None => return None,
    };
    if parts.next().is_some() || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) || frac.len() > 9 {
        return None;
    }
    let mut nanosecond = 0u32;
    for (i, b) in frac.bytes().enumerate() {
        nanosecond += (b - b'0') as u32 * 10u32.pow(8 - i as u32);
    }
    Some(Time {
        hour,
        minute,
        second,
        nanosecond,
    })
}

/// Parse a DATETIMEOFFSET rendered as text, `YYYY-MM-DD hh:mm:ss[.fffffff] [+-]hh:mm` (what
/// FreeTDS gives for SQL_C_WCHAR), into a [`TimestampOffset`].
pub fn parse_offset_text(units: &[u16]) -> Option<TimestampOffset> {
    let s: String = char::decode_utf16(units.iter().copied())
        .collect::<Result<_, _>>()
        .ok()?;
    let s = s.trim();
    let (date, rest) = s.split_once(' ')?;
    let (time, offset) = rest.trim().rsplit_once(' ')?;
    let mut d = date.split('-');
    let year: i16 = d.next()?.parse().ok()?;
    let month: u16 = d.next()?.parse().ok()?;
    let day: u16 = d.next()?.parse().ok()?;
    if d.next().is_some() {
        return None;
    }
    let time_units: Vec<u16> = time.encode_utf16().collect();
    let time = parse_time_text(&time_units)?;
    let (sign, hm) = match offset.as_bytes().first()? {
        b'+' => (1i16, &offset[1..]),
        b'-' => (-1i16, &offset[1..]),
        _ => return None,
    };
    let (h, m) = hm.split_once(':')?;
    // Digits only: `i16::parse` would take "+-5" or "-32768" (whose `* 60` overflowed).
    if !(h.bytes().all(|b| b.is_ascii_digit()) && m.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    let h: i16 = h.parse().ok()?;
    let m: i16 = m.parse().ok()?;
    if h > 14 || m > 59 {
        return None;
    }
    Some(TimestampOffset {
        timestamp: Timestamp {
            date: Date { year, month, day },
            time,
        },
        offset_minutes: sign * (h * 60 + m),
    })
}

// Encoder: the values a parameter sends, as the driver's C struct or as the ISO text a server
// converts where the struct is not an option (`params/array.rs` picks which per backend and
// driver). The text is `iso.rs`'s, the one writer; a bulk load's cells are the same text,
// rounded first as SQL Server rounds (`round.rs`).

impl Date {
    /// `SQL_DATE_STRUCT`.
    pub fn to_ne_bytes(&self) -> [u8; 6] {
        let mut out = [0u8; 6];
        out[0..2].copy_from_slice(&self.year.to_ne_bytes());
        out[2..4].copy_from_slice(&self.month.to_ne_bytes());
        out[4..6].copy_from_slice(&self.day.to_ne_bytes());
        out
    }

    /// `YYYY-MM-DD`.
    pub fn to_text(&self) -> String {
        iso::date_text(*self).to_string()
    }
}

impl Time {
    /// `SQL_SS_TIME2_STRUCT` (two bytes of padding before the fraction).
    pub fn to_ss_time2(&self) -> [u8; 12] {
        let mut out = [0u8; 12];
        out[0..2].copy_from_slice(&self.hour.to_ne_bytes());
        out[2..4].copy_from_slice(&self.minute.to_ne_bytes());
        out[4..6].copy_from_slice(&self.second.to_ne_bytes());
        out[8..12].copy_from_slice(&self.nanosecond.to_ne_bytes());
        out
    }

    /// `hh:mm:ss.ffffff` (microseconds: generic TIME's text).
    pub fn to_text(&self) -> String {
        iso::time_text(self, 6).to_string()
    }
}

impl Time {
    /// `hh:mm:ss.fffffff`: SQL Server's time(7) text (100 ns).
    pub fn to_text_100ns(&self) -> String {
        iso::time_text(self, 7).to_string()
    }
}

impl Timestamp {
    /// `YYYY-MM-DD hh:mm:ss.fffffff`: all seven fraction digits, which the server's conversion
    /// to datetime2(7) keeps.
    pub fn to_text(&self) -> String {
        iso::timestamp_text(self, 7).to_string()
    }
}

impl TimestampOffset {
    /// `YYYY-MM-DD hh:mm:ss.fffffff +hh:mm`: SQL Server's datetimeoffset(7) text (100 ns).
    pub fn to_text_100ns(&self) -> String {
        iso::offset_text(self, 7).to_string()
    }

    /// `YYYY-MM-DD hh:mm:ss.ffffff +hh:mm`.
    pub fn to_text(&self) -> String {
        iso::offset_text(self, 6).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    #[test]
    fn offset_text() {
        let v = parse_offset_text(&w("2024-02-29 23:59:58.1234567 -05:30")).unwrap();
        assert_eq!(v.offset_minutes, -330);
        assert_eq!(
            v.timestamp.date,
            Date {
                year: 2024,
                month: 2,
                day: 29
            }
        );
        assert_eq!(v.timestamp.time.nanosecond, 123_456_700);
        assert_eq!(
            parse_offset_text(&w("0001-01-01 00:00:00 +14:00"))
                .unwrap()
                .offset_minutes,
            840
        );
        assert_eq!(parse_offset_text(&w("2024-01-01 00:00:00")), None);
    }

    #[test]
    fn time_text() {
        assert_eq!(
            parse_time_text(&w("12:34:56")),
            Some(Time {
                hour: 12,
                minute: 34,
                second: 56,
                nanosecond: 0
            })
        );
        assert_eq!(
            parse_time_text(&w("23:59:59.1234567")),
            Some(Time {
                hour: 23,
                minute: 59,
                second: 59,
                nanosecond: 123_456_700
            })
        );
        assert_eq!(parse_time_text(&w("24:00:00")), None);
        assert_eq!(
            parse_time_text(&w("07:30")),
            Some(Time {
                hour: 7,
                minute: 30,
                second: 0,
                nanosecond: 0
            })
        );
        assert_eq!(parse_time_text(&w("07:30.5")), None);
        assert_eq!(parse_time_text(&w("xx")), None);
    }

    /// Found while writing fuzz/temporal: a struct whose timezone hour is beyond ±546 overflowed the
    /// minutes (debug: panic; release: a wrapped offset). Now an offset no timezone accepts.
    #[test]
    fn offset_struct_with_impossible_hour_does_not_wrap() {
        let mut raw = [0u8; 20];
        raw[16..18].copy_from_slice(&1000i16.to_ne_bytes());
        raw[18..20].copy_from_slice(&7i16.to_ne_bytes());
        assert_eq!(
            TimestampOffset::from_ne_bytes(&raw).offset_minutes,
            IMPOSSIBLE_OFFSET
        );
        raw[16..18].copy_from_slice(&i16::MIN.to_ne_bytes());
        raw[18..20].copy_from_slice(&i16::MIN.to_ne_bytes());
        assert_eq!(
            TimestampOffset::from_ne_bytes(&raw).offset_minutes,
            IMPOSSIBLE_OFFSET
        );
        // In range: kept exactly (546 h fits, as does the largest real offset).
        raw[16..18].copy_from_slice(&14i16.to_ne_bytes());
        raw[18..20].copy_from_slice(&0i16.to_ne_bytes());
        assert_eq!(TimestampOffset::from_ne_bytes(&raw).offset_minutes, 840);
    }

    /// Found while writing fuzz/temporal: `+-32768:00` parsed its hour as -32768 and `h * 60` overflowed;
    /// a signed hour is not an offset at all.
    #[test]
    fn offset_text_with_signed_hour_is_refused() {
        assert_eq!(
            parse_offset_text(&w("2020-01-01 00:00:00 +-32768:00")),
            None
        );
        assert_eq!(parse_offset_text(&w("2020-01-01 00:00:00 +-5:00")), None);
        assert_eq!(parse_offset_text(&w("2020-01-01 00:00:00 -05:+3")), None);
    }

    #[test]
    fn offset_struct_sign_and_round_trip() {
        let v = TimestampOffset {
            timestamp: Timestamp {
                date: Date {
                    year: 2024,
                    month: 2,
                    day: 29,
                },
                time: Time {
                    hour: 23,
                    minute: 59,
                    second: 58,
                    nanosecond: 999_999_900,
                },
            },
            offset_minutes: -(5 * 60 + 30),
        };
        let bytes = v.to_ne_bytes();
        assert_eq!(i16::from_ne_bytes([bytes[16], bytes[17]]), -5);
        assert_eq!(i16::from_ne_bytes([bytes[18], bytes[19]]), -30);
        assert_eq!(TimestampOffset::from_ne_bytes(&bytes), v);
        assert_eq!(v.timestamp.time.microsecond(), 999_999);
    }

    #[test]
    fn encoded_structs_read_back_and_texts_are_iso() {
        let date = Date {
            year: 1,
            month: 12,
            day: 31,
        };
        assert_eq!(Date::from_ne_bytes(&date.to_ne_bytes()), date);
        assert_eq!(date.to_text(), "0001-12-31");
        let time = Time {
            hour: 23,
            minute: 5,
            second: 9,
            nanosecond: 123_456_700,
        };
        let raw = time.to_ss_time2();
        assert_eq!(&raw[6..8], &[0, 0], "padding before the fraction");
        assert_eq!(Time::from_ss_time2(&raw), time);
        assert_eq!(time.to_text(), "23:05:09.123456");
        let ts = Timestamp { date, time };
        assert_eq!(ts.to_text(), "0001-12-31 23:05:09.1234567");
        let v = TimestampOffset {
            timestamp: ts,
            offset_minutes: -(5 * 60 + 30),
        };
        assert_eq!(v.to_text(), "0001-12-31 23:05:09.123456 -05:30");
        let text: Vec<u16> = v.to_text().encode_utf16().collect();
        let back = parse_offset_text(&text).unwrap();
        assert_eq!(back.offset_minutes, v.offset_minutes);
        assert_eq!(back.timestamp.date, date);
    }
}
