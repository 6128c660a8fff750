//! CREATE / DROP / ALTER / TRUNCATE of tables, views and indexes, rewritten to SQLite; the
//! constraint names and extended properties the catalog keeps follow them.

use crate::sql::context::{Context, Flow, Param, StmtErr};
use crate::sql::errors::{SqlError, from_sqlite};
use crate::sql::lexer::{Tok, sig};
use crate::sql::{constraints, extprops, rewrite, sysviews};

fn syntax(e: String) -> StmtErr {
    StmtErr::Sql(SqlError::syntax(e))
}

/// `CREATE TABLE`, `CREATE VIEW`/`INDEX`, `ALTER …`, `DROP …`, `TRUNCATE TABLE`.
pub(crate) fn ddl(cx: &mut Context, toks: &[Tok], params: &[Param]) -> Result<Flow, StmtErr> {
    let sg = sig(toks);
    let first = sg[0].word().unwrap_or_default();
    let second = |w: &str| sg.get(1).is_some_and(|t| t.is_word(w));
    let decl = Context::decl(params);
    let ctx = cx.ctx(&decl);
    // The ALTER TABLE forms the peer carries out itself (SQLite has none of them); any other
    // ALTER TABLE is rewritten below.
    if first == "ALTER" && second("TABLE") {
        if let Some(done) = super::alter_constraint::add_foreign_key(cx, toks, &ctx) {
            return done;
        }
        if let Some(done) = super::checks::alter_add_check(cx, toks, &ctx) {
            return done;
        }
        if let Some(done) = super::nocheck::switch_constraints(cx, toks, &ctx) {
            return done;
        }
    }
    if let Some(done) = super::checkident::dbcc(cx, toks, &ctx) {
        return done;
    }
    let create_table = first == "CREATE" && second("TABLE");
    // Every CHECK named before the rewrite, so SQLite's violation message names it (checks.rs).
    let checked = create_table
        .then(|| super::checks::of_create_table(toks, |t| ctx.rw(t).ok()))
        .flatten();
    let toks = checked.as_ref().map_or(toks, |c| &c.toks[..]);
    let named = create_table
        .then(|| constraints::of_create_table(toks, |t| ctx.rw(t).ok()))
        .flatten();
    let sql = if create_table {
        rewrite::create_table(&ctx, toks).map_err(syntax)?.sql
    } else if first == "CREATE"
        && (second("PROCEDURE") || second("PROC") || second("FUNCTION") || second("TRIGGER"))
    {
        return Err(StmtErr::Sql(SqlError::unsupported("CREATE PROCEDURE")));
    } else if first == "TRUNCATE" {
        let at = toks
            .iter()
            .position(|t| t.is_word("TABLE"))
            .map(|p| p + 1)
            .unwrap_or(1);
        format!("DELETE FROM {}", ctx.rw(&toks[at..]).map_err(syntax)?)
    } else {
        let index = sysviews::index_ddl(&ctx, toks);
        ctx.rw(index.as_deref().unwrap_or(toks)).map_err(syntax)?
    };
    cx.before_write()?;
    cx.db
        .execute_batch(&sql)
        .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
    if first == "DROP" {
        extprops::forget_dropped(&cx.db);
    }
    if let Some((table, named)) = named {
        constraints::record(&cx.db, &table, &named);
        super::checks::forget(&cx.db, &table);
    }
    if let Some(c) = &checked {
        super::checks::record(&cx.db, &c.table, &c.checks, false);
    }
    if create_table
        && let Some(at) = sg.iter().position(|t| t.is_word("TABLE"))
        && let Some(Tok::Word(n) | Tok::Quoted(n)) = sg.get(at + 1).copied()
    {
        global_temp_created(cx, n)?;
    }
    cx.rowcount = 0;
    Ok(Flow::Continue)
}

/// The shared table of global temporary tables (`##t`) and the session that made each.
const GLOBAL_TEMPS: &str = "CREATE TABLE IF NOT EXISTS __tdspeer_global_temps (name TEXT PRIMARY KEY COLLATE NOCASE, spid INTEGER NOT NULL)";

/// After `CREATE TABLE ##t` / `SELECT … INTO ##t`: this session owns `##t` (in the same
/// transaction as the table, so a rollback forgets both).
pub(crate) fn global_temp_created(cx: &mut Context, name: &str) -> Result<(), StmtErr> {
    if !name.starts_with("##") {
        return Ok(());
    }
    let sql = format!(
        "{GLOBAL_TEMPS}; INSERT OR REPLACE INTO __tdspeer_global_temps (name, spid) VALUES ('{}', {})",
        name.replace('\'', "''"),
        cx.spid
    );
    cx.db
        .execute_batch(&sql)
        .map_err(|e| StmtErr::Sql(from_sqlite(&e)))
}

/// The session ends: its open transaction is rolled back, then the global temporary tables it
/// created are dropped. (SQL Server drops one when its creator ends and the other sessions'
/// statements using it have finished; here it goes when its creator disconnects.)
pub(crate) fn end_session(cx: &mut Context) {
    if !cx.db.is_autocommit() {
        let _ = cx.db.execute_batch("ROLLBACK");
    }
    let names: Vec<String> = cx
        .db
        .prepare("SELECT name FROM __tdspeer_global_temps WHERE spid = ?1")
        .and_then(|mut st| {
            st.query_map([cx.spid], |r| r.get::<_, String>(0))
                .map(|it| it.flatten().collect())
        })
        .unwrap_or_default();
    for n in names {
        let q = n.replace('"', "\"\"");
        let _ = cx.db.execute_batch(&format!(
            "DROP TABLE IF EXISTS main.\"{q}\"; DELETE FROM __tdspeer_global_temps WHERE name = '{}'",
            n.replace('\'', "''")
        ));
    }
}

/// `IF OBJECT_ID('t') IS NOT NULL DROP TABLE t` as SQLite's `DROP TABLE IF EXISTS`.
pub(crate) fn drop_table_if_exists(
    cx: &mut Context,
    toks: &[Tok],
    drop: usize,
    params: &[Param],
) -> Result<Flow, StmtErr> {
    let decl = Context::decl(params);
    let ctx = cx.ctx(&decl);
    let rest = ctx.rw(&toks[drop..]).map_err(syntax)?;
    let sql = rest
        .replacen("TABLE", "TABLE IF EXISTS", 1)
        .replacen("table", "TABLE IF EXISTS", 1);
    cx.before_write()?;
    cx.db
        .execute_batch(&sql)
        .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
    Ok(Flow::Continue)
}
