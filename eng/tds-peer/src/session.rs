//! One client connection: PRELOGIN, optional TLS, LOGIN7, then the request loop.

// A wire parser: every cast that can lose sign or bits is decided (issue 36; a hostile
// client's numbers end in a TDS error or a closed connection, never a wrapped length/handle).
#![warn(
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    clippy::cast_possible_truncation
)]

use crate::conv::from_utf16;
use crate::io::{Io, proto_err};
use crate::packet::{P_ATTN, P_BULK, P_IGNORED, P_LOGIN7, P_PRELOGIN, P_REPLY, P_RPC, P_SQL, P_TM};
use crate::prelogin::{self, ENCRYPT_NOT_SUP, ENCRYPT_OFF, ENCRYPT_ON};
use crate::resp::Resp;
use crate::sql::engine::{Engine, Shared};
use crate::transient::Outcome;
use crate::{fedauth, login, rpc, tls, token, transient};
use std::io;
use std::net::TcpStream;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encrypt {
    NotSup,
    Off,
    On,
    Strict,
}

pub struct Config {
    pub encrypt: Encrypt,
    pub password: Option<String>,
    pub tls: tls::Configs,
    pub shared: Arc<Shared>,
    pub verbose: bool,
    /// `--fedauth-key`: access tokens are checked with it (none: token logins are refused).
    pub fedauth: Option<fedauth::Verifier>,
    /// `--fail-logins` and the statement faults' counts (transient.rs).
    pub transient: transient::Switches,
    /// `--chaos`: random faults on every session (chaos.rs).
    pub chaos: Option<crate::chaos::Chaos>,
}

pub fn serve(tcp: TcpStream, cfg: Arc<Config>, spid: u16) {
    let peer = tcp.peer_addr().map(|a| a.to_string()).unwrap_or_default();
    let _ = tcp.set_nodelay(true);
    let registered = cfg.shared.sessions.add(spid, &tcp);
    let mut io = Io::new(tcp, spid);
    let outcome = run(&mut io, &cfg, spid);
    drop(registered);
    match outcome {
        Ok(()) => {}
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::UnexpectedEof
                    | io::ErrorKind::ConnectionReset
                    | io::ErrorKind::BrokenPipe
            ) =>
        {
            if cfg.verbose {
                eprintln!("tds-peer: [{spid}] {peer} closed");
            }
        }
        Err(e) => eprintln!("tds-peer: [{spid}] {peer} closing after error: {e}"),
    }
    if let Some(tcp) = match &io.stream {
        crate::io::Stream::Plain(p) => Some(&p.tcp),
        crate::io::Stream::Tls(s) => Some(&s.sock.tcp),
        crate::io::Stream::Gone => None,
    } {
        let _ = tcp.shutdown(std::net::Shutdown::Both);
    }
}

/// One connection: the handshake, then its requests until it closes.
fn run(io: &mut Io, cfg: &Config, spid: u16) -> io::Result<()> {
    match handshake(io, cfg, spid)? {
        Some(mut engine) => {
            let res = requests(io, cfg, spid, &mut engine);
            crate::sql::ddl::end_session(&mut engine.cx);
            res
        }
        None => Ok(()),
    }
}

