//! Parameter encoding: arbitrary rows of parameter values (every value kind, NULLs, mixed
//! columns, ragged rows, `setinputsizes` overrides) bound for every DBMS/driver pair, plus the
//! marker counter and the `callproc` name check that splices into SQL. Must never panic: a
//! bad row is a ProgrammingError/DataError, a column no single binding carries is `Ok(None)`.
#![no_main]

use _native::backend::{Backend, Dbms, Driver};
use _native::types::temporal::{Date, Time, Timestamp, TimestampOffset};
use _native::params::{BoundParams, InputSize, ParamValue, check_procedure_name, count_markers};
use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;

fn time(u: &mut Unstructured<'_>) -> Result<Time> {
    Ok(Time {
        hour: u.arbitrary()?,
        minute: u.arbitrary()?,
        second: u.arbitrary()?,
        nanosecond: u.arbitrary()?,
    })
}

fn date(u: &mut Unstructured<'_>) -> Result<Date> {
    Ok(Date {
        year: u.arbitrary()?,
        month: u.arbitrary()?,
        day: u.arbitrary()?,
    })
}

fn value(u: &mut Unstructured<'_>) -> Result<ParamValue> {
    Ok(match u.int_in_range(0..=12u8)? {
        0 => ParamValue::Null,
        1 => ParamValue::Bool(u.arbitrary()?),
        2 => ParamValue::Int(u.arbitrary()?),
        3 => ParamValue::Float(u.arbitrary()?),
        4 => ParamValue::Text(u.arbitrary()?),
        5 => ParamValue::Bytes(u.arbitrary()?),
        6 => ParamValue::Decimal {
            text: u.arbitrary()?,
            precision: u.int_in_range(0..=60)?,
            scale: u.int_in_range(0..=60)?,
        },
        7 => ParamValue::Date(date(u)?),
        8 => ParamValue::Time(time(u)?),
        9 => ParamValue::Timestamp(Timestamp {
            date: date(u)?,
            time: time(u)?,
        }),
        10 => ParamValue::TimestampOffset(TimestampOffset {
            timestamp: Timestamp {
                date: date(u)?,
                time: time(u)?,
            },
            offset_minutes: u.arbitrary()?,
        }),
        11 => ParamValue::Guid(u.arbitrary()?),
        // A long text or binary value, across the nvarchar(4000) / varbinary(8000) buckets.
        _ => {
            let n = u.int_in_range(3990..=8010usize)?;
            if u.arbitrary()? {
                ParamValue::Text(vec![u.arbitrary()?; n])
            } else {
                ParamValue::Bytes(vec![u.arbitrary()?; n])
            }
        }
    })
}

fn backend(u: &mut Unstructured<'_>) -> Result<Backend> {
    let dbms = *u.choose(&[Dbms::SqlServer, Dbms::PostgreSql, Dbms::Sqlite, Dbms::Other])?;
    let driver = *u.choose(&[Driver::MsOdbc, Driver::FreeTds, Driver::Other])?;
    Ok(Backend {
        reread: u.arbitrary()?,
        vectors: u.arbitrary()?,
        ..Backend::new(dbms, driver)
    })
}

fn run(u: &mut Unstructured<'_>) -> Result<()> {
    let backend = backend(u)?;
    let cols = u.int_in_range(0..=6usize)?;
    let n_rows = u.int_in_range(0..=8usize)?;
    let mut rows = Vec::with_capacity(n_rows);
    for _ in 0..n_rows {
        // Now and then a ragged row (must be a ProgrammingError, not a panic).
        let n = if u.ratio(1, 16)? {
            u.int_in_range(0..=6)?
        } else {
            cols
        };
        let mut row = Vec::with_capacity(n);
        for _ in 0..n {
            row.push(value(u)?);
        }
        rows.push(row);
    }
    let mut sizes = Vec::new();
    for _ in 0..u.int_in_range(0..=6usize)? {
        sizes.push(InputSize {
            sql_type: u.arbitrary()?,
            column_size: u.arbitrary::<Option<u32>>()?.map(|v| v as usize),
            decimal_digits: u.arbitrary()?,
        });
    }
    if let Ok(Some(bound)) = BoundParams::build(&rows, &sizes, backend) {
        assert_eq!(bound.rows(), rows.len());
    }
    let sql: String = u.arbitrary()?;
    let markers = count_markers(&sql, backend.dbms);
    assert!(markers <= sql.matches('?').count());
    let name: String = u.arbitrary()?;
    if check_procedure_name(&name).is_ok() {
        // What callproc splices into `{CALL name(...)}`: nothing that ends the escape, starts
        // a statement or a string.
        assert!(!name.is_empty());
        assert!(
            !name
                .chars()
                .any(|c| matches!(c, '{' | '}' | ';' | '\'') || c.is_control())
        );
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
