//! CHECK constraints as SQL Server keeps and reports them: `sys.check_constraints` and
//! `INFORMATION_SCHEMA.CHECK_CONSTRAINTS`, with the `definition` text normalised the way SQL
//! Server stores it (`CHECK (x > 0)` -> `([x]>(0))`), and error 547 when a row breaks one.
//!
//! SQLite enforces CHECK constraints itself (CREATE TABLE passes them through the rewriter), so
//! the peer evaluates every expression SQLite can: INSERT and UPDATE fail with SQLite's
//! "CHECK constraint failed: <name>", turned here into SQL Server's 547 with the constraint,
//! database, table and (for a column's check) column. To have a name in SQLite's message,
//! every unnamed CHECK of a CREATE TABLE is given SQL Server's generated name
//! (`CK__<table>__<column>__<8 hex>`, `is_system_named` = 1) before the rewrite.
//! `ALTER TABLE t [WITH CHECK | WITH NOCHECK] ADD [CONSTRAINT n] CHECK (e)` tests the existing
//! rows (547 from the ALTER TABLE statement, unless WITH NOCHECK, which leaves the constraint
//! `is_not_trusted`) and appends the clause to the table's stored definition, as
//! alter_constraint.rs does for a foreign key. Not emulated: DROP CONSTRAINT of a check,
//! NOCHECK CONSTRAINT (disabling), checks of `#temp` tables in the catalog (they are still
//! enforced), two constraints of one name in a schema (SQL Server refuses the second, 2714),
//! and, for bulk loads (which check only with the CHECK_CONSTRAINTS hint, bulkload.rs), 547
//! (SQLite's message comes back) and `is_not_trusted` after an unchecked load.

use super::check_text::definition;
use super::lexer::{Tok, matching, next_sig, sig, split_commas};
use crate::sql::context::{Context, Flow, StmtErr};
use crate::sql::errors::{SqlError, from_sqlite};

/// The shared table of check constraints (engine.rs creates it with the others).
pub const TABLE: &str = "CREATE TABLE IF NOT EXISTS __tdspeer_checks (tbl TEXT COLLATE NOCASE, name TEXT COLLATE NOCASE, col TEXT, definition TEXT, system_named INTEGER, not_trusted INTEGER)";

/// One CHECK of a CREATE TABLE or ALTER TABLE.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub name: String,
    /// The column of a column-level check; None for a table-level one.
    pub col: Option<String>,
    /// SQL Server's normalised text (`([x]>(0))`).
    pub definition: String,
    pub system_named: bool,
}

/// A CREATE TABLE with every CHECK named: the tokens to rewrite, the SQLite table name, the
/// checks to record.
pub struct Created {
    pub toks: Vec<Tok>,
    pub table: String,
    pub checks: Vec<Check>,
}

fn ident(t: &Tok) -> Option<String> {
    match t {
        Tok::Word(w) | Tok::Quoted(w) => Some(w.clone()),
        _ => None,
    }
}

/// SQL Server's generated name: `CK__` + 9 characters of the table + `__` + 5 of the column
/// (if any) + `__` + 8 hex digits (SQL Server's are the object id; here a hash).
fn generated_name(table: &str, col: Option<&str>, n: usize) -> String {
    let bare = table.rsplit('.').next().unwrap_or(table);
    let short = |s: &str, k: usize| s.chars().take(k).collect::<String>();
    let mut h: u32 = 0x811c_9dc5;
    for b in format!("{table}\0{}\0{n}", col.unwrap_or("")).bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    match col {
        Some(c) => format!("CK__{}__{}__{h:08X}", short(bare, 9), short(c, 5)),
        None => format!("CK__{}__{h:08X}", short(bare, 9)),
    }
}

