//! The bulk load of drivers without a bcp API (SQLite3 ODBC, psqlODBC, ...): `INSERT` of the
//! fed columns as parameter arrays, one array per chunk, so memory stays bounded by the chunk.

use super::load::{LoadCount, LoadOptions, Stopper};
use super::target::{Fed, Table};
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::odbc::{Dbc, Stmt};
use crate::params::ParamValue;
use crate::statement::Statement;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// Where the rows of a parameter-array load are committed.
enum Txn<'c> {
    /// Manual commit: in the caller's transaction.
    Callers,
    /// Autocommit, `batch_size` > 0: each array (one batch) is its own transaction.
    PerArray(&'c mut Dbc),
    /// Autocommit, `batch_size` 0: the whole load is one batch, one transaction (open while
    /// `Some`; committed by `finish`, rolled back on an error or a drop).
    WholeLoad(Option<&'c mut Dbc>),
}

pub struct ArrayLoad<'c> {
    txn: Txn<'c>,
    stmt: Statement,
    sql: String,
    fed: Vec<Fed>,
    options: LoadOptions,
    count: LoadCount,
    stopper: Stopper,
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
        cancel: Arc<AtomicBool>,
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
        let txn = match dbc {
            None => Txn::Callers,
            Some(dbc) if options.batch_size > 0 => Txn::PerArray(dbc),
            Some(dbc) => {
                dbc.set_autocommit(false)?;
                Txn::WholeLoad(Some(dbc))
            }
        };
        let stopper = Stopper::new(cancel, options.timeout_secs);
        Ok(ArrayLoad {
            txn,
            stmt: Statement::new(stmt, backend),
            sql,
            fed,
            options,
            count: LoadCount::default(),
            stopper,
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
        let stopped = self.stopper.check(self.count.rows_copied);
        let sent = stopped.and_then(|()| {
            if let Txn::PerArray(dbc) = &mut self.txn {
                dbc.set_autocommit(false)?;
            }
            let mut sent = self.stmt.execute_many(&self.sql, rows, &[]);
            if let Txn::PerArray(dbc) = &mut self.txn {
                let ended = dbc.end_transaction(sent.is_ok());
                let restored = dbc.set_autocommit(true);
                if sent.is_ok() {
                    sent = ended.and(restored);
                }
            }
            sent
        });
        if let Err(e) = sent {
            self.roll_back();
            let callers = matches!(self.txn, Txn::Callers);
            return Err(Error::Bulk {
                context: format!(
                    "bulk load failed in source rows {first_row}..{} ({} rows copied before them{})",
                    first_row + n,
                    self.count.rows_copied,
                    if callers {
                        "; rows of this array before the failing one may be in the open transaction: roll it back"
                    } else {
                        ""
                    }
                ),
                inner: Box::new(e),
            });
        }
        self.count.rows_sent += n;
        if !matches!(self.txn, Txn::WholeLoad(_)) {
            self.count.rows_copied += n;
            self.count.batch_count += 1;
        }
        Ok(())
    }

    /// End the load: the whole-load transaction commits.
    pub fn finish(mut self) -> Result<LoadCount> {
        if let Txn::WholeLoad(open) = &mut self.txn {
            if let Some(dbc) = open.take() {
                let committed = dbc.end_transaction(true);
                let restored = dbc.set_autocommit(true);
                committed.and(restored)?;
                self.count.rows_copied = self.count.rows_sent;
                self.count.batch_count = u64::from(self.count.rows_sent > 0);
            }
        }
        Ok(self.count)
    }

    /// The whole-load transaction, if open, rolls back (and autocommit comes back).
    fn roll_back(&mut self) {
        if let Txn::WholeLoad(open) = &mut self.txn {
            if let Some(dbc) = open.take() {
                let _ = dbc.end_transaction(false);
                let _ = dbc.set_autocommit(true);
            }
        }
    }
}

impl Drop for ArrayLoad<'_> {
    fn drop(&mut self) {
        self.roll_back();
    }
}
