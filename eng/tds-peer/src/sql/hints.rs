//! Table hints (`FROM t WITH (ROWLOCK, UPDLOCK)`): the words that open one, so the rewriter
//! drops the whole `WITH (…)`. They mean nothing to SQLite; the peer's own locking
//! (locks.rs) is what it is whatever they say (README, "What it does not emulate").
//! mssql-django's `select_for_update()` writes `WITH (ROWLOCK, UPDLOCK)`, `(ROWLOCK, UPDLOCK,
//! READPAST)` for skip_locked and `(NOWAIT, ROWLOCK, UPDLOCK)` for nowait.

use super::lexer::Tok;

const TABLE_HINTS: &[&str] = &[
    "NOLOCK",
    "ROWLOCK",
    "UPDLOCK",
    "READPAST",
    "HOLDLOCK",
    "PAGLOCK",
    "TABLOCK",
    "TABLOCKX",
    "XLOCK",
    "NOWAIT",
    "READCOMMITTED",
    "READCOMMITTEDLOCK",
    "READUNCOMMITTED",
    "REPEATABLEREAD",
    "SERIALIZABLE",
    "SNAPSHOT",
    "NOEXPAND",
    "FORCESEEK",
    "FORCESCAN",
];

/// Whether `t` (the first token inside `WITH (`) opens a table hint list.
pub fn opens_table_hint(t: &Tok) -> bool {
    TABLE_HINTS.iter().any(|h| t.is_word(h))
}
