//! Encoding one parameter column: every cell into one buffer, and the C type, SQL type and size
//! it is declared with (per backend and driver).

use super::kind::Kind;
use super::{InputSize, ParamColumn, ParamValue};
use crate::backend::{Backend, Dbms};
use crate::codes::sql;
use crate::error::{Error, Result};
use crate::odbc::sys::{CDataType, Len, NULL_DATA, ParamType};
use crate::types::guid::{guid_text, u128_to_guid};
use crate::types::vector;

/// Declared sizes are bucketed so SQL Server sees one parameter type per bucket
/// (`nvarchar(4000)` or `nvarchar(max)`), not one plan per distinct string length.
const TEXT_BUCKET_UNITS: usize = 4000;
const BINARY_BUCKET_BYTES: usize = 8000;

/// Append the encoded bytes of one cell for the chosen column kind to `out`; `false` for NULL
/// (nothing appended). Appending to one buffer per column spares an allocation per cell (an
/// executemany of 10,000 rows x 3 columns made 30,000).
pub(super) fn encode_cell(v: &ParamValue, kind: Kind, backend: Backend, out: &mut Vec<u8>) -> bool {
    let dbms = backend.dbms;
    let wide = |s: &str, out: &mut Vec<u8>| out.extend(s.encode_utf16().flat_map(u16::to_ne_bytes));
    match (v, kind) {
        (ParamValue::Null, _) => return false,
        (ParamValue::Bool(b), Kind::Bool) => out.push(u8::from(*b)),
        (ParamValue::Bool(b), Kind::Int) => out.extend(i64::from(*b).to_ne_bytes()),
        (ParamValue::Bool(b), Kind::Float) => out.extend(f64::from(u8::from(*b)).to_ne_bytes()),
        (ParamValue::Int(i), Kind::Int) => out.extend(i.to_ne_bytes()),
        (ParamValue::Int(i), Kind::Float) => out.extend((*i as f64).to_ne_bytes()),
        (ParamValue::Int(i), Kind::Decimal) => out.extend(i.to_string().as_bytes()),
        (ParamValue::Float(f), _) => out.extend(f.to_ne_bytes()),
        (ParamValue::Text(u), _) => out.extend(u.iter().flat_map(|x| x.to_ne_bytes())),
        (ParamValue::Bytes(b), _) => out.extend_from_slice(b),
        (ParamValue::Decimal { text, .. }, _) => out.extend_from_slice(text.as_bytes()),
        // The temporal and guid families' encoders (`types/temporal`, `types/guid`).
        (ParamValue::Date(d), Kind::DateText) => wide(&d.to_text(), out),
        (ParamValue::Timestamp(ts), Kind::TimestampText) => wide(&ts.to_text(), out),
        (ParamValue::Date(d), _) => out.extend(d.to_ne_bytes()),
        (ParamValue::Time(t), _) if backend.ss_c_types() => out.extend(t.to_ss_time2()),
        // FreeTDS: text the server converts, with SQL Server's seven fraction digits.
        (ParamValue::Time(t), Kind::TimeText) => wide(&t.to_text_100ns(), out),
        (ParamValue::Time(t), _) => wide(&t.to_text(), out),
        (ParamValue::Timestamp(ts), _) => out.extend(ts.to_ne_bytes()),
        (ParamValue::TimestampOffset(v), _) if backend.ss_c_types() => out.extend(v.to_ne_bytes()),
        (ParamValue::TimestampOffset(v), _) if dbms == Dbms::SqlServer => {
            wide(&v.to_text_100ns(), out)
        }
        (ParamValue::TimestampOffset(v), _) => wide(&v.to_text(), out),
        (ParamValue::Guid(g), _) if matches!(dbms, Dbms::SqlServer | Dbms::PostgreSql) => {
            out.extend(u128_to_guid(*g))
        }
        (ParamValue::Guid(g), _) => out.extend(
            guid_text(*g)
                .iter()
                .flat_map(|&b| u16::from(b).to_ne_bytes()),
        ),
        // The vector family's encoders (`types/vector`).
        (ParamValue::Vector(v), Kind::Vector) => out.extend(vector::param_buffer(v)),
        (ParamValue::Vector(v), _) => wide(&vector::json_text(v), out),
        // `unify` only produces the combinations above.
        (_, _) => return false,
    }
    true
}

