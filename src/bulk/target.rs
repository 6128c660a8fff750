//! The destination of a bulk load: the table's columns as the server describes them, and which
//! source field feeds each (`column_mappings`).

use super::form::Form;
use crate::backend::Dbms;
use crate::error::{Error, Result};
use crate::odbc::sys::{CDataType, Len, NULL_DATA};
use crate::odbc::{ColumnDescription, Dbc, Outcome, Stmt};
use crate::params::check_table_name;

/// `SQL_DESC_AUTO_UNIQUE_VALUE`: an identity column.
const AUTO_UNIQUE_VALUE: u16 = 11;

/// One column of the destination table.
#[derive(Debug, Clone)]
pub struct TableColumn {
    pub desc: ColumnDescription,
    pub identity: bool,
    /// `Some(true)`: the column has a DEFAULT, which a NULL takes unless `keep_nulls`;
    /// `None`: not known (not SQL Server, or its catalog did not answer).
    pub has_default: Option<bool>,
}

/// The destination table, described once per load.
#[derive(Debug, Clone)]
pub struct Table {
    pub name: String,
    pub columns: Vec<TableColumn>,
}

/// How source fields map to destination columns (mssql-python's `column_mappings`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mapping {
    /// Field i feeds the i-th column (identity columns skipped unless `keep_identity`).
    Position,
    /// Field i feeds the column named `names[i]`.
    Names(Vec<String>),
    /// `(field index, column name)` pairs: fields may be skipped or reordered.
    Pairs(Vec<(usize, String)>),
}

/// A destination column that receives values: its number in the table (1-based, what
/// `bcp_bind` takes), the source field, and the form it is sent in.
#[derive(Debug, Clone)]
pub struct Fed {
    pub number: u32,
    pub field: usize,
    pub name: String,
    pub form: Form,
    /// NULL cannot go in: NOT NULL, and no DEFAULT to take instead (or `keep_nulls`).
    pub refuses_null: bool,
    /// NULL is refused because this load's INSERTs would store it where a bulk copy takes the
    /// column's DEFAULT (parameter arrays into SQL Server; see `ArrayLoad::begin`).
    pub default_lost: bool,
}

impl Table {
    /// Describe `name` through a statement on `dbc` (`SELECT TOP 0 *`), and read which columns
    /// have defaults from SQL Server's catalog.
    pub fn describe(dbc: &Dbc, dbms: Dbms, name: &str) -> Result<Table> {
        check_table_name(name)?;
        let mut stmt = Stmt::new(dbc)?;
        let probe = match dbms {
            Dbms::SqlServer => format!("SELECT TOP 0 * FROM {name}"),
            _ => format!("SELECT * FROM {name} WHERE 1 = 0"),
        };
        stmt.exec_direct(&probe).map_err(|e| Error::Bulk {
            context: format!("bulk load: the table {name} cannot be read"),
            inner: Box::new(e),
        })?;
        let n = stmt.num_result_cols()?;
        let mut columns = Vec::with_capacity(usize::from(n));
        for col in 1..=n {
            let desc = stmt.describe_col(col)?;
            let identity = dbms == Dbms::SqlServer
                && stmt.col_attr_int(col, AUTO_UNIQUE_VALUE).unwrap_or(0) != 0;
            columns.push(TableColumn {
                desc,
                identity,
                has_default: None,
            });
        }
        stmt.close_cursor()?;
        if dbms == Dbms::SqlServer {
            // The catalog, not the result's metadata: neither driver reported
            // SQL_DESC_AUTO_UNIQUE_VALUE for an identity column read through the peer.
            if let Ok(identity) = catalog_names(&mut stmt, name, "is_identity = 1") {
                for c in &mut columns {
                    c.identity |= identity.contains(&c.desc.name);
                }
            }
            if let Ok(defaulted) = catalog_names(&mut stmt, name, "default_object_id <> 0") {
                for c in &mut columns {
                    c.has_default = Some(defaulted.contains(&c.desc.name));
                }
            }
        }
        Ok(Table {
            name: name.to_owned(),
            columns,
        })
    }

