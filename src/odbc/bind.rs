//! Binding a statement's columns and parameters: the calls whose pointers the driver keeps.
//!
//! They are `unsafe`: the driver writes through the pointers on every later fetch/execute, so
//! the caller must keep the memory alive and unmoved until it unbinds (or frees the
//! statement). The engine's `Batch` (columns) and `params::BoundParams` (parameters) own that
//! memory.

use super::call::Outcome;
use super::diag::read_diagnostics;
use super::stmt::Stmt;
use crate::counters;
use crate::error::{Error, Result};
use odbc_api::sys::{
    self, CDataType, FreeStmtOption, HStmt, HandleType, Len, ParamType, Pointer, SqlDataType,
    StatementAttribute, ULen,
};
use std::ptr::null_mut;

// Statement attributes and descriptor fields as the C signatures have them (plain integers):
// SQL Server's table-valued parameters need SQL_SOPT_SS_PARAM_FOCUS and SQL_CA_SS_SCHEMA_NAME,
// which odbc-sys's enums lack.
unsafe extern "system" {
    #[link_name = "SQLSetStmtAttrW"]
    fn set_stmt_attr_raw(hstmt: HStmt, attr: i32, value: Pointer, len: i32) -> sys::SqlReturn;
    #[link_name = "SQLSetDescFieldW"]
    fn set_desc_field_raw(
        hdesc: sys::HDesc,
        record: i16,
        field: i16,
        value: Pointer,
        len: i32,
    ) -> sys::SqlReturn;
}

impl Stmt {
    /// # Safety
    /// `target` must stay valid and unmoved until it is replaced or the statement is freed.
    pub unsafe fn set_rows_fetched_ptr(&mut self, target: *mut ULen) -> Result<()> {
        self.set_attr(StatementAttribute::RowsFetchedPtr, target as Pointer)
    }

    /// # Safety
    /// `target` must point to one `u16` per row of the row array and stay valid and unmoved
    /// until replaced or the statement is freed.
    pub unsafe fn set_row_status_ptr(&mut self, target: *mut u16) -> Result<()> {
        self.set_attr(StatementAttribute::RowStatusPtr, target as Pointer)
    }

    /// # Safety
    /// `value` and `indicator` must stay valid and unmoved for every later fetch until the column
    /// is unbound or the statement freed, and be large enough for the row array size in effect.
    pub unsafe fn bind_col(
        &mut self,
        col: u16,
        c_type: CDataType,
        value: Pointer,
        element_len: Len,
        indicator: *mut Len,
    ) -> Result<()> {
        counters::bump(&counters::BINDS);
        // SAFETY: forwarded contract.
        let ret =
            unsafe { sys::SQLBindCol(self.handle, col, c_type, value, element_len, indicator) };
        self.check(ret, "SQLBindCol").map(|_| ())
    }

    /// Give a column bound as `SQL_C_NUMERIC` its precision and scale. Without this the driver
    /// converts with the ARD's default scale 0 (Driver 18 truncates 12.34 to 12). The ODBC
    /// recipe: set the fields on the application row descriptor, then the data pointer again
    /// last, which makes the driver check and keep the record.
    ///
    /// # Safety
    /// As [`Self::bind_col`], for `value` (the pointer the column is bound to).
    pub unsafe fn set_numeric_precision(
        &mut self,
        col: u16,
        precision: u8,
        scale: i8,
        value: Pointer,
    ) -> Result<()> {
        let mut ard = sys::HDesc(null_mut());
        // SAFETY: valid handle; the out pointer receives the descriptor handle.
        let ret = unsafe {
            sys::SQLGetStmtAttr(
                self.handle,
                StatementAttribute::AppRowDesc,
                (&raw mut ard).cast(),
                0,
                null_mut(),
            )
        };
        self.check(ret, "SQLGetStmtAttr(APP_ROW_DESC)")?;
        let record = record_number(col)?;
        let fields = [
            (sys::Desc::Precision, precision as isize as Pointer),
            (sys::Desc::Scale, scale as isize as Pointer),
            (sys::Desc::DataPtr, value),
        ];
        for (field, v) in fields {
            // SAFETY: `ard` is this statement's ARD; integer fields are passed by value and the
            // data pointer obeys the caller's contract.
            let ret = unsafe { sys::SQLSetDescField(ard, record, field, v, 0) };
            if !Outcome::from_ret(ret).is_ok() {
                return Err(Error::odbc(
                    "SQLSetDescField(ARD)",
                    read_diagnostics(HandleType::Desc, ard.as_handle()),
                ));
            }
        }
        Ok(())
    }

