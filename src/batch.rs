//! Column buffers bound to a statement, and the block fetch that fills them.
//!
//! One `Batch` serves every fetch shape: the cursor hands out rows `pos..len` of it and calls the
//! driver only when they are used up. Buffers are column-wise (`SQL_BIND_BY_COLUMN`) and owned
//! here; the statement holds raw pointers into them while bound, so a `Batch` is only dropped or
//! reallocated after [`Batch::unbind`] (or after the statement is gone).

use crate::error::{Error, Result};
use crate::odbc::sys::{CDataType, Len, NO_TOTAL, NULL_DATA, Pointer, ULen};
use crate::odbc::{Outcome, Stmt};
use crate::plan::{CellKind, ResultPlan};
use crate::{counters, decode};

/// Bytes a batch may use for bound buffers before it stops growing. Small enough that wide rows
/// pipeline (decoding one array overlaps fetching the next, and the last array, decoded with
/// nothing to overlap, stays short): 10,000 rows x 32 columns took 38 ms with a 16 MiB budget
/// and 25 ms with 2 MiB; narrow rows still reach the 8,192-row cap.
pub const BATCH_BYTE_BUDGET: usize = 2 << 20;
/// Row cap for one row array (some drivers count rows in 16 bits).
pub const MAX_BATCH_ROWS: usize = 8192;
/// Rows in the first row array of a result set: small, so `SELECT 1` costs nothing extra.
pub const FIRST_BATCH_ROWS: usize = 32;

/// The row array after a full one of `rows`: ×8 up to 2,048 rows, then ×2 up to the cap.
///
/// Big arrays cost Driver 18 fewer calls (a fetch-bound 1.2M-row result: 258 ms with 8,192-row
/// arrays, 328 ms with 2,048), but the last array of a result is decoded with no fetch left to
/// overlap: growing by 2 past 2,048 keeps that tail shorter (10,000 rows x 32 columns: 47 ms
/// growing straight to 8,192, 38 ms this way; see also [`BATCH_BYTE_BUDGET`]).
pub fn grown(rows: usize) -> usize {
    if rows < 2048 { rows * 8 } else { rows * 2 }
}
/// First SQLGetData chunk for a streamed column (grown to the size the driver announces).
pub const LOB_CHUNK_BYTES: usize = 32 << 10;

/// A byte buffer aligned to 8, so element slices can be viewed as `u16` text without copying.
#[derive(Default)]
struct AlignedBytes {
    words: Vec<u64>,
    len: usize,
}

impl AlignedBytes {
    fn zeroed(len: usize) -> Self {
        AlignedBytes {
            words: vec![0u64; len.div_ceil(8)],
            len,
        }
    }
    fn as_bytes(&self) -> &[u8] {
        // SAFETY: `words` holds at least `len` initialised bytes; u8 has no alignment needs.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr().cast::<u8>(), self.len) }
    }
    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.words.as_mut_ptr().cast::<u8>()
    }
}

/// The whole value of a streamed (SQLGetData) cell of the current row.
#[derive(Default)]
pub struct StreamedCell {
    pub units: Vec<u16>,
    pub bytes: Vec<u8>,
    pub is_null: bool,
    /// For `sql_variant` columns: the current cell, read as its underlying type.
    pub variant: Option<Box<ColumnBuffer>>,
}

impl StreamedCell {
    /// A copy of the value (text units, bytes, NULL); never of a variant's inner buffer.
    fn clone_value(&self) -> StreamedCell {
        StreamedCell {
            units: self.units.clone(),
            bytes: self.bytes.clone(),
            is_null: self.is_null,
            variant: None,
        }
    }
}

/// One column's buffers: `capacity` elements of `element_len` bytes plus an indicator each.
pub struct ColumnBuffer {
    pub kind: CellKind,
    element_len: usize,
    values: AlignedBytes,
    indicators: Vec<Len>,
    /// Long (streamed) kinds keep their current value here instead of in `values`.
    pub streamed: StreamedCell,
    /// Cells of the current row array that the bound buffer cut and that were read again whole
    /// (`reread.rs`), by batch row, ascending. Empty unless the plan rereads this column.
    reread: Vec<(usize, StreamedCell)>,
}

