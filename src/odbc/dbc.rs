//! An owned, connected ODBC connection handle.

use super::call::Outcome;
use super::call::to_wide;
use super::diag::Diagnostic;
use super::diag::read_diagnostics;
use super::env::environment;
use crate::error::{Error, Result};
use crate::process::Owner;
use odbc_api::sys::{
    self, ConnectionAttribute, DriverConnectOption, HDbc, Handle, HandleType, InfoType,
};
use std::ptr::null_mut;

/// A connected `HDBC`. Dropping it rolls back (if needed), disconnects and frees; failures there
/// are swallowed, never panicked on (the process may be shutting down, the link may be dead).
/// In a forked child, closing or dropping it makes no driver call (see `crate::process`).
pub struct Dbc {
    handle: HDbc,
    connected: bool,
    /// Copies of the binary attribute values set on this handle, kept as long as the handle
    /// (fields drop after `Drop::drop` has freed it). Driver 18 keeps the pointer of
    /// `SQL_COPT_SS_ACCESS_TOKEN` and reads it during `SQLDriverConnect`: a buffer freed when
    /// `SQLSetConnectAttr` returned made `attrs_before={1256: token}` crash the process.
    pub(super) attr_buffers: Vec<Box<[u8]>>,
    /// The same for text attribute values (UTF-16, NUL-terminated).
    pub(super) attr_texts: Vec<Box<[u16]>>,
    owner: Owner,
}

// SAFETY: ODBC connection handles may be used from any thread, one call at a time. The owner
// serialises access with a mutex; `Dbc` is deliberately not `Sync`.
unsafe impl Send for Dbc {}

impl Dbc {
    /// Connect with a full ODBC connection string (`SQLDriverConnectW`, no prompt).
    /// `attrs_before` are set (in order) on the handle before it connects (pyodbc's
    /// `attrs_before`: attributes such as SQL_COPT_SS_ACCESS_TOKEN only work there).
    pub fn connect(
        connection_string: &str,
        login_timeout_sec: Option<u32>,
        attrs_before: &[(i32, crate::info::AttrValue)],
    ) -> Result<Dbc> {
        let env = environment()?;
        let mut handle = Handle::null();
        // SAFETY: env is a valid environment handle; out pointer valid.
        let ret =
            unsafe { sys::SQLAllocHandle(HandleType::Dbc, env.0.as_handle(), &raw mut handle) };
        if !Outcome::from_ret(ret).is_ok() {
            return Err(Error::Interface(
                "could not allocate an ODBC connection handle".into(),
            ));
        }
        let mut dbc = Dbc {
            handle: handle.as_hdbc(),
            connected: false,
            attr_buffers: Vec::new(),
            attr_texts: Vec::new(),
            owner: Owner::current(),
        };
        if let Some(secs) = login_timeout_sec {
            // Integer attributes are passed by value in the pointer argument.
            dbc.set_attr_uint(ConnectionAttribute::LOGIN_TIMEOUT, secs as usize)?;
        }
        for (attr, value) in attrs_before {
            dbc.set_attr(*attr, value)?;
        }
        let wide = to_wide(connection_string);
        let len = crate::checked::to_driver::<i16>(wide.len(), "the connection string")?;
        crate::counters::bump(&crate::counters::CONNECTS);
        // SAFETY: the input string is valid for its length; no output buffer is requested.
        let ret = unsafe {
            sys::SQLDriverConnectW(
                dbc.handle,
                null_mut(),
                wide.as_ptr(),
                len,
                null_mut(),
                0,
                null_mut(),
                DriverConnectOption::NoPrompt,
            )
        };
        dbc.check(ret, "SQLDriverConnect")?;
        dbc.connected = true;
        Ok(dbc)
    }

    /// Whether this process made the handle (false in a forked child: see `crate::process`).
    pub fn owned_here(&self) -> bool {
        self.owner.is_current()
    }

