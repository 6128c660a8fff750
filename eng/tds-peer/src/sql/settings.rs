//! Statements about the session rather than data: SET options, USE, transactions (BEGIN TRAN,
//! COMMIT, ROLLBACK), KILL and WAITFOR.

use crate::resp::Resp;
use crate::sql::context::{Context, Flow, Out, StmtErr};
use crate::sql::errors::SqlError;
use crate::sql::lexer::{Tok, sig};
use crate::sql::sysviews;
use crate::token;

/// `SET option …`: NOCOUNT and the isolation level are kept; other options are accepted.
pub(crate) fn set(cx: &mut Context, toks: &[Tok]) -> Result<Flow, StmtErr> {
    let sg = sig(toks);
    sysviews::set_statement(&sg);
    if sg.get(1).is_some_and(|t| t.is_word("NOCOUNT")) {
        cx.nocount = sg.get(2).is_some_and(|t| t.is_word("ON"));
    }
    // `SET IDENTITY_INSERT [s.]t ON|OFF` (FreeTDS sends it for a bulk load that keeps its
    // identity values). Plain INSERTs always may set an identity column in the peer.
    if sg.get(1).is_some_and(|t| t.is_word("IDENTITY_INSERT")) {
        let mut parts = Vec::new();
        let mut k = 2;
        while let Some(t) = sg.get(k).filter(|t| !t.is_word("ON") && !t.is_word("OFF")) {
            if !t.is_punct('.') {
                parts.push(
                    t.text()
                        .trim_matches(|c| c == '"' || c == '[' || c == ']')
                        .to_string(),
                );
            }
            k += 1;
        }
        let on = sg.get(k).is_some_and(|t| t.is_word("ON"));
        cx.identity_insert = on.then(|| super::schema::sqlite_name(&parts)).flatten();
        super::functions::set_identity_insert(cx.identity_insert.clone());
    }
    // `SET LOCK_TIMEOUT n` (ms; -1: wait for ever), for the row-lock waits of locks.rs.
    if sg.get(1).is_some_and(|t| t.is_word("LOCK_TIMEOUT")) {
        let n: String = sg[2..].iter().map(|t| t.text()).collect();
        cx.lk.lock_timeout = n.trim().parse::<i64>().map(|v| v.max(-1)).unwrap_or(-1);
    }
    if sg.get(1).is_some_and(|t| t.is_word("FMTONLY")) {
        cx.fmtonly = sg.get(2).is_some_and(|t| t.is_word("ON"));
    }
    Ok(Flow::Continue)
}

/// `BEGIN TRAN[SACTION]`: ENVCHANGE(begin transaction).
pub(crate) fn begin_tran(cx: &mut Context, out: &mut Out, r: &mut Resp) -> Result<Flow, StmtErr> {
    let env = cx.begin();
    out.emit(r, &env)?;
    Ok(Flow::Continue)
}

/// `COMMIT` / `ROLLBACK`: ENVCHANGE(commit/rollback); COMMIT without a transaction is 3902.
pub(crate) fn end_tran(
    cx: &mut Context,
    rollback: bool,
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    if !cx.txn_open && !rollback {
        return Err(StmtErr::Sql(SqlError::new(
            3902,
            16,
            "The COMMIT TRANSACTION request has no corresponding BEGIN TRANSACTION.",
        )));
    }
    let env = if rollback {
        cx.rollback()?
    } else {
        cx.commit()?
    };
    out.emit(r, &env)?;
    Ok(Flow::Continue)
}

/// `USE db`: ENVCHANGE(database) and message 5701 (the peer has one database by any name).
pub(crate) fn use_database(
    cx: &mut Context,
    toks: &[Tok],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    let sg = sig(toks);
    let db = sg
        .get(1)
        .map(|t| t.text().trim_matches('"').to_string())
        .unwrap_or_default();
    let mut b = token::envchange_str(1, &db, &cx.database);
    cx.database = db.clone();
    b.extend(token::message(
        5701,
        &format!("Changed database context to '{db}'."),
        0,
        1,
        1,
    ));
    out.emit(r, &b)?;
    Ok(Flow::Continue)
}

/// `KILL <spid>`: the session's socket is shut; its engine (and open transaction) goes with
/// its thread, rolled back.
pub(crate) fn kill(cx: &mut Context, toks: &[Tok]) -> Result<Flow, StmtErr> {
    let sg = sig(toks);
    let spid = sg.get(1).and_then(|t| t.text().parse::<u16>().ok());
    match spid {
        Some(s) if s == cx.spid => Err(StmtErr::Sql(SqlError::new(
            6104,
            16,
            "Cannot use KILL to kill your own process.",
        ))),
        Some(s) if cx.shared.sessions.kill(s) => Ok(Flow::Continue),
        Some(s) => Err(StmtErr::Sql(SqlError::new(
            6106,
            16,
            format!("Process ID {s} is not an active process ID."),
        ))),
        None => Err(StmtErr::Sql(SqlError::syntax("KILL needs a session id"))),
    }
}

/// `WAITFOR DELAY 'hh:mm:ss'` (at most 600 s); ATTENTION ends the wait and the batch.
pub(crate) fn waitfor(toks: &[Tok], out: &mut Out, r: &mut Resp) -> Result<Flow, StmtErr> {
    let sg = sig(toks);
    if let Some(Tok::Str { s, .. }) = sg.iter().find(|t| matches!(t, Tok::Str { .. })) {
        let secs = crate::conv::parse_datetime(s)
            .map(|d| d.ticks as f64 / 1e7)
            .unwrap_or(0.0);
        let until = std::time::Instant::now() + std::time::Duration::from_secs_f64(secs.min(600.0));
        while std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(20));
            if r.io.poll_attention() {
                // Acknowledged here with DONE(ATTN), as the stall fault and a lock wait do:
                // the drivers wait for it, and a batch that stops does not send it itself.
                out.cancelled(r)?;
                return Ok(Flow::Stop);
            }
        }
    }
    Ok(Flow::Continue)
}
