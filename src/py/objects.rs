//! Constructors of the Python objects a cell becomes (besides `str`, text.rs, and `Decimal`,
//! decimal.rs). Each returns its new reference as a `Bound<'py, PyAny>`, which owns it (dropped
//! means released) and cannot outlive the GIL; only the row builder turns one into a bare
//! pointer, when it moves it into a row's slot (decode.rs).

use super::cache;
use crate::types::temporal as decode;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDate, PyDateTime, PyDict, PyTime, PyTzInfo};

#[inline(always)]
pub fn none(py: Python<'_>) -> Bound<'_, PyAny> {
    py.None().into_bound(py)
}

#[inline(always)]
pub fn boolean(py: Python<'_>, v: bool) -> Bound<'_, PyAny> {
    pyo3::types::PyBool::new(py, v).to_owned().into_any()
}

#[inline(always)]
pub fn int(py: Python<'_>, v: i64) -> PyResult<Bound<'_, PyAny>> {
    // SAFETY: a plain constructor: a new reference, or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyLong_FromLongLong(v)) }
}

#[inline(always)]
pub fn float(py: Python<'_>, v: f64) -> PyResult<Bound<'_, PyAny>> {
    // SAFETY: a plain constructor: a new reference, or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyFloat_FromDouble(v)) }
}

#[inline(always)]
pub fn bytes<'py>(py: Python<'py>, v: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: copies `v.len()` bytes of a valid slice into a new bytes object (or NULL + error).
    unsafe {
        Bound::from_owned_ptr_or_err(
            py,
            ffi::PyBytes_FromStringAndSize(v.as_ptr().cast(), v.len() as ffi::Py_ssize_t),
        )
    }
}

/// A struct field as the `u8` Python's constructors take. `as u8` would wrap a malformed
/// field into a valid-looking one (hour 256 became 0, month 257 became 1: found by
/// fuzz/temporal, by reading); out of range raises ValueError naming the field instead.
pub fn field(value: u16, name: &str) -> PyResult<u8> {
    u8::try_from(value).map_err(|_| {
        pyo3::exceptions::PyValueError::new_err(format!("{name} {value} is out of range"))
    })
}

pub fn date(py: Python<'_>, d: decode::Date) -> PyResult<Bound<'_, PyAny>> {
    let (m, day) = (field(d.month, "month")?, field(d.day, "day")?);
    Ok(PyDate::new(py, d.year as i32, m, day)?.into_any())
}

pub fn time(py: Python<'_>, t: decode::Time) -> PyResult<Bound<'_, PyAny>> {
    let h = field(t.hour, "hour")?;
    let (m, s) = (field(t.minute, "minute")?, field(t.second, "second")?);
    Ok(PyTime::new(py, h, m, s, t.microsecond(), None)?.into_any())
}

pub fn datetime<'py>(
    py: Python<'py>,
    ts: decode::Timestamp,
    tz: Option<&Bound<'py, PyTzInfo>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (d, t) = (ts.date, ts.time);
    Ok(PyDateTime::new(
        py,
        d.year as i32,
        field(d.month, "month")?,
        field(d.day, "day")?,
        field(t.hour, "hour")?,
        field(t.minute, "minute")?,
        field(t.second, "second")?,
        t.microsecond(),
        tz,
    )?
    .into_any())
}

/// A `uuid.UUID` for a GUID cell. `UUID.__init__` spends about a microsecond on argument checks
/// per cell; the fast path allocates the instance and sets its two slots, exactly what
/// `__init__` ends with (`object.__setattr__(self, 'int', int)` and `'is_safe'`). That relies on
/// the uuid module's private layout, so it is verified once per process against objects the
/// real constructor built; on any difference every cell goes through the constructor.
pub fn uuid(py: Python<'_>, value: u128) -> PyResult<Bound<'_, PyAny>> {
    if *UUID_FAST.get_or_init(py, || uuid_fast_path_agrees(py).unwrap_or(false)) {
        uuid_by_slots(py, value)
    } else {
        uuid_by_constructor(py, value)
    }
}

static UUID_FAST: PyOnceLock<bool> = PyOnceLock::new();
static SAFE_UUID_UNKNOWN: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Whether [`uuid_by_slots`] builds objects equal in every observable way (type, `int`, `str`,
/// `hash`, `is_safe`, `==`) to `uuid.UUID(int=...)` for the edge values.
fn uuid_fast_path_agrees(py: Python<'_>) -> PyResult<bool> {
    let samples = [
        0u128,
        1,
        u128::MAX,
        0x6f96_19ff_8b86_d011_b42d_00c0_4fc9_64ff,
    ];
    for v in samples {
        let (fast, real) = (uuid_by_slots(py, v)?, uuid_by_constructor(py, v)?);
        let same = fast.get_type().is(real.get_type())
            && fast.eq(&real)?
            && fast.str()?.to_cow()? == real.str()?.to_cow()?
            && fast.hash()? == real.hash()?
            && fast.getattr("int")?.eq(real.getattr("int")?)?
            && fast.getattr("is_safe")?.eq(real.getattr("is_safe")?)?;
        if !same {
            return Ok(false);
        }
    }
    Ok(true)
}

fn uuid_by_constructor(py: Python<'_>, value: u128) -> PyResult<Bound<'_, PyAny>> {
    let kwargs = PyDict::new(py);
    kwargs.set_item("int", value)?;
    cache::uuid_type(py)?.call((), Some(&kwargs))
}

fn uuid_by_slots(py: Python<'_>, value: u128) -> PyResult<Bound<'_, PyAny>> {
    let uuid = cache::uuid_type(py)?;
    let unknown = SAFE_UUID_UNKNOWN.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(py
            .import("uuid")?
            .getattr("SafeUUID")?
            .getattr("unknown")?
            .unbind())
    })?;
    let int = value.into_pyobject(py)?;
    let type_ptr = uuid.as_ptr().cast::<ffi::PyTypeObject>();
    // SAFETY: `type_ptr` is the live `uuid.UUID` type. Its `tp_alloc` returns a new instance with
    // zeroed slots (or NULL with an exception set), owned by `obj` from here on (released if a
    // slot cannot be set); the generic setattr fills the `int` and `is_safe` slots through their
    // descriptors, as `object.__setattr__` does.
    unsafe {
        let alloc = (*type_ptr).tp_alloc.unwrap_or(ffi::PyType_GenericAlloc);
        let obj = Bound::from_owned_ptr_or_err(py, alloc(type_ptr, 0))?;
        let int_name = pyo3::intern!(py, "int");
        let safe_name = pyo3::intern!(py, "is_safe");
        if ffi::PyObject_GenericSetAttr(obj.as_ptr(), int_name.as_ptr(), int.as_ptr()) != 0
            || ffi::PyObject_GenericSetAttr(obj.as_ptr(), safe_name.as_ptr(), unknown.as_ptr()) != 0
        {
            return Err(PyErr::fetch(py));
        }
        Ok(obj)
    }
}
