//! Connection pooling (on by default, as in mssql-python; pyodbc's `pooling` also defaults to
//! on): a closed connection is parked under its connection string and handed to the next
//! connect with the same string, skipping the login round trips. Only sessions the server can
//! reset are pooled (see [`Connection::poolable`]); a parked connection is reset before it is
//! parked, checked alive (one round trip) when taken, and dropped after `IDLE_TIMEOUT`. A forked child never
//! takes its parent's parked sessions (two processes on one socket would interleave TDS).

use crate::connection::Connection;
use crate::error::Result;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Connections parked per connection string, at most.
const MAX_IDLE: usize = 16;
/// A parked connection older than this is closed instead of reused (servers and firewalls
/// drop idle sessions).
const IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// The parked connections, by connection string, and the process that opened them.
struct Parked {
    owner: u32,
    idle: BTreeMap<String, Vec<(Instant, Connection)>>,
}

static PARKED: Mutex<Parked> = Mutex::new(Parked {
    owner: 0,
    idle: BTreeMap::new(),
});

/// This process's parked connections. After a fork the parent's are forgotten, not closed: a
/// logout from the child would end sessions the parent still uses.
fn parked() -> std::sync::MutexGuard<'static, Parked> {
    let mut guard = PARKED.lock().unwrap_or_else(|e| e.into_inner());
    let pid = std::process::id();
    if guard.owner != pid {
        std::mem::forget(std::mem::take(&mut guard.idle));
        guard.owner = pid;
    }
    guard
}

/// A parked connection for `connection_string`, set to `autocommit`, or a new one.
pub fn connect(
    connection_string: &str,
    autocommit: bool,
    login_timeout_sec: Option<u32>,
) -> Result<Connection> {
    connect_keyed(connection_string, autocommit, || {
        Connection::connect(connection_string, autocommit, login_timeout_sec)
    })
}

/// A connection parked under `key`, set to `autocommit`, or a new one from `open`. The key is
/// what makes two sessions interchangeable: the connection string, plus the identity when the
/// login is an access token set before connecting (the token itself changes at each refresh,
/// the identity does not; see `python/ferrodbc/entra.py`).
pub fn connect_keyed(
    key: &str,
    autocommit: bool,
    open: impl FnOnce() -> Result<Connection>,
) -> Result<Connection> {
    loop {
        let taken = parked().idle.get_mut(key).and_then(Vec::pop);
        let Some((since, mut conn)) = taken else {
            return open();
        };
        if since.elapsed() > IDLE_TIMEOUT
            || conn.is_dead()
            || conn.set_autocommit(autocommit).is_err()
            || conn.ping().is_err()
        {
            let _ = conn.close();
            continue;
        }
        return Ok(conn);
    }
}

/// Park `conn` for the next connect with `connection_string`, or close it when it cannot be
/// reused (not poolable, reset failed, dead, pool full, or opened by the parent of this forked
/// child: closing abandons it then, and its reset would go out on the parent's session).
pub fn release(connection_string: &str, mut conn: Connection) -> Result<()> {
    if !conn.owned_here() || !conn.poolable() || conn.is_dead() {
        return conn.close();
    }
    if let Err(e) = conn.reset_for_reuse() {
        let _ = conn.close();
        return Err(e);
    }
    let mut guard = parked();
    let slot = guard.idle.entry(connection_string.to_string()).or_default();
    slot.retain(|(since, _)| since.elapsed() <= IDLE_TIMEOUT);
    if slot.len() >= MAX_IDLE {
        drop(guard);
        return conn.close();
    }
    slot.push((Instant::now(), conn));
    Ok(())
}

/// The parked connections for debugging: each connection string as [`crate::connstr::redact`]
/// shows it (never a password or token) and how many sessions are parked under it. Two keys
/// that differ only in a secret show alike, as two entries.
pub fn status() -> Vec<(String, usize)> {
    parked()
        .idle
        .iter()
        .map(|(key, conns)| (crate::connstr::redact(key), conns.len()))
        .collect()
}

/// Close every parked connection (interpreter exit, tests).
pub fn clear() {
    let idle = std::mem::take(&mut parked().idle);
    for conn in idle.into_values().flatten().map(|(_, c)| c) {
        let _ = conn.close();
    }
}
