//! The database `uri`: an ODBC connection string as is, or a URL mapped to Driver 18's keywords.
//!
//! `mssql://user:pass@host:port/db?Encrypt=yes&TrustServerCertificate=yes` becomes
//! `Driver={ODBC Driver 18 for SQL Server};Server=host,port;Database=db;UID=user;PWD=pass;
//! Encrypt=yes;TrustServerCertificate=yes`. The schemes `mssql`, `sqlserver` and `ferrodbc` are
//! the same; `ferrodbc://` is the one polars' `read_database_uri(engine="adbc")` needs, since it
//! imports the module `adbc_driver_<scheme>` (`adbc_driver_mssql` is not this package). Query
//! parameters are passed as connection-string keywords (percent-decoded), and `driver=` picks
//! another driver (`driver=FreeTDS`: FreeTDS takes the port as `Port=`, not after a comma).
//! Anything else is taken as an ODBC connection string.

use crate::error::{Result, invalid_argument};

const SCHEMES: [&str; 3] = ["mssql://", "sqlserver://", "ferrodbc://"];
pub const DEFAULT_DRIVER: &str = "ODBC Driver 18 for SQL Server";

/// A connection-string value, braced when it holds a character the format gives a meaning to.
pub fn quote(value: &str) -> String {
    if value.contains([';', '{', '}', '=']) || value.starts_with(' ') || value.ends_with(' ') {
        format!("{{{}}}", value.replace('}', "}}"))
    } else {
        value.to_string()
    }
}

fn percent_decode(s: &str) -> Result<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = s
                    .get(i + 1..i + 3)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| invalid_argument("uri: a '%' not followed by two hex digits"))?;
                out.push(hex);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| invalid_argument("uri: percent-decoded text is not UTF-8"))
}

/// Whether `uri` is in the URL form.
pub fn is_url(uri: &str) -> bool {
    let lower = uri.trim_start().to_ascii_lowercase();
    SCHEMES.iter().any(|s| lower.starts_with(s))
}

/// The ODBC connection string for `uri` (the URL form mapped; anything else as given).
pub fn to_connection_string(uri: &str) -> Result<String> {
    if !is_url(uri) {
        return Ok(uri.to_string());
    }
    let uri = uri.trim();
    let rest = &uri[uri.find("://").map_or(0, |i| i + 3)..];
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    let (authority, path) = match rest.split_once('/') {
        Some((a, p)) => (a, p),
        None => (rest, ""),
    };
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    let (host, port) = if let Some(stripped) = hostport.strip_prefix('[') {
        // [ipv6]:port
        let (h, p) = stripped
            .split_once(']')
            .ok_or_else(|| invalid_argument("uri: an unclosed '[' in the host"))?;
        (h.to_string(), p.strip_prefix(':').map(str::to_string))
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p.to_string())),
            None => (hostport.to_string(), None),
        }
    };
    let host = percent_decode(&host)?;
    if let Some(p) = &port
        && p.parse::<u16>().is_err()
    {
        return Err(invalid_argument(format!(
            "uri: the port {p:?} is not a number"
        )));
    }
    let mut driver = DEFAULT_DRIVER.to_string();
    let mut extra: Vec<(String, String)> = Vec::new();
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let (k, v) = (percent_decode(k)?, percent_decode(v)?);
        if k.eq_ignore_ascii_case("driver") {
            driver = v;
        } else {
            extra.push((k, v));
        }
    }
    let freetds = driver.to_ascii_lowercase().contains("freetds");
    let mut parts = vec![format!("Driver={}", quote_driver(&driver))];
    match (&port, freetds) {
        (Some(p), true) => {
            parts.push(format!("Server={}", quote(&host)));
            parts.push(format!("Port={p}"));
        }
        (Some(p), false) => parts.push(format!("Server={}", quote(&format!("{host},{p}")))),
        (None, _) => parts.push(format!("Server={}", quote(&host))),
    }
    let db = percent_decode(path.trim_end_matches('/'))?;
    if !db.is_empty() {
        parts.push(format!("Database={}", quote(&db)));
    }
    if let Some(u) = userinfo {
        let (user, pass) = match u.split_once(':') {
            Some((a, b)) => (a, Some(b)),
            None => (u, None),
        };
        parts.push(format!("UID={}", quote(&percent_decode(user)?)));
        if let Some(p) = pass {
            parts.push(format!("PWD={}", quote(&percent_decode(p)?)));
        }
    }
    for (k, v) in extra {
        if k.contains(['=', ';', '{', '}']) {
            return Err(invalid_argument(format!("uri: {k:?} is not a keyword")));
        }
        parts.push(format!("{k}={}", quote(&v)));
    }
    Ok(parts.join(";"))
}

/// A driver name is always braced (names have spaces); `}` doubled.
fn quote_driver(name: &str) -> String {
    format!("{{{}}}", name.replace('}', "}}"))
}

/// The connection string with `UID`/`PWD` added (the `username`/`password` options), replacing
/// any the string had.
pub fn with_credentials(cs: &str, user: Option<&str>, password: Option<&str>) -> String {
    let mut out = cs.trim_end_matches(';').to_string();
    if let Some(u) = user {
        out.push_str(&format!(";UID={}", quote(u)));
    }
    if let Some(p) = password {
        out.push_str(&format!(";PWD={}", quote(p)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_maps_to_driver_18_keywords() {
        let cs = to_connection_string(
            "mssql://sa:p%40ss;w@db.example:1433/sales?Encrypt=yes&TrustServerCertificate=yes",
        )
        .unwrap();
        assert_eq!(
            cs,
            "Driver={ODBC Driver 18 for SQL Server};Server=db.example,1433;Database=sales;\
             UID=sa;PWD={p@ss;w};Encrypt=yes;TrustServerCertificate=yes"
        );
    }

    #[test]
    fn freetds_takes_the_port_apart() {
        let cs = to_connection_string("ferrodbc://u:p@127.0.0.1:5000/?driver=FreeTDS").unwrap();
        assert_eq!(
            cs,
            "Driver={FreeTDS};Server=127.0.0.1;Port=5000;UID=u;PWD=p"
        );
    }

    #[test]
    fn connection_strings_pass_through() {
        let s = "Driver={SQLite3};Database=:memory:";
        assert_eq!(to_connection_string(s).unwrap(), s);
    }

    #[test]
    fn bad_port_and_escape_are_refused() {
        assert!(to_connection_string("mssql://h:x/db").is_err());
        assert!(to_connection_string("mssql://h/db?a=%zz").is_err());
    }

    #[test]
    fn quoting() {
        assert_eq!(quote("a}b;"), "{a}}b;}");
        assert_eq!(quote("plain"), "plain");
    }
}
