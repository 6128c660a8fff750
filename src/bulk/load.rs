//! A bulk load in progress on the caller's own connection: through the driver's bcp API where
//! there is one (Driver 17/18, FreeTDS), else as parameter arrays of `INSERT` (`arrays.rs`).
//!
//! The caller encodes a chunk of rows ([`Chunk`]: one [`CellColumn`] per fed column), then
//! calls [`BcpLoad::send`] without holding any lock of its language; `send` hands each row to
//! the driver (`bcp_colptr` per column, `bcp_sendrow`) and ends a batch every `batch_size` rows.

use super::cells::{CellColumn, PREFIX_LEN};
use super::form::Form;
use super::target::{Fed, Table};
use crate::error::{Error, Result};
use crate::odbc::Dbc;
use crate::odbc::bcp::{Bcp, BcpOption, SQL_NULL_DATA, SQL_VARLEN_DATA};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// A NULL cell (prefix -1): the address each column is bound to until its first row.
static NULL_CELL: [u8; 8] = super::cells::NULL_PREFIX;

/// mssql-python's options, with SqlBulkCopy's meaning.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// Rows per batch; 0: one batch for the whole load.
    pub batch_size: u64,
    /// Seconds the whole load may take; 0: no limit.
    pub timeout_secs: u64,
    pub keep_identity: bool,
    pub check_constraints: bool,
    pub table_lock: bool,
    pub keep_nulls: bool,
    pub fire_triggers: bool,
    pub use_internal_transaction: bool,
}

impl LoadOptions {
    /// The `WITH (...)` hints of the `INSERT BULK` the driver builds.
    fn hints(&self) -> String {
        let mut h = Vec::new();
        if self.check_constraints {
            h.push("CHECK_CONSTRAINTS");
        }
        if self.table_lock {
            h.push("TABLOCK");
        }
        if self.fire_triggers {
            h.push("FIRE_TRIGGERS");
        }
        h.join(", ")
    }
}

/// The rows of one chunk, one column per fed column (in the order of [`BcpLoad::fed`]).
#[derive(Debug, Default)]
pub struct Chunk {
    pub columns: Vec<CellColumn>,
    /// Source row number of the chunk's first row.
    pub first_row: u64,
}

impl Chunk {
    pub fn new(columns: usize, first_row: u64) -> Chunk {
        Chunk {
            columns: (0..columns).map(|_| CellColumn::default()).collect(),
            first_row,
        }
    }

    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, CellColumn::rows)
    }

    pub fn bytes_held(&self) -> usize {
        self.columns.iter().map(CellColumn::bytes_held).sum()
    }

    pub fn clear(&mut self, first_row: u64) {
        for c in &mut self.columns {
            c.clear();
        }
        self.first_row = first_row;
    }
}

/// What a load has done so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadCount {
    /// Rows handed to the server.
    pub rows_sent: u64,
    /// Rows of batches the server has committed (or, inside the caller's transaction, accepted).
    pub rows_copied: u64,
    pub batch_count: u64,
}

/// A bcp load; `done` or `abort` ends it (dropping it aborts).
pub struct BcpLoad<'c> {
    /// Held exclusively: no other call may use the connection during a bcp operation.
    dbc: &'c mut Dbc,
    bcp: Bcp,
    fed: Vec<Fed>,
    options: LoadOptions,
    count: LoadCount,
    rows_in_batch: u64,
    started: Instant,
    cancel: Arc<AtomicBool>,
    /// The hint text handed to `bcp_control(BCPHINTS)`: the driver keeps its address.
    _hints: Vec<u16>,
    /// Per fed column: its length goes by `bcp_collen` instead of the cell's prefix.
    by_collen: Vec<bool>,
    ended: bool,
}

