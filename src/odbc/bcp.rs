//! SQL Server's bulk-copy (bcp) API on the caller's own ODBC connection.
//!
//! Neither SQL Server driver offers bcp through the driver manager, and each hides it
//! differently (both seen on Linux with unixODBC 2.3, 2026-12-04; the captures are in
//! `eng/tds-peer/captures/bulk-load.md`):
//! - Microsoft ODBC Driver 17/18 exports `bcp_initW`, `bcp_bind`, ... from its own library;
//!   unixODBC does not forward them. They are looked up in the library the driver manager
//!   already loaded for this connection (`super::platform`: dlsym on Linux and macOS,
//!   GetProcAddress on Windows), and they accept the driver manager's own `HDBC`.
//! - FreeTDS implements them as private connection attributes (1500 + n, each taking a pointer
//!   to a small parameter struct), which unixODBC passes to the driver unchanged. FreeTDS has no
//!   `bcp_collen`: a variable-length value needs a length prefix or a terminator there.
//!
//! Both need `SQL_COPT_SS_BCP` (1219) set to `SQL_BCP_ON` before the connection is made; on a
//! connection without it the first call fails with the driver's own diagnostic.
//!
//! Every call reports failure through the connection's diagnostic records, read here into the
//! same `Error::Odbc` as any other ODBC call.

use super::Dbc;
use super::platform::Library;
use super::sys::{self, HDbc};
use crate::backend::Driver;
use crate::error::{Error, Result};
use std::ffi::{c_int, c_void};
use std::sync::Mutex;

/// The connection attribute that enables bcp on a connection, set before it connects.
pub const SQL_COPT_SS_BCP: i32 = 1219;
/// Its value that enables bcp.
pub const SQL_BCP_ON: usize = 1;
/// `bcp_bind`'s `varlen` for "the length comes from the prefix, terminator or `bcp_collen`".
pub const SQL_VARLEN_DATA: i32 = -10;
/// A `bcp_collen` length that sends NULL.
pub const SQL_NULL_DATA: i32 = -1;
/// `bcp_init` direction: into the table.
const DB_IN: c_int = 1;
/// The bcp functions' success code (`SUCCEED`; `FAIL` is 0).
const SUCCEED: i16 = 1;

/// `bcp_control` options both drivers accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum BcpOption {
    /// Rows a batch holds before the driver commits it on its own (Driver 18 only).
    Batch = 4,
    /// Keep NULLs instead of taking column defaults (Driver 18 only; FreeTDS: a hint).
    KeepNulls = 5,
    /// Stop the operation in progress: the batch in flight is not committed (Driver 18 only).
    Abort = 6,
    /// Send the values of identity columns instead of letting the server number them.
    KeepIdentity = 8,
    /// The `WITH (...)` hint list of `INSERT BULK`, as UTF-16 text (`BCPHINTSW`).
    HintsW = 11,
}

// The C prototypes of Microsoft's bcp functions (msodbcsql.h); RETCODE is a 16-bit SQLRETURN.
type InitW = unsafe extern "C" fn(HDbc, *const u16, *const u16, *const u16, c_int) -> i16;
type Bind =
    unsafe extern "C" fn(HDbc, *const u8, c_int, i32, *const u8, c_int, c_int, c_int) -> i16;
type Colptr = unsafe extern "C" fn(HDbc, *const u8, c_int) -> i16;
type Collen = unsafe extern "C" fn(HDbc, i32, c_int) -> i16;
type Sendrow = unsafe extern "C" fn(HDbc) -> i16;
type Count = unsafe extern "C" fn(HDbc) -> i32;
type Control = unsafe extern "C" fn(HDbc, c_int, *mut c_void) -> i16;

/// The bcp entry points of Microsoft's driver, resolved once per driver library.
#[derive(Clone, Copy)]
pub struct MsFns {
    init_w: InitW,
    bind: Bind,
    colptr: Colptr,
    collen: Collen,
    sendrow: Sendrow,
    batch: Count,
    done: Count,
    control: Control,
}

