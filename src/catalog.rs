//! ODBC catalog functions (SQLTables, SQLColumns, ...): what was asked, in the engine's terms.
//!
//! A catalog call produces an ordinary result set: the statement plans and fetches it exactly
//! like the result of an execute (same plan, same bound batch, same decoders).

use crate::error::{Error, Result};

/// `SQLSpecialColumns` identifier types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecialColumns {
    /// `SQL_BEST_ROWID`: the columns that identify a row.
    BestRowId,
    /// `SQL_ROWVER`: the columns updated on every change of a row.
    RowVer,
}

/// One catalog request. `None` arguments are passed as NULL pointers (no filter); `Some("")`
/// is an empty string (which for some arguments means "objects without a catalog/schema").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CatalogCall {
    Tables {
        catalog: Option<String>,
        schema: Option<String>,
        table: Option<String>,
        table_type: Option<String>,
    },
    Columns {
        catalog: Option<String>,
        schema: Option<String>,
        table: Option<String>,
        column: Option<String>,
    },
    Statistics {
        catalog: Option<String>,
        schema: Option<String>,
        table: String,
        unique_only: bool,
        quick: bool,
    },
    SpecialColumns {
        kind: SpecialColumns,
        catalog: Option<String>,
        schema: Option<String>,
        table: String,
        nullable: bool,
    },
    PrimaryKeys {
        catalog: Option<String>,
        schema: Option<String>,
        table: String,
    },
    ForeignKeys {
        pk_catalog: Option<String>,
        pk_schema: Option<String>,
        pk_table: Option<String>,
        fk_catalog: Option<String>,
        fk_schema: Option<String>,
        fk_table: Option<String>,
    },
    Procedures {
        catalog: Option<String>,
        schema: Option<String>,
        procedure: Option<String>,
    },
    ProcedureColumns {
        catalog: Option<String>,
        schema: Option<String>,
        procedure: Option<String>,
        column: Option<String>,
    },
    TablePrivileges {
        catalog: Option<String>,
        schema: Option<String>,
        table: Option<String>,
    },
    /// `SQLGetTypeInfo`; 0 (`SQL_ALL_TYPES`) lists every type.
    TypeInfo { sql_type: i16 },
}

impl CatalogCall {
    /// Every text argument the call passes, by the name pyodbc gives it.
    pub fn text_arguments(&self) -> Vec<(&'static str, &str)> {
        let named: Vec<(&'static str, Option<&String>)> = match self {
            CatalogCall::Tables {
                catalog,
                schema,
                table,
                table_type,
            } => vec![
                ("table", table.as_ref()),
                ("catalog", catalog.as_ref()),
                ("schema", schema.as_ref()),
                ("tableType", table_type.as_ref()),
            ],
            CatalogCall::Columns {
                catalog,
                schema,
                table,
                column,
            } => vec![
                ("table", table.as_ref()),
                ("catalog", catalog.as_ref()),
                ("schema", schema.as_ref()),
                ("column", column.as_ref()),
            ],
            CatalogCall::Statistics {
                catalog,
                schema,
                table,
                ..
            }
            | CatalogCall::SpecialColumns {
                catalog,
                schema,
                table,
                ..
            }
            | CatalogCall::PrimaryKeys {
                catalog,
                schema,
                table,
            } => vec![
                ("table", Some(table)),
                ("catalog", catalog.as_ref()),
                ("schema", schema.as_ref()),
            ],
            CatalogCall::ForeignKeys {
                pk_catalog,
                pk_schema,
                pk_table,
                fk_catalog,
                fk_schema,
                fk_table,
            } => vec![
                ("table", pk_table.as_ref()),
                ("catalog", pk_catalog.as_ref()),
                ("schema", pk_schema.as_ref()),
                ("foreignTable", fk_table.as_ref()),
                ("foreignCatalog", fk_catalog.as_ref()),
                ("foreignSchema", fk_schema.as_ref()),
            ],
            CatalogCall::Procedures {
                catalog,
                schema,
                procedure,
            }
            | CatalogCall::ProcedureColumns {
                catalog,
                schema,
                procedure,
                ..
            } => vec![
                ("procedure", procedure.as_ref()),
                ("catalog", catalog.as_ref()),
                ("schema", schema.as_ref()),
            ],
            CatalogCall::TablePrivileges {
                catalog,
                schema,
                table,
            } => vec![
                ("table", table.as_ref()),
                ("catalog", catalog.as_ref()),
                ("schema", schema.as_ref()),
            ],
            CatalogCall::TypeInfo { .. } => vec![],
        };
        named
            .into_iter()
            .filter_map(|(n, v)| Some((n, v?.as_str())))
            .collect()
    }

    /// The ODBC function's name (for error messages).
    pub fn function(&self) -> &'static str {
        match self {
            CatalogCall::Tables { .. } => "SQLTables",
            CatalogCall::Columns { .. } => "SQLColumns",
            CatalogCall::Statistics { .. } => "SQLStatistics",
            CatalogCall::SpecialColumns { .. } => "SQLSpecialColumns",
            CatalogCall::PrimaryKeys { .. } => "SQLPrimaryKeys",
            CatalogCall::ForeignKeys { .. } => "SQLForeignKeys",
            CatalogCall::Procedures { .. } => "SQLProcedures",
            CatalogCall::ProcedureColumns { .. } => "SQLProcedureColumns",
            CatalogCall::TablePrivileges { .. } => "SQLTablePrivileges",
            CatalogCall::TypeInfo { .. } => "SQLGetTypeInfo",
        }
    }
}

/// A catalog argument as the wide call takes it: UTF-16 units and their count, or NULL.
///
/// The length is an SQLSMALLINT: a longer name cannot be passed (65,533 units used to wrap to
/// SQL_NTS (-3) in other drivers' bindings and make the driver read past the buffer), so it is
/// refused here. A NUL inside would end the name early for drivers that look for one.
pub fn wide_argument(name: &str, value: Option<&str>) -> Result<Option<Vec<u16>>> {
    let Some(value) = value else {
        return Ok(None);
    };
    let wide: Vec<u16> = value.encode_utf16().collect();
    if wide.len() > i16::MAX as usize {
        return Err(Error::Programming(format!(
            "the catalog argument {name} is {} UTF-16 units long; ODBC allows at most {}",
            wide.len(),
            i16::MAX
        )));
    }
    if wide.contains(&0) {
        return Err(Error::Programming(format!(
            "the catalog argument {name} contains a NUL character"
        )));
    }
    Ok(Some(wide))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_keep_null_and_refuse_overlong() {
        assert_eq!(wide_argument("table", None).unwrap(), None);
        assert_eq!(wide_argument("table", Some("")).unwrap(), Some(vec![]));
        assert_eq!(
            wide_argument("table", Some("t1")).unwrap(),
            Some(vec![b't' as u16, b'1' as u16])
        );
        assert!(wide_argument("table", Some(&"x".repeat(32_767))).is_ok());
        assert!(wide_argument("table", Some(&"x".repeat(32_768))).is_err());
        assert!(wide_argument("table", Some("a\0b")).is_err());
    }
}
