//! User-defined table types (`CREATE TYPE t AS TABLE (…)`), schemas (`CREATE SCHEMA s`) and
//! table-valued parameters of procedures: a TVP becomes a TEMP table `#__tvp_<name>` with the
//! type's columns for the duration of the call, and `@name` in the body reads it.

use super::errors::{SqlError, from_sqlite, from_sqlite_named};
use super::lexer::{self, Tok, sig};
use super::rewrite;
use super::schema::base_name;
use crate::sql::context::{Context, Flow, StmtErr};
use crate::tvp::Table;

/// Shared by all connections, like procedures.
pub const TYPES_TABLE: &str = "CREATE TABLE IF NOT EXISTS __tdspeer_types (name TEXT PRIMARY KEY COLLATE NOCASE, schema TEXT, body TEXT); \
     CREATE TABLE IF NOT EXISTS __tdspeer_schemas (name TEXT PRIMARY KEY COLLATE NOCASE); \
     CREATE TABLE IF NOT EXISTS __tdspeer_extprops (sch TEXT COLLATE NOCASE, tbl TEXT COLLATE NOCASE, col TEXT COLLATE NOCASE, name TEXT COLLATE NOCASE, value TEXT, PRIMARY KEY (sch, tbl, col, name)); \
     CREATE TABLE IF NOT EXISTS __tdspeer_constraints (tbl TEXT COLLATE NOCASE, kind TEXT, name TEXT, cols TEXT); \
     CREATE TABLE IF NOT EXISTS __tdspeer_sequences (sch TEXT COLLATE NOCASE, name TEXT COLLATE NOCASE, type TEXT, start INTEGER, incr INTEGER, minv INTEGER, maxv INTEGER, cycle INTEGER, current INTEGER, PRIMARY KEY (sch, name)); \
     CREATE TABLE IF NOT EXISTS __tdspeer_ident (tbl TEXT PRIMARY KEY COLLATE NOCASE, seed INTEGER NOT NULL, incr INTEGER NOT NULL, cur INTEGER); \
     CREATE TABLE IF NOT EXISTS __tdspeer_autoinc (id INTEGER PRIMARY KEY AUTOINCREMENT); \
     CREATE TABLE IF NOT EXISTS __tdspeer_global_temps (name TEXT PRIMARY KEY COLLATE NOCASE, spid INTEGER NOT NULL)";

use super::typemeta::USER_TYPE_BASE;

/// `[s].[t]` / `s.t` / `t` at the start of `sg`: (schema, name).
fn qualified(sg: &[&Tok]) -> (String, String) {
    let mut parts = Vec::new();
    let mut i = 0;
    while let Some(Tok::Word(w) | Tok::Quoted(w)) = sg.get(i) {
        parts.push(w.clone());
        if sg.get(i + 1).is_some_and(|t| t.is_punct('.')) {
            i += 2;
        } else {
            break;
        }
    }
    let name = parts.pop().unwrap_or_default();
    (parts.pop().unwrap_or_else(|| "dbo".into()), name)
}

fn err(n: i32, msg: String) -> StmtErr {
    StmtErr::Sql(SqlError::new(n, 16, msg))
}

/// The body with each table-valued parameter `@p` replaced by its TEMP table.
pub fn substitute_table_vars(body: &str, vars: &[(String, String)]) -> String {
    let Ok(toks) = lexer::tokenize(body) else {
        return body.to_string();
    };
    toks.iter()
        .map(|t| match t {
            Tok::Var(v) => vars
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(v))
                .map(|(_, temp)| temp.clone())
                .unwrap_or_else(|| t.text()),
            _ => t.text(),
        })
        .collect()
}

/// (schema, column list text, id) of a table type.
pub(crate) fn lookup_type(cx: &Context, name: &str) -> Option<(String, String, i64)> {
    cx.db
        .query_row(
            "SELECT schema, body, rowid FROM __tdspeer_types WHERE name = ?1",
            [base_name(name)],
            |r| Ok((r.get(0)?, r.get(1)?, USER_TYPE_BASE + r.get::<_, i64>(2)?)),
        )
        .ok()
}

