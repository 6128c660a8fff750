//! Exact conversions from the ODBC C structs and the drivers' text to Arrow's physical values.
//! No floating point anywhere: a value either converts exactly or is refused.

use crate::types::temporal::{Date, Time, Timestamp, TimestampOffset};

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

/// The unit of timestamp arrays (`timestamp_unit=` of the Arrow fetches).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unit {
    /// Microseconds (the default): every year 1..9999 fits; datetime2(7)'s 7th fraction digit is
    /// truncated, as the row path's `datetime` does.
    #[default]
    Micros,
    /// Nanoseconds: datetime2(7) exact, but only 1677-09-21 .. 2262-04-11 fits in i64; a value
    /// outside is an error, never an overflow.
    Nanos,
}

impl Unit {
    pub const fn per_second(self) -> i64 {
        match self {
            Unit::Micros => 1_000_000,
            Unit::Nanos => 1_000_000_000,
        }
    }

    pub fn arrow(self) -> arrow_schema::TimeUnit {
        match self {
            Unit::Micros => arrow_schema::TimeUnit::Microsecond,
            Unit::Nanos => arrow_schema::TimeUnit::Nanosecond,
        }
    }
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

/// The unscaled i128 of plain decimal text (`-12.5`, `.5`, `007`) at `scale` digits after the
/// point: fewer digits are padded, more are refused (never rounded), as are more than
/// `precision` significant digits, NaN, infinities and exponents.
pub fn decimal_text_to_i128(text: &[u8], precision: u8, scale: i8) -> Option<i128> {
    let (negative, body) = match text.first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let mut value: i128 = 0;
    let mut digits = 0u32; // significant digits (leading zeros not counted)
    let mut fraction: Option<i32> = None;
    let mut any = false;
    for &b in body {
        match b {
            b'0'..=b'9' => {
                any = true;
                if let Some(f) = fraction.as_mut() {
                    *f += 1;
                    if *f > scale as i32 {
                        // A digit past the column's scale: exact only if it and every later
                        // one is zero (drivers may pad).
                        if b != b'0' {
                            return None;
                        }
                        continue;
                    }
                }
                if digits == 0 && b == b'0' {
                    continue;
                }
                digits += 1;
                if digits > 38 {
                    return None;
                }
                value = value * 10 + (b - b'0') as i128;
            }
            b'.' if fraction.is_none() => fraction = Some(0),
            _ => return None,
        }
    }
    if !any {
        return None;
    }
    let have = fraction.unwrap_or(0).min(scale as i32);
    for _ in have..scale as i32 {
        value = value.checked_mul(10)?;
    }
    if value >= 10i128.pow(precision as u32) {
        return None;
    }
    Some(if negative { -value } else { value })
}

/// The unscaled i128 of an `SQL_NUMERIC_STRUCT` (precision, scale, sign 1 = positive, 16-byte
/// little-endian magnitude), at the column's scale. `None` when the struct's scale is not the
/// column's or the magnitude exceeds 38 digits.
pub fn numeric_to_i128(raw: &[u8; 19], scale: i8) -> Option<i128> {
    if raw[1] as i8 != scale {
        return None;
    }
    let magnitude = u128::from_le_bytes(raw[3..19].try_into().ok()?);
    if magnitude >= 10u128.pow(38) {
        return None;
    }
    let v = magnitude as i128;
    Some(if raw[2] == 0 { -v } else { v })
}

/// A `SQL_GUID` struct (Data1..Data3 native-endian) as the 16 bytes of RFC 4122 order.
pub fn uuid_bytes(raw: [u8; 16]) -> [u8; 16] {
    crate::types::guid::guid_to_u128(raw).to_be_bytes()
}

/// A `SQL_GUID` struct as its canonical text: 36 lowercase hex digits and hyphens (8-4-4-4-12).
pub fn uuid_text(raw: [u8; 16]) -> [u8; 36] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = uuid_bytes(raw);
    let mut out = [b'-'; 36];
    let mut at = 0;
    for (i, b) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            at += 1;
        }
        out[at] = HEX[(b >> 4) as usize];
        out[at + 1] = HEX[(b & 15) as usize];
        at += 2;
    }
    out
}
