//! `DBCC CHECKIDENT ('table', RESEED, n) [WITH NO_INFOMSGS]`, which mssql-django's flush (every
//! Django TransactionTestCase) runs after deleting the rows. As on SQL Server, the next row
//! gets n + 1 when the table has taken identity values before, n when it never has (an
//! IDENTITY column is SQLite's AUTOINCREMENT, whose counter row appears with the first insert).
//! Other DBCC commands, and CHECKIDENT without a RESEED value, are not emulated (102).

use crate::sql::context::{Context, Flow, StmtErr};
use crate::sql::errors::{SqlError, from_sqlite};
use crate::sql::lexer::{Tok, sig, tokenize};

/// The statement, done, when it is a DBCC; None for any other statement.
pub(crate) fn dbcc(
    cx: &mut Context,
    toks: &[Tok],
    ctx: &super::rewrite::Ctx<'_>,
) -> Option<Result<Flow, StmtErr>> {
    let sg = sig(toks);
    if !sg.first()?.is_word("DBCC") {
        return None;
    }
    // ( 'table' , RESEED , n )
    let args = match &sg[..] {
        [_, cmd, open, name, c1, reseed, c2, value, close, ..]
            if cmd.is_word("CHECKIDENT")
                && open.is_punct('(')
                && c1.is_punct(',')
                && reseed.is_word("RESEED")
                && c2.is_punct(',')
                && close.is_punct(')') =>
        {
            Some((*name, *value))
        }
        _ => None,
    };
    let Some((name, value)) = args else {
        let what = sg.get(1).map_or_else(|| "DBCC".to_string(), |t| t.text());
        return Some(Err(StmtErr::Sql(SqlError::unsupported(&format!(
            "DBCC {what}"
        )))));
    };
    Some(reseed(cx, ctx, name, value))
}

fn reseed(
    cx: &mut Context,
    ctx: &super::rewrite::Ctx<'_>,
    name: &Tok,
    value: &Tok,
) -> Result<Flow, StmtErr> {
    let syntax = |e: String| StmtErr::Sql(SqlError::syntax(e));
    let shown = match name {
        Tok::Str { s, .. } => s.clone(),
        other => other.text(),
    };
    let n: i64 = value
        .text()
        .parse()
        .map_err(|_| syntax(format!("Incorrect syntax near '{}'.", value.text())))?;
    let table = ctx.rw(&tokenize(&shown).map_err(syntax)?).map_err(syntax)?;
    let table = table.trim().trim_matches('"').replace("\"\"", "\"");
    let found: Option<String> = cx
        .db
        .query_row(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?1 COLLATE NOCASE \
             AND sql LIKE '%AUTOINCREMENT%'",
            [&table],
            |r| r.get(0),
        )
        .ok();
    let Some(table) = found else {
        return Err(StmtErr::Sql(SqlError::new(
            2501,
            16,
            format!(
                "Cannot find a table or object with the name \"{shown}\". Check the system catalog."
            ),
        )));
    };
    cx.before_write()?;
    let used = cx
        .db
        .execute(
            "UPDATE sqlite_sequence SET seq = ?2 WHERE name = ?1",
            rusqlite::params![table, n],
        )
        .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
    if used == 0 {
        cx.db
            .execute(
                "INSERT INTO sqlite_sequence (name, seq) VALUES (?1, ?2)",
                rusqlite::params![table, n - 1],
            )
            .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
    }
    cx.rowcount = 0;
    Ok(Flow::Continue)
}
