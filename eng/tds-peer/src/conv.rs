//! Canonical value forms shared by storage, parameter decoding and the wire encoders:
//! exact decimals as text, dates/times as ISO text, GUIDs as text, CP1252 text.

/// An exact decimal: magnitude and scale (value = (-1)^neg * mag / 10^scale).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dec {
    pub neg: bool,
    pub mag: u128,
    pub scale: u8,
}

pub fn parse_decimal(s: &str) -> Option<Dec> {
    let s = s.trim();
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    parse_unsigned_decimal(neg, s.as_bytes())
}

/// `parse_decimal` of stored text as SQLite hands it over, without checking it is UTF-8 first
/// when it cannot need trimming (its first and last bytes are ASCII and not blanks).
pub fn parse_decimal_bytes(b: &[u8]) -> Option<Dec> {
    let plain = |c: Option<&u8>| c.is_some_and(|&c| c.is_ascii() && !(c as char).is_whitespace());
    if !(plain(b.first()) && plain(b.last())) {
        return parse_decimal(&String::from_utf8_lossy(b));
    }
    match b.strip_prefix(b"-") {
        Some(r) => parse_unsigned_decimal(true, r),
        None => parse_unsigned_decimal(false, b.strip_prefix(b"+").unwrap_or(b)),
    }
}

/// Digits with at most one '.', after the sign. One pass; the magnitude stays in u64 while it
/// fits (18 digits), which is every DECIMAL(18,s) a table holds.
fn parse_unsigned_decimal(neg: bool, b: &[u8]) -> Option<Dec> {
    let mut mag: u128 = 0;
    let mut small: u64 = 0;
    let mut digits = 0usize;
    let mut dot: Option<usize> = None;
    for (i, &c) in b.iter().enumerate() {
        let d = c.wrapping_sub(b'0');
        if d <= 9 {
            if digits < 18 {
                small = small * 10 + d as u64;
            } else {
                if digits == 18 {
                    mag = small as u128;
                }
                mag = mag.checked_mul(10)?.checked_add(d as u128)?;
            }
            digits += 1;
        } else if c == b'.' && dot.is_none() {
            dot = Some(i);
        } else if c == b'e' || c == b'E' || b[i..].contains(&b'e') || b[i..].contains(&b'E') {
            // Exponent forms from float rendering (e.g. 1.5e-05) go through f64 text.
            let f: f64 = std::str::from_utf8(b).ok()?.parse().ok()?;
            return parse_decimal(&format!("{}{:.12}", if neg { "-" } else { "" }, f));
        } else {
            return None;
        }
    }
    if b.is_empty() || b == b"." {
        return None;
    }
    let mag = if digits <= 18 { small as u128 } else { mag };
    let scale = dot.map_or(0, |p| b.len() - p - 1);
    Some(Dec {
        neg: neg && mag != 0,
        mag,
        scale: scale.min(255) as u8,
    })
}

impl Dec {
    pub fn from_i64(v: i64) -> Dec {
        Dec {
            neg: v < 0,
            mag: v.unsigned_abs() as u128,
            scale: 0,
        }
    }

    pub fn from_f64(v: f64) -> Dec {
        parse_decimal(&format!("{v:.10}")).unwrap_or(Dec {
            neg: false,
            mag: 0,
            scale: 0,
        })
    }

    /// Rescales with round-half-away-from-zero (as SQL Server does on conversion).
    pub fn rescale(self, to: u8) -> Dec {
        let mut mag = self.mag;
        if to >= self.scale {
            for _ in self.scale..to {
                mag = mag.saturating_mul(10);
            }
        } else {
            let div = 10u128.pow((self.scale - to) as u32);
            let q = mag / div;
            let r = mag % div;
            mag = if r * 2 >= div { q + 1 } else { q };
        }
        Dec {
            neg: self.neg && mag != 0,
            mag,
            scale: to,
        }
    }

