//! Azure SQL's transient faults, for clients' retry logic: a login refused with a transient
//! error the first N times (`--fail-logins 40613:N`), and a statement answered with one the
//! first N times it is run (`fault:transient=40501 fault:times=N` in its text). Errors of class
//! 20 (40197, 40501, 10928, 10929) also end the session (the connection is dropped, an open
//! transaction is rolled back), as SQL Server does after a fatal error and a failover does. Error texts and severities from Microsoft's "Troubleshooting connectivity issues and
//! other errors with Azure SQL Database" (transient fault and resource governance errors).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

/// The peer's transient-fault switches and how often each has fired.
#[derive(Default)]
pub struct Switches {
    /// `--fail-logins CODE:N`: the first N logins are refused with CODE.
    pub fail_logins: Option<(i32, u32)>,
    logins_failed: AtomicU32,
    /// Times each statement text (with its fault comment) has been failed so far.
    statements_failed: Mutex<HashMap<String, u32>>,
}

/// What the peer does with a request.
pub enum Outcome {
    Run,
    /// Answer with this ERROR token + DONE(DONE_ERROR); `drop` = then close the socket.
    Fail {
        error: Vec<u8>,
        drop: bool,
    },
}

impl Switches {
    /// `--fail-logins CODE:N` (N defaults to 1).
    pub fn parse_fail_logins(&mut self, v: &str) -> Result<(), String> {
        let (code, n) = v.split_once(':').unwrap_or((v, "1"));
        let code: i32 = code.parse().map_err(|e| format!("--fail-logins: {e}"))?;
        let n: u32 = n.parse().map_err(|e| format!("--fail-logins: {e}"))?;
        if error(code, "master").is_none() {
            return Err(format!("--fail-logins: no transient error {code}"));
        }
        self.fail_logins = Some((code, n));
        Ok(())
    }

    /// A login: refused with the configured error while the first N have not all failed.
    pub fn login(&self, database: &str) -> Outcome {
        let Some((code, n)) = self.fail_logins else {
            return Outcome::Run;
        };
        let failed = self
            .logins_failed
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |k| {
                (k < n).then_some(k + 1)
            });
        match (failed, error(code, database)) {
            (Ok(_), Some(error)) => Outcome::Fail { error, drop: true },
            _ => Outcome::Run,
        }
    }

    /// A statement (batch text or an RPC's statement parameter): failed when it names a
    /// transient fault (`fault:transient=CODE`, `fault:times=N`, default 1) and has been failed
    /// fewer than N times. Counted per statement text across all sessions.
    pub fn statement(&self, text: &str, database: &str) -> Outcome {
        if !text.contains("fault:transient=") {
            return Outcome::Run;
        }
        let value = |name: &str| {
            text.split(&format!("fault:{name}="))
                .nth(1)
                .map(|rest| {
                    rest.chars()
                        .take_while(char::is_ascii_digit)
                        .collect::<String>()
                })
                .and_then(|d| d.parse::<u32>().ok())
        };
        let (Some(code), times) = (value("transient"), value("times").unwrap_or(1)) else {
            return Outcome::Run;
        };
        let mut failed = self
            .statements_failed
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let count = failed.entry(text.to_string()).or_default();
        if *count >= times {
            return Outcome::Run;
        }
        match error(code as i32, database) {
            Some(error) => {
                *count += 1;
                Outcome::Fail {
                    error,
                    drop: ends_session(code as i32),
                }
            }
            None => Outcome::Run,
        }
    }
}

/// Errors of class 20 and above end the session in SQL Server (Driver 18 then reports the
/// connection dead whatever the server does): 40197, 40501, 10928, 10929.
fn ends_session(code: i32) -> bool {
    matches!(code, 40197 | 40501 | 10928 | 10929)
}

/// The ERROR token Azure SQL sends for transient error `code`, or None for a code not listed.
pub fn error(code: i32, database: &str) -> Option<Vec<u8>> {
    let (class, text) = match code {
        40613 => (
            17,
            format!(
                "Database '{database}' on server 'tds-peer' is not currently available. Please retry the connection later. If the problem persists, contact customer support, and provide them the session tracing ID of '{{00000000-0000-0000-0000-000000000000}}'."
            ),
        ),
        40197 => (
            20,
            "The service has encountered an error processing your request. Please try again. Error code 4815.".to_string(),
        ),
        40501 => (
            20,
            "The service is currently busy. Retry the request after 10 seconds. Incident ID: {00000000-0000-0000-0000-000000000000}. Code: 0.".to_string(),
        ),
        49918 => (
            16,
            "Cannot process request. Not enough resources to process request. The service is currently busy. Please retry the request later.".to_string(),
        ),
        49919 => (
            16,
            "Cannot process create or update request. Too many create or update operations in progress for subscription \"0\".".to_string(),
        ),
        49920 => (
            16,
            "Cannot process request. Too many operations in progress for subscription \"0\".".to_string(),
        ),
        4221 => (
            16,
            "Login to read-secondary failed due to long wait on 'HADR_DATABASE_WAIT_FOR_TRANSITION_TO_VERSIONING'. The replica is not available for login because row versions are missing for transactions that were in-flight when the replica was recycled. The issue can be resolved by rolling back or committing the active transactions on the primary replica. Occurrences of this condition can be minimized by avoiding long write transactions on the primary.".to_string(),
        ),
        10928 => (
            20,
            "Resource ID: 1. The request limit for the database is 30 and has been reached.".to_string(),
        ),
        10929 => (
            20,
            "Resource ID: 1. The request minimum guarantee is 0, maximum limit is 30, and the current usage for the database is 30. However, the server is currently too busy to support requests greater than 30 for this database.".to_string(),
        ),
        _ => return None,
    };
    let mut v = crate::token::message(code, &text, class, 1, 1);
    v.extend(crate::token::done(
        crate::token::TOK_DONE,
        crate::token::DONE_ERROR,
        0,
        0,
    ));
    Some(v)
}

/// The statement text of an RPC request (its first text parameter with a fault comment).
pub fn rpc_text(req: &crate::rpc::Rpc) -> Option<&str> {
    req.params.iter().find_map(|p| match &p.value {
        rusqlite::types::Value::Text(t) if t.contains("fault:transient=") => Some(t.as_str()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_n_only() {
        let mut s = Switches::default();
        s.parse_fail_logins("40613:2").unwrap();
        let fails = |o: Outcome| matches!(o, Outcome::Fail { .. });
        assert!(fails(s.login("db")) && fails(s.login("db")) && !fails(s.login("db")));
        let q = "SELECT 1 /* fault:transient=49918 fault:times=2 */";
        assert!(fails(s.statement(q, "db")) && fails(s.statement(q, "db")));
        assert!(!fails(s.statement(q, "db")));
        assert!(!fails(s.statement("SELECT 1", "db")));
        assert!(s.parse_fail_logins("1234:1").is_err());
    }
}
