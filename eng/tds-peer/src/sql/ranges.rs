//! Range checks of conversions to integer, money and decimal types: SQL Server raises an
//! arithmetic overflow where a plain Rust/SQLite conversion would saturate (`f64 as i64`), wrap
//! or keep a number the type cannot hold. Used by `__cast` (CAST/CONVERT, variables) and by
//! `__fits` (the CHECK of every such column, so INSERT/UPDATE from literals and RPC parameters).
//!
//! SQL Server's messages (numbers and texts as SQL Server 2019/2022 print them):
//! - 8115 "Arithmetic overflow error converting {source} to data type {target}." — state 2 for
//!   the usual conversions; the source is `expression` for integer targets, the source's type
//!   name for numeric/money targets (`numeric` for decimal/numeric values and for literals with
//!   a decimal point, `int`, `float`, `varchar`, …).
//! - 220 "Arithmetic overflow error for data type tinyint|smallint, value = N." for an integer
//!   value into tinyint/smallint.
//! - 232 "Arithmetic overflow error for type int, value = 10000000000.000000." for a float/real
//!   value into an integer type (the value printed with six decimals, C `%f`).
//!
//! Where the peer cannot know the source type (a CHECK sees only the SQLite value) it names the
//! type a T-SQL literal of that value would have. Not verified against a server here: the text
//! for a varchar that overflows an integer type (SQL Server: 244/248 "The conversion of the
//! varchar value … overflowed an int column"); the peer raises 8115/220 for those.

use crate::conv::{Dec, parse_decimal};
use crate::token::value::as_dec;
use crate::types::Ty;
use rusqlite::Error;
use rusqlite::types::Value;

fn user_err(msg: String) -> Error {
    Error::UserFunctionError(msg.into())
}

/// 2^63 as f64: the first float past BIGINT (i64::MAX itself rounds up to it).
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// The T-SQL type name of `v`'s expression in an overflow message: the rewriter's type when it
/// knows one, else the type a T-SQL literal of that value has (an integer literal past INT is
/// numeric; decimal text, which is how the peer stores and binds exact numerics, is numeric).
pub fn source_name(v: &Value, from: Option<Ty>) -> String {
    match from {
        Some(Ty::Decimal(..) | Ty::Numeric(..)) => "numeric".into(),
        Some(t) => t.name().split(['(', ' ']).next().unwrap_or("").to_string(),
        None => match v {
            Value::Integer(i) if i32::try_from(*i).is_ok() => "int".into(),
            Value::Text(s) if crate::conv::parse_decimal(s).is_none() => "varchar".into(),
            _ => "numeric".into(),
        },
    }
}

fn is_float(from: Option<Ty>) -> bool {
    matches!(from, Some(Ty::Float | Ty::Real))
}

/// Does `i` fit the integer type `ty`?
fn int_fits(ty: Ty, i: i64) -> bool {
    match ty {
        Ty::TinyInt => (0..=255).contains(&i),
        Ty::SmallInt => i16::try_from(i).is_ok(),
        Ty::Int => i32::try_from(i).is_ok(),
        _ => true,
    }
}

/// Does `i` fit the integer type `ty` (bigint: always)?
pub fn int_in(ty: Ty, i: i64) -> bool {
    int_fits(ty, i)
}

/// 8115 "converting expression to data type T": integer arithmetic (`2147483647 + 1`, a
/// bigint sum past 2^63) leaving its result type, tinyint and smallint included.
pub fn arith_overflow(ty: Ty) -> Error {
    user_err(format!(
        "Arithmetic overflow error converting expression to data type {}.",
        ty.name()
    ))
}

/// 8115 for int/bigint (and any non-integer source), 220 naming the value for tinyint/smallint.
pub fn int_overflow(ty: Ty, value: Option<i64>) -> Error {
    user_err(match (ty, value) {
        (Ty::TinyInt | Ty::SmallInt, Some(i)) => format!(
            "Arithmetic overflow error for data type {}, value = {i}.",
            ty.name()
        ),
        _ => format!(
            "Arithmetic overflow error converting expression to data type {}.",
            ty.name()
        ),
    })
}

