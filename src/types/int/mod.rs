//! The integer family: TINYINT and SMALLINT bound as `SQL_C_SSHORT`, INTEGER as `SQL_C_SLONG`,
//! BIGINT as `SQL_C_SBIGINT` (unsigned types one size up, as the row path always did). The
//! bound layout is Arrow's (little-endian), so the Arrow arm (`arrow.rs`) copies slices; the
//! Python arm is `py/types/int.rs` (`int`).

use super::kind::{Binding, CellKind};
use crate::backend::Backend;
use crate::bulk::Form;
use crate::codes::sql;
use crate::odbc::ColumnDescription;
use crate::odbc::sys::CDataType;

pub(crate) mod arrow;

/// The binding of an integer kind.
pub fn binding(kind: CellKind) -> Binding {
    match kind {
        CellKind::I16 => Binding::new(CDataType::SShort, 2),
        CellKind::I32 => Binding::new(CDataType::SLong, 4),
        _ => Binding::new(CDataType::SBigInt, 8),
    }
}

/// The kind of an integer column: the signed C type of its width, one size up for unsigned
/// SMALLINT and INTEGER (TINYINT is 0..=255 on SQL Server, so it always takes `I16`).
pub fn kind_for(desc: &ColumnDescription, _backend: Backend) -> CellKind {
    match desc.sql_type {
        sql::TINYINT => CellKind::I16,
        sql::SMALLINT if desc.unsigned => CellKind::I32,
        sql::SMALLINT => CellKind::I16,
        sql::INTEGER if desc.unsigned => CellKind::I64,
        sql::INTEGER => CellKind::I32,
        _ => CellKind::I64,
    }
}

// Encoders: a parameter is an `i64` per cell (`params/array.rs`, `ParamValue::Int`); a bulk
// load sends an `i64` too, after SQL Server's range check for the column's width (the driver
// would narrow it silently or refuse it with a less precise error).

/// The bulk-load form of an integer destination column: its range and name
/// (`bulk::Form::Int`); `None` for SQLite's BIGINT code (no bulk copy there).
pub fn bulk_form(desc: &ColumnDescription) -> Option<Form> {
    let (min, max, name) = match desc.sql_type {
        sql::TINYINT => (0, 255, "tinyint"),
        sql::SMALLINT => (i16::MIN.into(), i16::MAX.into(), "smallint"),
        sql::INTEGER => (i32::MIN.into(), i32::MAX.into(), "int"),
        sql::BIGINT => (i64::MIN, i64::MAX, "bigint"),
        _ => return None,
    };
    Some(Form::Int { min, max, name })
}

/// `i` checked against a column's range: out of it is SQL Server's arithmetic overflow.
pub fn in_range(i: i64, min: i64, max: i64, name: &str) -> Result<i64, String> {
    if i < min || i > max {
        return Err(overflow(&i.to_string(), name));
    }
    Ok(i)
}

/// SQL Server's words for a value outside an integer column's range.
pub fn overflow(value: &str, name: &str) -> String {
    format!("{value} is out of range for {name} (arithmetic overflow)")
}
