//! The text family: CHAR/VARCHAR/NCHAR/NVARCHAR bound as `SQL_C_WCHAR` up to
//! [`MAX_BOUND_TEXT_UNITS`] code units, (MAX)/TEXT/XML and anything unknown streamed. One text
//! policy for every fetch path ([`TextErrors`]). Arrow arm: `arrow.rs` (utf8/large_utf8,
//! transcoded once by `arrow/text.rs`); Python arm: `py/types/text.rs` (`str`).
//!
//! The Python arm builds a `str` in CPython's compact form straight from the bound UTF-16
//! units; which form (1-byte ASCII/Latin-1, 2-byte BMP, or the slow path for surrogates) is
//! decided here from one scan of the units.

use super::kind::{Binding, CellKind};
use crate::backend::{Backend, Dbms};
use crate::bulk::Form;
use crate::codes::sql;
use crate::odbc::ColumnDescription;
use crate::odbc::sys::CDataType;

pub(crate) mod arrow;

/// Largest text column (in UTF-16 code units) bound in the row array. Wider columns are streamed
/// with SQLGetData: a 65,535-row array of NVARCHAR(4000) would be 500 MiB, and (MAX) has no size.
pub const MAX_BOUND_TEXT_UNITS: usize = 8000;

/// The binding of a text kind: `max_units` code units and the NUL (`LongWText`: streamed).
pub fn binding(kind: CellKind) -> Binding {
    match kind {
        CellKind::WText { max_units } => {
            Binding::new(CDataType::WChar, (max_units as usize + 1) * 2)
        }
        _ => Binding::new(CDataType::WChar, 0),
    }
}

/// The kind of a text column: bound up to its declared size where that is known and enforced,
/// else streamed (`LONGVARCHAR`, `(MAX)`, `text`, `xml`).
pub fn kind_for(desc: &ColumnDescription, backend: Backend) -> CellKind {
    match desc.sql_type {
        sql::CHAR | sql::VARCHAR | sql::WCHAR | sql::WVARCHAR => sized_kind(desc.size, backend),
        // psqlODBC with `MaxVarcharSize=0` describes every varchar(n) as a long varchar of size
        // n (10,000 rows of varchar(50) took 10,001 fetches and 10,000 SQLGetData calls).
        // PostgreSQL enforces n, so that is a bounded column; its long types of unknown size
        // (text) report 0 and stay streamed. Elsewhere a long type is always streamed.
        sql::LONGVARCHAR | sql::WLONGVARCHAR
            if desc.size > 0 && backend.dbms == Dbms::PostgreSql =>
        {
            sized_kind(desc.size, backend)
        }
        _ => CellKind::LongWText,
    }
}

/// The bulk-load form of a text destination column: UTF-16 text, of at most its declared
/// length unless it is a long type.
pub fn bulk_form(desc: &ColumnDescription) -> Option<Form> {
    let max_units = match desc.sql_type {
        sql::CHAR | sql::VARCHAR | sql::WCHAR | sql::WVARCHAR => Form::limit(desc.size),
        _ => None,
    };
    Some(Form::Text {
        max_units,
        utf8: false,
    })
}

/// The kind of a text column of declared `size` (characters, or bytes for SQL Server's
/// CHAR/VARCHAR).
#[allow(
    clippy::cast_possible_truncation,
    reason = "the units are at most MAX_BOUND_TEXT_UNITS here (tested above)"
)]
fn sized_kind(size: usize, backend: Backend) -> CellKind {
    // Where declared lengths are not enforced (SQLite) and a cut cell cannot be read again,
    // streaming is the only way never to truncate (one fetch per row).
    if size == 0 || !backend.may_bind_declared() {
        return CellKind::LongWText;
    }
    let units = match backend.dbms {
        // SQL Server sizes NCHAR/NVARCHAR in UTF-16 code units and CHAR/VARCHAR in bytes; a byte
        // of any code page (UTF-8 included) never becomes more than one code unit.
        Dbms::SqlServer => size,
        // Elsewhere sizes are characters; a supplementary character takes two code units.
        _ => size.saturating_mul(2),
    };
    if units > MAX_BOUND_TEXT_UNITS {
        CellKind::LongWText
    } else {
        CellKind::WText {
            max_units: units as u32,
        }
    }
}

