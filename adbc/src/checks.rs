//! CHECK constraints for GetObjects. ODBC has no catalog function for them, so they are read
//! from the server's own catalog: SQL Server's `sys.check_constraints` (a column's check names
//! its column by `parent_column_id`; a table-level check (`parent_column_id` = 0) names the
//! columns its `definition` mentions, which SQL Server stores bracketed, `([lo]<=[hi])`), and
//! PostgreSQL's `pg_constraint` (`contype = 'c'`, the columns of `conkey` in order).
//! `constraint_column_names` is thus "the columns the check constrains", in the order SQL
//! Server's text or PostgreSQL's key lists them. SQLite3 ODBC and other DBMS: none listed
//! (SQLite keeps checks only inside the table's CREATE text).

use crate::connection::FerrodbcConnection;
use crate::error::Result;
use crate::objects::Constraint;
use crate::session::cell;
use ferrodbc::backend::Dbms;
use std::collections::BTreeMap;

/// A SQL string literal (`N'…'` on SQL Server).
fn lit(s: &str, national: bool) -> String {
    format!(
        "{}'{}'",
        if national { "N" } else { "" },
        s.replace('\'', "''")
    )
}

/// The bracketed names of a SQL Server definition, each once, in order of appearance.
pub(crate) fn bracketed_names(definition: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut chars = definition.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        match c {
            '\'' => in_str = !in_str,
            '[' if !in_str => {
                let mut name = String::new();
                while let Some(n) = chars.next() {
                    if n == ']' {
                        if chars.peek() == Some(&']') {
                            chars.next();
                            name.push(']');
                            continue;
                        }
                        break;
                    }
                    name.push(n);
                }
                if !out.iter().any(|o| o.eq_ignore_ascii_case(&name)) {
                    out.push(name);
                }
            }
            _ => {}
        }
    }
    out
}

/// The CHECK constraints of one table. `current` is the connection's current catalog: another
/// catalog's views are named `[catalog].sys.…`.
pub(crate) fn checks_of(
    conn: &FerrodbcConnection,
    current: Option<&str>,
    catalog: Option<&str>,
    schema: Option<&str>,
    table: &str,
) -> Result<Vec<Constraint>> {
    match conn.dbms() {
        Dbms::SqlServer => sql_server(conn, current, catalog, schema, table),
        Dbms::PostgreSql => postgres(conn, schema, table),
        _ => Ok(Vec::new()),
    }
}

fn sql_server(
    conn: &FerrodbcConnection,
    current: Option<&str>,
    catalog: Option<&str>,
    schema: Option<&str>,
    table: &str,
) -> Result<Vec<Constraint>> {
    let db = match catalog {
        Some(c) if Some(c) != current => format!("[{}].", c.replace(']', "]]")),
        _ => String::new(),
    };
    let schema_test = schema.map_or_else(
        || "s.name = SCHEMA_NAME()".to_string(),
        |s| format!("s.name = {}", lit(s, true)),
    );
    let sql = format!(
        "SELECT cc.name, c.name, cc.definition FROM {db}sys.check_constraints cc \
         JOIN {db}sys.tables t ON t.object_id = cc.parent_object_id \
         JOIN {db}sys.schemas s ON s.schema_id = t.schema_id \
         LEFT JOIN {db}sys.columns c ON c.object_id = cc.parent_object_id AND c.column_id = cc.parent_column_id \
         WHERE t.name = {} AND {schema_test} ORDER BY cc.name",
        lit(table, true)
    );
    let (_, batches) = conn.session.query(&sql)?;
    let mut out = Vec::new();
    for b in &batches {
        for r in 0..b.num_rows() {
            let column = cell::text(b, 1, r);
            let columns = match column {
                Some(c) => vec![c],
                None => bracketed_names(&cell::text(b, 2, r).unwrap_or_default()),
            };
            out.push(Constraint {
                name: cell::text(b, 0, r),
                kind: "CHECK",
                columns,
                usage: Vec::new(),
            });
        }
    }
    Ok(out)
}

fn postgres(
    conn: &FerrodbcConnection,
    schema: Option<&str>,
    table: &str,
) -> Result<Vec<Constraint>> {
    let schema_test = schema.map_or_else(
        || "n.nspname = current_schema()".into(),
        |s| format!("n.nspname = {}", lit(s, false)),
    );
    let sql = format!(
        "SELECT con.conname::text, a.attname::text FROM pg_catalog.pg_constraint con \
         JOIN pg_catalog.pg_class t ON t.oid = con.conrelid \
         JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace \
         LEFT JOIN LATERAL unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord) ON true \
         LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum \
         WHERE con.contype = 'c' AND t.relname = {} AND {schema_test} ORDER BY con.conname, k.ord",
        lit(table, false)
    );
    let (_, batches) = conn.session.query(&sql)?;
    let mut by_name: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for b in &batches {
        for r in 0..b.num_rows() {
            let Some(name) = cell::text(b, 0, r) else {
                continue;
            };
            let cols = by_name.entry(name).or_default();
            cols.extend(cell::text(b, 1, r));
        }
    }
    Ok(by_name
        .into_iter()
        .map(|(name, columns)| Constraint {
            name: Some(name),
            kind: "CHECK",
            columns,
            usage: Vec::new(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::bracketed_names;

    #[test]
    fn names_of_a_definition() {
        assert_eq!(bracketed_names("([lo]<=[hi] AND [lo]>(0))"), ["lo", "hi"]);
        assert_eq!(bracketed_names("([a]]b]<>'[x]')"), ["a]b"]);
        assert!(bracketed_names("((1)=(1))").is_empty());
    }
}