impl<'c> BcpLoad<'c> {
    /// `bcp_init` into `table` and bind every fed column. `cancel` stops the load between rows.
    pub fn begin(
        dbc: &'c mut Dbc,
        bcp: Bcp,
        table: &Table,
        fed: Vec<Fed>,
        options: LoadOptions,
        cancel: Arc<AtomicBool>,
    ) -> Result<BcpLoad<'c>> {
        bcp.init(dbc, &table.name)?;
        let mut fed = fed;
        if let Bcp::FreeTds = bcp {
            for f in &mut fed {
                if let Form::Text { utf8, .. } = &mut f.form {
                    *utf8 = true;
                }
            }
        }
        let mut load = BcpLoad {
            dbc,
            bcp,
            fed,
            options,
            count: LoadCount::default(),
            rows_in_batch: 0,
            started: Instant::now(),
            cancel,
            _hints: Vec::new(),
            by_collen: Vec::new(),
            ended: false,
        };
        let hints = load.options.hints();
        if !hints.is_empty() {
            load._hints = hints.encode_utf16().chain([0]).collect();
            bcp.control(load.dbc, BcpOption::HintsW, load._hints.as_ptr() as usize)?;
        }
        if load.options.keep_identity {
            bcp.control(load.dbc, BcpOption::KeepIdentity, 1)?;
        }
        if load.options.keep_nulls {
            // FreeTDS takes no KEEPNULLS; its loads keep NULLs as sent (see the README).
            if matches!(bcp, Bcp::MsOdbc(_)) {
                bcp.control(load.dbc, BcpOption::KeepNulls, 1)?;
            }
        }
        for i in 0..load.fed.len() {
            let (form, number) = (load.fed[i].form, load.fed[i].number);
            // Driver 18 reads a zero length prefix of a (MAX) column as 65,535 bytes (it sent
            // that much of the memory after the value: seen against the peer, 2026-12-04), so
            // those columns get their lengths from bcp_collen, row by row, instead.
            let by_collen = matches!(bcp, Bcp::MsOdbc(_)) && form.unbounded();
            let (prefix, var_len) = if by_collen {
                (0, 0)
            } else {
                (PREFIX_LEN, SQL_VARLEN_DATA)
            };
            load.by_collen.push(by_collen);
            // SAFETY: the bound address is a static NULL prefix (Driver 18 refuses a null
            // pointer); `send` replaces it with each row's (bcp_colptr) before every
            // bcp_sendrow, pointing into the chunk it is sending.
            unsafe {
                bcp.bind(
                    load.dbc,
                    NULL_CELL.as_ptr(),
                    prefix,
                    var_len,
                    None,
                    form.bcp_type(),
                    number,
                )?
            };
        }
        Ok(load)
    }

    pub fn fed(&self) -> &[Fed] {
        &self.fed
    }

    pub fn count(&self) -> LoadCount {
        self.count
    }

    /// Send every row of `chunk`; a batch ends each `batch_size` rows.
    pub fn send(&mut self, chunk: &Chunk) -> Result<()> {
        for row in 0..chunk.rows() {
            self.check_stop()?;
            for ((f, col), by_collen) in self.fed.iter().zip(&chunk.columns).zip(&self.by_collen) {
                if *by_collen {
                    let len = col
                        .len_of(row)
                        .map_or(SQL_NULL_DATA, |n| i32::try_from(n).unwrap_or(i32::MAX));
                    // SAFETY: the address is the row's value inside `chunk` (after its prefix),
                    // which the caller keeps (borrowed here) until this sendrow returns.
                    unsafe {
                        self.bcp
                            .colptr(self.dbc, col.prefix_ptr(row).add(8), f.number)?
                    };
                    self.bcp.collen(self.dbc, len, f.number)?;
                } else {
                    // SAFETY: the address is the row's prefix inside `chunk`, which the caller
                    // keeps (borrowed here) until this sendrow returns.
                    unsafe { self.bcp.colptr(self.dbc, col.prefix_ptr(row), f.number)? };
                }
            }
            let source_row = chunk.first_row + row as u64;
            self.bcp
                .sendrow(self.dbc)
                .map_err(|e| self.failed(e, &format!("source row {source_row}")))?;
            self.count.rows_sent += 1;
            self.rows_in_batch += 1;
            if self.options.batch_size > 0 && self.rows_in_batch == self.options.batch_size {
                self.end_batch()?;
            }
        }
        Ok(())
    }

    fn end_batch(&mut self) -> Result<()> {
        let first = self.count.rows_sent - self.rows_in_batch;
        let what = format!("the batch of source rows {first}..{}", self.count.rows_sent);
        let rows = self
            .bcp
            .batch(self.dbc)
            .map_err(|e| self.failed(e, &what))?;
        let _ = rows;
        self.count.rows_copied += self.rows_in_batch;
        self.count.batch_count += 1;
        self.rows_in_batch = 0;
        Ok(())
    }

    /// End the load: the last batch is sent and committed (`bcp_done`).
    pub fn done(mut self) -> Result<LoadCount> {
        self.ended = true;
        let first = self.count.rows_sent - self.rows_in_batch;
        let what = format!("the batch of source rows {first}..{}", self.count.rows_sent);
        self.bcp.done(self.dbc).map_err(|e| self.failed(e, &what))?;
        if self.rows_in_batch > 0 {
            self.count.rows_copied += self.rows_in_batch;
            self.count.batch_count += 1;
        }
        Ok(self.count)
    }

    /// Stop: the batch in flight is not committed.
    pub fn abort(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if !self.ended {
            self.ended = true;
            // The driver rolls back the batch in flight and ends the bcp operation.
            let _ = self.bcp.abort(self.dbc);
        }
    }

    fn check_stop(&self) -> Result<()> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(Error::Bulk {
                context: format!(
                    "bulk load cancelled after {} rows were copied",
                    self.count.rows_copied
                ),
                inner: Box::new(Error::Cancelled {
                    records: Vec::new(),
                }),
            });
        }
        if self.options.timeout_secs > 0
            && self.started.elapsed().as_secs() >= self.options.timeout_secs
        {
            return Err(Error::Bulk {
                context: format!(
                    "bulk load timed out after {} s with {} rows copied",
                    self.options.timeout_secs, self.count.rows_copied
                ),
                inner: Box::new(Error::Operational("timeout expired (HYT00)".into())),
            });
        }
        Ok(())
    }

    fn failed(&mut self, e: Error, what: &str) -> Error {
        let copied = self.count.rows_copied;
        self.stop();
        Error::Bulk {
            context: format!("bulk load failed at {what} ({copied} rows copied before it)"),
            inner: Box::new(e),
        }
    }
}

impl Drop for BcpLoad<'_> {
    fn drop(&mut self) {
        self.stop();
    }
}
