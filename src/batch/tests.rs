//! Batch serving on synthetic buffers: values and indicators written exactly where a driver
//! would write them, no database.

#![allow(
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    clippy::cast_possible_truncation,
    reason = "test fixtures: literal sizes and values far inside every type's range"
)]

use super::*;
use crate::backend::Dbms;
use crate::odbc::ColumnDescription;
use crate::odbc::sys::{NO_TOTAL, NULL_DATA};

fn desc(sql_type: i16, size: usize) -> ColumnDescription {
    ColumnDescription {
        name: "c".into(),
        sql_type,
        size,
        decimal_digits: 0,
        nullable: Some(true),
        unsigned: false,
    }
}

/// Write one cell as a driver does: payload into the element, length into the indicator.
fn put(col: &mut ColumnBuffer, row: usize, payload: &[u8], indicator: isize) {
    col.put_cell(row, payload, indicator)
}

fn wide(s: &str) -> Vec<u8> {
    s.encode_utf16().flat_map(u16::to_ne_bytes).collect()
}

#[test]
fn text_cells_null_empty_and_truncation() {
    let plan = ResultPlan::build(vec![desc(-9, 4)], Dbms::SqlServer);
    let mut batch = Batch::new(&plan, 4);
    let col = &mut batch.columns[0];
    put(col, 0, &wide("abcd"), 8);
    put(col, 1, &[], NULL_DATA);
    put(col, 2, &[], 0);
    put(col, 3, &wide("abcd"), 10); // driver says 5 units: truncated into a 4-unit buffer
    let col = &batch.columns[0];
    assert_eq!(
        col.text(0).unwrap(),
        "abcd".encode_utf16().collect::<Vec<_>>().as_slice()
    );
    assert!(col.is_null(1));
    assert!(!col.is_null(2));
    assert_eq!(col.text(2).unwrap(), &[] as &[u16]);
    assert_eq!(
        col.text(3),
        Err(CellError::Truncated {
            indicator: Some(10),
            capacity: 8
        })
    );
}

#[test]
fn no_total_is_an_error_not_null() {
    // mssql-python turned SQL_NO_TOTAL into None; here it is a truncation error.
    let plan = ResultPlan::build(vec![desc(-3, 4)], Dbms::SqlServer);
    let mut batch = Batch::new(&plan, 2);
    put(&mut batch.columns[0], 0, &[1, 2, 3, 4], NO_TOTAL);
    put(&mut batch.columns[0], 1, &[0, 0], 2);
    assert!(!batch.columns[0].is_null(0));
    assert_eq!(
        batch.columns[0].bytes(0),
        Err(CellError::Truncated {
            indicator: None,
            capacity: 4
        })
    );
    assert_eq!(batch.columns[0].bytes(1).unwrap(), &[0, 0]);
}

#[test]
fn fixed_width_values_read_back() {
    let plan = ResultPlan::build(
        vec![desc(4, 10), desc(-5, 19), desc(8, 15), desc(-7, 1)],
        Dbms::SqlServer,
    );
    let mut batch = Batch::new(&plan, 3);
    for r in 0..3 {
        put(
            &mut batch.columns[0],
            r,
            &(-(r as i32) * 7).to_ne_bytes(),
            4,
        );
        put(
            &mut batch.columns[1],
            r,
            &(i64::MAX - r as i64).to_ne_bytes(),
            8,
        );
        put(
            &mut batch.columns[2],
            r,
            &(r as f64 + 0.25).to_ne_bytes(),
            8,
        );
        put(&mut batch.columns[3], r, &[(r % 2) as u8], 1);
    }
    assert_eq!(batch.columns[0].i32(2), -14);
    assert_eq!(batch.columns[1].i64(1), i64::MAX - 1);
    assert_eq!(batch.columns[2].f64(2), 2.25);
    assert!(batch.columns[3].bit(1));
    assert!(!batch.columns[3].bit(2));
}

#[test]
fn text_that_ends_in_nul_keeps_it() {
    let plan = ResultPlan::build(vec![desc(-9, 8)], Dbms::SqlServer);
    let mut batch = Batch::new(&plan, 1);
    put(&mut batch.columns[0], 0, &wide("a\0"), 4);
    assert_eq!(batch.columns[0].text(0).unwrap(), &[0x61, 0]);
}

