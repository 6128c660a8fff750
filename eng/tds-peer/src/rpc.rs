//! RPC requests (MS-TDS 2.2.6.6): parameter decoding for every TYPE_INFO the drivers send,
//! and the sp_prepexec / sp_execute / sp_executesql / sp_prepare / sp_unprepare contract.

// A wire parser: every cast that can lose sign or bits is decided (issue 36; a hostile
// client's numbers end in a TDS error or a closed connection, never a wrapped length/handle).
#![warn(
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    clippy::cast_possible_truncation
)]

use crate::conv;
use crate::io::proto_err;
use crate::resp::Resp;
use crate::sql::engine::{Decl, Engine, Out, Param};
use crate::sql::errors::SqlError;
use crate::token;
use crate::types::Ty;
use rusqlite::types::Value;
use std::io;

struct Cur<'a> {
    d: &'a [u8],
    p: usize,
}

impl<'a> Cur<'a> {
    fn take(&mut self, n: usize) -> io::Result<&'a [u8]> {
        let s = self
            .d
            .get(self.p..self.p + n)
            .ok_or_else(|| proto_err("truncated RPC request"))?;
        self.p += n;
        Ok(s)
    }
    fn u8(&mut self) -> io::Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> io::Result<u16> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> io::Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> io::Result<u64> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().unwrap()))
    }
    fn done(&self) -> bool {
        self.p >= self.d.len()
    }
    fn plp(&mut self) -> io::Result<Option<Vec<u8>>> {
        let total = self.u64()?;
        if total == u64::MAX {
            return Ok(None);
        }
        let mut v = Vec::new();
        loop {
            let n = self.u32()? as usize;
            if n == 0 {
                break;
            }
            v.extend_from_slice(self.take(n)?);
        }
        Ok(Some(v))
    }
}

fn le_int(b: &[u8]) -> i64 {
    match b.len() {
        1 => b[0] as i64,
        2 => i16::from_le_bytes([b[0], b[1]]) as i64,
        4 => i32::from_le_bytes(b.try_into().unwrap()) as i64,
        8 => i64::from_le_bytes(b.try_into().unwrap()),
        _ => 0,
    }
}

fn uint_le(b: &[u8]) -> u64 {
    b.iter().rev().fold(0u64, |a, &x| (a << 8) | x as u64)
}

fn time_text(b: &[u8], scale: u8) -> u64 {
    uint_le(b) * 10u64.pow(7 - scale as u32)
}

/// A DATE's 3 little-endian day bytes, as a day count (lossless: under 2^24). A day past
/// 9999-12-31 prints as a year of five digits, which `invalid_param` answers with SQL Server's
/// 8023 before anything runs (the session stays usable, as on SQL Server).
fn day_bytes(b: &[u8]) -> i64 {
    i64::from(u32::from_le_bytes([b[0], b[1], b[2], 0]))
}

fn money(b: &[u8]) -> Value {
    let v = if b.len() == 4 {
        i32::from_le_bytes(b.try_into().unwrap()) as i64
    } else {
        let hi = i32::from_le_bytes(b[0..4].try_into().unwrap()) as i64;
        let lo = u32::from_le_bytes(b[4..8].try_into().unwrap()) as i64;
        (hi << 32) | lo
    };
    Value::Text(
        conv::Dec {
            neg: v < 0,
            mag: v.unsigned_abs() as u128,
            scale: 4,
        }
        .to_string_fixed(),
    )
}

fn datetime(b: &[u8]) -> Value {
    let (days, ticks) = if b.len() == 4 {
        (
            u16::from_le_bytes([b[0], b[1]]) as i64,
            u16::from_le_bytes([b[2], b[3]]) as u64 * 600_000_000,
        )
    } else {
        let d = i32::from_le_bytes(b[0..4].try_into().unwrap()) as i64;
        let t = u32::from_le_bytes(b[4..8].try_into().unwrap()) as u64;
        // 1/300 s -> 100 ns, rounded to whole milliseconds like SQL Server's conversion.
        let ms = (t * 10 + 1) / 3;
        (d, ms * 10_000)
    };
    Value::Text(format!(
        "{} {}",
        conv::fmt_date(conv::DAY_1900 + days),
        conv::fmt_time(ticks, 7)
    ))
}

fn text_value(b: &[u8], wide: bool, coll: &[u8]) -> Value {
    if wide {
        Value::Text(conv::from_utf16(b))
    } else if coll.len() == 5 && coll[3] & 0x04 != 0 {
        Value::Text(String::from_utf8_lossy(b).into_owned())
    } else {
        Value::Text(conv::from_cp1252(b))
    }
}

/// One TYPE_INFO followed by its value, decoded as an RPC parameter's (table-valued parameters
/// and bulk-load rows carry their values in the same form).
pub fn decode_value(b: &[u8]) -> io::Result<Value> {
    read_value(&mut Cur { d: b, p: 0 }).map(|(_, v)| v)
}

