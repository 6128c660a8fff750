//! The Python-free bulk API (`crate::bulk`) on a core connection, as a non-Python caller (the
//! ADBC driver) uses it: rows and an Arrow reader into SQLite3 ODBC (the parameter-array path;
//! the bcp path is covered through Python against the TDS peer).

use _native::Connection;
use _native::bulk::{BulkError, LoadOptions, Mapping, Progress, Request, load_arrow, load_rows};
use _native::params::ParamValue;
use _native::{ErrorClass, Statement};
use arrow_array::{ArrayRef, Int64Array, RecordBatch, RecordBatchIterator, StringArray};
use std::sync::Arc;

fn sqlite() -> Connection {
    let mut conn = Connection::connect("Driver={SQLite3};Database=:memory:", true, None)
        .expect("SQLite3 ODBC (eng/setup.sh installs it)");
    let stmt = conn.new_statement().unwrap();
    let mut st = Statement::new(stmt, conn.backend());
    st.execute(
        "CREATE TABLE t (a INTEGER NOT NULL, b TEXT)",
        Vec::new(),
        &[],
    )
    .unwrap();
    drop(st);
    conn.set_autocommit(true).unwrap();
    conn
}

fn text(s: &str) -> ParamValue {
    ParamValue::Text(s.encode_utf16().collect())
}

#[test]
fn rows_load_and_a_failed_array_says_which_rows() {
    let mut conn = sqlite();
    let request = Request::new("t", LoadOptions::default(), Mapping::Position);
    let rows = (0..2500).map(|i| vec![ParamValue::Int(i), text("x")]);
    let count = load_rows(&mut conn, &request, 2, rows).unwrap();
    assert_eq!(count.rows_copied, 2500);
    assert_eq!(count.batch_count, 1);

    let rows = vec![
        vec![ParamValue::Int(1), text("y")],
        vec![ParamValue::Null, text("z")],
    ];
    let e = load_rows(&mut conn, &request, 2, rows.into_iter()).unwrap_err();
    // SQLite3 ODBC describes no column as NOT NULL, so SQLite itself refuses the row.
    assert_eq!(e.class(), ErrorClass::Database, "{e}");
    assert!(e.to_string().contains("source rows 0..2"), "{e}");
}

#[test]
fn an_arrow_reader_loads_with_progress_and_the_callers_error_comes_back() {
    let mut conn = sqlite();
    let schema = Arc::new(arrow_schema::Schema::new(vec![
        arrow_schema::Field::new("a", arrow_schema::DataType::Int64, false),
        arrow_schema::Field::new("b", arrow_schema::DataType::Utf8, true),
    ]));
    let batch = |from: i64| {
        let a: ArrayRef = Arc::new(Int64Array::from_iter_values(from..from + 100));
        let b: ArrayRef = Arc::new(StringArray::from_iter((0..100).map(|_| Some("v"))));
        RecordBatch::try_new(schema.clone(), vec![a, b]).unwrap()
    };
    let request = Request::new("t", LoadOptions::default(), Mapping::Position);
    let reader = RecordBatchIterator::new((0..3).map(|i| Ok(batch(i * 100))), schema.clone());
    let mut seen = Vec::new();
    let mut hook = |n: u64| -> Result<(), &'static str> {
        seen.push(n);
        Ok(())
    };
    let count = load_arrow(
        &mut conn,
        &request,
        reader,
        Progress::new(150, Some(&mut hook)),
    )
    .map_err(|e| format!("{e:?}"))
    .unwrap();
    assert_eq!(count.rows_copied, 300);
    assert_eq!(seen, [200, 300]);

    let reader = RecordBatchIterator::new((0..3).map(|i| Ok(batch(i * 100))), schema.clone());
    let mut stop = |_: u64| -> Result<(), &'static str> { Err("stop here") };
    let e = load_arrow(
        &mut conn,
        &request,
        reader,
        Progress::new(1, Some(&mut stop)),
    );
    assert!(matches!(e, Err(BulkError::Caller("stop here"))), "{e:?}");
}
