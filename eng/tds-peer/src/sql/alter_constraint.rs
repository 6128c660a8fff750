//! `ALTER TABLE t ADD CONSTRAINT name FOREIGN KEY (a, …) REFERENCES r (b, …) [ON …]`, which
//! Django's migrations (mssql-django) issue after creating the tables of a model with a
//! ForeignKey. SQLite takes foreign keys only in CREATE TABLE, so the clause is appended to the
//! table's definition in sqlite_master (`PRAGMA writable_schema`, as SQLite's documentation
//! describes for schema changes that leave the stored rows as they are: a foreign key clause
//! is one) and the schema version is bumped so every connection reads the new definition.
//! The catalog then lists the key (sys.foreign_keys, sp_fkeys) under its name; like every
//! foreign key of the peer it is not enforced (README, "What it does not emulate").

use crate::sql::context::{Context, Flow, StmtErr};
use crate::sql::errors::{SqlError, from_sqlite};
use crate::sql::lexer::{Tok, sig};

/// The statement, done, when it is an ADD CONSTRAINT … FOREIGN KEY; None for any other ALTER
/// TABLE (`ddl` calls it for ALTER TABLE statements only).
pub(crate) fn add_foreign_key(
    cx: &mut Context,
    toks: &[Tok],
    ctx: &super::rewrite::Ctx<'_>,
) -> Option<Result<Flow, StmtErr>> {
    let pos = |p: &dyn Fn(&Tok) -> bool| toks.iter().position(p);
    let add = pos(&|t| t.is_word("ADD"))?;
    let constraint = pos(&|t| t.is_word("CONSTRAINT")).filter(|&c| c > add)?;
    let foreign = pos(&|t| t.is_word("FOREIGN")).filter(|&f| f > constraint)?;
    let table_at = pos(&|t| t.is_word("TABLE"))? + 1;
    Some(run(cx, ctx, toks, table_at, add, constraint, foreign))
}

fn run(
    cx: &mut Context,
    ctx: &super::rewrite::Ctx<'_>,
    toks: &[Tok],
    table_at: usize,
    add: usize,
    constraint: usize,
    foreign: usize,
) -> Result<Flow, StmtErr> {
    let syntax = |e: String| StmtErr::Sql(SqlError::syntax(e));
    let table = ctx.rw(&toks[table_at..add]).map_err(syntax)?;
    let table = table.trim().trim_matches('"').replace("\"\"", "\"");
    let clause = ctx.rw(&toks[constraint..]).map_err(syntax)?;
    let sg = sig(&toks[constraint..]);
    let name = match sg.get(1) {
        Some(Tok::Word(w) | Tok::Quoted(w)) => w.clone(),
        _ => return Err(syntax("Incorrect syntax near 'CONSTRAINT'.".into())),
    };
    // The referencing columns: the names between FOREIGN KEY ( and ).
    let cols: Vec<String> = sig(&toks[foreign..])
        .iter()
        .skip_while(|t| !t.is_punct('('))
        .skip(1)
        .take_while(|t| !t.is_punct(')'))
        .filter_map(|t| match t {
            Tok::Word(w) | Tok::Quoted(w) => Some(w.to_lowercase()),
            _ => None,
        })
        .collect();
    cx.before_write()?;
    let sqlerr = |e: rusqlite::Error| StmtErr::Sql(from_sqlite(&e));
    let def = table_definition(&cx.db, &table)?;
    let Some(close) = def.rfind(')') else {
        return Err(syntax("Incorrect syntax near 'CONSTRAINT'.".into()));
    };
    let new_def = format!("{}, {}){}", &def[..close], clause.trim(), &def[close + 1..]);
    rewrite_table_sql(&cx.db, &table, &new_def).map_err(sqlerr)?;
    let _ = cx.db.execute(
        "INSERT INTO __tdspeer_constraints VALUES (?1, 'F', ?2, ?3)",
        rusqlite::params![table, name, cols.join(",")],
    );
    cx.rowcount = 0;
    Ok(Flow::Continue)
}

/// Replace `table`'s CREATE statement in sqlite_master (`PRAGMA writable_schema`) and bump the
/// schema version, so every connection reads the new definition; the stored rows stay as they
/// are (a constraint clause appended to the definition). Writable schema is switched off again
/// whatever the update did.
pub(crate) fn rewrite_table_sql(
    db: &rusqlite::Connection,
    table: &str,
    new_def: &str,
) -> rusqlite::Result<()> {
    let version: i64 = db.query_row("PRAGMA schema_version", [], |r| r.get(0))?;
    db.execute_batch("PRAGMA writable_schema = ON")?;
    let updated = db.execute(
        "UPDATE sqlite_master SET sql = ?1 WHERE type = 'table' AND name = ?2 COLLATE NOCASE",
        [new_def, table],
    );
    let bumped = db.execute_batch(&format!("PRAGMA schema_version = {}", version + 1));
    db.execute_batch("PRAGMA writable_schema = OFF")?;
    updated?;
    bumped
}

/// `table`'s CREATE statement in sqlite_master; SQL Server's 4902 when there is no such table.
pub(crate) fn table_definition(db: &rusqlite::Connection, table: &str) -> Result<String, StmtErr> {
    db.query_row(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1 COLLATE NOCASE",
        [table],
        |r| r.get(0),
    )
    .map_err(|_| {
        StmtErr::Sql(SqlError::new(
            4902,
            16,
            format!(
                "Cannot find the object \"{table}\" because it does not exist or you do not have permissions."
            ),
        ))
    })
}
