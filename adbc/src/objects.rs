//! GetObjects, GetTableSchema and GetTableTypes from ODBC's catalog functions (SQLTables,
//! SQLColumns, SQLPrimaryKeys, SQLForeignKeys, SQLStatistics), read through the engine's Arrow
//! path: the same calls work on SQL Server through Driver 18 and FreeTDS, on SQLite3 ODBC and
//! psqlODBC. ADBC's filters are LIKE patterns (`%`, `_`); they are passed to the driver where ODBC
//! takes a pattern and applied again here (drivers differ in how they treat them, and ODBC's
//! catalog argument is not a pattern).
//!
//! Constraints: PRIMARY KEY (SQLPrimaryKeys), FOREIGN KEY with its referenced columns
//! (SQLForeignKeys) and UNIQUE (SQLStatistics' unique indexes other than the primary key's: SQL
//! Server backs every UNIQUE constraint with such an index; a unique index made without a
//! constraint is reported too). CHECK constraints have no ODBC catalog function: they come
//! from the server's catalog (checks.rs: SQL Server, PostgreSQL).

use crate::connection::{FerrodbcConnection, Reader, batches_reader};
use crate::error::{Result, err};
use crate::nested::{list, list_field, strings, struct_array, struct_fields, table_array};
use crate::session::cell;
use adbc_core::error::Status;
use adbc_core::options::ObjectDepth;
use adbc_core::schemas::{GET_OBJECTS_SCHEMA, GET_TABLE_TYPES_SCHEMA};
use arrow_array::RecordBatch;
use arrow_schema::Schema;
use ferrodbc::catalog::CatalogCall;
use std::collections::BTreeMap;

pub struct Filter<'a> {
    pub depth: ObjectDepth,
    pub catalog: Option<&'a str>,
    pub db_schema: Option<&'a str>,
    pub table_name: Option<&'a str>,
    pub table_type: Option<Vec<&'a str>>,
    pub column_name: Option<&'a str>,
}

/// SQL LIKE with `%` and `_` (case-sensitive, as ADBC's patterns are written for the server's
/// collation; SQL Server's default collation is case-insensitive, so its own filtering, done
/// first, decides there). `None` as the value matches only the empty pattern.
pub fn like(pattern: Option<&str>, value: Option<&str>) -> bool {
    fn go(p: &[char], s: &[char]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some('%') => (0..=s.len()).any(|i| go(&p[1..], &s[i..])),
            Some('_') => !s.is_empty() && go(&p[1..], &s[1..]),
            Some(c) => s.first().is_some_and(|x| x.eq_ignore_ascii_case(c)) && go(&p[1..], &s[1..]),
        }
    }
    match (pattern, value) {
        (None, _) => true,
        (Some(p), None) => p.is_empty() || p == "%",
        (Some(p), Some(v)) => {
            let p: Vec<char> = p.chars().collect();
            let s: Vec<char> = v.chars().collect();
            go(&p, &s)
        }
    }
}

#[derive(Default, Clone)]
pub(crate) struct Column {
    pub(crate) name: String,
    pub(crate) ordinal: Option<i32>,
    pub(crate) remarks: Option<String>,
    pub(crate) data_type: Option<i16>,
    pub(crate) type_name: Option<String>,
    pub(crate) column_size: Option<i32>,
    pub(crate) decimal_digits: Option<i16>,
    pub(crate) radix: Option<i16>,
    pub(crate) nullable: Option<i16>,
    pub(crate) default: Option<String>,
    pub(crate) sql_data_type: Option<i16>,
    pub(crate) datetime_sub: Option<i16>,
    pub(crate) octet_length: Option<i32>,
    pub(crate) is_nullable: Option<String>,
    pub(crate) autoincrement: Option<bool>,
}

#[derive(Clone)]
pub(crate) struct Usage {
    pub(crate) catalog: Option<String>,
    pub(crate) schema: Option<String>,
    pub(crate) table: String,
    pub(crate) column: String,
}

#[derive(Clone)]
pub(crate) struct Constraint {
    pub(crate) name: Option<String>,
    pub(crate) kind: &'static str,
    pub(crate) columns: Vec<String>,
    pub(crate) usage: Vec<Usage>,
}

#[derive(Clone)]
pub(crate) struct Table {
    pub(crate) name: String,
    pub(crate) kind: String,
    pub(crate) columns: Option<Vec<Column>>,
    pub(crate) constraints: Option<Vec<Constraint>>,
}

/// (catalog, schema, table name).
type TableKey = (Option<String>, Option<String>, String);

/// catalog -> schema -> table name -> table (None schema/catalog keyed as empty).
type Tree = BTreeMap<Option<String>, BTreeMap<Option<String>, BTreeMap<String, Table>>>;

