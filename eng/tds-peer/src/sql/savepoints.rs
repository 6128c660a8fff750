//! Savepoints: `SAVE TRAN[SACTION] name` and `ROLLBACK TRAN[SACTION] name`, on SQLite's
//! `SAVEPOINT` / `ROLLBACK TO`. Also the name of `BEGIN TRAN name`, which `ROLLBACK TRAN name`
//! may give to roll the whole transaction back.
//!
//! A savepoint lives inside SQLite's write transaction, which a transaction that shares the
//! writer gives up when another session wants to write (locks.rs: it rolls back and later
//! re-applies its rows, and SQLite's savepoints would be gone with it). So SAVE TRANSACTION
//! pins the transaction, as DDL does: it keeps the writer until it ends.

use crate::resp::Resp;
use crate::sql::context::{Context, Flow, Out, StmtErr};
use crate::sql::errors::{SqlError, from_sqlite};
use crate::sql::lexer::{Tok, sig};
use crate::sql::settings;

/// The open transaction's savepoints and name.
#[derive(Default)]
pub struct Saves {
    /// (T-SQL name, SQLite savepoint name), oldest first; a reused name is pushed again and
    /// the latest wins.
    stack: Vec<(String, String)>,
    /// Counter for unique SQLite savepoint names.
    next: u64,
    /// `BEGIN TRAN name`'s name.
    txn_name: Option<String>,
}

impl Saves {
    /// The transaction ended (COMMIT, ROLLBACK, deadlock victim, reset): nothing is left.
    pub fn clear(&mut self) {
        self.stack.clear();
        self.txn_name = None;
    }
}

/// The transaction or savepoint name after `BEGIN|SAVE|ROLLBACK|COMMIT [TRAN[SACTION]]`:
/// an identifier, or a variable's value. Transaction names are case-sensitive in SQL Server.
fn name_of(cx: &Context, toks: &[Tok]) -> Option<String> {
    let sg = sig(toks);
    let mut k = 1;
    if sg
        .get(k)
        .is_some_and(|t| t.is_word("TRAN") || t.is_word("TRANSACTION") || t.is_word("WORK"))
    {
        k += 1;
    }
    match sg.get(k)? {
        Tok::Word(w) if !w.eq_ignore_ascii_case("WITH") => Some(w.clone()),
        Tok::Quoted(q) => Some(q.clone()),
        Tok::Var(v) => cx
            .vars
            .iter()
            .find(|x| x.name.eq_ignore_ascii_case(v))
            .map(|x| crate::token::value::as_text(&x.value)),
        _ => None,
    }
}

fn exec(cx: &Context, sql: &str) -> Result<(), StmtErr> {
    cx.db
        .execute_batch(sql)
        .map_err(|e| StmtErr::Sql(from_sqlite(&e)))
}

/// `BEGIN TRAN[SACTION] [name]`.
pub(crate) fn begin_tran(
    cx: &mut Context,
    toks: &[Tok],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    let outermost = !cx.txn_open;
    let name = name_of(cx, toks);
    let flow = settings::begin_tran(cx, out, r)?;
    if outermost {
        cx.saves.txn_name = name;
    }
    Ok(flow)
}

/// `SAVE TRAN[SACTION] name`: 628 outside a transaction.
pub(crate) fn save(cx: &mut Context, toks: &[Tok]) -> Result<Flow, StmtErr> {
    let Some(name) = name_of(cx, toks) else {
        return Err(StmtErr::Sql(SqlError::syntax(
            "Incorrect syntax near 'TRANSACTION'.",
        )));
    };
    if !cx.txn_open {
        return Err(StmtErr::Sql(SqlError::new(
            628,
            16,
            "Cannot issue SAVE TRANSACTION when there is no active transaction.",
        )));
    }
    // The writer and SQLite's transaction, kept to the end (see the module comment).
    cx.before_write().map_err(StmtErr::Sql)?;
    if !cx.sqlite_txn {
        // The writer taken by an autocommit statement of this batch before BEGIN TRAN: a
        // SAVEPOINT alone would open a transaction COMMIT does not know of.
        exec(cx, "BEGIN IMMEDIATE")?;
        cx.sqlite_txn = true;
    }
    cx.saves.next += 1;
    let sp = format!("__tdspeer_save{}", cx.saves.next);
    exec(cx, &format!("SAVEPOINT {sp}"))?;
    cx.saves.stack.push((name, sp));
    Ok(Flow::Continue)
}

/// `ROLLBACK [TRAN[SACTION] [name]]`: to the latest savepoint of that name (the transaction
/// stays open), else the whole transaction (no name, or the transaction's own name), else
/// 6401. `COMMIT` and unnamed ROLLBACK are settings.rs's.
pub(crate) fn end_tran(
    cx: &mut Context,
    toks: &[Tok],
    rollback: bool,
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    let name = if rollback && cx.txn_open {
        name_of(cx, toks)
    } else {
        None
    };
    let Some(name) = name else {
        return settings::end_tran(cx, rollback, out, r);
    };
    if let Some(at) = cx.saves.stack.iter().rposition(|(n, _)| *n == name) {
        let sp = cx.saves.stack[at].1.clone();
        // SQLite keeps the savepoint itself (it can be rolled back to again) and drops the
        // later ones, as SQL Server does.
        exec(cx, &format!("ROLLBACK TO {sp}"))?;
        cx.saves.stack.truncate(at + 1);
        cx.txn_epoch += 1;
        return Ok(Flow::Continue);
    }
    if cx.saves.txn_name.as_deref() == Some(name.as_str()) {
        return settings::end_tran(cx, rollback, out, r);
    }
    let shown: String = name.chars().take(32).collect();
    Err(StmtErr::Sql(SqlError::new(
        6401,
        16,
        format!("Cannot roll back {shown}. No transaction or savepoint of that name was found."),
    )))
}