/// Why a variable-length cell could not be read whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellError {
    /// The driver reported more data than the bound buffer holds (indicator in bytes, or
    /// `None` for `SQL_NO_TOTAL`). Never silently cut: the caller raises a DataError.
    Truncated {
        indicator: Option<isize>,
        capacity: usize,
    },
}

impl ColumnBuffer {
    fn new(kind: CellKind, capacity: usize) -> Self {
        counters::bump(&counters::BUFFER_ALLOCS);
        let element_len = kind.element_len();
        ColumnBuffer {
            kind,
            element_len,
            values: AlignedBytes::zeroed(element_len * capacity),
            indicators: vec![NULL_DATA; capacity],
            streamed: StreamedCell::default(),
            reread: Vec::new(),
        }
    }

    /// Copy rows `0..rows` (values and indicators) from a buffer of the same kind.
    fn copy_rows_from(&mut self, other: &ColumnBuffer, rows: usize) {
        debug_assert_eq!(self.kind, other.kind);
        let bytes = rows * self.element_len;
        let len = self.values.len;
        // SAFETY: both buffers hold at least `rows` elements of `element_len` bytes (callers
        // size the destination from the source's capacity); the regions do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(
                other.values.as_bytes().as_ptr(),
                self.values.as_mut_ptr(),
                bytes.min(len),
            )
        };
        self.indicators[..rows].copy_from_slice(&other.indicators[..rows]);
        self.reread.clear();
        for (row, cell) in &other.reread {
            self.reread.push((*row, cell.clone_value()));
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
        ind != NULL_DATA && (ind < 0 || ind as usize > self.payload_capacity())
    }

    /// Element 0 and its indicator, which one-row fetches overwrite while cells are read again.
    pub(crate) fn save_row0(&self) -> (Vec<u8>, Len) {
        (self.element(0).to_vec(), self.indicators[0])
    }

    pub(crate) fn restore_row0(&mut self, (bytes, indicator): (Vec<u8>, Len)) {
        // SAFETY: `bytes` is element 0 as saved, `element_len` bytes, within `values`.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.values.as_mut_ptr(), bytes.len())
        };
        self.indicators[0] = indicator;
    }

    /// Read the cell of batch row `row` again, whole, with SQLGetData (the cursor is on it).
    pub(crate) fn read_again(&mut self, stmt: &mut Stmt, column: u16, row: usize) -> Result<()> {
        let mut cell = StreamedCell::default();
        cell.is_null = match self.kind {
            CellKind::WText { .. } => {
                read_long(stmt, column, CDataType::WChar, &mut cell.units, 1)?
            }
            _ => read_long(stmt, column, CDataType::Binary, &mut cell.bytes, 0)?,
        };
        debug_assert!(self.reread.last().is_none_or(|(r, _)| *r < row));
        self.reread.push((row, cell));
        Ok(())
    }

    /// The whole value of a cut cell that was read again, if it was.
    #[cold]
    fn reread_cell(&self, row: usize) -> Option<&StreamedCell> {
        let i = self.reread.binary_search_by_key(&row, |(r, _)| *r).ok()?;
        Some(&self.reread[i].1)
    }

    pub(crate) fn clear_reread(&mut self) {
        self.reread.clear();
    }

    #[cfg(test)]
    pub(crate) fn set_indicator(&mut self, row: usize, indicator: Len) {
        self.indicators[row] = indicator;
    }

    /// Write one cell as a driver does: payload into the element, length into the indicator.
    #[cfg(test)]
    pub(crate) fn put_cell(&mut self, row: usize, payload: &[u8], indicator: Len) {
        let start = row * self.element_len;
        let n = payload.len().min(self.element_len);
        // SAFETY: test-only write inside the element of `row`.
        unsafe {
            std::ptr::copy_nonoverlapping(payload.as_ptr(), self.values.as_mut_ptr().add(start), n)
        };
        self.indicators[row] = indicator;
    }

    #[inline]
    pub fn indicator(&self, row: usize) -> isize {
        self.indicators[row]
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
    pub fn date(&self, row: usize) -> decode::Date {
        decode::Date::from_ne_bytes(&self.fixed(row))
    }
    #[inline]
    pub fn timestamp(&self, row: usize) -> decode::Timestamp {
        decode::Timestamp::from_ne_bytes(&self.fixed(row))
    }
    #[inline]
    pub fn ss_time2(&self, row: usize) -> decode::Time {
        decode::Time::from_ss_time2(&self.fixed(row))
    }
    #[inline]
    pub fn timestamp_offset(&self, row: usize) -> decode::TimestampOffset {
        decode::TimestampOffset::from_ne_bytes(&self.fixed(row))
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
        let len = ind as usize;
        if ind < 0 || len > capacity {
            return Err(CellError::Truncated {
                indicator: Some(ind),
                capacity,
            });
        }
        Ok(len)
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
        let start = row * self.element_len;
        // SAFETY: `values` is 8-aligned and `element_len` is even for text kinds, so `start` is
        // 2-aligned; `start + len <= values.len` because `len <= capacity < element_len`.
        let units = unsafe {
            std::slice::from_raw_parts(
                self.values
                    .words
                    .as_ptr()
                    .cast::<u8>()
                    .add(start)
                    .cast::<u16>(),
                len / 2,
            )
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
        Ok(&self.values.as_bytes()[start..start + len])
    }

    /// # Safety
    /// The statement keeps these pointers until unbound: `self` must not move or reallocate
    /// while bound (the batch guarantees this by unbinding before it reallocates or drops).
    unsafe fn bind(&mut self, stmt: &mut Stmt, column: u16) -> Result<()> {
        let ptr = self.values.as_mut_ptr() as Pointer;
        // SAFETY: forwarded contract; buffers cover `capacity` elements and indicators.
        unsafe {
            stmt.bind_col(
                column,
                self.kind.c_type(),
                ptr,
                self.element_len as Len,
                self.indicators.as_mut_ptr(),
            )?;
            if let CellKind::Numeric { precision, scale } = self.kind {
                stmt.set_numeric_precision(column, precision, scale, ptr)?;
            }
        }
        Ok(())
    }

    /// Read a streamed column of the current row with SQLGetData, chunk by chunk, whole.
    fn read_streamed(&mut self, stmt: &mut Stmt, column: u16) -> Result<()> {
        let cell = &mut self.streamed;
        match self.kind {
            CellKind::LongWText => {
                // Text chunks end in a NUL code unit that is not payload.
                cell.is_null = read_long(stmt, column, CDataType::WChar, &mut cell.units, 1)?;
                Ok(())
            }
            CellKind::LongBinary => {
                cell.is_null = read_long(stmt, column, CDataType::Binary, &mut cell.bytes, 0)?;
                Ok(())
            }
            CellKind::LongDecimal => {
                cell.is_null = read_long(stmt, column, CDataType::Char, &mut cell.bytes, 1)?;
                Ok(())
            }
            CellKind::Variant => {
                // Microsoft's documented recipe: a zero-length SQLGetData makes the driver read
                // the variant header, then SQL_CA_crate::codes::SS_VARIANT_TYPE names its C type.
                let mut probe = [0u8; 1];
                let mut ind: Len = 0;
                // SAFETY: a zero-length read into a valid one-byte buffer.
                unsafe {
                    stmt.get_data(
                        column,
                        CDataType::Binary,
                        probe.as_mut_ptr() as Pointer,
                        0,
                        &mut ind,
                    )?
                };
                cell.is_null = ind == NULL_DATA;
                if cell.is_null {
                    return Ok(());
                }
                let c_type = stmt.col_attr_int(column, crate::codes::SS_VARIANT_TYPE)?;
                let kind = variant_kind(c_type as i16);
                let inner = cell
                    .variant
                    .get_or_insert_with(|| Box::new(ColumnBuffer::new(kind, 1)));
                if inner.kind != kind {
                    **inner = ColumnBuffer::new(kind, 1);
                }
                inner.read_streamed(stmt, column)
            }
            kind => {
                // A fixed-size cell after a streamed one: one SQLGetData into element 0.
                let ptr = self.values.as_mut_ptr() as Pointer;
                let mut ind: Len = 0;
                // SAFETY: element 0 is `element_len` bytes long.
                unsafe {
                    stmt.get_data(
                        column,
                        kind.c_type(),
                        ptr,
                        self.element_len as Len,
                        &mut ind,
                    )?
                };
                self.indicators[0] = ind;
                Ok(())
            }
        }
    }
}

/// The decoder for a variant cell whose underlying C type the driver reported.
fn variant_kind(c_type: i16) -> CellKind {
    use crate::codes::c;
    match c_type {
        c::BIT => CellKind::Bit,
        c::STINYINT | c::UTINYINT | c::SSHORT | c::USHORT | c::SHORT => CellKind::I16,
        c::SLONG | c::ULONG | c::LONG => CellKind::I32,
        c::SBIGINT | c::UBIGINT => CellKind::I64,
        c::FLOAT => CellKind::F32,
        c::DOUBLE => CellKind::F64,
        // decimal, money (as digits); char text goes through WCHAR.
        c::NUMERIC => CellKind::LongDecimal,
        c::TYPE_DATE | c::DATE => CellKind::Date,
        c::TYPE_TIMESTAMP | c::TIMESTAMP => CellKind::Timestamp,
        c::GUID => CellKind::Guid,
        c::BINARY => CellKind::LongBinary,
        _ => CellKind::LongWText,
    }
}

/// Stream one long value into `out`; returns whether it is NULL. Any size, never truncated,
/// never trimmed (a value ending in U+0000 keeps it: lengths come from indicators, not
/// terminators). `T` is the code unit (`u16` for wide text, `u8` otherwise); `terminator` is the
/// number of NUL units the driver writes after each text chunk. Chunks start at
/// `LOB_CHUNK_BYTES` and jump to the size the driver announces, so a 10 MiB value costs two calls.
pub(crate) fn read_long<T: Copy>(
    stmt: &mut Stmt,
    column: u16,
    c_type: CDataType,
    out: &mut Vec<T>,
    terminator: usize,
) -> Result<bool> {
    let unit = std::mem::size_of::<T>();
    out.clear();
    let mut filled = 0usize; // payload units so far
    let mut next_chunk = LOB_CHUNK_BYTES / unit;
    loop {
        // Room for the chunk and its terminator after the `filled` units (the vector's length);
        // the driver writes it, so no zero fill.
        out.reserve(next_chunk + terminator);
        let room = out.capacity() - filled;
        debug_assert!(room > terminator);
        let mut ind: Len = 0;
        // SAFETY: the target is the `room` units of spare capacity after `filled`; the driver
        // writes at most `room * unit` bytes there, and only the bytes it reports are read.
        let outcome = unsafe {
            let target = out.as_mut_ptr().add(filled) as Pointer;
            stmt.get_data(column, c_type, target, (room * unit) as Len, &mut ind)?
        };
        match outcome {
            Outcome::NoData => break,
            _ if ind == NULL_DATA => return Ok(true),
            _ => {
                let payload_room = room - terminator;
                if ind != NO_TOTAL && (ind as usize) / unit <= payload_room {
                    filled += ind as usize / unit;
                    break;
                }
                // Truncated: the chunk is full; the driver may say how much is left in total.
                filled += payload_room;
                // SAFETY: the driver wrote these `payload_room` units; keeping the length equal
                // to `filled` makes the next `reserve` count from there.
                unsafe { out.set_len(filled) };
                next_chunk = if ind != NO_TOTAL {
                    (ind as usize / unit).saturating_sub(payload_room) + 1
                } else {
                    (next_chunk * 2).min((64 << 20) / unit)
                };
            }
        }
    }
    // SAFETY: the first `filled` units were written by the driver (reported by its indicators).
    unsafe { out.set_len(filled) };
    Ok(false)
}

/// Bound buffers for one plan, plus the row count the driver reports per fetch.
pub struct Batch {
    pub columns: Vec<ColumnBuffer>,
    capacity: usize,
    /// Heap-stable target of `SQL_ATTR_ROWS_FETCHED_PTR`.
    rows_fetched: Box<ULen>,
    /// `SQL_ATTR_ROW_STATUS_PTR` target: which rows of the array the driver filled, and which one
    /// failed when an error arrives in the middle of an array.
    row_status: Vec<u16>,
    bound: bool,
}

impl Batch {
    pub fn new(plan: &ResultPlan, capacity: usize) -> Batch {
        let capacity = if plan.has_streamed() {
            1
        } else {
            capacity.max(1)
        };
        let columns = plan
            .columns
            .iter()
            .map(|c| ColumnBuffer::new(c.kind, if c.kind.is_long() { 0 } else { capacity }))
            .collect();
        Batch {
            columns,
            capacity,
            rows_fetched: Box::new(0),
            row_status: vec![ROW_NOROW; capacity],
            bound: false,
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// An unbound copy of rows `0..rows` of `bound` (same plan), reusing `self`'s buffers.
    /// This is what lets the driver fill the bound buffers with the next row array while the
    /// copied rows are still being turned into Python objects.
    pub fn copy_rows_from(&mut self, bound: &Batch, rows: usize) {
        for (dst, src) in self.columns.iter_mut().zip(&bound.columns) {
            dst.copy_rows_from(src, rows);
        }
    }

    pub fn is_bound(&self) -> bool {
        self.bound
    }

    /// A fake block source's binding (tests of the row set without a driver).
    #[cfg(test)]
    pub(crate) fn set_bound(&mut self, bound: bool) {
        self.bound = bound;
    }

    /// Largest row array this plan may use, from the byte budget.
    pub fn max_rows(plan: &ResultPlan) -> usize {
        if plan.has_streamed() {
            return 1;
        }
        (BATCH_BYTE_BUDGET / plan.row_bytes.max(1)).clamp(1, MAX_BATCH_ROWS)
    }

    /// Install the bindings on `stmt`.
    ///
    /// # Safety
    /// The batch must not move its buffers, and must be unbound (or the statement freed or given
    /// other bindings) before it is dropped. Column buffers live on the heap, so moving the
    /// `Batch` value itself is fine.
    pub unsafe fn bind(&mut self, stmt: &mut Stmt, plan: &ResultPlan) -> Result<()> {
        stmt.set_row_array_size(self.capacity)?;
        // SAFETY: `rows_fetched` is boxed, so its address is stable for the batch's life.
        unsafe { stmt.set_rows_fetched_ptr(&mut *self.rows_fetched)? };
        // SAFETY: `row_status` holds `capacity` entries and is never resized after construction.
        unsafe { stmt.set_row_status_ptr(self.row_status.as_mut_ptr())? };
        for (i, col) in self.columns.iter_mut().enumerate().take(plan.bound_prefix) {
            // SAFETY: forwarded contract.
            unsafe { col.bind(stmt, (i + 1) as u16)? };
        }
        self.bound = true;
        Ok(())
    }

    pub fn unbind(&mut self, stmt: &mut Stmt) -> Result<()> {
        if self.bound {
            stmt.unbind_cols()?;
            self.bound = false;
        }
        Ok(())
    }

    /// Fetch the next row array.
    ///
    /// An error can arrive in the middle of an array (SQL Server sends rows, then an error token):
    /// the driver then reports the rows before it as fetched and the failing one by its row
    /// status. Those rows are delivered first: the result says how many, and the error.
    /// `base` is the result-set position of the array's first row (cut cells are re-read by it).
    pub fn fetch(&mut self, stmt: &mut Stmt, plan: &ResultPlan, base: u64) -> Fetched {
        self.begin_fetch();
        let outcome = stmt.fetch_raw();
        let records = match outcome {
            Outcome::Success | Outcome::NoData => Vec::new(),
            _ => stmt.diagnostics(),
        };
        let fetched = self.finish_fetch(outcome, records);
        // Bound cells first: streamed columns come after every bound one.
        let fetched = crate::reread::complete(self, stmt, plan, fetched, base);
        if fetched.error.is_some() || fetched.rows == 0 || !plan.has_streamed() {
            return fetched;
        }
        for i in plan.bound_prefix..self.columns.len() {
            if let Err(e) = self.columns[i].read_streamed(stmt, (i + 1) as u16) {
                return Fetched {
                    rows: 0,
                    error: Some(e),
                    warnings: fetched.warnings,
                };
            }
        }
        fetched
    }

    /// Reset what the driver reports through (rows fetched, row status) before a block fetch.
    pub fn begin_fetch(&mut self) {
        debug_assert!(self.bound);
        *self.rows_fetched = 0;
        self.row_status.fill(ROW_NOROW);
        for col in &mut self.columns {
            col.clear_reread();
        }
    }

    /// Read a block fetch's result (its return code and diagnostic records, taken right after
    /// the call) from what the driver wrote into this batch. Bound columns only: streamed
    /// columns are read by [`Self::fetch`].
    pub fn finish_fetch(
        &mut self,
        outcome: Outcome,
        records: Vec<crate::odbc::Diagnostic>,
    ) -> Fetched {
        let reported = (*self.rows_fetched).min(self.capacity);
        match outcome {
            Outcome::NoData => Fetched {
                rows: 0,
                error: None,
                warnings: Vec::new(),
            },
            // Warnings (01xxx) are messages; any error record ends the result after the good
            // rows before it.
            Outcome::Success | Outcome::SuccessWithInfo => {
                let (warnings, errors): (Vec<_>, Vec<_>) =
                    records.into_iter().partition(|d| !d.is_error());
                if errors.is_empty() {
                    Fetched {
                        rows: reported,
                        error: None,
                        warnings,
                    }
                } else {
                    Fetched {
                        rows: self.leading_good_rows(reported),
                        error: Some(Error::odbc("SQLFetch", errors)),
                        warnings,
                    }
                }
            }
            _ => Fetched {
                rows: self.leading_good_rows(reported),
                error: Some(Error::odbc("SQLFetch", records)),
                warnings: Vec::new(),
            },
        }
    }

    /// Rows at the start of the array whose status is success (with or without info).
    fn leading_good_rows(&self, reported: usize) -> usize {
        self.row_status[..reported]
            .iter()
            .take_while(|&&s| s == ROW_SUCCESS || s == ROW_SUCCESS_WITH_INFO)
            .count()
    }
}

/// `SQL_ROW_SUCCESS`, `SQL_ROW_SUCCESS_WITH_INFO`, `SQL_ROW_NOROW` (row status array values).
const ROW_SUCCESS: u16 = 0;
const ROW_SUCCESS_WITH_INFO: u16 = 6;
const ROW_NOROW: u16 = 3;

/// What one block fetch produced: `rows` usable rows, then possibly an error that ends the
/// result set (raised after those rows are handed out), and warnings for `messages`.
pub struct Fetched {
    pub rows: usize,
    pub error: Option<Error>,
    pub warnings: Vec<crate::odbc::Diagnostic>,
}

impl Fetched {
    pub fn failed(error: Error) -> Fetched {
        Fetched {
            rows: 0,
            error: Some(error),
            warnings: Vec::new(),
        }
    }
}

/// An error for a cell that could not be read whole, naming column and row.
#[cold]
pub fn cell_error(err: CellError, plan: &ResultPlan, column: usize, row: u64) -> Error {
    let CellError::Truncated {
        indicator,
        capacity,
    } = err;
    let reason = match indicator {
        Some(n) => format!(
            "the driver returned {n} bytes for a {capacity}-byte buffer (value would be truncated)"
        ),
        None => format!(
            "the driver returned a value of unknown length (SQL_NO_TOTAL) for a {capacity}-byte buffer"
        ),
    };
    Error::Decode {
        column: plan.columns[column].desc.name.clone(),
        column_index: column,
        row,
        reason,
    }
}

#[cfg(test)]
mod tests {
    //! Batch serving on synthetic buffers: values and indicators written exactly where a driver
    //! would write them, no database.
    use super::*;
    use crate::backend::Dbms;
    use crate::odbc::ColumnDescription;

    fn desc(sql_type: i16, size: usize) -> ColumnDescription {
        ColumnDescription {
            name: "c".into(),
            sql_type,
            size,
            decimal_digits: 0,
            nullable: Some(true),
            unsigned: false,
        }
    }

    /// Write one cell as a driver does: payload into the element, length into the indicator.
    fn put(col: &mut ColumnBuffer, row: usize, payload: &[u8], indicator: isize) {
        col.put_cell(row, payload, indicator)
    }

    fn wide(s: &str) -> Vec<u8> {
        s.encode_utf16().flat_map(u16::to_ne_bytes).collect()
    }

    #[test]
    fn text_cells_null_empty_and_truncation() {
        let plan = ResultPlan::build(vec![desc(-9, 4)], Dbms::SqlServer);
        let mut batch = Batch::new(&plan, 4);
        let col = &mut batch.columns[0];
        put(col, 0, &wide("abcd"), 8);
        put(col, 1, &[], NULL_DATA);
        put(col, 2, &[], 0);
        put(col, 3, &wide("abcd"), 10); // driver says 5 units: truncated into a 4-unit buffer
        let col = &batch.columns[0];
        assert_eq!(
            col.text(0).unwrap(),
            "abcd".encode_utf16().collect::<Vec<_>>().as_slice()
        );
        assert!(col.is_null(1));
        assert!(!col.is_null(2));
        assert_eq!(col.text(2).unwrap(), &[] as &[u16]);
        assert_eq!(
            col.text(3),
            Err(CellError::Truncated {
                indicator: Some(10),
                capacity: 8
            })
        );
    }

    #[test]
    fn no_total_is_an_error_not_null() {
        // mssql-python turned SQL_NO_TOTAL into None; here it is a truncation error.
        let plan = ResultPlan::build(vec![desc(-3, 4)], Dbms::SqlServer);
        let mut batch = Batch::new(&plan, 2);
        put(&mut batch.columns[0], 0, &[1, 2, 3, 4], NO_TOTAL);
        put(&mut batch.columns[0], 1, &[0, 0], 2);
        assert!(!batch.columns[0].is_null(0));
        assert_eq!(
            batch.columns[0].bytes(0),
            Err(CellError::Truncated {
                indicator: None,
                capacity: 4
            })
        );
        assert_eq!(batch.columns[0].bytes(1).unwrap(), &[0, 0]);
    }

    #[test]
    fn fixed_width_values_read_back() {
        let plan = ResultPlan::build(
            vec![desc(4, 10), desc(-5, 19), desc(8, 15), desc(-7, 1)],
            Dbms::SqlServer,
        );
        let mut batch = Batch::new(&plan, 3);
        for r in 0..3 {
            put(
                &mut batch.columns[0],
                r,
                &(-(r as i32) * 7).to_ne_bytes(),
                4,
            );
            put(
                &mut batch.columns[1],
                r,
                &(i64::MAX - r as i64).to_ne_bytes(),
                8,
            );
            put(
                &mut batch.columns[2],
                r,
                &(r as f64 + 0.25).to_ne_bytes(),
                8,
            );
            put(&mut batch.columns[3], r, &[(r % 2) as u8], 1);
        }
        assert_eq!(batch.columns[0].i32(2), -14);
        assert_eq!(batch.columns[1].i64(1), i64::MAX - 1);
        assert_eq!(batch.columns[2].f64(2), 2.25);
        assert!(batch.columns[3].bit(1));
        assert!(!batch.columns[3].bit(2));
    }

    #[test]
    fn text_that_ends_in_nul_keeps_it() {
        let plan = ResultPlan::build(vec![desc(-9, 8)], Dbms::SqlServer);
        let mut batch = Batch::new(&plan, 1);
        put(&mut batch.columns[0], 0, &wide("a\0"), 4);
        assert_eq!(batch.columns[0].text(0).unwrap(), &[0x61, 0]);
    }

    #[test]
    fn a_cut_cell_read_again_is_served_whole_and_travels_with_its_row() {
        let units = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
        let plan = ResultPlan::build(vec![desc(-9, 2), desc(-3, 2)], Dbms::SqlServer);
        let mut batch = Batch::new(&plan, 3);
        put(&mut batch.columns[0], 0, &wide("ab"), 4);
        put(&mut batch.columns[0], 1, &wide("ab"), 10);
        put(&mut batch.columns[0], 2, &[], NULL_DATA);
        put(&mut batch.columns[1], 1, &[7, 7], NO_TOTAL);
        assert!(batch.columns[0].is_cut(1) && !batch.columns[0].is_cut(0));
        assert!(!batch.columns[0].is_cut(2) && batch.columns[1].is_cut(1));
        assert!(
            batch.columns[0].text(1).is_err(),
            "cut and not read again: an error"
        );
        batch.columns[0].reread.push((
            1,
            StreamedCell {
                units: units("abcde"),
                ..Default::default()
            },
        ));
        batch.columns[1].reread.push((
            1,
            StreamedCell {
                bytes: vec![7; 9],
                ..Default::default()
            },
        ));
        assert_eq!(batch.columns[0].text(1).unwrap(), units("abcde").as_slice());
        assert_eq!(batch.columns[1].bytes(1).unwrap(), &[7; 9]);
        // The shadow copy a prefetch serves from carries the values read again.
        let mut shadow = Batch::new(&plan, 3);
        shadow.copy_rows_from(&batch, 3);
        assert_eq!(shadow.columns[0].text(0).unwrap(), units("ab").as_slice());
        assert_eq!(
            shadow.columns[0].text(1).unwrap(),
            units("abcde").as_slice()
        );
        assert!(shadow.columns[0].is_null(2));
        assert_eq!(shadow.columns[1].bytes(1).unwrap(), &[7; 9]);
    }

    #[test]
    fn row0_saved_and_restored_around_one_row_fetches() {
        let plan = ResultPlan::build(vec![desc(-9, 4)], Dbms::SqlServer);
        let mut batch = Batch::new(&plan, 2);
        put(&mut batch.columns[0], 0, &wide("keep"), 8);
        let saved = batch.columns[0].save_row0();
        put(&mut batch.columns[0], 0, &wide("over"), 200);
        batch.columns[0].restore_row0(saved);
        assert_eq!(
            batch.columns[0].text(0).unwrap(),
            "keep".encode_utf16().collect::<Vec<_>>().as_slice()
        );
    }

    #[test]
    fn streamed_plans_use_one_row_arrays_and_budgets_cap_rows() {
        let lob = ResultPlan::build(vec![desc(4, 10), desc(-10, 0)], Dbms::SqlServer);
        assert_eq!(Batch::max_rows(&lob), 1);
        assert_eq!(Batch::new(&lob, 1024).capacity(), 1);
        let wide_rows = ResultPlan::build(vec![desc(-9, 4000); 4], Dbms::SqlServer);
        let max = Batch::max_rows(&wide_rows);
        assert!(
            max * wide_rows.row_bytes <= BATCH_BYTE_BUDGET && max >= 1,
            "{max}"
        );
        let narrow = ResultPlan::build(vec![desc(4, 10)], Dbms::SqlServer);
        assert_eq!(Batch::max_rows(&narrow), MAX_BATCH_ROWS);
    }
}