thread_local! {
    /// The float/real parameters of the statement being run (bit patterns, types): a REAL
    /// reaching a column's range check with one of these values came from a float, which SQL
    /// Server reports as such (232, "converting float to …") rather than as a numeric.
    static FLOAT_PARAMS: std::cell::RefCell<Vec<(u64, Ty)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Notes the statement's float/real parameter values (empty: none) for `float_source`.
pub fn set_float_params(values: Vec<(u64, Ty)>) {
    FLOAT_PARAMS.with(|c| *c.borrow_mut() = values);
}

/// The float type and value a stored value came from, when it is one of the statement's float
/// parameters: the REAL itself, the INTEGER SQLite's INT affinity made of an integral one, or
/// (in a text-affinity column: decimal, money) SQLite's text of it, 15 significant digits.
pub fn float_source(v: &Value) -> Option<(Ty, f64)> {
    FLOAT_PARAMS.with(|c| {
        let params = c.borrow();
        // The common case (no float parameter): nothing parsed.
        if params.is_empty() {
            return None;
        }
        let f = match v {
            Value::Real(f) => *f,
            // An integral float in an integer column: SQLite's INT affinity made it an INTEGER.
            Value::Integer(i) => *i as f64,
            Value::Text(t) => t.trim().parse::<f64>().ok()?,
            _ => return None,
        };
        params
            .iter()
            .find(|(b, _)| {
                let p = f64::from_bits(*b);
                p == f || (p - f).abs() <= p.abs() * 1e-14
            })
            .map(|(b, t)| (*t, f64::from_bits(*b)))
    })
}

/// 232: a float value into an integer type.
fn float_overflow(ty: Ty, f: f64) -> Error {
    user_err(format!(
        "Arithmetic overflow error for type {}, value = {f:.6}.",
        ty.name()
    ))
}

/// A float truncated toward zero as the integer type `ty`, or SQL Server's overflow error.
pub fn int_of_real(f: f64, from: Option<Ty>, ty: Ty) -> Result<i64, Error> {
    let t = f.trunc();
    // NaN fails both comparisons; -2^63 is exact in f64 and fits.
    let in_i64 = (-TWO_POW_63..TWO_POW_63).contains(&t);
    if in_i64 && int_fits(ty, t as i64) {
        return Ok(t as i64);
    }
    if is_float(from) {
        return Err(float_overflow(ty, f));
    }
    // A REAL without a known float source is a numeric literal (e.g. 3000000000.5) or
    // decimal text SQLite's INT affinity turned into a REAL: numeric → integer is 8115.
    Err(int_overflow(ty, None))
}

/// An integer into `ty` (bit accepts any value), or 220/8115.
pub fn int_checked(i: i64, ty: Ty) -> Result<i64, Error> {
    if int_fits(ty, i) {
        Ok(i)
    } else {
        Err(int_overflow(ty, Some(i)))
    }
}

/// A REAL that reached the CHECK of an integer column: SQLite's INT affinity turns every REAL
/// that is an exact i64 into an INTEGER first, so an integral REAL here was not one — integer
/// text past i64 (`'-9223372036854775809'`) rounded to a float. At -2^63 that float would pass
/// the range check, yet the number was one past bigint's minimum.
pub fn stored_real_checked(v: &Value, ty: Ty) -> Result<(), Error> {
    match v {
        Value::Real(f) if ty == Ty::BigInt && *f == -TWO_POW_63 => Err(int_overflow(ty, None)),
        _ => Ok(()),
    }
}

/// Integer text past i64 (`'9223372036854775808'`, a literal the rewriter keeps as text): an
/// overflow, not a failed conversion.
pub fn is_integer_text(t: &str) -> bool {
    let d = t.strip_prefix(['-', '+']).unwrap_or(t);
    !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())
}