fn s16(v: Option<i64>) -> Option<i16> {
    v.and_then(|v| i16::try_from(v).ok())
}
fn s32(v: Option<i64>) -> Option<i32> {
    v.and_then(|v| i32::try_from(v).ok())
}

/// A catalog or schema name as ADBC has it: SQLite3 ODBC says "" in SQLColumns where SQLTables
/// says NULL (no catalog); both are none.
pub(crate) fn named(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.is_empty())
}

fn some(s: Option<&str>) -> Option<String> {
    s.map(str::to_string)
}

/// ODBC's `SQLTables` rows passing the filters: (catalog, schema, name, type).
pub(crate) fn tables(
    conn: &FerrodbcConnection,
    f: &Filter<'_>,
) -> Result<Vec<[Option<String>; 4]>> {
    let (_, batches) = conn.session.catalog(&CatalogCall::Tables {
        catalog: None,
        schema: some(f.db_schema),
        table: some(f.table_name),
        table_type: None,
    })?;
    let mut out = Vec::new();
    for b in &batches {
        for r in 0..b.num_rows() {
            let row = [0, 1, 2, 3].map(|c| named(cell::text(b, c, r)));
            let kind = row[3].as_deref().unwrap_or("");
            let type_ok = f
                .table_type
                .as_ref()
                .is_none_or(|ts| ts.iter().any(|t| t.eq_ignore_ascii_case(kind)));
            if type_ok
                && like(f.catalog, row[0].as_deref())
                && like(f.db_schema, row[1].as_deref())
                && like(f.table_name, row[2].as_deref())
            {
                out.push(row);
            }
        }
    }
    Ok(out)
}

fn columns_of(
    conn: &FerrodbcConnection,
    f: &Filter<'_>,
) -> Result<BTreeMap<TableKey, Vec<Column>>> {
    let (schema, batches) = conn.session.catalog(&CatalogCall::Columns {
        catalog: None,
        schema: some(f.db_schema),
        table: some(f.table_name),
        column: some(f.column_name),
    })?;
    let identity = schema
        .fields()
        .iter()
        .position(|f| f.name().eq_ignore_ascii_case("SS_IS_IDENTITY"));
    let mut out: BTreeMap<_, Vec<Column>> = BTreeMap::new();
    for b in &batches {
        for r in 0..b.num_rows() {
            let t = |c| named(cell::text(b, c, r));
            let i = |c| cell::int(b, c, r);
            let Some(name) = t(3) else { continue };
            if !like(f.column_name, Some(&name)) {
                continue;
            }
            let col = Column {
                name,
                data_type: s16(i(4)),
                type_name: t(5),
                column_size: s32(i(6)),
                decimal_digits: s16(i(8)),
                radix: s16(i(9)),
                nullable: s16(i(10)),
                remarks: t(11),
                default: t(12),
                sql_data_type: s16(i(13)),
                datetime_sub: s16(i(14)),
                octet_length: s32(i(15)),
                ordinal: s32(i(16)),
                is_nullable: t(17),
                autoincrement: identity.and_then(i).map(|v| v != 0),
            };
            let Some(table) = t(2) else { continue };
            out.entry((t(0), t(1), table)).or_default().push(col);
        }
    }
    Ok(out)
}

