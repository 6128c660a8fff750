//! The uniqueidentifier Arrow arm: fixed_size_binary(16) in RFC 4122 byte order (the field
//! carries the `arrow.uuid` extension: `arrow/schema.rs`), or utf8 lowercase hyphenated text
//! ([`ArrowOptions::uuid_text`](crate::arrow::ArrowOptions::uuid_text)).

use super::{guid_text, guid_to_u128};
use crate::arrow::cells::{Cells, FamilyBuilder, too_large};
use crate::arrow::kind::{ArrowColumn, ArrowKind};
use crate::arrow::text::TextColumn;
use crate::batch::ColumnBuffer;
use crate::error::Error;
use crate::error::Result;
use arrow_array::ArrayRef;
use arrow_array::builder::FixedSizeBinaryBuilder;
use std::ops::Range;
use std::sync::Arc;

pub fn kind(column: &ArrowColumn<'_>) -> Result<ArrowKind> {
    Ok(if column.options.uuid_text {
        ArrowKind::UuidText
    } else {
        ArrowKind::Uuid
    })
}

pub enum Builder {
    Bytes(FixedSizeBinaryBuilder),
    Text(TextColumn<i32>),
}

impl FamilyBuilder for Builder {
    fn new(kind: ArrowKind, rows: usize) -> Self {
        match kind {
            ArrowKind::UuidText => Self::Text(TextColumn::new(rows, rows * 36)),
            _ => Self::Bytes(FixedSizeBinaryBuilder::with_capacity(rows, 16)),
        }
    }

    fn append(&mut self, buf: &ColumnBuffer, rows: Range<usize>, cells: &Cells<'_>) -> Result<()> {
        match self {
            Self::Bytes(b) => {
                for r in rows {
                    if buf.is_null(r) {
                        b.append_null();
                    } else {
                        b.append_value(uuid_bytes(buf.guid(r)))
                            .map_err(|e| Error::Internal(e.to_string()))?;
                    }
                }
            }
            Self::Text(t) => {
                for r in rows {
                    if buf.is_null(r) {
                        t.append_null();
                    } else {
                        t.append_ascii(&guid_text(guid_to_u128(buf.guid(r))))
                            .map_err(|_| too_large(cells, r))?;
                    }
                }
            }
        }
        Ok(())
    }

    fn finish(&mut self, kind: ArrowKind, rows: usize) -> ArrayRef {
        match self {
            // Text keeps its buffers' size from one batch to the next (`arrow/text.rs`).
            Self::Text(t) => t.finish(),
            Self::Bytes(_) => match std::mem::replace(self, Self::new(kind, rows)) {
                Self::Bytes(mut b) => Arc::new(b.finish()),
                Self::Text(mut t) => t.finish(),
            },
        }
    }
}

/// A `SQL_GUID` struct (Data1..Data3 native-endian) as the 16 bytes of RFC 4122 order.
pub fn uuid_bytes(raw: [u8; 16]) -> [u8; 16] {
    guid_to_u128(raw).to_be_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_bytes_are_rfc_4122_order() {
        // 6F9619FF-8B86-D011-B42D-00C04FC964FF as SQL_GUID (Data1..3 little-endian).
        let raw = [
            0xFF, 0x19, 0x96, 0x6F, 0x86, 0x8B, 0x11, 0xD0, 0xB4, 0x2D, 0x00, 0xC0, 0x4F, 0xC9,
            0x64, 0xFF,
        ];
        assert_eq!(
            uuid_bytes(raw),
            [
                0x6F, 0x96, 0x19, 0xFF, 0x8B, 0x86, 0xD0, 0x11, 0xB4, 0x2D, 0x00, 0xC0, 0x4F, 0xC9,
                0x64, 0xFF
            ]
        );
    }
}
