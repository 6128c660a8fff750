//! sql_variant's Arrow arm: none yet (each cell has its own type; no single Arrow type fits).

use crate::arrow::kind::{ArrowColumn, ArrowKind};
use crate::error::Result;

pub fn kind(column: &ArrowColumn<'_>) -> Result<ArrowKind> {
    Err(column.refuse("is a sql_variant, which has no Arrow type in this version"))
}