    /// The columns that receive values, in table order, for `fields` source fields.
    pub fn feed(
        &self,
        mapping: &Mapping,
        fields: Option<usize>,
        keep_identity: bool,
        keep_nulls: bool,
    ) -> Result<Vec<Fed>> {
        let find = |name: &str| -> Result<usize> {
            self.columns
                .iter()
                .position(|c| c.desc.name == name)
                .or_else(|| {
                    self.columns
                        .iter()
                        .position(|c| c.desc.name.eq_ignore_ascii_case(name))
                })
                .ok_or_else(|| {
                    Error::Programming(format!(
                        "bulk load: the table {} has no column {name:?}",
                        self.name
                    ))
                })
        };
        let pairs: Vec<(usize, usize)> = match mapping {
            Mapping::Position => self
                .columns
                .iter()
                .enumerate()
                .filter(|(_, c)| keep_identity || !c.identity)
                .enumerate()
                .map(|(field, (col, _))| (field, col))
                .take(fields.unwrap_or(usize::MAX))
                .collect(),
            Mapping::Names(names) => names
                .iter()
                .enumerate()
                .map(|(f, n)| Ok((f, find(n)?)))
                .collect::<Result<_>>()?,
            Mapping::Pairs(pairs) => pairs
                .iter()
                .map(|(f, n)| Ok((*f, find(n)?)))
                .collect::<Result<_>>()?,
        };
        if let Some(fields) = fields {
            if let Some((f, _)) = pairs.iter().find(|(f, _)| *f >= fields) {
                return Err(Error::Programming(format!(
                    "bulk load: column mapping names source field {f}, but the rows have {fields} fields"
                )));
            }
            if matches!(mapping, Mapping::Position) && fields > pairs.len() {
                return Err(Error::Programming(format!(
                    "bulk load: the rows have {fields} fields, but the table {} takes {}{}",
                    self.name,
                    pairs.len(),
                    if keep_identity {
                        ""
                    } else {
                        " (identity columns are left to the server unless keep_identity=True)"
                    }
                )));
            }
        }
        let mut fed = Vec::with_capacity(pairs.len());
        for (field, col) in pairs {
            let c = &self.columns[col];
            if fed.iter().any(|f: &Fed| f.number as usize == col + 1) {
                return Err(Error::Programming(format!(
                    "bulk load: column {:?} is mapped twice",
                    c.desc.name
                )));
            }
            if c.identity && !keep_identity {
                return Err(Error::Programming(format!(
                    "bulk load: column {:?} is an identity column; pass keep_identity=True to send its values",
                    c.desc.name
                )));
            }
            let not_null = c.desc.nullable == Some(false) && !c.identity;
            fed.push(Fed {
                number: u32::try_from(col + 1)
                    .map_err(|_| Error::Internal("column number".into()))?,
                field,
                name: c.desc.name.clone(),
                form: Form::of(&c.desc)?,
                refuses_null: not_null && (keep_nulls || c.has_default == Some(false)),
                default_lost: false,
            });
        }
        fed.sort_by_key(|f| f.number);
        Ok(fed)
    }
}

/// Names of the columns of `table` for which `condition` holds, from `sys.columns`.
fn catalog_names(stmt: &mut Stmt, table: &str, condition: &str) -> Result<Vec<String>> {
    let temp = table.starts_with('#') || table.starts_with("[#");
    let sql = format!(
        "SELECT name FROM {}sys.columns WHERE object_id = OBJECT_ID(N'{}{}') AND {condition}",
        if temp { "tempdb." } else { "" },
        if temp { "tempdb.." } else { "" },
        table.replace('\'', "''")
    );
    stmt.exec_direct(&sql)?;
    let names = read_text_column(stmt)?;
    stmt.close_cursor()?;
    Ok(names)
}

/// Every row's first column as text (a short catalog answer).
fn read_text_column(stmt: &mut Stmt) -> Result<Vec<String>> {
    let mut out = Vec::new();
    loop {
        match stmt.fetch_raw() {
            Outcome::Success | Outcome::SuccessWithInfo => {}
            Outcome::NoData => break,
            _ => return Err(Error::Internal("fetching a catalog answer failed".into())),
        }
        let mut buf = [0u16; 260];
        let mut ind: Len = 0;
        // SAFETY: `buf` is valid for its byte length, which is what is passed.
        unsafe {
            stmt.get_data(
                1,
                CDataType::WChar,
                buf.as_mut_ptr().cast(),
                crate::checked::alloc_len(std::mem::size_of_val(&buf)),
                &mut ind,
            )?
        };
        if ind != NULL_DATA {
            let units = usize::try_from(ind).unwrap_or(0) / 2;
            out.push(String::from_utf16_lossy(&buf[..units.min(259)]));
        }
    }
    Ok(out)
}
