//! The one ODBC environment of the process (ODBC 3.80 behaviour).

use crate::error::{Error, Result};
use odbc_api::sys::{
    self, AttrOdbcVersion, EnvironmentAttribute, HEnv, Handle, HandleType, SqlReturn,
};
use std::sync::OnceLock;

/// The process-wide environment handle. Never freed: connections may outlive any scope we could
/// tie it to, and unixODBC tolerates a live environment at exit.
#[derive(Clone, Copy)]
pub struct EnvHandle(pub HEnv);
// SAFETY: an environment handle may be used from any thread (ODBC 3 thread-safety guarantee for
// environment handles; unixODBC locks its environment lists internally).
unsafe impl Send for EnvHandle {}
// SAFETY: as above; we only call SQLAllocHandle(DBC) on it concurrently, which is documented as safe.
unsafe impl Sync for EnvHandle {}

pub fn environment() -> Result<EnvHandle> {
    static ENV: OnceLock<std::result::Result<EnvHandle, String>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut handle = Handle::null();
        // SAFETY: out pointer is valid; a null input handle is required for an environment.
        let ret = unsafe { sys::SQLAllocHandle(HandleType::Env, Handle::null(), &raw mut handle) };
        if ret != SqlReturn::SUCCESS && ret != SqlReturn::SUCCESS_WITH_INFO {
            return Err("could not allocate an ODBC environment (is unixODBC installed?)".into());
        }
        let henv = handle.as_henv();
        // SAFETY: henv was just allocated; the attribute value is passed by value as a pointer.
        let ret = unsafe {
            sys::SQLSetEnvAttr(
                henv,
                EnvironmentAttribute::OdbcVersion,
                AttrOdbcVersion::Odbc3_80.into(),
                0,
            )
        };
        if ret != SqlReturn::SUCCESS && ret != SqlReturn::SUCCESS_WITH_INFO {
            return Err("the ODBC driver manager refused ODBC version 3.80".into());
        }
        Ok(EnvHandle(henv))
    })
    .clone()
    .map_err(Error::Interface)
}
