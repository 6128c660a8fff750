//! rowversion / timestamp columns. SQL Server gives every row of such a table an 8-byte value
//! from one database-wide counter, taken afresh on INSERT and on every UPDATE of the row;
//! `@@DBTS` is the last value taken. The column is binary(8) NOT NULL on the wire and in the
//! catalog's sizes, but its type name is `timestamp` (system type 189), and an explicit value
//! is refused with 273.
//!
//! In SQLite the column is declared `MSBLOB_ROWVERSION NOT NULL DEFAULT X''` (the empty blob
//! marks "no value given") and three triggers keep it: one refuses a row that brings a value
//! of its own, one stamps each inserted row, one re-stamps each updated row. Triggers rather
//! than rewritten statements, so every path that writes rows (INSERT … SELECT, UPDATE … FROM,
//! RPC parameters, procedures) is covered.

use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;
use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};

/// The SQLite declared type of a rowversion column (`Ty::from_sqlite_decl` reads it as
/// binary(8)).
pub const DECL: &str = "MSBLOB_ROWVERSION";

/// SQL Server's system type id of timestamp/rowversion (sys.types, sys.columns).
pub const SYSTEM_TYPE_ID: i64 = 189;

/// SQL Server's message for an explicit value (Msg 273, level 16).
pub const EXPLICIT_INSERT: &str = "Cannot insert an explicit value into a timestamp column. Use \
    INSERT with a column list to exclude the timestamp column, or insert a DEFAULT into the \
    timestamp column.";

/// The last value handed out. All connections of a peer share one database, so one counter per
/// process is database-wide. A new SQL Server database starts @@DBTS at 2000 (0x7D0).
static DBTS: AtomicU64 = AtomicU64::new(2000);
static SEEDED: Once = Once::new();

/// Is a column's type text (`rowversion`, `[timestamp]`) SQL Server's rowversion?
pub fn is_type_text(text: &str) -> bool {
    let t = text.trim().trim_matches(|c| c == '[' || c == ']');
    t.eq_ignore_ascii_case("rowversion") || t.eq_ignore_ascii_case("timestamp")
}

/// Is a SQLite declared type a rowversion column's?
pub fn is_decl(decl: &str) -> bool {
    decl.eq_ignore_ascii_case(DECL)
}

/// The column definition after the name: the type, NOT NULL and the "no value" default.
pub fn column_decl() -> String {
    format!("{DECL} NOT NULL DEFAULT X''")
}

/// The triggers keeping column `col` of `table` (both as quoted SQLite identifiers; `temp` for a
/// `#temp` table, whose triggers must be TEMP too).
pub fn triggers(table: &str, col: &str, temp: bool) -> String {
    let stem: String = format!("{table}_{col}")
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { '_' })
        .collect();
    let temp = if temp { "TEMP " } else { "" };
    let msg = EXPLICIT_INSERT.replace('\'', "''");
    // The stamping UPDATEs run inside triggers, so they fire no trigger of their own
    // (recursive_triggers is off): only OLD.col = X'' tells the insert's own stamp apart from
    // a user's UPDATE, which must take a fresh value even when it sets the column itself.
    format!(
        "; CREATE {temp}TRIGGER \"__rv_refuse_{stem}\" BEFORE INSERT ON {table} FOR EACH ROW \
         WHEN NEW.{col} IS NOT X'' BEGIN SELECT RAISE(ABORT, '{msg}'); END\
         ; CREATE {temp}TRIGGER \"__rv_insert_{stem}\" AFTER INSERT ON {table} FOR EACH ROW \
         BEGIN UPDATE {table} SET {col} = __rowversion_next() WHERE rowid = NEW.rowid; END\
         ; CREATE {temp}TRIGGER \"__rv_update_{stem}\" AFTER UPDATE ON {table} FOR EACH ROW \
         WHEN OLD.{col} IS NOT X'' \
         BEGIN UPDATE {table} SET {col} = __rowversion_next() WHERE rowid = NEW.rowid; END"
    )
}

