//! The thin, owned layer over the raw ODBC C API (odbc-sys, re-exported by odbc-api).
//!
//! Why not odbc-api's `Connection`/`BlockCursor`: they panic on drop when the driver refuses to
//! unbind or disconnect, they have no `SQLCancel`, no SQL Server C types (`SQL_C_SS_TIME2`,
//! `SQL_C_SS_TIMESTAMPOFFSET`, `SQL_C_GUID`), keep only the first diagnostic record and hide the
//! statement while a buffer is bound. A DB-API driver needs all of that, so the engine owns its
//! handles here and never panics on cleanup: a failed `SQLFreeHandle` is ignored (nothing records
//! it) and the handle is abandoned, leaked rather than used after free.
//!
//! Two decisions are baked in: every call that takes a string uses the wide (`...W`) entry point,
//! so SQL text and diagnostics survive any process locale; and every handle wrapper is `Send`
//! (ODBC allows handles to move between threads) but never `Sync`.

pub mod bcp;
mod bind;
mod call;
mod cancel;
mod catalog;
mod dbc;
mod diag;
mod env;
mod info;
mod params_desc;
mod platform;
mod stmt;

pub use call::{Outcome, to_wide};
pub use cancel::{CancelHandle, FetchLease};
pub use dbc::Dbc;
pub use diag::{Diagnostic, read_diagnostics};
pub use env::environment;
pub use info::{data_sources, drivers, environment_address};
pub use params_desc::ParamDescription;
pub use stmt::{ColumnDescription, Stmt};

pub use odbc_api::sys;
