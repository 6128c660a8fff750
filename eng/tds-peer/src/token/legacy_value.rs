//! Test oracle: the row encoder as it was before the streaming rewrite (taken verbatim from
//! value.rs at 0d2d298, minus its tests), so the new encoder is checked byte for byte against
//! the one the conformance suite was written against, with conv.rs of the same revision inside.
//! Test builds only.
#![allow(dead_code)]

use self::conv::Dec;
use crate::types::{Ty, decimal_len};
use rusqlite::types::Value;

/// Chunk size for PLP values (varchar/nvarchar/varbinary(max), xml).
pub const PLP_CHUNK: usize = 8000;

pub fn as_i64(v: &Value) -> i64 {
    match v {
        Value::Integer(i) => *i,
        Value::Real(f) => *f as i64,
        Value::Text(s) => s
            .trim()
            .parse::<i64>()
            .ok()
            .or_else(|| s.trim().parse::<f64>().ok().map(|f| f as i64))
            .unwrap_or(0),
        Value::Blob(b) => b
            .iter()
            .take(8)
            .rev()
            .fold(0i64, |a, &x| (a << 8) | x as i64),
        Value::Null => 0,
    }
}

pub fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Integer(i) => *i as f64,
        Value::Real(f) => *f,
        Value::Text(s) => s.trim().parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