/// FreeTDS's private connection attributes for bcp (its `odbcss.h`).
mod freetds {
    use std::ffi::{c_int, c_void};

    pub const BCP_COLPTR: i32 = 1502;
    pub const BCP_SENDROW: i32 = 1503;
    pub const BCP_BATCH: i32 = 1504;
    pub const BCP_DONE: i32 = 1505;
    pub const BCP_BIND: i32 = 1506;
    pub const BCP_INITW: i32 = 1507;
    pub const BCP_CONTROL: i32 = 1501;
    /// Its `bcp_control` fields: the hint text (narrow, copied) and identity insert.
    pub const BCPHINTS: i32 = 6;
    pub const BCPKEEPIDENTITY: i32 = 8;

    #[repr(C)]
    pub struct Init {
        pub table: *const c_void,
        pub data_file: *const c_void,
        pub error_file: *const c_void,
        pub direction: c_int,
    }
    #[repr(C)]
    pub struct Control {
        pub field: c_int,
        pub value: *mut c_void,
    }
    #[repr(C)]
    pub struct Colptr {
        pub data: *const u8,
        pub column: c_int,
    }
    #[repr(C)]
    pub struct Rows {
        pub rows: c_int,
    }
    #[repr(C)]
    pub struct Bind {
        pub data: *const u8,
        pub prefix_len: c_int,
        pub var_len: c_int,
        pub terminator: *const u8,
        pub terminator_len: c_int,
        pub bcp_type: c_int,
        pub column: c_int,
    }
}

/// The bcp API of the driver behind one connection.
#[derive(Clone, Copy)]
pub enum Bcp {
    MsOdbc(MsFns),
    FreeTds,
}

impl std::fmt::Debug for Bcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Bcp::MsOdbc(_) => "Bcp::MsOdbc",
            Bcp::FreeTds => "Bcp::FreeTds",
        })
    }
}

impl Bcp {
    /// The bcp API of the driver behind `dbc`, or `NotSupported` for a driver without one.
    pub fn of(dbc: &Dbc, driver: Driver) -> Result<Bcp> {
        match driver {
            Driver::FreeTds => Ok(Bcp::FreeTds),
            Driver::MsOdbc => {
                let file = dbc.info_string(sys::InfoType::DriverName)?;
                ms_fns(&file).map(Bcp::MsOdbc)
            }
            Driver::Other => Err(Error::NotSupported(
                "this ODBC driver has no bulk-copy API (only Microsoft's ODBC drivers and FreeTDS do)"
                    .into(),
            )),
        }
    }

    /// `bcp_init` into `table` (a name as SQL Server parses it: `[schema].[t]`, `#t`).
    pub fn init(&self, dbc: &Dbc, table: &str) -> Result<()> {
        let mut wide: Vec<u16> = table.encode_utf16().collect();
        wide.push(0);
        let ok = match self {
            // SAFETY: the handle is connected; the name is NUL-terminated UTF-16 that outlives the
            // call; no data or error file (rows come from memory).
            Bcp::MsOdbc(f) => unsafe {
                (f.init_w)(
                    dbc.as_sys(),
                    wide.as_ptr(),
                    std::ptr::null(),
                    std::ptr::null(),
                    DB_IN,
                ) == SUCCEED
            },
            Bcp::FreeTds => {
                let mut p = freetds::Init {
                    table: wide.as_ptr().cast(),
                    data_file: std::ptr::null(),
                    error_file: std::ptr::null(),
                    direction: DB_IN,
                };
                set_private(dbc, freetds::BCP_INITW, (&raw mut p).cast())
            }
        };
        checked(dbc, ok, "bcp_init")
    }

