//! What a driver hands over for a text column read as `SQL_C_BINARY` (the bytes an output
//! converter receives), where that is known for certain.
//!
//! A text column is bound as the driver's bytes only for a converter registered when the query
//! is executed (`ResultPlan::build_with_raw`). When converters change in the middle of that
//! result set, the binding stays; whether the values can still be given exactly depends on
//! knowing this encoding. Where it is not known, nothing is guessed: the caller refuses.

use crate::backend::{Backend, Dbms};
use crate::codes::sql;

/// The encoding of a text column's `SQL_C_BINARY` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawTextEncoding {
    /// UTF-16 little-endian code units.
    Utf16Le,
    Utf8,
}

/// The encoding of the bytes `backend`'s driver hands over for a column of `sql_type` read as
/// `SQL_C_BINARY`; `None` when it is not known for certain.
///
/// - SQL Server's wide types (nchar, nvarchar, ntext): UTF-16LE, the wire form, from Driver 18
///   and FreeTDS alike (tests/sqlserver/test_sqlserver_connection.py checks both).
/// - PostgreSQL's wide types: UTF-8. Only psqlODBC's Unicode driver describes text as wide, and
///   it runs its session in UTF-8 and hands those bytes over (tests/python/test_converters.py).
/// - Narrow types (char, varchar, text): the driver's code page or client character set, which
///   ferrodbc does not know (SQL Server: the column's collation; psqlODBC's ANSI driver: the
///   session's client encoding). Unknown.
/// - Other databases, and types that are not ODBC character types (xml, unknown types read as
///   text): unknown.
pub fn raw_text_encoding(sql_type: i16, backend: Backend) -> Option<RawTextEncoding> {
    let wide = matches!(sql_type, sql::WCHAR | sql::WVARCHAR | sql::WLONGVARCHAR);
    match backend.dbms {
        Dbms::SqlServer if wide => Some(RawTextEncoding::Utf16Le),
        Dbms::PostgreSql if wide => Some(RawTextEncoding::Utf8),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Driver;

    #[test]
    fn only_wide_types_of_known_drivers_have_a_known_encoding() {
        let freetds = Backend::new(Dbms::SqlServer, Driver::FreeTds);
        for backend in [Backend::from(Dbms::SqlServer), freetds] {
            for t in [sql::WCHAR, sql::WVARCHAR, sql::WLONGVARCHAR] {
                assert_eq!(
                    raw_text_encoding(t, backend),
                    Some(RawTextEncoding::Utf16Le)
                );
            }
        }
        assert_eq!(
            raw_text_encoding(sql::WVARCHAR, Dbms::PostgreSql.into()),
            Some(RawTextEncoding::Utf8)
        );
        for dbms in [Dbms::SqlServer, Dbms::PostgreSql, Dbms::Sqlite, Dbms::Other] {
            for t in [sql::CHAR, sql::VARCHAR, sql::LONGVARCHAR, sql::SS_XML] {
                assert_eq!(raw_text_encoding(t, dbms.into()), None, "{dbms:?} {t}");
            }
        }
        assert_eq!(raw_text_encoding(sql::WVARCHAR, Dbms::Sqlite.into()), None);
        assert_eq!(raw_text_encoding(sql::WVARCHAR, Dbms::Other.into()), None);
    }
}
