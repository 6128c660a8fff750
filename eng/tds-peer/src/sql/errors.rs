//! SQL Server-style error numbers and severities for SQLite errors and peer limitations.

#[derive(Debug, Clone)]
pub struct SqlError {
    pub number: i32,
    pub class: u8,
    pub state: u8,
    pub msg: String,
}

impl SqlError {
    pub fn new(number: i32, class: u8, msg: impl Into<String>) -> SqlError {
        SqlError {
            number,
            class,
            state: 1,
            msg: msg.into(),
        }
    }

    pub fn syntax(msg: impl Into<String>) -> SqlError {
        SqlError::new(102, 15, msg)
    }

    pub fn unsupported(what: &str) -> SqlError {
        SqlError::new(
            102,
            15,
            format!("Incorrect syntax near '{what}'. (tds-peer does not support this T-SQL)"),
        )
    }
}

/// 2714 for a duplicate in one of the peer's own catalog tables (procedures, sequences,
/// schemas: their names are UNIQUE there), otherwise as `from_sqlite`.
pub fn from_sqlite_named(e: &rusqlite::Error, name: &str) -> SqlError {
    if e.to_string().contains("UNIQUE") {
        SqlError::new(
            2714,
            16,
            format!("There is already an object named '{name}' in the database."),
        )
    } else {
        from_sqlite(e)
    }
}

fn function_error(msg: &str) -> Option<i32> {
    FUNCTION_ERRORS
        .iter()
        .chain(super::vector::ERRORS)
        .find(|(start, _)| msg.starts_with(start))
        .map(|&(_, number)| number)
}

fn quoted_tail(msg: &str, prefix: &str) -> Option<String> {
    msg.find(prefix)
        .map(|p| msg[p + prefix.len()..].trim().trim_matches('"').to_string())
}

/// SQL Server messages the peer's SQLite functions (`functions.rs`) raise, by their start, and
/// their numbers. SQLite hands a function's error back as bare text, so the text is the key.
const FUNCTION_ERRORS: &[(&str, i32)] = &[
    ("Conversion failed when converting date and/or time", 241),
    (
        "Conversion failed when converting from a character string to uniqueidentifier",
        8169,
    ),
    ("Conversion failed when converting the ", 245),
    ("The conversion of a varchar data type to a ", 242),
    ("Explicit conversion from data type", 529),
    ("Error converting data type", 8114),
    ("Arithmetic overflow error for data type", 220),
    ("Arithmetic overflow error for type", 232),
    ("Arithmetic overflow error converting", 8115),
    ("Divide by zero error encountered", 8134),
    ("String or binary data would be truncated", 2628),
    ("Cannot convert a char value to ", 235),
    (
        "Cannot insert an explicit value into a timestamp column",
        273,
    ),
];

/// The state SQL Server sends with an error, where it is not 1: the arithmetic overflows of
/// ordinary conversions come with state 2 (220 and 8115 as SQL Server 2016–2022 print them;
/// 8115 from other code paths carries other states, which the peer does not reproduce).
fn with_state(mut e: SqlError) -> SqlError {
    if matches!(e.number, 220 | 8115) {
        e.state = 2;
    }
    e
}

/// Maps a SQLite error message to the SQL Server error a real server would raise.
pub fn from_sqlite(e: &rusqlite::Error) -> SqlError {
    let msg = match e {
        rusqlite::Error::SqliteFailure(_, Some(m)) => m.clone(),
        rusqlite::Error::UserFunctionError(u) => {
            let msg = u.to_string();
            let number = function_error(&msg).unwrap_or(8114);
            return with_state(SqlError::new(number, 16, msg));
        }
        other => other.to_string(),
    };
    if let Some(number) = function_error(&msg) {
        return with_state(SqlError::new(number, 16, msg));
    }
    if let Some(t) = quoted_tail(&msg, "no such table:") {
        return SqlError::new(208, 16, format!("Invalid object name '{t}'."));
    }
    if let Some(c) = quoted_tail(&msg, "no such column:") {
        return SqlError::new(207, 16, format!("Invalid column name '{c}'."));
    }
    if let Some(p) = msg.find("near \"") {
        let rest = &msg[p + 6..];
        let tok = rest.split('"').next().unwrap_or("");
        return SqlError::new(102, 15, format!("Incorrect syntax near '{tok}'."));
    }
    if msg.contains("UNIQUE constraint failed") || msg.contains("PRIMARY KEY") {
        return SqlError::new(
            2627,
            14,
            format!(
                "Violation of PRIMARY KEY or UNIQUE constraint. Cannot insert duplicate key. ({msg})"
            ),
        );
    }
    if let Some(c) = quoted_tail(&msg, "NOT NULL constraint failed:") {
        return SqlError::new(
            515,
            16,
            format!(
                "Cannot insert the value NULL into column '{c}'; column does not allow nulls. INSERT fails."
            ),
        );
    }
    if msg.contains("already exists") {
        let name = msg.split_whitespace().nth(1).unwrap_or("").to_string();
        return SqlError::new(
            2714,
            16,
            format!("There is already an object named '{name}' in the database."),
        );
    }
    if msg.contains("locked") || msg.contains("busy") {
        return SqlError::new(1222, 16, "Lock request time out period exceeded.");
    }
    if msg.contains("syntax error") || msg.contains("incomplete input") {
        return SqlError::new(
            102,
            15,
            format!("Incorrect syntax near the end of the statement. ({msg})"),
        );
    }
    SqlError::new(8180, 16, msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_errors_keep_sql_server_numbers() {
        let e = rusqlite::Error::UserFunctionError("Divide by zero error encountered.".into());
        assert_eq!(from_sqlite(&e).number, 8134);
        let e = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(1),
            Some(
                "Conversion failed when converting the varchar value 'x' to data type int.".into(),
            ),
        );
        assert_eq!(from_sqlite(&e).number, 245);
        assert_eq!(
            function_error("Arithmetic overflow error for data type tinyint, value = 300."),
            Some(220)
        );
        let e = rusqlite::Error::UserFunctionError(
            "Arithmetic overflow error converting expression to data type bigint.".into(),
        );
        let e = from_sqlite(&e);
        assert_eq!((e.number, e.class, e.state), (8115, 16, 2));
        assert_eq!(
            function_error("Arithmetic overflow error for type int, value = 1.000000."),
            Some(232)
        );
    }
}
