//! The exact conversions at SQL Server's edges (no driver needed).

use super::values::*;
use crate::types::temporal::{Date, Time, Timestamp, TimestampOffset};

fn ts(year: i16, month: u16, day: u16, h: u16, m: u16, s: u16, ns: u32) -> Timestamp {
    Timestamp {
        date: Date { year, month, day },
        time: Time {
            hour: h,
            minute: m,
            second: s,
            nanosecond: ns,
        },
    }
}

#[test]
fn days_cover_sql_servers_whole_date_range() {
    assert_eq!(days_from_civil(1970, 1, 1), 0);
    assert_eq!(days_from_civil(1, 1, 1), -719_162);
    assert_eq!(days_from_civil(9999, 12, 31), 2_932_896);
    assert_eq!(days_from_civil(2000, 2, 29), 11_016);
    assert_eq!(
        date32(Date {
            year: 2023,
            month: 2,
            day: 29
        }),
        None
    );
    assert_eq!(
        date32(Date {
            year: -9999,
            month: 1,
            day: 1
        }),
        None
    );
}

fn micros(t: Timestamp) -> Option<i64> {
    timestamp(t, Unit::Micros)
}

fn instant_micros(v: TimestampOffset) -> Option<i64> {
    instant(v, Unit::Micros)
}

#[test]
fn microsecond_timestamps_hold_0001_and_9999_and_truncate_the_7th_digit() {
    assert_eq!(
        micros(ts(1, 1, 1, 0, 0, 0, 0)),
        Some(-62_135_596_800_000_000)
    );
    assert_eq!(
        micros(ts(9999, 12, 31, 23, 59, 59, 999_999_900)),
        Some(253_402_300_799_999_999)
    );
    assert_eq!(micros(ts(1970, 1, 1, 0, 0, 0, 1_900)), Some(1));
    assert_eq!(micros(ts(1970, 1, 1, 24, 0, 0, 0)), None);
}

#[test]
fn nanosecond_timestamps_keep_the_7th_digit_and_refuse_what_i64_cannot_hold() {
    let nanos = |t| timestamp(t, Unit::Nanos);
    assert_eq!(nanos(ts(1970, 1, 1, 0, 0, 0, 100)), Some(100));
    assert_eq!(
        nanos(ts(2024, 2, 29, 23, 59, 59, 999_999_900)),
        Some(1_709_251_199_999_999_900)
    );
    // i64 nanoseconds span 1677-09-21 00:12:43.145224192 .. 2262-04-11 23:47:16.854775807.
    assert_eq!(
        nanos(ts(1677, 9, 21, 0, 12, 43, 145_224_192)),
        Some(i64::MIN)
    );
    assert_eq!(
        nanos(ts(2262, 4, 11, 23, 47, 16, 854_775_807)),
        Some(i64::MAX)
    );
    for edge in [
        ts(1677, 9, 21, 0, 12, 43, 145_224_191),
        ts(2262, 4, 11, 23, 47, 16, 854_775_808),
        ts(1, 1, 1, 0, 0, 0, 0),
        ts(9999, 12, 31, 23, 59, 59, 999_999_900),
    ] {
        assert_eq!(nanos(edge), None, "{edge:?}");
        assert!(
            out_of_range(edge, Unit::Nanos),
            "a valid value, out of range: {edge:?}"
        );
    }
    assert!(!out_of_range(ts(1970, 1, 1, 24, 0, 0, 0), Unit::Nanos));
    let east = TimestampOffset {
        timestamp: ts(2262, 4, 12, 1, 0, 0, 0),
        offset_minutes: 14 * 60,
    };
    assert_eq!(
        instant(east, Unit::Nanos),
        nanos(ts(2262, 4, 11, 11, 0, 0, 0))
    );
}

#[test]
fn datetimeoffset_instants_subtract_the_offset() {
    let local = ts(2024, 1, 1, 5, 30, 0, 0);
    let v = TimestampOffset {
        timestamp: local,
        offset_minutes: 5 * 60 + 30,
    };
    assert_eq!(instant_micros(v), micros(ts(2024, 1, 1, 0, 0, 0, 0)));
    let west = TimestampOffset {
        timestamp: ts(1, 1, 1, 0, 0, 0, 0),
        offset_minutes: -14 * 60,
    };
    assert_eq!(
        instant_micros(west),
        Some(-62_135_596_800_000_000 + 14 * 3_600_000_000)
    );
    let bad = TimestampOffset {
        timestamp: local,
        offset_minutes: 15 * 60,
    };
    assert_eq!(instant_micros(bad), None);
}

#[test]
fn decimal_text_is_exact_at_the_columns_scale_and_never_rounded() {
    assert_eq!(decimal_text_to_i128(b"-12.5", 10, 2), Some(-1250));
    assert_eq!(decimal_text_to_i128(b".5", 3, 2), Some(50));
    assert_eq!(decimal_text_to_i128(b"0.05", 3, 2), Some(5));
    assert_eq!(decimal_text_to_i128(b"7", 3, 0), Some(7));
    assert_eq!(
        decimal_text_to_i128(b"1.2500", 5, 2),
        Some(125),
        "zero padding is exact"
    );
    assert_eq!(
        decimal_text_to_i128(b"1.255", 5, 2),
        None,
        "a third digit is not rounded"
    );
    let max38 = "9".repeat(38);
    assert_eq!(
        decimal_text_to_i128(max38.as_bytes(), 38, 0),
        Some(10i128.pow(38) - 1)
    );
    let frac38 = format!("-.{max38}");
    assert_eq!(
        decimal_text_to_i128(frac38.as_bytes(), 38, 38),
        Some(-(10i128.pow(38) - 1))
    );
    assert_eq!(
        decimal_text_to_i128(b"100", 2, 0),
        None,
        "beyond the precision"
    );
    for junk in [&b"NaN"[..], b"1e5", b"", b"-", b"1.2.3", b"Infinity"] {
        assert_eq!(decimal_text_to_i128(junk, 38, 4), None, "{junk:?}");
    }
}

#[test]
fn numeric_structs_keep_sign_and_scale() {
    let mut raw = [0u8; 19];
    raw[0] = 38;
    raw[1] = 4;
    raw[2] = 0; // negative
    raw[3..19].copy_from_slice(&12_345u128.to_le_bytes());
    assert_eq!(numeric_to_i128(&raw, 4), Some(-12_345));
    assert_eq!(numeric_to_i128(&raw, 2), None, "another scale is refused");
    raw[2] = 1;
    raw[3..19].copy_from_slice(&(10u128.pow(38) - 1).to_le_bytes());
    assert_eq!(numeric_to_i128(&raw, 4), Some(10i128.pow(38) - 1));
    raw[3..19].copy_from_slice(&10u128.pow(38).to_le_bytes());
    assert_eq!(numeric_to_i128(&raw, 4), None);
}

#[test]
fn uuid_bytes_are_rfc_4122_order() {
    // 6F9619FF-8B86-D011-B42D-00C04FC964FF as SQL_GUID (Data1..3 little-endian).
    let raw = [
        0xFF, 0x19, 0x96, 0x6F, 0x86, 0x8B, 0x11, 0xD0, 0xB4, 0x2D, 0x00, 0xC0, 0x4F, 0xC9, 0x64,
        0xFF,
    ];
    assert_eq!(
        uuid_bytes(raw),
        [
            0x6F, 0x96, 0x19, 0xFF, 0x8B, 0x86, 0xD0, 0x11, 0xB4, 0x2D, 0x00, 0xC0, 0x4F, 0xC9,
            0x64, 0xFF
        ]
    );
}
