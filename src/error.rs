//! The engine's error type and the SQLSTATE → PEP 249 class table.
//!
//! The core knows nothing of Python: it says which PEP 249 class an error belongs to
//! ([`ErrorClass`]) and the binding layer turns that into the Python exception.

use crate::diagnostic::Diagnostic;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The PEP 249 exception classes, as the core names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    Interface,
    Database,
    Data,
    Operational,
    Integrity,
    Internal,
    Programming,
    NotSupported,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An ODBC call failed; `records` holds every diagnostic record the driver left.
    #[error("{}", format_odbc(function, records))]
    Odbc {
        function: &'static str,
        records: Vec<Diagnostic>,
    },
    /// The statement was cancelled (`cursor.cancel()`); `records` are what the driver said about
    /// the interrupted call.
    #[error("the statement was cancelled (HY008){}", if records.is_empty() { String::new() } else { format!(": {}", format_odbc("", records)) })]
    Cancelled { records: Vec<Diagnostic> },
    /// A cell could not be turned into a value (malformed UTF-16, bad decimal text, truncation).
    #[error("column {column:?} (index {column_index}), row {row}: {reason}")]
    Decode {
        column: String,
        column_index: usize,
        row: u64,
        reason: String,
    },
    #[error("{0}")]
    Interface(String),
    #[error("{0}")]
    Programming(String),
    #[error("{0}")]
    NotSupported(String),
    #[error("{0}")]
    Data(String),
    #[error("{0}")]
    Operational(String),
    #[error("{0}")]
    Integrity(String),
    #[error("{0}")]
    Internal(String),
    /// A bulk load failed: `inner` is why (its class is this error's class), `context` says where
    /// (column, source row or batch) and how many rows stayed committed.
    #[error("{context}: {inner}")]
    Bulk { context: String, inner: Box<Error> },
}

#[cold]
fn format_odbc(function: &str, records: &[Diagnostic]) -> String {
    if records.is_empty() {
        return format!("{function} failed and the driver supplied no diagnostic");
    }
    let parts: Vec<String> = records.iter().map(|r| r.to_string()).collect();
    format!("{} ({function})", parts.join("; "))
}

impl Error {
    #[cold]
    pub fn odbc(function: &'static str, records: Vec<Diagnostic>) -> Error {
        Error::Odbc { function, records }
    }

    /// The record that names the failure: the first one that is not a mere warning (class 01),
    /// since drivers sometimes put warnings first; SQL Server puts the real error first.
    pub fn primary(&self) -> Option<&Diagnostic> {
        match self {
            Error::Bulk { inner, .. } => inner.primary(),
            Error::Odbc { records, .. } => records
                .iter()
                .find(|r| r.is_error())
                .or_else(|| records.first()),
            _ => None,
        }
    }

    pub fn sqlstate(&self) -> Option<&str> {
        match self {
            Error::Cancelled { .. } => Some("HY008"),
            Error::Bulk { inner, .. } => inner.sqlstate(),
            _ => self.primary().map(|d| d.sqlstate.as_str()),
        }
    }

    pub fn native_error(&self) -> Option<i32> {
        self.primary().map(|d| d.native_error)
    }

    /// Re-label an error that followed a cancel request as the cancellation it is.
    pub fn into_cancelled(self) -> Error {
        match self {
            Error::Odbc { records, .. } => Error::Cancelled { records },
            other => other,
        }
    }