/// Reads TYPE_INFO + value of one parameter: one arm per TDS type family.
fn read_value(c: &mut Cur) -> io::Result<(Option<Ty>, Value)> {
    let t = c.u8()?;
    let fixed = |c: &mut Cur, n: usize| c.take(n).map(|b| b.to_vec());
    match t {
        0x1F => Ok((None, Value::Null)),
        0x30 | 0x34 | 0x38 | 0x7F => int_value(c, t),
        0x32 => Ok((Some(Ty::Bit), Value::Integer((c.u8()? != 0) as i64))),
        0x3B => Ok((
            Some(Ty::Real),
            Value::Real(f32::from_le_bytes(fixed(c, 4)?.try_into().unwrap()) as f64),
        )),
        0x3E => Ok((
            Some(Ty::Float),
            Value::Real(f64::from_le_bytes(fixed(c, 8)?.try_into().unwrap())),
        )),
        0x3C => Ok((Some(Ty::Money), money(&fixed(c, 8)?))),
        0x7A => Ok((Some(Ty::SmallMoney), money(&fixed(c, 4)?))),
        0x3D => Ok((Some(Ty::DateTime), datetime(&fixed(c, 8)?))),
        0x3A => Ok((Some(Ty::SmallDateTime), datetime(&fixed(c, 4)?))),
        0x26 | 0x68 | 0x6D | 0x6E | 0x6F | 0x24 => nullable_fixed(c, t),
        0x6A | 0x6C | 0x37 | 0x3F => decimal_value(c, t),
        0x28 => date_value(c),
        0x29..=0x2B => time_family(c, t),
        0xA7 | 0xAF | 0xE7 | 0xEF | 0xA5 | 0xAD => short_text_or_binary(c, t),
        0x23 | 0x63 | 0x22 => long_text_or_image(c, t),
        0xF1 => xml_value(c),
        0x62 => variant_value(c),
        0xF4 | 0xF5 => {
            let (ty, v, used) = crate::vector::read_value(t, &c.d[c.p..]).map_err(proto_err)?;
            c.p += used;
            Ok((Some(ty), v))
        }
        other => Err(proto_err(format!(
            "unsupported parameter type {other:#04x}"
        ))),
    }
}

/// A fixed-length integer (INT1/2/4/8).
fn int_value(c: &mut Cur, t: u8) -> io::Result<(Option<Ty>, Value)> {
    let n = match t {
        0x30 => 1,
        0x34 => 2,
        0x38 => 4,
        _ => 8,
    };
    let ty = [Ty::TinyInt, Ty::SmallInt, Ty::Int, Ty::BigInt]
        [[1, 2, 4, 8].iter().position(|&x| x == n).unwrap()];
    Ok((Some(ty), Value::Integer(le_int(c.take(n)?))))
}

/// INTN, BITN, FLTN, MONEYN, DATETIMEN, GUID: a length byte, then a value of one of its type's lengths (0: NULL).
fn nullable_fixed(c: &mut Cur, t: u8) -> io::Result<(Option<Ty>, Value)> {
    let max = c.u8()?;
    let len = c.u8()? as usize;
    // The value's length must be one its type has (or 0 for NULL): the decoders below
    // index the bytes by it (a FLTN of 3 bytes or a GUID of 5 panicked: fuzz/peer_rpc).
    let lengths: &[usize] = match t {
        0x26 => &[1, 2, 4, 8],
        0x68 => &[1],
        0x6D..=0x6F => &[4, 8],
        _ => &[16],
    };
    if len != 0 && !lengths.contains(&len) {
        return Err(proto_err(format!(
            "RPC parameter of type {t:#04x} with a {len}-byte value"
        )));
    }
    let b = c.take(len)?;
    let ty = match (t, max) {
        (0x26, 1) => Ty::TinyInt,
        (0x26, 2) => Ty::SmallInt,
        (0x26, 4) => Ty::Int,
        (0x26, _) => Ty::BigInt,
        (0x68, _) => Ty::Bit,
        (0x6D, 4) => Ty::Real,
        (0x6D, _) => Ty::Float,
        (0x6E, 4) => Ty::SmallMoney,
        (0x6E, _) => Ty::Money,
        (0x6F, 4) => Ty::SmallDateTime,
        (0x6F, _) => Ty::DateTime,
        _ => Ty::Guid,
    };
    let v = if len == 0 {
        Value::Null
    } else {
        match t {
            0x26 => Value::Integer(le_int(b)),
            0x68 => Value::Integer((b[0] != 0) as i64),
            0x6D if len == 4 => Value::Real(f32::from_le_bytes(b.try_into().unwrap()) as f64),
            0x6D => Value::Real(f64::from_le_bytes(b.try_into().unwrap())),
            0x6E => money(b),
            0x6F => datetime(b),
            _ => {
                let mut a = [0u8; 16];
                a.copy_from_slice(&b[..16]);
                Value::Text(conv::fmt_guid(&conv::guid_wire(&a)))
            }
        }
    };
    Ok((Some(ty), v))
}

