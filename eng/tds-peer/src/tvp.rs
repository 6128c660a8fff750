//! Table-valued parameters (TDS type 0xF3) in RPC requests: TVP_TYPENAME, TVP_COLMETADATA,
//! optional ordering tokens, then TVP_ROW tokens whose values use each column's TYPE_INFO.
//! Driver 18 sends them for pyodbc's list-of-rows parameters (`exec p ?` with `[rows]`).

// A wire parser: every cast that can lose sign or bits is decided (issue 36; a hostile
// client's numbers end in a TDS error or a closed connection, never a wrapped length/handle).
#![warn(
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    clippy::cast_possible_truncation
)]

use crate::wire::{b_varchar, get, proto_err, type_info_len, u16_at, value_len};
use std::io;

/// One table-valued parameter: its table type and rows (canonical values as in RPC params).
#[derive(Debug)]
pub struct Table {
    pub schema: String,
    pub type_name: String,
    pub rows: Vec<Vec<rusqlite::types::Value>>,
}

/// Parses the TVP starting at `p` (the 0xF3 byte); returns it and the index after it.
/// `read_value` decodes one TYPE_INFO + value (the RPC parameter decoder).
pub fn parse(
    d: &[u8],
    mut p: usize,
    read_value: impl Fn(&[u8]) -> io::Result<rusqlite::types::Value>,
) -> io::Result<(Table, usize)> {
    p += 1;
    let _db = b_varchar(d, &mut p)?;
    let schema = b_varchar(d, &mut p)?;
    let type_name = b_varchar(d, &mut p)?;
    let count = u16_at(d, p)?;
    p += 2;
    let mut cols: Vec<Vec<u8>> = Vec::new();
    if count != 0xFFFF {
        for _ in 0..count {
            p += 4 + 2; // UserType, Flags
            let n = type_info_len(d, p)?;
            cols.push(get(d, p, n)?.to_vec());
            p += n;
            let _name = b_varchar(d, &mut p)?;
        }
    }
    // Optional TVP_ORDER_UNIQUE (0x10) / TVP_COLUMN_ORDERING (0x11), then TVP_END_TOKEN.
    loop {
        match get(d, p, 1)?[0] {
            0x00 => {
                p += 1;
                break;
            }
            0x10 => p += 3 + 3 * u16_at(d, p + 1)?,
            0x11 => p += 3 + 2 * u16_at(d, p + 1)?,
            t => return Err(proto_err(format!("unexpected TVP token {t:#04x}"))),
        }
    }
    let mut rows = Vec::new();
    loop {
        match get(d, p, 1)?[0] {
            0x00 => {
                return Ok((
                    Table {
                        schema,
                        type_name,
                        rows,
                    },
                    p + 1,
                ));
            }
            0x01 => {
                p += 1;
                let mut row = Vec::with_capacity(cols.len());
                for ti in &cols {
                    let n = value_len(ti, d, p)?;
                    // The value first, bounds-checked: `n` is a length the client announced,
                    // and reserving it before looking asked for 4 GiB (fuzz: peer_rpc, OOM).
                    let value = get(d, p, n)?;
                    let mut buf = Vec::with_capacity(ti.len() + value.len());
                    buf.extend_from_slice(ti);
                    buf.extend_from_slice(value);
                    row.push(read_value(&buf)?);
                    p += n;
                }
                rows.push(row);
            }
            t => return Err(proto_err(format!("unexpected TVP row token {t:#04x}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::types::Value;

    #[test]
    fn parses_typename_columns_and_rows() {
        let name = |s: &str| {
            let mut v = vec![u8::try_from(s.encode_utf16().count()).unwrap()];
            v.extend(s.encode_utf16().flat_map(|u| u.to_le_bytes()));
            v
        };
        let mut d = vec![0xF3];
        d.extend(name(""));
        d.extend(name("dbo"));
        d.extend(name("tt"));
        d.extend([1, 0]); // one column
        d.extend([0, 0, 0, 0, 1, 0, 0x26, 4]); // UserType, Flags, INTN(4)
        d.extend(name(""));
        d.push(0x00);
        d.extend([0x01, 4, 7, 0, 0, 0, 0x01, 0, 0x00]); // 7, NULL, end
        let read = |b: &[u8]| -> io::Result<Value> {
            assert_eq!(&b[..2], &[0x26, 4]);
            Ok(if b[2] == 0 {
                Value::Null
            } else {
                Value::Integer(b[3] as i64)
            })
        };
        let (t, end) = parse(&d, 0, read).unwrap();
        assert_eq!(
            (t.schema.as_str(), t.type_name.as_str(), end),
            ("dbo", "tt", d.len())
        );
        assert_eq!(t.rows, vec![vec![Value::Integer(7)], vec![Value::Null]]);
    }
}
