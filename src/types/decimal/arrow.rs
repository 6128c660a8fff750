//! The decimal Arrow arm: decimal128(p,s), exact. The numeric struct's magnitude, or the
//! driver's digits parsed without a float; more fraction digits than `s` is an error, never
//! rounded (psqlODBC describes an unconstrained numeric as (28,6)).

pub use super::text::decimal_text_to_i128;
use crate::arrow::cells::{Cells, FamilyBuilder, each};
use crate::arrow::kind::{ArrowColumn, ArrowKind};
use crate::batch::ColumnBuffer;
use crate::error::Result;
use crate::types::CellKind;
use arrow_array::ArrayRef;
use arrow_array::builder::Decimal128Builder;
use arrow_schema::DataType;
use std::ops::Range;
use std::sync::Arc;

pub fn kind(column: &ArrowColumn<'_>) -> Result<ArrowKind> {
    let col = column.col;
    let decimal = |precision: u8, scale: i8| {
        if (1..=38).contains(&precision) && (0..=precision as i8).contains(&scale) {
            Ok(ArrowKind::Decimal128 { precision, scale })
        } else {
            Err(column.refuse(&format!(
                "is a decimal({precision},{scale}): decimal128 holds precision 1..38 and \
                 scale 0..precision"
            )))
        }
    };
    match col.kind {
        CellKind::Numeric { precision, scale } => decimal(precision, scale),
        CellKind::Decimal {
            precision, scale, ..
        } => decimal(precision, scale),
        // Streamed digits: a declared (p,s) still gives the column's type (a decimal after
        // a (MAX) column); an unconstrained numeric (PostgreSQL) has none.
        _ if (1..=38).contains(&col.desc.size) => decimal(
            col.desc.size as u8,
            col.desc.decimal_digits.clamp(-128, 127) as i8,
        ),
        _ => Err(column.refuse("is a numeric of unknown precision (no decimal128 type fits it)")),
    }
}

pub struct Builder {
    values: Decimal128Builder,
    precision: u8,
    scale: i8,
}

impl FamilyBuilder for Builder {
    fn new(kind: ArrowKind, rows: usize) -> Self {
        let ArrowKind::Decimal128 { precision, scale } = kind else {
            unreachable!("the decimal family builds decimal128 columns only")
        };
        Builder {
            values: Decimal128Builder::with_capacity(rows)
                .with_data_type(DataType::Decimal128(precision, scale)),
            precision,
            scale,
        }
    }

    fn append(&mut self, buf: &ColumnBuffer, rows: Range<usize>, cells: &Cells<'_>) -> Result<()> {
        let (precision, scale, b) = (self.precision, self.scale, &mut self.values);
        if let CellKind::Numeric { .. } = buf.kind {
            return each(rows, buf, cells, b, |r| {
                numeric_to_i128(buf.numeric(r), scale).ok_or_else(|| {
                    "the driver returned a numeric struct of another scale or beyond 38 digits"
                        .to_string()
                })
            });
        }
        for r in rows {
            if buf.is_null(r) {
                b.append_null();
                continue;
            }
            let text = buf.bytes(r).map_err(|e| cells.cut(r, e))?;
            let v = decimal_text_to_i128(text, precision, scale).ok_or_else(|| {
                cells.failed(
                    r,
                    format!(
                        "the driver returned {:?}, not a decimal({precision},{scale}) value \
                         (it is never rounded)",
                        String::from_utf8_lossy(text)
                    ),
                )
            })?;
            b.append_value(v);
        }
        Ok(())
    }

    fn finish(&mut self, kind: ArrowKind, rows: usize) -> ArrayRef {
        let mut done = std::mem::replace(self, Self::new(kind, rows));
        Arc::new(done.values.finish())
    }
}

/// The unscaled i128 of an `SQL_NUMERIC_STRUCT` (precision, scale, sign 1 = positive, 16-byte
/// little-endian magnitude), at the column's scale. `None` when the struct's scale is not the
/// column's or the magnitude exceeds 38 digits.
pub fn numeric_to_i128(raw: &[u8; 19], scale: i8) -> Option<i128> {
    if raw[1] as i8 != scale {
        return None;
    }
    let magnitude = u128::from_le_bytes(raw[3..19].try_into().ok()?);
    if magnitude >= 10u128.pow(38) {
        return None;
    }
    let v = magnitude as i128;
    Some(if raw[2] == 0 { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_text_is_exact_at_the_columns_scale_and_never_rounded() {
        assert_eq!(decimal_text_to_i128(b"-12.5", 10, 2), Some(-1250));
        assert_eq!(decimal_text_to_i128(b".5", 3, 2), Some(50));
        assert_eq!(decimal_text_to_i128(b"0.05", 3, 2), Some(5));
        assert_eq!(decimal_text_to_i128(b"7", 3, 0), Some(7));
        assert_eq!(
            decimal_text_to_i128(b"1.2500", 5, 2),
            Some(125),
            "zero padding is exact"
        );
        assert_eq!(
            decimal_text_to_i128(b"1.255", 5, 2),
            None,
            "a third digit is not rounded"
        );
        let max38 = "9".repeat(38);
        assert_eq!(
            decimal_text_to_i128(max38.as_bytes(), 38, 0),
            Some(10i128.pow(38) - 1)
        );
        let frac38 = format!("-.{max38}");
        assert_eq!(
            decimal_text_to_i128(frac38.as_bytes(), 38, 38),
            Some(-(10i128.pow(38) - 1))
        );
        assert_eq!(
            decimal_text_to_i128(b"100", 2, 0),
            None,
            "beyond the precision"
        );
        for junk in [&b"NaN"[..], b"1e5", b"", b"-", b"1.2.3", b"Infinity"] {
            assert_eq!(decimal_text_to_i128(junk, 38, 4), None, "{junk:?}");
        }
    }

    #[test]
    fn numeric_structs_keep_sign_and_scale() {
        let mut raw = [0u8; 19];
        raw[0] = 38;
        raw[1] = 4;
        raw[2] = 0; // negative
        raw[3..19].copy_from_slice(&12_345u128.to_le_bytes());
        assert_eq!(numeric_to_i128(&raw, 4), Some(-12_345));
        assert_eq!(numeric_to_i128(&raw, 2), None, "another scale is refused");
        raw[2] = 1;
        raw[3..19].copy_from_slice(&(10u128.pow(38) - 1).to_le_bytes());
        assert_eq!(numeric_to_i128(&raw, 4), Some(10i128.pow(38) - 1));
        raw[3..19].copy_from_slice(&10u128.pow(38).to_le_bytes());
        assert_eq!(numeric_to_i128(&raw, 4), None);
    }
}
