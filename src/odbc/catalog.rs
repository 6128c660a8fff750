//! The ODBC catalog calls on a statement handle (wide entry points).
//!
//! odbc-sys declares only some of them (and types several arguments as enums that cannot carry
//! every value), so the C signatures are declared here with plain integers; unixODBC exports
//! all of them.

use super::call::Outcome;
use super::stmt::Stmt;
use crate::catalog::{CatalogCall, SpecialColumns, wide_argument};
use crate::counters;
use crate::error::Result;
use odbc_api::sys::{HStmt, SqlReturn};
use std::ptr::null;

type Text = *const u16;

unsafe extern "system" {
    fn SQLTablesW(
        h: HStmt,
        c: Text,
        cl: i16,
        s: Text,
        sl: i16,
        t: Text,
        tl: i16,
        ty: Text,
        tyl: i16,
    ) -> SqlReturn;
    fn SQLColumnsW(
        h: HStmt,
        c: Text,
        cl: i16,
        s: Text,
        sl: i16,
        t: Text,
        tl: i16,
        col: Text,
        coll: i16,
    ) -> SqlReturn;
    fn SQLStatisticsW(
        h: HStmt,
        c: Text,
        cl: i16,
        s: Text,
        sl: i16,
        t: Text,
        tl: i16,
        unique: u16,
        reserved: u16,
    ) -> SqlReturn;
    fn SQLSpecialColumnsW(
        h: HStmt,
        identifier: u16,
        c: Text,
        cl: i16,
        s: Text,
        sl: i16,
        t: Text,
        tl: i16,
        scope: u16,
        nullable: u16,
    ) -> SqlReturn;
    fn SQLPrimaryKeysW(h: HStmt, c: Text, cl: i16, s: Text, sl: i16, t: Text, tl: i16)
    -> SqlReturn;
    fn SQLForeignKeysW(
        h: HStmt,
        pc: Text,
        pcl: i16,
        ps: Text,
        psl: i16,
        pt: Text,
        ptl: i16,
        fc: Text,
        fcl: i16,
        fs: Text,
        fsl: i16,
        ft: Text,
        ftl: i16,
    ) -> SqlReturn;
    fn SQLProceduresW(h: HStmt, c: Text, cl: i16, s: Text, sl: i16, p: Text, pl: i16) -> SqlReturn;
    fn SQLProcedureColumnsW(
        h: HStmt,
        c: Text,
        cl: i16,
        s: Text,
        sl: i16,
        p: Text,
        pl: i16,
        col: Text,
        coll: i16,
    ) -> SqlReturn;
    fn SQLTablePrivilegesW(
        h: HStmt,
        c: Text,
        cl: i16,
        s: Text,
        sl: i16,
        t: Text,
        tl: i16,
    ) -> SqlReturn;
    fn SQLGetTypeInfoW(h: HStmt, data_type: i16) -> SqlReturn;
}

// sqlext.h values.
const SQL_BEST_ROWID: u16 = 1;
const SQL_ROWVER: u16 = 2;
/// The scope asked for with SQLSpecialColumns. Microsoft's drivers answer SQL_BEST_ROWID with no
/// rows for any scope but the current row: Driver 18 sends the table name as `N'+'` then
/// (seen on the wire; pyodbc issue 1421, whose rowIdColumns asks for SQL_SCOPE_TRANSACTION and
/// so finds nothing on SQL Server). mssql-python asks for the current row, as here.
const SQL_SCOPE_CURROW: u16 = 0;
const SQL_NO_NULLS: u16 = 0;
const SQL_NULLABLE: u16 = 1;
const SQL_INDEX_UNIQUE: u16 = 0;
const SQL_INDEX_ALL: u16 = 1;
const SQL_QUICK: u16 = 0;
const SQL_ENSURE: u16 = 1;

/// An argument's pointer and length: NULL and 0 for `None`.
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    reason = "the length was checked to fit an i16 by `wide_argument`"
)]
fn arg(wide: &Option<Vec<u16>>) -> (Text, i16) {
    match wide {
        // The length was checked to fit an i16 by `wide_argument`.
        Some(w) => (w.as_ptr(), w.len() as i16),
        None => (null(), 0),
    }
}