/// The next value, big-endian as SQL Server sends it.
pub fn next() -> Vec<u8> {
    (DBTS.fetch_add(1, Ordering::SeqCst) + 1)
        .to_be_bytes()
        .to_vec()
}

/// `@@DBTS`: the last value taken.
pub fn dbts() -> Vec<u8> {
    DBTS.load(Ordering::SeqCst).to_be_bytes().to_vec()
}

/// Continues the counter past every value already stored (a `--db FILE` kept from an earlier
/// run), once per process: values must never repeat.
fn seed(db: &Connection) {
    let like = format!("%{DECL}%");
    let Ok(mut st) = db.prepare(
        "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p \
         WHERE m.type = 'table' AND m.sql LIKE ?1 AND p.type = ?2",
    ) else {
        return;
    };
    let cols: Vec<(String, String)> = st
        .query_map([like.as_str(), DECL], |r| Ok((r.get(0)?, r.get(1)?)))
        .map(|it| it.flatten().collect())
        .unwrap_or_default();
    let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    for (table, col) in cols {
        let sql = format!("SELECT max({}) FROM {}", q(&col), q(&table));
        if let Ok(Some(b)) = db.query_row(&sql, [], |r| r.get::<_, Option<Vec<u8>>>(0))
            && let Ok(v) = <[u8; 8]>::try_from(b.as_slice())
        {
            DBTS.fetch_max(u64::from_be_bytes(v), Ordering::SeqCst);
        }
    }
}

/// `__rowversion_next()` and `__dbts()` on a connection (neither is deterministic).
pub fn register(db: &Connection) -> rusqlite::Result<()> {
    SEEDED.call_once(|| seed(db));
    db.create_scalar_function("__rowversion_next", 0, FunctionFlags::SQLITE_UTF8, |_| {
        Ok(next())
    })?;
    db.create_scalar_function("__dbts", 0, FunctionFlags::SQLITE_UTF8, |_| Ok(dbts()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Connection {
        let db = Connection::open_in_memory().unwrap();
        register(&db).unwrap();
        let sql = format!(
            "CREATE TABLE \"t\" (id INTEGER, \"rv\" {}){}",
            column_decl(),
            triggers("\"t\"", "\"rv\"", false)
        );
        db.execute_batch(&sql).unwrap();
        db
    }

    fn rv(db: &Connection, id: i64) -> u64 {
        let b: Vec<u8> = db
            .query_row("SELECT rv FROM t WHERE id = ?1", [id], |r| r.get(0))
            .unwrap();
        u64::from_be_bytes(b.try_into().unwrap())
    }

    #[test]
    fn insert_and_update_take_fresh_increasing_values() {
        let db = db();
        db.execute_batch("INSERT INTO t (id) VALUES (1), (2)")
            .unwrap();
        let (a, b) = (rv(&db, 1), rv(&db, 2));
        assert!(b > a, "{a} {b}");
        // Other tests share the counter: @@DBTS is at least this connection's last value.
        assert!(u64::from_be_bytes(dbts().try_into().unwrap()) >= b);
        let n = db.execute("UPDATE t SET id = 3 WHERE id = 1", []).unwrap();
        assert_eq!(n, 1, "the stamping UPDATE is not counted");
        let c = rv(&db, 3);
        assert!(c > b, "{b} {c}");
        assert_eq!(rv(&db, 2), b, "an untouched row keeps its value");
        // Setting the column itself still takes a fresh value, never the one given.
        db.execute_batch("UPDATE t SET rv = X'0000000000000001' WHERE id = 2")
            .unwrap();
        assert!(rv(&db, 2) > c);
    }

    #[test]
    fn explicit_values_are_refused() {
        let db = db();
        let e = db
            .execute_batch("INSERT INTO t (id, rv) VALUES (1, X'0102030405060708')")
            .unwrap_err();
        assert!(e.to_string().contains(EXPLICIT_INSERT), "{e}");
        let n: i64 = db
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 0);
    }

    #[test]
    fn type_text() {
        assert!(is_type_text("ROWVERSION"));
        assert!(is_type_text("[timestamp]"));
        assert!(!is_type_text("binary(8)"));
    }
}
