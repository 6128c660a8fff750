//! One parameter column being filled row by row: the column's kind is decided once, and each
//! value is written straight into its cell of the column-wise parameter array (no per-row
//! value list in between). `execute`'s [`ParamValue`]s and `executemany`'s Python values
//! (`py/cursor/execute_many.rs`) both come through here, so a kind's cell bytes are written in
//! one place; the families give the bytes (`types/temporal`, `types/guid`, `types/vector`).
//!
//! A value the column's kind cannot carry is a [`Misfit`], never a wrong cell: the caller widens
//! the column (`widen`) and writes the rows again, or ends the array before this row.

use super::ParamValue;
use super::kind::{Kind, freetds_misencodes as freetds_misencodes_date, unify};
use crate::backend::{Backend, Dbms, Driver};
use crate::odbc::sys::{Len, NULL_DATA};
use crate::types::guid::{guid_text, u128_to_guid};
use crate::types::temporal::{Date, Time, Timestamp, TimestampOffset};
use crate::types::vector;

/// The most bytes one column's buffer grows to for a value longer than its cells: a longer value
/// ends the array before its row (one value alone may be longer).
pub const COLUMN_BYTES: usize = 64 << 20;

/// Why a value was not written (nothing of its row was written to this column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Misfit {
    /// The value is of this kind, which the column's kind cannot carry.
    Kind(Kind),
    /// The value is longer than the column's cells and widening them would pass
    /// [`COLUMN_BYTES`]: the array must end before this row.
    Full,
}

pub type Put = Result<(), Misfit>;

/// The kind a column of kind `a` must become to also carry a value of kind `b` (`None`: no
/// single binding carries both). Dates sent as text through FreeTDS carry native ones too.
pub fn widen(a: Kind, b: Kind) -> Option<Kind> {
    match (a, b) {
        (Kind::Date, Kind::DateText) | (Kind::DateText, Kind::Date) => Some(Kind::DateText),
        (Kind::Timestamp, Kind::TimestampText) | (Kind::TimestampText, Kind::Timestamp) => {
            Some(Kind::TimestampText)
        }
        _ => unify(a, b),
    }
}

/// A parameter column under construction: `rows()` cells of `element_len` bytes each.
pub struct ArrayColumn {
    pub(super) kind: Kind,
    pub(super) backend: Backend,
    /// The parameter's number from 0, for messages.
    pub(super) index: usize,
    pub(super) element_len: usize,
    /// `u64`s so that every cell of an 8-byte kind is aligned as its C type.
    pub(super) data: Vec<u64>,
    pub(super) indicators: Vec<Len>,
    /// An 8-byte column (integers, floats) with no NULL so far keeps no indicators: each row is
    /// one word of `data`. Half the memory of a narrow array, and bound without an indicator
    /// array on Driver 18 (`encode::finish`), which then skips reading one per cell.
    pub(super) dense: bool,
    /// The longest cell written (bytes).
    /// (Not kept for 8-byte kinds, whose cells are all 8 bytes: see `push_word`.)
    pub(super) max_len: usize,
    /// The bytes of every cell written, summed: what the values add to a request.
    pub(super) value_bytes: usize,
    /// An integer outside `i32` was written (declared BIGINT, else INTEGER).
    pub(super) wide_int: bool,
    /// Decimals: the widest integer part and the widest scale written.
    pub(super) int_digits: u32,
    pub(super) scale: u32,
    /// PostgreSQL: the first row whose text holds U+0000 (psqlODBC would cut it there).
    pub(super) nul_row: Option<usize>,
    /// The most bytes the buffer grows to before a value is [`Misfit::Full`].
    limit: usize,
}

impl ArrayColumn {
    pub fn new(kind: Kind, index: usize, backend: Backend, capacity: usize) -> ArrayColumn {
        let element_len = match kind {
            Kind::Int | Kind::Float => 8,
            Kind::Bool => 1,
            Kind::Date => 6,
            Kind::Timestamp => 16,
            Kind::Guid => 16,
            _ => 0,
        };
        let dense = matches!(kind, Kind::Int | Kind::Float);
        ArrayColumn {
            kind,
            backend,
            index,
            element_len,
            data: Vec::with_capacity((capacity * element_len).div_ceil(8)),
            indicators: Vec::with_capacity(if dense { 0 } else { capacity }),
            dense,
            max_len: 0,
            value_bytes: 0,
            wide_int: false,
            int_digits: 0,
            scale: 0,
            nul_row: None,
            limit: COLUMN_BYTES,
        }
    }

