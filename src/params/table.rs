//! Table-valued parameters (SQL Server, ODBC Driver 18): the rows of a user-defined table type
//! sent as one parameter.
//!
//! Bound the way the driver documents for arrays: the parameter itself is `SQL_SS_TABLE` with
//! `SQL_C_DEFAULT`, its column size and indicator the number of rows and its value the type name
//! (UTF-16); then, with `SQL_SOPT_SS_PARAM_FOCUS` on that parameter, each of its columns is bound
//! as a column-wise array of that many rows, encoded exactly like an `executemany` column; the
//! focus goes back to 0. A parameter without a type name is described (`SQLDescribeParam` after
//! `SQLPrepare`), which fills the type name in from the procedure's signature; an empty table is
//! sent with the indicator `SQL_DEFAULT_PARAM` and no columns.

use super::{BoundParams, ParamColumn, ParamValue, bind_columns};
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::odbc::Stmt;
use crate::odbc::sys::{CDataType, Len, ParamType};

/// SQL Server's driver-specific codes (msodbcsql.h).
const SQL_SS_TABLE: i16 = -153;
const SQL_SOPT_SS_PARAM_FOCUS: i32 = 1236;
const SQL_CA_SS_SCHEMA_NAME: i16 = 1226;
/// `SQL_DEFAULT_PARAM`: for a table-valued parameter, "no rows".
const DEFAULT_PARAM: Len = -5;

/// A table-valued parameter: its type (UTF-16; empty when the driver is to describe it) and
/// rows, each one value per column of the table type.
#[derive(Debug, Clone, PartialEq)]
pub struct TableParam {
    pub type_name: Vec<u16>,
    pub schema: Vec<u16>,
    pub rows: Vec<Vec<ParamValue>>,
}

/// What binding a table-valued parameter needs beyond its own `ParamColumn`.
pub(super) struct TableBinding {
    /// No type name given: the statement is prepared and the parameter described first.
    pub(super) needs_describe: bool,
    /// NUL-terminated schema name, or empty.
    schema: Vec<u16>,
    /// The table's columns as parameter arrays of its rows (`None` for an empty table).
    columns: Option<BoundParams>,
}

/// The `ParamColumn` of parameter `index`, a table-valued parameter.
pub(super) fn encode(t: &TableParam, index: usize, backend: Backend) -> Result<ParamColumn> {
    if backend.dbms != crate::backend::Dbms::SqlServer {
        return Err(Error::NotSupported(format!(
            "parameter {index} is a list or tuple: a table-valued parameter, which only SQL \
             Server has (send its values as separate parameters)"
        )));
    }
    let n_rows = t.rows.len();
    let width = t.rows.first().map_or(0, Vec::len);
    if let Some(r) = t.rows.iter().position(|row| row.len() != width) {
        return Err(Error::Programming(format!(
            "table-valued parameter {index}: every row must be the same size (row {r} has {} \
             values, row 0 has {width})",
            t.rows[r].len()
        )));
    }
    if n_rows > 0 && width == 0 {
        return Err(Error::Programming(format!(
            "table-valued parameter {index}: its rows have no values (every row must be the same \
             size as the table type's columns)"
        )));
    }
    let nested = t
        .rows
        .iter()
        .flatten()
        .any(|v| matches!(v, ParamValue::Table(_) | ParamValue::Output(_)));
    if nested {
        return Err(Error::Programming(format!(
            "table-valued parameter {index}: a cell cannot be a table or an output parameter"
        )));
    }
    let columns = if n_rows == 0 {
        None
    } else {
        Some(BoundParams::build(&t.rows, &[], backend)?.ok_or_else(|| {
            Error::Programming(format!(
                "table-valued parameter {index}: a column mixes values no single type can carry"
            ))
        })?)
    };
    // The value buffer is the type name, NUL-terminated; its length in bytes without the NUL.
    let name: Vec<u8> = t
        .type_name
        .iter()
        .chain(&[0])
        .flat_map(|u| u.to_ne_bytes())
        .collect();
    let mut schema = t.schema.clone();
    if !schema.is_empty() {
        schema.push(0);
    }
    let mut col = ParamColumn {
        direction: ParamType::Input,
        output: None,
        c_type: CDataType::Default,
        sql_type: SQL_SS_TABLE,
        column_size: n_rows,
        decimal_digits: 0,
        element_len: t.type_name.len() * 2,
        data: vec![0u64; name.len().div_ceil(8)],
        indicators: vec![if n_rows == 0 {
            DEFAULT_PARAM
        } else {
            crate::checked::alloc_len(n_rows)
        }],
        table: Some(Box::new(TableBinding {
            needs_describe: t.type_name.is_empty(),
            schema,
            columns,
        })),
    };
    col.data_bytes_mut()[..name.len()].copy_from_slice(&name);
    Ok(col)
}