    pub fn to_string_fixed(self) -> String {
        let digits = self.mag.to_string();
        let s = self.scale as usize;
        let body = if s == 0 {
            digits
        } else if digits.len() > s {
            format!(
                "{}.{}",
                &digits[..digits.len() - s],
                &digits[digits.len() - s..]
            )
        } else {
            format!("0.{}{}", "0".repeat(s - digits.len()), digits)
        };
        if self.neg { format!("-{body}") } else { body }
    }

    /// Signed scaled integer at `scale` (for MONEY: scale 4), saturating at i64.
    pub fn scaled_i64(self, scale: u8) -> i64 {
        let d = self.rescale(scale);
        let m = d.mag.min(i64::MAX as u128 + 1) as i128;
        (if d.neg { -m } else { m }).clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }
}

// ---- dates: day numbers are days since 0001-01-01 (proleptic Gregorian), times in 100 ns ticks.

pub const TICKS_PER_DAY: u64 = 864_000_000_000;
/// Day number of 1900-01-01 (DATETIME epoch).
pub const DAY_1900: i64 = 693_595;

pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    // Howard Hinnant's algorithm, shifted to the 0001-01-01 epoch.
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468 + 719_162
}

pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days - 719_162 + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// A parsed date/time: `days` (0001-01-01 = 0), `ticks` of 100 ns into the day, optional
/// UTC offset in minutes. Date-only text gives ticks 0; time-only text gives days 0 (1900 for
/// DATETIME is handled by callers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DateTime {
    pub days: i64,
    pub ticks: u64,
    pub offset: Option<i16>,
    pub has_date: bool,
}

