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
//!
//! An UPDATE that assigns the column is refused before it runs (`updated_columns`, 272), as SQL
//! Server refuses it when compiling the statement, whether or not a row matches.

use super::lexer::{Tok, dotted, matching, split_commas};
use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;
use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};

use super::typemeta::{ROWVERSION_DECL as DECL, is_rowversion_decl};

/// SQL Server's message for an explicit value (Msg 273, level 16).
pub const EXPLICIT_INSERT: &str = "Cannot insert an explicit value into a timestamp column. Use \
    INSERT with a column list to exclude the timestamp column, or insert a DEFAULT into the \
    timestamp column.";

/// SQL Server's message for an UPDATE assigning the column (Msg 272, level 16, state 1).
pub const UPDATE_REFUSED: &str = "Cannot update a timestamp column.";

/// `UPDATE [TOP (n)] target [WITH (…)] SET a = …, t.b += …, @v = c = … [OUTPUT …] [FROM …]
/// [WHERE …]`: the SQLite table the target names (an alias of the FROM clause resolved) and
/// the columns assigned. None for anything else.
pub fn updated_columns(sg: &[&Tok]) -> Option<(String, Vec<String>)> {
    let w = |i: usize, s: &str| sg.get(i).is_some_and(|t| t.is_word(s));
    if !w(0, "UPDATE") {
        return None;
    }
    let mut i = 1;
    if w(i, "TOP") {
        i = if sg.get(i + 1)?.is_punct('(') {
            matching(sg, i + 1)? + 1
        } else {
            i + 2
        };
        if w(i, "PERCENT") {
            i += 1;
        }
    }
    let (target, end) = dotted(sg, i)?;
    i = end;
    if w(i, "WITH") && sg.get(i + 1).is_some_and(|t| t.is_punct('(')) {
        i = matching(sg, i + 1)? + 1;
    }
    if !w(i, "SET") {
        return None;
    }
    // The assignments run to the first OUTPUT / FROM / WHERE / OPTION at depth 0.
    let mut d = 0i32;
    let mut end = sg.len();
    let mut from = None;
    for (k, t) in sg.iter().enumerate().skip(i + 1) {
        if t.is_punct('(') {
            d += 1;
        } else if t.is_punct(')') {
            d -= 1;
        } else if d == 0
            && ["OUTPUT", "FROM", "WHERE", "OPTION"]
                .iter()
                .any(|x| t.is_word(x))
        {
            end = end.min(k);
            if t.is_word("FROM") {
                from = Some(k);
                break;
            }
        }
    }
    let assigned_in = |piece: &[&Tok]| -> Option<String> {
        let eq = piece.iter().position(|t| t.is_punct('='))?;
        // `col += …`: the operator's first character ends the target.
        let mut lhs = &piece[..eq];
        if let [
            rest @ ..,
            Tok::Punct('+' | '-' | '*' | '/' | '%' | '&' | '|' | '^'),
        ] = lhs
        {
            lhs = rest;
        }
        if let [Tok::Var(_)] = lhs {
            // `@v = col = expr` assigns col too; `@v = expr` only the variable.
            let rest = &piece[eq + 1..];
            let eq2 = rest.iter().position(|t| t.is_punct('='))?;
            lhs = &rest[..eq2];
        }
        let (parts, end) = dotted(lhs, 0)?;
        (end == lhs.len()).then(|| parts.last().cloned()).flatten()
    };
    let cols = split_commas(&sg[i + 1..end])
        .into_iter()
        .filter_map(assigned_in)
        .collect();
    // `UPDATE a SET … FROM t a` (or `… FROM t`): the FROM clause's source of that name is the
    // table. The FROM clause ends at the first WHERE / OPTION at depth 0; its sources are
    // parsed as for result-set nullability, so a subquery's aliases never count.
    if let (Some(f), [name]) = (from, &target[..]) {
        let mut d = 0i32;
        let from_end = (f + 1..sg.len())
            .find(|&k| {
                let t = sg[k];
                if t.is_punct('(') {
                    d += 1;
                } else if t.is_punct(')') {
                    d -= 1;
                }
                d == 0 && (t.is_word("WHERE") || t.is_word("OPTION"))
            })
            .unwrap_or(sg.len());
        let table = super::nullability::from_clause(&sg[f + 1..from_end], &[])
            .and_then(|sources| {
                sources
                    .into_iter()
                    .find(|s| s.name.eq_ignore_ascii_case(name))
            })
            .and_then(|s| s.table);
        if let Some(table) = table {
            return Some((table, cols));
        }
    }
    Some((super::schema::sqlite_name(&target)?, cols))
}

