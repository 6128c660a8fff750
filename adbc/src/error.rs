//! The engine's errors as ADBC errors: the status from the error's class (and its SQLSTATE where
//! ADBC has a finer status: not found, already exists, timeout, cancelled), the SQLSTATE of the
//! driver's primary record and its native error number (SQL Server's message number) as the
//! ADBC `vendor_code`. The message is the engine's, which names every record the driver left.

use adbc_core::error::{Error, Status};
use ferrodbc::ErrorClass;

pub type Result<T> = std::result::Result<T, Error>;

/// An ADBC error with a status and no SQLSTATE.
pub fn err(status: Status, message: impl Into<String>) -> Error {
    Error::with_message_and_status(message, status)
}

pub fn not_implemented(what: &str) -> Error {
    err(Status::NotImplemented, format!("ferrodbc ADBC: {what}"))
}

pub fn invalid_state(message: impl Into<String>) -> Error {
    err(Status::InvalidState, message)
}

pub fn invalid_argument(message: impl Into<String>) -> Error {
    err(Status::InvalidArguments, message)
}

/// The five SQLSTATE characters as C chars (ADBC's `sqlstate` has no terminator).
fn sqlstate_chars(state: &str) -> [std::os::raw::c_char; 5] {
    let mut out = [0; 5];
    for (slot, b) in out.iter_mut().zip(state.bytes()) {
        *slot = b as std::os::raw::c_char;
    }
    out
}

/// ADBC's status for an SQLSTATE where one says more than the class does.
fn status_for_sqlstate(state: &str) -> Option<Status> {
    Some(match state {
        "HY008" => Status::Cancelled,
        "HYT00" | "HYT01" => Status::Timeout,
        // 42S02 table or view not found, 42S12 index not found, 42S22 column not found.
        "42S02" | "42S12" | "42S22" => Status::NotFound,
        // 42S01 table exists, 42S11 index exists, 42S21 column exists.
        "42S01" | "42S11" | "42S21" => Status::AlreadyExists,
        "28000" => Status::Unauthenticated,
        "42000" | "42501" => return None,
        s if s.starts_with("23") => Status::Integrity,
        s if s.starts_with("08") => Status::IO,
        _ => return None,
    })
}

/// SQL Server's message numbers where ADBC has a status of its own and the drivers' SQLSTATE is
/// the generic 42000/42S02 (208: invalid object name, 2714: already an object of that name,
/// 18456: login failed).
fn status_for_native(native: i32) -> Option<Status> {
    Some(match native {
        208 => Status::NotFound,
        2714 => Status::AlreadyExists,
        18456 => Status::Unauthenticated,
        _ => return None,
    })
}

pub fn from_engine(e: &ferrodbc::Error) -> Error {
    let status = match e {
        ferrodbc::Error::Cancelled { .. } => Status::Cancelled,
        _ => e
            .native_error()
            .and_then(status_for_native)
            .or_else(|| e.sqlstate().and_then(status_for_sqlstate))
            .unwrap_or(match e.class() {
                ErrorClass::Interface => Status::InvalidState,
                ErrorClass::Database => Status::Unknown,
                ErrorClass::Data => Status::InvalidData,
                ErrorClass::Operational => Status::IO,
                ErrorClass::Integrity => Status::Integrity,
                ErrorClass::Internal => Status::Internal,
                ErrorClass::Programming => Status::InvalidArguments,
                ErrorClass::NotSupported => Status::NotImplemented,
            }),
    };
    let mut out = Error::with_message_and_status(e.to_string(), status);
    if let Some(state) = e.sqlstate() {
        out.sqlstate = sqlstate_chars(state);
    }
    out.vendor_code = e.native_error().unwrap_or(0);
    out
}

/// `?` on an engine result inside the driver.
pub trait Engine<T> {
    fn adbc(self) -> Result<T>;
}

impl<T> Engine<T> for ferrodbc::Result<T> {
    fn adbc(self) -> Result<T> {
        self.map_err(|e| from_engine(&e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrodbc::diagnostic::Diagnostic;

    #[test]
    fn sqlstate_and_native_error_are_carried() {
        let e = ferrodbc::Error::odbc(
            "SQLExecDirect",
            vec![Diagnostic {
                sqlstate: "42S02".into(),
                native_error: 208,
                message: "Invalid object name 'nope'.".into(),
            }],
        );
        let a = from_engine(&e);
        assert_eq!(a.status, Status::NotFound);
        assert_eq!(a.vendor_code, 208);
        let state: Vec<u8> = a.sqlstate.iter().map(|&c| c as u8).collect();
        assert_eq!(state, b"42S02");
        assert!(a.message.contains("Invalid object name"));
    }

    #[test]
    fn cancelled_is_cancelled() {
        let a = from_engine(&ferrodbc::Error::Cancelled { records: vec![] });
        assert_eq!(a.status, Status::Cancelled);
    }
}
