//! Fault injection: `fault:<name>=<value>` anywhere in a statement's text (usually a comment).
//! Transport and stream faults (drop, stall, error, malformed token) and malformed *values*
//! (lone surrogate, impossible lengths, out-of-range date and decimal, a truncated row, PLP of
//! unknown length) act on synthetic tables; `kill` and `stall` also act on any statement, user
//! tables included. Table in README.md ("Fault modes").

use std::io;

#[derive(Clone, Debug, Default)]
pub struct Faults {
    pub drop_after: Option<u64>,
    pub stall: Option<f64>,
    /// After N rows: send them, then pause (for `pause` seconds, default 0.5) mid-stream, as a
    /// server waiting on a lock or disk mid-result.
    pub pause_after: Option<u64>,
    pub pause: Option<f64>,
    pub error_after: Option<u64>,
    pub malformed_after: Option<u64>,
    /// Row N of `peer.mixed_*` carries a malformed value (kind and row).
    pub corrupt: Option<(Corrupt, u64)>,
    /// (MAX) values sent as PLP of unknown total length (drivers report SQL_NO_TOTAL).
    pub plp_unknown: bool,
    /// Close the socket before running the statement, as a server whose session is killed.
    pub kill: bool,
    /// The statement's DONE carries this row count (sql/hostile.rs): 2^63 and up are values
    /// no SQLLEN holds.
    pub rowcount: Option<u64>,
}

/// A malformed value in row N of `peer.mixed_*` (columns id, big, f, name, ts, amount, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Corrupt {
    /// `name` (nvarchar) holds a lone high surrogate (valid TDS, malformed UTF-16).
    Surrogate,
    /// `name` has an odd byte count: no UTF-16 string has one.
    OddLength,
    /// `name` is 120 bytes long in an nvarchar(50) (at most 100 bytes).
    OverLength,
    /// `ts` (datetime2) has day number 0xFFFFFF: far past 9999-12-31.
    BigDate,
    /// `amount` (decimal(18,4)) has magnitude 2^64-1: 20 digits in a precision-18 column.
    BigDecimal,
    /// The row ends inside `name` (its length says more), the message ends, the socket closes.
    Truncated,
}

impl Faults {
    pub fn parse(text: &str) -> Faults {
        let mut f = Faults::default();
        for (p, _) in text.match_indices("fault:") {
            let rest = &text[p + 6..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '=' || c == '.'))
                .unwrap_or(rest.len());
            let Some((k, v)) = rest[..end].split_once('=') else {
                continue;
            };
            let at = |c: Corrupt| v.parse().ok().map(|n| (c, n));
            match k {
                "drop_after" => f.drop_after = v.parse().ok(),
                "stall" => f.stall = v.parse().ok(),
                "pause_after" => f.pause_after = v.parse().ok(),
                "pause" => f.pause = v.parse().ok(),
                "error_after" => f.error_after = v.parse().ok(),
                "malformed_after" => f.malformed_after = v.parse().ok(),
                "surrogate_at" => f.corrupt = at(Corrupt::Surrogate),
                "oddlen_at" => f.corrupt = at(Corrupt::OddLength),
                "overlen_at" => f.corrupt = at(Corrupt::OverLength),
                "bigdate_at" => f.corrupt = at(Corrupt::BigDate),
                "bigdec_at" => f.corrupt = at(Corrupt::BigDecimal),
                "truncated_at" => f.corrupt = at(Corrupt::Truncated),
                "plp_unknown" => f.plp_unknown = v == "1",
                "kill" => f.kill = v == "1",
                "rowcount" => f.rowcount = v.parse().ok(),
                _ => {}
            }
        }
        f
    }

    pub fn any(&self) -> bool {
        self.drop_after.is_some()
            || self.stall.is_some()
            || self.pause_after.is_some()
            || self.error_after.is_some()
            || self.malformed_after.is_some()
            || self.corrupt.is_some()
            || self.plp_unknown
    }
}

