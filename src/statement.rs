//! A statement and the result set it is positioned on: execute, the batch cursor every fetch
//! shape shares, nextset, row counts and messages.

use crate::batch::{Batch, FIRST_BATCH_ROWS, grown};
use crate::error::Result;
use crate::odbc::{CancelHandle, Diagnostic, Outcome, Stmt};
use crate::params::{BoundParams, InputSize, ParamValue};
use crate::plan::{Backend, Dbms, ResultPlan};
use crate::prefetch::Prefetcher;
use std::sync::Arc;

/// The binding of one parameter row (a single row always has one binding type per column).
fn single_row(row: Vec<ParamValue>, sizes: &[InputSize], backend: Backend) -> Result<BoundParams> {
    BoundParams::build(&[row], sizes, backend)?
        .ok_or_else(|| crate::Error::Internal("one parameter row found no common binding".into()))
}

/// Background prefetch starts once a row array this large came back full: smaller results end
/// before a worker thread (started once per execute) and the shadow copy pay for themselves
/// (three 1,000-row result sets took 1.3-1.5x as long prefetching from 256-row arrays).
const PREFETCH_MIN_CAPACITY: usize = 2048;

pub struct Statement {
    // Field order is drop order: the handle goes first, so the driver holds no pointer into
    // `batch` or `params` when they are freed.
    stmt: Stmt,
    batch: Option<Batch>,
    params: Option<BoundParams>,
    plan: Option<Arc<ResultPlan>>,
    backend: Backend,
    /// Rows `pos..len` of the batch are fetched but not yet handed out.
    pos: usize,
    len: usize,
    /// The driver said (SQL_NO_DATA, an error, or a cancel) that the result set is over.
    exhausted: bool,
    /// A full row array came back: the next fetch uses a larger one.
    grow_next: bool,
    /// An unbound copy of the bound batch's rows, served while the driver fills the bound
    /// buffers with the next row array on another thread (see [`Statement::start_prefetch`]).
    shadow: Option<Batch>,
    serving_shadow: bool,
    /// The thread fetching row arrays into the bound buffers. While a fetch runs, nothing
    /// touches `stmt` or `batch` (every method that would waits for it first).
    prefetcher: Option<Prefetcher>,
    /// The row array the driver put in the bound buffers while the shadow was being served.
    next: Option<crate::batch::Fetched>,
    /// Result-set index of batch row 0 (for error messages that name a row).
    batch_base: u64,
    /// An error that arrived after rows of the same row array: raised once those are served.
    deferred: Option<crate::Error>,
    /// The plan the bound buffers were laid out for (may outlive `plan` across executes).
    batch_plan: Option<Arc<ResultPlan>>,
    /// Rows handed out from the current result set (for error messages and `rownumber`).
    rows_served: u64,
    row_count: isize,
    messages: Vec<Diagnostic>,
    /// Output parameter values of the last execute, once its last result has been read.
    outputs: Option<Vec<(usize, ParamValue)>>,
    /// Bumped on every result-set transition (execute, nextset, close). Plans built by the
    /// binding layer remember the epoch they were built under and are never used past it.
    epoch: u64,
}

impl Statement {
    pub fn new(mut stmt: Stmt, mut backend: Backend) -> Statement {
        stmt.cancel_handle()
            .set_cooperative(backend.driver == crate::plan::Driver::FreeTds);
        // Cut cells are read again by absolute position: only on a static cursor. SQLite3 ODBC
        // gives one by default (its results are materialised); with `StepAPI=1` it is
        // forward-only and such columns are streamed row by row instead.
        const CURSOR_STATIC: usize = 3;
        backend.reread = backend.reread && stmt.cursor_type().ok() == Some(CURSOR_STATIC);
        Statement {
            stmt,
            batch: None,
            params: None,
            plan: None,
            backend,
            pos: 0,
            len: 0,
            exhausted: true,
            grow_next: false,
            rows_served: 0,
            row_count: -1,
            messages: Vec::new(),
            outputs: None,
            epoch: 0,
            batch_plan: None,
            deferred: None,
            batch_base: 0,
            shadow: None,
            serving_shadow: false,
            prefetcher: None,
            next: None,
        }
    }