/// After parameter `number` itself is bound: its schema name and its columns.
///
/// # Safety
/// As [`BoundParams::bind`]: `t` must outlive the statement's use of its buffers.
pub(super) unsafe fn bind_table(t: &mut TableBinding, number: u16, stmt: &mut Stmt) -> Result<()> {
    if !t.schema.is_empty() {
        let text = &t.schema[..t.schema.len() - 1];
        // SAFETY: the schema text lives in `t`, kept until the statement is done (contract).
        unsafe { stmt.set_ipd_text_field(number, SQL_CA_SS_SCHEMA_NAME, text)? };
    }
    let Some(columns) = t.columns.as_mut() else {
        return Ok(());
    };
    stmt.set_int_attr(SQL_SOPT_SS_PARAM_FOCUS, number as usize)?;
    // SAFETY: forwarded contract.
    let bound = unsafe { bind_columns(&mut columns.columns, stmt) };
    // The focus goes back to the statement's own parameters whatever happened.
    let reset = stmt.set_int_attr(SQL_SOPT_SS_PARAM_FOCUS, 0);
    bound.and(reset)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Dbms;

    fn table(rows: Vec<Vec<ParamValue>>, name: &str) -> TableParam {
        TableParam {
            type_name: name.encode_utf16().collect(),
            schema: Vec::new(),
            rows,
        }
    }

    #[test]
    fn rows_of_different_sizes_are_a_programming_error() {
        let t = table(vec![vec![ParamValue::Int(1)], vec![]], "tt");
        match encode(&t, 0, Dbms::SqlServer.into()) {
            Err(Error::Programming(m)) => assert!(m.contains("same size"), "{m}"),
            other => panic!("expected a programming error, got {:?}", other.map(|_| ())),
        }
    }

    #[test]
    fn an_empty_table_is_sent_as_default_param_with_no_columns() {
        let col = encode(&table(vec![], ""), 0, Dbms::SqlServer.into()).unwrap();
        assert_eq!(col.indicators, vec![DEFAULT_PARAM]);
        let binding = col.table.as_ref().unwrap();
        assert!(binding.needs_describe && binding.columns.is_none());
    }

    #[test]
    fn a_named_table_carries_its_name_and_its_columns_as_arrays() {
        let rows = vec![
            vec![
                ParamValue::Int(1),
                ParamValue::Text("a".encode_utf16().collect()),
            ],
            vec![
                ParamValue::Null,
                ParamValue::Text("bc".encode_utf16().collect()),
            ],
        ];
        let col = encode(&table(rows, "tt"), 0, Dbms::SqlServer.into()).unwrap();
        assert_eq!(
            (col.sql_type, col.column_size, col.indicators[0]),
            (SQL_SS_TABLE, 2, 2)
        );
        assert_eq!(&col.data_bytes()[..6], &[b't', 0, b't', 0, 0, 0]);
        let binding = col.table.as_ref().unwrap();
        assert!(!binding.needs_describe);
        assert_eq!(binding.columns.as_ref().unwrap().columns.len(), 2);
    }

    #[test]
    fn a_table_in_executemany_is_refused() {
        let row = || vec![ParamValue::Table(Box::new(table(vec![], "tt")))];
        match BoundParams::build(&[row(), row()], &[], Dbms::SqlServer) {
            Err(Error::Programming(m)) => assert!(m.contains("executemany"), "{m}"),
            other => panic!("expected a programming error, got {:?}", other.map(|_| ())),
        }
    }
}
