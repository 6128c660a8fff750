//! SQLite functions backing the rewritten T-SQL: `__cast` (CAST/CONVERT to a SQL Server type,
//! producing the canonical stored form), `__now`, `__newid`, `__len`, `__datalength`,
//! `__charindex`.

use super::ranges;
use crate::conv;
use crate::token::value::{as_f64, as_text, fmt_float};
use crate::types::Ty;
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::Value;
use rusqlite::{Connection, Error};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

fn user_err(msg: String) -> Error {
    Error::UserFunctionError(msg.into())
}

/// The days (0001-01-01 = 0) a date/time type holds: DATETIME starts at 1753-01-01,
/// SMALLDATETIME spans 1900-01-01..2079-06-06, the others 0001-01-01..9999-12-31.
fn day_range(ty: Ty) -> std::ops::RangeInclusive<i64> {
    match ty {
        Ty::DateTime => conv::days_from_civil(1753, 1, 1)..=conv::days_from_civil(9999, 12, 31),
        Ty::SmallDateTime => conv::DAY_1900..=conv::days_from_civil(2079, 6, 6),
        _ => 0..=conv::days_from_civil(9999, 12, 31),
    }
}

pub const DATE_CONV_ERR: &str =
    "Conversion failed when converting date and/or time from character string.";

fn dt_of(v: &Value) -> Result<conv::DateTime, Error> {
    match v {
        Value::Text(s) => conv::parse_datetime(s).ok_or_else(|| user_err(DATE_CONV_ERR.into())),
        Value::Integer(i) => Ok(conv::DateTime {
            days: conv::DAY_1900 + i,
            ticks: 0,
            offset: None,
            has_date: true,
        }),
        Value::Real(f) => {
            let d = f.floor();
            Ok(conv::DateTime {
                days: conv::DAY_1900 + d as i64,
                ticks: ((f - d) * conv::TICKS_PER_DAY as f64) as u64,
                offset: None,
                has_date: true,
            })
        }
        _ => Err(user_err(
            "Explicit conversion from data type varbinary to datetime is not allowed.".into(),
        )),
    }
}

/// Converts `v` into the canonical stored form of `ty`.
pub fn cast_value(v: Value, ty: Ty) -> Result<Value, Error> {
    cast_from(v, None, ty)
}

