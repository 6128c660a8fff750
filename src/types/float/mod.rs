//! The floating-point family: REAL bound as `SQL_C_FLOAT`, FLOAT/DOUBLE as `SQL_C_DOUBLE`
//! (never f32 from a reported precision: see `kind_for`). Arrow arm: `arrow.rs`
//! (float32/float64, slice copies); Python arm: `py/types/float.rs` (`float`).

use super::kind::{Binding, CellKind};
use crate::backend::Backend;
use crate::bulk::Form;
use crate::codes::sql;
use crate::odbc::ColumnDescription;
use crate::odbc::sys::CDataType;

pub(crate) mod arrow;

/// The binding of a floating-point kind.
pub fn binding(kind: CellKind) -> Binding {
    match kind {
        CellKind::F32 => Binding::new(CDataType::Float, 4),
        _ => Binding::new(CDataType::Double, 8),
    }
}

/// The kind of a REAL, FLOAT or DOUBLE column. SQL_FLOAT is double precision whatever the
/// reported precision: drivers disagree on its unit (psqlODBC reports float8 as FLOAT(17) in
/// decimal digits, others 0 or 53), and picking f32 from it silently loses digits (arrow-odbc
/// did). Only REAL is single.
pub fn kind_for(desc: &ColumnDescription, _backend: Backend) -> CellKind {
    if desc.sql_type == sql::REAL {
        CellKind::F32
    } else {
        CellKind::F64
    }
}

/// The bulk-load form of a floating-point destination column: a double (the driver narrows a
/// `real`).
pub fn bulk_form(_desc: &ColumnDescription) -> Option<Form> {
    Some(Form::Float)
}

// Parameter and bulk encoder: see `params/array.rs` (`ParamValue::Float`, an `f64` per cell).
