//! SQL Server 2025's VECTOR and JSON types on the wire: the LOGIN7 feature extensions a client
//! asks for them with, the binary vector payload, the JSON-text downgrade SQL Server sends to a
//! client that did not ask, and the implicit conversion from JSON-array text.
//!
//! What the real clients send (captured on this machine, `captures/vector.md`): Driver 18.6
//! with `VectorTypeSupport=v1` adds FeatureExt 0x0E (VECTORSUPPORT) with version 1 and no
//! 0x0D (JSONSUPPORT); `v2` is refused by the driver itself; without the keyword, FreeTDS
//! 1.3 and mssql-python 1.16 send neither. So only Driver 18 with `v1` ever sees 0xF5 from
//! this peer; everyone else reads `varchar(max)` text, as from SQL Server 2025.
//!
//! Stored form (SQLite): a VECTOR cell holds the binary payload (a BLOB) when it came in
//! binary (a native parameter, bcp, CAST) or the JSON text it was inserted as; both are read
//! by `floats_of`, and the column's CHECK (`sql::vector::fits`) proved either readable with the
//! column's dimension count. A JSON cell holds its text.

use crate::token::value::put_plp;
use crate::types::Ty;
use rusqlite::types::ValueRef;
use std::cell::Cell;

/// LOGIN7 FeatureExt / FEATUREEXTACK ids.
pub const FEATURE_JSON: u8 = 0x0D;
pub const FEATURE_VECTOR: u8 = 0x0E;
/// The highest versions the peer speaks: VECTOR 1 is float32 only (2 adds float16, which the
/// peer does not store), JSON 1.
pub const VECTOR_VERSION: u8 = 1;
pub const JSON_VERSION: u8 = 1;
/// TDS type bytes.
pub const TYPE_JSON: u8 = 0xF4;
pub const TYPE_VECTOR: u8 = 0xF5;
/// Largest float32 dimension count SQL Server allows.
pub const MAX_DIMS: u16 = 1998;
/// Payload header: layout format 0xA9, layout version 1, u16 dimensions, element type, 3 zeros.
pub const HEADER: usize = 8;

/// What one connection negotiated (0: not asked for, else the acknowledged version).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Features {
    pub vector: u8,
    pub json: u8,
    /// UTF8_SUPPORT: a downgraded JSON column is `varchar(max)` UTF-8, else `nvarchar(max)`.
    pub utf8: bool,
}

thread_local! {
    /// The negotiated features of the connection this thread serves (one thread serves one
    /// connection, session.rs), read where TYPE_INFO and values are written, so that every
    /// path that sends a column (streamed, fetched, RETURNVALUE, cached bytes of this
    /// connection) downgrades alike without passing the session down.
    static SESSION: Cell<Features> = const { Cell::new(Features { vector: 0, json: 0, utf8: false }) };
}

pub fn set_session(f: Features) {
    SESSION.with(|s| s.set(f));
}

pub fn session() -> Features {
    SESSION.with(Cell::get)
}

/// Records one FeatureExt entry of LOGIN7 (the version a client asks for).
pub fn note_feature(asked: &mut Features, id: u8, data: &[u8]) {
    let v = data.first().copied().unwrap_or(0);
    match id {
        FEATURE_VECTOR => asked.vector = v,
        FEATURE_JSON => asked.json = v,
        _ => {}
    }
}

/// The versions agreed: the lower of the client's and the peer's; 0 for what was not asked.
pub fn negotiate(asked: Features) -> Features {
    Features {
        vector: asked.vector.min(VECTOR_VERSION),
        json: asked.json.min(JSON_VERSION),
        utf8: asked.utf8,
    }
}

/// FEATUREEXTACK entries for the negotiated features: only what the client asked for (a client
/// treats an acknowledgement it did not ask for as a protocol error).
pub fn acks(f: Features) -> Vec<(u8, [u8; 1])> {
    let mut v = Vec::new();
    if f.vector > 0 {
        v.push((FEATURE_VECTOR, [f.vector]));
    }
    if f.json > 0 {
        v.push((FEATURE_JSON, [f.json]));
    }
    v
}