    pub fn class(&self) -> ErrorClass {
        match self {
            Error::Bulk { inner, .. } => inner.class(),
            Error::Cancelled { .. } => ErrorClass::Operational,
            // A lost link is operational whatever record came first.
            Error::Odbc { .. } if self.is_connection_loss() => ErrorClass::Operational,
            Error::Odbc { function, .. } => match self.sqlstate() {
                // A connect that failed with nothing but warnings: unixODBC reports a driver
                // library it cannot load as 01000 "Can't open lib". The interface is broken,
                // not the database.
                Some(state) if *function == "SQLDriverConnect" && !is_error_state(state) => {
                    ErrorClass::Interface
                }
                // A failed call that left only warnings: FreeTDS reports a lost link this way
                // (01000, native 20017 "Unexpected EOF from the server").
                Some(state) if !is_error_state(state) => ErrorClass::Operational,
                Some(state) => self
                    .primary()
                    .and_then(|r| sql_server_data_error(r).or_else(|| sql_server_transient(r)))
                    .unwrap_or_else(|| class_for_sqlstate(state)),
                // No diagnostics at all: the driver is confused; the connection may be dead.
                None if *function == "SQLDriverConnect" => ErrorClass::Interface,
                None => ErrorClass::Operational,
            },
            Error::Decode { .. } | Error::Data(_) => ErrorClass::Data,
            Error::Interface(_) => ErrorClass::Interface,
            Error::Programming(_) => ErrorClass::Programming,
            Error::NotSupported(_) => ErrorClass::NotSupported,
            Error::Operational(_) => ErrorClass::Operational,
            Error::Integrity(_) => ErrorClass::Integrity,
            Error::Internal(_) => ErrorClass::Internal,
        }
    }

    /// Whether this error means the connection can no longer be used (link failure).
    pub fn is_connection_loss(&self) -> bool {
        // Any record, not just the first: Driver 18 reports a malformed server response as
        // HY000 "Protocol error in TDS stream" followed by 08S01 "The connection is no longer
        // usable".
        match self {
            Error::Odbc { records, .. } => Self::is_loss_records(records),
            Error::Bulk { inner, .. } => inner.is_connection_loss(),
            _ => false,
        }
    }

    /// Whether any of these diagnostic records reports a lost link.
    pub fn is_loss_records(records: &[Diagnostic]) -> bool {
        records.iter().any(|r| {
            // FreeTDS: 20004 read from server failed, 20006 write failed, 20017 unexpected EOF.
            matches!(r.native_error, 20004 | 20006 | 20017)
                || matches!(r.sqlstate.as_str(), "08S01" | "08003" | "08007")
                // Driver 18 after a malformed token: HY000 alone, and every later call on the
                // connection fails with 08S01 (the stream is out of step for good).
                || (r.sqlstate == "HY000" && r.message.contains("Protocol error in TDS stream"))
        })
    }
}

/// SQL Server errors about the data whose SQLSTATE the drivers get wrong: 2628 "String or
/// binary data would be truncated" (SQL Server 2019+; Driver 18 and FreeTDS 1.3 say 42000, only
/// the older 8152 is 22001 in their tables), and arithmetic overflow 220 / 8115, which FreeTDS
/// turns into 22003 and then into the ODBC 3 state HY019 (an InterfaceError); 232, the overflow
/// of a float into an integer type, takes the same way. PEP 249 has DataError for these (and for
/// 8134 divide by zero, 245 conversion failed and 235 a char value that is no money, which the
/// drivers report as 22012 / 22018). Only records the server sent (`[SQL Server]` in the driver's
/// prefix) are re-classed: the same numbers from another DBMS mean something else.
fn sql_server_data_error(record: &Diagnostic) -> Option<ErrorClass> {
    let from_sql_server = record.message.contains("[SQL Server]");
    let data = matches!(
        record.native_error,
        2628 | 8152 | 220 | 232 | 8115 | 8134 | 245 | 235
    );
    (from_sql_server && data).then_some(ErrorClass::Data)
}