/// DECIMAL/NUMERIC: precision, scale, then sign + magnitude.
fn decimal_value(c: &mut Cur, t: u8) -> io::Result<(Option<Ty>, Value)> {
    let _max = c.u8()?;
    let p = c.u8()?;
    let s = c.u8()?;
    let len = c.u8()? as usize;
    // Sign byte + at most 16 magnitude bytes (a longer one overran the buffer below).
    if len == 1 || len > 17 {
        return Err(proto_err(format!(
            "RPC decimal parameter with a {len}-byte value"
        )));
    }
    let b = c.take(len)?;
    let ty = if t == 0x6C {
        Ty::Numeric(p, s)
    } else {
        Ty::Decimal(p, s)
    };
    Ok(if len == 0 {
        (Some(ty), Value::Null)
    } else {
        let mut m = [0u8; 16];
        m[..len - 1].copy_from_slice(&b[1..]);
        let d = conv::Dec {
            neg: b[0] == 0,
            mag: u128::from_le_bytes(m),
            scale: s,
        };
        (Some(ty), Value::Text(d.to_string_fixed()))
    })
}

/// DATE: 3 bytes of days (0: NULL).
fn date_value(c: &mut Cur) -> io::Result<(Option<Ty>, Value)> {
    let len = c.u8()? as usize;
    if len != 0 && len != 3 {
        return Err(proto_err(format!(
            "RPC date parameter with a {len}-byte value"
        )));
    }
    let b = c.take(len)?;
    Ok((
        Some(Ty::Date),
        if len == 0 {
            Value::Null
        } else {
            Value::Text(conv::fmt_date(day_bytes(b)))
        },
    ))
}

/// TIME, DATETIME2, DATETIMEOFFSET: scale, then time bytes for the scale, the date and the
/// offset.
fn time_family(c: &mut Cur, t: u8) -> io::Result<(Option<Ty>, Value)> {
    let scale = c.u8()?.min(7);
    let len = c.u8()? as usize;
    let b = c.take(len)?;
    let tl = match scale {
        0..=2 => 3,
        3..=4 => 4,
        _ => 5,
    };
    let ty = match t {
        0x29 => Ty::Time(scale),
        0x2A => Ty::DateTime2(scale),
        _ => Ty::DateTimeOffset(scale),
    };
    if len == 0 {
        return Ok((Some(ty), Value::Null));
    }
    // Time bytes for the scale, then 3 date bytes, then 2 offset bytes: anything else
    // sliced past the value (fuzz/peer_packet, fuzz/peer_rpc).
    let want = match t {
        0x29 => tl,
        0x2A => tl + 3,
        _ => tl + 5,
    };
    if len != want {
        return Err(proto_err(format!(
            "RPC parameter of type {t:#04x} scale {scale} with a {len}-byte value"
        )));
    }
    let ticks = time_text(&b[..tl], scale);
    // 5 bytes at scale 7 reach 12.7 days: a time of day past midnight is not a TIME.
    if ticks >= conv::TICKS_PER_DAY {
        return Err(proto_err(format!(
            "RPC parameter of type {t:#04x} with a time of {ticks} ticks, past a day"
        )));
    }
    let v = match t {
        0x29 => conv::fmt_time(ticks, 7),
        0x2A => format!(
            "{} {}",
            conv::fmt_date(day_bytes(&b[tl..tl + 3])),
            conv::fmt_time(ticks, 7)
        ),
        _ => {
            let days = day_bytes(&b[tl..tl + 3]);
            let off = i16::from_le_bytes([b[tl + 3], b[tl + 4]]);
            let local = days as i128 * conv::TICKS_PER_DAY as i128
                + ticks as i128
                + off as i128 * 600_000_000;
            // Days within a day of a valid DATE, ticks within one day: both fit.
            let ld = i64::try_from(local.div_euclid(conv::TICKS_PER_DAY as i128))
                .map_err(|_| proto_err("RPC datetimeoffset parameter out of range"))?;
            let lt = u64::try_from(local.rem_euclid(conv::TICKS_PER_DAY as i128))
                .map_err(|_| proto_err("RPC datetimeoffset parameter out of range"))?;
            format!(
                "{} {} {}",
                conv::fmt_date(ld),
                conv::fmt_time(lt, 7),
                conv::fmt_offset(off)
            )
        }
    };
    Ok((Some(ty), Value::Text(v)))
}

