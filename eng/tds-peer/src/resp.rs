//! Incremental response writer: tokens go in, packets of exactly the negotiated size come out.
//! Large results are flushed to the socket as they grow, and ATTENTION is polled between row
//! blocks so a cancelled query stops streaming promptly.

use crate::io::Io;
use crate::packet::{HEADER_LEN, P_REPLY, push_packet};
use std::io;

/// How many bytes of output between two ATTENTION polls.
const POLL_EVERY: usize = 256 * 1024;
/// Socket write granularity.
const FLUSH_AT: usize = 256 * 1024;

pub struct Resp<'a> {
    pub io: &'a mut Io,
    psize: usize,
    body: Vec<u8>,
    out: Vec<u8>,
    pid: u8,
    since_poll: usize,
    /// A DONE(ATTN) was written: nothing else may follow in this message.
    pub attn_acked: bool,
}

impl<'a> Resp<'a> {
    pub fn new(io: &'a mut Io) -> Resp<'a> {
        let psize = io.psize;
        Resp {
            io,
            psize,
            body: Vec::with_capacity(psize),
            out: Vec::with_capacity(FLUSH_AT + psize),
            pid: 1,
            since_poll: 0,
            attn_acked: false,
        }
    }

    /// Appends token bytes. A full packet is emitted only once more bytes exist beyond it, so
    /// the final packet (with EOM) is never empty.
    pub fn put(&mut self, mut b: &[u8]) -> io::Result<()> {
        let max = self.psize - HEADER_LEN;
        self.since_poll += b.len();
        while !b.is_empty() {
            if self.body.len() == max {
                self.seal_packet();
                if self.out.len() >= FLUSH_AT {
                    self.io.write_raw(&self.out)?;
                    self.out.clear();
                }
            }
            let n = (max - self.body.len()).min(b.len());
            self.body.extend_from_slice(&b[..n]);
            b = &b[n..];
        }
        Ok(())
    }

    /// Moves the full packet body into the output as a packet without EOM.
    #[inline]
    fn seal_packet(&mut self) {
        push_packet(
            &mut self.out,
            P_REPLY,
            false,
            self.io.spid,
            self.pid,
            &self.body,
        );
        self.pid = self.pid.wrapping_add(1);
        self.body.clear();
    }

    /// Call at token boundaries while streaming rows: true if the client sent ATTENTION.
    pub fn cancelled(&mut self) -> bool {
        if self.since_poll < POLL_EVERY {
            return self.io.attention;
        }
        self.since_poll = 0;
        self.io.poll_attention()
    }

    /// Writes pending packets to the socket without ending the message (used by fault modes).
    pub fn flush_partial(&mut self) -> io::Result<()> {
        if self.body.len() == self.psize - HEADER_LEN {
            self.seal_packet();
        }
        self.io.write_raw(&self.out)?;
        self.out.clear();
        self.io.flush()
    }

    /// Sends everything buffered as a complete message (EOM) without closing the Resp;
    /// used by the malformed-stream fault right before the connection is dropped.
    pub fn end_message_now(&mut self) -> io::Result<()> {
        push_packet(
            &mut self.out,
            P_REPLY,
            true,
            self.io.spid,
            self.pid,
            &self.body,
        );
        self.body.clear();
        self.io.write_raw(&self.out)?;
        self.out.clear();
        self.io.flush()
    }

    /// Ends the message: last packet with EOM, flush.
    pub fn finish(mut self) -> io::Result<()> {
        self.end_message_now()
    }
}
