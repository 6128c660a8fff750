//! A parameter column's declaration: the C type, SQL type and size it is bound with (per
//! backend and driver), from its kind and the values written into it (`array.rs`).

use super::array::{ArrayColumn, bytes_of_mut, narrow_ints};
use super::kind::Kind;
use super::{InputSize, ParamColumn, ParamValue};
use crate::backend::{Backend, Dbms, Driver};
use crate::codes::sql;
use crate::error::{Error, Result};
use crate::odbc::sys::{CDataType, NULL_DATA, ParamType};
use crate::types::vector;

/// Declared sizes are bucketed so SQL Server sees one parameter type per bucket
/// (`nvarchar(4000)` or `nvarchar(max)`), not one plan per distinct string length.
const TEXT_BUCKET_UNITS: usize = 4000;
const BINARY_BUCKET_BYTES: usize = 8000;

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

/// Every value of column `c` of `rows`, as a column of `kind` (wide enough for all of them:
/// `unify` and `carried_kind` chose it).
pub(super) fn encode_column(
    rows: &[Vec<ParamValue>],
    c: usize,
    kind: Kind,
    size: InputSize,
    backend: Backend,
) -> Result<ParamColumn> {
    let mut col = ArrayColumn::new(kind, c, backend, rows.len()).without_limit();
    for row in rows {
        col.push_value(&row[c]).map_err(|m| {
            Error::Internal(format!(
                "parameter {c}: a value did not fit its column ({m:?})"
            ))
        })?;
    }
    col.compact();
    finish(col, size)
}

/// A filled column as bound: its C type, SQL type, size and digits, decided by its kind and
/// the values written (the longest, the widest integer, the decimals' digits).
pub(super) fn finish(col: ArrayColumn, size: InputSize) -> Result<ParamColumn> {
    let ArrayColumn {
        kind,
        backend,
        index: c,
        element_len,
        mut data,
        indicators,
        dense,
        max_len,
        wide_int,
        int_digits,
        scale,
        nul_row,
        ..
    } = col;
    let dbms = backend.dbms;
    if let Some(r) = nul_row {
        // PostgreSQL text cannot hold U+0000 and psqlODBC silently cuts the value there.
        return Err(Error::Data(format!(
            "parameter {c} (row {r}): PostgreSQL text cannot contain U+0000; the driver would cut the value there"
        )));
    }
    let sql_server = dbms == Dbms::SqlServer;
    let (c_type, sql_type, column_size, digits) = match kind {
        // NULL of unknown type: VARCHAR converts implicitly to almost every SQL Server type.
        Kind::Null => (CDataType::Char, sql::VARCHAR, 1, 0),
        Kind::Int if wide_int => (CDataType::SBigInt, sql::BIGINT, 19, 0),
        // Every value fits `i32`: 4-byte cells, the C type that matches INTEGER (`narrow_ints`).
        Kind::Int => (CDataType::SLong, sql::INTEGER, 10, 0),
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
                i16::try_from(scale).unwrap_or(i16::MAX),
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
    let rows = if dense { data.len() } else { indicators.len() };
    let mut indicators = indicators;
    let element_len = if c_type == CDataType::SLong && kind == Kind::Int {
        narrow_ints(&mut data, rows, &mut indicators);
        4
    } else {
        element_len
    };
    // A column with no NULL is bound with no indicator array (`indicators` left empty) on
    // Driver 18: the same bytes on the wire, and about 25 instructions a cell less in the
    // driver (callgrind). Other drivers get the indicators written out.
    if dense && (backend.driver != Driver::MsOdbc || rows == 0) {
        indicators = vec![crate::checked::alloc_len(element_len); rows];
    }
    // Cells at least a byte wide, and every row's cell inside the buffer.
    let element_len = element_len.max(1);
    data.resize((element_len * rows.max(1)).div_ceil(8), 0);
    if rows == 0 && indicators.is_empty() {
        indicators.push(NULL_DATA);
    }
    if kind == Kind::Vector {
        vector::array_layout(bytes_of_mut(&mut data), element_len, rows);
    }
    Ok(ParamColumn {
        direction: ParamType::Input,
        output: None,
        c_type,
        sql_type: size.sql_type.unwrap_or(sql_type),
        column_size: size.column_size.unwrap_or(column_size),
        decimal_digits: size.decimal_digits.unwrap_or(digits),
        element_len,
        data,
        indicators,
        table: None,
    })
}
