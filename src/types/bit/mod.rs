//! bit: SQL `BIT`, bound as `SQL_C_BIT` (one byte, 0 or 1). Arrow arm: `arrow.rs` (bool);
//! Python arm: `py/types/bit.rs` (`bool`).

use super::kind::{Binding, CellKind};
use crate::backend::Backend;
use crate::bulk::Form;
use crate::odbc::ColumnDescription;
use crate::odbc::sys::CDataType;

pub(crate) mod arrow;

/// The binding of [`CellKind::Bit`].
pub fn binding(_kind: CellKind) -> Binding {
    Binding::new(CDataType::Bit, 1)
}

/// The kind of a BIT column.
pub fn kind_for(_desc: &ColumnDescription, _backend: Backend) -> CellKind {
    CellKind::Bit
}

/// The bulk-load form of a BIT destination column.
pub fn bulk_form(_desc: &ColumnDescription) -> Option<Form> {
    Some(Form::Bit)
}

// Parameter and bulk encoder: see `params/array.rs` (`ParamValue::Bool`, one byte).