impl Stmt {
    /// Run one catalog function; its result set is then read like any other.
    ///
    /// One job, longer than most: one arm per ODBC catalog function, each passing its
    /// arguments to its one `SQL...W` call (no logic of its own to split out).
    pub fn catalog(&mut self, call: &CatalogCall) -> Result<Outcome> {
        let w = |name: &str, v: &Option<String>| wide_argument(name, v.as_deref());
        let h = self.raw();
        counters::bump(&counters::EXECUTES);
        // Every call below: `h` is this statement's live handle, used by one thread (the owner
        // holds `&mut self`); each text pointer is either NULL with length 0 or points to a Vec
        // that lives until the call returns, with its exact length in UTF-16 units.
        let ret = match call {
            CatalogCall::Tables {
                catalog,
                schema,
                table,
                table_type,
            } => {
                let (c, s, t, ty) = (
                    w("catalog", catalog)?,
                    w("schema", schema)?,
                    w("table", table)?,
                    w("tableType", table_type)?,
                );
                let ((c, cl), (s, sl), (t, tl), (ty, tyl)) = (arg(&c), arg(&s), arg(&t), arg(&ty));
                // SAFETY: see above (live handle, NULL-or-valid arguments with exact lengths).
                unsafe { SQLTablesW(h, c, cl, s, sl, t, tl, ty, tyl) }
            }
            CatalogCall::Columns {
                catalog,
                schema,
                table,
                column,
            } => {
                let (c, s, t, col) = (
                    w("catalog", catalog)?,
                    w("schema", schema)?,
                    w("table", table)?,
                    w("column", column)?,
                );
                let ((c, cl), (s, sl), (t, tl), (col, coll)) =
                    (arg(&c), arg(&s), arg(&t), arg(&col));
                // SAFETY: see above (live handle, NULL-or-valid arguments with exact lengths).
                unsafe { SQLColumnsW(h, c, cl, s, sl, t, tl, col, coll) }
            }
            CatalogCall::Statistics {
                catalog,
                schema,
                table,
                unique_only,
                quick,
            } => {
                let (c, s, t) = (
                    w("catalog", catalog)?,
                    w("schema", schema)?,
                    wide_argument("table", Some(table))?,
                );
                let ((c, cl), (s, sl), (t, tl)) = (arg(&c), arg(&s), arg(&t));
                let unique = if *unique_only {
                    SQL_INDEX_UNIQUE
                } else {
                    SQL_INDEX_ALL
                };
                let accuracy = if *quick { SQL_QUICK } else { SQL_ENSURE };
                // SAFETY: see above (live handle, NULL-or-valid arguments with exact lengths).
                unsafe { SQLStatisticsW(h, c, cl, s, sl, t, tl, unique, accuracy) }
            }
            CatalogCall::SpecialColumns {
                kind,
                catalog,
                schema,
                table,
                nullable,
            } => {
                let (c, s, t) = (
                    w("catalog", catalog)?,
                    w("schema", schema)?,
                    wide_argument("table", Some(table))?,
                );
                let ((c, cl), (s, sl), (t, tl)) = (arg(&c), arg(&s), arg(&t));
                let identifier = match kind {
                    SpecialColumns::BestRowId => SQL_BEST_ROWID,
                    SpecialColumns::RowVer => SQL_ROWVER,
                };
                let nullable = if *nullable {
                    SQL_NULLABLE
                } else {
                    SQL_NO_NULLS
                };
                // SAFETY: see above (live handle, NULL-or-valid arguments with exact lengths).
                unsafe {
                    SQLSpecialColumnsW(
                        h,
                        identifier,
                        c,
                        cl,
                        s,
                        sl,
                        t,
                        tl,
                        SQL_SCOPE_CURROW,
                        nullable,
                    )
                }
            }
            CatalogCall::PrimaryKeys {
                catalog,
                schema,
                table,
            } => {
                let (c, s, t) = (
                    w("catalog", catalog)?,
                    w("schema", schema)?,
                    wide_argument("table", Some(table))?,
                );
                let ((c, cl), (s, sl), (t, tl)) = (arg(&c), arg(&s), arg(&t));
                // SAFETY: see above (live handle, NULL-or-valid arguments with exact lengths).
                unsafe { SQLPrimaryKeysW(h, c, cl, s, sl, t, tl) }
            }
            CatalogCall::ForeignKeys {
                pk_catalog,
                pk_schema,
                pk_table,
                fk_catalog,
                fk_schema,
                fk_table,
            } => {
                let (pc, ps, pt, fc, fs, ft) = (
                    w("catalog", pk_catalog)?,
                    w("schema", pk_schema)?,
                    w("table", pk_table)?,
                    w("foreignCatalog", fk_catalog)?,
                    w("foreignSchema", fk_schema)?,
                    w("foreignTable", fk_table)?,
                );
                let ((pc, pcl), (ps, psl), (pt, ptl)) = (arg(&pc), arg(&ps), arg(&pt));
                let ((fc, fcl), (fs, fsl), (ft, ftl)) = (arg(&fc), arg(&fs), arg(&ft));
                // SAFETY: see above (live handle, NULL-or-valid arguments with exact lengths).
                unsafe { SQLForeignKeysW(h, pc, pcl, ps, psl, pt, ptl, fc, fcl, fs, fsl, ft, ftl) }
            }
            CatalogCall::Procedures {
                catalog,
                schema,
                procedure,
            } => {
                let (c, s, p) = (
                    w("catalog", catalog)?,
                    w("schema", schema)?,
                    w("procedure", procedure)?,
                );
                let ((c, cl), (s, sl), (p, pl)) = (arg(&c), arg(&s), arg(&p));
                // SAFETY: see above (live handle, NULL-or-valid arguments with exact lengths).
                unsafe { SQLProceduresW(h, c, cl, s, sl, p, pl) }
            }
            CatalogCall::ProcedureColumns {
                catalog,
                schema,
                procedure,
                column,
            } => {
                let (c, s, p, col) = (
                    w("catalog", catalog)?,
                    w("schema", schema)?,
                    w("procedure", procedure)?,
                    w("column", column)?,
                );
                let ((c, cl), (s, sl), (p, pl), (col, coll)) =
                    (arg(&c), arg(&s), arg(&p), arg(&col));
                // SAFETY: see above (live handle, NULL-or-valid arguments with exact lengths).
                unsafe { SQLProcedureColumnsW(h, c, cl, s, sl, p, pl, col, coll) }
            }
            CatalogCall::TablePrivileges {
                catalog,
                schema,
                table,
            } => {
                let (c, s, t) = (
                    w("catalog", catalog)?,
                    w("schema", schema)?,
                    w("table", table)?,
                );
                let ((c, cl), (s, sl), (t, tl)) = (arg(&c), arg(&s), arg(&t));
                // SAFETY: see above (live handle, NULL-or-valid arguments with exact lengths).
                unsafe { SQLTablePrivilegesW(h, c, cl, s, sl, t, tl) }
            }
            // SAFETY: see above (live handle, NULL-or-valid arguments with exact lengths).
            CatalogCall::TypeInfo { sql_type } => unsafe { SQLGetTypeInfoW(h, *sql_type) },
        };
        self.check(ret, call.function())
    }
}