/// PRELOGIN (and TLS where agreed), then LOGIN7 checked and answered: the session's engine, or
/// None when the login was refused (the refusal is sent).
fn handshake(io: &mut Io, cfg: &Config, spid: u16) -> io::Result<Option<Engine>> {
    if cfg.encrypt == Encrypt::Strict {
        tls::strict_start(io, cfg.tls.strict.clone())?;
    }
    let (typ, data) = io.read_message()?;
    if typ != P_PRELOGIN {
        return Err(proto_err(format!(
            "expected PRELOGIN, got packet type {typ:#04x}"
        )));
    }
    let opts = prelogin::parse(&data)?;
    let client_enc = opts
        .get(&1)
        .and_then(|v| v.first().copied())
        .unwrap_or(ENCRYPT_NOT_SUP);
    let server_enc = match cfg.encrypt {
        Encrypt::NotSup | Encrypt::Strict => ENCRYPT_NOT_SUP,
        // Like SQL Server with a certificate but without "force encryption": a client asking
        // for encryption gets it, a client without TLS (ENCRYPT_NOT_SUP) is told NOT_SUP back
        // (tiberius' plaintext mode relies on that against SQL Server 2017-2022: answered OFF,
        // it starts a TLS handshake), and OFF is answered OFF (login-only TLS).
        Encrypt::Off if client_enc == ENCRYPT_ON || client_enc == prelogin::ENCRYPT_REQ => {
            ENCRYPT_ON
        }
        Encrypt::Off if client_enc == ENCRYPT_NOT_SUP => ENCRYPT_NOT_SUP,
        Encrypt::Off => ENCRYPT_OFF,
        Encrypt::On => ENCRYPT_ON,
    };
    io.send_message(
        P_REPLY,
        &prelogin::reply(
            server_enc,
            opts.contains_key(&6)
                .then_some(u8::from(cfg.fedauth.is_some())),
        ),
        4096,
    )?;
    let tls_login = server_enc != ENCRYPT_NOT_SUP && client_enc != ENCRYPT_NOT_SUP;
    if tls_login {
        tls::tds7_handshake(io, cfg.tls.tds7.clone())?;
    }
    let (typ, data) = io.read_message()?;
    if typ != P_LOGIN7 {
        return Err(proto_err(format!(
            "expected LOGIN7, got packet type {typ:#04x}"
        )));
    }
    if tls_login && server_enc == ENCRYPT_OFF && client_enc == ENCRYPT_OFF {
        // Login-only encryption: the rest of the session is plaintext.
        tls::drop_tls(io);
    }
    let login = login::parse(&data)?;
    if cfg.verbose {
        eprintln!(
            "tds-peer: [{spid}] login user={:?} app={:?} db={:?} tds={:#010x} packet={} enc(client={client_enc}, server={server_enc}) prelogin={:?}{}",
            login.user,
            login.app,
            login.database,
            login.tds_version,
            login.packet_size,
            {
                let mut ids: Vec<_> = opts.keys().collect();
                ids.sort();
                ids
            },
            login
                .fedauth
                .as_deref()
                .map(fedauth::describe)
                .unwrap_or_default()
        );
    }
    let bad_user = !login.user.eq_ignore_ascii_case("sa")
        || cfg.password.as_ref().is_some_and(|p| *p != login.password);
    let db = if login.database.is_empty() {
        "master".to_string()
    } else {
        login.database.clone()
    };
    // A token login (FEDAUTH, fedauth.rs) names its identity; a SQL login is `sa`.
    let checked = match &login.fedauth {
        Some(feature) => fedauth::login(cfg.fedauth.as_ref(), feature)
            .map(|(name, ack)| (name, Some(ack)))
            .map_err(|r| r.message()),
        None if bad_user => Err(format!("Login failed for user '{}'.", login.user)),
        None => Ok(("sa".to_string(), None)),
    };
    if let Some(error) = cfg.chaos.as_ref().and_then(|c| c.login(&db)) {
        io.send_message(P_REPLY, &error, 4096)?;
        return Ok(None);
    }
    if let Outcome::Fail { error, .. } = cfg.transient.login(&db) {
        io.send_message(P_REPLY, &error, 4096)?;
        return Ok(None);
    }
    let (login_name, fedauth_ack) = match checked {
        Ok(accepted) => accepted,
        Err(msg) => {
            if cfg.verbose {
                eprintln!("tds-peer: [{spid}] login refused: {msg}");
            }
            let mut v = token::message(18456, &msg, 14, 1, 1);
            v.extend(token::done(token::TOK_DONE, token::DONE_ERROR, 0, 0));
            io.send_message(P_REPLY, &v, 4096)?;
            return Ok(None);
        }
    };
    let psize = login::negotiate_packet_size(login.packet_size);
    crate::vector::set_session(crate::vector::negotiate(crate::vector::Features {
        utf8: login.utf8_support,
        ..login.asked
    }));
    io.send_message(
        P_REPLY,
        &login::response(&db, psize, login.utf8_support, fedauth_ack.as_deref()),
        4096,
    )?;
    io.psize = psize;
    let mut engine = Engine::open(cfg.shared.clone(), spid)
        .map_err(|e| io::Error::other(format!("sqlite open: {e}")))?;
    engine.database = db.clone();
    fedauth::set_login_name(&engine.db, &login_name)
        .map_err(|e| io::Error::other(format!("sqlite function: {e}")))?;
    Ok(Some(engine))
}

/// The request loop of a logged-in session.
fn requests(io: &mut Io, cfg: &Config, spid: u16, engine: &mut Engine) -> io::Result<()> {
    loop {
        engine.idle(io);
        let (typ, data) = io.read_message()?;
        io.attention = false;
        if io.reset_requested {
            if cfg.verbose {
                eprintln!("tds-peer: [{spid}] session reset (sp_reset_connection)");
            }
            engine.reset_session();
        }
        if let Some(chaos) = &cfg.chaos
            && chaos.before_request(io, typ, &data, engine)?
        {
            engine.request_done();
            continue;
        }
        match typ {
            P_SQL => sql_batch(io, cfg, spid, engine, &data)?,
            P_RPC => rpc_batch(io, cfg, spid, engine, &data)?,
            P_BULK => {
                if cfg.verbose {
                    eprintln!("tds-peer: [{spid}] bulk load of {} bytes", data.len());
                    if std::env::var_os("TDS_PEER_TRACE").is_some() {
                        let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
                        eprintln!("tds-peer: [{spid}] bulk load bytes {hex}");
                    }
                }
                // Decoded as RPC parameters are (rpc.rs, which the engine does not know).
                let message = crate::bulk::BulkMessage {
                    data: &data,
                    decode: rpc::decode_value,
                };
                let mut r = Resp::new(io);
                engine.bulk_load(message, &mut r)?;
                r.finish()?;
            }
            P_TM => {
                let out = transaction(engine, &data);
                let mut r = Resp::new(io);
                r.put(&out)?;
                r.finish()?;
            }
            P_IGNORED => {
                // Abandoned by the client (an aborted bulk load's rows): nothing of it stays,
                // and nothing answers it; the INSERT BULK still waits for its (empty) rows,
                // which Driver 18's bcp_done then sends as a BULK LOAD message of one DONE.
                if cfg.verbose {
                    eprintln!("tds-peer: [{spid}] a message the client abandoned (status IGNORE)");
                }
                let mut r = Resp::new(io);
                r.put(&token::done(token::TOK_DONE, 0, 0, 0))?;
                r.finish()?;
            }
            P_ATTN => {
                // A bulk load cancelled after its INSERT BULK or during its rows: nothing of
                // it stays.
                engine.bulk = None;
                let mut r = Resp::new(io);
                r.put(&token::done(token::TOK_DONE, token::DONE_ATTN, 0, 0))?;
                r.finish()?;
            }
            other => return Err(proto_err(format!("unsupported packet type {other:#04x}"))),
        }
        engine.request_done();
    }
}

