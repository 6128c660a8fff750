//! Arrow's numbers into calendar values: day numbers, time units since midnight and since
//! 1970-01-01, fixed-offset zones. The inverse of `arrow.rs`'s (which turns the driver's
//! calendar fields into Arrow's numbers); a bulk load from Arrow (`bulk/arrow.rs`) calls these.
//! Exact: integers throughout, SQL Server's years 1..9999 checked.

use super::{Date, Time, Timestamp, TimestampOffset};
use arrow_schema::TimeUnit;

pub const MS_PER_DAY: i64 = 86_400_000;
const NS_PER_DAY: i64 = 86_400_000_000_000;
/// Days from 1970-01-01 to 0001-01-01 and to 9999-12-31: SQL Server's date range.
const FIRST_DAY: i64 = -719_162;
const LAST_DAY: i64 = 2_932_896;

/// The date of a day number; `Err` outside 0001-01-01..9999-12-31.
pub fn date_of_days(days: i64) -> Result<Date, String> {
    if !(FIRST_DAY..=LAST_DAY).contains(&days) {
        return Err(format!(
            "day {days} since 1970-01-01 is outside 0001-01-01..9999-12-31"
        ));
    }
    let (year, month, day) = super::arrow::civil_from_days(days);
    Ok(Date {
        year: year as i16,
        month: month as u16,
        day: day as u16,
    })
}

/// The time of day of `v` units since midnight, a unit being `ns_per_unit` nanoseconds.
pub fn time_of(v: i64, ns_per_unit: i64) -> Result<Time, String> {
    let ns = i128::from(v) * i128::from(ns_per_unit);
    if !(0..i128::from(NS_PER_DAY)).contains(&ns) {
        return Err(format!("{v} is not a time of day (0 to 24 h)"));
    }
    Ok(time_of_ns(ns as i64))
}

fn time_of_ns(ns: i64) -> Time {
    let secs = ns / 1_000_000_000;
    Time {
        hour: (secs / 3600) as u16,
        minute: (secs / 60 % 60) as u16,
        second: (secs % 60) as u16,
        nanosecond: (ns % 1_000_000_000) as u32,
    }
}

/// Nanoseconds in one `unit`.
pub fn ns_per(unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

/// The calendar timestamp of `v` units since 1970-01-01 00:00; `Err` outside SQL Server's
/// years 1..9999.
pub fn timestamp_of(v: i64, unit: TimeUnit) -> Result<Timestamp, String> {
    timestamp_of_units(i128::from(v), unit)
}

fn timestamp_of_units(v: i128, unit: TimeUnit) -> Result<Timestamp, String> {
    let per_day = i128::from(NS_PER_DAY / ns_per(unit));
    let days = v.div_euclid(per_day);
    let of_day = v.rem_euclid(per_day) * i128::from(ns_per(unit));
    let days = i64::try_from(days).unwrap_or(i64::MAX);
    Ok(Timestamp {
        date: date_of_days(days)?,
        time: time_of_ns(of_day as i64),
    })
}

/// The instant `v` (units since 1970-01-01 00:00 UTC) as local time at `offset_minutes`.
pub fn offset_of(v: i64, unit: TimeUnit, offset_minutes: i16) -> Result<TimestampOffset, String> {
    let shift = i128::from(offset_minutes) * 60 * i128::from(1_000_000_000 / ns_per(unit));
    Ok(TimestampOffset {
        timestamp: timestamp_of_units(i128::from(v) + shift, unit)?,
        offset_minutes,
    })
}

/// The minutes of a fixed-offset zone (`+05:30`, `-08:00`, `+0530`, `+05`); `None` for any
/// other zone (`UTC`, `Europe/Paris`), which a bulk load sends at +00:00.
pub fn fixed_offset(zone: &str) -> Option<i16> {
    // ASCII only: the slicing below is by byte (a zone name is the user's text).
    if !zone.is_ascii() {
        return None;
    }
    let (sign, rest) = match zone.as_bytes().first()? {
        b'+' => (1, &zone[1..]),
        b'-' => (-1, &zone[1..]),
        _ => return None,
    };
    let (h, m) = match rest.len() {
        2 => (rest, "00"),
        4 => (&rest[..2], &rest[2..]),
        5 if rest.as_bytes()[2] == b':' => (&rest[..2], &rest[3..]),
        _ => return None,
    };
    if !h.bytes().chain(m.bytes()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    let (h, m): (i16, i16) = (h.parse().ok()?, m.parse().ok()?);
    (h <= 23 && m <= 59).then_some(sign * (h * 60 + m))
}

#[cfg(test)]
mod tests {
    use super::super::arrow::days_from_civil;
    use super::super::iso::timestamp_text;
    use super::*;

    fn days_of(d: Date) -> i64 {
        days_from_civil(i32::from(d.year), u32::from(d.month), u32::from(d.day))
    }

    #[test]
    fn days_round_trip_over_sql_servers_whole_range() {
        assert_eq!(date_of_days(FIRST_DAY).unwrap().to_text(), "0001-01-01");
        assert_eq!(date_of_days(LAST_DAY).unwrap().to_text(), "9999-12-31");
        assert_eq!(date_of_days(0).unwrap().to_text(), "1970-01-01");
        assert_eq!(date_of_days(11_016).unwrap().to_text(), "2000-02-29");
        assert_eq!(date_of_days(-1).unwrap().to_text(), "1969-12-31");
        assert!(date_of_days(FIRST_DAY - 1).is_err());
        assert!(date_of_days(LAST_DAY + 1).is_err());
        for days in (FIRST_DAY..=LAST_DAY).step_by(97) {
            assert_eq!(days_of(date_of_days(days).unwrap()), days);
        }
        assert_eq!(days_of(date_of_days(LAST_DAY).unwrap()), LAST_DAY);
    }

    #[test]
    fn timestamps_at_the_edges_of_the_range() {
        let first = -62_135_596_800_000_000i64; // 0001-01-01 00:00 in microseconds
        let ts = timestamp_of(first, TimeUnit::Microsecond).unwrap();
        assert_eq!(
            timestamp_text(&ts, 7).as_str(),
            "0001-01-01 00:00:00.0000000"
        );
        assert!(timestamp_of(first - 1, TimeUnit::Microsecond).is_err());
        let last = (LAST_DAY + 1) * 86_400_000_000 - 1;
        let ts = timestamp_of(last, TimeUnit::Microsecond).unwrap();
        assert_eq!(
            timestamp_text(&ts, 7).as_str(),
            "9999-12-31 23:59:59.9999990"
        );
        assert!(timestamp_of(last + 1, TimeUnit::Microsecond).is_err());
        let ts = timestamp_of(-1, TimeUnit::Nanosecond).unwrap();
        assert_eq!(
            timestamp_text(&ts, 7).as_str(),
            "1969-12-31 23:59:59.9999999"
        );
        let ts = timestamp_of(i64::MAX, TimeUnit::Nanosecond).unwrap();
        assert_eq!(ts.date.to_text(), "2262-04-11");
        assert!(timestamp_of(i64::MAX, TimeUnit::Second).is_err());
    }

    #[test]
    fn times_of_every_unit() {
        let t = time_of(3_723_456_789_123, 1).unwrap();
        assert_eq!(
            (t.hour, t.minute, t.second, t.nanosecond),
            (1, 2, 3, 456_789_123)
        );
        assert_eq!(time_of(86_399, 1_000_000_000).unwrap().second, 59);
        assert!(time_of(86_400, 1_000_000_000).is_err());
        assert!(time_of(-1, 1_000).is_err());
    }
}
