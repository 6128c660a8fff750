//! Encoded results of read-only queries, kept per connection and replayed while nothing in the
//! database has changed.
//!
//! A benchmark that runs `SELECT * FROM t` over a user table again and again measured the peer
//! (SQLite stepping + encoding every row) as much as the client. An entry holds the COLMETADATA
//! and ROW bytes of one result; it is served only if the database is provably the same as when
//! the result was read. "The same" is deliberately coarse — any write to any table, by anyone,
//! invalidates every entry:
//!
//! - `PRAGMA data_version` changes when another connection (or process) commits;
//! - `total_changes()` counts this connection's INSERT/UPDATE/DELETE rows, committed or not;
//! - `schema_version` of `main` and `temp` changes with any DDL (this connection's included);
//! - the engine's transaction epoch changes at every BEGIN, COMMIT, ROLLBACK and connection reset
//!   (a rolled-back write leaves `total_changes()` as it was, but the data it showed is gone);
//! - autocommit state changes when SQLite itself rolls a transaction back after an error.
//!
//! Only deterministic statements are kept: SQLite's compiled program (`EXPLAIN`, views expanded)
//! may call no function outside a list of pure built-ins and may read no virtual table, so
//! `NEWID()`, `GETDATE()`, `random()` or a view using them are computed afresh every time. The
//! cache is per connection, so `#temp` tables (private to a connection) and session functions
//! (`@@SPID`) cannot leak between connections. Small results are not kept: re-running them costs
//! less than checking.

use crate::types::Ty;
use rusqlite::Connection;
use rusqlite::types::Value;

/// Results smaller than this are recomputed: the EXPLAIN check would cost about as much.
pub const MIN_BYTES: usize = 256 * 1024;
/// Most entries per connection (least recently used goes first).
const MAX_ENTRIES: usize = 8;

/// What identifies a result: the SQLite text, the bound values, and the column names, wire
/// types and nullability (two T-SQL texts can rewrite to the same SQLite text but type, name or
/// describe columns apart).
#[derive(Clone, Debug, PartialEq)]
pub struct Key {
    pub sql: String,
    pub params: Vec<Value>,
    pub tys: Vec<Ty>,
    pub names: Vec<String>,
    pub nullable: Vec<bool>,
}

/// The database state a result was read in (see the module comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct State {
    data_version: i64,
    total_changes: u64,
    autocommit: bool,
    epoch: u64,
    schema: i64,
    temp_schema: i64,
}

impl State {
    /// Read before the statement runs: a commit by another connection after this point makes
    /// the entry's `data_version` stale, never the other way round.
    pub fn read(db: &Connection, epoch: u64) -> rusqlite::Result<State> {
        let int = |sql: &str| -> rusqlite::Result<i64> {
            db.prepare_cached(sql)?.query_row([], |r| r.get(0))
        };
        Ok(State {
            data_version: int("PRAGMA data_version")?,
            total_changes: db.total_changes(),
            autocommit: db.is_autocommit(),
            epoch,
            schema: int("PRAGMA main.schema_version")?,
            temp_schema: int("PRAGMA temp.schema_version")?,
        })
    }
}

pub struct Entry {
    pub key: Key,
    pub state: State,
    /// COLMETADATA followed by every ROW/NBCROW token.
    pub bytes: Vec<u8>,
    pub rows: u64,
}

pub struct ResultCache {
    cap_bytes: usize,
    /// Oldest first.
    entries: Vec<Entry>,
    pub hits: u64,
}

impl ResultCache {
    pub fn new(cap_bytes: usize) -> ResultCache {
        ResultCache {
            cap_bytes,
            entries: Vec::new(),
            hits: 0,
        }
    }

    pub fn enabled(&self) -> bool {
        self.cap_bytes >= MIN_BYTES
    }

    /// Largest result worth keeping.
    pub fn cap_bytes(&self) -> usize {
        self.cap_bytes
    }

    pub fn has(&self, key: &Key) -> bool {
        self.entries.iter().any(|e| &e.key == key)
    }

    /// The entry for `key` if it was read in `state`; a stale entry for the key is dropped.
    pub fn get(&mut self, key: &Key, state: &State) -> Option<&Entry> {
        let i = self.entries.iter().position(|e| &e.key == key)?;
        if &self.entries[i].state != state {
            self.entries.remove(i);
            return None;
        }
        let e = self.entries.remove(i);
        self.entries.push(e);
        self.hits += 1;
        self.entries.last()
    }

    pub fn put(&mut self, entry: Entry) {
        if entry.bytes.len() > self.cap_bytes {
            return;
        }
        self.entries.retain(|e| e.key != entry.key);
        let mut used: usize = self.entries.iter().map(|e| e.bytes.len()).sum();
        while !self.entries.is_empty()
            && (self.entries.len() >= MAX_ENTRIES || used + entry.bytes.len() > self.cap_bytes)
        {
            used -= self.entries.remove(0).bytes.len();
        }
        self.entries.push(entry);
    }
}

/// SQLite built-ins that return the same value for the same arguments (what `EXPLAIN` may call
/// for a cacheable statement). Everything else — the peer's own functions included — is treated
/// as possibly non-deterministic.
const PURE: &[&str] = &[
    "abs",
    "avg",
    "coalesce",
    "count",
    "dense_rank",
    "group_concat",
    "hex",
    "iif",
    "ifnull",
    "instr",
    "length",
    "like",
    "lower",
    "ltrim",
    "max",
    "min",
    "nullif",
    "rank",
    "replace",
    "round",
    "row_number",
    "rtrim",
    "substr",
    "substring",
    "sum",
    "total",
    "trim",
    "typeof",
    "upper",
];