/// `cast_value` knowing the type of the value's expression (`from`), when the rewriter does:
/// character data converts to binary in its own encoding.
pub fn cast_from(v: Value, from: Option<Ty>, ty: Ty) -> Result<Value, Error> {
    if matches!(v, Value::Null) {
        return Ok(Value::Null);
    }
    if let Some(r) = super::vector::cast_from_vector(&v, from, ty) {
        return r;
    }
    // Every integer target is range-checked (ranges.rs): `f64 as i64` would saturate.
    let int_of = |v: &Value| -> Result<i64, Error> {
        match v {
            Value::Integer(i) => ranges::int_checked(*i, ty),
            Value::Real(f) => ranges::int_of_real(*f, from, ty),
            Value::Text(s) => {
                let t = s.trim();
                match t.parse::<i64>() {
                    Ok(i) => ranges::int_checked(i, ty),
                    Err(_) if ranges::is_integer_text(t) => Err(ranges::int_overflow(ty, None)),
                    Err(_) if t.eq_ignore_ascii_case("true") => Ok(1),
                    Err(_) if t.eq_ignore_ascii_case("false") => Ok(0),
                    Err(_) => Err(user_err(format!(
                        "Conversion failed when converting the varchar value '{s}' to data type {}.",
                        ty.name()
                    ))),
                }
            }
            Value::Blob(b) => Ok(b.iter().fold(0i64, |a, &x| (a << 8) | x as i64)),
            Value::Null => Ok(0),
        }
    };
    Ok(match ty {
        // bit takes any number: non-zero is 1, never an overflow.
        Ty::Bit => Value::Integer(match v {
            Value::Real(f) => f != 0.0,
            _ => int_of(&v)? != 0,
        } as i64),
        Ty::TinyInt | Ty::SmallInt | Ty::Int | Ty::BigInt => Value::Integer(int_of(&v)?),
        Ty::Real => Value::Real(as_f64(&v) as f32 as f64),
        Ty::Float => Value::Real(as_f64(&v)),
        Ty::Decimal(p, s) | Ty::Numeric(p, s) => {
            if let Value::Text(t) = &v
                && conv::parse_decimal(t).is_none()
            {
                return Err(user_err(format!("Error converting data type varchar to {}.", ty.name())));
            }
            Value::Text(ranges::decimal_checked(&v, from, p, s)?.to_string_fixed())
        }
        Ty::Money | Ty::SmallMoney => Value::Text(ranges::money_checked(&v, from, ty)?.to_string_fixed()),
        Ty::Date => Value::Text(conv::fmt_date(dt_of(&v)?.days)),
        Ty::Time(s) => {
            let d = dt_of(&v)?;
            let (_, t) = conv::round_ticks(0, d.ticks, s);
            Value::Text(conv::fmt_time(t % conv::TICKS_PER_DAY, 7))
        }
        Ty::DateTime2(_) | Ty::DateTime | Ty::SmallDateTime => {
            let d = dt_of(&v)?;
            let days = if d.has_date { d.days } else { conv::DAY_1900 };
            let s = match ty {
                Ty::DateTime2(s) => s,
                Ty::DateTime => 3,
                _ => 0,
            };
            let (days, t) = conv::round_ticks(days, d.ticks, s);
            if !day_range(ty).contains(&days) {
                return Err(user_err(format!(
                    "The conversion of a varchar data type to a {} data type resulted in an out-of-range value.",
                    ty.name()
                )));
            }
            Value::Text(format!("{} {}", conv::fmt_date(days), conv::fmt_time(t, 7)))
        }
        Ty::DateTimeOffset(s) => {
            let d = dt_of(&v)?;
            let days = if d.has_date { d.days } else { conv::DAY_1900 };
            let (days, t) = conv::round_ticks(days, d.ticks, s);
            let off = d.offset.unwrap_or(0);
            // SQL Server stores the UTC instant: local 0001-01-01 00:00 +14:00 is in year 0,
            // which no datetimeoffset holds (the peer used to shift it by a day on output).
            let utc = days as i128 * conv::TICKS_PER_DAY as i128 + t as i128 - off as i128 * 600_000_000;
            if !day_range(ty).contains(&(utc.div_euclid(conv::TICKS_PER_DAY as i128) as i64)) {
                return Err(user_err(DATE_CONV_ERR.into()));
            }
            Value::Text(format!("{} {} {}", conv::fmt_date(days), conv::fmt_time(t, 7), conv::fmt_offset(off)))
        }
        Ty::Guid => match &v {
            Value::Blob(b) if b.len() == 16 => {
                let mut a = [0u8; 16];
                a.copy_from_slice(b);
                Value::Text(conv::fmt_guid(&conv::guid_wire(&a)))
            }
            _ => Value::Text(conv::fmt_guid(&conv::parse_guid(&as_text(&v)).ok_or_else(|| user_err("Conversion failed when converting from a character string to uniqueidentifier.".into()))?)),
        },
        Ty::Char(..) | Ty::VarChar(..) | Ty::NChar(_) | Ty::NVarChar(_) | Ty::Xml => {
            let mut s = match &v {
                Value::Real(f) => fmt_float(*f),
                Value::Blob(b) => match binary_as_text(b, ty) {
                    Ok(s) => s,
                    // UTF-16 that SQLite text cannot hold: the bytes stay (value::text_bytes).
                    Err(raw) => return Ok(Value::Blob(raw)),
                },
                other => as_text(other),
            };
            let limit = match ty {
                Ty::Char(n, _) | Ty::VarChar(Some(n), _) | Ty::NChar(n) | Ty::NVarChar(Some(n)) => Some(n as usize),
                _ => None,
            };
            if let Some(n) = limit
                && s.chars().count() > n
            {
                s = s.chars().take(n).collect();
            }
            Value::Text(s)
        }
        Ty::Binary(_) | Ty::VarBinary(_) => match v {
            Value::Blob(b) => Value::Blob(b),
            Value::Text(s) => Value::Blob(text_as_binary(&s, from)),
            Value::Integer(i) => Value::Blob(i.to_be_bytes().to_vec()),
            Value::Real(f) => Value::Blob(f.to_be_bytes().to_vec()),
            Value::Null => Value::Null,
        },
        Ty::Variant => v,
        Ty::Vector(_) | Ty::Json => return super::vector::cast_to(v, ty),
    })
}

/// Binary data as a character type: UTF-16LE for NCHAR/NVARCHAR, else the code page's bytes.
/// Err holds UTF-16 with unpaired surrogates (whole code units, at most the type's length).
fn binary_as_text(b: &[u8], ty: Ty) -> Result<String, Vec<u8>> {
    match ty {
        Ty::NChar(_) | Ty::NVarChar(_) => {
            let units = b.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]]));
            char::decode_utf16(units)
                .collect::<Result<String, _>>()
                .map_err(|_| {
                    let n = match ty {
                        Ty::NChar(n) | Ty::NVarChar(Some(n)) => n as usize * 2,
                        _ => b.len(),
                    };
                    b[..b.len().min(n) & !1].to_vec()
                })
        }
        Ty::Char(_, false) | Ty::VarChar(_, false) => Ok(conv::from_cp1252(b)),
        _ => Ok(String::from_utf8_lossy(b).into_owned()),
    }
}

