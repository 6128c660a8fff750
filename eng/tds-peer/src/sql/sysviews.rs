//! SQL Server's catalog views (`sys.*`, `INFORMATION_SCHEMA.*`) as SQLite subqueries over
//! SQLite's own schema (`sqlite_master`, `pragma_table_info`, `pragma_index_list`, …), with
//! the columns SQL Server 2022 documents for them — those that SQLAlchemy's mssql dialect,
//! pyodbc and the ODBC catalog functions read.
//!
//! Ids: a table or view is `rowid + 100` of sqlite_master (as OBJECT_ID and sysobjects number
//! it); its foreign keys are `10000000 + 1000 * object + n`, its default constraints
//! `20000000 + 1000 * object + column_id`. Every object is in schema dbo (1): SQLite has one
//! namespace, and a schema-qualified name means its last part (README). The primary key of
//! a table whose key is the rowid alias (INTEGER PRIMARY KEY, IDENTITY) has no SQLite index:
//! it is reported as the clustered index 1 named `PK__<table>` (as sp_statistics does).

use super::lexer::Tok;
use super::lexer::next_sig;
use super::rewrite::Ctx;
use crate::sql::typemeta::{collation, meta};
use crate::types::Ty;
use rusqlite::functions::FunctionFlags;
use rusqlite::{Connection, types::Value};

/// sys.extended_properties over the stored properties of tables and their columns.
pub const EXTPROPS_VIEW: &str = "SELECT 1 AS class, 'OBJECT_OR_COLUMN' AS class_desc, m.rowid + 100 AS major_id, COALESCE((SELECT p.cid + 1 FROM pragma_table_info(m.name) p WHERE p.name = e.col COLLATE NOCASE), 0) AS minor_id, e.name AS name, e.value AS value FROM __tdspeer_extprops e JOIN sqlite_master m ON m.type IN ('table', 'view') AND m.name = CASE WHEN lower(e.sch) = 'dbo' THEN e.tbl ELSE e.sch || '.' || e.tbl END COLLATE NOCASE WHERE e.col = '' OR EXISTS (SELECT 1 FROM pragma_table_info(m.name) p WHERE p.name = e.col COLLATE NOCASE)";

/// User tables and views: object id, name (without its schema), the SQLite table name
/// (`"s.t"` for an object of a user schema), schema id and name, SQLite type. Global temporary
/// tables (`##t`, tables of the shared SQLite file) are tempdb's: [`IN_THIS_DATABASE`] is
/// turned into [`IN_TEMPDB`] for `tempdb.sys.…` / `tempdb.INFORMATION_SCHEMA.…`.
const OBJ: &str = "SELECT m.rowid + 100 AS rid, CASE WHEN s.name IS NULL THEN m.name ELSE substr(m.name, length(s.name) + 2) END AS name, m.name AS sname, COALESCE(4 + s.rowid, 1) AS schema_id, COALESCE(s.name, 'dbo') AS schema_name, m.type AS type FROM sqlite_master m LEFT JOIN __tdspeer_schemas s ON lower(substr(m.name, 1, length(s.name) + 1)) = lower(s.name || '.') WHERE m.type IN ('table','view') AND m.name NOT LIKE 'sqlite_%' AND m.name NOT LIKE '__tdspeer%' AND m.name NOT LIKE '##%'";
const IN_THIS_DATABASE: &str = "m.name NOT LIKE '##%'";
const IN_TEMPDB: &str = "m.name LIKE '##%'";

/// `expr` with every `__ck(e, 'type')` replaced by `e` and `__nz(e)` by `e`.
fn without_checks(expr: &str) -> String {
    let mut out = expr.to_string();
    for name in ["__ck(", "__nz("] {
        while let Some(start) = out.find(name) {
            let open = start + name.len() - 1;
            // The call's closing paren and its last top-level comma, outside quotes.
            let (mut depth, mut quoted, mut comma, mut close) = (0usize, false, None, None);
            for (i, c) in out[open..].char_indices().map(|(i, c)| (open + i, c)) {
                match c {
                    '\'' => quoted = !quoted,
                    _ if quoted => {}
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            close = Some(i);
                            break;
                        }
                    }
                    ',' if depth == 1 => comma = Some(i),
                    _ => {}
                }
            }
            let Some(close) = close else { break };
            let end = if name == "__ck(" {
                comma.unwrap_or(close)
            } else {
                close
            };
            let inner = out[open + 1..end].trim().to_string();
            out.replace_range(start..=close, &inner);
        }
    }
    out
}

/// The schema name / bare name of a SQLite table name `x` (an FK's target table).
fn schema_of(x: &str) -> String {
    format!(
        "COALESCE((SELECT s.name FROM __tdspeer_schemas s WHERE lower(substr({x}, 1, length(s.name) + 1)) = lower(s.name || '.')), 'dbo')"
    )
}
fn bare_of(x: &str) -> String {
    format!(
        "COALESCE((SELECT substr({x}, length(s.name) + 2) FROM __tdspeer_schemas s WHERE lower(substr({x}, 1, length(s.name) + 1)) = lower(s.name || '.')), {x})"
    )
}