/// The binding of a fixed-size kind: C type, SQL type, column size, digits and the bytes one
/// value takes in the buffer (text fallbacks: room for the longest rendering plus NUL).
pub(super) struct FixedBinding {
    pub(super) c_type: CDataType,
    pub(super) sql_type: i16,
    pub(super) column_size: usize,
    pub(super) digits: i16,
    pub(super) element_len: usize,
}

pub(super) fn fixed_binding(kind: Kind, backend: Backend) -> Option<FixedBinding> {
    let sql_server = backend.dbms == Dbms::SqlServer;
    // Output room for a driver's rendering, which may be longer than ours (7 fraction digits).
    let wide = |sql_type, chars: usize, digits| {
        (CDataType::WChar, sql_type, chars, digits, (chars + 10) * 2)
    };
    let (c_type, sql_type, column_size, digits, element_len) = match kind {
        Kind::Bool => (CDataType::Bit, sql::BIT, 1, 0, 1),
        Kind::Float => (CDataType::Double, sql::DOUBLE, 15, 0, 8),
        Kind::Date => (CDataType::TypeDate, sql::TYPE_DATE, 10, 0, 6),
        Kind::DateText => wide(sql::WVARCHAR, 10, 0),
        Kind::TimestampText => wide(sql::WVARCHAR, 27, 0),
        Kind::Time if backend.ss_c_types() => (CDataType::SsTime2, sql::SS_TIME2, 16, 7, 12),
        // FreeTDS: nvarchar text (7 fraction digits) that the server converts to the column's
        // time(n); as TYPE_TIME the driver keeps 6 digits and loses time(7)'s last one.
        Kind::TimeText => wide(sql::WVARCHAR, 16, 0),
        Kind::Time => wide(sql::TYPE_TIME, 15, 6),
        Kind::Timestamp if sql_server => (CDataType::TypeTimestamp, sql::TYPE_TIMESTAMP, 27, 7, 16),
        Kind::Timestamp => (CDataType::TypeTimestamp, sql::TYPE_TIMESTAMP, 26, 6, 16),
        Kind::TimestampOffset if backend.ss_c_types() => (
            CDataType::SsTimestampOffset,
            sql::SS_TIMESTAMPOFFSET,
            34,
            7,
            20,
        ),
        Kind::TimestampOffset => wide(sql::WVARCHAR, 40, 0),
        Kind::Guid if matches!(backend.dbms, Dbms::SqlServer | Dbms::PostgreSql) => {
            (CDataType::Guid, sql::GUID, 36, 0, 16)
        }
        Kind::Guid => wide(sql::WVARCHAR, 36, 0),
        Kind::Null
        | Kind::Int
        | Kind::Text
        | Kind::Bytes
        | Kind::Decimal
        | Kind::Output
        | Kind::Table
        | Kind::Vector
        | Kind::VectorText => {
            return None;
        }
    };
    Some(FixedBinding {
        c_type,
        sql_type,
        column_size,
        digits,
        element_len,
    })
}

