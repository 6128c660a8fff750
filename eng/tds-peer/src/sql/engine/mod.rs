//! Executes T-SQL batches against the connection's SQLite database and streams the results as
//! TDS tokens with SQL Server's DONE/DONEINPROC conventions.

pub mod procs;

use crate::resp::Resp;
use crate::result_cache::{self, ResultCache};
use crate::sql::errors::{SqlError, from_sqlite};
use crate::sql::functions;
use crate::sql::lexer::{self, Tok, sig};
use crate::sql::nullability::{self, Origin};
use crate::sql::rewrite::{self, Ctx};
use crate::synthetic;
use crate::token::{self, Column, value};
use crate::types::Ty;
use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags};
use std::io;
use std::rc::Rc;
use std::sync::Arc;

/// Names (with `@`) and declared types of parameters or result columns.
pub type Decl = Vec<(String, Option<Ty>)>;

/// The table column each result column reads as is, if any (`nullability::origins`).
pub type Origins = Vec<Option<Origin>>;

/// A bound parameter (RPC) with its declared type when known.
#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub ty: Option<Ty>,
    pub value: Value,
    /// RPC status BYREF (an output parameter of a stored procedure call).
    pub output: bool,
    /// A table-valued parameter's rows (`value` is NULL then).
    pub table: Option<std::sync::Arc<crate::tvp::Table>>,
}

pub struct Shared {
    pub db_path: String,
    pub synth: synthetic::Cache,
    /// Per-connection budget for encoded read-only results (`--result-cache-mb`; 0: off).
    pub result_cache_bytes: usize,
    /// Log result cache hits and stores (with the other `--verbose` lines).
    pub verbose: bool,
    /// Live sessions by SPID, for `KILL <spid>`.
    pub sessions: crate::sessions::Sessions,
}

pub struct Engine {
    pub db: Connection,
    pub shared: Arc<Shared>,
    pub spid: u16,
    /// Current database name (login's, then USE); the peer has one database whatever its name.
    pub database: String,
    /// Table variables in scope: (name, TEMP table, procedure depth that declared it).
    pub(super) table_vars: Vec<(String, String, u32)>,
    /// See `Ctx::text_columns`: set for the statement being run.
    pub(super) text_columns: Vec<String>,
    pub(super) nocount: bool,
    rowcount: i64,
    identity: Option<i64>,
    /// Logical transaction (TM BEGIN / BEGIN TRAN) open.
    pub txn_open: bool,
    /// SQLite transaction actually started (lazily, before the first write) so that reads
    /// outside writes see other connections' commits (READ COMMITTED-like).
    sqlite_txn: bool,
    pub txn_id: u64,
    pub handles: std::collections::HashMap<i32, (String, Decl)>,
    /// Batch-scoped T-SQL variables (DECLARE) or the running procedure's parameters.
    pub(super) vars: Vec<procs::Var>,
    pub(super) proc_depth: u32,
    /// `RETURN n` of the running procedure.
    pub(super) return_status: Option<i32>,
    /// Inside BEGIN TRY: errors are caught instead of sent.
    pub(super) try_depth: u32,
    pub(super) caught: Option<SqlError>,
    /// The error a CATCH block handles (ERROR_MESSAGE() & co, THROW;).
    pub(super) last_error: Option<SqlError>,
    pub next_handle: i32,
    /// The last batch text and its statements: executemany sends the same text once per row,
    /// and tokenizing it again was the peer's largest allocator load.
    parsed: Option<(String, Rc<Vec<Vec<Tok>>>)>,
    /// The last DML statement rewritten to SQLite (tokens, declared parameters, SQLite text),
    /// kept only when the text does not depend on session state (@@IDENTITY, SCOPE_IDENTITY()…).
    rewritten: Option<(Vec<Tok>, Decl, String)>,
    /// The last sp_executesql parameter declaration and its parse.
    pub declared: Option<(String, Decl)>,
    /// Encoded results of repeated read-only SELECTs (result_cache.rs).
    results: ResultCache,
    /// Bumped at every BEGIN / COMMIT / ROLLBACK / reset: what a transaction showed is not
    /// what follows it, even when no row count moved.
    txn_epoch: u64,
}

/// Tracks DONE tokens so that every DONE but the batch's last carries DONE_MORE.
pub struct Out {
    in_proc: bool,
    pending: Option<(u16, u16, u64)>,
    pub error: bool,
}

impl Out {
    pub fn new(in_proc: bool) -> Out {
        Out {
            in_proc,
            pending: None,
            error: false,
        }
    }

    fn flush(&mut self, r: &mut Resp) -> io::Result<()> {
        if let Some((st, cmd, n)) = self.pending.take() {
            let tok = if self.in_proc {
                token::TOK_DONEINPROC
            } else {
                token::TOK_DONE
            };
            r.put(&token::done(tok, st | token::DONE_MORE, cmd, n))?;
        }
        Ok(())
    }

    /// Emits tokens that belong to a new statement.
    pub fn emit(&mut self, r: &mut Resp, b: &[u8]) -> io::Result<()> {
        self.flush(r)?;
        r.put(b)
    }

    pub fn done(&mut self, r: &mut Resp, status: u16, cmd: u16, rows: u64) -> io::Result<()> {
        self.flush(r)?;
        if status & token::DONE_ERROR != 0 {
            self.error = true;
        }
        self.pending = Some((status, cmd, rows));
        Ok(())
    }

    pub fn error(&mut self, r: &mut Resp, e: &SqlError) -> io::Result<()> {
        self.emit(
            r,
            &token::message(e.number, &e.msg, e.class.max(11), e.state, 1),
        )?;
        self.done(r, token::DONE_ERROR, 0, 0)
    }

