//! Row sources into a load: each source row's values (one [`ParamValue`] per fed column) checked
//! against their column and put into encoded cells for the bcp API, or into parameter rows for
//! an `INSERT` array. Which of the two is decided once per load; the row loop is generic over
//! it ("decide once, loop dumb").

use super::arrays::ArrayLoad;
use super::cells::CellColumn;
use super::encode::{CellSink, Put, check_param, put_param};
use super::form::Form;
use super::load::Chunk;
use super::pipe::{Pipe, pipelined};
use super::run::{BulkError, BulkLoad, CHUNK_BYTES, CHUNK_ROWS, Progress, Release, Way};
use super::target::Fed;
use crate::params::ParamValue;
use std::convert::Infallible;

/// Where a row's values go: encoded cells for the bcp API, or parameter rows for an INSERT
/// array. One of the two per load (sealed: the load makes them).
pub trait RowsOut: sealed::Sealed {
    /// Column `i`'s value of the current row, checked against the column.
    fn value(&mut self, i: usize, v: ParamValue) -> Put;
    /// The current row has all its values.
    fn end_row(&mut self);
    fn full(&self) -> bool;
    /// Send what is held; `next_first` numbers the rows that come after.
    fn send<E, R: Release>(&mut self, release: &R, next_first: u64) -> Result<(), BulkError<E>>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::CellsOut<'_> {}
    impl Sealed for super::ParamsOut<'_, '_> {}
}

/// One source row on its way in: the source puts each fed column's value, in order.
pub struct RowWriter<'a, O> {
    out: &'a mut O,
    fed: &'a [Fed],
    row: u64,
}

impl<O: RowsOut> RowWriter<'_, O> {
    /// The fed columns: `fed()[i].field` is the source field that feeds column `i`.
    pub fn fed(&self) -> &[Fed] {
        self.fed
    }

    /// The source row number of this row (0-based).
    pub fn row(&self) -> u64 {
        self.row
    }

    /// Fed column `i`'s value: a NULL into a column that refuses it, or a value its column
    /// cannot take, stops the load.
    pub fn put<E>(&mut self, i: usize, v: ParamValue) -> Result<(), BulkError<E>> {
        let f = &self.fed[i];
        if f.refuses_null && matches!(v, ParamValue::Null) {
            return Err(self.refused(i, null_refused(f), true));
        }
        self.out
            .value(i, v)
            .map_err(|reason| self.refused(i, reason, false))
    }

    /// Column `i`'s value of this row cannot go in (a source value with no parameter form).
    pub fn refused<E>(&self, i: usize, reason: String, null: bool) -> BulkError<E> {
        BulkError::Value {
            col: i,
            row: self.row,
            reason,
            null,
        }
    }
}

/// Why a NULL cannot go into `f`.
pub fn null_refused(f: &Fed) -> String {
    if f.default_lost {
        return format!(
            "NULL into column {:?}, which has a DEFAULT: this load goes as INSERT parameter arrays \
             (the driver's bulk copy cannot take this table), which would store NULL where a \
             bulk copy stores the default; pass keep_nulls=True to store NULL, or leave the \
             column out of the mapping to take its default",
            f.name
        );
    }
    format!(
        "NULL cannot go into column {:?}: it is NOT NULL and has no default (or keep_nulls=True)",
        f.name
    )
}

/// The rows of a load, one at a time.
pub trait RowSource {
    /// The source's own error (Python's exception), handed back unchanged.
    type Error;
    /// Put the next row's value for every fed column (`row.put(i, v)` for each `i` in order);
    /// `Ok(false)` at the source's end, before any `put`.
    fn next_row<O: RowsOut>(
        &mut self,
        row: &mut RowWriter<'_, O>,
    ) -> Result<bool, BulkError<Self::Error>>;
}

/// Rows that are vectors of values, one per source field (field `i` is `row[i]`).
pub struct Rows<I>(I);

impl<I> Rows<I> {
    pub fn new(rows: I) -> Self {
        Rows(rows)
    }
}

impl<I: Iterator<Item = Vec<ParamValue>>> RowSource for Rows<I> {
    type Error = Infallible;

    fn next_row<O: RowsOut>(
        &mut self,
        row: &mut RowWriter<'_, O>,
    ) -> Result<bool, BulkError<Infallible>> {
        let Some(mut values) = self.0.next() else {
            return Ok(false);
        };
        for i in 0..row.fed().len() {
            let field = row.fed()[i].field;
            let Some(slot) = values.get_mut(field) else {
                return Err(row.refused(i, format!("the row has no field {field}"), false));
            };
            let v = std::mem::replace(slot, ParamValue::Null);
            row.put(i, v)?;
        }
        Ok(true)
    }
}

/// Cells for the bcp API: a chunk filled here while the pipe's other one is sent.
pub struct CellsOut<'p> {
    pipe: &'p mut Pipe,
    chunk: Chunk,
    forms: Vec<Form>,
}

