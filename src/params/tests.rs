use super::*;
use crate::backend::{Dbms, Driver};
use crate::codes::sql;
use crate::error::Error;
use crate::odbc::sys::{CDataType, NULL_DATA};

fn w(s: &str) -> ParamValue {
    ParamValue::Text(s.encode_utf16().collect())
}

#[test]
fn text_is_bucketed_for_sql_server() {
    let p = BoundParams::build(&[vec![w("ab")], vec![w("abcdef")]], &[], Dbms::SqlServer)
        .unwrap()
        .unwrap();
    let col = &p.columns[0];
    assert_eq!(col.sql_type, sql::WVARCHAR);
    assert_eq!(col.column_size, 4000);
    assert_eq!(col.element_len, 12);
    assert_eq!(col.indicators, vec![4, 12]);
}

#[test]
fn long_text_becomes_max() {
    let long: String = "x".repeat(4001);
    let p = BoundParams::build(&[vec![w(&long)]], &[], Dbms::SqlServer)
        .unwrap()
        .unwrap();
    assert_eq!(p.columns[0].sql_type, sql::WLONGVARCHAR);
}

#[test]
fn ints_widen_to_floats_and_nulls_take_the_column_kind() {
    let p = BoundParams::build(
        &[
            vec![ParamValue::Int(1)],
            vec![ParamValue::Null],
            vec![ParamValue::Float(2.5)],
        ],
        &[],
        Dbms::Other,
    )
    .unwrap()
    .unwrap();
    assert_eq!(p.columns[0].sql_type, sql::DOUBLE);
    assert_eq!(p.columns[0].indicators, vec![8, NULL_DATA, 8]);
}

#[test]
fn incompatible_column_falls_back() {
    assert!(
        BoundParams::build(&[vec![ParamValue::Int(1)], vec![w("x")]], &[], Dbms::Other)
            .unwrap()
            .is_none()
    );
}

#[test]
fn big_ints_are_bigint_and_input_sizes_override() {
    let p = BoundParams::build(&[vec![ParamValue::Int(1 << 40)]], &[], Dbms::SqlServer)
        .unwrap()
        .unwrap();
    assert_eq!(p.columns[0].sql_type, sql::BIGINT);
    let sizes = [InputSize {
        sql_type: Some(sql::VARCHAR),
        column_size: Some(20),
        decimal_digits: None,
    }];
    let p = BoundParams::build(&[vec![w("x")]], &sizes, Dbms::SqlServer)
        .unwrap()
        .unwrap();
    assert_eq!(
        (p.columns[0].sql_type, p.columns[0].column_size),
        (sql::VARCHAR, 20)
    );
}

fn freetds() -> Backend {
    Backend {
        dbms: Dbms::SqlServer,
        driver: Driver::FreeTds,
        reread: false,
        vectors: false,
    }
}

fn date(year: i16, month: u16, day: u16) -> ParamValue {
    ParamValue::Date(Date { year, month, day })
}

fn utf16_cells(col: &ParamColumn) -> Vec<Option<String>> {
    let data = col.data_bytes();
    (0..col.indicators.len())
        .map(|r| {
            let n = usize::try_from(col.indicators[r]).ok()?;
            let cell = &data[r * col.element_len..r * col.element_len + n];
            let units: Vec<u16> = cell
                .chunks(2)
                .map(|b| u16::from_ne_bytes([b[0], b[1]]))
                .collect();
            Some(String::from_utf16(&units).unwrap())
        })
        .collect()
}

#[test]
fn freetds_early_dates_go_as_text_for_the_whole_column() {
    let rows = [
        vec![date(1, 1, 1)],
        vec![ParamValue::Null],
        vec![date(2024, 2, 29)],
    ];
    let p = BoundParams::build(&rows, &[], freetds()).unwrap().unwrap();
    let col = &p.columns[0];
    assert_eq!(
        (col.c_type, col.sql_type),
        (CDataType::WChar, sql::WVARCHAR)
    );
    assert_eq!(
        utf16_cells(col),
        [Some("0001-01-01".into()), None, Some("2024-02-29".into())]
    );
}

#[test]
fn freetds_early_timestamps_keep_seven_fraction_digits_as_text() {
    let ts = ParamValue::Timestamp(Timestamp {
        date: Date {
            year: 1600,
            month: 2,
            day: 29,
        },
        time: Time {
            hour: 23,
            minute: 59,
            second: 58,
            nanosecond: 123_456_700,
        },
    });
    let p = BoundParams::build(&[vec![ts]], &[], freetds())
        .unwrap()
        .unwrap();
    assert_eq!(p.columns[0].sql_type, sql::WVARCHAR);
    assert_eq!(
        utf16_cells(&p.columns[0]),
        [Some("1600-02-29 23:59:58.1234567".into())]
    );
}

#[test]
fn dates_from_1600_03_01_and_other_drivers_stay_native() {
    let p = BoundParams::build(&[vec![date(1600, 3, 1)]], &[], freetds())
        .unwrap()
        .unwrap();
    assert_eq!(p.columns[0].sql_type, sql::TYPE_DATE);
    let driver18 = Backend {
        dbms: Dbms::SqlServer,
        driver: Driver::MsOdbc,
        reread: false,
        vectors: false,
    };
    let p = BoundParams::build(&[vec![date(1, 1, 1)]], &[], driver18)
        .unwrap()
        .unwrap();
    assert_eq!(p.columns[0].sql_type, sql::TYPE_DATE);
}

#[test]
fn freetds_early_input_output_date_is_a_data_error() {
    let out = OutputParam {
        ty: OutputType::Date,
        input: date(1000, 1, 1),
        size: None,
        precision: 38,
        scale: 0,
    };
    let e = BoundParams::build(&[vec![ParamValue::Output(Box::new(out))]], &[], freetds())
        .err()
        .unwrap();
    assert!(matches!(e, Error::Data(m) if m.contains("1600-03-01")));
}

#[test]
fn ragged_rows_are_a_programming_error() {
    let e = BoundParams::build(&[vec![ParamValue::Int(1)], vec![]], &[], Dbms::Other)
        .err()
        .unwrap();
    assert!(matches!(e, Error::Programming(_)));
}
