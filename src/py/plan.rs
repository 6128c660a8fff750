//! The Python half of a result set's plan: each column's decoder (plain, or a converter), the
//! row schema (names, index, `description`), decided once per result set and again only when
//! the epoch moves (a converter or decoding setting changed).

use super::cache;
use super::row::{RowSchema, list_row_type, row_type};
use crate::backend::Backend;
use crate::plan::{CellKind, ColumnPlan, ResultPlan};
use crate::raw_text::{RawTextEncoding, raw_text_encoding};
use crate::types::text::TextErrors;
use pyo3::prelude::*;
use pyo3::types::{PyDate, PyDateTime, PyDict, PyString, PyTime, PyTuple};
use std::collections::HashMap;
use std::sync::Arc;

/// How one column's cells become Python values.
pub enum ColumnDecoder {
    Plain(CellKind),
    /// A pyodbc-style output converter: called with the cell's raw bytes (see `raw_bytes`).
    Converted(CellKind, Py<PyAny>),
    /// A text column bound as the driver's bytes for a converter removed since (mid-result),
    /// decoded from those bytes into `str`: the encoding is known (`raw_text_encoding`).
    TextFromRaw(CellKind, RawTextEncoding),
    /// A converter added mid-result to a text column bound as UTF-16 whose driver bytes are
    /// UTF-8 (psqlODBC): called with the text encoded as UTF-8, the bytes the driver would give.
    ConvertedUtf8(CellKind, Py<PyAny>),
    /// A column whose values cannot be given exactly any more (see [`choose_decoder`]): every
    /// fetch refuses the plan before touching a row ([`PyPlan::readable`]), so this never
    /// decodes a cell; if it is ever reached, it raises the same error. Holds the converter now
    /// registered for the column's SQL type, if any (Arrow refuses converters first).
    Refused(CellKind, Option<Py<PyAny>>),
}

impl ColumnDecoder {
    /// The output converter registered for the column's SQL type, if any (the one it calls).
    pub fn converter(&self) -> Option<&Py<PyAny>> {
        match self {
            ColumnDecoder::Converted(_, f)
            | ColumnDecoder::ConvertedUtf8(_, f)
            | ColumnDecoder::Refused(_, Some(f)) => Some(f),
            _ => None,
        }
    }

    fn clone_ref(&self, py: Python<'_>) -> ColumnDecoder {
        match self {
            ColumnDecoder::Plain(k) => ColumnDecoder::Plain(*k),
            ColumnDecoder::Converted(k, f) => ColumnDecoder::Converted(*k, f.clone_ref(py)),
            ColumnDecoder::TextFromRaw(k, e) => ColumnDecoder::TextFromRaw(*k, *e),
            ColumnDecoder::ConvertedUtf8(k, f) => ColumnDecoder::ConvertedUtf8(*k, f.clone_ref(py)),
            ColumnDecoder::Refused(k, f) => {
                ColumnDecoder::Refused(*k, f.as_ref().map(|f| f.clone_ref(py)))
            }
        }
    }
}

/// One column's decoder, from how it is bound and the converter now registered for its SQL type.
///
/// Bindings are chosen at execute with the converters then in force and do not change within a
/// result set; converters may change at any time and apply from the next fetch. Rebinding in
/// the middle of a result set is not an option (rows already fetched into the row array, and the
/// next array the prefetch thread may be reading, are in the old binding), so this decides, once
/// per plan and never per value, what the binding still allows exactly:
///
/// | bound as              | converter now | decoder                                          |
/// |-----------------------|---------------|--------------------------------------------------|
/// | driver's bytes        | yes           | the converter gets those bytes (as at execute)   |
/// | driver's bytes        | no            | `str` when their encoding is known, else refused  |
/// | UTF-16 text           | yes           | the bytes the driver would give when their encoding is known, else refused |
/// | anything else         | either        | as at execute                                    |
///
/// "Known" is `raw_text_encoding`: SQL Server's wide types (UTF-16LE), psqlODBC's (UTF-8).
/// A narrow column's code page is not known: its bytes are never guessed at.
fn choose_decoder(
    py: Python<'_>,
    col: &ColumnPlan,
    converter: Option<&Py<PyAny>>,
    backend: Backend,
) -> ColumnDecoder {
    let kind = col.kind;
    let encoding = raw_text_encoding(col.desc.sql_type, backend);
    let read_as_text = matches!(kind, CellKind::WText { .. } | CellKind::LongWText);
    match (converter, encoding) {
        (Some(f), _) if col.raw_text => ColumnDecoder::Converted(kind, f.clone_ref(py)),
        (None, Some(e)) if col.raw_text => ColumnDecoder::TextFromRaw(kind, e),
        (None, None) if col.raw_text => ColumnDecoder::Refused(kind, None),
        // `raw_bytes` gives the code units as little-endian bytes: exactly the driver's.
        (Some(f), Some(RawTextEncoding::Utf16Le)) if read_as_text => {
            ColumnDecoder::Converted(kind, f.clone_ref(py))
        }
        (Some(f), Some(RawTextEncoding::Utf8)) if read_as_text => {
            ColumnDecoder::ConvertedUtf8(kind, f.clone_ref(py))
        }
        (Some(f), None) if read_as_text => ColumnDecoder::Refused(kind, Some(f.clone_ref(py))),
        (Some(f), _) => ColumnDecoder::Converted(kind, f.clone_ref(py)),
        (None, _) => ColumnDecoder::Plain(kind),
    }
}

