//! Names of PRIMARY KEY / UNIQUE / FOREIGN KEY constraints given in CREATE TABLE
//! (`CONSTRAINT name PRIMARY KEY (a, b)`). SQLite keeps the constraints but not their names
//! where the catalog can read them, so they are recorded in the shared `__tdspeer_constraints`
//! (SQLite table, kind PK/UQ/F, name, lower-case column list) and the catalog views
//! (sysviews.rs) report them; an unnamed constraint keeps the generated name
//! (`PK__<table>`, `FK__<table>__<n>`, the SQLite index name).

use super::lexer::{Tok, split_commas};

pub struct Named {
    pub kind: &'static str,
    pub name: String,
    pub cols: String,
}

fn ident(t: &Tok) -> Option<String> {
    match t {
        Tok::Word(w) | Tok::Quoted(w) => Some(w.clone()),
        _ => None,
    }
}

/// The SQLite name of the table a CREATE TABLE creates (`rw` rewrites its T-SQL name), and its
/// named constraints.
pub fn of_create_table(
    toks: &[Tok],
    rw: impl Fn(&[Tok]) -> Option<String>,
) -> Option<(String, Vec<Named>)> {
    let open = toks.iter().position(|t| t.is_punct('('))?;
    let at = toks.iter().position(|t| t.is_word("TABLE"))?;
    let close = super::lexer::matching(toks, open)?;
    let table = rw(&toks[at + 1..open])?;
    let table = table.trim().trim_matches('"').replace("\"\"", "\"");
    let mut named = Vec::new();
    for def in split_commas(&toks[open + 1..close]) {
        let sg: Vec<&Tok> = def.iter().filter(|t| !t.is_space()).collect();
        // `id INT IDENTITY(seed, increment)`: kind ID, name = the column, cols = "seed,incr".
        if let Some(k) = sg.iter().position(|t| t.is_word("IDENTITY"))
            && let Some(col) = sg.first().and_then(|t| ident(t))
        {
            let mut nums = Vec::new();
            let mut neg = false;
            for t in sg[k + 1..].iter().take_while(|t| !t.is_punct(')')) {
                match t {
                    Tok::Punct('-') => neg = true,
                    Tok::Num(n) => {
                        nums.push(format!("{}{n}", if neg { "-" } else { "" }));
                        neg = false;
                    }
                    _ => {}
                }
            }
            // A bare `IDENTITY` is IDENTITY(1,1).
            let cols = if nums.len() == 2 {
                nums.join(",")
            } else {
                "1,1".to_string()
            };
            named.push(Named {
                kind: "ID",
                name: col,
                cols,
            });
        }
        // Table constraints (`CONSTRAINT n PRIMARY KEY (…)`) and column constraints
        // (`id INT CONSTRAINT n PRIMARY KEY`): the column list or the column itself.
        let Some(c) = sg.iter().position(|t| t.is_word("CONSTRAINT")) else {
            continue;
        };
        let Some(name) = sg.get(c + 1).and_then(|t| ident(t)) else {
            continue;
        };
        let kind = match sg.get(c + 2) {
            Some(t) if t.is_word("PRIMARY") => "PK",
            Some(t) if t.is_word("UNIQUE") => "UQ",
            Some(t) if t.is_word("FOREIGN") => "F",
            _ => continue,
        };
        let cols: Vec<String> = if c == 0 {
            let Some(p) = sg.iter().position(|t| t.is_punct('(')) else {
                continue;
            };
            sg[p + 1..]
                .iter()
                .take_while(|t| !t.is_punct(')'))
                .filter_map(|t| ident(t))
                .filter(|w| !w.eq_ignore_ascii_case("ASC") && !w.eq_ignore_ascii_case("DESC"))
                .collect()
        } else {
            sg.first().and_then(|t| ident(t)).into_iter().collect()
        };
        named.push(Named {
            kind,
            name,
            cols: cols.join(",").to_lowercase(),
        });
    }
    Some((table, named))
}

/// Records the names (replacing those of an earlier table of the same name). An IDENTITY
/// seed other than 1 becomes the table's AUTOINCREMENT start (`sqlite_sequence`). An
/// increment other than 1 gets a trigger (`identity_trigger`).
pub fn record(db: &rusqlite::Connection, table: &str, named: &[Named]) {
    let _ = db.execute("DELETE FROM __tdspeer_constraints WHERE tbl = ?1", [table]);
    for n in named.iter().filter(|n| n.kind == "ID") {
        let mut it = n.cols.split(',').map(|v| v.trim().parse::<i64>().ok());
        let (seed, incr) = (it.next().flatten(), it.next().flatten());
        if let Some(seed) = seed.filter(|&s| s != 1) {
            let _ = db.execute(
                "INSERT INTO sqlite_sequence (name, seq) VALUES (?1, ?2)",
                rusqlite::params![table, seed - 1],
            );
        }
        if let (Some(seed), Some(incr)) = (seed, incr.filter(|&i| i != 1)) {
            identity_trigger(db, table, &n.name, seed, incr);
        }
    }
    for n in named {
        let _ = db.execute(
            "INSERT INTO __tdspeer_constraints VALUES (?1, ?2, ?3, ?4)",
            rusqlite::params![table, n.kind, n.name, n.cols],
        );
    }
}

