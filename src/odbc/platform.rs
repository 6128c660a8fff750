//! The operating system's part of finding a driver's own exported functions (Microsoft's bcp
//! entry points, `super::bcp`): the full path of a library the driver manager already loaded,
//! given the file name `SQLGetInfo(SQL_DRIVER_NAME)` reports, and its symbols.
//!
//! - Linux: the path from `/proc/self/maps`, then `dlopen(RTLD_NOLOAD)` + `dlsym` (run and
//!   tested here, glibc, with Driver 18 under unixODBC).
//! - macOS: the path from dyld's list of loaded images, then the same `dlopen` + `dlsym`
//!   (macOS's `RTLD_NOLOAD` is 0x10). Written from Apple's dyld and dlfcn headers; not run here.
//! - Windows: `GetModuleHandleW` finds a loaded DLL by its file name (the driver manager,
//!   odbc32.dll, loaded it), then `GetProcAddress`. Written from the Win32 documentation; not
//!   run here.
//! - Anything else: `NotSupported`, with the reason.
//!
//! Every lookup only takes another reference to a library that is already loaded, so no
//! initialiser runs, and that reference is never dropped: the functions stay callable for the
//! life of the process.

use crate::error::{Error, Result};
use std::ffi::c_void;

/// A loaded library, by the handle its symbols are looked up through.
#[derive(Clone, Copy)]
pub struct Library(*mut c_void);

// SAFETY: the handle is an opaque, process-wide reference that is never closed; looking symbols
// up through it is thread-safe on every platform below (dlsym, GetProcAddress).
unsafe impl Send for Library {}

impl Library {
    /// The already loaded library whose file name (no folder) is `file`, and its full path.
    pub fn loaded(file: &str) -> Result<(String, Library)> {
        imp::loaded(file)
    }

    /// The address of the exported symbol `name`, or `None`.
    pub fn symbol(&self, name: &str) -> Option<*mut c_void> {
        let p = imp::symbol(self.0, name);
        (!p.is_null()).then_some(p)
    }
}

fn not_loaded(file: &str) -> Error {
    Error::Interface(format!(
        "the driver library {file} is not loaded in this process"
    ))
}

#[cfg(any(target_os = "linux", target_os = "macos"))]
mod imp {
    use super::{Library, not_loaded};
    use crate::error::{Error, Result};
    use std::ffi::{CString, c_char, c_int, c_void};

    unsafe extern "C" {
        fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
        fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    }
    const RTLD_NOW: c_int = 2;
    #[cfg(target_os = "linux")]
    const RTLD_NOLOAD: c_int = 4;
    #[cfg(target_os = "macos")]
    const RTLD_NOLOAD: c_int = 0x10;

    pub fn loaded(file: &str) -> Result<(String, Library)> {
        let path = loaded_path(file).ok_or_else(|| not_loaded(file))?;
        let c_path =
            CString::new(path.clone()).map_err(|_| Error::Interface("driver path".into()))?;
        // SAFETY: RTLD_NOLOAD only takes another reference to a library that is already
        // loaded (the driver manager loaded it for this connection), so no initialiser runs.
        let lib = unsafe { dlopen(c_path.as_ptr(), RTLD_NOW | RTLD_NOLOAD) };
        if lib.is_null() {
            return Err(Error::Interface(format!(
                "could not open the driver library {path}"
            )));
        }
        Ok((path, Library(lib)))
    }

    pub fn symbol(lib: *mut c_void, name: &str) -> *mut c_void {
        let Ok(c) = CString::new(name) else {
            return std::ptr::null_mut();
        };
        // SAFETY: `lib` is a valid handle from `dlopen`; the name is NUL-terminated.
        unsafe { dlsym(lib, c.as_ptr()) }
    }

    /// The full path of the loaded library whose file name is `file`, from `/proc/self/maps`.
    #[cfg(target_os = "linux")]
    pub fn loaded_path(file: &str) -> Option<String> {
        let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
        maps.lines()
            .filter_map(|line| line.split_whitespace().nth(5))
            .find(|path| path.rsplit('/').next() == Some(file))
            .map(str::to_string)
    }

