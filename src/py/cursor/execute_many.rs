//! `executemany`'s rows written column-wise straight into parameter arrays.
//!
//! Decide once, loop dumb: each column has a kind ([`ArrayColumn`]) and, chosen with it, the
//! encoder of its family's Python type (`py/types/<family>.rs::param_cell`); the row loop only
//! calls the column's encoder. Any other value (a subclass, a bool in an int column, a big int,
//! an aware datetime, ...) takes the general conversion (`to_param`) and goes into the same
//! column. A value the column cannot carry is never written wrong:
//! - a kind both can share (None then a value, int then float, int then Decimal, FreeTDS's
//!   early dates): the column is widened and its rows of this array are written again;
//! - no shared kind (int then str): the array ends before the row, and the next starts there;
//! - a value longer than the cells: the cells widen (every row copied), or past
//!   `params::COLUMN_BYTES` the array ends before the row.
//!
//! Arrays also end near `REQUEST_BYTES` (`params/chunks.rs`). Every array is built before the
//! first is sent, so a bad value raises before any row reaches the server, as before.
//! What has no array form here (SQLite, output and table-valued parameters, timestamps through
//! FreeTDS) goes the general way: every row to `ParamValue`s (`Statement::execute_many`).

use super::execute_rows::ParamRow;
use crate::backend::{Backend, Dbms, Driver};
use crate::params::{
    ArrayColumn, Misfit, ParamKind as Kind, ParamValue, Put, REQUEST_BYTES, widen,
};
use crate::py::compat::{check_fast_decimal, check_fast_value};
use crate::py::params::to_param;
use crate::py::types::{binary, bit, decimal, float, int, temporal, text};
use pyo3::prelude::*;

