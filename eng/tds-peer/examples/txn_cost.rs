//! What the candidate designs for concurrent write transactions cost on one SQLite WAL file
//! (the README's "Concurrent transactions" figures): N single-row INSERTs in one transaction,
//! one statement per row as an executemany sends them, into `t (id INT PRIMARY KEY, v TEXT)`
//! stored as the peer stores it (the key is not the rowid).
//!
//!     cargo run --release -p tds-peer --example txn_cost [N]

use rusqlite::hooks::Action;
use rusqlite::types::Value;
use rusqlite::{Connection, params};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

const INSERT: &str = "INSERT INTO t (id, v) VALUES (?1, ?2)";

fn open(path: &str) -> Connection {
    let db = Connection::open(path).unwrap();
    db.pragma_update(None, "journal_mode", "WAL").unwrap();
    db.pragma_update(None, "synchronous", "OFF").unwrap();
    db.execute_batch("DROP TABLE IF EXISTS t; CREATE TABLE t (id INT PRIMARY KEY, v TEXT)")
        .unwrap();
    db
}

fn insert(db: &Connection, k: i64) {
    db.prepare_cached(INSERT)
        .unwrap()
        .execute(params![k, format!("value {k}")])
        .unwrap();
}

fn report(label: &str, t: Instant, rows: i64) {
    let us = t.elapsed().as_secs_f64() * 1e6 / rows as f64;
    println!("{label:<70} {us:8.2} µs/row");
}

/// The rows' current images, as a yielding transaction keeps them.
fn images(db: &Connection, rowids: &[i64]) -> Vec<Vec<Value>> {
    let mut s = db
        .prepare_cached("SELECT id, v FROM t WHERE rowid = ?1")
        .unwrap();
    rowids
        .iter()
        .map(|r| {
            s.query_row([r], |row| Ok(vec![row.get(0)?, row.get(1)?]))
                .unwrap()
        })
        .collect()
}

fn reapply(db: &Connection, imgs: &[Vec<Value>]) {
    let mut s = db.prepare_cached(INSERT).unwrap();
    for v in imgs {
        s.execute(params![v[0], v[1]]).unwrap();
    }
}

fn main() {
    let n: i64 = std::env::args()
        .nth(1)
        .map_or(10_000, |s| s.parse().unwrap());
    let dir = std::env::temp_dir().join(format!("txn-cost-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.sqlite3");
    let path = path.to_str().unwrap();

    // Before: one SQLite write transaction holds the file until COMMIT.
    let db = open(path);
    let t = Instant::now();
    db.execute_batch("BEGIN IMMEDIATE").unwrap();
    for k in 0..n {
        insert(&db, k);
    }
    db.execute_batch("COMMIT").unwrap();
    report("one SQLite write transaction (before)", t, n);

    // (b) the peer's own locks and undo log: every statement its own SQLite transaction, so
    // the writer is free between statements (what it costs to write; hiding those committed
    // rows from readers has no SQLite mechanism at all).
    let db = open(path);
    let t = Instant::now();
    for k in 0..n {
        db.execute_batch("BEGIN IMMEDIATE").unwrap();
        insert(&db, k);
        db.execute_batch("COMMIT").unwrap();
    }
    report("(b) a short write transaction per statement", t, n);

    // Chosen: the transaction keeps the writer; every statement runs under a savepoint, the
    // update hook names its rows, their keys are read and taken in a shared lock table.
    let db = open(path);
    let log: Arc<Mutex<Vec<(Action, i64)>>> = Arc::default();
    let feed = Arc::clone(&log);
    db.update_hook(Some(move |a: Action, _: &str, _: &str, rowid: i64| {
        feed.lock().unwrap().push((a, rowid))
    }));
    let locks: Mutex<HashMap<String, u16>> = Mutex::default();
    let mut rowids = Vec::with_capacity(n as usize);
    let t = Instant::now();
    db.execute_batch("BEGIN IMMEDIATE").unwrap();
    for k in 0..n {
        db.prepare_cached("SAVEPOINT s")
            .unwrap()
            .execute([])
            .unwrap();
        insert(&db, k);
        let changes = std::mem::take(&mut *log.lock().unwrap());
        let _: i64 = db
            .prepare_cached("PRAGMA main.schema_version")
            .unwrap()
            .query_row([], |r| r.get(0))
            .unwrap();
        for (_, rowid) in changes {
            let key: Value = db
                .prepare_cached("SELECT id FROM t WHERE rowid = ?1")
                .unwrap()
                .query_row([rowid], |r| r.get(0))
                .unwrap();
            locks.lock().unwrap().insert(format!("t\0k{key:?}"), 1);
            rowids.push(rowid);
        }
        db.prepare_cached("RELEASE s").unwrap().execute([]).unwrap();
    }
    report(
        "chosen: kept writer + savepoint, update hook, key lock per row",
        t,
        n,
    );

    // Yielding the writer and taking it back: images read, rollback, re-applied.
    let t = Instant::now();
    let imgs = images(&db, &rowids);
    db.execute_batch("ROLLBACK; BEGIN IMMEDIATE").unwrap();
    reapply(&db, &imgs);
    db.execute_batch("COMMIT").unwrap();
    report(
        "chosen, once yielded: images + rollback + re-apply (per row held)",
        t,
        n,
    );
    db.update_hook(None::<fn(Action, &str, &str, i64)>);

    // (a) private buffers re-applied for every statement (the writer never kept): each
    // statement re-applies the transaction so far, runs, reads its row back, rolls back.
    // Quadratic, so measured on n/10 rows.
    let m = (n / 10).max(1);
    let db = open(path);
    let t = Instant::now();
    let mut buf: Vec<Vec<Value>> = Vec::new();
    for k in 0..m {
        db.execute_batch("BEGIN IMMEDIATE").unwrap();
        reapply(&db, &buf);
        insert(&db, k);
        let rowid = db.last_insert_rowid();
        buf.extend(images(&db, &[rowid]));
        db.execute_batch("ROLLBACK").unwrap();
    }
    report(
        &format!("(a) buffers re-applied at every statement, {m} rows"),
        t,
        m,
    );
    let _ = std::fs::remove_dir_all(&dir);
}
