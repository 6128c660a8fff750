//! ODBC catalog functions on a cursor (pyodbc's `tables()`, `columns()`, ...): each runs one
//! catalog call whose result is read through the normal fetch plan.

use super::*;
use crate::catalog::CatalogCall;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

impl Cursor {
    /// Run a catalog function; the cursor is then on its result set.
    pub(super) fn run_catalog<'py>(
        slf: &Bound<'py, Self>,
        call: CatalogCall,
    ) -> PyResult<Bound<'py, Self>> {
        // pyodbc 5.5 raises ValueError, before any ODBC call, for a name longer than an
        // SQLSMALLINT length (the engine also refuses one when it builds the call's arguments).
        for (name, value) in call.text_arguments() {
            let units = value.encode_utf16().count();
            if units > i16::MAX as usize {
                return Err(PyValueError::new_err(format!(
                    "{name} is {units} characters long; ODBC catalog arguments are at most {}",
                    i16::MAX
                )));
            }
        }
        slf.get()
            .run(slf.py(), Vec::new(), true, move |stmt, _sizes| {
                stmt.catalog(&call)
            })?;
        Ok(slf.clone())
    }
}

#[pymethods]
impl Cursor {
    /// SQLTables: tables (and views, ...) matching the patterns.
    #[pyo3(signature = (table = None, catalog = None, schema = None, tableType = None))]
    #[allow(non_snake_case)]
    fn tables<'py>(
        slf: &Bound<'py, Self>,
        table: Option<String>,
        catalog: Option<String>,
        schema: Option<String>,
        tableType: Option<String>,
    ) -> PyResult<Bound<'py, Self>> {
        Self::run_catalog(
            slf,
            CatalogCall::Tables {
                catalog,
                schema,
                table,
                table_type: tableType,
            },
        )
    }

    /// SQLColumns: the columns of matching tables.
    #[pyo3(signature = (table = None, catalog = None, schema = None, column = None))]
    fn columns<'py>(
        slf: &Bound<'py, Self>,
        table: Option<String>,
        catalog: Option<String>,
        schema: Option<String>,
        column: Option<String>,
    ) -> PyResult<Bound<'py, Self>> {
        Self::run_catalog(
            slf,
            CatalogCall::Columns {
                catalog,
                schema,
                table,
                column,
            },
        )
    }

    /// SQLStatistics: a table's statistics and indexes.
    #[pyo3(signature = (table, catalog = None, schema = None, unique = false, quick = true))]
    fn statistics<'py>(
        slf: &Bound<'py, Self>,
        table: String,
        catalog: Option<String>,
        schema: Option<String>,
        unique: bool,
        quick: bool,
    ) -> PyResult<Bound<'py, Self>> {
        Self::run_catalog(
            slf,
            CatalogCall::Statistics {
                catalog,
                schema,
                table,
                unique_only: unique,
                quick,
            },
        )
    }

    /// SQLSpecialColumns(SQL_BEST_ROWID): the columns that identify a row.
    #[pyo3(name = "rowIdColumns", signature = (table, catalog = None, schema = None, nullable = true))]
    fn row_id_columns<'py>(
        slf: &Bound<'py, Self>,
        table: String,
        catalog: Option<String>,
        schema: Option<String>,
        nullable: bool,
    ) -> PyResult<Bound<'py, Self>> {
        let call = CatalogCall::SpecialColumns {
            kind: crate::catalog::SpecialColumns::BestRowId,
            catalog,
            schema,
            table,
            nullable,
        };
        Self::run_catalog(slf, call)
    }

    /// SQLSpecialColumns(SQL_ROWVER): the columns updated whenever a row changes.
    #[pyo3(name = "rowVerColumns", signature = (table, catalog = None, schema = None, nullable = true))]
    fn row_ver_columns<'py>(
        slf: &Bound<'py, Self>,
        table: String,
        catalog: Option<String>,
        schema: Option<String>,
        nullable: bool,
    ) -> PyResult<Bound<'py, Self>> {
        let call = CatalogCall::SpecialColumns {
            kind: crate::catalog::SpecialColumns::RowVer,
            catalog,
            schema,
            table,
            nullable,
        };
        Self::run_catalog(slf, call)
    }

    /// SQLPrimaryKeys: a table's primary key columns.
    #[pyo3(name = "primaryKeys", signature = (table, catalog = None, schema = None))]
    fn primary_keys<'py>(
        slf: &Bound<'py, Self>,
        table: String,
        catalog: Option<String>,
        schema: Option<String>,
    ) -> PyResult<Bound<'py, Self>> {
        Self::run_catalog(
            slf,
            CatalogCall::PrimaryKeys {
                catalog,
                schema,
                table,
            },
        )
    }

    /// SQLForeignKeys: foreign keys referring to `table`, or those of `foreignTable`.
    #[pyo3(name = "foreignKeys", signature = (table = None, catalog = None, schema = None, foreignTable = None, foreignCatalog = None, foreignSchema = None))]
    #[allow(non_snake_case, clippy::too_many_arguments)]
    fn foreign_keys<'py>(
        slf: &Bound<'py, Self>,
        table: Option<String>,
        catalog: Option<String>,
        schema: Option<String>,
        foreignTable: Option<String>,
        foreignCatalog: Option<String>,
        foreignSchema: Option<String>,
    ) -> PyResult<Bound<'py, Self>> {
        let call = CatalogCall::ForeignKeys {
            pk_catalog: catalog,
            pk_schema: schema,
            pk_table: table,
            fk_catalog: foreignCatalog,
            fk_schema: foreignSchema,
            fk_table: foreignTable,
        };
        Self::run_catalog(slf, call)
    }

    /// SQLProcedures: stored procedures matching the patterns.
    #[pyo3(signature = (procedure = None, catalog = None, schema = None))]
    fn procedures<'py>(
        slf: &Bound<'py, Self>,
        procedure: Option<String>,
        catalog: Option<String>,
        schema: Option<String>,
    ) -> PyResult<Bound<'py, Self>> {
        Self::run_catalog(
            slf,
            CatalogCall::Procedures {
                catalog,
                schema,
                procedure,
            },
        )
    }

    /// SQLProcedureColumns: the parameters and result columns of matching procedures.
    #[pyo3(name = "procedureColumns", signature = (procedure = None, catalog = None, schema = None))]
    fn procedure_columns<'py>(
        slf: &Bound<'py, Self>,
        procedure: Option<String>,
        catalog: Option<String>,
        schema: Option<String>,
    ) -> PyResult<Bound<'py, Self>> {
        Self::run_catalog(
            slf,
            CatalogCall::ProcedureColumns {
                catalog,
                schema,
                procedure,
                column: None,
            },
        )
    }

    /// SQLTablePrivileges: the privileges on matching tables.
    #[pyo3(name = "tablePrivileges", signature = (table = None, catalog = None, schema = None))]
    fn table_privileges<'py>(
        slf: &Bound<'py, Self>,
        table: Option<String>,
        catalog: Option<String>,
        schema: Option<String>,
    ) -> PyResult<Bound<'py, Self>> {
        Self::run_catalog(
            slf,
            CatalogCall::TablePrivileges {
                catalog,
                schema,
                table,
            },
        )
    }

    /// SQLGetTypeInfo: the data types the data source supports (all, or one SQL type).
    #[pyo3(name = "getTypeInfo", signature = (sqlType = None))]
    #[allow(non_snake_case)]
    fn get_type_info<'py>(
        slf: &Bound<'py, Self>,
        sqlType: Option<i16>,
    ) -> PyResult<Bound<'py, Self>> {
        let call = CatalogCall::TypeInfo {
            sql_type: sqlType.unwrap_or(0),
        };
        Self::run_catalog(slf, call)
    }
}
