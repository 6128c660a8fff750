//! The decimal family: DECIMAL/NUMERIC/MONEY as the `SQL_NUMERIC_STRUCT` (Driver 18, p ≤ 38),
//! as the driver's digits (`SQL_C_CHAR`, other drivers), or streamed digits (unknown size).
//! Here: the binding, and decimal text or structs → sign, coefficient and exponent, in the form
//! libmpdec stores a decimal (base-10^19 words, least significant first). Arrow arm: `arrow.rs`
//! (decimal128, exact); Python arm: `py/types/decimal.rs` (`Decimal`).

use super::kind::{Binding, CellKind};
use crate::backend::Backend;
use crate::bulk::Form;
use crate::odbc::ColumnDescription;
use crate::odbc::sys::CDataType;

pub(crate) mod arrow;
pub mod text;

pub use text::{decimal_parts, decimal_text, fit_decimal};

/// The binding of a decimal kind (`LongDecimal`: streamed digits, no bound element).
pub fn binding(kind: CellKind) -> Binding {
    match kind {
        CellKind::Numeric { .. } => Binding::new(CDataType::Numeric, 19),
        CellKind::Decimal { buffer_len, .. } => Binding::new(CDataType::Char, buffer_len as usize),
        _ => Binding::new(CDataType::Char, 0),
    }
}

/// The kind of a DECIMAL/NUMERIC column.
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    reason = "each cast follows `size <= 38` and `0..=size` tests, a clamp or a min"
)]
pub fn kind_for(desc: &ColumnDescription, backend: Backend) -> CellKind {
    let size = desc.size;
    if size == 0 {
        return CellKind::LongDecimal;
    }
    // Driver 18 only: FreeTDS 1.3 ignores the ARD's precision and scale and converts with
    // scale 0 (12.34 came back as 12: silent loss), so it keeps the text binding.
    if backend.ss_c_types() && size <= 38 && (0..=size as i16).contains(&desc.decimal_digits) {
        return CellKind::Numeric {
            precision: size as u8,
            scale: desc.decimal_digits as i8,
        };
    }
    let precision = size.min(255) as u8;
    // Sign, point, a leading zero some drivers add, the NUL; 64 covers every SQL Server
    // DECIMAL(38) and unconstrained PostgreSQL numerics up to 60 digits.
    let buffer_len = (size + 4).max(64).min(u16::MAX as usize) as u16;
    CellKind::Decimal {
        precision,
        scale: desc.decimal_digits.clamp(-128, 127) as i8,
        buffer_len,
    }
}

/// A finite decimal of at most 38 significant digits (every SQL Server DECIMAL/NUMERIC/MONEY).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecimalParts {
    pub negative: bool,
    /// Significant digits of the coefficient (1 for zero).
    pub digits: u32,
    /// Minus the number of digits after the point (`12.3400` → -4: trailing zeros are kept).
    pub exponent: i32,
    /// The coefficient in base 10^19, least significant word first.
    pub words: [u64; 2],
    /// Words in use (1 or 2).
    pub len: u8,
}

/// 10^0 ..= 10^38.
const POW10: [u128; 39] = {
    let mut t = [1u128; 39];
    let mut i = 1;
    while i < 39 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

impl DecimalParts {
    /// The parts of an `SQL_NUMERIC_STRUCT` (precision, scale, sign 1 = positive, 16-byte
    /// little-endian magnitude). `None` for a magnitude beyond 38 digits or a negative scale.
    #[allow(
        clippy::cast_possible_truncation,
        reason = "a count of at most 38 powers; words are below 10^19 < 2^64 (RADIX)"
    )]
    pub fn from_numeric(raw: &[u8; 19]) -> Option<DecimalParts> {
        const RADIX: u128 = 10_000_000_000_000_000_000;
        let scale = i8::from_ne_bytes([raw[1]]); // SQLSCHAR: the byte is signed
        let coefficient = u128::from_le_bytes(raw[3..19].try_into().ok()?);
        if scale < 0 || coefficient >= POW10[38] {
            return None;
        }
        // Digits of the coefficient by comparison with powers of ten (u128 division is slow).
        let digits = 1 + POW10[1..].iter().take_while(|&&p| coefficient >= p).count() as u32;
        let (words, len) = if coefficient < RADIX {
            ([coefficient as u64, 0], 1)
        } else {
            (
                [(coefficient % RADIX) as u64, (coefficient / RADIX) as u64],
                2,
            )
        };
        Some(DecimalParts {
            negative: raw[2] == 0,
            digits,
            exponent: -(scale as i32),
            words,
            len,
        })
    }
}

/// The bulk-load form of a DECIMAL/NUMERIC destination column: its precision and scale
/// (`bulk::Form::Decimal`, whose values are fitted by [`fit_decimal`]).
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "both are clamped to 0..=38 first"
)]
pub fn bulk_form(desc: &ColumnDescription) -> Option<Form> {
    Some(Form::Decimal {
        precision: desc.size.clamp(1, 38) as u8,
        scale: desc.decimal_digits.clamp(0, 38) as u8,
    })
}

