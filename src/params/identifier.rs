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
    check_name(name, "callproc", "procedure", Inside::Strict, 4)
}

/// A table name for a bulk load (`[schema].[t]`, `#t`, `db.dbo.t`, `[we]]ird; t]`): at most
/// three dot-separated parts of the same grammar as [`check_procedure_name`], but a `;` or `'`
/// may stand inside a `[bracketed]` or `"quoted"` part, as SQL Server allows: the name is
/// spliced into `SELECT ... FROM` and `INSERT INTO` (and handed to `bcp_init`), where only the
/// delimiters end it, and into `OBJECT_ID(N'...')` with its quotes doubled. Braces and control
/// characters stay refused everywhere (the drivers scan statement text for ODBC escapes).
pub fn check_table_name(name: &str) -> Result<()> {
    check_name(name, "bulk load", "table", Inside::Lenient, 3)
}

/// What a delimited part may hold besides its own escaped delimiter.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Inside {
    /// No `;` or `'` (a `{CALL ...}` escape's text).
    Strict,
    /// Anything but braces and control characters.
    Lenient,
}

/// SQL Server's longest identifier (`sysname`), in characters.
const MAX_PART_CHARS: usize = 128;

fn check_name(
    name: &str,
    caller: &str,
    what: &str,
    inside: Inside,
    max_parts: usize,
) -> Result<()> {
    let bad = || Error::Programming(format!("{caller}: {name:?} is not a {what} name"));
    if name.chars().any(|c| {
        c.is_control()
            || matches!(c, '{' | '}')
            || (inside == Inside::Strict && matches!(c, ';' | '\''))
    }) {
        return Err(bad());
    }
    let b: Vec<char> = name.chars().collect();
    let mut i = 0;
    let mut parts = 0;
    loop {
        let start = i;
        match b.get(i) {
            Some(&open @ ('[' | '"')) => {
                let close = if open == '[' { ']' } else { '"' };
                i += 1;
                loop {
                    match (b.get(i), b.get(i + 1)) {
                        (Some(&c), Some(&d)) if c == close && d == close => i += 2,
                        (Some(&c), _) if c == close => break,
                        (Some(_), _) => i += 1,
                        (None, _) => return Err(bad()),
                    }
                }
                i += 1;
                // The delimiters, and each escaped delimiter counted once.
                let inner = &b[start + 1..i - 1];
                let escapes = inner
                    .windows(2)
                    .filter(|w| w[0] == close && w[1] == close)
                    .count();
                if inner.is_empty() || inner.len() - escapes > MAX_PART_CHARS {
                    return Err(bad());
                }
            }
            Some(&c) if c.is_alphanumeric() || matches!(c, '_' | '@' | '#' | '$') => {
                while b
                    .get(i)
                    .is_some_and(|&c| c.is_alphanumeric() || matches!(c, '_' | '@' | '#' | '$'))
                {
                    i += 1;
                }
                if i - start > MAX_PART_CHARS {
                    return Err(bad());
                }
            }
            // An empty part between dots (`db..t`: the default schema), never at the end.
            Some('.') if parts > 0 => {}
            _ => return Err(bad()),
        }
        parts += 1;
        if parts > max_parts {
            return Err(bad());
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
    use super::{check_procedure_name, check_table_name};

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
            "\"a\"\"b\".p",
            "s.[p.q]",
            "srv.db.dbo.p",
        ] {
            assert!(check_procedure_name(ok).is_ok(), "{ok}");
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
            "[]",
            ".p",
            "a..",
            "a.b.c.d.e",
            "p]",
            "\"a\"b\"",
        ] {
            assert!(check_procedure_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn table_names_as_sql_server_spells_them() {
        let long = "x".repeat(128);
        for ok in [
            "t",
            "[we]]ird; t]",
            "[a b].[c.d]",
            "db.dbo.t",
            "db..t",
            "tempdb..#t",
            "[it's]",
            "\"x;y\"",
            "[ünï].[表]",
            "[]]]",
            long.as_str(),
            &format!("[{long}]"),
            &format!("[{}]", "]]".repeat(128)),
        ] {
            assert!(check_table_name(ok).is_ok(), "{ok}");
        }
        let too_long = "x".repeat(129);
        for bad in [
            "",
            "t; DROP TABLE t",
            "t--",
            "t /* c */",
            "t WHERE 1=1",
            "[a]; DROP TABLE t; --",
            "[a]]; DROP TABLE t; --",
            "t'",
            "'t'",
            "[x}; DROP TABLE t; --]",
            "[a{b]",
            "[a\nb]",
            "[a\0]",
            "a.b.c.d",
            "t(1)",
            "t,u",
            "[a] [b]",
            "[]",
            too_long.as_str(),
            &format!("[{too_long}]"),
        ] {
            assert!(check_table_name(bad).is_err(), "{bad}");
        }
    }
}
