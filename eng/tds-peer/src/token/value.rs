//! Encoding one value of a column (ROW token body) per SQL Server wire type, from the
//! canonical stored form (integers, reals, decimal/date text, GUID text, blobs).
//!
//! Values are read borrowed (`ValueRef`: SQLite's own text and blob buffers while a statement
//! row is current) and written straight into the output: streaming a 100,000-row table spent a
//! third of the peer's CPU in malloc/free when every cell became an owned `Value` first.

use crate::conv::{self, Dec};
use crate::types::{Ty, decimal_len};
use rusqlite::types::{Value, ValueRef};
use std::borrow::Cow;

/// Chunk size for PLP values (varchar/nvarchar/varbinary(max), xml).
pub const PLP_CHUNK: usize = 8000;

/// SQLite text as `str`. SQLite does not check that stored text is UTF-8; invalid sequences
/// become U+FFFD instead of a panic.
fn text_str(b: &[u8]) -> Cow<'_, str> {
    // from_utf8 validates far faster than from_utf8_lossy scans (its chunk iterator showed in
    // profiles at 5 % of a SELECT's CPU).
    match std::str::from_utf8(b) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(b),
    }
}

pub fn as_i64(v: &Value) -> i64 {
    ref_i64(v.into())
}

fn ref_i64(v: ValueRef) -> i64 {
    match v {
        ValueRef::Integer(i) => i,
        ValueRef::Real(f) => f as i64,
        ValueRef::Text(b) => {
            let s = text_str(b);
            let s = s.trim();
            s.parse::<i64>()
                .ok()
                .or_else(|| s.parse::<f64>().ok().map(|f| f as i64))
                .unwrap_or(0)
        }
        ValueRef::Blob(b) => b
            .iter()
            .take(8)
            .rev()
            .fold(0i64, |a, &x| (a << 8) | x as i64),
        ValueRef::Null => 0,
    }
}

pub fn as_f64(v: &Value) -> f64 {
    ref_f64(v.into())
}

