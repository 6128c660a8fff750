//! Bound Arrow parameters (`bind`, `bind_stream`) as the engine's parameter rows: one value per
//! cell, then the engine binds them as it binds `executemany`'s rows (parameter arrays, one round
//! trip per ~16 MiB request), so the `?` markers get the same SQL types as from Python.
//!
//! Each column is read by the engine's own Arrow reader, [`ferrodbc::bulk::arrow::put_array`]
//! into a [`ParamSink`] (the path `bulkcopy_arrow` takes on drivers without bcp), so a bound
//! parameter gets exactly the value a bulk-loaded cell would: the type rules live in the engine's
//! families, not here. The one thing the reader cannot see is a field's extension type:
//! `arrow.uuid` (fixed_size_binary(16), RFC 4122 byte order) is bound as a `Guid` here.

use crate::error::{Result, err, not_implemented};
use adbc_core::error::Status;
use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, Field};
use ferrodbc::bulk::arrow::{check_type, put_array};
use ferrodbc::bulk::encode::ParamSink;
use ferrodbc::params::ParamValue;

fn is_uuid(field: &Field) -> bool {
    matches!(field.data_type(), DataType::FixedSizeBinary(16))
        && field
            .metadata()
            .get("ARROW:extension:name")
            .is_some_and(|n| n == "arrow.uuid")
}

/// One column of `batch` as engine values, row by row.
fn column_values(array: &dyn Array, field: &Field) -> Result<Vec<ParamValue>> {
    let mut out = Vec::with_capacity(array.len());
    if is_uuid(field) {
        let arr = array.as_fixed_size_binary();
        for i in 0..arr.len() {
            if arr.is_null(i) {
                out.push(ParamValue::Null);
                continue;
            }
            // 16 bytes by the field's type (checked in `is_uuid`); an error, not a panic, if not.
            let b = <[u8; 16]>::try_from(arr.value(i)).map_err(|_| {
                err(
                    Status::InvalidData,
                    format!("parameter {:?}, row {i}: not 16 bytes", field.name()),
                )
            })?;
            out.push(ParamValue::Guid(u128::from_be_bytes(b)));
        }
        return Ok(out);
    }
    if let Err(why) = check_type(array.data_type()) {
        return Err(not_implemented(&format!(
            "parameter {:?}: {why}",
            field.name()
        )));
    }
    put_array(array, &mut ParamSink { out: &mut out }).map_err(|e| {
        err(
            Status::InvalidData,
            format!("parameter {:?}, row {}: {}", field.name(), e.row, e.reason),
        )
    })?;
    Ok(out)
}

/// The rows of `batches` as parameter rows (row-major, as the engine binds them).
pub fn rows_of(batches: &[RecordBatch]) -> Result<Vec<Vec<ParamValue>>> {
    let mut rows = Vec::new();
    for batch in batches {
        let schema = batch.schema();
        let mut cols = Vec::with_capacity(batch.num_columns());
        for (array, field) in batch.columns().iter().zip(schema.fields()) {
            cols.push(column_values(array.as_ref(), field)?.into_iter());
        }
        for _ in 0..batch.num_rows() {
            rows.push(
                cols.iter_mut()
                    .map(|c| c.next().unwrap_or(ParamValue::Null))
                    .collect(),
            );
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Date32Array, Decimal128Array, FixedSizeBinaryArray, Int64Array};
    use std::collections::HashMap;

    fn values(array: &dyn Array, field: &Field) -> Vec<ParamValue> {
        column_values(array, field).expect("bound")
    }

    #[test]
    fn the_engine_reader_gives_the_values() {
        let f = Field::new("d", DataType::Decimal128(12, 3), true);
        let a = Decimal128Array::from(vec![Some(-5), None])
            .with_precision_and_scale(12, 3)
            .unwrap();
        let v = values(&a, &f);
        assert!(matches!(&v[0], ParamValue::Decimal { text, .. } if text == "-0.005"));
        assert!(matches!(v[1], ParamValue::Null));

        let f = Field::new("day", DataType::Date32, true);
        let v = values(&Date32Array::from(vec![0]), &f);
        assert!(matches!(v[0], ParamValue::Date(d) if (d.year, d.month, d.day) == (1970, 1, 1)));

        let f = Field::new("i", DataType::Int64, true);
        assert!(matches!(
            values(&Int64Array::from(vec![7]), &f)[0],
            ParamValue::Int(7)
        ));
    }

    #[test]
    fn uuid_fields_are_guids_in_rfc_order() {
        let meta = HashMap::from([("ARROW:extension:name".to_owned(), "arrow.uuid".to_owned())]);
        let f = Field::new("u", DataType::FixedSizeBinary(16), true).with_metadata(meta);
        let bytes: Vec<u8> = (1..=16).collect();
        let a = FixedSizeBinaryArray::try_from_iter([bytes.clone()].into_iter()).unwrap();
        let v = values(&a, &f);
        assert!(
            matches!(v[0], ParamValue::Guid(g) if g == u128::from_be_bytes(bytes.try_into().unwrap()))
        );
    }

    #[test]
    fn refused_types_name_the_parameter() {
        let f = Field::new(
            "m",
            DataType::Duration(arrow_schema::TimeUnit::Second),
            true,
        );
        let a = arrow_array::DurationSecondArray::from(vec![1]);
        let e = column_values(&a, &f).unwrap_err();
        assert!(e.message.contains("\"m\""), "{}", e.message);
    }
}
