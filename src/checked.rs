//! Checked conversions of the numbers that cross the ODBC boundary (issue 36).
//!
//! A driver writes lengths, counts and indicators as signed integers (`SQLSMALLINT`,
//! `SQLINTEGER`, `SQLLEN`); the engine indexes buffers with `usize`. A negative or huge value
//! read with `as` would become a wrong length (or a panic at the slice), so every such value
//! goes through here and a value the driver should never have sent becomes an `InterfaceError`
//! naming it (PEP 249: an error of the interface, not of the database or the data). Lengths the
//! engine passes *to* the driver are checked the other way: a statement text or connection
//! string longer than the ODBC integer that carries its length is refused, never wrapped.

use crate::error::{Error, Result};

/// A length or count the driver wrote (`what` names it in the error): a negative value, or one
/// that does not fit a `usize`, is an `InterfaceError`. Callers that allow truncation (a
/// reported length past their buffer) cut the result at the buffer themselves.
pub fn driver_len<T>(value: T, what: &str) -> Result<usize>
where
    T: Copy + std::fmt::Display + TryInto<usize>,
{
    from_driver(value, what)
}

/// [`driver_len`] into another unsigned type (a column count as `u16`, ...).
pub fn from_driver<U, T>(value: T, what: &str) -> Result<U>
where
    T: Copy + std::fmt::Display + TryInto<U>,
{
    value.try_into().map_err(|_| {
        Error::Interface(format!(
            "the driver reported an impossible {what} ({value}): a broken driver or a corrupt \
             response"
        ))
    })
}

/// A row count from `SQLRowCount`: -1 (the driver does not know) or a count; anything below -1
/// (2^63 and up arrive as negative `SQLLEN`s) is an `InterfaceError` naming it.
pub fn row_count(n: isize) -> Result<isize> {
    if n < -1 {
        driver_len(n, "row count")?;
    }
    Ok(n)
}

/// The length of something the engine passes to the driver (`what` names it), as the ODBC
/// integer type that carries it: longer than that type holds is a `DataError` (the value is out
/// of range for ODBC), never a wrapped length.
pub fn to_driver<T>(len: usize, what: &str) -> Result<T>
where
    T: TryFrom<usize> + std::fmt::Display + num_max::Max,
{
    T::try_from(len).map_err(|_| {
        Error::Data(format!(
            "{what} is {len} units long; ODBC carries at most {} here",
            T::MAX
        ))
    })
}

/// The byte length of a buffer the engine allocated, as the `SQLLEN` a driver call takes.
/// Invariant: Rust never allocates more than `isize::MAX` bytes, so the length of any live
/// buffer fits.
#[inline]
#[allow(
    clippy::cast_possible_wrap,
    reason = "a live allocation is at most isize::MAX bytes"
)]
pub const fn alloc_len(bytes: usize) -> isize {
    bytes as isize
}

/// The 1-based ODBC column number of the column at index `index` of a result set. Invariant: a
/// result set has at most `SQLNumResultCols` columns, which [`crate::odbc::Stmt`] reads as a
/// `u16` through [`from_driver`], so every index + 1 fits.
#[inline]
#[allow(
    clippy::cast_possible_truncation,
    reason = "a result set has at most u16::MAX columns (SQLNumResultCols, checked)"
)]
pub const fn column_number(index: usize) -> u16 {
    (index + 1) as u16
}

/// The largest value of the ODBC integer types, for [`to_driver`]'s message.
pub mod num_max {
    pub trait Max {
        const MAX: Self;
    }
    impl Max for i16 {
        const MAX: i16 = i16::MAX;
    }
    impl Max for i32 {
        const MAX: i32 = i32::MAX;
    }
    impl Max for isize {
        const MAX: isize = isize::MAX;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorClass;

    #[test]
    fn hostile_driver_lengths_are_interface_errors() {
        for bad in [-2i64, -5, i64::MIN] {
            let e = driver_len(bad, "name length").unwrap_err();
            assert_eq!(e.class(), ErrorClass::Interface);
            assert!(e.to_string().contains(&bad.to_string()), "{e}");
        }
        assert_eq!(
            driver_len(-1i16, "x").unwrap_err().class(),
            ErrorClass::Interface
        );
        assert_eq!(driver_len(0i16, "x").unwrap(), 0);
        assert_eq!(driver_len(i16::MAX, "x").unwrap(), 32767);
        assert_eq!(driver_len(isize::MAX, "x").unwrap(), usize::MAX >> 1);
    }

    #[test]
    fn a_row_count_of_2_pow_63_is_refused_not_wrapped() {
        // 2^63 does not fit SQLLEN: a broken driver writes it as i64::MIN (the same bits).
        let wire = i64::MIN;
        let e = driver_len(wire, "row count").unwrap_err();
        assert_eq!(e.class(), ErrorClass::Interface);
        assert!(e.to_string().contains("-9223372036854775808"), "{e}");
        let e = row_count(isize::MIN).unwrap_err();
        assert_eq!(e.class(), ErrorClass::Interface);
        assert!(
            e.to_string().contains("row count (-9223372036854775808)"),
            "{e}"
        );
        assert!(row_count(-2).is_err());
        assert_eq!(row_count(-1).unwrap(), -1, "unknown");
        assert_eq!(row_count(0).unwrap(), 0);
        assert_eq!(row_count(isize::MAX).unwrap(), isize::MAX);
    }

    #[test]
    fn lengths_passed_to_the_driver_never_wrap() {
        assert_eq!(to_driver::<i16>(256, "buffer").unwrap(), 256);
        let e = to_driver::<i16>(40_000, "the connection string").unwrap_err();
        assert_eq!(e.class(), ErrorClass::Data);
        assert!(e.to_string().contains("40000"), "{e}");
        assert!(e.to_string().contains("32767"), "{e}");
        let e = to_driver::<i32>(1 << 31, "the statement text").unwrap_err();
        assert_eq!(e.class(), ErrorClass::Data);
        assert_eq!(to_driver::<i32>((1 << 31) - 1, "t").unwrap(), i32::MAX);
    }
}
