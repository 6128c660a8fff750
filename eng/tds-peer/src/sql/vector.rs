//! VECTOR and JSON in T-SQL: conversions (implicit from JSON-array text, CAST), the CHECK of a
//! typed column, what the catalog and sp_describe_* say, and the vector functions
//! `VECTOR_DISTANCE`, `VECTOR_NORM`, `VECTOR_NORMALIZE`, `VECTORPROPERTY` (as SQLite functions
//! of the same names, so the rewriter passes their calls through).
//!
//! Arithmetic is done in f64 over the float32 elements; SQL Server's own rounding of a distance
//! is not known here, so a result may differ from SQL Server's in the last bits.

use crate::types::Ty;
use crate::vector::{encode, floats_of, to_text};
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, Error};

fn user_err(msg: String) -> Error {
    Error::UserFunctionError(msg.into())
}

/// SQL Server's messages raised here, by their start, and their numbers (errors.rs maps a
/// SQLite function's error text to its number). 42204 is the dimension mismatch the issue
/// names; 13609 is SQL Server's "JSON text is not properly formatted"; the numbers of the other
/// vector errors are not known to the project and use SQL Server's generic conversion error.
pub const ERRORS: &[(&str, i32)] = &[
    ("The vector dimensions ", 42204),
    ("JSON text is not properly formatted", 13609),
    ("Property cannot be found on the specified JSON path", 13608),
    ("Arithmetic overflow error converting the value ", 8115),
    ("The binary vector of ", 8114),
    ("Operand type clash: ", 206),
];

/// The message of a dimension mismatch (SQL Server's words, as its localized messages show
/// them: the expected count first).
pub fn mismatch(expected: usize, got: usize) -> String {
    format!("The vector dimensions {expected} and {got} do not match.")
}

/// sp_describe_first_result_set / sp_describe_undeclared_parameters report both types as
/// varchar(max), even on SQL Server 2025.
pub fn described(ty: Ty) -> Ty {
    match ty {
        Ty::Vector(_) | Ty::Json => Ty::VarChar(None, false),
        t => t,
    }
}

/// sys.columns.user_type_id where it differs from system_type_id: vector is varbinary (165)
/// underneath, user type 255; json is its own system type 244.
pub fn user_type_id(ty: Ty) -> Option<i64> {
    matches!(ty, Ty::Vector(_)).then_some(255)
}

/// The elements of a vector value, as a SQL error.
fn floats(v: ValueRef) -> Result<Vec<f32>, Error> {
    floats_of(v).map_err(user_err)
}

/// A value converted to a VECTOR(n) (the payload) or JSON (checked text).
pub fn cast_to(v: Value, ty: Ty) -> Result<Value, Error> {
    match ty {
        Ty::Vector(n) => {
            let f = floats((&v).into())?;
            if f.len() != n as usize {
                return Err(user_err(mismatch(n as usize, f.len())));
            }
            Ok(Value::Blob(encode(&f)))
        }
        _ => {
            let text = match v {
                Value::Text(s) => s,
                Value::Blob(b) => String::from_utf8_lossy(&b).into_owned(),
                Value::Integer(i) => i.to_string(),
                Value::Real(f) => f.to_string(),
                Value::Null => return Ok(Value::Null),
            };
            check_json(&text)?;
            Ok(Value::Text(text))
        }
    }
}

/// CAST of a vector to a character type: SQL Server's JSON text. None: not such a cast.
pub fn cast_from_vector(v: &Value, from: Option<Ty>, ty: Ty) -> Option<Result<Value, Error>> {
    let to_char = matches!(
        ty,
        Ty::Char(..) | Ty::VarChar(..) | Ty::NChar(_) | Ty::NVarChar(_)
    );
    // A nested CAST(… AS vector(n)) reaches here with no source type, as its payload.
    let vector_blob =
        from.is_none() && matches!(v, Value::Blob(b) if crate::vector::payload_dims(b).is_some());
    if !(to_char && (matches!(from, Some(Ty::Vector(_))) || vector_blob)) {
        return None;
    }
    Some(floats(v.into()).map(|f| Value::Text(to_text(&f))))
}

fn check_json(text: &str) -> Result<(), Error> {
    serde_json::from_str::<serde_json::Value>(text).map(|_| ()).map_err(|e| {
        user_err(format!(
            "JSON text is not properly formatted. Unexpected character '{}' is found at position {}.",
            text.chars().nth(e.column().saturating_sub(1)).unwrap_or(' '),
            e.column().saturating_sub(1)
        ))
    })
}

/// Does a VECTOR or JSON column get a CHECK (`__fits`)?
pub fn checked(ty: Ty) -> bool {
    matches!(ty, Ty::Vector(_) | Ty::Json)
}

