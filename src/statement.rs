//! A statement and the result set it is positioned on: execute (with its driver quirks),
//! nextset, row counts, messages and output parameters. Rows come from its [`RowSet`].

use crate::backend::{Backend, Dbms};
use crate::error::Result;
use crate::odbc::{CancelHandle, Diagnostic, Outcome, Stmt};
use crate::params::{BoundParams, InputSize, ParamValue};
use crate::plan::ResultPlan;
use crate::rowset::{Refill, RowSet, RowStream};
use std::sync::Arc;

/// The rows of a statement's current result set ([`Statement::rows`]).
pub type Rows<'s> = RowStream<'s, Statement>;

/// The binding of one parameter row (a single row always has one binding type per column).
fn single_row(row: Vec<ParamValue>, sizes: &[InputSize], backend: Backend) -> Result<BoundParams> {
    BoundParams::build(&[row], sizes, backend)?
        .ok_or_else(|| crate::Error::Internal("one parameter row found no common binding".into()))
}

pub struct Statement {
    // Field order is drop order: the handle goes first, so the driver holds no pointer into
    // the row set's buffers or `params` when they are freed.
    stmt: Stmt,
    rows: RowSet,
    params: Option<BoundParams>,
    backend: Backend,
    row_count: isize,
    messages: Vec<Diagnostic>,
    /// Output parameter values of the last execute, once its last result has been read.
    outputs: Option<Vec<(usize, ParamValue)>>,
    /// Bumped on every result-set transition (execute, nextset, close). Plans built by the
    /// binding layer remember the epoch they were built under and are never used past it.
    epoch: u64,
    /// SQL types whose text columns are read as the driver's bytes (see
    /// [`ResultPlan::build_with_raw`]); set by the caller before an execute, usually empty.
    raw_sql_types: Vec<i16>,
    /// FreeTDS only: SQLMoreResults already called at the end of the current result set (see
    /// the [`Refill`] impl), its outcome and diagnostic records, for the next `next_result`.
    ahead: Option<Result<(Outcome, Vec<Diagnostic>)>>,
}

impl Statement {
    pub fn new(mut stmt: Stmt, mut backend: Backend) -> Statement {
        stmt.cancel_handle()
            .set_cooperative(backend.driver == crate::backend::Driver::FreeTds);
        // Cut cells are read again by absolute position: only on a static cursor. SQLite3 ODBC
        // gives one by default (its results are materialised); with `StepAPI=1` it is
        // forward-only and such columns are streamed row by row instead.
        const CURSOR_STATIC: usize = 3;
        backend.reread = backend.reread && stmt.cursor_type().ok() == Some(CURSOR_STATIC);
        Statement {
            stmt,
            rows: RowSet::default(),
            params: None,
            backend,
            row_count: -1,
            messages: Vec::new(),
            outputs: None,
            epoch: 0,
            raw_sql_types: Vec::new(),
            ahead: None,
        }
    }

    /// Read text columns of these SQL types as the driver's bytes from the next result set on.
    pub fn set_raw_sql_types(&mut self, types: Vec<i16>) {
        self.raw_sql_types = types;
    }

    /// The statement handle's address (pyodbc's `cursor.hstmt`).
    pub fn handle_address(&self) -> usize {
        self.stmt.address()
    }

    pub fn cancel_handle(&self) -> CancelHandle {
        self.stmt.cancel_handle()
    }

    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    pub fn row_count(&self) -> isize {
        self.row_count
    }

    pub fn messages(&self) -> &[Diagnostic] {
        &self.messages
    }

    /// pyodbc's `cursor.noscan` (`SQL_ATTR_NOSCAN`) for later executes.
    pub fn set_noscan(&mut self, on: bool) -> Result<()> {
        self.rows.join(&mut self.stmt);
        self.stmt.set_noscan(on)
    }

    /// The largest value a streamed read may hold (bytes; 0: no limit), for later fetches.
    pub fn set_max_lob_bytes(&mut self, bytes: usize) {
        self.rows.join(&mut self.stmt);
        self.stmt.set_max_lob_bytes(bytes);
    }

    pub fn set_query_timeout(&mut self, secs: usize) -> Result<()> {
        self.rows.join(&mut self.stmt);
        self.stmt.set_query_timeout(secs)
    }

