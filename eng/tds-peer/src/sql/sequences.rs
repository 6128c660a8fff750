//! Sequences: `CREATE SEQUENCE [s.]n [AS type] [START WITH a] [INCREMENT BY b] [MINVALUE x |
//! NO MINVALUE] [MAXVALUE y | NO MAXVALUE] [[NO] CYCLE] [CACHE n | NO CACHE]`, `DROP SEQUENCE
//! [IF EXISTS] n`, `NEXT VALUE FOR n`, listed by sys.sequences and INFORMATION_SCHEMA.SEQUENCES.
//!
//! Kept in the shared `__tdspeer_sequences`. `NEXT VALUE FOR n` is replaced by the sequence's
//! next value before the statement runs — one value per occurrence, so a multi-row
//! `INSERT … VALUES (NEXT VALUE FOR n, …), (NEXT VALUE FOR n, …)` numbers its rows, but an
//! `INSERT … SELECT NEXT VALUE FOR n FROM t` gives every row the same value (SQL Server: one
//! per row). Unlike SQL Server's, a value taken in a transaction that rolls back is taken again.

use super::errors::{SqlError, from_sqlite, from_sqlite_named};
use super::lexer::Tok;
use crate::sql::context::{Context, Flow, StmtErr};
use rusqlite::OptionalExtension;

fn err(number: i32, msg: String) -> StmtErr {
    StmtErr::Sql(SqlError::new(number, 16, msg))
}

/// `[s.]n` at `sg[at..]`: (schema, name, index after the name).
fn name_at(sg: &[&Tok], at: usize) -> Option<(String, String, usize)> {
    let mut parts = Vec::new();
    let mut i = at;
    while let Some(Tok::Word(w) | Tok::Quoted(w)) = sg.get(i) {
        parts.push(w.clone());
        if sg.get(i + 1).is_some_and(|t| t.is_punct('.')) {
            i += 2;
        } else {
            i += 1;
            break;
        }
    }
    let name = parts.pop()?;
    let schema = parts.pop().unwrap_or_else(|| "dbo".into());
    Some((schema, name, i))
}

fn number(sg: &[&Tok], i: usize) -> Option<(i64, usize)> {
    let (neg, j) = match sg.get(i) {
        Some(t) if t.is_punct('-') => (true, i + 1),
        _ => (false, i),
    };
    match sg.get(j) {
        Some(Tok::Num(n)) => n
            .parse::<i64>()
            .ok()
            .map(|v| (if neg { -v } else { v }, j + 1)),
        _ => None,
    }
}

/// The range of a sequence's integer type.
fn bounds(ty: &str) -> (i64, i64) {
    match ty {
        "tinyint" => (0, 255),
        "smallint" => (-32768, 32767),
        "int" => (i32::MIN as i64, i32::MAX as i64),
        _ => (i64::MIN, i64::MAX),
    }
}

