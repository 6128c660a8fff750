//! T-SQL variables (DECLARE / SET / SELECT @v = …) and stored procedures (CREATE PROCEDURE,
//! EXEC with OUTPUT arguments, RPC calls by name with RETURNVALUE tokens). Procedures live in
//! the shared SQLite table `__tdspeer_procs`, so every connection sees them.

use super::{Decl, Engine, Flow, Out, Param, StmtErr};
use crate::resp::Resp;
use crate::sql::errors::{SqlError, from_sqlite, from_sqlite_named};
use crate::sql::functions::cast_value;
use crate::sql::lexer::{self, Tok, list_items, sig};
use crate::token;
use crate::types::Ty;
use rusqlite::types::Value;
use std::io;

pub const PROC_TABLE: &str = "CREATE TABLE IF NOT EXISTS __tdspeer_procs (name TEXT PRIMARY KEY COLLATE NOCASE, params TEXT, body TEXT)";

/// A batch-scoped variable.
#[derive(Clone, Debug)]
pub struct Var {
    pub name: String,
    pub ty: Ty,
    pub value: Value,
}

pub(in crate::sql) struct ProcParam {
    pub(in crate::sql) name: String,
    pub(in crate::sql) ty: Ty,
    default: Option<Vec<Tok>>,
    pub(in crate::sql) output: bool,
    /// `@t TableType READONLY`: the table type's name (last part); `ty` is unused then.
    pub(in crate::sql) table_type: Option<String>,
}