pub(super) fn encode_column(
    rows: &[Vec<ParamValue>],
    c: usize,
    kind: Kind,
    size: InputSize,
    backend: Backend,
) -> Result<ParamColumn> {
    let dbms = backend.dbms;
    if dbms == Dbms::PostgreSql {
        // PostgreSQL text cannot hold U+0000 and psqlODBC silently cuts the value there.
        if let Some(r) = rows
            .iter()
            .position(|row| matches!(&row[c], ParamValue::Text(u) if u.contains(&0)))
        {
            return Err(Error::Data(format!(
                "parameter {c} (row {r}): PostgreSQL text cannot contain U+0000; the driver would cut the value there"
            )));
        }
    }
    // Every cell encoded back to back into one buffer; `spans` says where each one is.
    let mut packed: Vec<u8> = Vec::with_capacity(rows.len() * 8);
    let spans: Vec<Option<std::ops::Range<usize>>> = rows
        .iter()
        .map(|r| {
            let start = packed.len();
            encode_cell(&r[c], kind, backend, &mut packed).then_some(start..packed.len())
        })
        .collect();
    let max_len = spans.iter().flatten().map(|s| s.len()).max().unwrap_or(0);
    let sql_server = dbms == Dbms::SqlServer;
    let (c_type, sql_type, column_size, digits) = match kind {
        // NULL of unknown type: VARCHAR converts implicitly to almost every SQL Server type.
        Kind::Null => (CDataType::Char, sql::VARCHAR, 1, 0),
        Kind::Int => {
            let fits_i32 = rows.iter().all(|r| match r[c] {
                ParamValue::Int(i) => i32::try_from(i).is_ok(),
                _ => true,
            });
            if fits_i32 {
                (CDataType::SBigInt, sql::INTEGER, 10, 0)
            } else {
                (CDataType::SBigInt, sql::BIGINT, 19, 0)
            }
        }
        Kind::Vector => (CDataType::Binary, vector::SQL_SS_VECTOR, 0, 0),
        Kind::Text | Kind::VectorText => {
            let units = max_len / 2;
            if units > TEXT_BUCKET_UNITS {
                (CDataType::WChar, sql::WLONGVARCHAR, units, 0)
            } else if sql_server {
                (CDataType::WChar, sql::WVARCHAR, TEXT_BUCKET_UNITS, 0)
            } else {
                (CDataType::WChar, sql::WVARCHAR, units.max(1), 0)
            }
        }
        Kind::Bytes => {
            if max_len > BINARY_BUCKET_BYTES {
                (CDataType::Binary, sql::LONGVARBINARY, max_len, 0)
            } else if sql_server {
                (CDataType::Binary, sql::VARBINARY, BINARY_BUCKET_BYTES, 0)
            } else {
                (CDataType::Binary, sql::VARBINARY, max_len.max(1), 0)
            }
        }
        Kind::Decimal => {
            // The widest integer part and the widest scale of the column decide its type.
            let (mut int_digits, mut scale) = (0u32, 0u32);
            for r in rows {
                match &r[c] {
                    ParamValue::Decimal {
                        precision: p,
                        scale: s,
                        ..
                    } => {
                        int_digits = int_digits.max(p.saturating_sub(*s));
                        scale = scale.max(*s);
                    }
                    ParamValue::Int(i) => {
                        int_digits = int_digits.max(i.unsigned_abs().to_string().len() as u32)
                    }
                    _ => {}
                }
            }
            let precision = (int_digits + scale).max(1);
            // SQLite has nothing exact beyond 64-bit integers: a wider integral value would be
            // stored as a REAL and read back as another number (sqlite3odbc even reads a REAL
            // 1e40 in an INTEGER column as 1).
            if dbms == Dbms::Sqlite && scale == 0 && int_digits > 18 {
                return Err(Error::Data(format!(
                    "parameter {c}: an integer of {int_digits} digits cannot be stored exactly by SQLite (64-bit integers)"
                )));
            }
            // SQL Server's DECIMAL stops at 38 digits; PostgreSQL's numeric goes far beyond.
            if dbms == Dbms::SqlServer && precision > 38 {
                return Err(Error::Data(format!(
                    "parameter {c}: a Decimal needing precision {precision} (scale {scale}) does not fit SQL Server's DECIMAL(38)"
                )));
            }
            (
                CDataType::Char,
                sql::NUMERIC,
                precision as usize,
                scale.min(i16::MAX as u32) as i16,
            )
        }
        Kind::Output | Kind::Table => {
            return Err(Error::Internal(
                "output or table-valued parameter in a parameter array".into(),
            ));
        }
        fixed => {
            let b = fixed_binding(fixed, backend)
                .ok_or_else(|| Error::Internal(format!("no binding for {fixed:?}")))?;
            (b.c_type, b.sql_type, b.column_size, b.digits)
        }
    };
    let element_len = max_len.max(1);
    let mut col = ParamColumn {
        direction: ParamType::Input,
        output: None,
        c_type,
        sql_type: size.sql_type.unwrap_or(sql_type),
        column_size: size.column_size.unwrap_or(column_size),
        decimal_digits: size.decimal_digits.unwrap_or(digits),
        element_len,
        data: vec![0u64; (element_len * rows.len().max(1)).div_ceil(8)],
        indicators: vec![NULL_DATA; rows.len().max(1)],
        table: None,
    };
    for (r, span) in spans.iter().enumerate() {
        if let Some(span) = span {
            col.indicators[r] = span.len() as Len;
        }
    }
    let data = col.data_bytes_mut();
    for (r, span) in spans.into_iter().enumerate() {
        if let Some(span) = span {
            let start = r * element_len;
            data[start..start + span.len()].copy_from_slice(&packed[span]);
        }
    }
    if kind == Kind::Vector {
        vector::array_layout(data, element_len, rows.len());
    }
    Ok(col)
}