/// The CHECKs of a CREATE TABLE; None when it has none (the statement is left as it is).
pub fn of_create_table(toks: &[Tok], rw: impl Fn(&[Tok]) -> Option<String>) -> Option<Created> {
    let at = toks.iter().position(|t| t.is_word("TABLE"))?;
    let open = toks.iter().position(|t| t.is_punct('('))?;
    let close = matching(toks, open)?;
    if !toks[open + 1..close].iter().any(|t| t.is_word("CHECK")) {
        return None;
    }
    let table = rw(&toks[at + 1..open])?;
    let table = table.trim().trim_matches('"').replace("\"\"", "\"");
    let mut out: Vec<Tok> = toks[..=open].to_vec();
    let mut checks = Vec::new();
    let defs = split_commas(&toks[open + 1..close]);
    let n_defs = defs.len();
    for (d, def) in defs.into_iter().enumerate() {
        let sg = sig(def);
        let table_level = sg.first().is_some_and(|t| {
            [
                "CONSTRAINT",
                "CHECK",
                "PRIMARY",
                "UNIQUE",
                "FOREIGN",
                "INDEX",
            ]
            .iter()
            .any(|k| t.is_word(k))
        });
        let col = if table_level {
            None
        } else {
            sg.first().and_then(|t| ident(t))
        };
        let mut k = 0;
        while k < def.len() {
            if def[k].is_word("CHECK")
                && let Some(p) = next_sig(def, k + 1).filter(|&p| def[p].is_punct('('))
                && let Some(e) = matching(def, p)
            {
                // `CONSTRAINT name CHECK`: the two significant tokens before CHECK.
                let before: Vec<usize> = (0..k)
                    .rev()
                    .filter(|&i| !def[i].is_space())
                    .take(2)
                    .collect();
                let given = match before.as_slice() {
                    [n, c, ..] if def[*c].is_word("CONSTRAINT") => ident(&def[*n]),
                    _ => None,
                };
                let system_named = given.is_none();
                let name =
                    given.unwrap_or_else(|| generated_name(&table, col.as_deref(), checks.len()));
                if system_named {
                    out.push(Tok::Word("CONSTRAINT".into()));
                    out.push(Tok::Space(" ".into()));
                    out.push(Tok::Quoted(name.clone()));
                    out.push(Tok::Space(" ".into()));
                }
                checks.push(Check {
                    name,
                    col: col.clone(),
                    definition: definition(&def[p + 1..e]),
                    system_named,
                });
                out.extend_from_slice(&def[k..=e]);
                k = e + 1;
                continue;
            }
            out.push(def[k].clone());
            k += 1;
        }
        if d + 1 < n_defs {
            out.push(Tok::Punct(','));
        }
    }
    out.extend_from_slice(&toks[close..]);
    Some(Created {
        toks: out,
        table,
        checks,
    })
}

/// Records a table's checks (replacing those of an earlier table of the same name). `#temp`
/// tables are the session's own: not in the shared catalog.
pub fn record(db: &rusqlite::Connection, table: &str, checks: &[Check], not_trusted: bool) {
    if table.starts_with('#') {
        return;
    }
    for c in checks {
        let _ = db.execute(
            "INSERT INTO __tdspeer_checks VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            rusqlite::params![
                table,
                c.name,
                c.col,
                c.definition,
                i64::from(c.system_named),
                i64::from(not_trusted)
            ],
        );
    }
}

/// Forgets the checks of a table created anew (CREATE TABLE after a DROP).
pub fn forget(db: &rusqlite::Connection, table: &str) {
    let _ = db.execute("DELETE FROM __tdspeer_checks WHERE tbl = ?1", [table]);
}

/// sys.check_constraints over `obj` (sysviews.rs' user objects: rid, name, sname, schema_id).
pub fn sys_view(obj: &str) -> String {
    format!(
        "SELECT k.name AS name, 50000000 + k.rowid AS object_id, NULL AS principal_id, o.schema_id AS schema_id, o.rid AS parent_object_id, 'C' AS type, 'CHECK_CONSTRAINT' AS type_desc, '2024-01-01 00:00:00.000' AS create_date, '2024-01-01 00:00:00.000' AS modify_date, 0 AS is_ms_shipped, 0 AS is_published, 0 AS is_schema_published, 0 AS is_disabled, 0 AS is_not_for_replication, k.not_trusted AS is_not_trusted, COALESCE((SELECT p.cid + 1 FROM pragma_table_info(o.sname) p WHERE p.name = k.col COLLATE NOCASE), 0) AS parent_column_id, k.definition AS definition, 1 AS uses_database_collation, k.system_named AS is_system_named FROM ({obj}) o JOIN __tdspeer_checks k ON k.tbl = o.sname COLLATE NOCASE WHERE o.type = 'table'"
    )
}

/// INFORMATION_SCHEMA.CHECK_CONSTRAINTS over `obj`.
pub fn is_view(obj: &str) -> String {
    format!(
        "SELECT 'master' AS CONSTRAINT_CATALOG, o.schema_name AS CONSTRAINT_SCHEMA, k.name AS CONSTRAINT_NAME, k.definition AS CHECK_CLAUSE FROM ({obj}) o JOIN __tdspeer_checks k ON k.tbl = o.sname COLLATE NOCASE WHERE o.type = 'table'"
    )
}

