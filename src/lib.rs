//! ferrodbc: a fetch engine for SQL Server (and any ODBC data source) behind a Python DB-API 2.0
//! driver.
//!
//! The core (everything but `py`) knows nothing of Python: connection, statement, the fetch
//! [`plan`], the bound [`batch`], [`types`] (one module per type family), [`params`] and errors. The `py` module
//! (feature `python`) is the only place PyO3 appears.

pub mod arrow;
pub mod backend;
pub mod batch;
pub mod bulk;
pub mod catalog;
pub mod checked;
pub mod codes;
pub mod connection;
pub mod connstr;
pub mod counters;
pub mod diagnostic;
pub mod error;
pub mod info;
pub mod odbc;
pub mod params;
pub mod plan;
pub mod pool;
pub mod prefetch;
pub mod process;
pub mod raw_text;
pub mod reread;
pub mod rowset;
pub mod statement;
pub mod types;

#[cfg(feature = "python")]
pub mod py;

pub use connection::Connection;
pub use error::{Error, ErrorClass, Result};
pub use statement::Statement;