/// (N)VARCHAR, (N)CHAR, VARBINARY, BINARY: max length (0xFFFF: PLP), collation for text.
fn short_text_or_binary(c: &mut Cur, t: u8) -> io::Result<(Option<Ty>, Value)> {
    let max = c.u16()?;
    let coll = if matches!(t, 0xA5 | 0xAD) {
        Vec::new()
    } else {
        c.take(5)?.to_vec()
    };
    let wide = matches!(t, 0xE7 | 0xEF);
    let utf8 = coll.len() == 5 && coll[3] & 0x04 != 0;
    let ty = match (t, max) {
        (0xA7, 0xFFFF) => Ty::VarChar(None, utf8),
        (0xA7, n) => Ty::VarChar(Some(n.max(1)), utf8),
        (0xAF, n) => Ty::Char(n.max(1), utf8),
        (0xE7, 0xFFFF) => Ty::NVarChar(None),
        (0xE7, n) => Ty::NVarChar(Some((n / 2).max(1))),
        (0xEF, n) => Ty::NChar((n / 2).max(1)),
        (0xA5, 0xFFFF) => Ty::VarBinary(None),
        (0xA5, n) => Ty::VarBinary(Some(n.max(1))),
        (_, n) => Ty::Binary(n.max(1)),
    };
    let bytes = if max == 0xFFFF {
        c.plp()?
    } else {
        let n = c.u16()?;
        if n == 0xFFFF {
            None
        } else {
            Some(c.take(n as usize)?.to_vec())
        }
    };
    let v = match bytes {
        None => Value::Null,
        Some(b) if matches!(t, 0xA5 | 0xAD) => Value::Blob(b),
        Some(b) => text_value(&b, wide, &coll),
    };
    Ok((Some(ty), v))
}

/// TEXT, NTEXT, IMAGE: the legacy long types.
fn long_text_or_image(c: &mut Cur, t: u8) -> io::Result<(Option<Ty>, Value)> {
    let _max = c.u32()?;
    let coll = if t == 0x22 {
        Vec::new()
    } else {
        c.take(5)?.to_vec()
    };
    let n = c.u32()?;
    let ty = match t {
        0x23 => Ty::VarChar(None, false),
        0x63 => Ty::NVarChar(None),
        _ => Ty::VarBinary(None),
    };
    Ok(if n == u32::MAX {
        (Some(ty), Value::Null)
    } else {
        let b = c.take(n as usize)?;
        (
            Some(ty),
            if t == 0x22 {
                Value::Blob(b.to_vec())
            } else {
                text_value(b, t == 0x63, &coll)
            },
        )
    })
}

/// XML: optional schema names, then PLP UTF-16.
fn xml_value(c: &mut Cur) -> io::Result<(Option<Ty>, Value)> {
    if c.u8()? == 1 {
        let n = c.u8()? as usize;
        c.take(2 * n)?;
        let n = c.u8()? as usize;
        c.take(2 * n)?;
        let n = c.u16()? as usize;
        c.take(2 * n)?;
    }
    Ok((
        Some(Ty::Xml),
        c.plp()?
            .map(|b| Value::Text(conv::from_utf16(&b)))
            .unwrap_or(Value::Null),
    ))
}

/// SQL_VARIANT: base type, properties, data.
fn variant_value(c: &mut Cur) -> io::Result<(Option<Ty>, Value)> {
    let _max = c.u32()?;
    let n = c.u32()? as usize;
    if n == 0 {
        return Ok((Some(Ty::Variant), Value::Null));
    }
    let b = c.take(n)?;
    // Base type, property count, properties, data: a value shorter than its own
    // header indexed past its end (fuzz/peer_rpc).
    if n < 2 || 2 + b[1] as usize > n {
        return Err(proto_err(format!("RPC sql_variant parameter of {n} bytes")));
    }
    let base = b[0];
    let props = b[1] as usize;
    let data = &b[2 + props..];
    let v = match base {
        0x30 | 0x34 | 0x38 | 0x7F => Value::Integer(le_int(data)),
        0x3E => Value::Real(f64::from_le_bytes(data.try_into().unwrap_or([0; 8]))),
        0xE7 | 0xEF => Value::Text(conv::from_utf16(data)),
        0xA7 | 0xAF => Value::Text(conv::from_cp1252(data)),
        _ => Value::Blob(data.to_vec()),
    };
    Ok((Some(Ty::Variant), v))
}

pub enum Proc {
    Id(u16),
    Name(String),
}

pub struct Rpc {
    pub proc: Proc,
    pub params: Vec<Param>,
    /// Last RPC of the request (its DONEPROC has no DONE_MORE).
    pub last: bool,
}

