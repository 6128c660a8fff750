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
    /// The table whose IDENTITY_INSERT this load turned on, to turn off at its end.
    identity_insert: Option<String>,
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
        let keeps_identity = options.keep_identity
            && fed
                .iter()
                .any(|f| table.columns[f.number as usize - 1].identity);
        if keeps_identity {
            set_identity_insert(dbc, &table.name, true)?;
        }
        let init = bcp.init(dbc, &table.name);
        if init.is_err() && keeps_identity {
            let _ = set_identity_insert(dbc, &table.name, false);
        }
        init?;
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
            // Kept identity values: `SET IDENTITY_INSERT t ON` for the load (set above). Driver
            // 18's BCPKEEPIDENTITY changes nothing it sends (captured: the same INSERT BULK and
            // rows with it as without), and FreeTDS refuses the option (HY092).
            identity_insert: keeps_identity.then(|| table.name.clone()),
            by_collen: Vec::new(),
            ended: false,
        };
        let hints = load.options.hints();
        if !hints.is_empty() {
            load._hints = hints.encode_utf16().chain([0]).collect();
            bcp.control(load.dbc, BcpOption::HintsW, load._hints.as_ptr() as usize)?;
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
        // Both drivers want every column of the table bound ("Not enough columns bound"): a
        // column no source field feeds is bound to NULL, which takes its default unless
        // keep_nulls (an identity column is numbered by the server unless keep_identity).
        for (i, c) in table.columns.iter().enumerate() {
            let number =
                u32::try_from(i + 1).map_err(|_| Error::Internal("column number".into()))?;
            if load.fed.iter().any(|f| f.number == number) {
                continue;
            }
            let bcp_type =
                Form::of(&c.desc).map_or(super::form::bcp_type::CHARACTER, Form::bcp_type);
            // SAFETY: a static NULL cell, never replaced: valid for the life of the process.
            unsafe {
                bcp.bind(
                    load.dbc,
                    NULL_CELL.as_ptr(),
                    PREFIX_LEN,
                    SQL_VARLEN_DATA,
                    None,
                    bcp_type,
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
            if let Some(i) = self.early_dates(chunk, row) {
                let e = Error::Data(format!(
                    "FreeTDS's bulk copy reads a date before 1753-01-01 as another date (1000-01-01 as 1900-01-01, 0001-01-01 as 2001-01-01); column {:?} holds one",
                    self.fed[i].name
                ));
                return Err(self.failed(e, &format!("source row {source_row}")));
            }
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

    /// FreeTDS parses the ISO text of a date, datetime2 or datetimeoffset itself and turns a
    /// year before 1753 into another one (0001-01-01 arrived as 2001-01-01, 1000-01-01 to
    /// 1752-03-15 as 1900-..., every year from 1753 exact, probed through the peer): the
    /// column of such a value, to refuse it rather than store another date.
    fn early_dates(&self, chunk: &Chunk, row: usize) -> Option<usize> {
        if !matches!(self.bcp, Bcp::FreeTds) {
            return None;
        }
        self.fed.iter().zip(&chunk.columns).position(|(f, col)| {
            matches!(f.form, Form::Temporal(t) if !matches!(t, super::form::Temporal::Time { .. }))
                && col.value(row).is_some_and(|v| {
                    let year = std::str::from_utf8(&v[..v.len().min(4)])
                        .ok()
                        .and_then(|y| y.parse::<u16>().ok());
                    year.is_some_and(|y| y < 1753)
                })
        })
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
        let done = self.bcp.done(self.dbc);
        if let Some(t) = self.identity_insert.take() {
            let _ = set_identity_insert(self.dbc, &t, false);
        }
        done.map_err(|e| self.failed(e, &what))?;
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
            if let Some(t) = self.identity_insert.take() {
                let _ = set_identity_insert(self.dbc, &t, false);
            }
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

/// `SET IDENTITY_INSERT table ON|OFF` on the connection.
fn set_identity_insert(dbc: &Dbc, table: &str, on: bool) -> Result<()> {
    let mut stmt = crate::odbc::Stmt::new(dbc)?;
    stmt.exec_direct(&format!(
        "SET IDENTITY_INSERT {table} {}",
        if on { "ON" } else { "OFF" }
    ))?;
    Ok(())
}
