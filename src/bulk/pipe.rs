//! A bcp load's chunks sent on a second thread while the caller fills the next one, so that
//! turning the source into cells (under the GIL, for tuples) and the driver's per-row work
//! (`bcp_sendrow`, with the GIL released) run side by side on two cores instead of in turn.
//!
//! Two chunks go round: one being filled, one being sent. A send error stops the sending
//! thread; the filling side learns it at its next [`Pipe::take`] or [`Pipe::put`] and stops
//! too, and [`pipelined`] returns that error beside whatever the filling side returned.

use super::load::Chunk;
use crate::error::Result;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

/// The filling side's end.
pub struct Pipe {
    /// Filled chunks to the sending thread; `None` once closed.
    full: Option<SyncSender<Chunk>>,
    /// Chunks the sending thread is done with.
    empty: Receiver<Chunk>,
}

impl Pipe {
    /// An empty chunk to fill (its rows cleared, numbered from `first_row`); waits while both
    /// chunks are in flight. `None`: the sending thread stopped on an error.
    pub fn take(&mut self, first_row: u64) -> Option<Chunk> {
        let mut chunk = self.empty.recv().ok()?;
        chunk.clear(first_row);
        Some(chunk)
    }

    /// Hand a filled chunk to the sending thread. `false`: it stopped on an error.
    pub fn put(&mut self, chunk: Chunk) -> bool {
        self.full.as_ref().is_some_and(|tx| tx.send(chunk).is_ok())
    }

    /// No more chunks: waits until the sending thread has sent every chunk handed to it and
    /// ended. Call it with the GIL released.
    pub fn close(&mut self) {
        self.full = None;
        // The sending thread drops its sender of empty chunks when it ends.
        while self.empty.recv().is_ok() {}
    }
}

/// Runs `fill` on this thread with a [`Pipe`] whose chunks `send` (a bcp load's) sends on a
/// second thread. Returns what `fill` returned, and the sending side's result (its first error).
/// `fill` should end with [`Pipe::close`] (GIL released); if it does not, the close happens here.
pub fn pipelined<T>(
    width: usize,
    mut send: impl FnMut(&Chunk) -> Result<()> + Send,
    fill: impl FnOnce(&mut Pipe) -> T,
) -> (T, Result<()>) {
    let (full_tx, full_rx) = sync_channel::<Chunk>(1);
    let (empty_tx, empty_rx) = sync_channel::<Chunk>(2);
    for _ in 0..2 {
        empty_tx
            .send(Chunk::new(width, 0))
            .expect("the channel holds two chunks");
    }
    std::thread::scope(|scope| {
        let sender = scope.spawn(move || -> Result<()> {
            for chunk in full_rx {
                send(&chunk)?;
                // The filling side may have closed already: the chunk is not needed then.
                let _ = empty_tx.send(chunk);
            }
            Ok(())
        });
        let mut pipe = Pipe {
            full: Some(full_tx),
            empty: empty_rx,
        };
        let out = fill(&mut pipe);
        pipe.close();
        let sent = match sender.join() {
            Ok(sent) => sent,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        (out, sent)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn filled(pipe: &mut Pipe, first: u64, value: &[u8]) -> bool {
        let Some(mut chunk) = pipe.take(first) else {
            return false;
        };
        chunk.columns[0].push(value);
        pipe.put(chunk)
    }

    #[test]
    fn every_chunk_is_sent_once_in_order_before_pipelined_returns() {
        let mut sent = Vec::new();
        let (filled_all, result) = pipelined(
            1,
            |c| {
                sent.push((c.first_row, c.columns[0].value(0).unwrap().to_vec()));
                Ok(())
            },
            |pipe| {
                let all = (0..5u8).all(|i| filled(pipe, u64::from(i) * 10, &[i]));
                pipe.close();
                all
            },
        );
        assert!(filled_all);
        assert!(result.is_ok());
        let expected: Vec<(u64, Vec<u8>)> =
            (0..5u8).map(|i| (u64::from(i) * 10, vec![i])).collect();
        assert_eq!(sent, expected);
    }

    #[test]
    fn a_send_error_stops_the_filling_side_and_is_returned() {
        let mut calls = 0;
        let (stopped_at, result) = pipelined(
            1,
            |_| {
                calls += 1;
                if calls == 2 {
                    Err(Error::Data("refused".into()))
                } else {
                    Ok(())
                }
            },
            // No close: pipelined closes itself.
            |pipe| (0..100u64).position(|i| !filled(pipe, i, b"x")),
        );
        assert!(matches!(result, Err(Error::Data(m)) if m == "refused"));
        // The filling side learns it within the two chunks in flight.
        assert!(stopped_at.is_some_and(|i| i <= 4), "{stopped_at:?}");
        assert_eq!(calls, 2);
    }

    #[test]
    fn a_filling_side_that_stops_early_still_gets_its_chunks_sent() {
        let mut rows = 0;
        let ((), result) = pipelined(
            1,
            |c| {
                rows += c.rows();
                Ok(())
            },
            |pipe| {
                filled(pipe, 0, b"a");
                filled(pipe, 1, b"b");
            },
        );
        assert!(result.is_ok());
        assert_eq!(rows, 2);
    }
}