    /// A column that takes every value however large the buffer grows (its caller cut the
    /// rows into requests already: `execute`, `Statement::execute_many`).
    pub fn without_limit(mut self) -> ArrayColumn {
        self.limit = usize::MAX;
        self
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    pub fn rows(&self) -> usize {
        if self.dense {
            self.data.len()
        } else {
            self.indicators.len()
        }
    }

    /// The parameter's number from 0.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Every cell of this column is 8 bytes (its `value_bytes` is 8 a row).
    pub fn is_fixed8(&self) -> bool {
        matches!(self.kind, Kind::Int | Kind::Float)
    }

    /// The bytes this column's values add to a request so far.
    pub fn value_bytes(&self) -> usize {
        match self.kind {
            // `push_word` keeps no sum: every cell is 8 bytes (a NULL counts as one).
            Kind::Int | Kind::Float => 8 * self.rows(),
            _ => self.value_bytes,
        }
    }

    /// Forget the cells from row `rows` on (a row that was only partly written).
    pub fn truncate(&mut self, rows: usize) {
        if self.dense {
            self.data.truncate(rows);
            return;
        }
        self.indicators.truncate(rows);
        self.data.truncate((rows * self.element_len).div_ceil(8));
    }

    /// Cells exactly as wide as the longest value (they grew by doubling).
    pub fn compact(&mut self) {
        let len = self.max_len.max(1);
        if self.element_len > len && !matches!(self.kind, Kind::Int | Kind::Float) {
            self.restride(len);
        }
    }

    #[inline]
    pub fn push_null(&mut self) {
        if self.dense {
            self.materialize();
        }
        self.indicators.push(NULL_DATA);
        // Keep an 8-byte column's buffer one word per row (`push_word`).
        if self.element_len > 0 {
            let words = (self.indicators.len() * self.element_len).div_ceil(8);
            self.data.resize(words, 0);
        }
    }

    /// The indicators of a dense column written out (its first NULL): every row so far is a
    /// value of 8 bytes.
    #[cold]
    fn materialize(&mut self) {
        self.indicators = vec![8; self.data.len()];
        self.dense = false;
    }

    /// A cell of `len` bytes for the next row, widening every cell if `len` is longer.
    #[inline]
    fn cell(&mut self, len: usize) -> Result<&mut [u8], Misfit> {
        if self.dense {
            self.materialize();
        }
        let row = self.indicators.len();
        // One value alone may be longer; more rows that wide end the array first.
        if row > 0 && (row + 1).saturating_mul(len.max(self.element_len)) > self.limit {
            return Err(Misfit::Full);
        }
        if len > self.element_len {
            let doubled = self.element_len.saturating_mul(2).max(8);
            let wider = if (row + 1).saturating_mul(doubled) > self.limit {
                len
            } else {
                len.max(doubled)
            };
            self.restride(wider);
        }
        // The length is set by `done` once the cell is written.
        self.indicators.push(NULL_DATA);
        let start = row * self.element_len;
        let words = (start + self.element_len).div_ceil(8);
        if self.data.len() < words {
            self.data.resize(words, 0);
        }
        Ok(&mut bytes_of_mut(&mut self.data)[start..start + len])
    }

    /// Copy the cells written so far into cells of `element_len` bytes.
    fn restride(&mut self, element_len: usize) {
        let rows = self.indicators.len();
        let mut data = vec![0u64; (rows * element_len).div_ceil(8)];
        {
            let old = bytes_of(&self.data);
            let new = bytes_of_mut(&mut data);
            for (r, &ind) in self.indicators.iter().enumerate() {
                if ind >= 0 {
                    let n = usize::try_from(ind).unwrap_or(0).min(self.element_len);
                    let (from, to) = (r * self.element_len, r * element_len);
                    new[to..to + n].copy_from_slice(&old[from..from + n]);
                }
            }
        }
        self.data = data;
        self.element_len = element_len;
    }

    /// An 8-byte value into the next cell of an 8-byte column (integers, floats).
    #[inline(always)]
    fn push_word(&mut self, word: u64) -> Put {
        debug_assert_eq!(self.element_len, 8);
        self.data.push(word);
        if !self.dense {
            debug_assert_eq!(self.data.len(), self.indicators.len() + 1);
            self.indicators.push(8);
        }
        Ok(())
    }

    /// Say that the cell of `row` holds `n` bytes.
    #[inline]
    fn done(&mut self, row: usize, n: usize) {
        self.indicators[row] = crate::checked::alloc_len(n);
        self.max_len = self.max_len.max(n);
        self.value_bytes += n;
    }

    fn push_bytes_of(&mut self, bytes: &[u8]) -> Put {
        let row = self.rows();
        self.cell(bytes.len())?.copy_from_slice(bytes);
        self.done(row, bytes.len());
        Ok(())
    }

    /// Text as UTF-16 code units in native order (bound as `SQL_C_WCHAR`).
    fn push_wide(&mut self, s: &str) -> Put {
        let row = self.rows();
        if s.is_ascii() {
            // One unit per byte, the common case: a plain widening loop.
            let cell = self.cell(2 * s.len())?;
            for (out, &b) in cell.chunks_exact_mut(2).zip(s.as_bytes()) {
                out.copy_from_slice(&u16::from(b).to_ne_bytes());
            }
            self.done(row, 2 * s.len());
            return Ok(());
        }
        // Never more UTF-16 units than UTF-8 bytes: write into that room, then say how many.
        let room = 2 * s.len();
        let cell = self.cell(room)?;
        let mut n = 0;
        for (unit, out) in s.encode_utf16().zip(cell.chunks_exact_mut(2)) {
            out.copy_from_slice(&unit.to_ne_bytes());
            n += 2;
        }
        self.done(row, n);
        Ok(())
    }

    pub fn push_bool(&mut self, b: bool) -> Put {
        match self.kind {
            Kind::Bool => self.push_bytes_of(&[u8::from(b)]),
            Kind::Int => self.push_word(i64::from(b).to_ne_bytes_word()),
            Kind::Float => self.push_word(f64::from(u8::from(b)).to_bits()),
            _ => Err(Misfit::Kind(Kind::Bool)),
        }
    }

    #[inline(always)]
    pub fn push_int(&mut self, i: i64) -> Put {
        if self.kind == Kind::Int {
            self.wide_int |= i32::try_from(i).is_err();
            return self.push_word(i.to_ne_bytes_word());
        }
        self.push_int_widened(i)
    }

    /// An integer into a float or decimal column.
    #[cold]
    fn push_int_widened(&mut self, i: i64) -> Put {
        match self.kind {
            #[allow(
                clippy::cast_precision_loss,
                reason = "a float column holds ints as floats"
            )]
            Kind::Float => self.push_word((i as f64).to_bits()),
            Kind::Decimal => {
                // At most 20 digits: a u64's decimal text.
                let digits = i.unsigned_abs().to_string().len();
                self.int_digits = self.int_digits.max(u32::try_from(digits).unwrap_or(20));
                self.push_bytes_of(i.to_string().as_bytes())
            }
            _ => Err(Misfit::Kind(Kind::Int)),
        }
    }

    #[inline(always)]
    pub fn push_float(&mut self, f: f64) -> Put {
        if self.kind == Kind::Float {
            return self.push_word(f.to_bits());
        }
        Err(Misfit::Kind(Kind::Float))
    }

    pub fn push_str(&mut self, s: &str) -> Put {
        if self.kind != Kind::Text {
            return Err(Misfit::Kind(Kind::Text));
        }
        if self.backend.dbms == Dbms::PostgreSql && self.nul_row.is_none() && s.contains('\0') {
            self.nul_row = Some(self.rows());
        }
        self.push_wide(s)
    }

    pub fn push_utf16(&mut self, units: &[u16]) -> Put {
        if self.kind != Kind::Text {
            return Err(Misfit::Kind(Kind::Text));
        }
        if self.backend.dbms == Dbms::PostgreSql && self.nul_row.is_none() && units.contains(&0) {
            self.nul_row = Some(self.rows());
        }
        let row = self.rows();
        let cell = self.cell(2 * units.len())?;
        for (unit, out) in units.iter().zip(cell.chunks_exact_mut(2)) {
            out.copy_from_slice(&unit.to_ne_bytes());
        }
        self.done(row, 2 * units.len());
        Ok(())
    }

    pub fn push_bytes(&mut self, b: &[u8]) -> Put {
        match self.kind {
            Kind::Bytes => self.push_bytes_of(b),
            _ => Err(Misfit::Kind(Kind::Bytes)),
        }
    }

    /// Plain decimal text with its precision and scale.
    pub fn push_decimal(&mut self, text: &str, precision: u32, scale: u32) -> Put {
        if self.kind != Kind::Decimal {
            return Err(Misfit::Kind(Kind::Decimal));
        }
        self.push_bytes_of(text.as_bytes())?;
        self.int_digits = self.int_digits.max(precision.saturating_sub(scale));
        self.scale = self.scale.max(scale);
        Ok(())
    }

    pub fn push_date(&mut self, d: Date) -> Put {
        match self.kind {
            Kind::Date if self.backend.driver == Driver::FreeTds && freetds_misencodes_date(d) => {
                Err(Misfit::Kind(Kind::DateText))
            }
            Kind::Date => self.push_bytes_of(&d.to_ne_bytes()),
            Kind::DateText => self.push_wide(&d.to_text()),
            _ if self.backend.driver == Driver::FreeTds && freetds_misencodes_date(d) => {
                Err(Misfit::Kind(Kind::DateText))
            }
            _ => Err(Misfit::Kind(Kind::Date)),
        }
    }

    pub fn push_time(&mut self, t: Time) -> Put {
        match self.kind {
            Kind::Time if self.backend.ss_c_types() => self.push_bytes_of(&t.to_ss_time2()),
            // FreeTDS: text the server converts, with SQL Server's seven fraction digits.
            Kind::TimeText => self.push_wide(&t.to_text_100ns()),
            Kind::Time if self.backend.driver == Driver::FreeTds && t.nanosecond % 1000 != 0 => {
                Err(Misfit::Kind(Kind::TimeText))
            }
            Kind::Time => self.push_wide(&t.to_text()),
            _ => Err(Misfit::Kind(Kind::Time)),
        }
    }

    pub fn push_timestamp(&mut self, ts: Timestamp) -> Put {
        let early = self.backend.driver == Driver::FreeTds && freetds_misencodes_date(ts.date);
        match self.kind {
            Kind::Timestamp if early => Err(Misfit::Kind(Kind::TimestampText)),
            Kind::Timestamp => self.push_bytes_of(&ts.to_ne_bytes()),
            Kind::TimestampText => self.push_wide(&ts.to_text()),
            _ if early => Err(Misfit::Kind(Kind::TimestampText)),
            _ => Err(Misfit::Kind(Kind::Timestamp)),
        }
    }

    pub fn push_offset(&mut self, v: TimestampOffset) -> Put {
        if self.kind != Kind::TimestampOffset {
            return Err(Misfit::Kind(Kind::TimestampOffset));
        }
        if self.backend.ss_c_types() {
            self.push_bytes_of(&v.to_ne_bytes())
        } else if self.backend.dbms == Dbms::SqlServer {
            self.push_wide(&v.to_text_100ns())
        } else {
            self.push_wide(&v.to_text())
        }
    }

    pub fn push_guid(&mut self, g: u128) -> Put {
        if self.kind != Kind::Guid {
            return Err(Misfit::Kind(Kind::Guid));
        }
        if matches!(self.backend.dbms, Dbms::SqlServer | Dbms::PostgreSql) {
            self.push_bytes_of(&u128_to_guid(g))
        } else {
            let text = guid_text(g);
            let row = self.rows();
            let cell = self.cell(2 * text.len())?;
            for (&b, out) in text.iter().zip(cell.chunks_exact_mut(2)) {
                out.copy_from_slice(&u16::from(b).to_ne_bytes());
            }
            self.done(row, 2 * text.len());
            Ok(())
        }
    }

    /// A float32 vector: the family's native buffer, or its JSON text.
    pub fn push_vector(&mut self, v: &[f32]) -> Put {
        match self.kind {
            Kind::Vector => self.push_bytes_of(&vector::param_buffer(v)),
            Kind::VectorText => self.push_wide(&vector::json_text(v)),
            _ if self.backend.vectors => Err(Misfit::Kind(Kind::Vector)),
            _ => Err(Misfit::Kind(Kind::VectorText)),
        }
    }

    /// Any engine value (`execute`'s parameters, and values of no fast path).
    pub fn push_value(&mut self, v: &ParamValue) -> Put {
        match v {
            ParamValue::Null => {
                self.push_null();
                Ok(())
            }
            ParamValue::Bool(b) => self.push_bool(*b),
            ParamValue::Int(i) => self.push_int(*i),
            ParamValue::Float(f) => self.push_float(*f),
            ParamValue::Text(u) => self.push_utf16(u),
            ParamValue::Bytes(b) => self.push_bytes(b),
            ParamValue::Decimal {
                text,
                precision,
                scale,
            } => self.push_decimal(text, *precision, *scale),
            ParamValue::Date(d) => self.push_date(*d),
            ParamValue::Time(t) => self.push_time(*t),
            ParamValue::Timestamp(ts) => self.push_timestamp(*ts),
            ParamValue::TimestampOffset(o) => self.push_offset(*o),
            ParamValue::Guid(g) => self.push_guid(*g),
            ParamValue::Vector(v) => self.push_vector(v),
            ParamValue::Output(_) => Err(Misfit::Kind(Kind::Output)),
            ParamValue::Table(_) => Err(Misfit::Kind(Kind::Table)),
        }
    }
}