    /// `bcp_bind`: column `column` (1-based, the table's order) reads its value at `data`, of
    /// bcp type `bcp_type`, `var_len` bytes (or `SQL_VARLEN_DATA`), after a native-endian length
    /// prefix of `prefix_len` bytes (0, 1, 2, 4 or 8; a prefix of -1 sends NULL).
    ///
    /// # Safety
    /// `data` must stay valid and hold each row's value whenever
    /// `sendrow` is called, until `done` or a rebind; `data` may be null when `colptr` gives
    /// the address before every `sendrow`.
    pub unsafe fn bind(
        &self,
        dbc: &Dbc,
        data: *const u8,
        prefix_len: i32,
        var_len: i32,
        bcp_type: u8,
        column: u32,
    ) -> Result<()> {
        // No terminator: values carry a length prefix or a bcp_collen length.
        let (term, term_len): (*const u8, c_int) = (std::ptr::null(), 0);
        let column = column_number(column)?;
        let ok = match self {
            // SAFETY: the caller keeps `data` valid as documented; the terminator is static.
            Bcp::MsOdbc(f) => unsafe {
                (f.bind)(
                    dbc.as_sys(),
                    data,
                    prefix_len,
                    var_len,
                    term,
                    term_len,
                    c_int::from(bcp_type),
                    column,
                ) == SUCCEED
            },
            Bcp::FreeTds => {
                let mut p = freetds::Bind {
                    data,
                    prefix_len,
                    var_len,
                    terminator: term,
                    terminator_len: term_len,
                    bcp_type: c_int::from(bcp_type),
                    column,
                };
                set_private(dbc, freetds::BCP_BIND, (&raw mut p).cast())
            }
        };
        checked(dbc, ok, "bcp_bind")
    }

    /// `bcp_colptr`: the next `sendrow` reads column `column` at `data`.
    ///
    /// # Safety
    /// `data` must be valid for the column's length until the next `sendrow` returns.
    pub unsafe fn colptr(&self, dbc: &Dbc, data: *const u8, column: u32) -> Result<()> {
        let column = column_number(column)?;
        let ok = match self {
            // SAFETY: the caller keeps `data` valid until the next sendrow.
            Bcp::MsOdbc(f) => unsafe { (f.colptr)(dbc.as_sys(), data, column) == SUCCEED },
            Bcp::FreeTds => {
                let mut p = freetds::Colptr { data, column };
                set_private(dbc, freetds::BCP_COLPTR, (&raw mut p).cast())
            }
        };
        checked(dbc, ok, "bcp_colptr")
    }

    /// `bcp_collen`: the next `sendrow` sends `len` bytes of column `column` (`SQL_NULL_DATA`:
    /// NULL). Microsoft's driver only: FreeTDS needs a terminator instead.
    pub fn collen(&self, dbc: &Dbc, len: i32, column: u32) -> Result<()> {
        let column = column_number(column)?;
        match self {
            Bcp::MsOdbc(f) => {
                // SAFETY: plain values; the handle is connected and bcp_init succeeded.
                let ok = unsafe { (f.collen)(dbc.as_sys(), len, column) == SUCCEED };
                checked(dbc, ok, "bcp_collen")
            }
            Bcp::FreeTds => Err(Error::Internal("FreeTDS has no bcp_collen".into())),
        }
    }

    /// `bcp_sendrow`: one row from the bound addresses.
    pub fn sendrow(&self, dbc: &Dbc) -> Result<()> {
        let ok = match self {
            // SAFETY: the bound addresses are valid, as `bind`'s contract requires.
            Bcp::MsOdbc(f) => unsafe { (f.sendrow)(dbc.as_sys()) == SUCCEED },
            Bcp::FreeTds => set_private(dbc, freetds::BCP_SENDROW, std::ptr::null_mut()),
        };
        checked(dbc, ok, "bcp_sendrow")
    }

    /// `bcp_batch`: commit the rows sent since the last batch; how many there were.
    pub fn batch(&self, dbc: &Dbc) -> Result<u64> {
        self.count(dbc, freetds::BCP_BATCH, "bcp_batch", |f| f.batch)
    }

