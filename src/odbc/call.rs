//! What an ODBC call returned ([`Outcome`], the raw `SQLRETURN` lifted so callers match on
//! meaning), and the UTF-16 text every wide (`...W`) call takes.

use odbc_api::sys;

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
