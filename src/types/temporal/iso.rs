//! The one ISO 8601 writer of dates and times (SQL Server's text forms: `YYYY-MM-DD`,
//! `hh:mm:ss[.f…]`, `YYYY-MM-DD hh:mm:ss[.f…] +hh:mm`), for parameters sent as text, bulk-load
//! cells and error messages alike. The fraction is truncated to the scale asked for (callers
//! round first where SQL Server rounds: `round.rs`).

use super::{Date, Time, Timestamp, TimestampOffset};

/// ISO text of a date or time, written digit by digit into a stack buffer: `format!` with
/// padded widths cost more instructions than the rest of the encoder on the mixed 8-column
/// load (callgrind: `pad_integral`, `fmt::write` and the `String` growth).
pub struct IsoText {
    buf: [u8; 40],
    len: usize,
}

impl IsoText {
    pub fn new() -> IsoText {
        IsoText {
            buf: [0; 40],
            len: 0,
        }
    }

    pub fn byte(&mut self, b: u8) {
        if let Some(slot) = self.buf.get_mut(self.len) {
            *slot = b;
            self.len += 1;
        }
    }

    /// `v` in decimal, zero-padded to `width` digits (more digits if it has them).
    pub fn digits(&mut self, v: u32, width: usize) {
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

    pub fn date(&mut self, d: Date) {
        if d.year < 0 {
            self.byte(b'-');
        }
        self.digits(u32::from(d.year.unsigned_abs()), 4);
        self.byte(b'-');
        self.digits(u32::from(d.month), 2);
        self.byte(b'-');
        self.digits(u32::from(d.day), 2);
    }

    /// `hh:mm:ss[.f…]` with `scale` fraction digits (0 to 9), truncated.
    pub fn time(&mut self, t: &Time, scale: u8) {
        self.digits(u32::from(t.hour), 2);
        self.byte(b':');
        self.digits(u32::from(t.minute), 2);
        self.byte(b':');
        self.digits(u32::from(t.second), 2);
        let scale = scale.min(9);
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

/// `YYYY-MM-DD`.
pub fn date_text(d: Date) -> IsoText {
    let mut s = IsoText::new();
    s.date(d);
    s
}

/// `hh:mm:ss[.f…]` with `scale` fraction digits.
pub fn time_text(t: &Time, scale: u8) -> IsoText {
    let mut s = IsoText::new();
    s.time(t, scale);
    s
}

/// `YYYY-MM-DD hh:mm:ss[.f…]`.
pub fn timestamp_text(ts: &Timestamp, scale: u8) -> IsoText {
    let mut s = IsoText::new();
    s.date(ts.date);
    s.byte(b' ');
    s.time(&ts.time, scale);
    s
}

/// `YYYY-MM-DD hh:mm:ss[.f…] +hh:mm`.
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

impl Default for IsoText {
    fn default() -> Self {
        IsoText::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_keep_the_column_scale() {
        let t = Time {
            hour: 1,
            minute: 2,
            second: 3,
            nanosecond: 123_456_789,
        };
        assert_eq!(time_text(&t, 9).as_str(), "01:02:03.123456789");
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
        assert_eq!(date_text(ts.date).as_str(), "0001-02-03");
    }
}
