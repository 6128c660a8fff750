//! Hostile values a broken server (or driver) could hand back, for the engine's checked
//! conversions (issue 36): `fault:rowcount=N` makes the statement's DONE report N rows, e.g.
//! 2^63, which no `SQLLEN` holds. Dispatched from `engine.rs` after the statement ran.

use super::context::Out;
use crate::faults::Faults;
use crate::token;

/// Rewrite the row count of the DONE the statement left pending (and mark it counted).
pub fn after_statement(faults: Option<&Faults>, out: &mut Out) {
    let Some(n) = faults.and_then(|f| f.rowcount) else {
        return;
    };
    if let Some((status, _, rows)) = out.pending.as_mut() {
        *status |= token::DONE_COUNT;
        *rows = n;
    }
}
