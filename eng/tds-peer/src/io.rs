//! The connection's byte stream: plain TCP or TLS (rustls), a read buffer, message reassembly,
//! and a non-blocking peek for ATTENTION while a response streams.

// A wire parser: every cast that can lose sign or bits is decided (issue 36; a hostile
// client's numbers end in a TDS error or a closed connection, never a wrapped length/handle).
#![warn(
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    clippy::cast_possible_truncation
)]

use crate::packet::{self, HEADER_LEN, P_ATTN};
use rustls::{ServerConnection, StreamOwned};
use std::io::{self, Read, Write};
use std::net::TcpStream;

/// TCP stream that first replays bytes already read into a buffer (e.g. TLS records that
/// arrived in the same read as the last PRELOGIN packet).
pub struct Prefixed {
    pub pre: Vec<u8>,
    pub tcp: TcpStream,
}

impl Read for Prefixed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !self.pre.is_empty() {
            let n = buf.len().min(self.pre.len());
            buf[..n].copy_from_slice(&self.pre[..n]);
            self.pre.drain(..n);
            return Ok(n);
        }
        self.tcp.read(buf)
    }
}

impl Write for Prefixed {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tcp.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.tcp.flush()
    }
}

pub enum Stream {
    Plain(Prefixed),
    Tls(Box<StreamOwned<ServerConnection, Prefixed>>),
    Gone,
}

impl Stream {
    fn tcp(&self) -> Option<&TcpStream> {
        match self {
            Stream::Plain(p) => Some(&p.tcp),
            Stream::Tls(s) => Some(&s.sock.tcp),
            Stream::Gone => None,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(p) => p.read(buf),
            Stream::Tls(s) => s.read(buf),
            Stream::Gone => Err(io::ErrorKind::NotConnected.into()),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(p) => p.write(buf),
            Stream::Tls(s) => s.write(buf),
            Stream::Gone => Err(io::ErrorKind::NotConnected.into()),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(p) => p.flush(),
            Stream::Tls(s) => s.flush(),
            Stream::Gone => Ok(()),
        }
    }
}

