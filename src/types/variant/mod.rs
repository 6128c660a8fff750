//! SQL Server `sql_variant` (Driver 18 only; FreeTDS renders it as text): streamed, and each
//! cell decoded as its own underlying type, which the driver reports per cell
//! (`SQL_CA_SS_VARIANT_TYPE`, read by `batch/streamed.rs`). Arrow: refused (`arrow.rs`);
//! Python: each cell through the other families (`py/decode.rs`).

use super::kind::{Binding, CellKind};
use crate::odbc::sys::CDataType;

pub(crate) mod arrow;

/// The binding of [`CellKind::Variant`]: streamed, so no bound element.
pub fn binding(_kind: CellKind) -> Binding {
    Binding::new(CDataType::Binary, 0)
}

// Parameter and bulk encoder: none (a sql_variant parameter is sent as its value's own type).