    /// Ends a batch: the last DONE without DONE_MORE (in procs the caller sends DONEPROC).
    pub fn finish(mut self, r: &mut Resp) -> io::Result<bool> {
        if self.in_proc {
            self.flush(r)?;
        } else {
            let (st, cmd, n) = self.pending.take().unwrap_or((0, 0, 0));
            r.put(&token::done(token::TOK_DONE, st, cmd, n))?;
        }
        Ok(self.error)
    }

    pub fn cancelled(&mut self, r: &mut Resp) -> io::Result<()> {
        self.pending = None;
        r.put(&token::done(token::TOK_DONE, token::DONE_ATTN, 0, 0))?;
        r.io.attention = false;
        r.attn_acked = true;
        Ok(())
    }
}

/// Words that start a statement and cannot name a procedure called without EXEC (SQL Server
/// reserves them; a procedure so named needs brackets, which lex as a quoted name).
fn is_statement_keyword(first: &str) -> bool {
    matches!(
        first,
        "SELECT"
            | "INSERT"
            | "UPDATE"
            | "DELETE"
            | "MERGE"
            | "WITH"
            | "VALUES"
            | "CREATE"
            | "DROP"
            | "ALTER"
            | "TRUNCATE"
            | "SET"
            | "DECLARE"
            | "IF"
            | "WHILE"
            | "BEGIN"
            | "END"
            | "COMMIT"
            | "ROLLBACK"
            | "SAVE"
            | "PRINT"
            | "RAISERROR"
            | "THROW"
            | "RETURN"
            | "USE"
            | "WAITFOR"
            | "KILL"
    )
}

pub(super) enum Flow {
    Continue,
    Stop,
}