fn text(toks: &[&Tok]) -> String {
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

impl Engine {
    pub(in crate::sql) fn vars_as_params(&self) -> Vec<Param> {
        self.vars
            .iter()
            .map(|v| Param {
                name: v.name.clone(),
                ty: Some(v.ty),
                value: v.value.clone(),
                output: false,
                table: None,
            })
            .collect()
    }

    fn set_var(&mut self, name: &str, value: Value) -> Result<(), StmtErr> {
        let var = self
            .vars
            .iter_mut()
            .find(|v| v.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                StmtErr::Sql(SqlError::new(
                    137,
                    15,
                    format!("Must declare the scalar variable \"{name}\"."),
                ))
            })?;
        var.value = cast_value(value, var.ty).map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
        Ok(())
    }

    /// Evaluates an expression (T-SQL tokens) to a value.
    pub(in crate::sql) fn eval_value(
        &mut self,
        expr: &[Tok],
        params: &[Param],
    ) -> Result<Value, StmtErr> {
        let decl: Decl = params.iter().map(|p| (p.name.clone(), p.ty)).collect();
        let ctx = self.ctx(&decl);
        let e = ctx.rw(expr).map_err(err)?;
        let (_, rows) = self.fetch(&format!("SELECT {e}"), params)?;
        Ok(rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next())
            .unwrap_or(Value::Null))
    }

    /// DECLARE @a INT [= expr], @b …
    pub(in crate::sql) fn declare(
        &mut self,
        toks: &[Tok],
        params: &[Param],
    ) -> Result<Flow, StmtErr> {
        let start = toks.iter().position(|t| t.is_word("DECLARE")).unwrap() + 1;
        for part in list_items(&toks[start..]) {
            let sg = sig(part);
            let Some(Tok::Var(name)) = sg.first() else {
                return Err(err("Incorrect syntax near 'DECLARE'."));
            };
            if sg.get(1).is_some_and(|t| t.is_word("TABLE")) {
                let at = part.iter().position(|t| t.is_word("TABLE")).unwrap();
                self.declare_table_var(name, &part[at + 1..])?;
                continue;
            }
            if sg.iter().any(|t| t.is_word("CURSOR")) {
                return Err(StmtErr::Sql(SqlError::unsupported("DECLARE … CURSOR")));
            }
            let eq = part.iter().position(|t| t.is_punct('='));
            let ty_toks: Vec<&Tok> = sg[1..]
                .iter()
                .copied()
                .take_while(|t| !t.is_punct('='))
                .filter(|t| !t.is_word("AS"))
                .collect();
            let ty_text = text(&ty_toks)
                .replace(" (", "(")
                .replace("( ", "(")
                .replace(" )", ")")
                .replace(" ,", ",");
            let ty = Ty::parse(&ty_text)
                .ok_or_else(|| err(format!("Cannot find data type {ty_text}.")))?;
            self.vars.retain(|v| !v.name.eq_ignore_ascii_case(name));
            self.vars.push(Var {
                name: name.clone(),
                ty,
                value: Value::Null,
            });
            if let Some(e) = eq {
                let all: Vec<Param> = params
                    .iter()
                    .cloned()
                    .chain(self.vars_as_params())
                    .collect();
                let v = self.eval_value(&part[e + 1..], &all)?;
                self.set_var(name, v)?;
            }
        }
        Ok(Flow::Continue)
    }

    /// SET @a = expr (also += -= *=)
    pub(in crate::sql) fn set_statement(
        &mut self,
        toks: &[Tok],
        params: &[Param],
    ) -> Result<Flow, StmtErr> {
        let sg = sig(toks);
        let Some(Tok::Var(name)) = sg.get(1) else {
            return Err(err("Incorrect syntax near 'SET'."));
        };
        let eq = toks
            .iter()
            .position(|t| t.is_punct('='))
            .ok_or_else(|| err("Incorrect syntax near 'SET'."))?;
        let op = toks[..eq]
            .iter()
            .rev()
            .find(|t| !t.is_space())
            .filter(|t| matches!(t, Tok::Punct('+' | '-' | '*' | '/')));
        let mut expr: Vec<Tok> = toks[eq + 1..].to_vec();
        if let Some(Tok::Punct(c)) = op {
            let mut e = vec![Tok::Var(name.clone()), Tok::Punct(*c), Tok::Punct('(')];
            e.extend(expr);
            e.push(Tok::Punct(')'));
            expr = e;
        }
        let v = self.eval_value(&expr, params)?;
        self.set_var(name, v)?;
        Ok(Flow::Continue)
    }

    /// SELECT @a = expr, @b = expr2 [FROM …]: the last row's values are assigned.
    pub(in crate::sql) fn select_assign(
        &mut self,
        toks: &[Tok],
        params: &[Param],
    ) -> Result<Flow, StmtErr> {
        let sel = toks.iter().position(|t| t.is_word("SELECT")).unwrap() + 1;
        let from = toks
            .iter()
            .position(|t| t.is_word("FROM"))
            .unwrap_or(toks.len());
        let mut names = Vec::new();
        let mut exprs = Vec::new();
        for item in list_items(&toks[sel..from]) {
            let eq = item.iter().position(|t| t.is_punct('=')).ok_or_else(|| err("A SELECT statement that assigns a value to a variable must not be combined with data-retrieval operations."))?;
            let Some(Tok::Var(n)) = item[..eq].iter().find(|t| !t.is_space()) else {
                return Err(err("Incorrect syntax near '='."));
            };
            names.push(n.clone());
            exprs.push(item[eq + 1..].iter().map(|t| t.text()).collect::<String>());
        }
        let mut q: Vec<Tok> = vec![Tok::Word("SELECT".into()), Tok::Space(" ".into())];
        q.extend(lexer::tokenize(&exprs.join(", ")).map_err(err)?);
        q.push(Tok::Space(" ".into()));
        q.extend_from_slice(&toks[from..]);
        let decl: Decl = params.iter().map(|p| (p.name.clone(), p.ty)).collect();
        let sql = self.ctx(&decl).rw(&q).map_err(err)?;
        let (_, rows) = self.fetch(&sql, params)?;
        if let Some(last) = rows.into_iter().last() {
            for (n, v) in names.iter().zip(last) {
                self.set_var(n, v)?;
            }
        }
        Ok(Flow::Continue)
    }

    /// EXEC sp_executesql N'stmt' [, N'@a INT, …' [, @a = value | value, …]] in a batch.
    pub(in crate::sql) fn exec_executesql(
        &mut self,
        args: &[Tok],
        params: &[Param],
        out: &mut Out,
        r: &mut Resp,
    ) -> Result<Flow, StmtErr> {
        let parts = list_items(args);
        let Some(stmt_toks) = parts.first() else {
            return Err(err(
                "Procedure or function 'sp_executesql' expects parameter '@statement', which was not supplied.",
            ));
        };
        let stmt = crate::token::value::as_text(&self.eval_value(stmt_toks, params)?);
        let decl_text = match parts.get(1) {
            Some(d) => crate::token::value::as_text(&self.eval_value(d, params)?),
            None => String::new(),
        };
        let defs = if decl_text.trim().is_empty() {
            Vec::new()
        } else {
            parse_params(&decl_text)?
        };
        let mut bound: Vec<Param> = defs
            .iter()
            .map(|d| Param {
                name: d.name.clone(),
                ty: Some(d.ty),
                value: Value::Null,
                output: d.output,
                table: None,
            })
            .collect();
        for (pos, a) in parts.iter().skip(2).enumerate() {
            let sg: Vec<Tok> = a
                .iter()
                .filter(|t| !t.is_space() && !t.is_word("OUTPUT") && !t.is_word("OUT"))
                .cloned()
                .collect();
            let (idx, expr) = match (sg.first(), sg.get(1)) {
                (Some(Tok::Var(n)), Some(Tok::Punct('='))) => (
                    bound.iter().position(|b| b.name.eq_ignore_ascii_case(n)),
                    sg[2..].to_vec(),
                ),
                _ => (Some(pos), sg.clone()),
            };
            let Some(idx) = idx.filter(|&i| i < bound.len()) else {
                return Err(StmtErr::Sql(SqlError::new(
                    8144,
                    16,
                    "Procedure or function sp_executesql has too many arguments specified.",
                )));
            };
            let v = self.eval_value(&expr, params)?;
            bound[idx].value =
                cast_value(v, defs[idx].ty).map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
        }
        // The statement runs in its own scope: the caller's variables are not visible, and its
        // SET NOCOUNT ends with it.
        let saved = std::mem::take(&mut self.vars);
        let saved_nocount = self.nocount;
        self.proc_depth += 1;
        let res = self.run_text(&stmt, &bound, out, r);
        self.proc_depth -= 1;
        self.nocount = saved_nocount;
        self.vars = saved;
        res.map_err(StmtErr::Io)?;
        Ok(Flow::Continue)
    }

    /// IF cond body [ELSE body]; bodies are one statement or BEGIN … END.
    pub(in crate::sql) fn if_statement(
        &mut self,
        toks: &[Tok],
        params: &[Param],
        out: &mut Out,
        r: &mut Resp,
    ) -> Result<Flow, StmtErr> {
        let (cond, body, other) = split_condition(toks, true)?;
        if self.condition(&cond, params)? {
            self.run_body(&body, params, out, r)
        } else if let Some(other) = other {
            self.run_body(&other, params, out, r)
        } else {
            Ok(Flow::Continue)
        }
    }

    /// WHILE cond body (at most 100000 iterations; no BREAK/CONTINUE).
    pub(in crate::sql) fn while_statement(
        &mut self,
        toks: &[Tok],
        params: &[Param],
        out: &mut Out,
        r: &mut Resp,
    ) -> Result<Flow, StmtErr> {
        let (cond, body, _) = split_condition(toks, false)?;
        for _ in 0..100_000 {
            // Variables change between iterations: rebuild the parameter list each time.
            let all: Vec<Param> = params
                .iter()
                .filter(|p| {
                    !self
                        .vars
                        .iter()
                        .any(|v| v.name.eq_ignore_ascii_case(&p.name))
                })
                .cloned()
                .chain(self.vars_as_params())
                .collect();
            if !self.condition(&cond, &all)? {
                return Ok(Flow::Continue);
            }
            if let Flow::Stop = self.run_body(&body, &all, out, r)? {
                return Ok(Flow::Stop);
            }
        }
        Err(StmtErr::Sql(SqlError::new(
            50000,
            16,
            "tds-peer: WHILE loop exceeded 100000 iterations",
        )))
    }

    fn condition(&mut self, cond: &[Tok], params: &[Param]) -> Result<bool, StmtErr> {
        let mut e = lexer::tokenize("CASE WHEN ").map_err(err)?;
        e.extend_from_slice(cond);
        e.extend(lexer::tokenize(" THEN 1 ELSE 0 END").map_err(err)?);
        Ok(matches!(self.eval_value(&e, params)?, Value::Integer(1)))
    }

    pub(in crate::sql) fn run_body(
        &mut self,
        body: &[Tok],
        params: &[Param],
        out: &mut Out,
        r: &mut Resp,
    ) -> Result<Flow, StmtErr> {
        let sg = sig(body);
        let block = sg.first().is_some_and(|t| t.is_word("BEGIN"))
            && !sg
                .get(1)
                .is_some_and(|t| t.is_word("TRAN") || t.is_word("TRANSACTION"))
            && sg.last().is_some_and(|t| t.is_word("END"));
        let stmts = if block {
            let a = body.iter().position(|t| t.is_word("BEGIN")).unwrap();
            let b = body.iter().rposition(|t| t.is_word("END")).unwrap();
            lexer::split(&body[a + 1..b])
        } else {
            vec![body.to_vec()]
        };
        self.run_each(stmts, params, out, r)
    }

    /// BEGIN TRY … END TRY BEGIN CATCH … END CATCH
    pub(in crate::sql) fn try_catch(
        &mut self,
        toks: &[Tok],
        params: &[Param],
        out: &mut Out,
        r: &mut Resp,
    ) -> Result<Flow, StmtErr> {
        // Find the END TRY / BEGIN CATCH / END CATCH at block depth 1.
        let mut depth = 0i32;
        let (mut try_start, mut try_end, mut catch_start, mut catch_end) = (None, None, None, None);
        let next_word = |i: usize| toks[i + 1..].iter().find(|t| !t.is_space());
        for (i, t) in toks.iter().enumerate() {
            if t.is_word("BEGIN")
                && !next_word(i).is_some_and(|n| n.is_word("TRAN") || n.is_word("TRANSACTION"))
                || t.is_word("CASE")
            {
                depth += 1;
                if depth == 1 && next_word(i).is_some_and(|n| n.is_word("TRY")) {
                    try_start = Some(
                        i + 1 + toks[i + 1..].iter().position(|t| t.is_word("TRY")).unwrap() + 1,
                    );
                }
                if depth == 1 && next_word(i).is_some_and(|n| n.is_word("CATCH")) {
                    catch_start = Some(
                        i + 1
                            + toks[i + 1..]
                                .iter()
                                .position(|t| t.is_word("CATCH"))
                                .unwrap()
                            + 1,
                    );
                }
            } else if t.is_word("END") {
                if depth == 1 && next_word(i).is_some_and(|n| n.is_word("TRY")) {
                    try_end = Some(i);
                }
                if depth == 1 && next_word(i).is_some_and(|n| n.is_word("CATCH")) {
                    catch_end = Some(i);
                }
                depth -= 1;
            }
        }
        let (Some(ts), Some(te), Some(cs), Some(ce)) = (try_start, try_end, catch_start, catch_end)
        else {
            return Err(err(
                "Incorrect syntax: BEGIN TRY … END TRY must be followed by BEGIN CATCH … END CATCH.",
            ));
        };
        self.try_depth += 1;
        let flow = self.run_stmts(&toks[ts..te], params, out, r);
        self.try_depth -= 1;
        let flow = flow?;
        match self.caught.take() {
            None => Ok(flow),
            Some(e) => {
                let outer = self.last_error.replace(e);
                let res = self.run_stmts(&toks[cs..ce], params, out, r);
                self.last_error = outer;
                res
            }
        }
    }

    pub(in crate::sql) fn run_stmts(
        &mut self,
        toks: &[Tok],
        params: &[Param],
        out: &mut Out,
        r: &mut Resp,
    ) -> Result<Flow, StmtErr> {
        self.run_each(lexer::split(toks), params, out, r)
    }

    /// Run statements in order until one stops the flow (RETURN, an error caught by TRY).
    fn run_each(
        &mut self,
        stmts: Vec<Vec<Tok>>,
        params: &[Param],
        out: &mut Out,
        r: &mut Resp,
    ) -> Result<Flow, StmtErr> {
        for s in stmts {
            // Variables may have been set by earlier statements: they shadow parameters.
            let all: Vec<Param> = params
                .iter()
                .filter(|p| {
                    !self
                        .vars
                        .iter()
                        .any(|v| v.name.eq_ignore_ascii_case(&p.name))
                })
                .cloned()
                .collect();
            if let Flow::Stop = self.statement(&s, &all, out, r).map_err(StmtErr::Io)? {
                return Ok(Flow::Stop);
            }
            if self.try_depth > 0 && self.caught.is_some() {
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Continue)
    }

    /// CREATE [OR ALTER] PROC[EDURE] name [params] AS body — the whole batch.
    pub(in crate::sql) fn create_proc(&mut self, toks: &[Tok]) -> Result<Flow, StmtErr> {
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
        self.before_write()?;
        let sql = if or_alter {
            "INSERT OR REPLACE INTO __tdspeer_procs VALUES (?1, ?2, ?3)"
        } else {
            "INSERT INTO __tdspeer_procs VALUES (?1, ?2, ?3)"
        };
        self.db
            .execute(sql, rusqlite::params![name, params.trim(), body.trim()])
            .map_err(|e| StmtErr::Sql(from_sqlite_named(&e, &name)))?;
        Ok(Flow::Continue)
    }

    pub(in crate::sql) fn drop_proc(&mut self, sg: &[&Tok]) -> Result<Flow, StmtErr> {
        let kw = sg
            .iter()
            .position(|t| t.is_word("PROC") || t.is_word("PROCEDURE"))
            .unwrap();
        let if_exists = sg.get(kw + 1).is_some_and(|t| t.is_word("IF"));
        let name = proc_name(&sg[kw + 1 + if if_exists { 2 } else { 0 }..]);
        self.before_write()?;
        let n = self
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

    pub fn lookup_proc(&self, name: &str) -> Option<(String, String)> {
        // Asked for every statement's first word: cached, or preparing it costs more than the
        // INSERT it precedes.
        self.db
            .prepare_cached("SELECT params, body FROM __tdspeer_procs WHERE name = ?1")
            .and_then(|mut st| st.query_row([name], |r| Ok((r.get(0)?, r.get(1)?))))
            .ok()
    }

    /// EXEC name arg, @named = arg, @var OUTPUT …  (inside a batch).
    pub(in crate::sql) fn exec_stored(
        &mut self,
        name: &str,
        def: (String, String),
        args: &[Tok],
        params: &[Param],
        out: &mut Out,
        r: &mut Resp,
    ) -> Result<Flow, StmtErr> {
        let defs = parse_params(&def.0)?;
        let mut values: Vec<Option<Value>> = vec![None; defs.len()];
        let mut copy_back: Vec<(String, usize)> = Vec::new();
        let mut tables = Vec::new();
        for (pos, a) in list_items(args).into_iter().enumerate() {
            let mut sg: Vec<Tok> = a.iter().filter(|t| !t.is_space()).cloned().collect();
            let output = sg
                .last()
                .is_some_and(|t| t.is_word("OUTPUT") || t.is_word("OUT"));
            if output {
                sg.pop();
            }
            let (idx, expr) = match (sg.first(), sg.get(1)) {
                (Some(Tok::Var(n)), Some(Tok::Punct('='))) => (
                    defs.iter()
                        .position(|d| d.name.eq_ignore_ascii_case(n))
                        .ok_or_else(|| {
                            StmtErr::Sql(SqlError::new(
                                8145,
                                16,
                                format!("{n} is not a parameter for procedure {name}."),
                            ))
                        })?,
                    sg[2..].to_vec(),
                ),
                _ => (pos, sg.clone()),
            };
            if idx >= defs.len() {
                return Err(StmtErr::Sql(SqlError::new(
                    8144,
                    16,
                    format!("Procedure or function {name} has too many arguments specified."),
                )));
            }
            if output && let [Tok::Var(v)] = expr.as_slice() {
                copy_back.push((v.clone(), idx));
            }
            // A table-valued parameter of the batch (`exec p @P1` prepared by Driver 18) passed on.
            if let [Tok::Var(v)] = expr.as_slice()
                && let Some(t) = params
                    .iter()
                    .find(|p| p.name.eq_ignore_ascii_case(v))
                    .and_then(|p| p.table.clone())
            {
                tables.push((idx, t));
                continue;
            }
            values[idx] = Some(self.eval_value(&expr, params)?);
        }
        let flow = self.run_proc(
            name,
            &defs,
            values,
            &tables,
            out,
            r,
            |this, proc_vars, _status| {
                for (var, idx) in &copy_back {
                    if let Some(v) = proc_vars
                        .iter()
                        .find(|v| v.name.eq_ignore_ascii_case(&defs[*idx].name))
                    {
                        this.set_var(var, v.value.clone())?;
                    }
                }
                Ok(())
            },
        )?;
        Ok(flow)
    }

    /// Binds parameters, runs the body in its own variable scope, hands the final variables to
    /// `after` (with the caller's scope restored).
    #[allow(clippy::too_many_arguments)]
    fn run_proc(
        &mut self,
        name: &str,
        defs: &[ProcParam],
        values: Vec<Option<Value>>,
        tables: &[(usize, std::sync::Arc<crate::tvp::Table>)],
        out: &mut Out,
        r: &mut Resp,
        after: impl FnOnce(&mut Engine, &[Var], Option<i32>) -> Result<(), StmtErr>,
    ) -> Result<Flow, StmtErr> {
        let mut scope = Vec::new();
        let mut table_vars: Vec<(String, String)> = Vec::new();
        for (i, d) in defs.iter().enumerate() {
            if let Some(tt) = &d.table_type {
                let rows = tables.iter().find(|(k, _)| *k == i).map(|(_, t)| t.clone());
                let temp = self.table_param(&d.name, tt, rows.as_deref())?;
                table_vars.push((d.name.clone(), temp));
            }
        }
        for (d, v) in defs.iter().zip(values) {
            if d.table_type.is_some() {
                continue;
            }
            let v = match (v, &d.default) {
                (Some(v), _) => v,
                (None, Some(def)) => {
                    let def = def.clone();
                    self.eval_value(&def, &[])?
                }
                (None, None) if d.output => Value::Null,
                (None, None) => {
                    return Err(StmtErr::Sql(SqlError::new(
                        201,
                        16,
                        format!(
                            "Procedure or function '{name}' expects parameter '{}', which was not supplied.",
                            d.name
                        ),
                    )));
                }
            };
            scope.push(Var {
                name: d.name.clone(),
                ty: d.ty,
                value: cast_value(v, d.ty).map_err(|e| StmtErr::Sql(from_sqlite(&e)))?,
            });
        }
        let mut body = self.lookup_proc(name).map(|p| p.1).unwrap_or_default();
        if !table_vars.is_empty() {
            body = crate::sql::tabletypes::substitute_table_vars(&body, &table_vars);
        }
        let saved = std::mem::replace(&mut self.vars, scope);
        let saved_status = self.return_status.take();
        // SET NOCOUNT inside a procedure lasts until the procedure returns (SQL Server scopes
        // SET options to the module that set them).
        let saved_nocount = self.nocount;
        self.proc_depth += 1;
        let res = if self.proc_depth > 32 {
            Err(StmtErr::Sql(SqlError::new(
                217,
                16,
                "Maximum stored procedure nesting level exceeded (limit 32).",
            )))
        } else {
            self.run_text(&body, &[], out, r).map_err(StmtErr::Io)
        };
        self.drop_table_vars(self.proc_depth);
        self.proc_depth -= 1;
        self.nocount = saved_nocount;
        for (_, temp) in &table_vars {
            let _ = self
                .db
                .execute_batch(&format!("DROP TABLE IF EXISTS temp.\"{temp}\""));
        }
        let proc_vars = std::mem::replace(&mut self.vars, saved);
        let status = std::mem::replace(&mut self.return_status, saved_status);
        let flow = res?;
        after(self, &proc_vars, status)?;
        // RETURN ends the procedure, not the caller's batch.
        Ok(if r.attn_acked { flow } else { Flow::Continue })
    }

    /// RPC call of a stored procedure by name: results, RETURNSTATUS, RETURNVALUE per output
    /// parameter, DONEPROC.
    pub fn call_proc_rpc(
        &mut self,
        name: &str,
        def: (String, String),
        params: &[Param],
        more: bool,
        handle: Option<i32>,
        r: &mut Resp,
    ) -> io::Result<()> {
        let mut out = Out::new(true);
        let defs = match parse_params(&def.0) {
            Ok(d) => d,
            Err(StmtErr::Sql(e)) => {
                out.error(r, &e)?;
                out.finish(r)?;
                return r.put(&crate::token::proc_end(more, None, true));
            }
            Err(StmtErr::Io(e)) => return Err(e),
        };
        let mut values: Vec<Option<Value>> = vec![None; defs.len()];
        let mut tables = Vec::new();
        for (pos, p) in params.iter().enumerate() {
            let idx = if p.name.is_empty() {
                Some(pos)
            } else {
                defs.iter()
                    .position(|d| d.name.eq_ignore_ascii_case(&p.name))
            };
            if let Some(i) = idx.filter(|&i| i < defs.len()) {
                values[i] = Some(p.value.clone());
                if let Some(t) = &p.table {
                    tables.push((i, t.clone()));
                }
            }
        }
        let mut outputs: Vec<(u16, String, Ty, Value)> = Vec::new();
        let mut return_status = None;
        let res = self.run_proc(
            name,
            &defs,
            values,
            &tables,
            &mut out,
            r,
            |_, vars, status| {
                return_status = status;
                for (i, d) in defs.iter().enumerate() {
                    let actual = params.iter().enumerate().find(|(pos, p)| {
                        p.output
                            && (p.name.eq_ignore_ascii_case(&d.name)
                                || (p.name.is_empty() && *pos == i))
                    });
                    // SQL Server converts the formal parameter's value to the type the caller
                    // declared for the actual one, and sends it back at the caller's ordinal.
                    if let (true, Some((pos, p))) = (d.output, actual)
                        && let Some(v) = vars.iter().find(|v| v.name.eq_ignore_ascii_case(&d.name))
                    {
                        outputs.push((
                            pos as u16,
                            p.name.clone(),
                            p.ty.unwrap_or(d.ty),
                            v.value.clone(),
                        ));
                    }
                }
                Ok(())
            },
        );
        let err = match res {
            Ok(_) => false,
            Err(StmtErr::Io(e)) => return Err(e),
            Err(StmtErr::Sql(e)) => {
                out.error(r, &e)?;
                true
            }
        };
        if r.attn_acked {
            return Ok(());
        }
        let err = out.finish(r)? || err;
        r.put(&token::returnstatus(return_status.unwrap_or(if err {
            1
        } else {
            0
        })))?;
        // sp_prepexecrpc: the new handle comes back first, as its @handle output.
        if let Some(h) = handle {
            r.put(&token::returnvalue_int(0, "@handle", h))?;
        }
        for (ord, n, ty, v) in outputs {
            r.put(&token::returnvalue(ord, &n, ty, &v))?;
        }
        r.put(&token::done(
            token::TOK_DONEPROC,
            (if err { token::DONE_ERROR } else { 0 }) | (if more { token::DONE_MORE } else { 0 }),
            token::CMD_EXECUTE,
            0,
        ))
    }
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

pub fn proc_name_of(name: &str) -> String {
    name.rsplit('.')
        .next()
        .unwrap_or(name)
        .trim_matches(|c| c == '[' || c == ']')
        .to_string()
}

/// The batch is a CREATE/ALTER PROCEDURE (which must be alone in its batch in T-SQL).
pub fn is_create_proc(toks: &[Tok]) -> bool {
    let sg: Vec<&Tok> = toks.iter().filter(|t| !t.is_space()).take(4).collect();
    let create = sg
        .first()
        .is_some_and(|t| t.is_word("CREATE") || t.is_word("ALTER"));
    create
        && sg
            .iter()
            .skip(1)
            .any(|t| t.is_word("PROC") || t.is_word("PROCEDURE"))
}

/// (condition, body, ELSE body)
type Branches = (Vec<Tok>, Vec<Tok>, Option<Vec<Tok>>);

/// Splits `IF|WHILE cond body [ELSE body]` (depth-0, outside BEGIN/CASE … END).
fn split_condition(toks: &[Tok], allow_else: bool) -> Result<Branches, StmtErr> {
    let start = toks
        .iter()
        .position(|t| t.is_word("IF") || t.is_word("WHILE"))
        .ok_or_else(|| err("Incorrect syntax near 'IF'."))?
        + 1;
    let (mut d, mut b) = (0i32, 0i32);
    let mut body = None;
    let mut els = None;
    for (i, t) in toks.iter().enumerate().skip(start) {
        match t {
            Tok::Punct('(') => d += 1,
            Tok::Punct(')') => d -= 1,
            Tok::Word(w) if d == 0 && b == 0 && body.is_none() && lexer::is_body_starter(w) => {
                body = Some(i);
                if w.eq_ignore_ascii_case("BEGIN")
                    && !toks[i + 1..]
                        .iter()
                        .find(|t| !t.is_space())
                        .is_some_and(|n| n.is_word("TRAN") || n.is_word("TRANSACTION"))
                {
                    b += 1;
                }
            }
            Tok::Word(w)
                if w.eq_ignore_ascii_case("ELSE")
                    && d == 0
                    && b == 0
                    && body.is_some()
                    && allow_else =>
            {
                els = Some(i);
                break;
            }
            Tok::Word(w) if w.eq_ignore_ascii_case("CASE") => b += 1,
            Tok::Word(w)
                if w.eq_ignore_ascii_case("BEGIN")
                    && !toks[i + 1..]
                        .iter()
                        .find(|t| !t.is_space())
                        .is_some_and(|n| n.is_word("TRAN") || n.is_word("TRANSACTION")) =>
            {
                b += 1
            }
            Tok::Word(w) if w.eq_ignore_ascii_case("END") => b -= 1,
            _ => {}
        }
    }
    let body = body.ok_or_else(|| err("Incorrect syntax: IF/WHILE without a statement."))?;
    let cond = toks[start..body].to_vec();
    let (b1, b2) = match els {
        Some(e) => (toks[body..e].to_vec(), Some(toks[e + 1..].to_vec())),
        None => (toks[body..].to_vec(), None),
    };
    Ok((cond, b1, b2))
}