    pub fn cancel_handle(&self) -> CancelHandle {
        self.stmt.cancel_handle()
    }

    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    pub fn plan(&self) -> Option<&Arc<ResultPlan>> {
        self.plan.as_ref()
    }

    /// The batch rows are currently served from (the shadow copy while a prefetch is pending).
    pub fn batch(&self) -> Option<&Batch> {
        if self.serving_shadow {
            self.shadow.as_ref()
        } else {
            self.batch.as_ref()
        }
    }

    pub fn row_count(&self) -> isize {
        self.row_count
    }

    /// Result-set index of the first row in the current batch.
    pub fn batch_base(&self) -> u64 {
        self.batch_base
    }

    pub fn rows_served(&self) -> u64 {
        self.rows_served
    }

    pub fn messages(&self) -> &[Diagnostic] {
        &self.messages
    }

    pub fn set_query_timeout(&mut self, secs: usize) -> Result<()> {
        self.join_prefetch();
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

    /// Collect the records a successful call left: warnings and informational messages (class
    /// 01: PRINT, low-severity RAISERROR) go to `messages`; an error record means part of the
    /// work failed even though the call "succeeded" (FreeTDS reports a rejected statement of an
    /// executemany batch this way) and is raised. FreeTDS also leaves PRINT messages behind a
    /// plain SQL_SUCCESS from SQLMoreResults, so `always` reads the records whatever the code.
    fn note(&mut self, outcome: Outcome, function: &'static str, always: bool) -> Result<()> {
        if outcome == Outcome::SuccessWithInfo || (always && outcome == Outcome::Success) {
            let (warnings, errors): (Vec<_>, Vec<_>) = self
                .stmt
                .diagnostics()
                .into_iter()
                .partition(|d| !d.is_error());
            self.messages.extend(warnings);
            if !errors.is_empty() {
                return Err(crate::Error::odbc(function, errors));
            }
        }
        Ok(())
    }

    /// Leave the current result set (if any) and forget everything about it.
    ///
    /// Also puts the row array size back to 1: Microsoft's driver answers an execute with a
    /// server cursor (`sp_cursoropen`, a round trip per fetch) when the row array size is above
    /// 1 *at execute time*, and with the default (firehose) result set otherwise. The bound size
    /// is restored after the execute, when the plan is installed.
    fn reset(&mut self) -> Result<()> {
        self.join_prefetch();
        self.prefetcher = None;
        self.stmt.take_cancel_requested();
        self.deferred = None;
        self.serving_shadow = false;
        self.next = None;
        if self
            .batch
            .as_ref()
            .is_some_and(|b| b.is_bound() && b.capacity() > 1)
        {
            self.stmt.set_row_array_size(1)?;
        }
        self.epoch += 1;
        self.messages.clear();
        self.outputs = None;
        self.row_count = -1;
        self.plan = None;
        self.pos = 0;
        self.len = 0;
        self.exhausted = true;
        self.rows_served = 0;
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
        // SAFETY: `bound` is stored in `self.params` right after binding and lives until the
        // next execute resets the bindings, or the statement handle (dropped first) is freed.
        unsafe { bound.bind(&mut self.stmt)? };
        self.params = Some(bound);
        self.stmt.exec_direct(sql)
    }

    /// Execute `sql` once per parameter row: as one parameter array (one round trip) when every
    /// column has one binding type, else row by row. Any result sets are discarded; `row_count`
    /// is the total affected (or -1 when the driver does not say).
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
        rows: Vec<Vec<ParamValue>>,
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
        let freetds_timestamps = self.backend.driver == crate::plan::Driver::FreeTds
            && rows
                .iter()
                .any(|r| r.iter().any(|v| matches!(v, ParamValue::Timestamp(_))));
        let arrays_ok = self.backend.dbms != Dbms::Sqlite && !freetds_timestamps;
        let array = if arrays_ok {
            BoundParams::build(&rows, sizes, self.backend)?
        } else {
            None
        };
        match array {
            Some(bound) => {
                let outcome = self.exec_bound(sql, bound)?;
                self.note(outcome, "SQLExecDirect", false)?;
                let n = self.drain_counts(outcome)?;
                add(n, &mut total);
            }
            None => {
                for row in rows {
                    self.stmt.close_cursor()?;
                    let bound = single_row(row, sizes, self.backend)?;
                    let outcome = self.exec_bound(sql, bound)?;
                    self.note(outcome, "SQLExecDirect", false)?;
                    let n = self.drain_counts(outcome)?;
                    add(n, &mut total);
                }
            }
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
        self.pos = 0;
        self.len = 0;
        self.rows_served = 0;
        if outcome == Outcome::NoData {
            // e.g. an UPDATE that matched nothing, on drivers that say so with SQL_NO_DATA.
            self.row_count = self.stmt.row_count().unwrap_or(0).max(0);
            self.exhausted = true;
            return self.results_done();
        }
        let ncols = self.stmt.num_result_cols()?;
        if ncols == 0 {
            self.row_count = self.stmt.row_count()?;
            self.exhausted = true;
            return Ok(());
        }
        let mut descs = Vec::with_capacity(ncols as usize);
        for c in 1..=ncols {
            descs.push(self.stmt.describe_col(c)?);
        }
        let plan = Arc::new(ResultPlan::build(descs, self.backend));
        self.install_plan(&plan)?;
        self.plan = Some(plan);
        self.row_count = -1;
        self.exhausted = false;
        Ok(())
    }

    /// Make the batch fit `plan`: keep the bound buffers when their layout matches (re-executing
    /// the same query binds nothing), else allocate and bind new ones, starting small.
    fn install_plan(&mut self, plan: &Arc<ResultPlan>) -> Result<()> {
        if let (Some(_), Some(old)) = (&self.batch, &self.batch_plan) {
            if old.same_buffers(plan) {
                let capacity = self.batch.as_ref().map_or(1, Batch::capacity);
                self.stmt.set_row_array_size(capacity)?;
                self.grow_next = false;
                return Ok(());
            }
        }
        self.rebind(plan, FIRST_BATCH_ROWS)
    }

    fn rebind(&mut self, plan: &Arc<ResultPlan>, capacity: usize) -> Result<()> {
        if let Some(mut old) = self.batch.take() {
            old.unbind(&mut self.stmt)?;
        }
        let mut batch = Batch::new(plan, capacity.min(Batch::max_rows(plan)));
        // SAFETY: the batch is stored in `self.batch` and only dropped after `unbind` or after the
        // statement handle (declared first) is freed; its buffers are heap allocations that do
        // not move with the `Batch` value.
        unsafe { batch.bind(&mut self.stmt, plan)? };
        self.batch = Some(batch);
        self.batch_plan = Some(plan.clone());
        self.grow_next = false;
        Ok(())
    }

    /// Whether serving another row needs a driver call (the caller releases the GIL for it).
    #[inline]
    pub fn needs_fetch(&self) -> bool {
        self.pos == self.len && (!self.exhausted || self.deferred.is_some() || self.serving_shadow)
    }

    /// Rows fetched and not yet handed out.
    #[inline]
    pub fn buffered(&self) -> usize {
        self.len - self.pos
    }

    /// Refill the batch from the driver (only call when [`Self::needs_fetch`]). Returns the rows
    /// now available; 0 means the result set is over.
    pub fn fill(&mut self) -> Result<usize> {
        self.fill_inner().map_err(|e| self.relabel(e))
    }

    fn fill_inner(&mut self) -> Result<usize> {
        self.join_prefetch();
        if let Some(err) = self.deferred.take() {
            return Err(err);
        }
        if self.stmt.cancel_requested() {
            // A cooperative cancel (or one that arrived between driver calls): stop here, in
            // the thread that owns the statement, and discard the rest of the result.
            self.exhausted = true;
            self.serving_shadow = false;
            self.next = None;
            self.len = self.pos;
            let _ = self.stmt.close_cursor();
            return Err(crate::Error::Cancelled {
                records: Vec::new(),
            });
        }
        let Some(plan) = self.plan.clone() else {
            self.exhausted = true;
            return Ok(0);
        };
        self.batch_base = self.rows_served;
        if self.serving_shadow {
            // The next row array is already in the bound buffers: switch to it.
            self.serving_shadow = false;
            if let Some(fetched) = self.next.take() {
                // The cursor is still on this array (nothing was fetched since): its cut cells
                // can be read again now, on the thread that owns the statement.
                let batch = self
                    .batch
                    .as_mut()
                    .expect("a prefetch runs on the bound batch");
                let fetched =
                    crate::reread::complete(batch, &mut self.stmt, &plan, fetched, self.batch_base);
                return self.accept_and_prefetch(fetched, &plan);
            }
        }
        if self.grow_next {
            let capacity = grown(
                self.batch
                    .as_ref()
                    .map_or(FIRST_BATCH_ROWS, Batch::capacity),
            );
            self.rebind(&plan, capacity)?;
        }
        let batch = self
            .batch
            .as_mut()
            .expect("a planned result set has a batch");
        let fetched = batch.fetch(&mut self.stmt, &plan, self.batch_base);
        self.accept_and_prefetch(fetched, &plan)
    }

    /// [`Self::accept`], then, if the array was full, start fetching the next one on another
    /// thread while the caller decodes this one (every fetch shape gains: fetchall, fetchmany,
    /// fetchone). Returns the rows available.
    fn accept_and_prefetch(
        &mut self,
        fetched: crate::batch::Fetched,
        plan: &Arc<ResultPlan>,
    ) -> Result<usize> {
        let available = self.accept(fetched, plan)?;
        let capacity = self.batch.as_ref().map_or(0, Batch::capacity);
        if available == capacity && capacity >= PREFETCH_MIN_CAPACITY && self.can_prefetch() {
            self.start_prefetch()?;
        }
        Ok(available)
    }

    /// Take in a row array the driver produced: rows to serve, an error after them, warnings.
    fn accept(&mut self, fetched: crate::batch::Fetched, plan: &ResultPlan) -> Result<usize> {
        let capacity = self.batch.as_ref().map_or(0, Batch::capacity);
        self.messages.extend(fetched.warnings);
        self.pos = 0;
        self.len = fetched.rows;
        if let Some(err) = fetched.error {
            // The rows before the failure are served first; the error comes right after them.
            self.exhausted = true;
            if self.len == 0 {
                return Err(err);
            }
            self.deferred = Some(err);
        } else if fetched.rows == 0 || (fetched.rows < capacity && self.ends_on_short_array()) {
            self.exhausted = true;
        } else if fetched.rows == capacity && capacity < Batch::max_rows(plan) {
            // A partial row array is *not* taken as the end: Driver 18 returns the rows before
            // a mid-stream error as a short, successful array and reports the error only on
            // the next SQLFetch (seen against the TDS peer's error_after fault). Stopping early
            // would silently drop the error and every row after it.
            self.grow_next = true;
        }
        Ok(self.len - self.pos)
    }

    /// Whether a short row array is the end of the result set. FreeTDS fills an array up to the
    /// result's DONE and reports an error after rows with that same fetch; one more SQLFetch
    /// there steps over the PRINT messages that precede the next result and loses them (the
    /// fetch returns SQL_NO_DATA, and unixODBC shows no records behind that).
    fn ends_on_short_array(&self) -> bool {
        self.backend.driver == crate::plan::Driver::FreeTds
    }

    /// Whether the next row array can be fetched on another thread while the buffered rows are
    /// decoded: only bound-only plans (streamed columns need SQLGetData per row), only when the
    /// bound buffers hold the rows being served, and not past the end or a pending error.
    fn can_prefetch(&self) -> bool {
        self.plan.as_ref().is_some_and(|p| !p.has_streamed())
            && !self.serving_shadow
            && !self.prefetcher.as_ref().is_some_and(Prefetcher::busy)
            && !self.exhausted
            && self.deferred.is_none()
            && self.pos < self.len
    }

    /// Move the buffered rows into the shadow copy and serve them from there, then let another
    /// thread fetch the next row array into the bound buffers (grown first if due).
    fn start_prefetch(&mut self) -> Result<()> {
        let plan = self.plan.clone().expect("can_prefetch checked the plan");
        let bound = self
            .batch
            .as_ref()
            .expect("a planned result set has a batch");
        // Reuse the shadow when its buffers have this plan's layout and room for the rows. A new
        // one gets the capacity the bound batch is about to grow to, so it fits the next array
        // too (and the same query executed again allocates nothing).
        let next_capacity = if self.grow_next {
            grown(bound.capacity()).min(Batch::max_rows(&plan))
        } else {
            bound.capacity()
        };
        let fits = self.shadow.as_ref().is_some_and(|s| {
            s.capacity() >= next_capacity.max(self.len)
                && s.columns
                    .iter()
                    .map(|c| c.kind)
                    .eq(plan.columns.iter().map(|c| c.kind))
        });
        if !fits {
            self.shadow = Some(Batch::new(&plan, next_capacity.max(self.len)));
        }
        let shadow = self.shadow.as_mut().expect("just ensured");
        shadow.copy_rows_from(bound, self.len);
        self.serving_shadow = true;
        if self.grow_next {
            let capacity = grown(bound.capacity());
            self.rebind(&plan, capacity)?;
        }
        self.batch
            .as_mut()
            .expect("a planned result set has a batch")
            .begin_fetch();
        if self.prefetcher.is_none() {
            // No thread to be had: the shadow is served, then the next fill fetches in line.
            self.prefetcher = Prefetcher::start().ok();
        }
        // SAFETY: until `join_prefetch` has waited for this fetch, no method touches `stmt` or
        // `batch`: each one that would calls `join_prefetch` first (`Drop` included), and the
        // rows being served come from the shadow copy. The bound buffers are heap allocations
        // owned by `batch`, which is neither rebound nor dropped before that wait.
        let lease = unsafe { self.stmt.lend_for_fetch() };
        if !self.prefetcher.as_mut().is_some_and(|p| p.submit(lease)) {
            self.next = None;
        }
        Ok(())
    }

    /// Wait for the running prefetch (if any) and keep the row array it fetched for the next fill.
    fn join_prefetch(&mut self) {
        let Some(result) = self.prefetcher.as_mut().and_then(Prefetcher::wait) else {
            return;
        };
        let batch = self
            .batch
            .as_mut()
            .expect("a prefetch runs on the bound batch");
        self.next = Some(match result {
            Ok(Some((outcome, records))) => batch.finish_fetch(outcome, records),
            Ok(None) => crate::batch::Fetched::failed(crate::Error::Cancelled {
                records: Vec::new(),
            }),
            Err(_) => crate::batch::Fetched::failed(crate::Error::Internal(
                "the prefetch thread panicked".into(),
            )),
        });
    }

    /// Hand out up to `n` buffered rows: returns the batch row range `start..end`.
    #[inline]
    pub fn take(&mut self, n: usize) -> std::ops::Range<usize> {
        let start = self.pos;
        let end = start + n.min(self.len - self.pos);
        self.pos = end;
        self.rows_served += (end - start) as u64;
        start..end
    }

    /// Move the read position back to batch row `row` (at or before the current position):
    /// rows taken after a row that failed to decode are handed out again by the next fetch.
    pub fn rewind_to(&mut self, row: usize) {
        if row < self.pos {
            self.rows_served -= (self.pos - row) as u64;
            self.pos = row;
        }
    }

    /// Move to the next result set. `Ok(false)` when there is none.
    pub fn next_result(&mut self) -> Result<bool> {
        self.next_result_inner().map_err(|e| self.relabel(e))
    }

    fn next_result_inner(&mut self) -> Result<bool> {
        self.join_prefetch();
        self.epoch += 1;
        self.deferred = None;
        self.serving_shadow = false;
        self.next = None;
        self.messages.clear();
        self.plan = None;
        self.pos = 0;
        self.len = 0;
        self.exhausted = true;
        self.row_count = -1;
        let outcome = self.stmt.more_results()?;
        if outcome == Outcome::NoData {
            self.results_done()?;
            return Ok(false);
        }
        self.note(outcome, "SQLMoreResults", true)?;
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
    pub fn close(&mut self) -> Result<()> {
        self.reset()
    }

    pub fn has_result_set(&self) -> bool {
        self.plan.is_some()
    }
}

impl Drop for Statement {
    /// A prefetch thread still fetching must finish before the handle and buffers are freed.
    fn drop(&mut self) {
        self.join_prefetch();
    }
}
