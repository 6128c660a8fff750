//! Decimal text (what drivers write for `SQL_C_CHAR` numerics) → sign, coefficient and
//! exponent, in the form libmpdec stores a decimal: base-10^19 words, least significant first.

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

/// Split plain decimal text (`-12.3400`, `.5`, `007`) into [`DecimalParts`]. `None` for
/// anything else (NaN, exponents, more than 38 significant digits): the caller takes the
/// general path for those.
pub fn decimal_parts(bytes: &[u8]) -> Option<DecimalParts> {
    // libmpdec's radix on 64-bit builds: one word holds 19 decimal digits.
    const RADIX: u128 = 10_000_000_000_000_000_000;
    let (negative, body) = match bytes.first()? {
        b'-' => (true, &bytes[1..]),
        b'+' => (false, &bytes[1..]),
        _ => (false, bytes),
    };
    // One pass: the coefficient accumulates in a u128 (38 digits < 2^127), leading zeros are
    // not counted as digits, the point only starts counting the exponent.
    let mut coefficient: u128 = 0;
    let mut digits = 0u32;
    let mut fraction: Option<i32> = None;
    let mut any_digit = false;
    for &b in body {
        if b.is_ascii_digit() {
            any_digit = true;
            if let Some(f) = fraction.as_mut() {
                *f += 1;
            }
            if digits == 0 && b == b'0' {
                continue;
            }
            digits += 1;
            if digits > 38 {
                return None;
            }
            coefficient = coefficient * 10 + (b - b'0') as u128;
        } else if b == b'.' && fraction.is_none() {
            fraction = Some(0);
        } else {
            return None;
        }
    }
    if !any_digit {
        return None;
    }
    let (words, len) = if coefficient < RADIX {
        ([coefficient as u64, 0], 1)
    } else {
        (
            [(coefficient % RADIX) as u64, (coefficient / RADIX) as u64],
            2,
        )
    };
    Some(DecimalParts {
        negative,
        digits: digits.max(1),
        exponent: -fraction.unwrap_or(0),
        words,
        len,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
