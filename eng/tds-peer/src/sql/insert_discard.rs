//! `--insert-discard`: an INSERT run by an RPC (a parameter array's rows: `sp_execute` after
//! `sp_prepare`, `sp_prepexec`, `sp_executesql`) is parsed and its parameters read as always,
//! then counted and not stored, as `--bulk-discard` does for bulk loads: a benchmark of
//! `executemany` then measures the client, not the peer's SQLite.

use super::engine::{Engine, Out};
use crate::resp::Resp;
use crate::token;
use std::io;
use std::sync::atomic::Ordering;

/// Whether `stmt` was a single INSERT taken by `--insert-discard` (its DONE, one row, is
/// written to `r`; the row is counted in `Shared::inserts_discarded`).
pub fn discarded(engine: &mut Engine, stmt: &str, r: &mut Resp) -> io::Result<bool> {
    if !engine.shared.insert_discard || !is_single_insert(stmt) {
        return Ok(false);
    }
    engine
        .shared
        .inserts_discarded
        .fetch_add(1, Ordering::Relaxed);
    engine.rowcount = 1;
    let mut out = Out::new(true);
    out.done(r, token::DONE_COUNT, token::CMD_INSERT, 1)?;
    out.finish(r)?;
    Ok(true)
}

/// One `INSERT ... VALUES (...)` statement: no batch separator, no SELECT feeding it.
fn is_single_insert(stmt: &str) -> bool {
    let s = stmt.trim_start();
    s.get(..6).is_some_and(|w| w.eq_ignore_ascii_case("insert"))
        && !s.trim_end().trim_end_matches(';').contains(';')
        && !s.to_ascii_lowercase().contains("select")
}

#[cfg(test)]
mod tests {
    use super::is_single_insert;

    #[test]
    fn only_a_single_insert_of_values_is_discarded() {
        assert!(is_single_insert("INSERT INTO t (a, b) VALUES (@P1, @P2)"));
        assert!(is_single_insert("  insert t values (@P1);"));
        assert!(!is_single_insert("INSERT INTO t SELECT * FROM u"));
        assert!(!is_single_insert("INSERT INTO t VALUES (1); SELECT 1"));
        assert!(!is_single_insert("UPDATE t SET a = @P1"));
    }
}
