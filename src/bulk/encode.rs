//! A value of the caller's language (already a [`ParamValue`], the parameters' one conversion
//! from Python) into one cell of a bulk-load column, in the column's [`Form`].
//!
//! The Python values of a column may be of any type, so this is one `match` per value on the
//! value and the form together; the conversions themselves are the families' (`types/`). An
//! `Err` is the reason a value cannot go into the column; the caller adds column and row.

use super::cells::CellColumn;
use super::form::{Form, Temporal};
use crate::params::ParamValue;
use crate::types::guid::u128_to_guid;
use crate::types::temporal::{Date, Time, Timestamp, TimestampOffset};

/// What a source value can be, whatever its origin (a Python object's [`ParamValue`], an
/// Arrow array's element): each method puts one value into one column.
pub trait Sink {
    fn null(&mut self) -> Put;
    fn boolean(&mut self, b: bool) -> Put;
    fn int(&mut self, i: i64) -> Put;
    fn float(&mut self, f: f64) -> Put;
    /// Plain decimal digits (`-12.3400`).
    fn decimal(&mut self, text: &str) -> Put;
    fn date(&mut self, d: Date) -> Put;
    fn time(&mut self, t: Time) -> Put;
    fn timestamp(&mut self, ts: Timestamp) -> Put;
    fn offset(&mut self, o: TimestampOffset) -> Put;
    fn text(&mut self, s: &str) -> Put;
    fn utf16(&mut self, u: &[u16]) -> Put;
    fn bytes(&mut self, b: &[u8]) -> Put;
    fn guid(&mut self, g: u128) -> Put;
}

/// `Err`: why the value cannot go into the column (the caller adds column and row).
pub type Put = Result<(), String>;

/// One [`ParamValue`] into `sink`.
pub fn put_param(v: &ParamValue, sink: &mut impl Sink) -> Put {
    use ParamValue as V;
    match v {
        V::Null => sink.null(),
        V::Bool(b) => sink.boolean(*b),
        V::Int(i) => sink.int(*i),
        V::Float(f) => sink.float(*f),
        V::Decimal { text, .. } => sink.decimal(text),
        V::Date(d) => sink.date(*d),
        V::Time(t) => sink.time(*t),
        V::Timestamp(ts) => sink.timestamp(*ts),
        V::TimestampOffset(o) => sink.offset(*o),
        V::Text(u) => sink.utf16(u),
        V::Bytes(b) => sink.bytes(b),
        V::Guid(g) => sink.guid(*g),
        V::Output(_) | V::Table(_) => {
            Err("an output or table-valued parameter is no column value".into())
        }
    }
}

/// Whether `v` suits a column of `form` (the parameter-array paths' check, with the form's
/// limits left to the DBMS: `form.without_limits()`), encoding it into `scratch`, which is
/// cleared first.
pub fn check_param(v: &ParamValue, form: Form, scratch: &mut CellColumn) -> Put {
    scratch.clear();
    put_param(v, &mut CellSink { form, out: scratch })
}

/// A sink that encodes into a bcp cell column in the column's form.
pub struct CellSink<'a> {
    pub form: Form,
    pub out: &'a mut CellColumn,
}

impl CellSink<'_> {
    fn wrong(&self, what: &str) -> Put {
        Err(wrong(what, self.form))
    }

    fn checked_int(&mut self, i: i64) -> Put {
        match self.form {
            Form::Int { min, max, name } => {
                if i < min || i > max {
                    return Err(overflow(&i.to_string(), name));
                }
                self.out.push(&i.to_ne_bytes());
                Ok(())
            }
            _ => unreachable!("checked_int is called for integer forms"),
        }
    }

    fn rendered(&mut self, text: &str) -> Put {
        self.out.push(text.as_bytes());
        Ok(())
    }

    fn wide(&mut self, units: impl Iterator<Item = u16> + Clone, count: usize) -> Put {
        let utf8 = match self.form {
            Form::Text { max_units, utf8 } => {
                if let Some(m) = max_units.filter(|&m| count > m) {
                    return Err(too_long(count, m, "characters"));
                }
                utf8
            }
            _ => false,
        };
        let start = self.out.open();
        if utf8 {
            let mut buf = [0u8; 4];
            for c in char::decode_utf16(units) {
                let c = c.unwrap_or(char::REPLACEMENT_CHARACTER);
                self.out.extend(c.encode_utf8(&mut buf).as_bytes());
            }
        } else {
            self.out.extend_utf16(units);
        }
        self.out.close(start);
        Ok(())
    }
}

