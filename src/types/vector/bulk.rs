//! The vector family's bulk load: a destination `VECTOR(n)` column and Arrow vector sources.
//!
//! Through FreeTDS, and on a connection without native vectors, SQL Server describes a vector
//! column as `varchar(max)`, so the column form is text and each vector goes as its JSON text
//! ([`json_text`](super::json_text), exact), which the server converts. On a
//! `VectorTypeSupport=v1` connection the column is described as `SQL_SS_VECTOR` and its form is
//! `Form::Vector`: Driver 18's bcp still describes the column as varchar(max) (it would send
//! text), so such a load goes as `INSERT` parameter arrays of native vectors (`bulk/run.rs`),
//! each value one copy of its floats.
//!
//! Arrow sources: `fixed_size_list`, `list` or `large_list` of float32 or float64; a null list is
//! NULL, a null element an error (a vector has no NULL elements), as are NaN, infinities and
//! numbers past float32's range.

use super::{MAX_DIMS, element, native_kind};
use crate::bulk::Form;
use crate::bulk::encode::Sink;
use crate::odbc::ColumnDescription;
use crate::params::Value;
use crate::types::CellKind;
use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;

/// The bulk-load form of a destination column described as a native float32 vector (a
/// `VectorTypeSupport=v1` connection): `Form::Vector` with its dimension count; `None` for a
/// vector of another element type.
pub fn bulk_form(desc: &ColumnDescription) -> Option<Form> {
    match native_kind(desc.size, desc.decimal_digits) {
        Some(CellKind::Vector { dims }) => Some(Form::Vector { dims }),
        _ => None,
    }
}

/// A vector of `len` elements into a `vector(dims)` column (SQL Server's 42204, checked here
/// so the row is named).
pub fn check_dims(len: usize, dims: u16) -> Result<(), String> {
    if len == usize::from(dims) {
        Ok(())
    } else {
        Err(format!(
            "a vector of {len} elements cannot go into a vector({dims}) column"
        ))
    }
}

/// Whether an Arrow type is a vector source.
pub fn is_arrow_vector(dt: &DataType) -> bool {
    match dt {
        DataType::FixedSizeList(f, _) | DataType::List(f) | DataType::LargeList(f) => {
            matches!(f.data_type(), DataType::Float32 | DataType::Float64)
        }
        _ => false,
    }
}

/// Every row of a vector source array into `sink`; `Err((row, why))` for the first row that is
/// not a vector.
pub fn put_arrow(array: &dyn Array, sink: &mut impl Sink) -> Result<(), (usize, String)> {
    let row_values = |row: usize| -> ArrayRef {
        match array.data_type() {
            DataType::FixedSizeList(..) => array.as_fixed_size_list().value(row),
            DataType::List(_) => array.as_list::<i32>().value(row),
            _ => array.as_list::<i64>().value(row),
        }
    };
    let mut vals: Vec<f32> = Vec::new();
    for row in 0..array.len() {
        if array.is_null(row) {
            sink.put(Value::Null).map_err(|why| (row, why))?;
            continue;
        }
        let values = row_values(row);
        if values.null_count() > 0 {
            return Err((
                row,
                "a vector element is null (vectors have no NULL elements)".into(),
            ));
        }
        vals.clear();
        match values.data_type() {
            // float32 elements are vector elements as they are, once known finite.
            DataType::Float32 => {
                let f = values.as_primitive::<Float32Type>().values();
                if let Some(i) = f.iter().position(|v| !v.is_finite()) {
                    return Err((row, element(f64::from(f[i]), i).err().unwrap_or_default()));
                }
                vals.extend_from_slice(f);
            }
            _ => {
                for (i, &v) in values
                    .as_primitive::<Float64Type>()
                    .values()
                    .iter()
                    .enumerate()
                {
                    vals.push(element(v, i).map_err(|why| (row, why))?);
                }
            }
        }
        if vals.is_empty() || vals.len() > usize::from(MAX_DIMS) {
            return Err((
                row,
                format!(
                    "a vector of {} elements (SQL Server's vectors have 1 to {MAX_DIMS} dimensions)",
                    vals.len()
                ),
            ));
        }
        sink.put(Value::Vector(&vals)).map_err(|why| (row, why))?;
    }
    Ok(())
}