/// Parses an RPC request: one or more RPCs separated by a batch flag (0xFF, 0xFE or 0x80):
/// msodbcsql sends a parameter array (executemany) as one request with one RPC per row.
pub fn parse(data: &[u8]) -> io::Result<Vec<Rpc>> {
    let mut c = Cur { d: data, p: 0 };
    let hl = c.u32()? as usize;
    c.p = hl.max(4).min(data.len());
    let mut out = Vec::new();
    loop {
        let nl = c.u16()?;
        let proc = if nl == 0xFFFF {
            Proc::Id(c.u16()?)
        } else {
            Proc::Name(conv::from_utf16(c.take(2 * nl as usize)?))
        };
        let _flags = c.u16()?;
        let mut params = Vec::new();
        let mut more = false;
        while !c.done() {
            let b = c.d[c.p];
            if b == 0xFF || b == 0x80 || b == 0xFE {
                c.p += 1;
                more = !c.done();
                break;
            }
            let n = c.u8()? as usize;
            let name = conv::from_utf16(c.take(2 * n)?);
            let status = c.u8()?;
            if c.d.get(c.p) == Some(&0xF3) {
                let (table, end) = crate::tvp::parse(c.d, c.p, decode_value)?;
                c.p = end;
                params.push(Param {
                    name,
                    ty: None,
                    value: Value::Null,
                    output: false,
                    table: Some(std::sync::Arc::new(table)),
                });
                continue;
            }
            let (ty, value) = read_value(&mut c)?;
            params.push(Param {
                name,
                ty,
                value,
                output: status & 0x01 != 0,
                table: None,
            });
        }
        out.push(Rpc {
            proc,
            params,
            last: !more,
        });
        if !more {
            return Ok(out);
        }
    }
}

/// `@P1 int,@P2 nvarchar(50)` -> [(name, type)].
fn parse_decl(s: &str) -> Vec<(String, Option<Ty>)> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for ch in s.chars().chain(std::iter::once(',')) {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                let t = cur.trim();
                if let Some((name, ty)) = t.split_once(char::is_whitespace) {
                    let ty = ty
                        .trim()
                        .trim_end_matches("OUTPUT")
                        .trim_end_matches("output")
                        .trim_end_matches("OUT")
                        .trim();
                    out.push((name.to_string(), Ty::parse(ty)));
                }
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    out
}

/// parse_decl, remembering the last declaration (executemany repeats it for every row).
fn declared(engine: &mut Engine, text: String) -> Decl {
    match &engine.declared {
        Some((t, d)) if *t == text => d.clone(),
        _ => {
            let d = parse_decl(&text);
            engine.declared = Some((text, d.clone()));
            d
        }
    }
}

fn text_param(p: Option<&Param>) -> String {
    p.map(|p| crate::token::value::as_text(&p.value))
        .unwrap_or_default()
}

/// Binds values to names from the declaration (by position when names are absent).
fn bind(decl: &[(String, Option<Ty>)], values: &[Param]) -> Vec<Param> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let (name, dty) = if v.name.is_empty() {
                decl.get(i).cloned().unwrap_or_default()
            } else {
                decl.iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(&v.name))
                    .cloned()
                    .unwrap_or((v.name.clone(), None))
            };
            Param {
                name,
                ty: widen(dty.or(v.ty), &v.value),
                value: v.value.clone(),
                output: v.output,
                table: v.table.clone(),
            }
        })
        .collect()
}

/// Some drivers declare `nvarchar(4000)` but send a longer LOB value (FreeTDS): type the
/// parameter as `(max)` then, instead of truncating it.
fn widen(ty: Option<Ty>, v: &Value) -> Option<Ty> {
    match (ty, v) {
        (Some(Ty::NVarChar(Some(n))), Value::Text(s)) if s.encode_utf16().count() > n as usize => {
            Some(Ty::NVarChar(None))
        }
        (Some(Ty::VarChar(Some(n), u)), Value::Text(s)) if s.len() > n as usize => {
            Some(Ty::VarChar(None, u))
        }
        (Some(Ty::VarBinary(Some(n))), Value::Blob(b)) if b.len() > n as usize => {
            Some(Ty::VarBinary(None))
        }
        _ => ty,
    }
}

/// TDS_PEER_TRACE set: log every RPC to stderr (read once; the lookup allocates).
fn tracing() -> bool {
    static TRACE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TRACE.get_or_init(|| std::env::var_os("TDS_PEER_TRACE").is_some())
}

