//! The Arrow feed: a stream of record batches into a load, one batch at a time with the caller's
//! lock released for the whole batch (the reader's `next`, the encoding of every fed column by
//! `arrow.rs`, one loop per Arrow type, and the send: through bcp on the pipe's second thread
//! while the next chunk is encoded). Memory stays bounded by a batch and two chunks: the stream
//! is never collected.

use super::arrays::ArrayLoad;
use super::arrow::{check_type, put_array};
use super::cells::CellColumn;
use super::encode::{CellSink, ParamSink, check_param};
use super::pipe::{Pipe, pipelined};
use super::rows::null_refused;
use super::run::{BulkError, BulkLoad, CHUNK_BYTES, CHUNK_ROWS, Progress, Release, Way};
use super::target::Fed;
use crate::error::Error;
use crate::params::ParamValue;
use arrow_array::{Array, ArrayRef, RecordBatchReader};

impl BulkLoad<'_> {
    /// Feed every record batch of `reader`; `progress` is called as due, with the caller's lock
    /// held (it is released through `release` for each batch's reading, encoding and sending).
    pub fn arrow<R, L, E>(
        &mut self,
        release: &L,
        mut reader: R,
        mut progress: Progress<'_, E>,
    ) -> Result<(), BulkError<E>>
    where
        R: RecordBatchReader + Send,
        L: Release,
        E: Send,
    {
        let fed: Vec<Fed> = self.fed().to_vec();
        let schema = reader.schema();
        for f in &fed {
            let field = schema.field(f.field);
            check_type(field.data_type()).map_err(|reason| Error::Bulk {
                context: format!(
                    "bulk load: column {:?} from source field {} ({:?})",
                    f.name,
                    f.field,
                    field.name()
                ),
                inner: Box::new(Error::NotSupported(reason)),
            })?;
        }
        let stopped = match &mut self.way {
            Way::Bcp(load) => {
                let (stopped, sent) = pipelined(
                    fed.len(),
                    |chunk| load.send(chunk),
                    |pipe| {
                        let stopped = each_batch(
                            release,
                            &mut reader,
                            &fed,
                            &mut progress,
                            |columns, rows, first| send_bcp(pipe, &fed, columns, rows, first),
                        );
                        release.release(|| pipe.close());
                        stopped
                    },
                );
                // A send that failed failed first: the rows after it were not sent.
                sent?;
                stopped
            }
            Way::Arrays(load) => {
                let mut pending = Pending {
                    rows: Vec::new(),
                    first: 0,
                };
                each_batch(
                    release,
                    &mut reader,
                    &fed,
                    &mut progress,
                    |columns, rows, first| {
                        send_arrays(load, &mut pending, &fed, columns, rows, first)
                    },
                )
                .and_then(|()| {
                    if pending.rows.is_empty() {
                        return Ok(());
                    }
                    release.release(|| flush(load, &mut pending))
                })
            }
        };
        stopped.map_err(|stop| stop.resolve(&fed, self.count().rows_copied))
    }
}

/// The first NULL of `part` (source rows from `first`) when the column refuses NULL.
fn check_nulls<E>(f: &Fed, col: usize, part: &dyn Array, first: u64) -> Result<(), BulkError<E>> {
    if !f.refuses_null {
        return Ok(());
    }
    if let Some(nulls) = part.logical_nulls().filter(|n| n.null_count() > 0) {
        let at = nulls.iter().position(|valid| !valid).unwrap_or(0);
        return Err(BulkError::Value {
            col,
            row: first + at as u64,
            reason: null_refused(f),
            null: true,
        });
    }
    Ok(())
}

/// Rows per bcp chunk for these columns: at most [`CHUNK_ROWS`], and about [`CHUNK_BYTES`] of
/// cells going by the columns' buffers (text doubles as UTF-16; each cell has an 8-byte
/// prefix). A slice of a larger array counts the whole buffers: the estimate errs small.
fn chunk_rows(columns: &[ArrayRef], rows: usize) -> usize {
    if rows == 0 {
        return 1;
    }
    let bytes: usize = columns.iter().map(|c| c.get_buffer_memory_size()).sum();
    let per_row = 2 * bytes / rows + 8 * columns.len() + 1;
    (CHUNK_BYTES / per_row).clamp(1, CHUNK_ROWS)
}