    /// Stop the operation without committing the batch in flight: `BCPABORT`, then `bcp_done`
    /// to release the connection (Driver 18: it ends the rows' message with EOM | IGNORE).
    /// FreeTDS has no abort: its `bcp_done` ends the load and the server keeps the rows of the
    /// batch in flight. Returns the rows the server kept.
    pub fn abort(&self, dbc: &Dbc) -> Result<u64> {
        if let Bcp::MsOdbc(_) = self {
            self.control(dbc, BcpOption::Abort, 1)?;
        }
        self.done(dbc)
    }

    /// `bcp_done`: end the load; the rows of the last batch.
    pub fn done(&self, dbc: &Dbc) -> Result<u64> {
        self.count(dbc, freetds::BCP_DONE, "bcp_done", |f| f.done)
    }

    fn count(
        &self,
        dbc: &Dbc,
        attr: i32,
        function: &'static str,
        pick: fn(&MsFns) -> Count,
    ) -> Result<u64> {
        let rows = match self {
            // SAFETY: the handle is connected and in a bcp operation.
            Bcp::MsOdbc(f) => unsafe { pick(f)(dbc.as_sys()) },
            Bcp::FreeTds => {
                let mut p = freetds::Rows { rows: -1 };
                if set_private(dbc, attr, (&raw mut p).cast()) {
                    p.rows
                } else {
                    -1
                }
            }
        };
        // -1 is the drivers' failure value; the diagnostics say why.
        u64::try_from(rows).or_else(|_| checked(dbc, false, function).map(|()| 0))
    }

    /// `bcp_control(option, value)` for an integer option; FreeTDS takes only KeepIdentity
    /// (its own field number, any non-null value meaning on).
    pub fn control(&self, dbc: &Dbc, option: BcpOption, value: usize) -> Result<()> {
        let ok = match self {
            // SAFETY: integer options are passed by value in the pointer argument.
            Bcp::MsOdbc(f) => unsafe {
                (f.control)(dbc.as_sys(), option as c_int, value as *mut c_void) == SUCCEED
            },
            Bcp::FreeTds => {
                let field = match option {
                    BcpOption::KeepIdentity => freetds::BCPKEEPIDENTITY,
                    _ => {
                        return Err(Error::NotSupported(format!(
                            "FreeTDS's bcp_control has no {option:?}"
                        )));
                    }
                };
                let mut p = freetds::Control {
                    field,
                    value: value as *mut c_void,
                };
                set_private(dbc, freetds::BCP_CONTROL, (&raw mut p).cast())
            }
        };
        checked(dbc, ok, "bcp_control")
    }

    /// `bcp_control(BCPHINTS)`: the `WITH (...)` list of the driver's `INSERT BULK`. Returns the
    /// text's buffer, which the caller keeps for the load (Driver 18 may keep the address;
    /// FreeTDS copies it).
    pub fn hints(&self, dbc: &Dbc, hints: &str) -> Result<Vec<u8>> {
        let (buf, ok) = match self {
            Bcp::MsOdbc(f) => {
                let buf: Vec<u8> = hints
                    .encode_utf16()
                    .chain([0])
                    .flat_map(u16::to_ne_bytes)
                    .collect();
                // SAFETY: NUL-terminated UTF-16 that the caller keeps alive for the load.
                let ok = unsafe {
                    (f.control)(
                        dbc.as_sys(),
                        BcpOption::HintsW as c_int,
                        buf.as_ptr().cast_mut().cast(),
                    ) == SUCCEED
                };
                (buf, ok)
            }
            Bcp::FreeTds => {
                let buf: Vec<u8> = hints.bytes().chain([0]).collect();
                let mut p = freetds::Control {
                    field: freetds::BCPHINTS,
                    value: buf.as_ptr().cast_mut().cast(),
                };
                let ok = set_private(dbc, freetds::BCP_CONTROL, (&raw mut p).cast());
                (buf, ok)
            }
        };
        checked(dbc, ok, "bcp_control").map(|()| buf)
    }
}