    pub fn as_sys(&self) -> HDbc {
        self.handle
    }

    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        read_diagnostics(HandleType::Dbc, self.handle.as_handle())
    }

    /// Turn a return code into `Ok(outcome)` or the diagnostics of this handle.
    pub fn check(&self, ret: sys::SqlReturn, function: &'static str) -> Result<Outcome> {
        let outcome = Outcome::from_ret(ret);
        match outcome {
            Outcome::Error | Outcome::InvalidHandle => {
                Err(Error::odbc(function, self.diagnostics()))
            }
            other => Ok(other),
        }
    }

    pub fn set_attr_uint(&mut self, attr: ConnectionAttribute, value: usize) -> Result<()> {
        // SAFETY: integer connection attributes are passed by value in the pointer argument.
        let ret = unsafe { sys::SQLSetConnectAttrW(self.handle, attr, value as sys::Pointer, 0) };
        self.check(ret, "SQLSetConnectAttr").map(|_| ())
    }

    pub fn set_autocommit(&mut self, on: bool) -> Result<()> {
        self.set_attr_uint(ConnectionAttribute::AUTOCOMMIT, usize::from(on))
    }

    pub fn end_transaction(&mut self, commit: bool) -> Result<()> {
        let completion = if commit {
            sys::CompletionType::Commit
        } else {
            sys::CompletionType::Rollback
        };
        // SAFETY: valid connection handle.
        let ret = unsafe { sys::SQLEndTran(HandleType::Dbc, self.handle.as_handle(), completion) };
        self.check(
            ret,
            if commit {
                "SQLEndTran(commit)"
            } else {
                "SQLEndTran(rollback)"
            },
        )
        .map(|_| ())
    }

    /// A string-valued `SQLGetInfo` (DBMS name, driver name, ...).
    pub fn info_string(&self, info: InfoType) -> Result<String> {
        let mut buf = vec![0u16; 256];
        let mut len: i16 = 0;
        let room = crate::checked::to_driver::<i16>(buf.len() * 2, "the SQLGetInfo buffer")?;
        // SAFETY: buffer valid for its byte length; length out pointer valid.
        let ret = unsafe {
            sys::SQLGetInfoW(
                self.handle,
                info,
                buf.as_mut_ptr() as sys::Pointer,
                room,
                &raw mut len,
            )
        };
        self.check(ret, "SQLGetInfo")?;
        let units = (crate::checked::driver_len(len, "SQLGetInfo length")? / 2).min(buf.len());
        Ok(String::from_utf16_lossy(&buf[..units]))
    }

    /// A 32-bit bitmask-valued `SQLGetInfo` (`SQL_GETDATA_EXTENSIONS`, cursor attributes, ...).
    pub fn info_u32(&self, info: InfoType) -> Result<u32> {
        let mut value: u32 = 0;
        // SAFETY: the driver writes one SQLUINTEGER into `value`.
        let ret =
            unsafe { sys::SQLGetInfoW(self.handle, info, (&raw mut value).cast(), 4, null_mut()) };
        self.check(ret, "SQLGetInfo")?;
        Ok(value)
    }

    /// Whether the driver reports the connection as dead (`SQL_ATTR_CONNECTION_DEAD`).
    pub fn is_dead(&self) -> bool {
        let mut value: u32 = 0;
        // SAFETY: the attribute is a 32-bit integer written to `value`.
        let ret = unsafe {
            sys::SQLGetConnectAttrW(
                self.handle,
                ConnectionAttribute::CONNECTION_DEAD,
                &raw mut value as sys::Pointer,
                0,
                null_mut(),
            )
        };
        Outcome::from_ret(ret).is_ok() && value == 1
    }

    /// Roll back, disconnect and free. Idempotent; errors from a dead link are ignored, errors
    /// from SQLDisconnect of a live link are returned (the handle is still freed). In a forked
    /// child the handle is abandoned instead: its rollback and logout would end the parent's
    /// session on the socket they share.
    pub fn close(&mut self) -> Result<()> {
        if self.handle.0.is_null() {
            return Ok(());
        }
        if !self.owner.is_current() {
            self.connected = false;
            self.handle = HDbc(null_mut());
            return Ok(());
        }
        let mut result = Ok(());
        if self.connected {
            // PEP 249: closing without commit discards the transaction. SQLDisconnect fails with
            // 25000 while a manual-commit transaction is open.
            // SAFETY: valid connected handle.
            let _ = unsafe {
                sys::SQLEndTran(
                    HandleType::Dbc,
                    self.handle.as_handle(),
                    sys::CompletionType::Rollback,
                )
            };
            // SAFETY: valid connected handle; statements were freed by the owner beforehand.
            let ret = unsafe { sys::SQLDisconnect(self.handle) };
            if !Outcome::from_ret(ret).is_ok() {
                result = Err(Error::odbc("SQLDisconnect", self.diagnostics()));
            }
            self.connected = false;
        }
        // SAFETY: the handle is valid and no statement of it is alive any more.
        let _ = unsafe { sys::SQLFreeHandle(HandleType::Dbc, self.handle.as_handle()) };
        self.handle = HDbc(null_mut());
        result
    }
}

impl Drop for Dbc {
    fn drop(&mut self) {
        let _ = self.close();
    }
}
