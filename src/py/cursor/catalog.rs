//! ODBC catalog functions on a cursor (pyodbc's `tables()`, `columns()`, ...): each runs one
//! catalog call whose result is read through the normal fetch plan.

use super::*;
use pyo3::prelude::*;

impl Cursor {
    /// Run a catalog function; the cursor is then on its result set.
    pub(super) fn run_catalog<'py>(
        slf: &Bound<'py, Self>,
        call: crate::catalog::CatalogCall,
    ) -> PyResult<Bound<'py, Self>> {
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
            crate::py::catalog::tables(table, catalog, schema, tableType)?,
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
            crate::py::catalog::columns(table, catalog, schema, column)?,
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
            crate::py::catalog::statistics(table, catalog, schema, unique, quick)?,
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
        let call = crate::py::catalog::special_columns(
            crate::catalog::SpecialColumns::BestRowId,
            table,
            catalog,
            schema,
            nullable,
        )?;
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
        let call = crate::py::catalog::special_columns(
            crate::catalog::SpecialColumns::RowVer,
            table,
            catalog,
            schema,
            nullable,
        )?;
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
            crate::py::catalog::primary_keys(table, catalog, schema)?,
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
        let call = crate::py::catalog::foreign_keys(
            table,
            catalog,
            schema,
            foreignTable,
            foreignCatalog,
            foreignSchema,
        )?;
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
            crate::py::catalog::procedures(procedure, catalog, schema)?,
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
            crate::py::catalog::procedure_columns(procedure, catalog, schema)?,
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
            crate::py::catalog::table_privileges(table, catalog, schema)?,
        )
    }

    /// SQLGetTypeInfo: the data types the data source supports (all, or one SQL type).
    #[pyo3(name = "getTypeInfo", signature = (sqlType = None))]
    #[allow(non_snake_case)]
    fn get_type_info<'py>(
        slf: &Bound<'py, Self>,
        sqlType: Option<i16>,
    ) -> PyResult<Bound<'py, Self>> {
        let call = crate::catalog::CatalogCall::TypeInfo {
            sql_type: sqlType.unwrap_or(0),
        };
        Self::run_catalog(slf, call)
    }
}
