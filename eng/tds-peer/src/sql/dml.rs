//! INSERT / UPDATE / DELETE / MERGE: rewritten to SQLite once per distinct statement (the
//! executemany path), run in the session's transaction, counted in DONE; with an OUTPUT
//! clause, run as RETURNING and sent as a result set.

use crate::resp::Resp;
use crate::sql::context::{Context, Decl, Flow, Out, Param, StmtErr};
use crate::sql::errors::SqlError;
use crate::sql::lexer::{Tok, depth0_word, sig};
use crate::sql::statement::DmlKind;
use crate::sql::{forms, locks, schema, select};
use crate::token::{self, Column};
use crate::types::Ty;

/// A DML statement: refused if it assigns a rowversion column; with OUTPUT a result set,
/// otherwise DONE with the row count.
pub(crate) fn dml(
    cx: &mut Context,
    toks: &[Tok],
    kind: DmlKind,
    output: bool,
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    use crate::sql::rowversion;
    // SET FMTONLY ON: SQL Server answers metadata only and runs no INSERT/UPDATE/DELETE/MERGE.
    if cx.fmtonly {
        return Ok(Flow::Continue);
    }
    if kind == DmlKind::Update
        && let Some((table, cols)) = rowversion::updated_columns(&sig(toks))
        && cols
            .iter()
            .any(|c| rowversion::is_column(&cx.db, &table, c))
    {
        // Refused when compiled, as SQL Server does: whether or not a row matches.
        return Err(StmtErr::Sql(SqlError::new(
            272,
            16,
            rowversion::UPDATE_REFUSED,
        )));
    }
    let decl = Context::decl(params);
    if output {
        return dml_with_output(cx, toks, kind, &decl, params, out, r);
    }
    let wrapped = (kind == DmlKind::Insert)
        .then(|| schema::variant_targets(&cx.db, toks))
        .flatten()
        .and_then(|targets| forms::wrap_variant_values(toks, &targets));
    let sql = rewrite_dml(cx, wrapped.as_deref().unwrap_or(toks), &decl)?;
    let floats = float_params(params);
    let any_float = !floats.is_empty();
    let n = locks::write(cx, &mut || r.io.poll_attention() || r.io.closed, |cx| {
        crate::sql::functions::take_identity_note();
        if any_float {
            crate::sql::ranges::set_float_params(floats.clone());
        }
        let res = cx.exec(&sql, params);
        if any_float {
            crate::sql::ranges::set_float_params(Vec::new());
        }
        let verb = match kind {
            DmlKind::Update => "UPDATE",
            DmlKind::Delete => "DELETE",
            _ => "INSERT",
        };
        let n = res.map_err(|e| super::checks::conflict(cx, e, verb))?;
        note_identity(cx, kind);
        Ok(n)
    })?;
    cx.rowcount = n as i64;
    let cmd = match kind {
        DmlKind::Insert => token::CMD_INSERT,
        DmlKind::Delete => token::CMD_DELETE,
        _ => token::CMD_UPDATE,
    };
    if !cx.nocount {
        out.done(r, token::DONE_COUNT, cmd, n as u64)?;
    }
    Ok(Flow::Continue)
}

/// The float/real parameters' values (bits) and types, for the overflow messages of the
/// columns they go into (`ranges::float_source`).
/// After an INSERT: the identity value it took, for @@IDENTITY / SCOPE_IDENTITY(). A table
/// with an identity increment other than 1 renumbers its rows in a trigger, which leaves a
/// note; otherwise it is SQLite's last rowid.
fn note_identity(cx: &mut Context, kind: DmlKind) {
    if kind == DmlKind::Insert {
        cx.identity = Some(
            crate::sql::functions::take_identity_note()
                .unwrap_or_else(|| cx.db.last_insert_rowid()),
        );
    }
}

fn float_params(params: &[Param]) -> Vec<(u64, Ty)> {
    params
        .iter()
        .filter_map(|p| match (p.ty, &p.value) {
            (Some(t @ (Ty::Float | Ty::Real)), rusqlite::types::Value::Real(f)) => {
                Some((f.to_bits(), t))
            }
            _ => None,
        })
        .collect()
}

