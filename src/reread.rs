//! Reading again, whole, the cells a bound buffer cut, where declared sizes are not enforced.
//!
//! SQLite stores a value of any length in a VARCHAR(50) (and reports untyped columns as
//! VARCHAR(255)). Streaming every such column with SQLGetData never cuts a value but costs one
//! SQLFetch per row: `SELECT id, name` over 10,000 rows of (INTEGER, VARCHAR(50)) made 10,001
//! fetch calls and 10,000 SQLGetData calls. Instead these columns are bound by their declared
//! size like anywhere else, and after each block fetch the few cells whose length indicator says
//! the buffer cut them are read again whole. Nothing is ever returned cut: a cell that could not
//! be read again still raises (`batch::cell_error`).
//!
//! How a cell of row `k` of a row array can be read again, and what the drivers report
//! (`SQLGetInfo`, unixODBC 2.3):
//! - `SQLSetPos(k, SQL_POSITION)` then `SQLGetData`: the ODBC recipe, needing `SQL_GD_BLOCK` and
//!   `SQL_GD_BOUND`. SQLite3 ODBC 0.9998 reports `ANY_COLUMN | ANY_ORDER | BOUND` (no BLOCK), and
//!   its SQLSetPos(SQL_POSITION) moves relative to the *last* row fetched (the next SQLFetch then
//!   continues from there): unusable. psqlODBC 13 reports BLOCK | BOUND but no
//!   `SQL_CA1_POS_POSITION` for forward-only cursors (and PostgreSQL enforces sizes, so it never
//!   needs this). Driver 18 and FreeTDS 1.3 report BLOCK only: no SQLGetData on a bound column at
//!   all, so (MAX) columns cannot be bound with a bounded buffer and finished this way there.
//! - Fetching that row alone again by absolute position, on a static cursor: what is done here.
//!   SQLite3 ODBC's default cursor is static (`StepAPI=0`: it materialises each result) and its
//!   static cursors report `SQL_CA1_ABSOLUTE`. A forward-only cursor cannot go back (with
//!   `StepAPI=1` SQLite3 ODBC's is), so there the columns are streamed as before
//!   (`Backend::reread` is false; see `Connection::connect` and `Statement::new`).
//!
//! The re-read: row array size 1, `SQLFetchScroll(SQL_FETCH_ABSOLUTE, base + k + 1)`, SQLGetData
//! of the cut columns of that row, and once every cut row is done the cursor goes back to the
//! array's last row, so the next SQLFetch continues after it; then the row array size is
//! restored. The one-row fetches run with `SQL_ATTR_RETRIEVE_DATA` off where the driver allows
//! it (SQLite3 ODBC does), so they only position; where it does not they write into element 0 of
//! every bound column, which is therefore saved first and put back. A one-row array needs none
//! of this: the cursor is on its row.
//!
//! Memory: the values read again stay with their row array until it is served, so a row array
//! of long cells holds all of them at once (the streamed path held one). That is bounded by what
//! the driver already holds: a static SQLite3 ODBC cursor materialises the whole result as UTF-8
//! at execute, and these are the same cells in UTF-16.

use crate::batch::{Batch, Fetched};
use crate::error::{Error, Result};
use crate::odbc::{Outcome, Stmt};
use crate::plan::{CellKind, MAX_BOUND_BINARY_BYTES, MAX_BOUND_TEXT_UNITS, ResultPlan};

/// `SQLSTATE` of the truncation warning the block fetch raised for the cut cells.
const STRING_DATA_RIGHT_TRUNCATED: &str = "01004";

/// The cells of rows `0..rows` that their bound buffer cut, in reading order: by row, then by
/// column (drivers without `SQL_GD_ANY_ORDER` need ascending columns).
pub fn cut_cells(batch: &Batch, plan: &ResultPlan, rows: usize) -> Vec<(usize, usize)> {
    let columns: Vec<usize> = (0..plan.bound_prefix)
        .filter(|&c| plan.columns[c].reread)
        .collect();
    let mut cells = Vec::new();
    for row in 0..rows {
        for &c in &columns {
            if batch.columns[c].is_cut(row) {
                cells.push((row, c));
            }
        }
    }
    cells
}