/// The column metadata of a SQLite declared type, by `__colmeta(decl, field)`: system_type_id,
/// max_length, precision, scale, collation_name, type_name.
pub fn register(db: &Connection) -> rusqlite::Result<()> {
    register_session(db)?;
    register_json(db)?;
    let det = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    // The object a multi-part name means (`tempdb..[#t]`, `dbo.t` -> `#t`, `t`): OBJECT_ID of
    // a parameter.
    db.create_scalar_function("__base_name", 1, det, |ctx| {
        Ok(ctx
            .get::<Option<String>>(0)?
            .map(|n| crate::sql::schema::base_name(&n)))
    })?;
    // A column DEFAULT as written: without the checks the rewriter wraps around integer
    // arithmetic and divisors (`__ck(3*5, 'int')`, `__nz(2)`), which reflection showed.
    db.create_scalar_function("__tsql_default", 1, det, |ctx| {
        Ok(ctx.get::<Option<String>>(0)?.map(|d| without_checks(&d)))
    })?;
    db.create_scalar_function("__colmeta", 3, det, |ctx| {
        let decl: String = ctx.get::<Option<String>>(0)?.unwrap_or_default();
        let field: String = ctx.get(1)?;
        let is_pk: i64 = ctx.get::<Option<i64>>(2)?.unwrap_or(0);
        // IDENTITY / INTEGER PRIMARY KEY columns are declared `INTEGER` (rewrite.rs): int.
        let ty = if is_pk > 0 && decl.eq_ignore_ascii_case("INTEGER") {
            Some(Ty::Int)
        } else {
            Ty::from_sqlite_decl(&decl).or_else(|| Ty::parse(&decl))
        };
        let Some(ty) = ty else { return Ok(Value::Null) };
        let m = meta(ty);
        // rowversion is binary(8) in size, but its own type (timestamp, 189) by name and id.
        if crate::sql::typemeta::is_rowversion_decl(&decl) {
            match field.as_str() {
                "system_type_id" | "user_type_id" => {
                    return Ok(Value::Integer(crate::sql::typemeta::ROWVERSION_TYPE_ID));
                }
                "type_name" => return Ok(Value::Text("timestamp".into())),
                _ => {}
            }
        }
        Ok(match field.as_str() {
            "system_type_id" => Value::Integer(m.system_type_id),
            "user_type_id" => {
                Value::Integer(super::vector::user_type_id(ty).unwrap_or(m.system_type_id))
            }
            "max_length" => Value::Integer(m.max_length),
            "precision" => Value::Integer(m.precision),
            "scale" => Value::Integer(m.scale),
            "collation_name" => collation(ty).map_or(Value::Null, |c| Value::Text(c.into())),
            // The bare type name, as INFORMATION_SCHEMA.COLUMNS.DATA_TYPE has it (`nvarchar`).
            "type_name" => Value::Text(
                crate::sql::typemeta::type_name(ty)
                    .split(['(', ' '])
                    .next()
                    .unwrap_or("")
                    .to_string(),
            ),
            _ => Value::Null,
        })
    })
}

/// SQL Server's system types as sys.types lists them: name, system_type_id, user_type_id,
/// max_length, precision, scale.
const TYPES: &[(&str, i64, i64, i64, i64, i64)] = &[
    ("image", 34, 34, 16, 0, 0),
    ("text", 35, 35, 16, 0, 0),
    ("uniqueidentifier", 36, 36, 16, 0, 0),
    ("date", 40, 40, 3, 10, 0),
    ("time", 41, 41, 5, 16, 7),
    ("datetime2", 42, 42, 8, 27, 7),
    ("datetimeoffset", 43, 43, 10, 34, 7),
    ("tinyint", 48, 48, 1, 3, 0),
    ("smallint", 52, 52, 2, 5, 0),
    ("int", 56, 56, 4, 10, 0),
    ("smalldatetime", 58, 58, 4, 16, 0),
    ("real", 59, 59, 4, 24, 0),
    ("money", 60, 60, 8, 19, 4),
    ("datetime", 61, 61, 8, 23, 3),
    ("float", 62, 62, 8, 53, 0),
    ("sql_variant", 98, 98, 8016, 0, 0),
    ("ntext", 99, 99, 16, 0, 0),
    ("bit", 104, 104, 1, 1, 0),
    ("decimal", 106, 106, 17, 38, 38),
    ("numeric", 108, 108, 17, 38, 38),
    ("smallmoney", 122, 122, 4, 10, 4),
    ("bigint", 127, 127, 8, 19, 0),
    ("hierarchyid", 240, 128, 892, 0, 0),
    ("geometry", 240, 129, -1, 0, 0),
    ("geography", 240, 130, -1, 0, 0),
    ("varbinary", 165, 165, 8000, 0, 0),
    ("varchar", 167, 167, 8000, 0, 0),
    ("binary", 173, 173, 8000, 0, 0),
    ("char", 175, 175, 8000, 0, 0),
    ("timestamp", 189, 189, 8, 0, 0),
    ("nvarchar", 231, 231, 8000, 0, 0),
    ("nchar", 239, 239, 8000, 0, 0),
    ("xml", 241, 241, -1, 0, 0),
    // SQL Server 2025 (sql/vector.rs): json its own type, vector a varbinary user type.
    ("json", 244, 244, -1, 0, 0),
    ("vector", 165, 255, 8000, 0, 0),
    ("sysname", 231, 256, 256, 0, 0),
];

