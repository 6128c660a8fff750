//! T-SQL multi-part object names given as text (`[db].[dbo].[we]]ird; t]`, `s."a.b"`, `t`):
//! split at the dots outside delimiters, the delimiters removed and their escapes undone
//! (`]]` in brackets, `""` in quotes), so a name holding `]`, `.` or `;` is found as created.

/// The parts of `name`, in order (`db..t` has an empty middle part). Whitespace outside
/// delimiters is dropped; an unclosed delimiter runs to the end of the text.
pub fn parts(name: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut it = name.trim().chars().peekable();
    while let Some(ch) = it.next() {
        match ch {
            '[' | '"' => {
                let close = if ch == '[' { ']' } else { '"' };
                while let Some(c) = it.next() {
                    if c == close {
                        if it.peek() == Some(&close) {
                            it.next();
                        } else {
                            break;
                        }
                    }
                    parts.last_mut().expect("never empty").push(c);
                }
            }
            '.' => parts.push(String::new()),
            c if c.is_whitespace() => {}
            c => parts.last_mut().expect("never empty").push(c),
        }
    }
    parts
}

/// The last part of `name` (the object itself: `master.dbo.t`, `[dbo].[t]` -> `t`).
pub fn last(name: &str) -> String {
    parts(name).pop().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delimited_parts_keep_their_dots_and_escapes() {
        assert_eq!(parts("[db].[dbo].[we]]ird; t]"), ["db", "dbo", "we]ird; t"]);
        assert_eq!(parts("s.\"a.\"\"b\""), ["s", "a.\"b"]);
        assert_eq!(parts(" master..t "), ["master", "", "t"]);
        assert_eq!(last("[x.y]"), "x.y");
        assert_eq!(last("dbo.[c]]d]"), "c]d");
        assert_eq!(last("t"), "t");
        assert_eq!(last("[it's]"), "it's");
    }
}
