//! SELECT: the synthetic `peer.*` tables, SELECT … INTO, and queries over user tables, streamed
//! from the SQLite statement when every column type is known (or fetched first, their types
//! inferred from the values), with the connection's result cache.

use crate::resp::Resp;
use crate::result_cache;
use crate::sql::context::{Context, Decl, Flow, Out, Param, StmtErr};
use crate::sql::errors::{SqlError, from_sqlite};
use crate::sql::lexer::{Tok, depth0_word, sig};
use crate::sql::nullability::{self, Origin};
use crate::sql::{describe, forms, rewrite};
use crate::synthetic;
use crate::token::{self, Column, value};
use crate::types::Ty;
use rusqlite::types::Value;
use std::io;

/// `SELECT …`: a synthetic `peer.*` table, or a query (T-SQL forms SQLite lacks rewritten, the
/// columns a `+` makes text noted for the rewriter).
pub(crate) fn select(
    cx: &mut Context,
    toks: &[Tok],
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    let text: String = toks.iter().map(|t| t.text()).collect();
    if let Some(q) = synthetic::Query::parse(&sig(toks), &text) {
        let q = q.map_err(|e| StmtErr::Sql(SqlError::new(208, 16, e)))?;
        out.emit(r, &[])?;
        return match synthetic::stream(&cx.shared.synth, &q, r)? {
            synthetic::Streamed::Rows(n) => {
                cx.rowcount = n as i64;
                out.done(r, token::DONE_COUNT, token::CMD_SELECT, n)?;
                Ok(Flow::Continue)
            }
            synthetic::Streamed::Cancelled => {
                out.cancelled(r)?;
                Ok(Flow::Stop)
            }
            synthetic::Streamed::Error => {
                out.done(r, token::DONE_ERROR, token::CMD_SELECT, 0)?;
                Ok(Flow::Stop)
            }
        };
    }
    let forms = forms::rewrite(toks);
    cx.text_columns = describe::plus_text_columns(cx, toks);
    cx.dec_columns = describe::aggregated_decimal_columns(cx, toks);
    let decl = Context::decl(params);
    let res = query(cx, forms.as_deref().unwrap_or(toks), &decl, params, out, r);
    cx.text_columns.clear();
    cx.dec_columns.clear();
    res
}

