//! `AdbcConnection`: options (autocommit, read-only, isolation level, current catalog and
//! schema), commit / rollback, cancel, and the metadata functions (`info.rs`, `objects.rs`).
//!
//! ADBC's default is autocommit on; switching it off starts a transaction that `commit` /
//! `rollback` end (ODBC's manual-commit mode). Switching it back on commits the open
//! transaction, as ODBC says.

use crate::database::{int_value, string_value, unknown_option};
use crate::error::{Engine, Result, err, invalid_argument, not_implemented};
use crate::session::Session;
use crate::statement::FerrodbcStatement;
use adbc_core::error::Status;
use adbc_core::options::{InfoCode, ObjectDepth, OptionConnection, OptionValue};
use adbc_core::{Connection, Optionable};
use arrow_array::{RecordBatch, RecordBatchIterator, RecordBatchReader};
use arrow_schema::{Schema, SchemaRef};
use ferrodbc::backend::Dbms;
use ferrodbc::info::{AttrValue, InfoKind, InfoValue};
use std::collections::HashSet;
use std::sync::Arc;

/// ODBC connection attributes and the isolation levels' values (sql.h; snapshot: msodbcsql.h).
const SQL_ATTR_ACCESS_MODE: i32 = 101;
const SQL_ATTR_TXN_ISOLATION: i32 = 108;
const SQL_ATTR_CURRENT_CATALOG: i32 = 109;
/// `SQL_DATABASE_NAME`: the current database (SQLGetInfo).
const SQL_DATABASE_NAME: u16 = 16;

pub type Reader = Box<dyn RecordBatchReader + Send + 'static>;

/// A reader over batches already read.
pub fn batches_reader(schema: SchemaRef, batches: Vec<RecordBatch>) -> Reader {
    Box::new(RecordBatchIterator::new(
        batches.into_iter().map(Ok),
        schema,
    ))
}

pub struct FerrodbcConnection {
    pub(crate) session: Arc<Session>,
    read_only: bool,
    isolation: String,
}

fn parse_bool(key: &str, value: OptionValue) -> Result<bool> {
    match string_value(key, value)?.as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        other => Err(invalid_argument(format!(
            "option {key}: {other:?} is not 'true' or 'false'"
        ))),
    }
}

/// The `SQL_ATTR_TXN_ISOLATION` value of an ADBC isolation level.
fn isolation_value(level: &str) -> Result<usize> {
    use adbc_core::constants::*;
    Ok(match level {
        ADBC_OPTION_ISOLATION_LEVEL_READ_UNCOMMITTED => 1,
        ADBC_OPTION_ISOLATION_LEVEL_READ_COMMITTED | ADBC_OPTION_ISOLATION_LEVEL_DEFAULT => 2,
        ADBC_OPTION_ISOLATION_LEVEL_REPEATABLE_READ => 4,
        ADBC_OPTION_ISOLATION_LEVEL_SERIALIZABLE => 8,
        // SQL_TXN_SS_SNAPSHOT (msodbcsql.h).
        ADBC_OPTION_ISOLATION_LEVEL_SNAPSHOT => 32,
        ADBC_OPTION_ISOLATION_LEVEL_LINEARIZABLE => {
            return Err(not_implemented(
                "isolation level linearizable: SQL Server has no such level",
            ));
        }
        other => {
            return Err(invalid_argument(format!(
                "{other:?} is not an isolation level"
            )));
        }
    })
}

impl FerrodbcConnection {
    pub fn new(conn: ferrodbc::Connection) -> FerrodbcConnection {
        FerrodbcConnection {
            session: Session::new(conn),
            read_only: false,
            isolation: adbc_core::constants::ADBC_OPTION_ISOLATION_LEVEL_DEFAULT.into(),
        }
    }

    pub fn dbms(&self) -> Dbms {
        self.session.lock().dbms()
    }

    pub fn current_catalog(&self) -> Result<Option<String>> {
        let v = self
            .session
            .lock()
            .info(SQL_DATABASE_NAME, InfoKind::Text)
            .adbc()?;
        Ok(match v {
            InfoValue::Text(s) if !s.is_empty() => Some(s),
            _ => None,
        })
    }

    /// The session's default schema: asked of the server where it has the notion.
    pub fn current_schema(&self) -> Result<Option<String>> {
        let sql = match self.dbms() {
            Dbms::SqlServer => "SELECT SCHEMA_NAME()",
            Dbms::PostgreSql => "SELECT current_schema()",
            _ => return Ok(None),
        };
        let (_, batches) = self.session.query(sql)?;
        Ok(batches
            .iter()
            .find(|b| b.num_rows() > 0)
            .and_then(|b| crate::session::cell::text(b, 0, 0)))
    }
}

impl Optionable for FerrodbcConnection {
    type Option = OptionConnection;

