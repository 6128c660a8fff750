//! utf8 / large_utf8 columns built straight from the bound UTF-16: each cell is transcoded once,
//! into the Arrow value buffer itself (no scratch string, no builder copying it again), and the
//! buffers keep their size from one record batch to the next so they do not grow by doubling
//! (reallocating and copying) in every batch.

use arrow_array::{ArrayRef, GenericStringArray, OffsetSizeTrait};
use arrow_buffer::{Buffer, NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use std::sync::Arc;

/// A lone surrogate at `at` (a UTF-16 unit index) that UTF-8 cannot hold.
pub struct LoneSurrogate {
    pub at: usize,
    pub unit: u16,
}

/// Why a cell could not be appended.
pub(crate) enum TextFail {
    Lone(LoneSurrogate),
    /// The batch's text outgrew utf8's 32-bit offsets.
    TooLarge,
}

/// Append the UTF-8 of `units` to `out`. A lone surrogate becomes U+FFFD when `replace`, else
/// is an error (nothing of the cell is kept: the caller truncates to the cell's start).
#[inline]
#[allow(
    clippy::cast_possible_truncation,
    reason = "each `as u8` takes bits of a code point already range-checked for its UTF-8 byte; \
              a lone surrogate is a u16 read as u32"
)]
pub fn utf16_to_utf8(units: &[u16], out: &mut Vec<u8>, replace: bool) -> Result<(), LoneSurrogate> {
    let ascii = ascii_prefix(units, out);
    if ascii == units.len() {
        return Ok(());
    }
    // At most 3 UTF-8 bytes per UTF-16 unit (a surrogate pair: 4 bytes for 2 units), so after
    // this `reserve` every write below is in capacity.
    out.reserve((units.len() - ascii) * 3);
    let base = out.len();
    let dst = out.spare_capacity_mut().as_mut_ptr().cast::<u8>();
    let mut n = 0usize;
    let mut put = |b: u8| {
        // SAFETY: `n` < 3 × (units consumed so far) <= the capacity reserved past `base`
        // (each unit writes at most 3 bytes, a pair of units 4), so `dst + n` is in the
        // allocation; the bytes written are initialised before `set_len` exposes them.
        unsafe { dst.add(n).write(b) };
        n += 1;
    };
    let mut i = ascii;
    let mut result = Ok(());
    while i < units.len() {
        let u = units[i] as u32;
        i += 1;
        let c = if u < 0x80 {
            put(u as u8);
            continue;
        } else if u < 0x800 {
            put(0xC0 | (u >> 6) as u8);
            put(0x80 | (u & 0x3F) as u8);
            continue;
        } else if !(0xD800..0xE000).contains(&u) {
            u
        } else if u < 0xDC00 && i < units.len() && (0xDC00..0xE000).contains(&units[i]) {
            let low = units[i] as u32;
            i += 1;
            0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00)
        } else if replace {
            0xFFFD
        } else {
            result = Err(LoneSurrogate {
                at: i - 1,
                unit: u as u16,
            });
            break;
        };
        if c < 0x10000 {
            put(0xE0 | (c >> 12) as u8);
            put(0x80 | ((c >> 6) & 0x3F) as u8);
            put(0x80 | (c & 0x3F) as u8);
        } else {
            put(0xF0 | (c >> 18) as u8);
            put(0x80 | ((c >> 12) & 0x3F) as u8);
            put(0x80 | ((c >> 6) & 0x3F) as u8);
            put(0x80 | (c & 0x3F) as u8);
        }
    }
    // SAFETY: the `n` bytes after `base` were written above, within the reserved capacity.
    unsafe { out.set_len(base + n) };
    result
}

/// Units per step of the ASCII run: one 16-byte load, checked and narrowed as a whole.
const ASCII_STEP: usize = 8;

/// Append the leading ASCII run of `units` to `out` as bytes; returns its length in units.
/// Most text read from SQL Server is ASCII, or mostly: 8 units at a time, OR-reduced and
/// narrowed as a block (callgrind: 10-character ASCII names went from ~130 to ~40 instructions
/// a cell; the per-unit loop it replaces neither vectorised nor unrolled).
#[inline]
#[allow(
    clippy::cast_possible_truncation,
    reason = "u16 -> u8 only for units checked < 0x80"
)]
fn ascii_prefix(units: &[u16], out: &mut Vec<u8>) -> usize {
    out.reserve(units.len());
    let dst = out.spare_capacity_mut().as_mut_ptr().cast::<u8>();
    let mut i = 0;
    for block in units.chunks_exact(ASCII_STEP) {
        let block: &[u16; ASCII_STEP] = block.try_into().expect("chunks_exact");
        if block.iter().fold(0u16, |acc, &u| acc | u) >= 0x80 {
            break;
        }
        // SAFETY: `i + ASCII_STEP <= units.len()`, and `units.len()` bytes were reserved past
        // `out.len()`; the bytes are initialised before `set_len` exposes them.
        unsafe {
            dst.add(i)
                .cast::<[u8; ASCII_STEP]>()
                .write_unaligned(block.map(|u| u as u8))
        };
        i += ASCII_STEP;
    }
    while let Some(&u) = units.get(i)
        && u < 0x80
    {
        // SAFETY: `i < units.len()`, within the capacity reserved above.
        unsafe { dst.add(i).write(u as u8) };
        i += 1;
    }
    // SAFETY: the `i` bytes after `out.len()` were written above, within the reservation.
    unsafe { out.set_len(out.len() + i) };
    i
}

/// The offsets, UTF-8 bytes and validity of one text column of the batch being built.
pub(crate) struct TextColumn<O: OffsetSizeTrait> {
    offsets: Vec<O>,
    values: Vec<u8>,
    nulls: NullBufferBuilder,
}

