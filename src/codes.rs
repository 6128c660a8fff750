//! The one table of ODBC type codes the engine spells: SQL types (what a column or parameter is)
//! and C types (how a value is laid out in a buffer), named as `sql.h`, `sqlext.h` and
//! Microsoft's `msodbcsql.h` name them. The plan, the parameters, the streamed reads and the
//! statement's describe all take their codes from here; `python/ferrodbc/sqltypes.py` holds the
//! SQL half for Python, and a test below keeps the two equal.

/// SQL data types (`SQL_*`): column descriptions, parameter declarations, converter keys.
pub mod sql {
    pub const UNKNOWN_TYPE: i16 = 0;
    pub const CHAR: i16 = 1;
    pub const NUMERIC: i16 = 2;
    pub const DECIMAL: i16 = 3;
    pub const INTEGER: i16 = 4;
    pub const SMALLINT: i16 = 5;
    pub const FLOAT: i16 = 6;
    pub const REAL: i16 = 7;
    pub const DOUBLE: i16 = 8;
    /// `SQL_DATETIME` (ODBC 3: the verbose type of dates and times; ODBC 2 drivers: `SQL_DATE`).
    pub const DATETIME: i16 = 9;
    /// ODBC 2 `SQL_TIME`; ODBC 3 `SQL_INTERVAL` shares the code.
    pub const TIME_OR_INTERVAL: i16 = 10;
    /// ODBC 2 `SQL_TIMESTAMP`.
    pub const TIMESTAMP: i16 = 11;
    pub const VARCHAR: i16 = 12;
    pub const TYPE_DATE: i16 = 91;
    pub const TYPE_TIME: i16 = 92;
    pub const TYPE_TIMESTAMP: i16 = 93;
    pub const LONGVARCHAR: i16 = -1;
    pub const BINARY: i16 = -2;
    pub const VARBINARY: i16 = -3;
    pub const LONGVARBINARY: i16 = -4;
    pub const BIGINT: i16 = -5;
    pub const TINYINT: i16 = -6;
    pub const BIT: i16 = -7;
    pub const WCHAR: i16 = -8;
    pub const WVARCHAR: i16 = -9;
    pub const WLONGVARCHAR: i16 = -10;
    pub const GUID: i16 = -11;
    pub const SS_VARIANT: i16 = -150;
    pub const SS_UDT: i16 = -151;
    pub const SS_XML: i16 = -152;
    pub const SS_TIME2: i16 = -154;
    pub const SS_TIMESTAMPOFFSET: i16 = -155;

    /// Every name above with its code, as Python spells it (`SQL_` + name).
    pub const ALL: &[(&str, i16)] = &[
        ("UNKNOWN_TYPE", UNKNOWN_TYPE),
        ("CHAR", CHAR),
        ("NUMERIC", NUMERIC),
        ("DECIMAL", DECIMAL),
        ("INTEGER", INTEGER),
        ("SMALLINT", SMALLINT),
        ("FLOAT", FLOAT),
        ("REAL", REAL),
        ("DOUBLE", DOUBLE),
        ("DATETIME", DATETIME),
        ("VARCHAR", VARCHAR),
        ("TYPE_DATE", TYPE_DATE),
        ("TYPE_TIME", TYPE_TIME),
        ("TYPE_TIMESTAMP", TYPE_TIMESTAMP),
        ("LONGVARCHAR", LONGVARCHAR),
        ("BINARY", BINARY),
        ("VARBINARY", VARBINARY),
        ("LONGVARBINARY", LONGVARBINARY),
        ("BIGINT", BIGINT),
        ("TINYINT", TINYINT),
        ("BIT", BIT),
        ("WCHAR", WCHAR),
        ("WVARCHAR", WVARCHAR),
        ("WLONGVARCHAR", WLONGVARCHAR),
        ("GUID", GUID),
        ("SS_VARIANT", SS_VARIANT),
        ("SS_UDT", SS_UDT),
        ("SS_XML", SS_XML),
        ("SS_TIME2", SS_TIME2),
        ("SS_TIMESTAMPOFFSET", SS_TIMESTAMPOFFSET),
    ];
}

/// C data types (`SQL_C_*`) as drivers report them, e.g. for a sql_variant cell's value
/// (`SQL_CA_SS_VARIANT_TYPE`). Buffers the engine binds use odbc-api's `CDataType`.
pub mod c {
    pub const CHAR: i16 = 1;
    pub const WCHAR: i16 = -8;
    pub const BIT: i16 = -7;
    pub const SHORT: i16 = 5;
    pub const SSHORT: i16 = -15;
    pub const USHORT: i16 = -17;
    pub const STINYINT: i16 = -26;
    pub const UTINYINT: i16 = -28;
    pub const LONG: i16 = 4;
    pub const SLONG: i16 = -16;
    pub const ULONG: i16 = -18;
    pub const SBIGINT: i16 = -25;
    pub const UBIGINT: i16 = -27;
    pub const FLOAT: i16 = 7;
    pub const DOUBLE: i16 = 8;
    pub const NUMERIC: i16 = 2;
    /// ODBC 2 `SQL_C_DATE` and ODBC 3 `SQL_C_TYPE_DATE`.
    pub const DATE: i16 = 9;
    pub const TYPE_DATE: i16 = 91;
    /// ODBC 2 `SQL_C_TIMESTAMP` and ODBC 3 `SQL_C_TYPE_TIMESTAMP`.
    pub const TIMESTAMP: i16 = 11;
    pub const TYPE_TIMESTAMP: i16 = 93;
    pub const GUID: i16 = -11;
    pub const BINARY: i16 = -2;
}

/// `SQL_CA_SS_VARIANT_TYPE` (`msodbcsql.h`: `SQL_CA_SS_BASE + 15`): the column attribute that
/// gives the C type of the current sql_variant cell.
pub const SS_VARIANT_TYPE: u16 = 1215;

#[cfg(test)]
mod tests {
    use super::sql;

    /// `python/ferrodbc/sqltypes.py` is the Python face of [`sql::ALL`]: same names, same codes.
    #[test]
    fn python_sqltypes_match_the_table() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/python/ferrodbc/sqltypes.py");
        let text = std::fs::read_to_string(path).unwrap();
        let mut python: Vec<(String, i16)> = text
            .lines()
            .filter_map(|l| {
                let (name, value) = l.split_once(" = ")?;
                let name = name.strip_prefix("SQL_")?;
                Some((name.to_string(), value.trim().parse().ok()?))
            })
            .collect();
        let mut table: Vec<(String, i16)> =
            sql::ALL.iter().map(|&(n, v)| (n.to_string(), v)).collect();
        python.sort();
        table.sort();
        assert_eq!(python, table);
    }
}