/// The type this connection is sent for `ty`: `varchar(max)` for a VECTOR to a client without
/// VECTORSUPPORT; `varchar(max)` UTF-8 (with UTF8_SUPPORT) or `nvarchar(max)` for a JSON
/// without JSONSUPPORT. None: sent as it is.
pub fn downgraded(ty: Ty) -> Option<Ty> {
    let s = session();
    match ty {
        Ty::Vector(_) if s.vector == 0 => Some(Ty::VarChar(None, false)),
        Ty::Json if s.json == 0 && s.utf8 => Some(Ty::VarChar(None, true)),
        Ty::Json if s.json == 0 => Some(Ty::NVarChar(None)),
        _ => None,
    }
}

/// Does the column go as PLP on this connection (JSON always; a VECTOR when downgraded)?
pub fn is_plp(ty: Ty) -> bool {
    match ty {
        Ty::Json => true,
        Ty::Vector(_) => downgraded(ty).is_some(),
        _ => false,
    }
}

/// `vector(n[, float32])` / `json` as declared (Ty::parse): None for a dimension count outside
/// 1..=1998 or another element type (float16 is not stored by the peer).
pub fn parse_decl(name: &str, args: &[String]) -> Option<Ty> {
    if name == "json" {
        return Some(Ty::Json);
    }
    let n = args.first()?.trim().parse::<u16>().ok()?;
    let elem_ok = args
        .get(1)
        .is_none_or(|e| e.trim().eq_ignore_ascii_case("float32"));
    ((1..=MAX_DIMS).contains(&n) && elem_ok).then_some(Ty::Vector(n))
}

/// Bytes of a float32 payload of `n` dimensions.
pub fn payload_len(n: u16) -> usize {
    HEADER + 4 * n as usize
}

/// TYPE_INFO of a VECTOR or JSON column as this connection is sent it.
pub fn write_type_info(ty: Ty, out: &mut Vec<u8>) {
    if let Some(d) = downgraded(ty) {
        return d.write_type_info(out);
    }
    match ty {
        Ty::Vector(n) => {
            out.push(TYPE_VECTOR);
            out.extend_from_slice(&(payload_len(n) as u16).to_le_bytes());
            out.push(0); // element type: float32
        }
        _ => out.push(TYPE_JSON),
    }
}

/// The payload of `vals` (float32).
pub fn encode(vals: &[f32]) -> Vec<u8> {
    let mut v = Vec::with_capacity(HEADER + 4 * vals.len());
    v.extend_from_slice(&[0xA9, 0x01]);
    v.extend_from_slice(&(vals.len() as u16).to_le_bytes());
    v.extend_from_slice(&[0, 0, 0, 0]);
    for f in vals {
        v.extend_from_slice(&f.to_le_bytes());
    }
    v
}

/// The dimension count of a well-formed float32 payload.
pub fn payload_dims(b: &[u8]) -> Option<u16> {
    if b.len() < HEADER || b[0] != 0xA9 || b[1] != 0x01 || b[4] != 0 {
        return None;
    }
    let n = u16::from_le_bytes([b[2], b[3]]);
    (n >= 1 && b.len() == payload_len(n)).then_some(n)
}

