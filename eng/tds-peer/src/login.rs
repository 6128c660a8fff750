//! LOGIN7 (MS-TDS 2.2.6.4): parse the fields we need and build the login response.

// A wire parser: every cast that can lose sign or bits is decided (issue 36; a hostile
// client's numbers end in a TDS error or a closed connection, never a wrapped length/handle).
#![warn(
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    clippy::cast_possible_truncation
)]

use crate::conv::from_utf16;
use crate::io::proto_err;
use crate::token;
use std::io;

#[derive(Debug, Default)]
pub struct Login {
    pub tds_version: u32,
    pub packet_size: u32,
    pub user: String,
    pub password: String,
    pub app: String,
    pub database: String,
    pub utf8_support: bool,
    /// VECTORSUPPORT / JSONSUPPORT as asked (vector.rs).
    pub asked: crate::vector::Features,
    /// The FEDAUTH feature extension's data (an access token login, see fedauth.rs).
    pub fedauth: Option<Vec<u8>>,
}

/// Passwords are XOR-0xA5 and nibble-swapped on the wire.
fn unscramble(b: &[u8]) -> Vec<u8> {
    b.iter().map(|x| (x ^ 0xA5).rotate_left(4)).collect()
}

pub fn parse(data: &[u8]) -> io::Result<Login> {
    if data.len() < 94 {
        return Err(proto_err("LOGIN7 too short"));
    }
    let u32le = |o: usize| u32::from_le_bytes([data[o], data[o + 1], data[o + 2], data[o + 3]]);
    let u16le = |o: usize| u16::from_le_bytes([data[o], data[o + 1]]) as usize;
    let field = |k: usize| -> Vec<u8> {
        let (o, l) = (u16le(36 + 4 * k), u16le(38 + 4 * k));
        data.get(o..o + 2 * l)
            .map(|s| s.to_vec())
            .unwrap_or_default()
    };
    let of3 = data[27];
    let mut l = Login {
        tds_version: u32le(4),
        packet_size: u32le(8),
        user: from_utf16(&field(1)),
        password: from_utf16(&unscramble(&field(2))),
        app: from_utf16(&field(3)),
        database: from_utf16(&field(8)),
        utf8_support: false,
        asked: Default::default(),
        fedauth: None,
    };
    // FeatureExt: ibExtension (field 5 slot) points at a u32 offset of the feature list.
    if of3 & 0x10 != 0 {
        let ib = u16le(36 + 4 * 5);
        if ib + 4 <= data.len() {
            let mut fo = u32le(ib) as usize;
            while fo < data.len() && data[fo] != 0xFF {
                if fo + 5 > data.len() {
                    break;
                }
                let id = data[fo];
                let fl = u32le(fo + 1) as usize;
                if id == 0x0A {
                    l.utf8_support = true;
                }
                crate::vector::note_feature(&mut l.asked, id, data.get(fo + 5..).unwrap_or(&[]));
                if id == crate::fedauth::FEATURE_FEDAUTH {
                    l.fedauth = data.get(fo + 5..fo + 5 + fl).map(<[u8]>::to_vec);
                }
                fo += 5 + fl;
            }
        }
    }
    Ok(l)
}

/// The login response sequence of a real SQL Server (database, info, collation, language,
/// LOGINACK, [FEATUREEXTACK], packet size, DONE). `fedauth_ack`: the FEDAUTH acknowledgement's
/// data when the login carried a token (Driver 18 requires it then).
pub fn response(
    db: &str,
    packet_size: usize,
    utf8_ack: bool,
    fedauth_ack: Option<&[u8]>,
) -> Vec<u8> {
    let mut v = token::envchange_str(1, db, "master");
    v.extend(token::message(
        5701,
        &format!("Changed database context to '{db}'."),
        0,
        2,
        1,
    ));
    v.extend(token::envchange_bytes(7, &crate::types::COLL_CP1252, &[]));
    v.extend(token::envchange_str(2, "us_english", ""));
    v.extend(token::message(
        5703,
        "Changed language setting to us_english.",
        0,
        1,
        1,
    ));
    v.extend(token::loginack());
    let mut acks: Vec<(u8, &[u8])> = Vec::new();
    if utf8_ack {
        acks.push((0x0A, &[0x01]));
    }
    let vector_acks = crate::vector::acks(crate::vector::session());
    acks.extend(vector_acks.iter().map(|(id, d)| (*id, &d[..])));
    if let Some(data) = fedauth_ack {
        acks.push((crate::fedauth::FEATURE_FEDAUTH, data));
    }
    if !acks.is_empty() {
        v.extend(token::featureextack(&acks));
    }
    v.extend(token::envchange_str(4, &packet_size.to_string(), "4096"));
    v.extend(token::done(token::TOK_DONE, 0, 0, 0));
    v
}

/// Packet size we agree to: 0 means "server decides" (msodbcsql) -> 4096.
pub fn negotiate_packet_size(requested: u32) -> usize {
    if requested == 0 {
        4096
    } else {
        requested.clamp(512, 32767) as usize
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn packet_size() {
        assert_eq!(super::negotiate_packet_size(0), 4096);
        assert_eq!(super::negotiate_packet_size(100), 512);
        assert_eq!(super::negotiate_packet_size(40000), 32767);
        assert_eq!(super::negotiate_packet_size(8192), 8192);
    }
}
