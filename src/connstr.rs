//! ODBC connection strings: reading one (`KEY=value;KEY={va;lue}` with `}}` for a `}` inside
//! braces), quoting one value for it, and the redacted form that reprs, logs and the pool's
//! debug output show (secrets replaced, never printed).
//!
//! Quoting puts braces only where the grammar needs them: a value holding `;`, or starting with
//! `{` (after any spaces). Seen against the TDS peer: Driver 18 and FreeTDS both read `=`, `}`,
//! an inner `{` and leading or trailing spaces exactly in a plain value, while FreeTDS 1.3.17
//! (through unixODBC 2.3) reads a braced value with its closing brace kept (`PWD={p}` logs in
//! with the password `p}`), so braces where none are needed would break FreeTDS users for
//! nothing. Driver 18 reads braced values exactly (`}}` as `}`).

use crate::error::{Error, Result};

/// One `key=value` attribute as the driver reads it: the key trimmed, the value unquoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribute {
    pub key: String,
    pub value: String,
    /// The value was written in braces.
    pub braced: bool,
}

/// Keys whose values are secrets (compared case-insensitively): passwords, tokens, key-store
/// secrets of Always Encrypted.
const SECRET_KEYS: &[&str] = &[
    "pwd",
    "password",
    "passwd",
    "accesstoken",
    "access_token",
    "clientsecret",
    "keystoresecret",
    "keystorepassword",
];

/// What a secret value is shown as.
pub const REDACTED: &str = "***";

/// Whether `key` names a secret (`PWD`, `Password`, `AccessToken`, ...).
pub fn is_secret_key(key: &str) -> bool {
    let key = key.trim();
    SECRET_KEYS.iter().any(|k| key.eq_ignore_ascii_case(k))
}

/// Why a connection string does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Malformed {
    /// A `{` opening the value of this key is never closed: the driver manager would read the
    /// rest of the string as that value.
    Unclosed(String),
    /// The n-th (1-based) non-empty segment has no `=` (or a `;` inside its key).
    NoEquals(usize),
}

impl From<Malformed> for Error {
    fn from(m: Malformed) -> Error {
        Error::Interface(match m {
            Malformed::Unclosed(key) => format!(
                "malformed connection string: the '{{' opening the value of {key:?} is never closed"
            ),
            Malformed::NoEquals(n) => {
                format!("malformed connection string: attribute {n} has no '='")
            }
        })
    }
}

/// Read a connection string into its attributes. Errors: see [`Malformed`].
pub fn parse(s: &str) -> Result<Vec<Attribute>> {
    parse_attributes(s).map_err(Error::from)
}

/// [`parse`], with the reason it failed.
pub fn parse_attributes(s: &str) -> std::result::Result<Vec<Attribute>, Malformed> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b';' {
            i += 1;
            continue;
        }
        let Some(eq) = b[i..].iter().position(|&c| c == b'=').map(|p| i + p) else {
            if s[i..].trim().is_empty() {
                break;
            }
            return Err(Malformed::NoEquals(out.len() + 1));
        };
        // A key never holds ';': `a;b=c` is the attribute `a` with no value, then `b=c`.
        if b[i..eq].contains(&b';') {
            return Err(Malformed::NoEquals(out.len() + 1));
        }
        let key = s[i..eq].trim().to_string();
        let mut j = eq + 1;
        // Spaces before an opening brace are allowed (Driver 18 and unixODBC skip them).
        let mut k = j;
        while k < b.len() && b[k] == b' ' {
            k += 1;
        }
        if k < b.len() && b[k] == b'{' {
            j = k + 1;
            let mut value = String::new();
            let mut start = j;
            loop {
                let Some(close) = b[j..].iter().position(|&c| c == b'}').map(|p| j + p) else {
                    return Err(Malformed::Unclosed(key));
                };
                if b.get(close + 1) == Some(&b'}') {
                    value.push_str(&s[start..=close]);
                    j = close + 2;
                    start = j;
                    continue;
                }
                value.push_str(&s[start..close]);
                j = close + 1;
                break;
            }
            // Anything between the closing brace and the next ';' stays part of the value as
            // far as secrecy goes (`redact` hides it too); drivers differ on it otherwise.
            let end = b[j..]
                .iter()
                .position(|&c| c == b';')
                .map_or(b.len(), |p| j + p);
            value.push_str(&s[j..end]);
            out.push(Attribute {
                key,
                value,
                braced: true,
            });
            i = end;
        } else {
            let end = b[j..]
                .iter()
                .position(|&c| c == b';')
                .map_or(b.len(), |p| j + p);
            out.push(Attribute {
                key,
                value: s[j..end].to_string(),
                braced: false,
            });
            i = end;
        }
    }
    Ok(out)
}

