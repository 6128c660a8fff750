//! The uniqueidentifier family: `SQL_GUID` bound as `SQL_C_GUID` (16 bytes: Data1..Data3
//! native-endian, Data4 in order). Arrow arm: `arrow.rs` (fixed_size_binary(16) `arrow.uuid`,
//! or text); Python arm: `py/types/guid.rs` (`uuid.UUID`, or `str`).

use super::kind::{Binding, CellKind};
use crate::backend::Backend;
use crate::bulk::Form;
use crate::odbc::ColumnDescription;
use crate::odbc::sys::CDataType;

pub(crate) mod arrow;

/// The binding of [`CellKind::Guid`].
pub fn binding(_kind: CellKind) -> Binding {
    Binding::new(CDataType::Guid, 16)
}

/// The kind of a uniqueidentifier column.
pub fn kind_for(_desc: &ColumnDescription, _backend: Backend) -> CellKind {
    CellKind::Guid
}

/// The bulk-load form of a uniqueidentifier destination column.
pub fn bulk_form(_desc: &ColumnDescription) -> Option<Form> {
    Some(Form::Guid)
}

/// The 128-bit integer of a `SQL_GUID` struct as `uuid.UUID(int=...)` wants it: `Data1..Data3`
/// are native-endian integers, `Data4` is 8 bytes in order (what SQL Server's byte order means).
pub fn guid_to_u128(raw: [u8; 16]) -> u128 {
    let d1 = u32::from_ne_bytes([raw[0], raw[1], raw[2], raw[3]]) as u128;
    let d2 = u16::from_ne_bytes([raw[4], raw[5]]) as u128;
    let d3 = u16::from_ne_bytes([raw[6], raw[7]]) as u128;
    let mut d4 = 0u128;
    for &b in &raw[8..16] {
        d4 = (d4 << 8) | b as u128;
    }
    (d1 << 96) | (d2 << 80) | (d3 << 64) | d4
}

/// Inverse of [`guid_to_u128`], for binding `uuid.UUID` parameters as `SQL_C_GUID`.
#[allow(
    clippy::cast_possible_truncation,
    reason = "taking the GUID fields: the truncation is the point"
)]
pub fn u128_to_guid(v: u128) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[0..4].copy_from_slice(&((v >> 96) as u32).to_ne_bytes());
    out[4..6].copy_from_slice(&((v >> 80) as u16).to_ne_bytes());
    out[6..8].copy_from_slice(&((v >> 64) as u16).to_ne_bytes());
    out[8..16].copy_from_slice(&(v as u64).to_be_bytes());
    out
}

// Encoder: a parameter's (and, next, a bulk load's) value as the `SQL_GUID` struct
// ([`u128_to_guid`]), or as text where the DBMS has no GUID type (`params/array.rs` picks).

/// The canonical text of a GUID: 36 lowercase hex digits and hyphens (8-4-4-4-12), as
/// Python's `str(uuid)`. The one rendering: parameters where the DBMS has no GUID type, Arrow's
/// `uuid_text`, and (upper-cased) the row path's `native_uuid = False`.
pub fn guid_text(v: u128) -> [u8; 36] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = [b'-'; 36];
    let mut at = 0;
    for (i, b) in v.to_be_bytes().iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            at += 1;
        }
        out[at] = HEX[(b >> 4) as usize];
        out[at + 1] = HEX[(b & 15) as usize];
        at += 2;
    }
    out
}

/// A 36-character hyphenated GUID, braces allowed (as SQL Server's conversion from text).
pub fn parse_guid(s: &str) -> Option<u128> {
    let s = s.trim();
    let s = s
        .strip_prefix('{')
        .and_then(|x| x.strip_suffix('}'))
        .unwrap_or(s);
    let b = s.as_bytes();
    if b.len() != 36 || [8, 13, 18, 23].iter().any(|&i| b[i] != b'-') {
        return None;
    }
    let hex: String = s.chars().filter(|&c| c != '-').collect();
    // Hex digits only: from_str_radix would also take a leading '+'.
    if hex.len() != 32 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u128::from_str_radix(&hex, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guid_round_trip_and_layout() {
        // 6F9619FF-8B86-D011-B42D-00C04FC964FF as SQL Server stores it (Data1..3 little-endian).
        let raw = [
            0xFF, 0x19, 0x96, 0x6F, 0x86, 0x8B, 0x11, 0xD0, 0xB4, 0x2D, 0x00, 0xC0, 0x4F, 0xC9,
            0x64, 0xFF,
        ];
        let v = guid_to_u128(raw);
        assert_eq!(format!("{v:032X}"), "6F9619FF8B86D011B42D00C04FC964FF");
        assert_eq!(u128_to_guid(v), raw);
        assert_eq!(&guid_text(v), b"6f9619ff-8b86-d011-b42d-00c04fc964ff");
    }

    #[test]
    fn guids_parse_with_or_without_braces() {
        let g = parse_guid("{12345678-1234-5678-9abc-def012345678}").unwrap();
        assert_eq!(g, 0x12345678_1234_5678_9abc_def012345678);
        assert!(parse_guid("12345678-1234-5678-9abc-def01234567").is_none());
        // A sign is not a hex digit (from_str_radix alone would read +2345678 as 02345678).
        assert!(parse_guid("+2345678-1234-5678-9abc-def012345678").is_none());
    }
}
