//! A small T-SQL tokenizer: enough to rewrite T-SQL into SQLite and to split batches.

use std::borrow::Borrow;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// Identifier or keyword (including `#temp` names).
    Word(String),
    /// `[name]` or `"name"`.
    Quoted(String),
    /// `'text'`; `n` marks `N'text'`.
    Str {
        n: bool,
        s: String,
    },
    Num(String),
    /// `@name` or `@@name`.
    Var(String),
    /// `0x…` binary literal.
    Hex(String),
    Punct(char),
    /// Whitespace or comment (kept so rewritten text stays readable; newline matters for splitting).
    Space(String),
}

impl Tok {
    pub fn is_word(&self, w: &str) -> bool {
        matches!(self, Tok::Word(x) if x.eq_ignore_ascii_case(w))
    }
    pub fn is_punct(&self, c: char) -> bool {
        matches!(self, Tok::Punct(x) if *x == c)
    }
    pub fn is_space(&self) -> bool {
        matches!(self, Tok::Space(_))
    }
    pub fn word(&self) -> Option<String> {
        match self {
            Tok::Word(w) => Some(w.to_ascii_uppercase()),
            _ => None,
        }
    }
    /// Original-ish text of the token.
    pub fn text(&self) -> String {
        match self {
            Tok::Word(w) | Tok::Num(w) | Tok::Var(w) | Tok::Space(w) | Tok::Hex(w) => w.clone(),
            Tok::Quoted(q) => format!("\"{}\"", q.replace('"', "\"\"")),
            Tok::Str { n, s } => {
                format!("{}'{}'", if *n { "N" } else { "" }, s.replace('\'', "''"))
            }
            Tok::Punct(c) => c.to_string(),
        }
    }
}