fn constraints_of(
    conn: &FerrodbcConnection,
    current: Option<&str>,
    catalog: Option<&str>,
    schema: Option<&str>,
    table: &str,
) -> Result<Vec<Constraint>> {
    let mut out = Vec::new();
    // PRIMARY KEY: rows (…, COLUMN_NAME, KEY_SEQ, PK_NAME).
    let (_, batches) = conn.session.catalog(&CatalogCall::PrimaryKeys {
        catalog: some(catalog),
        schema: some(schema),
        table: table.to_string(),
    })?;
    let mut pk: Vec<(i64, String)> = Vec::new();
    let mut pk_name = None;
    for b in &batches {
        for r in 0..b.num_rows() {
            if let Some(c) = cell::text(b, 3, r) {
                pk.push((cell::int(b, 4, r).unwrap_or(0), c));
                pk_name = cell::text(b, 5, r);
            }
        }
    }
    pk.sort();
    let pk_columns: Vec<String> = pk.into_iter().map(|(_, c)| c).collect();
    if !pk_columns.is_empty() {
        out.push(Constraint {
            name: pk_name.clone(),
            kind: "PRIMARY KEY",
            columns: pk_columns.clone(),
            usage: Vec::new(),
        });
    }
    // FOREIGN KEY: the keys of this table (FKTABLE), grouped by FK_NAME, in KEY_SEQ order.
    let (_, batches) = conn.session.catalog(&CatalogCall::ForeignKeys {
        pk_catalog: None,
        pk_schema: None,
        pk_table: None,
        fk_catalog: some(catalog),
        fk_schema: some(schema),
        fk_table: Some(table.to_string()),
    })?;
    let mut fks: BTreeMap<String, Vec<(i64, String, Usage)>> = BTreeMap::new();
    for b in &batches {
        for r in 0..b.num_rows() {
            let t = |c| cell::text(b, c, r);
            let (Some(pk_table), Some(pk_col), Some(fk_col)) = (t(2), t(3), t(7)) else {
                continue;
            };
            let name = t(11).unwrap_or_else(|| format!("fk_{pk_table}"));
            fks.entry(name).or_default().push((
                cell::int(b, 8, r).unwrap_or(0),
                fk_col,
                Usage {
                    catalog: t(0),
                    schema: t(1),
                    table: pk_table,
                    column: pk_col,
                },
            ));
        }
    }
    for (name, mut parts) in fks {
        parts.sort_by_key(|p| p.0);
        out.push(Constraint {
            name: Some(name),
            kind: "FOREIGN KEY",
            columns: parts.iter().map(|p| p.1.clone()).collect(),
            usage: parts.into_iter().map(|p| p.2).collect(),
        });
    }
    // UNIQUE: unique indexes (SQLStatistics rows with NON_UNIQUE = 0 and an index name).
    let stats = conn.session.catalog(&CatalogCall::Statistics {
        catalog: some(catalog),
        schema: some(schema),
        table: table.to_string(),
        unique_only: true,
        quick: true,
    });
    if let Ok((_, batches)) = stats {
        let mut uniques: BTreeMap<String, Vec<(i64, String)>> = BTreeMap::new();
        for b in &batches {
            for r in 0..b.num_rows() {
                let (Some(index), Some(col)) = (cell::text(b, 5, r), cell::text(b, 8, r)) else {
                    continue;
                };
                if cell::int(b, 3, r) != Some(0) {
                    continue;
                }
                uniques
                    .entry(index)
                    .or_default()
                    .push((cell::int(b, 7, r).unwrap_or(0), col));
            }
        }
        for (name, mut cols) in uniques {
            cols.sort();
            let cols: Vec<String> = cols.into_iter().map(|c| c.1).collect();
            if Some(&name) == pk_name.as_ref() || (cols == pk_columns && !cols.is_empty()) {
                continue;
            }
            out.push(Constraint {
                name: Some(name),
                kind: "UNIQUE",
                columns: cols,
                usage: Vec::new(),
            });
        }
    }
    out.extend(crate::checks::checks_of(
        conn, current, catalog, schema, table,
    )?);
    Ok(out)
}

fn build_tree(conn: &FerrodbcConnection, f: &Filter<'_>) -> Result<Tree> {
    let mut tree = Tree::new();
    // The current catalog and schema exist even without tables. (SQLite's "catalog" is its
    // file name, which its catalog functions never report: tables have none.)
    let current = match conn.dbms() {
        ferrodbc::backend::Dbms::Sqlite => None,
        _ => conn.current_catalog()?,
    };
    if current.is_some() && like(f.catalog, current.as_deref()) {
        let entry = tree.entry(current.clone()).or_default();
        if let Some(s) = conn.current_schema()?
            && like(f.db_schema, Some(&s))
        {
            entry.entry(Some(s)).or_default();
        }
    }
    let columns = if matches!(f.depth, ObjectDepth::All | ObjectDepth::Columns) {
        Some(columns_of(conn, f)?)
    } else {
        None
    };
    for [cat, schema, name, kind] in tables(conn, f)? {
        let Some(name) = name else { continue };
        let schemas = tree.entry(cat.clone()).or_default();
        let tables = schemas.entry(schema.clone()).or_default();
        let (cols, cons) = match &columns {
            Some(all) => {
                let key = (cat.clone(), schema.clone(), name.clone());
                let cols = all.get(&key).cloned().unwrap_or_default();
                let cons = constraints_of(
                    conn,
                    current.as_deref(),
                    cat.as_deref(),
                    schema.as_deref(),
                    &name,
                )?;
                (Some(cols), Some(cons))
            }
            None => (None, None),
        };
        tables.insert(
            name.clone(),
            Table {
                name,
                kind: kind.unwrap_or_else(|| "TABLE".into()),
                columns: cols,
                constraints: cons,
            },
        );
    }
    Ok(tree)
}

