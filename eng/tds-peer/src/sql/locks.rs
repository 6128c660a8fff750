//! Row locks between sessions over SQLite's one writer: what lets two transactions write
//! different rows of one table at the same time, as SQL Server's row locks do.
//!
//! SQLite lets one connection at a time hold the file's write transaction. The peer shares that
//! *writer* slot (`LockManager::writer`) between sessions and keeps row locks of its own:
//!
//! - A session in a transaction keeps its SQLite write transaction open between statements
//!   (its writes are applied and uncommitted, so readers elsewhere see the committed snapshot).
//! - When another session needs to write, the holder *yields*: it reads back the current image
//!   of every row it touched, rolls its SQLite transaction back and keeps the images (`redo`).
//!   Its row locks stay. When it runs its next statement (or commits), it takes the writer
//!   again and re-applies the images, then goes on. An idle holder notices the request between
//!   requests (`Engine::idle` polls every 10 ms while it holds the writer).
//! - Every DML statement runs under a savepoint; SQLite's update hook names the rows it changed,
//!   and those keys are checked against the lock table. A key another transaction holds: the
//!   statement is undone, the session yields the writer and waits for that key (its
//!   `SET LOCK_TIMEOUT`, deadlock detection on the wait-for graph), then runs the statement
//!   again.
//! - A transaction that did something the images cannot carry (DDL, `#temp` writes, bulk
//!   loads, SELECT INTO, sequences, procedures) is *pinned*: it keeps the writer until it ends,
//!   and other writers wait for it as they all did before.
//!
//! Keys: the rowid where it is the primary key (INTEGER PRIMARY KEY: identity columns), and
//! for tables with another primary key the key's values of inserted and updated rows plus the
//! rowid of updated and deleted rows that were committed before the transaction touched them.
//! Rows a transaction inserted itself are invisible to the others, so they take no rowid lock.