#[test]
fn a_cut_cell_read_again_is_served_whole_and_travels_with_its_row() {
    let units = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
    let plan = ResultPlan::build(vec![desc(-9, 2), desc(-3, 2)], Dbms::SqlServer);
    let mut batch = Batch::new(&plan, 3);
    put(&mut batch.columns[0], 0, &wide("ab"), 4);
    put(&mut batch.columns[0], 1, &wide("ab"), 10);
    put(&mut batch.columns[0], 2, &[], NULL_DATA);
    put(&mut batch.columns[1], 1, &[7, 7], NO_TOTAL);
    assert!(batch.columns[0].is_cut(1) && !batch.columns[0].is_cut(0));
    assert!(!batch.columns[0].is_cut(2) && batch.columns[1].is_cut(1));
    assert!(
        batch.columns[0].text(1).is_err(),
        "cut and not read again: an error"
    );
    batch.columns[0].reread.push((
        1,
        StreamedCell {
            units: units("abcde"),
            ..Default::default()
        },
    ));
    batch.columns[1].reread.push((
        1,
        StreamedCell {
            bytes: vec![7; 9],
            ..Default::default()
        },
    ));
    assert_eq!(batch.columns[0].text(1).unwrap(), units("abcde").as_slice());
    assert_eq!(batch.columns[1].bytes(1).unwrap(), &[7; 9]);
}

#[test]
fn row0_saved_and_restored_around_one_row_fetches() {
    let plan = ResultPlan::build(vec![desc(-9, 4)], Dbms::SqlServer);
    let mut batch = Batch::new(&plan, 2);
    put(&mut batch.columns[0], 0, &wide("keep"), 8);
    let saved = batch.columns[0].save_row0();
    put(&mut batch.columns[0], 0, &wide("over"), 200);
    batch.columns[0].restore_row0(saved);
    assert_eq!(
        batch.columns[0].text(0).unwrap(),
        "keep".encode_utf16().collect::<Vec<_>>().as_slice()
    );
}

#[test]
fn streamed_plans_use_one_row_arrays_and_budgets_cap_rows() {
    let lob = ResultPlan::build(vec![desc(4, 10), desc(-10, 0)], Dbms::SqlServer);
    assert_eq!(Batch::max_rows(&lob), 1);
    assert_eq!(Batch::new(&lob, 1024).capacity(), 1);
    let wide_rows = ResultPlan::build(vec![desc(-9, 4000); 4], Dbms::SqlServer);
    let max = Batch::max_rows(&wide_rows);
    assert!(
        max * wide_rows.row_bytes <= BATCH_BYTE_BUDGET && max >= 1,
        "{max}"
    );
    let narrow = ResultPlan::build(vec![desc(4, 10)], Dbms::SqlServer);
    assert_eq!(Batch::max_rows(&narrow), MAX_BATCH_ROWS);
}

#[test]
fn raw_cells_are_what_the_driver_wrote_null_and_cut_included() {
    // nvarchar(4), varbinary(4), int.
    let plan = ResultPlan::build(vec![desc(-9, 4), desc(-3, 4), desc(4, 10)], Dbms::SqlServer);
    let mut batch = Batch::new(&plan, 3);
    put(&mut batch.columns[0], 0, &wide("ab"), 4);
    put(&mut batch.columns[0], 1, &[], NULL_DATA);
    put(&mut batch.columns[0], 2, &wide("abcd"), 10);
    put(&mut batch.columns[1], 0, &[1, 2, 3], 3);
    put(&mut batch.columns[1], 1, &[], 0);
    put(&mut batch.columns[2], 0, &(-7i32).to_ne_bytes(), 4);
    put(&mut batch.columns[2], 1, &[], NULL_DATA);
    let units: Vec<u16> = "ab".encode_utf16().collect();
    assert_eq!(batch.columns[0].raw(0), Ok(RawCell::Units(&units)));
    assert_eq!(batch.columns[0].raw(1), Ok(RawCell::Null));
    assert!(matches!(
        batch.columns[0].raw(2),
        Err(CellError::Truncated { .. })
    ));
    assert_eq!(batch.columns[1].raw(0), Ok(RawCell::Bytes(&[1, 2, 3])));
    assert_eq!(batch.columns[1].raw(1), Ok(RawCell::Bytes(&[])));
    assert_eq!(
        batch.columns[2].raw(0),
        Ok(RawCell::Bytes(&(-7i32).to_ne_bytes()))
    );
    assert_eq!(batch.columns[2].raw(1), Ok(RawCell::Null));
}

#[test]
fn fixed_width_buffers_start_zeroed_so_null_cells_read_as_zero_in_value_slices() {
    // Arrow copies a fixed-width column's values as they are, NULL cells included (masked by
    // validity): those elements, which no driver writes, must be initialised.
    let plan = ResultPlan::build(vec![desc(4, 10), desc(8, 15)], Dbms::SqlServer);
    let mut batch = Batch::new(&plan, 3);
    put(&mut batch.columns[0], 0, &7i32.to_ne_bytes(), 4);
    put(&mut batch.columns[0], 1, &[], NULL_DATA);
    put(&mut batch.columns[0], 2, &(-1i32).to_ne_bytes(), 4);
    put(&mut batch.columns[1], 0, &[], NULL_DATA);
    put(&mut batch.columns[1], 1, &2.5f64.to_ne_bytes(), 8);
    put(&mut batch.columns[1], 2, &[], NULL_DATA);
    assert_eq!(batch.columns[0].values::<i32>(0..3), &[7, 0, -1]);
    assert_eq!(batch.columns[1].values::<f64>(0..3), &[0.0, 2.5, 0.0]);
    assert_eq!(
        batch.columns[1].raw(1),
        Ok(RawCell::Bytes(&2.5f64.to_ne_bytes()))
    );
}

