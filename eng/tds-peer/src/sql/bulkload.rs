//! SQL Server's bulk load: `INSERT BULK t (cols) [WITH (hints)]` (a SQL batch) leaves a pending
//! load in the session; the BULK LOAD message (packet type 0x07) that follows carries its rows
//! (both parsed in `bulk.rs`). The rows go in through the engine's own INSERT path, one
//! statement rewritten once for the whole load, so type conversions, identity, rowversion and
//! constraints behave as for an INSERT. Each load is one batch: all of it or none of it.

// A wire parser: every cast that can lose sign or bits is decided (issue 36; a hostile
// client's numbers end in a TDS error or a closed connection, never a wrapped length/handle).
#![warn(
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    clippy::cast_possible_truncation
)]

use crate::bulk;
use crate::resp::Resp;
use crate::sql::bulkplan::{Limit, Listed, PendingLoad};
use crate::sql::context::{Context, Flow, Out, Param, StmtErr};
use crate::sql::errors::SqlError;
use crate::sql::lexer::{self, Tok};
use crate::sql::{dml, schema};
use crate::token;
use crate::types::Ty;
use rusqlite::types::Value;
use std::collections::HashMap;
use std::io;

/// Rows inserted between two looks for an ATTENTION from the client.
const ATTENTION_POLL_ROWS: usize = 4096;

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
    let defaults = defaulted_columns(cx, &name);
    let identity_insert = cx
        .identity_insert
        .as_deref()
        .is_some_and(|t| t.eq_ignore_ascii_case(&name));
    let mut columns = Vec::with_capacity(stmt.columns.len());
    for c in &stmt.columns {
        let col = cols
            .iter()
            .find(|k| k.name.eq_ignore_ascii_case(&c.name))
            .ok_or_else(|| SqlError::new(207, 16, format!("Invalid column name '{}'.", c.name)))?;
        columns.push(Listed {
            name: col.name.clone(),
            ty: col.ty,
            defaulted: defaults.iter().any(|d| d.eq_ignore_ascii_case(&col.name)),
            server_numbered: col.identity && !identity_insert,
            limit: Limit::of(col.ty),
        });
    }
    let quote = |s: &str| format!("[{}]", s.replace(']', "]]"));
    // As `sqlite_name` chose: `[s].[t]` in a user schema, else the table (whose own name may
    // hold a dot: `[x.y]`).
    let target = match stmt.table.as_slice() {
        [.., s, t] if !s.is_empty() && !s.eq_ignore_ascii_case("dbo") => {
            format!("{}.{}", quote(s), quote(t))
        }
        [.., t] => quote(t),
        [] => quote(&name),
    };
    cx.bulk = Some(PendingLoad {
        target,
        columns,
        hints: stmt.hints,
    });
    Ok(Flow::Continue)
}

