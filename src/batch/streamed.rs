//! Streamed reads: cells fetched with SQLGetData after the block fetch, whole, whatever their
//! size ((MAX) and LOB columns, sql_variant cells with their underlying type, and cut cells read
//! again where declared sizes are not enforced).

use super::column::{ColumnBuffer, StreamedCell};

use crate::error::{Error, Result};
use crate::odbc::sys::{CDataType, Len, NO_TOTAL, NULL_DATA, Pointer};
use crate::odbc::{Outcome, Stmt};
use crate::plan::CellKind;

/// First SQLGetData chunk for a streamed column (grown to the size the driver announces).
pub const LOB_CHUNK_BYTES: usize = 32 << 10;

impl ColumnBuffer {
    /// Read the cell of batch row `row` again, whole, with SQLGetData (the cursor is on it).
    pub(crate) fn read_again(&mut self, stmt: &mut Stmt, column: u16, row: usize) -> Result<()> {
        let mut cell = StreamedCell::default();
        // The block fetch said how long the value is: one SQLGetData then reads it all (each
        // call makes SQLite3 ODBC convert the whole value again), and exactly that much: a row
        // array may hold thousands of these.
        let first = usize::try_from(self.indicators[row]).ok();
        cell.is_null = match self.kind {
            CellKind::WText { .. } => {
                let units = first.map(|bytes| bytes / 2);
                read_long(stmt, column, CDataType::WChar, &mut cell.units, 1, units)?
            }
            _ => read_long(stmt, column, CDataType::Binary, &mut cell.bytes, 0, first)?,
        };
        debug_assert!(self.reread.last().is_none_or(|(r, _)| *r < row));
        self.reread.push((row, cell));
        Ok(())
    }

    /// Read a streamed column of the current row with SQLGetData, chunk by chunk, whole.
    pub(super) fn read_streamed(&mut self, stmt: &mut Stmt, column: u16) -> Result<()> {
        let cell = &mut self.streamed;
        match self.kind {
            CellKind::LongWText => {
                // Text chunks end in a NUL code unit that is not payload.
                cell.is_null = read_long(stmt, column, CDataType::WChar, &mut cell.units, 1, None)?;
                Ok(())
            }
            CellKind::LongBinary => {
                cell.is_null =
                    read_long(stmt, column, CDataType::Binary, &mut cell.bytes, 0, None)?;
                Ok(())
            }
            CellKind::LongDecimal => {
                cell.is_null = read_long(stmt, column, CDataType::Char, &mut cell.bytes, 1, None)?;
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
                let kind = variant_kind(crate::checked::from_driver(c_type, "sql_variant type")?);
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
                        crate::checked::alloc_len(self.element_len),
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
/// `LOB_CHUNK_BYTES` and jump to the size the driver announces, so a 10 MiB value costs two calls;
/// `first_units` is a length already known: the first call asks for exactly that.
pub(super) fn read_long<T: Copy>(
    stmt: &mut Stmt,
    column: u16,
    c_type: CDataType,
    out: &mut Vec<T>,
    terminator: usize,
    first_units: Option<usize>,
) -> Result<bool> {
    let unit = std::mem::size_of::<T>();
    let limit = stmt.max_lob_bytes();
    out.clear();
    let mut filled = 0usize; // payload units so far
    let mut next_chunk = first_units.map_or(LOB_CHUNK_BYTES / unit, |n| n.max(1));
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
            stmt.get_data(
                column,
                c_type,
                target,
                crate::checked::alloc_len(room * unit),
                &mut ind,
            )?
        };
        match outcome {
            Outcome::NoData => break,
            _ if ind == NULL_DATA => return Ok(true),
            _ => {
                let known = check_length(ind, unit, filled, limit)?;
                let payload_room = room - terminator;
                if let Some(bytes) = known
                    && bytes / unit <= payload_room
                {
                    filled += bytes / unit;
                    break;
                }
                // Truncated: the chunk is full; the driver may say how much is left in total.
                filled += payload_room;
                if limit > 0 && filled * unit > limit {
                    return Err(over_limit(filled * unit, limit, false));
                }
                // SAFETY: the driver wrote these `payload_room` units; keeping the length equal
                // to `filled` makes the next `reserve` count from there.
                unsafe { out.set_len(filled) };
                next_chunk = if let Some(bytes) = known {
                    (bytes / unit).saturating_sub(payload_room) + 1
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

/// Refuse what an indicator says before any memory is reserved for it: a negative length that
/// is none of the ODBC markers, an odd byte count for UTF-16, a total above `limit` (0: none).
/// `filled` units were read before this chunk. The caller names the column and row. Returns the
/// byte count the indicator gives, `None` for `SQL_NO_TOTAL`.
fn check_length(ind: Len, unit: usize, filled: usize, limit: usize) -> Result<Option<usize>> {
    if ind == NO_TOTAL {
        return Ok(None);
    }
    let Ok(bytes) = usize::try_from(ind) else {
        return Err(Error::Data(format!(
            "the driver reported an impossible length ({ind}) for the value"
        )));
    };
    if unit == 2 && bytes % 2 != 0 {
        return Err(Error::Data(super::column::odd_text_reason(bytes)));
    }
    let total = filled * unit + bytes;
    if limit > 0 && total > limit {
        return Err(over_limit(total, limit, true));
    }
    Ok(Some(bytes))
}

#[cold]
fn over_limit(bytes: usize, limit: usize, known: bool) -> Error {
    let size = if known {
        format!("{bytes} bytes")
    } else {
        format!("more than {limit} bytes (read so far: {bytes}; the driver did not say how long)")
    };
    Error::Data(format!(
        "the value ({size}) is larger than max_lob_bytes = {limit}; raise connection.max_lob_bytes, or fetch less"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_a_driver_cannot_mean_are_refused_before_any_allocation() {
        // Negative lengths that are not ODBC markers (NULL_DATA is handled before).
        for ind in [-5, -2, isize::MIN] {
            let e = check_length(ind, 1, 0, 0).unwrap_err().to_string();
            assert!(e.contains("impossible length"), "{e}");
        }
        // Half a UTF-16 code unit.
        assert!(
            check_length(13, 2, 0, 0)
                .unwrap_err()
                .to_string()
                .contains("odd count")
        );
        assert!(check_length(13, 1, 0, 0).is_ok());
        // Unknown length: decided chunk by chunk by the caller.
        assert!(check_length(NO_TOTAL, 2, 1 << 30, 10).is_ok());
    }

    #[test]
    fn the_limit_counts_what_was_read_and_what_is_announced() {
        assert!(check_length(100, 1, 0, 100).is_ok());
        let e = check_length(101, 1, 0, 100).unwrap_err().to_string();
        assert!(
            e.contains("101 bytes") && e.contains("max_lob_bytes = 100"),
            "{e}"
        );
        // 40 units (80 bytes) already read + 40 announced = 120 > 100.
        assert!(check_length(40, 2, 40, 100).is_err());
        assert!(check_length(1 << 40, 1, 0, 0).is_ok(), "0 is no limit");
    }
}