fn num(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Fractional seconds (`.f…` digits, first 7 significant) in 100 ns ticks.
fn frac_ticks(b: &[u8]) -> Option<u64> {
    let mut ticks = 0u64;
    for k in 0..7 {
        let d = match b.get(k) {
            Some(c) if c.is_ascii_digit() => (c - b'0') as u64,
            Some(_) => return None,
            None => 0,
        };
        ticks = ticks * 10 + d;
    }
    Some(ticks)
}

fn parse_time(t: &str) -> Option<u64> {
    let mut it = t.split(':');
    let h = num(it.next()?)?;
    let m = num(it.next()?)?;
    let (s, frac) = match it.next() {
        Some(sec) => {
            let (s, f) = sec.split_once('.').unwrap_or((sec, ""));
            (num(s)?, f)
        }
        None => (0, ""),
    };
    if h > 23 || m > 59 || s > 59 {
        return None;
    }
    let frac_ticks = if frac.is_empty() {
        0
    } else {
        frac_ticks(frac.as_bytes())?
    };
    Some(((h as u64 * 60 + m as u64) * 60 + s as u64) * 10_000_000 + frac_ticks)
}

/// The form the peer itself stores and SQL literals mostly use, `YYYY-MM-DD hh:mm:ss[.f{1,7}]`
/// (or `T` between), parsed without searching or splitting; anything else returns None and
/// goes through the general parser, whose results this matches exactly.
fn parse_iso_datetime(b: &[u8]) -> Option<DateTime> {
    if !(19..=27).contains(&b.len())
        || b[4] != b'-'
        || b[7] != b'-'
        || !(b[10] == b' ' || b[10] == b'T')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    // All fourteen digits read without a branch each: a byte outside '0'..='9' sets `bad`
    // (a per-digit Option cost ~400 instructions per value in callgrind, 8 % of a SELECT).
    let mut bad = false;
    let mut two = |i: usize| {
        let (h, l) = (b[i].wrapping_sub(b'0'), b[i + 1].wrapping_sub(b'0'));
        bad |= (h > 9) | (l > 9);
        h as u32 * 10 + l as u32
    };
    let y = two(0) * 100 + two(2);
    let (m, dd, h, mi, sec) = (two(5), two(8), two(11), two(14), two(17));
    if bad
        || y < 1
        || !(1..=12).contains(&m)
        || !(1..=31).contains(&dd)
        || h > 23
        || mi > 59
        || sec > 59
    {
        return None;
    }
    let frac = match b.len() {
        19 => 0,
        20 => return None,
        n if b[19] == b'.' => {
            // 1 to 7 digits, padded to 7 (100 ns ticks), as `frac_ticks` does.
            let mut t = 0u64;
            for &c in &b[20..n] {
                let x = c.wrapping_sub(b'0');
                if x > 9 {
                    return None;
                }
                t = t * 10 + x as u64;
            }
            t * 10u64.pow((27 - n) as u32)
        }
        _ => return None,
    };
    Some(DateTime {
        days: days_from_civil(y as i64, m, dd),
        ticks: ((h as u64 * 60 + mi as u64) * 60 + sec as u64) * 10_000_000 + frac,
        offset: None,
        has_date: true,
    })
}

/// `parse_datetime` of stored text as SQLite hands it over: the canonical form is read from the
/// bytes (it is ASCII), anything else is checked for UTF-8 first.
pub fn parse_datetime_bytes(b: &[u8]) -> Option<DateTime> {
    parse_iso_datetime(b).or_else(|| parse_datetime(&String::from_utf8_lossy(b)))
}

pub fn parse_datetime(s: &str) -> Option<DateTime> {
    if let Some(dt) = parse_iso_datetime(s.as_bytes()) {
        return Some(dt);
    }
    let s = s.trim();
    let mut offset = None;
    let mut body = s;
    if let Some(b) = s.strip_suffix('Z') {
        offset = Some(0);
        body = b.trim_end();
    } else if s.len() > 6
        && let Some(tail) = s.get(s.len() - 6..)
    {
        let tb = tail.as_bytes();
        if (tb[0] == b'+' || tb[0] == b'-') && tb[3] == b':' {
            let h = num(tail.get(1..3)?)? as i16;
            let m = num(tail.get(4..6)?)? as i16;
            let v = h * 60 + m;
            offset = Some(if tb[0] == b'-' { -v } else { v });
            body = s[..s.len() - 6].trim_end();
        }
    }
    let (date, time) = match body.find(['T', ' ']) {
        Some(p) => (Some(&body[..p]), Some(body[p + 1..].trim())),
        None if body.contains(':') => (None, Some(body)),
        None => (Some(body), None),
    };
    let days = match date {
        Some(d) => {
            let mut it = d.split('-');
            let y = num(it.next()?)? as i64;
            let m = num(it.next()?)?;
            let dd = num(it.next()?)?;
            if !(1..=12).contains(&m) || !(1..=31).contains(&dd) || y < 1 {
                return None;
            }
            days_from_civil(y, m, dd)
        }
        None => 0,
    };
    let ticks = match time {
        Some(t) if !t.is_empty() => parse_time(t)?,
        _ => 0,
    };
    Some(DateTime {
        days,
        ticks,
        offset,
        has_date: date.is_some(),
    })
}

pub fn fmt_date(days: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// `HH:MM:SS[.f…]` with exactly `scale` fractional digits.
pub fn fmt_time(ticks: u64, scale: u8) -> String {
    let secs = ticks / 10_000_000;
    let frac = ticks % 10_000_000;
    let base = format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    if scale == 0 {
        base
    } else {
        let f = format!("{frac:07}");
        format!("{base}.{}", &f[..scale as usize])
    }
}

pub fn fmt_offset(off: i16) -> String {
    let a = off.unsigned_abs();
    format!(
        "{}{:02}:{:02}",
        if off < 0 { '-' } else { '+' },
        a / 60,
        a % 60
    )
}

/// Rounds ticks to `scale` fractional digits (half up); may carry into the next day.
pub fn round_ticks(days: i64, ticks: u64, scale: u8) -> (i64, u64) {
    let unit = 10u64.pow(7 - scale as u32);
    let t = (ticks + unit / 2) / unit * unit;
    if t >= TICKS_PER_DAY {
        (days + 1, t - TICKS_PER_DAY)
    } else {
        (days, t)
    }
}

// ---- GUID

pub fn parse_guid(s: &str) -> Option<[u8; 16]> {
    let h: String = s
        .trim()
        .trim_matches(|c| c == '{' || c == '}')
        .chars()
        .filter(|c| *c != '-')
        .collect();
    if h.len() != 32 {
        return None;
    }
    let mut b = [0u8; 16];
    for i in 0..16 {
        b[i] = u8::from_str_radix(&h[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(b)
}

pub fn fmt_guid(b: &[u8; 16]) -> String {
    let h: Vec<String> = b.iter().map(|x| format!("{x:02X}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        h[0..4].concat(),
        h[4..6].concat(),
        h[6..8].concat(),
        h[8..10].concat(),
        h[10..16].concat()
    )
}

/// Wire order of a GUID: the first three groups little-endian (as SQL Server stores them).
pub fn guid_wire(b: &[u8; 16]) -> [u8; 16] {
    let mut w = *b;
    w[0..4].reverse();
    w[4..6].reverse();
    w[6..8].reverse();
    w
}

// ---- CP1252

const CP1252_80: [u16; 32] = [
    0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039,
    0x0152, 0x8D, 0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
];

pub fn to_cp1252(s: &str) -> Vec<u8> {
    s.chars()
        .map(|c| {
            let u = c as u32;
            if u < 0x80 || (0xA0..=0xFF).contains(&u) {
                u as u8
            } else if let Some(i) = CP1252_80.iter().position(|&x| x as u32 == u) {
                0x80 + i as u8
            } else {
                b'?'
            }
        })
        .collect()
}

pub fn from_cp1252(b: &[u8]) -> String {
    b.iter()
        .map(|&x| {
            if (0x80..0xA0).contains(&x) {
                char::from_u32(CP1252_80[(x - 0x80) as usize] as u32).unwrap_or('?')
            } else {
                x as char
            }
        })
        .collect()
}

pub fn utf16(s: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(s.len() * 2);
    for u in s.encode_utf16() {
        v.extend_from_slice(&u.to_le_bytes());
    }
    v
}

pub fn from_utf16(b: &[u8]) -> String {
    let u: Vec<u16> = b
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    String::from_utf16_lossy(&u)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_parse_rescale() {
        let d = parse_decimal("-12.345").unwrap();
        assert_eq!(
            d,
            Dec {
                neg: true,
                mag: 12345,
                scale: 3
            }
        );
        assert_eq!(d.rescale(2).to_string_fixed(), "-12.35");
        assert_eq!(d.rescale(5).to_string_fixed(), "-12.34500");
        assert_eq!(
            parse_decimal("0.5").unwrap().rescale(0).to_string_fixed(),
            "1"
        );
        assert_eq!(parse_decimal(".05").unwrap().to_string_fixed(), "0.05");
    }

    #[test]
    fn days_roundtrip() {
        assert_eq!(days_from_civil(1, 1, 1), 0);
        assert_eq!(days_from_civil(1900, 1, 1), DAY_1900);
        assert_eq!(days_from_civil(1970, 1, 1), 719_162);
        for d in [0i64, 1, 59, 60, 365, 693_595, 738_000, 3_652_058] {
            let (y, m, dd) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, dd), d);
        }
        assert_eq!(civil_from_days(3_652_058), (9999, 12, 31));
    }

    #[test]
    fn datetime_parse() {
        let d = parse_datetime("2024-01-02 03:04:05.1234567 -05:30").unwrap();
        assert_eq!(fmt_date(d.days), "2024-01-02");
        assert_eq!(fmt_time(d.ticks, 7), "03:04:05.1234567");
        assert_eq!(d.offset, Some(-330));
        let t = parse_datetime("12:00").unwrap();
        assert!(!t.has_date);
        assert_eq!(fmt_time(t.ticks, 3), "12:00:00.000");
        assert_eq!(round_ticks(0, TICKS_PER_DAY - 1, 0), (1, 0));
    }

    #[test]
    fn guid_and_cp1252() {
        let g = parse_guid("01020304-0506-0708-090a-0b0c0d0e0f10").unwrap();
        assert_eq!(fmt_guid(&g), "01020304-0506-0708-090A-0B0C0D0E0F10");
        assert_eq!(&guid_wire(&g)[..8], &[4, 3, 2, 1, 6, 5, 8, 7]);
        assert_eq!(to_cp1252("a€é"), vec![b'a', 0x80, 0xE9]);
        assert_eq!(from_cp1252(&[0x80, 0xE9]), "€é");
    }
}