// Encoders: a parameter sends a `ParamValue::Decimal`'s plain digits (`params/array.rs`); a
// bulk load the digits fitted to the column (`text.rs::fit_decimal`). All decimal text is
// `text.rs`'s.

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_text_accepts_driver_shapes() {
        assert_eq!(decimal_text(b"-12.50"), Some("-12.50"));
        assert_eq!(decimal_text(b".5"), Some(".5"));
        assert_eq!(decimal_text(b"-.5"), Some("-.5"));
        assert_eq!(
            decimal_text(b"12345678901234567890123456789012345678"),
            Some("12345678901234567890123456789012345678")
        );
        assert_eq!(decimal_text(b""), None);
        assert_eq!(decimal_text(b"1.2.3"), None);
        assert_eq!(decimal_text(b"NaN"), Some("NaN"));
        assert_eq!(decimal_text(b"-Infinity"), Some("-Infinity"));
        assert_eq!(decimal_text(b"nan"), None);
        assert_eq!(decimal_text(b"1e5"), None);
    }

    #[test]
    fn splits_sign_coefficient_and_exponent() {
        let p = decimal_parts(b"-12.3400").unwrap();
        assert_eq!(
            p,
            DecimalParts {
                negative: true,
                digits: 6,
                exponent: -4,
                words: [123400, 0],
                len: 1
            }
        );
        let p = decimal_parts(b".5").unwrap();
        assert_eq!((p.digits, p.exponent, p.words[0]), (1, -1, 5));
        let p = decimal_parts(b"0.0000").unwrap();
        assert_eq!((p.digits, p.exponent, p.words, p.len), (1, -4, [0, 0], 1));
        let p = decimal_parts(b"007").unwrap();
        assert_eq!((p.digits, p.exponent, p.words[0]), (1, 0, 7));
    }

    #[test]
    fn two_words_beyond_nineteen_digits() {
        let p = decimal_parts(b"12345678901234567890").unwrap();
        assert_eq!(p.len, 2);
        assert_eq!(p.words, [2345678901234567890, 1]);
        let nines = "9".repeat(38);
        let p = decimal_parts(nines.as_bytes()).unwrap();
        assert_eq!(
            p.words,
            [9_999_999_999_999_999_999, 9_999_999_999_999_999_999]
        );
        assert_eq!(p.digits, 38);
        let p = decimal_parts(b"1234567890123456789").unwrap();
        assert_eq!((p.len, p.words[0]), (1, 1234567890123456789));
    }

    #[allow(
        clippy::cast_sign_loss,
        reason = "SQLSCHAR scale: the byte is the i8 reinterpreted, as the C struct holds it"
    )]
    fn numeric(negative: bool, scale: i8, magnitude: u128) -> [u8; 19] {
        let mut raw = [0u8; 19];
        raw[0] = 38;
        raw[1] = scale as u8;
        raw[2] = u8::from(!negative);
        raw[3..].copy_from_slice(&magnitude.to_le_bytes());
        raw
    }

    #[test]
    fn numeric_struct_matches_the_text_parts() {
        for (text, negative, scale, magnitude) in [
            ("-12.3400", true, 4, 123400u128),
            ("0.0000", false, 4, 0),
            ("0.5", false, 1, 5),
            (
                "12345678901234567890.0123456789",
                false,
                10,
                123456789012345678900123456789,
            ),
            (
                "-99999999999999999999999999999999999999",
                true,
                0,
                10u128.pow(38) - 1,
            ),
            ("0.00000000000000000000000000000000000001", false, 38, 1),
        ] {
            let from_struct =
                DecimalParts::from_numeric(&numeric(negative, scale, magnitude)).unwrap();
            assert_eq!(Some(from_struct), decimal_parts(text.as_bytes()), "{text}");
            assert_eq!(from_struct.to_text(), text);
        }
        assert_eq!(
            DecimalParts::from_numeric(&numeric(false, 0, 10u128.pow(38))),
            None
        );
        assert_eq!(DecimalParts::from_numeric(&numeric(false, -1, 5)), None);
    }

    #[test]
    fn refuses_what_it_cannot_represent() {
        assert_eq!(decimal_parts(b"NaN"), None);
        assert_eq!(decimal_parts(b"1e5"), None);
        assert_eq!(decimal_parts(b""), None);
        assert_eq!(decimal_parts(b"-"), None);
        assert_eq!(decimal_parts(b"."), None);
        assert_eq!(decimal_parts(b"1.2.3"), None);
        assert_eq!(decimal_parts("1".repeat(39).as_bytes()), None);
        // Leading zeros are not significant digits.
        assert!(decimal_parts(format!("000{}", "1".repeat(38)).as_bytes()).is_some());
    }
}
