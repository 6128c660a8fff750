//! Executes T-SQL batches against the connection's SQLite database and streams the results as
//! TDS tokens with SQL Server's DONE/DONEINPROC conventions.

use crate::resp::Resp;
use crate::result_cache::ResultCache;
pub use crate::sql::context::{Context, Decl, Flow, Origins, Out, Param, Run, Shared, StmtErr};
use crate::sql::errors::SqlError;
use crate::sql::functions;
use crate::sql::lexer::{self, Tok, sig};
use crate::sql::statement::{self, Statement};
use crate::sql::{
    bulkload, control, ddl, dml, dynamic, locks, messages, procs, savepoints, select, sequences,
    settings, sysprocs, tabletypes, variables,
};
use crate::synthetic;
use rusqlite::{Connection, OpenFlags};
use std::io;
use std::rc::Rc;
use std::sync::Arc;

/// One connection's T-SQL engine: the session context the handlers work on, and what only
/// the batch and RPC layers keep (prepared handles, the last parsed batch).
pub struct Engine {
    pub cx: Context,
    pub handles: std::collections::HashMap<i32, (String, Decl)>,
    pub next_handle: i32,
    /// The last sp_executesql parameter declaration and its parse.
    pub declared: Option<(String, Decl)>,
    /// The last batch text and its statements: executemany sends the same text once per row,
    /// and tokenizing it again was the peer's largest allocator load.
    parsed: Option<(String, Rc<Vec<Vec<Tok>>>)>,
}

/// The engine is its context to the layers above (session.rs, rpc.rs read and set the state,
/// begin/commit/reset through it) and to the handlers that run statements (`Run` hands them
/// the engine, and they reach the context through it).
impl std::ops::Deref for Engine {
    type Target = Context;
    fn deref(&self) -> &Context {
        &self.cx
    }
}

