//! Bulk ingest (`adbc.ingest.*` options): the bound data into a table on the statement's own
//! connection, so a `#temp` target and the open transaction are the caller's. The rows go through
//! the same bulk path as `bulkcopy_arrow` (`crate::bulk`: the driver's bcp API on Driver 17/18
//! and FreeTDS, parameter arrays elsewhere).
//!
//! Modes: `create` (CREATE TABLE; ALREADY_EXISTS when it does), `append` (the table must exist),
//! `replace` (DROP if it exists, then CREATE), `create_append` (CREATE unless it exists).
//! `adbc.ingest.temporary` = `true` makes a `#name` table (SQL Server's session-local temporary
//! table), and cannot be combined with a target catalog or schema.
//!
//! The column types `create` chooses keep every value exact: see [`sql_type`] and the table in
//! docs/adbc.md.

use crate::error::{Engine, Result, err, invalid_argument, not_implemented};
use crate::objects::quote_identifier;
use crate::statement::{Bound, FerrodbcStatement};
use adbc_core::error::Status;
use adbc_core::options::OptionStatement;
use arrow_array::{RecordBatchIterator, RecordBatchReader};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use ferrodbc::backend::Dbms;
use ferrodbc::bulk::{
    BulkError, BulkLoad, LoadCount, LoadOptions, Mapping, NoLock, Progress, Request,
};
use std::sync::atomic::Ordering;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Create,
    Append,
    Replace,
    CreateAppend,
}

#[derive(Debug, Clone, Default)]
pub struct IngestOptions {
    pub table: Option<String>,
    pub mode: Mode,
    pub catalog: Option<String>,
    pub schema: Option<String>,
    pub temporary: bool,
}

impl IngestOptions {
    pub fn is_set(&self) -> bool {
        self.table.is_some()
    }

    /// A new SQL query ends an ingest set up before it.
    pub fn clear_target(&mut self) {
        self.table = None;
    }

    pub fn set(&mut self, key: &OptionStatement, value: String) -> Result<()> {
        match key {
            OptionStatement::TargetTable => self.table = Some(value),
            OptionStatement::IngestMode => {
                self.mode = match value.as_str() {
                    "adbc.ingest.mode.create" => Mode::Create,
                    "adbc.ingest.mode.append" => Mode::Append,
                    "adbc.ingest.mode.replace" => Mode::Replace,
                    "adbc.ingest.mode.create_append" => Mode::CreateAppend,
                    other => {
                        return Err(invalid_argument(format!("{other:?} is not an ingest mode")));
                    }
                }
            }
            OptionStatement::TargetCatalog => self.catalog = Some(value),
            OptionStatement::TargetDbSchema => self.schema = Some(value),
            OptionStatement::Temporary => {
                self.temporary = match value.as_str() {
                    "true" => true,
                    "false" => false,
                    other => {
                        return Err(invalid_argument(format!(
                            "adbc.ingest.temporary: {other:?} is not 'true' or 'false'"
                        )));
                    }
                }
            }
            _ => unreachable!("only ingest options are routed here"),
        }
        Ok(())
    }

    pub fn get(&self, key: &OptionStatement) -> Option<String> {
        match key {
            OptionStatement::TargetTable => self.table.clone(),
            OptionStatement::IngestMode => Some(
                match self.mode {
                    Mode::Create => "adbc.ingest.mode.create",
                    Mode::Append => "adbc.ingest.mode.append",
                    Mode::Replace => "adbc.ingest.mode.replace",
                    Mode::CreateAppend => "adbc.ingest.mode.create_append",
                }
                .into(),
            ),
            OptionStatement::TargetCatalog => self.catalog.clone(),
            OptionStatement::TargetDbSchema => self.schema.clone(),
            OptionStatement::Temporary => Some(self.temporary.to_string()),
            _ => None,
        }
    }

    /// The target's name as SQL, quoted (`[cat].[schema].[name]`, or `[#name]` when temporary).
    pub fn target(&self, dbms: Dbms) -> Result<String> {
        let table = self
            .table
            .as_deref()
            .ok_or_else(|| invalid_argument("adbc.ingest.target_table is not set"))?;
        if self.temporary {
            if self.catalog.is_some() || self.schema.is_some() {
                return Err(invalid_argument(
                    "adbc.ingest.temporary cannot be combined with a target catalog or schema",
                ));
            }
            return Ok(match dbms {
                Dbms::SqlServer => quote_identifier(&format!("#{table}"), dbms),
                _ => quote_identifier(table, dbms),
            });
        }
        Ok(
            [self.catalog.as_deref(), self.schema.as_deref(), Some(table)]
                .into_iter()
                .flatten()
                .map(|p| quote_identifier(p, dbms))
                .collect::<Vec<_>>()
                .join("."),
        )
    }
}

fn fraction_digits(unit: &TimeUnit) -> u8 {
    match unit {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 3,
        TimeUnit::Microsecond => 6,
        TimeUnit::Nanosecond => 7,
    }
}