/// Cells too long to bind at all are left to be re-read unless at least one in this many of a
/// row array's cells in the column is one: then the column is streamed for the rest of the
/// result set (as before this module), since a cut cell costs more than a streamed one.
const STREAM_ONE_IN: usize = 8;

/// The layout for the rest of the result set when a re-read column's declared size turned out
/// wrong in the row array just read (`rows` rows), or `None` when the layout is fine.
///
/// A cut cell costs a one-row re-fetch, a SQLGetData, and one more conversion of the whole value
/// by the driver than a bound one: measured on SQLite3 ODBC (fetchall, release build), 10,000 rows
/// of 2,000 characters in a VARCHAR(50) took 57 ms streamed and 131 ms with every cell re-read;
/// one cell in 100 of 10,000 characters cost ~60-120 us each. So a column is bound for the
/// longest cut value that can be bound (rounded up to a power of two, up to the bound-column
/// limits; the byte budget then shortens the row arrays), as soon as one is seen; values beyond
/// the limits are re-read while rare and streamed once they are one cell in `STREAM_ONE_IN`.
pub fn relayout(plan: &ResultPlan, batch: &Batch, rows: usize) -> Option<ResultPlan> {
    let mut kinds: Vec<CellKind> = plan.columns.iter().map(|c| c.kind).collect();
    let mut changed = false;
    for (c, column) in plan.columns.iter().enumerate() {
        if !column.reread {
            continue;
        }
        let (limit, current) = match column.kind {
            CellKind::WText { max_units } => (MAX_BOUND_TEXT_UNITS * 2, max_units as usize * 2),
            CellKind::Binary { max_bytes } => (MAX_BOUND_BINARY_BYTES, max_bytes as usize),
            _ => continue,
        };
        let (mut beyond, mut longest) = (0usize, 0usize);
        for bytes in batch.columns[c].reread_lengths() {
            if bytes > limit {
                beyond += 1;
            } else {
                longest = longest.max(bytes);
            }
        }
        let text = matches!(column.kind, CellKind::WText { .. });
        kinds[c] = if beyond > 0 && beyond * STREAM_ONE_IN >= rows {
            if text {
                CellKind::LongWText
            } else {
                CellKind::LongBinary
            }
        } else if longest > current {
            #[allow(
                clippy::cast_possible_truncation,
                reason = "at most `limit`, a MAX_BOUND_* constant far below u32::MAX"
            )]
            let bytes = longest.next_power_of_two().min(limit) as u32;
            if text {
                CellKind::WText {
                    max_units: bytes / 2,
                }
            } else {
                CellKind::Binary { max_bytes: bytes }
            }
        } else {
            continue;
        };
        changed = true;
    }
    changed.then(|| plan.with_kinds(kinds))
}

/// Finish a block fetch of a plan with `rereads`: read every cut cell again, whole. `base` is the
/// 0-based result-set position of batch row 0. On a failure the rows before the first cut one
/// are kept and the error follows them (as for an error in the middle of a row array).
pub fn complete(
    batch: &mut Batch,
    stmt: &mut Stmt,
    plan: &ResultPlan,
    mut fetched: Fetched,
    base: u64,
) -> Fetched {
    // After an error the cursor's position is the driver's business: cut cells then raise.
    if !plan.rereads || fetched.rows == 0 || fetched.error.is_some() {
        return fetched;
    }
    let cells = cut_cells(batch, plan, fetched.rows);
    if cells.is_empty() {
        return fetched;
    }
    match reread(batch, stmt, plan, &cells, fetched.rows, base) {
        Ok(()) => {
            // The truncation the driver warned about did not reach the caller.
            fetched
                .warnings
                .retain(|d| d.sqlstate != STRING_DATA_RIGHT_TRUNCATED);
            fetched
        }
        Err(e) => Fetched {
            rows: cells[0].0,
            error: Some(e),
            warnings: fetched.warnings,
        },
    }
}

