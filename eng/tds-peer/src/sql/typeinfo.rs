//! `sp_datatype_info_100` (what SQLGetTypeInfo becomes): the rows SQL Server 2022 returns.

use crate::token::Column;
use crate::types::Ty;
use rusqlite::types::Value;

pub fn columns() -> Vec<Column> {
    let s = |n: &str, t: Ty| Column::new(n, t);
    vec![
        s("TYPE_NAME", Ty::NVarChar(Some(128))),
        s("DATA_TYPE", Ty::SmallInt),
        s("PRECISION", Ty::Int),
        s("LITERAL_PREFIX", Ty::VarChar(Some(32), false)),
        s("LITERAL_SUFFIX", Ty::VarChar(Some(32), false)),
        s("CREATE_PARAMS", Ty::VarChar(Some(32), false)),
        s("NULLABLE", Ty::SmallInt),
        s("CASE_SENSITIVE", Ty::SmallInt),
        s("SEARCHABLE", Ty::SmallInt),
        s("UNSIGNED_ATTRIBUTE", Ty::SmallInt),
        s("MONEY", Ty::SmallInt),
        s("AUTO_INCREMENT", Ty::SmallInt),
        s("LOCAL_TYPE_NAME", Ty::NVarChar(Some(128))),
        s("MINIMUM_SCALE", Ty::SmallInt),
        s("MAXIMUM_SCALE", Ty::SmallInt),
        s("SQL_DATA_TYPE", Ty::SmallInt),
        s("SQL_DATETIME_SUB", Ty::SmallInt),
        s("NUM_PREC_RADIX", Ty::Int),
        s("INTERVAL_PRECISION", Ty::SmallInt),
        s("USERTYPE", Ty::SmallInt),
    ]
}

type Row = (&'static str, i64, i64, Option<&'static str>, Option<&'static str>, Option<&'static str>, i64, i64, Option<i64>, Option<i64>, Option<i64>, Option<i64>, i64, Option<i64>, Option<i64>, i64);

