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
