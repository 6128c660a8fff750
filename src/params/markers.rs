//! Counting `?` markers the way the DBMS lexes SQL.

use crate::backend::Dbms;

/// Count `?` parameter markers outside string literals, quoted identifiers and comments, so a
/// wrong number of parameters is a clear ProgrammingError before the driver sees the statement.
/// PostgreSQL adds dollar-quoted strings (`$$...$$`, `$tag$...$tag$`) and `E'...'` strings with
/// backslash escapes; elsewhere `$` is part of identifiers and money literals.
pub fn count_markers(sql: &str, dbms: Dbms) -> usize {
    let b = sql.as_bytes();
    let pg = dbms == Dbms::PostgreSql;
    let mut i = 0;
    let mut n = 0;
    while i < b.len() {
        match b[i] {
            b'?' => n += 1,
            q @ (b'\'' | b'"') => {
                let backslash_escapes = pg
                    && q == b'\''
                    && i > 0
                    && matches!(b[i - 1], b'E' | b'e')
                    && (i < 2 || !(b[i - 2].is_ascii_alphanumeric() || b[i - 2] == b'_'));
                i += 1;
                while i < b.len() {
                    if backslash_escapes && b[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if b[i] == q {
                        if i + 1 < b.len() && b[i + 1] == q {
                            i += 1; // doubled quote inside the literal
                        } else {
                            break;
                        }
                    }
                    i += 1;
                }
            }
            b'$' if pg => {
                if let Some(tag_len) = dollar_tag(&b[i..]) {
                    let tag = &b[i..i + tag_len];
                    let body = i + tag_len;
                    match b[body..].windows(tag_len).position(|w| w == tag) {
                        Some(end) => i = body + end + tag_len - 1,
                        None => i = b.len(),
                    }
                }
            }
            b'[' => {
                while i < b.len() && b[i] != b']' {
                    i += 1;
                }
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    n
}

/// Length of a PostgreSQL dollar-quote opener at the start of `b` (`$$` or `$tag$`, the tag an
/// identifier not starting with a digit), if there is one.
fn dollar_tag(b: &[u8]) -> Option<usize> {
    let mut j = 1;
    while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
        if j == 1 && b[j].is_ascii_digit() {
            return None; // `$1` is a positional parameter, not a quote
        }
        j += 1;
    }
    (j < b.len() && b[j] == b'$').then_some(j + 1)
}

#[cfg(test)]
mod tests {
    use super::count_markers;
    use crate::backend::Dbms;

    #[test]
    fn postgres_dollar_quotes_and_escape_strings() {
        let pg = Dbms::PostgreSql;
        assert_eq!(count_markers("SELECT $$is it?$$", pg), 0);
        assert_eq!(
            count_markers("SELECT $tag$?$tag$, CAST(? AS integer)", pg),
            1
        );
        assert_eq!(count_markers("SELECT E'it\\'s ?', ?", pg), 1);
        assert_eq!(count_markers("SELECT $1, ?", pg), 1);
        // Outside PostgreSQL `$` is ordinary (T-SQL money literals, identifiers).
        assert_eq!(count_markers("SELECT $1.50, a$b$c, ?", Dbms::SqlServer), 1);
    }

    #[test]
    fn markers_outside_literals_and_comments() {
        assert_eq!(count_markers("SELECT ?, ?", Dbms::Other), 2);
        assert_eq!(
            count_markers("SELECT '?', \"?\", [a?b], ? -- ?\n, ? /* ? */", Dbms::Other),
            2
        );
        assert_eq!(count_markers("SELECT 'it''s ?', ?", Dbms::Other), 1);
        assert_eq!(count_markers("SELECT 1", Dbms::Other), 0);
    }
}