    /// The full path of the loaded image whose file name is `file`, from dyld's image list.
    #[cfg(target_os = "macos")]
    pub fn loaded_path(file: &str) -> Option<String> {
        unsafe extern "C" {
            fn _dyld_image_count() -> u32;
            fn _dyld_get_image_name(index: u32) -> *const c_char;
        }
        // SAFETY: dyld's documented accessors; a name is a NUL-terminated path owned by dyld
        // (null if the image was unloaded meanwhile, skipped).
        unsafe {
            (0.._dyld_image_count()).find_map(|i| {
                let name = _dyld_get_image_name(i);
                if name.is_null() {
                    return None;
                }
                let path = std::ffi::CStr::from_ptr(name)
                    .to_string_lossy()
                    .into_owned();
                (path.rsplit('/').next() == Some(file)).then_some(path)
            })
        }
    }
}

#[cfg(windows)]
mod imp {
    use super::{Library, not_loaded};
    use crate::error::Result;
    use std::ffi::{CString, c_char, c_void};

    #[link(name = "kernel32")]
    unsafe extern "system" {
        fn GetModuleHandleW(name: *const u16) -> *mut c_void;
        fn GetModuleFileNameW(module: *mut c_void, name: *mut u16, size: u32) -> u32;
        fn GetProcAddress(module: *mut c_void, name: *const c_char) -> *mut c_void;
    }

    pub fn loaded(file: &str) -> Result<(String, Library)> {
        let wide: Vec<u16> = file.encode_utf16().chain([0]).collect();
        // SAFETY: a NUL-terminated UTF-16 name; GetModuleHandleW takes no reference (the DLL
        // stays loaded as long as the driver manager holds the connection's driver).
        let module = unsafe { GetModuleHandleW(wide.as_ptr()) };
        if module.is_null() {
            return Err(not_loaded(file));
        }
        let mut buf = vec![0u16; 1024];
        // SAFETY: `buf` holds `buf.len()` UTF-16 units; the call writes at most that many.
        let n = unsafe { GetModuleFileNameW(module, buf.as_mut_ptr(), buf.len() as u32) };
        let path = String::from_utf16_lossy(&buf[..n as usize]);
        Ok((
            if path.is_empty() {
                file.to_string()
            } else {
                path
            },
            Library(module),
        ))
    }

    pub fn symbol(lib: *mut c_void, name: &str) -> *mut c_void {
        let Ok(c) = CString::new(name) else {
            return std::ptr::null_mut();
        };
        // SAFETY: `lib` is a loaded module's handle; the name is NUL-terminated ANSI.
        unsafe { GetProcAddress(lib, c.as_ptr()) }
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
mod imp {
    use super::Library;
    use crate::error::{Error, Result};
    use std::ffi::c_void;

    pub fn loaded(_file: &str) -> Result<(String, Library)> {
        Err(Error::NotSupported(
            "finding the driver's bulk-copy functions is implemented for Linux, macOS and \
             Windows only"
                .into(),
        ))
    }

    pub fn symbol(_lib: *mut c_void, _name: &str) -> *mut c_void {
        std::ptr::null_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_that_is_not_loaded_is_not_found() {
        assert!(matches!(
            Library::loaded("libnot-a-driver.so.1"),
            Err(Error::Interface(_))
        ));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_c_library_and_its_symbols_are_found_by_its_file_name() {
        // Every Rust test binary on glibc maps libc.so.6.
        let (path, lib) = Library::loaded("libc.so.6").expect("libc is mapped");
        assert!(
            path.starts_with('/') && path.ends_with("/libc.so.6"),
            "{path}"
        );
        assert!(lib.symbol("getpid").is_some());
        assert!(lib.symbol("not_a_libc_function").is_none());
    }
}
