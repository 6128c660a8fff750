//! PRELOGIN (MS-TDS 2.2.6.5): parse the client's options, build our reply.

// A wire parser: every cast that can lose sign or bits is decided (issue 36; a hostile
// client's numbers end in a TDS error or a closed connection, never a wrapped length/handle).
#![warn(
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    clippy::cast_possible_truncation
)]

use crate::io::proto_err;
use std::collections::HashMap;
use std::io;

pub const ENCRYPT_OFF: u8 = 0x00;
pub const ENCRYPT_ON: u8 = 0x01;
pub const ENCRYPT_NOT_SUP: u8 = 0x02;
pub const ENCRYPT_REQ: u8 = 0x03;

/// Option token -> value bytes.
pub fn parse(data: &[u8]) -> io::Result<HashMap<u8, Vec<u8>>> {
    let mut opts = HashMap::new();
    let mut i = 0;
    while i < data.len() && data[i] != 0xFF {
        if i + 5 > data.len() {
            return Err(proto_err("truncated PRELOGIN option table"));
        }
        let tok = data[i];
        let off = u16::from_be_bytes([data[i + 1], data[i + 2]]) as usize;
        let len = u16::from_be_bytes([data[i + 3], data[i + 4]]) as usize;
        let v = data
            .get(off..off + len)
            .ok_or_else(|| proto_err("PRELOGIN option out of range"))?;
        opts.insert(tok, v.to_vec());
        i += 5;
    }
    Ok(opts)
}

/// Reply: VERSION 16.0.4096, ENCRYPTION, INSTOPT, THREADID (empty), MARS=0 and FEDAUTHREQUIRED
/// (`fedauth`) only when the client sent it (msodbcsql drops the connection on an unasked
/// FEDAUTHREQUIRED): 1 from a server taking access tokens (Azure SQL), else 0.
pub fn reply(encrypt: u8, fedauth: Option<u8>) -> Vec<u8> {
    let mut items: Vec<(u8, Vec<u8>)> = vec![
        (0, vec![16, 0, 0x10, 0x00, 0, 0]),
        (1, vec![encrypt]),
        (2, vec![0]),
        (3, vec![]),
        (4, vec![0]),
    ];
    if let Some(required) = fedauth {
        items.push((6, vec![required]));
    }
    let mut off = 5 * items.len() + 1;
    let mut hdr = Vec::new();
    let mut body = Vec::new();
    #[allow(
        clippy::cast_possible_truncation,
        reason = "our own reply: at most 6 options of at most 6 bytes, offsets under 64"
    )]
    for (tok, val) in &items {
        hdr.push(*tok);
        hdr.extend_from_slice(&(off as u16).to_be_bytes());
        hdr.extend_from_slice(&(val.len() as u16).to_be_bytes());
        body.extend_from_slice(val);
        off += val.len();
    }
    hdr.push(0xFF);
    hdr.extend_from_slice(&body);
    hdr
}

#[cfg(test)]
mod tests {
    #[test]
    fn reply_parses_back() {
        let r = super::reply(super::ENCRYPT_NOT_SUP, None);
        let o = super::parse(&r).unwrap();
        assert_eq!(o[&1], vec![2]);
        assert_eq!(o[&0], vec![16, 0, 0x10, 0, 0, 0]);
        assert!(!o.contains_key(&6));
    }
}
