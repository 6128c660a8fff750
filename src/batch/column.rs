//! One column's bound buffers (values and length indicators) and the accessors that read a cell
//! of them: fixed-width values in place, text and binary with their length checked, never cut.

use super::recycle;
use crate::counters;
use crate::error::{Error, Result};
use crate::odbc::Stmt;
use crate::odbc::sys::{Len, NO_TOTAL, NULL_DATA, Pointer};
use crate::plan::{CellKind, ResultPlan};
use crate::types::temporal;
use std::mem::MaybeUninit;

/// A byte buffer aligned to 8, so element slices can be viewed as `u16` text without copying.
///
/// Its bytes are either all initialised (zeroed at allocation) or left uninitialised, per column
/// kind (see [`ColumnBuffer::new`]): it hands out raw pointers, the whole buffer as a slice only
/// when zeroed (an empty one otherwise), and any other slice only through [`Self::slice`], whose
/// caller vouches that the bytes were written.
pub(super) struct AlignedBytes {
    words: Box<[MaybeUninit<u64>]>,
    len: usize,
    /// Bytes known initialised whoever wrote them: `len` when zeroed at allocation (every
    /// write since keeps them so), 0 when left uninitialised.
    readable: usize,
}

impl AlignedBytes {
    pub(super) fn zeroed(len: usize) -> Self {
        AlignedBytes {
            words: recycle::values_zeroed(len.div_ceil(8)),
            len,
            readable: len,
        }
    }

    /// A buffer left as the allocator (or the recycle bin) hands it out: no memset. Only for
    /// kinds whose readers never look past what the driver wrote (see [`ColumnBuffer::new`]).
    pub(super) fn uninit(len: usize) -> Self {
        AlignedBytes {
            words: recycle::values_uninit(len.div_ceil(8)),
            len,
            readable: 0,
        }
    }

    /// The whole buffer when it was zeroed, else an empty slice: an uninitialised buffer is
    /// read only through [`Self::slice`], byte ranges someone wrote. (Indexing an element of the
    /// empty slice panics, with the bounds check every element read pays anyway: no extra test
    /// per cell in the decoders' loops.)
    #[inline]
    pub(super) fn as_bytes(&self) -> &[u8] {
        // SAFETY: `words` holds at least `len >= readable` bytes, the first `readable` of them
        // initialised (zeroed at allocation, and only ever overwritten since); u8 has no
        // alignment needs.
        unsafe { std::slice::from_raw_parts(self.as_ptr(), self.readable) }
    }

    /// Bytes `start..start + n`.
    ///
    /// # Safety
    /// Every byte of the range is initialised: the buffer was zeroed, or the bytes were
    /// written since (by the driver, a copy of written bytes, or a test's `put_cell`).
    #[inline]
    pub(super) unsafe fn slice(&self, start: usize, n: usize) -> &[u8] {
        assert!(
            start <= self.len && n <= self.len - start,
            "slice out of the buffer"
        );
        // SAFETY: in bounds (asserted); initialised per the caller's contract.
        unsafe { std::slice::from_raw_parts(self.as_ptr().add(start), n) }
    }

    #[inline]
    pub(super) fn as_ptr(&self) -> *const u8 {
        self.words.as_ptr().cast::<u8>()
    }

    pub(super) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.words.as_mut_ptr().cast::<u8>()
    }
}

impl Drop for AlignedBytes {
    fn drop(&mut self) {
        recycle::give_values(std::mem::take(&mut self.words));
    }
}

/// The whole value of a streamed (SQLGetData) cell of the current row (read by `streamed.rs`).
#[derive(Default)]
pub struct StreamedCell {
    pub units: Vec<u16>,
    pub bytes: Vec<u8>,
    pub is_null: bool,
    /// For `sql_variant` columns: the current cell, read as its underlying type.
    pub variant: Option<Box<ColumnBuffer>>,
}

/// One column's buffers: `capacity` elements of `element_len` bytes plus an indicator each.
pub struct ColumnBuffer {
    pub kind: CellKind,
    pub(super) element_len: usize,
    pub(super) values: AlignedBytes,
    pub(super) indicators: Vec<Len>,
    /// Long (streamed) kinds keep their current value here instead of in `values`.
    pub streamed: StreamedCell,
    /// Cells of the current row array that the bound buffer cut and that were read again whole
    /// (`reread.rs`), by batch row, ascending. Empty unless the plan rereads this column.
    pub(super) reread: Vec<(usize, StreamedCell)>,
}

