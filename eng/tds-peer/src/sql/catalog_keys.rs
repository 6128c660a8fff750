//! Catalog procedures behind ODBC's SQLStatistics, SQLPrimaryKeys, SQLForeignKeys,
//! SQLTablePrivileges, SQLSpecialColumns and SQLProcedures (`sp_statistics_100`, `sp_pkeys`,
//! `sp_fkeys`, `sp_table_privileges`, `sp_special_columns_100`, `sp_stored_procedures`), with
//! SQL Server 2022's result columns, answered from SQLite's schema (indexes, keys, procedures).

use super::catalog::{
    buffer_length, i, like, name_matches, odbc_type, owner_matches, param, qualifier, t,
    use_pattern,
};
use crate::resp::Resp;
use crate::sql::context::{Context, Flow, Out, Param, StmtErr};
use crate::token::{Column, value::as_text};
use crate::types::Ty;
use rusqlite::types::Value;

fn sysname(n: &str) -> Column {
    Column::new(n, Ty::NVarChar(Some(128)))
}

fn small(n: &str) -> Column {
    Column::new(n, Ty::SmallInt)
}

fn text_arg(params: &[Param], name: &str, pos: usize) -> Option<String> {
    param(params, name, pos).map(as_text)
}

/// PRAGMA foreign_key_list: (id, seq, parent table, from column, to column, on update, on delete).
type ForeignKeyRow = (i64, i64, String, String, Option<String>, String, String);

/// One index of a table: (name, unique, is primary key, column names in key order).
type Index = (String, bool, bool, Vec<String>);

/// The user table named `name` (sp_pkeys, sp_statistics, sp_fkeys find their table by
/// OBJECT_ID in SQL Server: an exact name, not a pattern), after the qualifier and owner
/// checks (`@table_qualifier` 15250, `@table_owner` other than dbo: none).
fn table_named(cx: &mut Context, params: &[Param], name: &str) -> Result<Vec<String>, StmtErr> {
    if !qualifier(cx, params, "@table_qualifier", 2, false).map_err(StmtErr::Sql)?
        || !owner_matches(params, "@table_owner", 1, false)
    {
        return Ok(Vec::new());
    }
    Ok(crate::sql::catalog::user_tables(cx)
        .into_iter()
        .filter(|(n, ty)| ty == "table" && n.eq_ignore_ascii_case(name))
        .map(|(n, _)| n)
        .collect())
}

fn tables_like(cx: &mut Context, pattern: &str) -> Vec<String> {
    crate::sql::catalog::user_tables(cx)
        .into_iter()
        .filter(|(n, ty)| ty == "table" && like(pattern, n))
        .map(|(n, _)| n)
        .collect()
}

/// The table's indexes as SQL Server would list them; the primary key's is named
/// `PK__<table>` (SQL Server adds a hash suffix to generated names).
pub(crate) fn indexes(cx: &Context, table: &str) -> Vec<Index> {
    let q = |s: &str| s.replace('"', "\"\"");
    let mut out = Vec::new();
    let list: Vec<(String, bool, String)> = cx
        .db
        .prepare(&format!("PRAGMA index_list(\"{}\")", q(table)))
        .and_then(|mut st| {
            st.query_map([], |r| Ok((r.get(1)?, r.get::<_, i64>(2)? != 0, r.get(3)?)))
                .map(|it| it.flatten().collect())
        })
        .unwrap_or_default();
    for (name, unique, origin) in list {
        let cols: Vec<String> = cx
            .db
            .prepare(&format!("PRAGMA index_info(\"{}\")", q(&name)))
            .and_then(|mut st| {
                st.query_map([], |r| r.get::<_, Option<String>>(2))
                    .map(|it| it.flatten().flatten().collect())
            })
            .unwrap_or_default();
        let pk = origin == "pk";
        let name = if pk {
            format!("PK__{table}")
        } else if name.starts_with("sqlite_autoindex_") {
            format!("UQ__{table}__{}", cols.join("_"))
        } else {
            name
        };
        out.push((name, unique, pk, cols));
    }
    // INTEGER PRIMARY KEY (IDENTITY) columns are the rowid: no index of their own in SQLite.
    if !out.iter().any(|x| x.2)
        && let Some(cols) = super::schema::table_columns(&cx.db, table)
    {
        let mut pk: Vec<_> = cols.iter().filter(|c| c.pk > 0).collect();
        pk.sort_by_key(|c| c.pk);
        if !pk.is_empty() {
            out.insert(
                0,
                (
                    format!("PK__{table}"),
                    true,
                    true,
                    pk.iter().map(|c| c.name.clone()).collect(),
                ),
            );
        }
    }
    out
}

