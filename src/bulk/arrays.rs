//! The bulk load of drivers without a bcp API (SQLite3 ODBC, psqlODBC, ...): `INSERT` of the
//! fed columns as parameter arrays, one array per chunk, so memory stays bounded by the chunk.

use super::load::{LoadCount, LoadOptions};
use super::target::{Fed, Table};
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::odbc::{Dbc, Stmt};
use crate::params::ParamValue;
use crate::statement::Statement;

pub struct ArrayLoad<'c> {
    /// In autocommit mode each array is made its own transaction on this handle, so a failed
    /// array leaves none of its rows (as a failed batch of a bcp load).
    batch_txn: Option<&'c mut Dbc>,
    stmt: Statement,
    sql: String,
    fed: Vec<Fed>,
    options: LoadOptions,
    count: LoadCount,
}

impl<'c> ArrayLoad<'c> {
    /// `dbc`: the connection's handle when it is in autocommit mode (None in manual commit,
    /// where the rows go into the caller's transaction).
    pub fn begin(
        dbc: Option<&'c mut Dbc>,
        stmt: Stmt,
        backend: Backend,
        table: &Table,
        fed: Vec<Fed>,
        options: LoadOptions,
    ) -> Result<ArrayLoad<'c>> {
        // keep_identity, check_constraints, table_lock and fire_triggers need nothing here:
        // plain INSERTs check constraints and fire triggers, and identity and table locks are
        // SQL Server's, whose drivers take the bcp path.
        let quote = |n: &str| format!("\"{}\"", n.replace('"', "\"\""));
        let columns: Vec<String> = fed.iter().map(|f| quote(&f.name)).collect();
        let sql = format!(
            "INSERT INTO {} ({}) VALUES ({})",
            table.name,
            columns.join(", "),
            vec!["?"; fed.len()].join(", ")
        );
        Ok(ArrayLoad {
            batch_txn: dbc,
            stmt: Statement::new(stmt, backend),
            sql,
            fed,
            options,
            count: LoadCount::default(),
        })
    }

    pub fn fed(&self) -> &[Fed] {
        &self.fed
    }

    pub fn count(&self) -> LoadCount {
        self.count
    }

    /// Rows per parameter array: the batch size, or a bounded chunk.
    pub fn rows_per_send(&self) -> usize {
        match self.options.batch_size {
            0 => 10_000,
            n => usize::try_from(n).unwrap_or(10_000).min(100_000),
        }
    }

    /// Insert `rows` (values in the order of [`Self::fed`]); `first_row` numbers them.
    pub fn send(&mut self, rows: Vec<Vec<ParamValue>>, first_row: u64) -> Result<()> {
        let n = rows.len() as u64;
        if n == 0 {
            return Ok(());
        }
        if let Some(dbc) = self.batch_txn.as_deref_mut() {
            dbc.set_autocommit(false)?;
        }
        let mut sent = self.stmt.execute_many(&self.sql, rows, &[]);
        if let Some(dbc) = self.batch_txn.as_deref_mut() {
            let ended = dbc.end_transaction(sent.is_ok());
            let restored = dbc.set_autocommit(true);
            if sent.is_ok() {
                sent = ended.and(restored);
            }
        }
        sent.map_err(|e| Error::Bulk {
            context: format!(
                "bulk load failed in source rows {first_row}..{} ({} rows copied before them{})",
                first_row + n,
                self.count.rows_copied,
                if self.batch_txn.is_some() {
                    ""
                } else {
                    "; rows of this array before the failing one may be in the open transaction: roll it back"
                }
            ),
            inner: Box::new(e),
        })?;
        self.count.rows_sent += n;
        self.count.rows_copied += n;
        self.count.batch_count += 1;
        Ok(())
    }
}