/// One SQL batch: its statements' results, or the transient fault that answers it.
fn sql_batch(
    io: &mut Io,
    cfg: &Config,
    spid: u16,
    engine: &mut Engine,
    data: &[u8],
) -> io::Result<()> {
    let hl = u32::from_le_bytes(
        data.get(..4)
            .ok_or_else(|| proto_err("short SQL batch"))?
            .try_into()
            .unwrap(),
    ) as usize;
    let sql = from_utf16(data.get(hl.min(data.len())..).unwrap_or(&[]));
    if cfg.verbose {
        eprintln!(
            "tds-peer: [{spid}] batch {:?}",
            sql.chars().take(200).collect::<String>()
        );
    }
    if transient_fault(io, cfg.transient.statement(&sql, &engine.database))? {
        return Ok(());
    }
    let mut r = Resp::new(io);
    engine.run(&sql, &[], false, &mut r)?;
    r.finish()?;
    Ok(())
}

/// One RPC request (possibly several batched calls).
fn rpc_batch(
    io: &mut Io,
    cfg: &Config,
    spid: u16,
    engine: &mut Engine,
    data: &[u8],
) -> io::Result<()> {
    let reqs = rpc::parse(data)?;
    if cfg.verbose && reqs.len() > 1 {
        eprintln!("tds-peer: [{spid}] {} batched RPCs", reqs.len());
    }
    if let Some(req) = reqs.first().filter(|_| cfg.verbose) {
        let name = match &req.proc {
            rpc::Proc::Id(i) => format!("#{i}"),
            rpc::Proc::Name(n) => n.clone(),
        };
        let stmt = req.params.iter().find_map(|p| match &p.value {
            rusqlite::types::Value::Text(t)
                if !t.starts_with('@') || t.contains(' ') && !t.starts_with("@P") =>
            {
                Some(t.chars().take(200).collect::<String>())
            }
            _ => None,
        });
        eprintln!(
            "tds-peer: [{spid}] rpc {name} params={} stmt={stmt:?}",
            req.params.len()
        );
    }
    if let Some(text) = reqs.iter().find_map(transient::rpc_text)
        && transient_fault(io, cfg.transient.statement(text, &engine.database))?
    {
        return Ok(());
    }
    let mut r = Resp::new(io);
    for req in reqs {
        rpc::handle(engine, req, &mut r)?;
        if r.attn_acked {
            break;
        }
    }
    r.finish()?;
    Ok(())
}

/// Answer a request failed by a transient fault (true), ending the session after 40197.
fn transient_fault(io: &mut Io, outcome: Outcome) -> io::Result<bool> {
    let Outcome::Fail { error, drop } = outcome else {
        return Ok(false);
    };
    let mut r = Resp::new(io);
    r.put(&error)?;
    r.finish()?;
    if drop {
        return Err(crate::faults::killed("transient fault: connection dropped"));
    }
    Ok(true)
}

/// TransactionManager request: 5 = BEGIN, 7 = COMMIT, 8 = ROLLBACK (with optional fBeginXact).
fn transaction(engine: &mut Engine, data: &[u8]) -> Vec<u8> {
    let hl = data
        .get(..4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()) as usize)
        .unwrap_or(0);
    let body = data.get(hl..).unwrap_or(&[]);
    let rtype = body
        .get(..2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .unwrap_or(0);
    let mut out = Vec::new();
    let mut status = 0;
    let mut push_err = |out: &mut Vec<u8>, e: crate::sql::errors::SqlError| {
        out.extend(token::message(e.number, &e.msg, e.class, 1, 1));
        status = token::DONE_ERROR;
    };
    match rtype {
        5 => out.extend(engine.begin()),
        7 | 8 => {
            let name_len = body.get(2).copied().unwrap_or(0) as usize;
            let fbegin = body.get(3 + 2 * name_len).copied().unwrap_or(0) & 1 != 0;
            match if rtype == 7 {
                engine.commit()
            } else {
                engine.rollback()
            } {
                Ok(env) => out.extend(env),
                Err(e) => push_err(&mut out, e),
            }
            if fbegin {
                out.extend(engine.begin());
            }
        }
        _ => {}
    }
    out.extend(token::done(token::TOK_DONE, status, 0, 0));
    out
}
