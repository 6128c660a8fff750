//! The floating-point family: REAL bound as `SQL_C_FLOAT`, FLOAT/DOUBLE as `SQL_C_DOUBLE`
//! (never f32 from a reported precision: see `plan::choose_kind`). Arrow arm: `arrow.rs`
//! (float32/float64, slice copies); Python arm: `py/types/float.rs` (`float`).

use super::kind::{Binding, CellKind};
use crate::odbc::sys::CDataType;

pub(crate) mod arrow;

/// The binding of a floating-point kind.
pub fn binding(kind: CellKind) -> Binding {
    match kind {
        CellKind::F32 => Binding::new(CDataType::Float, 4),
        _ => Binding::new(CDataType::Double, 8),
    }
}

// Parameter and bulk encoder: see `params/array.rs` (`ParamValue::Float`, an `f64` per cell).