fn is_uuid(field: &Field) -> bool {
    field
        .metadata()
        .get("ARROW:extension:name")
        .is_some_and(|n| n == "arrow.uuid")
}

/// The column type `create` gives an Arrow field: the narrowest SQL Server type that holds every
/// value of the Arrow type exactly (other DBMS: the standard spelling of the same).
pub fn sql_type(field: &Field, dbms: Dbms) -> Result<String> {
    use DataType as D;
    let ss = dbms == Dbms::SqlServer;
    let pick = |sql_server: &str, other: &str| if ss { sql_server } else { other }.to_string();
    Ok(match field.data_type() {
        D::Boolean => pick("bit", "boolean"),
        // SQL Server's tinyint is 0..255: int8 needs smallint.
        D::Int8 | D::Int16 => "smallint".into(),
        D::UInt8 => pick("tinyint", "smallint"),
        D::Int32 | D::UInt16 => pick("int", "integer"),
        D::Int64 | D::UInt32 => "bigint".into(),
        D::UInt64 => "decimal(20, 0)".into(),
        D::Float16 | D::Float32 => "real".into(),
        D::Float64 => pick("float", "double precision"),
        D::Decimal32(p, s) | D::Decimal64(p, s) => format!("decimal({p}, {s})"),
        D::Decimal128(p, s) if *s >= 0 && *p <= 38 => format!("decimal({p}, {s})"),
        D::Decimal256(p, s) if *s >= 0 && *p <= 38 => format!("decimal({p}, {s})"),
        D::Decimal128(..) | D::Decimal256(..) => {
            return Err(not_implemented(&format!(
                "column {:?}: {} does not fit decimal(38) with a non-negative scale",
                field.name(),
                field.data_type()
            )));
        }
        D::Date32 | D::Date64 => "date".into(),
        D::Time32(u) | D::Time64(u) => {
            if ss {
                format!("time({})", fraction_digits(u))
            } else {
                "time".into()
            }
        }
        D::Timestamp(u, None) => {
            if ss {
                format!("datetime2({})", fraction_digits(u))
            } else {
                "timestamp".into()
            }
        }
        D::Timestamp(u, Some(_)) => {
            if ss {
                format!("datetimeoffset({})", fraction_digits(u))
            } else {
                "timestamp with time zone".into()
            }
        }
        // ferrodbc's own datetimeoffset struct (instant + offset minutes).
        D::Struct(_) => pick("datetimeoffset(7)", "timestamp with time zone"),
        D::Utf8 | D::LargeUtf8 | D::Utf8View | D::Dictionary(..) | D::Null => {
            pick("nvarchar(max)", "text")
        }
        D::FixedSizeBinary(16) if is_uuid(field) => pick("uniqueidentifier", "uuid"),
        D::FixedSizeBinary(n) if ss && *n <= 8000 => format!("binary({n})"),
        D::Binary | D::LargeBinary | D::BinaryView | D::FixedSizeBinary(_) => {
            pick("varbinary(max)", "bytea")
        }
        other => {
            return Err(not_implemented(&format!(
                "column {:?}: the Arrow type {other} cannot be ingested",
                field.name()
            )));
        }
    })
}

/// `CREATE TABLE` for `schema`; `if_absent` only when the table does not exist yet.
pub fn create_table(
    target: &str,
    schema: &Schema,
    dbms: Dbms,
    if_absent: bool,
    temporary: bool,
) -> Result<String> {
    let mut cols = Vec::with_capacity(schema.fields().len());
    for f in schema.fields() {
        let null = if f.is_nullable() { "NULL" } else { "NOT NULL" };
        cols.push(format!(
            "{} {} {null}",
            quote_identifier(f.name(), dbms),
            sql_type(f, dbms)?
        ));
    }
    let create = format!("CREATE TABLE {target} ({})", cols.join(", "));
    // SQL Server's temporary table is its `#name`; elsewhere the statement says it.
    let create = if temporary && dbms != Dbms::SqlServer {
        create.replacen("CREATE TABLE", "CREATE TEMPORARY TABLE", 1)
    } else {
        create
    };
    Ok(match (if_absent, dbms) {
        (false, _) => create,
        (true, Dbms::SqlServer) => {
            format!("IF OBJECT_ID({}) IS NULL {create}", object_id_arg(target))
        }
        // psqlODBC returns PostgreSQL's NOTICE "already exists, skipping" as a diagnostic of
        // SQLSTATE 42P07, which an ODBC caller must take for an error: ask first instead.
        (true, Dbms::PostgreSql) => pg_if(target, true, &create),
        (true, _) => create.replacen(" TABLE ", " TABLE IF NOT EXISTS ", 1),
    })
}

/// PostgreSQL: `sql` run only if `target` is absent (`absent`) or present, without the NOTICE
/// that `IF [NOT] EXISTS` sends (see create_table).
fn pg_if(target: &str, absent: bool, sql: &str) -> String {
    format!(
        "DO $ferrodbc$ BEGIN IF to_regclass('{}') IS {}NULL THEN {sql}; END IF; END $ferrodbc$",
        target.replace('\'', "''"),
        if absent { "" } else { "NOT " }
    )
}

