//! Statements that run other statements: BEGIN … END blocks, IF / WHILE, TRY … CATCH,
//! sp_executesql and stored procedure calls (EXEC in a batch, or an RPC by name with OUTPUT
//! parameters as RETURNVALUE tokens). They reach the engine through `Run`.

use crate::resp::Resp;
use crate::sql::context::{Context, Flow, Out, Param, Run, StmtErr, Var};
use crate::sql::errors::{SqlError, from_sqlite};
use crate::sql::functions::cast_value;
use crate::sql::lexer::{self, Tok, list_items, sig};
use crate::sql::procs::{ProcParam, parse_params};
use crate::sql::{procs, tabletypes, variables};
use crate::token;
use crate::types::Ty;
use rusqlite::types::Value;
use std::io;

fn err(msg: impl Into<String>) -> StmtErr {
    StmtErr::Sql(SqlError::syntax(msg))
}

/// EXEC sp_executesql N'stmt' [, N'@a INT, …' [, @a = value | value, …]] in a batch.
pub(crate) fn exec_executesql(
    ex: &mut dyn Run,
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
    let stmt = crate::token::value::as_text(&variables::eval_value(ex, stmt_toks, params)?);
    let decl_text = match parts.get(1) {
        Some(d) => crate::token::value::as_text(&variables::eval_value(ex, d, params)?),
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
    let mut copy_back: Vec<(String, usize)> = Vec::new();
    for (pos, a) in parts.iter().skip(2).enumerate() {
        let output = a.iter().any(|t| t.is_word("OUTPUT") || t.is_word("OUT"));
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
        if output
            && defs[idx].output
            && let [Tok::Var(v)] = expr.as_slice()
        {
            copy_back.push((v.clone(), idx));
        }
        let v = variables::eval_value(ex, &expr, params)?;
        bound[idx].value =
            cast_value(v, defs[idx].ty).map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
    }
    // The statement runs in its own scope: the caller's variables are not visible, and its
    // SET NOCOUNT ends with it. With OUTPUT parameters the parameters are the scope's
    // variables (assignable, as a procedure's), copied back to the caller's at the end.
    let as_vars = !copy_back.is_empty();
    let scope: Vec<Var> = if as_vars {
        bound
            .iter()
            .map(|b| Var {
                name: b.name.clone(),
                ty: b.ty.unwrap_or(Ty::NVarChar(None)),
                value: b.value.clone(),
            })
            .collect()
    } else {
        Vec::new()
    };
    let saved = std::mem::replace(&mut ex.vars, scope);
    let saved_nocount = ex.nocount;
    ex.proc_depth += 1;
    let res = if as_vars {
        ex.run_text(&stmt, &[], out, r)
    } else {
        ex.run_text(&stmt, &bound, out, r)
    };
    ex.proc_depth -= 1;
    ex.nocount = saved_nocount;
    let inner = std::mem::replace(&mut ex.vars, saved);
    res.map_err(StmtErr::Io)?;
    for (var, idx) in copy_back {
        if let Some(v) = inner
            .iter()
            .find(|x| x.name.eq_ignore_ascii_case(&bound[idx].name))
        {
            variables::set_var(ex, &var, v.value.clone())?;
        }
    }
    Ok(Flow::Continue)
}

/// IF cond body [ELSE body]; bodies are one statement or BEGIN … END.
pub(crate) fn if_statement(
    ex: &mut dyn Run,
    toks: &[Tok],
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    let (cond, body, other) = split_condition(toks, true)?;
    if variables::condition(ex, &cond, params)? {
        run_body(ex, &body, params, out, r)
    } else if let Some(other) = other {
        run_body(ex, &other, params, out, r)
    } else {
        Ok(Flow::Continue)
    }
}

/// WHILE cond body (at most 100000 iterations; no BREAK/CONTINUE).
pub(crate) fn while_statement(
    ex: &mut dyn Run,
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
            .filter(|p| !ex.vars.iter().any(|v| v.name.eq_ignore_ascii_case(&p.name)))
            .cloned()
            .chain(variables::vars_as_params(ex))
            .collect();
        if !variables::condition(ex, &cond, &all)? {
            return Ok(Flow::Continue);
        }
        if let Flow::Stop = run_body(ex, &body, &all, out, r)? {
            return Ok(Flow::Stop);
        }
    }
    Err(StmtErr::Sql(SqlError::new(
        50000,
        16,
        "tds-peer: WHILE loop exceeded 100000 iterations",
    )))
}

pub(crate) fn run_body(
    ex: &mut dyn Run,
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
    run_each(ex, stmts, params, out, r)
}

/// BEGIN TRY … END TRY BEGIN CATCH … END CATCH
pub(crate) fn try_catch(
    ex: &mut dyn Run,
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
                try_start =
                    Some(i + 1 + toks[i + 1..].iter().position(|t| t.is_word("TRY")).unwrap() + 1);
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
    ex.try_depth += 1;
    let flow = run_stmts(ex, &toks[ts..te], params, out, r);
    ex.try_depth -= 1;
    let flow = flow?;
    match ex.caught.take() {
        None => Ok(flow),
        Some(e) => {
            let outer = ex.last_error.replace(e);
            let res = run_stmts(ex, &toks[cs..ce], params, out, r);
            ex.last_error = outer;
            res
        }
    }
}

