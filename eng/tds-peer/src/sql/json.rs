//! SQL Server's JSON constructors and modifiers on SQLite: `JSON_OBJECT`, `JSON_ARRAY`,
//! `JSON_MODIFY` and `OPENJSON` (without a WITH clause). `ISJSON`, `JSON_VALUE` and
//! `JSON_QUERY` are in rewrite.rs (`json_call`).
//!
//! Where they are exact: JSON_OBJECT / JSON_ARRAY write compact JSON (`{"a":1,"b":[1,2]}`),
//! with their NULL ON NULL / ABSENT ON NULL defaults (object: NULL ON NULL, array: ABSENT ON
//! NULL); a nested JSON_OBJECT / JSON_ARRAY / JSON_QUERY / JSON_MODIFY value is embedded as
//! JSON, any other string as a JSON string. JSON_MODIFY follows SQL Server's lax, strict and
//! append modes but rewrites its input compactly (SQL Server keeps the input's own spacing
//! outside the changed value); numbers keep SQLite's rendering (`1e20` becomes `1.0e+20`).
//! OPENJSON gives SQL Server's key / value / type columns.

use super::lexer::{Tok, sig, split_commas};
use rusqlite::functions::FunctionFlags;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, Error};

/// Marks a value that is already JSON (the output of a JSON function), so that a constructor
/// embeds it instead of quoting it. Never reaches a client: only the constructors read it.
const RAW: char = '\u{1}';

/// Does the argument produce JSON text (a nested JSON function call)?
fn produces_json(arg: &[Tok]) -> bool {
    let s = sig(arg);
    matches!(s.first(), Some(Tok::Word(w)) if ["JSON_OBJECT", "JSON_ARRAY", "JSON_QUERY", "JSON_MODIFY"]
        .iter().any(|f| w.eq_ignore_ascii_case(f)))
        && s.get(1).is_some_and(|t| t.is_punct('('))
}

/// The trailing `NULL ON NULL` / `ABSENT ON NULL` of a constructor's last argument: the
/// argument without it, and whether NULLs are kept.
fn null_clause(arg: &[Tok], default_keep: bool) -> (&[Tok], bool) {
    let words: Vec<usize> = (0..arg.len()).filter(|&i| !arg[i].is_space()).collect();
    if words.len() >= 3 {
        let n = words.len();
        let (a, b, c) = (&arg[words[n - 3]], &arg[words[n - 2]], &arg[words[n - 1]]);
        if b.is_word("ON") && c.is_word("NULL") && (a.is_word("NULL") || a.is_word("ABSENT")) {
            return (&arg[..words[n - 3]], a.is_word("NULL"));
        }
    }
    (arg, default_keep)
}

/// Rewrites one call (`up`: the function's name in capitals, `args`: the tokens between its
/// parentheses), each argument rewritten by `rw`.
pub fn call(
    up: &str,
    args: &[Tok],
    rw: &dyn Fn(&[Tok]) -> Result<String, String>,
) -> Result<String, String> {
    let parts = split_commas(args);
    let value = |a: &[Tok]| -> Result<String, String> {
        let v = rw(a)?;
        Ok(if produces_json(a) {
            format!("__jraw({v})")
        } else {
            v
        })
    };
    match up {
        "JSON_OBJECT" | "JSON_ARRAY" => {
            let keep_default = up == "JSON_OBJECT";
            let (last, keep) = match parts.last() {
                Some(l) => null_clause(l, keep_default),
                None => (&[][..], keep_default),
            };
            let mut out = vec![if keep { "1" } else { "0" }.to_string()];
            for (i, p) in parts.iter().enumerate() {
                let p = if i + 1 == parts.len() { last } else { p };
                if sig(p).is_empty() {
                    continue;
                }
                if up == "JSON_ARRAY" {
                    out.push(value(p)?);
                    continue;
                }
                let colon = p
                    .iter()
                    .position(|t| t.is_punct(':'))
                    .ok_or("Incorrect syntax near ','. (JSON_OBJECT expects 'key':value pairs)")?;
                out.push(rw(&p[..colon])?);
                out.push(value(&p[colon + 1..])?);
            }
            let f = if up == "JSON_OBJECT" {
                "__json_object"
            } else {
                "__json_array"
            };
            Ok(format!("{f}({})", out.join(", ")))
        }
        "JSON_MODIFY" => {
            let [e, p, v] = parts.as_slice() else {
                return Err("The json_modify function requires 3 arguments.".into());
            };
            let (e, p) = (rw(e)?, rw(p)?);
            // A JSON value goes in as JSON (SQLite's json() marks it so for json_set).
            let v = if produces_json(v) {
                format!("json({})", rw(v)?)
            } else {
                rw(v)?
            };
            Ok(format!(
                "(CASE WHEN ({e}) IS NULL THEN NULL \
                 WHEN __jmode({p}) = 'append' THEN CASE WHEN ({v}) IS NULL THEN ({e}) ELSE json_insert({e}, __jmpath({p}) || '[#]', {v}) END \
                 WHEN __jmode({p}) = 'strict' AND json_type({e}, __jmpath({p})) IS NULL THEN __json_strict_missing({p}) \
                 WHEN ({v}) IS NULL AND __jmode({p}) = 'strict' THEN json_set({e}, __jmpath({p}), json('null')) \
                 WHEN ({v}) IS NULL THEN json_remove({e}, __jmpath({p})) \
                 ELSE json_set({e}, __jmpath({p}), {v}) END)"
            ))
        }
        _ => {
            // OPENJSON(e [, path]): key, value, type as SQL Server's default schema.
            let e = rw(parts.first().copied().unwrap_or(&[]))?;
            let each = match parts.get(1) {
                Some(p) => format!("json_each({e}, __jmpath({}))", rw(p)?),
                None => format!("json_each({e})"),
            };
            Ok(format!(
                "(SELECT CAST(key AS TEXT) AS [key], \
                 CASE type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' WHEN 'null' THEN NULL ELSE CAST(value AS TEXT) END AS [value], \
                 CASE type WHEN 'null' THEN 0 WHEN 'text' THEN 1 WHEN 'integer' THEN 2 WHEN 'real' THEN 2 \
                 WHEN 'true' THEN 3 WHEN 'false' THEN 3 WHEN 'array' THEN 4 ELSE 5 END AS [type] FROM {each})"
            ))
        }
    }
}