/// `ctx.rw` of a DML statement, remembered for the next call with the same tokens and
/// declaration (executemany: one RPC per row, the same statement each time).
pub(crate) fn rewrite_dml(cx: &mut Context, toks: &[Tok], decl: &Decl) -> Result<String, StmtErr> {
    if let Some((t, d, sql)) = &cx.rewritten
        && t.as_slice() == toks
        && d == decl
    {
        return Ok(sql.clone());
    }
    let sql = cx
        .ctx(decl)
        .rw(toks)
        .map_err(|e| StmtErr::Sql(SqlError::syntax(e)))?;
    // What Ctx::rw reads besides the declaration: @@globals, SCOPE_IDENTITY(), ERROR_*().
    let session_state = |t: &Tok| match t {
        Tok::Var(v) => v.starts_with("@@"),
        Tok::Word(w) => {
            w.eq_ignore_ascii_case("SCOPE_IDENTITY")
                || w.eq_ignore_ascii_case("DB_NAME")
                || w.eq_ignore_ascii_case("DB_ID")
                || w.get(..6).is_some_and(|p| p.eq_ignore_ascii_case("ERROR_"))
        }
        _ => false,
    };
    cx.rewritten =
        (!toks.iter().any(session_state)).then(|| (toks.to_vec(), decl.clone(), sql.clone()));
    Ok(sql)
}

/// INSERT/UPDATE/DELETE … OUTPUT INSERTED.x, DELETED.y … -> SQLite RETURNING: a result set
/// of the affected rows (typed from the table's declared columns).
fn dml_with_output(
    cx: &mut Context,
    toks: &[Tok],
    kind: DmlKind,
    decl: &[(String, Option<Ty>)],
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    let o = depth0_word(toks, 0, &["OUTPUT"]).unwrap();
    let end = depth0_word(
        toks,
        o + 1,
        &["VALUES", "SELECT", "DEFAULT", "FROM", "WHERE", "INTO"],
    )
    .unwrap_or(toks.len());
    if toks[end..].first().is_some_and(|t| t.is_word("INTO")) {
        return Err(StmtErr::Sql(SqlError::unsupported("OUTPUT … INTO")));
    }
    let mut list: Vec<Tok> = Vec::new();
    let mut k = o + 1;
    while k < end {
        let t = &toks[k];
        if (t.is_word("INSERTED") || t.is_word("DELETED"))
            && toks.get(k + 1).is_some_and(|n| n.is_punct('.'))
        {
            k += 2;
            continue;
        }
        list.push(t.clone());
        k += 1;
    }
    let mut q: Vec<Tok> = toks[..o].to_vec();
    q.extend_from_slice(&toks[end..]);
    q.push(Tok::Space(" ".into()));
    q.push(Tok::Word("RETURNING".into()));
    q.push(Tok::Space(" ".into()));
    q.extend(list);
    let sql = cx
        .ctx(decl)
        .rw(&q)
        .map_err(|e| StmtErr::Sql(SqlError::syntax(e)))?;
    // The target table, to type the returned columns.
    let sg: Vec<&Tok> = toks[..o].iter().filter(|t| !t.is_space()).collect();
    let after = match kind {
        DmlKind::Insert => sg
            .iter()
            .position(|t| t.is_word("INTO"))
            .map(|p| p + 1)
            .unwrap_or(1),
        DmlKind::Delete => sg
            .iter()
            .position(|t| t.is_word("FROM"))
            .map(|p| p + 1)
            .unwrap_or(1),
        _ => 1,
    };
    let table = sg.get(after).map(|t| match t {
        Tok::Quoted(q) => q.clone(),
        other => other.text(),
    });
    let mut types = std::collections::HashMap::new();
    if let Some(table) = table
        && let Ok(mut st) = cx.db.prepare(&format!(
            "PRAGMA table_info(\"{}\")",
            table.replace('"', "\"\"")
        ))
    {
        let it = st.query_map([], |row| {
            Ok((row.get::<_, String>(1)?, row.get::<_, String>(2)?))
        });
        if let Ok(it) = it {
            for (name, decl) in it.flatten() {
                if let Some(ty) = Ty::from_sqlite_decl(&decl).or_else(|| Ty::parse(&decl)) {
                    types.insert(name.to_ascii_lowercase(), ty);
                }
            }
        }
    }
    let (cols, rows) = locks::write(cx, &mut || r.io.poll_attention() || r.io.closed, |cx| {
        crate::sql::functions::take_identity_note();
        let res = cx.fetch(&sql, params)?;
        note_identity(cx, kind);
        Ok(res)
    })?;
    let columns: Vec<Column> = cols
        .iter()
        .enumerate()
        .map(|(i, (name, t))| {
            Column::new(
                name,
                t.or_else(|| types.get(&name.to_ascii_lowercase()).copied())
                    .unwrap_or_else(|| select::infer(&rows, i)),
            )
        })
        .collect();
    cx.send_rows(&columns, &rows, out, r)
}