pub fn as_text(v: &Value) -> String {
    match v {
        Value::Integer(i) => i.to_string(),
        Value::Real(f) => fmt_float(*f),
        Value::Text(s) => s.clone(),
        Value::Blob(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Null => String::new(),
    }
}

/// Float to text the way SQL Server's CONVERT(varchar, float) roughly does (shortest repr).
pub fn fmt_float(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

pub fn as_dec(v: &Value) -> Dec {
    match v {
        Value::Integer(i) => Dec::from_i64(*i),
        Value::Real(f) => Dec::from_f64(*f),
        Value::Text(s) => conv::parse_decimal(s).unwrap_or(Dec {
            neg: false,
            mag: 0,
            scale: 0,
        }),
        _ => Dec {
            neg: false,
            mag: 0,
            scale: 0,
        },
    }
}

pub fn as_blob(v: &Value) -> Vec<u8> {
    match v {
        Value::Blob(b) => b.clone(),
        Value::Text(s) => s.as_bytes().to_vec(),
        Value::Integer(i) => i.to_be_bytes().to_vec(),
        Value::Real(f) => f.to_be_bytes().to_vec(),
        Value::Null => Vec::new(),
    }
}

fn as_dt(v: &Value) -> conv::DateTime {
    match v {
        Value::Text(s) => conv::parse_datetime(s).unwrap_or(conv::DateTime {
            days: conv::DAY_1900,
            ticks: 0,
            offset: None,
            has_date: true,
        }),
        // Numbers are DATETIME-style days since 1900 (SQL Server's CAST(int AS datetime)).
        Value::Integer(i) => conv::DateTime {
            days: conv::DAY_1900 + i,
            ticks: 0,
            offset: None,
            has_date: true,
        },
        Value::Real(f) => {
            let d = f.floor();
            conv::DateTime {
                days: conv::DAY_1900 + d as i64,
                ticks: ((f - d) * conv::TICKS_PER_DAY as f64) as u64,
                offset: None,
                has_date: true,
            }
        }
        _ => conv::DateTime {
            days: conv::DAY_1900,
            ticks: 0,
            offset: None,
            has_date: true,
        },
    }
}

fn time_len(scale: u8) -> usize {
    match scale {
        0..=2 => 3,
        3..=4 => 4,
        _ => 5,
    }
}

fn put_time(out: &mut Vec<u8>, ticks: u64, scale: u8) {
    let units = ticks / 10u64.pow(7 - scale as u32);
    out.extend_from_slice(&units.to_le_bytes()[..time_len(scale)]);
}

fn put_date(out: &mut Vec<u8>, days: i64) {
    out.extend_from_slice(&(days.clamp(0, 3_652_058) as u32).to_le_bytes()[..3]);
}

pub fn put_plp(out: &mut Vec<u8>, data: &[u8]) {
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    for c in data.chunks(PLP_CHUNK) {
        out.extend_from_slice(&(c.len() as u32).to_le_bytes());
        out.extend_from_slice(c);
    }
    out.extend_from_slice(&0u32.to_le_bytes());
}

fn put_decimal_body(out: &mut Vec<u8>, d: Dec, len: u8) {
    out.push(if d.neg { 0 } else { 1 });
    out.extend_from_slice(&d.mag.to_le_bytes()[..len as usize - 1]);
}

fn pad_to(mut b: Vec<u8>, n: usize, pad: &[u8]) -> Vec<u8> {
    while b.len() < n {
        b.extend_from_slice(pad);
    }
    b.truncate(n);
    b
}

/// Encodes the NULL marker for a column in a ROW token.
pub fn put_null(out: &mut Vec<u8>, ty: Ty) {
    match ty {
        _ if ty.is_plp() => out.extend_from_slice(&u64::MAX.to_le_bytes()),
        Ty::Char(..)
        | Ty::VarChar(..)
        | Ty::NChar(_)
        | Ty::NVarChar(_)
        | Ty::Binary(_)
        | Ty::VarBinary(_) => out.extend_from_slice(&0xFFFFu16.to_le_bytes()),
        Ty::Variant => out.extend_from_slice(&0u32.to_le_bytes()),
        _ => out.push(0),
    }
}

/// Wire bytes of a character value of `ty`: text in the type's encoding (CP1252 or UTF-8 for
/// VARCHAR, UTF-16LE for NVARCHAR), or a blob's bytes as they are: a binary value converted to a
/// character type keeps its bytes in SQL Server, including UTF-16 that SQLite text cannot hold
/// (an unpaired surrogate from `CAST(0x3DD8 AS NVARCHAR(1))`).
fn text_bytes(ty: Ty, v: &Value) -> Vec<u8> {
    let b = match v {
        Value::Blob(b) => b.clone(),
        _ => {
            let s = as_text(v);
            match ty {
                Ty::Char(_, true) | Ty::VarChar(_, true) => s.into_bytes(),
                Ty::Char(..) | Ty::VarChar(..) => conv::to_cp1252(&s),
                _ => conv::utf16(&s),
            }
        }
    };
    match ty {
        Ty::Char(n, _) => pad_to(b, n as usize, b" "),
        Ty::NChar(n) => pad_to(b, n as usize * 2, &[0x20, 0]),
        Ty::VarChar(Some(n), _) => truncated(b, n as usize),
        Ty::NVarChar(Some(n)) => truncated(b, n as usize * 2),
        _ => b,
    }
}

fn truncated(mut b: Vec<u8>, n: usize) -> Vec<u8> {
    b.truncate(n);
    b
}

/// Encodes a non-NULL value (or NULL) for `ty` into a ROW token body.
pub fn put_value(out: &mut Vec<u8>, ty: Ty, v: &Value) {
    if matches!(v, Value::Null) {
        put_null(out, ty);
        return;
    }
    match ty {
        Ty::Bit => out.extend_from_slice(&[1, (as_i64(v) != 0) as u8]),
        Ty::TinyInt => out.extend_from_slice(&[1, as_i64(v) as u8]),
        Ty::SmallInt => {
            out.push(2);
            out.extend_from_slice(&(as_i64(v) as i16).to_le_bytes());
        }
        Ty::Int => {
            out.push(4);
            out.extend_from_slice(&(as_i64(v) as i32).to_le_bytes());
        }
        Ty::BigInt => {
            out.push(8);
            out.extend_from_slice(&as_i64(v).to_le_bytes());
        }
        Ty::Real => {
            out.push(4);
            out.extend_from_slice(&(as_f64(v) as f32).to_le_bytes());
        }
        Ty::Float => {
            out.push(8);
            out.extend_from_slice(&as_f64(v).to_le_bytes());
        }
        Ty::Decimal(p, s) | Ty::Numeric(p, s) => {
            let len = decimal_len(p);
            out.push(len);
            put_decimal_body(out, as_dec(v).rescale(s), len);
        }
        Ty::Money => {
            let m = as_dec(v).scaled_i64(4);
            out.push(8);
            out.extend_from_slice(&((m >> 32) as i32).to_le_bytes());
            out.extend_from_slice(&(m as u32).to_le_bytes());
        }
        Ty::SmallMoney => {
            out.push(4);
            out.extend_from_slice(&(as_dec(v).scaled_i64(4) as i32).to_le_bytes());
        }
        Ty::Date => {
            out.push(3);
            put_date(out, as_dt(v).days);
        }
        Ty::Time(s) => {
            let dt = as_dt(v);
            let (_, t) = conv::round_ticks(0, dt.ticks, s);
            out.push(time_len(s) as u8);
            put_time(out, t % conv::TICKS_PER_DAY, s);
        }
        Ty::DateTime2(s) => {
            let dt = as_dt(v);
            let days = if dt.has_date { dt.days } else { conv::DAY_1900 };
            let (d, t) = conv::round_ticks(days, dt.ticks, s);
            out.push(time_len(s) as u8 + 3);
            put_time(out, t, s);
            put_date(out, d);
        }
        Ty::DateTimeOffset(s) => {
            let dt = as_dt(v);
            let off = dt.offset.unwrap_or(0);
            let days = if dt.has_date { dt.days } else { conv::DAY_1900 };
            // Wire carries UTC date/time plus the offset.
            let local = days as i128 * conv::TICKS_PER_DAY as i128 + dt.ticks as i128;
            let utc = local - off as i128 * 600_000_000;
            let (d, t) = conv::round_ticks(
                utc.div_euclid(conv::TICKS_PER_DAY as i128) as i64,
                utc.rem_euclid(conv::TICKS_PER_DAY as i128) as u64,
                s,
            );
            out.push(time_len(s) as u8 + 5);
            put_time(out, t, s);
            put_date(out, d);
            out.extend_from_slice(&off.to_le_bytes());
        }
        Ty::DateTime => {
            let dt = as_dt(v);
            let days = if dt.has_date { dt.days } else { conv::DAY_1900 };
            // 1/300 s ticks, rounded.
            let mut t300 = (dt.ticks * 3 + 50_000) / 100_000;
            let mut d = days - conv::DAY_1900;
            if t300 >= 300 * 86_400 {
                t300 -= 300 * 86_400;
                d += 1;
            }
            out.push(8);
            out.extend_from_slice(&(d as i32).to_le_bytes());
            out.extend_from_slice(&(t300 as u32).to_le_bytes());
        }
        Ty::SmallDateTime => {
            let dt = as_dt(v);
            let days = if dt.has_date { dt.days } else { conv::DAY_1900 };
            let mut mins = (dt.ticks + 300_000_000) / 600_000_000;
            let mut d = days - conv::DAY_1900;
            if mins >= 1440 {
                mins -= 1440;
                d += 1;
            }
            out.push(4);
            out.extend_from_slice(&(d as u16).to_le_bytes());
            out.extend_from_slice(&(mins as u16).to_le_bytes());
        }
        Ty::Guid => {
            let g = match v {
                Value::Blob(b) if b.len() == 16 => {
                    let mut a = [0u8; 16];
                    a.copy_from_slice(b);
                    a
                }
                _ => conv::parse_guid(&as_text(v)).unwrap_or([0; 16]),
            };
            out.push(16);
            out.extend_from_slice(&conv::guid_wire(&g));
        }
        Ty::Char(..) | Ty::VarChar(Some(_), _) | Ty::NChar(_) | Ty::NVarChar(Some(_)) => {
            let b = text_bytes(ty, v);
            out.extend_from_slice(&(b.len() as u16).to_le_bytes());
            out.extend_from_slice(&b);
        }
        Ty::VarChar(None, _) | Ty::NVarChar(None) | Ty::Xml => put_plp(out, &text_bytes(ty, v)),
        Ty::Binary(n) => {
            let b = pad_to(as_blob(v), n as usize, &[0]);
            out.extend_from_slice(&(b.len() as u16).to_le_bytes());
            out.extend_from_slice(&b);
        }
        Ty::VarBinary(Some(n)) => {
            let mut b = as_blob(v);
            b.truncate(n as usize);
            out.extend_from_slice(&(b.len() as u16).to_le_bytes());
            out.extend_from_slice(&b);
        }
        Ty::VarBinary(None) => put_plp(out, &as_blob(v)),
        Ty::Variant => put_variant(out, v),
    }
}

/// Marks a sql_variant value whose base type is known: `\u{1}<type>\u{1}<canonical text>`
/// (blobs as hex). Untagged values get a base type from their storage class.
pub fn variant_tag(ty: Ty, v: &Value) -> String {
    let text = match v {
        Value::Blob(b) => b.iter().map(|x| format!("{x:02X}")).collect(),
        other => as_text(other),
    };
    format!("\u{1}{}\u{1}{}", ty.name(), text)
}

fn untag_variant(s: &str) -> Option<(Ty, Value)> {
    let rest = s.strip_prefix('\u{1}')?;
    let (name, text) = rest.split_once('\u{1}')?;
    let ty = Ty::parse(name)?;
    let v = match ty {
        Ty::Bit | Ty::TinyInt | Ty::SmallInt | Ty::Int | Ty::BigInt => {
            Value::Integer(text.parse().ok()?)
        }
        Ty::Real | Ty::Float => Value::Real(text.parse().ok()?),
        Ty::Binary(_) | Ty::VarBinary(_) => Value::Blob(
            (0..text.len() / 2)
                .filter_map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok())
                .collect(),
        ),
        _ => Value::Text(text.to_string()),
    };
    Some((ty, v))
}

/// Base type byte and properties of a sql_variant, and how many length bytes `put_value`
/// writes before the data (stripped inside a variant).
fn variant_base(ty: Ty) -> (u8, Vec<u8>, usize) {
    let coll = |u: bool| {
        if u {
            crate::types::COLL_UTF8
        } else {
            crate::types::COLL_CP1252
        }
    };
    let max8000 = 8000u16.to_le_bytes();
    match ty {
        Ty::Bit => (0x32, vec![], 1),
        Ty::TinyInt => (0x30, vec![], 1),
        Ty::SmallInt => (0x34, vec![], 1),
        Ty::Int => (0x38, vec![], 1),
        Ty::BigInt => (0x7F, vec![], 1),
        Ty::Real => (0x3B, vec![], 1),
        Ty::Float => (0x3E, vec![], 1),
        Ty::Money => (0x3C, vec![], 1),
        Ty::SmallMoney => (0x7A, vec![], 1),
        Ty::DateTime => (0x3D, vec![], 1),
        Ty::SmallDateTime => (0x3A, vec![], 1),
        Ty::Decimal(p, s) => (0x6A, vec![p, s], 1),
        Ty::Numeric(p, s) => (0x6C, vec![p, s], 1),
        Ty::Date => (0x28, vec![], 1),
        Ty::Time(s) => (0x29, vec![s], 1),
        Ty::DateTime2(s) => (0x2A, vec![s], 1),
        Ty::DateTimeOffset(s) => (0x2B, vec![s], 1),
        Ty::Guid => (0x24, vec![], 1),
        Ty::Char(n, u) => (0xAF, [&n.to_le_bytes()[..], &coll(u)].concat(), 2),
        Ty::VarChar(_, u) => (0xA7, [&max8000[..], &coll(u)].concat(), 2),
        Ty::NChar(n) => (0xEF, [&(n * 2).to_le_bytes()[..], &coll(false)].concat(), 2),
        Ty::Binary(n) => (0xAD, n.to_le_bytes().to_vec(), 2),
        Ty::VarBinary(_) => (0xA5, max8000.to_vec(), 2),
        _ => (0xE7, [&max8000[..], &coll(false)].concat(), 2),
    }
}

/// sql_variant: 4-byte length, base type, property byte count, properties, data.
fn put_variant(out: &mut Vec<u8>, v: &Value) {
    let mut body = Vec::new();
    if let Value::Text(s) = v
        && let Some((ty, inner)) = untag_variant(s)
    {
        // (max) types cannot live in a variant: send them as their 8000-limited forms.
        let ty = match ty {
            Ty::VarChar(None, u) => Ty::VarChar(Some(8000), u),
            Ty::NVarChar(None) | Ty::Xml => Ty::NVarChar(Some(4000)),
            Ty::VarBinary(None) => Ty::VarBinary(Some(8000)),
            t => t,
        };
        let (base, props, strip) = variant_base(ty);
        let mut tmp = Vec::new();
        put_value(&mut tmp, ty, &inner);
        body.push(base);
        body.push(props.len() as u8);
        body.extend_from_slice(&props);
        body.extend_from_slice(&tmp[strip.min(tmp.len())..]);
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(&body);
        return;
    }
    match v {
        Value::Integer(i) if i32::try_from(*i).is_ok() => {
            body.extend_from_slice(&[0x38, 0]);
            body.extend_from_slice(&(*i as i32).to_le_bytes());
        }
        Value::Integer(i) => {
            body.extend_from_slice(&[0x7F, 0]);
            body.extend_from_slice(&i.to_le_bytes());
        }
        Value::Real(f) => {
            body.extend_from_slice(&[0x3E, 0]);
            body.extend_from_slice(&f.to_le_bytes());
        }
        Value::Text(s) => {
            body.extend_from_slice(&[0xE7, 7]);
            body.extend_from_slice(&8000u16.to_le_bytes());
            body.extend_from_slice(&crate::types::COLL_CP1252);
            body.extend_from_slice(&conv::utf16(s));
        }
        Value::Blob(b) => {
            body.extend_from_slice(&[0xA5, 2]);
            body.extend_from_slice(&8000u16.to_le_bytes());
            body.extend_from_slice(b);
        }
        Value::Null => {}
    }
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
}

/// Encodes a full row: ROW (0xD1), or NBCROW (0xD2) when `nbc` and some value is NULL.
pub fn put_row(out: &mut Vec<u8>, tys: &[Ty], vals: &[Value], nbc: bool) {
    let any_null = vals.iter().any(|v| matches!(v, Value::Null));
    if nbc && any_null {
        out.push(0xD2);
        let mut bitmap = vec![0u8; tys.len().div_ceil(8)];
        for (i, v) in vals.iter().enumerate() {
            if matches!(v, Value::Null) {
                bitmap[i / 8] |= 1 << (i % 8);
            }
        }
        out.extend_from_slice(&bitmap);
        for (t, v) in tys.iter().zip(vals) {
            if !matches!(v, Value::Null) {
                put_value(out, *t, v);
            }
        }
    } else {
        out.push(0xD1);
        for (t, v) in tys.iter().zip(vals) {
            put_value(out, *t, v);
        }
    }
}

/// conv.rs at 0d2d298 (the parsers the old encoder used).
pub mod conv {

    /// An exact decimal: magnitude and scale (value = (-1)^neg * mag / 10^scale).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Dec {
        pub neg: bool,
        pub mag: u128,
        pub scale: u8,
    }

    pub fn parse_decimal(s: &str) -> Option<Dec> {
        let s = s.trim();
        let (neg, s) = match s.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, s.strip_prefix('+').unwrap_or(s)),
        };
        // Accept exponent forms from float rendering (e.g. 1.5e-05) by going through f64 text.
        if s.contains(['e', 'E']) {
            let f: f64 = s.parse().ok()?;
            return parse_decimal(&format!("{}{:.12}", if neg { "-" } else { "" }, f));
        }
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        if int.is_empty() && frac.is_empty() {
            return None;
        }
        let mut mag: u128 = 0;
        for c in int.chars().chain(frac.chars()) {
            let d = c.to_digit(10)? as u128;
            mag = mag.checked_mul(10)?.checked_add(d)?;
        }
        Some(Dec {
            neg: neg && mag != 0,
            mag,
            scale: frac.len().min(255) as u8,
        })
    }

    impl Dec {
        pub fn from_i64(v: i64) -> Dec {
            Dec {
                neg: v < 0,
                mag: v.unsigned_abs() as u128,
                scale: 0,
            }
        }

        pub fn from_f64(v: f64) -> Dec {
            parse_decimal(&format!("{v:.10}")).unwrap_or(Dec {
                neg: false,
                mag: 0,
                scale: 0,
            })
        }

        /// Rescales with round-half-away-from-zero (as SQL Server does on conversion).
        pub fn rescale(self, to: u8) -> Dec {
            let mut mag = self.mag;
            if to >= self.scale {
                for _ in self.scale..to {
                    mag = mag.saturating_mul(10);
                }
            } else {
                let div = 10u128.pow((self.scale - to) as u32);
                let q = mag / div;
                let r = mag % div;
                mag = if r * 2 >= div { q + 1 } else { q };
            }
            Dec {
                neg: self.neg && mag != 0,
                mag,
                scale: to,
            }
        }

        pub fn to_string_fixed(self) -> String {
            let digits = self.mag.to_string();
            let s = self.scale as usize;
            let body = if s == 0 {
                digits
            } else if digits.len() > s {
                format!(
                    "{}.{}",
                    &digits[..digits.len() - s],
                    &digits[digits.len() - s..]
                )
            } else {
                format!("0.{}{}", "0".repeat(s - digits.len()), digits)
            };
            if self.neg { format!("-{body}") } else { body }
        }

        /// Signed scaled integer at `scale` (for MONEY: scale 4), saturating at i64.
        pub fn scaled_i64(self, scale: u8) -> i64 {
            let d = self.rescale(scale);
            let m = d.mag.min(i64::MAX as u128 + 1) as i128;
            (if d.neg { -m } else { m }).clamp(i64::MIN as i128, i64::MAX as i128) as i64
        }
    }

    // ---- dates: day numbers are days since 0001-01-01 (proleptic Gregorian), times in 100 ns ticks.

    pub const TICKS_PER_DAY: u64 = 864_000_000_000;
    /// Day number of 1900-01-01 (DATETIME epoch).
    pub const DAY_1900: i64 = 693_595;

    pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
        // Howard Hinnant's algorithm, shifted to the 0001-01-01 epoch.
        let y = if m <= 2 { y - 1 } else { y };
        let era = if y >= 0 { y } else { y - 399 } / 400;
        let yoe = y - era * 400;
        let mp = (m as i64 + 9) % 12;
        let doy = (153 * mp + 2) / 5 + d as i64 - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468 + 719_162
    }

    pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
        let z = days - 719_162 + 719_468;
        let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let y = yoe + era * 400;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        (if m <= 2 { y + 1 } else { y }, m, d)
    }

    /// A parsed date/time: `days` (0001-01-01 = 0), `ticks` of 100 ns into the day, optional
    /// UTC offset in minutes. Date-only text gives ticks 0; time-only text gives days 0 (1900 for
    /// DATETIME is handled by callers).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct DateTime {
        pub days: i64,
        pub ticks: u64,
        pub offset: Option<i16>,
        pub has_date: bool,
    }

    fn num(s: &str) -> Option<u32> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    }

    fn parse_time(t: &str) -> Option<u64> {
        let mut it = t.split(':');
        let h = num(it.next()?)?;
        let m = num(it.next()?)?;
        let (s, frac) = match it.next() {
            Some(sec) => {
                let (s, f) = sec.split_once('.').unwrap_or((sec, ""));
                (num(s)?, f)
            }
            None => (0, ""),
        };
        if h > 23 || m > 59 || s > 59 {
            return None;
        }
        let mut f = frac.to_string();
        f.truncate(7);
        while f.len() < 7 {
            f.push('0');
        }
        let frac_ticks = if frac.is_empty() { 0 } else { num(&f)? as u64 };
        Some(((h as u64 * 60 + m as u64) * 60 + s as u64) * 10_000_000 + frac_ticks)
    }

    pub fn parse_datetime(s: &str) -> Option<DateTime> {
        let s = s.trim();
        let mut offset = None;
        let mut body = s;
        if let Some(b) = s.strip_suffix('Z') {
            offset = Some(0);
            body = b.trim_end();
        } else if s.len() > 6 {
            let tail = &s[s.len() - 6..];
            let tb = tail.as_bytes();
            if (tb[0] == b'+' || tb[0] == b'-') && tb[3] == b':' {
                let h = num(&tail[1..3])? as i16;
                let m = num(&tail[4..6])? as i16;
                let v = h * 60 + m;
                offset = Some(if tb[0] == b'-' { -v } else { v });
                body = s[..s.len() - 6].trim_end();
            }
        }
        let (date, time) = match body.find(['T', ' ']) {
            Some(p) => (Some(&body[..p]), Some(body[p + 1..].trim())),
            None if body.contains(':') => (None, Some(body)),
            None => (Some(body), None),
        };
        let days = match date {
            Some(d) => {
                let mut it = d.split('-');
                let y = num(it.next()?)? as i64;
                let m = num(it.next()?)?;
                let dd = num(it.next()?)?;
                if !(1..=12).contains(&m) || !(1..=31).contains(&dd) || y < 1 {
                    return None;
                }
                days_from_civil(y, m, dd)
            }
            None => 0,
        };
        let ticks = match time {
            Some(t) if !t.is_empty() => parse_time(t)?,
            _ => 0,
        };
        Some(DateTime {
            days,
            ticks,
            offset,
            has_date: date.is_some(),
        })
    }

    pub fn fmt_date(days: i64) -> String {
        let (y, m, d) = civil_from_days(days);
        format!("{y:04}-{m:02}-{d:02}")
    }

    /// `HH:MM:SS[.f…]` with exactly `scale` fractional digits.
    pub fn fmt_time(ticks: u64, scale: u8) -> String {
        let secs = ticks / 10_000_000;
        let frac = ticks % 10_000_000;
        let base = format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
        if scale == 0 {
            base
        } else {
            let f = format!("{frac:07}");
            format!("{base}.{}", &f[..scale as usize])
        }
    }

    pub fn fmt_offset(off: i16) -> String {
        let a = off.unsigned_abs();
        format!(
            "{}{:02}:{:02}",
            if off < 0 { '-' } else { '+' },
            a / 60,
            a % 60
        )
    }

    /// Rounds ticks to `scale` fractional digits (half up); may carry into the next day.
    pub fn round_ticks(days: i64, ticks: u64, scale: u8) -> (i64, u64) {
        let unit = 10u64.pow(7 - scale as u32);
        let t = (ticks + unit / 2) / unit * unit;
        if t >= TICKS_PER_DAY {
            (days + 1, t - TICKS_PER_DAY)
        } else {
            (days, t)
        }
    }

    // ---- GUID

    pub fn parse_guid(s: &str) -> Option<[u8; 16]> {
        let h: String = s
            .trim()
            .trim_matches(|c| c == '{' || c == '}')
            .chars()
            .filter(|c| *c != '-')
            .collect();
        if h.len() != 32 {
            return None;
        }
        let mut b = [0u8; 16];
        for i in 0..16 {
            b[i] = u8::from_str_radix(&h[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(b)
    }

    pub fn fmt_guid(b: &[u8; 16]) -> String {
        let h: Vec<String> = b.iter().map(|x| format!("{x:02X}")).collect();
        format!(
            "{}-{}-{}-{}-{}",
            h[0..4].concat(),
            h[4..6].concat(),
            h[6..8].concat(),
            h[8..10].concat(),
            h[10..16].concat()
        )
    }

    /// Wire order of a GUID: the first three groups little-endian (as SQL Server stores them).
    pub fn guid_wire(b: &[u8; 16]) -> [u8; 16] {
        let mut w = *b;
        w[0..4].reverse();
        w[4..6].reverse();
        w[6..8].reverse();
        w
    }

    // ---- CP1252

    const CP1252_80: [u16; 32] = [
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
        0x2039, 0x0152, 0x8D, 0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013,
        0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
    ];

    pub fn to_cp1252(s: &str) -> Vec<u8> {
        s.chars()
            .map(|c| {
                let u = c as u32;
                if u < 0x80 || (0xA0..=0xFF).contains(&u) {
                    u as u8
                } else if let Some(i) = CP1252_80.iter().position(|&x| x as u32 == u) {
                    0x80 + i as u8
                } else {
                    b'?'
                }
            })
            .collect()
    }

    pub fn from_cp1252(b: &[u8]) -> String {
        b.iter()
            .map(|&x| {
                if (0x80..0xA0).contains(&x) {
                    char::from_u32(CP1252_80[(x - 0x80) as usize] as u32).unwrap_or('?')
                } else {
                    x as char
                }
            })
            .collect()
    }

    pub fn utf16(s: &str) -> Vec<u8> {
        let mut v = Vec::with_capacity(s.len() * 2);
        for u in s.encode_utf16() {
            v.extend_from_slice(&u.to_le_bytes());
        }
        v
    }

    pub fn from_utf16(b: &[u8]) -> String {
        let u: Vec<u16> = b
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        String::from_utf16_lossy(&u)
    }
}
