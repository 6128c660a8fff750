//! Parameters: Python-free values and their column-wise binding (one row for `execute`, a
//! parameter array for `executemany`, sent in one round trip per array).

use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::odbc::Stmt;
use crate::odbc::sys::{CDataType, Len, ParamType, Pointer};
use crate::types::temporal::{Date, Time, Timestamp, TimestampOffset};

mod array;
mod chunks;
mod encode;
mod identifier;
mod kind;
mod markers;
mod output;
mod table;
#[cfg(test)]
mod tests;
mod value;

use encode::{encode_column, fixed_binding};
use kind::{Kind, carried_kind, kind_of, unify};

pub use array::{ArrayColumn, COLUMN_BYTES, Misfit, Put, widen};
pub use chunks::{REQUEST_BYTES, request_end};
pub use identifier::{check_procedure_name, check_table_name};
pub use kind::Kind as ParamKind;
pub use markers::count_markers;
pub use output::{OutputParam, OutputType};
pub use table::TableParam;
pub use value::Value;

/// One parameter value, already converted from the caller's language.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// UTF-16 code units (bound as `SQL_C_WCHAR`, so no code page is involved).
    Text(Vec<u16>),
    Bytes(Vec<u8>),
    /// Plain decimal text (`-123.4500`, no exponent) with its precision and scale.
    Decimal {
        text: String,
        precision: u32,
        scale: u32,
    },
    Date(Date),
    Time(Time),
    Timestamp(Timestamp),
    TimestampOffset(TimestampOffset),
    Guid(u128),
    /// An output or input/output parameter of a procedure call (`execute` only).
    Output(Box<OutputParam>),
    /// A table-valued parameter (SQL Server; `execute` only).
    Table(Box<TableParam>),
    /// A float32 vector (`types/vector/`): native on a `VectorTypeSupport=v1` connection, else
    /// its JSON text.
    Vector(Vec<f32>),
}

/// A `setinputsizes` entry: overrides of the SQL type and size the engine would choose.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InputSize {
    pub sql_type: Option<i16>,
    pub column_size: Option<usize>,
    pub decimal_digits: Option<i16>,
}

/// One bound parameter column: `rows` elements of `element_len` bytes plus indicators.
struct ParamColumn {
    direction: ParamType,
    /// What an output parameter's buffer is read back as (`None` for inputs).
    output: Option<OutputType>,
    c_type: CDataType,
    sql_type: i16,
    column_size: usize,
    decimal_digits: i16,
    element_len: usize,
    data: Vec<u64>,
    indicators: Vec<Len>,
    /// A table-valued parameter's own columns and schema name (`None` for every other kind).
    table: Option<Box<table::TableBinding>>,
}

impl ParamColumn {
    fn data_bytes(&self) -> &[u8] {
        // SAFETY: a u64 buffer viewed as bytes: same memory, u8 has no alignment requirement.
        unsafe { std::slice::from_raw_parts(self.data.as_ptr().cast::<u8>(), self.data.len() * 8) }
    }

    fn data_bytes_mut(&mut self) -> &mut [u8] {
        let len = self.data.len() * 8;
        // SAFETY: a u64 buffer viewed as bytes: same memory, u8 has no alignment requirement.
        unsafe { std::slice::from_raw_parts_mut(self.data.as_mut_ptr().cast::<u8>(), len) }
    }
}

/// Parameters ready to bind: column-wise arrays of `rows` rows.
pub struct BoundParams {
    columns: Vec<ParamColumn>,
    rows: usize,
}

impl BoundParams {
    /// Build the binding for `rows` (each row one value per marker). Returns `Ok(None)` when a
    /// column mixes values no single binding can carry (e.g. text and integers); the caller then
    /// executes row by row.
    pub fn build(
        rows: &[Vec<ParamValue>],
        sizes: &[InputSize],
        backend: impl Into<Backend>,
    ) -> Result<Option<BoundParams>> {
        let backend = backend.into();
        let n_rows = rows.len();
        let n_cols = rows.first().map_or(0, |r| r.len());
        if let Some(bad) = rows.iter().position(|r| r.len() != n_cols) {
            return Err(Error::Programming(format!(
                "row {bad} of the parameter sequence has {} values; row 0 has {n_cols}",
                rows[bad].len()
            )));
        }
        let has_output = |r: &Vec<ParamValue>| r.iter().any(|v| matches!(v, ParamValue::Output(_)));
        if n_rows > 1 && rows.iter().any(has_output) {
            return Err(Error::Programming(
                "output parameters are supported by execute (one parameter row), not executemany"
                    .into(),
            ));
        }
        let has_table = |r: &Vec<ParamValue>| r.iter().any(|v| matches!(v, ParamValue::Table(_)));
        if n_rows > 1 && rows.iter().any(has_table) {
            return Err(Error::Programming(
                "table-valued parameters are supported by execute (one parameter row), not executemany"
                    .into(),
            ));
        }
        let mut columns = Vec::with_capacity(n_cols);
        for c in 0..n_cols {
            if let (1, ParamValue::Output(out)) = (n_rows, &rows[0][c]) {
                columns.push(output::encode(out, c, backend)?);
                continue;
            }
            if let (1, ParamValue::Table(t)) = (n_rows, &rows[0][c]) {
                columns.push(table::encode(t, c, backend)?);
                continue;
            }
            let mut kind = Kind::Null;
            for row in rows {
                match unify(kind, kind_of(&row[c])) {
                    Some(k) => kind = k,
                    None => return Ok(None),
                }
            }
            let kind = carried_kind(kind, rows.iter().map(|r| &r[c]), backend);
            let size = sizes.get(c).copied().unwrap_or_default();
            columns.push(encode_column(rows, c, kind, size, backend)?);
        }
        Ok(Some(BoundParams {
            columns,
            rows: n_rows,
        }))
    }