/// Character data as binary: the bytes of its type's encoding. SQLite text whose type the
/// rewriter does not know is taken as NVARCHAR, as untyped text results are.
fn text_as_binary(s: &str, from: Option<Ty>) -> Vec<u8> {
    match from {
        Some(Ty::Char(_, true) | Ty::VarChar(_, true)) => s.as_bytes().to_vec(),
        Some(Ty::Char(..) | Ty::VarChar(..)) => conv::to_cp1252(s),
        _ => conv::utf16(s),
    }
}

/// `__fits(value, type, table, column)`: the CHECK constraint of a typed column (see
/// `rewrite::create_table`). SQLite stores any value; SQL Server rejects a string or binary
/// value longer than the column (2628) and a number out of its range (220/8115), and fails to
/// convert text that is no number (245/8114).
pub fn fits(v: Value, ty: Ty, table: &str, column: &str) -> Result<bool, Error> {
    if let Some(r) = super::vector::fits(&v, ty) {
        return r;
    }
    if ty.range_checked() {
        ranges::stored_real_checked(&v, ty)?;
        if let Some((from, f)) = ranges::float_source(&v) {
            return cast_from(Value::Real(f), Some(from), ty).map(|_| true);
        }
        return cast_value(v, ty).map(|_| true);
    }
    let Some(n) = ty.length_limit().map(usize::from) else {
        return Ok(true);
    };
    let unit: fn(char) -> usize = match ty {
        Ty::NChar(_) | Ty::NVarChar(_) => char::len_utf16,
        Ty::Char(_, true) | Ty::VarChar(_, true) => char::len_utf8,
        // CP1252: one byte a character; binary: bytes.
        _ => |_| 1,
    };
    let truncated = match &v {
        // Trailing blanks are cut without an error, as in SQL Server.
        Value::Text(s) if s.trim_end_matches(' ').chars().map(unit).sum::<usize>() > n => {
            prefix_within(s, n, unit)
        }
        Value::Blob(b) if b.len() > n => conv::from_cp1252(&b[..n]),
        _ => return Ok(true),
    };
    Err(user_err(format!(
        "String or binary data would be truncated in table '{table}', column '{column}'. \
         Truncated value: '{truncated}'."
    )))
}

/// The longest prefix of `s` at most `n` units long.
fn prefix_within(s: &str, n: usize, unit: fn(char) -> usize) -> String {
    let mut used = 0;
    s.chars()
        .take_while(|&c| {
            used += unit(c);
            used <= n
        })
        .collect()
}

/// `__nz(divisor)`: T-SQL raises 8134 on a zero divisor where SQLite yields NULL.
fn nonzero_divisor(v: Value) -> Result<Value, Error> {
    let zero = match &v {
        Value::Integer(i) => *i == 0,
        Value::Real(f) => *f == 0.0,
        Value::Text(t) => conv::parse_decimal(t).is_some_and(|d| d.mag == 0),
        _ => false,
    };
    if zero {
        return Err(user_err("Divide by zero error encountered.".into()));
    }
    Ok(v)
}

fn parse_ty(name: &str) -> Result<Ty, Error> {
    Ty::parse(name).ok_or_else(|| user_err(format!("Type {name} is not a defined system type.")))
}

fn arg(ctx: &Context, i: usize) -> Value {
    if i >= ctx.len() {
        return Value::Null;
    }
    ctx.get::<Value>(i).unwrap_or(Value::Null)
}

/// Current time as (days since 0001-01-01, 100 ns ticks) in UTC (the peer reports UTC as local).
pub fn now() -> (i64, u64) {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let ticks = d.as_secs() as u128 * 10_000_000 + d.subsec_nanos() as u128 / 100;
    let days = (ticks / conv::TICKS_PER_DAY as u128) as i64 + 719_162;
    (days, (ticks % conv::TICKS_PER_DAY as u128) as u64)
}

static SEED: AtomicU64 = AtomicU64::new(0x9E37_79B9_7F4A_7C15);

