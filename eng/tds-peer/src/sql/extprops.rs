//! Extended properties (`sp_addextendedproperty` / `sp_updateextendedproperty` /
//! `sp_dropextendedproperty`, `sys.extended_properties`, `fn_listextendedproperty`): what
//! SQLAlchemy's mssql dialect stores table and column comments in (`MS_Description`).
//!
//! Kept in the shared `__tdspeer_extprops` by schema, table and column name; the view gives
//! them the ids of the objects they name (class 1, major_id = object id, minor_id = column id
//! or 0). A property of an object that no longer exists is not listed.

use super::catalog::param;
use super::errors::{SqlError, from_sqlite};
use crate::sql::context::{Context, Flow, Param, StmtErr};
use crate::token::value::as_text;

fn err(number: i32, msg: String) -> StmtErr {
    StmtErr::Sql(SqlError::new(number, 16, &msg))
}

/// `kind`: "add", "update" or "drop". Arguments by position or name: @name, [@value,]
/// @level0type, @level0name, @level1type, @level1name, @level2type, @level2name.
pub(crate) fn sp_extendedproperty(
    cx: &mut Context,
    kind: &str,
    params: &[Param],
) -> Result<Flow, StmtErr> {
    let text = |v: Option<&rusqlite::types::Value>| v.map(as_text).unwrap_or_default();
    let shift = usize::from(kind != "drop");
    let name = text(param(params, "@name", 0));
    let value = if kind == "drop" {
        None
    } else {
        param(params, "@value", 1).map(as_text)
    };
    let level = |i: usize| {
        (
            text(param(params, &format!("@level{i}type"), shift + 1 + 2 * i)).to_ascii_uppercase(),
            text(param(params, &format!("@level{i}name"), shift + 2 + 2 * i)),
        )
    };
    let (t0, sch) = level(0);
    let (t1, tbl) = level(1);
    let (t2, col) = level(2);
    if t0 != "SCHEMA" || !(t1 == "TABLE" || t1 == "VIEW") || !(t2.is_empty() || t2 == "COLUMN") {
        return Err(err(
            15135,
            format!(
                "Object is invalid. Extended properties are not permitted on '{sch}.{tbl}', or the object does not exist."
            ),
        ));
    }
    cx.before_write()?;
    let args = rusqlite::params![sch, tbl, col, name];
    let n = match kind {
        "add" => cx.db.execute(
            "INSERT INTO __tdspeer_extprops VALUES (?1, ?2, ?3, ?4, ?5)",
            rusqlite::params![sch, tbl, col, name, value],
        ),
        "update" => cx.db.execute(
            "UPDATE __tdspeer_extprops SET value = ?5 WHERE sch = ?1 AND tbl = ?2 AND col = ?3 AND name = ?4",
            rusqlite::params![sch, tbl, col, name, value],
        ),
        _ => cx.db.execute(
            "DELETE FROM __tdspeer_extprops WHERE sch = ?1 AND tbl = ?2 AND col = ?3 AND name = ?4",
            args,
        ),
    }
    .map_err(|e| {
        if e.to_string().contains("UNIQUE") {
            err(15233, format!("Property cannot be added. Property '{name}' already exists for '{sch}.{tbl}'."))
        } else {
            StmtErr::Sql(from_sqlite(&e))
        }
    })?;
    if n == 0 && kind != "add" {
        return Err(err(
            15217,
            format!(
                "Property cannot be updated or deleted. Property '{name}' does not exist for '{sch}.{tbl}'."
            ),
        ));
    }
    Ok(Flow::Continue)
}

/// After a DROP: the properties of objects that are gone go with them (SQL Server drops an
/// object's extended properties with it), so a table created again under the same name starts
/// without the old comments.
pub fn forget_dropped(db: &rusqlite::Connection) {
    let _ = db.execute(
        "DELETE FROM __tdspeer_extprops WHERE NOT EXISTS (SELECT 1 FROM sqlite_master m WHERE m.type IN ('table', 'view') AND m.name = CASE WHEN lower(__tdspeer_extprops.sch) = 'dbo' THEN __tdspeer_extprops.tbl ELSE __tdspeer_extprops.sch || '.' || __tdspeer_extprops.tbl END COLLATE NOCASE)",
        [],
    );
}