pub fn proto_err(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

pub struct Io {
    pub stream: Stream,
    rbuf: Vec<u8>,
    rpos: usize,
    /// Negotiated packet size (4096 until LOGIN7 is answered).
    pub psize: usize,
    pub spid: u16,
    /// An ATTENTION packet was seen by `poll_attention` and must be acknowledged.
    pub attention: bool,
    /// The last message asked for a session reset (RESETCONNECTION or RESETCONNECTIONSKIPTRAN
    /// in its first packet's status: a pooled connection handed to a new user).
    pub reset_requested: bool,
    /// The read timeout `wait_readable` set on the socket, if any.
    read_timeout: Option<std::time::Duration>,
    /// `poll_attention` found the stream ended or broken (the client is gone).
    pub closed: bool,
}

fn timed_out(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

impl Io {
    pub fn new(tcp: TcpStream, spid: u16) -> Io {
        Io {
            stream: Stream::Plain(Prefixed {
                pre: Vec::new(),
                tcp,
            }),
            rbuf: Vec::with_capacity(65536),
            rpos: 0,
            psize: 4096,
            spid,
            attention: false,
            reset_requested: false,
            read_timeout: None,
            closed: false,
        }
    }

    /// An `Io` over bytes already received and no socket: reading past them fails with
    /// `NotConnected`, writing fails. For the fuzz targets (fuzz/fuzz_targets/peer_packet.rs),
    /// which feed the packet reader arbitrary input.
    pub fn replay(received: Vec<u8>) -> Io {
        Io {
            stream: Stream::Gone,
            rbuf: received,
            rpos: 0,
            psize: 4096,
            spid: 51,
            attention: false,
            reset_requested: false,
            read_timeout: None,
            closed: false,
        }
    }

    /// Bytes read from the socket but not consumed yet (handed to TLS after a handshake).
    pub fn take_buffered(&mut self) -> Vec<u8> {
        let v = self.rbuf[self.rpos..].to_vec();
        self.rbuf.clear();
        self.rpos = 0;
        v
    }

    fn fill(&mut self) -> io::Result<()> {
        if self.rpos > 0 && self.rpos == self.rbuf.len() {
            self.rbuf.clear();
            self.rpos = 0;
        }
        let mut tmp = [0u8; 65536];
        let n = loop {
            match self.stream.read(&mut tmp) {
                // The read timeout `wait_readable` left on the socket: read on.
                Err(e) if self.read_timeout.is_some() && timed_out(&e) => continue,
                r => break r?,
            }
        };
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.rbuf.extend_from_slice(&tmp[..n]);
        Ok(())
    }

    fn avail(&self) -> usize {
        self.rbuf.len() - self.rpos
    }

    /// Reads one packet: (type, status, body).
    pub fn read_packet(&mut self) -> io::Result<(u8, u8, Vec<u8>)> {
        while self.avail() < HEADER_LEN {
            self.fill()?;
        }
        let h = &self.rbuf[self.rpos..self.rpos + HEADER_LEN];
        let (typ, status) = (h[0], h[1]);
        let len = u16::from_be_bytes([h[2], h[3]]) as usize;
        if len < HEADER_LEN {
            return Err(proto_err(format!("bad packet length {len}")));
        }
        // Garbage (e.g. an HTTP request) must close the socket at once, not wait for a body.
        if !matches!(
            typ,
            0x01..=0x04 | 0x06 | 0x07 | 0x0E | 0x0F | 0x10 | 0x11 | 0x12 | 0x17
        ) {
            return Err(proto_err(format!("not a TDS packet (type {typ:#04x})")));
        }
        while self.avail() < len {
            self.fill()?;
        }
        let body = self.rbuf[self.rpos + HEADER_LEN..self.rpos + len].to_vec();
        self.rpos += len;
        Ok((typ, status, body))
    }

    /// Reads packets until EOM; returns (type, payload).
    pub fn read_message(&mut self) -> io::Result<(u8, Vec<u8>)> {
        let (typ, mut status, mut data) = self.read_packet()?;
        self.reset_requested =
            status & (packet::STATUS_RESETCONNECTION | packet::STATUS_RESETCONNECTIONSKIPTRAN) != 0;
        while status & packet::STATUS_EOM == 0 {
            let (t, s, d) = self.read_packet()?;
            if t == P_ATTN {
                // ATTENTION in the middle of a request (a bulk load cancelled while its rows
                // were being sent): the part received is dropped, the ATTENTION answered.
                return Ok((P_ATTN, Vec::new()));
            }
            status = s;
            data.extend_from_slice(&d);
            // SQL Server caps a request at 65,536 packets (256 MiB at 4 KiB); a bulk load's rows
            // are a stream it takes whole (mssql-python sends a batch_size=0 load as one
            // message: 100k 768-dimension vectors are 310 MB), so they get a larger cap.
            if data.len() > if typ == 0x07 { 4 << 30 } else { 256 << 20 } {
                return Err(proto_err("request larger than 256 MiB"));
            }
        }
        if status & packet::STATUS_IGNORE != 0 {
            // The client abandoned the message (Driver 18 ends an aborted bulk load's rows with
            // EOM | IGNORE): nothing of it is processed.
            return Ok((packet::P_IGNORED, Vec::new()));
        }
        Ok((typ, data))
    }

    pub fn write_raw(&mut self, b: &[u8]) -> io::Result<()> {
        self.stream.write_all(b)
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.stream.flush()
    }

    /// Sends a whole message split at `psize`.
    pub fn send_message(&mut self, typ: u8, payload: &[u8], psize: usize) -> io::Result<()> {
        let b = packet::split_message(typ, payload, psize, self.spid);
        self.write_raw(&b)?;
        self.flush()
    }

    /// Non-blocking check for an ATTENTION packet from the client while we stream a response.
    /// Waits up to `t` for the client's next bytes: true when some are buffered, or when the
    /// stream ended or failed (the next read reports that). The socket keeps its read timeout
    /// afterwards (`fill` reads on through it) until `end_waits` clears it, so a session that
    /// waits like this before every request pays no system call for it.
    pub fn wait_readable(&mut self, t: std::time::Duration) -> bool {
        if self.avail() > 0 {
            return true;
        }
        if self.read_timeout != Some(t) {
            match self.stream.tcp().map(|tcp| tcp.set_read_timeout(Some(t))) {
                Some(Ok(())) => self.read_timeout = Some(t),
                _ => return true,
            }
        }
        let mut tmp = [0u8; 4096];
        match self.stream.read(&mut tmp) {
            Ok(n) => {
                self.rbuf.extend_from_slice(&tmp[..n]);
                true
            }
            Err(e) => !timed_out(&e),
        }
    }

    /// Blocking reads again (after `wait_readable`).
    pub fn end_waits(&mut self) {
        if self.read_timeout.is_some() {
            if let Some(tcp) = self.stream.tcp() {
                let _ = tcp.set_read_timeout(None);
            }
            self.read_timeout = None;
        }
    }

    pub fn poll_attention(&mut self) -> bool {
        if self.attention {
            return true;
        }
        let Some(tcp) = self.stream.tcp() else {
            return false;
        };
        let tcp = tcp.try_clone();
        let Ok(tcp) = tcp else { return false };
        if tcp.set_nonblocking(true).is_err() {
            return false;
        }
        let mut tmp = [0u8; 4096];
        // For TLS the read goes through rustls, which buffers partial records itself.
        let r = self.stream.read(&mut tmp);
        let _ = tcp.set_nonblocking(false);
        match r {
            Ok(0) => self.closed = true,
            Ok(n) => self.rbuf.extend_from_slice(&tmp[..n]),
            Err(e) if !timed_out(&e) => self.closed = true,
            Err(_) => {}
        }
        self.take_buffered_attention()
    }

    /// Consumes an ATTENTION packet at the front of the buffer. One whose header announces less
    /// than a header is left for `read_packet` to refuse: consumed, its length (0 to 7) would
    /// leave the next read in the middle of a packet.
    fn take_buffered_attention(&mut self) -> bool {
        if self.avail() >= HEADER_LEN && self.rbuf[self.rpos] == P_ATTN {
            let len =
                u16::from_be_bytes([self.rbuf[self.rpos + 2], self.rbuf[self.rpos + 3]]) as usize;
            if len >= HEADER_LEN && self.avail() >= len {
                self.rpos += len;
                self.attention = true;
            }
        }
        self.attention
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A buffered ATTENTION is consumed whole; one announcing 3 bytes (less than its header)
    /// is not taken as an ATTENTION (it used to be, and the next packet was read from its 4th
    /// byte on), and the next read refuses it.
    #[test]
    fn attention_shorter_than_its_header_is_refused() {
        let mut io = Io::replay(vec![P_ATTN, 1, 0, 8, 0, 0, 1, 0]);
        assert!(io.take_buffered_attention());
        assert_eq!(io.avail(), 0);
        let mut io = Io::replay(vec![P_ATTN, 1, 0, 3, 0, 0, 1, 0]);
        assert!(!io.take_buffered_attention());
        assert!(io.read_packet().is_err());
    }
}
