//! The decimal Python arm: `decimal.Decimal` objects built from a numeric cell.
//!
//! The general path is `Decimal(text)`: about 1,800 instructions per cell on CPython 3.11, most
//! of it argument parsing, a str → C string copy and libmpdec's string parser (callgrind,
//! fetchone over the mixed shape: a quarter of the whole fetch). CPython 3.11 exports no C API
//! for `_decimal` (the capsule arrived later), so the fast path writes the object the way
//! `_decimal`'s own `PyDecType_New` + `mpd_qset_string` leave it: a `PyDecObject` whose `mpd_t`
//! points at its four inline words. That layout is private, so it is *verified* once per process
//! against objects the real constructor built (sizes, every field, equality, `str`, `hash`);
//! on any mismatch (another CPython, a 32-bit libmpdec, the pure-Python `_pydecimal`) every
//! cell takes the general path.

use super::super::cache;
use super::cell::{CellFail, Fill};
use crate::batch::ColumnBuffer;
use crate::params::{ArrayColumn, Put};
use crate::types::CellKind;
use crate::types::decimal::{DecimalParts, decimal_parts, decimal_text};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

/// Fill a decimal column's served range: the numeric struct, or the driver's digits.
pub fn fill(f: &Fill<'_, '_>, buf: &ColumnBuffer, kind: CellKind) -> Result<(), CellFail> {
    let py = f.py;
    if let CellKind::Numeric { .. } = kind {
        return f.each(buf, |r| {
            let parts = DecimalParts::from_numeric(buf.numeric(r)).ok_or_else(|| {
                f.fail(r, "the driver returned a numeric beyond 38 digits".into())
            })?;
            decimal_from_parts(py, &parts)
        });
    }
    f.each(buf, |r| {
        let bytes = buf.bytes(r).map_err(|e| f.cut(e, r))?;
        new_decimal(py, bytes).map_err(|failure| match failure {
            DecimalFailure::Python(e) => e,
            DecimalFailure::NotDecimal => f.fail(
                r,
                format!(
                    "the driver returned {:?}, not a decimal number",
                    String::from_utf8_lossy(bytes)
                ),
            ),
        })
    })
}

/// libmpdec's `mpd_t` (64-bit configuration).
#[repr(C)]
struct MpdT {
    flags: u8,
    exp: isize,
    digits: isize,
    len: isize,
    alloc: isize,
    data: *mut u64,
}

/// `_decimal`'s `PyDecObject`: header, cached hash, the number, its inline words.
#[repr(C)]
struct PyDecObject {
    ob_base: ffi::PyObject,
    hash: ffi::Py_hash_t,
    dec: MpdT,
    data: [u64; 4],
}

const MPD_NEG: u8 = 1;
const MPD_STATIC: u8 = 16;
const MPD_STATIC_DATA: u8 = 32;

/// How this process builds Decimals; decided once.
enum Builder {
    Layout(Py<PyType>),
    Constructor,
}

static BUILDER: PyOnceLock<Builder> = PyOnceLock::new();

/// The samples the layout is verified on: signs, zero with a scale, one and two words, 38
/// digits, scale 38.
const SAMPLES: &[&str] = &[
    "0",
    "0.0000",
    "-0.0000",
    "1",
    "-1",
    "12.3400",
    ".5",
    "-922337203685477.5808",
    "1234567890123456789",
    "12345678901234567890",
    "-99999999999999999999999999999999999999",
    "0.00000000000000000000000000000000000001",
];

fn builder(py: Python<'_>) -> &Builder {
    BUILDER.get_or_init(py, || match verified_type(py) {
        Ok(Some(t)) => Builder::Layout(t),
        _ => Builder::Constructor,
    })
}

/// The Decimal type if the fast layout holds for it in this process.
fn verified_type(py: Python<'_>) -> PyResult<Option<Py<PyType>>> {
    let decimal = cache::decimal_type(py)?;
    let tp = decimal.as_type_ptr();
    // SAFETY: `tp` is the live Decimal type object; reading its size fields is plain access.
    let (basicsize, itemsize) = unsafe { ((*tp).tp_basicsize, (*tp).tp_itemsize) };
    let c_module = py
        .import("decimal")?
        .getattr("__name__")?
        .extract::<String>()?
        == "decimal"
        && py.import("_decimal").is_ok()
        && py
            .import("decimal")?
            .getattr("MAX_PREC")?
            .extract::<i64>()?
            == 999_999_999_999_999_999;
    if !c_module
        || usize::try_from(basicsize).ok() != Some(std::mem::size_of::<PyDecObject>())
        || itemsize != 0
    {
        return Ok(None);
    }
    for text in SAMPLES {
        let reference = decimal.call1((*text,))?;
        let parts = decimal_parts(text.as_bytes()).expect("samples are plain decimals");
        // SAFETY: `tp` has the checked basic size; the object is complete before anyone sees it.
        let fast = unsafe { Bound::from_owned_ptr(py, build(py, tp, &parts)?) };
        // SAFETY: both objects are live Decimals of `basicsize` bytes (checked above).
        let same_fields = unsafe {
            let a = &*reference.as_ptr().cast::<PyDecObject>();
            let b = &*fast.as_ptr().cast::<PyDecObject>();
            // A negative word count (never from `_decimal`) fails the `words <= 2` test.
            let words = usize::try_from(a.dec.len).unwrap_or(usize::MAX);
            a.dec.flags == b.dec.flags
                && a.dec.exp == b.dec.exp
                && a.dec.digits == b.dec.digits
                && a.dec.len == b.dec.len
                && a.dec.alloc == b.dec.alloc
                && std::ptr::eq(a.dec.data, a.data.as_ptr())
                && words <= 2
                && a.data[..words] == b.data[..words]
        };
        if !same_fields
            || !reference.eq(&fast)?
            || reference.str()?.to_str()? != fast.str()?.to_str()?
            || reference.hash()? != fast.hash()?
        {
            return Ok(None);
        }
    }
    Ok(Some(decimal.clone().unbind()))
}