    /// An error that follows a `cancel()` is the cancellation, whatever the driver called it.
    fn relabel(&self, e: crate::Error) -> crate::Error {
        if self.stmt.take_cancel_requested() {
            e.into_cancelled()
        } else {
            e
        }
    }

    /// The rows of the current result set, as the one stream every consumer reads.
    #[inline]
    pub fn rows(&mut self) -> Rows<'_> {
        RowStream::new(self)
    }

    /// The current result set's row source, to read where it stands (its plan, the rows served).
    pub fn row_set(&self) -> &RowSet {
        &self.rows
    }

    /// Collect the records a successful call left: warnings and informational messages (class
    /// 01: PRINT, low-severity RAISERROR) go to `messages`; an error record means part of the
    /// work failed even though the call "succeeded" (FreeTDS reports a rejected statement of an
    /// executemany batch this way) and is raised. FreeTDS also leaves PRINT messages behind a
    /// plain SQL_SUCCESS from SQLMoreResults, so `always` reads the records whatever the code.
    fn note(&mut self, outcome: Outcome, function: &'static str, always: bool) -> Result<()> {
        if outcome == Outcome::SuccessWithInfo || (always && outcome == Outcome::Success) {
            let records = self.stmt.diagnostics();
            let (warnings, errors) = self.sort_records(records);
            return self.note_records(function, warnings, errors);
        }
        Ok(())
    }

    /// Split a successful call's records into messages and errors (see `Backend::info_is_message`).
    fn sort_records(&self, records: Vec<Diagnostic>) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
        if self.backend.info_is_message() {
            return (records, Vec::new());
        }
        records.into_iter().partition(|d| !d.is_error())
    }

    /// Warnings become messages; an error record, or a warning that reports a lost link
    /// (FreeTDS: 01000 native 20017 "Unexpected EOF from the server"), fails the call.
    fn note_records(
        &mut self,
        function: &'static str,
        warnings: Vec<Diagnostic>,
        mut errors: Vec<Diagnostic>,
    ) -> Result<()> {
        if crate::Error::is_loss_records(&warnings) {
            errors.extend(warnings);
            return Err(crate::Error::odbc(function, errors));
        }
        self.messages.extend(warnings);
        if !errors.is_empty() {
            return Err(crate::Error::odbc(function, errors));
        }
        Ok(())
    }

    /// Leave the current result set (if any) and forget everything about it.
    fn reset(&mut self) -> Result<()> {
        self.ahead = None;
        self.rows.reset(&mut self.stmt)?;
        self.stmt.take_cancel_requested();
        self.epoch += 1;
        self.messages.clear();
        self.outputs = None;
        self.row_count = -1;
        self.stmt.close_cursor()
    }

    /// Execute `sql` with one row of parameters.
    pub fn execute(
        &mut self,
        sql: &str,
        params: Vec<ParamValue>,
        sizes: &[InputSize],
    ) -> Result<()> {
        self.execute_inner(sql, params, sizes)
            .map_err(|e| self.relabel(e))
    }

    fn execute_inner(
        &mut self,
        sql: &str,
        params: Vec<ParamValue>,
        sizes: &[InputSize],
    ) -> Result<()> {
        self.reset()?;
        let outcome = if params.is_empty() {
            self.unbind_params()?;
            self.stmt.exec_direct(sql)?
        } else {
            let bound = single_row(params, sizes, self.backend)?;
            self.exec_bound(sql, bound)?
        };
        self.note(outcome, "SQLExecDirect", false)?;
        self.enter_result(outcome)?;
        self.check_not_cancelled()
    }

    /// A cancel that reached the server answers the request with DONE(ATTN) alone, which
    /// Driver 18 (pyodbc too) reports as a plain success: no result set and no row count, as a
    /// statement that ran. Had it run, a count or columns would say so (SQL Server sends a
    /// statement's DONE before the attention's), so after a cancel request that is the
    /// cancellation: an INSERT cancelled unrun must not look done. (Found by eng/chaos.py.)
    fn check_not_cancelled(&mut self) -> Result<()> {
        if self.row_count == -1
            && !self.has_result_set()
            && self.stmt.cancel_requested()
            && self.stmt.take_cancel_requested()
        {
            return Err(crate::Error::Cancelled {
                records: Vec::new(),
            });
        }
        Ok(())
    }

    /// Run an ODBC catalog function (SQLTables, SQLColumns, ...): its result set is planned,
    /// bound and fetched exactly like the result of an execute.
    pub fn catalog(&mut self, call: &crate::catalog::CatalogCall) -> Result<()> {
        self.catalog_inner(call).map_err(|e| self.relabel(e))
    }

    fn catalog_inner(&mut self, call: &crate::catalog::CatalogCall) -> Result<()> {
        self.reset()?;
        self.unbind_params()?;
        let outcome = self.stmt.catalog(call)?;
        self.note(outcome, call.function(), false)?;
        self.enter_result(outcome)
    }

    fn unbind_params(&mut self) -> Result<()> {
        if let Some(old) = self.params.take() {
            self.stmt.reset_params()?;
            // SQL_RESET_PARAMS leaves SQL_ATTR_PARAMSET_SIZE alone: after a 50-row
            // executemany the next parameterless execute would run 50 times.
            if old.rows() > 1 {
                self.stmt.set_paramset_size(1)?;
            }
        }
        Ok(())
    }

    fn exec_bound(&mut self, sql: &str, mut bound: BoundParams) -> Result<Outcome> {
        self.unbind_params()?;
        // A table-valued parameter without a type name: prepared, so that describing the
        // parameter gives the driver the type name from the procedure's signature.
        let undescribed = bound.undescribed_tables();
        let prepared = !undescribed.is_empty();
        if prepared {
            self.stmt.prepare(sql)?;
            for number in undescribed {
                self.stmt.describe_param(number)?;
            }
        }
        // SAFETY: `bound` is stored in `self.params` right after binding and lives until the
        // next execute resets the bindings, or the statement handle (dropped first) is freed.
        unsafe { bound.bind(&mut self.stmt)? };
        self.params = Some(bound);
        if prepared {
            self.stmt.execute()
        } else {
            self.stmt.exec_direct(sql)
        }
    }

    /// Execute `sql` once per parameter row: as parameter arrays (one round trip per request
    /// of about 16 MiB, `params::request_end`) when every column has one binding type, else row
    /// by row. Any result sets are discarded; `row_count` is the total affected (or -1 when the
    /// driver does not say).
    pub fn execute_many(
        &mut self,
        sql: &str,
        rows: Vec<Vec<ParamValue>>,
        sizes: &[InputSize],
    ) -> Result<()> {
        self.execute_many_inner(sql, rows, sizes)
            .map_err(|e| self.relabel(e))
    }

    fn execute_many_inner(
        &mut self,
        sql: &str,
        mut rows: Vec<Vec<ParamValue>>,
        sizes: &[InputSize],
    ) -> Result<()> {
        self.reset()?;
        if rows.is_empty() {
            return Ok(());
        }
        let mut total: Option<isize> = Some(0);
        let add = |n: isize, total: &mut Option<isize>| {
            *total = match (*total, n) {
                (Some(t), n) if n >= 0 => Some(t + n),
                _ => None,
            }
        };
        // sqlite3odbc applies row 0's length indicator to every row of a SQL_C_BINARY array
        // (silent corruption, seen in the suite); SQLite is in-process, so rows one by one cost
        // little there.
        // FreeTDS sends a parameter array as one text batch and writes each timestamp as a
        // literal without its fraction ('2024-01-01 00:00:01' for 00:00:01.001): silent loss, so
        // arrays with timestamps go row by row there (one RPC each, which keeps the fraction).
        let freetds_timestamps = self.backend.driver == crate::backend::Driver::FreeTds
            && rows
                .iter()
                .any(|r| r.iter().any(|v| matches!(v, ParamValue::Timestamp(_))));
        let arrays_ok = self.backend.dbms != Dbms::Sqlite && !freetds_timestamps;
        let mut start = 0;
        while start < rows.len() {
            let end = if arrays_ok {
                crate::params::request_end(sql.len(), &rows, start, crate::params::REQUEST_BYTES)
            } else {
                rows.len()
            };
            if start > 0 {
                self.stmt.close_cursor()?;
            }
            let array = if arrays_ok {
                BoundParams::build(&rows[start..end], sizes, self.backend)?
            } else {
                None
            };
            match array {
                Some(bound) if self.backend.dbms == Dbms::SqlServer => {
                    // Prepared, as pyodbc's fast_executemany does: Driver 18 then sends the
                    // statement once (sp_prepare) and each row as sp_execute with the handle
                    // (seen at the peer), not an sp_executesql repeating the statement text per
                    // row (the peer spent
                    // a fifth less CPU, ferrodbc a third less, on 100k narrow rows), and
                    // FreeTDS sends one RPC per row with the values bound instead of a text
                    // batch with every value spliced in (parameters are never interpolated
                    // into SQL; tests/sqlserver/test_sqlserver_security.py).
                    self.unbind_params()?;
                    let mut bound = bound;
                    // SAFETY: as in `exec_bound`.
                    unsafe { bound.bind(&mut self.stmt)? };
                    self.params = Some(bound);
                    let outcome = self.stmt.prepare_execute(sql)?;
                    self.note(outcome, "SQLExecute", false)?;
                    let n = self.drain_counts(outcome)?;
                    add(n, &mut total);
                }
                Some(bound) => {
                    let outcome = self.exec_bound(sql, bound)?;
                    self.note(outcome, "SQLExecDirect", false)?;
                    let n = self.drain_counts(outcome)?;
                    add(n, &mut total);
                }
                None => {
                    for row in &mut rows[start..end] {
                        self.stmt.close_cursor()?;
                        let bound = single_row(std::mem::take(row), sizes, self.backend)?;
                        let outcome = self.exec_bound(sql, bound)?;
                        self.note(outcome, "SQLExecDirect", false)?;
                        let n = self.drain_counts(outcome)?;
                        add(n, &mut total);
                    }
                }
            }
            start = end;
        }
        self.unbind_params()?;
        self.stmt.close_cursor()?;
        self.row_count = total.unwrap_or(-1);
        Ok(())
    }

    /// Sum the row counts of every result of an execution, discarding rows.
    fn drain_counts(&mut self, first: Outcome) -> Result<isize> {
        let mut total: isize = 0;
        let mut known = false;
        if first != Outcome::NoData {
            let n = self.stmt.row_count()?;
            if n >= 0 {
                total += n;
                known = true;
            }
            loop {
                let o = self.stmt.more_results()?;
                if o == Outcome::NoData {
                    break;
                }
                self.note(o, "SQLMoreResults", true)?;
                let n = self.stmt.row_count()?;
                if n >= 0 {
                    total += n;
                    known = true;
                }
            }
        } else {
            known = true;
        }
        Ok(if known { total } else { -1 })
    }

    /// Position on the result the driver just produced: plan it if it has columns, else take
    /// its row count.
    fn enter_result(&mut self, outcome: Outcome) -> Result<()> {
        if outcome == Outcome::NoData {
            // e.g. an UPDATE that matched nothing, on drivers that say so with SQL_NO_DATA
            // (pyodbc says 0 there too).
            self.row_count = 0;
            return self.results_done();
        }
        // The driver's count for every statement, read as pyodbc reads it (before the columns).
        let row_count = self.stmt.row_count()?;
        let ncols = self.stmt.num_result_cols()?;
        if ncols == 0 {
            self.row_count = row_count;
            return Ok(());
        }
        let mut descs = Vec::with_capacity(ncols as usize);
        for c in 1..=ncols {
            descs.push(self.stmt.describe_col(c)?);
        }
        let plan = Arc::new(ResultPlan::build_with_raw(
            descs,
            self.backend,
            &self.raw_sql_types,
        ));
        self.rows.open(&mut self.stmt, plan)?;
        // What the driver says a SELECT has (pyodbc reports the same): psqlODBC knows it, SQL
        // Server's drivers say -1 ("unknown", PEP 249).
        self.row_count = row_count.max(-1);
        Ok(())
    }

    /// Only a lost link is raised now; anything else SQLMoreResults said (the next result, an
    /// error of the batch's next statement) is kept for `next_result`, as if called then.
    fn look_ahead(&mut self) -> Result<()> {
        let outcome = match self.stmt.more_results() {
            Ok(outcome) => outcome,
            Err(e) if e.is_connection_loss() => return Err(e),
            Err(e) => {
                self.ahead = Some(Err(e));
                return Ok(());
            }
        };
        let records = match outcome {
            Outcome::Success | Outcome::SuccessWithInfo => self.stmt.diagnostics(),
            _ => Vec::new(),
        };
        if crate::Error::is_loss_records(&records) {
            return Err(crate::Error::odbc("SQLMoreResults", records));
        }
        self.ahead = Some(Ok((outcome, records)));
        Ok(())
    }

    /// Move to the next result set. `Ok(false)` when there is none.
    pub fn next_result(&mut self) -> Result<bool> {
        self.next_result_inner().map_err(|e| self.relabel(e))
    }

    fn next_result_inner(&mut self) -> Result<bool> {
        self.rows.leave(&mut self.stmt);
        self.epoch += 1;
        self.messages.clear();
        self.row_count = -1;
        let ahead = self.ahead.take().transpose()?;
        let outcome = match &ahead {
            Some((outcome, _)) => *outcome,
            None => self.stmt.more_results()?,
        };
        if outcome == Outcome::NoData {
            self.results_done()?;
            return Ok(false);
        }
        match ahead {
            Some((_, records)) => {
                let (warnings, errors) = self.sort_records(records);
                self.note_records("SQLMoreResults", warnings, errors)?;
            }
            None => self.note(outcome, "SQLMoreResults", true)?,
        }
        self.enter_result(outcome)?;
        Ok(true)
    }

    /// Every result of the execution has been read: the driver has stored the output parameters.
    fn results_done(&mut self) -> Result<()> {
        if let Some(params) = self.params.as_ref().filter(|p| p.has_outputs()) {
            self.outputs = Some(params.read_outputs()?);
        }
        Ok(())
    }

    /// Output parameter values of the last execute (parameter index, value): `None` until its
    /// last result has been read (`next_result` returned false), and after they were taken.
    pub fn take_outputs(&mut self) -> Option<Vec<(usize, ParamValue)>> {
        self.outputs.take()
    }

    /// Close the cursor: discard pending results (the driver sends ATTENTION if rows are still
    /// streaming). Bindings and buffers stay for the next execute.
    /// Discard the pending results. In a forked child nothing is sent (see `crate::process`): the
    /// statement is the parent's, and is only abandoned when dropped.
    pub fn close(&mut self) -> Result<()> {
        if !self.stmt.owned_here() {
            return Ok(());
        }
        self.reset()
    }

    /// Whether this process allocated the statement (false in a forked child).
    pub fn owned_here(&self) -> bool {
        self.stmt.owned_here()
    }

    pub fn has_result_set(&self) -> bool {
        self.rows.plan().is_some()
    }
}

