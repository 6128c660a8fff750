//! SQL Server's rules for a date or time of more precision than its column: rounded half up to
//! the column's scale (`time`, `datetime2`, `datetimeoffset`), to the minute (`smalldatetime`),
//! carrying into the next day. Applied before sending, because the drivers refuse such values
//! instead of rounding (Driver 18: 22008).

use super::{Date, Time, Timestamp};

/// `t` rounded half up to `scale` fraction digits, as SQL Server converts a time of more
/// precision (Driver 18 refuses more digits than the scale: 22008 "Fractional second precision
/// exceeds the scale"); `true` when it rounded past midnight (to 00:00:00, as time wraps).
pub fn rounded_time(t: Time, scale: u8) -> (Time, bool) {
    let unit = 10u32.pow(9 - u32::from(scale.min(7)));
    let rem = t.nanosecond % unit;
    let mut ns = t.nanosecond - rem;
    if rem < unit - rem {
        return (
            Time {
                nanosecond: ns,
                ..t
            },
            false,
        );
    }
    ns += unit;
    if ns < 1_000_000_000 {
        return (
            Time {
                nanosecond: ns,
                ..t
            },
            false,
        );
    }
    let secs = u32::from(t.hour) * 3600 + u32::from(t.minute) * 60 + u32::from(t.second) + 1;
    let wrapped = secs >= 86_400;
    let secs = secs % 86_400;
    let time = Time {
        hour: (secs / 3600) as u16,
        minute: (secs / 60 % 60) as u16,
        second: (secs % 60) as u16,
        nanosecond: 0,
    };
    (time, wrapped)
}

/// `ts` rounded half up to `scale` fraction digits, into the next day when it must; past
/// 9999-12-31 is SQL Server's overflow.
pub fn rounded_timestamp(ts: Timestamp, scale: u8) -> Result<Timestamp, String> {
    let (time, next_day) = rounded_time(ts.time, scale);
    if !next_day {
        return Ok(Timestamp { time, ..ts });
    }
    let d = ts.date;
    let days =
        super::arrow::days_from_civil(i32::from(d.year), u32::from(d.month), u32::from(d.day)) + 1;
    let (year, month, day) = super::arrow::civil_from_days(days);
    if year > 9999 {
        return Err(format!(
            "{} rounds past 9999-12-31 at scale {scale} (out of range)",
            super::iso::timestamp_text(&ts, 7)
        ));
    }
    Ok(Timestamp {
        date: Date {
            year: year as i16,
            month: month as u16,
            day: day as u16,
        },
        time,
    })
}

/// smalldatetime's rounding: 29.998 seconds or less down to the minute, 29.999 or more up
/// (SQL Server's documented rule; Driver 18 refuses seconds in a smalldatetime: 22008).
pub fn rounded_to_minute(ts: Timestamp) -> Result<Timestamp, String> {
    let millis = u32::from(ts.time.second) * 1000 + ts.time.nanosecond / 1_000_000;
    let down = Timestamp {
        time: Time {
            second: 0,
            nanosecond: 0,
            ..ts.time
        },
        ..ts
    };
    if millis < 29_999 {
        return Ok(down);
    }
    // Up: the last second of the minute, rounded at scale 0, carries into the next minute.
    let last = Timestamp {
        time: Time {
            second: 59,
            nanosecond: 500_000_000,
            ..ts.time
        },
        ..ts
    };
    rounded_timestamp(last, 0)
}

/// The date at 00:00:00.
pub fn midnight(date: Date) -> Timestamp {
    Timestamp {
        date,
        time: Time {
            hour: 0,
            minute: 0,
            second: 0,
            nanosecond: 0,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_round_half_up_and_carry_into_the_date() {
        let t = |h, m, s, ns| Time {
            hour: h,
            minute: m,
            second: s,
            nanosecond: ns,
        };
        assert_eq!(
            rounded_time(t(0, 0, 0, 123_500_000), 3).0,
            t(0, 0, 0, 124_000_000)
        );
        assert_eq!(
            rounded_time(t(0, 0, 0, 123_499_999), 3).0,
            t(0, 0, 0, 123_000_000)
        );
        assert_eq!(
            rounded_time(t(1, 59, 59, 999_999_000), 6).0,
            t(1, 59, 59, 999_999_000)
        );
        assert_eq!(rounded_time(t(1, 59, 59, 999_999_000), 3).0, t(2, 0, 0, 0));
        assert_eq!(
            rounded_time(t(23, 59, 59, 500_000_000), 0),
            (t(0, 0, 0, 0), true)
        );
        let ts = |y, mo, d, time| Timestamp {
            date: Date {
                year: y,
                month: mo,
                day: d,
            },
            time,
        };
        let late = t(23, 59, 59, 999_999_900);
        assert_eq!(
            rounded_timestamp(ts(2024, 2, 28, late), 6).unwrap(),
            ts(2024, 2, 29, t(0, 0, 0, 0))
        );
        assert_eq!(
            rounded_timestamp(ts(2023, 12, 31, late), 2).unwrap(),
            ts(2024, 1, 1, t(0, 0, 0, 0))
        );
        assert_eq!(
            rounded_timestamp(ts(2024, 1, 1, late), 7).unwrap(),
            ts(2024, 1, 1, late)
        );
        assert!(rounded_timestamp(ts(9999, 12, 31, late), 3).is_err());
    }
}