/// `v` as an exact decimal. Err(true): a number past 38 digits (or a float past 1e38, or not
/// finite), which `as_dec` would read as zero; Err(false): text that is no number.
fn exact(v: &Value) -> Result<Dec, bool> {
    match v {
        Value::Real(f) if !f.is_finite() || f.abs() >= 1e38 => Err(true),
        // `Dec::from_f64` renders ten decimals, past u128 from about 1e28; floats this large
        // are whole numbers anyway.
        Value::Real(f) if f.abs() >= 1e18 => parse_decimal(&format!("{f:.0}")).ok_or(true),
        Value::Text(t) => parse_decimal(t).ok_or_else(|| {
            let t = t.trim();
            !t.is_empty()
                && t.bytes()
                    .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))
        }),
        _ => Ok(as_dec(v)),
    }
}

/// `v` as money/smallmoney (scale 4, rounded half away from zero), or 8115.
/// money holds ±922,337,203,685,477.5807 (-…5808), smallmoney ±214,748.3647 (-…3648).
pub fn money_checked(v: &Value, from: Option<Ty>, ty: Ty) -> Result<Dec, Error> {
    let d = match exact(v) {
        Ok(d) => d.rescale(4),
        Err(true) => return Err(money_overflow(v, from, ty)),
        Err(false) => {
            return Err(user_err(format!(
                "Cannot convert a char value to {}. The char value has incorrect syntax.",
                ty.name()
            )));
        }
    };
    let max: u128 = match ty {
        Ty::SmallMoney => i32::MAX as u128,
        _ => i64::MAX as u128,
    };
    let limit = if d.neg { max + 1 } else { max };
    if d.mag > limit {
        return Err(money_overflow(v, from, ty));
    }
    Ok(d)
}

fn money_overflow(v: &Value, from: Option<Ty>, ty: Ty) -> Error {
    user_err(format!(
        "Arithmetic overflow error converting {} to data type {}.",
        source_name(v, from),
        ty.name()
    ))
}

/// `v` as decimal(p, s) (rounded half away from zero), or 8115 "… to data type numeric" (SQL
/// Server names decimal targets `numeric` in this message too).
pub fn decimal_checked(v: &Value, from: Option<Ty>, p: u8, s: u8) -> Result<Dec, Error> {
    let d = match exact(v) {
        Ok(d) => d.rescale(s),
        Err(true) => return Err(decimal_overflow(v, from)),
        Err(false) => {
            return Err(user_err(
                "Error converting data type varchar to numeric.".into(),
            ));
        }
    };
    // `rescale` saturates at u128::MAX, which has 39 digits: past any precision.
    if d.mag == 0 || d.mag.to_string().len() <= p as usize {
        return Ok(d);
    }
    Err(decimal_overflow(v, from))
}