/// Serves one RPC request: results, RETURNSTATUS, RETURNVALUE(@handle) where applicable, DONEPROC.
pub fn handle(engine: &mut Engine, rpc: Rpc, r: &mut Resp) -> io::Result<()> {
    let more = !rpc.last;
    if tracing() {
        let name = match &rpc.proc {
            Proc::Id(i) => format!("#{i}"),
            Proc::Name(n) => n.clone(),
        };
        let params: Vec<_> = rpc
            .params
            .iter()
            .map(|p| (&p.name, p.ty, p.output))
            .collect();
        eprintln!("tds-peer: rpc {name} {params:?}");
    }
    if let Some(e) = invalid_param(&rpc.params) {
        return fail_proc(r, more, &e);
    }
    let id = match &rpc.proc {
        Proc::Id(i) => *i,
        Proc::Name(full) => {
            let n = full.to_ascii_lowercase().replace(['[', ']'], "");
            let n = n.rsplit('.').next().unwrap_or("").to_string();
            match n.as_str() {
                "sp_executesql" => 10,
                "sp_prepare" => 11,
                "sp_execute" => 12,
                "sp_prepexec" => 13,
                "sp_unprepare" => 15,
                _ if crate::sql::sysprocs::is_system_proc(&n) => {
                    // The whole name: a database part (`[tempdb].[sys].sp_tables`) matters.
                    return engine.call_system_rpc(full, &rpc.params, more, r);
                }
                _ if engine.lookup_proc(&n).is_some() => {
                    let def = engine.lookup_proc(&n).unwrap();
                    return engine.call_proc_rpc(&n, def, &rpc.params, more, None, r);
                }
                _ => {
                    let e =
                        SqlError::new(2812, 16, format!("Could not find stored procedure '{n}'."));
                    return fail_proc(r, more, &e);
                }
            }
        }
    };
    let p = &rpc.params;
    let (stmt, decl, values, handle): (String, Decl, &[Param], Option<i32>) = match id {
        10 => (
            text_param(p.first()),
            declared(engine, text_param(p.get(1))),
            p.get(2..).unwrap_or(&[]),
            None,
        ),
        11 | 13 => {
            let h = engine.next_handle;
            engine.next_handle += 1;
            let stmt = text_param(p.get(2));
            let decl = parse_decl(&text_param(p.get(1)));
            engine.handles.insert(h, (stmt.clone(), decl.clone()));
            if id == 11 {
                return finish_proc(r, more, Some(h), false);
            }
            (stmt, decl, p.get(3..).unwrap_or(&[]), Some(h))
        }
        // sp_prepexecrpc @handle OUTPUT, @rpcname, params…: Driver 18's prepared call of a
        // procedure (pyodbc `{call p(?)}` with a table-valued parameter).
        14 => {
            let h = engine.next_handle;
            engine.next_handle += 1;
            let name = crate::sql::statement::proc_name_of(&text_param(p.get(1)));
            engine
                .handles
                .insert(h, (format!("{RPC_HANDLE}{name}"), Vec::new()));
            return call_by_name(engine, &name, p.get(2..).unwrap_or(&[]), more, Some(h), r);
        }
        12 => {
            // A handle past i32 is no handle (it would wrap onto a live one): not found.
            let given = p
                .first()
                .map_or(0, |x| crate::token::value::as_i64(&x.value));
            let h = i32::try_from(given).unwrap_or(0);
            if let Some(name) = engine
                .handles
                .get(&h)
                .and_then(|(s, _)| s.strip_prefix(RPC_HANDLE))
                .map(str::to_string)
            {
                return call_by_name(engine, &name, p.get(1..).unwrap_or(&[]), more, None, r);
            }
            match engine.handles.get(&h).cloned() {
                Some((s, d)) => (s, d, p.get(1..).unwrap_or(&[]), None),
                None => {
                    let e = SqlError::new(
                        8179,
                        16,
                        format!("Could not find prepared statement with handle {given}."),
                    );
                    return fail_proc(r, more, &e);
                }
            }
        }
        15 => {
            // A handle past i32 names no prepared statement (wrapped, it could free one).
            if let Some(h) = p.first()
                && let Ok(h) = i32::try_from(crate::token::value::as_i64(&h.value))
            {
                engine.handles.remove(&h);
            }
            return finish_proc(r, more, None, false);
        }
        other => {
            let e = SqlError::new(
                2812,
                16,
                format!(
                    "tds-peer does not implement system procedure id {other} (server-side cursors are not supported)."
                ),
            );
            return fail_proc(r, more, &e);
        }
    };
    let bound = bind(&decl, values);
    if tracing() {
        eprintln!(
            "tds-peer: rpc decl={decl:?} params={:?}",
            bound
                .iter()
                .map(|p| (&p.name, p.ty, crate::token::value::as_text(&p.value).len()))
                .collect::<Vec<_>>()
        );
    }
    if crate::sql::insert_discard::discarded(engine, &stmt, r)? {
        return finish_proc(r, more, handle, false);
    }
    let err = engine.run(&stmt, &bound, true, r)?;
    if r.attn_acked {
        return Ok(());
    }
    finish_proc(r, more, handle, err)
}

/// Marks a prepared handle of sp_prepexecrpc: the text after it is the procedure's name.
const RPC_HANDLE: &str = "\u{0}rpc:";

/// Calls a stored procedure by name with RPC parameters (results, RETURNSTATUS, RETURNVALUEs
/// with the handle first when given, DONEPROC).
fn call_by_name(
    engine: &mut Engine,
    name: &str,
    params: &[Param],
    more: bool,
    handle: Option<i32>,
    r: &mut Resp,
) -> io::Result<()> {
    match engine.lookup_proc(name) {
        Some(def) => engine.call_proc_rpc(name, def, params, more, handle, r),
        None => {
            let e = SqlError::new(
                2812,
                16,
                format!("Could not find stored procedure '{name}'."),
            );
            fail_proc(r, more, &e)
        }
    }
}