pub(crate) fn query(
    cx: &mut Context,
    toks: &[Tok],
    decl: &[(String, Option<Ty>)],
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    // SELECT … INTO target FROM …: typed CREATE TABLE + INSERT of the rows.
    let from = depth0_word(toks, 0, &["FROM"]).unwrap_or(toks.len());
    let into = depth0_word(toks, 0, &["INTO"]).filter(|&i| i < from);
    let mut target: Option<(String, bool)> = None;
    let owned: Vec<Tok>;
    let toks = match into {
        Some(i) => {
            let j = (i + 1..toks.len())
                .find(|&k| !toks[k].is_space())
                .ok_or_else(|| StmtErr::Sql(SqlError::syntax("Incorrect syntax near 'INTO'.")))?;
            let mut end = j + 1;
            let mut name = match &toks[j] {
                Tok::Word(w) => w.clone(),
                Tok::Quoted(q) => q.clone(),
                other => {
                    return Err(StmtErr::Sql(SqlError::syntax(format!(
                        "Incorrect syntax near '{}'.",
                        other.text()
                    ))));
                }
            };
            while toks.get(end).is_some_and(|t| t.is_punct('.')) {
                if let Some(Tok::Word(w) | Tok::Quoted(w)) = toks.get(end + 1) {
                    name = w.clone();
                }
                end += 2;
            }
            target = Some((
                name.clone(),
                name.starts_with('#') && !name.starts_with("##"),
            ));
            owned = toks[..i]
                .iter()
                .chain(toks[end..].iter())
                .cloned()
                .collect();
            &owned[..]
        }
        None => toks,
    };
    let ctx = cx.ctx(decl);
    let sql = ctx
        .rw(toks)
        .map_err(|e| StmtErr::Sql(SqlError::syntax(e)))?;
    let forced = ctx.select_types(toks);
    if target.is_none()
        && !cx.fmtonly
        && let Some(flow) = stream_select(cx, &sql, toks, &forced, params, out, r)?
    {
        return Ok(flow);
    }
    let (cols, origins, rows) = cx.fetch_with_origins(&sql, params)?;
    let names = column_names(&cols, &rewrite::select_names(toks));
    let nullable = nullability::nullable(toks, &origins, |t| cx.is_table(t));
    if let Some((name, temp)) = target {
        let defs: Vec<String> = cols
            .iter()
            .enumerate()
            .map(|(i, (_, d))| {
                let ty = forced
                    .get(i)
                    .copied()
                    .flatten()
                    .or(*d)
                    .unwrap_or_else(|| infer(&rows, i));
                let n = match names[i].as_str() {
                    "" => format!("column{}", i + 1),
                    n => n.to_string(),
                };
                // As SQL Server's SELECT … INTO: a column the select list cannot make NULL
                // (a NOT NULL source column, a literal, COUNT) is NOT NULL in the new table;
                // unless a row holds NULL anyway (`send_rows`' safety net: the peer lets
                // through some statements SQL Server refuses, e.g. a column outside GROUP BY).
                let null_seen = rows.iter().any(|row| row[i] == Value::Null);
                let null = if nullable[i] || null_seen {
                    ""
                } else {
                    " NOT NULL"
                };
                format!("\"{}\" {}{null}", n.replace('"', "\"\""), ty.sqlite_decl())
            })
            .collect();
        cx.before_write()?;
        let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        cx.db
            .execute_batch(&format!(
                "CREATE {}TABLE {} ({})",
                if temp { "TEMP " } else { "" },
                q(&name),
                defs.join(", ")
            ))
            .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
        super::ddl::global_temp_created(cx, &name)?;
        let marks = vec!["?"; cols.len()].join(", ");
        let mut ins = cx
            .db
            .prepare(&format!("INSERT INTO {} VALUES ({marks})", q(&name)))
            .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
        for row in &rows {
            ins.execute(rusqlite::params_from_iter(row.iter()))
                .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
        }
        drop(ins);
        cx.rowcount = rows.len() as i64;
        if !cx.nocount {
            out.done(r, token::DONE_COUNT, token::CMD_INSERT, rows.len() as u64)?;
        }
        return Ok(Flow::Continue);
    }
    if cols.is_empty() {
        return Ok(Flow::Continue);
    }
    let columns: Vec<Column> = cols
        .iter()
        .enumerate()
        .map(|(i, (_, decl_ty))| {
            let ty = forced
                .get(i)
                .copied()
                .flatten()
                .or(*decl_ty)
                .unwrap_or_else(|| infer(&rows, i));
            Column::described(&names[i], ty, nullable[i])
        })
        .collect();
    let columns = with_timestamps(columns, &origins);
    // FMTONLY: the rows were read only to type the columns that declare none.
    let rows = if cx.fmtonly { Vec::new() } else { rows };
    cx.send_rows(&columns, &rows, out, r)
}