/// The bytes of `v` in a cell of `kind` (`None`: NULL), for a column of one row.
pub(super) fn cell_bytes(
    v: &ParamValue,
    kind: Kind,
    backend: Backend,
) -> Result<Option<Vec<u8>>, Misfit> {
    let mut col = ArrayColumn::new(kind, 0, backend, 1).without_limit();
    col.push_value(v)?;
    let indicator = if col.dense { 8 } else { col.indicators[0] };
    Ok(usize::try_from(indicator)
        .ok()
        .map(|n| bytes_of(&col.data)[..n].to_vec()))
}

/// An integer column whose values all fit `i32` rewritten in place as `SQL_C_SLONG` cells (4
/// bytes a row; NULL cells stay 0): Driver 18 sends such a column as SQL Server's `int` either
/// way, but converting an `SQL_C_SBIGINT` cell to `SQL_INTEGER` costs it about 200 instructions
/// a row (callgrind; 4 % of a narrow `executemany`). Decided once per column, by `wide_int`.
pub(super) fn narrow_ints(data: &mut Vec<u64>, rows: usize, indicators: &mut [Len]) {
    let bytes = bytes_of_mut(data);
    for r in 0..rows {
        // Row r's 8 bytes are read before any later row's are written: 4r + 4 <= 8(r + 1).
        let mut cell = [0u8; 8];
        cell.copy_from_slice(&bytes[8 * r..8 * r + 8]);
        let v = i32::try_from(i64::from_ne_bytes(cell)).unwrap_or_default();
        bytes[4 * r..4 * r + 4].copy_from_slice(&v.to_ne_bytes());
    }
    for ind in indicators.iter_mut().filter(|i| **i >= 0) {
        *ind = 4;
    }
    data.truncate((4 * rows).div_ceil(8));
}

/// An `i64`'s bytes as the `u64` word that holds them in memory.
trait NeWord {
    fn to_ne_bytes_word(self) -> u64;
}

impl NeWord for i64 {
    #[inline]
    fn to_ne_bytes_word(self) -> u64 {
        u64::from_ne_bytes(self.to_ne_bytes())
    }
}

pub(super) fn bytes_of(data: &[u64]) -> &[u8] {
    // SAFETY: a u64 buffer viewed as bytes: same memory, u8 has no alignment requirement.
    unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), data.len() * 8) }
}

pub(super) fn bytes_of_mut(data: &mut [u64]) -> &mut [u8] {
    let len = data.len() * 8;
    // SAFETY: a u64 buffer viewed as bytes: same memory, u8 has no alignment requirement.
    unsafe { std::slice::from_raw_parts_mut(data.as_mut_ptr().cast::<u8>(), len) }
}