impl Sink for CellSink<'_> {
    fn null(&mut self) -> Put {
        self.out.push_null();
        Ok(())
    }

    fn boolean(&mut self, b: bool) -> Put {
        match self.form {
            Form::Bit => {
                self.out.push(&[u8::from(b)]);
                Ok(())
            }
            Form::Int { .. } => self.checked_int(i64::from(b)),
            Form::Float => self.float(f64::from(u8::from(b))),
            Form::Decimal { .. } | Form::Text { .. } => self.decimal(if b { "1" } else { "0" }),
            _ => self.wrong("bool"),
        }
    }

    fn int(&mut self, i: i64) -> Put {
        match self.form {
            Form::Bit if i == 0 || i == 1 => self.boolean(i == 1),
            Form::Int { .. } => self.checked_int(i),
            Form::Float => self.float(i as f64),
            Form::Decimal { .. } | Form::Text { .. } => self.decimal(&i.to_string()),
            _ => self.wrong("int"),
        }
    }

    fn float(&mut self, f: f64) -> Put {
        if !f.is_finite() {
            return Err(format!(
                "{f} cannot be stored (SQL Server has no NaN or infinity)"
            ));
        }
        match self.form {
            Form::Float => {
                self.out.push(&f.to_ne_bytes());
                Ok(())
            }
            Form::Decimal { .. } | Form::Text { .. } => self.decimal(&format!("{f}")),
            _ => self.wrong("float"),
        }
    }

    fn decimal(&mut self, text: &str) -> Put {
        match self.form {
            Form::Decimal { precision, scale } => {
                let fitted = fit_decimal(text, precision, scale)?;
                self.rendered(&fitted)
            }
            Form::Int { name, .. } => {
                // Decimal("12.0") is a whole number; Decimal("12.5") is refused, not cut.
                let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
                if !fraction.bytes().all(|c| c == b'0') {
                    return Err(format!(
                        "{text} has a fraction; a {name} column holds whole numbers"
                    ));
                }
                let i = whole.parse::<i64>().map_err(|_| overflow(text, name))?;
                self.checked_int(i)
            }
            Form::Float => self.float(
                text.parse::<f64>()
                    .map_err(|_| wrong("Decimal", self.form))?,
            ),
            Form::Text { .. } => self.wide(text.encode_utf16(), text.encode_utf16().count()),
            _ => self.wrong("Decimal"),
        }
    }

    fn date(&mut self, d: Date) -> Put {
        match self.form {
            Form::Temporal(Temporal::Date) => self.rendered(date_text(d).as_str()),
            Form::Temporal(Temporal::DateTime { .. } | Temporal::Offset { .. }) => {
                self.timestamp(midnight(d))
            }
            _ => self.wrong("date"),
        }
    }

    fn time(&mut self, t: Time) -> Put {
        match self.form {
            Form::Temporal(Temporal::Time { scale }) => {
                self.rendered(time_text(&rounded_time(t, scale).0, scale).as_str())
            }
            _ => self.wrong("time"),
        }
    }

    fn timestamp(&mut self, ts: Timestamp) -> Put {
        match self.form {
            Form::Temporal(Temporal::Date) => self.rendered(date_text(ts.date).as_str()),
            Form::Temporal(Temporal::Time { scale }) => {
                self.rendered(time_text(&rounded_time(ts.time, scale).0, scale).as_str())
            }
            Form::Temporal(Temporal::DateTime { scale, minutes }) => {
                let rounded = if minutes {
                    rounded_to_minute(ts)?
                } else {
                    rounded_timestamp(ts, scale)?
                };
                self.rendered(timestamp_text(&rounded, scale).as_str())
            }
            // A naive datetime into datetimeoffset: offset +00:00, as SQL Server converts.
            Form::Temporal(Temporal::Offset { .. }) => self.offset(TimestampOffset {
                timestamp: ts,
                offset_minutes: 0,
            }),
            _ => self.wrong("datetime"),
        }
    }

    fn offset(&mut self, o: TimestampOffset) -> Put {
        match self.form {
            Form::Temporal(Temporal::Offset { scale }) => {
                let local = rounded_timestamp(o.timestamp, scale)?;
                let o = TimestampOffset {
                    timestamp: local,
                    ..o
                };
                self.rendered(offset_text(&o, scale).as_str())
            }
            // SQL Server keeps the local time when it drops an offset.
            Form::Temporal(Temporal::DateTime { .. } | Temporal::Date | Temporal::Time { .. }) => {
                self.timestamp(o.timestamp)
            }
            _ => self.wrong("datetime with tzinfo"),
        }
    }

    fn text(&mut self, s: &str) -> Put {
        match self.form {
            Form::Text { .. } => self.wide(s.encode_utf16(), s.encode_utf16().count()),
            Form::Decimal { .. } => self.decimal(s.trim()),
            Form::Int { name, .. } => {
                let i = s
                    .trim()
                    .parse::<i64>()
                    .map_err(|_| format!("{s:?} is not an integer ({name})"))?;
                self.checked_int(i)
            }
            Form::Float => self.float(
                s.trim()
                    .parse::<f64>()
                    .map_err(|_| format!("{s:?} is not a number"))?,
            ),
            Form::Bit => match s.trim() {
                "1" => self.boolean(true),
                "0" => self.boolean(false),
                t if t.eq_ignore_ascii_case("true") => self.boolean(true),
                t if t.eq_ignore_ascii_case("false") => self.boolean(false),
                _ => self.wrong("str"),
            },
            // ISO text: the driver converts it as SQL Server converts text.
            Form::Temporal(_) => self.rendered(s.trim()),
            Form::Guid => {
                self.guid(parse_guid(s).ok_or_else(|| format!("{s:?} is not a uniqueidentifier"))?)
            }
            Form::Binary { .. } => self.wrong("str"),
        }
    }

    fn utf16(&mut self, u: &[u16]) -> Put {
        match self.form {
            Form::Text { .. } => self.wide(u.iter().copied(), u.len()),
            _ => match String::from_utf16(u) {
                Ok(s) => self.text(&s),
                Err(_) => Err("the string is not valid UTF-16".into()),
            },
        }
    }

    fn bytes(&mut self, b: &[u8]) -> Put {
        match self.form {
            Form::Binary { max_bytes } => {
                if let Some(m) = max_bytes.filter(|&m| b.len() > m) {
                    return Err(too_long(b.len(), m, "bytes"));
                }
                self.out.push(b);
                Ok(())
            }
            // 16 raw bytes in RFC 4122 order (Arrow's uuid extension, `uuid.UUID.bytes`).
            Form::Guid if b.len() == 16 => {
                let g = u128::from_be_bytes(b.try_into().expect("16 bytes"));
                self.guid(g)
            }
            _ => self.wrong("bytes"),
        }
    }

    fn guid(&mut self, g: u128) -> Put {
        match self.form {
            Form::Guid => {
                self.out.push(&u128_to_guid(g));
                Ok(())
            }
            Form::Text { .. } => {
                let t = crate::types::guid::guid_text(g);
                self.wide(t.iter().map(|&b| u16::from(b)), 36)
            }
            _ => self.wrong("UUID"),
        }
    }
}