/// Whether `sql` (prepared on `db`) is read-only and computes its rows from the tables alone.
pub fn deterministic(db: &Connection, sql: &str) -> bool {
    let check = || -> rusqlite::Result<bool> {
        if !db.prepare(sql)?.readonly() {
            return Ok(false);
        }
        let mut st = db.prepare(&format!("EXPLAIN {sql}"))?;
        let mut rows = st.raw_query(); // parameters stay unbound (NULL): only the program is read
        while let Some(r) = rows.next()? {
            let op: String = r.get(1)?;
            if matches!(
                op.as_str(),
                "VOpen"
                    | "VFilter"
                    | "VColumn"
                    | "VNext"
                    | "VUpdate"
                    | "VBegin"
                    | "VCheck"
                    | "VInitIn"
            ) {
                return Ok(false); // a virtual table (pragma_*, json_each, …)
            }
            if op.starts_with("Function") || op.starts_with("PureFunc") || op.starts_with("Agg") {
                let p4: Option<String> = r.get(5)?;
                let name = p4
                    .as_deref()
                    .and_then(|p| p.split('(').next())
                    .unwrap_or("");
                if !PURE.contains(&name.to_ascii_lowercase().as_str()) {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    };
    check().unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Connection {
        let db = Connection::open_in_memory().unwrap();
        db.execute_batch(
            "CREATE TABLE t (a INT, b TEXT); CREATE VIEW vr AS SELECT random() AS r, a FROM t;
             CREATE VIEW vp AS SELECT lower(b) AS l FROM t;",
        )
        .unwrap();
        db.create_scalar_function("newid", 0, Default::default(), |_| Ok(1))
            .unwrap();
        db
    }

    #[test]
    fn only_pure_read_only_statements_are_deterministic() {
        let db = db();
        for sql in [
            "SELECT * FROM t",
            "SELECT a, count(*) FROM t WHERE b LIKE 'x%' GROUP BY a ORDER BY 2",
            "SELECT * FROM vp",
            "SELECT row_number() OVER (ORDER BY a), upper(b) FROM t",
            "SELECT * FROM t WHERE a IN (SELECT a FROM t WHERE a > ?1)",
        ] {
            assert!(deterministic(&db, sql), "{sql}");
        }
        for sql in [
            "SELECT random(), a FROM t",
            "SELECT * FROM vr",
            "SELECT newid() FROM t",
            "SELECT current_timestamp, a FROM t",
            "SELECT * FROM pragma_table_info('t')",
            "SELECT changes()",
            "INSERT INTO t VALUES (1, 'x') RETURNING a",
            "SELECT * FROM nosuch",
        ] {
            assert!(!deterministic(&db, sql), "{sql}");
        }
    }

    fn entry(sql: &str, state: State, len: usize) -> Entry {
        Entry {
            key: Key {
                sql: sql.into(),
                params: vec![],
                tys: vec![Ty::Int],
                names: vec!["a".into()],
                nullable: vec![true],
            },
            state,
            bytes: vec![0; len],
            rows: 1,
        }
    }

    #[test]
    fn state_changes_with_writes_ddl_and_other_connections() {
        let dir = std::env::temp_dir().join(format!("rc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.sqlite3");
        let _ = std::fs::remove_file(&path);
        let a = Connection::open(&path).unwrap();
        a.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t (a INT)")
            .unwrap();
        let b = Connection::open(&path).unwrap();
        let s0 = State::read(&a, 0).unwrap();
        assert_eq!(State::read(&a, 0).unwrap(), s0, "no change, same state");
        assert_ne!(State::read(&a, 1).unwrap(), s0, "epoch");
        a.execute("INSERT INTO t VALUES (1)", []).unwrap();
        let s1 = State::read(&a, 0).unwrap();
        assert_ne!(s1, s0, "own write");
        b.execute("INSERT INTO t VALUES (2)", []).unwrap();
        let s2 = State::read(&a, 0).unwrap();
        assert_ne!(s2, s1, "another connection's commit");
        b.execute_batch("CREATE TABLE u (x INT)").unwrap();
        let s3 = State::read(&a, 0).unwrap();
        assert_ne!(s3, s2, "another connection's DDL");
        a.execute_batch("DROP TABLE u").unwrap();
        let s4 = State::read(&a, 0).unwrap();
        assert_ne!(s4, s3, "own DDL");
        a.execute_batch("CREATE TEMP TABLE tt (x INT)").unwrap();
        let s5 = State::read(&a, 0).unwrap();
        assert_ne!(s5, s4, "own temp DDL");
        a.execute_batch("BEGIN").unwrap();
        assert_ne!(State::read(&a, 0).unwrap(), s5, "inside a transaction");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn entries_are_served_only_in_their_state_and_within_capacity() {
        let db = db();
        let s = State::read(&db, 0).unwrap();
        let other = State::read(&db, 1).unwrap();
        let mut c = ResultCache::new(MIN_BYTES * 2);
        c.put(entry("q1", s, 10));
        let key = entry("q1", s, 0).key;
        assert!(c.has(&key));
        assert!(c.get(&key, &other).is_none(), "stale state");
        assert!(!c.has(&key), "a stale entry is dropped");
        c.put(entry("q1", s, 10));
        assert_eq!(c.get(&key, &s).map(|e| e.bytes.len()), Some(10));
        c.put(entry("big", s, MIN_BYTES * 2 + 1));
        assert!(!c.has(&entry("big", s, 0).key), "larger than the cache");
        c.put(entry("q2", s, MIN_BYTES));
        c.put(entry("q3", s, MIN_BYTES));
        assert!(!c.has(&key), "least recently used evicted for room");
        assert!(c.has(&entry("q3", s, 0).key));
    }
}
