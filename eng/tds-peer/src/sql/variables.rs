//! T-SQL variables: DECLARE, SET @v = …, SELECT @v = …, and expressions evaluated to a value
//! (through SQLite) for them, for IF/WHILE conditions and for procedure arguments.

use crate::sql::context::{Context, Decl, Flow, Param, StmtErr, Var};
use crate::sql::errors::{SqlError, from_sqlite};
use crate::sql::functions::cast_value;
use crate::sql::lexer::{self, Tok, list_items, sig};
use crate::sql::procs::text;
use crate::sql::tabletypes;
use crate::types::Ty;
use rusqlite::types::Value;

fn err(msg: impl Into<String>) -> StmtErr {
    StmtErr::Sql(SqlError::syntax(msg))
}

pub(crate) fn vars_as_params(cx: &Context) -> Vec<Param> {
    cx.vars
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

pub(crate) fn set_var(cx: &mut Context, name: &str, value: Value) -> Result<(), StmtErr> {
    let var = cx
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
pub(crate) fn eval_value(
    cx: &mut Context,
    expr: &[Tok],
    params: &[Param],
) -> Result<Value, StmtErr> {
    let decl: Decl = params.iter().map(|p| (p.name.clone(), p.ty)).collect();
    let ctx = cx.ctx(&decl);
    let e = ctx.rw(expr).map_err(err)?;
    let (_, rows) = cx.fetch(&format!("SELECT {e}"), params)?;
    Ok(rows
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .unwrap_or(Value::Null))
}

/// DECLARE @a INT [= expr], @b …
pub(crate) fn declare(cx: &mut Context, toks: &[Tok], params: &[Param]) -> Result<Flow, StmtErr> {
    let start = toks.iter().position(|t| t.is_word("DECLARE")).unwrap() + 1;
    for part in list_items(&toks[start..]) {
        let sg = sig(part);
        let Some(Tok::Var(name)) = sg.first() else {
            return Err(err("Incorrect syntax near 'DECLARE'."));
        };
        if sg.get(1).is_some_and(|t| t.is_word("TABLE")) {
            let at = part.iter().position(|t| t.is_word("TABLE")).unwrap();
            tabletypes::declare_table_var(cx, name, &part[at + 1..])?;
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
        let ty =
            Ty::parse(&ty_text).ok_or_else(|| err(format!("Cannot find data type {ty_text}.")))?;
        cx.vars.retain(|v| !v.name.eq_ignore_ascii_case(name));
        cx.vars.push(Var {
            name: name.clone(),
            ty,
            value: Value::Null,
        });
        if let Some(e) = eq {
            let all: Vec<Param> = params.iter().cloned().chain(vars_as_params(cx)).collect();
            let v = eval_value(cx, &part[e + 1..], &all)?;
            set_var(cx, name, v)?;
        }
    }
    Ok(Flow::Continue)
}

/// SET @a = expr (also += -= *=)
pub(crate) fn set_statement(
    cx: &mut Context,
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
    let v = eval_value(cx, &expr, params)?;
    set_var(cx, name, v)?;
    Ok(Flow::Continue)
}

/// SELECT @a = expr, @b = expr2 [FROM …]: the last row's values are assigned.
pub(crate) fn select_assign(
    cx: &mut Context,
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
    let sql = cx.ctx(&decl).rw(&q).map_err(err)?;
    // `SELECT @s = @s + x FROM t`: each row's expression sees the value the rows before it
    // assigned (SQL Server's row-by-row assignment; string lists such as mssql-python's
    // `@CN = COALESCE(@CN + N', ', N'') + QUOTENAME(name)`). Row k is read with the current
    // values bound, so the query runs once per row.
    let reads_itself = names.iter().any(|n| {
        toks[sel..]
            .iter()
            .filter(|t| matches!(t, Tok::Var(v) if v.eq_ignore_ascii_case(n)))
            .count()
            > 1
    });
    if reads_itself && from < toks.len() {
        let mut bound: Vec<Param> = params.to_vec();
        for k in 0.. {
            let (_, rows) =
                cx.fetch(&format!("SELECT * FROM ({sql}) LIMIT 1 OFFSET {k}"), &bound)?;
            let Some(row) = rows.into_iter().next() else {
                break;
            };
            for (n, v) in names.iter().zip(row) {
                set_var(cx, n, v)?;
                let now = cx
                    .vars
                    .iter()
                    .find(|x| x.name.eq_ignore_ascii_case(n))
                    .map(|x| x.value.clone());
                if let (Some(now), Some(p)) = (
                    now,
                    bound.iter_mut().find(|p| p.name.eq_ignore_ascii_case(n)),
                ) {
                    p.value = now;
                }
            }
        }
        return Ok(Flow::Continue);
    }
    let (_, rows) = cx.fetch(&sql, params)?;
    if let Some(last) = rows.into_iter().last() {
        for (n, v) in names.iter().zip(last) {
            set_var(cx, n, v)?;
        }
    }
    Ok(Flow::Continue)
}

pub(crate) fn condition(cx: &mut Context, cond: &[Tok], params: &[Param]) -> Result<bool, StmtErr> {
    let mut e = lexer::tokenize("CASE WHEN ").map_err(err)?;
    e.extend_from_slice(cond);
    e.extend(lexer::tokenize(" THEN 1 ELSE 0 END").map_err(err)?);
    Ok(matches!(eval_value(cx, &e, params)?, Value::Integer(1)))
}