/// The faults of one statement of any kind, when its text names one (cheap when it does not).
pub fn of_statement(toks: &[crate::sql::lexer::Tok]) -> Option<Faults> {
    use crate::sql::lexer::Tok;
    let mut text = String::new();
    for t in toks {
        if let Tok::Space(s) = t
            && s.contains("fault:")
        {
            text.push_str(s);
        }
    }
    (!text.is_empty()).then(|| Faults::parse(&text))
}

/// The error that ends a session on purpose (the caller closes the socket).
pub fn killed(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::ConnectionAborted, what.to_string())
}

/// Offset of `name`'s length prefix in a `peer.mixed_*` row as the synthetic encoder writes it:
/// the NBCROW token and bitmap, then id (1+4), big (1+8), f (1+8).
pub(crate) fn name_offset(i: u64) -> usize {
    let head = if i.is_multiple_of(5) { 2 } else { 1 };
    head + 5 + 9 + 9
}

/// Row `i` of `peer.mixed_*` (all columns, as the synthetic encoder wrote it: `row`) with the
/// value `c` malformed, appended to `out`. For `Truncated` only the row's first bytes are
/// written: the caller ends the message there.
pub fn corrupt_mixed_row(mut row: Vec<u8>, i: u64, c: Corrupt, out: &mut Vec<u8>) {
    let at = name_offset(i);
    let name_len = u16::from_le_bytes([row[at], row[at + 1]]) as usize;
    let after_name = at + 2 + name_len;
    match c {
        Corrupt::Surrogate => {
            // "name N" → "name\u{D800}N": unit 4 (the space) becomes a lone high surrogate.
            row[at + 2 + 8..at + 2 + 10].copy_from_slice(&0xD800u16.to_le_bytes());
        }
        Corrupt::OddLength => {
            row.insert(after_name, b'A');
            row[at..at + 2].copy_from_slice(&((name_len + 1) as u16).to_le_bytes());
        }
        Corrupt::OverLength => {
            let long: Vec<u8> = "x"
                .repeat(60)
                .encode_utf16()
                .flat_map(u16::to_le_bytes)
                .collect();
            row.splice(at + 2..after_name, long.iter().copied());
            row[at..at + 2].copy_from_slice(&(long.len() as u16).to_le_bytes());
        }
        Corrupt::BigDate => {
            // ts: length byte 8, 5 bytes of ticks, 3 bytes of days.
            debug_assert_eq!(row[after_name], 8);
            row[after_name + 6..after_name + 9].copy_from_slice(&[0xFF, 0xFF, 0xFF]);
        }
        Corrupt::BigDecimal => {
            // amount after ts (9 bytes): length byte 9, sign, 8 bytes of magnitude.
            let d = after_name + 9;
            debug_assert_eq!(row[d], 9);
            row[d + 2..d + 10].copy_from_slice(&u64::MAX.to_le_bytes());
        }
        Corrupt::Truncated => row.truncate(at + 2 + 4),
    }
    out.extend_from_slice(&row);
}

/// Rewrite the PLP value of a `peer.lob_*` row (`[ROW, id (1+4), PLP…]`; the id is never
/// NULL, so a NULL body makes it `[NBCROW, bitmap, id]` with no PLP) to say "unknown length"
/// (0xFFFFFFFFFFFFFFFE); the chunks stay as they are.
pub fn plp_unknown_length(row: &mut [u8]) {
    const PLP_AT: usize = 1 + 5;
    const UNKNOWN: u64 = 0xFFFF_FFFF_FFFF_FFFE;
    if row.first() == Some(&0xD1) && row.len() >= PLP_AT + 8 {
        row[PLP_AT..PLP_AT + 8].copy_from_slice(&UNKNOWN.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_value_faults() {
        let f = Faults::parse(
            "SELECT * FROM peer.mixed_10 /* fault:surrogate_at=3 fault:plp_unknown=1 */",
        );
        assert_eq!(f.corrupt, Some((Corrupt::Surrogate, 3)));
        assert!(f.plp_unknown && f.any() && !f.kill);
        assert!(Faults::parse("/* fault:kill=1 */").kill);
    }
}
