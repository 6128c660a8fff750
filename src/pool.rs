//! Opt-in connection pooling: a closed connection is parked under its connection string and
//! handed to the next connect with the same string, skipping the login round trips (what
//! mssql-python does by default). Only sessions the server can reset are pooled (see
//! [`Connection::poolable`]); a parked connection is reset before it is parked, checked alive
//! when taken, and dropped after [`IDLE_TIMEOUT`].

use crate::connection::Connection;
use crate::error::Result;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Connections parked per connection string, at most.
const MAX_IDLE: usize = 16;
/// A parked connection older than this is closed instead of reused (servers and firewalls
/// drop idle sessions).
const IDLE_TIMEOUT: Duration = Duration::from_secs(120);

type Idle = HashMap<String, Vec<(Instant, Connection)>>;

static IDLE: Mutex<Option<Idle>> = Mutex::new(None);

fn idle() -> std::sync::MutexGuard<'static, Option<Idle>> {
    IDLE.lock().unwrap_or_else(|e| e.into_inner())
}

/// A parked connection for `connection_string`, set to `autocommit`, or a new one.
pub fn connect(
    connection_string: &str,
    autocommit: bool,
    login_timeout_sec: Option<u32>,
) -> Result<Connection> {
    loop {
        let parked = idle()
            .as_mut()
            .and_then(|m| m.get_mut(connection_string))
            .and_then(Vec::pop);
        let Some((since, mut conn)) = parked else {
            return Connection::connect(connection_string, autocommit, login_timeout_sec);
        };
        if since.elapsed() > IDLE_TIMEOUT
            || conn.is_dead()
            || conn.set_autocommit(autocommit).is_err()
        {
            let _ = conn.close();
            continue;
        }
        return Ok(conn);
    }
}

/// Park `conn` for the next connect with `connection_string`, or close it when it cannot be
/// reused (not poolable, reset failed, dead, pool full).
pub fn release(connection_string: &str, mut conn: Connection) -> Result<()> {
    if !conn.poolable() || conn.is_dead() {
        return conn.close();
    }
    if let Err(e) = conn.reset_for_reuse() {
        let _ = conn.close();
        return Err(e);
    }
    let mut guard = idle();
    let slot = guard
        .get_or_insert_with(HashMap::new)
        .entry(connection_string.to_string())
        .or_default();
    slot.retain(|(since, _)| since.elapsed() <= IDLE_TIMEOUT);
    if slot.len() >= MAX_IDLE {
        drop(guard);
        return conn.close();
    }
    slot.push((Instant::now(), conn));
    Ok(())
}

/// Close every parked connection (interpreter exit, tests).
pub fn clear() {
    let parked: Vec<Connection> = idle()
        .take()
        .into_iter()
        .flat_map(|m| m.into_values().flatten().map(|(_, c)| c))
        .collect();
    for conn in parked {
        let _ = conn.close();
    }
}
