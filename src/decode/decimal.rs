//! Decimal text (what drivers write for `SQL_C_CHAR` numerics) → sign, coefficient and
//! exponent, in the form libmpdec stores a decimal: base-10^19 words, least significant first.

/// libmpdec's radix on 64-bit builds: one word holds 19 decimal digits.
pub const WORD_DIGITS: usize = 19;

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
    let (negative, body) = match bytes.first()? {
        b'-' => (true, &bytes[1..]),
        b'+' => (false, &bytes[1..]),
        _ => (false, bytes),
    };
    // Up to 38 significant digits, collected without the point and leading zeros.
    let mut digits = [0u8; 38];
    let mut n = 0usize;
    let mut fraction: Option<usize> = None;
    let mut any_digit = false;
    for &b in body {
        match b {
            b'0'..=b'9' => {
                any_digit = true;
                if let Some(f) = fraction.as_mut() {
                    *f += 1;
                }
                if n == 0 && b == b'0' {
                    continue;
                }
                if n == digits.len() {
                    return None;
                }
                digits[n] = b - b'0';
                n += 1;
            }
            b'.' if fraction.is_none() => fraction = Some(0),
            _ => return None,
        }
    }
    if !any_digit {
        return None;
    }
    let exponent = -(fraction.unwrap_or(0) as i32);
    if n == 0 {
        return Some(DecimalParts {
            negative,
            digits: 1,
            exponent,
            words: [0, 0],
            len: 1,
        });
    }
    let word = |ds: &[u8]| ds.iter().fold(0u64, |acc, &d| acc * 10 + d as u64);
    let (high, low) = digits[..n].split_at(n.saturating_sub(WORD_DIGITS));
    Some(DecimalParts {
        negative,
        digits: n as u32,
        exponent,
        words: [word(low), word(high)],
        len: if high.is_empty() { 1 } else { 2 },
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