/// Azure SQL's transient faults (ferrodbc.retry's `TRANSIENT_ERRORS`) are operational, whatever
/// SQLSTATE the driver gives them: 40613 "database not currently available" came as 42000
/// (ProgrammingError), 40501/40197 as HY000 (DatabaseError), in eng/chaos.py's runs. PEP 249's
/// OperationalError is "related to the database's operation and not necessarily under the
/// control of the programmer".
fn sql_server_transient(record: &Diagnostic) -> Option<ErrorClass> {
    let from_sql_server = record.message.contains("[SQL Server]");
    let transient = matches!(
        record.native_error,
        40613 | 40197 | 40501 | 49918 | 49919 | 49920 | 4221 | 10928 | 10929
    );
    (from_sql_server && transient).then_some(ErrorClass::Operational)
}

/// Whether an SQLSTATE names a failure (not class 00 success / 01 warning).
fn is_error_state(state: &str) -> bool {
    !(state.starts_with("01") || state.starts_with("00"))
}

/// SQLSTATE → PEP 249 class, longest prefix first (the ODBC table pyodbc and psycopg agree on).
pub fn class_for_sqlstate(state: &str) -> ErrorClass {
    match state {
        // Exact states first.
        "HYT00" | "HYT01" | "HY008" | "HY001" | "HY013" => ErrorClass::Operational,
        "HYC00" | "HY106" | "IM001" => ErrorClass::NotSupported,
        "HY000" => ErrorClass::Database,
        "HY004" | "HY003" | "HY105" => ErrorClass::Programming,
        "HY010" | "HY011" | "HY024" | "HY090" | "HY092" | "HY009" => ErrorClass::Programming,
        "07002" | "07001" | "07006" | "07009" => ErrorClass::Programming,
        "01002" => ErrorClass::Operational,
        "40001" | "40003" => ErrorClass::Operational,
        "22018" => ErrorClass::Data,
        "21S01" | "21S02" => ErrorClass::Programming,
        _ => match &state[..state.len().min(2)] {
            "08" => ErrorClass::Operational,
            "IM" => ErrorClass::Interface,
            "22" => ErrorClass::Data,
            "23" => ErrorClass::Integrity,
            "24" | "25" | "34" | "3C" | "3D" | "3F" | "42" | "37" | "2A" | "44" => {
                ErrorClass::Programming
            }
            "0A" => ErrorClass::NotSupported,
            "40" => ErrorClass::Operational,
            // Operator intervention: query cancelled (57014), admin shutdown (57P01), ...
            "57" => ErrorClass::Operational,
            "HY" => ErrorClass::Interface,
            "01" => ErrorClass::Database,
            _ => ErrorClass::Database,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(state: &str, native: i32, message: &str) -> Diagnostic {
        Diagnostic {
            sqlstate: state.into(),
            native_error: native,
            message: message.into(),
        }
    }

    #[test]
    fn sql_server_data_errors_are_data_errors_whatever_the_driver_says() {
        let truncation = Error::odbc(
            "SQLExecDirect",
            vec![record(
                "42000",
                2628,
                "[Microsoft][ODBC Driver 18 for SQL Server][SQL Server]String or binary data would be truncated",
            )],
        );
        assert_eq!(truncation.class(), ErrorClass::Data);
        let overflow = Error::odbc(
            "SQLExecDirect",
            vec![record(
                "HY019",
                220,
                "[FreeTDS][SQL Server]Arithmetic overflow error",
            )],
        );
        assert_eq!(overflow.class(), ErrorClass::Data);
        let float_overflow = Error::odbc(
            "SQLExecDirect",
            vec![record(
                "HY019",
                232,
                "[FreeTDS][SQL Server]Arithmetic overflow error for type int, value = 10000000000.000000.",
            )],
        );
        assert_eq!(float_overflow.class(), ErrorClass::Data);
        for (state, number) in [("42000", 40613), ("HY000", 40501), ("HY000", 40197)] {
            let transient = Error::odbc(
                "SQLExecDirect",
                vec![record(
                    state,
                    number,
                    "[FreeTDS][SQL Server]Database is not available",
                )],
            );
            assert_eq!(transient.class(), ErrorClass::Operational, "{number}");
        }
        // The same number from elsewhere keeps its SQLSTATE's class.
        let other = Error::odbc(
            "SQLExecDirect",
            vec![record("42000", 2628, "[SQLite]near x")],
        );
        assert_eq!(other.class(), ErrorClass::Programming);
    }

    #[test]
    fn sqlstate_classes() {
        assert_eq!(class_for_sqlstate("23000"), ErrorClass::Integrity);
        assert_eq!(class_for_sqlstate("42S02"), ErrorClass::Programming);
        assert_eq!(class_for_sqlstate("42000"), ErrorClass::Programming);
        assert_eq!(class_for_sqlstate("22003"), ErrorClass::Data);
        assert_eq!(class_for_sqlstate("08S01"), ErrorClass::Operational);
        assert_eq!(class_for_sqlstate("HYT00"), ErrorClass::Operational);
        assert_eq!(class_for_sqlstate("HY008"), ErrorClass::Operational);
        assert_eq!(class_for_sqlstate("IM002"), ErrorClass::Interface);
        assert_eq!(class_for_sqlstate("HYC00"), ErrorClass::NotSupported);
        assert_eq!(class_for_sqlstate("07002"), ErrorClass::Programming);
        assert_eq!(class_for_sqlstate("HY000"), ErrorClass::Database);
        assert_eq!(class_for_sqlstate("XX000"), ErrorClass::Database);
        assert_eq!(class_for_sqlstate("57014"), ErrorClass::Operational);
    }

    #[test]
    fn connect_failing_with_only_warnings_is_an_interface_error() {
        let e = Error::odbc(
            "SQLDriverConnect",
            vec![Diagnostic {
                sqlstate: "01000".into(),
                native_error: 0,
                message: "Can't open lib 'x'".into(),
            }],
        );
        assert_eq!(e.class(), ErrorClass::Interface);
        let lost = Error::odbc(
            "SQLFetch",
            vec![Diagnostic {
                sqlstate: "01000".into(),
                native_error: 20017,
                message: "Unexpected EOF".into(),
            }],
        );
        assert_eq!(lost.class(), ErrorClass::Operational);
        assert!(lost.is_connection_loss());
        let protocol = Error::odbc(
            "SQLFetch",
            vec![
                record("HY000", 0, "Protocol error in TDS stream"),
                record("08S01", 0, "The connection is no longer usable"),
            ],
        );
        assert!(protocol.is_connection_loss());
        assert_eq!(protocol.class(), ErrorClass::Operational);
        let cancelled = Error::odbc("SQLFetch", vec![]).into_cancelled();
        assert_eq!(
            (cancelled.class(), cancelled.sqlstate()),
            (ErrorClass::Operational, Some("HY008"))
        );
        let e = Error::odbc(
            "SQLExecDirect",
            vec![
                Diagnostic {
                    sqlstate: "01003".into(),
                    native_error: 0,
                    message: "NULL eliminated".into(),
                },
                Diagnostic {
                    sqlstate: "23000".into(),
                    native_error: 2627,
                    message: "duplicate key".into(),
                },
            ],
        );
        assert_eq!(e.sqlstate(), Some("23000"));
        assert_eq!(e.class(), ErrorClass::Integrity);
    }

    #[test]
    fn odbc_error_message_lists_every_record() {
        let e = Error::odbc(
            "SQLExecDirect",
            vec![
                Diagnostic {
                    sqlstate: "42S02".into(),
                    native_error: 208,
                    message: "Invalid object name 't'.".into(),
                },
                Diagnostic {
                    sqlstate: "42000".into(),
                    native_error: 8180,
                    message: "Statement(s) could not be prepared.".into(),
                },
            ],
        );
        let text = e.to_string();
        assert!(
            text.contains("Invalid object name") && text.contains("could not be prepared"),
            "{text}"
        );
        assert_eq!(e.class(), ErrorClass::Programming);
        assert_eq!(e.sqlstate(), Some("42S02"));
    }
}