/// Encode one batch, chunk by chunk, each handed to the pipe's sending thread.
fn send_bcp<E>(
    pipe: &mut Pipe,
    fed: &[Fed],
    columns: &[ArrayRef],
    rows: usize,
    first_row: u64,
) -> Result<(), BulkError<E>> {
    let step = chunk_rows(columns, rows);
    let mut start = 0;
    while start < rows {
        let len = step.min(rows - start);
        let first = first_row + start as u64;
        let mut chunk = pipe.take(first).ok_or(BulkError::Sender)?;
        for (i, (f, col)) in fed.iter().zip(columns).enumerate() {
            let part = col.slice(start, len);
            check_nulls(f, i, part.as_ref(), first)?;
            let mut sink = CellSink {
                form: f.form,
                out: &mut chunk.columns[i],
            };
            put_array(part.as_ref(), &mut sink).map_err(|e| BulkError::Value {
                col: i,
                row: first + e.row as u64,
                reason: e.reason,
                null: false,
            })?;
        }
        if !pipe.put(chunk) {
            return Err(BulkError::Sender);
        }
        start += len;
    }
    Ok(())
}

/// Rows of the parameter-array path not sent yet (a send takes `rows_per_send` rows, which may
/// span record batches).
struct Pending {
    rows: Vec<Vec<ParamValue>>,
    first: u64,
}

/// Add one batch's rows to `pending`, sending each full parameter array.
fn send_arrays<E>(
    load: &mut ArrayLoad,
    pending: &mut Pending,
    fed: &[Fed],
    columns: &[ArrayRef],
    rows: usize,
    first_row: u64,
) -> Result<(), BulkError<E>> {
    let per_send = load.rows_per_send().max(1);
    // Each value must suit its column's type, as on the tuple path (SQLite would store text in
    // an INTEGER column); the DBMS keeps its own limits.
    let forms: Vec<_> = fed.iter().map(|f| f.form.without_limits()).collect();
    let mut scratch = CellColumn::default();
    let mut start = 0;
    while start < rows {
        let len = (per_send - pending.rows.len()).min(rows - start);
        let first = first_row + start as u64;
        if pending.rows.is_empty() {
            pending.first = first;
        }
        let mut values = Vec::with_capacity(fed.len());
        for (i, (f, col)) in fed.iter().zip(columns).enumerate() {
            let part = col.slice(start, len);
            check_nulls(f, i, part.as_ref(), first)?;
            let mut out = Vec::with_capacity(len);
            put_array(part.as_ref(), &mut ParamSink { out: &mut out }).map_err(|e| {
                BulkError::Value {
                    col: i,
                    row: first + e.row as u64,
                    reason: e.reason,
                    null: false,
                }
            })?;
            for (k, v) in out.iter().enumerate() {
                check_param(v, forms[i], &mut scratch).map_err(|reason| BulkError::Value {
                    col: i,
                    row: first + k as u64,
                    reason,
                    null: false,
                })?;
            }
            values.push(out.into_iter());
        }
        pending.rows.extend((0..len).map(|_| {
            values
                .iter_mut()
                .map(|c| c.next().unwrap_or(ParamValue::Null))
                .collect::<Vec<_>>()
        }));
        if pending.rows.len() >= per_send {
            flush(load, pending)?;
        }
        start += len;
    }
    Ok(())
}

fn flush<E>(load: &mut ArrayLoad, pending: &mut Pending) -> Result<(), BulkError<E>> {
    let rows = std::mem::take(&mut pending.rows);
    load.send(rows, pending.first).map_err(BulkError::Engine)
}

/// The batch loop: each record batch pulled and handed to `send` (with the source row number
/// of its first row) with the caller's lock released; `progress` called as due. `Ok` at the
/// stream's end.
fn each_batch<R, L, E>(
    release: &L,
    reader: &mut R,
    fed: &[Fed],
    progress: &mut Progress<'_, E>,
    mut send: impl FnMut(&[ArrayRef], usize, u64) -> Result<(), BulkError<E>> + Send,
) -> Result<(), BulkError<E>>
where
    R: RecordBatchReader + Send,
    L: Release,
    E: Send,
{
    let mut n: u64 = 0;
    loop {
        let first = n;
        let rows = release.release(|| -> Result<Option<usize>, BulkError<E>> {
            let Some(batch) = reader.next() else {
                return Ok(None);
            };
            let batch = batch.map_err(|error| BulkError::Source {
                reason: error.to_string(),
                after: first,
            })?;
            let rows = batch.num_rows();
            let columns: Vec<ArrayRef> =
                fed.iter().map(|f| batch.column(f.field).clone()).collect();
            send(&columns, rows, first)?;
            Ok(Some(rows))
        })?;
        let Some(rows) = rows else {
            return Ok(());
        };
        n += rows as u64;
        progress.taken(n)?;
    }
}