/// A family's writer of its exact Python type into a cell (`None`: not that type).
type Encoder = fn(&Bound<'_, PyAny>, &mut ArrayColumn) -> Option<Put>;

/// The arrays of one `executemany`, or `None`: the general way must take these rows.
pub(super) type Arrays = Option<Vec<Vec<ArrayColumn>>>;

fn no_encoder(_: &Bound<'_, PyAny>, _: &mut ArrayColumn) -> Option<Put> {
    None
}

/// The encoder of a column of `kind`: its family's exact Python type.
fn encoder(kind: Kind) -> Encoder {
    match kind {
        Kind::Int => int::param_cell,
        Kind::Float => float::param_cell,
        Kind::Bool => bit::param_cell,
        Kind::Text => text::param_cell,
        Kind::Bytes => binary::param_cell,
        Kind::Decimal => decimal::param_cell,
        Kind::Date | Kind::DateText | Kind::Time | Kind::Timestamp | Kind::TimestampText => {
            temporal::param_cell
        }
        _ => no_encoder,
    }
}

enum Fail {
    Misfit(Misfit),
    /// No array form: the general way.
    General,
    Py(PyErr),
}

impl From<PyErr> for Fail {
    fn from(e: PyErr) -> Fail {
        Fail::Py(e)
    }
}

/// What every array of one `executemany` shares.
struct Plan {
    backend: Backend,
    /// What each row adds to a request besides its values (`params::request_end`'s estimate).
    row_overhead: usize,
    /// pyodbc's `fast_executemany` checks are on.
    fast: bool,
}

/// The array being filled: rows `start..` of the call's rows.
struct Filling {
    start: usize,
    /// The rows its columns have room for.
    capacity: usize,
    columns: Vec<ArrayColumn>,
    encoders: Vec<Encoder>,
    /// What a row adds to a request besides its variable-width values (`sizes`).
    row_bytes: usize,
    /// The columns whose cells vary in width.
    varying: Vec<usize>,
}

impl Filling {
    /// An empty array for rows `start..`, of at most `left` rows.
    fn new(plan: &Plan, start: usize, left: usize, kinds: &[Kind]) -> Filling {
        // As many rows as a request takes (or are left), so that the columns never grow.
        let rows = left.min(REQUEST_BYTES / plan.row_overhead + 1);
        Filling {
            start,
            capacity: rows,
            columns: kinds
                .iter()
                .enumerate()
                .map(|(c, &k)| ArrayColumn::new(k, c, plan.backend, rows))
                .collect(),
            encoders: kinds.iter().map(|&k| encoder(k)).collect(),
            row_bytes: 0,
            varying: Vec::new(),
        }
        .sized(plan)
    }

    /// `row_bytes` and `varying` for the columns' kinds (after any of them changed).
    fn sized(mut self, plan: &Plan) -> Filling {
        let fixed = self.columns.iter().filter(|c| c.is_fixed8()).count();
        self.row_bytes = plan.row_overhead + 8 * fixed;
        self.varying = (0..self.columns.len())
            .filter(|&c| !self.columns[c].is_fixed8())
            .collect();
        self
    }

    fn rows(&self) -> usize {
        self.columns.first().map_or(0, ArrayColumn::rows)
    }

    fn request_bytes(&self) -> usize {
        let values: usize = self
            .varying
            .iter()
            .map(|&c| self.columns[c].value_bytes())
            .sum();
        self.rows() * self.row_bytes + values
    }
}

/// Write `rows` (tuples of `width` values) into parameter arrays.
pub(super) fn fill_arrays(
    rows: &[ParamRow<'_>],
    width: usize,
    sql_len: usize,
    backend: Backend,
    fast: bool,
) -> PyResult<Arrays> {
    // sqlite3odbc applies row 0's length indicator to every row of a SQL_C_BINARY array (see
    // `Statement::execute_many`): row by row, the general way.
    // No rows or no markers: the general way says what that does (nothing, or a plain execute).
    if backend.dbms == Dbms::Sqlite || width == 0 || rows.is_empty() {
        return Ok(None);
    }
    let plan = Plan {
        backend,
        row_overhead: 2 * sql_len + 48 * width,
        fast,
    };
    let mut done: Vec<Vec<ArrayColumn>> = Vec::new();
    // The first row decides each column's kind (a None column waits for its first value).
    let mut filling = Filling::new(&plan, 0, rows.len(), &vec![Kind::Null; width]);
    let mut r = 0;
    while r < rows.len() {
        if filling.rows() > 0 && filling.request_bytes() >= REQUEST_BYTES {
            let kinds: Vec<Kind> = filling.columns.iter().map(ArrayColumn::kind).collect();
            let next = Filling::new(&plan, r, rows.len() - r, &kinds);
            done.push(std::mem::replace(&mut filling, next).columns);
        }
        let row = &rows[r];
        // The whole row through the columns' encoders; the loop below takes over from the
        // first cell that did not go in (it writes that cell again: a failed put wrote nothing).
        let mut c = fast_row(row, &mut filling, r, &plan);
        let mut tries = 0;
        while c < width {
            let v = &row.values()[c];
            let put = put_cell(v, filling.encoders[c], &mut filling.columns[c], r, &plan);
            let misfit = match put {
                Ok(()) => {
                    c += 1;
                    tries = 0;
                    continue;
                }
                Err(Fail::Py(e)) => return Err(e),
                Err(Fail::General) => return Ok(None),
                Err(Fail::Misfit(m)) => m,
            };
            tries += 1;
            if tries > 3 {
                return Err(internal(format!(
                    "executemany row {r}, parameter {c}: no parameter array takes the value ({misfit:?})"
                )));
            }
            let current = filling.columns[c].kind();
            let wider = match misfit {
                Misfit::Kind(k) => widen(current, k).filter(|&w| w != current),
                Misfit::Full => None,
            };
            match wider {
                // FreeTDS drops a timestamp's fraction in an array: rows one by one.
                Some(Kind::Timestamp | Kind::TimestampText)
                    if backend.driver == Driver::FreeTds =>
                {
                    return Ok(None);
                }
                Some(w) => {
                    // Rows start..r of this column again, in the wider kind.
                    match rewrite(rows, &filling, c, w, &plan)? {
                        Some(col) => {
                            filling.columns[c] = col;
                            filling.encoders[c] = encoder(w);
                            filling = filling.sized(&plan);
                        }
                        None => return Ok(None),
                    }
                }
                None => {
                    // End the array before row r; the next starts at r, column c anew.
                    let n = r - filling.start;
                    for col in &mut filling.columns[..c] {
                        col.truncate(n);
                    }
                    let mut kinds: Vec<Kind> =
                        filling.columns.iter().map(ArrayColumn::kind).collect();
                    if let Misfit::Kind(_) = misfit {
                        kinds[c] = Kind::Null;
                    }
                    let next = Filling::new(&plan, r, rows.len() - r, &kinds);
                    let ended = std::mem::replace(&mut filling, next);
                    if n > 0 {
                        done.push(ended.columns);
                    }
                    c = 0;
                }
            }
        }
        r += 1;
    }
    if filling.rows() > 0 {
        done.push(filling.columns);
    }
    Ok(Some(done))
}

/// Row `r` into the array's columns; the index of the first cell that did not go in (`width`:
/// every cell went in).
#[inline(always)]
fn fast_row(row: &ParamRow<'_>, filling: &mut Filling, r: usize, plan: &Plan) -> usize {
    let cells = filling.columns.iter_mut().zip(&filling.encoders);
    for (c, ((col, &enc), v)) in cells.zip(row.values()).enumerate() {
        if put_cell(v, enc, col, r, plan).is_err() {
            return c;
        }
    }
    filling.columns.len()
}

/// One value (row `r`) into the next cell of `col`: None, the column's encoder, or the general
/// conversion.
#[inline(always)]
fn put_cell(
    v: &Bound<'_, PyAny>,
    enc: Encoder,
    col: &mut ArrayColumn,
    r: usize,
    plan: &Plan,
) -> Result<(), Fail> {
    if v.is_none() {
        col.push_null();
        return Ok(());
    }
    match enc(v, col) {
        Some(put) => put.map_err(Fail::Misfit),
        None => general(v, r, col, plan),
    }
}

/// A value of no family fast path: the general conversion, with `fast_executemany`'s checks.
#[cold]
#[inline(never)]
fn general(v: &Bound<'_, PyAny>, r: usize, col: &mut ArrayColumn, plan: &Plan) -> Result<(), Fail> {
    let c = col.index();
    if plan.fast {
        check_fast_decimal(v.py(), v, r, c)?;
    }
    let value = to_param(v, c)?;
    if plan.fast {
        check_fast_value(&value, r, c)?;
    }
    if matches!(value, ParamValue::Output(_) | ParamValue::Table(_)) {
        return Err(Fail::General);
    }
    col.push_value(&value).map_err(Fail::Misfit)
}

/// Column `c` of the rows filled so far, written again as a column of `kind`. `None`: a value
/// did not go (never expected: `widen` chose a kind for both).
fn rewrite(
    rows: &[ParamRow<'_>],
    filling: &Filling,
    c: usize,
    kind: Kind,
    plan: &Plan,
) -> PyResult<Option<ArrayColumn>> {
    let n = filling.columns[c].rows();
    let mut col = ArrayColumn::new(kind, c, plan.backend, filling.capacity.max(n));
    let enc = encoder(kind);
    for (i, row) in rows[filling.start..filling.start + n].iter().enumerate() {
        match put_cell(&row.values()[c], enc, &mut col, filling.start + i, plan) {
            Ok(()) => {}
            Err(Fail::Py(e)) => return Err(e),
            Err(_) => return Ok(None),
        }
    }
    Ok(Some(col))
}

fn internal(msg: String) -> PyErr {
    Python::attach(|py| crate::py::errors::to_pyerr(py, crate::Error::Internal(msg)))
}
