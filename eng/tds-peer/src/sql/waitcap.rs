//! `TDS_PEER_UNCANCELLABLE_WAIT_MS`: how long a wait that cannot be cancelled (COMMIT, DDL,
//! bulk loads under `LOCK_TIMEOUT -1`) lasts before 1222, instead of locks.rs's 60 s. For
//! suites written for SQL Server whose sessions each hold a DDL transaction (a `#temp` table
//! created outside autocommit) while another session runs DDL: on SQL Server they do not wait
//! at all (README, "What it does not emulate"), here each such test would wait the full cap.

use std::sync::OnceLock;
use std::time::Duration;

/// The cap from the environment (read once), else `default`.
pub fn uncancellable_cap(default: Duration) -> Duration {
    static CAP: OnceLock<Option<Duration>> = OnceLock::new();
    CAP.get_or_init(|| {
        std::env::var("TDS_PEER_UNCANCELLABLE_WAIT_MS")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_millis)
    })
    .unwrap_or(default)
}
