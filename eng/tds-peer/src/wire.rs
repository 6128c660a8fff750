//! Reading what a client sent, byte by byte: bounds-checked slices and integers, and how long a
//! TYPE_INFO and the value after it are. Table-valued parameters (`tvp.rs`) and bulk-load rows
//! (`bulk.rs`) carry their values in the same form.

// A wire parser: every cast that can lose sign or bits is decided (issue 36; a hostile
// client's numbers end in a TDS error or a closed connection, never a wrapped length/handle).
#![warn(
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    clippy::cast_possible_truncation
)]

use crate::conv;
use std::io;

pub fn proto_err(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// `n` bytes at `p`, or a protocol error: every length here is one the client announced.
pub fn get(d: &[u8], p: usize, n: usize) -> io::Result<&[u8]> {
    p.checked_add(n)
        .and_then(|end| d.get(p..end))
        .ok_or_else(|| proto_err("truncated message"))
}

pub fn u16_at(d: &[u8], p: usize) -> io::Result<usize> {
    let b = get(d, p, 2)?;
    Ok(usize::from(u16::from_le_bytes([b[0], b[1]])))
}

pub fn u32_at(d: &[u8], p: usize) -> io::Result<usize> {
    let b = get(d, p, 4)?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
}

/// A B_VARCHAR (a count of UTF-16 units, then the units); moves `p` past it.
pub fn b_varchar(d: &[u8], p: &mut usize) -> io::Result<String> {
    let n = usize::from(get(d, *p, 1)?[0]);
    let s = conv::from_utf16(get(d, *p + 1, 2 * n)?);
    *p += 1 + 2 * n;
    Ok(s)
}

/// The legacy LOB types: in a bulk load their values carry a text pointer and a timestamp.
pub const IMAGE: u8 = 0x22;
pub const TEXT: u8 = 0x23;
pub const NTEXT: u8 = 0x63;

/// Bytes of the TYPE_INFO at `p`.
pub fn type_info_len(d: &[u8], p: usize) -> io::Result<usize> {
    Ok(match get(d, p, 1)?[0] {
        0x26 | 0x68 | 0x6D | 0x6E | 0x6F | 0x24 | 0x29 | 0x2A | 0x2B => 2,
        0x6A | 0x6C | 0x37 | 0x3F => 4,
        0xA7 | 0xAF | 0xE7 | 0xEF => 8,
        0xA5 | 0xAD => 3,
        0xF5 => 4, // VECTOR: max length, element type
        0x62 | IMAGE => 5,
        TEXT | NTEXT => 10,
        0xF1 => {
            if get(d, p + 1, 1)?[0] == 1 {
                return Err(proto_err("xml schema collections are not supported"));
            }
            2
        }
        _ => 1,
    })
}

/// Bytes of the value at `p` of a column whose TYPE_INFO is `ti` (not a legacy LOB type).
pub fn value_len(ti: &[u8], d: &[u8], p: usize) -> io::Result<usize> {
    Ok(match ti[0] {
        0x30 | 0x32 => 1,
        0x34 => 2,
        0x38 | 0x3A | 0x3B | 0x7A => 4,
        0x3C | 0x3D | 0x3E | 0x7F => 8,
        0x1F => 0,
        0xA7 | 0xAF | 0xE7 | 0xEF | 0xA5 | 0xAD => {
            if u16::from_le_bytes([ti[1], ti[2]]) == 0xFFFF {
                plp_len(d, p)?
            } else {
                match u16_at(d, p)? {
                    0xFFFF => 2,
                    n => 2 + n,
                }
            }
        }
        0xF1 | 0xF4 => plp_len(d, p)?,
        0xF5 => match u16_at(d, p)? {
            0xFFFF => 2,
            n => 2 + n,
        },
        0x62 => 4 + u32_at(d, p)?,
        _ => 1 + usize::from(get(d, p, 1)?[0]),
    })
}

/// Bytes of a PLP value at `p` (total length, chunks, terminator).
pub fn plp_len(d: &[u8], p: usize) -> io::Result<usize> {
    if get(d, p, 8)? == [0xFF; 8] {
        return Ok(8);
    }
    let mut q = p + 8;
    loop {
        let n = u32_at(d, q)?;
        q = q
            .checked_add(4 + n)
            .ok_or_else(|| proto_err("PLP chunk length overflows"))?;
        if n == 0 {
            return Ok(q - p);
        }
    }
}