// Parameter and bulk encoder: see `params/array.rs` (`ParamValue::Text`, UTF-16 code units).

/// What to do with malformed UTF-16 (a lone surrogate). One policy for every fetch path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TextErrors {
    /// Raise a DataError naming the column and row (the default: no silent change of data).
    #[default]
    Strict,
    /// Replace each lone surrogate with U+FFFD.
    Replace,
    /// Keep lone surrogates as code points (Python's `surrogatepass`): lossless.
    SurrogatePass,
}

impl TextErrors {
    pub fn from_name(name: &str) -> Option<TextErrors> {
        match name {
            "strict" => Some(TextErrors::Strict),
            "replace" => Some(TextErrors::Replace),
            "surrogatepass" => Some(TextErrors::SurrogatePass),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            TextErrors::Strict => "strict",
            TextErrors::Replace => "replace",
            TextErrors::SurrogatePass => "surrogatepass",
        }
    }
}

/// The narrowest CPython string kind that can hold the units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextClass {
    /// All units < 0x80: compact ASCII, one byte per character.
    Ascii,
    /// All units < 0x100: one byte per character (Latin-1).
    Latin1,
    /// No surrogates: two bytes per character, a straight copy. `max` is the largest unit.
    Bmp { max: u16 },
    /// At least one surrogate (pairs, or a lone one): needs the general decoder.
    Surrogates,
}

/// One pass over the units. The OR/max reductions vectorise; the surrogate test runs only when
/// the maximum reaches the surrogate range.
#[inline]
pub fn classify_utf16(units: &[u16]) -> TextClass {
    let max = units.iter().copied().fold(0u16, u16::max);
    if max < 0x80 {
        TextClass::Ascii
    } else if max < 0x100 {
        TextClass::Latin1
    } else if max < 0xD800 || !units.iter().any(|&u| (0xD800..0xE000).contains(&u)) {
        TextClass::Bmp { max }
    } else {
        TextClass::Surrogates
    }
}

/// Index of the first unpaired surrogate, if any.
pub fn first_lone_surrogate(units: &[u16]) -> Option<usize> {
    let mut i = 0;
    while i < units.len() {
        let u = units[i];
        if (0xD800..0xDC00).contains(&u) {
            if i + 1 < units.len() && (0xDC00..0xE000).contains(&units[i + 1]) {
                i += 2;
                continue;
            }
            return Some(i);
        }
        if (0xDC00..0xE000).contains(&u) {
            return Some(i);
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    #[test]
    fn classes() {
        assert_eq!(classify_utf16(&w("")), TextClass::Ascii);
        assert_eq!(classify_utf16(&w("plain")), TextClass::Ascii);
        assert_eq!(classify_utf16(&w("Müller")), TextClass::Latin1);
        assert_eq!(
            classify_utf16(&w("Ωμέγα")),
            TextClass::Bmp { max: 'μ' as u16 }
        );
        assert_eq!(
            classify_utf16(&w("中文\u{FEFF}")),
            TextClass::Bmp { max: 0xFEFF }
        );
        assert_eq!(classify_utf16(&w("a🙂")), TextClass::Surrogates);
        assert_eq!(classify_utf16(&[0x41, 0xD800]), TextClass::Surrogates);
    }

    #[test]
    fn lone_surrogates() {
        assert_eq!(first_lone_surrogate(&w("a🙂b")), None);
        assert_eq!(first_lone_surrogate(&[0x41, 0xD800]), Some(1));
        assert_eq!(first_lone_surrogate(&[0xDC00, 0x41]), Some(0));
        assert_eq!(first_lone_surrogate(&[0xD83D, 0xD83D, 0xDE42]), Some(0));
    }
}