    pub fn unbind_cols(&mut self) -> Result<()> {
        // SAFETY: valid handle.
        let ret = unsafe { sys::SQLFreeStmt(self.handle, FreeStmtOption::Unbind) };
        self.check(ret, "SQLFreeStmt(UNBIND)").map(|_| ())
    }

    pub fn reset_params(&mut self) -> Result<()> {
        // SAFETY: valid handle.
        let ret = unsafe { sys::SQLFreeStmt(self.handle, FreeStmtOption::ResetParams) };
        self.check(ret, "SQLFreeStmt(RESET_PARAMS)").map(|_| ())
    }

    /// # Safety
    /// `value` and `indicator` must stay valid until the statement has executed (and, for arrays,
    /// cover `paramset size` elements).
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn bind_parameter(
        &mut self,
        number: u16,
        direction: ParamType,
        c_type: CDataType,
        sql_type: i16,
        column_size: usize,
        decimal_digits: i16,
        value: Pointer,
        buffer_len: Len,
        indicator: *mut Len,
    ) -> Result<()> {
        // SAFETY: forwarded contract.
        let ret = unsafe {
            sys::SQLBindParameter(
                self.handle,
                number,
                direction,
                c_type,
                SqlDataType(sql_type),
                column_size,
                decimal_digits,
                value,
                buffer_len,
                indicator,
            )
        };
        self.check(ret, "SQLBindParameter").map(|_| ())
    }

    /// `SQLDescribeParam` of a prepared statement, for its side effect: the driver fills the
    /// parameter's implementation descriptor (a table-valued parameter's type name).
    pub fn describe_param(&mut self, number: u16) -> Result<()> {
        self.param_description(number).map(|_| ())
    }

    /// A driver-specific integer statement attribute (e.g. SQL_SOPT_SS_PARAM_FOCUS).
    pub fn set_int_attr(&mut self, attr: i32, value: usize) -> Result<()> {
        // Driver 18 wants the length SQL_IS_INTEGER for these (0 is HY024, seen).
        const SQL_IS_INTEGER: i32 = -6;
        // SAFETY: an integer attribute is passed by value in the pointer argument.
        let ret = unsafe { set_stmt_attr_raw(self.handle, attr, value as Pointer, SQL_IS_INTEGER) };
        self.check(ret, "SQLSetStmtAttr").map(|_| ())
    }

    /// A text field of parameter `record` in the implementation parameter descriptor (e.g.
    /// SQL_CA_SS_SCHEMA_NAME of a table-valued parameter).
    ///
    /// # Safety
    /// `text` must stay valid until the statement has executed (the driver may keep the pointer).
    pub unsafe fn set_ipd_text_field(
        &mut self,
        record: u16,
        field: i16,
        text: &[u16],
    ) -> Result<()> {
        let mut ipd = sys::HDesc(null_mut());
        // SAFETY: valid handle; the out pointer receives the descriptor handle.
        let ret = unsafe {
            sys::SQLGetStmtAttr(
                self.handle,
                StatementAttribute::ImpParamDesc,
                (&raw mut ipd).cast(),
                0,
                null_mut(),
            )
        };
        self.check(ret, "SQLGetStmtAttr(IMP_PARAM_DESC)")?;
        let bytes = crate::checked::to_driver::<i32>(text.len() * 2, "a descriptor text field")?;
        let record = record_number(record)?;
        // SAFETY: `ipd` is this statement's IPD; the text outlives the execute (caller).
        let ret =
            unsafe { set_desc_field_raw(ipd, record, field, text.as_ptr() as Pointer, bytes) };
        if !Outcome::from_ret(ret).is_ok() {
            return Err(Error::odbc(
                "SQLSetDescField(IPD)",
                read_diagnostics(HandleType::Desc, ipd.as_handle()),
            ));
        }
        Ok(())
    }

    pub fn set_paramset_size(&mut self, rows: usize) -> Result<()> {
        self.set_attr(StatementAttribute::ParamBindType, 0 as Pointer)?;
        self.set_attr(StatementAttribute::ParamsetSize, rows as Pointer)
    }
}

/// A column or parameter number as a descriptor record number (`SQLSMALLINT`): past 32,767 is
/// an error naming it, never a negative record.
fn record_number(n: u16) -> Result<i16> {
    i16::try_from(n).map_err(|_| {
        Error::Interface(format!(
            "column or parameter {n} is past ODBC's last descriptor record (32767)"
        ))
    })
}
