//! `OBJECT_NAME(id [, database_id])` and `COL_NAME(object_id, column_id)`: the names behind
//! the ids of the catalog views (sysviews.rs numbers them), as subqueries over those views.
//! mssql-django's schema editor and introspection read default constraints and index columns
//! through them (`COL_NAME(parent_object_id, parent_column_id) FROM sys.default_constraints`).
//! An id that names nothing gives NULL, as on SQL Server.

use super::sysviews::view;

/// SQLite text for `up` (OBJECT_NAME or COL_NAME) over its rewritten arguments; None for a
/// call with the wrong number of arguments (the caller reports it).
pub fn call(up: &str, args: &[String], spid: u16) -> Option<String> {
    match (up, args) {
        ("OBJECT_NAME", [id] | [id, _]) => {
            // Tables, views and procedures (sys.objects), then the constraints SQL Server also
            // names by object id: keys, foreign keys, defaults.
            let objects = [
                "OBJECTS",
                "KEY_CONSTRAINTS",
                "FOREIGN_KEYS",
                "DEFAULT_CONSTRAINTS",
            ]
            .iter()
            .filter_map(|v| view("SYS", v, spid))
            .map(|sql| format!("SELECT name, object_id FROM ({sql})"))
            .collect::<Vec<_>>()
            .join(" UNION ALL ");
            Some(format!(
                "(SELECT name FROM ({objects}) WHERE object_id = ({id}) LIMIT 1)"
            ))
        }
        ("COL_NAME", [id, column]) => {
            let columns = view("SYS", "COLUMNS", spid)?;
            Some(format!(
                "(SELECT name FROM ({columns}) WHERE object_id = ({id}) AND column_id = ({column}) LIMIT 1)"
            ))
        }
        _ => None,
    }
}