/// CREATE TYPE [s.]t AS TABLE (col type, …)
pub(crate) fn create_type(cx: &mut Context, toks: &[Tok]) -> Result<Flow, StmtErr> {
    let sg = sig(toks);
    let (schema, name) = qualified(&sg[2..]);
    let Some(table_kw) = sg.iter().position(|t| t.is_word("TABLE")) else {
        return Err(StmtErr::Sql(SqlError::unsupported(
            "CREATE TYPE … FROM (alias types)",
        )));
    };
    let open = toks
        .iter()
        .position(|t| std::ptr::eq(t, sg[table_kw]))
        .unwrap()
        + 1;
    let body: String = toks[open..].iter().map(|t| t.text()).collect();
    // Checked now, as SQL Server does: the columns must make a valid table.
    let probe: Vec<Tok> = lexer::tokenize(&format!("CREATE TABLE #__probe {body}"))
        .map_err(|e| StmtErr::Sql(SqlError::syntax(e)))?;
    rewrite::create_table(&cx.ctx(&[]), &probe).map_err(|e| StmtErr::Sql(SqlError::syntax(e)))?;
    cx.before_write()?;
    cx.db
        .execute(
            "INSERT INTO __tdspeer_types VALUES (?1, ?2, ?3)",
            rusqlite::params![name, schema, body.trim()],
        )
        .map_err(|e| {
            if e.to_string().contains("UNIQUE") {
                err(219, format!("The type '{schema}.{name}' already exists, or you do not have permission to create it."))
            } else {
                StmtErr::Sql(from_sqlite(&e))
            }
        })?;
    Ok(Flow::Continue)
}

/// DROP TYPE [IF EXISTS] [s.]t
pub(crate) fn drop_type(cx: &mut Context, sg: &[&Tok]) -> Result<Flow, StmtErr> {
    let if_exists = sg.get(2).is_some_and(|t| t.is_word("IF"));
    let (_, name) = qualified(&sg[if if_exists { 4 } else { 2 }..]);
    cx.before_write()?;
    let n = cx
        .db
        .execute("DELETE FROM __tdspeer_types WHERE name = ?1", [&name])
        .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
    if n == 0 && !if_exists {
        return Err(err(
            218,
            format!(
                "Could not find the type '{name}' because it does not exist or you do not have permission."
            ),
        ));
    }
    Ok(Flow::Continue)
}

/// CREATE SCHEMA s / DROP SCHEMA [IF EXISTS] s: kept as names (objects stay in SQLite's
/// one namespace; a schema-qualified name means its last part).
pub(crate) fn schema_ddl(cx: &mut Context, sg: &[&Tok]) -> Result<Flow, StmtErr> {
    let create = sg[0].is_word("CREATE");
    let if_exists = sg.get(2).is_some_and(|t| t.is_word("IF"));
    let name = match sg.get(if if_exists { 4 } else { 2 }) {
        Some(Tok::Word(w) | Tok::Quoted(w)) => w.clone(),
        _ => {
            return Err(StmtErr::Sql(SqlError::syntax(
                "Incorrect syntax near 'SCHEMA'.",
            )));
        }
    };
    cx.before_write()?;
    let sql = if create {
        "INSERT INTO __tdspeer_schemas VALUES (?1)"
    } else {
        "DELETE FROM __tdspeer_schemas WHERE name = ?1"
    };
    let n = cx
        .db
        .execute(sql, [&name])
        .map_err(|e| StmtErr::Sql(from_sqlite_named(&e, &name)))?;
    super::sysviews::schemas_changed();
    if n == 0 && !create && !if_exists {
        return Err(err(
            3701,
            format!(
                "Cannot drop the schema '{name}', because it does not exist or you do not have permission."
            ),
        ));
    }
    Ok(Flow::Continue)
}

