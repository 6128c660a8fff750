//! The identifiers ferrodbc splices into SQL: the procedure name of `callproc` and the table
//! name of a bulk load.

use crate::error::{Error, Result};

/// A procedure name for `{CALL ...}`: dot-separated parts, each a regular identifier, a
/// `[bracketed]` one (`]]` escapes `]`) or a `"quoted"` one. It is spliced into SQL, so anything
/// else (a `;`, a comment, a parenthesis) is refused.
///
/// Braces, `;`, `'` and control characters are refused even inside a bracketed or quoted part:
/// the name sits inside the ODBC escape `{CALL ...}`, which the driver scans for its closing
/// brace before SQL Server's own quoting applies (`[x}; DROP TABLE t; --]` must not end it).
pub fn check_procedure_name(name: &str) -> Result<()> {
    check_name(name, "callproc", "procedure")
}

/// A table name for a bulk load (`[schema].[t]`, `#t`, `db.dbo.t`): the same grammar as
/// [`check_procedure_name`]; it is spliced into `SELECT ... FROM` and `INSERT BULK`.
pub fn check_table_name(name: &str) -> Result<()> {
    check_name(name, "bulk load", "table")
}

fn check_name(name: &str, caller: &str, what: &str) -> Result<()> {
    let bad = || Error::Programming(format!("{caller}: {name:?} is not a {what} name"));
    if name
        .chars()
        .any(|c| c.is_control() || matches!(c, '{' | '}' | ';' | '\''))
    {
        return Err(bad());
    }
    let b: Vec<char> = name.chars().collect();
    let mut i = 0;
    loop {
        match b.get(i) {
            Some('[') => {
                i += 1;
                loop {
                    match (b.get(i), b.get(i + 1)) {
                        (Some(']'), Some(']')) => i += 2,
                        (Some(']'), _) => break,
                        (Some(_), _) => i += 1,
                        (None, _) => return Err(bad()),
                    }
                }
                i += 1;
            }
            Some('"') => {
                i += 1;
                while b.get(i).is_some_and(|&c| c != '"') {
                    i += 1;
                }
                if b.get(i).is_none() {
                    return Err(bad());
                }
                i += 1;
            }
            Some(&c) if c.is_alphanumeric() || matches!(c, '_' | '@' | '#' | '$') => {
                while b
                    .get(i)
                    .is_some_and(|&c| c.is_alphanumeric() || matches!(c, '_' | '@' | '#' | '$'))
                {
                    i += 1;
                }
            }
            _ => return Err(bad()),
        }
        match b.get(i) {
            None => return Ok(()),
            Some('.') => i += 1,
            Some(_) => return Err(bad()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::check_procedure_name;

    #[test]
    fn dotted_bracketed_and_quoted_parts_pass_and_anything_else_is_refused() {
        for ok in [
            "p",
            "dbo.p",
            "[my proc]",
            "[a]]b].[c]",
            "\"x y\".p",
            "#tmp",
            "db..p_1",
        ] {
            let dotted_empty = ok.contains("..");
            assert_eq!(check_procedure_name(ok).is_ok(), !dotted_empty, "{ok}");
        }
        for bad in [
            "",
            "p;DROP TABLE t",
            "p--",
            "p(1)",
            "[open",
            "\"open",
            "a.",
            "p q",
            // Inside brackets or quotes too: the driver's `{CALL ...}` scan ends at a brace.
            "[x}; DROP TABLE t; --]",
            "\"x}\"",
            "[a{b]",
            "[it's]",
            "[a;b]",
            "p\0",
            "[a\nb]",
        ] {
            assert!(check_procedure_name(bad).is_err(), "{bad}");
        }
    }
}