/// A random-ish version-4 GUID (xorshift over time and a counter; no crypto needed).
pub fn newid() -> String {
    let (d, t) = now();
    let mut x =
        SEED.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed) ^ (d as u64).wrapping_mul(31) ^ t;
    let mut b = [0u8; 16];
    for chunk in b.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        chunk.copy_from_slice(&x.to_le_bytes());
    }
    b[6] = (b[6] & 0x0F) | 0x40;
    b[8] = (b[8] & 0x3F) | 0x80;
    conv::fmt_guid(&b)
}

pub fn register(db: &Connection) -> rusqlite::Result<()> {
    super::sysviews::register(db)?;
    super::rowversion::register(db)?;
    super::vector::register(db)?;
    super::json::register(db)?;
    super::decagg::register(db)?;
    let det = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    register_conversions(db, det)?;
    register_catalog_types(db, det)?;
    register_strings(db, det)?;
    register_math_and_dates(db, det)
}

thread_local! {
    /// The table `SET IDENTITY_INSERT … ON` names in this session (one thread serves one
    /// connection), for the identity triggers.
    static IDENTITY_INSERT: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
    /// The last value an identity trigger gave a row (taken by the INSERT that ran it).
    static IDENT_NOTE: std::cell::Cell<Option<i64>> = const { std::cell::Cell::new(None) };
}

/// Notes `SET IDENTITY_INSERT t ON|OFF` (the SQLite name of t, or None) for the triggers.
pub fn set_identity_insert(table: Option<String>) {
    IDENTITY_INSERT.with(|c| *c.borrow_mut() = table);
}

/// The value an identity trigger gave the last row the statement inserted, if one ran
/// (cleared by reading it).
pub fn take_identity_note() -> Option<i64> {
    IDENT_NOTE.with(|c| c.take())
}

/// CAST/CONVERT, the range checks of typed columns, the zero-divisor guard, the clock.
fn register_conversions(db: &Connection, det: FunctionFlags) -> rusqlite::Result<()> {
    // __cast(value, 'target type'[, 'source type'])
    for n_args in [2, 3] {
        db.create_scalar_function("__cast", n_args, det, |ctx| {
            let target: String = ctx.get(1)?;
            let from = if ctx.len() > 2 {
                Some(parse_ty(&ctx.get::<String>(2)?)?)
            } else {
                None
            };
            // A sql_variant converts from its base type and value (CAST(SERVERPROPERTY(…) AS
            // NVARCHAR(128)) is the product version, not the peer's tagged form).
            let (value, from) = match arg(ctx, 0) {
                Value::Text(s) => match crate::token::value::untag_variant(&s) {
                    Some((bty, v)) => (v, Some(bty)),
                    None => (Value::Text(s), from),
                },
                v => (v, from),
            };
            if let Some(base) = target.strip_prefix("sql_variant:") {
                let bty = parse_ty(base)?;
                return Ok(match cast_from(value, from, bty)? {
                    Value::Null => Value::Null,
                    v => Value::Text(crate::token::value::variant_tag(bty, &v)),
                });
            }
            cast_from(value, from, parse_ty(&target)?)
        })?;
    }
    db.create_scalar_function("__fits", 4, det, |ctx| {
        let ty = parse_ty(&ctx.get::<String>(1)?)?;
        fits(
            arg(ctx, 0),
            ty,
            &ctx.get::<String>(2)?,
            &ctx.get::<String>(3)?,
        )
    })?;
    db.create_scalar_function("__nz", 1, det, |ctx| nonzero_divisor(arg(ctx, 0)))?;
    // The identity trigger of an IDENTITY(seed, increment ≠ 1) table (constraints.rs): is
    // SET IDENTITY_INSERT on for it, and the value it gave the row it renumbered.
    db.create_scalar_function("__identity_insert", 1, FunctionFlags::SQLITE_UTF8, |ctx| {
        let t: String = ctx.get::<Option<String>>(0)?.unwrap_or_default();
        Ok(IDENTITY_INSERT.with(|c| {
            c.borrow()
                .as_deref()
                .is_some_and(|n| n.eq_ignore_ascii_case(&t))
        }))
    })?;
    db.create_scalar_function("__ident_note", 1, FunctionFlags::SQLITE_UTF8, |ctx| {
        let v = ctx.get::<Option<i64>>(0)?;
        IDENT_NOTE.with(|c| c.set(v));
        Ok(v)
    })?;
    // __ck(result, 'int'): integer arithmetic whose T-SQL result type the rewriter knows
    // (`optype.rs`). SQLite computes in 64 bits and turns an overflow into a REAL; SQL Server
    // raises 8115 when the result leaves its type.
    db.create_scalar_function("__ck", 2, det, |ctx| {
        let v = arg(ctx, 0);
        let ty = parse_ty(&ctx.get::<String>(1)?)?;
        match v {
            Value::Integer(i) if super::ranges::int_in(ty, i) => Ok(Value::Integer(i)),
            Value::Integer(_) | Value::Real(_) => Err(super::ranges::arith_overflow(ty)),
            v => Ok(v),
        }
    })?;
    db.create_scalar_function("__now", 1, FunctionFlags::SQLITE_UTF8, |ctx| {
        let mode: i64 = ctx.get(0)?;
        let (d, t) = now();
        let base = format!("{} {}", conv::fmt_date(d), conv::fmt_time(t, 7));
        Ok(if mode == 2 {
            format!("{base} +00:00")
        } else {
            base
        })
    })?;
    Ok(())
}