#[test]
#[should_panic]
fn a_text_element_is_never_read_whole() {
    // Text buffers are not zeroed (only the bytes an indicator announces are ever read): a
    // whole-element read would see bytes nobody wrote, so it panics instead.
    let plan = ResultPlan::build(vec![desc(-9, 4)], Dbms::SqlServer);
    let mut batch = Batch::new(&plan, 2);
    put(&mut batch.columns[0], 0, &wide("ab"), 4);
    let _ = batch.columns[0].element(0);
}

#[test]
fn text_binary_and_decimal_cells_read_only_what_the_indicator_announces() {
    // Fresh (unzeroed) buffers: a short value, an empty one and a NULL next to each other, and
    // each reads back exactly what was written.
    // PostgreSQL: decimals batch as text (SQL Server's Driver 18 gets SQL_C_NUMERIC).
    let plan = ResultPlan::build(
        vec![desc(-9, 30), desc(-3, 8), desc(3, 12)],
        Dbms::PostgreSql,
    );
    assert!(matches!(
        plan.columns[2].kind,
        crate::plan::CellKind::Decimal { .. }
    ));
    let mut batch = Batch::new(&plan, 3);
    put(&mut batch.columns[0], 0, &wide("ab"), 4);
    put(&mut batch.columns[0], 1, &[], 0);
    put(&mut batch.columns[0], 2, &[], NULL_DATA);
    put(&mut batch.columns[1], 0, &[5], 1);
    put(&mut batch.columns[1], 1, &[], NULL_DATA);
    put(&mut batch.columns[1], 2, &[], 0);
    put(&mut batch.columns[2], 0, b"-1.50\0", 5);
    put(&mut batch.columns[2], 1, &[], NULL_DATA);
    put(&mut batch.columns[2], 2, b"0\0", 1);
    let units: Vec<u16> = "ab".encode_utf16().collect();
    assert_eq!(batch.columns[0].text(0).unwrap(), units.as_slice());
    assert_eq!(batch.columns[0].text(1).unwrap(), &[] as &[u16]);
    assert!(batch.columns[0].is_null(2));
    assert_eq!(batch.columns[1].bytes(0).unwrap(), &[5]);
    assert!(batch.columns[1].is_null(1));
    assert_eq!(batch.columns[1].bytes(2).unwrap(), &[] as &[u8]);
    assert_eq!(batch.columns[2].bytes(0).unwrap(), b"-1.50");
    assert!(batch.columns[2].is_null(1));
    assert_eq!(batch.columns[2].bytes(2).unwrap(), b"0");
}

/// A broken driver's indicators: negative lengths other than SQL_NULL_DATA / SQL_NO_TOTAL, a
/// length past the element, and 2^63 (which an SQLLEN holds as i64::MIN). Each is an error
/// naming the value (DataError through `cell_error`), never a length, a NULL or a panic.
#[test]
fn hostile_indicators_are_errors_never_lengths() {
    let plan = ResultPlan::build(vec![desc(-9, 4), desc(-3, 4)], Dbms::SqlServer);
    for ind in [
        -2isize,
        -5,
        -100,
        isize::MIN,
        isize::MIN + 1,
        9,
        1 << 40,
        isize::MAX,
    ] {
        let mut batch = Batch::new(&plan, 1);
        put(&mut batch.columns[0], 0, &wide("abcd"), ind);
        put(&mut batch.columns[1], 0, &[1, 2, 3, 4], ind);
        for (c, capacity) in [(0, 8), (1, 4)] {
            let col = &batch.columns[c];
            assert!(!col.is_null(0), "{ind}");
            assert!(col.is_cut(0), "{ind}");
            let err = if c == 0 {
                col.text(0).map(|_| ()).unwrap_err()
            } else {
                col.bytes(0).map(|_| ()).unwrap_err()
            };
            assert_eq!(
                err,
                CellError::Truncated {
                    indicator: Some(ind),
                    capacity
                },
                "{ind}"
            );
            let e = cell_error(err, &plan, c, 0);
            assert_eq!(e.class(), crate::error::ErrorClass::Data, "{ind}");
            assert!(e.to_string().contains(&ind.to_string()), "{e}");
        }
    }
}