/// Whether a value must be written in braces to be read back exactly: a `;` would end it, a
/// leading `{` (spaces before it are skipped) would open braces.
fn needs_braces(value: &str) -> bool {
    value.contains(';') || value.trim_start_matches(' ').starts_with('{')
}

/// `value` as it must appear after `KEY=` so every driver reads exactly `value` (see the module
/// comment for which values get braces).
pub fn quote_value(value: &str) -> String {
    if needs_braces(value) {
        format!("{{{}}}", value.replace('}', "}}"))
    } else {
        value.to_string()
    }
}

/// `KEY=value` with the value quoted as [`quote_value`] does.
pub fn attribute(key: &str, value: &str) -> String {
    format!("{key}={}", quote_value(value))
}

/// The connection string with every secret value replaced by [`REDACTED`]: what a repr, a log
/// line or the pool's debug output may show. A string that does not parse is not shown at all
/// (its secrets cannot be found reliably).
pub fn redact(s: &str) -> String {
    match parse_attributes(s) {
        Ok(attrs) => attrs
            .iter()
            .map(|a| {
                if is_secret_key(&a.key) {
                    format!("{}={REDACTED}", a.key)
                } else {
                    attribute(&a.key, &a.value)
                }
            })
            .collect::<Vec<_>>()
            .join(";"),
        Err(_) => "<connection string not shown: malformed>".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(s: &str) -> Vec<(String, String)> {
        parse(s)
            .unwrap()
            .into_iter()
            .map(|a| (a.key, a.value))
            .collect()
    }

    #[test]
    fn parses_plain_and_braced_values() {
        assert_eq!(
            kv("Driver={ODBC Driver 18};Server=h,1433; UID = sa ;PWD={a;b}}c};X=1;"),
            [
                ("Driver", "ODBC Driver 18"),
                ("Server", "h,1433"),
                ("UID", " sa "),
                ("PWD", "a;b}c"),
                ("X", "1"),
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()))
        );
        assert_eq!(
            kv("A=b=c;B=x}y;C=a{b"),
            [("A", "b=c"), ("B", "x}y"), ("C", "a{b")].map(|(k, v)| (k.to_string(), v.to_string()))
        );
        assert!(parse("PWD={abc").is_err());
        assert!(parse("PWD={a}}").is_err());
        assert!(parse("novalue").is_err());
        assert!(parse("a;b=c").is_err());
        assert!(parse(";;  ").unwrap().is_empty());
    }

    #[test]
    fn quoting_round_trips() {
        for v in [
            "",
            "plain",
            "a=b",
            "x}y",
            "a{b",
            "p;w}d {x} =y",
            "{lead",
            " sp",
            "sp ",
            "}}",
            ";",
            "{}",
        ] {
            let s = format!("Server=h;PWD={};UID=u", quote_value(v));
            let attrs = parse(&s).unwrap();
            assert_eq!(attrs[1].value, v, "{s}");
            assert_eq!(attrs[2].value, "u");
        }
        assert_eq!(quote_value("a=b"), "a=b");
        assert_eq!(quote_value("x}y"), "x}y");
        assert_eq!(quote_value("p;w}d"), "{p;w}}d}");
        assert_eq!(quote_value(" sp "), " sp ");
        assert_eq!(quote_value("  {x"), "{  {x}");
    }

    #[test]
    fn redaction_hides_every_secret() {
        let s = "Driver={X};UID=sa;PWD={s3;cr}}et};password=two;AccessToken=tok;Server=h";
        let r = redact(s);
        assert_eq!(
            r,
            "Driver=X;UID=sa;PWD=***;password=***;AccessToken=***;Server=h"
        );
        for secret in ["s3", "cr", "two", "tok"] {
            assert!(!r.contains(secret), "{r}");
        }
        assert_eq!(
            redact("PWD={never closed"),
            "<connection string not shown: malformed>"
        );
        // Text after a closing brace is hidden with the value.
        assert_eq!(redact("PWD={a}tail;X=1"), "PWD=***;X=1");
    }
}