/// The SQL Server type name and character length of a SQLite declared type (catalog views).
fn register_catalog_types(db: &Connection, det: FunctionFlags) -> rusqlite::Result<()> {
    db.create_scalar_function("__typename", 1, det, |ctx| {
        let d: String = ctx.get::<Option<String>>(0)?.unwrap_or_default();
        if super::typemeta::is_rowversion_decl(&d) {
            return Ok(Some("timestamp".to_string()));
        }
        let ty = Ty::from_sqlite_decl(&d).or_else(|| Ty::parse(&d));
        Ok(ty.map(|t| t.name().split(['(', ' ']).next().unwrap_or("").to_string()))
    })?;
    db.create_scalar_function("__typelen", 1, det, |ctx| {
        let d: String = ctx.get::<Option<String>>(0)?.unwrap_or_default();
        // SQL Server lists no character length for timestamp (INFORMATION_SCHEMA.COLUMNS).
        if super::typemeta::is_rowversion_decl(&d) {
            return Ok(None);
        }
        Ok(match Ty::from_sqlite_decl(&d).or_else(|| Ty::parse(&d)) {
            Some(Ty::Char(n, _) | Ty::NChar(n)) => Some(n as i64),
            Some(Ty::VarChar(n, _) | Ty::NVarChar(n) | Ty::VarBinary(n)) => {
                Some(n.map(|v| v as i64).unwrap_or(-1))
            }
            Some(Ty::Binary(n)) => Some(n as i64),
            _ => None,
        })
    })?;
    Ok(())
}

/// NEWID and the string functions SQLite lacks or spells otherwise (LEN, DATALENGTH, …).
fn register_strings(db: &Connection, det: FunctionFlags) -> rusqlite::Result<()> {
    db.create_scalar_function("__newid", 0, FunctionFlags::SQLITE_UTF8, |_| Ok(newid()))?;
    db.create_scalar_function("__len", 1, det, |ctx| {
        Ok(match arg(ctx, 0) {
            Value::Null => None,
            Value::Blob(b) => Some(b.len() as i64),
            v => Some(as_text(&v).trim_end_matches(' ').chars().count() as i64),
        })
    })?;
    db.create_scalar_function("__datalength", 1, det, |ctx| {
        Ok(match arg(ctx, 0) {
            Value::Null => None,
            Value::Blob(b) => Some(b.len() as i64),
            Value::Integer(_) | Value::Real(_) => Some(8),
            Value::Text(s) => Some(s.encode_utf16().count() as i64 * 2),
        })
    })?;
    // QUOTENAME(s [, q]): s delimited with [] (or the quote q), its closing quote doubled;
    // NULL for more than 128 characters or another quote character.
    for n_args in [1, 2] {
        db.create_scalar_function("QUOTENAME", n_args, det, |ctx| {
            let s = match arg(ctx, 0) {
                Value::Null => return Ok(None),
                v => as_text(&v),
            };
            let q = if ctx.len() > 1 {
                match arg(ctx, 1) {
                    Value::Null => return Ok(None),
                    v => as_text(&v).chars().next().unwrap_or('['),
                }
            } else {
                '['
            };
            let (open, close) = match q {
                '[' | ']' => ('[', ']'),
                '"' => ('"', '"'),
                '\'' => ('\'', '\''),
                '`' => ('`', '`'),
                '(' | ')' => ('(', ')'),
                '<' | '>' => ('<', '>'),
                '{' | '}' => ('{', '}'),
                _ => return Ok(None),
            };
            if s.chars().count() > 128 {
                return Ok(None);
            }
            let doubled = s.replace(close, &format!("{close}{close}"));
            Ok(Some(format!("{open}{doubled}{close}")))
        })?;
    }
    db.create_scalar_function("REPLICATE", 2, det, |ctx| {
        let n: i64 = ctx.get::<Option<i64>>(1)?.unwrap_or(-1);
        Ok(match arg(ctx, 0) {
            // SQL Server: NULL for a NULL string or a negative count.
            Value::Null => Value::Null,
            _ if n < 0 => Value::Null,
            Value::Blob(b) => Value::Blob(b.repeat(n as usize)),
            v => Value::Text(as_text(&v).repeat(n as usize)),
        })
    })?;
    db.create_scalar_function("SPACE", 1, det, |ctx| {
        Ok(" ".repeat(ctx.get::<i64>(0)?.max(0) as usize))
    })?;
    db.create_scalar_function("LEFT", 2, det, |ctx| {
        let n = ctx.get::<i64>(1)?.max(0) as usize;
        Ok(match arg(ctx, 0) {
            Value::Null => None,
            v => Some(as_text(&v).chars().take(n).collect::<String>()),
        })
    })?;
    db.create_scalar_function("RIGHT", 2, det, |ctx| {
        let n = ctx.get::<i64>(1)?.max(0) as usize;
        Ok(match arg(ctx, 0) {
            Value::Null => None,
            v => {
                let c: Vec<char> = as_text(&v).chars().collect();
                Some(c[c.len().saturating_sub(n)..].iter().collect::<String>())
            }
        })
    })?;
    Ok(())
}

