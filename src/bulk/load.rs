//! A bulk load in progress on the caller's own connection: through the driver's bcp API where
//! there is one (Driver 17/18, FreeTDS), else as parameter arrays of `INSERT` (`arrays.rs`).
//!
//! The caller encodes a chunk of rows ([`Chunk`]: one [`CellColumn`] per fed column), then
//! calls [`BcpLoad::send`] without holding any lock of its language; `send` hands each row to
//! the driver and ends a batch every `batch_size` rows. How a cell reaches the driver is each
//! column's `Feed`, chosen at `bcp_bind`: copied into a slot bound once (most columns),
//! pointed at with `bcp_colptr` (values with no small bound), or given its length with
//! `bcp_collen` (Driver 18's (MAX) columns); then one `bcp_sendrow` per row.

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
    fn hints(&self, keep_nulls: bool) -> String {
        let mut h = Vec::new();
        if keep_nulls {
            h.push("KEEP_NULLS");
        }
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
    stopper: Stopper,
    /// The hint text handed to `bcp_control(BCPHINTS)`: the driver may keep its address.
    _hints: Vec<u8>,
    /// Each batch runs in a transaction of the load's own (FreeTDS in autocommit mode).
    batch_txn: bool,
    keeps_identity: bool,
    /// The destination, for `bcp_init` again after each FreeTDS batch.
    table: Table,
    /// The table whose IDENTITY_INSERT this load turned on, to turn off at its end.
    identity_insert: Option<String>,
    /// Per fed column: how each row's value reaches the driver.
    feeds: Vec<Feed>,
    ended: bool,
}

