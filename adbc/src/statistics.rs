//! GetStatistics: each table's row count, from ODBC's `SQLStatistics` (its SQL_TABLE_STAT row's
//! CARDINALITY; SQL Server's `sp_statistics`). `approximate` asks the driver for SQL_QUICK
//! (the count the server keeps, maybe stale) instead of SQL_ENSURE. GetStatisticNames: no
//! driver-specific statistics, so an empty list.

use crate::connection::{FerrodbcConnection, Reader, batches_reader};
use crate::error::Result;
use crate::nested::{list, list_field, strings, struct_array, struct_fields};
use crate::objects::{Filter, tables};
use crate::session::cell;
use adbc_core::options::ObjectDepth;
use adbc_core::schemas::{GET_STATISTIC_NAMES_SCHEMA, GET_STATISTICS_SCHEMA};
use arrow_array::{
    ArrayRef, BooleanArray, Int16Array, Int64Array, RecordBatch, UnionArray, new_empty_array,
};
use arrow_buffer::ScalarBuffer;
use arrow_schema::DataType;
use ferrodbc::catalog::CatalogCall;
use std::collections::BTreeMap;
use std::sync::Arc;

/// ADBC's standard statistic key for a row count (`ADBC_STATISTIC_ROW_COUNT_KEY`).
const ROW_COUNT: i16 = 6;
/// `SQL_TABLE_STAT` in SQLStatistics' TYPE column.
const SQL_TABLE_STAT: i64 = 0;

/// catalog -> schema -> [(table, row count)].
type Counts = BTreeMap<Option<String>, BTreeMap<Option<String>, Vec<(String, i64)>>>;

pub fn get_statistic_names() -> Result<Reader> {
    let schema = GET_STATISTIC_NAMES_SCHEMA.clone();
    Ok(batches_reader(
        schema.clone(),
        vec![RecordBatch::new_empty(schema)],
    ))
}

pub fn get_statistics(
    conn: &FerrodbcConnection,
    catalog: Option<&str>,
    db_schema: Option<&str>,
    table_name: Option<&str>,
    approximate: bool,
) -> Result<Reader> {
    let filter = Filter {
        depth: ObjectDepth::Tables,
        catalog,
        db_schema,
        table_name,
        table_type: Some(vec!["TABLE"]),
        column_name: None,
    };
    let mut tree = Counts::new();
    for [cat, schema, name, _] in tables(conn, &filter)? {
        let Some(name) = name else { continue };
        let (_, batches) = conn.session.catalog(&CatalogCall::Statistics {
            catalog: cat.clone(),
            schema: schema.clone(),
            table: name.clone(),
            unique_only: false,
            quick: approximate,
        })?;
        let count = batches.iter().find_map(|b| {
            (0..b.num_rows()).find_map(|r| {
                (cell::int(b, 6, r) == Some(SQL_TABLE_STAT))
                    .then(|| cell::int(b, 10, r))
                    .flatten()
            })
        });
        if let Some(n) = count {
            tree.entry(cat)
                .or_default()
                .entry(schema)
                .or_default()
                .push((name, n));
        }
    }

    let schema = GET_STATISTICS_SCHEMA.clone();
    let schemas_dt = schema.field(1).data_type().clone();
    let db_schema_dt = list_field(&schemas_dt).data_type().clone();
    let stats_dt = struct_fields(&db_schema_dt)[1].data_type().clone();
    let stat_dt = list_field(&stats_dt).data_type().clone();
    let value_dt = struct_fields(&stat_dt)[3].data_type().clone();

    let mut cat_names = Vec::new();
    let mut schema_lens = Vec::new();
    let mut schema_names = Vec::new();
    let mut stat_lens = Vec::new();
    let mut rows: Vec<(String, i64)> = Vec::new();
    for (cat, schemas) in &tree {
        cat_names.push(cat.clone());
        schema_lens.push(Some(schemas.len()));
        for (s, tables) in schemas {
            schema_names.push(s.clone());
            stat_lens.push(Some(tables.len()));
            rows.extend(tables.iter().cloned());
        }
    }
    let DataType::Union(value_fields, _) = &value_dt else {
        unreachable!("statistic_value is a union");
    };
    let children: Vec<ArrayRef> = value_fields
        .iter()
        .map(|(id, f)| -> ArrayRef {
            if id == 0 {
                Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.1)))
            } else {
                new_empty_array(f.data_type())
            }
        })
        .collect();
    let values = UnionArray::try_new(
        value_fields.clone(),
        ScalarBuffer::from(vec![0i8; rows.len()]),
        Some(ScalarBuffer::from(
            (0..rows.len() as i32).collect::<Vec<_>>(),
        )),
        children,
    )?;
    let stats = struct_array(
        &stat_dt,
        vec![
            strings(rows.iter().map(|r| Some(r.0.as_str()))),
            strings(rows.iter().map(|_| None)),
            Arc::new(Int16Array::from(vec![ROW_COUNT; rows.len()])),
            Arc::new(values),
            Arc::new(BooleanArray::from(vec![approximate; rows.len()])),
        ],
    );
    let db_schemas = struct_array(
        &db_schema_dt,
        vec![
            strings(schema_names.iter().map(Option::as_deref)),
            list(&stats_dt, &stat_lens, stats),
        ],
    );
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            strings(cat_names.iter().map(Option::as_deref)),
            list(&schemas_dt, &schema_lens, db_schemas),
        ],
    )?;
    Ok(batches_reader(schema, vec![batch]))
}
