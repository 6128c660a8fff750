//! The streaming encoder (value.rs, conv.rs) against the encoder it replaced (legacy_value.rs):
//! every type × a spread of stored values, single cells and whole rows, byte for byte.

use super::legacy_value as legacy;
use super::value;
use crate::conv;
use crate::types::Ty;
use rusqlite::types::Value;
use std::cell::Cell;
use std::panic;

thread_local! {
    static IN_LEGACY: Cell<bool> = const { Cell::new(false) };
}

/// Runs the old code; None if it panicked (it did on some inputs: slicing non-ASCII text inside
/// a char, integer overflow in debug builds). The new code must then merely not panic. Those
/// panics are expected and not printed; every other panic still is.
fn legacy<T>(f: impl FnOnce() -> T) -> Option<T> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !IN_LEGACY.with(Cell::get) {
                default(info)
            }
        }));
    });
    IN_LEGACY.with(|c| c.set(true));
    let r = panic::catch_unwind(panic::AssertUnwindSafe(f));
    IN_LEGACY.with(|c| c.set(false));
    r.ok()
}

fn types() -> Vec<Ty> {
    use Ty::*;
    vec![
        Bit,
        TinyInt,
        SmallInt,
        Int,
        BigInt,
        Real,
        Float,
        Decimal(1, 0),
        Decimal(9, 2),
        Decimal(18, 4),
        Decimal(19, 0),
        Decimal(28, 10),
        Decimal(38, 10),
        Numeric(10, 3),
        Money,
        SmallMoney,
        Date,
        Time(0),
        Time(3),
        Time(7),
        DateTime,
        SmallDateTime,
        DateTime2(0),
        DateTime2(3),
        DateTime2(7),
        DateTimeOffset(0),
        DateTimeOffset(7),
        Char(10, false),
        Char(10, true),
        Char(1, false),
        VarChar(Some(50), false),
        VarChar(Some(3), false),
        VarChar(Some(50), true),
        VarChar(Some(2), true),
        VarChar(None, false),
        VarChar(None, true),
        NChar(10),
        NChar(1),
        NVarChar(Some(50)),
        NVarChar(Some(1)),
        NVarChar(Some(4000)),
        NVarChar(None),
        Binary(8),
        Binary(1),
        VarBinary(Some(50)),
        VarBinary(Some(2)),
        VarBinary(None),
        Guid,
        Xml,
        Variant,
    ]
}

