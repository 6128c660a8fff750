//! `AdbcStatement`: SQL with `?` parameters bound from Arrow, executed through the engine.
//!
//! - ExecuteQuery streams the first result set ([`StreamReader`]); a statement with no result
//!   set (an INSERT through DB-API's `execute`) gives an empty stream.
//! - ExecuteUpdate returns the rows affected (a parameter array's total).
//! - Bound parameters with one row are executed as one call; with more, as parameter arrays
//!   (`Statement::execute_many`, the engine's `executemany`), whose result sets are discarded.
//! - ExecuteSchema prepares the SQL and describes the result without executing it.
//! - With `adbc.ingest.target_table` set, executing ingests the bound data (`ingest.rs`).
//!
//! Options of ferrodbc's own: `adbc.ferrodbc.statement.batch_rows` (rows per record batch),
//! `adbc.ferrodbc.statement.batch_bytes` (a byte budget per batch, turned into rows),
//! `adbc.ferrodbc.statement.query_timeout` (seconds; 0 = none), and the read options of
//! `fetch_arrow_table`: `adbc.ferrodbc.statement.timestamp_unit` (`us`/`ns`),
//! `adbc.ferrodbc.statement.uuid` (`uuid`/`string`), `adbc.ferrodbc.statement.datetimeoffset`
//! (`utc`/`struct`).

use crate::connection::{Reader, batches_reader, empty_schema};
use crate::database::{int_value, string_value, unknown_option};
use crate::error::{Engine, Result, invalid_argument, invalid_state, not_implemented};
use crate::ingest::IngestOptions;
use crate::reader::StreamReader;
use crate::session::{DEFAULT_BATCH_ROWS, Session, layout_of};
use adbc_core::options::{OptionStatement, OptionValue};
use adbc_core::{Optionable, PartitionedResult, Statement};
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{DataType, Field, Schema};
use ferrodbc::arrow::{ArrowLayout, ArrowOptions, Unit};
use ferrodbc::odbc::CancelHandle;
use ferrodbc::plan::ResultPlan;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard};

pub const BATCH_ROWS: &str = "adbc.ferrodbc.statement.batch_rows";
pub const BATCH_BYTES: &str = "adbc.ferrodbc.statement.batch_bytes";
pub const QUERY_TIMEOUT: &str = "adbc.ferrodbc.statement.query_timeout";
pub const TIMESTAMP_UNIT: &str = "adbc.ferrodbc.statement.timestamp_unit";
pub const UUID: &str = "adbc.ferrodbc.statement.uuid";
pub const DATETIMEOFFSET: &str = "adbc.ferrodbc.statement.datetimeoffset";

/// The bound data: a batch (`bind`), or a stream (`bind_stream`) kept as a stream so an ingest
/// reads it one batch at a time; parameters read it whole on first use.
pub enum Bound {
    Batches(Arc<Schema>, Vec<RecordBatch>),
    Stream(Box<dyn RecordBatchReader + Send>),
}

/// What the statement and its result streams share. Field order is drop order: the statement
/// handle is freed before the session (and with it the connection) can be.
pub struct Inner {
    pub stmt: ferrodbc::Statement,
    pub session: Arc<Session>,
}

pub struct FerrodbcStatement {
    inner: Arc<Mutex<Inner>>,
    /// Cancels the statement's handle from another thread without taking `inner`'s lock (held by
    /// the executing thread).
    cancel: Arc<CancelHandle>,
    session: Arc<Session>,
    sql: Option<String>,
    bound: Option<Bound>,
    pub(crate) ingest: IngestOptions,
    /// Set by `cancel()` to stop an ingest between rows (the bulk path checks it).
    pub(crate) ingest_cancel: Arc<AtomicBool>,
    batch_rows: usize,
    /// A byte budget per record batch (0: none), turned into rows per result set.
    batch_bytes: usize,
    query_timeout: usize,
    /// Rows the last `run` changed when it found no result set (-1: unknown).
    affected: i64,
    arrow: ArrowOptions,
}

