//! Dynamic SQL: `EXEC ('…')`, `EXECUTE (N'…' + @v)`. The string is literals and variables
//! joined by `+`, evaluated in the caller's scope; the text then runs in a scope of its own,
//! as SQL Server runs it: the caller's variables are not visible inside (137 "Must declare
//! the scalar variable"), SET options made inside end with it, and a `#temp` table created
//! inside is dropped when the EXEC ends. Migration scripts wrap DDL in it
//! (`IF NOT EXISTS (…) EXEC('CREATE SCHEMA x')`, which must be alone in its batch).

use crate::resp::Resp;
use crate::sql::context::{Context, Flow, Out, Param, Run, StmtErr};
use crate::sql::errors::SqlError;
use crate::sql::lexer::{Tok, matching, sig};
use crate::sql::{tabletypes, variables};
use rusqlite::types::Value;

/// `EXEC ( string_expr [+ …] )`: `open` is the index of the `(`.
pub(crate) fn exec_dynamic(
    ex: &mut dyn Run,
    toks: &[Tok],
    open: usize,
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    let Some(text) = dynamic_text(ex, toks, open, params)? else {
        // `'…' + NULL` is NULL (CONCAT_NULL_YIELDS_NULL): SQL Server runs nothing.
        return Ok(Flow::Continue);
    };
    let temps_before = temp_tables(ex);
    let saved_vars = std::mem::take(&mut ex.vars);
    let saved_nocount = ex.nocount;
    let saved_fmtonly = ex.fmtonly;
    ex.proc_depth += 1;
    let depth = ex.proc_depth;
    let res = ex.run_text(&text, &[], out, r);
    tabletypes::drop_table_vars(ex, depth);
    ex.proc_depth -= 1;
    ex.nocount = saved_nocount;
    ex.fmtonly = saved_fmtonly;
    ex.vars = saved_vars;
    for t in temp_tables(ex) {
        if !temps_before.contains(&t) {
            let _ = ex.db.execute_batch(&format!(
                "DROP TABLE IF EXISTS temp.\"{}\"",
                t.replace('"', "\"\"")
            ));
        }
    }
    res.map_err(StmtErr::Io)?;
    Ok(Flow::Continue)
}

/// The text between the parentheses: each `+`-joined part evaluated and concatenated; None
/// when a part is NULL.
fn dynamic_text(
    cx: &mut Context,
    toks: &[Tok],
    open: usize,
    params: &[Param],
) -> Result<Option<String>, StmtErr> {
    let syntax = || StmtErr::Sql(SqlError::syntax("Incorrect syntax near 'EXEC'."));
    let close = matching(toks, open).ok_or_else(syntax)?;
    let inner = &toks[open + 1..close];
    let mut parts: Vec<&[Tok]> = Vec::new();
    let (mut start, mut d) = (0usize, 0usize);
    for (i, t) in inner.iter().enumerate() {
        if t.is_punct('(') {
            d += 1;
        } else if t.is_punct(')') {
            d = d.saturating_sub(1);
        } else if d == 0 && t.is_punct('+') {
            parts.push(&inner[start..i]);
            start = i + 1;
        }
    }
    parts.push(&inner[start..]);
    let mut text = String::new();
    for part in parts {
        if sig(part).is_empty() {
            return Err(syntax());
        }
        match variables::eval_value(cx, part, params)? {
            Value::Null => return Ok(None),
            v => text.push_str(&crate::token::value::as_text(&v)),
        }
    }
    Ok(Some(text))
}

/// The session's `#temp` tables (SQLite TEMP tables named with their `#`).
fn temp_tables(cx: &Context) -> Vec<String> {
    let Ok(mut st) = cx
        .db
        .prepare("SELECT name FROM temp.sqlite_master WHERE type = 'table' AND name LIKE '#%'")
    else {
        return Vec::new();
    };
    st.query_map([], |row| row.get::<_, String>(0))
        .map(|rows| rows.flatten().collect())
        .unwrap_or_default()
}
