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

mod bind;
mod cancel;
mod catalog;
mod dbc;
mod diag;
mod env;
mod info;
mod stmt;

pub use cancel::{CancelHandle, FetchLease};
pub use dbc::Dbc;
pub use diag::{Diagnostic, read_diagnostics};
pub use env::environment;
pub use info::{data_sources, drivers, environment_address};
pub use stmt::{ColumnDescription, Stmt};

pub use odbc_api::sys;

/// UTF-16 encode a Rust string for a wide ODBC call (not NUL terminated; lengths are passed).
pub fn to_wide(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

/// What an ODBC call returned, lifted out of the raw `SQLRETURN` so callers match on meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    /// Succeeded and left diagnostic records (warnings, PRINT messages, truncation).
    SuccessWithInfo,
    NoData,
    NeedData,
    /// The call failed; diagnostics are on the handle.
    Error,
    /// The handle was not valid: a bug in our bookkeeping, never a driver condition.
    InvalidHandle,
    StillExecuting,
    ParamDataAvailable,
}

impl Outcome {
    pub fn from_ret(ret: sys::SqlReturn) -> Self {
        match ret {
            sys::SqlReturn::SUCCESS => Outcome::Success,
            sys::SqlReturn::SUCCESS_WITH_INFO => Outcome::SuccessWithInfo,
            sys::SqlReturn::NO_DATA => Outcome::NoData,
            sys::SqlReturn::NEED_DATA => Outcome::NeedData,
            sys::SqlReturn::INVALID_HANDLE => Outcome::InvalidHandle,
            sys::SqlReturn::STILL_EXECUTING => Outcome::StillExecuting,
            sys::SqlReturn::PARAM_DATA_AVAILABLE => Outcome::ParamDataAvailable,
            _ => Outcome::Error,
        }
    }

    pub fn is_ok(self) -> bool {
        matches!(self, Outcome::Success | Outcome::SuccessWithInfo)
    }
}
