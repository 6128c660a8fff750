//! The Python binding: the only module that uses PyO3. `ferrodbc._native`.
//! (`decimal`, `decode`, `plan` and `text` are public for the benches in `benches/`.)

mod arrow;
mod cache;
pub(crate) mod call_gate;
mod compat;
mod connection;
mod cursor;
pub mod decode;
pub mod errors;
mod lazy;
mod output;
mod params;
pub mod plan;
mod row;
mod shape;
mod shared;
pub mod types;

use pyo3::prelude::*;

/// The engine's path counters: driver fetch calls, SQLGetData calls, plans built, column binds,
/// buffer allocations, executes, connects, row arrays left to the lazy rows pinning them.
#[pyfunction]
fn counters() -> std::collections::HashMap<&'static str, u64> {
    crate::counters::snapshot().into_iter().collect()
}

#[pyfunction]
fn reset_counters() {
    crate::counters::reset();
}

/// Whether Decimals are built through the verified `_decimal` layout (else `Decimal(text)`).
#[pyfunction]
fn _decimal_fast_path(py: Python<'_>) -> bool {
    types::decimal::fast_path(py)
}

/// Close every pooled (parked) connection.
#[pyfunction]
fn clear_pool(py: Python<'_>) {
    py.detach(crate::pool::clear);
}

/// The parked (pooled) connections, `[(connection string with secrets replaced, count)]`.
#[pyfunction]
fn _pool_status(py: Python<'_>) -> Vec<(String, usize)> {
    py.detach(crate::pool::status)
}

/// `value` quoted for `KEY=value` in a connection string (braces only where needed).
#[pyfunction]
fn _quote_connection_value(value: &str) -> String {
    crate::connstr::quote_value(value)
}

/// The connection string with every password or token value replaced by `***`.
#[pyfunction]
fn _redact_connection_string(connection_string: &str) -> String {
    crate::connstr::redact(connection_string)
}

/// The names of the installed ODBC drivers (pyodbc's `drivers()`).
#[pyfunction]
fn drivers(py: Python<'_>) -> PyResult<Vec<String>> {
    use errors::IntoPyResult;
    py.detach(crate::odbc::drivers).py(py)
}

/// The configured data sources, `{name: driver description}` (pyodbc's `dataSources()`).
#[pyfunction]
#[pyo3(name = "dataSources")]
fn data_sources(py: Python<'_>) -> PyResult<std::collections::HashMap<String, String>> {
    use errors::IntoPyResult;
    Ok(py
        .detach(crate::odbc::data_sources)
        .py(py)?
        .into_iter()
        .collect())
}

/// The process's ODBC environment handle as a `ctypes.c_void_p` (pyodbc's `henv`).
#[pyfunction]
fn _henv(py: Python<'_>) -> PyResult<Py<PyAny>> {
    use errors::IntoPyResult;
    let address = crate::odbc::environment_address().py(py)?;
    compat::void_p(py, address)
}

#[pymodule(gil_used = true)]
fn _native(py: Python<'_>, m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<connection::Connection>()?;
    m.add_class::<cursor::Cursor>()?;
    m.add("Row", row::row_type(py)?)?;
    m.add("_ListRow", row::list_row_type(py)?)?;
    m.add_class::<lazy::LazyRow>()?;
    m.add_class::<output::Output>()?;
    m.add_class::<arrow::RecordBatchStream>()?;
    m.add_function(wrap_pyfunction!(counters, m)?)?;
    m.add_function(wrap_pyfunction!(reset_counters, m)?)?;
    m.add_function(wrap_pyfunction!(_decimal_fast_path, m)?)?;
    m.add_function(wrap_pyfunction!(clear_pool, m)?)?;
    m.add_function(wrap_pyfunction!(_pool_status, m)?)?;
    m.add_function(wrap_pyfunction!(_quote_connection_value, m)?)?;
    m.add_function(wrap_pyfunction!(_redact_connection_string, m)?)?;
    m.add_function(wrap_pyfunction!(drivers, m)?)?;
    m.add_function(wrap_pyfunction!(data_sources, m)?)?;
    m.add_function(wrap_pyfunction!(_henv, m)?)?;
    errors::register(py, m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