/// CEILING/FLOOR/POWER/SQRT, YEAR/MONTH/DAY, DATEPART/DATEADD/DATEDIFF, CHARINDEX.
fn register_math_and_dates(db: &Connection, det: FunctionFlags) -> rusqlite::Result<()> {
    db.create_scalar_function("CEILING", 1, det, |ctx| {
        Ok(ctx.get::<Option<f64>>(0)?.map(|f| f.ceil() as i64))
    })?;
    db.create_scalar_function("FLOOR", 1, det, |ctx| {
        Ok(ctx.get::<Option<f64>>(0)?.map(|f| f.floor() as i64))
    })?;
    db.create_scalar_function("POWER", 2, det, |ctx| {
        Ok(ctx.get::<f64>(0)?.powf(ctx.get::<f64>(1)?))
    })?;
    db.create_scalar_function("SQRT", 1, det, |ctx| Ok(ctx.get::<f64>(0)?.sqrt()))?;
    for (name, part) in [("YEAR", "year"), ("MONTH", "month"), ("DAY", "day")] {
        db.create_scalar_function(name, 1, det, move |ctx| datepart(part, &arg(ctx, 0)))?;
    }
    db.create_scalar_function("__datepart", 2, det, |ctx| {
        datepart(&ctx.get::<String>(0)?, &arg(ctx, 1))
    })?;
    db.create_scalar_function("__dateadd", 3, det, |ctx| {
        let part: String = ctx.get(0)?;
        let n: i64 = ctx.get::<Option<i64>>(1)?.unwrap_or(0);
        match arg(ctx, 2) {
            Value::Null => Ok(None),
            v => dateadd(&part, n, &v).map(Some),
        }
    })?;
    db.create_scalar_function("__datediff", 3, det, |ctx| {
        let part: String = ctx.get(0)?;
        let (a, b) = (arg(ctx, 1), arg(ctx, 2));
        if matches!(a, Value::Null) || matches!(b, Value::Null) {
            return Ok(None);
        }
        Ok(Some(
            unit_index(&part, &dt_of(&b)?)? - unit_index(&part, &dt_of(&a)?)?,
        ))
    })?;
    db.create_scalar_function("__charindex", -1, det, |ctx| {
        if !(2..=3).contains(&ctx.len()) {
            return Err(user_err(
                "The charindex function requires 2 to 3 arguments.".into(),
            ));
        }
        let needle = as_text(&arg(ctx, 0)).to_lowercase();
        let hay = as_text(&arg(ctx, 1)).to_lowercase();
        let start = if ctx.len() > 2 {
            ctx.get::<i64>(2).unwrap_or(1).max(1) as usize
        } else {
            1
        };
        let chars: Vec<char> = hay.chars().collect();
        let skip: String = chars.iter().skip(start - 1).collect();
        Ok(skip
            .find(&needle)
            .map(|p| (skip[..p].chars().count() + start) as i64)
            .unwrap_or(0))
    })?;
    Ok(())
}

fn norm_part(p: &str) -> &str {
    match p {
        "yy" | "yyyy" | "year" => "year",
        "qq" | "q" | "quarter" => "quarter",
        "mm" | "m" | "month" => "month",
        "dy" | "y" | "dayofyear" => "dayofyear",
        "dd" | "d" | "day" => "day",
        "wk" | "ww" | "week" => "week",
        "dw" | "w" | "weekday" => "weekday",
        "hh" | "hour" => "hour",
        "mi" | "n" | "minute" => "minute",
        "ss" | "s" | "second" => "second",
        "ms" | "millisecond" => "millisecond",
        "mcs" | "microsecond" => "microsecond",
        "ns" | "nanosecond" => "nanosecond",
        other => other,
    }
}

