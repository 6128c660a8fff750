//! The one UTF-16 → `str` decoder, used by every fetch path (bound, streamed, fetchone, ...).
//!
//! Builds the string directly in CPython's compact layout from the bound code units: one scan
//! decides the kind (ASCII / Latin-1 / BMP), then a narrowing copy or memcpy. Only text with
//! surrogates goes through `PyUnicode_DecodeUTF16`, with an explicit native byte order (a
//! leading U+FEFF is data, not a BOM) and the connection's malformed-input policy.

use crate::types::text::{TextClass, TextErrors, classify_utf16, first_lone_surrogate};
use pyo3::ffi;
use pyo3::prelude::*;

/// Why a cell's text could not become a `str`.
pub enum TextFailure {
    /// A lone surrogate at this code unit, under the strict policy.
    LoneSurrogate(usize),
    /// CPython raised (out of memory, ...).
    Python(PyErr),
}

/// Build a new `str` from UTF-16 code units.
#[inline]
pub fn utf16_to_str<'py>(
    py: Python<'py>,
    units: &[u16],
    errors: TextErrors,
) -> Result<Bound<'py, PyAny>, TextFailure> {
    let len = units.len() as ffi::Py_ssize_t;
    let class = classify_utf16(units);
    // SAFETY: every branch creates a fresh string of exactly `len` characters with a `maxchar`
    // that is the true category of the data (CPython's compact-string invariant), then writes
    // exactly `len` elements of the kind's width into its data area before anyone can see it;
    // the new reference is then owned by the returned `Bound`.
    unsafe {
        match class {
            TextClass::Ascii | TextClass::Latin1 => {
                let maxchar = if class == TextClass::Ascii { 127 } else { 255 };
                let obj = ffi::PyUnicode_New(len, maxchar);
                if obj.is_null() {
                    return Err(TextFailure::Python(PyErr::fetch(py)));
                }
                let data = std::slice::from_raw_parts_mut(
                    ffi::PyUnicode_DATA(obj).cast::<u8>(),
                    units.len(),
                );
                // A zip over two slices (not pointer arithmetic) lets the narrowing vectorise.
                for (d, &u) in data.iter_mut().zip(units) {
                    *d = u as u8;
                }
                Ok(Bound::from_owned_ptr(py, obj))
            }
            TextClass::Bmp { max } => {
                let obj = ffi::PyUnicode_New(len, max as ffi::Py_UCS4);
                if obj.is_null() {
                    return Err(TextFailure::Python(PyErr::fetch(py)));
                }
                let data = ffi::PyUnicode_DATA(obj).cast::<u16>();
                std::ptr::copy_nonoverlapping(units.as_ptr(), data, units.len());
                Ok(Bound::from_owned_ptr(py, obj))
            }
            TextClass::Surrogates => {
                let policy = match errors {
                    TextErrors::Strict => {
                        if let Some(at) = first_lone_surrogate(units) {
                            return Err(TextFailure::LoneSurrogate(at));
                        }
                        c"strict"
                    }
                    TextErrors::Replace => c"replace",
                    TextErrors::SurrogatePass => c"surrogatepass",
                };
                // Native byte order, stated explicitly: 0 would eat a leading U+FEFF as a BOM.
                let mut byteorder: i32 = if cfg!(target_endian = "little") {
                    -1
                } else {
                    1
                };
                let obj = ffi::PyUnicode_DecodeUTF16(
                    units.as_ptr().cast(),
                    (units.len() * 2) as ffi::Py_ssize_t,
                    policy.as_ptr(),
                    &mut byteorder,
                );
                if obj.is_null() {
                    return Err(TextFailure::Python(PyErr::fetch(py)));
                }
                Ok(Bound::from_owned_ptr(py, obj))
            }
        }
    }
}
