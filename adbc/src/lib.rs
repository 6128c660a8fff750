//! An ADBC 1.1 driver on ferrodbc's engine: `libadbc_driver_ferrodbc.so`, entry point
//! `AdbcDriverFerrodbcInit` (and the fallback `AdbcDriverInit`), loaded through any ADBC driver
//! manager. No Python: the engine is built without its `python` feature.
//!
//! - `database.rs`: where to connect (`uri`, `username`, `password`, access token).
//! - `uri.rs`: the `mssql://` URL form as an ODBC connection string.
//! - `session.rs`: the ODBC connection shared by a connection and its statements.
//! - `connection.rs`: connection options, transactions, cancel, the metadata functions' entry.
//! - `info.rs`: GetInfo; `objects.rs`: GetObjects (`nested.rs`: its arrays), GetTableSchema,
//!   GetTableTypes; `statistics.rs`: GetStatistics (row counts).
//! - `statement.rs`: execute, bind, prepare, schema; `reader.rs`: the streaming result;
//!   `bind.rs`: Arrow parameters as engine values; `ingest.rs`: bulk ingest.
//! - `error.rs`: the engine's errors with their SQLSTATE and native error.
//! - `export.rs`: the C entry points.
//!
//! docs/adbc.md is the user's page (options, types, the feature table).

pub mod bind;
pub mod checks;
pub mod connection;
pub mod database;
pub mod error;
pub mod export;
pub mod info;
pub mod ingest;
pub mod nested;
pub mod objects;
pub mod reader;
pub mod session;
pub mod statement;
pub mod statistics;
pub mod uri;

use adbc_core::options::{OptionDatabase, OptionValue};
use adbc_core::{Driver, Optionable};
pub use database::FerrodbcDatabase;

#[derive(Default)]
pub struct FerrodbcDriver;

impl Driver for FerrodbcDriver {
    type DatabaseType = FerrodbcDatabase;

    fn new_database(&mut self) -> error::Result<Self::DatabaseType> {
        Ok(FerrodbcDatabase::default())
    }

    fn new_database_with_opts(
        &mut self,
        opts: impl IntoIterator<Item = (OptionDatabase, OptionValue)>,
    ) -> error::Result<Self::DatabaseType> {
        let mut db = FerrodbcDatabase::default();
        for (k, v) in opts {
            db.set_option(k, v)?;
        }
        Ok(db)
    }
}