/// sp_statistics_100 @table_name, @table_owner, @table_qualifier, @index_name, @is_unique, @accuracy
pub(crate) fn sp_statistics(
    cx: &mut Context,
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    let table = text_arg(params, "@table_name", 0).unwrap_or_default();
    let index_like = text_arg(params, "@index_name", 3).unwrap_or_else(|| "%".into());
    let unique_only =
        text_arg(params, "@is_unique", 4).is_some_and(|u| u.eq_ignore_ascii_case("Y"));
    let cols = vec![
        sysname("TABLE_QUALIFIER"),
        sysname("TABLE_OWNER"),
        sysname("TABLE_NAME"),
        small("NON_UNIQUE"),
        sysname("INDEX_QUALIFIER"),
        sysname("INDEX_NAME"),
        small("TYPE"),
        small("SEQ_IN_INDEX"),
        sysname("COLUMN_NAME"),
        Column::new("COLLATION", Ty::Char(1, false)),
        Column::new("CARDINALITY", Ty::Int),
        Column::new("PAGES", Ty::Int),
        Column::new("FILTER_CONDITION", Ty::VarChar(Some(128), false)),
    ];
    let mut rows = Vec::new();
    let db = cx.database.clone();
    for name in table_named(cx, params, &table)? {
        let count: i64 = cx
            .db
            .query_row(
                &format!("SELECT COUNT(*) FROM \"{}\"", name.replace('"', "\"\"")),
                [],
                |r| r.get(0),
            )
            .unwrap_or(0);
        // SQL_TABLE_STAT row first, then the index columns (SQL_INDEX_CLUSTERED for the
        // primary key, as SQL Server clusters it by default; SQL_INDEX_OTHER for the rest).
        rows.push(vec![
            t(&db),
            t("dbo"),
            t(&name),
            Value::Null,
            Value::Null,
            Value::Null,
            i(0),
            Value::Null,
            Value::Null,
            Value::Null,
            i(count),
            i((count + 99) / 100),
            Value::Null,
        ]);
        for (iname, unique, pk, icols) in indexes(cx, &name) {
            if (unique_only && !unique) || !like(&index_like, &iname) {
                continue;
            }
            for (seq, c) in icols.iter().enumerate() {
                rows.push(vec![
                    t(&db),
                    t("dbo"),
                    t(&name),
                    i(!unique as i64),
                    t(&name),
                    t(&iname),
                    i(if pk { 1 } else { 3 }),
                    i(seq as i64 + 1),
                    t(c),
                    t("A"),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                ]);
            }
        }
    }
    cx.send_rows(&cols, &rows, out, r)
}

/// sp_pkeys @table_name, @table_owner, @table_qualifier
pub(crate) fn sp_pkeys(
    cx: &mut Context,
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    let table = text_arg(params, "@table_name", 0).unwrap_or_default();
    let cols = vec![
        sysname("TABLE_QUALIFIER"),
        sysname("TABLE_OWNER"),
        sysname("TABLE_NAME"),
        sysname("COLUMN_NAME"),
        small("KEY_SEQ"),
        sysname("PK_NAME"),
    ];
    let db = cx.database.clone();
    let mut rows = Vec::new();
    for name in table_named(cx, params, &table)? {
        for (iname, _, pk, icols) in indexes(cx, &name) {
            if pk {
                for (seq, c) in icols.iter().enumerate() {
                    rows.push(vec![
                        t(&db),
                        t("dbo"),
                        t(&name),
                        t(c),
                        i(seq as i64 + 1),
                        t(&iname),
                    ]);
                }
            }
        }
    }
    cx.send_rows(&cols, &rows, out, r)
}