impl Drop for ColumnBuffer {
    fn drop(&mut self) {
        recycle::give_indicators(std::mem::take(&mut self.indicators));
    }
}

/// Plain numbers any bit pattern of which is a value, aligned to their size: the element
/// types a bound column can be viewed as ([`ColumnBuffer::values`]).
pub trait FixedWidth: Copy + sealed::Sealed {}
mod sealed {
    pub trait Sealed {}
}
macro_rules! fixed_width {
    ($($t:ty),*) => {$(impl sealed::Sealed for $t {} impl FixedWidth for $t {})*};
}
fixed_width!(i16, i32, i64, f32, f64);

/// Why a variable-length cell could not be read whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellError {
    /// The driver reported more data than the bound buffer holds (indicator in bytes, or
    /// `None` for `SQL_NO_TOTAL`). Never silently cut: the caller raises a DataError.
    Truncated {
        indicator: Option<isize>,
        capacity: usize,
    },
    /// UTF-16 text with an odd number of bytes (a malformed value the driver passed through
    /// from the server): half a code unit cannot be decoded, nor dropped silently.
    OddLength { bytes: usize },
}

/// One cell as the driver delivered it, before any decoding ([`ColumnBuffer::raw`]).
#[derive(Debug, PartialEq, Eq)]
pub enum RawCell<'a> {
    /// The indicator was `SQL_NULL_DATA`.
    Null,
    /// Bytes: a fixed-width kind's whole C element, or a binary / decimal-text payload.
    Bytes(&'a [u8]),
    /// UTF-16 code units of a text cell (its indicator's length, no terminator).
    Units(&'a [u16]),
}

impl ColumnBuffer {
    /// Cell `row` undecoded, as the driver wrote it: NULL when the indicator says so; text
    /// (including time and datetimeoffset bound as text) as its UTF-16 code units; binary and
    /// decimal text as their bytes, both up to the indicator's length; every fixed-width kind as
    /// its whole C element in native byte order (the ODBC struct for dates, times, timestamps,
    /// GUIDs and SQL_NUMERIC_STRUCT); long columns and cells the bound buffer cut and that were
    /// read again as the whole value SQLGetData returned; sql_variant as its value in the C type
    /// of its underlying SQL type. A cut cell that was not read again is an error, never a
    /// silently short value.
    pub fn raw(&self, row: usize) -> std::result::Result<RawCell<'_>, CellError> {
        if self.is_null(row) {
            return Ok(RawCell::Null);
        }
        Ok(match self.kind {
            CellKind::WText { .. }
            | CellKind::LongWText
            | CellKind::TimeText
            | CellKind::OffsetText => RawCell::Units(self.text(row)?),
            CellKind::Binary { .. }
            | CellKind::LongBinary
            | CellKind::Decimal { .. }
            | CellKind::LongDecimal => RawCell::Bytes(self.bytes(row)?),
            CellKind::Variant => match self.streamed.variant.as_deref() {
                Some(inner) => inner.raw(0)?,
                None => RawCell::Null,
            },
            _ => RawCell::Bytes(self.element(row)),
        })
    }

    /// Buffers for `capacity` cells of `kind`.
    ///
    /// Kinds read only up to their indicator (text, binary, decimal digits) get values left
    /// uninitialised: every reader (`text`, `bytes`, `raw`) sees just the bytes the driver
    /// wrote for a cell's indicator, copies go through raw pointers, and a NULL or cut cell's
    /// element is never read. Zeroing them was pure waste, and it was paid for every fresh
    /// batch: lazy rows pin their batch, so a fetchall of 100,000 wide rows allocates a fresh
    /// one per row array (callgrind, 32 columns, 2 read: 75 M of the lazy path's 384 M
    /// instructions were calloc's memset; about one per byte, as valgrind counts every
    /// iteration of `rep stosb`, so the wall-clock share is far smaller). Fixed-width kinds
    /// stay zeroed: their readers see whole elements, also of NULL cells (Arrow copies value
    /// slices as they are, masked by validity) and struct padding a driver may leave unwritten
    /// (`raw` hands out the whole C struct).
    ///
    /// Not chosen: relying on calloc (it already was one: glibc clears every chunk carved from
    /// the heap, and skips only mmapped ones, above a threshold that moves as buffers are freed).
    /// Released batches are recycled for later executes (`recycle.rs`); within a fetchall that
    /// pins them nothing is released.
    pub(super) fn new(kind: CellKind, capacity: usize) -> Self {
        counters::bump(&counters::BUFFER_ALLOCS);
        let element_len = kind.element_len();
        let values = if reads_by_indicator(kind) {
            AlignedBytes::uninit(element_len * capacity)
        } else {
            AlignedBytes::zeroed(element_len * capacity)
        };
        ColumnBuffer {
            kind,
            element_len,
            values,
            indicators: recycle::indicators(capacity, NULL_DATA),
            streamed: StreamedCell::default(),
            reread: Vec::new(),
        }
    }

    /// Payload bytes a bound text or binary element holds (text keeps room for its NUL).
    fn payload_capacity(&self) -> usize {
        match self.kind {
            CellKind::WText { .. } => self.element_len - 2,
            CellKind::Decimal { .. } => self.element_len - 1,
            _ => self.element_len,
        }
    }

    /// Whether the driver reported more data for bound row `row` than its element holds.
    pub(crate) fn is_cut(&self, row: usize) -> bool {
        let ind = self.indicators[row];
        ind != NULL_DATA && usize::try_from(ind).map_or(true, |n| n > self.payload_capacity())
    }

    /// Element 0 and its indicator, which one-row fetches overwrite while cells are read again.
    /// Saved as raw bytes: a text element holds initialised bytes only up to its indicator.
    pub(crate) fn save_row0(&self) -> (Box<[MaybeUninit<u8>]>, Len) {
        let mut saved = Box::new_uninit_slice(self.element_len);
        // SAFETY: element 0 is the first `element_len` bytes of `values` (the row-array path
        // that saves it has capacity > 1); `saved` is a distinct allocation of that size.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.values.as_ptr(),
                saved.as_mut_ptr().cast::<u8>(),
                self.element_len,
            )
        };
        (saved, self.indicators[0])
    }

    pub(crate) fn restore_row0(&mut self, (bytes, indicator): (Box<[MaybeUninit<u8>]>, Len)) {
        assert_eq!(bytes.len(), self.element_len, "element 0 of this column");
        // SAFETY: `bytes` is element 0 as saved, `element_len` bytes, within `values`.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr().cast::<u8>(),
                self.values.as_mut_ptr(),
                bytes.len(),
            )
        };
        self.indicators[0] = indicator;
    }

    /// The whole value of a cut cell that was read again, if it was.
    #[cold]
    fn reread_cell(&self, row: usize) -> Option<&StreamedCell> {
        let i = self.reread.binary_search_by_key(&row, |(r, _)| *r).ok()?;
        Some(&self.reread[i].1)
    }

    /// Payload bytes of each cell read again in this row array.
    pub(crate) fn reread_lengths(&self) -> impl Iterator<Item = usize> + '_ {
        self.reread
            .iter()
            .map(|(_, c)| c.units.len() * 2 + c.bytes.len())
    }

    #[cfg(test)]
    pub(crate) fn push_reread(&mut self, row: usize, units: Vec<u16>, bytes: Vec<u8>) {
        self.reread.push((
            row,
            StreamedCell {
                units,
                bytes,
                ..Default::default()
            },
        ));
    }

    pub(crate) fn clear_reread(&mut self) {
        self.reread.clear();
    }

    #[cfg(test)]
    pub(crate) fn set_indicator(&mut self, row: usize, indicator: Len) {
        self.indicators[row] = indicator;
    }

    /// Write one cell as a driver does: payload into the element, length into the indicator
    /// (tests and benches fill batches without a driver).
    #[cfg(any(test, feature = "bench-internals"))]
    pub fn put_cell(&mut self, row: usize, payload: &[u8], indicator: Len) {
        let start = row * self.element_len;
        let n = payload.len().min(self.element_len);
        // SAFETY: test-only write inside the element of `row`.
        unsafe {
            std::ptr::copy_nonoverlapping(payload.as_ptr(), self.values.as_mut_ptr().add(start), n)
        };
        self.indicators[row] = indicator;
    }

    /// NULL test for bound and fixed-size streamed cells.
    #[inline]
    pub fn is_null(&self, row: usize) -> bool {
        if self.kind.is_long() {
            self.streamed.is_null
        } else {
            self.indicators[row] == NULL_DATA
        }
    }

    /// Whether any cell of `rows` is NULL (one pass over the indicators, no branch per cell).
    #[inline]
    pub fn any_null(&self, rows: std::ops::Range<usize>) -> bool {
        if self.kind.is_long() {
            return !rows.is_empty() && self.streamed.is_null;
        }
        self.indicators[rows]
            .iter()
            .fold(false, |any, &ind| any | (ind == NULL_DATA))
    }

    /// The whole element of a fixed-width cell (panics, out of bounds, for kinds read by
    /// indicator, whose elements are only partly written: use `text` or `bytes`).
    #[inline]
    pub fn element(&self, row: usize) -> &[u8] {
        let start = row * self.element_len;
        &self.values.as_bytes()[start..start + self.element_len]
    }

    #[inline]
    fn fixed<const N: usize>(&self, row: usize) -> [u8; N] {
        let start = row * self.element_len;
        let mut out = [0u8; N];
        out.copy_from_slice(&self.values.as_bytes()[start..start + N]);
        out
    }

    /// Rows `rows` of a fixed-width column as its native values, in place (Arrow's layout).
    /// The value of a NULL cell is whatever the buffer holds: callers mask it.
    #[inline]
    pub fn values<T: FixedWidth>(&self, rows: std::ops::Range<usize>) -> &[T] {
        assert_eq!(self.element_len, std::mem::size_of::<T>(), "element width");
        let bytes =
            &self.values.as_bytes()[rows.start * self.element_len..rows.end * self.element_len];
        // SAFETY: `values` is 8-aligned and every element starts at a multiple of
        // `size_of::<T>()` (asserted equal to `element_len`), which is T's alignment for every
        // `FixedWidth` type; the slice covers whole elements in bounds; any bit pattern is a
        // valid T (a sealed set of plain integers and floats).
        unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<T>(), rows.len()) }
    }

    #[inline]
    pub fn bit(&self, row: usize) -> bool {
        self.fixed::<1>(row)[0] != 0
    }
    #[inline]
    pub fn i16(&self, row: usize) -> i16 {
        i16::from_ne_bytes(self.fixed(row))
    }
    #[inline]
    pub fn i32(&self, row: usize) -> i32 {
        i32::from_ne_bytes(self.fixed(row))
    }
    #[inline]
    pub fn i64(&self, row: usize) -> i64 {
        i64::from_ne_bytes(self.fixed(row))
    }
    #[inline]
    pub fn f32(&self, row: usize) -> f32 {
        f32::from_ne_bytes(self.fixed(row))
    }
    #[inline]
    pub fn f64(&self, row: usize) -> f64 {
        f64::from_ne_bytes(self.fixed(row))
    }
    #[inline]
    pub fn date(&self, row: usize) -> temporal::Date {
        temporal::Date::from_ne_bytes(&self.fixed(row))
    }
    #[inline]
    pub fn timestamp(&self, row: usize) -> temporal::Timestamp {
        temporal::Timestamp::from_ne_bytes(&self.fixed(row))
    }
    #[inline]
    pub fn ss_time2(&self, row: usize) -> temporal::Time {
        temporal::Time::from_ss_time2(&self.fixed(row))
    }
    #[inline]
    pub fn timestamp_offset(&self, row: usize) -> temporal::TimestampOffset {
        temporal::TimestampOffset::from_ne_bytes(&self.fixed(row))
    }
    #[inline]
    pub fn guid(&self, row: usize) -> [u8; 16] {
        self.fixed(row)
    }

    /// Length in bytes of a variable cell, or the truncation it suffered.
    #[inline]
    fn var_len(&self, row: usize, capacity: usize) -> std::result::Result<usize, CellError> {
        let ind = self.indicators[row];
        if ind == NO_TOTAL {
            return Err(CellError::Truncated {
                indicator: None,
                capacity,
            });
        }
        // A negative indicator other than the ODBC constants is the driver's error: reported as
        // the cut it cannot be, with its value, never read as a huge length.
        match usize::try_from(ind) {
            Ok(len) if len <= capacity => Ok(len),
            _ => Err(CellError::Truncated {
                indicator: Some(ind),
                capacity,
            }),
        }
    }

    /// The UTF-16 code units of a non-NULL text cell (bound or streamed).
    #[inline]
    pub fn text(&self, row: usize) -> std::result::Result<&[u16], CellError> {
        if self.kind.is_long() {
            return Ok(&self.streamed.units);
        }
        let capacity = self.element_len - 2;
        let len = match self.var_len(row, capacity) {
            Ok(len) => len,
            Err(cut) => return self.reread_cell(row).map(|c| c.units.as_slice()).ok_or(cut),
        };
        if len % 2 != 0 {
            return Err(CellError::OddLength { bytes: len });
        }
        let start = row * self.element_len;
        // SAFETY: `values` is 8-aligned and `element_len` is even for text kinds, so `start` is
        // 2-aligned; `start + len <= values.len` because `len <= capacity < element_len` and
        // `row` is below the column's capacity (`var_len` read its indicator, bounds-checked;
        // values and indicators are sized from the same capacity). The driver wrote the `len`
        // bytes its indicator announces (the rest may be uninitialised: `ColumnBuffer::new`).
        // The alignment is the SAFETY note's: 8-aligned values, an even `start`.
        #[allow(clippy::cast_ptr_alignment)]
        let units = unsafe {
            std::slice::from_raw_parts(self.values.as_ptr().add(start).cast::<u16>(), len / 2)
        };
        Ok(units)
    }

    /// A non-NULL `SQL_NUMERIC_STRUCT` cell: precision, scale, sign, 16-byte magnitude.
    #[inline]
    pub fn numeric(&self, row: usize) -> &[u8; 19] {
        let start = row * self.element_len;
        self.values.as_bytes()[start..start + 19]
            .try_into()
            .expect("a numeric element is 19 bytes")
    }

    /// The bytes of a non-NULL binary or decimal-text cell (bound or streamed).
    #[inline]
    pub fn bytes(&self, row: usize) -> std::result::Result<&[u8], CellError> {
        if self.kind.is_long() {
            return Ok(&self.streamed.bytes);
        }
        // Decimal text is NUL terminated inside its element; binary is not.
        let len = match self.var_len(row, self.payload_capacity()) {
            Ok(len) => len,
            Err(cut) => return self.reread_cell(row).map(|c| c.bytes.as_slice()).ok_or(cut),
        };
        let start = row * self.element_len;
        // SAFETY: the driver wrote the `len <= payload_capacity` bytes its indicator announces
        // (the rest of the element may be uninitialised: `ColumnBuffer::new`); `slice` checks
        // the bounds.
        Ok(unsafe { self.values.slice(start, len) })
    }

    /// # Safety
    /// The statement keeps these pointers until unbound: `self` must not move or reallocate
    /// while bound (the batch guarantees this by unbinding before it reallocates or drops).
    pub(super) unsafe fn bind(&mut self, stmt: &mut Stmt, column: u16) -> Result<()> {
        let ptr = self.values.as_mut_ptr() as Pointer;
        // SAFETY: forwarded contract; buffers cover `capacity` elements and indicators.
        unsafe {
            stmt.bind_col(
                column,
                self.kind.c_type(),
                ptr,
                crate::checked::alloc_len(self.element_len),
                self.indicators.as_mut_ptr(),
            )?;
            if let CellKind::Numeric { precision, scale } = self.kind {
                stmt.set_numeric_precision(column, precision, scale, ptr)?;
            }
        }
        Ok(())
    }
}