    fn set_option(&mut self, key: Self::Option, value: OptionValue) -> Result<()> {
        let name = key.as_ref().to_string();
        match key {
            OptionConnection::AutoCommit => {
                let on = parse_bool(&name, value)?;
                self.session.lock().set_autocommit(on).adbc()
            }
            OptionConnection::ReadOnly => {
                let on = parse_bool(&name, value)?;
                self.session
                    .lock()
                    .set_attr(SQL_ATTR_ACCESS_MODE, &AttrValue::Int(usize::from(on)))
                    .adbc()?;
                self.read_only = on;
                Ok(())
            }
            OptionConnection::IsolationLevel => {
                let text = string_value(&name, value)?;
                let v = isolation_value(&text)?;
                self.session
                    .lock()
                    .set_attr(SQL_ATTR_TXN_ISOLATION, &AttrValue::Int(v))
                    .adbc()?;
                self.isolation = text;
                Ok(())
            }
            OptionConnection::CurrentCatalog => {
                let db = string_value(&name, value)?;
                self.session
                    .lock()
                    .set_attr(SQL_ATTR_CURRENT_CATALOG, &AttrValue::Text(db))
                    .adbc()
            }
            OptionConnection::CurrentSchema => {
                let wanted = string_value(&name, value)?;
                if self.current_schema()?.as_deref() == Some(wanted.as_str()) {
                    return Ok(());
                }
                Err(not_implemented(
                    "setting the current schema: SQL Server's default schema belongs to the \
                     user (ALTER USER ... WITH DEFAULT_SCHEMA), not the session; qualify names \
                     instead",
                ))
            }
            _ => Err(unknown_option(&name)),
        }
    }

    fn get_option_string(&self, key: Self::Option) -> Result<String> {
        match key {
            OptionConnection::AutoCommit => Ok(self.session.lock().autocommit().to_string()),
            OptionConnection::ReadOnly => Ok(self.read_only.to_string()),
            OptionConnection::IsolationLevel => Ok(self.isolation.clone()),
            OptionConnection::CurrentCatalog => self
                .current_catalog()?
                .ok_or_else(|| err(Status::NotFound, "the data source names no current catalog")),
            OptionConnection::CurrentSchema => self
                .current_schema()?
                .ok_or_else(|| err(Status::NotFound, "the data source names no current schema")),
            other => Err(unknown_option(other.as_ref())),
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

impl Connection for FerrodbcConnection {
    type StatementType = FerrodbcStatement;

    fn new_statement(&mut self) -> Result<Self::StatementType> {
        FerrodbcStatement::new(self.session.clone())
    }

    /// Cancels what every statement of the connection is doing (ODBC's `SQLCancel` on each;
    /// the engine's cancel handles are made for a call from another thread).
    fn cancel(&mut self) -> Result<()> {
        self.session.cancel_all()
    }

    fn get_info(&self, codes: Option<HashSet<InfoCode>>) -> Result<Reader> {
        crate::info::get_info(self, codes)
    }

    fn get_objects(
        &self,
        depth: ObjectDepth,
        catalog: Option<&str>,
        db_schema: Option<&str>,
        table_name: Option<&str>,
        table_type: Option<Vec<&str>>,
        column_name: Option<&str>,
    ) -> Result<Reader> {
        crate::objects::get_objects(
            self,
            &crate::objects::Filter {
                depth,
                catalog,
                db_schema,
                table_name,
                table_type,
                column_name,
            },
        )
    }

    fn get_table_schema(
        &self,
        catalog: Option<&str>,
        db_schema: Option<&str>,
        table_name: &str,
    ) -> Result<Schema> {
        crate::objects::get_table_schema(self, catalog, db_schema, table_name)
    }

    fn get_table_types(&self) -> Result<Reader> {
        crate::objects::get_table_types(self)
    }

    fn get_statistic_names(&self) -> Result<Reader> {
        crate::statistics::get_statistic_names()
    }

    fn get_statistics(
        &self,
        catalog: Option<&str>,
        db_schema: Option<&str>,
        table_name: Option<&str>,
        approximate: bool,
    ) -> Result<Reader> {
        crate::statistics::get_statistics(self, catalog, db_schema, table_name, approximate)
    }

    fn commit(&mut self) -> Result<()> {
        let mut conn = self.session.lock();
        if conn.autocommit() {
            return Err(err(
                Status::InvalidState,
                "commit with autocommit on: there is no transaction to commit",
            ));
        }
        conn.commit().adbc()
    }

    fn rollback(&mut self) -> Result<()> {
        let mut conn = self.session.lock();
        if conn.autocommit() {
            return Err(err(
                Status::InvalidState,
                "rollback with autocommit on: there is no transaction to roll back",
            ));
        }
        conn.rollback().adbc()
    }

    fn read_partition(&self, _partition: impl AsRef<[u8]>) -> Result<Reader> {
        Err(not_implemented(
            "ReadPartition: SQL Server results are one stream (no partitions)",
        ))
    }
}

/// A schema with no columns.
pub fn empty_schema() -> SchemaRef {
    Arc::new(Schema::empty())
}
