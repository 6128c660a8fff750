//! PRINT, RAISERROR and THROW: informational messages and errors raised by T-SQL (caught by
//! an enclosing TRY block when severe enough).

use crate::resp::Resp;
use crate::sql::context::{Context, Flow, Out, Param, StmtErr};
use crate::sql::errors::SqlError;
use crate::sql::lexer;
use crate::sql::lexer::{Tok, sig};
use crate::token::{self, value};
use crate::types::Ty;

/// `PRINT expr`: an INFO message.
pub(crate) fn print(
    cx: &mut Context,
    toks: &[Tok],
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    let decl = Context::decl(params);
    let msg = eval_text(
        cx,
        &toks[toks.iter().position(|t| t.is_word("PRINT")).unwrap() + 1..],
        &decl,
        params,
    )?;
    out.emit(r, &token::message(0, truncated(&msg, PRINT_MAX), 0, 1, 1))?;
    Ok(Flow::Continue)
}

/// SQL Server's longest PRINT message, in characters (longer ones are cut there); a message
/// token's length is 16 bits, so the cut is also what keeps the token well formed.
const PRINT_MAX: usize = 8000;
/// RAISERROR's longest message: a longer one becomes its first 2,044 characters and "...".
const RAISERROR_MAX: usize = 2047;

/// The first `max` characters of `msg`.
fn truncated(msg: &str, max: usize) -> &str {
    msg.char_indices()
        .nth(max)
        .map_or(msg, |(at, _)| &msg[..at])
}

/// RAISERROR's message as SQL Server sends it (see `RAISERROR_MAX`).
fn raiserror_text(msg: String) -> String {
    if msg.chars().count() <= RAISERROR_MAX {
        return msg;
    }
    format!("{}...", truncated(&msg, RAISERROR_MAX - 3))
}

/// `THROW [number, message, state]`; a bare `THROW;` in a CATCH block re-raises its error.
pub(crate) fn throw(
    cx: &mut Context,
    toks: &[Tok],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    let sg = sig(toks);
    let args: Vec<&Tok> = sg[1..]
        .iter()
        .copied()
        .filter(|t| !t.is_punct(','))
        .collect();
    let e = if args.is_empty() {
        // THROW; in a CATCH block re-raises the caught error.
        cx.last_error.clone().ok_or_else(|| {
            StmtErr::Sql(SqlError::new(
                10704,
                15,
                "To rethrow an error, a THROW statement must be used inside a CATCH block.",
            ))
        })?
    } else {
        let num = args
            .first()
            .map(|t| t.text().parse::<i32>().unwrap_or(50000))
            .unwrap_or(50000);
        let msg = match args.get(1) {
            Some(Tok::Str { s, .. }) => s.clone(),
            _ => String::new(),
        };
        let state = args
            .get(2)
            .and_then(|t| t.text().parse::<u8>().ok())
            .unwrap_or(1);
        SqlError {
            number: num,
            class: 16,
            state,
            msg,
        }
    };
    if cx.try_depth > 0 {
        return Err(StmtErr::Sql(e));
    }
    out.error(r, &e)?;
    Ok(Flow::Stop)
}

fn eval_text(
    cx: &mut Context,
    expr: &[Tok],
    decl: &[(String, Option<Ty>)],
    params: &[Param],
) -> Result<String, StmtErr> {
    let ctx = cx.ctx(decl);
    let e = ctx
        .rw(expr)
        .map_err(|e| StmtErr::Sql(SqlError::syntax(e)))?;
    let (_, rows) = cx.fetch(&format!("SELECT {e}"), params)?;
    Ok(rows
        .first()
        .and_then(|r| r.first())
        .map(value::as_text)
        .unwrap_or_default())
}

pub(crate) fn raiserror(
    cx: &mut Context,
    toks: &[Tok],
    decl: &[(String, Option<Ty>)],
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    let open = toks
        .iter()
        .position(|t| t.is_punct('('))
        .ok_or_else(|| StmtErr::Sql(SqlError::syntax("Incorrect syntax near 'RAISERROR'.")))?;
    let close = toks
        .iter()
        .rposition(|t| t.is_punct(')'))
        .unwrap_or(toks.len());
    let args: Vec<Vec<Tok>> = lexer::split_commas(&toks[open + 1..close])
        .into_iter()
        .map(<[Tok]>::to_vec)
        .collect();
    if args.len() < 3 {
        return Err(StmtErr::Sql(SqlError::syntax(
            "Incorrect syntax near 'RAISERROR'.",
        )));
    }
    let vals: Vec<String> = args
        .iter()
        .map(|a| eval_text(cx, a, decl, params))
        .collect::<Result<_, _>>()?;
    let (number, fmt) = match vals[0].parse::<i32>() {
        Ok(n) if !matches!(sig(&args[0]).first(), Some(Tok::Str { .. })) => {
            (n, format!("Message {n}"))
        }
        _ => (50000, vals[0].clone()),
    };
    let class = vals[1].trim().parse::<i64>().unwrap_or(16).clamp(0, 25) as u8;
    let state = vals[2].trim().parse::<i64>().unwrap_or(1).clamp(0, 255) as u8;
    let msg = raiserror_text(printf(&fmt, &vals[3..]));
    if class > 10 && cx.try_depth > 0 {
        return Err(StmtErr::Sql(SqlError {
            number,
            class,
            state,
            msg,
        }));
    }
    if class > 10 {
        out.emit(r, &token::message(number, &msg, class, state, 1))?;
        out.done(r, token::DONE_ERROR, 0, 0)?;
    } else {
        out.emit(r, &token::message(number, &msg, class, state, 1))?;
    }
    Ok(Flow::Continue)
}

/// RAISERROR's printf subset: %d %i %u %s %x, with optional width/flags ignored.
fn printf(fmt: &str, args: &[String]) -> String {
    let mut out = String::new();
    let mut it = fmt.chars().peekable();
    let mut ai = 0;
    while let Some(c) = it.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if it.peek() == Some(&'%') {
            it.next();
            out.push('%');
            continue;
        }
        while it.peek().is_some_and(|c| {
            c.is_ascii_digit() || matches!(c, '-' | '+' | ' ' | '#' | '.' | 'l' | 'h' | 'I')
        }) {
            it.next();
        }
        let spec = it.next();
        let a = args.get(ai).cloned().unwrap_or_else(|| "(null)".into());
        ai += 1;
        match spec {
            Some('x') | Some('X') => {
                out.push_str(&format!("{:x}", a.trim().parse::<i64>().unwrap_or(0)))
            }
            Some(_) => out.push_str(&a),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{PRINT_MAX, raiserror_text, truncated};

    #[test]
    fn long_messages_cut_as_sql_server_cuts_them() {
        assert_eq!(truncated(&"a".repeat(80_000), PRINT_MAX).len(), 8000);
        assert_eq!(truncated("ab", PRINT_MAX), "ab");
        let r = raiserror_text("é".repeat(4000));
        assert_eq!(r.chars().count(), 2047);
        assert!(r.ends_with("é..."));
        assert_eq!(raiserror_text("a".repeat(2047)), "a".repeat(2047));
    }

    #[test]
    fn printf_subset() {
        assert_eq!(
            super::printf("row %d of %s: 100%%", &["3".into(), "t".into()]),
            "row 3 of t: 100%"
        );
    }
}
