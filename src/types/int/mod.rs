//! The integer family: TINYINT and SMALLINT bound as `SQL_C_SSHORT`, INTEGER as `SQL_C_SLONG`,
//! BIGINT as `SQL_C_SBIGINT` (unsigned types one size up, as the row path always did). The
//! bound layout is Arrow's (little-endian), so the Arrow arm (`arrow.rs`) copies slices; the
//! Python arm is `py/types/int.rs` (`int`).

use super::kind::{Binding, CellKind};
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

// Parameter and bulk encoder: see `params/encode.rs` (`ParamValue::Int`, an `i64` per cell).
