//! Stored procedure definitions: CREATE / ALTER / DROP PROCEDURE, the look-up by name and the
//! parameter list parser. Procedures live in the shared SQLite table `__tdspeer_procs`, so
//! every connection sees them; control.rs runs them.

use crate::sql::context::{Context, Flow, StmtErr};
use crate::sql::errors::{SqlError, from_sqlite, from_sqlite_named};
use crate::sql::lexer::{self, Tok, list_items, sig};
use crate::types::Ty;

pub const PROC_TABLE: &str = "CREATE TABLE IF NOT EXISTS __tdspeer_procs (name TEXT PRIMARY KEY COLLATE NOCASE, params TEXT, body TEXT)";

pub(in crate::sql) struct ProcParam {
    pub(in crate::sql) name: String,
    pub(in crate::sql) ty: Ty,
    pub(in crate::sql) default: Option<Vec<Tok>>,
    pub(in crate::sql) output: bool,
    /// `@t TableType READONLY`: the table type's name (last part); `ty` is unused then.
    pub(in crate::sql) table_type: Option<String>,
}

/// Tokens as text, one space between them (type names of DECLARE and parameter lists).
pub(crate) fn text(toks: &[&Tok]) -> String {
    toks.iter().map(|t| t.text()).collect::<Vec<_>>().join(" ")
}

fn err(msg: impl Into<String>) -> StmtErr {
    StmtErr::Sql(SqlError::syntax(msg))
}

/// `@a INT, @b NVARCHAR(10) = N'x' OUTPUT` (optionally parenthesised).
pub(in crate::sql) fn parse_params(src: &str) -> Result<Vec<ProcParam>, StmtErr> {
    let toks = lexer::tokenize(src).map_err(err)?;
    let mut toks: Vec<Tok> = toks.into_iter().filter(|t| !t.is_space()).collect();
    if toks.first().is_some_and(|t| t.is_punct('(')) && toks.last().is_some_and(|t| t.is_punct(')'))
    {
        toks = toks[1..toks.len() - 1].to_vec();
    }
    let mut out = Vec::new();
    for p in list_items(&toks) {
        let Some(Tok::Var(name)) = p.first() else {
            return Err(err("Incorrect syntax in the procedure parameter list."));
        };
        let mut rest: Vec<Tok> = p[1..]
            .iter()
            .filter(|t| !t.is_word("AS"))
            .cloned()
            .collect();
        let mut output = false;
        if rest
            .last()
            .is_some_and(|t| t.is_word("OUTPUT") || t.is_word("OUT") || t.is_word("READONLY"))
        {
            output = !rest.last().unwrap().is_word("READONLY");
            rest.pop();
        }
        let (ty_toks, default) = match rest.iter().position(|t| t.is_punct('=')) {
            Some(e) => (rest[..e].to_vec(), Some(rest[e + 1..].to_vec())),
            None => (rest.clone(), None),
        };
        let ty_text = text(&ty_toks.iter().collect::<Vec<_>>())
            .replace(" (", "(")
            .replace("( ", "(")
            .replace(" )", ")")
            .replace(" ,", ",");
        let readonly = p.last().is_some_and(|t| t.is_word("READONLY"));
        let (ty, table_type) = match Ty::parse(&ty_text) {
            Some(ty) if !readonly => (ty, None),
            // A table-valued parameter (SQL Server requires READONLY for them).
            _ if readonly => (Ty::Int, Some(crate::sql::schema::base_name(&ty_text))),
            _ => return Err(err(format!("Cannot find data type {ty_text}."))),
        };
        out.push(ProcParam {
            name: name.clone(),
            ty,
            default,
            output,
            table_type,
        });
    }
    Ok(out)
}