fn column_number(column: u32) -> Result<c_int> {
    c_int::try_from(column)
        .map_err(|_| Error::Programming(format!("column {column} is out of range")))
}

/// A failed bcp call as the connection's diagnostics.
fn checked(dbc: &Dbc, ok: bool, function: &'static str) -> Result<()> {
    if ok {
        Ok(())
    } else {
        dbc.check(sys::SqlReturn::ERROR, function).map(|_| ())
    }
}

/// One of FreeTDS's private bcp attributes; whether the driver accepted it.
fn set_private(dbc: &Dbc, attr: i32, params: *mut c_void) -> bool {
    // SAFETY: FreeTDS reads (and for batch/done writes) the parameter struct `params` points
    // to during the call; the caller's struct outlives it. -4 is SQL_IS_POINTER.
    let ret = unsafe {
        sys::SQLSetConnectAttrW(
            dbc.as_sys(),
            sys::ConnectionAttribute(attr),
            params.cast(),
            -4,
        )
    };
    matches!(
        ret,
        sys::SqlReturn::SUCCESS | sys::SqlReturn::SUCCESS_WITH_INFO
    )
}

/// The driver libraries whose bcp functions were resolved, by path (a process may load two).
static RESOLVED: Mutex<Vec<(String, MsFns)>> = Mutex::new(Vec::new());

/// Microsoft's bcp functions, from the already loaded driver library named `file`
/// (`SQLGetInfo(SQL_DRIVER_NAME)`: a file name without its folder).
fn ms_fns(file: &str) -> Result<MsFns> {
    let (path, lib) = Library::loaded(file)?;
    let mut resolved = RESOLVED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, f)) = resolved.iter().find(|(p, _)| *p == path) {
        return Ok(*f);
    }
    let sym = |name: &str| -> Result<*mut c_void> {
        lib.symbol(name)
            .ok_or_else(|| Error::NotSupported(format!("the driver library {path} has no {name}")))
    };
    // SAFETY: each symbol is the driver's exported function of that name, whose C prototype
    // (msodbcsql.h) the field's type spells out.
    let fns = unsafe {
        MsFns {
            init_w: std::mem::transmute::<*mut c_void, InitW>(sym("bcp_initW")?),
            bind: std::mem::transmute::<*mut c_void, Bind>(sym("bcp_bind")?),
            colptr: std::mem::transmute::<*mut c_void, Colptr>(sym("bcp_colptr")?),
            collen: std::mem::transmute::<*mut c_void, Collen>(sym("bcp_collen")?),
            sendrow: std::mem::transmute::<*mut c_void, Sendrow>(sym("bcp_sendrow")?),
            batch: std::mem::transmute::<*mut c_void, Count>(sym("bcp_batch")?),
            done: std::mem::transmute::<*mut c_void, Count>(sym("bcp_done")?),
            control: std::mem::transmute::<*mut c_void, Control>(sym("bcp_control")?),
        }
    };
    resolved.push((path, fns));
    Ok(fns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_that_is_not_loaded_has_no_bcp_functions() {
        assert!(matches!(
            ms_fns("libnot-a-driver.so.1"),
            Err(Error::Interface(_))
        ));
    }

    #[test]
    fn freetds_parameter_structs_have_the_c_layout() {
        // odbcss.h: pointers first, ints packed after them, padded to pointer alignment.
        assert_eq!(std::mem::size_of::<freetds::Init>(), 32);
        assert_eq!(std::mem::size_of::<freetds::Bind>(), 40);
        assert_eq!(std::mem::size_of::<freetds::Control>(), 16);
        assert_eq!(std::mem::size_of::<freetds::Colptr>(), 16);
    }
}