/// The ProgrammingError message for a refused column: names it, says why, says what to do.
fn refusal_message(index: usize, col: &ColumnPlan) -> String {
    let why = if col.raw_text {
        "it is read as the driver's bytes for the output converter registered when the query \
         was executed, that converter was removed, and the bytes' encoding (the driver's code \
         page) is not known, so they cannot become str exactly"
    } else {
        "an output converter for its SQL type was registered after the query was executed, \
         the column is read as UTF-16 text, and the driver's own bytes (in its code page) that \
         the converter expects cannot be rebuilt exactly"
    };
    format!(
        "The output converters changed in the middle of this result set and column {:?} (index \
         {index}) can no longer be read exactly: {why}. Re-execute the query to apply the \
         converters now in force (or restore the converters of the execute).",
        col.desc.name
    )
}

/// The Python half of a result set's plan.
pub struct PyPlan {
    pub epoch: u64,
    pub generation: u64,
    pub core: Arc<ResultPlan>,
    pub decoders: Vec<ColumnDecoder>,
    pub schema: Py<RowSchema>,
    /// `ferrodbc.Row` (or the face's row type), held here so the hot path does not look it up.
    pub row_type: Py<pyo3::types::PyType>,
    pub errors: TextErrors,
    /// uniqueidentifier as upper-case `str` instead of `uuid.UUID` (connection.native_uuid off).
    pub uuid_as_str: bool,
    /// Why fetches must refuse this plan (a `ColumnDecoder::Refused` column), if they must.
    pub refusal: Option<String>,
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
        CellKind::Vector { .. } => py.import("array")?.getattr("array")?,
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
            decoders: self.decoders.iter().map(|d| d.clone_ref(py)).collect(),
            schema: self.schema.clone_ref(py),
            row_type: self.row_type.clone_ref(py),
            errors: self.errors,
            uuid_as_str: self.uuid_as_str,
            refusal: self.refusal.clone(),
        }
    }

    /// `Ok` when every column can be read exactly; otherwise the ProgrammingError every fetch
    /// raises before it takes a row (so no row is lost: re-executing, or restoring the
    /// converters, reads them all).
    #[inline]
    pub fn readable(&self) -> PyResult<()> {
        match &self.refusal {
            None => Ok(()),
            Some(message) => Err(super::errors::programming(message.clone())),
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
        list_rows: bool,
    ) -> PyResult<PyPlan> {
        let mut names = Vec::with_capacity(core.columns.len());
        let mut description = Vec::with_capacity(core.columns.len());
        let index = PyDict::new(py);
        let mut decoders = Vec::with_capacity(core.columns.len());
        let mut refusal = None;
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
            // A text column read as bytes for a converter (see `ResultPlan::build_with_raw`) is
            // still described as text, as pyodbc does.
            let described = if col.raw_text {
                CellKind::LongWText
            } else {
                col.kind
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
            let converter = converters.get(&col.desc.sql_type);
            let decoder = choose_decoder(py, col, converter, core.backend);
            if matches!(decoder, ColumnDecoder::Refused(..)) && refusal.is_none() {
                refusal = Some(refusal_message(i, col));
            }
            decoders.push(decoder);
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
            row_type: if list_rows {
                list_row_type(py)?.clone().unbind()
            } else {
                row_type(py)?.clone().unbind()
            },
            errors,
            uuid_as_str,
            refusal,
        })
    }
}