/// DECLARE @t TABLE (…): a TEMP table `#__tv_<name>_<depth>` for the rest of the batch or
/// procedure; `@t` in later statements means it (`table_var`).
pub(crate) fn declare_table_var(cx: &mut Context, var: &str, body: &[Tok]) -> Result<(), StmtErr> {
    let temp = format!("#__tv_{}_{}", var.trim_start_matches('@'), cx.proc_depth);
    let body: String = body.iter().map(|t| t.text()).collect();
    let toks = lexer::tokenize(&format!("CREATE TABLE {temp} {body}"))
        .map_err(|e| StmtErr::Sql(SqlError::syntax(e)))?;
    let sql = rewrite::create_table(&cx.ctx(&[]), &toks)
        .map_err(|e| StmtErr::Sql(SqlError::syntax(e)))?
        .sql;
    cx.db
        .execute_batch(&format!("DROP TABLE IF EXISTS temp.\"{temp}\"; {sql}"))
        .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
    let depth = cx.proc_depth;
    cx.table_vars.push((var.to_string(), temp, depth));
    Ok(())
}

/// The TEMP table of table variable `var` in scope (the innermost declaration).
pub(crate) fn table_var<'a>(cx: &'a Context, var: &str) -> Option<&'a str> {
    cx.table_vars
        .iter()
        .rev()
        .find(|(n, _, d)| *d == cx.proc_depth && n.eq_ignore_ascii_case(var))
        .map(|(_, t, _)| t.as_str())
}

/// Drops the table variables declared at `depth` or deeper (a batch or procedure ended).
pub(crate) fn drop_table_vars(cx: &mut Context, depth: u32) {
    while cx.table_vars.last().is_some_and(|(_, _, d)| *d >= depth) {
        let (_, temp, _) = cx.table_vars.pop().unwrap();
        let _ = cx
            .db
            .execute_batch(&format!("DROP TABLE IF EXISTS temp.\"{temp}\""));
    }
}

/// Creates the TEMP table behind table-valued parameter `var` of type `type_name` and loads
/// its rows; returns the table's name.
pub(crate) fn table_param(
    cx: &mut Context,
    var: &str,
    type_name: &str,
    rows: Option<&Table>,
) -> Result<String, StmtErr> {
    let (_, body, _) = lookup_type(cx, type_name).ok_or_else(|| {
        err(
            2715,
            format!("Column, parameter, or variable {var}: Cannot find data type {type_name}."),
        )
    })?;
    // The TVP names its table type; another type than the parameter's is a type clash.
    if let Some(t) =
        rows.filter(|t| !t.type_name.is_empty() && !t.type_name.eq_ignore_ascii_case(type_name))
    {
        return Err(err(
            206,
            format!(
                "Operand type clash: {}.{} is incompatible with {type_name}",
                t.schema, t.type_name
            ),
        ));
    }
    let temp = format!("#__tvp_{}_{}", var.trim_start_matches('@'), cx.proc_depth);
    let toks = lexer::tokenize(&format!("CREATE TABLE {temp} {body}"))
        .map_err(|e| StmtErr::Sql(SqlError::syntax(e)))?;
    let sql = rewrite::create_table(&cx.ctx(&[]), &toks)
        .map_err(|e| StmtErr::Sql(SqlError::syntax(e)))?
        .sql;
    let q = format!("temp.\"{temp}\"");
    cx.db
        .execute_batch(&format!("DROP TABLE IF EXISTS {q}; {sql}"))
        .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
    if let Some(t) = rows.filter(|t| !t.rows.is_empty()) {
        let marks = vec!["?"; t.rows[0].len()].join(", ");
        let mut ins = cx
            .db
            .prepare(&format!("INSERT INTO {q} VALUES ({marks})"))
            .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
        for row in &t.rows {
            ins.execute(rusqlite::params_from_iter(row.iter()))
                .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
        }
    }
    Ok(temp)
}

#[cfg(test)]
mod tests {
    #[test]
    fn table_vars_become_temp_tables() {
        let vars = vec![("@TVP".to_string(), "#__tvp_TVP_1".to_string())];
        assert_eq!(
            super::substitute_table_vars("SELECT * FROM @tvp WHERE @x = 1", &vars),
            "SELECT * FROM #__tvp_TVP_1 WHERE @x = 1"
        );
    }
}