use crate::sql::context::{Context, StmtErr};
use crate::sql::errors::{SqlError, from_sqlite};
use rusqlite::hooks::Action;
use rusqlite::types::Value;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The number of the internal error a wait ended by ATTENTION returns (the engine answers it
/// with DONE_ATTN, not as an error).
pub const CANCELLED: i32 = -1;

/// How long a wait that cannot be cancelled (COMMIT, DDL, bulk loads) lasts with
/// `LOCK_TIMEOUT -1` before it fails with 1222: SQL Server would wait for ever.
const UNCANCELLABLE_CAP: Duration = Duration::from_secs(60);

/// How often a waiting session looks again (lock released, ATTENTION, deadline).
const TICK: Duration = Duration::from_millis(10);

/// How long a busy transaction keeps the writer once another session asks for it: it yields
/// between statements only after holding it this long, or four times as long as re-applying
/// its rows took (an idle one yields after `TICK` without a request). Yielding at every
/// statement made two concurrent executemany transactions re-apply their rows at every row:
/// 4,000 rows each took 5 s instead of 0.3 s.
const SLICE: Duration = Duration::from_millis(20);

/// The lock table and the writer slot, shared by every session of the peer.
#[derive(Default)]
pub struct LockManager {
    st: Mutex<State>,
    cv: Condvar,
}

#[derive(Default)]
struct State {
    /// The session whose SQLite write transaction is open (or running an autocommit write).
    writer: Option<u16>,
    /// The writer cannot yield (its transaction is pinned).
    writer_pinned: bool,
    /// Sessions waiting for the writer slot.
    writer_queue: HashSet<u16>,
    /// The session that last yielded: it lets the queue go first.
    yielded_by: Option<u16>,
    /// Row key → the session whose transaction holds it.
    rows: HashMap<String, u16>,
    /// Wait-for edges: waiting session → the session it waits for.
    waits: HashMap<u16, u16>,
    /// Per open transaction: the highest rowid it inserted into each table (identity values
    /// that must not be handed out again while its rows are not in the file).
    ids: HashMap<u16, HashMap<String, i64>>,
}

enum Wait {
    Granted,
    Timeout,
    Deadlock,
    Cancelled,
}

impl LockManager {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// No row locks and no pending identity values: an autocommit statement needs no check.
    fn quiet(&self) -> bool {
        let st = self.lock();
        st.rows.is_empty() && st.ids.is_empty()
    }

    /// Another session waits for the writer slot.
    pub fn yield_wanted(&self) -> bool {
        !self.lock().writer_queue.is_empty()
    }

    fn release_writer(&self, me: u16, yielded: bool) {
        let mut st = self.lock();
        if st.writer == Some(me) {
            st.writer = None;
            st.writer_pinned = false;
            st.yielded_by = yielded.then_some(me);
        }
        drop(st);
        self.cv.notify_all();
    }

    fn set_pinned(&self, me: u16) {
        let mut st = self.lock();
        if st.writer == Some(me) {
            st.writer_pinned = true;
        }
    }

    /// Everything session `me` holds goes (its transaction ended, or the session did).
    pub fn end(&self, me: u16) {
        let mut st = self.lock();
        if st.writer == Some(me) {
            st.writer = None;
            st.writer_pinned = false;
        }
        if st.yielded_by == Some(me) {
            st.yielded_by = None;
        }
        if !st.rows.is_empty() {
            st.rows.retain(|_, o| *o != me);
        }
        st.ids.remove(&me);
        st.waits.remove(&me);
        st.writer_queue.remove(&me);
        drop(st);
        self.cv.notify_all();
    }

    /// Takes every key for `me` (transaction) or only checks them (autocommit): the first key
    /// another session holds, if any, and then nothing is taken.
    fn try_lock(&self, me: u16, keys: &[String], take: bool) -> Option<String> {
        let mut st = self.lock();
        for k in keys {
            if st.rows.get(k).is_some_and(|o| *o != me) {
                return Some(k.clone());
            }
        }
        if take {
            for k in keys {
                st.rows.insert(k.clone(), me);
            }
        }
        None
    }

    fn note_ids(&self, me: u16, ids: &HashMap<String, i64>) {
        let mut st = self.lock();
        let mine = st.ids.entry(me).or_default();
        for (t, id) in ids {
            let e = mine.entry(t.clone()).or_insert(*id);
            *e = (*e).max(*id);
        }
    }

    /// Other transactions' pending identity values, highest per table.
    fn others_ids(&self, me: u16) -> Vec<(String, i64)> {
        let st = self.lock();
        let mut out: HashMap<&String, i64> = HashMap::new();
        for (s, m) in &st.ids {
            if *s != me {
                for (t, id) in m {
                    let e = out.entry(t).or_insert(*id);
                    *e = (*e).max(*id);
                }
            }
        }
        out.into_iter().map(|(t, i)| (t.clone(), i)).collect()
    }

    /// Waits until `free` grants (returns None) or says whom it waits for; deadlocks are
    /// looked for on every pass, so exactly one session of a cycle (the one that closes it)
    /// sees one. `timeout`: None waits for ever; it runs only while `counts` says so.
    fn wait(
        &self,
        me: u16,
        timeout: Option<Duration>,
        cancel: &mut dyn FnMut() -> bool,
        mut free: impl FnMut(&mut State) -> Option<Option<u16>>,
        counts: impl Fn(&State) -> bool,
    ) -> Wait {
        let mut waited = Duration::ZERO;
        let mut st = self.lock();
        loop {
            match free(&mut st) {
                None => {
                    st.waits.remove(&me);
                    return Wait::Granted;
                }
                Some(Some(owner)) => {
                    st.waits.insert(me, owner);
                    if cycle(&st.waits, me) {
                        st.waits.remove(&me);
                        return Wait::Deadlock;
                    }
                }
                Some(None) => {
                    st.waits.remove(&me);
                }
            }
            // A wait that does not count (a yielding writer) never times out, even at 0.
            if counts(&st) && timeout.is_some_and(|t| waited >= t) {
                st.waits.remove(&me);
                return Wait::Timeout;
            }
            let t0 = Instant::now();
            st = self
                .cv
                .wait_timeout(st, TICK)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            if counts(&st) {
                waited += t0.elapsed();
            }
            drop(st);
            let cancelled = cancel();
            st = self.lock();
            if cancelled {
                st.waits.remove(&me);
                return Wait::Cancelled;
            }
        }
    }

    fn wait_writer(
        &self,
        me: u16,
        timeout: Option<Duration>,
        cancel: &mut dyn FnMut() -> bool,
    ) -> Wait {
        let r = self.wait(
            me,
            timeout,
            cancel,
            |st| match st.writer {
                None if st.yielded_by != Some(me) || st.writer_queue.is_empty() => {
                    st.writer = Some(me);
                    st.writer_pinned = false;
                    st.yielded_by = None;
                    st.writer_queue.remove(&me);
                    None
                }
                None => Some(None),
                Some(h) if h == me => None,
                Some(h) => {
                    st.writer_queue.insert(me);
                    // A holder that can yield will: only a pinned one is waited for.
                    Some(st.writer_pinned.then_some(h))
                }
            },
            // A lock timeout counts only while the writer is pinned: a yielding holder is a
            // latch, not a lock.
            |st| st.writer_pinned,
        );
        if !matches!(r, Wait::Granted) {
            self.lock().writer_queue.remove(&me);
        }
        r
    }

    fn wait_row(
        &self,
        me: u16,
        key: &str,
        timeout: Option<Duration>,
        cancel: &mut dyn FnMut() -> bool,
    ) -> Wait {
        self.wait(
            me,
            timeout,
            cancel,
            |st| match st.rows.get(key) {
                Some(&o) if o != me => Some(Some(o)),
                _ => None,
            },
            |_| true,
        )
    }
}

/// Whether following the wait-for edges from `me` comes back to `me`.
fn cycle(waits: &HashMap<u16, u16>, me: u16) -> bool {
    let mut at = me;
    for _ in 0..=waits.len() {
        match waits.get(&at) {
            Some(&next) if next == me => return true,
            Some(&next) => at = next,
            None => return false,
        }
    }
    false
}

/// A row the update hook saw change.
pub struct Change {
    action: Action,
    temp: bool,
    table: Arc<str>,
    rowid: i64,
}

/// A row the transaction changed: its table, rowid, and whether the transaction inserted it.
#[derive(Clone)]
struct Touched {
    table: String,
    rowid: i64,
    inserted: bool,
}

/// What a table's rows are keyed by, and the columns an image holds.
struct TableInfo {
    /// The rowid is the primary key (INTEGER PRIMARY KEY).
    alias: bool,
    /// Primary key columns otherwise (empty: a heap).
    pk: Vec<String>,
    /// Columns written back when a yielded transaction resumes (rowversion columns are
    /// their triggers' business).
    cols: Vec<String>,
    /// `SELECT <key columns> … WHERE rowid = ?1`, and the key's prefix (the table's name).
    key_sql: String,
    key_prefix: String,
}

/// One session's side: its transaction's rows, locks and state towards the writer slot.
pub struct TxnLocks {
    log: Arc<Mutex<Vec<Change>>>,
    /// This session holds the writer slot.
    pub(crate) writer: bool,
    /// Since when it holds it (its rows re-applied), and how long it keeps it once asked.
    since: Option<Instant>,
    slice: Duration,
    /// Its transaction cannot yield (see the module comment).
    pub(crate) pinned: bool,
    touched: Vec<Touched>,
    index: HashMap<(String, i64), usize>,
    /// A yielded transaction's row images (None: the row is gone), applied when it resumes.
    redo: Option<Vec<(Touched, Option<Vec<Value>>)>>,
    /// `SET LOCK_TIMEOUT` in ms (-1: for ever).
    pub(crate) lock_timeout: i64,
    tables: HashMap<String, Rc<TableInfo>>,
    tables_schema: i64,
    /// ENVCHANGE(rollback) of a transaction ended by a deadlock, for the engine to send.
    pub(crate) pending_env: Option<Vec<u8>>,
}

impl TxnLocks {
    /// The session's lock state, with SQLite's update hook on `db` feeding it.
    pub fn new(db: &rusqlite::Connection) -> TxnLocks {
        let log: Arc<Mutex<Vec<Change>>> = Arc::default();
        let feed = Arc::clone(&log);
        db.update_hook(Some(
            move |action: Action, db: &str, table: &str, rowid: i64| {
                let mut v = feed.lock().unwrap_or_else(|e| e.into_inner());
                let table = match v.last() {
                    Some(c) if &*c.table == table => Arc::clone(&c.table),
                    _ => Arc::from(table),
                };
                v.push(Change {
                    action,
                    temp: db == "temp",
                    table,
                    rowid,
                });
            },
        ));
        TxnLocks {
            log,
            writer: false,
            since: None,
            slice: SLICE,
            pinned: false,
            touched: Vec::new(),
            index: HashMap::new(),
            redo: None,
            lock_timeout: -1,
            tables: HashMap::new(),
            tables_schema: -1,
            pending_env: None,
        }
    }

    fn take_log(&self) -> Vec<Change> {
        std::mem::take(&mut *self.log.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn clear_log(&self) {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    fn timeout(&self, cancellable: bool) -> Option<Duration> {
        match self.lock_timeout {
            t if t >= 0 => Some(Duration::from_millis(t as u64)),
            _ if cancellable => None,
            _ => Some(super::waitcap::uncancellable_cap(UNCANCELLABLE_CAP)),
        }
    }
}

fn sql_err(e: rusqlite::Error) -> StmtErr {
    StmtErr::Sql(from_sqlite(&e))
}

fn exec(cx: &Context, sql: &str) -> Result<(), StmtErr> {
    cx.db
        .prepare_cached(sql)
        .and_then(|mut s| s.execute([]))
        .map(|_| ())
        .map_err(sql_err)
}

fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

pub fn lock_timeout_error() -> SqlError {
    let mut e = SqlError::new(1222, 16, "Lock request time out period exceeded.");
    e.state = 51;
    e
}

fn deadlock_error(spid: u16) -> SqlError {
    let mut e = SqlError::new(
        1205,
        13,
        format!(
            "Transaction (Process ID {spid}) was deadlocked on lock resources with another \
             process and has been chosen as the deadlock victim. Rerun the transaction."
        ),
    );
    e.state = 51;
    e
}

fn cancelled() -> StmtErr {
    StmtErr::Sql(SqlError::new(
        CANCELLED,
        0,
        "cancelled while waiting for a lock",
    ))
}

/// The deadlock victim: its transaction is rolled back (the ENVCHANGE goes with the error).
fn victim(cx: &mut Context) -> StmtErr {
    cx.lk.pending_env = cx.end_txn(false).ok();
    StmtErr::Sql(deadlock_error(cx.spid))
}

fn outcome(cx: &mut Context, w: Wait) -> Result<(), StmtErr> {
    match w {
        Wait::Granted => Ok(()),
        Wait::Timeout => Err(StmtErr::Sql(lock_timeout_error())),
        Wait::Deadlock => Err(victim(cx)),
        Wait::Cancelled => Err(cancelled()),
    }
}

/// Takes the writer slot (waiting for it), and inside a transaction opens the SQLite write
/// transaction and re-applies what the transaction wrote before it last yielded.
pub(crate) fn acquire(cx: &mut Context, cancel: &mut dyn FnMut() -> bool) -> Result<(), StmtErr> {
    if cx.lk.writer {
        return Ok(());
    }
    let shared = Arc::clone(&cx.shared);
    let w = shared
        .locks
        .wait_writer(cx.spid, cx.lk.timeout(false), cancel);
    outcome(cx, w)?;
    cx.lk.writer = true;
    let t0 = Instant::now();
    cx.lk.since = Some(t0);
    cx.lk.slice = SLICE;
    let ids = shared.locks.others_ids(cx.spid);
    if !cx.txn_open {
        // An autocommit statement: identity values other transactions hold are skipped.
        bump_ids(cx, &ids)?;
        return Ok(());
    }
    if let Err(e) = cx.db.execute_batch("BEGIN IMMEDIATE") {
        cx.lk.writer = false;
        shared.locks.release_writer(cx.spid, false);
        return Err(sql_err(e));
    }
    cx.sqlite_txn = true;
    bump_ids(cx, &ids)?;
    if let Some(redo) = cx.lk.redo.take() {
        cx.txn_epoch += 1;
        if let Err(e) = resume(cx, redo) {
            // The transaction cannot be put back together: it ends, rolled back.
            cx.lk.pending_env = cx.end_txn(false).ok();
            return Err(e);
        }
        // It keeps the writer at least four times as long as re-applying took, so a large
        // transaction sharing the writer spends at most a fifth of its turns re-applying.
        cx.lk.slice = SLICE.max(t0.elapsed() * 4);
        cx.lk.since = Some(Instant::now());
    }
    Ok(())
}

/// Identity (AUTOINCREMENT) tables continue above values other open transactions took.
fn bump_ids(cx: &Context, ids: &[(String, i64)]) -> Result<(), StmtErr> {
    for (t, id) in ids {
        // No row yet when the table's first rows are the other transaction's. (An
        // INTEGER PRIMARY KEY without AUTOINCREMENT never reuses a pending value either way
        // once the row is back; errors here only mean there is no sqlite_sequence.)
        let _ = cx
            .db
            .prepare_cached(
                "INSERT INTO sqlite_sequence (name, seq) SELECT ?1, ?2 \
                 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ?1)",
            )
            .and_then(|mut s| s.execute(rusqlite::params![t, id]));
        let _ = cx
            .db
            .prepare_cached("UPDATE sqlite_sequence SET seq = ?2 WHERE name = ?1 AND seq < ?2")
            .and_then(|mut s| s.execute(rusqlite::params![t, id]));
    }
    Ok(())
}

/// A write by a statement other than INSERT/UPDATE/DELETE (DDL, bulk load, SELECT INTO,
/// sequences, procedures): the writer slot, and inside a transaction the writer for good.
pub(crate) fn before_other_write(cx: &mut Context) -> Result<(), SqlError> {
    match acquire(cx, &mut || false) {
        Ok(()) => {}
        Err(StmtErr::Sql(e)) => return Err(e),
        Err(StmtErr::Io(e)) => return Err(SqlError::new(8180, 16, e.to_string())),
    }
    if cx.txn_open {
        cx.lk.pinned = true;
        cx.shared.locks.set_pinned(cx.spid);
    }
    Ok(())
}

/// Before a statement: a yielded transaction takes the writer back, so that it reads its own
/// writes.
pub(crate) fn before_statement(
    cx: &mut Context,
    cancel: &mut dyn FnMut() -> bool,
) -> Result<(), StmtErr> {
    if cx.txn_open && cx.lk.redo.is_some() {
        acquire(cx, cancel)?;
    }
    Ok(())
}

/// After a statement (or request): an autocommit session gives the writer back.
pub(crate) fn after_statement(cx: &mut Context) {
    if cx.lk.writer && !cx.txn_open {
        cx.lk.writer = false;
        cx.shared.locks.release_writer(cx.spid, false);
    }
    cx.lk.clear_log();
}

/// Yields the writer if another session waits for it: between requests (`idle`) at once,
/// between statements once the transaction has held it for `SLICE`.
pub(crate) fn yield_if_wanted(cx: &mut Context, idle: bool) {
    if cx.lk.writer
        && cx.txn_open
        && !cx.lk.pinned
        && (idle || cx.lk.since.is_none_or(|t| t.elapsed() >= cx.lk.slice))
        && cx.shared.locks.yield_wanted()
    {
        yield_writer(cx);
    }
}

/// Rolls the SQLite transaction back keeping the images of the rows it wrote, and frees the
/// writer slot. False when the transaction is pinned.
fn yield_writer(cx: &mut Context) -> bool {
    if !cx.lk.writer {
        return true;
    }
    if cx.lk.pinned {
        return false;
    }
    let mut images = Vec::with_capacity(cx.lk.touched.len());
    for t in std::mem::take(&mut cx.lk.touched) {
        let img = match table_info(cx, &t.table) {
            Ok(info) if !info.cols.is_empty() => {
                let cols: Vec<String> = info.cols.iter().map(|c| quote(c)).collect();
                let sql = format!(
                    "SELECT {} FROM {} WHERE rowid = ?1",
                    cols.join(", "),
                    quote(&t.table)
                );
                let n = info.cols.len();
                cx.db.prepare_cached(&sql).ok().and_then(|mut s| {
                    s.query_row([t.rowid], |r| {
                        (0..n)
                            .map(|i| r.get::<_, Value>(i))
                            .collect::<Result<_, _>>()
                    })
                    .ok()
                })
            }
            _ => None,
        };
        images.push((t, img));
    }
    cx.lk.index.clear();
    let _ = cx.db.execute_batch("ROLLBACK");
    cx.sqlite_txn = false;
    cx.lk.writer = false;
    cx.lk.redo = Some(images);
    cx.txn_epoch += 1;
    cx.shared.locks.release_writer(cx.spid, true);
    true
}

/// Re-applies a yielded transaction's row images (inside its new SQLite transaction).
fn resume(cx: &mut Context, redo: Vec<(Touched, Option<Vec<Value>>)>) -> Result<(), StmtErr> {
    for (t, img) in redo {
        let info = table_info(cx, &t.table)?;
        let table = quote(&t.table);
        let rowid = match (img, t.inserted) {
            (None, true) => continue,
            (None, false) => {
                cx.db
                    .prepare_cached(&format!("DELETE FROM {table} WHERE rowid = ?1"))
                    .and_then(|mut s| s.execute([t.rowid]))
                    .map_err(sql_err)?;
                t.rowid
            }
            (Some(vals), false) => {
                let set: Vec<String> = info
                    .cols
                    .iter()
                    .enumerate()
                    .map(|(i, c)| format!("{} = ?{}", quote(c), i + 1))
                    .collect();
                let sql = format!(
                    "UPDATE {table} SET {} WHERE rowid = ?{}",
                    set.join(", "),
                    vals.len() + 1
                );
                let mut s = cx.db.prepare_cached(&sql).map_err(sql_err)?;
                for (i, v) in vals.into_iter().enumerate() {
                    s.raw_bind_parameter(i + 1, v).map_err(sql_err)?;
                }
                s.raw_bind_parameter(info.cols.len() + 1, t.rowid)
                    .map_err(sql_err)?;
                s.raw_execute().map_err(sql_err)?;
                t.rowid
            }
            (Some(vals), true) => {
                let cols: Vec<String> = info.cols.iter().map(|c| quote(c)).collect();
                let marks: Vec<String> = (1..=cols.len()).map(|i| format!("?{i}")).collect();
                let sql = format!(
                    "INSERT INTO {table} ({}) VALUES ({})",
                    cols.join(", "),
                    marks.join(", ")
                );
                let mut s = cx.db.prepare_cached(&sql).map_err(sql_err)?;
                for (i, v) in vals.into_iter().enumerate() {
                    s.raw_bind_parameter(i + 1, v).map_err(sql_err)?;
                }
                s.raw_execute().map_err(sql_err)?;
                // A heap's or keyed table's rowid is the file's choice; the key is the key.
                cx.db.last_insert_rowid()
            }
        };
        touch(cx, Touched { rowid, ..t.clone() });
    }
    cx.lk.clear_log();
    Ok(())
}

fn touch(cx: &mut Context, t: Touched) {
    let k = (t.table.clone(), t.rowid);
    if !cx.lk.index.contains_key(&k) {
        cx.lk.index.insert(k, cx.lk.touched.len());
        cx.lk.touched.push(t);
    }
}

fn table_info(cx: &mut Context, table: &str) -> Result<Rc<TableInfo>, StmtErr> {
    let schema: i64 = cx
        .db
        .prepare_cached("PRAGMA main.schema_version")
        .and_then(|mut s| s.query_row([], |r| r.get(0)))
        .map_err(sql_err)?;
    if schema != cx.lk.tables_schema {
        cx.lk.tables.clear();
        cx.lk.tables_schema = schema;
    }
    if let Some(i) = cx.lk.tables.get(table) {
        return Ok(Rc::clone(i));
    }
    let mut cols = Vec::new();
    let mut pk: Vec<(i64, String, String)> = Vec::new();
    {
        let mut s = cx
            .db
            .prepare(&format!("PRAGMA main.table_info({})", quote(table)))
            .map_err(sql_err)?;
        let mut rows = s.query([]).map_err(sql_err)?;
        while let Some(r) = rows.next().map_err(sql_err)? {
            let name: String = r.get(1).map_err(sql_err)?;
            let ty: String = r.get(2).unwrap_or_default();
            let k: i64 = r.get(5).unwrap_or(0);
            if k > 0 {
                pk.push((k, name.clone(), ty));
            }
            cols.push(name);
        }
    }
    cols.retain(|c| !crate::sql::rowversion::is_column(&cx.db, table, c));
    pk.sort();
    let alias = pk.len() == 1 && pk[0].2.eq_ignore_ascii_case("INTEGER");
    let pk: Vec<String> = if alias {
        Vec::new()
    } else {
        pk.into_iter().map(|p| p.1).collect()
    };
    let key_cols: Vec<String> = pk.iter().map(|c| quote(c)).collect();
    let info = Rc::new(TableInfo {
        alias,
        key_sql: format!(
            "SELECT {} FROM {} WHERE rowid = ?1",
            key_cols.join(", "),
            quote(table)
        ),
        key_prefix: table.to_ascii_lowercase(),
        pk,
        cols,
    });
    cx.lk.tables.insert(table.to_string(), Rc::clone(&info));
    Ok(info)
}

/// The key values of row `rowid` (a table keyed by other columns than the rowid).
fn key_values(cx: &Context, info: &TableInfo, rowid: i64) -> Option<String> {
    let n = info.pk.len();
    let vals: Vec<Value> = cx
        .db
        .prepare_cached(&info.key_sql)
        .ok()?
        .query_row([rowid], |r| (0..n).map(|i| r.get::<_, Value>(i)).collect())
        .ok()?;
    Some(format!("{}\0k{:?}", info.key_prefix, vals))
}

/// What one statement's changes lock: keys, the rows touched, identity values taken, and
/// whether it wrote a temp table.
struct Effects {
    keys: Vec<String>,
    touched: Vec<Touched>,
    ids: HashMap<String, i64>,
    temp: bool,
}

fn effects(cx: &mut Context, changes: &[Change]) -> Result<Effects, StmtErr> {
    let mut fx = Effects {
        keys: Vec::new(),
        touched: Vec::new(),
        ids: HashMap::new(),
        temp: false,
    };
    let mut seen = HashSet::new();
    let mut info: Option<(Arc<str>, Rc<TableInfo>)> = None;
    for c in changes {
        if c.temp {
            fx.temp = true;
            continue;
        }
        let ti = match &info {
            Some((t, i)) if Arc::ptr_eq(t, &c.table) || **t == *c.table => Rc::clone(i),
            _ => {
                let i = table_info(cx, &c.table)?;
                info = Some((Arc::clone(&c.table), Rc::clone(&i)));
                i
            }
        };
        let table = &*c.table;
        let prior = cx
            .lk
            .index
            .get(&(table.to_string(), c.rowid))
            .map(|&i| cx.lk.touched[i].inserted);
        let rowid_key = || format!("{}\0r{}", ti.key_prefix, c.rowid);
        let inserted = match c.action {
            Action::SQLITE_INSERT => {
                if ti.alias {
                    fx.keys.push(rowid_key());
                    let e = fx.ids.entry(table.to_string()).or_insert(c.rowid);
                    *e = (*e).max(c.rowid);
                } else if !ti.pk.is_empty()
                    && let Some(k) = key_values(cx, &ti, c.rowid)
                {
                    fx.keys.push(k);
                }
                prior.unwrap_or(true)
            }
            _ => {
                if prior != Some(true) {
                    fx.keys.push(rowid_key());
                }
                if c.action == Action::SQLITE_UPDATE
                    && !ti.alias
                    && !ti.pk.is_empty()
                    && let Some(k) = key_values(cx, &ti, c.rowid)
                {
                    fx.keys.push(k);
                }
                prior.unwrap_or(false)
            }
        };
        if seen.insert((c.table.clone(), c.rowid)) {
            fx.touched.push(Touched {
                table: table.to_string(),
                rowid: c.rowid,
                inserted,
            });
        }
    }
    fx.keys.sort();
    fx.keys.dedup();
    Ok(fx)
}

/// Runs one INSERT/UPDATE/DELETE (`run`) with row locks: under a savepoint, its rows' keys
/// checked against other transactions'; a key held elsewhere undoes it, waits for that key
/// and runs it again.
pub(crate) fn write<T>(
    cx: &mut Context,
    cancel: &mut dyn FnMut() -> bool,
    mut run: impl FnMut(&mut Context) -> Result<T, StmtErr>,
) -> Result<T, StmtErr> {
    let shared = Arc::clone(&cx.shared);
    loop {
        acquire(cx, cancel)?;
        let txn = cx.txn_open;
        if !txn && shared.locks.quiet() {
            // No transaction holds anything: SQLite's own autocommit, as before.
            cx.lk.clear_log();
            let r = run(cx);
            cx.lk.clear_log();
            return r;
        }
        exec(
            cx,
            if txn {
                "SAVEPOINT __tdspeer_stmt"
            } else {
                "BEGIN IMMEDIATE"
            },
        )?;
        cx.lk.clear_log();
        let res = run(cx);
        let changes = cx.lk.take_log();
        let undo = |cx: &Context| {
            if txn {
                exec(cx, "ROLLBACK TO __tdspeer_stmt")?;
                exec(cx, "RELEASE __tdspeer_stmt")
            } else {
                exec(cx, "ROLLBACK")
            }
        };
        let value = match res {
            Ok(v) => v,
            Err(e) => {
                let _ = undo(cx);
                return Err(e);
            }
        };
        let fx = match effects(cx, &changes) {
            Ok(fx) => fx,
            Err(e) => {
                let _ = undo(cx);
                return Err(e);
            }
        };
        if fx.temp && txn {
            cx.lk.pinned = true;
            shared.locks.set_pinned(cx.spid);
        }
        match shared.locks.try_lock(cx.spid, &fx.keys, txn) {
            None => {
                if txn {
                    exec(cx, "RELEASE __tdspeer_stmt")?;
                    for t in fx.touched {
                        touch(cx, t);
                    }
                    if !fx.ids.is_empty() {
                        shared.locks.note_ids(cx.spid, &fx.ids);
                    }
                } else {
                    exec(cx, "COMMIT")?;
                }
                return Ok(value);
            }
            Some(key) => {
                undo(cx)?;
                if !txn {
                    cx.lk.writer = false;
                    shared.locks.release_writer(cx.spid, false);
                } else {
                    // A pinned transaction waits holding the writer; the holder of the key,
                    // needing the writer to commit, then closes a cycle and is the victim.
                    yield_writer(cx);
                }
                let w = shared
                    .locks
                    .wait_row(cx.spid, &key, cx.lk.timeout(true), cancel);
                outcome(cx, w)?;
            }
        }
    }
}

/// The end of a transaction: a yielded one is put back first to commit; the SQLite
/// transaction commits or rolls back (by the caller), then every lock goes.
pub(crate) fn before_end(cx: &mut Context, commit: bool) -> Result<(), SqlError> {
    if commit && cx.txn_open && cx.lk.redo.is_some() {
        match acquire(cx, &mut || false) {
            Ok(()) => {}
            Err(StmtErr::Sql(e)) => return Err(e),
            Err(StmtErr::Io(e)) => return Err(SqlError::new(8180, 16, e.to_string())),
        }
    }
    Ok(())
}

/// After COMMIT / ROLLBACK: the session holds nothing.
pub(crate) fn ended(cx: &mut Context) {
    cx.lk.writer = false;
    cx.lk.pinned = false;
    cx.lk.touched.clear();
    cx.lk.index.clear();
    cx.lk.redo = None;
    cx.lk.clear_log();
    cx.shared.locks.end(cx.spid);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cycle_is_found_only_through_the_waiter() {
        let waits: HashMap<u16, u16> = [(51, 52), (52, 53)].into_iter().collect();
        assert!(!cycle(&waits, 51));
        let mut closed = waits.clone();
        closed.insert(53, 51);
        assert!(cycle(&closed, 51) && cycle(&closed, 53));
        // A chain that loops elsewhere does not make 50 a victim.
        let side: HashMap<u16, u16> = [(50, 51), (51, 52), (52, 51)].into_iter().collect();
        assert!(!cycle(&side, 50));
    }

    #[test]
    fn row_keys_conflict_only_between_sessions() {
        let m = LockManager::default();
        let k = vec!["t\0r1".to_string()];
        assert_eq!(m.try_lock(51, &k, true), None);
        assert_eq!(m.try_lock(51, &k, true), None);
        assert_eq!(m.try_lock(52, &k, false), Some(k[0].clone()));
        assert!(!m.quiet());
        // LOCK_TIMEOUT 0: a held key fails at once; the writer slot of a yielding holder not.
        assert!(matches!(
            m.wait_row(52, &k[0], Some(Duration::ZERO), &mut || false),
            Wait::Timeout
        ));
        m.end(51);
        assert!(m.quiet());
        assert!(matches!(
            m.wait_row(52, &k[0], Some(Duration::ZERO), &mut || false),
            Wait::Granted
        ));
    }
}