/// A date/datetime2/datetimeoffset parameter whose day count is past 9999-12-31 (3,652,058
/// days from 0001-01-01): its decoded text has a year of five digits or more.
fn day_out_of_range(p: &Param) -> Option<&'static str> {
    let name = match p.ty? {
        Ty::Date => "date",
        Ty::DateTime2(_) => "datetime2",
        Ty::DateTimeOffset(_) => "datetimeoffset",
        _ => return None,
    };
    match &p.value {
        Value::Text(t) if t.split('-').next().is_some_and(|y| y.len() > 4) => Some(name),
        _ => None,
    }
}

/// SQL Server checks RPC parameter values before running anything: a float/real NaN or
/// infinity (no such FLOAT value exists), or a date whose day count is past 9999-12-31,
/// rejects the whole RPC with 8023.
fn invalid_param(params: &[Param]) -> Option<SqlError> {
    let (i, p, ty) = params.iter().enumerate().find_map(|(i, p)| match p.value {
        Value::Real(f) if !f.is_finite() => Some((
            i,
            p,
            if p.ty == Some(Ty::Real) {
                "real"
            } else {
                "float"
            },
        )),
        _ => day_out_of_range(p).map(|t| (i, p, t)),
    })?;
    Some(SqlError::new(
        8023,
        16,
        format!(
            "The incoming tabular data stream (TDS) remote procedure call (RPC) protocol stream is \
             incorrect. Parameter {} (\"{}\"): The supplied value is not a valid instance of data \
             type {ty}. Check the source data for invalid values. An example of an invalid value is \
             data of numeric type with scale greater than precision.",
            i + 1,
            p.name
        ),
    ))
}

/// Ends an RPC that failed before running: ERROR, RETURNSTATUS 1, DONEPROC(DONE_ERROR).
fn fail_proc(r: &mut Resp, more: bool, e: &SqlError) -> io::Result<()> {
    let mut out = Out::new(true);
    out.error(r, e)?;
    out.finish(r)?;
    finish_proc(r, more, None, true)
}