impl RowsOut for CellsOut<'_> {
    fn value(&mut self, i: usize, v: ParamValue) -> Put {
        put_param(
            &v,
            &mut CellSink {
                form: self.forms[i],
                out: &mut self.chunk.columns[i],
            },
        )
    }

    fn end_row(&mut self) {}

    fn full(&self) -> bool {
        self.chunk.rows() >= CHUNK_ROWS || self.chunk.bytes_held() >= CHUNK_BYTES
    }

    fn send<E, R: Release>(&mut self, release: &R, next_first: u64) -> Result<(), BulkError<E>> {
        if self.chunk.rows() == 0 {
            return Ok(());
        }
        if !self.pipe.put(std::mem::take(&mut self.chunk)) {
            return Err(BulkError::Sender);
        }
        let pipe = &mut *self.pipe;
        self.chunk = release
            .release(|| pipe.take(next_first))
            .ok_or(BulkError::Sender)?;
        Ok(())
    }
}

/// Parameter rows for an INSERT array, sent on this thread.
pub struct ParamsOut<'a, 'c> {
    load: &'a mut ArrayLoad<'c>,
    rows: Vec<Vec<ParamValue>>,
    row: Vec<ParamValue>,
    forms: Vec<Form>,
    scratch: CellColumn,
    per_send: usize,
    /// Source row number of `rows[0]`.
    first: u64,
}

impl RowsOut for ParamsOut<'_, '_> {
    fn value(&mut self, i: usize, v: ParamValue) -> Put {
        check_param(&v, self.forms[i], &mut self.scratch)?;
        self.row.push(v);
        Ok(())
    }

    fn end_row(&mut self) {
        let width = self.row.len();
        self.rows
            .push(std::mem::replace(&mut self.row, Vec::with_capacity(width)));
    }

    fn full(&self) -> bool {
        self.rows.len() >= self.per_send
    }

    fn send<E, R: Release>(&mut self, release: &R, next_first: u64) -> Result<(), BulkError<E>> {
        let batch = std::mem::take(&mut self.rows);
        let (load, first) = (&mut *self.load, self.first);
        release.release(|| load.send(batch, first))?;
        self.first = next_first;
        Ok(())
    }
}

impl BulkLoad<'_> {
    /// Feed every row of `source`, sending as chunks fill; `progress` is called as due. Runs
    /// with the caller's lock held, released (through `release`) around each send.
    pub fn rows<S: RowSource, R: Release>(
        &mut self,
        release: &R,
        source: &mut S,
        mut progress: Progress<'_, S::Error>,
    ) -> Result<(), BulkError<S::Error>> {
        let fed: Vec<Fed> = self.fed().to_vec();
        // The destination of the values is decided here, once: the row loop is generic over it.
        let stopped = match &mut self.way {
            Way::Bcp(load) => {
                let forms = fed.iter().map(|f| f.form).collect();
                let (stopped, sent) = pipelined(
                    fed.len(),
                    |chunk| load.send(chunk),
                    |pipe| {
                        let stopped = match release.release(|| pipe.take(0)) {
                            Some(chunk) => {
                                let mut out = CellsOut { pipe, chunk, forms };
                                copy_rows(release, &mut out, source, &fed, &mut progress)
                            }
                            None => Err(BulkError::Sender),
                        };
                        release.release(|| pipe.close());
                        stopped
                    },
                );
                // A send that failed failed first: the rows after it were not sent.
                sent?;
                stopped
            }
            Way::Arrays(load) => {
                let mut out = ParamsOut {
                    per_send: load.rows_per_send(),
                    load,
                    rows: Vec::new(),
                    row: Vec::with_capacity(fed.len()),
                    // The type is checked; limits are the DBMS's (SQLite enforces no declared
                    // length or width).
                    forms: fed.iter().map(|f| f.form.without_limits()).collect(),
                    scratch: CellColumn::default(),
                    first: 0,
                };
                copy_rows(release, &mut out, source, &fed, &mut progress)
            }
        };
        // The count once the rows sent are all through: the error says how many stayed.
        stopped.map_err(|stop| stop.resolve(&fed, self.count().rows_copied))
    }
}

/// The row loop: each source row put into `out`, which is sent whenever full and at the end;
/// `progress` called as due.
fn copy_rows<S: RowSource, O: RowsOut, R: Release>(
    release: &R,
    out: &mut O,
    source: &mut S,
    fed: &[Fed],
    progress: &mut Progress<'_, S::Error>,
) -> Result<(), BulkError<S::Error>> {
    let mut n: u64 = 0;
    loop {
        let mut row = RowWriter { out, fed, row: n };
        if !source.next_row(&mut row)? {
            break;
        }
        out.end_row();
        n += 1;
        if out.full() {
            out.send(release, n)?;
        }
        progress.taken(n)?;
    }
    out.send(release, n)
}