/// Kinds whose cells are only ever read up to their indicator's length.
fn reads_by_indicator(kind: CellKind) -> bool {
    matches!(
        kind,
        CellKind::WText { .. }
            | CellKind::Binary { .. }
            | CellKind::Decimal { .. }
            | CellKind::TimeText
            | CellKind::OffsetText
    )
}

/// An error for a cell that could not be read whole, naming column and row.
#[cold]
pub fn cell_error(err: CellError, plan: &ResultPlan, column: usize, row: u64) -> Error {
    let reason = match err {
        // A negative length that is none of the ODBC markers: a broken driver.
        CellError::Truncated {
            indicator: Some(n), ..
        } if n < 0 => format!("the driver reported an impossible length ({n}) for the value"),
        CellError::Truncated {
            indicator: Some(n),
            capacity,
        } => format!(
            "the driver returned {n} bytes for a {capacity}-byte buffer (value would be truncated)"
        ),
        CellError::Truncated {
            indicator: None,
            capacity,
        } => format!(
            "the driver returned a value of unknown length (SQL_NO_TOTAL) for a {capacity}-byte buffer"
        ),
        CellError::OddLength { bytes } => odd_text_reason(bytes),
    };
    cell_failed(plan, column, row, reason)
}

/// Why UTF-16 text of `bytes` bytes (an odd count) is refused.
pub fn odd_text_reason(bytes: usize) -> String {
    format!("malformed UTF-16: the driver returned {bytes} bytes, an odd count (half a code unit)")
}

/// The error of a cell that cannot become a value, whatever the reason: column name, index
/// and result-set row always (every consumer raises through this).
#[cold]
pub fn cell_failed(plan: &ResultPlan, column: usize, row: u64, reason: String) -> Error {
    Error::Decode {
        column: plan.columns[column].desc.name.clone(),
        column_index: column,
        row,
        reason,
    }
}