/// The columns of a table that have a DEFAULT.
fn defaulted_columns(cx: &Context, table: &str) -> Vec<String> {
    let sql = format!(
        "PRAGMA table_info(\"{}\")",
        if cx.is_table(table) {
            table.to_string()
        } else {
            schema::base_name(table)
        }
        .replace('"', "\"\"")
    );
    cx.db
        .prepare(&sql)
        .and_then(|mut st| {
            st.query_map([], |r| {
                Ok((r.get::<_, String>(1)?, r.get::<_, Option<String>>(4)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()
        })
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(n, d)| d.map(|_| n))
        .collect()
}

/// A BULK LOAD message: the rows of the pending `INSERT BULK`, inserted as one batch; DONE
/// with the row count, or the error and DONE_ERROR with nothing of the batch kept.
pub(crate) fn load(
    cx: &mut Context,
    message: bulk::BulkMessage<'_>,
    r: &mut Resp,
) -> io::Result<()> {
    let Some(pending) = cx.bulk.take() else {
        let rows = message.rows()?;
        if rows.columns.is_empty() && rows.rows.is_empty() {
            // FreeTDS's bcp_done after a batch the server refused sends an empty BULK LOAD
            // message with no INSERT BULK before it: nothing to load, nothing to refuse.
            let out = Out::new(false);
            return out.finish(r).map(|_| ());
        }
        return Err(crate::io::proto_err(
            "a BULK LOAD message without a pending INSERT BULK",
        ));
    };
    let mut out = Out::new(false);
    let applied = if cx.shared.bulk_discard {
        discard(&pending, &message)?
    } else {
        let rows = message.rows()?;
        announced_types(&pending, &rows.columns).and_then(|()| apply(cx, &pending, rows.rows, r))
    };
    match applied {
        // The ATTENTION's DONE already ended the reply.
        Ok(_) if r.attn_acked => return Ok(()),
        Ok(n) => {
            cx.rowcount = i64::try_from(n).unwrap_or(i64::MAX);
            out.done(r, token::DONE_COUNT, token::CMD_INSERT, n as u64)?;
        }
        Err(StmtErr::Sql(e)) => out.error(r, &e)?,
        Err(StmtErr::Io(e)) => return Err(e),
    }
    out.finish(r).map(|_| ())
}

/// `--bulk-discard`: the rows are checked as a load checks them and counted, nothing is
/// stored (nor kept while the message is read), so that a benchmark measures the client, not
/// the peer's SQLite or its allocator.
fn discard(
    pending: &PendingLoad,
    message: &bulk::BulkMessage<'_>,
) -> io::Result<Result<usize, StmtErr>> {
    let limited = pending.limited();
    let mut count = 0;
    let mut refused = None;
    let columns = message.scan(|row| {
        if refused.is_none() {
            match check_row(row, pending.columns.len(), &limited) {
                Ok(()) => count += 1,
                Err(e) => refused = Some(e),
            }
        }
    })?;
    Ok(announced_types(pending, &columns).and_then(|()| refused.map_or(Ok(count), Err)))
}

/// 4816 for a column whose announced type cannot go into the table's: binary data for a
/// column that is not binary or the other way round (SQL Server converts the rest).
fn announced_types(pending: &PendingLoad, announced: &[(String, Vec<u8>)]) -> Result<(), StmtErr> {
    let binary_wire = |t: u8| matches!(t, 0xA5 | 0xAD | 0x22 | 0x25 | 0x2D);
    for (i, (c, (_, ti))) in pending.columns.iter().zip(announced).enumerate() {
        let binary_column = matches!(c.ty, Ty::Binary(_) | Ty::VarBinary(_));
        let wire = ti.first().copied().unwrap_or(0);
        if c.ty != Ty::Variant && binary_wire(wire) != binary_column {
            return Err(invalid_type(i));
        }
    }
    if announced.len() != pending.columns.len() {
        return Err(invalid_type(pending.columns.len().min(announced.len())));
    }
    Ok(())
}

/// What a row must be before it is inserted: as many values as columns (4816), none longer
/// than its column (4815).
fn check_row(row: &[Value], columns: usize, limited: &[(usize, Limit)]) -> Result<(), StmtErr> {
    if row.len() != columns {
        return Err(invalid_type(columns.min(row.len())));
    }
    for &(i, limit) in limited {
        if !limit.fits(&row[i]) {
            return Err(StmtErr::Sql(SqlError::new(
                4815,
                17,
                format!(
                    "Received an invalid column length from the bcp client for colid {}.",
                    i + 1
                ),
            )));
        }
    }
    Ok(())
}

fn invalid_type(i: usize) -> StmtErr {
    StmtErr::Sql(SqlError::new(
        4816,
        16,
        format!("Invalid column type from bcp client for colid {}.", i + 1),
    ))
}

/// Inserts the rows inside a savepoint: in autocommit the load commits on its own, inside a
/// user transaction it stays in it; a failing row undoes the whole batch.
/// An ATTENTION that arrives while the rows go in, or right after, rolls the load back and is
/// answered with DONE_ATTN alone (`r.attn_acked`).
fn apply(
    cx: &mut Context,
    pending: &PendingLoad,
    rows: Vec<Vec<Value>>,
    r: &mut Resp,
) -> Result<usize, StmtErr> {
    let marks: Vec<String> = (1..=pending.columns.len())
        .map(|i| format!("@P{i}"))
        .collect();
    let mut params: Vec<Param> = pending
        .columns
        .iter()
        .zip(&marks)
        .map(|(c, m)| Param {
            name: m.clone(),
            ty: Some(c.ty),
            value: Value::Null,
            output: false,
            table: None,
        })
        .collect();
    let decl = Context::decl(&params);
    // Which columns the INSERT leaves out: the server-numbered ones always; with KEEP_NULLS
    // off, a defaulted column whose value is NULL (it takes its DEFAULT). One statement per
    // such set, rewritten once.
    let always: Vec<bool> = pending.columns.iter().map(|c| c.server_numbered).collect();
    let defaulted: Vec<usize> = if pending.hints.keep_nulls {
        Vec::new()
    } else {
        (0..pending.columns.len())
            .filter(|&i| pending.columns[i].defaulted)
            .collect()
    };
    let limited = pending.limited();
    let mut statements: HashMap<Vec<bool>, String> = HashMap::new();
    let mut statement_for = |cx: &mut Context, omit: &[bool]| -> Result<String, StmtErr> {
        if let Some(s) = statements.get(omit) {
            return Ok(s.clone());
        }
        let kept: Vec<usize> = (0..omit.len()).filter(|&i| !omit[i]).collect();
        let insert = if kept.is_empty() {
            format!("INSERT INTO {} DEFAULT VALUES", pending.target)
        } else {
            let names: Vec<String> = kept
                .iter()
                .map(|&i| format!("[{}]", pending.columns[i].name.replace(']', "]]")))
                .collect();
            let values: Vec<&str> = kept.iter().map(|&i| marks[i].as_str()).collect();
            format!(
                "INSERT INTO {} ({}) VALUES ({})",
                pending.target,
                names.join(", "),
                values.join(", ")
            )
        };
        let toks = lexer::tokenize(&insert).map_err(|e| StmtErr::Sql(SqlError::syntax(e)))?;
        let sql = dml::rewrite_dml(cx, &toks, &decl)?;
        statements.insert(omit.to_vec(), sql.clone());
        Ok(sql)
    };
    let mut sql = statement_for(cx, &always)?;
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
    let mut omit = always.clone();
    let mut cancelled = false;
    let result = (|| {
        for (k, row) in rows.into_iter().enumerate() {
            if k % ATTENTION_POLL_ROWS == 0 && r.io.poll_attention() {
                cancelled = true;
                return Ok(());
            }
            check_row(&row, params.len(), &limited)?;
            if !defaulted.is_empty() {
                omit.copy_from_slice(&always);
                for &i in &defaulted {
                    omit[i] |= row[i] == Value::Null;
                }
                sql = statement_for(cx, &omit)?;
            }
            for (p, v) in params.iter_mut().zip(row) {
                p.value = super::vector::stored(p.ty, v).map_err(StmtErr::Sql)?;
            }
            n += cx.exec(&sql, &params)?;
        }
        cancelled = r.io.poll_attention();
        Ok(())
    })();
    let end = match result {
        Ok(()) if !cancelled => "RELEASE bulk_load",
        _ => "ROLLBACK TO bulk_load; RELEASE bulk_load",
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
    if cancelled {
        Out::new(false).cancelled(r)?;
        return Ok(0);
    }
    result.map(|()| n)
}