/// The end of a procedure call: RETURNSTATUS, `@handle` for the prepare procedures, DONEPROC.
fn finish_proc(r: &mut Resp, more: bool, handle: Option<i32>, err: bool) -> io::Result<()> {
    r.put(&token::proc_end(more, handle, err))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An RPC request (no ALL_HEADERS) calling procedure id 10 with one unnamed parameter whose
    /// TYPE_INFO and value are `param`.
    fn one_param_rpc(param: &[u8]) -> Vec<u8> {
        let mut d = vec![4, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 0, 0, 0];
        d.extend_from_slice(param);
        d
    }

    /// Found by fuzz/peer_rpc and fuzz/peer_packet: a nullable fixed-size type (INTN, FLTN,
    /// MONEYN, DATETIMN, GUID) with a value length its type cannot have, or a DECIMAL longer
    /// than 17 bytes, panicked on a slice or `try_into().unwrap()`. Now a protocol error.
    #[test]
    fn impossible_value_lengths_are_protocol_errors() {
        let bad: &[&[u8]] = &[
            &[0x6D, 8, 3, 1, 2, 3],                      // FLTN of 3 bytes
            &[0x24, 16, 5, 1, 2, 3, 4, 5],               // GUID of 5
            &[0x6E, 8, 5, 1, 2, 3, 4, 5],                // MONEYN of 5
            &[0x6F, 8, 6, 1, 2, 3, 4, 5, 6],             // DATETIMN of 6
            &[0x26, 8, 3, 1, 2, 3],                      // INTN of 3
            &[0x68, 1, 2, 1, 1],                         // BITN of 2
            &[0x6A, 17, 38, 2, 1, 1],                    // DECIMAL of 1 byte (sign only)
            &[0x29, 7, 2, 1, 2],                         // TIME(7) of 2 bytes (needs 5)
            &[0x2A, 7, 6, 1, 2, 3, 4, 5, 6],             // DATETIME2(7) of 6 (needs 8)
            &[0x2B, 0, 4, 1, 2, 3, 4],                   // DATETIMEOFFSET(0) of 4 (needs 8)
            &[0x28, 2, 1, 2],                            // DATE of 2
            &[0x62, 0, 0, 0, 0, 1, 0, 0, 0, 0x38],       // sql_variant of 1 byte
            &[0x62, 0, 0, 0, 0, 3, 0, 0, 0, 0x38, 9, 0], // properties past its end
        ];
        for param in bad {
            assert!(parse(&one_param_rpc(param)).is_err(), "{param:?}");
        }
        let mut long_decimal = vec![0x6A, 17, 38, 2, 40, 1];
        long_decimal.extend([7u8; 39]);
        assert!(parse(&one_param_rpc(&long_decimal)).is_err());
        // The lengths the types do have still parse.
        let mut fltn = vec![0x6D, 8, 8];
        fltn.extend(2.5f64.to_le_bytes());
        let rpcs = parse(&one_param_rpc(&fltn)).unwrap();
        assert_eq!(rpcs[0].params[0].value, Value::Real(2.5));
        let rpcs = parse(&one_param_rpc(&[0x6A, 17, 10, 2, 5, 1, 0x39, 0x30, 0, 0])).unwrap();
        assert_eq!(rpcs[0].params[0].value, Value::Text("123.45".into()));
    }

    /// A TIME past midnight (5 time bytes reach 12.7 days) is refused, not stored as text no
    /// TIME can hold ("25:00:00"): the peer closes the connection where SQL Server answers 8023
    /// (a limit its README states). A DATE past 9999-12-31 (3 day bytes reach year 45000) gets
    /// SQL Server's 8023 and the session goes on.
    #[test]
    fn times_past_a_day_are_protocol_errors_and_days_past_9999_are_8023() {
        let bad: &[&[u8]] = &[
            &[0x29, 7, 5, 0, 0, 0, 0, 0xFF], // TIME(7) 1.1e12 ticks
            &[0x2A, 7, 8, 0, 0xC0, 0x69, 0x2A, 0xC9, 0, 0, 0], // DATETIME2 at 24:00:00
        ];
        for param in bad {
            assert!(parse(&one_param_rpc(param)).is_err(), "{param:?}");
        }
        // Days past 9999-12-31 parse, and `invalid_param` answers them with 8023.
        let past: &[&[u8]] = &[
            &[0x28, 3, 0xFF, 0xFF, 0xFF], // DATE day 16777215
            &[0x28, 3, 0xDB, 0xB9, 0x37], // DATE day 3652059
            &[0x2B, 7, 10, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0, 0], // DTO day 16777215
        ];
        for param in past {
            let rpcs = parse(&one_param_rpc(param)).unwrap();
            let e = invalid_param(&rpcs[0].params).expect("8023");
            assert_eq!((e.number, e.class), (8023, 16), "{param:?}");
        }
        // The last day and the last tick of a day still parse.
        let rpcs = parse(&one_param_rpc(&[0x28, 3, 0xDA, 0xB9, 0x37])).unwrap();
        assert_eq!(rpcs[0].params[0].value, Value::Text("9999-12-31".into()));
        let last = (conv::TICKS_PER_DAY - 1).to_le_bytes();
        let mut time = vec![0x29, 7, 5];
        time.extend_from_slice(&last[..5]);
        let rpcs = parse(&one_param_rpc(&time)).unwrap();
        assert_eq!(
            rpcs[0].params[0].value,
            Value::Text("23:59:59.9999999".into())
        );
    }

    #[test]
    fn decl_parsing() {
        let d = parse_decl("@P1 int,@P2 nvarchar(50),@P3 decimal(10, 2) OUTPUT");
        assert_eq!(
            d,
            vec![
                ("@P1".into(), Some(Ty::Int)),
                ("@P2".into(), Some(Ty::NVarChar(Some(50)))),
                ("@P3".into(), Some(Ty::Decimal(10, 2)))
            ]
        );
    }

    #[test]
    fn non_finite_floats_are_invalid() {
        let p = |ty, v| Param {
            name: "@x".into(),
            ty: Some(ty),
            value: Value::Real(v),
            output: false,
            table: None,
        };
        assert!(invalid_param(&[p(Ty::Float, 1.5), p(Ty::Real, -0.0)]).is_none());
        let e = invalid_param(&[p(Ty::Float, 1.5), p(Ty::Real, f64::NAN)]).unwrap();
        assert_eq!((e.number, e.class), (8023, 16));
        assert!(e.msg.contains("Parameter 2 (\"@x\")") && e.msg.contains("data type real."));
        assert!(invalid_param(&[p(Ty::Float, f64::NEG_INFINITY)]).is_some());
    }

    #[test]
    fn decode_params() {
        // @P1 DECIMALN(10,2) = -1.50; @P2 DATETIMEOFFSETN(7) = 1900-01-01 00:00 UTC +01:00
        let mut d = vec![0u8; 4];
        d[0] = 4;
        d.extend_from_slice(&[0xFF, 0xFF, 13, 0, 0, 0]);
        d.extend_from_slice(&[
            3, b'@', 0, b'P', 0, b'1', 0, 0, 0x6A, 9, 10, 2, 5, 0, 150, 0, 0, 0,
        ]);
        d.extend_from_slice(&[0, 0, 0x2B, 7, 10, 0, 0, 0, 0, 0, 0x5B, 0x95, 0x0A, 60, 0]);
        let rpc = parse(&d).unwrap().remove(0);
        assert!(matches!(rpc.proc, Proc::Id(13)));
        assert_eq!(rpc.params[0].value, Value::Text("-1.50".into()));
        assert_eq!(rpc.params[0].ty, Some(Ty::Decimal(10, 2)));
        assert_eq!(
            rpc.params[1].value,
            Value::Text("1900-01-01 01:00:00.0000000 +01:00".into())
        );
    }
}