/// CREATE [OR ALTER] PROC[EDURE] name [params] AS body — the whole batch.
pub(crate) fn create_proc(cx: &mut Context, toks: &[Tok]) -> Result<Flow, StmtErr> {
    let sg = sig(toks);
    let kw = sg
        .iter()
        .position(|t| t.is_word("PROC") || t.is_word("PROCEDURE"))
        .ok_or_else(|| err("Incorrect syntax near 'PROCEDURE'."))?;
    let name = proc_name(sg.get(kw + 1..).unwrap_or(&[]));
    let name_tok: &Tok = sg
        .get(kw + 1)
        .ok_or_else(|| err("Procedure name expected."))?;
    let name_end = toks.iter().position(|t| std::ptr::eq(t, name_tok)).unwrap() + 1;
    // skip `.name` parts of a schema-qualified name
    let mut p = name_end;
    while toks.get(p).is_some_and(|t| t.is_punct('.')) {
        p += 2;
    }
    let as_pos = (p..toks.len())
        .find(|&i| toks[i].is_word("AS"))
        .ok_or_else(|| err("Incorrect syntax: expected AS in CREATE PROCEDURE."))?;
    let params: String = toks[p..as_pos].iter().map(|t| t.text()).collect();
    parse_params(&params)?;
    let mut body: Vec<Tok> = toks[as_pos + 1..].to_vec();
    // Strip one BEGIN … END around the body.
    let bs: Vec<usize> = (0..body.len()).filter(|&i| !body[i].is_space()).collect();
    if bs.len() >= 2
        && body[bs[0]].is_word("BEGIN")
        && !body
            .get(bs[1])
            .is_some_and(|t| t.is_word("TRAN") || t.is_word("TRANSACTION"))
        && body[*bs.last().unwrap()].is_word("END")
    {
        let (a, b) = (bs[0], *bs.last().unwrap());
        body = body[a + 1..b].to_vec();
    }
    let body: String = body.iter().map(|t| t.text()).collect();
    let or_alter = sg.iter().take(kw).any(|t| t.is_word("ALTER"));
    // DDL is transactional in SQL Server: a procedure created in a transaction that rolls
    // back (or a connection closed without commit) is gone.
    cx.before_write()?;
    let sql = if or_alter {
        "INSERT OR REPLACE INTO __tdspeer_procs VALUES (?1, ?2, ?3)"
    } else {
        "INSERT INTO __tdspeer_procs VALUES (?1, ?2, ?3)"
    };
    cx.db
        .execute(sql, rusqlite::params![name, params.trim(), body.trim()])
        .map_err(|e| StmtErr::Sql(from_sqlite_named(&e, &name)))?;
    Ok(Flow::Continue)
}

pub(crate) fn drop_proc(cx: &mut Context, sg: &[&Tok]) -> Result<Flow, StmtErr> {
    let kw = sg
        .iter()
        .position(|t| t.is_word("PROC") || t.is_word("PROCEDURE"))
        .unwrap();
    let if_exists = sg.get(kw + 1).is_some_and(|t| t.is_word("IF"));
    let name = proc_name(&sg[kw + 1 + if if_exists { 2 } else { 0 }..]);
    cx.before_write()?;
    let n = cx
        .db
        .execute("DELETE FROM __tdspeer_procs WHERE name = ?1", [&name])
        .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
    if n == 0 && !if_exists {
        return Err(StmtErr::Sql(SqlError::new(
            3701,
            11,
            format!(
                "Cannot drop the procedure '{name}', because it does not exist or you do not have permission."
            ),
        )));
    }
    Ok(Flow::Continue)
}

pub(crate) fn lookup_proc(cx: &Context, name: &str) -> Option<(String, String)> {
    // Asked for every statement's first word: cached, or preparing it costs more than the
    // INSERT it precedes.
    cx.db
        .prepare_cached("SELECT params, body FROM __tdspeer_procs WHERE name = ?1")
        .and_then(|mut st| st.query_row([name], |r| Ok((r.get(0)?, r.get(1)?))))
        .ok()
}

fn proc_name(sg: &[&Tok]) -> String {
    // [dbo].[name] / dbo.name / name -> name
    let mut parts = Vec::new();
    let mut i = 0;
    while let Some(t) = sg.get(i) {
        match t {
            Tok::Word(w) => parts.push(w.clone()),
            Tok::Quoted(q) => parts.push(q.clone()),
            _ => break,
        }
        if sg.get(i + 1).is_some_and(|t| t.is_punct('.')) {
            i += 2;
        } else {
            break;
        }
    }
    parts.last().cloned().unwrap_or_default()
}