fn types_view() -> String {
    let rows: Vec<String> = TYPES
        .iter()
        .map(|(n, s, u, l, p, sc)| {
            let coll = if matches!(*s, 35 | 99 | 167 | 175 | 231 | 239) {
                "'SQL_Latin1_General_CP1_CI_AS'"
            } else {
                "NULL"
            };
            format!("SELECT '{n}', {s}, {u}, 4, NULL, {l}, {p}, {sc}, {coll}, 1, 0, 0, 0, 0, 0")
        })
        .collect();
    format!(
        "SELECT column1 AS name, column2 AS system_type_id, column3 AS user_type_id, column4 AS schema_id, column5 AS principal_id, column6 AS max_length, column7 AS \"precision\", column8 AS scale, column9 AS collation_name, column10 AS is_nullable, column11 AS is_user_defined, column12 AS is_assembly_type, column13 AS default_object_id, column14 AS rule_object_id, column15 AS is_table_type FROM (VALUES {})",
        rows.iter()
            .map(|r| format!("({})", r.trim_start_matches("SELECT ")))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Every column of every user table/view, with its table's id and SQLite's pragma row (a
/// rowversion column's "no value" default is the peer's, not a default SQL Server lists).
fn cols() -> String {
    format!(
        "SELECT o.rid AS rid, o.name AS tname, o.sname AS sname, o.schema_id AS schema_id, o.schema_name AS schema_name, o.type AS otype, p.cid AS cid, p.name AS cname, p.type AS decl, p.\"notnull\" AS nn, CASE WHEN p.type = '{rv}' THEN NULL ELSE __tsql_default(p.dflt_value) END AS dflt, p.pk AS pk FROM ({OBJ}) o JOIN pragma_table_info(o.sname) p",
        rv = crate::sql::typemeta::ROWVERSION_DECL
    )
}

/// Whether the pragma row `c` is an IDENTITY / rowid-alias column (INTEGER PRIMARY KEY).
const IDENT: &str = "(c.pk = 1 AND upper(c.decl) = 'INTEGER' AND (SELECT COUNT(*) FROM pragma_table_info(c.sname) WHERE pk > 0) = 1)";

/// Indexes SQLite knows (CREATE INDEX, UNIQUE and PRIMARY KEY constraints), numbered from 2,
/// plus the rowid primary key as index 1.
fn indexes_src() -> String {
    format!(
        "SELECT o.rid AS rid, o.name AS tname, o.sname AS sname, o.schema_name AS schema_name, l.name AS iname, CASE WHEN o.schema_id > 4 AND lower(substr(l.name, 1, length(o.schema_name) + 1)) = lower(o.schema_name || '.') THEN substr(l.name, length(o.schema_name) + 2) ELSE l.name END AS dname, l.seq AS seq, l.\"unique\" AS uniq, l.origin AS origin FROM ({OBJ}) o JOIN pragma_index_list(o.sname) l WHERE o.type = 'table'"
    )
}

/// The view's SQL in tempdb (`tempdb.sys.tables`): the global temporary tables only.
pub fn tempdb_view(schema: &str, name: &str, spid: u16) -> Option<String> {
    view(schema, name, spid).map(|sql| sql.replace(IN_THIS_DATABASE, IN_TEMPDB))
}

pub fn view(schema: &str, name: &str, spid: u16) -> Option<String> {
    let ident = IDENT;
    let cols = cols();
    Some(match (schema, name) {
        ("SYS", "SCHEMAS") => "SELECT 'dbo' AS name, 1 AS schema_id, 1 AS principal_id UNION ALL SELECT 'guest', 2, 2 UNION ALL SELECT 'INFORMATION_SCHEMA', 3, 3 UNION ALL SELECT 'sys', 4, 4 UNION ALL SELECT name, 4 + rowid, 1 FROM __tdspeer_schemas".into(),
        ("SYS", "OBJECTS") | ("SYS", "ALL_OBJECTS") => format!(
            "SELECT name, rid AS object_id, NULL AS principal_id, schema_id, 0 AS parent_object_id, CASE type WHEN 'view' THEN 'V' ELSE 'U' END AS type, CASE type WHEN 'view' THEN 'VIEW' ELSE 'USER_TABLE' END AS type_desc, '2024-01-01 00:00:00.000' AS create_date, '2024-01-01 00:00:00.000' AS modify_date, 0 AS is_ms_shipped, 0 AS is_published, 0 AS is_schema_published FROM ({OBJ}) UNION ALL SELECT name, 1000000 + rowid, NULL, 1, 0, 'P', 'SQL_STORED_PROCEDURE', '2024-01-01 00:00:00.000', '2024-01-01 00:00:00.000', 0, 0, 0 FROM __tdspeer_procs"
        ),
        ("SYS", "TABLES") => format!(
            "SELECT name, rid AS object_id, NULL AS principal_id, schema_id, 0 AS parent_object_id, 'U' AS type, 'USER_TABLE' AS type_desc, '2024-01-01 00:00:00.000' AS create_date, '2024-01-01 00:00:00.000' AS modify_date, 0 AS is_ms_shipped, 0 AS is_published, 0 AS is_schema_published, 0 AS temporal_type, 0 AS is_memory_optimized FROM ({OBJ}) WHERE type = 'table'"
        ),
        ("SYS", "VIEWS") => format!(
            "SELECT name, rid AS object_id, NULL AS principal_id, schema_id, 0 AS parent_object_id, 'V' AS type, 'VIEW' AS type_desc, 0 AS is_ms_shipped FROM ({OBJ}) WHERE type = 'view'"
        ),
        ("SYS", "SQL_MODULES") => "SELECT rowid + 100 AS object_id, sql AS definition, 1 AS uses_ansi_nulls, 1 AS uses_quoted_identifier FROM sqlite_master WHERE type = 'view'".to_string(),
        // sys.all_columns lists system objects' columns too (the peer has none to list);
        // both carry SQL Server 2019's graph columns (NULL: no graph tables here).
        ("SYS", "COLUMNS") | ("SYS", "ALL_COLUMNS") => format!(
            "SELECT c.rid AS object_id, c.cname AS name, c.cid + 1 AS column_id, __colmeta(c.decl, 'system_type_id', c.pk) AS system_type_id, __colmeta(c.decl, 'user_type_id', c.pk) AS user_type_id, __colmeta(c.decl, 'max_length', c.pk) AS max_length, __colmeta(c.decl, 'precision', c.pk) AS \"precision\", __colmeta(c.decl, 'scale', c.pk) AS scale, __colmeta(c.decl, 'collation_name', c.pk) AS collation_name, CASE WHEN c.nn OR c.pk > 0 THEN 0 ELSE 1 END AS is_nullable, 1 AS is_ansi_padded, 0 AS is_rowguidcol, CASE WHEN {ident} THEN 1 ELSE 0 END AS is_identity, 0 AS is_computed, 0 AS is_filestream, 0 AS is_replicated, 0 AS is_sparse, CASE WHEN c.dflt IS NULL THEN 0 ELSE 20000000 + 1000 * c.rid + c.cid + 1 END AS default_object_id, 0 AS rule_object_id, 0 AS is_sparse_column_set, 0 AS is_hidden, 0 AS is_masked, NULL AS graph_type, NULL AS graph_type_desc FROM ({cols}) c"
        ),
        ("SYS", "TYPES") => types_view(),
        ("SYS", "DEFAULT_CONSTRAINTS") => format!(
            "SELECT 'DF__' || c.tname || '__' || c.cname AS name, 20000000 + 1000 * c.rid + c.cid + 1 AS object_id, c.schema_id AS schema_id, c.rid AS parent_object_id, 'D' AS type, 'DEFAULT_CONSTRAINT' AS type_desc, c.cid + 1 AS parent_column_id, CASE WHEN c.dflt LIKE '(%' THEN '(' || c.dflt || ')' WHEN typeof(c.dflt) IN ('integer', 'real') OR c.dflt GLOB '[0-9-]*' THEN '((' || c.dflt || '))' ELSE '(' || c.dflt || ')' END AS definition, 0 AS is_system_named FROM ({cols}) c WHERE c.dflt IS NOT NULL"
        ),
        ("SYS", "IDENTITY_COLUMNS") => format!(
            "SELECT c.rid AS object_id, c.cname AS name, c.cid + 1 AS column_id, 56 AS system_type_id, 1 AS is_identity, {seed} AS seed_value, {incr} AS increment_value, NULL AS last_value, 0 AS is_not_for_replication FROM ({cols}) c WHERE {ident}",
            seed = super::constraints::identity_part("c.sname", "c.cname", 1),
            incr = super::constraints::identity_part("c.sname", "c.cname", 2),
        ),
        ("SYS", "COMPUTED_COLUMNS") => "SELECT NULL AS object_id, NULL AS name, NULL AS column_id, NULL AS definition, 0 AS is_persisted, 1 AS is_computed WHERE 0".into(),
        ("SYS", "EXTENDED_PROPERTIES") => EXTPROPS_VIEW.into(),
        ("SYS", "SEQUENCES") => "SELECT q.name AS name, 40000000 + q.rowid AS object_id, NULL AS principal_id, COALESCE((SELECT 4 + s.rowid FROM __tdspeer_schemas s WHERE s.name = q.sch), 1) AS schema_id, 0 AS parent_object_id, 'SO' AS type, 'SEQUENCE_OBJECT' AS type_desc, q.start AS start_value, q.incr AS increment, q.minv AS minimum_value, q.maxv AS maximum_value, q.cycle AS is_cycling, 0 AS is_cached, q.current AS current_value, CASE q.type WHEN 'tinyint' THEN 48 WHEN 'smallint' THEN 52 WHEN 'int' THEN 56 ELSE 127 END AS system_type_id, CASE q.type WHEN 'tinyint' THEN 48 WHEN 'smallint' THEN 52 WHEN 'int' THEN 56 ELSE 127 END AS user_type_id, CASE q.type WHEN 'tinyint' THEN 3 WHEN 'smallint' THEN 5 WHEN 'int' THEN 10 ELSE 19 END AS \"precision\", 0 AS scale, CASE WHEN q.current IS NULL THEN 1 ELSE 0 END AS is_exhausted FROM __tdspeer_sequences q".into(),
        ("SYS", "FULLTEXT_INDEXES") => "SELECT NULL AS object_id, NULL AS fulltext_catalog_id WHERE 0".into(),
        ("SYS", "FULLTEXT_CATALOGS") => "SELECT NULL AS name, NULL AS fulltext_catalog_id WHERE 0".into(),
        // The databases of a fresh SQL Server 2022 (DB_ID / DB_NAME give the same ids).
        ("SYS", "DATABASES") => "SELECT d.column1 AS name, d.column2 AS database_id, NULL AS source_database_id, X'01' AS owner_sid, '2024-01-01 00:00:00.000' AS create_date, 160 AS compatibility_level, 'SQL_Latin1_General_CP1_CI_AS' AS collation_name, 0 AS user_access, 'MULTI_USER' AS user_access_desc, 0 AS is_read_only, 0 AS is_auto_close_on, 0 AS is_auto_shrink_on, 0 AS state, 'ONLINE' AS state_desc, 0 AS is_in_standby, 0 AS is_cleanly_shutdown, 0 AS is_supplemental_logging_enabled, d.column3 AS snapshot_isolation_state, CASE d.column3 WHEN 1 THEN 'ON' ELSE 'OFF' END AS snapshot_isolation_state_desc, 0 AS is_read_committed_snapshot_on, d.column4 AS recovery_model, CASE d.column4 WHEN 1 THEN 'FULL' ELSE 'SIMPLE' END AS recovery_model_desc, 2 AS page_verify_option, 'CHECKSUM' AS page_verify_option_desc, 1 AS is_auto_create_stats_on, 1 AS is_auto_update_stats_on, 0 AS is_ansi_nulls_on, 0 AS is_quoted_identifier_on, 0 AS is_encrypted, 0 AS is_broker_enabled FROM (VALUES ('master', 1, 1, 3), ('tempdb', 2, 1, 3), ('model', 3, 0, 1), ('msdb', 4, 1, 3)) d".into(),
        ("SYS", "SYSTEM_VIEWS") => "SELECT 'dm_exec_sessions' AS name, -101 AS object_id, 4 AS schema_id".into(),
        ("SYS", "DM_EXEC_SESSIONS") => format!(
            "SELECT {spid} AS session_id, 'sa' AS login_name, 'master' AS database_name, 1 AS database_id, __isolation() AS transaction_isolation_level, 'running' AS status, 1 AS is_user_process"
        ),
        ("SYS", "KEY_CONSTRAINTS") => format!(
            "SELECT CASE WHEN i.origin = 'pk' THEN {pkn} WHEN i.origin = 'u' THEN {uqn} ELSE i.dname END AS name, 30000000 + 1000 * i.rid + i.index_id AS object_id, (SELECT schema_id FROM ({OBJ}) WHERE rid = i.rid) AS schema_id, i.rid AS parent_object_id, CASE WHEN i.origin = 'pk' THEN 'PK' ELSE 'UQ' END AS type, CASE WHEN i.origin = 'pk' THEN 'PRIMARY_KEY_CONSTRAINT' ELSE 'UNIQUE_CONSTRAINT' END AS type_desc, i.index_id AS unique_index_id, 0 AS is_system_named FROM ({}) i WHERE i.origin IN ('pk', 'u')",
            sys_indexes(),
            pkn = super::constraints::pk_name("i.sname", "i.tname"),
            uqn = super::constraints::uq_name("i.sname", "i.iname", "i.dname"),
        ),
        ("SYS", "INDEXES") => format!(
            "SELECT i.rid AS object_id, CASE WHEN i.origin = 'pk' THEN {pkn} WHEN i.origin = 'u' THEN {uqn} ELSE i.dname END AS name, i.index_id, CASE WHEN i.origin = 'pk' THEN 1 ELSE 2 END AS type, CASE WHEN i.origin = 'pk' THEN 'CLUSTERED' ELSE 'NONCLUSTERED' END AS type_desc, i.uniq AS is_unique, 1 AS data_space_id, 0 AS ignore_dup_key, CASE WHEN i.origin = 'pk' THEN 1 ELSE 0 END AS is_primary_key, CASE WHEN i.origin = 'u' THEN 1 ELSE 0 END AS is_unique_constraint, 0 AS fill_factor, 0 AS is_padded, 0 AS is_disabled, 0 AS is_hypothetical, 1 AS allow_row_locks, 1 AS allow_page_locks, 0 AS has_filter, NULL AS filter_definition FROM ({}) i",
            sys_indexes(),
            pkn = super::constraints::pk_name("i.sname", "i.tname"),
            uqn = super::constraints::uq_name("i.sname", "i.iname", "i.dname"),
        ),
        ("SYS", "INDEX_COLUMNS") => format!(
            "SELECT i.rid AS object_id, i.index_id, x.seqno + 1 AS index_column_id, x.cid + 1 AS column_id, x.seqno + 1 AS key_ordinal, 0 AS partition_ordinal, x.\"desc\" AS is_descending_key, 0 AS is_included_column FROM ({}) i JOIN pragma_index_xinfo(i.iname) x WHERE x.key = 1 AND i.iname IS NOT NULL UNION ALL SELECT c.rid, 1, c.pk, c.cid + 1, c.pk, 0, 0, 0 FROM ({cols}) c WHERE {ident}",
            sys_indexes()
        ),
        ("SYS", "FOREIGN_KEYS") => format!(
            "SELECT {fkn} AS name, 10000000 + 1000 * o.rid + f.id AS object_id, NULL AS principal_id, o.schema_id AS schema_id, o.rid AS parent_object_id, 'F' AS type, 'FOREIGN_KEY_CONSTRAINT' AS type_desc, (SELECT rowid + 100 FROM sqlite_master WHERE name = f.\"table\" COLLATE NOCASE AND type = 'table') AS referenced_object_id, 1 AS key_index_id, 0 AS is_disabled, 0 AS is_not_trusted, {del} AS delete_referential_action, {deld} AS delete_referential_action_desc, {upd} AS update_referential_action, {updd} AS update_referential_action_desc, 0 AS is_system_named FROM ({OBJ}) o JOIN pragma_foreign_key_list(o.sname) f WHERE o.type = 'table' AND f.seq = 0",
            fkn = super::constraints::fk_name("o.sname", "o.name", "f.id"),
            del = action("f.on_delete", false),
            deld = action("f.on_delete", true),
            upd = action("f.on_update", false),
            updd = action("f.on_update", true),
        ),
        ("SYS", "FOREIGN_KEY_COLUMNS") => format!(
            "SELECT 10000000 + 1000 * o.rid + f.id AS constraint_object_id, f.seq + 1 AS constraint_column_id, o.rid AS parent_object_id, (SELECT cid + 1 FROM pragma_table_info(o.sname) WHERE name = f.\"from\" COLLATE NOCASE) AS parent_column_id, (SELECT rowid + 100 FROM sqlite_master WHERE name = f.\"table\" COLLATE NOCASE AND type = 'table') AS referenced_object_id, COALESCE((SELECT cid + 1 FROM pragma_table_info(f.\"table\") WHERE name = f.\"to\" COLLATE NOCASE), (SELECT cid + 1 FROM pragma_table_info(f.\"table\") WHERE pk = f.seq + 1)) AS referenced_column_id FROM ({OBJ}) o JOIN pragma_foreign_key_list(o.sname) f WHERE o.type = 'table'"
        ),
        ("INFORMATION_SCHEMA", "SCHEMATA") => "SELECT 'master' AS CATALOG_NAME, name AS SCHEMA_NAME, 'dbo' AS SCHEMA_OWNER, NULL AS DEFAULT_CHARACTER_SET_CATALOG, NULL AS DEFAULT_CHARACTER_SET_SCHEMA, 'iso_1' AS DEFAULT_CHARACTER_SET_NAME FROM (SELECT 'dbo' AS name UNION ALL SELECT 'guest' UNION ALL SELECT 'INFORMATION_SCHEMA' UNION ALL SELECT 'sys' UNION ALL SELECT name FROM __tdspeer_schemas)".into(),
        ("INFORMATION_SCHEMA", "TABLES") => format!(
            "SELECT 'master' AS TABLE_CATALOG, schema_name AS TABLE_SCHEMA, name AS TABLE_NAME, CASE type WHEN 'view' THEN 'VIEW' ELSE 'BASE TABLE' END AS TABLE_TYPE FROM ({OBJ})"
        ),
        ("INFORMATION_SCHEMA", "VIEWS") => format!("SELECT 'master' AS TABLE_CATALOG, o.schema_name AS TABLE_SCHEMA, o.name AS TABLE_NAME, m.sql AS VIEW_DEFINITION, 'NONE' AS CHECK_OPTION, 'NO' AS IS_UPDATABLE FROM ({OBJ}) o JOIN sqlite_master m ON m.rowid + 100 = o.rid WHERE o.type = 'view'"),
        ("INFORMATION_SCHEMA", "COLUMNS") => format!(
            "SELECT 'master' AS TABLE_CATALOG, c.schema_name AS TABLE_SCHEMA, c.tname AS TABLE_NAME, c.cname AS COLUMN_NAME, c.cid + 1 AS ORDINAL_POSITION, c.dflt AS COLUMN_DEFAULT, CASE WHEN c.nn OR c.pk > 0 THEN 'NO' ELSE 'YES' END AS IS_NULLABLE, __colmeta(c.decl, 'type_name', c.pk) AS DATA_TYPE, __typelen(c.decl) AS CHARACTER_MAXIMUM_LENGTH, __typelen(c.decl) AS CHARACTER_OCTET_LENGTH, CASE WHEN __colmeta(c.decl, 'precision', c.pk) > 0 THEN __colmeta(c.decl, 'precision', c.pk) END AS NUMERIC_PRECISION, 10 AS NUMERIC_PRECISION_RADIX, CASE WHEN __colmeta(c.decl, 'precision', c.pk) > 0 THEN __colmeta(c.decl, 'scale', c.pk) END AS NUMERIC_SCALE, NULL AS DATETIME_PRECISION, NULL AS CHARACTER_SET_NAME, __colmeta(c.decl, 'collation_name', c.pk) AS COLLATION_NAME FROM ({cols}) c"
        ),
        ("INFORMATION_SCHEMA", "TABLE_CONSTRAINTS") => format!(
            "SELECT 'master' AS CONSTRAINT_CATALOG, k.sch AS CONSTRAINT_SCHEMA, k.name AS CONSTRAINT_NAME, 'master' AS TABLE_CATALOG, k.sch AS TABLE_SCHEMA, k.tname AS TABLE_NAME, k.ctype AS CONSTRAINT_TYPE, 'NO' AS IS_DEFERRABLE, 'NO' AS INITIALLY_DEFERRED FROM ({}) k GROUP BY k.sch, k.name, k.tname, k.ctype",
            key_columns()
        ),
        ("INFORMATION_SCHEMA", "KEY_COLUMN_USAGE") => format!(
            "SELECT 'master' AS CONSTRAINT_CATALOG, k.sch AS CONSTRAINT_SCHEMA, k.name AS CONSTRAINT_NAME, 'master' AS TABLE_CATALOG, k.sch AS TABLE_SCHEMA, k.tname AS TABLE_NAME, k.cname AS COLUMN_NAME, k.ord AS ORDINAL_POSITION FROM ({}) k",
            key_columns()
        ),
        ("INFORMATION_SCHEMA", "CONSTRAINT_COLUMN_USAGE") => format!(
            "SELECT 'master' AS TABLE_CATALOG, k.sch AS TABLE_SCHEMA, k.tname AS TABLE_NAME, k.cname AS COLUMN_NAME, 'master' AS CONSTRAINT_CATALOG, k.sch AS CONSTRAINT_SCHEMA, k.name AS CONSTRAINT_NAME FROM ({}) k",
            key_columns()
        ),
        ("INFORMATION_SCHEMA", "REFERENTIAL_CONSTRAINTS") => format!(
            "SELECT 'master' AS CONSTRAINT_CATALOG, o.schema_name AS CONSTRAINT_SCHEMA, {fkn} AS CONSTRAINT_NAME, 'master' AS UNIQUE_CONSTRAINT_CATALOG, {rsch} AS UNIQUE_CONSTRAINT_SCHEMA, {uq} AS UNIQUE_CONSTRAINT_NAME, 'SIMPLE' AS MATCH_OPTION, {upd} AS UPDATE_RULE, {del} AS DELETE_RULE FROM ({OBJ}) o JOIN pragma_foreign_key_list(o.sname) f WHERE o.type = 'table' AND f.seq = 0",
            uq = format_args!("CASE WHEN f.\"to\" IS NULL OR EXISTS (SELECT 1 FROM pragma_table_info(f.\"table\") WHERE name = f.\"to\" COLLATE NOCASE AND pk > 0) THEN {} ELSE (SELECT {} FROM pragma_index_list(f.\"table\") l JOIN pragma_index_info(l.name) ii WHERE l.\"unique\" AND ii.name = f.\"to\" COLLATE NOCASE LIMIT 1) END", super::constraints::pk_name("f.\"table\"", &bare_of("f.\"table\"")), super::constraints::uq_name("f.\"table\"", "l.name", "l.name")),
            upd = rule("f.on_update"),
            del = rule("f.on_delete"),
            rsch = schema_of("f.\"table\""),
            fkn = super::constraints::fk_name("o.sname", "o.name", "f.id"),
        ),
        ("INFORMATION_SCHEMA", "CHECK_CONSTRAINTS") => super::checks::is_view(OBJ),
        ("SYS", "CHECK_CONSTRAINTS") => super::checks::sys_view(OBJ),
        ("INFORMATION_SCHEMA", "SEQUENCES") => "SELECT 'master' AS SEQUENCE_CATALOG, q.sch AS SEQUENCE_SCHEMA, q.name AS SEQUENCE_NAME, q.type AS DATA_TYPE, CASE q.type WHEN 'tinyint' THEN 3 WHEN 'smallint' THEN 5 WHEN 'int' THEN 10 ELSE 19 END AS NUMERIC_PRECISION, 10 AS NUMERIC_PRECISION_RADIX, 0 AS NUMERIC_SCALE, q.start AS START_VALUE, q.minv AS MINIMUM_VALUE, q.maxv AS MAXIMUM_VALUE, q.incr AS INCREMENT, q.cycle AS CYCLE_OPTION, NULL AS DECLARED_DATA_TYPE, NULL AS DECLARED_NUMERIC_PRECISION, NULL AS DECLARED_NUMERIC_SCALE FROM __tdspeer_sequences q".into(),
        _ => return None,
    })
}

/// Indexes with SQL Server's index_id: the primary key 1, the rest 2… in SQLite's order.
fn sys_indexes() -> String {
    format!(
        "SELECT rid, tname, sname, schema_name, iname, dname, CASE WHEN origin = 'pk' THEN 1 ELSE 2 + seq END AS index_id, uniq, origin FROM ({src}) UNION ALL SELECT c.rid, c.tname, c.sname, c.schema_name, NULL, NULL, 1, 1, 'pk' FROM ({cols}) c WHERE {IDENT}",
        src = indexes_src(),
        cols = cols()
    )
}

/// sys.foreign_keys' referential action (number or description) from SQLite's rule text.
fn action(col: &str, desc: bool) -> String {
    if desc {
        format!(
            "CASE {col} WHEN 'CASCADE' THEN 'CASCADE' WHEN 'SET NULL' THEN 'SET_NULL' WHEN 'SET DEFAULT' THEN 'SET_DEFAULT' ELSE 'NO_ACTION' END"
        )
    } else {
        format!(
            "CASE {col} WHEN 'CASCADE' THEN 1 WHEN 'SET NULL' THEN 2 WHEN 'SET DEFAULT' THEN 3 ELSE 0 END"
        )
    }
}

/// Whether the schema before `dot` is qualified by tempdb (`tempdb.sys.tables`,
/// `[tempdb].INFORMATION_SCHEMA.COLUMNS`).
fn in_tempdb(toks: &[Tok], dot: usize) -> bool {
    let prev = |j: usize| (0..j).rev().find(|&k| !toks[k].is_space());
    let Some(schema) = prev(dot) else {
        return false;
    };
    let Some(db_dot) = prev(schema).filter(|&k| toks[k].is_punct('.')) else {
        return false;
    };
    prev(db_dot).is_some_and(|k| match &toks[k] {
        Tok::Word(w) | Tok::Quoted(w) => w.eq_ignore_ascii_case("tempdb"),
        _ => false,
    })
}

impl Ctx<'_> {
    /// `sys.<view>` / `INFORMATION_SCHEMA.<view>` (bare or bracketed) at the token after
    /// `schema`, whose `.` is at `dot`: as a table reference, the view's subquery named by its
    /// alias or, without one, `__sys_<view>`; as the qualifier of a column
    /// (`sys.objects.name`), that same name. Returns the text and the index to go on from.
    pub(super) fn catalog_ref(
        &self,
        toks: &[Tok],
        schema: &str,
        dot: Option<usize>,
    ) -> Option<(String, usize)> {
        if schema != "SYS" && schema != "INFORMATION_SCHEMA" {
            return None;
        }
        let dot = dot.filter(|&j| toks[j].is_punct('.'))?;
        let name_at = next_sig(toks, dot + 1)?;
        let name = match &toks[name_at] {
            Tok::Word(w) | Tok::Quoted(w) => w.to_ascii_uppercase(),
            _ => return None,
        };
        let sql = if in_tempdb(toks, dot) {
            tempdb_view(schema, &name, self.spid)?
        } else {
            view(schema, &name, self.spid)?
        };
        let alias = format!(
            "__{}_{}",
            if schema == "SYS" { "sys" } else { "is" },
            name.to_ascii_lowercase()
        );
        let mut end = name_at + 1;
        let mut after = next_sig(toks, end);
        if after.is_some_and(|k| toks[k].is_punct('.')) {
            return Some((alias, end));
        }
        // A table hint (`WITH (READPAST)`, `WITH (NOLOCK)`) means nothing here: dropped.
        if let Some(w) = after.filter(|&k| toks[k].is_word("WITH"))
            && let Some(open) = next_sig(toks, w + 1).filter(|&k| toks[k].is_punct('('))
            && let Some(close) = (open..toks.len()).find(|&k| toks[k].is_punct(')'))
        {
            end = close + 1;
            after = next_sig(toks, end);
        }
        let has_alias = after.is_some_and(|k| match &toks[k] {
            Tok::Word(w) => !super::lexer::NOT_ALIAS
                .iter()
                .any(|kw| w.eq_ignore_ascii_case(kw)),
            Tok::Quoted(_) => true,
            _ => false,
        });
        Some(if has_alias {
            (format!("({sql})"), end)
        } else {
            (format!("({sql}) AS {alias}"), end)
        })
    }
}

thread_local! {
    /// The session's SET TRANSACTION ISOLATION LEVEL as sys.dm_exec_sessions numbers it (1 read
    /// uncommitted … 5 snapshot; 2 read committed, the default). One thread serves one
    /// connection, so the session's value lives with its thread.
    static ISOLATION: std::cell::Cell<i64> = const { std::cell::Cell::new(2) };
}

/// Remembers `SET TRANSACTION ISOLATION LEVEL …` (the peer has only SQLite's isolation; the
/// level is reported back as SQL Server would, not enforced).
pub fn set_statement(sg: &[&Tok]) {
    let words: Vec<String> = sg
        .iter()
        .filter_map(|t| match t {
            Tok::Word(w) => Some(w.to_ascii_uppercase()),
            _ => None,
        })
        .collect();
    if words.len() >= 5 && words[1] == "TRANSACTION" && words[2] == "ISOLATION" {
        let level = match (words[4].as_str(), words.get(5).map(String::as_str)) {
            ("READ", Some("UNCOMMITTED")) => 1,
            ("READ", Some("COMMITTED")) => 2,
            ("REPEATABLE", _) => 3,
            ("SERIALIZABLE", _) => 4,
            ("SNAPSHOT", _) => 5,
            _ => return,
        };
        ISOLATION.with(|c| c.set(level));
    }
}

/// Back to READ COMMITTED (sp_reset_connection).
pub fn reset_isolation() {
    ISOLATION.with(|c| c.set(2));
}

pub fn register_session(db: &Connection) -> rusqlite::Result<()> {
    db.create_scalar_function("__isolation", 0, FunctionFlags::SQLITE_UTF8, |_| {
        Ok(ISOLATION.with(|c| c.get()))
    })
}

/// Key constraints' columns (name, table, column, ordinal, INFORMATION_SCHEMA type): primary
/// keys (`PK__<table>`), UNIQUE constraints (their SQLite index name) and foreign keys.
fn key_columns() -> String {
    format!(
        "SELECT {pkn} AS name, c.tname AS tname, c.schema_name AS sch, c.cname AS cname, c.pk AS ord, 'PRIMARY KEY' AS ctype FROM ({cols}) c WHERE c.pk > 0 AND c.otype = 'table' \
         UNION ALL SELECT {uqn}, i.tname, i.schema_name, x.name, x.seqno + 1, 'UNIQUE' FROM ({src}) i JOIN pragma_index_info(i.iname) x WHERE i.origin = 'u' \
         UNION ALL SELECT {fkn}, o.name, o.schema_name, f.\"from\", f.seq + 1, 'FOREIGN KEY' FROM ({OBJ}) o JOIN pragma_foreign_key_list(o.sname) f WHERE o.type = 'table'",
        src = indexes_src(),
        cols = cols(),
        pkn = super::constraints::pk_name("c.sname", "c.tname"),
        uqn = super::constraints::uq_name("i.sname", "i.iname", "i.dname"),
        fkn = super::constraints::fk_name("o.sname", "o.name", "f.id"),
    )
}

/// INFORMATION_SCHEMA's rule text from SQLite's (`NO ACTION`, `CASCADE`, `SET NULL`, …).
fn rule(col: &str) -> String {
    format!(
        "CASE WHEN {col} IN ('CASCADE', 'SET NULL', 'SET DEFAULT') THEN {col} ELSE 'NO ACTION' END"
    )
}

/// The user schemas, shared by every connection of the process (they share one database):
/// read from `__tdspeer_schemas` once and again after each CREATE/DROP SCHEMA, not per
/// statement.
static SCHEMAS: std::sync::Mutex<Option<std::sync::Arc<Vec<String>>>> = std::sync::Mutex::new(None);

pub fn user_schemas(db: &Connection) -> std::sync::Arc<Vec<String>> {
    let mut cached = SCHEMAS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = cached.as_ref() {
        return s.clone();
    }
    let names: Vec<String> = db
        .prepare("SELECT name FROM __tdspeer_schemas")
        .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
        .unwrap_or_default();
    let names = std::sync::Arc::new(names);
    *cached = Some(names.clone());
    names
}

pub fn schemas_changed() {
    *SCHEMAS.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

impl Ctx<'_> {
    /// `s.t` (bare or bracketed) where `s` is a user schema: the SQLite table `"s.t"` (a
    /// schema-qualified object lives in the one SQLite database under its two-part name, so
    /// `dbo.users` and `test_schema.users` are different tables, as in SQL Server). Also as a
    /// column qualifier (`s.t.c` -> `"s.t".c`).
    pub(super) fn schema_object(
        &self,
        toks: &[Tok],
        word: &str,
        dot: Option<usize>,
    ) -> Option<(String, usize)> {
        if self.schemas.is_empty() {
            return None;
        }
        let dot = dot.filter(|&j| toks[j].is_punct('.'))?;
        let schema = self.schemas.iter().find(|s| s.eq_ignore_ascii_case(word))?;
        let name_at = next_sig(toks, dot + 1)?;
        let name = match &toks[name_at] {
            Tok::Word(w) | Tok::Quoted(w) => w,
            _ => return None,
        };
        Some((
            format!(
                "\"{}.{}\"",
                schema.replace('"', "\"\""),
                name.replace('"', "\"\"")
            ),
            name_at + 1,
        ))
    }
}

/// `CREATE [UNIQUE] [NON]CLUSTERED INDEX i ON s.t (…)` and `DROP INDEX i ON s.t`: SQL Server
/// scopes an index name to its table, SQLite to the database, so an index of a user-schema
/// table is the SQLite index `"s.i"` (sys.indexes shows `i`); and SQLite's DROP INDEX has no
/// `ON t`. None when the statement is neither (or needs no change).
pub fn index_ddl(ctx: &Ctx<'_>, toks: &[Tok]) -> Option<Vec<Tok>> {
    let sig: Vec<usize> = (0..toks.len()).filter(|&i| !toks[i].is_space()).collect();
    let create = toks[*sig.first()?].is_word("CREATE");
    if !create && !toks[sig[0]].is_word("DROP") {
        return None;
    }
    let at = *sig.iter().take(5).find(|&&i| toks[i].is_word("INDEX"))?;
    let name_at = next_sig(toks, at + 1)?;
    let name = match &toks[name_at] {
        Tok::Word(w) | Tok::Quoted(w) => w.clone(),
        _ => return None,
    };
    let on = next_sig(toks, name_at + 1).filter(|&k| toks[k].is_word("ON"))?;
    let table_at = next_sig(toks, on + 1)?;
    let schema = match &toks[table_at] {
        Tok::Word(w) | Tok::Quoted(w)
            if next_sig(toks, table_at + 1).is_some_and(|k| toks[k].is_punct('.')) =>
        {
            ctx.schemas
                .iter()
                .find(|s| s.eq_ignore_ascii_case(w))
                .cloned()
        }
        _ => None,
    };
    let index = Tok::Quoted(match &schema {
        Some(s) => format!("{s}.{name}"),
        None => name,
    });
    let mut out = toks.to_vec();
    if create {
        schema.as_ref()?;
        out[name_at] = index;
    } else {
        out.truncate(name_at);
        out.push(index);
    }
    Some(out)
}

/// A SQL Server JSON path without its mode (`lax $.a` / `strict $.a` -> `$.a`).
pub fn register_json(db: &Connection) -> rusqlite::Result<()> {
    let det = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    db.create_scalar_function("__jpath", 1, det, |ctx| {
        Ok(ctx.get::<Option<String>>(0)?.map(|p| {
            let t = p.trim_start();
            let lower = t.to_ascii_lowercase();
            for mode in ["lax", "strict"] {
                if lower.starts_with(mode) && t[mode.len()..].trim_start().starts_with('$') {
                    return t[mode.len()..].trim_start().to_string();
                }
            }
            t.to_string()
        }))
    })
}

#[cfg(test)]
mod tests {
    use super::without_checks;

    #[test]
    fn defaults_are_shown_without_the_rewriters_checks() {
        assert_eq!(without_checks("(__ck(3*5, 'int'))"), "(3*5)");
        assert_eq!(
            without_checks("__ck(__ck(1+f(2, 3), 'int') * 2, 'bigint')"),
            "1+f(2, 3) * 2"
        );
        assert_eq!(without_checks("10 / __nz(2)"), "10 / 2");
        assert_eq!(without_checks("getdate()"), "getdate()");
    }
}