/// A 36-character hyphenated GUID, braces allowed (as SQL Server's conversion from text).
pub fn parse_guid(s: &str) -> Option<u128> {
    let s = s.trim();
    let s = s
        .strip_prefix('{')
        .and_then(|x| x.strip_suffix('}'))
        .unwrap_or(s);
    let b = s.as_bytes();
    if b.len() != 36 || [8, 13, 18, 23].iter().any(|&i| b[i] != b'-') {
        return None;
    }
    let hex: String = s.chars().filter(|&c| c != '-').collect();
    // Hex digits only: from_str_radix would also take a leading '+'.
    if hex.len() != 32 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u128::from_str_radix(&hex, 16).ok()
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

/// `t` rounded half up to `scale` fraction digits, as SQL Server converts a time of more
/// precision (Driver 18 refuses more digits than the scale: 22008 "Fractional second precision
/// exceeds the scale"); `true` when it rounded past midnight (to 00:00:00, as time wraps).
pub fn rounded_time(t: Time, scale: u8) -> (Time, bool) {
    let unit = 10u32.pow(9 - u32::from(scale.min(7)));
    let rem = t.nanosecond % unit;
    let mut ns = t.nanosecond - rem;
    if rem < unit - rem {
        return (
            Time {
                nanosecond: ns,
                ..t
            },
            false,
        );
    }
    ns += unit;
    if ns < 1_000_000_000 {
        return (
            Time {
                nanosecond: ns,
                ..t
            },
            false,
        );
    }
    let secs = u32::from(t.hour) * 3600 + u32::from(t.minute) * 60 + u32::from(t.second) + 1;
    let wrapped = secs >= 86_400;
    let secs = secs % 86_400;
    let time = Time {
        hour: (secs / 3600) as u16,
        minute: (secs / 60 % 60) as u16,
        second: (secs % 60) as u16,
        nanosecond: 0,
    };
    (time, wrapped)
}

/// `ts` rounded half up to `scale` fraction digits, into the next day when it must; past
/// 9999-12-31 is SQL Server's overflow.
pub fn rounded_timestamp(ts: Timestamp, scale: u8) -> Result<Timestamp, String> {
    let (time, next_day) = rounded_time(ts.time, scale);
    if !next_day {
        return Ok(Timestamp { time, ..ts });
    }
    let d = ts.date;
    let days = crate::types::temporal::arrow::days_from_civil(
        i32::from(d.year),
        u32::from(d.month),
        u32::from(d.day),
    ) + 1;
    let (year, month, day) = crate::types::temporal::arrow::civil_from_days(days);
    if year > 9999 {
        return Err(format!(
            "{} rounds past 9999-12-31 at scale {scale} (out of range)",
            timestamp_text(&ts, 7)
        ));
    }
    Ok(Timestamp {
        date: Date {
            year: year as i16,
            month: month as u16,
            day: day as u16,
        },
        time,
    })
}

/// smalldatetime's rounding: 29.998 seconds or less down to the minute, 29.999 or more up
/// (SQL Server's documented rule; Driver 18 refuses seconds in a smalldatetime: 22008).
pub fn rounded_to_minute(ts: Timestamp) -> Result<Timestamp, String> {
    let millis = u32::from(ts.time.second) * 1000 + ts.time.nanosecond / 1_000_000;
    let down = Timestamp {
        time: Time {
            second: 0,
            nanosecond: 0,
            ..ts.time
        },
        ..ts
    };
    if millis < 29_999 {
        return Ok(down);
    }
    // Up: the last second of the minute, rounded at scale 0, carries into the next minute.
    let last = Timestamp {
        time: Time {
            second: 59,
            nanosecond: 500_000_000,
            ..ts.time
        },
        ..ts
    };
    rounded_timestamp(last, 0)
}

fn midnight(date: Date) -> Timestamp {
    Timestamp {
        date,
        time: Time {
            hour: 0,
            minute: 0,
            second: 0,
            nanosecond: 0,
        },
    }
}

/// `hh:mm:ss[.f…]` with `scale` fraction digits (truncated: a Python value has 6).
/// ISO text of a date or time, written digit by digit into a stack buffer: `format!` with
/// padded widths cost more instructions than the rest of the encoder on the mixed 8-column
/// load (callgrind: `pad_integral`, `fmt::write` and the `String` growth).
pub struct IsoText {
    buf: [u8; 40],
    len: usize,
}

impl IsoText {
    fn new() -> IsoText {
        IsoText {
            buf: [0; 40],
            len: 0,
        }
    }

    fn byte(&mut self, b: u8) {
        if let Some(slot) = self.buf.get_mut(self.len) {
            *slot = b;
            self.len += 1;
        }
    }

    /// `v` in decimal, zero-padded to `width` digits (more digits if it has them).
    fn digits(&mut self, v: u32, width: usize) {
        let mut tmp = [b'0'; 10];
        let (mut v, mut n) = (v, 0);
        while v > 0 || n == 0 {
            tmp[n] = b'0' + (v % 10) as u8;
            v /= 10;
            n += 1;
        }
        for _ in n..width {
            self.byte(b'0');
        }
        for k in (0..n).rev() {
            self.byte(tmp[k]);
        }
    }

    fn date(&mut self, d: Date) {
        if d.year < 0 {
            self.byte(b'-');
        }
        self.digits(u32::from(d.year.unsigned_abs()), 4);
        self.byte(b'-');
        self.digits(u32::from(d.month), 2);
        self.byte(b'-');
        self.digits(u32::from(d.day), 2);
    }

    fn time(&mut self, t: &Time, scale: u8) {
        self.digits(u32::from(t.hour), 2);
        self.byte(b':');
        self.digits(u32::from(t.minute), 2);
        self.byte(b':');
        self.digits(u32::from(t.second), 2);
        let scale = scale.min(7);
        if scale > 0 {
            self.byte(b'.');
            // The first `scale` of the nine nanosecond digits.
            self.digits(
                t.nanosecond / 10u32.pow(9 - u32::from(scale)),
                usize::from(scale),
            );
        }
    }

    pub fn as_str(&self) -> &str {
        // ASCII digits and separators only, so always UTF-8.
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or_default()
    }
}

impl std::fmt::Display for IsoText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

pub fn date_text(d: Date) -> IsoText {
    let mut s = IsoText::new();
    s.date(d);
    s
}

pub fn time_text(t: &Time, scale: u8) -> IsoText {
    let mut s = IsoText::new();
    s.time(t, scale);
    s
}

pub fn timestamp_text(ts: &Timestamp, scale: u8) -> IsoText {
    let mut s = IsoText::new();
    s.date(ts.date);
    s.byte(b' ');
    s.time(&ts.time, scale);
    s
}

pub fn offset_text(o: &TimestampOffset, scale: u8) -> IsoText {
    let mut s = timestamp_text(&o.timestamp, scale);
    s.byte(b' ');
    s.byte(if o.offset_minutes < 0 { b'-' } else { b'+' });
    let off = u32::from(o.offset_minutes.unsigned_abs());
    s.digits(off / 60, 2);
    s.byte(b':');
    s.digits(off % 60, 2);
    s
}

fn wrong(what: &str, form: Form) -> String {
    format!(
        "a {what} value cannot be converted to the column's type ({})",
        form_name(form)
    )
}

pub fn form_name(form: Form) -> String {
    match form {
        Form::Bit => "bit".into(),
        Form::Int { name, .. } => name.into(),
        Form::Float => "float".into(),
        Form::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
        Form::Temporal(Temporal::Date) => "date".into(),
        Form::Temporal(Temporal::Time { scale }) => format!("time({scale})"),
        Form::Temporal(Temporal::DateTime { minutes: true, .. }) => "smalldatetime".into(),
        Form::Temporal(Temporal::DateTime { scale, .. }) => format!("datetime2({scale})"),
        Form::Temporal(Temporal::Offset { scale }) => format!("datetimeoffset({scale})"),
        Form::Text {
            max_units: Some(n), ..
        } => format!("text of at most {n} characters"),
        Form::Text {
            max_units: None, ..
        } => "text".into(),
        Form::Binary { max_bytes: Some(n) } => format!("binary of at most {n} bytes"),
        Form::Binary { max_bytes: None } => "binary".into(),
        Form::Guid => "uniqueidentifier".into(),
    }
}

fn overflow(value: &str, name: &str) -> String {
    format!("{value} is out of range for {name} (arithmetic overflow)")
}

fn too_long(len: usize, max: usize, unit: &str) -> String {
    format!("a value of {len} {unit} is longer than the column's {max} (it would be truncated)")
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn integers_are_range_checked_per_width() {
        let form = Form::Int {
            min: 0,
            max: 255,
            name: "tinyint",
        };
        let mut c = CellColumn::default();
        let mut sink = CellSink { form, out: &mut c };
        assert!(put_param(&ParamValue::Int(255), &mut sink).is_ok());
        let e = put_param(&ParamValue::Int(256), &mut sink).unwrap_err();
        assert!(e.contains("tinyint"), "{e}");
        assert_eq!(c.rows(), 1);
    }

    #[test]
    fn text_longer_than_the_column_leaves_no_cell() {
        let form = Form::Text {
            max_units: Some(3),
            utf8: false,
        };
        let mut c = CellColumn::default();
        let long = ParamValue::Text("abcd".encode_utf16().collect());
        assert!(put_param(&long, &mut CellSink { form, out: &mut c }).is_err());
        assert_eq!(c.rows(), 0);
        let ok = ParamValue::Text("abc".encode_utf16().collect());
        put_param(&ok, &mut CellSink { form, out: &mut c }).unwrap();
        assert_eq!(c.value(0).unwrap().len(), 6);
    }

    #[test]
    fn guids_parse_with_or_without_braces() {
        let g = parse_guid("{12345678-1234-5678-9abc-def012345678}").unwrap();
        assert_eq!(g, 0x12345678_1234_5678_9abc_def012345678);
        assert!(parse_guid("12345678-1234-5678-9abc-def01234567").is_none());
        // A sign is not a hex digit (from_str_radix alone would read +2345678 as 02345678).
        assert!(parse_guid("+2345678-1234-5678-9abc-def012345678").is_none());
    }

    #[test]
    fn fractions_keep_the_column_scale() {
        let t = Time {
            hour: 1,
            minute: 2,
            second: 3,
            nanosecond: 123_456_700,
        };
        assert_eq!(time_text(&t, 7).as_str(), "01:02:03.1234567");
        assert_eq!(time_text(&t, 3).as_str(), "01:02:03.123");
        assert_eq!(time_text(&t, 0).as_str(), "01:02:03");
        let ts = Timestamp {
            date: Date {
                year: 1,
                month: 2,
                day: 3,
            },
            time: t,
        };
        assert_eq!(timestamp_text(&ts, 1).as_str(), "0001-02-03 01:02:03.1");
        let o = TimestampOffset {
            timestamp: ts,
            offset_minutes: -330,
        };
        assert_eq!(offset_text(&o, 0).as_str(), "0001-02-03 01:02:03 -05:30");
        assert_eq!(date_text(ts.date).as_str(), ts.date.to_text());
    }

    #[test]
    fn fractions_round_half_up_and_carry_into_the_date() {
        let t = |h, m, s, ns| Time {
            hour: h,
            minute: m,
            second: s,
            nanosecond: ns,
        };
        assert_eq!(
            rounded_time(t(0, 0, 0, 123_500_000), 3).0,
            t(0, 0, 0, 124_000_000)
        );
        assert_eq!(
            rounded_time(t(0, 0, 0, 123_499_999), 3).0,
            t(0, 0, 0, 123_000_000)
        );
        assert_eq!(
            rounded_time(t(1, 59, 59, 999_999_000), 6).0,
            t(1, 59, 59, 999_999_000)
        );
        assert_eq!(rounded_time(t(1, 59, 59, 999_999_000), 3).0, t(2, 0, 0, 0));
        assert_eq!(
            rounded_time(t(23, 59, 59, 500_000_000), 0),
            (t(0, 0, 0, 0), true)
        );
        let ts = |y, mo, d, time| Timestamp {
            date: Date {
                year: y,
                month: mo,
                day: d,
            },
            time,
        };
        let late = t(23, 59, 59, 999_999_900);
        assert_eq!(
            rounded_timestamp(ts(2024, 2, 28, late), 6).unwrap(),
            ts(2024, 2, 29, t(0, 0, 0, 0))
        );
        assert_eq!(
            rounded_timestamp(ts(2023, 12, 31, late), 2).unwrap(),
            ts(2024, 1, 1, t(0, 0, 0, 0))
        );
        assert_eq!(
            rounded_timestamp(ts(2024, 1, 1, late), 7).unwrap(),
            ts(2024, 1, 1, late)
        );
        assert!(rounded_timestamp(ts(9999, 12, 31, late), 3).is_err());
    }
}