fn ref_f64(v: ValueRef) -> f64 {
    match v {
        ValueRef::Integer(i) => i as f64,
        ValueRef::Real(f) => f,
        ValueRef::Text(b) => text_str(b).trim().parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

pub fn as_text(v: &Value) -> String {
    ref_text(v.into()).into_owned()
}

fn ref_text(v: ValueRef<'_>) -> Cow<'_, str> {
    match v {
        ValueRef::Integer(i) => Cow::Owned(i.to_string()),
        ValueRef::Real(f) => Cow::Owned(fmt_float(f)),
        ValueRef::Text(b) | ValueRef::Blob(b) => text_str(b),
        ValueRef::Null => Cow::Borrowed(""),
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

const DEC_ZERO: Dec = Dec {
    neg: false,
    mag: 0,
    scale: 0,
};

pub fn as_dec(v: &Value) -> Dec {
    ref_dec(v.into())
}

fn ref_dec(v: ValueRef) -> Dec {
    match v {
        ValueRef::Integer(i) => Dec::from_i64(i),
        ValueRef::Real(f) => Dec::from_f64(f),
        ValueRef::Text(b) => conv::parse_decimal_bytes(b).unwrap_or(DEC_ZERO),
        _ => DEC_ZERO,
    }
}

fn ref_blob(v: ValueRef<'_>) -> Cow<'_, [u8]> {
    match v {
        ValueRef::Blob(b) | ValueRef::Text(b) => Cow::Borrowed(b),
        ValueRef::Integer(i) => Cow::Owned(i.to_be_bytes().to_vec()),
        ValueRef::Real(f) => Cow::Owned(f.to_be_bytes().to_vec()),
        ValueRef::Null => Cow::Borrowed(&[]),
    }
}

const DT_1900: conv::DateTime = conv::DateTime {
    days: conv::DAY_1900,
    ticks: 0,
    offset: None,
    has_date: true,
};

fn ref_dt(v: ValueRef) -> conv::DateTime {
    match v {
        ValueRef::Text(b) => conv::parse_datetime_bytes(b).unwrap_or(DT_1900),
        // Numbers are DATETIME-style days since 1900 (SQL Server's CAST(int AS datetime)).
        // (Wrapping, as release builds always did: absurd day numbers are clamped when encoded.)
        ValueRef::Integer(i) => conv::DateTime {
            days: conv::DAY_1900.wrapping_add(i),
            ..DT_1900
        },
        ValueRef::Real(f) => {
            let d = f.floor();
            conv::DateTime {
                days: conv::DAY_1900.wrapping_add(d as i64),
                ticks: ((f - d) * conv::TICKS_PER_DAY as f64) as u64,
                ..DT_1900
            }
        }
        _ => DT_1900,
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

/// Pads `out[start..]` with copies of `pad` until it is at least `n` bytes, then cuts it to `n`.
fn pad_tail(out: &mut Vec<u8>, start: usize, n: usize, pad: &[u8]) {
    while out.len() - start < n {
        out.extend_from_slice(pad);
    }
    out.truncate(start + n);
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
        Ty::Vector(_) => out.extend_from_slice(&0xFFFFu16.to_le_bytes()),
        _ => out.push(0),
    }
}

/// Eight ASCII bytes as eight UTF-16LE code units: each byte moved to the low half of its
/// own 16-bit lane (three shift-and-mask steps instead of a store per byte).
fn widen8(c: [u8; 8]) -> [u8; 16] {
    let mut x = u64::from_le_bytes(c) as u128;
    x = (x | (x << 32)) & 0x0000_0000_FFFF_FFFF_0000_0000_FFFF_FFFF;
    x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF_0000_FFFF_0000_FFFF;
    x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF_00FF_00FF_00FF_00FF;
    x.to_le_bytes()
}

/// UTF-16LE of UTF-8 text, appended. The ASCII prefix (often all of it) is widened byte by
/// byte; the rest is converted into room made once (a push per code unit cost as much again).
fn put_utf16(out: &mut Vec<u8>, b: &[u8]) {
    let ascii = b.iter().position(|&c| c >= 0x80).unwrap_or(b.len());
    out.reserve(ascii * 2);
    let mut chunks = b[..ascii].chunks_exact(8);
    for c in &mut chunks {
        out.extend_from_slice(&widen8(c.try_into().unwrap()));
    }
    for &c in chunks.remainder() {
        out.extend_from_slice(&[c, 0]);
    }
    if ascii == b.len() {
        return;
    }
    // A valid str has at most one UTF-16 unit per UTF-8 byte (a 4-byte char is 2 units).
    let rest = text_str(&b[ascii..]);
    let mut w = out.len();
    out.resize(w + rest.len() * 2, 0);
    for u in rest.encode_utf16() {
        out[w..w + 2].copy_from_slice(&u.to_le_bytes());
        w += 2;
    }
    out.truncate(w);
}

/// Appends the wire bytes of a character value of `ty`: text in the type's encoding (CP1252 or
/// UTF-8 for VARCHAR, UTF-16LE for NVARCHAR), or a blob's bytes as they are: a binary value
/// converted to a character type keeps its bytes in SQL Server, including UTF-16 that SQLite
/// text cannot hold (an unpaired surrogate from `CAST(0x3DD8 AS NVARCHAR(1))`). Padded (CHAR,
/// NCHAR) or cut (VARCHAR(n), NVARCHAR(n)) to the column's byte length.
fn put_text_bytes(out: &mut Vec<u8>, ty: Ty, v: ValueRef) {
    let start = out.len();
    match v {
        ValueRef::Blob(b) => out.extend_from_slice(b),
        ValueRef::Text(b) => match ty {
            Ty::Char(_, true) | Ty::VarChar(_, true) => out.extend_from_slice(b),
            Ty::Char(..) | Ty::VarChar(..) if b.is_ascii() => out.extend_from_slice(b),
            Ty::Char(..) | Ty::VarChar(..) => out.extend_from_slice(&conv::to_cp1252(&text_str(b))),
            _ => put_utf16(out, b),
        },
        other => {
            let s = ref_text(other);
            match ty {
                Ty::Char(_, true) | Ty::VarChar(_, true) => out.extend_from_slice(s.as_bytes()),
                Ty::Char(..) | Ty::VarChar(..) => out.extend_from_slice(&conv::to_cp1252(&s)),
                _ => put_utf16(out, s.as_bytes()),
            }
        }
    }
    match ty {
        Ty::Char(n, _) => pad_tail(out, start, n as usize, b" "),
        Ty::NChar(n) => pad_tail(out, start, n as usize * 2, &[0x20, 0]),
        Ty::VarChar(Some(n), _) => out.truncate(start + (out.len() - start).min(n as usize)),
        Ty::NVarChar(Some(n)) => out.truncate(start + (out.len() - start).min(n as usize * 2)),
        _ => {}
    }
}

/// A character value with a 2-byte length prefix (USHORTLEN types), encoded in place.
fn put_short_text(out: &mut Vec<u8>, ty: Ty, v: ValueRef) {
    let len_at = out.len();
    out.extend_from_slice(&[0, 0]);
    put_text_bytes(out, ty, v);
    let n = (out.len() - len_at - 2) as u16;
    out[len_at..len_at + 2].copy_from_slice(&n.to_le_bytes());
}

/// A binary value with a 2-byte length prefix, padded (BINARY(n)) or cut (VARBINARY(n)).
fn put_short_binary(out: &mut Vec<u8>, ty: Ty, v: ValueRef) {
    let len_at = out.len();
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&ref_blob(v));
    match ty {
        Ty::Binary(n) => pad_tail(out, len_at + 2, n as usize, &[0]),
        Ty::VarBinary(Some(n)) => {
            out.truncate(len_at + 2 + (out.len() - len_at - 2).min(n as usize))
        }
        _ => {}
    }
    let n = (out.len() - len_at - 2) as u16;
    out[len_at..len_at + 2].copy_from_slice(&n.to_le_bytes());
}

/// An owned copy of a borrowed value (text made valid UTF-8, see `text_str`).
fn owned(v: ValueRef) -> Value {
    match v {
        ValueRef::Text(b) => Value::Text(text_str(b).into_owned()),
        other => other.into(),
    }
}

/// Encodes a value (or NULL) for `ty` into a ROW token body.
pub fn put_value(out: &mut Vec<u8>, ty: Ty, v: &Value) {
    put_value_ref(out, ty, v.into());
}

/// `put_value` of a borrowed value (a current SQLite row's cell).
pub fn put_value_ref(out: &mut Vec<u8>, ty: Ty, v: ValueRef) {
    if matches!(v, ValueRef::Null) {
        put_null(out, ty);
        return;
    }
    match ty {
        Ty::Bit => out.extend_from_slice(&[1, (ref_i64(v) != 0) as u8]),
        Ty::TinyInt => out.extend_from_slice(&[1, ref_i64(v) as u8]),
        Ty::SmallInt => {
            out.push(2);
            out.extend_from_slice(&(ref_i64(v) as i16).to_le_bytes());
        }
        Ty::Int => {
            out.push(4);
            out.extend_from_slice(&(ref_i64(v) as i32).to_le_bytes());
        }
        Ty::BigInt => {
            out.push(8);
            out.extend_from_slice(&ref_i64(v).to_le_bytes());
        }
        Ty::Real => {
            out.push(4);
            out.extend_from_slice(&(ref_f64(v) as f32).to_le_bytes());
        }
        Ty::Float => {
            out.push(8);
            out.extend_from_slice(&ref_f64(v).to_le_bytes());
        }
        Ty::Decimal(p, s) | Ty::Numeric(p, s) => {
            let len = decimal_len(p);
            out.push(len);
            put_decimal_body(out, ref_dec(v).rescale(s), len);
        }
        Ty::Money => {
            let m = ref_dec(v).scaled_i64(4);
            out.push(8);
            out.extend_from_slice(&((m >> 32) as i32).to_le_bytes());
            out.extend_from_slice(&(m as u32).to_le_bytes());
        }
        Ty::SmallMoney => {
            out.push(4);
            out.extend_from_slice(&(ref_dec(v).scaled_i64(4) as i32).to_le_bytes());
        }
        Ty::Date => {
            out.push(3);
            put_date(out, ref_dt(v).days);
        }
        Ty::Time(s) => {
            let dt = ref_dt(v);
            let (_, t) = conv::round_ticks(0, dt.ticks, s);
            out.push(time_len(s) as u8);
            put_time(out, t % conv::TICKS_PER_DAY, s);
        }
        Ty::DateTime2(s) => {
            let dt = ref_dt(v);
            let days = if dt.has_date { dt.days } else { conv::DAY_1900 };
            let (d, t) = conv::round_ticks(days, dt.ticks, s);
            out.push(time_len(s) as u8 + 3);
            put_time(out, t, s);
            put_date(out, d);
        }
        Ty::DateTimeOffset(s) => {
            let dt = ref_dt(v);
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
            let dt = ref_dt(v);
            let days = if dt.has_date { dt.days } else { conv::DAY_1900 };
            // 1/300 s ticks, rounded.
            let mut t300 = (dt.ticks * 3 + 50_000) / 100_000;
            let mut d = days.wrapping_sub(conv::DAY_1900);
            if t300 >= 300 * 86_400 {
                t300 -= 300 * 86_400;
                d += 1;
            }
            out.push(8);
            out.extend_from_slice(&(d as i32).to_le_bytes());
            out.extend_from_slice(&(t300 as u32).to_le_bytes());
        }
        Ty::SmallDateTime => {
            let dt = ref_dt(v);
            let days = if dt.has_date { dt.days } else { conv::DAY_1900 };
            let mut mins = (dt.ticks + 300_000_000) / 600_000_000;
            let mut d = days.wrapping_sub(conv::DAY_1900);
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
                ValueRef::Blob(b) if b.len() == 16 => {
                    let mut a = [0u8; 16];
                    a.copy_from_slice(b);
                    a
                }
                _ => conv::parse_guid(&ref_text(v)).unwrap_or([0; 16]),
            };
            out.push(16);
            out.extend_from_slice(&conv::guid_wire(&g));
        }
        Ty::Char(..) | Ty::VarChar(Some(_), _) | Ty::NChar(_) | Ty::NVarChar(Some(_)) => {
            put_short_text(out, ty, v)
        }
        Ty::VarChar(None, _) | Ty::NVarChar(None) | Ty::Xml => {
            let mut b = Vec::new();
            put_text_bytes(&mut b, ty, v);
            put_plp(out, &b);
        }
        Ty::Binary(_) | Ty::VarBinary(Some(_)) => put_short_binary(out, ty, v),
        Ty::VarBinary(None) => put_plp(out, &ref_blob(v)),
        Ty::Variant => put_variant(out, &owned(v)),
        Ty::Vector(_) | Ty::Json => crate::vector::put_value(out, ty, v),
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

pub fn untag_variant(s: &str) -> Option<(Ty, Value)> {
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
    put_row_with(out, tys, &[], |i| (&vals[i]).into(), nbc);
}

/// `put_row` of values read by column index (`get(i)` for every column of `tys`, in order), e.g.
/// the cells of the current SQLite row, without copying them first.
///
/// An NBCROW needs its NULL bitmap before the values, but a ROW is shorter when nothing is
/// NULL: the row is written as NBCROW (bitmap, then the non-NULL values) and, if no bit got
/// set, turned into a ROW by dropping the bitmap. Each cell is read once.
///
/// `fixed[i]` (missing: false): column `i` is sent as its fixed-length type (`Column::fixed_len`,
/// a NOT NULL int as INT4), whose value has no length byte. Such a type has no NULL value of its
/// own, so a row holding one is always an NBCROW.
pub fn put_row_with<'a>(
    out: &mut Vec<u8>,
    tys: &[Ty],
    fixed: &[bool],
    mut get: impl FnMut(usize) -> ValueRef<'a>,
    nbc: bool,
) {
    let nbc = nbc || fixed.contains(&true);
    if !nbc {
        out.push(0xD1);
        for (i, &t) in tys.iter().enumerate() {
            put_value_ref(out, t, get(i));
        }
        return;
    }
    let start = out.len();
    let nbytes = tys.len().div_ceil(8);
    out.push(0xD2);
    out.resize(start + 1 + nbytes, 0);
    let mut any_null = false;
    for (i, &t) in tys.iter().enumerate() {
        match get(i) {
            ValueRef::Null => {
                out[start + 1 + i / 8] |= 1 << (i % 8);
                any_null = true;
            }
            v => {
                let at = out.len();
                put_value_ref(out, t, v);
                if fixed.get(i).copied().unwrap_or(false) {
                    // The length byte leads the value, which is the last thing written.
                    out.remove(at);
                }
            }
        }
    }
    if !any_null {
        out[start] = 0xD1;
        out.copy_within(start + 1 + nbytes.., start + 1);
        out.truncate(out.len() - nbytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_bytes(ty: Ty, v: &Value) -> Vec<u8> {
        let mut o = Vec::new();
        put_text_bytes(&mut o, ty, v.into());
        o
    }

    fn enc(ty: Ty, v: Value) -> Vec<u8> {
        let mut o = Vec::new();
        put_value(&mut o, ty, &v);
        o
    }

    #[test]
    fn widen8_is_utf16le_of_ascii() {
        let s = *b"Az09 ~\x7f!";
        let want: Vec<u8> = s.iter().flat_map(|&c| [c, 0]).collect();
        assert_eq!(widen8(s).to_vec(), want);
        let mut o = Vec::new();
        put_utf16(&mut o, "name 12345678 é中😀 x".as_bytes());
        let want: Vec<u8> = "name 12345678 é中😀 x"
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        assert_eq!(o, want);
    }

    #[test]
    fn decimal_encoding() {
        // 1.50 as DECIMAL(10,2): len 9, positive, 150 LE in 8 bytes.
        assert_eq!(
            enc(Ty::Decimal(10, 2), Value::Text("1.5".into())),
            vec![9, 1, 150, 0, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(
            enc(Ty::Decimal(1, 0), Value::Text("-7".into())),
            vec![5, 0, 7, 0, 0, 0]
        );
    }

    #[test]
    fn date_time_encoding() {
        // 0001-01-01 is day 0; 1900-01-01 is 693595 = 0x0A955B.
        assert_eq!(
            enc(Ty::Date, Value::Text("1900-01-01".into())),
            vec![3, 0x5B, 0x95, 0x0A]
        );
        // TIME(0) 00:00:01 -> 3 bytes of 1.
        assert_eq!(
            enc(Ty::Time(0), Value::Text("00:00:01".into())),
            vec![3, 1, 0, 0]
        );
        // DATETIME 1900-01-01 00:00:01 -> days 0, 300 ticks.
        assert_eq!(
            enc(Ty::DateTime, Value::Text("1900-01-01 00:00:01".into())),
            vec![8, 0, 0, 0, 0, 44, 1, 0, 0]
        );
        // DATETIMEOFFSET(0) 1900-01-01 01:00:00 +01:00 -> UTC midnight, offset 60.
        assert_eq!(
            enc(
                Ty::DateTimeOffset(0),
                Value::Text("1900-01-01 01:00:00 +01:00".into())
            ),
            vec![8, 0, 0, 0, 0x5B, 0x95, 0x0A, 60, 0]
        );
    }

    #[test]
    fn character_columns_send_blobs_as_they_are() {
        let t = Ty::NVarChar(Some(1));
        assert_eq!(
            text_bytes(t, &Value::Blob(vec![0x3D, 0xD8])),
            vec![0x3D, 0xD8]
        );
        assert_eq!(text_bytes(t, &Value::Text("ab".into())), vec![b'a', 0]);
        assert_eq!(
            text_bytes(Ty::VarChar(Some(4), false), &Value::Text("é€".into())),
            vec![0xE9, 0x80]
        );
        assert_eq!(
            text_bytes(Ty::NChar(2), &Value::Text("a".into())),
            vec![b'a', 0, 0x20, 0]
        );
    }

    #[test]
    fn plp_chunking() {
        let data = vec![1u8; PLP_CHUNK + 10];
        let o = enc(Ty::VarBinary(None), Value::Blob(data.clone()));
        assert_eq!(&o[..8], &(data.len() as u64).to_le_bytes());
        assert_eq!(&o[8..12], &(PLP_CHUNK as u32).to_le_bytes());
        let second = 12 + PLP_CHUNK;
        assert_eq!(&o[second..second + 4], &10u32.to_le_bytes());
        assert_eq!(&o[o.len() - 4..], &[0, 0, 0, 0]);
        assert_eq!(o.len(), 8 + 4 + PLP_CHUNK + 4 + 10 + 4);
    }

    #[test]
    fn money_and_guid() {
        // 1.0000 money = 10000 = 0x2710: hi 0, lo 0x2710.
        assert_eq!(
            enc(Ty::Money, Value::Text("1".into())),
            vec![8, 0, 0, 0, 0, 0x10, 0x27, 0, 0]
        );
        let g = enc(
            Ty::Guid,
            Value::Text("01020304-0506-0708-090A-0B0C0D0E0F10".into()),
        );
        assert_eq!(&g[..5], &[16, 4, 3, 2, 1]);
    }

    #[test]
    fn nbcrow_bitmap() {
        let mut o = Vec::new();
        put_row(
            &mut o,
            &[Ty::Int, Ty::NVarChar(Some(5))],
            &[Value::Integer(1), Value::Null],
            true,
        );
        assert_eq!(o, vec![0xD2, 0b10, 4, 1, 0, 0, 0]);
    }

    #[test]
    fn fixed_length_columns_have_no_length_byte() {
        let tys = [Ty::Int, Ty::BigInt, Ty::Bit, Ty::NVarChar(Some(5))];
        let row = |vals: [Value; 4]| {
            let mut o = Vec::new();
            put_row_with(
                &mut o,
                &tys,
                &[true, false, true],
                |i| (&vals[i]).into(),
                false,
            );
            o
        };
        let t = Value::Text("a".into());
        assert_eq!(
            row([
                Value::Integer(1),
                Value::Integer(2),
                Value::Integer(1),
                t.clone()
            ]),
            [&[
                0xD1, 1, 0, 0, 0, 8, 2, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, b'a', 0
            ][..]]
            .concat()
        );
        // A NULL (which a NOT NULL column should not hold) goes in an NBCROW's bitmap.
        assert_eq!(
            row([Value::Null, Value::Integer(2), Value::Integer(0), t]),
            vec![0xD2, 0b0001, 8, 2, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, b'a', 0]
        );
    }
}