impl Engine {
    pub fn open(shared: Arc<Shared>, spid: u16) -> rusqlite::Result<Engine> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let db = Connection::open_with_flags(&shared.db_path, flags)?;
        db.busy_timeout(std::time::Duration::from_secs(3))?;
        db.pragma_update(None, "journal_mode", "WAL")?;
        db.pragma_update(None, "synchronous", "OFF")?;
        // Tables are read through the OS page cache mapped in, not copied by a pread per page
        // (a 100,000-row SELECT * read ~2,500 pages that way on every run).
        db.pragma_update(None, "mmap_size", 1i64 << 30)?;
        functions::register(&db)?;
        db.execute_batch(procs::PROC_TABLE)?;
        db.execute_batch(crate::sql::tabletypes::TYPES_TABLE)?;
        // executemany arrives as one RPC per row with the same text: re-parsing it in SQLite was
        // a third of the peer's CPU for 10,000 inserts, and the peer (not the client) set the pace.
        db.set_prepared_statement_cache_capacity(64);
        Ok(Engine {
            db,
            spid,
            database: "master".into(),
            text_columns: Vec::new(),
            table_vars: Vec::new(),
            nocount: false,
            rowcount: 0,
            identity: None,
            txn_open: false,
            sqlite_txn: false,
            txn_id: 0,
            handles: Default::default(),
            vars: Vec::new(),
            proc_depth: 0,
            return_status: None,
            try_depth: 0,
            caught: None,
            last_error: None,
            next_handle: 1,
            parsed: None,
            rewritten: None,
            declared: None,
            results: ResultCache::new(shared.result_cache_bytes),
            txn_epoch: 0,
            shared,
        })
    }

    // ---- transactions -------------------------------------------------------------------

    pub fn begin(&mut self) -> Vec<u8> {
        self.txn_epoch += 1;
        self.txn_open = true;
        self.txn_id += 1;
        token::envchange_bytes(8, &self.txn_id.to_le_bytes(), &[])
    }

    fn end_txn(&mut self, commit: bool) -> Result<Vec<u8>, SqlError> {
        self.txn_epoch += 1;
        let old = if self.txn_open {
            self.txn_id.to_le_bytes().to_vec()
        } else {
            Vec::new()
        };
        if self.sqlite_txn {
            self.sqlite_txn = false;
            self.db
                .execute_batch(if commit { "COMMIT" } else { "ROLLBACK" })
                .map_err(|e| from_sqlite(&e))?;
        }
        self.txn_open = false;
        Ok(token::envchange_bytes(
            if commit { 9 } else { 10 },
            &[],
            &old,
        ))
    }

    pub fn commit(&mut self) -> Result<Vec<u8>, SqlError> {
        self.end_txn(true)
    }

    pub fn rollback(&mut self) -> Result<Vec<u8>, SqlError> {
        self.end_txn(false)
    }

    pub(super) fn before_write(&mut self) -> Result<(), SqlError> {
        if self.txn_open && !self.sqlite_txn {
            self.db
                .execute_batch("BEGIN IMMEDIATE")
                .map_err(|e| from_sqlite(&e))?;
            self.sqlite_txn = true;
        }
        Ok(())
    }

    /// sp_reset_connection: what a pooled connection's previous user left is gone (open
    /// transaction rolled back, temp tables dropped, SET NOCOUNT and @@ counters back to their
    /// defaults). Prepared handles survive, as in SQL Server.
    pub fn reset_session(&mut self) {
        let _ = self.end_txn(false);
        self.txn_epoch += 1;
        let temps: Vec<String> = self
            .db
            .prepare("SELECT name FROM sqlite_temp_master WHERE type = 'table'")
            .and_then(|mut st| {
                st.query_map([], |r| r.get::<_, String>(0))?
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .unwrap_or_default();
        for t in temps {
            let _ = self
                .db
                .execute_batch(&format!("DROP TABLE temp.\"{}\"", t.replace('"', "\"\"")));
        }
        self.nocount = false;
        super::sysviews::reset_isolation();
        self.rowcount = 0;
        self.identity = None;
        self.vars.clear();
    }

    // ---- batches ------------------------------------------------------------------------

    /// Runs a batch (SQL batch or the statement of an RPC). Returns whether an error occurred.
    pub fn run(
        &mut self,
        sql: &str,
        params: &[Param],
        in_proc: bool,
        r: &mut Resp,
    ) -> io::Result<bool> {
        let mut out = Out::new(in_proc);
        self.vars.clear();
        // SET NOCOUNT in an RPC's statement (sp_executesql, sp_prepexec: every parameterised
        // execute) lasts until that RPC returns, as SQL Server scopes SET in dynamic SQL.
        let nocount = self.nocount;
        let res = self.run_text(sql, params, &mut out, r);
        self.drop_table_vars(0);
        res?;
        if in_proc {
            self.nocount = nocount;
        }
        self.vars.clear();
        if r.attn_acked {
            // The DONE(ATTN) already ended the response.
            return Ok(true);
        }
        out.finish(r)
    }

    /// Runs the statements of a batch or procedure body into `out`.
    pub(super) fn run_text(
        &mut self,
        sql: &str,
        params: &[Param],
        out: &mut Out,
        r: &mut Resp,
    ) -> io::Result<Flow> {
        let stmts = match self.parsed.as_ref() {
            Some((text, stmts)) if text == sql => Rc::clone(stmts),
            _ => {
                let toks = match lexer::tokenize(sql) {
                    Ok(t) => t,
                    Err(e) => {
                        out.error(r, &SqlError::new(105, 15, e))?;
                        return Ok(Flow::Stop);
                    }
                };
                let stmts = Rc::new(if procs::is_create_proc(&toks) {
                    vec![toks]
                } else {
                    lexer::split(&toks)
                });
                self.parsed = Some((sql.to_string(), Rc::clone(&stmts)));
                stmts
            }
        };
        for stmt in stmts.iter() {
            if let Flow::Stop = self.statement(stmt, params, out, r)? {
                return Ok(Flow::Stop);
            }
            if r.io.attention && !r.attn_acked {
                out.cancelled(r)?;
                return Ok(Flow::Stop);
            }
            if r.attn_acked {
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Continue)
    }

    pub(super) fn ctx<'a>(&self, decl: &'a [(String, Option<Ty>)]) -> Ctx<'a> {
        Ctx {
            params: decl,
            rowcount: self.rowcount,
            identity: self.identity,
            trancount: self.txn_open as i64,
            spid: self.spid,
            database: self.database.clone(),
            text_columns: self.text_columns.clone(),
            error: self.last_error.clone(),
            schemas: super::sysviews::user_schemas(&self.db),
        }
    }

    pub(super) fn statement(
        &mut self,
        toks: &[Tok],
        params: &[Param],
        out: &mut Out,
        r: &mut Resp,
    ) -> io::Result<Flow> {
        if let Some(f) = crate::faults::of_statement(toks) {
            if f.kill {
                eprintln!("tds-peer: [{}] fault: session killed", self.spid);
                return Err(crate::faults::killed("fault:kill"));
            }
            // A stall before any statement but a synthetic SELECT (which stalls after its
            // COLMETADATA): a long execute on a user table. ATTENTION cancels it unrun.
            let text: String = toks.iter().map(|t| t.text()).collect();
            let sg = sig(toks);
            if let Some(s) = f.stall
                && synthetic::Query::parse(&sg, &text).is_none()
                && synthetic::sleep_polling(r, s)
            {
                out.cancelled(r)?;
                return Ok(Flow::Stop);
            }
        }
        match self.statement_inner(toks, params, out, r) {
            Ok(f) => Ok(f),
            Err(StmtErr::Io(e)) => Err(e),
            Err(StmtErr::Sql(e)) if self.try_depth > 0 => {
                // BEGIN TRY: the CATCH block handles it; nothing reaches the client.
                self.caught = Some(e);
                Ok(Flow::Stop)
            }
            Err(StmtErr::Sql(e)) => {
                out.error(r, &e)?;
                // Compile-type errors abort the batch like SQL Server; runtime errors continue.
                let compile = matches!(e.number, 102 | 105 | 156 | 207 | 208 | 272);
                if compile && out.in_proc && self.proc_depth == 0 {
                    // sp_prepexec / sp_executesql: SQL Server adds 8180 after a compile error.
                    out.error(
                        r,
                        &SqlError::new(8180, 16, "Statement(s) could not be prepared."),
                    )?;
                }
                // So do conversion failures (245), unlike overflow or truncation errors.
                Ok(if compile || matches!(e.number, 245 | 2812) {
                    Flow::Stop
                } else {
                    Flow::Continue
                })
            }
        }
    }

    fn statement_inner(
        &mut self,
        toks: &[Tok],
        params: &[Param],
        out: &mut Out,
        r: &mut Resp,
    ) -> Result<Flow, StmtErr> {
        // Table variables (`@t` declared as TABLE) name their TEMP tables.
        let substituted: Vec<Tok>;
        let mut toks = toks;
        if !self.table_vars.is_empty()
            && !sig(toks).first().is_some_and(|t| t.is_word("DECLARE"))
            && toks
                .iter()
                .any(|t| matches!(t, Tok::Var(v) if self.table_var(v).is_some()))
        {
            substituted = toks
                .iter()
                .map(|t| match t {
                    Tok::Var(v) => self
                        .table_var(v)
                        .map_or_else(|| t.clone(), |temp| Tok::Word(temp.to_string())),
                    _ => t.clone(),
                })
                .collect();
            toks = &substituted;
        }
        // NEXT VALUE FOR a sequence: its value, taken now (sequences.rs).
        let with_values: Vec<Tok>;
        if let Some(t) = self.next_values(toks)? {
            with_values = t;
            toks = &with_values;
        }
        // A BEGIN … END block runs its statements; a stray BEGIN/END carries no meaning here.
        {
            let sg = sig(toks);
            let begin = sg.first().is_some_and(|t| t.is_word("BEGIN"))
                && !sg.get(1).is_some_and(|t| {
                    t.is_word("TRAN") || t.is_word("TRANSACTION") || t.is_word("DISTRIBUTED")
                });
            if begin && sg.get(1).is_some_and(|t| t.is_word("TRY")) {
                return self.try_catch(toks, params, out, r);
            }
            if begin && sg.len() > 1 && sg.last().is_some_and(|t| t.is_word("END")) {
                return self.run_body(toks, params, out, r);
            }
            if begin {
                let p = toks.iter().position(|t| t.is_word("BEGIN")).unwrap();
                toks = &toks[p + 1..];
            } else if sg.len() == 1 && sg[0].is_word("END") {
                return Ok(Flow::Continue);
            }
        }
        let merged: Vec<Param>;
        let params: &[Param] = if self.vars.is_empty() {
            params
        } else {
            merged = params
                .iter()
                .cloned()
                .chain(self.vars_as_params())
                .collect();
            &merged
        };
        let sg = sig(toks);
        let Some(first_tok) = sg.first() else {
            return Ok(Flow::Continue);
        };
        let first = first_tok.word().unwrap_or_default();
        let second_is_var = matches!(sg.get(1), Some(Tok::Var(v)) if !v.starts_with("@@"));
        if first == "DECLARE" {
            return self.declare(toks, params);
        }
        if first == "SET" && second_is_var {
            return self.set_statement(toks, params);
        }
        if first == "SELECT" && second_is_var && sg.get(2).is_some_and(|t| t.is_punct('=')) {
            return self.select_assign(toks, params);
        }
        if first == "RETURN" {
            // `RETURN n` in a procedure sets its return status (`{? = CALL p}` reads it).
            let start = toks
                .iter()
                .position(|t| !t.is_space())
                .map_or(toks.len(), |i| i + 1);
            let expr = &toks[start..];
            if self.proc_depth > 0 && expr.iter().any(|t| !t.is_space()) {
                let v = self.eval_value(expr, params)?;
                self.return_status = Some(crate::token::value::as_i64(&v) as i32);
            }
            return Ok(Flow::Stop);
        }
        if (first == "CREATE" || first == "ALTER") && procs::is_create_proc(toks) {
            return self.create_proc(toks);
        }
        if first == "DROP"
            && sg
                .get(1)
                .is_some_and(|t| t.is_word("PROC") || t.is_word("PROCEDURE"))
        {
            return self.drop_proc(&sg);
        }
        if first == "EXEC"
            || first == "EXECUTE"
            || first.starts_with("SP_")
            || first.starts_with("XP_")
            || (!is_statement_keyword(&first) && self.lookup_proc(&first_tok.text()).is_some())
        {
            let mut at = usize::from(first == "EXEC" || first == "EXECUTE");
            // A multi-part name (`dbo.p`, `"dbo".p`, `master..p`) names the procedure by its last part.
            while sg.get(at + 1).is_some_and(|t| t.is_punct('.')) {
                let mut k = at + 1;
                while sg.get(k).is_some_and(|t| t.is_punct('.')) {
                    k += 1;
                }
                if !sg
                    .get(k)
                    .is_some_and(|t| matches!(t, Tok::Word(_) | Tok::Quoted(_)))
                {
                    break;
                }
                at = k;
            }
            if let Some(name_tok) = sg.get(at) {
                let name = procs::proc_name_of(&name_tok.text().replace('"', ""));
                if name.eq_ignore_ascii_case("sp_executesql") {
                    let pos = toks
                        .iter()
                        .position(|t| std::ptr::eq(t, *name_tok))
                        .unwrap();
                    return self.exec_executesql(&toks[pos + 1..], params, out, r);
                }
                if let Some(def) = self.lookup_proc(&name) {
                    let pos = toks
                        .iter()
                        .position(|t| std::ptr::eq(t, *name_tok))
                        .unwrap();
                    let mut argstart = pos + 1;
                    while toks.get(argstart).is_some_and(|t| t.is_punct('.')) {
                        argstart += 2;
                    }
                    let args = toks.get(argstart..).unwrap_or(&[]);
                    return self.exec_stored(&name, def, args, params, out, r);
                }
            }
        }
        let decl: Vec<(String, Option<Ty>)> =
            params.iter().map(|p| (p.name.clone(), p.ty)).collect();
        if first == "UPDATE"
            && let Some((table, cols)) = super::rowversion::updated_columns(&sg)
            && cols
                .iter()
                .any(|c| super::rowversion::is_column(&self.db, &table, c))
        {
            // Refused when compiled, as SQL Server does: whether or not a row matches.
            return Err(StmtErr::Sql(SqlError::new(
                272,
                16,
                super::rowversion::UPDATE_REFUSED,
            )));
        }
        match first.as_str() {
            "SELECT" => {
                let text: String = toks.iter().map(|t| t.text()).collect();
                if let Some(q) = synthetic::Query::parse(&sg, &text) {
                    let q = q.map_err(|e| StmtErr::Sql(SqlError::new(208, 16, e)))?;
                    out.emit(r, &[])?;
                    let n = synthetic::stream(&self.shared.synth, &q, r)?;
                    match n {
                        synthetic::Streamed::Rows(n) => {
                            self.rowcount = n as i64;
                            out.done(r, token::DONE_COUNT, token::CMD_SELECT, n)?;
                        }
                        synthetic::Streamed::Cancelled => {
                            out.cancelled(r)?;
                            return Ok(Flow::Stop);
                        }
                        synthetic::Streamed::Error => {
                            out.done(r, token::DONE_ERROR, token::CMD_SELECT, 0)?;
                            return Ok(Flow::Stop);
                        }
                    }
                    return Ok(Flow::Continue);
                }
                let forms = crate::sql::forms::rewrite(toks);
                self.text_columns = self.plus_text_columns(toks);
                let res = self.query(forms.as_deref().unwrap_or(toks), &decl, params, out, r);
                self.text_columns.clear();
                res
            }
            "WITH" | "VALUES" => self.query(toks, &decl, params, out, r),
            "INSERT" | "UPDATE" | "DELETE" | "REPLACE" | "MERGE" if has_output_clause(toks) => {
                self.dml_with_output(toks, &first, &decl, params, out, r)
            }
            "INSERT" | "UPDATE" | "DELETE" | "REPLACE" | "MERGE" => {
                let wrapped = (first == "INSERT")
                    .then(|| self.variant_targets(toks))
                    .flatten()
                    .and_then(|targets| crate::sql::forms::wrap_variant_values(toks, &targets));
                let sql = self.rewrite_dml(wrapped.as_deref().unwrap_or(toks), &decl)?;
                self.before_write()?;
                let n = self.exec(&sql, params)?;
                self.rowcount = n as i64;
                if first == "INSERT" {
                    self.identity = Some(self.db.last_insert_rowid());
                }
                let cmd = match first.as_str() {
                    "INSERT" => token::CMD_INSERT,
                    "DELETE" => token::CMD_DELETE,
                    _ => token::CMD_UPDATE,
                };
                if !self.nocount {
                    out.done(r, token::DONE_COUNT, cmd, n as u64)?;
                }
                Ok(Flow::Continue)
            }
            "CREATE" | "DROP" if sg.get(1).is_some_and(|t| t.is_word("TYPE")) => {
                if first == "CREATE" {
                    self.create_type(toks)
                } else {
                    self.drop_type(&sg)
                }
            }
            "CREATE" | "DROP" if sg.get(1).is_some_and(|t| t.is_word("SCHEMA")) => {
                self.schema_ddl(&sg)
            }
            "CREATE" | "DROP" if sg.get(1).is_some_and(|t| t.is_word("SEQUENCE")) => {
                self.sequence_ddl(&sg)
            }
            "CREATE" | "DROP" | "ALTER" | "TRUNCATE" => {
                let ctx = self.ctx(&decl);
                let named = (first == "CREATE" && sg.get(1).is_some_and(|t| t.is_word("TABLE")))
                    .then(|| super::constraints::of_create_table(toks, |t| ctx.rw(t).ok()))
                    .flatten();
                let sql = if first == "CREATE" && sg.get(1).is_some_and(|t| t.is_word("TABLE")) {
                    rewrite::create_table(&ctx, toks)
                        .map_err(|e| StmtErr::Sql(SqlError::syntax(e)))?
                        .sql
                } else if first == "CREATE"
                    && sg.get(1).is_some_and(|t| {
                        t.is_word("PROCEDURE")
                            || t.is_word("PROC")
                            || t.is_word("FUNCTION")
                            || t.is_word("TRIGGER")
                    })
                {
                    return Err(StmtErr::Sql(SqlError::unsupported("CREATE PROCEDURE")));
                } else if first == "TRUNCATE" {
                    format!(
                        "DELETE FROM {}",
                        ctx.rw(&toks[toks
                            .iter()
                            .position(|t| t.is_word("TABLE"))
                            .map(|p| p + 1)
                            .unwrap_or(1)..])
                            .map_err(|e| StmtErr::Sql(SqlError::syntax(e)))?
                    )
                } else {
                    let index = super::sysviews::index_ddl(&ctx, toks);
                    ctx.rw(index.as_deref().unwrap_or(toks))
                        .map_err(|e| StmtErr::Sql(SqlError::syntax(e)))?
                };
                self.before_write()?;
                self.db
                    .execute_batch(&sql)
                    .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
                if first == "DROP" {
                    super::extprops::forget_dropped(&self.db);
                }
                if let Some((table, named)) = named {
                    super::constraints::record(&self.db, &table, &named);
                }
                self.rowcount = 0;
                Ok(Flow::Continue)
            }
            "SET" => {
                super::sysviews::set_statement(&sg);
                if sg.get(1).is_some_and(|t| t.is_word("NOCOUNT")) {
                    self.nocount = sg.get(2).is_some_and(|t| t.is_word("ON"));
                }
                Ok(Flow::Continue)
            }
            "PRINT" => {
                let msg = self.eval_text(
                    &toks[toks.iter().position(|t| t.is_word("PRINT")).unwrap() + 1..],
                    &decl,
                    params,
                )?;
                out.emit(r, &token::message(0, &msg, 0, 1, 1))?;
                Ok(Flow::Continue)
            }
            "RAISERROR" => self.raiserror(toks, &decl, params, out, r),
            "THROW" => {
                let args: Vec<&Tok> = sg[1..]
                    .iter()
                    .copied()
                    .filter(|t| !t.is_punct(','))
                    .collect();
                let e = if args.is_empty() {
                    // THROW; in a CATCH block re-raises the caught error.
                    self.last_error.clone().ok_or_else(|| {
                        StmtErr::Sql(SqlError::new(10704, 15, "To rethrow an error, a THROW statement must be used inside a CATCH block."))
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
                if self.try_depth > 0 {
                    return Err(StmtErr::Sql(e));
                }
                out.error(r, &e)?;
                Ok(Flow::Stop)
            }
            "BEGIN"
                if sg
                    .get(1)
                    .is_some_and(|t| t.is_word("TRAN") || t.is_word("TRANSACTION")) =>
            {
                let env = self.begin();
                out.emit(r, &env)?;
                Ok(Flow::Continue)
            }
            "COMMIT" | "ROLLBACK" => {
                if !self.txn_open && first == "COMMIT" {
                    return Err(StmtErr::Sql(SqlError::new(
                        3902,
                        16,
                        "The COMMIT TRANSACTION request has no corresponding BEGIN TRANSACTION.",
                    )));
                }
                let env = if first == "COMMIT" {
                    self.commit()?
                } else {
                    self.rollback()?
                };
                out.emit(r, &env)?;
                Ok(Flow::Continue)
            }
            "SAVE" => Ok(Flow::Continue),
            "USE" => {
                let db = sg
                    .get(1)
                    .map(|t| t.text().trim_matches('"').to_string())
                    .unwrap_or_default();
                let mut b = token::envchange_str(1, &db, &self.database);
                self.database = db.clone();
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
            "KILL" => {
                // KILL <spid>: the session's socket is shut; its engine (and open transaction)
                // goes with its thread, rolled back.
                let spid = sg.get(1).and_then(|t| t.text().parse::<u16>().ok());
                match spid {
                    Some(s) if s == self.spid => Err(StmtErr::Sql(SqlError::new(
                        6104,
                        16,
                        "Cannot use KILL to kill your own process.",
                    ))),
                    Some(s) if self.shared.sessions.kill(s) => Ok(Flow::Continue),
                    Some(s) => Err(StmtErr::Sql(SqlError::new(
                        6106,
                        16,
                        format!("Process ID {s} is not an active process ID."),
                    ))),
                    None => Err(StmtErr::Sql(SqlError::syntax("KILL needs a session id"))),
                }
            }
            "WAITFOR" => {
                if let Some(Tok::Str { s, .. }) = sg.iter().find(|t| matches!(t, Tok::Str { .. })) {
                    let secs = crate::conv::parse_datetime(s)
                        .map(|d| d.ticks as f64 / 1e7)
                        .unwrap_or(0.0);
                    let until = std::time::Instant::now()
                        + std::time::Duration::from_secs_f64(secs.min(600.0));
                    while std::time::Instant::now() < until {
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        if r.io.poll_attention() {
                            return Ok(Flow::Stop);
                        }
                    }
                }
                Ok(Flow::Continue)
            }
            "IF" if sg.iter().any(|t| t.is_word("OBJECT_ID"))
                && sg
                    .windows(2)
                    .any(|w| w[0].is_word("DROP") && w[1].is_word("TABLE")) =>
            {
                let p = toks.iter().position(|t| t.is_word("DROP")).unwrap();
                let ctx = self.ctx(&decl);
                let rest = ctx
                    .rw(&toks[p..])
                    .map_err(|e| StmtErr::Sql(SqlError::syntax(e)))?;
                let sql = rest.replacen("TABLE", "TABLE IF EXISTS", 1).replacen(
                    "table",
                    "TABLE IF EXISTS",
                    1,
                );
                self.before_write()?;
                self.db
                    .execute_batch(&sql)
                    .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
                Ok(Flow::Continue)
            }
            "IF" => self.if_statement(toks, params, out, r),
            "WHILE" => self.while_statement(toks, params, out, r),
            "EXEC" | "EXECUTE" => {
                let at = toks.iter().position(|t| t.is_word(&first)).unwrap();
                self.exec_system(&toks[at + 1..], params, out, r)
            }
            w if w.starts_with("SP_") || w.starts_with("XP_") => {
                self.exec_system(toks, params, out, r)
            }
            _ => Err(StmtErr::Sql(SqlError::unsupported(&first_tok.text()))),
        }
    }

    fn eval_text(
        &mut self,
        expr: &[Tok],
        decl: &[(String, Option<Ty>)],
        params: &[Param],
    ) -> Result<String, StmtErr> {
        let ctx = self.ctx(decl);
        let e = ctx
            .rw(expr)
            .map_err(|e| StmtErr::Sql(SqlError::syntax(e)))?;
        let (_, rows) = self.fetch(&format!("SELECT {e}"), params)?;
        Ok(rows
            .first()
            .and_then(|r| r.first())
            .map(value::as_text)
            .unwrap_or_default())
    }

    fn raiserror(
        &mut self,
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
        let args: Vec<Vec<Tok>> = crate::sql::lexer::split_commas(&toks[open + 1..close])
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
            .map(|a| self.eval_text(a, decl, params))
            .collect::<Result<_, _>>()?;
        let (number, fmt) = match vals[0].parse::<i32>() {
            Ok(n) if !matches!(sig(&args[0]).first(), Some(Tok::Str { .. })) => {
                (n, format!("Message {n}"))
            }
            _ => (50000, vals[0].clone()),
        };
        let class = vals[1].trim().parse::<i64>().unwrap_or(16).clamp(0, 25) as u8;
        let state = vals[2].trim().parse::<i64>().unwrap_or(1).clamp(0, 255) as u8;
        let msg = printf(&fmt, &vals[3..]);
        if class > 10 && self.try_depth > 0 {
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

    fn bind(stmt: &mut rusqlite::Statement, params: &[Param]) -> rusqlite::Result<()> {
        for i in 1..=stmt.parameter_count() {
            let ix = stmt
                .parameter_name(i)
                .and_then(|n| n.trim_start_matches('?').parse::<usize>().ok())
                .unwrap_or(i);
            let v = params
                .get(ix.wrapping_sub(1))
                .map(|p| p.value.clone())
                .unwrap_or(Value::Null);
            stmt.raw_bind_parameter(i, v)?;
        }
        Ok(())
    }

    /// `ctx.rw` of a DML statement, remembered for the next call with the same tokens and
    /// declaration (executemany: one RPC per row, the same statement each time).
    fn rewrite_dml(&mut self, toks: &[Tok], decl: &Decl) -> Result<String, StmtErr> {
        if let Some((t, d, sql)) = &self.rewritten
            && t.as_slice() == toks
            && d == decl
        {
            return Ok(sql.clone());
        }
        let sql = self
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
        self.rewritten =
            (!toks.iter().any(session_state)).then(|| (toks.to_vec(), decl.clone(), sql.clone()));
        Ok(sql)
    }

    /// Runs DML. Cached: SQLite re-prepares a cached statement itself when the schema changed.
    fn exec(&mut self, sql: &str, params: &[Param]) -> Result<usize, StmtErr> {
        let mut stmt = self
            .db
            .prepare_cached(sql)
            .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
        Self::bind(&mut stmt, params).map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
        stmt.raw_execute()
            .map_err(|e| StmtErr::Sql(from_sqlite(&e)))
    }

    /// Runs a query: (columns with names and declared types, rows).
    pub(super) fn fetch(
        &mut self,
        sql: &str,
        params: &[Param],
    ) -> Result<(Decl, Vec<Vec<Value>>), StmtErr> {
        self.fetch_with_origins(sql, params)
            .map(|(cols, _, rows)| (cols, rows))
    }

    /// A table (not a view) of that SQLite name exists, temp ones included.
    pub(super) fn is_table(&self, name: &str) -> bool {
        self.db.table_exists(None, name).unwrap_or(false)
    }

    /// `fetch`, with the table column each result column reads as is (`nullability::origins`).
    fn fetch_with_origins(
        &mut self,
        sql: &str,
        params: &[Param],
    ) -> Result<(Decl, Origins, Vec<Vec<Value>>), StmtErr> {
        // Not cached: a cached statement's declared column types stay stale until it is stepped,
        // and another session may have recreated the table with other types in between.
        let mut stmt = self
            .db
            .prepare(sql)
            .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
        let origins = nullability::origins(&stmt);
        let cols = super::schema::declared_columns(&stmt);
        Self::bind(&mut stmt, params).map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
        let n = cols.len();
        let mut rows = Vec::new();
        let mut q = stmt.raw_query();
        while let Some(row) = q.next().map_err(|e| StmtErr::Sql(from_sqlite(&e)))? {
            let mut v = Vec::with_capacity(n);
            for i in 0..n {
                v.push(
                    row.get::<_, Value>(i)
                        .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?,
                );
            }
            rows.push(v);
        }
        Ok((cols, origins, rows))
    }

    fn query(
        &mut self,
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
                    .ok_or_else(|| {
                        StmtErr::Sql(SqlError::syntax("Incorrect syntax near 'INTO'."))
                    })?;
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
                target = Some((name.clone(), name.starts_with('#')));
                owned = toks[..i]
                    .iter()
                    .chain(toks[end..].iter())
                    .cloned()
                    .collect();
                &owned[..]
            }
            None => toks,
        };
        let ctx = self.ctx(decl);
        let sql = ctx
            .rw(toks)
            .map_err(|e| StmtErr::Sql(SqlError::syntax(e)))?;
        let forced = ctx.select_types(toks);
        if target.is_none()
            && let Some(flow) = self.stream_select(&sql, toks, &forced, params, out, r)?
        {
            return Ok(flow);
        }
        let (cols, origins, rows) = self.fetch_with_origins(&sql, params)?;
        let names = column_names(&cols, &crate::sql::rewrite::select_names(toks));
        let nullable = nullability::nullable(toks, &origins, |t| self.is_table(t));
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
            self.before_write()?;
            let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
            self.db
                .execute_batch(&format!(
                    "CREATE {}TABLE {} ({})",
                    if temp { "TEMP " } else { "" },
                    q(&name),
                    defs.join(", ")
                ))
                .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
            let marks = vec!["?"; cols.len()].join(", ");
            let mut ins = self
                .db
                .prepare(&format!("INSERT INTO {} VALUES ({marks})", q(&name)))
                .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
            for row in &rows {
                ins.execute(rusqlite::params_from_iter(row.iter()))
                    .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
            }
            self.rowcount = rows.len() as i64;
            if !self.nocount {
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
        self.send_rows(&columns, &rows, out, r)
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
        &mut self,
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
        let mut stmt = self.db.prepare(sql).map_err(sqlite)?;
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
        let names = column_names(&decl, &crate::sql::rewrite::select_names(toks));
        let origins = nullability::origins(&stmt);
        let nullable = nullability::nullable(toks, &origins, |t| self.is_table(t));
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
        let state = if self.results.enabled() {
            result_cache::State::read(&self.db, self.txn_epoch).ok()
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
            if self.results.has(&key)
                && let Some(e) = self.results.get(&key, &state)
            {
                let n = e.rows;
                if self.shared.verbose {
                    eprintln!(
                        "tds-peer: [{}] result cache hit: {n} rows, {} bytes",
                        self.spid,
                        e.bytes.len()
                    );
                }
                if replay(&e.bytes, out, r)? {
                    out.cancelled(r)?;
                    return Ok(Some(Flow::Stop));
                }
                self.rowcount = n as i64;
                out.done(r, token::DONE_COUNT, token::CMD_SELECT, n)?;
                return Ok(Some(Flow::Continue));
            }
            Some((key, state))
        } else {
            None
        };
        Self::bind(&mut stmt, params).map_err(sqlite)?;
        let mut q = stmt.raw_query();
        let mut buf = Vec::with_capacity(64 * 1024);
        let mut keep: Option<Vec<u8>> = cached.as_ref().map(|_| meta.clone());
        let cap = self.results.cap_bytes();
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
                && result_cache::deterministic(&self.db, sql)
            {
                if self.shared.verbose {
                    eprintln!(
                        "tds-peer: [{}] result cached: {n} rows, {} bytes",
                        self.spid,
                        bytes.len()
                    );
                }
                self.results.put(result_cache::Entry {
                    key,
                    state,
                    bytes,
                    rows: n,
                });
            }
        }
        self.rowcount = n as i64;
        out.done(r, token::DONE_COUNT, token::CMD_SELECT, n)?;
        Ok(Some(Flow::Continue))
    }

    pub(super) fn send_rows(
        &mut self,
        cols: &[Column],
        rows: &[Vec<Value>],
        out: &mut Out,
        r: &mut Resp,
    ) -> Result<Flow, StmtErr> {
        // A safety net: a column described NOT NULL that holds a NULL anyway (which
        // `nullability` must never claim) is sent nullable. Driver 18 reads a NULL in a
        // fixed-length column (INT4 …) as a value and loses its place in the row.
        let held_null = |i: usize| rows.iter().any(|row| row[i] == Value::Null);
        let cols: Vec<Column> = cols
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if c.nullable || !held_null(i) {
                    c.clone()
                } else {
                    Column {
                        nullable: true,
                        fixed_len: false,
                        ..c.clone()
                    }
                }
            })
            .collect();
        let cols = &cols[..];
        out.emit(r, &token::colmetadata(cols))?;
        let tys: Vec<Ty> = cols.iter().map(|c| c.ty).collect();
        let fixed = Column::fixed(cols);
        let mut buf = Vec::with_capacity(64 * 1024);
        for row in rows {
            value::put_row_with(&mut buf, &tys, &fixed, |i| (&row[i]).into(), true);
            if buf.len() >= 32 * 1024 {
                r.put(&buf)?;
                buf.clear();
                if r.cancelled() {
                    out.cancelled(r)?;
                    return Ok(Flow::Stop);
                }
            }
        }
        r.put(&buf)?;
        self.rowcount = rows.len() as i64;
        out.done(r, token::DONE_COUNT, token::CMD_SELECT, rows.len() as u64)?;
        Ok(Flow::Continue)
    }
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

/// Index of a depth-0 word in a statement.
fn depth0_word(toks: &[Tok], from: usize, words: &[&str]) -> Option<usize> {
    let mut d = 0;
    for (i, t) in toks.iter().enumerate() {
        match t {
            Tok::Punct('(') => d += 1,
            Tok::Punct(')') => d -= 1,
            _ if d == 0 && i >= from && words.iter().any(|w| t.is_word(w)) => return Some(i),
            _ => {}
        }
    }
    None
}

fn has_output_clause(toks: &[Tok]) -> bool {
    depth0_word(toks, 0, &["OUTPUT"]).is_some()
}

impl Engine {
    /// INSERT/UPDATE/DELETE … OUTPUT INSERTED.x, DELETED.y … -> SQLite RETURNING: a result set
    /// of the affected rows (typed from the table's declared columns).
    fn dml_with_output(
        &mut self,
        toks: &[Tok],
        first: &str,
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
        let sql = self
            .ctx(decl)
            .rw(&q)
            .map_err(|e| StmtErr::Sql(SqlError::syntax(e)))?;
        // The target table, to type the returned columns.
        let sg: Vec<&Tok> = toks[..o].iter().filter(|t| !t.is_space()).collect();
        let after = match first {
            "INSERT" => sg
                .iter()
                .position(|t| t.is_word("INTO"))
                .map(|p| p + 1)
                .unwrap_or(1),
            "DELETE" => sg
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
            && let Ok(mut st) = self.db.prepare(&format!(
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
        self.before_write()?;
        let (cols, rows) = self.fetch(&sql, params)?;
        if first == "INSERT" {
            self.identity = Some(self.db.last_insert_rowid());
        }
        let columns: Vec<Column> = cols
            .iter()
            .enumerate()
            .map(|(i, (name, t))| {
                Column::new(
                    name,
                    t.or_else(|| types.get(&name.to_ascii_lowercase()).copied())
                        .unwrap_or_else(|| infer(&rows, i)),
                )
            })
            .collect();
        self.send_rows(&columns, &rows, out, r)
    }
}

/// Result columns that read a rowversion column as is carry SQL Server's UserType for it (80,
/// timestamp): Driver 18 then names the column's type `timestamp`.
fn with_timestamps(mut columns: Vec<Column>, origins: &[Option<Origin>]) -> Vec<Column> {
    for (c, o) in columns.iter_mut().zip(origins) {
        if o.as_ref().is_some_and(|o| o.rowversion) && c.ty == Ty::Binary(8) {
            c.user_type = token::USER_TYPE_TIMESTAMP;
        }
    }
    columns
}

/// SQL Server's name of each result column: its alias or column name, "" for an unnamed
/// expression (SQLite names those after their text). `items` are the SELECT list's candidate
/// names (`rewrite::select_names`); columns past them (`*` expansions) keep SQLite's name unless
/// it looks like expression text.
fn column_names(cols: &[(String, Option<Ty>)], items: &[Option<String>]) -> Vec<String> {
    cols.iter()
        .enumerate()
        .map(|(i, (name, _))| match items.get(i) {
            // As written in the query (SQL Server's header for `SELECT A` is "A").
            Some(Some(n)) if n.eq_ignore_ascii_case(name) => n.clone(),
            Some(_) => String::new(),
            None if looks_like_name(name) => name.clone(),
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
fn infer(rows: &[Vec<Value>], i: usize) -> Ty {
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

pub enum StmtErr {
    Io(io::Error),
    Sql(SqlError),
}

impl From<io::Error> for StmtErr {
    fn from(e: io::Error) -> Self {
        StmtErr::Io(e)
    }
}

impl From<SqlError> for StmtErr {
    fn from(e: SqlError) -> Self {
        StmtErr::Sql(e)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn printf_subset() {
        assert_eq!(
            super::printf("row %d of %s: 100%%", &["3".into(), "t".into()]),
            "row 3 of t: 100%"
        );
    }
}
