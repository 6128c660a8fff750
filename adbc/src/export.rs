//! The C entry points: `AdbcDriverFerrodbcInit` (the name a driver manager derives from
//! `libadbc_driver_ferrodbc.so`) and the fallback `AdbcDriverInit`, returning adbc_ffi's ADBC
//! 1.1.0 function table for [`FerrodbcDriver`] with one entry wrapped: StatementExecuteQuery.
//!
//! adbc_ffi 0.23 never writes ExecuteQuery's `rows_affected` out-parameter, so DB-API's
//! `cursor.rowcount` after `execute("INSERT ...")` would always be -1 (a complaint users make of
//! other SQL Server ADBC drivers). The wrapper runs adbc_ffi's function, which calls
//! [`crate::statement::FerrodbcStatement`]'s `execute` on this same thread; that records the
//! count in a thread-local ([`set_rows_affected`]), and the wrapper writes it out.

use crate::FerrodbcDriver;
use adbc_core::constants::ADBC_STATUS_OK;
use adbc_core::error::{AdbcStatusCode, Error, Status};
use adbc_core::options::AdbcVersion;
use adbc_ffi::{FFI_AdbcDriver, FFI_AdbcError, FFI_AdbcStatement, FFIDriver};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use std::cell::Cell;
use std::os::raw::{c_int, c_void};
use std::sync::OnceLock;

type ExecuteQuery = unsafe extern "C" fn(
    *mut FFI_AdbcStatement,
    *mut FFI_ArrowArrayStream,
    *mut i64,
    *mut FFI_AdbcError,
) -> AdbcStatusCode;

thread_local! {
    static ROWS_AFFECTED: Cell<i64> = const { Cell::new(-1) };
}

/// ExecuteQuery's rows affected (-1: unknown, e.g. a SELECT), for the wrapper below.
pub fn set_rows_affected(n: i64) {
    ROWS_AFFECTED.with(|c| c.set(n));
}

/// adbc_ffi's StatementExecuteQuery.
static INNER: OnceLock<Option<ExecuteQuery>> = OnceLock::new();

/// # Safety
/// The ADBC contract of StatementExecuteQuery: `statement` initialised by this driver; `out`,
/// `rows_affected` and `error` NULL or valid for writes (what adbc_ffi's function requires).
unsafe extern "C" fn execute_query(
    statement: *mut FFI_AdbcStatement,
    out: *mut FFI_ArrowArrayStream,
    rows_affected: *mut i64,
    error: *mut FFI_AdbcError,
) -> AdbcStatusCode {
    let Some(inner) = INNER.get().copied().flatten() else {
        return adbc_core::constants::ADBC_STATUS_INTERNAL;
    };
    set_rows_affected(-1);
    // SAFETY: the caller's arguments, passed on unchanged under the same contract.
    let status = unsafe { inner(statement, out, rows_affected, error) };
    if status == ADBC_STATUS_OK && !out.is_null() && !rows_affected.is_null() {
        let n = ROWS_AFFECTED.with(Cell::get);
        // SAFETY: non-NULL, and valid for writes by the caller's contract.
        unsafe { std::ptr::write_unaligned(rows_affected, n) };
    }
    status
}

fn write_error(error: *mut FFI_AdbcError, e: Error) -> AdbcStatusCode {
    let status: AdbcStatusCode = e.status.into();
    if !error.is_null() {
        let mut ffi = FFI_AdbcError::try_from(e).unwrap_or_else(Into::into);
        // SAFETY: non-NULL and, by the ADBC contract, a valid AdbcError (maybe zeroed).
        unsafe {
            ffi.private_driver = (*error).private_driver;
            std::ptr::write_unaligned(error, ffi);
        }
    }
    status
}

/// # Safety
/// The ADBC contract of a driver's init function: `driver` points at an `AdbcDriver` of the
/// version asked for, `error` is NULL or a valid `AdbcError`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn AdbcDriverFerrodbcInit(
    version: c_int,
    driver: *mut c_void,
    error: *mut FFI_AdbcError,
) -> AdbcStatusCode {
    match AdbcVersion::try_from(version) {
        Ok(AdbcVersion::V110) => {}
        Ok(other) => {
            return write_error(
                error,
                Error::with_message_and_status(
                    format!("Unsupported ADBC version: got={other:?} expected=V110"),
                    Status::NotImplemented,
                ),
            );
        }
        Err(e) => return write_error(error, e),
    }
    if driver.is_null() {
        return write_error(
            error,
            Error::with_message_and_status("driver is NULL", Status::InvalidArguments),
        );
    }
    let mut table = <FerrodbcDriver as FFIDriver>::ffi_driver();
    INNER.get_or_init(|| table.StatementExecuteQuery);
    table.StatementExecuteQuery = Some(execute_query);
    // SAFETY: non-NULL, and an AdbcDriver of version 1.1.0 by the caller's contract.
    unsafe { std::ptr::write_unaligned(driver.cast::<FFI_AdbcDriver>(), table) };
    ADBC_STATUS_OK
}

/// The fallback entry point, for a driver manager not told the name above.
///
/// # Safety
/// As [`AdbcDriverFerrodbcInit`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn AdbcDriverInit(
    version: c_int,
    driver: *mut c_void,
    error: *mut FFI_AdbcError,
) -> AdbcStatusCode {
    // SAFETY: the same contract.
    unsafe { AdbcDriverFerrodbcInit(version, driver, error) }
}