/// sp_fkeys @pktable_name, @pktable_owner, @pktable_qualifier, @fktable_name, …
pub(crate) fn sp_fkeys(
    cx: &mut Context,
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    let pk_table = text_arg(params, "@pktable_name", 0);
    let fk_table = text_arg(params, "@fktable_name", 3);
    let cols = vec![
        sysname("PKTABLE_QUALIFIER"),
        sysname("PKTABLE_OWNER"),
        sysname("PKTABLE_NAME"),
        sysname("PKCOLUMN_NAME"),
        sysname("FKTABLE_QUALIFIER"),
        sysname("FKTABLE_OWNER"),
        sysname("FKTABLE_NAME"),
        sysname("FKCOLUMN_NAME"),
        small("KEY_SEQ"),
        small("UPDATE_RULE"),
        small("DELETE_RULE"),
        sysname("FK_NAME"),
        sysname("PK_NAME"),
        small("DEFERRABILITY"),
    ];
    // SQL_CASCADE 0, SQL_NO_ACTION 3 (SQL Server's default), SQL_SET_NULL 2, SQL_SET_DEFAULT 4.
    let rule = |s: &str| match s.to_ascii_uppercase().as_str() {
        "CASCADE" => 0,
        "SET NULL" => 2,
        "SET DEFAULT" => 4,
        _ => 1,
    };
    let db = cx.database.clone();
    let mut rows = Vec::new();
    for fk in tables_like(cx, fk_table.as_deref().unwrap_or("%")) {
        let list: Vec<ForeignKeyRow> = cx
            .db
            .prepare(&format!(
                "PRAGMA foreign_key_list(\"{}\")",
                fk.replace('"', "\"\"")
            ))
            .and_then(|mut st| {
                st.query_map([], |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                        r.get(6)?,
                    ))
                })
                .map(|it| it.flatten().collect())
            })
            .unwrap_or_default();
        for (id, seq, pk, from, to, on_update, on_delete) in list {
            if pk_table.as_deref().is_some_and(|p| !like(p, &pk)) {
                continue;
            }
            // A key without a column list references the primary key.
            let pk_cols = indexes(cx, &pk)
                .into_iter()
                .find(|x| x.2)
                .map(|x| x.3)
                .unwrap_or_default();
            let to = to
                .or_else(|| pk_cols.get(seq as usize).cloned())
                .unwrap_or_default();
            rows.push(vec![
                t(&db),
                t("dbo"),
                t(&pk),
                t(&to),
                t(&db),
                t("dbo"),
                t(&fk),
                t(&from),
                i(seq + 1),
                i(rule(&on_update)),
                i(rule(&on_delete)),
                t(&format!("FK__{fk}__{id}")),
                t(&format!("PK__{pk}")),
                i(7),
            ]);
        }
    }
    cx.send_rows(&cols, &rows, out, r)
}

/// sp_table_privileges @table_name, …: the owner (dbo, which `sa` is) holds every privilege.
pub(crate) fn sp_table_privileges(
    cx: &mut Context,
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    let table = text_arg(params, "@table_name", 0).unwrap_or_else(|| "%".into());
    let cols = vec![
        sysname("TABLE_QUALIFIER"),
        sysname("TABLE_OWNER"),
        sysname("TABLE_NAME"),
        sysname("GRANTOR"),
        sysname("GRANTEE"),
        Column::new("PRIVILEGE", Ty::VarChar(Some(32), false)),
        Column::new("IS_GRANTABLE", Ty::VarChar(Some(3), false)),
    ];
    let db = cx.database.clone();
    let mut rows = Vec::new();
    for name in tables_like(cx, &table) {
        for p in ["DELETE", "INSERT", "REFERENCES", "SELECT", "UPDATE"] {
            rows.push(vec![
                t(&db),
                t("dbo"),
                t(&name),
                t("dbo"),
                t("dbo"),
                t(p),
                t("YES"),
            ]);
        }
    }
    cx.send_rows(&cols, &rows, out, r)
}

