//! The Python half of a result set's plan: each column's decoder (plain, or a converter), the
//! row schema (names, index, `description`), decided once per result set and again only when
//! the epoch moves (a converter or decoding setting changed).

use super::cache;
use super::row::{RowSchema, row_type};
use crate::decode::TextErrors;
use crate::plan::{CellKind, ResultPlan};
use pyo3::prelude::*;
use pyo3::types::{PyDate, PyDateTime, PyDict, PyString, PyTime, PyTuple};
use std::collections::HashMap;
use std::sync::Arc;

/// How one column's cells become Python values.
pub enum ColumnDecoder {
    Plain(CellKind),
    /// A pyodbc-style output converter: called with the cell's raw bytes (see `raw_bytes`).
    Converted(CellKind, Py<PyAny>),
}

/// The Python half of a result set's plan.
pub struct PyPlan {
    pub epoch: u64,
    pub generation: u64,
    pub core: Arc<ResultPlan>,
    pub decoders: Vec<ColumnDecoder>,
    pub schema: Py<RowSchema>,
    /// `ferrodbc.Row`, held here so the hot path does not look it up.
    pub row_type: Py<pyo3::types::PyType>,
    pub errors: TextErrors,
    /// uniqueidentifier as upper-case `str` instead of `uuid.UUID` (connection.native_uuid off).
    pub uuid_as_str: bool,
}

/// The Python type a column's values have, used as `description` type code (pyodbc style).
/// Built-in and datetime types come straight from their type objects: no import per column.
fn type_code<'py>(
    py: Python<'py>,
    kind: CellKind,
    uuid_as_str: bool,
) -> PyResult<Bound<'py, PyAny>> {
    use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyString as Str};
    Ok(match kind {
        CellKind::Bit => py.get_type::<PyBool>().into_any(),
        CellKind::I16 | CellKind::I32 | CellKind::I64 => py.get_type::<PyInt>().into_any(),
        CellKind::F32 | CellKind::F64 => py.get_type::<PyFloat>().into_any(),
        CellKind::Decimal { .. } | CellKind::LongDecimal | CellKind::Numeric { .. } => {
            cache::decimal_type(py)?.clone().into_any()
        }
        CellKind::Date => py.get_type::<PyDate>().into_any(),
        CellKind::TimeText | CellKind::SsTime2 => py.get_type::<PyTime>().into_any(),
        CellKind::Timestamp | CellKind::TimestampOffset | CellKind::OffsetText => {
            py.get_type::<PyDateTime>().into_any()
        }
        CellKind::Guid if uuid_as_str => py.get_type::<Str>().into_any(),
        CellKind::Guid => cache::uuid_type(py)?.clone().into_any(),
        CellKind::WText { .. } | CellKind::LongWText => py.get_type::<Str>().into_any(),
        CellKind::Binary { .. } | CellKind::LongBinary => py.get_type::<PyBytes>().into_any(),
        CellKind::Variant => py.get_type::<PyAny>().into_any(),
    })
}

impl PyPlan {
    /// The same decoders and schema for another epoch's result set of the same shape (the plan
    /// itself is still shared with lazy rows of the earlier one, which keep decoding with it).
    pub fn rebased(&self, py: Python<'_>, epoch: u64, core: Arc<ResultPlan>) -> PyPlan {
        PyPlan {
            epoch,
            generation: self.generation,
            core,
            decoders: self
                .decoders
                .iter()
                .map(|d| match d {
                    ColumnDecoder::Plain(k) => ColumnDecoder::Plain(*k),
                    ColumnDecoder::Converted(k, f) => ColumnDecoder::Converted(*k, f.clone_ref(py)),
                })
                .collect(),
            schema: self.schema.clone_ref(py),
            row_type: self.row_type.clone_ref(py),
            errors: self.errors,
            uuid_as_str: self.uuid_as_str,
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub fn build(
        py: Python<'_>,
        core: Arc<ResultPlan>,
        epoch: u64,
        generation: u64,
        converters: &HashMap<i16, Py<PyAny>>,
        errors: TextErrors,
        uuid_as_str: bool,
        lowercase: bool,
    ) -> PyResult<PyPlan> {
        let mut names = Vec::with_capacity(core.columns.len());
        let mut description = Vec::with_capacity(core.columns.len());
        let index = PyDict::new(py);
        let mut decoders = Vec::with_capacity(core.columns.len());
        for (i, col) in core.columns.iter().enumerate() {
            let name = if lowercase {
                PyString::intern(py, &col.desc.name.to_lowercase())
            } else {
                PyString::intern(py, &col.desc.name)
            };
            index.set_item(&name, i)?;
            let size = if col.desc.size == 0 {
                None
            } else {
                Some(col.desc.size)
            };
            let converter = converters.get(&col.desc.sql_type);
            // A converted text column is read as bytes (see `ResultPlan::build_with_raw`); its
            // description still names the SQL type's Python type, as pyodbc's does.
            let described = match (converter, col.kind) {
                (Some(_), CellKind::Binary { .. } | CellKind::LongBinary)
                    if crate::plan::is_text_sql_type(col.desc.sql_type) =>
                {
                    CellKind::LongWText
                }
                (_, kind) => kind,
            };
            let d = (
                name.clone(),
                type_code(py, described, uuid_as_str)?,
                py.None(),
                size,
                size,
                col.desc.decimal_digits,
                col.desc.nullable.unwrap_or(true),
            );
            description.push(d.into_pyobject(py)?);
            names.push(name);
            decoders.push(match converter {
                Some(f) => ColumnDecoder::Converted(col.kind, f.clone_ref(py)),
                None => ColumnDecoder::Plain(col.kind),
            });
        }
        let schema = RowSchema {
            names: PyTuple::new(py, names)?.unbind(),
            index: index.unbind(),
            description: PyTuple::new(py, description)?.unbind(),
        };
        Ok(PyPlan {
            epoch,
            generation,
            core,
            decoders,
            schema: Py::new(py, schema)?,
            row_type: row_type(py)?.clone().unbind(),
            errors,
            uuid_as_str,
        })
    }
}