impl std::ops::DerefMut for Engine {
    fn deref_mut(&mut self) -> &mut Context {
        &mut self.cx
    }
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
        db.execute_batch(tabletypes::TYPES_TABLE)?;
        db.execute_batch(super::checks::TABLE)?;
        // executemany arrives as one RPC per row with the same text: re-parsing it in SQLite was
        // a third of the peer's CPU for 10,000 inserts, and the peer (not the client) set the pace.
        db.set_prepared_statement_cache_capacity(64);
        let lk = locks::TxnLocks::new(&db);
        Ok(Engine {
            cx: Context {
                db,
                spid,
                database: "master".into(),
                text_columns: Vec::new(),
                dec_columns: Vec::new(),
                table_vars: Vec::new(),
                nocount: false,
                fmtonly: false,
                rowcount: 0,
                identity: None,
                txn_open: false,
                sqlite_txn: false,
                txn_id: 0,
                saves: Default::default(),
                vars: Vec::new(),
                proc_depth: 0,
                return_status: None,
                try_depth: 0,
                caught: None,
                last_error: None,
                rewritten: None,
                results: ResultCache::new(shared.result_cache_bytes),
                txn_epoch: 0,
                bulk: None,
                identity_insert: None,
                lk,
                shared,
            },
            handles: Default::default(),
            next_handle: 1,
            declared: None,
            parsed: None,
        })
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
        let res = self.run_batch_text(sql, params, &mut out, r);
        tabletypes::drop_table_vars(&mut self.cx, 0);
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
    fn run_batch_text(
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
                let stmts = Rc::new(if statement::is_create_proc(&toks) {
                    vec![toks]
                } else {
                    lexer::split(&toks)
                });
                self.parsed = Some((sql.to_string(), Rc::clone(&stmts)));
                stmts
            }
        };
        for stmt in stmts.iter() {
            if let Flow::Stop = self.run_statement(stmt, params, out, r)? {
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

    /// Runs one statement: session-dependent token substitutions, then the handler of what
    /// `statement::classify` says it is.
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
                .any(|t| matches!(t, Tok::Var(v) if tabletypes::table_var(&self.cx, v).is_some()))
        {
            substituted = toks
                .iter()
                .map(|t| match t {
                    Tok::Var(v) => tabletypes::table_var(&self.cx, v)
                        .map_or_else(|| t.clone(), |temp| Tok::Word(temp.to_string())),
                    _ => t.clone(),
                })
                .collect();
            toks = &substituted;
        }
        // NEXT VALUE FOR a sequence: its value, taken now (sequences.rs).
        let with_values: Vec<Tok>;
        if let Some(t) = sequences::next_values(&mut self.cx, toks)? {
            with_values = t;
            toks = &with_values;
        }
        let (stmt, toks) = statement::classify(toks, |name| procs::lookup_proc(&self.cx, name));
        if !matches!(stmt, Statement::EndTran { .. }) {
            // A transaction that yielded the writer takes it back to see its own writes.
            locks::before_statement(&mut self.cx, &mut || r.io.poll_attention() || r.io.closed)?;
        }
        match stmt {
            Statement::TryCatch => return control::try_catch(self, toks, params, out, r),
            Statement::Block => return control::run_body(self, toks, params, out, r),
            _ => {}
        }
        let merged: Vec<Param>;
        let params: &[Param] = if self.vars.is_empty() {
            params
        } else {
            merged = params
                .iter()
                .cloned()
                .chain(variables::vars_as_params(&self.cx))
                .collect();
            &merged
        };
        self.dispatch(stmt, toks, params, out, r)
    }

    /// One arm per kind of statement: the handler that runs it.
    fn dispatch(
        &mut self,
        stmt: Statement<(String, String)>,
        toks: &[Tok],
        params: &[Param],
        out: &mut Out,
        r: &mut Resp,
    ) -> Result<Flow, StmtErr> {
        let cx = &mut self.cx;
        match stmt {
            Statement::Empty => Ok(Flow::Continue),
            Statement::Save => savepoints::save(cx, toks),
            Statement::TryCatch => control::try_catch(self, toks, params, out, r),
            Statement::Block => control::run_body(self, toks, params, out, r),
            Statement::Declare => variables::declare(cx, toks, params),
            Statement::SetVariable => variables::set_statement(cx, toks, params),
            Statement::SelectAssign => variables::select_assign(cx, toks, params),
            Statement::Return => control::return_statement(cx, toks, params),
            Statement::CreateProc => procs::create_proc(cx, toks),
            Statement::DropProc => procs::drop_proc(cx, &sig(toks)),
            Statement::ExecuteSql { args } => {
                control::exec_executesql(self, &toks[args..], params, out, r)
            }
            Statement::ExecDynamic { open } => {
                dynamic::exec_dynamic(self, toks, open, params, out, r)
            }
            Statement::ExecProc { name, def, args } => {
                control::exec_stored(self, &name, def, &toks[args..], params, out, r)
            }
            Statement::Select => select::select(cx, toks, params, out, r),
            Statement::Query => {
                let decl = Context::decl(params);
                select::query(cx, toks, &decl, params, out, r)
            }
            Statement::InsertBulk => bulkload::insert_bulk(cx, toks),
            Statement::Dml { kind, output } => dml::dml(cx, toks, kind, output, params, out, r),
            Statement::TypeDdl { create: true } => tabletypes::create_type(cx, toks),
            Statement::TypeDdl { create: false } => tabletypes::drop_type(cx, &sig(toks)),
            Statement::SchemaDdl => tabletypes::schema_ddl(cx, &sig(toks)),
            Statement::SequenceDdl => sequences::sequence_ddl(cx, &sig(toks)),
            Statement::Ddl => ddl::ddl(cx, toks, params),
            Statement::DropTableIfExists { drop } => {
                ddl::drop_table_if_exists(cx, toks, drop, params)
            }
            Statement::Set => settings::set(cx, toks),
            Statement::Print => messages::print(cx, toks, params, out, r),
            Statement::Raiserror => {
                let decl = Context::decl(params);
                messages::raiserror(cx, toks, &decl, params, out, r)
            }
            Statement::Throw => messages::throw(cx, toks, out, r),
            Statement::BeginTran => savepoints::begin_tran(cx, toks, out, r),
            Statement::EndTran { rollback } => savepoints::end_tran(cx, toks, rollback, out, r),
            Statement::Use => settings::use_database(cx, toks, out, r),
            Statement::Kill => settings::kill(cx, toks),
            Statement::Waitfor => settings::waitfor(toks, out, r),
            Statement::If => control::if_statement(self, toks, params, out, r),
            Statement::While => control::while_statement(self, toks, params, out, r),
            Statement::ExecSystem { name } => {
                sysprocs::exec_system(cx, &toks[name..], params, out, r)
            }
            Statement::Unsupported(word) => Err(StmtErr::Sql(SqlError::unsupported(&word))),
        }
    }

    /// A BULK LOAD message (packet type 0x07): the rows of the pending `INSERT BULK`.
    pub fn bulk_load(
        &mut self,
        message: crate::bulk::BulkMessage<'_>,
        r: &mut Resp,
    ) -> io::Result<()> {
        let res = bulkload::load(&mut self.cx, message, r);
        locks::after_statement(&mut self.cx);
        res
    }

    /// After each request: an autocommit session holds no writer.
    pub fn request_done(&mut self) {
        locks::after_statement(&mut self.cx);
    }

    /// Between requests: a session whose transaction holds SQLite's writer watches for
    /// another session asking for it (and yields) while it waits for its client.
    pub fn idle(&mut self, io: &mut crate::io::Io) {
        while self.lk.writer && self.txn_open && !self.lk.pinned {
            if io.wait_readable(std::time::Duration::from_millis(10)) {
                return;
            }
            locks::yield_if_wanted(&mut self.cx, true);
        }
        io.end_waits();
    }

    /// A stored procedure by name: its parameter list and body (procs.rs).
    pub fn lookup_proc(&self, name: &str) -> Option<(String, String)> {
        procs::lookup_proc(&self.cx, name)
    }

    /// An RPC of a stored procedure by name (control.rs).
    pub fn call_proc_rpc(
        &mut self,
        name: &str,
        def: (String, String),
        params: &[Param],
        more: bool,
        handle: Option<i32>,
        r: &mut Resp,
    ) -> io::Result<()> {
        control::call_proc_rpc(self, name, def, params, more, handle, r)
    }

    /// An RPC of a system procedure (sysprocs.rs).
    pub fn call_system_rpc(
        &mut self,
        name: &str,
        params: &[Param],
        more: bool,
        r: &mut Resp,
    ) -> io::Result<()> {
        sysprocs::call_system_rpc(&mut self.cx, name, params, more, r)
    }

    fn run_statement(
        &mut self,
        toks: &[Tok],
        params: &[Param],
        out: &mut Out,
        r: &mut Resp,
    ) -> io::Result<Flow> {
        let faults = crate::faults::of_statement(toks);
        if let Some(f) = &faults {
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
        locks::yield_if_wanted(&mut self.cx, false);
        let res = self.statement_inner(toks, params, out, r);
        super::hostile::after_statement(faults.as_ref(), out);
        locks::after_statement(&mut self.cx);
        if !matches!(res, Err(StmtErr::Sql(_)))
            && let Some(env) = self.lk.pending_env.take()
        {
            out.emit(r, &env)?;
        }
        match res {
            Ok(f) => Ok(f),
            Err(StmtErr::Io(e)) => Err(e),
            Err(StmtErr::Sql(e)) if e.number == locks::CANCELLED => {
                // ATTENTION while waiting for a lock: the statement did not run.
                out.cancelled(r)?;
                Ok(Flow::Stop)
            }
            Err(StmtErr::Sql(e)) if self.try_depth > 0 => {
                // BEGIN TRY: the CATCH block handles it; nothing reaches the client.
                self.caught = Some(e);
                Ok(Flow::Stop)
            }
            Err(StmtErr::Sql(e)) => {
                if let Some(env) = self.lk.pending_env.take() {
                    // A deadlock victim's transaction was rolled back.
                    out.emit(r, &env)?;
                }
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
                // A deadlock victim's batch ends with its transaction.
                Ok(if compile || matches!(e.number, 245 | 2812 | 1205) {
                    Flow::Stop
                } else {
                    Flow::Continue
                })
            }
        }
    }
}

impl Run for Engine {
    fn statement(
        &mut self,
        toks: &[Tok],
        params: &[Param],
        out: &mut Out,
        r: &mut Resp,
    ) -> io::Result<Flow> {
        self.run_statement(toks, params, out, r)
    }

    fn run_text(
        &mut self,
        sql: &str,
        params: &[Param],
        out: &mut Out,
        r: &mut Resp,
    ) -> io::Result<Flow> {
        self.run_batch_text(sql, params, out, r)
    }
}