/// The CHECK of a VECTOR(n) or JSON column: a vector of exactly n finite float32 elements
/// (binary or JSON-array text), or well-formed JSON. None: not such a column.
pub fn fits(v: &Value, ty: Ty) -> Option<Result<bool, Error>> {
    if !checked(ty) || matches!(v, Value::Null) {
        return None;
    }
    // The stored form (a payload of the column's dimension count) is checked in place: no
    // copy, no re-encoding (a bulk load of 100k vectors runs this CHECK per row).
    if let (Ty::Vector(n), Value::Blob(b)) = (ty, v)
        && crate::vector::payload_dims(b) == Some(n)
    {
        let finite = b[crate::vector::HEADER..]
            .chunks_exact(4)
            .all(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]).is_finite());
        return Some(if finite {
            Ok(true)
        } else {
            Err(user_err(
                "NaN or infinite values are not allowed in a vector.".into(),
            ))
        });
    }
    Some(cast_to(v.clone(), ty).map(|_| true))
}

/// The form a bulk-loaded value is stored in for a column of type `ty`: a VECTOR(n) cell that
/// arrives as JSON-array text (Driver 18's and FreeTDS's bcp send vectors as varchar(max) text)
/// is converted as SQL Server converts it and stored as its payload, as SQL Server stores it, so
/// that every later read sends the stored bytes to a native client with one copy. Text that does
/// not convert is the load's error (a conversion, not a CHECK: a load without CHECK_CONSTRAINTS
/// refuses it too).
pub fn stored(ty: Option<Ty>, v: Value) -> Result<Value, crate::sql::errors::SqlError> {
    use crate::sql::errors::SqlError;
    match (ty, v) {
        (Some(Ty::Vector(n)), Value::Text(t)) => match crate::vector::parse_text(&t) {
            Ok(f) if f.len() == n as usize => Ok(Value::Blob(encode(&f))),
            Ok(f) => Err(SqlError::new(42204, 16, mismatch(n as usize, f.len()))),
            Err(msg) => Err(SqlError::new(8114, 16, msg)),
        },
        (Some(Ty::Vector(n)), Value::Blob(b)) => match crate::vector::payload_dims(&b) {
            Some(got) if got != n => {
                Err(SqlError::new(42204, 16, mismatch(n as usize, got as usize)))
            }
            _ => Ok(Value::Blob(b)),
        },
        (_, v) => Ok(v),
    }
}

fn arg<'a>(ctx: &'a Context<'_>, i: usize) -> ValueRef<'a> {
    ctx.get_raw(i)
}

fn text_arg(ctx: &Context, i: usize) -> Option<String> {
    match arg(ctx, i) {
        ValueRef::Text(t) => Some(String::from_utf8_lossy(t).trim().to_ascii_lowercase()),
        _ => None,
    }
}

/// The two operands of a two-vector function.
type Pair = (Vec<f32>, Vec<f32>);

/// Both operands of a two-vector function, the same dimension count (None: one is NULL).
fn pair(a: ValueRef, b: ValueRef) -> Result<Option<Pair>, Error> {
    if a == ValueRef::Null || b == ValueRef::Null {
        return Ok(None);
    }
    let (x, y) = (floats(a)?, floats(b)?);
    if x.len() != y.len() {
        return Err(user_err(mismatch(x.len(), y.len())));
    }
    Ok(Some((x, y)))
}

pub fn distance(metric: &str, x: &[f32], y: &[f32]) -> Result<f64, Error> {
    let dot: f64 = x.iter().zip(y).map(|(a, b)| *a as f64 * *b as f64).sum();
    Ok(match metric {
        "cosine" => {
            let nx = norm("norm2", x)?;
            let ny = norm("norm2", y)?;
            1.0 - dot / (nx * ny)
        }
        "euclidean" => x
            .iter()
            .zip(y)
            .map(|(a, b)| (*a as f64 - *b as f64).powi(2))
            .sum::<f64>()
            .sqrt(),
        // SQL Server's dot metric is the negative dot product (smaller is closer).
        "dot" => -dot,
        other => {
            return Err(user_err(format!(
                "Invalid distance metric '{other}': use 'cosine', 'euclidean' or 'dot'."
            )));
        }
    })
}

pub fn norm(kind: &str, x: &[f32]) -> Result<f64, Error> {
    Ok(match kind {
        "norm1" => x.iter().map(|a| (*a as f64).abs()).sum(),
        "norm2" => x.iter().map(|a| (*a as f64).powi(2)).sum::<f64>().sqrt(),
        "norminf" => x.iter().map(|a| (*a as f64).abs()).fold(0.0, f64::max),
        other => {
            return Err(user_err(format!(
                "Invalid norm type '{other}': use 'norm1', 'norm2' or 'norminf'."
            )));
        }
    })
}

