//! The uniqueidentifier Python arm: `uuid.UUID`, or upper-case `str` (connection.native_uuid
//! off).

use super::super::cache;
use super::cell::{CellFail, Fill};
use crate::batch::ColumnBuffer;
use crate::types::CellKind;
use crate::types::guid::{guid_text, guid_to_u128};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString};

/// Fill a uniqueidentifier column's served range.
pub fn fill(f: &Fill<'_, '_>, buf: &ColumnBuffer, _kind: CellKind) -> Result<(), CellFail> {
    let py = f.py;
    if f.plan.uuid_as_str {
        return f.each(buf, |r| {
            let mut text = guid_text(guid_to_u128(buf.guid(r)));
            text.make_ascii_uppercase();
            Ok(PyString::new(py, &String::from_utf8_lossy(&text)).into_any())
        });
    }
    f.each(buf, |r| uuid(py, guid_to_u128(buf.guid(r))))
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