/// sp_special_columns_100 @table_name, @table_owner, @qualifier, @col_type ('R' best row
/// identifier = the primary key, 'V' row versioning = the rowversion columns), …
pub(crate) fn sp_special_columns(
    cx: &mut Context,
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    let table = text_arg(params, "@table_name", 0).unwrap_or_default();
    let col_type = text_arg(params, "@col_type", 3).unwrap_or_else(|| "R".into());
    let cols = vec![
        small("SCOPE"),
        sysname("COLUMN_NAME"),
        small("DATA_TYPE"),
        sysname("TYPE_NAME"),
        Column::new("PRECISION", Ty::Int),
        Column::new("LENGTH", Ty::Int),
        small("SCALE"),
        small("PSEUDO_COLUMN"),
    ];
    let mut rows = Vec::new();
    if !qualifier(cx, params, "@qualifier", 2, false).map_err(StmtErr::Sql)?
        || !owner_matches(params, "@table_owner", 1, false)
    {
        return cx.send_rows(&cols, &rows, out, r);
    }
    if col_type.eq_ignore_ascii_case("R") {
        let all = super::schema::table_columns(&cx.db, &table).unwrap_or_default();
        if let Some((_, _, _, key)) = indexes(cx, &table).into_iter().find(|x| x.2) {
            for k in key {
                let Some(c) = all.iter().find(|c| c.name.eq_ignore_ascii_case(&k)) else {
                    continue;
                };
                let (code, tname, size, digits, _) = odbc_type(c.ty);
                let o = |v: Option<i64>| v.map(Value::Integer).unwrap_or(Value::Null);
                // SCOPE: SQL Server always says 0 (SQL_SCOPE_CURROW), the only scope it
                // answers; Driver 18 itself returns no rows for a wider one.
                rows.push(vec![
                    i(0),
                    t(&c.name),
                    i(code),
                    t(&tname),
                    o(size),
                    i(buffer_length(c.ty)),
                    o(digits),
                    i(1),
                ]);
            }
        }
    } else if col_type.eq_ignore_ascii_case("V") {
        // SQL Server: no scope, binary(8) sizes under the name timestamp, not a pseudo
        // column (SQL_PC_NOT_PSEUDO = 1).
        for c in super::schema::table_columns(&cx.db, &table).unwrap_or_default() {
            if c.rowversion {
                let (code, _, size, _, _) = odbc_type(c.ty);
                rows.push(vec![
                    Value::Null,
                    t(&c.name),
                    i(code),
                    t("timestamp"),
                    size.map(Value::Integer).unwrap_or(Value::Null),
                    i(buffer_length(c.ty)),
                    Value::Null,
                    i(1),
                ]);
            }
        }
    }
    cx.send_rows(&cols, &rows, out, r)
}