fn datepart(part: &str, v: &Value) -> Result<Option<i64>, Error> {
    if matches!(v, Value::Null) {
        return Ok(None);
    }
    let d = dt_of(v)?;
    let (y, m, dd) = conv::civil_from_days(d.days);
    let secs = (d.ticks / 10_000_000) as i64;
    Ok(Some(match norm_part(part) {
        "year" => y,
        "quarter" => (m as i64 - 1) / 3 + 1,
        "month" => m as i64,
        "day" => dd as i64,
        "dayofyear" => d.days - conv::days_from_civil(y, 1, 1) + 1,
        // 0001-01-01 was a Monday; SQL Server's default DATEFIRST 7 makes Sunday 1.
        "weekday" => (d.days + 1) % 7 + 1,
        "week" => {
            (d.days - conv::days_from_civil(y, 1, 1) + (conv::days_from_civil(y, 1, 1) + 1) % 7) / 7
                + 1
        }
        "hour" => secs / 3600,
        "minute" => secs / 60 % 60,
        "second" => secs % 60,
        "millisecond" => (d.ticks % 10_000_000 / 10_000) as i64,
        "microsecond" => (d.ticks % 10_000_000 / 10) as i64,
        "nanosecond" => (d.ticks % 10_000_000 * 100) as i64,
        other => {
            return Err(user_err(format!(
                "'{other}' is not a recognized datepart option."
            )));
        }
    }))
}

/// Number of `part` boundaries since 0001-01-01 (DATEDIFF counts boundaries crossed).
fn unit_index(part: &str, d: &conv::DateTime) -> Result<i64, Error> {
    let (y, m, _) = conv::civil_from_days(d.days);
    let t = d.days as i128 * conv::TICKS_PER_DAY as i128 + d.ticks as i128;
    Ok(match norm_part(part) {
        "year" => y,
        "quarter" => y * 4 + (m as i64 - 1) / 3,
        "month" => y * 12 + m as i64,
        "day" | "dayofyear" | "weekday" => d.days,
        "week" => (d.days + 1).div_euclid(7),
        "hour" => (t / 36_000_000_000) as i64,
        "minute" => (t / 600_000_000) as i64,
        "second" => (t / 10_000_000) as i64,
        "millisecond" => (t / 10_000) as i64,
        "microsecond" => (t / 10) as i64,
        "nanosecond" => (t * 100) as i64,
        other => {
            return Err(user_err(format!(
                "'{other}' is not a recognized datepart option."
            )));
        }
    })
}