impl<O: OffsetSizeTrait> TextColumn<O> {
    pub fn new(rows: usize, bytes: usize) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(O::zero());
        TextColumn {
            offsets,
            values: Vec::with_capacity(bytes),
            nulls: NullBufferBuilder::new(rows),
        }
    }

    #[inline]
    pub fn append_null(&mut self) {
        self.nulls.append_null();
        let end = *self.offsets.last().expect("offsets start with 0");
        self.offsets.push(end);
    }

    /// One non-NULL cell of ASCII text made here (a UUID's 36 characters).
    #[inline]
    pub fn append_ascii(&mut self, text: &[u8]) -> Result<(), TextFail> {
        debug_assert!(text.is_ascii());
        let start = self.values.len();
        self.values.extend_from_slice(text);
        let Some(end) = O::from_usize(self.values.len()) else {
            self.values.truncate(start);
            return Err(TextFail::TooLarge);
        };
        self.offsets.push(end);
        self.nulls.append_non_null();
        Ok(())
    }

    /// Transcode one non-NULL cell into the value buffer.
    #[inline]
    pub fn append_utf16(&mut self, units: &[u16], replace: bool) -> Result<(), TextFail> {
        let start = self.values.len();
        if let Err(e) = utf16_to_utf8(units, &mut self.values, replace) {
            self.values.truncate(start);
            return Err(TextFail::Lone(e));
        }
        let Some(end) = O::from_usize(self.values.len()) else {
            self.values.truncate(start);
            return Err(TextFail::TooLarge);
        };
        self.offsets.push(end);
        self.nulls.append_non_null();
        Ok(())
    }

    /// The array of the cells appended so far; the column starts over with buffers as large
    /// as this batch's (the next batch is likely alike).
    pub fn finish(&mut self) -> ArrayRef {
        let rows = self.offsets.len() - 1;
        let next = TextColumn::new(rows, self.values.len() + self.values.len() / 8);
        let TextColumn {
            offsets,
            values,
            mut nulls,
        } = std::mem::replace(self, next);
        // SAFETY: `offsets` starts at 0 and never decreases (each is the value buffer's length
        // after a cell), its last is `values.len()`, and `values` holds only whole UTF-8
        // encodings (`utf16_to_utf8` truncates a cell it refuses); one validity slot per cell.
        Arc::new(unsafe {
            GenericStringArray::<O>::new_unchecked(
                OffsetBuffer::new_unchecked(ScalarBuffer::from(offsets)),
                Buffer::from_vec(values),
                nulls.finish(),
            )
        })
    }
}

#[cfg(test)]
#[allow(
    clippy::cast_possible_truncation,
    reason = "test fixtures: i % 26 < 256"
)]
mod tests {
    use super::*;
    use arrow_array::Array;

    fn utf8(units: &[u16], replace: bool) -> Result<String, usize> {
        let mut out = b"x".to_vec();
        utf16_to_utf8(units, &mut out, replace).map_err(|e| e.at)?;
        Ok(String::from_utf8(out).expect("valid UTF-8")[1..].to_string())
    }

    #[test]
    fn a_non_ascii_unit_anywhere_around_the_ascii_blocks_transcodes_as_std_does() {
        for len in 0..=2 * ASCII_STEP + 3 {
            let ascii: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
            assert_eq!(
                utf8(&ascii.encode_utf16().collect::<Vec<_>>(), false).as_deref(),
                Ok(&*ascii)
            );
            for at in 0..len {
                for c in ['é', '中', '😀', '\u{7F}'] {
                    let mut s: Vec<char> = ascii.chars().collect();
                    s[at] = c;
                    let s: String = s.into_iter().collect();
                    let units: Vec<u16> = s.encode_utf16().collect();
                    assert_eq!(utf8(&units, false).as_deref(), Ok(&*s), "{s:?}");
                }
                let mut units: Vec<u16> = ascii.encode_utf16().collect();
                units[at] = 0xD800;
                assert_eq!(utf8(&units, false), Err(at));
            }
        }
    }

    #[test]
    fn transcodes_every_width_as_std_does() {
        for s in [
            "",
            "ascii",
            "é",
            "note 7 é",
            "中文 ü",
            "a😀b",
            "\u{7FF}\u{800}\u{FFFF}\u{10000}\u{10FFFF}",
        ] {
            let units: Vec<u16> = s.encode_utf16().collect();
            assert_eq!(utf8(&units, false).as_deref(), Ok(s));
        }
    }

    #[test]
    fn lone_surrogates_are_refused_or_replaced() {
        for (units, at) in [
            (vec![0x61, 0xD800], 1),
            (vec![0xDC00, 0x61], 0),
            (vec![0x61, 0xD800, 0x62], 1),
            (vec![0xD83D, 0xD83D, 0xDE00], 0),
        ] {
            assert_eq!(utf8(&units, false), Err(at), "{units:x?}");
            let lossy = String::from_utf16_lossy(&units);
            assert_eq!(
                utf8(&units, true).as_deref(),
                Ok(lossy.as_str()),
                "{units:x?}"
            );
        }
    }

    #[test]
    fn a_refused_cell_leaves_nothing_behind() {
        let mut col = TextColumn::<i32>::new(2, 0);
        col.append_utf16(&[0x61], false).ok().expect("ascii");
        assert!(col.append_utf16(&[0x62, 0xD800], false).is_err());
        col.append_null();
        let array = col.finish();
        let strings = array
            .as_any()
            .downcast_ref::<arrow_array::StringArray>()
            .expect("utf8");
        assert_eq!(strings.len(), 2);
        assert_eq!(strings.value(0), "a");
        assert!(strings.is_null(1));
    }
}