/// sp_stored_procedures @sp_name, @sp_owner, @sp_qualifier: the peer's procedures as `name;1`.
pub(crate) fn sp_stored_procedures(
    cx: &mut Context,
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    let pattern = text_arg(params, "@sp_name", 0).unwrap_or_else(|| "%".into());
    let pattern = pattern.split(';').next().unwrap_or("%").to_string();
    let use_pat = use_pattern(params);
    // An empty qualifier lists nothing; another database's name is 15250 (SQL Server's).
    let go = qualifier(cx, params, "@sp_qualifier", 2, true).map_err(StmtErr::Sql)?
        && owner_matches(params, "@sp_owner", 1, use_pat);
    let cols = vec![
        sysname("PROCEDURE_QUALIFIER"),
        sysname("PROCEDURE_OWNER"),
        Column::new("PROCEDURE_NAME", Ty::NVarChar(Some(134))),
        Column::new("NUM_INPUT_PARAMS", Ty::Int),
        Column::new("NUM_OUTPUT_PARAMS", Ty::Int),
        Column::new("NUM_RESULT_SETS", Ty::Int),
        Column::new("REMARKS", Ty::VarChar(Some(254), false)),
        small("PROCEDURE_TYPE"),
    ];
    let names: Vec<String> = cx
        .db
        .prepare("SELECT name FROM __tdspeer_procs ORDER BY name")
        .and_then(|mut st| {
            st.query_map([], |r| r.get(0))
                .map(|it| it.flatten().collect())
        })
        .unwrap_or_default();
    let db = cx.database.clone();
    // SQL Server answers -1 for the counts (unknown) and SQL_PT_FUNCTION (2) as the type.
    let rows: Vec<Vec<Value>> = names
        .into_iter()
        .filter(|_| go)
        .filter(|n| name_matches(&pattern, n, use_pat))
        .map(|n| {
            vec![
                t(&db),
                t("dbo"),
                t(&format!("{n};1")),
                i(-1),
                i(-1),
                i(-1),
                Value::Null,
                i(2),
            ]
        })
        .collect();
    cx.send_rows(&cols, &rows, out, r)
}

/// sp_sproc_columns_100 @procedure_name, @procedure_owner, @procedure_qualifier,
/// @column_name, @ODBCVer: `@RETURN_VALUE` (int) first, then the formal parameters.
pub(crate) fn sp_sproc_columns(
    cx: &mut Context,
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    let pattern = text_arg(params, "@procedure_name", 0).unwrap_or_else(|| "%".into());
    let pattern = pattern.split(';').next().unwrap_or("%").to_string();
    let column_like = text_arg(params, "@column_name", 3).unwrap_or_else(|| "%".into());
    let n = |s: &str| sysname(s);
    let int = |s: &str| Column::new(s, Ty::Int);
    let cols = vec![
        n("PROCEDURE_QUALIFIER"),
        n("PROCEDURE_OWNER"),
        Column::new("PROCEDURE_NAME", Ty::NVarChar(Some(134))),
        n("COLUMN_NAME"),
        small("COLUMN_TYPE"),
        small("DATA_TYPE"),
        n("TYPE_NAME"),
        int("PRECISION"),
        int("LENGTH"),
        small("SCALE"),
        small("RADIX"),
        small("NULLABLE"),
        Column::new("REMARKS", Ty::VarChar(Some(254), false)),
        Column::new("COLUMN_DEF", Ty::NVarChar(Some(4000))),
        small("SQL_DATA_TYPE"),
        small("SQL_DATETIME_SUB"),
        int("CHAR_OCTET_LENGTH"),
        int("ORDINAL_POSITION"),
        Column::new("IS_NULLABLE", Ty::VarChar(Some(254), false)),
        Column::new("SS_DATA_TYPE", Ty::TinyInt),
    ];
    let procs: Vec<(String, String)> = cx
        .db
        .prepare("SELECT name, params FROM __tdspeer_procs ORDER BY name")
        .and_then(|mut st| {
            st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .map(|it| it.flatten().collect())
        })
        .unwrap_or_default();
    let db = cx.database.clone();
    let o = |v: Option<i64>| v.map(Value::Integer).unwrap_or(Value::Null);
    let mut rows = Vec::new();
    for (name, formal) in procs.into_iter().filter(|(n, _)| like(&pattern, n)) {
        let Ok(defs) = super::procs::parse_params(&formal) else {
            continue;
        };
        let pname = format!("{name};1");
        // (column name, SQL_PARAM_* kind, type or table type name)
        let mut items: Vec<(String, i64, Result<Ty, String>)> =
            vec![("@RETURN_VALUE".into(), 5, Ok(Ty::Int))];
        for d in &defs {
            let kind = if d.output { 2 } else { 1 };
            let ty = d.table_type.clone().map_or(Ok(d.ty), Err);
            items.push((d.name.clone(), kind, ty));
        }
        for (pos, (col, kind, ty)) in items.into_iter().enumerate() {
            if !like(&column_like, &col) {
                continue;
            }
            let head = [t(&db), t("dbo"), t(&pname), t(&col), i(kind)];
            let mut row: Vec<Value> = head.into();
            match ty {
                Ok(ty) => {
                    let (code, tname, size, digits, octets) = odbc_type(ty);
                    let (sql_type, sub) = match code {
                        91 => (9, Some(1)),
                        93 => (9, Some(3)),
                        c => (c, None),
                    };
                    let radix = match code {
                        6 | 7 => Some(2),
                        -7 | -6 | 5 | 4 | -5 | 3 | 2 => Some(10),
                        _ => None,
                    };
                    row.extend([
                        i(code),
                        t(&tname),
                        o(size),
                        i(buffer_length(ty)),
                        o(digits),
                        o(radix),
                        i((kind != 5) as i64),
                        Value::Null,
                        Value::Null,
                        i(sql_type),
                        o(sub),
                        o(octets),
                        i(pos as i64),
                        t(if kind != 5 { "YES" } else { "NO" }),
                        i(super::typemeta::meta(ty).tds_type_id),
                    ]);
                }
                // A table-valued parameter: SQL_SS_TABLE (-153) of its table type.
                Err(tt) => row.extend([
                    i(-153),
                    t(&tt),
                    i(0),
                    i(0),
                    Value::Null,
                    Value::Null,
                    i(1),
                    Value::Null,
                    Value::Null,
                    i(-153),
                    Value::Null,
                    Value::Null,
                    i(pos as i64),
                    t("YES"),
                    i(0xF3),
                ]),
            }
            rows.push(row);
        }
    }
    cx.send_rows(&cols, &rows, out, r)
}

