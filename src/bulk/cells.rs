//! One column of a chunk of rows, encoded the way the bcp API reads a bound value: an 8-byte
//! native-endian length prefix (`-1`: NULL) directly before the value's bytes. (Driver 18
//! wants 8 bytes for the (MAX) types: "Variable length types of unlimited length should have 8
//! byte prefix"; one width for every column keeps one layout.)
//!
//! Both drivers read the prefix themselves when a column is bound with an 8-byte indicator;
//! how each row's cell reaches the driver (copied into a per-column slot bound once, pointed at
//! with `bcp_colptr`, or, for Driver 18's (MAX) columns, given its length with `bcp_collen`,
//! which FreeTDS does not have) is `load::Feed`'s choice. Values are stored back to back: no
//! worst-case buffer for a (MAX) column, only the bytes its values have.

/// The prefix's width, passed to `bcp_bind` as `cbIndicator`.
pub const PREFIX_LEN: i32 = 8;
const P: usize = 8;
pub const NULL_PREFIX: [u8; P] = (-1i64).to_ne_bytes();

#[derive(Debug, Default)]
pub struct CellColumn {
    bytes: Vec<u8>,
    starts: Vec<usize>,
}

impl CellColumn {
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.starts.clear();
    }

    pub fn rows(&self) -> usize {
        self.starts.len()
    }

    /// Bytes held (prefixes included): what a chunk's memory bound counts.
    pub fn bytes_held(&self) -> usize {
        self.bytes.len()
    }

    pub fn push_null(&mut self) {
        self.starts.push(self.bytes.len());
        self.bytes.extend_from_slice(&NULL_PREFIX);
    }

    pub fn push(&mut self, value: &[u8]) {
        let start = self.open();
        self.bytes.extend_from_slice(value);
        self.close(start);
    }

    /// Start a value written in parts with [`Self::extend`]; [`Self::close`] ends it.
    pub fn open(&mut self) -> usize {
        let start = self.bytes.len();
        self.starts.push(start);
        self.bytes.extend_from_slice(&[0; P]);
        start
    }

    pub fn extend(&mut self, part: &[u8]) {
        self.bytes.extend_from_slice(part);
    }

    /// Append UTF-16LE code units.
    pub fn extend_utf16(&mut self, units: impl Iterator<Item = u16>) {
        for u in units {
            self.bytes.extend_from_slice(&u.to_le_bytes());
        }
    }

    /// End the value [`Self::open`] started, writing its length into its prefix.
    pub fn close(&mut self, start: usize) {
        let len = self.bytes.len() - start - P;
        let len = i64::try_from(len).unwrap_or(i64::MAX);
        self.bytes[start..start + P].copy_from_slice(&len.to_ne_bytes());
    }

    /// Undo the value [`Self::open`] started (its encoder refused it).
    pub fn abandon(&mut self, start: usize) {
        self.bytes.truncate(start);
        self.starts.pop();
    }

    /// Byte length of the value of row `row` (`None`: NULL).
    pub fn len_of(&self, row: usize) -> Option<usize> {
        let s = self.starts[row];
        let len = i64::from_ne_bytes(self.bytes[s..s + P].try_into().expect("8 bytes"));
        usize::try_from(len).ok()
    }

    /// The value of row `row` without its prefix (`None`: NULL).
    pub fn value(&self, row: usize) -> Option<&[u8]> {
        let len = self.len_of(row)?;
        let s = self.starts[row] + P;
        Some(&self.bytes[s..s + len])
    }

    /// Row `row`'s cell as the driver reads it: prefix and value.
    pub fn cell(&self, row: usize) -> &[u8] {
        let s = self.starts[row];
        let len = self.len_of(row).unwrap_or(0);
        &self.bytes[s..s + P + len]
    }

    /// The address `bcp_colptr` is given for row `row`: its prefix.
    pub fn prefix_ptr(&self, row: usize) -> *const u8 {
        self.bytes[self.starts[row]..].as_ptr()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_nulls_keep_their_prefixes() {
        let mut c = CellColumn::default();
        c.push(b"abc");
        c.push_null();
        let s = c.open();
        c.extend(b"de");
        c.extend(b"f");
        c.close(s);
        let s = c.open();
        c.extend(b"zz");
        c.abandon(s);
        assert_eq!(c.rows(), 3);
        assert_eq!(c.value(0), Some(&b"abc"[..]));
        assert_eq!(c.value(1), None);
        assert_eq!(c.value(2), Some(&b"def"[..]));
        assert_eq!(c.bytes_held(), 8 + 3 + 8 + 8 + 3);
    }
}
