//! A bulk load waiting for its rows: what its `INSERT BULK` decided, once for the whole load
//! (kept in the session's context between the statement and the BULK LOAD message; applied by
//! `bulkload.rs`).

use crate::bulk::BulkHints;
use crate::types::Ty;
use rusqlite::types::Value;

/// What `INSERT BULK` announced, waiting for its rows: everything decided once for the load.
pub(crate) struct PendingLoad {
    /// The target as the INSERT names it (`[t]`, `[s].[t]`, `[#t]`).
    pub(super) target: String,
    /// Each column of the statement's list with the table column's type.
    pub(super) columns: Vec<Listed>,
    pub(super) hints: BulkHints,
}

/// One column of the statement's list, as the load treats it.
pub(super) struct Listed {
    pub(super) name: String,
    pub(super) ty: Ty,
    /// The table gives it a DEFAULT: a NULL takes it unless KEEP_NULLS.
    pub(super) defaulted: bool,
    /// An IDENTITY column without `SET IDENTITY_INSERT … ON`: the server numbers the rows and
    /// the values sent are dropped, as SQL Server does.
    pub(super) server_numbered: bool,
    /// The most a value may hold (characters, bytes): more is error 4815.
    pub(super) limit: Option<Limit>,
}

#[derive(Clone, Copy)]
pub(super) enum Limit {
    /// nchar/nvarchar(n): UTF-16 code units.
    Utf16(usize),
    /// char/varchar(n) in a code-page collation: characters (one byte each).
    Chars(usize),
    /// char/varchar(n) in a UTF-8 collation, binary/varbinary(n): bytes.
    Bytes(usize),
}

impl Limit {
    pub(super) fn of(ty: Ty) -> Option<Limit> {
        let n = |v: u16| usize::from(v);
        Some(match ty {
            Ty::NChar(v) | Ty::NVarChar(Some(v)) => Limit::Utf16(n(v)),
            Ty::Char(v, false) | Ty::VarChar(Some(v), false) => Limit::Chars(n(v)),
            Ty::Char(v, true) | Ty::VarChar(Some(v), true) => Limit::Bytes(n(v)),
            Ty::Binary(v) | Ty::VarBinary(Some(v)) => Limit::Bytes(n(v)),
            _ => return None,
        })
    }

    pub(super) fn fits(self, v: &Value) -> bool {
        match (self, v) {
            (Limit::Utf16(n), Value::Text(s)) => s.encode_utf16().count() <= n,
            (Limit::Chars(n), Value::Text(s)) => s.chars().count() <= n,
            (Limit::Bytes(n), Value::Text(s)) => s.len() <= n,
            (Limit::Bytes(n), Value::Blob(b)) => b.len() <= n,
            _ => true,
        }
    }
}

impl PendingLoad {
    /// The columns whose values have a most length, with it.
    pub(super) fn limited(&self) -> Vec<(usize, Limit)> {
        self.columns
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.limit.map(|l| (i, l)))
            .collect()
    }
}
