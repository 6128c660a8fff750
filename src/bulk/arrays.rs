//! The bulk load of drivers without a bcp API (SQLite3 ODBC, psqlODBC, ...): `INSERT` of the
//! fed columns as parameter arrays, one array per chunk, so memory stays bounded by the chunk.

use super::load::{LoadCount, LoadOptions, Stopper, identity_insert_sql};
use super::target::{Fed, Table};
use crate::backend::{Backend, Dbms};
use crate::error::{Error, Result};
use crate::odbc::{Dbc, Stmt};
use crate::params::ParamValue;
use crate::statement::Statement;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// The bytes of bound values one array of a load without a batch size aims at.
const ARRAY_BYTES: usize = 4 << 20;

/// Where the rows of a parameter-array load are committed.
enum Txn<'c> {
    /// Manual commit: in the caller's transaction.
    Callers,
    /// Autocommit, `batch_size` > 0: each array (one batch, at most 100,000 rows: see
    /// `rows_per_send`) is its own transaction.
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
    /// The table whose IDENTITY_INSERT this load turned on, to turn off at its end.
    identity_insert: Option<String>,
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
        // SQL Server's tables take this path only where the driver cannot bulk-copy them
        // (FreeTDS with a (MAX) or datetimeoffset column, a DSN without bcp turned on). Plain
        // INSERTs always check constraints and fire triggers (stricter than a bulk copy without
        // check_constraints / fire_triggers, never looser) and take row locks, not TABLOCK. Two
        // options would change what is stored, so they are carried over: kept identity values
        // need IDENTITY_INSERT, and a NULL into a column with a DEFAULT is refused (an INSERT
        // would store NULL, a bulk copy the default) unless keep_nulls.
        let sql_server = backend.dbms == Dbms::SqlServer;
        let mut fed = fed;
        if sql_server && !options.keep_nulls {
            for f in &mut fed {
                if table.columns[f.number as usize - 1].has_default == Some(true) {
                    f.refuses_null = true;
                    f.default_lost = true;
                }
            }
        }
        let identity_insert = (sql_server
            && options.keep_identity
            && fed
                .iter()
                .any(|f| table.columns[f.number as usize - 1].identity))
        .then(|| table.name.clone());
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
        let mut load = ArrayLoad {
            txn,
            stmt: Statement::new(stmt, backend),
            sql,
            fed,
            options,
            count: LoadCount::default(),
            stopper,
            identity_insert: None,
        };
        if let Some(table) = identity_insert {
            // Dropped on an error from here on: `drop` turns it off again.
            load.stmt
                .execute(&identity_insert_sql(&table, true), Vec::new(), &[])?;
            load.identity_insert = Some(table);
        }
        Ok(load)
    }

    /// What stops the array in flight from another thread (`cursor.cancel()`).
    pub fn cancel_handle(&self) -> crate::odbc::CancelHandle {
        self.stmt.cancel_handle()
    }

    pub fn fed(&self) -> &[Fed] {
        &self.fed
    }

    pub fn count(&self) -> LoadCount {
        self.count
    }

    /// Rows per parameter array: the batch size, or a bounded chunk: 10,000 rows, fewer for
    /// native vectors (3 KiB a row for 768 dimensions), so that an array's buffers stay a few
    /// MiB and are reused from one array to the next instead of being fresh pages (page faults
    /// were a third of a vector load's client time with 30 MiB arrays).
    pub fn rows_per_send(&self) -> usize {
        match self.options.batch_size {
            0 if self.fed.iter().any(|f| f.form.needs_arrays()) => {
                let row: usize = self
                    .fed
                    .iter()
                    .map(|f| f.form.max_cell_bytes().unwrap_or(0))
                    .sum();
                (ARRAY_BYTES / row.max(1)).clamp(256, 10_000)
            }
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
            // An array waiting on the server (a row lock) ends at the load's timeout too.
            if let Some(left) = self.stopper.seconds_left() {
                self.stmt.set_query_timeout(left)?;
            }
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
        self.identity_insert_off()?;
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

    fn identity_insert_off(&mut self) -> Result<()> {
        match self.identity_insert.take() {
            Some(table) => self
                .stmt
                .execute(&identity_insert_sql(&table, false), Vec::new(), &[]),
            None => Ok(()),
        }
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
        let _ = self.identity_insert_off();
        self.roll_back();
    }
}
