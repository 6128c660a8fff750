//! bit: SQL `BIT`, bound as `SQL_C_BIT` (one byte, 0 or 1). Arrow arm: `arrow.rs` (bool);
//! Python arm: `py/types/bit.rs` (`bool`).

use super::kind::{Binding, CellKind};
use crate::odbc::sys::CDataType;

pub(crate) mod arrow;

/// The binding of [`CellKind::Bit`].
pub fn binding(_kind: CellKind) -> Binding {
    Binding::new(CDataType::Bit, 1)
}

// Parameter and bulk encoder: see `params/array.rs` (`ParamValue::Bool`, one byte).
