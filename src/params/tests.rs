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

fn column(kind: Kind) -> ArrayColumn {
    ArrayColumn::new(kind, 0, Backend::from(Dbms::SqlServer), 4)
}

#[test]
fn a_value_of_another_kind_is_a_misfit_and_widen_says_which_column_takes_both() {
    let mut col = column(Kind::Int);
    assert_eq!(col.push_int(1), Ok(()));
    assert_eq!(col.push_float(2.5), Err(Misfit::Kind(Kind::Float)));
    assert_eq!(col.push_str("x"), Err(Misfit::Kind(Kind::Text)));
    assert_eq!(col.rows(), 1, "a misfit writes nothing");
    assert_eq!(widen(Kind::Int, Kind::Float), Some(Kind::Float));
    assert_eq!(widen(Kind::Null, Kind::Text), Some(Kind::Text));
    assert_eq!(widen(Kind::Int, Kind::Decimal), Some(Kind::Decimal));
    assert_eq!(widen(Kind::Date, Kind::DateText), Some(Kind::DateText));
    assert_eq!(widen(Kind::Int, Kind::Text), None);
}

#[test]
fn cells_widen_and_keep_every_earlier_value() {
    let mut col = column(Kind::Text);
    let values = ["a", "", "bcd", "é😀", &"x".repeat(300), "y"];
    for v in values {
        col.push_str(v).unwrap();
    }
    col.push_null();
    let p = BoundParams::from_columns(vec![col], &[]).unwrap();
    let c = &p.columns[0];
    let bytes = c.data_bytes();
    for (r, v) in values.iter().enumerate() {
        let n = usize::try_from(c.indicators[r]).unwrap();
        let units: Vec<u16> = bytes[r * c.element_len..r * c.element_len + n]
            .chunks_exact(2)
            .map(|b| u16::from_ne_bytes([b[0], b[1]]))
            .collect();
        assert_eq!(String::from_utf16(&units).unwrap(), *v);
    }
    assert_eq!(c.indicators[values.len()], NULL_DATA);
    assert_eq!(c.column_size, 4000);
}

#[test]
fn a_row_too_wide_for_the_column_budget_is_full_unless_alone() {
    let mut col = column(Kind::Bytes);
    let big = vec![7u8; COLUMN_BYTES / 2 + 1];
    assert_eq!(col.push_bytes(&big), Ok(()), "one value alone always fits");
    assert_eq!(col.push_bytes(&big), Err(Misfit::Full));
    assert_eq!(col.rows(), 1);
    let mut col = column(Kind::Bytes);
    col.push_bytes(b"ab").unwrap();
    assert_eq!(col.push_bytes(&big), Err(Misfit::Full));
}

#[test]
fn a_partly_written_row_is_forgotten() {
    let mut col = column(Kind::Int);
    col.push_int(1).unwrap();
    col.push_int(1 << 40).unwrap();
    col.truncate(1);
    col.push_int(3).unwrap();
    let p = BoundParams::from_columns(vec![col], &[]).unwrap();
    assert_eq!(p.columns[0].indicators, vec![8, 8]);
    assert_eq!(p.columns[0].data, vec![1, 3]);
    // The widest value still counts (BIGINT): a truncated row's width is not undone.
    assert_eq!(p.columns[0].sql_type, sql::BIGINT);
}

#[test]
fn freetds_early_dates_ask_for_the_text_form() {
    let backend = Backend {
        driver: Driver::FreeTds,
        ..Backend::from(Dbms::SqlServer)
    };
    let mut col = ArrayColumn::new(Kind::Date, 0, backend, 1);
    let early = crate::types::temporal::Date {
        year: 1500,
        month: 1,
        day: 1,
    };
    assert_eq!(col.push_date(early), Err(Misfit::Kind(Kind::DateText)));
    let mut col = ArrayColumn::new(Kind::DateText, 0, backend, 1);
    assert_eq!(col.push_date(early), Ok(()));
}

#[test]
fn ints_within_i32_are_bound_as_slong_cells_of_four_bytes() {
    let ints = |vals: &[Option<i64>]| -> Vec<Vec<ParamValue>> {
        vals.iter()
            .map(|v| vec![v.map_or(ParamValue::Null, ParamValue::Int)])
            .collect()
    };
    let vals = [
        Some(7),
        None,
        Some(-2_147_483_648),
        Some(2_147_483_647),
        Some(-1),
    ];
    let p = BoundParams::build(&ints(&vals), &[], Dbms::SqlServer)
        .unwrap()
        .unwrap();
    let col = &p.columns[0];
    assert_eq!(
        (col.c_type, col.sql_type, col.element_len),
        (CDataType::SLong, sql::INTEGER, 4)
    );
    assert_eq!(col.indicators, vec![4, NULL_DATA, 4, 4, 4]);
    let cells: Vec<Option<i32>> = (0..vals.len())
        .map(|r| {
            (col.indicators[r] >= 0)
                .then(|| i32::from_ne_bytes(col.data_bytes()[4 * r..4 * r + 4].try_into().unwrap()))
        })
        .collect();
    assert_eq!(
        cells,
        vec![Some(7), None, Some(i32::MIN), Some(i32::MAX), Some(-1)]
    );
    // One value past i32: the whole column stays 8-byte SQL_C_SBIGINT.
    let p = BoundParams::build(&ints(&[Some(1), Some(1 << 31)]), &[], Dbms::SqlServer)
        .unwrap()
        .unwrap();
    let col = &p.columns[0];
    assert_eq!(
        (col.c_type, col.sql_type, col.element_len),
        (CDataType::SBigInt, sql::BIGINT, 8)
    );
}

#[test]
fn null_free_eight_byte_columns_bind_no_indicators_on_driver_18() {
    let msodbc = Backend::new(Dbms::SqlServer, Driver::MsOdbc);
    let mut ints = ArrayColumn::new(Kind::Int, 0, msodbc, 4);
    let mut floats = ArrayColumn::new(Kind::Float, 1, msodbc, 4);
    let mut nullable = ArrayColumn::new(Kind::Float, 2, msodbc, 4);
    for i in 0..3 {
        ints.push_int(i).unwrap();
        floats.push_float(0.5).unwrap();
        if i == 1 {
            nullable.push_null();
        } else {
            nullable.push_float(1.5).unwrap();
        }
    }
    assert_eq!((ints.rows(), floats.rows(), nullable.rows()), (3, 3, 3));
    let p = BoundParams::from_columns(vec![ints, floats, nullable], &[]).unwrap();
    assert!(p.columns[0].indicators.is_empty() && p.columns[1].indicators.is_empty());
    assert_eq!(p.columns[0].element_len, 4);
    assert_eq!(p.columns[2].indicators, vec![8, NULL_DATA, 8]);
    // Other drivers get every indicator.
    let mut col = ArrayColumn::new(Kind::Int, 0, freetds(), 4);
    col.push_int(5).unwrap();
    let p = BoundParams::from_columns(vec![col], &[]).unwrap();
    assert_eq!(p.columns[0].indicators, vec![4]);
}
