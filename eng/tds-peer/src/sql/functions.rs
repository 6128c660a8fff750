//! SQLite functions backing the rewritten T-SQL: `__cast` (CAST/CONVERT to a SQL Server type,
//! producing the canonical stored form), `__now`, `__newid`, `__len`, `__datalength`,
//! `__charindex`.

use crate::conv;
use crate::token::value::{as_dec, as_f64, as_text, fmt_float};
use crate::types::Ty;
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::Value;
use rusqlite::{Connection, Error};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

fn user_err(msg: String) -> Error {
    Error::UserFunctionError(msg.into())
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
    if matches!(v, Value::Null) {
        return Ok(Value::Null);
    }
    let int_of = |v: &Value| -> Result<i64, Error> {
        match v {
            Value::Integer(i) => Ok(*i),
            Value::Real(f) => Ok(f.trunc() as i64),
            Value::Text(s) => {
                let t = s.trim();
                t.parse::<i64>().or_else(|_| if t.eq_ignore_ascii_case("true") { Ok(1) } else if t.eq_ignore_ascii_case("false") { Ok(0) } else { Err(()) }).map_err(|_| user_err(format!("Conversion failed when converting the varchar value '{s}' to data type int.")))
            }
            Value::Blob(b) => Ok(b.iter().fold(0i64, |a, &x| (a << 8) | x as i64)),
            Value::Null => Ok(0),
        }
    };
    Ok(match ty {
        Ty::Bit => Value::Integer((int_of(&v)? != 0) as i64),
        Ty::TinyInt | Ty::SmallInt | Ty::Int | Ty::BigInt => {
            let i = int_of(&v)?;
            let ok = match ty {
                Ty::TinyInt => (0..=255).contains(&i),
                Ty::SmallInt => i16::try_from(i).is_ok(),
                Ty::Int => i32::try_from(i).is_ok(),
                _ => true,
            };
            if !ok {
                return Err(user_err(format!("Arithmetic overflow error converting expression to data type {}.", ty.name())));
            }
            Value::Integer(i)
        }
        Ty::Real => Value::Real(as_f64(&v) as f32 as f64),
        Ty::Float => Value::Real(as_f64(&v)),
        Ty::Decimal(p, s) | Ty::Numeric(p, s) => {
            if let Value::Text(t) = &v
                && conv::parse_decimal(t).is_none()
            {
                return Err(user_err(format!("Error converting data type varchar to {}.", ty.name())));
            }
            let d = as_dec(&v).rescale(s);
            if d.mag.to_string().len() > p as usize && d.mag != 0 {
                return Err(user_err(format!("Arithmetic overflow error converting {} to data type numeric.", as_text(&v))));
            }
            Value::Text(d.to_string_fixed())
        }
        Ty::Money | Ty::SmallMoney => Value::Text(as_dec(&v).rescale(4).to_string_fixed()),
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
            Value::Text(format!("{} {}", conv::fmt_date(days), conv::fmt_time(t, 7)))
        }
        Ty::DateTimeOffset(s) => {
            let d = dt_of(&v)?;
            let days = if d.has_date { d.days } else { conv::DAY_1900 };
            let (days, t) = conv::round_ticks(days, d.ticks, s);
            Value::Text(format!("{} {} {}", conv::fmt_date(days), conv::fmt_time(t, 7), conv::fmt_offset(d.offset.unwrap_or(0))))
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
            Value::Text(s) => Value::Blob(s.into_bytes()),
            Value::Integer(i) => Value::Blob(i.to_be_bytes().to_vec()),
            Value::Real(f) => Value::Blob(f.to_be_bytes().to_vec()),
            Value::Null => Value::Null,
        },
        Ty::Variant => v,
    })
}

fn arg(ctx: &Context, i: usize) -> Value {
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
    let det = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    db.create_scalar_function("__cast", 2, det, |ctx| {
        let target: String = ctx.get(1)?;
        let ty = Ty::parse(&target)
            .ok_or_else(|| user_err(format!("Type {target} is not a defined system type.")))?;
        cast_value(arg(ctx, 0), ty)
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
    db.create_scalar_function("__charindex", -1, det, |ctx| {
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