fn reread(
    batch: &mut Batch,
    stmt: &mut Stmt,
    plan: &ResultPlan,
    cells: &[(usize, usize)],
    rows: usize,
    base: u64,
) -> Result<()> {
    let capacity = batch.capacity();
    if capacity == 1 {
        for &(row, col) in cells {
            read_cell_again(batch, stmt, plan, col, row, base)?;
        }
        return Ok(());
    }
    let saved: Vec<_> = batch.columns.iter().map(|c| c.save_row0()).collect();
    stmt.set_row_array_size(1)?;
    // Positioning without retrieving spares the driver converting the row's bound cells again
    // (SQLite3 ODBC converts a whole value to UTF-16 for every fetch and SQLGetData of it).
    let positions_only = stmt.set_retrieve_data(false).is_ok();
    let result = refetch_each(batch, stmt, plan, cells, rows, base, positions_only);
    // Restored whatever happened: the next block fetch needs its array size and row 0 intact.
    let retrieving = if positions_only {
        stmt.set_retrieve_data(true)
    } else {
        Ok(())
    };
    let restored = retrieving.and(stmt.set_row_array_size(capacity));
    for (col, row0) in batch.columns.iter_mut().zip(saved) {
        col.restore_row0(row0);
    }
    result.and(restored)
}

/// With a one-row array: fetch each cut row again and read its cut cells, then put the cursor
/// back on the array's last row.
fn refetch_each(
    batch: &mut Batch,
    stmt: &mut Stmt,
    plan: &ResultPlan,
    cells: &[(usize, usize)],
    rows: usize,
    base: u64,
    positions_only: bool,
) -> Result<()> {
    let mut current = None;
    for (i, &(row, col)) in cells.iter().enumerate() {
        if current != Some(row) {
            position(stmt, base + row as u64 + 1)?;
            current = Some(row);
            if positions_only {
                stmt.set_retrieve_data(true)?;
            }
        }
        read_cell_again(batch, stmt, plan, col, row, base)?;
        if positions_only && cells.get(i + 1).is_none_or(|&(next, _)| next != row) {
            stmt.set_retrieve_data(false)?;
        }
    }
    if current != Some(rows - 1) {
        position(stmt, base + rows as u64)?;
    }
    Ok(())
}

/// Read cut cell (`row`, `col`) of the array again, whole; a refused value names its cell.
fn read_cell_again(
    batch: &mut Batch,
    stmt: &mut Stmt,
    plan: &ResultPlan,
    col: usize,
    row: usize,
    base: u64,
) -> Result<()> {
    batch.columns[col]
        .read_again(stmt, crate::checked::column_number(col), row)
        .map_err(|e| crate::batch::name_cell(e, plan, col, base + row as u64))
}

/// Make 1-based result row `row` the (one-row) rowset.
fn position(stmt: &mut Stmt, row: u64) -> Result<()> {
    let target = isize::try_from(row)
        .map_err(|_| Error::Internal(format!("row {row} is past what SQLFetchScroll can reach")))?;
    match stmt.fetch_absolute(target) {
        // With info: the truncation of the cell about to be read again.
        Outcome::Success | Outcome::SuccessWithInfo => Ok(()),
        Outcome::NoData => Err(Error::Internal(format!(
            "reading a cut cell again: the driver has no row {row} any more"
        ))),
        _ => Err(Error::odbc("SQLFetchScroll", stmt.diagnostics())),
    }
}

#[cfg(test)]
mod tests {
    //! Which cells count as cut, on synthetic indicators (the driver calls are tested against
    //! SQLite3 ODBC in tests/python).
    use super::*;
    use crate::backend::{Backend, Dbms, Driver};
    use crate::odbc::ColumnDescription;
    use crate::odbc::sys::{NO_TOTAL, NULL_DATA};

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

    fn sqlite(reread: bool) -> Backend {
        Backend {
            reread,
            ..Backend::new(Dbms::Sqlite, Driver::Other)
        }
    }