fn decimal_overflow(v: &Value, from: Option<Ty>) -> Error {
    user_err(format!(
        "Arithmetic overflow error converting {} to data type numeric.",
        source_name(v, from)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(e: Error) -> String {
        e.to_string()
    }

    #[test]
    fn integers_past_their_type_are_errors_not_clamped() {
        assert_eq!(int_checked(255, Ty::TinyInt).unwrap(), 255);
        assert_eq!(
            msg(int_checked(256, Ty::TinyInt).unwrap_err()),
            "Arithmetic overflow error for data type tinyint, value = 256."
        );
        assert_eq!(
            msg(int_checked(-32769, Ty::SmallInt).unwrap_err()),
            "Arithmetic overflow error for data type smallint, value = -32769."
        );
        assert_eq!(
            msg(int_checked(2_147_483_648, Ty::Int).unwrap_err()),
            "Arithmetic overflow error converting expression to data type int."
        );
        assert_eq!(int_checked(i64::MIN, Ty::BigInt).unwrap(), i64::MIN);
    }

    #[test]
    fn reals_past_bigint_are_overflows() {
        // 9223372036854775808 reaches SQLite as text and INT affinity makes it this REAL;
        // `as i64` would saturate it to i64::MAX.
        assert_eq!(
            msg(int_of_real(TWO_POW_63, None, Ty::BigInt).unwrap_err()),
            "Arithmetic overflow error converting expression to data type bigint."
        );
        assert_eq!(
            int_of_real(-TWO_POW_63, None, Ty::BigInt).unwrap(),
            i64::MIN
        );
        assert!(int_of_real(-TWO_POW_63 * 2.0, None, Ty::BigInt).is_err());
        assert!(int_of_real(f64::NAN, None, Ty::BigInt).is_err());
        assert_eq!(int_of_real(-1.9, None, Ty::Int).unwrap(), -1);
        assert_eq!(
            msg(int_of_real(1e10, Some(Ty::Float), Ty::Int).unwrap_err()),
            "Arithmetic overflow error for type int, value = 10000000000.000000."
        );
        assert_eq!(
            msg(int_of_real(3_000_000_000.5, None, Ty::Int).unwrap_err()),
            "Arithmetic overflow error converting expression to data type int."
        );
    }

    #[test]
    fn money_bounds_are_exact() {
        let t = |s: &str| Value::Text(s.into());
        assert!(money_checked(&t("922337203685477.5807"), None, Ty::Money).is_ok());
        assert!(money_checked(&t("-922337203685477.5808"), None, Ty::Money).is_ok());
        assert_eq!(
            msg(money_checked(&t("922337203685477.5808"), None, Ty::Money).unwrap_err()),
            "Arithmetic overflow error converting numeric to data type money."
        );
        assert!(money_checked(&t("-922337203685477.5809"), None, Ty::Money).is_err());
        assert!(money_checked(&t("214748.3647"), None, Ty::SmallMoney).is_ok());
        assert!(money_checked(&t("-214748.3648"), None, Ty::SmallMoney).is_ok());
        assert_eq!(
            msg(money_checked(&Value::Integer(300_000), None, Ty::SmallMoney).unwrap_err()),
            "Arithmetic overflow error converting int to data type smallmoney."
        );
        assert!(money_checked(&Value::Real(f64::INFINITY), None, Ty::Money).is_err());
        assert!(money_checked(&Value::Real(1e300), None, Ty::Money).is_err());
        assert!(money_checked(&Value::Real(1e30), None, Ty::Money).is_err());
        assert!(money_checked(&t(&"9".repeat(45)), None, Ty::Money).is_err());
        assert!(
            msg(money_checked(&t("abc"), None, Ty::Money).unwrap_err())
                .starts_with("Cannot convert a char value to money.")
        );
    }

    #[test]
    fn decimal_precision_overflow_names_the_source() {
        let v = Value::Real(1234.5);
        assert_eq!(
            msg(decimal_checked(&v, None, 5, 2).unwrap_err()),
            "Arithmetic overflow error converting numeric to data type numeric."
        );
        assert_eq!(
            msg(decimal_checked(&v, Some(Ty::Float), 5, 2).unwrap_err()),
            "Arithmetic overflow error converting float to data type numeric."
        );
        assert_eq!(
            decimal_checked(&Value::Real(999.994), None, 5, 2)
                .unwrap()
                .to_string_fixed(),
            "999.99"
        );
        // Rounding can carry into one digit too many.
        assert!(decimal_checked(&Value::Real(999.995), None, 5, 2).is_err());
        let big = Value::Text("1".repeat(40));
        assert!(decimal_checked(&big, None, 38, 0).is_err());
        assert!(decimal_checked(&Value::Real(1e30), None, 38, 10).is_err());
        assert!(decimal_checked(&Value::Real(-1e300), None, 38, 0).is_err());
        assert_eq!(
            decimal_checked(&Value::Real(1e20), None, 38, 0)
                .unwrap()
                .to_string_fixed(),
            "100000000000000000000"
        );
    }

    #[test]
    fn a_stored_real_at_bigint_min_was_past_it() {
        assert!(stored_real_checked(&Value::Real(-TWO_POW_63), Ty::BigInt).is_err());
        assert!(stored_real_checked(&Value::Integer(i64::MIN), Ty::BigInt).is_ok());
        assert!(stored_real_checked(&Value::Real(-TWO_POW_63), Ty::Float).is_ok());
    }

    #[test]
    fn integer_text() {
        assert!(is_integer_text("-9223372036854775809"));
        assert!(!is_integer_text("1.5"));
        assert!(!is_integer_text("-"));
    }
}
