//! Golden bytes: the value and row encoders (value.rs) and the text parsers (conv.rs) against
//! fixtures recorded from the encoder as it was when the streaming encoder had been proven byte
//! for byte against the one it replaced (every type × ~110 stored values, 400 mixed rows, the
//! date/time and decimal parsers on every mutation of a canonical timestamp).
//!
//! The fixtures in `golden/` are text files: per type, one line per value (its index in
//! `values()`) with the encoded bytes in hex (values over 256 bytes as their length, a 64-bit
//! FNV-1a hash and their first 32 bytes); one line per row with its length and hash; one line
//! per parser input with both parses.
//! A deliberate change of the wire format is re-recorded with
//! `TDS_PEER_RECORD_GOLDEN=1 cargo test -p tds-peer golden` and reviewed in the diff.

use super::value;
use crate::conv;
use crate::types::Ty;
use rusqlite::types::Value;
use std::fmt::Write;

const VALUES: &str = include_str!("golden/values.txt");
const ROWS: &str = include_str!("golden/rows.txt");
const PARSERS: &str = include_str!("golden/parsers.txt");

/// Encodings longer than this are recorded by length, hash and head, not in full.
const FULL: usize = 256;

fn fnv64(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        let _ = write!(s, "{x:02x}");
    }
    s
}

/// The fixture form of encoded bytes: the hex, or `len:hash:head` past `FULL` bytes.
fn recorded(b: &[u8]) -> String {
    if b.len() <= FULL {
        hex(b)
    } else {
        format!("{}:{:016x}:{}", b.len(), fnv64(b), hex(&b[..32]))
    }
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

fn value_lines() -> Vec<String> {
    let vals = values();
    let mut lines = Vec::new();
    for ty in types() {
        lines.push(format!("# {ty:?}"));
        for (i, v) in vals.iter().enumerate() {
            let mut b = Vec::new();
            value::put_value(&mut b, ty, v);
            lines.push(format!("{i}\t{}", recorded(&b)));
        }
    }
    lines
}

fn row_lines() -> Vec<String> {
    let tys = types();
    let vals = values();
    let mut lines = Vec::new();
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
            let mut b = vec![0xEE];
            value::put_row(&mut b, &tys, &row, nbc);
            lines.push(format!("{r}\t{nbc}\t{}:{:016x}", b.len(), fnv64(&b)));
        }
    }
    lines
}

fn parser_inputs() -> Vec<String> {
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
    inputs
}

fn parser_lines() -> Vec<String> {
    parser_inputs()
        .iter()
        .map(|s| {
            let dt = conv::parse_datetime(s).map(|d| (d.days, d.ticks, d.offset, d.has_date));
            let dec = conv::parse_decimal(s).map(|d| (d.neg, d.mag, d.scale));
            format!("{s:?}\t{dt:?}\t{dec:?}")
        })
        .collect()
}

/// Compares `lines` with the fixture `file` line by line (or rewrites it when recording).
fn check(file: &str, golden: &str, lines: Vec<String>) {
    if std::env::var_os("TDS_PEER_RECORD_GOLDEN").is_some() {
        let path = format!("{}/src/token/golden/{file}", env!("CARGO_MANIFEST_DIR"));
        std::fs::write(&path, lines.join("\n") + "\n").expect("write golden file");
        return;
    }
    let want: Vec<&str> = golden.lines().collect();
    assert_eq!(lines.len(), want.len(), "{file}: number of lines");
    let wrong: Vec<String> = lines
        .iter()
        .zip(&want)
        .filter(|(got, want)| got != want)
        .take(5)
        .map(|(got, want)| format!("\n  want {want}\n  got  {got}"))
        .collect();
    assert!(wrong.is_empty(), "{file} differs:{}", wrong.concat());
}

#[test]
fn every_type_and_value_encodes_as_recorded() {
    check("values.txt", VALUES, value_lines());
}

#[test]
fn rows_encode_as_recorded() {
    check("rows.txt", ROWS, row_lines());
}

#[test]
fn parsers_parse_as_recorded() {
    check("parsers.txt", PARSERS, parser_lines());
}

#[test]
fn byte_and_text_parsers_agree() {
    for s in parser_inputs() {
        let text = conv::parse_decimal(&s).map(|d| (d.neg, d.mag, d.scale));
        let bytes = conv::parse_decimal_bytes(s.as_bytes()).map(|d| (d.neg, d.mag, d.scale));
        assert_eq!(bytes, text, "parse_decimal_bytes({s:?})");
        let bytes = conv::parse_datetime_bytes(s.as_bytes());
        assert_eq!(
            bytes,
            conv::parse_datetime(&s),
            "parse_datetime_bytes({s:?})"
        );
    }
}

#[test]
fn fixtures_cover_every_type_and_value() {
    // A fixture file cut short or emptied would otherwise compare nothing.
    assert_eq!(VALUES.lines().count(), types().len() * (values().len() + 1));
    assert_eq!(ROWS.lines().count(), 800);
    assert_eq!(PARSERS.lines().count(), parser_inputs().len());
    // Most values are recorded in full, not as a hash.
    assert!(VALUES.lines().filter(|l| !l.contains(':')).count() > types().len() * 90);
}
