//! The binary family: BINARY/VARBINARY bound as `SQL_C_BINARY` up to
//! [`MAX_BOUND_BINARY_BYTES`], (MAX)/IMAGE/UDT streamed. Arrow arm: `arrow.rs`
//! (binary/large_binary); Python arm: `py/types/binary.rs` (`bytes`).

use super::kind::{Binding, CellKind};
use crate::backend::Backend;
use crate::bulk::Form;
use crate::codes::sql;
use crate::odbc::ColumnDescription;
use crate::odbc::sys::CDataType;

pub(crate) mod arrow;

/// Largest binary column bound in the row array.
pub const MAX_BOUND_BINARY_BYTES: usize = 16000;

/// The binding of a binary kind (`LongBinary`: streamed, no bound element).
pub fn binding(kind: CellKind) -> Binding {
    match kind {
        CellKind::Binary { max_bytes } => Binding::new(CDataType::Binary, max_bytes as usize),
        _ => Binding::new(CDataType::Binary, 0),
    }
}

/// The kind of a binary column: BINARY/VARBINARY bound up to their declared size, the long
/// types (`(MAX)`, `image`, CLR types) streamed.
pub fn kind_for(desc: &ColumnDescription, backend: Backend) -> CellKind {
    match desc.sql_type {
        sql::BINARY | sql::VARBINARY => sized_kind(desc.size, backend),
        _ => CellKind::LongBinary,
    }
}

/// The bulk-load form of a binary destination column; `None` for a CLR type (`SS_UDT`), which
/// bulk copy cannot send.
pub fn bulk_form(desc: &ColumnDescription) -> Option<Form> {
    let max_bytes = match desc.sql_type {
        sql::BINARY | sql::VARBINARY => Form::limit(desc.size),
        sql::LONGVARBINARY => None,
        _ => return None,
    };
    Some(Form::Binary { max_bytes })
}

/// The kind of a BINARY/VARBINARY column of declared `size` bytes.
#[allow(
    clippy::cast_possible_truncation,
    reason = "the size is at most MAX_BOUND_BINARY_BYTES here (tested above)"
)]
fn sized_kind(size: usize, backend: Backend) -> CellKind {
    if size == 0 || size > MAX_BOUND_BINARY_BYTES || !backend.may_bind_declared() {
        CellKind::LongBinary
    } else {
        CellKind::Binary {
            max_bytes: size as u32,
        }
    }
}

// Parameter and bulk encoder: see `params/array.rs` (`ParamValue::Bytes`, the bytes as they are).
