//! pyodbc's catalog methods (`tables()`, `columns()`, ...): argument checks and the calls they
//! make. The result set is then read through the cursor's ordinary fetch path.

use crate::catalog::{CatalogCall, SpecialColumns};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Names longer than an SQLSMALLINT length raise ValueError (pyodbc 5.5), before any call.
fn check(args: &[(&str, Option<&str>)]) -> PyResult<()> {
    for (name, value) in args {
        if let Some(v) = *value {
            let units = v.encode_utf16().count();
            if units > i16::MAX as usize {
                return Err(PyValueError::new_err(format!(
                    "{name} is {units} characters long; ODBC catalog arguments are at most {}",
                    i16::MAX
                )));
            }
        }
    }
    Ok(())
}

pub fn tables(
    table: Option<String>,
    catalog: Option<String>,
    schema: Option<String>,
    table_type: Option<String>,
) -> PyResult<CatalogCall> {
    check(&[
        ("table", table.as_deref()),
        ("catalog", catalog.as_deref()),
        ("schema", schema.as_deref()),
        ("tableType", table_type.as_deref()),
    ])?;
    Ok(CatalogCall::Tables {
        catalog,
        schema,
        table,
        table_type,
    })
}

pub fn columns(
    table: Option<String>,
    catalog: Option<String>,
    schema: Option<String>,
    column: Option<String>,
) -> PyResult<CatalogCall> {
    check(&[
        ("table", table.as_deref()),
        ("catalog", catalog.as_deref()),
        ("schema", schema.as_deref()),
        ("column", column.as_deref()),
    ])?;
    Ok(CatalogCall::Columns {
        catalog,
        schema,
        table,
        column,
    })
}

pub fn statistics(
    table: String,
    catalog: Option<String>,
    schema: Option<String>,
    unique: bool,
    quick: bool,
) -> PyResult<CatalogCall> {
    check(&[
        ("table", Some(table.as_str())),
        ("catalog", catalog.as_deref()),
        ("schema", schema.as_deref()),
    ])?;
    Ok(CatalogCall::Statistics {
        catalog,
        schema,
        table,
        unique_only: unique,
        quick,
    })
}

pub fn special_columns(
    kind: SpecialColumns,
    table: String,
    catalog: Option<String>,
    schema: Option<String>,
    nullable: bool,
) -> PyResult<CatalogCall> {
    check(&[
        ("table", Some(table.as_str())),
        ("catalog", catalog.as_deref()),
        ("schema", schema.as_deref()),
    ])?;
    Ok(CatalogCall::SpecialColumns {
        kind,
        catalog,
        schema,
        table,
        nullable,
    })
}

pub fn primary_keys(
    table: String,
    catalog: Option<String>,
    schema: Option<String>,
) -> PyResult<CatalogCall> {
    check(&[
        ("table", Some(table.as_str())),
        ("catalog", catalog.as_deref()),
        ("schema", schema.as_deref()),
    ])?;
    Ok(CatalogCall::PrimaryKeys {
        catalog,
        schema,
        table,
    })
}

#[allow(clippy::too_many_arguments)]
pub fn foreign_keys(
    table: Option<String>,
    catalog: Option<String>,
    schema: Option<String>,
    foreign_table: Option<String>,
    foreign_catalog: Option<String>,
    foreign_schema: Option<String>,
) -> PyResult<CatalogCall> {
    check(&[
        ("table", table.as_deref()),
        ("catalog", catalog.as_deref()),
        ("schema", schema.as_deref()),
        ("foreignTable", foreign_table.as_deref()),
        ("foreignCatalog", foreign_catalog.as_deref()),
        ("foreignSchema", foreign_schema.as_deref()),
    ])?;
    Ok(CatalogCall::ForeignKeys {
        pk_catalog: catalog,
        pk_schema: schema,
        pk_table: table,
        fk_catalog: foreign_catalog,
        fk_schema: foreign_schema,
        fk_table: foreign_table,
    })
}

pub fn procedures(
    procedure: Option<String>,
    catalog: Option<String>,
    schema: Option<String>,
) -> PyResult<CatalogCall> {
    check(&[
        ("procedure", procedure.as_deref()),
        ("catalog", catalog.as_deref()),
        ("schema", schema.as_deref()),
    ])?;
    Ok(CatalogCall::Procedures {
        catalog,
        schema,
        procedure,
    })
}

pub fn procedure_columns(
    procedure: Option<String>,
    catalog: Option<String>,
    schema: Option<String>,
) -> PyResult<CatalogCall> {
    check(&[
        ("procedure", procedure.as_deref()),
        ("catalog", catalog.as_deref()),
        ("schema", schema.as_deref()),
    ])?;
    Ok(CatalogCall::ProcedureColumns {
        catalog,
        schema,
        procedure,
        column: None,
    })
}

pub fn table_privileges(
    table: Option<String>,
    catalog: Option<String>,
    schema: Option<String>,
) -> PyResult<CatalogCall> {
    check(&[
        ("table", table.as_deref()),
        ("catalog", catalog.as_deref()),
        ("schema", schema.as_deref()),
    ])?;
    Ok(CatalogCall::TablePrivileges {
        catalog,
        schema,
        table,
    })
}
