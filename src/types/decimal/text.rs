//! Decimal text, the one place it is read and written: the drivers' digits checked
//! (`decimal_text`), read into Arrow's unscaled integers (`decimal_text_to_i128`), fitted to a
//! column as SQL Server converts (`fit_decimal`), an unscaled integer written out
//! (`unscaled_text`), and a Python `Decimal`'s str() read into sign, digits and exponent and
//! written out as plain text for a parameter (`parse_decimal_str`, `plain_text`), and the
//! digits of plain text counted (`precision_scale`, `significant`, `digits_and_scale`,
//! `whole_part`).
//! Plain text into libmpdec's words and back (`decimal_parts`, `DecimalParts::to_text`) is here
//! too; the `SQL_NUMERIC_STRUCT` form is `mod.rs`'s.

use super::DecimalParts;
use std::fmt::Write;

/// Check that a decimal cell is plain ASCII decimal text (`-12.50`, `.5`, `1E+3` from odd
/// drivers is refused) and return it as `&str`. Returns `None` for anything else.
pub fn decimal_text(bytes: &[u8]) -> Option<&str> {
    // PostgreSQL numerics also hold NaN and ±Infinity, which `Decimal` represents too.
    if matches!(bytes, b"NaN" | b"Infinity" | b"-Infinity") {
        return std::str::from_utf8(bytes).ok();
    }
    let body = match bytes.first()? {
        b'-' | b'+' => &bytes[1..],
        _ => bytes,
    };
    let mut digits = 0usize;
    let mut points = 0usize;
    for &b in body {
        match b {
            b'0'..=b'9' => digits += 1,
            b'.' => points += 1,
            _ => return None,
        }
    }
    if digits == 0 || points > 1 {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}

/// The unscaled i128 of plain decimal text (`-12.5`, `.5`, `007`) at `scale` digits after the
/// point: fewer digits are padded, more are refused (never rounded), as are more than
/// `precision` significant digits, NaN, infinities and exponents.
pub fn decimal_text_to_i128(text: &[u8], precision: u8, scale: i8) -> Option<i128> {
    let (negative, body) = match text.first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let mut value: i128 = 0;
    let mut digits = 0u32; // significant digits (leading zeros not counted)
    let mut fraction: Option<i32> = None;
    let mut any = false;
    for &b in body {
        match b {
            b'0'..=b'9' => {
                any = true;
                if let Some(f) = fraction.as_mut() {
                    *f += 1;
                    if *f > scale as i32 {
                        // A digit past the column's scale: exact only if it and every later
                        // one is zero (drivers may pad).
                        if b != b'0' {
                            return None;
                        }
                        continue;
                    }
                }
                if digits == 0 && b == b'0' {
                    continue;
                }
                digits += 1;
                if digits > 38 {
                    return None;
                }
                value = value * 10 + (b - b'0') as i128;
            }
            b'.' if fraction.is_none() => fraction = Some(0),
            _ => return None,
        }
    }
    if !any {
        return None;
    }
    let have = fraction.unwrap_or(0).min(scale as i32);
    for _ in have..scale as i32 {
        value = value.checked_mul(10)?;
    }
    if value >= 10i128.pow(precision as u32) {
        return None;
    }
    Some(if negative { -value } else { value })
}

/// Decimal text fitted to `decimal(precision, scale)` as SQL Server converts a value of more
/// scale: rounded half away from zero to `scale` fraction digits. Refused: more integer digits
/// than `precision - scale` after rounding (SQL Server: arithmetic overflow), or no number.
/// Done here because the drivers differ: Driver 18 refuses a longer fraction (22001 "String
/// data, right truncation") and FreeTDS cuts it (3.99995 into scale 4 became 3.9999).
pub fn fit_decimal(text: &str, precision: u8, scale: u8) -> Result<String, String> {
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let valid = !(int.is_empty() && frac.is_empty())
        && int.bytes().all(|c| c.is_ascii_digit())
        && frac.bytes().all(|c| c.is_ascii_digit());
    if !valid {
        return Err(format!("{text:?} is not a decimal number"));
    }
    let scale = usize::from(scale);
    // The digits kept, integer part then `scale` fraction digits, as one number.
    let mut digits: Vec<u8> = int.trim_start_matches('0').bytes().collect();
    let kept_frac = &frac.as_bytes()[..frac.len().min(scale)];
    digits.extend_from_slice(kept_frac);
    digits.resize(digits.len() + (scale - kept_frac.len()), b'0');
    if frac.as_bytes().get(scale).is_some_and(|&d| d >= b'5') {
        // Round the magnitude up: carry from the last digit.
        let mut i = digits.len();
        loop {
            if i == 0 {
                digits.insert(0, b'1');
                break;
            }
            i -= 1;
            if digits[i] == b'9' {
                digits[i] = b'0';
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    let int_digits = digits.len() - scale;
    let int_part = &digits[..int_digits];
    let int_significant = int_part.iter().skip_while(|&&d| d == b'0').count();
    let room = usize::from(precision).saturating_sub(scale);
    if int_significant > room {
        return Err(format!(
            "{text} does not fit decimal({precision},{scale}): {int_significant} integer digits, room for {room}"
        ));
    }
    let zero = digits.iter().all(|&d| d == b'0');
    let mut out = String::with_capacity(digits.len() + 3);
    if negative && !zero {
        out.push('-');
    }
    let int_text = std::str::from_utf8(&int_part[int_part.len() - int_significant..]).unwrap_or("");
    out.push_str(if int_text.is_empty() { "0" } else { int_text });
    if scale > 0 {
        out.push('.');
        out.push_str(std::str::from_utf8(&digits[int_digits..]).unwrap_or(""));
    }
    Ok(out)
}

/// The digits of an unscaled decimal `v` with `scale` (negative: that many zeros appended),
/// written into `out`, which is returned.
pub fn unscaled_text(out: &mut String, v: impl std::fmt::Display, scale: i8) -> &str {
    out.clear();
    let _ = write!(out, "{v}");
    let negative = out.starts_with('-');
    let digits_start = usize::from(negative);
    if scale < 0 {
        if &out[digits_start..] != "0" {
            out.extend(std::iter::repeat_n('0', usize::from(scale.unsigned_abs())));
        }
        return out;
    }
    let scale = usize::from(scale.unsigned_abs());
    if scale == 0 {
        return out;
    }
    let digits = out.len() - digits_start;
    if digits <= scale {
        let zeros = "0".repeat(scale + 1 - digits);
        out.insert_str(digits_start, &zeros);
    }
    let point = out.len() - scale;
    out.insert(point, '.');
    out
}

/// Sign, digits (no leading zeros but one) and exponent of a finite Decimal's str()
/// (`-12.340`, `0.05`, `1.5E-7`, `1E+3`); `None` for anything else (NaN, Infinity).
pub fn parse_decimal_str(s: &str) -> Option<(bool, Vec<u8>, i64)> {
    let (negative, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (mantissa, exp) = match body.find(['E', 'e']) {
        Some(i) => (&body[..i], body[i + 1..].parse::<i64>().ok()?),
        None => (body, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.bytes().chain(frac.bytes()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut digits: Vec<u8> = int.bytes().chain(frac.bytes()).map(|c| c - b'0').collect();
    let leading = digits.iter().take_while(|&&d| d == 0).count();
    digits.drain(..leading.min(digits.len() - 1));
    let exponent = exp.checked_sub(i64::try_from(frac.len()).ok()?)?;
    Some((negative, digits, exponent))
}

/// The plain text of a decimal `(-1)^negative * digits * 10^exponent` with its precision and
/// scale, checked as pyodbc checks a parameter: `Err` says why it cannot be bound (the caller
/// names the parameter; its class is a ProgrammingError).
pub fn plain_text(
    negative: bool,
    digits: &[u8],
    exponent: i64,
) -> Result<(String, u32, u32), String> {
    // The largest scale ODBC can describe (decimal digits are a SQLSMALLINT).
    const MAX_SCALE: i64 = i16::MAX as i64;
    if exponent < -MAX_SCALE {
        return Err(format!(
            "Decimal has more digits after the decimal point than can be bound (at most \
             {MAX_SCALE})"
        ));
    }
    // The plain text spells out every zero of the exponent: Decimal('1E+999999999999999999')
    // would be an exabyte string (the allocation aborted the interpreter). No database takes
    // more digits than PostgreSQL's numeric (131,072 before the point, 16,383 after).
    const MAX_TEXT_DIGITS: i64 = 131_072 + 16_383;
    let spelled = (digits.len() as i64).saturating_add(exponent.saturating_abs());
    if spelled > MAX_TEXT_DIGITS {
        return Err(format!(
            "Numeric overflow: the Decimal has more than {MAX_TEXT_DIGITS} digits written out, \
             more than any database's numeric holds"
        ));
    }
    let mut text = String::with_capacity(digits.len() + 4);
    if negative {
        text.push('-');
    }
    let digit_chars: String = digits.iter().map(|d| (b'0' + d) as char).collect();
    let (precision, scale);
    if exponent >= 0 {
        text.push_str(&digit_chars);
        text.extend(std::iter::repeat_n('0', exponent as usize));
        precision = digits.len() + exponent as usize;
        scale = 0;
    } else {
        let s = (-exponent) as usize;
        if digits.len() > s {
            let (int_part, frac) = digit_chars.split_at(digits.len() - s);
            text.push_str(int_part);
            text.push('.');
            text.push_str(frac);
            precision = digits.len();
        } else {
            text.push_str("0.");
            text.extend(std::iter::repeat_n('0', s - digits.len()));
            text.push_str(&digit_chars);
            // The leading zero is not a digit of precision: 1E-38 fits DECIMAL(38, 38).
            precision = s;
        }
        scale = s;
    }
    Ok((text, precision.max(1) as u32, scale as u32))
}

/// The precision and scale of plain decimal text (`-0012.340`: 6 and 3): the digits after
/// the integer part's leading zeros, and those after the point.
pub fn precision_scale(text: &str) -> (u32, u32) {
    let body = text.trim_start_matches(['-', '+']);
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let int_digits = int.trim_start_matches('0').len();
    ((int_digits + frac.len()).max(1) as u32, frac.len() as u32)
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

impl DecimalParts {
    /// Plain decimal text (`-12.3400`), for the general `Decimal(text)` path and converters.
    pub fn to_text(&self) -> String {
        const RADIX: u128 = 10_000_000_000_000_000_000;
        let coefficient = self.words[1] as u128 * RADIX + self.words[0] as u128;
        let scale = (-self.exponent).max(0) as usize;
        let digits = format!("{coefficient:0>width$}", width = scale + 1);
        let (int_part, frac) = digits.split_at(digits.len() - scale);
        let sign = if self.negative { "-" } else { "" };
        if frac.is_empty() {
            format!("{sign}{int_part}")
        } else {
            format!("{sign}{int_part}.{frac}")
        }
    }
}

/// The digits of plain decimal text that carry value (`-0012.3400`: 4 and 2): the integer
/// part's leading zeros and the fraction's trailing zeros fit any precision and scale.
pub fn significant(text: &str) -> (u32, u32) {
    let unsigned = text.trim_start_matches('-');
    let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let scale = fraction.trim_end_matches('0').len() as u32;
    (whole.trim_start_matches('0').len() as u32 + scale, scale)
}

/// All the digits of plain decimal text and those after the point (`0.050`: 4 and 3), as a
/// driver's output text is described.
pub fn digits_and_scale(text: &str) -> (u32, u32) {
    let digits = text.bytes().filter(u8::is_ascii_digit).count() as u32;
    let scale = text.split_once('.').map_or(0, |(_, f)| f.len() as u32);
    (digits, scale)
}

/// The integer part of plain decimal text whose fraction is all zeros (`12.00` → `12`);
/// `None` when it has a fraction (`12.5`), which an integer column refuses rather than cuts.
pub fn whole_part(text: &str) -> Option<&str> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    fraction.bytes().all(|c| c == b'0').then_some(whole)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_are_counted_three_ways() {
        assert_eq!(significant("-0012.3400"), (4, 2));
        assert_eq!(significant("0.000"), (0, 0));
        assert_eq!(digits_and_scale("0.050"), (4, 3));
        assert_eq!(digits_and_scale("-12"), (2, 0));
        assert_eq!(precision_scale("-0012.340"), (5, 3));
        assert_eq!(whole_part("12.00"), Some("12"));
        assert_eq!(whole_part("-7"), Some("-7"));
        assert_eq!(whole_part("12.5"), None);
    }

    #[test]
    fn decimal_digits_are_checked_against_precision() {
        assert_eq!(fit_decimal("123.45", 5, 2).unwrap(), "123.45");
        assert_eq!(fit_decimal("-0001.5", 3, 2).unwrap(), "-1.50");
        assert!(fit_decimal("1234.5", 5, 2).is_err());
        assert!(fit_decimal("1e5", 10, 0).is_err());
        assert!(fit_decimal("", 10, 0).is_err());
        assert!(fit_decimal("-", 10, 0).is_err());
        // Rounded half away from zero, as SQL Server converts.
        assert_eq!(fit_decimal("3.99995", 18, 4).unwrap(), "4.0000");
        assert_eq!(fit_decimal("-2.00005", 18, 4).unwrap(), "-2.0001");
        assert_eq!(fit_decimal("2.00004999", 18, 4).unwrap(), "2.0000");
        assert_eq!(fit_decimal("-0.00001", 18, 4).unwrap(), "0.0000");
        assert_eq!(fit_decimal(".5", 3, 0).unwrap(), "1");
        assert_eq!(fit_decimal("12", 4, 2).unwrap(), "12.00");
        // Rounding can carry into one integer digit too many.
        assert!(
            fit_decimal("99.995", 4, 2)
                .unwrap_err()
                .contains("3 integer digits")
        );
        assert_eq!(
            fit_decimal(&format!("1.{}1", "0".repeat(80)), 18, 4).unwrap(),
            "1.0000"
        );
    }
}