impl FerrodbcStatement {
    pub fn new(session: Arc<Session>) -> Result<FerrodbcStatement> {
        let stmt = session.statement()?;
        let cancel = Arc::new(stmt.cancel_handle());
        session.register_cancel(&cancel);
        Ok(FerrodbcStatement {
            inner: Arc::new(Mutex::new(Inner {
                stmt,
                session: session.clone(),
            })),
            cancel,
            session,
            sql: None,
            bound: None,
            ingest: IngestOptions::default(),
            ingest_cancel: Arc::new(AtomicBool::new(false)),
            batch_rows: DEFAULT_BATCH_ROWS,
            batch_bytes: 0,
            query_timeout: 0,
            affected: -1,
            arrow: ArrowOptions::default(),
        })
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn session(&self) -> &Arc<Session> {
        &self.session
    }

    /// The bound data, taken (an ingest consumes it).
    pub(crate) fn take_bound(&mut self) -> Option<Bound> {
        self.bound.take()
    }

    fn sql(&self) -> Result<String> {
        self.sql
            .clone()
            .ok_or_else(|| invalid_state("no SQL query was set on this statement"))
    }

    /// The bound parameter rows (a bound stream is read whole here, once).
    fn param_rows(&mut self) -> Result<Option<Vec<Vec<ferrodbc::params::ParamValue>>>> {
        if let Some(Bound::Stream(_)) = &self.bound {
            let Some(Bound::Stream(reader)) = self.bound.take() else {
                unreachable!("matched above");
            };
            let schema = reader.schema();
            let batches = reader.collect::<std::result::Result<Vec<_>, _>>()?;
            self.bound = Some(Bound::Batches(schema, batches));
        }
        match &self.bound {
            None => Ok(None),
            Some(Bound::Batches(_, batches)) => crate::bind::rows_of(batches).map(Some),
            Some(Bound::Stream(_)) => unreachable!("read whole above"),
        }
    }

    /// Execute the SQL with the bound parameters. `Ok(true)` when the statement is positioned
    /// on a result set.
    fn run(&mut self) -> Result<bool> {
        let sql = self.sql()?;
        let rows = self.param_rows()?;
        let timeout = self.query_timeout;
        self.affected = -1;
        let inner_arc = self.inner.clone();
        let mut inner = inner_arc.lock().unwrap_or_else(|e| e.into_inner());
        inner.stmt.set_query_timeout(timeout).adbc()?;
        match rows {
            None => inner.stmt.execute(&sql, Vec::new(), &[]).adbc()?,
            Some(mut rows) if rows.len() == 1 => {
                let row = rows.pop().unwrap_or_default();
                inner.stmt.execute(&sql, row, &[]).adbc()?;
            }
            Some(rows) => {
                inner.stmt.execute_many(&sql, rows, &[]).adbc()?;
                self.affected = inner.stmt.row_count() as i64;
                return Ok(false);
            }
        }
        // The first result set: a batch's leading statements may only count rows (their counts
        // add up to what the statement changed).
        let mut affected: Option<isize> = None;
        while !inner.stmt.has_result_set() {
            let n = inner.stmt.row_count();
            if n >= 0 {
                affected = Some(affected.unwrap_or(0) + n);
            }
            if !inner.stmt.next_result().adbc()? {
                self.affected = affected.map_or(-1, |n| n as i64);
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The prepared statement's parameters as Arrow fields named "0", "1", ... by their described
/// SQL types (the types a bound value of that Arrow type is sent as).
fn described_params(mut stmt: ferrodbc::odbc::Stmt, sql: &str) -> Result<Vec<Field>> {
    stmt.prepare(sql).adbc()?;
    let n = stmt.num_params().adbc()?;
    let mut fields = Vec::with_capacity(n.into());
    for i in 1..=n {
        let d = stmt.param_description(i).adbc()?;
        let field = Field::new(
            (i - 1).to_string(),
            param_type(&d),
            d.nullable != Some(false),
        );
        fields.push(if d.sql_type == SQL_GUID {
            field.with_metadata(
                [("ARROW:extension:name".to_string(), "arrow.uuid".to_string())].into(),
            )
        } else {
            field
        });
    }
    Ok(fields)
}

/// `SQL_GUID`.
const SQL_GUID: i16 = -11;

/// The Arrow type of a described parameter (null where there is none).
fn param_type(d: &ferrodbc::odbc::ParamDescription) -> DataType {
    use arrow_schema::TimeUnit;
    match d.sql_type {
        -7 => DataType::Boolean,
        -6 => DataType::UInt8,
        5 => DataType::Int16,
        4 => DataType::Int32,
        -5 => DataType::Int64,
        7 => DataType::Float32,
        6 | 8 => DataType::Float64,
        2 | 3 => match (u8::try_from(d.size), i8::try_from(d.decimal_digits)) {
            (Ok(p @ 1..=38), Ok(s)) if s >= 0 => DataType::Decimal128(p, s),
            _ => DataType::Null,
        },
        1 | 12 | -1 | -8 | -9 | -10 => DataType::Utf8,
        -4..=-2 => DataType::Binary,
        SQL_GUID => DataType::FixedSizeBinary(16),
        91 => DataType::Date32,
        92 | -154 => DataType::Time64(TimeUnit::Microsecond),
        93 => DataType::Timestamp(TimeUnit::Microsecond, None),
        -155 => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        _ => DataType::Null,
    }
}

/// Bytes a streamed (MAX) cell is reckoned at when a byte budget is turned into rows.
const STREAMED_CELL_BYTES: usize = 8 * 1024;

/// Rows per batch for a budget of `bytes` (None: no budget), from the plan's bound bytes per row
/// (values and indicators, UTF-16 for text: close to, and not below, Arrow's size) plus
/// [`STREAMED_CELL_BYTES`] per streamed column. At least one row.
fn rows_for_bytes(plan: &ResultPlan, bytes: usize) -> Option<usize> {
    if bytes == 0 {
        return None;
    }
    let streamed = plan.columns.len() - plan.bound_prefix;
    let per_row = (plan.row_bytes + streamed * STREAMED_CELL_BYTES).max(1);
    Some((bytes / per_row).max(1))
}

fn arrow_option(key: &str, value: &str, arrow: &mut ArrowOptions) -> Result<()> {
    match (key, value) {
        (TIMESTAMP_UNIT, "us") => arrow.unit = Unit::Micros,
        (TIMESTAMP_UNIT, "ns") => arrow.unit = Unit::Nanos,
        (UUID, "uuid") => arrow.uuid_text = false,
        (UUID, "string") => arrow.uuid_text = true,
        (DATETIMEOFFSET, "utc") => arrow.offsets = false,
        (DATETIMEOFFSET, "struct") => arrow.offsets = true,
        _ => {
            return Err(invalid_argument(format!(
                "option {key}: {value:?} is not one of its values"
            )));
        }
    }
    Ok(())
}

impl Optionable for FerrodbcStatement {
    type Option = OptionStatement;

    fn set_option(&mut self, key: Self::Option, value: OptionValue) -> Result<()> {
        let name = key.as_ref().to_string();
        match key {
            OptionStatement::TargetTable
            | OptionStatement::IngestMode
            | OptionStatement::TargetCatalog
            | OptionStatement::TargetDbSchema
            | OptionStatement::Temporary => self.ingest.set(&key, string_value(&name, value)?),
            OptionStatement::Other(k) if k == BATCH_ROWS => {
                let n = int_value(&name, value)?;
                if n < 1 {
                    return Err(invalid_argument(format!("{BATCH_ROWS} must be at least 1")));
                }
                self.batch_rows = n as usize;
                Ok(())
            }
            OptionStatement::Other(k) if k == BATCH_BYTES => {
                let n = int_value(&name, value)?;
                self.batch_bytes = usize::try_from(n)
                    .map_err(|_| invalid_argument(format!("{BATCH_BYTES} must be >= 0")))?;
                Ok(())
            }
            OptionStatement::Other(k) if k == QUERY_TIMEOUT => {
                let n = int_value(&name, value)?;
                self.query_timeout = usize::try_from(n)
                    .map_err(|_| invalid_argument(format!("{QUERY_TIMEOUT} must be >= 0")))?;
                Ok(())
            }
            OptionStatement::Other(k)
                if [TIMESTAMP_UNIT, UUID, DATETIMEOFFSET].contains(&k.as_str()) =>
            {
                let v = string_value(&name, value)?;
                arrow_option(&k, &v, &mut self.arrow)
            }
            OptionStatement::Incremental => Err(not_implemented(
                "incremental execution: results are streamed, there is nothing to poll",
            )),
            _ => Err(unknown_option(&name)),
        }
    }

    fn get_option_string(&self, key: Self::Option) -> Result<String> {
        match &key {
            OptionStatement::Other(k) if k == BATCH_ROWS => Ok(self.batch_rows.to_string()),
            OptionStatement::Other(k) if k == QUERY_TIMEOUT => Ok(self.query_timeout.to_string()),
            OptionStatement::Other(k) if k == BATCH_BYTES => Ok(self.batch_bytes.to_string()),
            OptionStatement::Other(k) if k == TIMESTAMP_UNIT => {
                Ok(if self.arrow.unit == Unit::Nanos {
                    "ns"
                } else {
                    "us"
                }
                .into())
            }
            OptionStatement::Other(k) if k == UUID => Ok(if self.arrow.uuid_text {
                "string"
            } else {
                "uuid"
            }
            .into()),
            OptionStatement::Other(k) if k == DATETIMEOFFSET => {
                Ok(if self.arrow.offsets { "struct" } else { "utc" }.into())
            }
            _ => self
                .ingest
                .get(&key)
                .ok_or_else(|| unknown_option(key.as_ref())),
        }
    }

    fn get_option_bytes(&self, key: Self::Option) -> Result<Vec<u8>> {
        self.get_option_string(key).map(String::into_bytes)
    }

    fn get_option_int(&self, key: Self::Option) -> Result<i64> {
        let name = key.as_ref().to_string();
        int_value(&name, OptionValue::String(self.get_option_string(key)?))
    }

    fn get_option_double(&self, key: Self::Option) -> Result<f64> {
        Err(unknown_option(key.as_ref()))
    }
}

impl Statement for FerrodbcStatement {
    fn bind(&mut self, batch: RecordBatch) -> Result<()> {
        self.bound = Some(Bound::Batches(batch.schema(), vec![batch]));
        Ok(())
    }

    /// Kept as a stream: an ingest reads it one batch at a time (memory bounded by a batch);
    /// parameters read it whole when the statement executes.
    fn bind_stream(&mut self, reader: Box<dyn RecordBatchReader + Send>) -> Result<()> {
        self.bound = Some(Bound::Stream(reader));
        Ok(())
    }

    fn execute(&mut self) -> Result<Reader> {
        if self.ingest.is_set() {
            let n = crate::ingest::ingest(self)?;
            crate::export::set_rows_affected(n);
            return Ok(batches_reader(empty_schema(), Vec::new()));
        }
        if !self.run()? {
            // No result set: what the statement changed (DB-API's rowcount after execute()).
            crate::export::set_rows_affected(self.affected);
            return Ok(batches_reader(empty_schema(), Vec::new()));
        }
        let mut inner = self.lock();
        let Some(layout) = layout_of(&mut inner.stmt, self.arrow)? else {
            return Ok(batches_reader(empty_schema(), Vec::new()));
        };
        let epoch = inner.stmt.epoch();
        drop(inner);
        let rows = rows_for_bytes(&layout.plan, self.batch_bytes)
            .map_or(self.batch_rows, |r| r.min(self.batch_rows));
        Ok(Box::new(StreamReader::new(
            self.inner.clone(),
            epoch,
            &layout,
            rows,
        )))
    }

    fn execute_update(&mut self) -> Result<Option<i64>> {
        if self.ingest.is_set() {
            return crate::ingest::ingest(self).map(Some);
        }
        let sql = self.sql()?;
        let rows = self.param_rows()?;
        let timeout = self.query_timeout;
        let mut inner = self.lock();
        inner.stmt.set_query_timeout(timeout).adbc()?;
        match rows {
            Some(rows) if rows.len() != 1 => inner.stmt.execute_many(&sql, rows, &[]).adbc()?,
            rows => {
                let row = rows.and_then(|mut r| r.pop()).unwrap_or_default();
                inner.stmt.execute(&sql, row, &[]).adbc()?;
            }
        }
        let n = inner.stmt.row_count();
        inner.stmt.close().adbc()?;
        Ok((n >= 0).then_some(n as i64))
    }

    /// SQL Server: the statement run under `SET FMTONLY ON` (the server describes the result and
    /// runs nothing; what Driver 18 itself sends to describe a prepared statement), read through
    /// the same plan as a query. Other DBMS: prepared and described (`SQLDescribeCol`).
    fn execute_schema(&mut self) -> Result<Schema> {
        let sql = self.sql()?;
        let (dbms, backend) = {
            let conn = self.session.lock();
            (conn.dbms(), conn.backend())
        };
        if dbms == ferrodbc::backend::Dbms::SqlServer {
            let rows = self.param_rows()?;
            // Unbound `?` markers are described with NULLs (the server runs nothing).
            let markers = ferrodbc::params::count_markers(&sql, dbms);
            let mut inner = self.lock();
            inner
                .stmt
                .execute("SET FMTONLY ON", Vec::new(), &[])
                .adbc()?;
            let described = (|| -> Result<Schema> {
                let row = rows
                    .and_then(|mut r| r.pop())
                    .filter(|r| !r.is_empty())
                    .unwrap_or_else(|| vec![ferrodbc::params::ParamValue::Null; markers]);
                inner.stmt.execute(&sql, row, &[]).adbc()?;
                while !inner.stmt.has_result_set() {
                    if !inner.stmt.next_result().adbc()? {
                        return Ok(Schema::empty());
                    }
                }
                let layout = layout_of(&mut inner.stmt, self.arrow)?;
                Ok(layout.map_or_else(Schema::empty, |l| l.schema.as_ref().clone()))
            })();
            let off = inner
                .stmt
                .execute("SET FMTONLY OFF", Vec::new(), &[])
                .adbc();
            let schema = described?;
            off?;
            return Ok(schema);
        }
        let mut stmt = self.session.lock().new_statement().adbc()?;
        stmt.prepare(&sql).adbc()?;
        let n = stmt.num_result_cols().adbc()?;
        let mut descs = Vec::with_capacity(n.into());
        for c in 1..=n {
            descs.push(stmt.describe_col(c).adbc()?);
        }
        let plan = Arc::new(ResultPlan::build(descs, backend));
        let layout = ArrowLayout::new(plan, self.arrow).adbc()?;
        Ok(layout.schema.as_ref().clone())
    }

    fn execute_partitions(&mut self) -> Result<PartitionedResult> {
        Err(not_implemented(
            "ExecutePartitions: SQL Server returns one result stream, not partitions",
        ))
    }

    /// The bound parameters' schema; before a bind, the types the driver describes for the
    /// prepared statement's `?` markers (`SQLDescribeParam`; Driver 18 asks SQL Server), or,
    /// where it cannot, one field per marker of type null (ADBC's "unknown").
    fn get_parameter_schema(&self) -> Result<Schema> {
        match &self.bound {
            Some(Bound::Batches(schema, _)) => return Ok(schema.as_ref().clone()),
            Some(Bound::Stream(reader)) => return Ok(reader.schema().as_ref().clone()),
            None => {}
        }
        let sql = self.sql()?;
        let (dbms, stmt) = {
            let conn = self.session.lock();
            (conn.dbms(), conn.new_statement().adbc()?)
        };
        if let Ok(fields) = described_params(stmt, &sql) {
            return Ok(Schema::new(fields));
        }
        let n = ferrodbc::params::count_markers(&sql, dbms);
        Ok(Schema::new(
            (0..n)
                .map(|i| Field::new(i.to_string(), DataType::Null, true))
                .collect::<Vec<_>>(),
        ))
    }

    /// Checks a query is set; the engine prepares when it executes (parameter arrays are sent
    /// prepared, as `executemany` does).
    fn prepare(&mut self) -> Result<()> {
        self.sql().map(|_| ())
    }

    fn set_sql_query(&mut self, query: impl AsRef<str>) -> Result<()> {
        self.sql = Some(query.as_ref().to_string());
        // A new query starts without the previous one's parameters or ingest target.
        self.bound = None;
        self.ingest.clear_target();
        Ok(())
    }

    fn set_substrait_plan(&mut self, _plan: impl AsRef<[u8]>) -> Result<()> {
        Err(not_implemented("Substrait: SQL Server takes SQL only"))
    }

    /// Cancels the running execute or fetch (ODBC `SQLCancel`, which the driver sends to the
    /// server as an attention). Meant to be called from another thread: it touches only the
    /// cancel handle, never the statement the executing thread holds.
    fn cancel(&mut self) -> Result<()> {
        self.ingest_cancel
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.cancel.cancel().adbc()
    }
}
