//! The Python binding: the only module that uses PyO3. `ferrodbc._native`.
//! (`decimal`, `decode`, `plan` and `text` are public for the benches in `benches/`.)

mod arrow;
mod cache;
mod connection;
mod cursor;
pub mod decimal;
pub mod decode;
pub mod errors;
mod objects;
mod output;
mod params;
pub mod plan;
mod row;
pub mod text;

use pyo3::prelude::*;

/// The engine's path counters: driver fetch calls, SQLGetData calls, plans built, column binds,
/// buffer allocations, executes.
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
    decimal::fast_path(py)
}

/// Close every pooled (parked) connection.
#[pyfunction]
fn clear_pool(py: Python<'_>) {
    py.detach(crate::pool::clear);
}

#[pymodule(gil_used = true)]
fn _native(py: Python<'_>, m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<connection::Connection>()?;
    m.add_class::<cursor::Cursor>()?;
    m.add("Row", row::row_type(py)?)?;
    m.add_class::<output::Output>()?;
    m.add_class::<arrow::RecordBatchStream>()?;
    m.add_function(wrap_pyfunction!(counters, m)?)?;
    m.add_function(wrap_pyfunction!(reset_counters, m)?)?;
    m.add_function(wrap_pyfunction!(_decimal_fast_path, m)?)?;
    m.add_function(wrap_pyfunction!(clear_pool, m)?)?;
    errors::register(py, m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