fn run_stmts(
    ex: &mut dyn Run,
    toks: &[Tok],
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    run_each(ex, lexer::split(toks), params, out, r)
}

/// Run statements in order until one stops the flow (RETURN, an error caught by TRY).
fn run_each(
    ex: &mut dyn Run,
    stmts: Vec<Vec<Tok>>,
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    for s in stmts {
        // Variables may have been set by earlier statements: they shadow parameters.
        let all: Vec<Param> = params
            .iter()
            .filter(|p| !ex.vars.iter().any(|v| v.name.eq_ignore_ascii_case(&p.name)))
            .cloned()
            .collect();
        if let Flow::Stop = ex.statement(&s, &all, out, r).map_err(StmtErr::Io)? {
            return Ok(Flow::Stop);
        }
        if ex.try_depth > 0 && ex.caught.is_some() {
            return Ok(Flow::Stop);
        }
    }
    Ok(Flow::Continue)
}

/// EXEC name arg, @named = arg, @var OUTPUT …  (inside a batch).
pub(crate) fn exec_stored(
    ex: &mut dyn Run,
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
        values[idx] = Some(variables::eval_value(ex, &expr, params)?);
    }
    let flow = run_proc(
        ex,
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
                    variables::set_var(this, var, v.value.clone())?;
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
    ex: &mut dyn Run,
    name: &str,
    defs: &[ProcParam],
    values: Vec<Option<Value>>,
    tables: &[(usize, std::sync::Arc<crate::tvp::Table>)],
    out: &mut Out,
    r: &mut Resp,
    after: impl FnOnce(&mut dyn Run, &[Var], Option<i32>) -> Result<(), StmtErr>,
) -> Result<Flow, StmtErr> {
    let mut scope = Vec::new();
    let mut table_vars: Vec<(String, String)> = Vec::new();
    for (i, d) in defs.iter().enumerate() {
        if let Some(tt) = &d.table_type {
            let rows = tables.iter().find(|(k, _)| *k == i).map(|(_, t)| t.clone());
            let temp = tabletypes::table_param(ex, &d.name, tt, rows.as_deref())?;
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
                variables::eval_value(ex, &def, &[])?
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
    let mut body = procs::lookup_proc(ex, name)
        .map(|p| p.1)
        .unwrap_or_default();
    if !table_vars.is_empty() {
        body = tabletypes::substitute_table_vars(&body, &table_vars);
    }
    let saved = std::mem::replace(&mut ex.vars, scope);
    let saved_status = ex.return_status.take();
    // SET NOCOUNT inside a procedure lasts until the procedure returns (SQL Server scopes
    // SET options to the module that set them).
    let saved_nocount = ex.nocount;
    ex.proc_depth += 1;
    let res = if ex.proc_depth > 32 {
        Err(StmtErr::Sql(SqlError::new(
            217,
            16,
            "Maximum stored procedure nesting level exceeded (limit 32).",
        )))
    } else {
        ex.run_text(&body, &[], out, r).map_err(StmtErr::Io)
    };
    let depth = ex.proc_depth;
    tabletypes::drop_table_vars(ex, depth);
    ex.proc_depth -= 1;
    ex.nocount = saved_nocount;
    for (_, temp) in &table_vars {
        let _ = ex
            .db
            .execute_batch(&format!("DROP TABLE IF EXISTS temp.\"{temp}\""));
    }
    let proc_vars = std::mem::replace(&mut ex.vars, saved);
    let status = std::mem::replace(&mut ex.return_status, saved_status);
    let flow = res?;
    after(ex, &proc_vars, status)?;
    // RETURN ends the procedure, not the caller's batch.
    Ok(if r.attn_acked { flow } else { Flow::Continue })
}

/// RPC call of a stored procedure by name: results, RETURNSTATUS, RETURNVALUE per output
/// parameter, DONEPROC.
pub(crate) fn call_proc_rpc(
    ex: &mut dyn Run,
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
    let res = run_proc(
        ex,
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

/// `RETURN [n]` ends the batch or procedure; in a procedure `n` is its return status
/// (`{? = CALL p}` reads it).
pub(crate) fn return_statement(
    cx: &mut Context,
    toks: &[Tok],
    params: &[Param],
) -> Result<Flow, StmtErr> {
    let start = toks
        .iter()
        .position(|t| !t.is_space())
        .map_or(toks.len(), |i| i + 1);
    let expr = &toks[start..];
    if cx.proc_depth > 0 && expr.iter().any(|t| !t.is_space()) {
        let v = variables::eval_value(cx, expr, params)?;
        cx.return_status = Some(token::value::as_i64(&v) as i32);
    }
    Ok(Flow::Stop)
}
