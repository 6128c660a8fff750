//! An owned ODBC statement handle, with the few raw calls the engine makes on it: execute,
//! describe, fetch, attributes, results. Binding columns and parameters is `bind.rs`; the
//! cancel handle and the lease for the prefetch thread are `cancel.rs`.

use super::call::Outcome;
use super::call::to_wide;
use super::cancel::{CancelHandle, FetchLease, RawStmt};
use super::dbc::Dbc;
use super::diag::Diagnostic;
use super::diag::read_diagnostics;
use crate::counters;
use crate::error::{Error, Result};
use odbc_api::sys::{
    self, CDataType, FreeStmtOption, HStmt, Handle, HandleType, Len, Pointer, SqlDataType,
    StatementAttribute, ULen,
};
use std::ptr::null_mut;

// odbc-sys types the field identifier as its `Desc` enum, which cannot carry driver-specific
// identifiers; this is the same unixODBC entry point with the C signature's plain integer.
unsafe extern "system" {
    #[link_name = "SQLColAttributeW"]
    fn col_attribute_raw(
        hstmt: HStmt,
        column: u16,
        field: u16,
        character_attribute: Pointer,
        buffer_length: i16,
        string_length: *mut i16,
        numeric_attribute: *mut Len,
    ) -> sys::SqlReturn;
}

/// One column as `SQLDescribeCol` (plus a few attributes) reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnDescription {
    pub name: String,
    /// The ODBC SQL type code (may be driver specific, e.g. -155 for DATETIMEOFFSET).
    pub sql_type: i16,
    /// Column size: characters for text, bytes for binary, precision for numbers; 0 = unknown or
    /// unbounded (SQL Server reports 0 for the (MAX) types).
    pub size: usize,
    pub decimal_digits: i16,
    /// `None` when the driver does not know.
    pub nullable: Option<bool>,
    pub unsigned: bool,
}

/// An allocated `HSTMT`. Dropping it frees the handle, except in a forked child, which abandons
/// it (see `crate::process`: freeing a statement with pending rows sends an attention).
pub struct Stmt {
    pub(super) handle: HStmt,
    pub(super) cancel: CancelHandle,
    /// Largest value a streamed (SQLGetData) read may hold, in bytes; 0: no limit. A bigger
    /// value is a DataError, not an allocation the process may not survive.
    max_lob_bytes: usize,
}

// SAFETY: a statement handle may move between threads; all calls are serialised by its owner.
unsafe impl Send for Stmt {}

impl Stmt {
    pub fn new(dbc: &Dbc) -> Result<Stmt> {
        let mut handle = Handle::null();
        // SAFETY: dbc is a valid connected handle; out pointer valid.
        let ret = unsafe {
            sys::SQLAllocHandle(HandleType::Stmt, dbc.as_sys().as_handle(), &raw mut handle)
        };
        dbc.check(ret, "SQLAllocHandle(STMT)")?;
        let handle = handle.as_hstmt();
        let cancel = CancelHandle::default();
        *cancel.handle.lock().unwrap_or_else(|e| e.into_inner()) = Some(RawStmt(handle));
        Ok(Stmt {
            handle,
            cancel,
            max_lob_bytes: 0,
        })
    }

    /// See [`Stmt::max_lob_bytes`] (the field): 0 for no limit.
    pub fn set_max_lob_bytes(&mut self, bytes: usize) {
        self.max_lob_bytes = bytes;
    }

    pub fn max_lob_bytes(&self) -> usize {
        self.max_lob_bytes
    }

    /// Whether this process allocated the statement (false in a forked child).
    pub fn owned_here(&self) -> bool {
        self.cancel.owner.is_current()
    }

    pub fn cancel_handle(&self) -> CancelHandle {
        self.cancel.clone()
    }

    /// Whether a cancel is pending, without consuming it.
    pub fn cancel_requested(&self) -> bool {
        self.cancel.is_requested()
    }

    /// Whether a cancel was requested since the last call (see [`CancelHandle::take_requested`]).
    pub fn take_cancel_requested(&self) -> bool {
        self.cancel.take_requested()
    }

    /// The raw handle, for the catalog calls in `super::catalog` (same ownership rules).
    pub(super) fn raw(&self) -> HStmt {
        self.handle
    }