fn dateadd(part: &str, n: i64, v: &Value) -> Result<String, Error> {
    let d = dt_of(v)?;
    let (mut days, mut ticks) = (d.days, d.ticks as i128);
    let add_months = |days: i64, months: i64| {
        let (y, m, dd) = conv::civil_from_days(days);
        let total = y * 12 + (m as i64 - 1) + months;
        let (ny, nm) = (total.div_euclid(12), total.rem_euclid(12) as u32 + 1);
        let last = (28..=31)
            .rev()
            .find(|&x| conv::civil_from_days(conv::days_from_civil(ny, nm, x)).1 == nm)
            .unwrap_or(28);
        conv::days_from_civil(ny, nm, dd.min(last))
    };
    let unit: i128 = match norm_part(part) {
        "year" => {
            days = add_months(days, n * 12);
            0
        }
        "quarter" => {
            days = add_months(days, n * 3);
            0
        }
        "month" => {
            days = add_months(days, n);
            0
        }
        "day" | "dayofyear" | "weekday" => conv::TICKS_PER_DAY as i128,
        "week" => 7 * conv::TICKS_PER_DAY as i128,
        "hour" => 36_000_000_000,
        "minute" => 600_000_000,
        "second" => 10_000_000,
        "millisecond" => 10_000,
        "microsecond" => 10,
        "nanosecond" => 0,
        other => {
            return Err(user_err(format!(
                "'{other}' is not a recognized dateadd option."
            )));
        }
    };
    if unit > 0 {
        let t = days as i128 * conv::TICKS_PER_DAY as i128 + ticks + unit * n as i128;
        days = t.div_euclid(conv::TICKS_PER_DAY as i128) as i64;
        ticks = t.rem_euclid(conv::TICKS_PER_DAY as i128);
    }
    let text = if !d.has_date {
        conv::fmt_time(ticks as u64, 7)
    } else if matches!(v, Value::Text(s) if !s.contains(':')) && ticks == 0 {
        conv::fmt_date(days)
    } else {
        format!(
            "{} {}",
            conv::fmt_date(days),
            conv::fmt_time(ticks as u64, 7)
        )
    };
    Ok(match d.offset {
        Some(o) => format!("{text} {}", conv::fmt_offset(o)),
        None => text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(r: Result<bool, Error>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn date_time_types_refuse_values_outside_their_range() {
        let cast = |s: &str, ty: &str| cast_value(Value::Text(s.into()), Ty::parse(ty).unwrap());
        assert!(cast("1753-01-01 00:00:00", "datetime").is_ok());
        assert!(
            msg(cast("1752-12-31 23:59:59", "datetime").map(|_| true)).contains("out-of-range")
        );
        assert!(cast("2079-06-06 23:59:00", "smalldatetime").is_ok());
        assert!(cast("2079-06-07 00:00:00", "smalldatetime").is_err());
        assert!(cast("0001-01-01 14:00:00 +14:00", "datetimeoffset(7)").is_ok());
        // UTC instants in year 0 and year 10000
        assert!(
            msg(cast("0001-01-01 00:00:00 +14:00", "datetimeoffset(7)").map(|_| true))
                .starts_with("Conversion failed")
        );
        assert!(cast("9999-12-31 23:59:00 -14:00", "datetimeoffset(7)").is_err());
        assert!(cast("0001-01-01 00:00:00", "datetime2(7)").is_ok());
    }

    #[test]
    fn fits_bounds_like_sql_server() {
        let f = |v: Value, ty: &str| fits(v, Ty::parse(ty).unwrap(), "master.dbo.t", "c");
        assert!(f(Value::Text("abcde   ".into()), "nvarchar(5)").unwrap());
        assert!(
            msg(f(Value::Text("ab😀cd".into()), "nvarchar(4)"))
                .ends_with("Truncated value: 'ab😀'.")
        );
        assert!(msg(f(Value::Text("é€".into()), "varchar(1)")).contains("column 'c'"));
        assert!(
            msg(f(
                Value::Text("éé".into()),
                "varchar(3) collate Latin1_General_100_CI_AS_SC_UTF8"
            ))
            .contains("'é'")
        );
        assert!(
            msg(f(Value::Blob(vec![1, 2, 3]), "varbinary(2)")).starts_with("String or binary data")
        );
        assert!(msg(f(Value::Integer(256), "tinyint")).contains("value = 256"));
        assert!(
            msg(f(Value::Text("12345.6".into()), "decimal(5,2)"))
                .starts_with("Arithmetic overflow")
        );
        assert!(f(Value::Text("999.994".into()), "decimal(5,2)").unwrap());
        assert!(f(Value::Null, "int").unwrap());
    }

    #[test]
    fn binary_and_character_data_convert_in_their_encoding() {
        let cast = |v: Value, from: Option<&str>, to: &str| {
            cast_from(
                v,
                from.map(|f| Ty::parse(f).unwrap()),
                Ty::parse(to).unwrap(),
            )
            .unwrap()
        };
        let text = |s: &str| Value::Text(s.into());
        let blob = |b: &[u8]| Value::Blob(b.to_vec());
        assert_eq!(
            cast(text("é"), Some("nvarchar(1)"), "varbinary(10)"),
            blob(&[0xE9, 0])
        );
        assert_eq!(cast(text("é"), None, "varbinary(10)"), blob(&[0xE9, 0]));
        assert_eq!(
            cast(text("é€"), Some("varchar(2)"), "varbinary(10)"),
            blob(&[0xE9, 0x80])
        );
        assert_eq!(cast(blob(&[0x41, 0]), None, "nvarchar(10)"), text("A"));
        assert_eq!(cast(blob(&[0xE9]), None, "varchar(10)"), text("é"));
        // An unpaired surrogate stays UTF-16 bytes, cut to the type's length.
        assert_eq!(
            cast(blob(&[0x3D, 0xD8, 0x41, 0]), None, "nvarchar(1)"),
            blob(&[0x3D, 0xD8])
        );
    }

    #[test]
    fn zero_divisors() {
        assert!(nonzero_divisor(Value::Integer(0)).is_err());
        assert!(nonzero_divisor(Value::Text("0.000".into())).is_err());
        assert_eq!(nonzero_divisor(Value::Real(0.5)).unwrap(), Value::Real(0.5));
        assert_eq!(nonzero_divisor(Value::Null).unwrap(), Value::Null);
    }
}
