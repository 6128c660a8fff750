//! SQL Server's bulk load: `INSERT BULK t (cols) [WITH (hints)]` (a SQL batch) leaves a pending
//! load in the session; the BULK LOAD message (packet type 0x07) that follows carries its rows
//! (both parsed in `bulk.rs`). The rows go in through the engine's own INSERT path, one
//! statement rewritten once for the whole load, so type conversions, identity, rowversion and
//! constraints behave as for an INSERT. Each load is one batch: all of it or none of it.

use crate::bulk::{self, BulkHints};
use crate::resp::Resp;
use crate::sql::context::{Context, Flow, Out, Param, StmtErr};
use crate::sql::errors::SqlError;
use crate::sql::lexer::{self, Tok};
use crate::sql::{dml, schema};
use crate::token;
use crate::types::Ty;
use std::io;

/// What `INSERT BULK` announced, waiting for its rows.
pub(crate) struct PendingLoad {
    /// The target as the INSERT names it (`[t]`, `[s].[t]`, `[#t]`).
    target: String,
    /// Each column of the statement's list with the table column's type.
    columns: Vec<(String, Ty)>,
    hints: BulkHints,
}

/// `INSERT BULK …`: checked against the table (208 unknown table, 207 unknown column, 102
/// malformed), then remembered until the BULK LOAD message arrives.
pub(crate) fn insert_bulk(cx: &mut Context, toks: &[Tok]) -> Result<Flow, StmtErr> {
    let text: String = toks.iter().map(Tok::text).collect();
    let stmt = match bulk::parse_insert_bulk(&text) {
        Ok(Some(s)) => s,
        Ok(None) => return Err(StmtErr::Sql(SqlError::syntax("INSERT"))),
        Err(e) => return Err(StmtErr::Sql(SqlError::syntax(e))),
    };
    let name = schema::sqlite_name(&stmt.table).unwrap_or_default();
    let cols = schema::table_columns(&cx.db, &name)
        .filter(|_| cx.is_table(&name))
        .ok_or_else(|| {
            SqlError::new(
                208,
                16,
                format!("Invalid object name '{}'.", stmt.table.join(".")),
            )
        })?;
    let mut columns = Vec::with_capacity(stmt.columns.len());
    for c in &stmt.columns {
        let col = cols
            .iter()
            .find(|k| k.name.eq_ignore_ascii_case(&c.name))
            .ok_or_else(|| SqlError::new(207, 16, format!("Invalid column name '{}'.", c.name)))?;
        columns.push((col.name.clone(), col.ty));
    }
    let quote = |s: &str| format!("[{}]", s.replace(']', "]]"));
    let target = match name.split_once('.') {
        Some((s, t)) => format!("{}.{}", quote(s), quote(t)),
        None => quote(&name),
    };
    cx.bulk = Some(PendingLoad {
        target,
        columns,
        hints: stmt.hints,
    });
    Ok(Flow::Continue)
}

/// A BULK LOAD message: the rows of the pending `INSERT BULK`, inserted as one batch; DONE
/// with the row count, or the error and DONE_ERROR with nothing of the batch kept.
pub(crate) fn load(cx: &mut Context, data: &[u8], r: &mut Resp) -> io::Result<()> {
    let Some(pending) = cx.bulk.take() else {
        return Err(crate::io::proto_err(
            "a BULK LOAD message without a pending INSERT BULK",
        ));
    };
    let rows = bulk::parse_bulk_message(data, crate::rpc::decode_value)?;
    let mut out = Out::new(false);
    match apply(cx, &pending, rows.rows) {
        Ok(n) => {
            cx.rowcount = n as i64;
            out.done(r, token::DONE_COUNT, token::CMD_INSERT, n as u64)?;
        }
        Err(StmtErr::Sql(e)) => out.error(r, &e)?,
        Err(StmtErr::Io(e)) => return Err(e),
    }
    out.finish(r).map(|_| ())
}

/// Inserts the rows inside a savepoint: in autocommit the load commits on its own, inside a
/// user transaction it stays in it; a failing row undoes the whole batch.
fn apply(
    cx: &mut Context,
    pending: &PendingLoad,
    rows: Vec<Vec<rusqlite::types::Value>>,
) -> Result<usize, StmtErr> {
    let names: Vec<String> = pending
        .columns
        .iter()
        .map(|(n, _)| format!("[{}]", n.replace(']', "]]")))
        .collect();
    let marks: Vec<String> = (1..=names.len()).map(|i| format!("@P{i}")).collect();
    let insert = format!(
        "INSERT INTO {} ({}) VALUES ({})",
        pending.target,
        names.join(", "),
        marks.join(", ")
    );
    let toks = lexer::tokenize(&insert).map_err(|e| StmtErr::Sql(SqlError::syntax(e)))?;
    let mut params: Vec<Param> = pending
        .columns
        .iter()
        .zip(&marks)
        .map(|((_, ty), m)| Param {
            name: m.clone(),
            ty: Some(*ty),
            value: rusqlite::types::Value::Null,
            output: false,
            table: None,
        })
        .collect();
    let decl = Context::decl(&params);
    let sql = dml::rewrite_dml(cx, &toks, &decl)?;
    cx.before_write()?;
    // SQL Server checks CHECK (and FOREIGN KEY) constraints in a bulk load only when asked
    // (the constraint is left untrusted otherwise). The peer enforces no FOREIGN KEY at all.
    let unchecked = !pending.hints.check_constraints;
    let start = if unchecked {
        "PRAGMA ignore_check_constraints = ON; SAVEPOINT bulk_load"
    } else {
        "SAVEPOINT bulk_load"
    };
    cx.db
        .execute_batch(start)
        .map_err(|e| StmtErr::Sql(super::errors::from_sqlite(&e)))?;
    let mut n = 0;
    let result = (|| {
        for row in rows {
            if row.len() != params.len() {
                return Err(StmtErr::Sql(SqlError::new(
                    4816,
                    16,
                    format!(
                        "Invalid column type from bcp client for colid {}.",
                        params.len().min(row.len()) + 1
                    ),
                )));
            }
            for (p, v) in params.iter_mut().zip(row) {
                p.value = v;
            }
            n += cx.exec(&sql, &params)?;
        }
        Ok(())
    })();
    let end = match result {
        Ok(()) => "RELEASE bulk_load",
        Err(_) => "ROLLBACK TO bulk_load; RELEASE bulk_load",
    };
    let restored = if unchecked {
        cx.db.execute_batch("PRAGMA ignore_check_constraints = OFF")
    } else {
        Ok(())
    };
    cx.db
        .execute_batch(end)
        .and(restored)
        .map_err(|e| StmtErr::Sql(super::errors::from_sqlite(&e)))?;
    result.map(|()| n)
}
