//! `ALTER TABLE t [WITH CHECK | WITH NOCHECK] {CHECK | NOCHECK} CONSTRAINT {ALL | name, …}`,
//! which mssql-django's flush (every Django TransactionTestCase) runs around its DELETEs.
//! SQLite enforces foreign keys per connection, not per constraint: NOCHECK turns the session's
//! foreign key checks off (`PRAGMA foreign_keys`, outside a transaction only, as SQLite allows)
//! and CHECK turns them back on, for every table of the session where SQL Server switches the
//! named constraints for every session. A CHECK constraint stays enforced while "disabled".
//! The statement fails as SQL Server's does for a table that is not there (4902) or a
//! constraint the table does not have (4917).

use crate::sql::context::{Context, Flow, StmtErr};
use crate::sql::errors::{SqlError, from_sqlite};
use crate::sql::lexer::{Tok, ident, sig};

/// The statement, done, when it is a CHECK/NOCHECK CONSTRAINT; None for any other ALTER TABLE
/// (`ddl` calls it for ALTER TABLE statements only).
pub(crate) fn switch_constraints(
    cx: &mut Context,
    toks: &[Tok],
    ctx: &super::rewrite::Ctx<'_>,
) -> Option<Result<Flow, StmtErr>> {
    let sg = sig(toks);
    // The switch is the CHECK/NOCHECK right before CONSTRAINT (`WITH CHECK` may precede it).
    let at = sg.windows(2).position(|w| {
        (w[0].is_word("CHECK") || w[0].is_word("NOCHECK")) && w[1].is_word("CONSTRAINT")
    })?;
    let with = sg[..at]
        .iter()
        .position(|t| t.is_word("WITH"))
        .unwrap_or(at);
    let table_toks: Vec<Tok> = sg[2..with].iter().map(|t| (*t).clone()).collect();
    let names: Vec<String> = sg[at + 2..]
        .iter()
        .filter(|t| !t.is_punct(',') && !t.is_punct(';'))
        .filter_map(|t| ident(t).map(str::to_string))
        .collect();
    let on = sg[at].is_word("CHECK");
    Some(run(cx, ctx, &table_toks, &names, on))
}

fn run(
    cx: &mut Context,
    ctx: &super::rewrite::Ctx<'_>,
    table_toks: &[Tok],
    names: &[String],
    on: bool,
) -> Result<Flow, StmtErr> {
    let shown: String = table_toks.iter().map(Tok::text).collect();
    let table = ctx
        .rw(table_toks)
        .map_err(|e| StmtErr::Sql(SqlError::syntax(e)))?;
    let table = table.trim().trim_matches('"').replace("\"\"", "\"");
    let exists: bool = cx
        .db
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1 COLLATE NOCASE) \
             OR EXISTS (SELECT 1 FROM sqlite_temp_master WHERE type = 'table' AND name = ?1 COLLATE NOCASE)",
            [&table],
            |r| r.get(0),
        )
        .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
    if !exists {
        return Err(StmtErr::Sql(SqlError::new(
            4902,
            16,
            format!(
                "Cannot find the object \"{shown}\" because it does not exist or you do not have permissions."
            ),
        )));
    }
    for name in names.iter().filter(|n| !n.eq_ignore_ascii_case("ALL")) {
        let known: bool = cx
            .db
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM __tdspeer_constraints WHERE tbl = ?1 COLLATE NOCASE AND name = ?2 COLLATE NOCASE) \
                 OR EXISTS (SELECT 1 FROM __tdspeer_checks WHERE tbl = ?1 COLLATE NOCASE AND name = ?2 COLLATE NOCASE)",
                [&table, name],
                |r| r.get(0),
            )
            .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
        if !known {
            return Err(StmtErr::Sql(SqlError::new(
                4917,
                16,
                format!("Constraint '{name}' does not exist."),
            )));
        }
    }
    if cx.db.is_autocommit() {
        cx.db
            .pragma_update(None, "foreign_keys", on)
            .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
    }
    cx.rowcount = 0;
    Ok(Flow::Continue)
}