/// SQL: the primary key's name of SQLite table `sname` (display name `tname`).
pub fn pk_name(sname: &str, tname: &str) -> String {
    format!(
        "COALESCE((SELECT k.name FROM __tdspeer_constraints k WHERE k.tbl = {sname} COLLATE NOCASE AND k.kind = 'PK'), 'PK__' || {tname})"
    )
}

/// SQL: the name of foreign key `id` of SQLite table `sname`.
pub fn fk_name(sname: &str, tname: &str, id: &str) -> String {
    format!(
        "COALESCE((SELECT k.name FROM __tdspeer_constraints k WHERE k.tbl = {sname} COLLATE NOCASE AND k.kind = 'F' AND k.cols = (SELECT lower(group_concat(x.\"from\", ',')) FROM (SELECT \"from\" FROM pragma_foreign_key_list({sname}) WHERE id = {id} ORDER BY seq) x)), 'FK__' || {tname} || '__' || {id})"
    )
}

/// SQL: the name of the UNIQUE constraint behind SQLite index `iname` (shown as `dname`).
pub fn uq_name(sname: &str, iname: &str, dname: &str) -> String {
    format!(
        "COALESCE((SELECT k.name FROM __tdspeer_constraints k WHERE k.tbl = {sname} COLLATE NOCASE AND k.kind = 'UQ' AND k.cols = (SELECT lower(group_concat(x.name, ',')) FROM (SELECT name FROM pragma_index_info({iname}) ORDER BY seqno) x)), {dname})"
    )
}

/// SQL: the declared IDENTITY seed (`part` 1) or increment (`part` 2) of column `col` of SQLite
/// table `sname`; 1 when not recorded.
pub fn identity_part(sname: &str, col: &str, part: u8) -> String {
    let pick = if part == 1 {
        "substr(k.cols, 1, instr(k.cols, ',') - 1)"
    } else {
        "substr(k.cols, instr(k.cols, ',') + 1)"
    };
    format!(
        "COALESCE((SELECT CAST({pick} AS INTEGER) FROM __tdspeer_constraints k WHERE k.tbl = {sname} COLLATE NOCASE AND k.kind = 'ID' AND k.name = {col} COLLATE NOCASE), 1)"
    )
}

/// IDENTITY(seed, increment) with an increment other than 1: SQLite numbers a new row max + 1,
/// so an AFTER INSERT trigger renumbers each row the server numbered with the table's next
/// value, kept in `__tdspeer_ident` (a TEMP one for `#t`), and notes it for SCOPE_IDENTITY() /
/// @@IDENTITY (`__ident_note`). A row inserted under `SET IDENTITY_INSERT t ON` keeps its
/// value, which becomes the current one when it is past it (as in SQL Server).
fn identity_trigger(db: &rusqlite::Connection, table: &str, col: &str, seed: i64, incr: i64) {
    let temp = table.starts_with('#') && !table.starts_with("##");
    let (schema, tt) = if temp {
        ("temp", "TEMP ")
    } else {
        ("main", "")
    };
    let qi = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let ql = |s: &str| format!("'{}'", s.replace('\'', "''"));
    let sql = format!(
        "CREATE {tt}TABLE IF NOT EXISTS {schema}.__tdspeer_ident (tbl TEXT PRIMARY KEY COLLATE NOCASE, seed INTEGER NOT NULL, incr INTEGER NOT NULL, cur INTEGER);
         INSERT OR REPLACE INTO {schema}.__tdspeer_ident (tbl, seed, incr, cur) VALUES ({t}, {seed}, {incr}, NULL);
         CREATE {tt}TRIGGER {trig} AFTER INSERT ON {table_on} BEGIN
           UPDATE __tdspeer_ident SET cur = CASE WHEN NOT __identity_insert({t}) THEN (CASE WHEN cur IS NULL THEN seed ELSE cur + incr END) WHEN cur IS NULL THEN NEW.rowid WHEN incr > 0 THEN max(cur, NEW.rowid) ELSE min(cur, NEW.rowid) END WHERE tbl = {t};
           UPDATE {table_q} SET {c} = (SELECT cur FROM __tdspeer_ident WHERE tbl = {t}) WHERE rowid = NEW.rowid AND NOT __identity_insert({t});
           SELECT __ident_note(CASE WHEN __identity_insert({t}) THEN NEW.rowid ELSE (SELECT cur FROM __tdspeer_ident WHERE tbl = {t}) END);
         END;",
        t = ql(table),
        trig = qi(&format!("__tdspeer_ident_{table}")),
        table_on = if temp { format!("temp.{}", qi(table)) } else { qi(table) },
        table_q = qi(table),
        c = qi(col),
    );
    if let Err(e) = db.execute_batch(&sql) {
        eprintln!("tds-peer: identity increment of {table}: {e}");
    }
}