fn texts() -> Vec<String> {
    let mut v: Vec<String> = [
        "",
        "a",
        "name 12345",
        "note 7 é",
        "é中😀",
        "abc€Š‰",
        "  42 ",
        "-17",
        "1.5",
        "-12.345",
        "0.00005",
        "-0.0",
        "+3.25",
        ".5",
        "5.",
        "1e3",
        "-1.5E-5",
        "12345678901234567890.1234567890",
        "99999999999999999999999999999999999999",
        "123456789012345678901234567890123456789012",
        "1.99995",
        " -7.25",
        "-7.25\t",
        "\u{a0}12.5",
        "12.5\u{3000}",
        "\u{b}3",
        "+-5",
        "-",
        ".",
        "1.2.3",
        "1.2.3e4",
        "x1",
        "2020-01-01",
        "2020-01-01 00:00:00",
        "2020-01-01 00:00:01.001000",
        "2020-01-01 00:00:01.0010000",
        "2020-01-01T12:34:56.1234567",
        "2020-01-01 12:34:56.12345678",
        "2020-01-01 12:34:56.1234567x",
        "2020-01-01 12:34:56.",
        "2020-01-01 12:34",
        "2020-01-01 23:59:59.9999999",
        "2020-01-01 23:59:59.99999999",
        "9999-12-31 23:59:59.9999999",
        "0001-01-01 00:00:00",
        "0000-01-01 00:00:00",
        "2020-02-31 00:00:00",
        "2020-13-01 00:00:00",
        "2020-01-01 24:00:00",
        "2020-01-01 23:60:00",
        "2020-01-01 23:59:60",
        "20200-01-01 00:00:00",
        "2020-1-1 1:2:3",
        " 2020-01-01 10:00:00 ",
        "2020-01-01 10:00:00Z",
        "2020-01-01 10:00:00 +05:30",
        "2020-01-01 10:00:00.5 -08:00",
        "2020-01-01 10:00:00-01:00",
        "1900-01-01 01:00:00 +01:00",
        "12:00",
        "12:34:56.789",
        "23:59:59.9999999",
        "01020304-0506-0708-090A-0B0C0D0E0F10",
        "{01020304-0506-0708-090a-0b0c0d0e0f10}",
        "<r i=\"1\">x&amp;y</r>",
        "\u{1}int\u{1}42",
        "\u{1}nvarchar(50)\u{1}ab",
        "\u{1}decimal(10,2)\u{1}1.5",
        "\u{1}varbinary(8)\u{1}0AFF",
        "\u{1}nosuchtype\u{1}1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.push("x".repeat(5000));
    v.push("ж".repeat(4500));
    v.push("y".repeat(9000));
    v
}

fn values() -> Vec<Value> {
    let mut v = vec![Value::Null];
    for i in [
        0i64,
        1,
        -1,
        2,
        255,
        256,
        -129,
        32_767,
        32_768,
        i32::MAX as i64,
        i32::MIN as i64,
        i32::MAX as i64 + 1,
        i64::MAX,
        i64::MIN,
        1_000_003,
        -5_000_000_000,
    ] {
        v.push(Value::Integer(i));
    }
    for f in [
        0.0f64,
        -0.0,
        0.25,
        -2.75,
        0.1,
        1.5e20,
        -1e-7,
        123456.789,
        f64::MAX,
        f64::INFINITY,
        f64::NAN,
    ] {
        v.push(Value::Real(f));
    }
    v.extend(texts().into_iter().map(Value::Text));
    v.push(Value::Blob(vec![]));
    v.push(Value::Blob(vec![0x3D, 0xD8]));
    v.push(Value::Blob(vec![0xFF, 0xFE, 0x41]));
    v.push(Value::Blob((0..16).collect()));
    v.push(Value::Blob((0..20_000u32).map(|i| i as u8).collect()));
    v
}

#[test]
fn every_type_and_value_encodes_as_before() {
    for ty in types() {
        for v in values() {
            let mut new = Vec::new();
            value::put_value(&mut new, ty, &v);
            if let Some(old) = legacy(|| {
                let mut old = Vec::new();
                legacy::put_value(&mut old, ty, &v);
                old
            }) {
                assert_eq!(new, old, "{ty:?} {v:?}");
            }
        }
    }
}

#[test]
fn rows_encode_as_before() {
    let tys = types();
    let vals = values();
    // Rows of every type with a deterministic spread of values and NULLs (NBCROW and ROW).
    for r in 0..400usize {
        let row: Vec<Value> = (0..tys.len())
            .map(|c| {
                let k = (r * 31 + c * 17 + r * c) % (vals.len() + 3);
                if r % 3 == 0 && k == 0 {
                    Value::Integer(1)
                } else {
                    vals.get(k).cloned().unwrap_or(Value::Null)
                }
            })
            .collect();
        for nbc in [true, false] {
            let mut new = vec![0xEE];
            value::put_row(&mut new, &tys, &row, nbc);
            if let Some(old) = legacy(|| {
                let mut old = vec![0xEE];
                legacy::put_row(&mut old, &tys, &row, nbc);
                old
            }) {
                assert_eq!(new, old, "row {r} nbc {nbc}");
            }
        }
    }
}

#[test]
fn parsers_agree_with_before() {
    let mut inputs = texts();
    // Every digit position of the canonical date/time form replaced by each character class.
    let base = "2024-02-29 23:59:59.1234567";
    for p in 0..base.len() {
        for c in ['0', '9', '5', ' ', '-', ':', '.', 'T', 'a', 'é'] {
            let mut s: Vec<char> = base.chars().collect();
            s[p] = c;
            inputs.push(s.iter().collect());
            inputs.push(s[..p + 1].iter().collect());
        }
    }
    let mut compared = 0;
    for s in &inputs {
        let new = conv::parse_datetime(s).map(|d| (d.days, d.ticks, d.offset, d.has_date));
        if let Some(old) = legacy(|| {
            legacy::conv::parse_datetime(s).map(|d| (d.days, d.ticks, d.offset, d.has_date))
        }) {
            assert_eq!(new, old, "parse_datetime({s:?})");
            compared += 1;
        }
        let new = conv::parse_decimal(s).map(|d| (d.neg, d.mag, d.scale));
        let old = legacy::conv::parse_decimal(s).map(|d| (d.neg, d.mag, d.scale));
        assert_eq!(new, old, "parse_decimal({s:?})");
        let new = conv::parse_decimal_bytes(s.as_bytes()).map(|d| (d.neg, d.mag, d.scale));
        assert_eq!(new, old, "parse_decimal_bytes({s:?})");
        let new = conv::parse_datetime_bytes(s.as_bytes());
        assert_eq!(new, conv::parse_datetime(s), "parse_datetime_bytes({s:?})");
    }
    assert!(
        compared > inputs.len() * 9 / 10,
        "{compared} of {}",
        inputs.len()
    );
}
