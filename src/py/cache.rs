//! Python types and objects looked up once per process (decimal.Decimal, uuid.UUID, timezones).

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};
use std::collections::HashMap;
use std::sync::Mutex;

static DECIMAL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static UUID: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static MAPPING_PROXY: PyOnceLock<Py<PyType>> = PyOnceLock::new();

pub fn decimal_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    DECIMAL.import(py, "decimal", "Decimal")
}

pub fn uuid_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    UUID.import(py, "uuid", "UUID")
}

pub fn mapping_proxy_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    MAPPING_PROXY.import(py, "types", "MappingProxyType")
}

/// `datetime.timezone` objects by offset in minutes: DATETIMEOFFSET columns repeat a handful of
/// offsets, so each is built once (mssql-python built one per cell).
static TIMEZONES: Mutex<Option<HashMap<i16, Py<PyAny>>>> = Mutex::new(None);

pub fn timezone(py: Python<'_>, offset_minutes: i16) -> PyResult<Bound<'_, PyAny>> {
    {
        let guard = TIMEZONES.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(tz) = guard.as_ref().and_then(|m| m.get(&offset_minutes)) {
            return Ok(tz.bind(py).clone());
        }
    }
    let datetime = py.import("datetime")?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("minutes", offset_minutes)?;
    let delta = datetime.getattr("timedelta")?.call((), Some(&kwargs))?;
    let tz = datetime.getattr("timezone")?.call1((delta,))?;
    let mut guard = TIMEZONES.lock().unwrap_or_else(|e| e.into_inner());
    guard
        .get_or_insert_with(HashMap::new)
        .insert(offset_minutes, tz.clone().unbind());
    Ok(tz)
}

static SAFE_UUID_UNKNOWN: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// A `uuid.UUID` built without running its Python `__init__` (about a microsecond of argument
/// checks per cell): allocate the instance and set its two slots, exactly what `__init__` ends
/// with (`object.__setattr__(self, 'int', int)` and `'is_safe'`).
pub fn new_uuid(py: Python<'_>, value: u128) -> PyResult<*mut pyo3::ffi::PyObject> {
    use pyo3::ffi;
    let uuid = uuid_type(py)?;
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
    // zeroed slots (or NULL with an exception set); the generic setattr then fills the `int` and
    // `is_safe` slots through their descriptors, as `object.__setattr__` does. On any failure the
    // half-built object is released before returning.
    unsafe {
        let alloc = (*type_ptr).tp_alloc.unwrap_or(ffi::PyType_GenericAlloc);
        let obj = alloc(type_ptr, 0);
        if obj.is_null() {
            return Err(PyErr::fetch(py));
        }
        let int_name = pyo3::intern!(py, "int");
        let safe_name = pyo3::intern!(py, "is_safe");
        if ffi::PyObject_GenericSetAttr(obj, int_name.as_ptr(), int.as_ptr()) != 0
            || ffi::PyObject_GenericSetAttr(obj, safe_name.as_ptr(), unknown.as_ptr()) != 0
        {
            ffi::Py_DecRef(obj);
            return Err(PyErr::fetch(py));
        }
        Ok(obj)
    }
}
