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
//! restored. The one-row fetches write into element 0 of every bound column: it is saved first
//! and put back. A one-row array needs none of this: the cursor is on its row.

use crate::batch::{Batch, Fetched};
use crate::error::{Error, Result};
use crate::odbc::{Outcome, Stmt};
use crate::plan::ResultPlan;

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
    match reread(batch, stmt, &cells, fetched.rows, base) {
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
    cells: &[(usize, usize)],
    rows: usize,
    base: u64,
) -> Result<()> {
    let capacity = batch.capacity();
    if capacity == 1 {
        for &(row, col) in cells {
            batch.columns[col].read_again(stmt, (col + 1) as u16, row)?;
        }
        return Ok(());
    }
    let saved: Vec<_> = batch.columns.iter().map(|c| c.save_row0()).collect();
    stmt.set_row_array_size(1)?;
    let result = refetch_each(batch, stmt, cells, rows, base);
    // Restored whatever happened: the next block fetch needs its array size and row 0 intact.
    let restored = stmt.set_row_array_size(capacity);
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
    cells: &[(usize, usize)],
    rows: usize,
    base: u64,
) -> Result<()> {
    let mut current = None;
    for &(row, col) in cells {
        if current != Some(row) {
            position(stmt, base + row as u64 + 1)?;
            current = Some(row);
        }
        batch.columns[col].read_again(stmt, (col + 1) as u16, row)?;
    }
    if current != Some(rows - 1) {
        position(stmt, base + rows as u64)?;
    }
    Ok(())
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
            dbms: Dbms::Sqlite,
            driver: Driver::Other,
            reread,
        }
    }

    #[test]
    fn sqlite_binds_declared_sizes_only_where_cut_cells_can_be_read_again() {
        let cols = || vec![desc(4, 10), desc(12, 50), desc(-3, 16), desc(-1, 65536)];
        let plan = ResultPlan::build(cols(), sqlite(true));
        assert!(plan.rereads);
        assert_eq!(
            plan.columns[1].kind,
            crate::plan::CellKind::WText { max_units: 100 }
        );
        assert_eq!(
            plan.columns[2].kind,
            crate::plan::CellKind::Binary { max_bytes: 16 }
        );
        let flags: Vec<bool> = plan.columns.iter().map(|c| c.reread).collect();
        // TEXT (LONGVARCHAR) stays streamed, and so not re-read.
        assert_eq!(flags, [false, true, true, false]);
        let streamed = ResultPlan::build(cols(), sqlite(false));
        assert!(!streamed.rereads);
        assert_eq!(streamed.columns[1].kind, crate::plan::CellKind::LongWText);
        assert_eq!(streamed.columns[2].kind, crate::plan::CellKind::LongBinary);
    }

    #[test]
    fn trusted_sizes_never_reread() {
        let plan = ResultPlan::build(vec![desc(12, 50)], Dbms::PostgreSql);
        assert!(!plan.rereads && !plan.columns[0].reread);
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
