//! One diagnostic record as the driver reported it: plain data, shared by the ODBC layer that
//! reads records off handles (`odbc/diag.rs`) and the errors that carry them (`error.rs`).

/// One diagnostic record, as the driver reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Five-character SQLSTATE, e.g. `42S02`.
    pub sqlstate: String,
    /// The data source's own error number (SQL Server's message number, e.g. 50000 for RAISERROR).
    pub native_error: i32,
    /// The driver's message, with interior NULs removed.
    pub message: String,
}

impl Diagnostic {
    /// Whether the record reports a failure. Class 01 (warnings: PRINT, low-severity RAISERROR)
    /// and 00 (psqlODBC files its NOTICEs as 00000) are messages, not errors.
    pub fn is_error(&self) -> bool {
        !(self.sqlstate.starts_with("01") || self.sqlstate.starts_with("00"))
    }
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "[{}] {} ({})",
            self.sqlstate, self.message, self.native_error
        )
    }
}