impl<'c> BcpLoad<'c> {
    /// `bcp_init` into `table` and bind every column. `cancel` stops the load between rows.
    pub fn begin(
        dbc: &'c mut Dbc,
        bcp: Bcp,
        table: &Table,
        mut fed: Vec<Fed>,
        options: LoadOptions,
        autocommit: bool,
        cancel: Arc<AtomicBool>,
    ) -> Result<BcpLoad<'c>> {
        let keeps_identity = options.keep_identity
            && fed
                .iter()
                .any(|f| table.columns[f.number as usize - 1].identity);
        // SET IDENTITY_INSERT ON for the load: Driver 18's BCPKEEPIDENTITY changes nothing it
        // sends (the same INSERT BULK and rows, captured), and FreeTDS's only lists the column
        // (set in `start` too). Which of the two SQL Server itself goes by is not known here;
        // with both, the values are kept either way.
        if keeps_identity {
            set_identity_insert(dbc, &table.name, true)?;
        }
        let freetds = matches!(bcp, Bcp::FreeTds);
        if freetds {
            for f in &mut fed {
                if let Form::Text { utf8, .. } = &mut f.form {
                    *utf8 = true;
                }
            }
        }
        let stopper = Stopper::new(cancel, options.timeout_secs);
        let mut load = BcpLoad {
            dbc,
            bcp,
            table: table.clone(),
            fed,
            options,
            count: LoadCount::default(),
            rows_in_batch: 0,
            stopper,
            _hints: Vec::new(),
            identity_insert: keeps_identity.then(|| table.name.clone()),
            keeps_identity,
            // FreeTDS has no abort: in autocommit mode each batch is its own transaction (and
            // its own bcp operation: FreeTDS's bcp_batch starts the next INSERT BULK at once,
            // leaving no room for a COMMIT), so a failed or cancelled batch rolls back as with
            // Driver 18's BCPABORT.
            batch_txn: freetds && autocommit,
            feeds: Vec::new(),
            ended: false,
        };
        // Dropped on an error: `stop` turns IDENTITY_INSERT off and rolls back.
        if load.batch_txn {
            exec(load.dbc, "BEGIN TRANSACTION")?;
        }
        load.start()?;
        Ok(load)
    }

    /// `bcp_init`, the options, and a `bcp_bind` for every column of the table.
    fn start(&mut self) -> Result<()> {
        let (bcp, freetds) = (self.bcp, matches!(self.bcp, Bcp::FreeTds));
        bcp.init(self.dbc, &self.table.name)?;
        // FreeTDS has no BCPKEEPNULLS: the hint says it.
        let hints = self.options.hints(freetds && self.options.keep_nulls);
        if !hints.is_empty() {
            self._hints = bcp.hints(self.dbc, &hints)?;
        }
        if self.options.keep_nulls && !freetds {
            bcp.control(self.dbc, BcpOption::KeepNulls, 1)?;
        }
        if self.keeps_identity && freetds {
            // FreeTDS lists an identity column in its INSERT BULK only with its KEEPIDENTITY.
            bcp.control(self.dbc, BcpOption::KeepIdentity, 1)?;
        }
        self.feeds.clear();
        for (i, c) in self.table.columns.iter().enumerate() {
            let number =
                u32::try_from(i + 1).map_err(|_| Error::Internal("column number".into()))?;
            // A column no source field feeds is bound to NULL (both drivers want every column
            // bound: "Not enough columns bound"), which takes its default unless keep_nulls
            // (an identity column is numbered by the server unless keep_identity).
            let (form, fed) = match self.fed.iter().find(|f| f.number == number) {
                Some(f) => (Some(f.form), true),
                None => (Form::of(&c.desc).ok(), false),
            };
            // Driver 18 reads a zero length prefix of a (MAX) column as 65,535 bytes (it sent
            // that much of the memory after the value: seen against the peer, 2026-12-04), so
            // those columns get their lengths from bcp_collen, row by row, instead.
            let feed = match form {
                Some(form) if fed => Feed::for_form(form, freetds),
                _ => Feed::Pointer,
            };
            let (prefix, var_len) = match feed {
                Feed::Collen => (0, 0),
                _ => (PREFIX_LEN, SQL_VARLEN_DATA),
            };
            let address = match &feed {
                Feed::Slot { buf, .. } => buf.as_ptr(),
                _ => NULL_CELL.as_ptr(),
            };
            if fed {
                self.feeds.push(feed);
            }
            let bcp_type = form.map_or(super::form::bcp_type::CHARACTER, Form::bcp_type);
            // SAFETY: the bound address is a static NULL cell (Driver 18 refuses a null
            // pointer) or the column's slot, which this load owns at a fixed address (a boxed
            // slice, never resized) until it ends; `send` fills the slot, or points the driver
            // at the row's cell (bcp_colptr) inside the chunk it is sending.
            unsafe { bcp.bind(self.dbc, address, prefix, var_len, bcp_type, number)? };
        }
        Ok(())
    }

    pub fn fed(&self) -> &[Fed] {
        &self.fed
    }

    pub fn count(&self) -> LoadCount {
        self.count
    }

    /// Send every row of `chunk`; a batch ends each `batch_size` rows.
    pub fn send(&mut self, chunk: &Chunk) -> Result<()> {
        // Checked for the whole chunk before any of its rows goes: FreeTDS has no abort.
        if matches!(self.bcp, Bcp::FreeTds) {
            for row in 0..chunk.rows() {
                if let Some(i) = self.early_dates(chunk, row) {
                    let e = Error::Data(format!(
                        "FreeTDS's bulk copy reads a date before 1753-01-01 as another date (1000-01-01 as 1900-01-01, 0001-01-01 as 2001-01-01); column {:?} holds one",
                        self.fed[i].name
                    ));
                    let source_row = chunk.first_row + row as u64;
                    return Err(self.failed(e, &format!("source row {source_row}")));
                }
            }
        }
        for row in 0..chunk.rows() {
            // The clock and the cancel flag every 256 rows: a row is well under a microsecond.
            if row % 256 == 0 {
                self.check_stop()?;
            }
            for ((f, col), feed) in self.fed.iter().zip(&chunk.columns).zip(&mut self.feeds) {
                let cell = col.cell(row);
                match feed {
                    Feed::Slot { buf, pointing_away } => {
                        if cell.len() <= buf.len() {
                            // The common case: one copy, no call into the driver.
                            buf[..cell.len()].copy_from_slice(cell);
                            if *pointing_away {
                                // SAFETY: the slot is this load's, at a fixed address.
                                unsafe { self.bcp.colptr(self.dbc, buf.as_ptr(), f.number)? };
                                *pointing_away = false;
                            }
                        } else {
                            // SAFETY: the row's prefix inside `chunk`, which the caller keeps
                            // (borrowed here) until this sendrow returns.
                            unsafe { self.bcp.colptr(self.dbc, cell.as_ptr(), f.number)? };
                            *pointing_away = true;
                        }
                    }
                    Feed::Pointer => {
                        // SAFETY: as above: the row's prefix inside the borrowed `chunk`.
                        unsafe { self.bcp.colptr(self.dbc, cell.as_ptr(), f.number)? };
                    }
                    Feed::Collen => {
                        let len = match col.len_of(row) {
                            None => SQL_NULL_DATA,
                            // bcp_collen takes an i32: SQL Server's (MAX) limit too.
                            Some(n) => i32::try_from(n).map_err(|_| {
                                Error::Data(format!(
                                    "column {:?}, source row {}: a value of {n} bytes; one value holds at most 2,147,483,647",
                                    f.name,
                                    chunk.first_row + row as u64
                                ))
                            })?,
                        };
                        // SAFETY: the row's value (after its prefix) inside the borrowed
                        // `chunk`, valid until this sendrow returns.
                        unsafe { self.bcp.colptr(self.dbc, cell.as_ptr().add(8), f.number)? };
                        self.bcp.collen(self.dbc, len, f.number)?;
                    }
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
        if self.batch_txn {
            // The batch ends its bcp operation and its transaction; the next gets new ones.
            let ended = self.bcp.done(self.dbc).and_then(|_| {
                exec(self.dbc, "COMMIT TRANSACTION; BEGIN TRANSACTION")?;
                self.start()
            });
            ended.map_err(|e| self.failed(e, &what))?;
        } else {
            self.bcp
                .batch(self.dbc)
                .map_err(|e| self.failed(e, &what))?;
        }
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
        let mut done = self.bcp.done(self.dbc);
        if matches!(self.bcp, Bcp::FreeTds) && self.rows_in_batch == 0 {
            // FreeTDS sends its INSERT BULK with a batch's first row; with none, its bcp_done
            // reports a "General driver error" for a load that never started.
            done = Ok(0);
        }
        if self.batch_txn {
            let end = if done.is_ok() {
                "COMMIT TRANSACTION"
            } else {
                "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION"
            };
            let ended = exec(self.dbc, end);
            if done.is_ok() {
                done = ended.map(|()| 0);
            }
        }
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
        let _ = self.stop();
    }

    /// End the operation without committing the batch in flight where the driver can (Driver
    /// 18); the rows of it the server kept all the same (FreeTDS, which has no abort).
    fn stop(&mut self) -> u64 {
        if self.ended {
            return 0;
        }
        self.ended = true;
        let mut kept = self.bcp.abort(self.dbc).unwrap_or(0);
        if self.batch_txn && exec(self.dbc, "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION").is_ok() {
            kept = 0;
        }
        if let Some(t) = self.identity_insert.take() {
            let _ = set_identity_insert(self.dbc, &t, false);
        }
        kept
    }

    fn check_stop(&self) -> Result<()> {
        self.stopper.check(self.count.rows_copied)
    }

    fn failed(&mut self, e: Error, what: &str) -> Error {
        let copied = self.count.rows_copied + self.stop();
        Error::Bulk {
            context: format!("bulk load failed at {what} ({copied} rows copied before it)"),
            inner: Box::new(e),
        }
    }
}

impl Drop for BcpLoad<'_> {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// `SET IDENTITY_INSERT table ON|OFF` on the connection.
fn set_identity_insert(dbc: &Dbc, table: &str, on: bool) -> Result<()> {
    exec(dbc, &identity_insert_sql(table, on))
}

/// The statement both load paths turn kept identity values on and off with.
pub(super) fn identity_insert_sql(table: &str, on: bool) -> String {
    format!(
        "SET IDENTITY_INSERT {table} {}",
        if on { "ON" } else { "OFF" }
    )
}

/// One statement on the connection, outside any cursor.
fn exec(dbc: &Dbc, sql: &str) -> Result<()> {
    crate::odbc::Stmt::new(dbc)?.exec_direct(sql).map(|_| ())
}

/// What stops a load between rows: `cursor.cancel()` (the flag) and the load's timeout.
pub(super) struct Stopper {
    cancel: Arc<AtomicBool>,
    started: Instant,
    timeout_secs: u64,
}

impl Stopper {
    pub(super) fn new(cancel: Arc<AtomicBool>, timeout_secs: u64) -> Stopper {
        Stopper {
            cancel,
            started: Instant::now(),
            timeout_secs,
        }
    }

    /// The whole seconds left before the load's timeout (at least 1), for a statement's query
    /// timeout; `None` without a timeout.
    pub(super) fn seconds_left(&self) -> Option<usize> {
        (self.timeout_secs > 0).then(|| {
            let left = self
                .timeout_secs
                .saturating_sub(self.started.elapsed().as_secs());
            usize::try_from(left.max(1)).unwrap_or(usize::MAX)
        })
    }

    /// `Err` when the load must stop; `copied`: the rows committed so far, for the message.
    pub(super) fn check(&self, copied: u64) -> Result<()> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(Error::Bulk {
                context: format!("bulk load cancelled after {copied} rows were copied"),
                inner: Box::new(Error::Cancelled {
                    records: Vec::new(),
                }),
            });
        }
        if self.timeout_secs > 0 && self.started.elapsed().as_secs() >= self.timeout_secs {
            return Err(Error::Bulk {
                context: format!(
                    "bulk load timed out after {} s with {copied} rows copied",
                    self.timeout_secs
                ),
                inner: Box::new(Error::Operational("timeout expired (HYT00)".into())),
            });
        }
        Ok(())
    }
}

/// How one fed column's value reaches the driver for each row.
enum Feed {
    /// The column is bound once to this slot (prefix and value) and each row's cell is copied
    /// into it: no call into the driver per cell. A cell too big for it (a long decimal's or
    /// date's text) is pointed at instead, and the slot taken back on the next row that fits.
    Slot { buf: Box<[u8]>, pointing_away: bool },
    /// `bcp_colptr` to the row's cell (prefix and value): values with no small bound.
    Pointer,
    /// `bcp_colptr` to the value and `bcp_collen` for its length: Driver 18's (MAX) columns.
    Collen,
}

/// Slots are for cells up to this size (prefix included); bigger columns are pointed at.
const MAX_SLOT: usize = 8 + 8000;

impl Feed {
    fn for_form(form: Form, freetds: bool) -> Feed {
        if form.unbounded() && !freetds {
            return Feed::Collen;
        }
        match form.max_cell_bytes() {
            Some(n) if n + 8 <= MAX_SLOT => Feed::Slot {
                buf: vec![0u8; n + 8].into_boxed_slice(),
                pointing_away: false,
            },
            _ => Feed::Pointer,
        }
    }
}
