//! The text Python arm: `str`, from the one UTF-16 → `str` decoder used by every fetch path
//! (bound, streamed, fetchone, parameters' output, ...).
//!
//! Builds the string directly in CPython's compact layout from the bound code units: one scan
//! decides the kind (ASCII / Latin-1 / BMP), then a narrowing copy or memcpy. Only text with
//! surrogates goes through `PyUnicode_DecodeUTF16`, with an explicit native byte order (a
//! leading U+FEFF is data, not a BOM) and the connection's malformed-input policy.

use super::cell::{CellFail, Fill};
use crate::batch::ColumnBuffer;
use crate::params::{ArrayColumn, Put};
use crate::raw_text::RawTextEncoding;
use crate::types::CellKind;
use crate::types::text::{TextClass, TextErrors, classify_utf16, first_lone_surrogate};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;

/// Fill a text column's served range (bound or streamed alike).
pub fn fill(f: &Fill<'_, '_>, buf: &ColumnBuffer, _kind: CellKind) -> Result<(), CellFail> {
    let (py, errors) = (f.py, f.plan.errors);
    f.each(buf, |r| {
        let units = buf.text(r).map_err(|e| f.cut(e, r))?;
        utf16_to_str(py, units, errors).map_err(|e| text_failure(f, e, units, r))
    })
}

/// Fill a text column bound as the driver's bytes for a converter removed since (mid-result),
/// from those bytes, whose encoding is known (`py/plan.rs::choose_decoder`).
pub fn fill_from_raw(
    f: &Fill<'_, '_>,
    buf: &ColumnBuffer,
    encoding: RawTextEncoding,
) -> Result<(), CellFail> {
    let (py, errors) = (f.py, f.plan.errors);
    match encoding {
        RawTextEncoding::Utf16Le => f.each(buf, |r| {
            let bytes = buf.bytes(r).map_err(|e| f.cut(e, r))?;
            if bytes.len() % 2 != 0 {
                return Err(f.fail(
                    r,
                    format!("{} bytes are not UTF-16 code units", bytes.len()),
                ));
            }
            // The bytes buffer has no 2-byte alignment to rely on: copy into code units.
            let units: Vec<u16> = bytes
                .chunks_exact(2)
                .map(|b| u16::from_le_bytes([b[0], b[1]]))
                .collect();
            utf16_to_str(py, &units, errors).map_err(|e| text_failure(f, e, &units, r))
        }),
        RawTextEncoding::Utf8 => f.each(buf, |r| {
            let bytes = buf.bytes(r).map_err(|e| f.cut(e, r))?;
            match std::str::from_utf8(bytes) {
                Ok(text) => Ok(PyString::new(py, text).into_any()),
                Err(_) if errors == TextErrors::Replace => {
                    Ok(PyString::new(py, &String::from_utf8_lossy(bytes)).into_any())
                }
                Err(e) => Err(f.fail(
                    r,
                    format!(
                        "malformed UTF-8 at byte {}; set connection.decode_errors to 'replace' \
                         to accept it",
                        e.valid_up_to()
                    ),
                )),
            }
        }),
    }
}

/// The error of row `r`'s text that could not become a `str`.
fn text_failure(f: &Fill<'_, '_>, failure: TextFailure, units: &[u16], r: usize) -> PyErr {
    match failure {
        TextFailure::Python(e) => e,
        TextFailure::LoneSurrogate(at) => f.fail(
            r,
            format!(
                "malformed UTF-16 (lone surrogate 0x{:04X} at code unit {at}); \
                 set connection.decode_errors to 'replace' or 'surrogatepass' to accept it",
                units[at]
            ),
        ),
    }
}

/// Why a cell's text could not become a `str`.
pub enum TextFailure {
    /// A lone surrogate at this code unit, under the strict policy.
    LoneSurrogate(usize),
    /// CPython raised (out of memory, ...).
    Python(PyErr),
}

/// Build a new `str` from UTF-16 code units.
#[inline]
#[allow(
    clippy::cast_possible_truncation,
    reason = "u16 -> u8 only in the Latin-1 branch, where `classify_utf16` saw every unit < 256"
)]
pub fn utf16_to_str<'py>(
    py: Python<'py>,
    units: &[u16],
    errors: TextErrors,
) -> Result<Bound<'py, PyAny>, TextFailure> {
    let len = crate::checked::alloc_len(units.len());
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
                    crate::checked::alloc_len(units.len() * 2),
                    policy.as_ptr(),
                    &raw mut byteorder,
                );
                if obj.is_null() {
                    return Err(TextFailure::Python(PyErr::fetch(py)));
                }
                Ok(Bound::from_owned_ptr(py, obj))
            }
        }
    }
}

/// An exact `str` into the next cell of an `executemany` parameter column, as UTF-16 (`None`:
/// another type, or lone surrogates, which `to_param` refuses with its message).
#[inline]
pub fn param_cell(v: &Bound<'_, PyAny>, col: &mut ArrayColumn) -> Option<Put> {
    let s = v.cast_exact::<PyString>().ok()?;
    Some(col.push_str(s.to_str().ok()?))
}