    #[test]
    fn sqlite_binds_declared_sizes_only_where_cut_cells_can_be_read_again() {
        let cols = || vec![desc(4, 10), desc(12, 50), desc(-3, 16), desc(-1, 65536)];
        let plan = ResultPlan::build(cols(), sqlite(true));
        assert!(plan.rereads);
        assert_eq!(plan.columns[1].kind, CellKind::WText { max_units: 100 });
        assert_eq!(plan.columns[2].kind, CellKind::Binary { max_bytes: 16 });
        let flags: Vec<bool> = plan.columns.iter().map(|c| c.reread).collect();
        // TEXT (LONGVARCHAR) stays streamed, and so not re-read.
        assert_eq!(flags, [false, true, true, false]);
        let streamed = ResultPlan::build(cols(), sqlite(false));
        assert!(!streamed.rereads);
        assert_eq!(streamed.columns[1].kind, CellKind::LongWText);
        assert_eq!(streamed.columns[2].kind, CellKind::LongBinary);
    }

    #[test]
    fn trusted_sizes_never_reread() {
        let plan = ResultPlan::build(vec![desc(12, 50)], Dbms::PostgreSql);
        assert!(!plan.rereads && !plan.columns[0].reread);
    }

    #[test]
    fn a_column_is_laid_out_for_the_longest_value_that_can_be_bound() {
        let plan = ResultPlan::build(vec![desc(4, 10), desc(12, 2), desc(-3, 3)], sqlite(true));
        let mut batch = Batch::new(&plan, 16);
        assert!(relayout(&plan, &batch, 16).is_none(), "nothing cut");
        // One cut cell of 600 units: text bound for 1,024 (rounded up); binary untouched.
        batch.columns[1].push_reread(0, vec![b'x' as u16; 600], Vec::new());
        let relaid = relayout(&plan, &batch, 16).expect("relaid");
        let kinds: Vec<CellKind> = relaid.columns.iter().map(|c| c.kind).collect();
        assert_eq!(
            kinds,
            [
                CellKind::I32,
                CellKind::WText { max_units: 1024 },
                CellKind::Binary { max_bytes: 3 }
            ]
        );
        assert!(relaid.columns[1].reread && relaid.rereads && !relaid.has_streamed());
        // Already wide enough: nothing to do.
        assert!(relayout(&relaid, &batch, 16).is_none());
        // One value too long to bind in 16 rows: still re-read, bound for the others.
        batch.columns[1].push_reread(5, vec![0; MAX_BOUND_TEXT_UNITS + 1], Vec::new());
        let rare = relayout(&plan, &batch, 16).expect("relaid");
        assert_eq!(rare.columns[1].kind, CellKind::WText { max_units: 1024 });
        // Two in 16: that column and every one after it are streamed.
        batch.columns[1].push_reread(12, vec![0; MAX_BOUND_TEXT_UNITS + 1], Vec::new());
        let streamed = relayout(&plan, &batch, 16).expect("relaid");
        assert_eq!(streamed.columns[1].kind, CellKind::LongWText);
        assert_eq!(streamed.columns[2].kind, CellKind::LongBinary);
        assert_eq!(streamed.bound_prefix, 1);
        assert!(!streamed.rereads);
    }

    #[test]
    fn binary_is_laid_out_by_bytes() {
        let plan = ResultPlan::build(vec![desc(-3, 4)], sqlite(true));
        let mut batch = Batch::new(&plan, 4);
        batch.columns[0].push_reread(1, Vec::new(), vec![1; 5]);
        let relaid = relayout(&plan, &batch, 4).expect("relaid");
        assert_eq!(relaid.columns[0].kind, CellKind::Binary { max_bytes: 8 });
    }

    #[test]
    fn cut_cells_are_listed_by_row_then_column() {
        let plan = ResultPlan::build(vec![desc(12, 2), desc(4, 10), desc(-3, 3)], sqlite(true));
        let mut batch = Batch::new(&plan, 4);
        // Text holds 4 units (8 bytes) plus its NUL; binary 3 bytes.
        let text = [8, 9, NULL_DATA, 0];
        let binary = [4, 3, NO_TOTAL, NULL_DATA];
        for row in 0..4 {
            batch.columns[0].set_indicator(row, text[row]);
            batch.columns[1].set_indicator(row, 4);
            batch.columns[2].set_indicator(row, binary[row]);
        }
        assert_eq!(cut_cells(&batch, &plan, 4), [(0, 2), (1, 0), (2, 2)]);
        assert_eq!(cut_cells(&batch, &plan, 1), [(0, 2)]);
    }
}