/// The elements of a payload.
pub fn decode(b: &[u8]) -> Result<Vec<f32>, String> {
    let Some(_) = payload_dims(b) else {
        return Err(format!(
            "The binary vector of {} bytes is not a valid float32 vector.",
            b.len()
        ));
    };
    Ok(b[HEADER..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// SQL Server's conversion of JSON-array text to a vector: a JSON array of numbers, each one
/// a finite float32. (SQL Server's exact messages for the failures are not known here.)
pub fn parse_text(s: &str) -> Result<Vec<f32>, String> {
    let bad = || "Error converting data type varchar to vector.".to_string();
    let t = s.trim();
    let inner = t
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .ok_or_else(bad)?;
    if inner.trim().is_empty() {
        return Err(bad());
    }
    inner
        .split(',')
        .map(|x| {
            let x = x.trim();
            // JSON numbers only: no NaN/Infinity words, no hex, no leading '+'.
            if x.is_empty() || !x.bytes().all(|c| c.is_ascii_digit() || b"-.eE+".contains(&c)) || x.starts_with('+') {
                return Err(bad());
            }
            let d: f64 = x.parse().map_err(|_| bad())?;
            let f = d as f32;
            if !f.is_finite() {
                return Err(format!(
                    "Arithmetic overflow error converting the value '{x}' to a float32 vector element."
                ));
            }
            Ok(f)
        })
        .collect()
}

/// A stored or bound vector value: payload bytes or JSON-array text.
pub fn floats_of(v: ValueRef) -> Result<Vec<f32>, String> {
    match v {
        ValueRef::Blob(b) => decode(b),
        ValueRef::Text(t) => parse_text(&String::from_utf8_lossy(t)),
        ValueRef::Null => Err("NULL vector".into()),
        _ => Err("Operand type clash: a number is incompatible with vector".into()),
    }
}

/// One element as SQL Server writes it: `%.7e` with a signed three-digit exponent
/// (`1.0000000e+000`, `-3.4028235e+038`), 8 significant digits, rounded from the float's exact
/// value.
///
/// A 768-dimension vector is 768 of these per row, so the usual case is done in f64
/// arithmetic (the float32 scaled to 8 integer digits: its error is far below 1e-6 of a unit),
/// and only a value that lands within 1e-6 of a rounding tie takes the exact (slow) formatter.
pub fn fmt_element(out: &mut String, f: f32) {
    let v = f as f64;
    if v != 0.0 {
        let a = v.abs();
        let mut e = decimal_exponent(a);
        let mut scaled = a * pow10(7 - e);
        if scaled >= 1e8 {
            e += 1;
            scaled /= 10.0;
        } else if scaled < 1e7 {
            e -= 1;
            scaled *= 10.0;
        }
        let frac = scaled - scaled.floor();
        if (1e7..1e8).contains(&scaled) && (frac - 0.5).abs() > 1e-6 {
            let mut digits = scaled.round() as u64;
            if digits == 100_000_000 {
                digits = 10_000_000;
                e += 1;
            }
            put_mantissa(out, f.is_sign_negative(), digits);
            put_exponent(out, e);
            return;
        }
    }
    exact_element(out, f);
}

/// Powers of ten from 10^-POW10_BIAS up, each the f64 nearest to it (parsed once): a table
/// instead of `log10`/`powi` per element, which were most of a downgraded vector's cost.
const POW10_BIAS: i32 = 64;
static POW10: std::sync::LazyLock<Vec<f64>> = std::sync::LazyLock::new(|| {
    (-POW10_BIAS..=POW10_BIAS)
        .map(|k| format!("1e{k}").parse().unwrap_or(f64::NAN))
        .collect()
});

fn pow10(k: i32) -> f64 {
    POW10[(k + POW10_BIAS) as usize]
}

/// floor(log10(a)) of a positive float32's value (10^-46 < a < 10^39): estimated from the binary
/// exponent, then corrected against the table (the estimate is at most one off).
fn decimal_exponent(a: f64) -> i32 {
    let e2 = ((a.to_bits() >> 52) & 0x7FF) as i32 - 1023;
    let mut e = (e2 as f64 * std::f64::consts::LOG10_2).floor() as i32;
    if a >= pow10(e + 1) {
        e += 1;
    } else if a < pow10(e) {
        e -= 1;
    }
    e
}

/// `d.ddddddd` of 8 digits (`digits` in 10^7..10^8).
fn put_mantissa(out: &mut String, negative: bool, mut digits: u64) {
    let mut d = [b'0'; 9];
    for i in (2..9).rev() {
        d[i] = b'0' + (digits % 10) as u8;
        digits /= 10;
    }
    d[0] = b'0' + digits as u8;
    d[1] = b'.';
    if negative {
        out.push('-');
    }
    out.push_str(std::str::from_utf8(&d).unwrap_or("0.0000000"));
}

fn put_exponent(out: &mut String, e: i32) {
    out.push('e');
    out.push(if e < 0 { '-' } else { '+' });
    let a = e.unsigned_abs();
    out.push(char::from(b'0' + (a / 100 % 10) as u8));
    out.push(char::from(b'0' + (a / 10 % 10) as u8));
    out.push(char::from(b'0' + (a % 10) as u8));
}

/// `fmt_element` through Rust's exact formatter (zeros, and values next to a rounding tie).
fn exact_element(out: &mut String, f: f32) {
    let s = format!("{f:.7e}");
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    out.push_str(m);
    put_exponent(out, e.parse().unwrap_or(0));
}

/// The JSON text SQL Server sends for a vector to a client without VECTORSUPPORT.
pub fn to_text(vals: &[f32]) -> String {
    let mut s = String::with_capacity(2 + vals.len() * 15);
    s.push('[');
    for (i, &f) in vals.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        fmt_element(&mut s, f);
    }
    s.push(']');
    s
}

/// One value of a VECTOR or JSON column in a ROW token, as this connection is sent it.
pub fn put_value(out: &mut Vec<u8>, ty: Ty, v: ValueRef) {
    match (ty, downgraded(ty)) {
        (Ty::Vector(n), None) => {
            // A stored payload of the column's dimension goes as it is.
            let owned;
            let bytes = match v {
                ValueRef::Blob(b) if payload_dims(b) == Some(n) => b,
                _ => {
                    owned = encode(&floats_or_zeros(v, n));
                    &owned[..]
                }
            };
            out.extend_from_slice(&(bytes.len() as u16).to_le_bytes());
            out.extend_from_slice(bytes);
        }
        (Ty::Vector(n), Some(_)) => put_plp(out, to_text(&floats_or_zeros(v, n)).as_bytes()),
        (_, Some(Ty::NVarChar(_))) => put_plp(out, &crate::conv::utf16(&json_text(v))),
        _ => put_plp(out, json_text(v).as_bytes()),
    }
}

/// The column's CHECK keeps unreadable values out; an expression that still makes one is sent
/// as zeros rather than as bytes the client would misread.
fn floats_or_zeros(v: ValueRef, n: u16) -> Vec<f32> {
    floats_of(v).unwrap_or_else(|_| vec![0.0; n as usize])
}

fn json_text(v: ValueRef) -> String {
    match v {
        ValueRef::Text(t) | ValueRef::Blob(t) => String::from_utf8_lossy(t).into_owned(),
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(f) => f.to_string(),
        ValueRef::Null => String::new(),
    }
}

/// Reads a 0xF5 or 0xF4 TYPE_INFO and its value (an RPC parameter, a TVP cell, a bulk-load
/// cell) from `d`: the type, the value (payload BLOB / JSON text) and the bytes used.
pub fn read_value(t: u8, d: &[u8]) -> Result<(Ty, rusqlite::types::Value, usize), String> {
    use rusqlite::types::Value;
    let short = || "truncated vector or JSON value".to_string();
    if t == TYPE_JSON {
        let (v, used) = read_plp(d).ok_or_else(short)?;
        let v = v.map_or(Value::Null, |b| {
            Value::Text(String::from_utf8_lossy(&b).into_owned())
        });
        return Ok((Ty::Json, v, used));
    }
    let head = d.get(..3).ok_or_else(short)?;
    let max = u16::from_le_bytes([head[0], head[1]]);
    if head[2] != 0 {
        return Err(format!(
            "vector element type {} is not supported by tds-peer (float32 only)",
            head[2]
        ));
    }
    let dims = (max as usize).saturating_sub(HEADER) / 4;
    let len = d.get(3..5).ok_or_else(short)?;
    let len = u16::from_le_bytes([len[0], len[1]]);
    if len == 0xFFFF {
        return Ok((Ty::Vector(dims as u16), Value::Null, 5));
    }
    let b = d.get(5..5 + len as usize).ok_or_else(short)?;
    Ok((
        Ty::Vector(dims as u16),
        Value::Blob(b.to_vec()),
        5 + len as usize,
    ))
}

/// A PLP value at the start of `d` (None for PLP NULL) and its length in bytes.
fn read_plp(d: &[u8]) -> Option<(Option<Vec<u8>>, usize)> {
    let total = u64::from_le_bytes(d.get(..8)?.try_into().ok()?);
    if total == u64::MAX {
        return Some((None, 8));
    }
    let mut p = 8;
    let mut v = Vec::new();
    loop {
        let n = u32::from_le_bytes(d.get(p..p + 4)?.try_into().ok()?) as usize;
        p += 4;
        if n == 0 {
            return Some((Some(v), p));
        }
        v.extend_from_slice(d.get(p..p + n)?);
        p += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_of_the_documented_example() {
        let p = encode(&[0.1, 2.0, 30.0]);
        assert_eq!(
            &p[..12],
            &[0xA9, 0x01, 0x03, 0, 0, 0, 0, 0, 0xCD, 0xCC, 0xCC, 0x3D]
        );
        assert_eq!(decode(&p).unwrap(), vec![0.1, 2.0, 30.0]);
        assert_eq!(payload_dims(&p), Some(3));
        assert_eq!(payload_dims(&p[..11]), None);
    }

    #[test]
    fn sql_server_number_format() {
        assert_eq!(to_text(&[1.0, 0.0]), "[1.0000000e+000,0.0000000e+000]");
        assert_eq!(to_text(&[-0.0]), "[-0.0000000e+000]");
        assert_eq!(to_text(&[f32::MAX]), "[3.4028235e+038]");
        assert_eq!(to_text(&[1e-45]), "[1.4012985e-045]");
        assert_eq!(to_text(&[0.1]), "[1.0000000e-001]");
    }

    #[test]
    fn the_fast_element_format_is_the_exact_one() {
        let mut x: u32 = 0x1234_5678;
        let check = |f: f32| {
            let (mut a, mut b) = (String::new(), String::new());
            fmt_element(&mut a, f);
            exact_element(&mut b, f);
            assert_eq!(a, b, "{f:e} ({:#x})", f.to_bits());
        };
        for bits in [
            1u32,
            0x007F_FFFF,
            0x0080_0000,
            0x7F7F_FFFF,
            0x3F80_0000,
            0x447A_0001,
            0x3DCC_CCCD,
        ] {
            check(f32::from_bits(bits));
            check(-f32::from_bits(bits));
        }
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let f = f32::from_bits(x);
            if f.is_finite() {
                check(f);
            }
        }
        for i in 0..100_000 {
            check(i as f32 * 0.001);
            check(i as f32);
        }
    }

    #[test]
    fn text_conversion() {
        assert_eq!(
            parse_text(" [1, -2.5e1 ,3e-2]").unwrap(),
            vec![1.0, -25.0, 0.03]
        );
        assert!(parse_text("[]").is_err());
        assert!(parse_text("[1,,2]").is_err());
        assert!(parse_text("[NaN]").is_err());
        assert!(parse_text("[1e39]").is_err());
        assert!(parse_text("1,2").is_err());
        assert!(parse_text("[\"1\"]").is_err());
    }

    #[test]
    fn negotiation_takes_the_lower_version_and_acks_only_what_was_asked() {
        let mut asked = Features::default();
        assert!(acks(negotiate(asked)).is_empty());
        note_feature(&mut asked, FEATURE_VECTOR, &[2]);
        let n = negotiate(asked);
        assert_eq!((n.vector, n.json), (1, 0));
        assert_eq!(acks(n), vec![(FEATURE_VECTOR, [1])]);
    }

    #[test]
    fn rpc_value() {
        let mut d = vec![20, 0, 0];
        d.extend_from_slice(&20u16.to_le_bytes());
        d.extend_from_slice(&encode(&[1.0, 2.0, 3.0]));
        let (ty, v, used) = read_value(TYPE_VECTOR, &d).unwrap();
        assert_eq!((ty, used), (Ty::Vector(3), 25));
        assert!(matches!(v, rusqlite::types::Value::Blob(b) if b.len() == 20));
        let (_, v, used) = read_value(TYPE_VECTOR, &[20, 0, 0, 0xFF, 0xFF]).unwrap();
        assert_eq!((v, used), (rusqlite::types::Value::Null, 5));
    }
}
