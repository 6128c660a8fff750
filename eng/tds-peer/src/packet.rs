//! TDS packet framing: the 8-byte header and splitting a message payload at the negotiated size.

// A wire parser: every cast that can lose sign or bits is decided (issue 36; a hostile
// client's numbers end in a TDS error or a closed connection, never a wrapped length/handle).
#![warn(
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    clippy::cast_possible_truncation
)]

pub const P_SQL: u8 = 0x01;
pub const P_RPC: u8 = 0x03;
pub const P_REPLY: u8 = 0x04;
pub const P_ATTN: u8 = 0x06;
/// BULK LOAD: the rows of an `INSERT BULK` (MS-TDS 2.2.6.1).
pub const P_BULK: u8 = 0x07;
pub const P_TM: u8 = 0x0E;
pub const P_LOGIN7: u8 = 0x10;
pub const P_PRELOGIN: u8 = 0x12;

pub const HEADER_LEN: usize = 8;
/// Status bit "ignore this event" (with EOM): the client abandons the message (MS-TDS 2.2.3.1.2).
pub const STATUS_IGNORE: u8 = 0x02;
/// Not a TDS packet type: what `Io::read_message` returns for a message the client abandoned.
pub const P_IGNORED: u8 = 0xFF;
pub const STATUS_EOM: u8 = 0x01;
/// Run sp_reset_connection before this request (client-side pooling).
pub const STATUS_RESETCONNECTION: u8 = 0x08;
/// The same, keeping the transaction.
pub const STATUS_RESETCONNECTIONSKIPTRAN: u8 = 0x10;

/// Appends one packet header + body to `out`. The body is at most the negotiated packet size
/// less the header (`login::negotiate_packet_size`: <= 32767), which the header's length holds.
pub fn push_packet(out: &mut Vec<u8>, typ: u8, eom: bool, spid: u16, pid: u8, body: &[u8]) {
    #[allow(
        clippy::cast_possible_truncation,
        reason = "bodies are cut at the negotiated packet size, <= 32767 (see above)"
    )]
    let len = (body.len() + HEADER_LEN) as u16;
    debug_assert!(
        body.len() + HEADER_LEN <= 32767,
        "packet body past the packet size"
    );
    out.push(typ);
    out.push(if eom { STATUS_EOM } else { 0 });
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&spid.to_be_bytes());
    out.push(pid);
    out.push(0);
    out.extend_from_slice(body);
}

/// Splits a whole message into packets of at most `psize` bytes (header included).
/// msodbcsql rejects packets larger than the negotiated size, so every response goes through
/// this (or through [`crate::resp::Resp`], which does the same incrementally).
pub fn split_message(typ: u8, payload: &[u8], psize: usize, spid: u16) -> Vec<u8> {
    let max = psize - HEADER_LEN;
    let mut out = Vec::with_capacity(payload.len() + payload.len() / max * HEADER_LEN + HEADER_LEN);
    let mut pid: u8 = 1;
    if payload.is_empty() {
        push_packet(&mut out, typ, true, spid, pid, &[]);
        return out;
    }
    let mut chunks = payload.chunks(max).peekable();
    while let Some(c) = chunks.next() {
        push_packet(&mut out, typ, chunks.peek().is_none(), spid, pid, c);
        pid = pid.wrapping_add(1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_exactly_at_packet_size() {
        let payload: Vec<u8> = (0..1000u32).map(|i| i.to_le_bytes()[0]).collect();
        let out = split_message(P_REPLY, &payload, 512, 51);
        // 504 + 496 bytes of body
        assert_eq!(out.len(), 1000 + 16);
        assert_eq!(&out[..8], &[4, 0, 0x02, 0x00, 0, 51, 1, 0]);
        assert_eq!(&out[512..520], &[4, 1, 0x01, 0xF8, 0, 51, 2, 0]);
        assert_eq!(&out[520..], &payload[504..]);
    }

    #[test]
    fn exact_multiple_has_no_empty_trailer() {
        let payload = vec![7u8; 504 * 2];
        let out = split_message(P_REPLY, &payload, 512, 1);
        assert_eq!(out.len(), 1024);
        assert_eq!(out[1], 0);
        assert_eq!(out[513], 1);
    }
}