/// A JSON string literal of `s` (SQL Server escapes `"`, `\`, `/` and control characters).
fn quote(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '/' => out.push_str("\\/"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// One constructor value as JSON; None for NULL.
fn json_value(v: ValueRef) -> Option<String> {
    Some(match v {
        ValueRef::Null => return None,
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(f) => crate::token::value::fmt_float(f),
        ValueRef::Text(t) | ValueRef::Blob(t) => {
            let s = String::from_utf8_lossy(t);
            match s.strip_prefix(RAW) {
                Some(raw) => raw.to_string(),
                None => {
                    let mut o = String::new();
                    quote(&mut o, &s);
                    o
                }
            }
        }
    })
}

/// The mode words of a JSON_MODIFY path (`append`, `lax`, `strict`) and the path itself.
fn path_mode(p: &str) -> (&'static str, String) {
    let mut mode = "lax";
    let mut rest = p.trim_start();
    loop {
        let lower = rest.to_ascii_lowercase();
        let Some(w) = ["append", "strict", "lax"]
            .into_iter()
            .find(|w| lower.starts_with(w))
        else {
            break;
        };
        if mode != "append" {
            mode = if w == "lax" { mode } else { w };
        }
        rest = rest[w.len()..].trim_start();
    }
    (mode, rest.to_string())
}

pub fn register(db: &Connection) -> rusqlite::Result<()> {
    let det = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    db.create_scalar_function("__jraw", 1, det, |ctx| {
        Ok(match ctx.get_raw(0) {
            ValueRef::Null => None,
            ValueRef::Text(t) | ValueRef::Blob(t) => {
                Some(format!("{RAW}{}", String::from_utf8_lossy(t)))
            }
            v => json_value(v).map(|s| format!("{RAW}{s}")),
        })
    })?;
    db.create_scalar_function("__json_object", -1, det, |ctx| {
        let keep = ctx.get::<i64>(0)? != 0;
        let mut out = String::from("{");
        let mut first = true;
        for i in (1..ctx.len()).step_by(2) {
            let key: Option<String> = ctx.get(i)?;
            let Some(key) = key else {
                return Err(Error::UserFunctionError(
                    "JSON_OBJECT: a key is NULL.".into(),
                ));
            };
            let val = if i + 1 < ctx.len() {
                json_value(ctx.get_raw(i + 1))
            } else {
                None
            };
            if val.is_none() && !keep {
                continue;
            }
            if !first {
                out.push(',');
            }
            first = false;
            quote(&mut out, &key);
            out.push(':');
            out.push_str(val.as_deref().unwrap_or("null"));
        }
        out.push('}');
        Ok(out)
    })?;
    db.create_scalar_function("__json_array", -1, det, |ctx| {
        let keep = ctx.get::<i64>(0)? != 0;
        let vals: Vec<String> = (1..ctx.len())
            .filter_map(|i| json_value(ctx.get_raw(i)).or_else(|| keep.then(|| "null".into())))
            .collect();
        Ok(format!("[{}]", vals.join(",")))
    })?;
    db.create_scalar_function("__jmode", 1, det, |ctx| {
        Ok(ctx.get::<Option<String>>(0)?.map(|p| path_mode(&p).0))
    })?;
    db.create_scalar_function("__jmpath", 1, det, |ctx| {
        Ok(ctx.get::<Option<String>>(0)?.map(|p| path_mode(&p).1))
    })?;
    db.create_scalar_function(
        "__json_strict_missing",
        1,
        det,
        |_| -> rusqlite::Result<i64> {
            Err(Error::UserFunctionError(
                "Property cannot be found on the specified JSON path.".into(),
            ))
        },
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::path_mode;

    #[test]
    fn modify_path_modes() {
        assert_eq!(path_mode("$.a"), ("lax", "$.a".into()));
        assert_eq!(path_mode("append $.a"), ("append", "$.a".into()));
        assert_eq!(path_mode("strict $.a"), ("strict", "$.a".into()));
        assert_eq!(path_mode("append lax $.a"), ("append", "$.a".into()));
    }
}