pub fn get_objects(conn: &FerrodbcConnection, f: &Filter<'_>) -> Result<Reader> {
    let tree = build_tree(conn, f)?;
    let schema = GET_OBJECTS_SCHEMA.clone();
    let schemas_dt = schema.field(1).data_type();
    let schema_dt = list_field(schemas_dt).data_type().clone();
    let tables_dt = struct_fields(&schema_dt)[1].data_type().clone();
    let table_dt = list_field(&tables_dt).data_type().clone();

    let with_schemas = !matches!(f.depth, ObjectDepth::Catalogs);
    let with_tables = with_schemas && !matches!(f.depth, ObjectDepth::Schemas);

    let cat_names: Vec<Option<&str>> = tree.keys().map(Option::as_deref).collect();
    let mut schema_lens = Vec::new();
    let mut schema_names: Vec<Option<&str>> = Vec::new();
    let mut table_lens = Vec::new();
    let mut tables: Vec<&Table> = Vec::new();
    for schemas in tree.values() {
        schema_lens.push(with_schemas.then_some(schemas.len()));
        if !with_schemas {
            continue;
        }
        for (name, ts) in schemas {
            schema_names.push(name.as_deref());
            table_lens.push(with_tables.then_some(ts.len()));
            if with_tables {
                tables.extend(ts.values());
            }
        }
    }
    let table_values = table_array(&table_dt, &tables);
    let schema_values = struct_array(
        &schema_dt,
        vec![
            strings(schema_names),
            list(&tables_dt, &table_lens, table_values),
        ],
    );
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            strings(cat_names),
            list(schemas_dt, &schema_lens, schema_values),
        ],
    )?;
    Ok(batches_reader(schema, vec![batch]))
}

/// The Arrow schema a `SELECT *` of the table would have (the same type mapping as a query):
/// the table described by the driver without reading a row.
pub fn get_table_schema(
    conn: &FerrodbcConnection,
    catalog: Option<&str>,
    db_schema: Option<&str>,
    table_name: &str,
) -> Result<Schema> {
    let dbms = conn.dbms();
    let name = [catalog, db_schema, Some(table_name)]
        .into_iter()
        .flatten()
        .filter(|p| !p.is_empty())
        .map(|p| quote_identifier(p, dbms))
        .collect::<Vec<_>>()
        .join(".");
    let sql = match dbms {
        ferrodbc::backend::Dbms::SqlServer => format!("SELECT TOP 0 * FROM {name}"),
        _ => format!("SELECT * FROM {name} WHERE 1 = 0"),
    };
    let (schema, _) = conn.session.query(&sql).map_err(|e| {
        if e.status == Status::NotFound || e.vendor_code == 208 {
            err(
                Status::NotFound,
                format!("table {name} not found: {}", e.message),
            )
        } else {
            e
        }
    })?;
    Ok(schema.as_ref().clone())
}

/// An identifier quoted for the DBMS (`[x]` with `]` doubled on SQL Server, `"x"` elsewhere).
pub fn quote_identifier(name: &str, dbms: ferrodbc::backend::Dbms) -> String {
    match dbms {
        ferrodbc::backend::Dbms::SqlServer => format!("[{}]", name.replace(']', "]]")),
        _ => format!("\"{}\"", name.replace('"', "\"\"")),
    }
}

pub fn get_table_types(conn: &FerrodbcConnection) -> Result<Reader> {
    let mut kinds: Vec<String> = match conn.dbms() {
        ferrodbc::backend::Dbms::SqlServer => {
            vec!["SYSTEM TABLE".into(), "TABLE".into(), "VIEW".into()]
        }
        _ => {
            // SQLTables("", "", "", "%") lists the table types (ODBC's special case).
            let (_, batches) = conn.session.catalog(&CatalogCall::Tables {
                catalog: Some(String::new()),
                schema: Some(String::new()),
                table: Some(String::new()),
                table_type: Some("%".into()),
            })?;
            let mut v: Vec<String> = batches
                .iter()
                .flat_map(|b| (0..b.num_rows()).filter_map(move |r| cell::text(b, 3, r)))
                .collect();
            if v.is_empty() {
                v = vec!["TABLE".into(), "VIEW".into()];
            }
            v
        }
    };
    kinds.sort();
    kinds.dedup();
    let schema = GET_TABLE_TYPES_SCHEMA.clone();
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![strings(kinds.iter().map(|k| Some(k.as_str())))],
    )?;
    Ok(batches_reader(schema, vec![batch]))
}

#[cfg(test)]
mod tests {
    use super::like;

    #[test]
    fn like_patterns() {
        assert!(like(Some("a%"), Some("abc")));
        assert!(like(Some("a_c"), Some("ABC")));
        assert!(!like(Some("a_c"), Some("abbc")));
        assert!(like(None, None));
        assert!(like(Some(""), None));
        assert!(!like(Some("x"), None));
        assert!(like(Some("%"), Some("")));
    }
}
