//! What the driver says a prepared statement's parameters are (`SQLNumParams`,
//! `SQLDescribeParam`), for callers that describe a statement before any value is bound (the
//! ADBC driver's GetParameterSchema). Driver 18 asks SQL Server (`sp_describe_undeclared_parameters`).

use super::stmt::Stmt;
use crate::error::Result;
use odbc_api::sys::{self, SqlDataType, ULen};

/// One parameter as `SQLDescribeParam` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamDescription {
    /// The ODBC SQL type code (driver-specific codes too, e.g. -155 for DATETIMEOFFSET).
    pub sql_type: i16,
    /// Characters for text, bytes for binary, precision for numbers; 0 = unknown or unbounded.
    pub size: usize,
    pub decimal_digits: i16,
    /// `None` when the driver does not know.
    pub nullable: Option<bool>,
}

impl Stmt {
    /// `SQLNumParams` of the prepared statement.
    pub fn num_params(&mut self) -> Result<u16> {
        let mut n: i16 = 0;
        // SAFETY: valid handle; the out pointer points at a local i16 (SQLSMALLINT).
        let ret = unsafe { sys::SQLNumParams(self.handle, &raw mut n) };
        self.check(ret, "SQLNumParams")?;
        param_count(n)
    }

    /// `SQLDescribeParam(number)` (1-based) of the prepared statement.
    pub fn param_description(&mut self, number: u16) -> Result<ParamDescription> {
        let mut data_type = SqlDataType(0);
        let mut size: ULen = 0;
        let mut digits: i16 = 0;
        let mut nullable = sys::Nullability::UNKNOWN;
        // SAFETY: valid handle; every out pointer points at a local of the declared type.
        let ret = unsafe {
            sys::SQLDescribeParam(
                self.handle,
                number,
                &raw mut data_type,
                &raw mut size,
                &raw mut digits,
                &raw mut nullable,
            )
        };
        self.check(ret, "SQLDescribeParam")?;
        Ok(ParamDescription {
            sql_type: data_type.0,
            size,
            decimal_digits: digits,
            nullable: match nullable {
                sys::Nullability::NULLABLE => Some(true),
                sys::Nullability::NO_NULLS => Some(false),
                _ => None,
            },
        })
    }
}

/// A parameter count as `SQLNumParams` wrote it: a negative count is an `InterfaceError` naming
/// it (it used to read as 0 parameters, so a statement with markers looked like one without).
fn param_count(n: i16) -> Result<u16> {
    crate::checked::from_driver(n, "parameter count (SQLNumParams)")
}

#[cfg(test)]
mod tests {
    use super::param_count;
    use crate::error::Error;

    #[test]
    fn negative_parameter_count_is_an_interface_error() {
        assert_eq!(param_count(0).unwrap(), 0);
        assert_eq!(param_count(i16::MAX).unwrap(), 32767);
        match param_count(-3) {
            Err(Error::Interface(msg)) => assert!(msg.contains("(-3)"), "{msg}"),
            other => panic!("{other:?}"),
        }
    }
}