/// A new Decimal of `parts` laid out as `_decimal` lays one out.
///
/// # Safety
/// `tp` must be a Decimal type whose instances are `PyDecObject`s (see [`verified_type`]).
unsafe fn build(
    py: Python<'_>,
    tp: *mut ffi::PyTypeObject,
    parts: &DecimalParts,
) -> PyResult<*mut ffi::PyObject> {
    // SAFETY: `tp_alloc` (inherited generic allocator) returns a zeroed, initialised instance of
    // `tp`, or NULL with an exception set.
    unsafe {
        let alloc = (*tp).tp_alloc.unwrap_or(ffi::PyType_GenericAlloc);
        let obj = alloc(tp, 0);
        if obj.is_null() {
            return Err(PyErr::fetch(py));
        }
        let d = &mut *obj.cast::<PyDecObject>();
        d.hash = -1;
        d.data[0] = parts.words[0];
        d.data[1] = parts.words[1];
        d.dec = MpdT {
            flags: MPD_STATIC | MPD_STATIC_DATA | if parts.negative { MPD_NEG } else { 0 },
            exp: parts.exponent as isize,
            digits: isize::try_from(parts.digits).unwrap_or(isize::MAX),
            len: parts.len as isize,
            alloc: 4,
            data: d.data.as_mut_ptr(),
        };
        Ok(obj)
    }
}

/// Why a numeric cell did not become a Decimal.
pub enum DecimalFailure {
    /// Not decimal text at all (the caller names the cell).
    NotDecimal,
    Python(PyErr),
}

/// A new Decimal for the driver's text of a numeric cell.
#[inline]
pub fn new_decimal<'py>(
    py: Python<'py>,
    bytes: &[u8],
) -> Result<Bound<'py, PyAny>, DecimalFailure> {
    if let (Builder::Layout(tp), Some(parts)) = (builder(py), decimal_parts(bytes)) {
        let tp = tp.as_ptr().cast::<ffi::PyTypeObject>();
        // SAFETY: the layout of `tp` was verified for this process; `build` returns a new
        // reference, owned by the `Bound` from here on.
        return unsafe { build(py, tp, &parts).map(|p| Bound::from_owned_ptr(py, p)) }
            .map_err(DecimalFailure::Python);
    }
    // NaN, infinities, beyond 38 digits, or no verified layout: the constructor.
    let text = decimal_text(bytes).ok_or(DecimalFailure::NotDecimal)?;
    let decimal = cache::decimal_type(py).map_err(DecimalFailure::Python)?;
    decimal.call1((text,)).map_err(DecimalFailure::Python)
}

/// A new Decimal for the parts of a numeric struct.
#[inline]
pub fn decimal_from_parts<'py>(
    py: Python<'py>,
    parts: &DecimalParts,
) -> PyResult<Bound<'py, PyAny>> {
    if let Builder::Layout(tp) = builder(py) {
        let tp = tp.as_ptr().cast::<ffi::PyTypeObject>();
        // SAFETY: as in `new_decimal`.
        return unsafe { build(py, tp, parts).map(|p| Bound::from_owned_ptr(py, p)) };
    }
    cache::decimal_type(py)?.call1((parts.to_text(),))
}

/// Whether this process builds Decimals through the verified layout (for tests and reports).
pub fn fast_path(py: Python<'_>) -> bool {
    matches!(builder(py), Builder::Layout(_))
}

/// An exact `Decimal` of at most 38 digits into the next cell of an `executemany` parameter
/// column, read from its `str()` (`None`: anything else, including NaN, the infinities, and
/// values a `fast_executemany` check or the DBMS may refuse: `to_param` and its checks say why).
pub fn param_cell(v: &Bound<'_, PyAny>, col: &mut ArrayColumn) -> Option<Put> {
    use crate::types::decimal::text::{parse_decimal_str, plain_text};
    if !v.get_type().is(cache::decimal_type(v.py()).ok()?) {
        return None;
    }
    let text = v.str().ok()?;
    let (negative, digits, exponent) = parse_decimal_str(text.to_str().ok()?)?;
    // The digits before the point, from the exponent, before any text is written.
    let whole = i64::try_from(digits.len()).ok()?.checked_add(exponent)?;
    if whole > 38 || exponent < -38 {
        return None;
    }
    let (text, precision, scale) = plain_text(negative, &digits, exponent).ok()?;
    if precision > 38 || scale > 38 {
        return None;
    }
    Some(col.push_decimal(&text, precision, scale))
}