/// SQL Server's 547 for SQLite's "CHECK constraint failed: <name>" and "FOREIGN KEY constraint
/// failed" from an INSERT, UPDATE or DELETE (`verb`); any other error unchanged. SQLite does not
/// say which foreign key failed, so that message names none (SQL Server's names the constraint,
/// table and column).
pub fn conflict(cx: &Context, err: StmtErr, verb: &str) -> StmtErr {
    match err {
        StmtErr::Sql(e) if e.msg.contains("FOREIGN KEY constraint failed") => {
            // A DELETE (or an UPDATE of a referenced key) breaks a reference to its table;
            // SQLite's message does not tell the two UPDATE cases apart.
            let which = if verb == "DELETE" {
                "REFERENCE"
            } else {
                "FOREIGN KEY"
            };
            StmtErr::Sql(SqlError::new(
                547,
                16,
                format!("The {verb} statement conflicted with the {which} constraint."),
            ))
        }
        StmtErr::Sql(e) if e.msg.starts_with("CHECK constraint failed: ") => {
            let name = e.msg["CHECK constraint failed: ".len()..]
                .trim()
                .to_string();
            StmtErr::Sql(violation(cx, &name, verb))
        }
        other => other,
    }
}

fn violation(cx: &Context, name: &str, verb: &str) -> SqlError {
    let found: Option<(String, Option<String>)> = cx
        .db
        .query_row(
            "SELECT tbl, col FROM __tdspeer_checks WHERE name = ?1",
            [name],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .ok();
    let mut msg = format!("The {verb} statement conflicted with the CHECK constraint \"{name}\".");
    if let Some((tbl, col)) = found {
        let shown = if tbl.contains('.') {
            tbl
        } else {
            format!("dbo.{tbl}")
        };
        msg.push_str(&format!(
            " The conflict occurred in database \"{}\", table \"{shown}\"",
            cx.database
        ));
        if let Some(c) = col {
            msg.push_str(&format!(", column '{c}'"));
        }
        msg.push('.');
    }
    SqlError::new(547, 16, msg)
}

/// `ALTER TABLE t [WITH CHECK|NOCHECK] ADD [CONSTRAINT n] CHECK (e)`, done; None for any other
/// ALTER TABLE (`ddl` calls it for ALTER TABLE statements only).
pub(crate) fn alter_add_check(
    cx: &mut Context,
    toks: &[Tok],
    ctx: &super::rewrite::Ctx<'_>,
) -> Option<Result<Flow, StmtErr>> {
    let add = toks.iter().position(|t| t.is_word("ADD"))?;
    let check = (add..toks.len()).find(|&i| toks[i].is_word("CHECK"))?;
    let open = next_sig(toks, check + 1).filter(|&p| toks[p].is_punct('('))?;
    let between = sig(&toks[add + 1..check]);
    let name = match between.as_slice() {
        [] => None,
        [c, n] if c.is_word("CONSTRAINT") => Some(ident(n)?),
        _ => return None,
    };
    let table_at = toks.iter().position(|t| t.is_word("TABLE"))? + 1;
    let with = (table_at..add).find(|&i| toks[i].is_word("WITH"));
    let nocheck =
        with.is_some_and(|w| next_sig(toks, w + 1).is_some_and(|n| toks[n].is_word("NOCHECK")));
    Some(run(
        cx,
        ctx,
        toks,
        (table_at, with.unwrap_or(add)),
        name,
        open,
        nocheck,
    ))
}

fn run(
    cx: &mut Context,
    ctx: &super::rewrite::Ctx<'_>,
    toks: &[Tok],
    (table_at, table_end): (usize, usize),
    name: Option<String>,
    open: usize,
    nocheck: bool,
) -> Result<Flow, StmtErr> {
    let syntax = |e: String| StmtErr::Sql(SqlError::syntax(e));
    let close =
        matching(toks, open).ok_or_else(|| syntax("Incorrect syntax near 'CHECK'.".into()))?;
    let table = ctx.rw(&toks[table_at..table_end]).map_err(syntax)?;
    let table = table.trim().trim_matches('"').replace("\"\"", "\"");
    let expr = ctx.rw(&toks[open + 1..close]).map_err(syntax)?;
    let sqlerr = |e: rusqlite::Error| StmtErr::Sql(from_sqlite(&e));
    let def = super::alter_constraint::table_definition(&cx.db, &table)?;
    let system_named = name.is_none();
    let n: i64 = cx
        .db
        .query_row(
            "SELECT COUNT(*) FROM __tdspeer_checks WHERE tbl = ?1",
            [&table],
            |r| r.get(0),
        )
        .unwrap_or(0);
    let name =
        name.unwrap_or_else(|| generated_name(&table, None, usize::try_from(n).unwrap_or(0)));
    let check = Check {
        name: name.clone(),
        col: None,
        definition: definition(&toks[open + 1..close]),
        system_named,
    };
    let quoted = format!("\"{}\"", table.replace('"', "\"\""));
    cx.before_write()?;
    if !nocheck {
        let broken: bool = cx
            .db
            .query_row(
                &format!("SELECT EXISTS (SELECT 1 FROM {quoted} WHERE NOT ({expr}))"),
                [],
                |r| r.get(0),
            )
            .map_err(sqlerr)?;
        if broken {
            let mut e = SqlError::new(
                547,
                16,
                format!(
                    "The ALTER TABLE statement conflicted with the CHECK constraint \"{name}\". The conflict occurred in database \"{}\", table \"dbo.{table}\".",
                    cx.database
                ),
            );
            e.state = 0;
            return Err(StmtErr::Sql(e));
        }
    }
    let Some(end) = def.rfind(')') else {
        return Err(syntax("Incorrect syntax near 'CHECK'.".into()));
    };
    let clause = format!(
        "CONSTRAINT \"{}\" CHECK ({expr})",
        name.replace('"', "\"\"")
    );
    let new_def = format!("{}, {clause}){}", &def[..end], &def[end + 1..]);
    super::alter_constraint::rewrite_table_sql(&cx.db, &table, &new_def).map_err(sqlerr)?;
    record(&cx.db, &table, &[check], nocheck);
    cx.rowcount = 0;
    Ok(Flow::Continue)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::lexer::tokenize;

    #[test]
    fn unnamed_checks_get_names_and_named_keep_theirs() {
        let toks = tokenize(
            "CREATE TABLE t (id int, qty int CHECK (qty > 0), lo int, hi int, CONSTRAINT ck_range CHECK (lo <= hi))",
        )
        .unwrap();
        let c = of_create_table(&toks, |_| Some("t".into())).unwrap();
        assert_eq!(c.table, "t");
        assert_eq!(c.checks.len(), 2);
        assert!(c.checks[0].system_named && c.checks[0].name.starts_with("CK__t__qty__"));
        assert_eq!(c.checks[0].col.as_deref(), Some("qty"));
        assert_eq!(c.checks[0].definition, "([qty]>(0))");
        assert_eq!(c.checks[1].name, "ck_range");
        assert!(!c.checks[1].system_named && c.checks[1].col.is_none());
        let text: String = c.toks.iter().map(Tok::text).collect();
        assert!(
            text.contains(&format!(
                "CONSTRAINT \"{}\" CHECK (qty > 0)",
                c.checks[0].name
            )),
            "{text}"
        );
        assert!(
            text.contains("CONSTRAINT ck_range CHECK (lo <= hi))"),
            "{text}"
        );
    }
}

#[cfg(test)]
mod rewrite_tests {
    use crate::sql::lexer::tokenize;
    use crate::sql::rewrite::{Ctx, create_table};

    #[test]
    fn named_checks_rewrite_for_sqlite() {
        let ctx = Ctx {
            params: &[],
            rowcount: 0,
            identity: None,
            trancount: 0,
            spid: 51,
            database: "master".into(),
            text_columns: Vec::new(),
            dec_columns: Vec::new(),
            error: None,
            schemas: Default::default(),
        };
        let toks = tokenize(
            "CREATE TABLE ck1 (id int PRIMARY KEY, qty int CHECK (qty > 0), lo int, hi int, CONSTRAINT ck_range CHECK (lo <= hi), st varchar(5) CONSTRAINT ck_st CHECK (st IN ('a','b')))",
        )
        .unwrap();
        let c = super::of_create_table(&toks, |t| ctx.rw(t).ok()).unwrap();
        let text: String = c.toks.iter().map(|t| t.text()).collect();
        let sql = create_table(&ctx, &c.toks).map(|c| c.sql);
        assert!(sql.is_ok(), "{text}\n{sql:?}");
        let sql = sql.unwrap();
        assert!(
            sql.contains("CONSTRAINT ck_range CHECK (lo <= hi)"),
            "{sql}"
        );
    }
}