    /// The binding of columns filled value by value (`executemany`'s arrays), all of the same
    /// number of rows, with this call's `setinputsizes`.
    pub fn from_columns(columns: Vec<ArrayColumn>, sizes: &[InputSize]) -> Result<BoundParams> {
        let rows = columns.first().map_or(0, ArrayColumn::rows);
        if columns.iter().any(|c| c.rows() != rows) {
            return Err(Error::Internal(
                "parameter columns of different lengths".into(),
            ));
        }
        let columns = columns
            .into_iter()
            .enumerate()
            .map(|(c, col)| encode::finish(col, sizes.get(c).copied().unwrap_or_default()))
            .collect::<Result<Vec<_>>>()?;
        Ok(BoundParams { columns, rows })
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// Parameter numbers of table-valued parameters without a type name: the statement must be
    /// prepared and the parameter described so the driver learns the name.
    pub fn undescribed_tables(&self) -> Vec<u16> {
        self.columns
            .iter()
            .enumerate()
            .filter(|(_, c)| c.table.as_ref().is_some_and(|t| t.needs_describe))
            // `bind_columns` refuses a parameter past 65535, so every number here fits.
            .filter_map(|(i, _)| u16::try_from(i + 1).ok())
            .collect()
    }

    pub fn has_outputs(&self) -> bool {
        self.columns.iter().any(|c| c.output.is_some())
    }

    /// The values the driver stored in the output parameters, as (parameter index, value).
    /// Only meaningful once every result of the execution has been read.
    pub fn read_outputs(&self) -> Result<Vec<(usize, ParamValue)>> {
        self.columns
            .iter()
            .enumerate()
            .filter(|(_, c)| c.output.is_some())
            .map(|(i, c)| Ok((i, output::decode(c, i)?)))
            .collect()
    }

    /// Bind every column to `stmt`.
    ///
    /// # Safety
    /// `self` must stay alive and unmodified until the statement has executed; the statement's
    /// parameter bindings must be reset (or the statement freed) before `self` is dropped.
    pub unsafe fn bind(&mut self, stmt: &mut Stmt) -> Result<()> {
        stmt.set_paramset_size(self.rows.max(1))?;
        // SAFETY: forwarded contract.
        unsafe { bind_columns(&mut self.columns, stmt) }
    }
}

/// Bind `columns` as parameters 1..=n of `stmt` (or of the table-valued parameter in focus).
///
/// # Safety
/// As [`BoundParams::bind`]: the columns' memory must outlive the statement's use of it.
unsafe fn bind_columns(columns: &mut [ParamColumn], stmt: &mut Stmt) -> Result<()> {
    for (i, col) in columns.iter_mut().enumerate() {
        let number = u16::try_from(i + 1).map_err(|_| {
            Error::Programming(format!(
                "parameter {}: ODBC numbers parameters up to 65535",
                i + 1
            ))
        })?;
        crate::types::vector::point_params(col.sql_type, col.element_len, col.data_bytes_mut());
        // A table-valued parameter without a type name binds no value pointer (the driver
        // has the name from SQLDescribeParam).
        let value = match &col.table {
            Some(t) if t.needs_describe => std::ptr::null_mut(),
            _ => col.data.as_mut_ptr() as Pointer,
        };
        // SAFETY: forwarded contract; data covers rows * element_len bytes, and indicators
        // either rows entries or none: an empty array binds a null indicator pointer, which
        // ODBC allows for input cells of a fixed length that are never NULL (a dense column).
        unsafe {
            stmt.bind_parameter(
                number,
                col.direction,
                col.c_type,
                col.sql_type,
                col.column_size,
                col.decimal_digits,
                value,
                crate::checked::alloc_len(col.element_len),
                // Empty: a column with no NULL, bound without indicators (`encode::finish`).
                if col.indicators.is_empty() {
                    std::ptr::null_mut()
                } else {
                    col.indicators.as_mut_ptr()
                },
            )?
        };
        if let Some(t) = col.table.as_mut() {
            // SAFETY: forwarded contract (the binding lives in `col`, kept by the caller).
            unsafe { table::bind_table(t, number, stmt)? };
        }
    }
    Ok(())
}