/// A statement refills its row set from its handle, with its own end-of-result check.
///
/// FreeTDS ends a result set at a malformed token as if it were the end (a short array or
/// SQL_NO_DATA, no diagnostic): the socket is gone, and only the next SQLMoreResults says
/// so (01000, 20017). So at the end of a result set through FreeTDS, SQLMoreResults is
/// called at once: a lost link is raised after the rows received (the result is not
/// silently short), and any other outcome waits for `next_result`.
impl Refill for Statement {
    #[inline]
    fn row_set(&self) -> &RowSet {
        &self.rows
    }

    #[inline]
    fn row_set_mut(&mut self) -> &mut RowSet {
        &mut self.rows
    }

    fn refill(&mut self) -> Result<usize> {
        let filled = self.rows.fill(&mut self.stmt, &mut self.messages);
        let n = filled.map_err(|e| self.relabel(e))?;
        if self.backend.driver == crate::backend::Driver::FreeTds
            && self.ahead.is_none()
            && self.rows.is_over()
            && let Err(e) = self.look_ahead()
        {
            let e = self.relabel(e);
            if n == 0 {
                return Err(e);
            }
            self.rows.defer(e);
        }
        Ok(n)
    }
}

impl Drop for Statement {
    /// A prefetch thread still fetching must finish before the handle and buffers are freed.
    fn drop(&mut self) {
        self.rows.join(&mut self.stmt);
    }
}