// name, type, precision, prefix, suffix, create params, case sensitive, searchable, unsigned,
// auto_increment(money col is 0), min scale, max scale, sql_data_type, datetime_sub, radix, usertype
const ROWS: &[Row] = &[
    ("sql_variant", -150, 8000, None, None, None, 0, 2, None, Some(0), None, None, -150, None, None, 0),
    ("uniqueidentifier", -11, 36, Some("'"), Some("'"), None, 0, 2, None, Some(0), None, None, -11, None, None, 0),
    ("ntext", -10, 1073741823, Some("N'"), Some("'"), None, 0, 1, None, Some(0), None, None, -10, None, None, 0),
    ("xml", -152, 0, Some("N'"), Some("'"), None, 1, 0, None, Some(0), None, None, -152, None, None, 0),
    ("nvarchar", -9, 4000, Some("N'"), Some("'"), Some("max length"), 0, 3, None, Some(0), None, None, -9, None, None, 0),
    ("sysname", -9, 128, Some("N'"), Some("'"), None, 0, 3, None, Some(0), None, None, -9, None, None, 18),
    ("nchar", -8, 4000, Some("N'"), Some("'"), Some("length"), 0, 3, None, Some(0), None, None, -8, None, None, 0),
    ("bit", -7, 1, None, None, None, 0, 2, None, Some(0), Some(0), Some(0), -7, None, None, 16),
    ("tinyint", -6, 3, None, None, None, 0, 2, Some(1), Some(0), Some(0), Some(0), -6, None, Some(10), 5),
    ("bigint", -5, 19, None, None, None, 0, 2, Some(0), Some(0), Some(0), Some(0), -5, None, Some(10), 0),
    ("image", -4, 2147483647, Some("0x"), None, None, 0, 0, None, Some(0), None, None, -4, None, None, 20),
    ("varbinary", -3, 8000, Some("0x"), None, Some("max length"), 0, 2, None, Some(0), None, None, -3, None, None, 4),
    ("binary", -2, 8000, Some("0x"), None, Some("length"), 0, 2, None, Some(0), None, None, -2, None, None, 3),
    ("timestamp", -2, 8, Some("0x"), None, None, 0, 2, None, Some(0), None, None, -2, None, None, 80),
    ("text", -1, 2147483647, Some("'"), Some("'"), None, 0, 1, None, Some(0), None, None, -1, None, None, 19),
    ("char", 1, 8000, Some("'"), Some("'"), Some("length"), 0, 3, None, Some(0), None, None, 1, None, None, 1),
    ("numeric", 2, 38, None, None, Some("precision,scale"), 0, 2, Some(0), Some(0), Some(0), Some(38), 2, None, Some(10), 10),
    ("decimal", 3, 38, None, None, Some("precision,scale"), 0, 2, Some(0), Some(0), Some(0), Some(38), 3, None, Some(10), 24),
    ("money", 3, 19, Some("$"), None, None, 0, 2, Some(0), Some(1), Some(4), Some(4), 3, None, Some(10), 11),
    ("smallmoney", 3, 10, Some("$"), None, None, 0, 2, Some(0), Some(1), Some(4), Some(4), 3, None, Some(10), 21),
    ("int", 4, 10, None, None, None, 0, 2, Some(0), Some(0), Some(0), Some(0), 4, None, Some(10), 7),
    ("smallint", 5, 5, None, None, None, 0, 2, Some(0), Some(0), Some(0), Some(0), 5, None, Some(10), 6),
    ("float", 6, 53, None, None, None, 0, 2, Some(0), Some(0), None, None, 6, None, Some(2), 8),
    ("real", 7, 24, None, None, None, 0, 2, Some(0), Some(0), None, None, 7, None, Some(2), 0),
    ("date", 91, 10, Some("'"), Some("'"), None, 0, 2, None, Some(0), None, None, 9, Some(1), None, 0),
    ("time", 92, 16, Some("'"), Some("'"), Some("scale"), 0, 2, None, Some(0), Some(0), Some(7), 9, Some(2), None, 0),
    ("datetime2", 93, 27, Some("'"), Some("'"), Some("scale"), 0, 2, None, Some(0), Some(0), Some(7), 9, Some(3), None, 0),
    ("datetime", 93, 23, Some("'"), Some("'"), None, 0, 2, None, Some(0), Some(3), Some(3), 9, Some(3), None, 12),
    ("smalldatetime", 93, 16, Some("'"), Some("'"), None, 0, 2, None, Some(0), Some(0), Some(0), 9, Some(3), None, 22),
    ("datetimeoffset", -155, 34, Some("'"), Some("'"), Some("scale"), 0, 2, None, Some(0), Some(0), Some(7), -155, None, None, 0),
    ("varchar", 12, 8000, Some("'"), Some("'"), Some("max length"), 0, 3, None, Some(0), None, None, 12, None, None, 2),
];

/// Rows for one ODBC type code (0 = all types), ordered as SQL Server orders them.
pub fn rows(data_type: i64) -> Vec<Vec<Value>> {
    let o = |v: Option<i64>| v.map(Value::Integer).unwrap_or(Value::Null);
    let t = |v: Option<&str>| v.map(|s| Value::Text(s.to_string())).unwrap_or(Value::Null);
    ROWS.iter()
        .filter(|r| data_type == 0 || r.1 == data_type)
        .map(|r| {
            vec![
                Value::Text(r.0.into()),
                Value::Integer(r.1),
                Value::Integer(r.2),
                t(r.3),
                t(r.4),
                t(r.5),
                Value::Integer(1),
                Value::Integer(r.6),
                Value::Integer(r.7),
                o(r.8),
                o(r.9),
                o(if r.0 == "money" || r.0 == "smallmoney" { None } else { Some(0) }).clone(),
                Value::Text(r.0.into()),
                o(r.10),
                o(r.11),
                Value::Integer(r.12),
                o(r.13),
                o(r.14),
                Value::Null,
                Value::Integer(r.15),
            ]
        })
        .collect()
}