pub(crate) fn sequence_ddl(cx: &mut Context, sg: &[&Tok]) -> Result<Flow, StmtErr> {
    let syntax = || StmtErr::Sql(SqlError::syntax("Incorrect syntax near 'SEQUENCE'."));
    let create = sg[0].is_word("CREATE");
    let if_exists = !create && sg.get(2).is_some_and(|t| t.is_word("IF"));
    let (schema, name, mut i) = name_at(sg, if if_exists { 4 } else { 2 }).ok_or_else(syntax)?;
    cx.before_write().map_err(StmtErr::Sql)?;
    if !create {
        let n = cx
            .db
            .execute(
                "DELETE FROM __tdspeer_sequences WHERE sch = ?1 AND name = ?2",
                [&schema, &name],
            )
            .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
        if n == 0 && !if_exists {
            return Err(err(
                3701,
                format!(
                    "Cannot drop the sequence '{name}', because it does not exist or you do not have permission."
                ),
            ));
        }
        return Ok(Flow::Continue);
    }
    let mut ty = "bigint".to_string();
    let (mut start, mut incr, mut minv, mut maxv, mut cycle) = (None, 1i64, None, None, false);
    while i < sg.len() {
        let w = match sg[i] {
            Tok::Word(w) => w.to_ascii_uppercase(),
            Tok::Punct(';') => break,
            _ => return Err(syntax()),
        };
        let num_after = |k: usize| number(sg, k).ok_or_else(syntax);
        match w.as_str() {
            "AS" => {
                ty = match sg.get(i + 1) {
                    Some(Tok::Word(t) | Tok::Quoted(t)) => t.to_ascii_lowercase(),
                    _ => return Err(syntax()),
                };
                i += 2;
            }
            "START" | "INCREMENT" => {
                let (v, next) = num_after(i + 2)?;
                if w == "START" {
                    start = Some(v);
                } else {
                    incr = v;
                }
                i = next;
            }
            "MINVALUE" | "MAXVALUE" => {
                let (v, next) = num_after(i + 1)?;
                if w == "MINVALUE" {
                    minv = Some(v);
                } else {
                    maxv = Some(v);
                }
                i = next;
            }
            "NO" => {
                if sg.get(i + 1).is_some_and(|t| t.is_word("CYCLE")) {
                    cycle = false;
                }
                i += 2;
            }
            "CYCLE" => {
                cycle = true;
                i += 1;
            }
            "CACHE" => i += 1 + usize::from(number(sg, i + 1).is_some()),
            _ => return Err(syntax()),
        }
    }
    if incr == 0 {
        return Err(err(
            11700,
            format!("The increment for sequence object '{schema}.{name}' cannot be zero."),
        ));
    }
    let (lo, hi) = bounds(&ty);
    let (minv, maxv) = (minv.unwrap_or(lo), maxv.unwrap_or(hi));
    // SQL Server's default start: the minimum for an ascending sequence, else the maximum.
    let start = start.unwrap_or(if incr > 0 { minv } else { maxv });
    cx.db
        .execute(
            "INSERT INTO __tdspeer_sequences VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULL)",
            rusqlite::params![schema, name, ty, start, incr, minv, maxv, cycle],
        )
        .map_err(|e| StmtErr::Sql(from_sqlite_named(&e, &name)))?;
    Ok(Flow::Continue)
}

/// `toks` with every `NEXT VALUE FOR n` replaced by n's next value; None when it has none.
pub(crate) fn next_values(cx: &mut Context, toks: &[Tok]) -> Result<Option<Vec<Tok>>, StmtErr> {
    if !toks.iter().any(|t| t.is_word("NEXT")) {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(toks.len());
    let mut i = 0;
    let mut changed = false;
    while i < toks.len() {
        let sig: Vec<usize> = (i..toks.len())
            .filter(|&k| !toks[k].is_space())
            .take(8)
            .collect();
        let is = |n: usize, w: &str| sig.get(n).is_some_and(|&k| toks[k].is_word(w));
        if toks[i].is_word("NEXT") && is(1, "VALUE") && is(2, "FOR") {
            let rest: Vec<&Tok> = sig[3..].iter().map(|&k| &toks[k]).collect();
            let (schema, name, used) = name_at(&rest, 0)
                .ok_or_else(|| StmtErr::Sql(SqlError::syntax("Incorrect syntax near 'FOR'.")))?;
            let v = take_next(cx, &schema, &name)?;
            out.push(Tok::Num(v.to_string()));
            i = sig[3 + used - 1] + 1;
            changed = true;
            continue;
        }
        out.push(toks[i].clone());
        i += 1;
    }
    Ok(changed.then_some(out))
}

fn take_next(cx: &mut Context, schema: &str, name: &str) -> Result<i64, StmtErr> {
    cx.before_write().map_err(StmtErr::Sql)?;
    let row: Option<(Option<i64>, i64, i64, i64, i64, bool)> = cx
        .db
        .query_row(
            "SELECT current, start, incr, minv, maxv, cycle FROM __tdspeer_sequences WHERE sch = ?1 AND name = ?2",
            [schema, name],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)),
        )
        .optional()
        .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
    let Some((current, start, incr, minv, maxv, cycle)) = row else {
        return Err(err(208, format!("Invalid object name '{name}'.")));
    };
    let next = match current {
        None => Some(start),
        Some(c) => c.checked_add(incr).filter(|v| (minv..=maxv).contains(v)),
    };
    let next = match next {
        Some(v) => v,
        None if cycle => {
            if incr > 0 {
                minv
            } else {
                maxv
            }
        }
        None => {
            return Err(err(
                11728,
                format!(
                    "The sequence object '{name}' has reached its minimum or maximum value. Restart the sequence object to allow new values to be generated."
                ),
            ));
        }
    };
    cx.db
        .execute(
            "UPDATE __tdspeer_sequences SET current = ?3 WHERE sch = ?1 AND name = ?2",
            rusqlite::params![schema, name, next],
        )
        .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
    Ok(next)
}