/// A SELECT whose every column type is known before the first row (declared by the table or
/// view, or forced by the T-SQL text): rows go from the SQLite statement straight into ROW
/// tokens, cell by cell, with no copy of the result in between. Results up to
/// `STREAM_AFTER` bytes are sent only once complete, so an error while stepping leaves no
/// partial result, as before; past that the rows stream (and a later error follows them,
/// as SQL Server's rows-then-error does). A large deterministic result is kept in the
/// connection's result cache and replayed while the database is unchanged.
/// None: a column's type must be inferred from its values, or the statement has no columns;
/// the caller then fetches the rows first.
fn stream_select(
    cx: &mut Context,
    sql: &str,
    toks: &[Tok],
    forced: &[Option<Ty>],
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Option<Flow>, StmtErr> {
    const STREAM_AFTER: usize = 1 << 20;
    const FLUSH_EVERY: usize = 64 * 1024;
    let sqlite = |e: rusqlite::Error| StmtErr::Sql(from_sqlite(&e));
    // Not cached, as in `fetch`: declared types of a cached statement can be stale.
    let mut stmt = cx.db.prepare(sql).map_err(sqlite)?;
    let decl: Decl = super::schema::declared_columns(&stmt);
    let Some(tys) = decl
        .iter()
        .enumerate()
        .map(|(i, (_, d))| forced.get(i).copied().flatten().or(*d))
        .collect::<Option<Vec<Ty>>>()
        .filter(|t| !t.is_empty())
    else {
        return Ok(None);
    };
    let names = column_names(&decl, &rewrite::select_names(toks));
    let origins = nullability::origins(&stmt);
    let nullable = nullability::nullable(toks, &origins, |t| cx.is_table(t));
    let columns: Vec<Column> = names
        .iter()
        .zip(&tys)
        .zip(&nullable)
        .map(|((n, &t), &nullable)| Column::described(n, t, nullable))
        .collect();
    let columns = with_timestamps(columns, &origins);
    let fixed = Column::fixed(&columns);
    let meta = token::colmetadata(&columns);
    // The cache: its key, and the database state read before the statement runs.
    let state = if cx.results.enabled() {
        result_cache::State::read(&cx.db, cx.txn_epoch).ok()
    } else {
        None
    };
    let cached = if let Some(state) = state {
        let key = result_cache::Key {
            sql: sql.to_string(),
            params: params.iter().map(|p| p.value.clone()).collect(),
            tys: tys.clone(),
            names,
            nullable,
        };
        if cx.results.has(&key)
            && let Some(e) = cx.results.get(&key, &state)
        {
            let n = e.rows;
            if cx.shared.verbose {
                eprintln!(
                    "tds-peer: [{}] result cache hit: {n} rows, {} bytes",
                    cx.spid,
                    e.bytes.len()
                );
            }
            if replay(&e.bytes, out, r)? {
                out.cancelled(r)?;
                return Ok(Some(Flow::Stop));
            }
            cx.rowcount = n as i64;
            out.done(r, token::DONE_COUNT, token::CMD_SELECT, n)?;
            return Ok(Some(Flow::Continue));
        }
        Some((key, state))
    } else {
        None
    };
    Context::bind(&mut stmt, params).map_err(sqlite)?;
    let mut q = stmt.raw_query();
    let mut buf = Vec::with_capacity(64 * 1024);
    let mut keep: Option<Vec<u8>> = cached.as_ref().map(|_| meta.clone());
    let cap = cx.results.cap_bytes();
    let mut sent_meta = false;
    let mut n = 0u64;
    let not_null_at: Vec<usize> = (0..columns.len())
        .filter(|&i| !columns[i].nullable)
        .collect();
    while let Some(row) = q.next().map_err(sqlite)? {
        if !sent_meta
            && not_null_at
                .iter()
                .any(|&i| row.get_ref_unwrap(i) == rusqlite::types::ValueRef::Null)
        {
            // A NULL in a column described NOT NULL (the safety net of `send_rows`) while
            // nothing is sent yet: the caller runs the statement again and describes it
            // from its rows. Past STREAM_AFTER the description is sent and the NULL goes
            // in the NBCROW bitmap: the analysis (`nullability`) claims NOT NULL only where
            // SQL Server's would be, so that is a bug of the analysis, not a case handled.
            return Ok(None);
        }
        value::put_row_with(&mut buf, &tys, &fixed, |i| row.get_ref_unwrap(i), true);
        n += 1;
        if buf.len() >= if sent_meta { FLUSH_EVERY } else { STREAM_AFTER } {
            if !sent_meta {
                out.emit(r, &meta)?;
                sent_meta = true;
            }
            r.put(&buf)?;
            if let Some(k) = keep.as_mut() {
                k.extend_from_slice(&buf);
                if k.len() > cap {
                    keep = None;
                }
            }
            buf.clear();
            if r.cancelled() {
                out.cancelled(r)?;
                return Ok(Some(Flow::Stop));
            }
        }
    }
    drop(q);
    drop(stmt);
    if !sent_meta {
        out.emit(r, &meta)?;
    }
    r.put(&buf)?;
    if let (Some(mut bytes), Some((key, state))) = (keep, cached) {
        bytes.extend_from_slice(&buf);
        if bytes.len() >= result_cache::MIN_BYTES
            && bytes.len() <= cap
            && result_cache::deterministic(&cx.db, sql)
        {
            if cx.shared.verbose {
                eprintln!(
                    "tds-peer: [{}] result cached: {n} rows, {} bytes",
                    cx.spid,
                    bytes.len()
                );
            }
            cx.results.put(result_cache::Entry {
                key,
                state,
                bytes,
                rows: n,
            });
        }
    }
    cx.rowcount = n as i64;
    out.done(r, token::DONE_COUNT, token::CMD_SELECT, n)?;
    Ok(Some(Flow::Continue))
}

/// Sends a cached result (COLMETADATA + rows) in 64 KiB pieces, polling ATTENTION between
/// them as a streamed result does. True if the client cancelled.
fn replay(bytes: &[u8], out: &mut Out, r: &mut Resp) -> io::Result<bool> {
    let mut chunks = bytes.chunks(64 * 1024);
    out.emit(r, chunks.next().unwrap_or_default())?;
    for c in chunks {
        r.put(c)?;
        if r.cancelled() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Result columns that read a rowversion column as is carry SQL Server's UserType for it (80,
/// timestamp): Driver 18 then names the column's type `timestamp`.
fn with_timestamps(mut columns: Vec<Column>, origins: &[Option<Origin>]) -> Vec<Column> {
    for (c, o) in columns.iter_mut().zip(origins) {
        if o.as_ref().is_some_and(|o| o.rowversion) && c.ty == Ty::Binary(8) {
            c.user_type = token::USER_TYPE_TIMESTAMP;
        }
        c.identity = o.as_ref().is_some_and(|o| o.identity);
    }
    columns
}

/// SQL Server's name of each result column: its alias or column name, "" for an unnamed
/// expression (SQLite names those after their text). `items` are the SELECT list's candidate
/// names (`rewrite::select_names`); columns past them (`*` expansions) keep SQLite's name when
/// they are a table's columns or their name does not look like expression text.
fn column_names(cols: &[(String, Option<Ty>)], items: &[Option<String>]) -> Vec<String> {
    cols.iter()
        .enumerate()
        .map(|(i, (name, decl))| match items.get(i) {
            // As written in the query (SQL Server's header for `SELECT A` is "A").
            Some(Some(n)) if n.eq_ignore_ascii_case(name) => n.clone(),
            Some(_) => String::new(),
            // A table's column (SQLite declares a type for those only) keeps its real name,
            // whatever it holds (`c]d`, created as `[c]]d]`).
            None if decl.is_some() || looks_like_name(name) => name.clone(),
            None => String::new(),
        })
        .collect()
}

fn looks_like_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || "_#@$ ".contains(c))
}

/// Type of an expression column from its values: integers -> INT/BIGINT by range, reals ->
/// FLOAT, text -> NVARCHAR(4000|max), blobs -> VARBINARY(8000|max), all NULL -> INT.
pub(crate) fn infer(rows: &[Vec<Value>], i: usize) -> Ty {
    let mut ty: Option<Ty> = None;
    for r in rows {
        let t = match &r[i] {
            Value::Null => continue,
            Value::Integer(v) => {
                if i32::try_from(*v).is_ok() {
                    Ty::Int
                } else {
                    Ty::BigInt
                }
            }
            Value::Real(_) => Ty::Float,
            Value::Text(s) => {
                if s.encode_utf16().count() <= 4000 {
                    Ty::NVarChar(Some(4000))
                } else {
                    Ty::NVarChar(None)
                }
            }
            // An expression that makes a vector (VECTOR_NORMALIZE) yields its payload.
            Value::Blob(b) if let Some(n) = crate::vector::payload_dims(b) => Ty::Vector(n),
            Value::Blob(b) => {
                if b.len() <= 8000 {
                    Ty::VarBinary(Some(8000))
                } else {
                    Ty::VarBinary(None)
                }
            }
        };
        ty = Some(match (ty, t) {
            (None, t) => t,
            (Some(Ty::Int), Ty::BigInt) => Ty::BigInt,
            (Some(Ty::NVarChar(Some(_))), Ty::NVarChar(None)) => t,
            (Some(Ty::VarBinary(Some(_))), Ty::VarBinary(None)) => t,
            (Some(Ty::Int) | Some(Ty::BigInt), Ty::Float) => Ty::Float,
            (Some(p), _) => p,
        });
    }
    ty.unwrap_or(Ty::Int)
}