/// Is `col` of the SQLite table `table` a rowversion column?
pub fn is_column(db: &Connection, table: &str, col: &str) -> bool {
    db.column_metadata(None, table, col)
        .is_ok_and(|(decl, ..)| decl.is_some_and(|d| is_rowversion_decl(&d.to_string_lossy())))
}

/// The last value handed out. All connections of a peer share one database, so one counter per
/// process is database-wide. A new SQL Server database starts @@DBTS at 2000 (0x7D0).
static DBTS: AtomicU64 = AtomicU64::new(2000);
static SEEDED: Once = Once::new();

/// Is a column's type text (`rowversion`, `[timestamp]`) SQL Server's rowversion?
pub fn is_type_text(text: &str) -> bool {
    let t = text.trim().trim_matches(|c| c == '[' || c == ']');
    t.eq_ignore_ascii_case("rowversion") || t.eq_ignore_ascii_case("timestamp")
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
    // a user's UPDATE, which takes a fresh value. (One setting the column never gets here: the
    // engine refuses it with 272, `updated_columns`.)
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
        // In SQLite, setting the column itself still takes a fresh value, never the one given
        // (the engine refuses such an UPDATE with 272 before SQLite sees it).
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
    fn update_targets() {
        let parse = |sql: &str| {
            let toks = crate::sql::lexer::tokenize(sql).unwrap();
            let sg: Vec<&Tok> = toks.iter().filter(|t| !t.is_space()).collect();
            updated_columns(&sg)
        };
        let got =
            |t: &str, c: &[&str]| Some((t.to_string(), c.iter().map(|s| s.to_string()).collect()));
        assert_eq!(
            parse("UPDATE t SET rv = 0x01 WHERE 1 = 0"),
            got("t", &["rv"])
        );
        assert_eq!(
            parse(
                "UPDATE TOP (1) dbo.[t] WITH (ROWLOCK) SET a = (SELECT 1), t.rv += 0x01, @v = b = 2, @w = 3"
            ),
            got("t", &["a", "rv", "b"])
        );
        assert_eq!(
            parse("UPDATE s.t SET a = 1 OUTPUT inserted.a"),
            got("s.t", &["a"])
        );
        assert_eq!(
            parse("UPDATE x SET x.a = y.b FROM dbo.t AS x JOIN u y ON x.id = y.id"),
            got("t", &["a"])
        );
        assert_eq!(parse("UPDATE x SET a = 1 FROM t x"), got("t", &["a"]));
        assert_eq!(
            parse("UPDATE t SET a = 1 FROM t JOIN u ON 1 = 1"),
            got("t", &["a"])
        );
        // Only the FROM clause's own sources name the target: not a subquery's, nor the WHERE.
        assert_eq!(
            parse("UPDATE t SET rv = 0x01 FROM t WHERE t.id IN (SELECT t.id FROM u)"),
            got("t", &["rv"])
        );
        assert_eq!(
            parse("UPDATE t SET a = 1 FROM t WHERE EXISTS (SELECT 1 FROM r t WHERE 1 = 0)"),
            got("t", &["a"])
        );
        assert_eq!(
            parse(
                "UPDATE x SET rv = 0x01 FROM r y LEFT JOIN dbo.t x ON x.id = y.id WHERE y.id > 0"
            ),
            got("t", &["rv"])
        );
        // A left-out schema is the default one.
        assert_eq!(parse("UPDATE master..t SET rv = 0x01"), got("t", &["rv"]));
        assert_eq!(parse("DELETE FROM t"), None);
    }

    #[test]
    fn type_text() {
        assert!(is_type_text("ROWVERSION"));
        assert!(is_type_text("[timestamp]"));
        assert!(!is_type_text("binary(8)"));
    }
}
