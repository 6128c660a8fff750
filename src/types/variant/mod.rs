//! SQL Server `sql_variant` (Driver 18 only; FreeTDS renders it as text): streamed, and each
//! cell decoded as its own underlying type, which the driver reports per cell
//! (`SQL_CA_SS_VARIANT_TYPE`, read by `batch/streamed.rs`). Arrow: refused (`arrow.rs`);
//! Python: each cell through the other families (`py/decode.rs`).

use super::kind::{Binding, CellKind};
use crate::backend::Backend;
use crate::odbc::ColumnDescription;
use crate::odbc::sys::CDataType;

pub(crate) mod arrow;

/// The binding of [`CellKind::Variant`]: streamed, so no bound element.
pub fn binding(_kind: CellKind) -> Binding {
    Binding::new(CDataType::Binary, 0)
}

/// The kind of a `sql_variant` column: each cell as its own type where the driver reports it
/// (Driver 18), else its text rendering, streamed.
pub fn kind_for(_desc: &ColumnDescription, backend: Backend) -> CellKind {
    if backend.ss_c_types() {
        CellKind::Variant
    } else {
        CellKind::LongWText
    }
}

// Parameter encoder: none (a sql_variant parameter is sent as its value's own type). Bulk load:
// none (no `bulk_form`: bulk copy cannot send a sql_variant).