/// The `OBJECT_ID` argument for a quoted target (a `#temp` table lives in tempdb).
fn object_id_arg(target: &str) -> String {
    let name = if target.starts_with("[#") {
        format!("tempdb..{target}")
    } else {
        target.to_string()
    };
    format!("N'{}'", name.replace('\'', "''"))
}

fn drop_table(target: &str, dbms: Dbms) -> String {
    match dbms {
        Dbms::SqlServer => format!(
            "IF OBJECT_ID({}) IS NOT NULL DROP TABLE {target}",
            object_id_arg(target)
        ),
        Dbms::PostgreSql => pg_if(target, false, &format!("DROP TABLE {target}")),
        _ => format!("DROP TABLE IF EXISTS {target}"),
    }
}

/// Run the ingest: the DDL the mode asks for, then the rows. The rows ingested.
pub fn ingest(stmt: &mut FerrodbcStatement) -> Result<i64> {
    let bound = stmt
        .take_bound()
        .ok_or_else(|| err(Status::InvalidState, "ingest: no data was bound"))?;
    let reader: Box<dyn RecordBatchReader + Send> = match bound {
        Bound::Stream(reader) => reader,
        Bound::Batches(schema, batches) => Box::new(RecordBatchIterator::new(
            batches.into_iter().map(Ok),
            schema,
        )),
    };
    let schema = reader.schema();
    let dbms = stmt.session().lock().dbms();
    let target = stmt.ingest.target(dbms)?;
    let temporary = stmt.ingest.temporary;
    let ddl: Vec<String> = match stmt.ingest.mode {
        Mode::Create => vec![create_table(&target, &schema, dbms, false, temporary)?],
        Mode::Append => Vec::new(),
        Mode::Replace => vec![
            drop_table(&target, dbms),
            create_table(&target, &schema, dbms, false, temporary)?,
        ],
        Mode::CreateAppend => vec![create_table(&target, &schema, dbms, true, temporary)?],
    };
    {
        let mut inner = stmt.lock();
        for sql in ddl {
            inner.stmt.execute(&sql, Vec::new(), &[]).adbc()?;
            inner.stmt.close().adbc()?;
        }
    }
    load(stmt, target, reader)
}

/// The rows into the existing table through the engine's bulk path (`crate::bulk`, as
/// `bulkcopy_arrow`): one record batch at a time, on this connection and its transaction.
fn load(
    stmt: &FerrodbcStatement,
    target: String,
    reader: Box<dyn RecordBatchReader + Send>,
) -> Result<i64> {
    let options = LoadOptions {
        // ADBC: a NULL is a NULL, never the column's default.
        keep_nulls: true,
        ..LoadOptions::default()
    };
    let request = Request::new(target, options, Mapping::Position);
    let fields = reader.schema().fields().len();
    stmt.ingest_cancel.store(false, Ordering::SeqCst);
    let mut conn = stmt.session().lock();
    let count = (|| -> std::result::Result<LoadCount, BulkError> {
        let mut load = BulkLoad::begin(
            &mut conn,
            &request,
            Some(fields),
            stmt.ingest_cancel.clone(),
        )?;
        load.arrow(&NoLock, reader, Progress::none())?;
        Ok(load.finish()?)
    })()
    .map_err(|e| crate::error::from_engine(&ferrodbc::Error::from(e)))?;
    Ok(i64::try_from(count.rows_copied).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_keeps_values_exact() {
        let schema = Schema::new(vec![
            Field::new("a", DataType::Int8, false),
            Field::new("b", DataType::UInt64, true),
            Field::new("c", DataType::Timestamp(TimeUnit::Nanosecond, None), true),
            Field::new("d", DataType::Decimal128(38, 10), true),
        ]);
        let sql = create_table("[t]", &schema, Dbms::SqlServer, false, false).unwrap();
        assert_eq!(
            sql,
            "CREATE TABLE [t] ([a] smallint NOT NULL, [b] decimal(20, 0) NULL, \
             [c] datetime2(7) NULL, [d] decimal(38, 10) NULL)"
        );
    }

    #[test]
    fn temporary_tables_elsewhere_say_so() {
        let schema = Schema::new(vec![Field::new("a", DataType::Int32, true)]);
        let sql = create_table("\"t\"", &schema, Dbms::Sqlite, true, true).unwrap();
        assert_eq!(
            sql,
            "CREATE TEMPORARY TABLE IF NOT EXISTS \"t\" (\"a\" integer NULL)"
        );
    }

    #[test]
    fn temporary_targets() {
        let mut o = IngestOptions {
            table: Some("x".into()),
            temporary: true,
            ..Default::default()
        };
        assert_eq!(o.target(Dbms::SqlServer).unwrap(), "[#x]");
        o.schema = Some("dbo".into());
        assert!(o.target(Dbms::SqlServer).is_err());
        assert_eq!(object_id_arg("[#x]"), "N'tempdb..[#x]'");
    }
}