/// The SQLite functions behind the T-SQL vector functions.
pub fn register(db: &Connection) -> rusqlite::Result<()> {
    let det = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    db.create_scalar_function("vector_distance", 3, det, |ctx| {
        let metric = text_arg(ctx, 0).unwrap_or_default();
        let Some((x, y)) = pair(arg(ctx, 1), arg(ctx, 2))? else {
            return Ok(None);
        };
        distance(&metric, &x, &y).map(Some)
    })?;
    db.create_scalar_function("vector_norm", 2, det, |ctx| {
        if arg(ctx, 0) == ValueRef::Null {
            return Ok(None);
        }
        let x = floats(arg(ctx, 0))?;
        norm(&text_arg(ctx, 1).unwrap_or_default(), &x).map(Some)
    })?;
    db.create_scalar_function("vector_normalize", 2, det, |ctx| {
        if arg(ctx, 0) == ValueRef::Null {
            return Ok(None);
        }
        let x = floats(arg(ctx, 0))?;
        let n = norm(&text_arg(ctx, 1).unwrap_or_default(), &x)?;
        let y: Vec<f32> = x.iter().map(|a| (*a as f64 / n) as f32).collect();
        if y.iter().any(|f| !f.is_finite()) {
            return Err(user_err(
                "NaN or infinite values are not allowed in a vector (the norm is zero).".into(),
            ));
        }
        Ok(Some(encode(&y)))
    })?;
    db.create_scalar_function("vectorproperty", 2, det, |ctx| {
        if arg(ctx, 0) == ValueRef::Null {
            return Ok(Value::Null);
        }
        let x = floats(arg(ctx, 0))?;
        Ok(match text_arg(ctx, 1).as_deref() {
            Some("dimensions") => Value::Integer(x.len() as i64),
            Some("basetype") => Value::Text("float32".into()),
            _ => Value::Null,
        })
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_and_norms() {
        let (a, b) = ([1.0f32, 0.0], [0.0f32, 1.0]);
        assert_eq!(distance("cosine", &a, &b).unwrap(), 1.0);
        assert_eq!(distance("euclidean", &a, &b).unwrap(), 2f64.sqrt());
        assert_eq!(distance("dot", &[1.0, 2.0], &[3.0, 4.0]).unwrap(), -11.0);
        assert_eq!(norm("norm1", &[3.0, -4.0]).unwrap(), 7.0);
        assert_eq!(norm("norm2", &[3.0, -4.0]).unwrap(), 5.0);
        assert_eq!(norm("norminf", &[3.0, -4.0]).unwrap(), 4.0);
        assert!(distance("manhattan", &a, &b).is_err());
    }

    #[test]
    fn bulk_loaded_text_is_stored_as_its_payload() {
        let v = stored(Some(Ty::Vector(3)), Value::Text("[1,2,3]".into())).unwrap();
        assert_eq!(v, Value::Blob(encode(&[1.0, 2.0, 3.0])));
        let e = stored(Some(Ty::Vector(3)), Value::Text("[1,2]".into())).unwrap_err();
        assert_eq!(e.number, 42204);
        assert!(stored(Some(Ty::Vector(3)), Value::Text("[1,x,3]".into())).is_err());
        assert!(stored(Some(Ty::Vector(2)), Value::Blob(encode(&[1.0, 2.0, 3.0]))).is_err());
        assert_eq!(
            stored(Some(Ty::Int), Value::Text("7".into())).unwrap(),
            Value::Text("7".into())
        );
        assert_eq!(
            fits(&Value::Blob(encode(&[1.0, 2.0])), Ty::Vector(2)).map(|r| r.is_ok()),
            Some(true)
        );
        let mut nan = encode(&[1.0, 2.0]);
        nan[8..12].copy_from_slice(&f32::NAN.to_le_bytes());
        assert!(matches!(
            fits(&Value::Blob(nan), Ty::Vector(2)),
            Some(Err(_))
        ));
    }

    #[test]
    fn casts_and_checks() {
        let v = cast_to(Value::Text("[1,2,3]".into()), Ty::Vector(3)).unwrap();
        assert!(matches!(&v, Value::Blob(b) if b.len() == 20));
        let e = cast_to(Value::Text("[1,2]".into()), Ty::Vector(3)).unwrap_err();
        assert_eq!(e.to_string(), "The vector dimensions 3 and 2 do not match.");
        assert!(cast_to(Value::Text("{\"a\":".into()), Ty::Json).is_err());
        assert!(fits(&Value::Null, Ty::Vector(3)).is_none());
        let t = cast_from_vector(&v, Some(Ty::Vector(3)), Ty::VarChar(None, false));
        assert_eq!(
            t.unwrap().unwrap(),
            Value::Text("[1.0000000e+000,2.0000000e+000,3.0000000e+000]".into())
        );
    }
}
