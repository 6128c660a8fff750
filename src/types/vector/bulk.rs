//! The vector family's bulk load: a destination `VECTOR(n)` column and Arrow vector sources.
//!
//! SQL Server describes a vector column as `varchar(max)` to the describe Driver 18's bcp
//! reads (and to every connection without native vectors), so its bcp sends the column as text:
//! each vector goes as its JSON text ([`json_text`](super::json_text), exact), which the server
//! converts. The column form is therefore the text form (`bulk/form.rs`), also where a
//! `VectorTypeSupport=v1` connection describes the column as `SQL_SS_VECTOR`.
//!
//! Arrow sources: `fixed_size_list`, `list` or `large_list` of float32 or float64; a null list is
//! NULL, a null element an error (a vector has no NULL elements), as are NaN, infinities and
//! numbers past float32's range.

use super::{element, json_text};
use crate::bulk::encode::Sink;
use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;

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
            sink.null().map_err(|why| (row, why))?;
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
        let widened: Vec<f64> = match values.data_type() {
            DataType::Float32 => values
                .as_primitive::<Float32Type>()
                .values()
                .iter()
                .map(|&f| f64::from(f))
                .collect(),
            _ => values.as_primitive::<Float64Type>().values().to_vec(),
        };
        for (i, v) in widened.into_iter().enumerate() {
            vals.push(element(v, i).map_err(|why| (row, why))?);
        }
        if vals.is_empty() {
            return Err((
                row,
                "an empty vector (SQL Server's vectors have 1 to 1998 dimensions)".into(),
            ));
        }
        sink.text(&json_text(&vals)).map_err(|why| (row, why))?;
    }
    Ok(())
}
