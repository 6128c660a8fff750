//! The bulk load of drivers without a bcp API (SQLite3 ODBC, psqlODBC, ...): `INSERT` of the
//! fed columns as parameter arrays, one array per chunk, so memory stays bounded by the chunk.

use super::load::{LoadCount, LoadOptions};
use super::target::{Fed, Table};
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::odbc::Stmt;
use crate::params::ParamValue;
use crate::statement::Statement;

pub struct ArrayLoad {
    stmt: Statement,
    sql: String,
    fed: Vec<Fed>,
    options: LoadOptions,
    count: LoadCount,
}

impl ArrayLoad {
    pub fn begin(
        stmt: Stmt,
        backend: Backend,
        table: &Table,
        fed: Vec<Fed>,
        options: LoadOptions,
    ) -> Result<ArrayLoad> {
        if options.keep_identity
            || options.check_constraints
            || options.table_lock
            || options.fire_triggers
        {
            // Plain INSERTs already check constraints and fire triggers; identity and table
            // locks are SQL Server's, whose drivers take the bcp path.
        }
        let quote = |n: &str| format!("\"{}\"", n.replace('"', "\"\""));
        let columns: Vec<String> = fed.iter().map(|f| quote(&f.name)).collect();
        let sql = format!(
            "INSERT INTO {} ({}) VALUES ({})",
            table.name,
            columns.join(", "),
            vec!["?"; fed.len()].join(", ")
        );
        Ok(ArrayLoad {
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
        self.stmt
            .execute_many(&self.sql, rows, &[])
            .map_err(|e| Error::Bulk {
                context: format!(
                    "bulk load failed in source rows {first_row}..{} ({} rows copied before them)",
                    first_row + n,
                    self.count.rows_copied
                ),
                inner: Box::new(e),
            })?;
        self.count.rows_sent += n;
        self.count.rows_copied += n;
        self.count.batch_count += 1;
        Ok(())
    }
}