    /// The handle's address (pyodbc exposes it as `cursor.hstmt`).
    pub fn address(&self) -> usize {
        self.handle.0 as usize
    }

    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        read_diagnostics(HandleType::Stmt, self.handle.as_handle())
    }

    pub(super) fn check(&self, ret: sys::SqlReturn, function: &'static str) -> Result<Outcome> {
        match Outcome::from_ret(ret) {
            Outcome::Error | Outcome::InvalidHandle => {
                Err(Error::odbc(function, self.diagnostics()))
            }
            other => Ok(other),
        }
    }

    /// `SQLExecDirectW`. `NoData` is a success (e.g. an UPDATE that touched no row).
    pub fn exec_direct(&mut self, sql: &str) -> Result<Outcome> {
        let wide = to_wide(sql);
        let len = crate::checked::to_driver::<i32>(wide.len(), "the statement text")?;
        counters::bump(&counters::EXECUTES);
        self.cancel.set_executing(true);
        // SAFETY: text valid for its length; bound parameters (if any) are kept alive by the caller.
        let ret = unsafe { sys::SQLExecDirectW(self.handle, wide.as_ptr(), len) };
        self.cancel.set_executing(false);
        self.check(ret, "SQLExecDirect")
    }

    /// `SQLPrepareW`, then `SQLExecute`: one statement text with bound parameters executed as a
    /// prepared statement. FreeTDS sends a prepared statement's parameter array as one RPC per
    /// row (values bound), where `SQLExecDirect` of the same array becomes a text batch with
    /// every value spliced in as a literal.
    pub fn prepare_execute(&mut self, sql: &str) -> Result<Outcome> {
        let wide = to_wide(sql);
        let len = crate::checked::to_driver::<i32>(wide.len(), "the statement text")?;
        // SAFETY: text valid for its length.
        let ret = unsafe { sys::SQLPrepareW(self.handle, wide.as_ptr(), len) };
        self.check(ret, "SQLPrepare")?;
        counters::bump(&counters::EXECUTES);
        self.cancel.set_executing(true);
        // SAFETY: the statement is prepared; bound parameters (if any) are kept alive by the
        // caller.
        let ret = unsafe { sys::SQLExecute(self.handle) };
        self.cancel.set_executing(false);
        self.check(ret, "SQLExecute")
    }

    pub fn num_result_cols(&mut self) -> Result<u16> {
        let mut n: i16 = 0;
        // SAFETY: out pointer valid.
        let ret = unsafe { sys::SQLNumResultCols(self.handle, &raw mut n) };
        self.check(ret, "SQLNumResultCols")?;
        crate::checked::from_driver(n, "result column count")
    }

    pub fn describe_col(&mut self, col: u16) -> Result<ColumnDescription> {
        // 256 units covers SQL Server (128), PostgreSQL (63 bytes) and most names; a name that
        // fills the buffer is read again with more room, because sqlite3odbc truncates silently
        // (SQL_SUCCESS with NameLength = buffer - 1).
        let mut name = vec![0u16; 256];
        let mut name_len: i16 = 0;
        let mut data_type = SqlDataType::UNKNOWN_TYPE;
        let mut size: ULen = 0;
        let mut digits: i16 = 0;
        let mut nullable = sys::Nullability::UNKNOWN;
        let reported = loop {
            let room = crate::checked::to_driver::<i16>(name.len(), "the column name buffer")?;
            // SAFETY: all out pointers valid; name buffer valid for `name.len()` characters.
            let ret = unsafe {
                sys::SQLDescribeColW(
                    self.handle,
                    col,
                    name.as_mut_ptr(),
                    room,
                    &raw mut name_len,
                    &raw mut data_type,
                    &raw mut size,
                    &raw mut digits,
                    &raw mut nullable,
                )
            };
            self.check(ret, "SQLDescribeCol")?;
            let reported = crate::checked::driver_len(name_len, "column name length")?;
            let grown = (reported + 1).max(name.len() * 4);
            if reported + 1 < name.len() || i16::try_from(grown).is_err() {
                break reported;
            }
            name.resize(grown, 0);
        };
        let name_len = reported.min(name.len());
        // Identifiers cannot contain U+0000: sqlite3odbc reports the length of non-ASCII names
        // in UTF-8 bytes, padding them with NULs ('naïve\0'); cut at the first NUL.
        let end = name[..name_len]
            .iter()
            .position(|&u| u == 0)
            .unwrap_or(name_len);
        let name = String::from_utf16_lossy(&name[..end]);
        // Signedness only matters for integers (TINYINT is unsigned on SQL Server); one ODBC call
        // per column per execute saved elsewhere.
        // (sqlite3odbc reports BIGINT as the C type code SQL_C_SBIGINT.)
        use crate::codes::{c, sql};
        let integer = matches!(
            data_type.0,
            sql::TINYINT | sql::SMALLINT | sql::INTEGER | sql::BIGINT | c::SBIGINT
        );
        let unsigned = integer
            && self
                .col_attr_int(col, sys::Desc::Unsigned as u16)
                .map(|v| v != 0)
                .unwrap_or(false);
        Ok(ColumnDescription {
            name,
            sql_type: data_type.0,
            size,
            decimal_digits: digits,
            nullable: match nullable {
                sys::Nullability::NO_NULLS => Some(false),
                sys::Nullability::NULLABLE => Some(true),
                _ => None,
            },
            unsigned,
        })
    }

    /// A numeric column attribute (`SQLColAttributeW`), by field identifier: the standard
    /// `SQL_DESC_*` ones and driver-specific ones such as SQL Server's `SQL_CA_SS_*`.
    pub fn col_attr_int(&mut self, col: u16, field: u16) -> Result<isize> {
        let mut value: Len = 0;
        // SAFETY: numeric attribute out pointer valid; no character buffer requested.
        let ret = unsafe {
            col_attribute_raw(
                self.handle,
                col,
                field,
                null_mut(),
                0,
                null_mut(),
                &raw mut value,
            )
        };
        self.check(ret, "SQLColAttribute")?;
        Ok(value)
    }

    pub(super) fn set_attr(&mut self, attr: StatementAttribute, value: Pointer) -> Result<()> {
        // SAFETY: the caller passes integer attributes by value or pointers that outlive the
        // statement's use of them (documented on the callers).
        let ret = unsafe { sys::SQLSetStmtAttrW(self.handle, attr, value, 0) };
        self.check(ret, "SQLSetStmtAttr").map(|_| ())
    }

    /// Column-wise binding and a row array of `rows` rows.
    pub fn set_row_array_size(&mut self, rows: usize) -> Result<()> {
        self.set_attr(StatementAttribute::RowBindType, 0 as Pointer)?;
        self.set_attr(StatementAttribute::RowArraySize, rows as Pointer)
    }

    /// `SQLFetch` returning the raw outcome even for `SQL_ERROR`, so the caller can deliver the
    /// rows of the array that precede the failing one (their status says which).
    pub fn fetch_raw(&mut self) -> Outcome {
        counters::bump(&counters::FETCH_CALLS);
        // SAFETY: every bound buffer is alive (guaranteed by the binder's contract).
        Outcome::from_ret(unsafe { sys::SQLFetch(self.handle) })
    }

    /// `SQLFetchScroll(SQL_FETCH_ABSOLUTE, row)`: the rowset starting at 1-based result row `row`
    /// (scrollable cursors only). The raw outcome, like [`Self::fetch_raw`]: errors included.
    pub fn fetch_absolute(&mut self, row: isize) -> Outcome {
        counters::bump(&counters::FETCH_CALLS);
        // SAFETY: every bound buffer is alive (guaranteed by the binder's contract).
        Outcome::from_ret(unsafe {
            sys::SQLFetchScroll(self.handle, sys::FetchOrientation::Absolute, row)
        })
    }

    /// `SQL_ATTR_RETRIEVE_DATA`: with `false`, a fetch only positions the cursor and leaves the
    /// bound buffers alone (optional in ODBC: drivers may refuse it).
    pub fn set_retrieve_data(&mut self, on: bool) -> Result<()> {
        self.set_attr(StatementAttribute::RetrieveData, usize::from(on) as Pointer)
    }

    /// `SQL_ATTR_CURSOR_TYPE` of this statement (`SQL_CURSOR_FORWARD_ONLY` = 0, `STATIC` = 3).
    pub fn cursor_type(&mut self) -> Result<usize> {
        let mut value: ULen = 0;
        // SAFETY: an integer attribute written into a valid `SQLULEN`.
        let ret = unsafe {
            sys::SQLGetStmtAttr(
                self.handle,
                StatementAttribute::CursorType,
                (&raw mut value).cast(),
                0,
                null_mut(),
            )
        };
        self.check(ret, "SQLGetStmtAttr(CURSOR_TYPE)")?;
        Ok(value)
    }

    /// Lend the handle to one block fetch on another thread (see [`FetchLease`]).
    ///
    /// # Safety
    /// Until the thread running the lease's fetch has been joined, the owner makes no call on
    /// this statement (SQLCancel through its [`CancelHandle`] excepted) and keeps it allocated,
    /// and the bound buffers stay alive and unread.
    pub unsafe fn lend_for_fetch(&self) -> FetchLease {
        FetchLease {
            handle: RawStmt(self.handle),
            cancel: self.cancel.clone(),
        }
    }

    pub fn set_query_timeout(&mut self, secs: usize) -> Result<()> {
        self.set_attr(StatementAttribute::QueryTimeout, secs as Pointer)
    }

    /// `SQL_ATTR_NOSCAN`: on, the driver does not scan SQL text for ODBC escape sequences.
    pub fn set_noscan(&mut self, on: bool) -> Result<()> {
        self.set_attr(StatementAttribute::NoScan, usize::from(on) as Pointer)
    }

    /// Close the open cursor (if any) and discard pending results; bindings stay.
    pub fn close_cursor(&mut self) -> Result<()> {
        // SAFETY: valid handle.
        let ret = unsafe { sys::SQLFreeStmt(self.handle, FreeStmtOption::Close) };
        self.check(ret, "SQLFreeStmt(CLOSE)").map(|_| ())
    }

    /// `SQLPrepareW`: the statement is executed later with [`Self::execute`].
    pub fn prepare(&mut self, sql: &str) -> Result<()> {
        let wide = to_wide(sql);
        let len = crate::checked::to_driver::<i32>(wide.len(), "the statement text")?;
        // SAFETY: text valid for its length.
        let ret = unsafe { sys::SQLPrepareW(self.handle, wide.as_ptr(), len) };
        self.check(ret, "SQLPrepare").map(|_| ())
    }

    /// `SQLExecute` of the prepared statement. `NoData` is a success.
    pub fn execute(&mut self) -> Result<Outcome> {
        counters::bump(&counters::EXECUTES);
        self.cancel.set_executing(true);
        // SAFETY: valid handle; bound parameters are kept alive by the caller.
        let ret = unsafe { sys::SQLExecute(self.handle) };
        self.cancel.set_executing(false);
        self.check(ret, "SQLExecute")
    }

    /// # Safety
    /// `target` must be valid for `len` bytes.
    pub unsafe fn get_data(
        &mut self,
        col: u16,
        c_type: CDataType,
        target: Pointer,
        len: Len,
        indicator: &mut Len,
    ) -> Result<Outcome> {
        counters::bump(&counters::GETDATA_CALLS);
        // SAFETY: forwarded contract; indicator is a valid reference.
        let ret = unsafe { sys::SQLGetData(self.handle, col, c_type, target, len, indicator) };
        self.check(ret, "SQLGetData")
    }

    pub fn more_results(&mut self) -> Result<Outcome> {
        // SAFETY: valid handle; bindings (if any) stay valid per the binder's contract.
        let ret = unsafe { sys::SQLMoreResults(self.handle) };
        self.check(ret, "SQLMoreResults")
    }

    /// `SQLRowCount`; -1 when the driver does not know.
    pub fn row_count(&mut self) -> Result<isize> {
        let mut n: Len = 0;
        // SAFETY: out pointer valid.
        let ret = unsafe { sys::SQLRowCount(self.handle, &raw mut n) };
        self.check(ret, "SQLRowCount")?;
        crate::checked::row_count(n)
    }
}

impl Drop for Stmt {
    fn drop(&mut self) {
        if !self.cancel.owner.is_current() {
            // Before the lock: a thread of the parent may have held it at the fork.
            return;
        }
        let mut guard = self.cancel.handle.lock().unwrap_or_else(|e| e.into_inner());
        *guard = None;
        // SAFETY: the handle is valid; after this no pointer into it is used (the cancel slot was
        // cleared under the same lock). A failure is ignored: leaking beats a panic in drop.
        let _ = unsafe { sys::SQLFreeHandle(HandleType::Stmt, self.handle.as_handle()) };
    }
}