/// The parts of a multi-part object name given as text (`[dbo].[t]`, `s.t`, `#t`), brackets
/// and quotes removed.
pub(crate) fn name_parts(name: &str) -> Vec<String> {
    super::names::parts(name)
}

/// sp_tablecollations_100 @object (mssql-python's bulk copy asks it): every column of the
/// object in column order, `colid` smallint, `name` sysname, `tds_collation` binary(5) (the
/// 5 bytes TDS sends) and `collation` sysname, both NULL for a column without a collation.
/// An unknown object lists no rows, as in SQL Server.
pub(crate) fn sp_tablecollations(
    cx: &mut Context,
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    let object = text_arg(params, "@object", 0).unwrap_or_default();
    let cols = vec![
        small("colid"),
        sysname("name"),
        Column::new("tds_collation", Ty::Binary(5)),
        sysname("collation"),
    ];
    let parts = name_parts(&object);
    let table = super::schema::sqlite_name(&parts).unwrap_or_default();
    let decls: Vec<(String, String)> = cx
        .db
        .prepare(&format!(
            "PRAGMA table_info(\"{}\")",
            table.replace('"', "\"\"")
        ))
        .and_then(|mut st| {
            st.query_map([], |r| {
                Ok((
                    r.get(1)?,
                    r.get::<_, Option<String>>(2)?.unwrap_or_default(),
                ))
            })
            .map(|it| it.flatten().collect())
        })
        .unwrap_or_default();
    let rows: Vec<Vec<Value>> = decls
        .into_iter()
        .enumerate()
        .map(|(n, (name, decl))| {
            let ty = Ty::from_sqlite_decl(&decl).or_else(|| Ty::parse(&decl));
            let coll = ty.and_then(|t| t.tds_collation());
            let coll_name = ty.and_then(crate::sql::typemeta::collation);
            vec![
                i(n as i64 + 1),
                t(&name),
                coll.map_or(Value::Null, |c| Value::Blob(c.to_vec())),
                coll_name.map_or(Value::Null, t),
            ]
        })
        .collect();
    cx.send_rows(&cols, &rows, out, r)
}