pub fn tokenize(sql: &str) -> Result<Vec<Tok>, String> {
    let c: Vec<char> = sql.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            let s = i;
            while i < c.len() && c[i].is_whitespace() {
                i += 1;
            }
            out.push(Tok::Space(c[s..i].iter().collect()));
        } else if ch == '-' && c.get(i + 1) == Some(&'-') {
            let s = i;
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
            out.push(Tok::Space(c[s..i].iter().collect()));
        } else if ch == '/' && c.get(i + 1) == Some(&'*') {
            let s = i;
            i += 2;
            while i + 1 < c.len() && !(c[i] == '*' && c[i + 1] == '/') {
                i += 1;
            }
            i = (i + 2).min(c.len());
            out.push(Tok::Space(c[s..i].iter().collect()));
        } else if ch == '\'' || ((ch == 'N' || ch == 'n') && c.get(i + 1) == Some(&'\'')) {
            let n = ch != '\'';
            i += if n { 2 } else { 1 };
            let mut s = String::new();
            loop {
                if i >= c.len() {
                    return Err("Unclosed quotation mark after the character string".into());
                }
                if c[i] == '\'' {
                    if c.get(i + 1) == Some(&'\'') {
                        s.push('\'');
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                s.push(c[i]);
                i += 1;
            }
            out.push(Tok::Str { n, s });
        } else if ch == '[' || ch == '"' {
            let close = if ch == '[' { ']' } else { '"' };
            i += 1;
            let mut s = String::new();
            loop {
                if i >= c.len() {
                    return Err("Unclosed quoted identifier".into());
                }
                if c[i] == close {
                    if c.get(i + 1) == Some(&close) {
                        s.push(close);
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                s.push(c[i]);
                i += 1;
            }
            out.push(Tok::Quoted(s));
        } else if ch == '0' && matches!(c.get(i + 1), Some('x') | Some('X')) {
            let s = i;
            i += 2;
            while i < c.len() && c[i].is_ascii_hexdigit() {
                i += 1;
            }
            out.push(Tok::Hex(c[s..i].iter().collect()));
        } else if ch.is_ascii_digit()
            || (ch == '.' && c.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            let s = i;
            while i < c.len() && (c[i].is_ascii_digit() || c[i] == '.') {
                i += 1;
            }
            if i < c.len()
                && (c[i] == 'e' || c[i] == 'E')
                && c.get(i + 1)
                    .is_some_and(|d| d.is_ascii_digit() || *d == '-' || *d == '+')
            {
                i += 2;
                while i < c.len() && c[i].is_ascii_digit() {
                    i += 1;
                }
            }
            out.push(Tok::Num(c[s..i].iter().collect()));
        } else if ch == '@' {
            let s = i;
            i += 1;
            while i < c.len()
                && (c[i].is_alphanumeric()
                    || c[i] == '_'
                    || c[i] == '@'
                    || c[i] == '$'
                    || c[i] == '#')
            {
                i += 1;
            }
            out.push(Tok::Var(c[s..i].iter().collect()));
        } else if ch.is_alphabetic() || ch == '_' || ch == '#' {
            let s = i;
            while i < c.len()
                && (c[i].is_alphanumeric() || c[i] == '_' || c[i] == '#' || c[i] == '$')
            {
                i += 1;
            }
            out.push(Tok::Word(c[s..i].iter().collect()));
        } else {
            out.push(Tok::Punct(ch));
            i += 1;
        }
    }
    Ok(out)
}

/// Words that may begin a statement (batch splitting, IF/WHILE bodies).
const STARTERS: &[&str] = &[
    "SELECT",
    "INSERT",
    "UPDATE",
    "DELETE",
    "CREATE",
    "DROP",
    "ALTER",
    "PRINT",
    "RAISERROR",
    "THROW",
    "SET",
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
    "EXEC",
    "EXECUTE",
    "TRUNCATE",
    "USE",
    "DECLARE",
    "WITH",
    "IF",
    "WHILE",
    "RETURN",
    "WAITFOR",
    "SAVE",
    "DBCC",
];

/// Whether `word` begins a statement (batch splitting).
pub(crate) fn is_starter(word: &str) -> bool {
    STARTERS.iter().any(|k| word.eq_ignore_ascii_case(k))
}

/// Whether `word` begins the body of an IF/WHILE: any starter except USE and SAVE.
pub(crate) fn is_body_starter(word: &str) -> bool {
    !word.eq_ignore_ascii_case("USE") && !word.eq_ignore_ascii_case("SAVE") && is_starter(word)
}

/// Splits a batch into statements at top-level `;` and wherever a statement keyword begins a
/// new statement: T-SQL needs no separators, and FreeTDS sends a parameter array as one line
/// `INSERT … VALUES (…) INSERT … VALUES (…)`. `INSERT … SELECT`, `UNION SELECT`, CTE bodies,
/// `UPDATE … SET`, IF/WHILE bodies and `BEGIN … END` / `CASE … END` stay together.
pub fn split(toks: &[Tok]) -> Vec<Vec<Tok>> {
    let mut stmts: Vec<Vec<Tok>> = Vec::new();
    let mut cur: Vec<Tok> = Vec::new();
    let mut depth = 0i32;
    // BEGIN … END blocks (not BEGIN TRAN) and CASE … END: never split inside them.
    let mut block = 0i32;
    for (i, t) in toks.iter().enumerate() {
        match t {
            Tok::Punct('(') => depth += 1,
            Tok::Punct(')') => depth -= 1,
            Tok::Punct(';') if depth == 0 && block == 0 => {
                push_stmt(&mut stmts, &mut cur);
                continue;
            }
            Tok::Word(w) => {
                if depth == 0 && block == 0 && is_starter(w) && starts_new(&cur, &toks[i..]) {
                    push_stmt(&mut stmts, &mut cur);
                }
                let next = toks[i + 1..].iter().find(|t| !t.is_space());
                block = (block + block_step(t, next)).max(0);
            }
            _ => {}
        }
        cur.push(t.clone());
    }
    push_stmt(&mut stmts, &mut cur);
    stmts
}

/// +1 for a word opening a block (`BEGIN` but not `BEGIN TRAN`, `CASE`), -1 for `END`;
/// `next` is the following non-space token.
fn block_step(t: &Tok, next: Option<&Tok>) -> i32 {
    if t.is_word("CASE") {
        1
    } else if t.is_word("END") {
        -1
    } else if t.is_word("BEGIN") {
        let tran = next.is_some_and(|n| {
            n.is_word("TRAN") || n.is_word("TRANSACTION") || n.is_word("DISTRIBUTED")
        });
        if tran { 0 } else { 1 }
    } else {
        0
    }
}

/// Whether the starter word `rest[0]` begins a new statement after `cur`, the statement so far.
fn starts_new(cur: &[Tok], rest: &[Tok]) -> bool {
    let sig: Vec<&Tok> = cur.iter().filter(|t| !t.is_space()).collect();
    // None: an IF/WHILE still waits for its body, which this word begins.
    let Some(stmt) = current_stmt(&sig) else {
        return false;
    };
    let Some(first) = stmt.first().and_then(|t| t.word()) else {
        return false;
    };
    let last = sig.last().and_then(|t| t.word()).unwrap_or_default();
    if [
        "UNION",
        "ALL",
        "EXCEPT",
        "INTERSECT",
        "AS",
        "THEN",
        "ELSE",
        "BEGIN",
        "OR",
    ]
    .contains(&last.as_str())
    {
        return false;
    }
    let w = rest[0].word().unwrap_or_default();
    let next: Vec<&Tok> = rest[1..].iter().filter(|t| !t.is_space()).take(2).collect();
    if !begins_statement(&w, &next) {
        return false;
    }
    if first == "WITH" && sig.last().is_some_and(|t| t.is_punct(')')) {
        // Main query of a CTE.
        return false;
    }
    let body = &stmt[verb_index(stmt)..];
    match (body[0].word().unwrap_or_default().as_str(), w.as_str()) {
        // INSERT … SELECT / INSERT … EXEC, unless the INSERT already has its rows.
        ("INSERT", "SELECT" | "EXEC" | "EXECUTE") => body
            .iter()
            .any(|t| t.is_word("SELECT") || t.is_word("VALUES")),
        ("UPDATE", "SET") => false,
        // DROP TABLE IF EXISTS
        ("DROP", "IF") => body.len() > 2,
        _ => true,
    }
}

/// Whether starter `w` followed by the tokens `next` can be a statement rather than a clause
/// using the same keyword (`WITH (NOLOCK)`, `RAISERROR … WITH NOWAIT`, `ALTER COLUMN`,
/// `DROP CONSTRAINT`, `ON DELETE SET NULL`, `BEGIN CATCH` after `END TRY`).
fn begins_statement(w: &str, next: &[&Tok]) -> bool {
    let n0 = next.first().and_then(|t| t.word()).unwrap_or_default();
    match w {
        // WITH cte AS (…) / WITH cte (cols) AS (…)
        "WITH" => {
            matches!(next.first(), Some(Tok::Word(_) | Tok::Quoted(_)))
                && next
                    .get(1)
                    .is_some_and(|t| t.is_word("AS") || t.is_punct('('))
        }
        "SET" => match next.first() {
            Some(Tok::Var(_)) => true,
            Some(Tok::Word(_)) => n0 != "NULL" && n0 != "DEFAULT",
            _ => false,
        },
        "DELETE" | "UPDATE" => !["CASCADE", "NO", "SET"].contains(&n0.as_str()),
        "ALTER" | "DROP" => OBJECT_KINDS.contains(&n0.as_str()),
        "BEGIN" => n0 != "CATCH",
        _ => true,
    }
}

/// Object kinds after CREATE/ALTER/DROP (anything else after ALTER/DROP is a clause of ALTER TABLE).
const OBJECT_KINDS: &[&str] = &[
    "TABLE",
    "VIEW",
    "PROC",
    "PROCEDURE",
    "INDEX",
    "FUNCTION",
    "TRIGGER",
    "SCHEMA",
    "DATABASE",
    "TYPE",
    "SEQUENCE",
    "SYNONYM",
    "USER",
    "LOGIN",
    "ROLE",
    "STATISTICS",
];

/// The simple statement `sig` ends in: what follows an IF/WHILE condition or an ELSE. None
/// while an IF/WHILE waits for its body. BEGIN … END and CASE … END contents are skipped.
fn current_stmt<'a>(sig: &'a [&'a Tok]) -> Option<&'a [&'a Tok]> {
    let (mut d, mut b) = (0i32, 0i32);
    let mut start = Some(0);
    for (k, t) in sig.iter().enumerate() {
        match t {
            Tok::Punct('(') => d += 1,
            Tok::Punct(')') => d -= 1,
            _ => {}
        }
        let Tok::Word(w) = t else { continue };
        if d > 0 {
            continue;
        }
        if b == 0 {
            let drop_if = k >= 2 && sig[k - 2].is_word("DROP");
            if (t.is_word("IF") || t.is_word("WHILE")) && !drop_if {
                start = None;
            } else if t.is_word("ELSE") {
                start = Some(k + 1);
            } else if start.is_none() && is_starter(w) {
                start = Some(k);
            }
        }
        b = (b + block_step(t, sig.get(k + 1).copied())).max(0);
    }
    start.map(|s| &sig[s..])
}

/// Index of a CTE statement's verb (the first depth-0 DML word after `WITH … AS (…)`); 0 else.
fn verb_index(stmt: &[&Tok]) -> usize {
    if !stmt[0].is_word("WITH") {
        return 0;
    }
    let mut d = 0;
    for (k, t) in stmt.iter().enumerate() {
        match t {
            Tok::Punct('(') => d += 1,
            Tok::Punct(')') => d -= 1,
            _ if d == 0
                && ["SELECT", "INSERT", "UPDATE", "DELETE", "MERGE"]
                    .iter()
                    .any(|v| t.is_word(v)) =>
            {
                return k;
            }
            _ => {}
        }
    }
    0
}

fn push_stmt(stmts: &mut Vec<Vec<Tok>>, cur: &mut Vec<Tok>) {
    if cur.iter().any(|t| !t.is_space()) {
        stmts.push(std::mem::take(cur));
    } else {
        cur.clear();
    }
}

/// Reserved words that can follow a table reference and so are never its alias (nor a table
/// name): the FROM-clause parsers of `describe`, `nullability` and `sysviews` stop at them.
/// `AS` is not here: it introduces an alias (each parser reads it first).
pub(crate) const NOT_ALIAS: &[&str] = &[
    "WHERE",
    "SET",
    "VALUES",
    "ON",
    "JOIN",
    "INNER",
    "LEFT",
    "RIGHT",
    "OUTER",
    "CROSS",
    "FULL",
    "ORDER",
    "GROUP",
    "WITH",
    "OUTPUT",
    "SELECT",
    "DEFAULT",
    "UNION",
    "HAVING",
    "EXCEPT",
    "INTERSECT",
    "OPTION",
    "FOR",
    "INTO",
    "FROM",
    "DELETE",
    "UPDATE",
    "INSERT",
    "WINDOW",
    "PIVOT",
    "UNPIVOT",
    "TABLESAMPLE",
    "AND",
    "OR",
];

/// The significant tokens (spaces and comments left out).
pub fn sig(toks: &[Tok]) -> Vec<&Tok> {
    toks.iter().filter(|t| !t.is_space()).collect()
}

/// Index of the first significant token at or after `from`.
pub(crate) fn next_sig(toks: &[Tok], from: usize) -> Option<usize> {
    (from..toks.len()).find(|&i| !toks[i].is_space())
}

/// The items of a comma list (`@a INT, @b INT`, `EXEC p 1, 2`): `split_commas` without blank
/// parts, so an empty list has no items.
pub(crate) fn list_items(toks: &[Tok]) -> Vec<&[Tok]> {
    split_commas(toks)
        .into_iter()
        .filter(|p| p.iter().any(|t| !t.is_space()))
        .collect()
}

/// Index of a depth-0 word in a statement.
pub(crate) fn depth0_word(toks: &[Tok], from: usize, words: &[&str]) -> Option<usize> {
    let mut d = 0;
    for (i, t) in toks.iter().enumerate() {
        match t {
            Tok::Punct('(') => d += 1,
            Tok::Punct(')') => d -= 1,
            _ if d == 0 && i >= from && words.iter().any(|w| t.is_word(w)) => return Some(i),
            _ => {}
        }
    }
    None
}

/// Splits at depth-0 commas (parentheses nest); an empty input gives one empty part.
pub(crate) fn split_commas<T: Borrow<Tok>>(toks: &[T]) -> Vec<&[T]> {
    let mut out = Vec::new();
    let mut d = 0;
    let mut s = 0;
    for (i, t) in toks.iter().enumerate() {
        match t.borrow() {
            Tok::Punct('(') => d += 1,
            Tok::Punct(')') => d -= 1,
            Tok::Punct(',') if d == 0 => {
                out.push(&toks[s..i]);
                s = i + 1;
            }
            _ => {}
        }
    }
    out.push(&toks[s..]);
    out
}

/// Index of the `)` closing the `(` at `open`, in tokens (`&[Tok]`) or significant tokens
/// (`&[&Tok]`).
pub(crate) fn matching<T: Borrow<Tok>>(toks: &[T], open: usize) -> Option<usize> {
    let mut d = 0usize;
    for (i, t) in toks.iter().enumerate().skip(open) {
        let t = t.borrow();
        if t.is_punct('(') {
            d += 1;
        } else if t.is_punct(')') {
            d = d.checked_sub(1)?;
            if d == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// A multi-part name from `i` (`a.b.c`, `a..c`), in tokens or significant tokens: its parts
/// and the index after it; None when a dot is not followed by a name.
pub(crate) fn dotted<T: Borrow<Tok>>(sg: &[T], mut i: usize) -> Option<(Vec<String>, usize)> {
    let mut parts = vec![ident(sg.get(i)?.borrow())?.to_string()];
    i += 1;
    while sg.get(i).is_some_and(|t| t.borrow().is_punct('.')) {
        i += 1;
        // `db..t`: the schema left out (the default one, `schema::sqlite_name`).
        while sg.get(i).is_some_and(|t| t.borrow().is_punct('.')) {
            parts.push(String::new());
            i += 1;
        }
        parts.push(ident(sg.get(i)?.borrow())?.to_string());
        i += 1;
    }
    Some((parts, i))
}

/// The name a word or quoted identifier holds.
pub(crate) fn ident(t: &Tok) -> Option<&str> {
    match t {
        Tok::Word(w) | Tok::Quoted(w) => Some(w),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(sql: &str) -> Vec<String> {
        split(&tokenize(sql).unwrap())
            .iter()
            .map(|s| {
                s.iter()
                    .map(|t| t.text())
                    .collect::<String>()
                    .trim()
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn tokens() {
        let t = tokenize("select N'a''b', [x y], @P1, 0x0A, 1.5e3 -- c\n").unwrap();
        assert!(t.contains(&Tok::Str {
            n: true,
            s: "a'b".into()
        }));
        assert!(t.contains(&Tok::Quoted("x y".into())));
        assert!(t.contains(&Tok::Var("@P1".into())));
        assert!(t.contains(&Tok::Hex("0x0A".into())));
        assert!(t.contains(&Tok::Num("1.5e3".into())));
    }

    #[test]
    fn splitting() {
        assert_eq!(words("select 1; select 2"), vec!["select 1", "select 2"]);
        assert_eq!(words("select 1\nselect 2\n"), vec!["select 1", "select 2"]);
        assert_eq!(
            words("insert into t (a)\nselect 1"),
            vec!["insert into t (a)\nselect 1"]
        );
        assert_eq!(
            words("select 1\nunion all\nselect 2"),
            vec!["select 1\nunion all\nselect 2"]
        );
        assert_eq!(
            words("with c as (select 1 a)\nselect * from c"),
            vec!["with c as (select 1 a)\nselect * from c"]
        );
        assert_eq!(words("update t\nset a = 1"), vec!["update t\nset a = 1"]);
        assert_eq!(
            words("declare @i int = 0\nwhile @i < 3\nbegin\nset @i = @i + 1\nend\nselect @i"),
            vec![
                "declare @i int = 0",
                "while @i < 3\nbegin\nset @i = @i + 1\nend",
                "select @i"
            ]
        );
        assert_eq!(
            words("if 1 = 1\n  select 1\nelse\n  select 2\nselect 3"),
            vec!["if 1 = 1\n  select 1\nelse\n  select 2", "select 3"]
        );
        assert_eq!(
            words("select case when 1=1 then 'a' else 'b' end\nselect 2"),
            vec!["select case when 1=1 then 'a' else 'b' end", "select 2"]
        );
        assert_eq!(
            words("create table t (a int)\ninsert into t values (1)\nselect * from t"),
            vec![
                "create table t (a int)",
                "insert into t values (1)",
                "select * from t"
            ]
        );
    }

    #[test]
    fn splitting_without_newlines() {
        // FreeTDS's parameter array: one line, no separators.
        assert_eq!(
            words("INSERT INTO t VALUES (0, N's0') INSERT INTO t VALUES (1, N's1')"),
            vec![
                "INSERT INTO t VALUES (0, N's0')",
                "INSERT INTO t VALUES (1, N's1')"
            ]
        );
        assert_eq!(
            words("declare @a int set @a = 1 select @a"),
            vec!["declare @a int", "set @a = 1", "select @a"]
        );
        assert_eq!(
            words("if 1 = 1 select 1 else if 2 = 2 select 2 else select 3 select 4"),
            vec![
                "if 1 = 1 select 1 else if 2 = 2 select 2 else select 3",
                "select 4"
            ]
        );
        assert_eq!(
            words("while @i < 3 begin set @i = @i + 1 end select @i"),
            vec!["while @i < 3 begin set @i = @i + 1 end", "select @i"]
        );
        assert_eq!(
            words("begin tran insert into t values (1) commit"),
            vec!["begin tran", "insert into t values (1)", "commit"]
        );
        assert_eq!(
            words("begin try select 1 end try begin catch select 2 end catch select 3"),
            vec![
                "begin try select 1 end try begin catch select 2 end catch",
                "select 3"
            ]
        );
        assert_eq!(
            words("set nocount on update t set a = 1 delete from t"),
            vec!["set nocount on", "update t set a = 1", "delete from t"]
        );
        // Clauses that reuse statement keywords stay in their statement.
        for one in [
            "insert into t (a) select 1",
            "insert into t exec p",
            "with c as (select 1 a) insert into t select * from c",
            "select a from t with (nolock)",
            "raiserror('x', 16, 1) with nowait",
            "drop table if exists t",
            "if object_id('t') is not null drop table t",
            "alter table t alter column a int",
            "alter table t drop constraint k",
            "alter table t add constraint k foreign key (a) references p (a) on delete set null",
            "alter table t add constraint k foreign key (a) references p (a) on update cascade",
            "select case when 1 = 1 then 'a' else 'b' end from t",
            "select 1 union all select 2",
        ] {
            assert_eq!(words(one), vec![one]);
        }
    }
}
