//! A small T-SQL tokenizer: enough to rewrite T-SQL into SQLite and to split batches.

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

/// Statement starters used to split batches that separate statements by newlines only.
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
];

/// Whether `word` begins a statement (batch splitting).
pub(crate) fn is_starter(word: &str) -> bool {
    STARTERS.iter().any(|k| word.eq_ignore_ascii_case(k))
}

/// Whether `word` begins the body of an IF/WHILE: any starter except USE and SAVE.
pub(crate) fn is_body_starter(word: &str) -> bool {
    !word.eq_ignore_ascii_case("USE") && !word.eq_ignore_ascii_case("SAVE") && is_starter(word)
}

/// Splits a batch into statements at top-level `;` and at line starts that begin a new
/// statement (T-SQL needs no separators). `INSERT … SELECT`, `UNION SELECT`, CTE bodies and
/// `BEGIN TRAN` stay together.
pub fn split(toks: &[Tok]) -> Vec<Vec<Tok>> {
    let mut stmts: Vec<Vec<Tok>> = Vec::new();
    let mut cur: Vec<Tok> = Vec::new();
    let mut depth = 0i32;
    // BEGIN … END blocks (not BEGIN TRAN) and CASE … END: never split inside them.
    let mut block = 0i32;
    let mut after_newline = false;
    for (i, t) in toks.iter().enumerate() {
        let t = t.clone();
        match &t {
            Tok::Punct('(') => depth += 1,
            Tok::Punct(')') => depth -= 1,
            Tok::Punct(';') if depth == 0 && block == 0 => {
                push_stmt(&mut stmts, &mut cur);
                after_newline = false;
                continue;
            }
            Tok::Space(s) if s.contains('\n') => {
                after_newline = true;
                cur.push(t);
                continue;
            }
            Tok::Word(w) if w.eq_ignore_ascii_case("CASE") => block += 1,
            Tok::Word(w) if w.eq_ignore_ascii_case("END") => block = (block - 1).max(0),
            Tok::Word(w) if w.eq_ignore_ascii_case("BEGIN") => {
                let next = toks[i + 1..].iter().find(|t| !t.is_space());
                let tran = next.is_some_and(|n| {
                    n.is_word("TRAN") || n.is_word("TRANSACTION") || n.is_word("DISTRIBUTED")
                });
                let catch = next.is_some_and(|n| n.is_word("CATCH"));
                if !tran {
                    if depth == 0 && block == 0 && after_newline && !catch && starts_new(&cur, w) {
                        push_stmt(&mut stmts, &mut cur);
                    }
                    block += 1;
                    after_newline = false;
                    cur.push(t);
                    continue;
                }
                if depth == 0 && block == 0 && after_newline && starts_new(&cur, w) {
                    push_stmt(&mut stmts, &mut cur);
                }
            }
            Tok::Word(w)
                if depth == 0
                    && block == 0
                    && after_newline
                    && is_starter(w)
                    && starts_new(&cur, w) =>
            {
                push_stmt(&mut stmts, &mut cur);
            }
            _ => {}
        }
        if !t.is_space() {
            after_newline = false;
        }
        cur.push(t);
    }
    push_stmt(&mut stmts, &mut cur);
    stmts
}

fn starts_new(cur: &[Tok], w: &str) -> bool {
    let sig: Vec<&Tok> = cur.iter().filter(|t| !t.is_space()).collect();
    let Some(first) = sig.first().and_then(|t| t.word()) else {
        return false;
    };
    let last = sig.last().and_then(|t| t.word()).unwrap_or_default();
    let w = w.to_ascii_uppercase();
    if [
        "UNION",
        "ALL",
        "EXCEPT",
        "INTERSECT",
        "AS",
        "THEN",
        "ELSE",
        "BEGIN",
    ]
    .contains(&last.as_str())
    {
        return false;
    }
    if first == "IF" || first == "WHILE" {
        // The first statement keyword after the condition starts the body, not a new statement.
        let mut d = 0;
        let mut body = false;
        for t in &sig[1..] {
            match t {
                Tok::Punct('(') => d += 1,
                Tok::Punct(')') => d -= 1,
                Tok::Word(x) if d == 0 && (is_starter(x) || x.eq_ignore_ascii_case("BEGIN")) => {
                    body = true
                }
                _ => {}
            }
        }
        if !body {
            return false;
        }
    }
    if first == "WITH" && sig.last().is_some_and(|t| t.is_punct(')')) {
        // Main query of a CTE.
        return false;
    }
    if w == "SELECT" && first == "INSERT" {
        // INSERT … SELECT, unless the INSERT already has its rows.
        return sig
            .iter()
            .any(|t| t.is_word("SELECT") || t.is_word("VALUES"));
    }
    if w == "SET" && first == "UPDATE" {
        return false;
    }
    true
}

fn push_stmt(stmts: &mut Vec<Vec<Tok>>, cur: &mut Vec<Tok>) {
    if cur.iter().any(|t| !t.is_space()) {
        stmts.push(std::mem::take(cur));
    } else {
        cur.clear();
    }
}

/// Splits at depth-0 commas (parentheses nest); an empty input gives one empty part.
pub(crate) fn split_commas(toks: &[Tok]) -> Vec<&[Tok]> {
    let mut out = Vec::new();
    let mut d = 0;
    let mut s = 0;
    for (i, t) in toks.iter().enumerate() {
        match t {
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
}
