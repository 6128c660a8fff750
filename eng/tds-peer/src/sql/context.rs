//! What a statement handler may touch: the session's state and its SQLite connection
//! (`Context`), and the types every handler takes and returns (`Param`, `Out`, `Flow`,
//! `StmtErr`). Handlers are free functions over a `Context`; those that run other statements
//! (control flow, procedures, dynamic SQL) go through `Run`, which the engine implements.

use crate::resp::Resp;
use crate::result_cache::ResultCache;
use crate::sql::errors::{SqlError, from_sqlite};
use crate::sql::lexer::Tok;
use crate::sql::nullability::{self, Origin};
use crate::sql::rewrite::Ctx;
use crate::sql::{locks, schema, sysviews};
use crate::synthetic;
use crate::token::{self, Column, value};
use crate::types::Ty;
use rusqlite::Connection;
use rusqlite::types::Value;
use std::io;
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
    /// `--bulk-discard`: bulk loads are checked and counted, their rows not stored.
    pub bulk_discard: bool,
    /// `--insert-discard`: single INSERTs run by RPC are counted here, not stored.
    pub insert_discard: bool,
    pub inserts_discarded: std::sync::atomic::AtomicU64,
    /// Row locks and the writer slot between sessions (locks.rs).
    pub locks: crate::sql::locks::LockManager,
}

/// A batch-scoped variable.
#[derive(Clone, Debug)]
pub struct Var {
    pub name: String,
    pub ty: Ty,
    pub value: Value,
}

pub struct Context {
    pub(crate) db: Connection,
    pub(crate) shared: Arc<Shared>,
    pub(crate) spid: u16,
    /// Current database name (login's, then USE); the peer has one database whatever its name.
    pub(crate) database: String,
    /// Table variables in scope: (name, TEMP table, procedure depth that declared it).
    pub(crate) table_vars: Vec<(String, String, u32)>,
    /// See `Ctx::text_columns`: set for the statement being run.
    pub(crate) text_columns: Vec<String>,
    /// See `Ctx::dec_columns`: set for the statement being run.
    pub(crate) dec_columns: Vec<(String, Ty)>,
    pub(crate) nocount: bool,
    /// `SET FMTONLY ON`: a SELECT answers its column metadata and no rows (mssql-python's
    /// bulk copy reads a table's columns so).
    pub(crate) fmtonly: bool,
    pub(crate) rowcount: i64,
    pub(crate) identity: Option<i64>,
    /// Logical transaction (TM BEGIN / BEGIN TRAN) open.
    pub(crate) txn_open: bool,
    /// SQLite transaction actually started (lazily, before the first write) so that reads
    /// outside writes see other connections' commits (READ COMMITTED-like).
    pub(crate) sqlite_txn: bool,
    pub(crate) txn_id: u64,
    /// The open transaction's savepoints and name (savepoints.rs).
    pub(crate) saves: crate::sql::savepoints::Saves,
    /// Batch-scoped T-SQL variables (DECLARE) or the running procedure's parameters.
    pub(crate) vars: Vec<Var>,
    pub(crate) proc_depth: u32,
    /// `RETURN n` of the running procedure.
    pub(crate) return_status: Option<i32>,
    /// Inside BEGIN TRY: errors are caught instead of sent.
    pub(crate) try_depth: u32,
    pub(crate) caught: Option<SqlError>,
    /// The error a CATCH block handles (ERROR_MESSAGE() & co, THROW;).
    pub(crate) last_error: Option<SqlError>,
    /// The last DML statement rewritten to SQLite (tokens, declared parameters, SQLite text),
    /// kept only when the text does not depend on session state (@@IDENTITY, SCOPE_IDENTITY()…).
    pub(crate) rewritten: Option<(Vec<Tok>, Decl, String)>,
    /// Encoded results of repeated read-only SELECTs (result_cache.rs).
    pub(crate) results: ResultCache,
    /// Bumped at every BEGIN / COMMIT / ROLLBACK / reset: what a transaction showed is not
    /// what follows it, even when no row count moved.
    pub(crate) txn_epoch: u64,
    /// The `INSERT BULK` whose rows the next BULK LOAD message carries (bulkload.rs).
    pub(crate) bulk: Option<super::bulkplan::PendingLoad>,
    /// The table `SET IDENTITY_INSERT t ON` names (SQLite name): a bulk load keeps the
    /// identity values it sends only there.
    pub(crate) identity_insert: Option<String>,
    /// This session's row locks, written rows and place towards the writer (locks.rs).
    pub(crate) lk: crate::sql::locks::TxnLocks,
}

impl Drop for Context {
    /// A session that ends (closed, killed) rolls back and frees whatever it held.
    fn drop(&mut self) {
        if self.sqlite_txn {
            let _ = self.db.execute_batch("ROLLBACK");
        }
        self.shared.locks.end(self.spid);
    }
}

impl Context {
    /// The parameters' names and declared types, as the rewriter takes them.
    pub(crate) fn decl(params: &[Param]) -> Decl {
        params.iter().map(|p| (p.name.clone(), p.ty)).collect()
    }

    // ---- transactions -------------------------------------------------------------------

    pub fn begin(&mut self) -> Vec<u8> {
        self.txn_epoch += 1;
        self.txn_open = true;
        self.txn_id += 1;
        token::envchange_bytes(8, &self.txn_id.to_le_bytes(), &[])
    }

    pub(crate) fn end_txn(&mut self, commit: bool) -> Result<Vec<u8>, SqlError> {
        self.txn_epoch += 1;
        let old = if self.txn_open {
            self.txn_id.to_le_bytes().to_vec()
        } else {
            Vec::new()
        };
        locks::before_end(self, commit)?;
        let mut res = Ok(());
        if self.sqlite_txn {
            self.sqlite_txn = false;
            res = self
                .db
                .execute_batch(if commit { "COMMIT" } else { "ROLLBACK" })
                .map_err(|e| from_sqlite(&e));
        }
        locks::ended(self);
        self.saves.clear();
        self.txn_open = false;
        res?;
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

    /// Before a write other than INSERT/UPDATE/DELETE (those go through `locks::write`): the
    /// writer slot, and inside a transaction SQLite's write transaction, kept to the end.
    pub(crate) fn before_write(&mut self) -> Result<(), SqlError> {
        locks::before_other_write(self)
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
        self.bulk = None;
        self.identity_insert = None;
        self.lk.lock_timeout = -1;
        self.fmtonly = false;
        sysviews::reset_isolation();
        self.rowcount = 0;
        self.identity = None;
        self.vars.clear();
    }

    pub(crate) fn ctx<'a>(&self, decl: &'a [(String, Option<Ty>)]) -> Ctx<'a> {
        Ctx {
            params: decl,
            rowcount: self.rowcount,
            identity: self.identity,
            trancount: self.txn_open as i64,
            spid: self.spid,
            database: self.database.clone(),
            text_columns: self.text_columns.clone(),
            dec_columns: self.dec_columns.clone(),
            error: self.last_error.clone(),
            schemas: sysviews::user_schemas(&self.db),
        }
    }

    pub(crate) fn bind(stmt: &mut rusqlite::Statement, params: &[Param]) -> rusqlite::Result<()> {
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

    /// Runs DML. Cached: SQLite re-prepares a cached statement itself when the schema changed.
    pub(crate) fn exec(&mut self, sql: &str, params: &[Param]) -> Result<usize, StmtErr> {
        let mut stmt = self
            .db
            .prepare_cached(sql)
            .map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
        Self::bind(&mut stmt, params).map_err(|e| StmtErr::Sql(from_sqlite(&e)))?;
        stmt.raw_execute()
            .map_err(|e| StmtErr::Sql(from_sqlite(&e)))
    }

    /// Runs a query: (columns with names and declared types, rows).
    pub(crate) fn fetch(
        &mut self,
        sql: &str,
        params: &[Param],
    ) -> Result<(Decl, Vec<Vec<Value>>), StmtErr> {
        self.fetch_with_origins(sql, params)
            .map(|(cols, _, rows)| (cols, rows))
    }

    /// A table (not a view) of that SQLite name exists, temp ones included.
    pub(crate) fn is_table(&self, name: &str) -> bool {
        self.db.table_exists(None, name).unwrap_or(false)
    }

    /// `fetch`, with the table column each result column reads as is (`nullability::origins`).
    pub(crate) fn fetch_with_origins(
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
        let cols = schema::declared_columns(&stmt);
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

    pub(crate) fn send_rows(
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

/// Tracks DONE tokens so that every DONE but the batch's last carries DONE_MORE.
pub struct Out {
    pub(crate) in_proc: bool,
    pub(crate) pending: Option<(u16, u16, u64)>,
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

/// Whether the batch goes on after a statement.
pub enum Flow {
    Continue,
    Stop,
}

/// What the handlers that run other statements need from the engine: IF/WHILE bodies, TRY
/// blocks, procedure bodies and sp_executesql run statements through it.
pub trait Run: std::ops::DerefMut<Target = Context> {
    /// Runs one statement (its errors already sent or caught).
    fn statement(
        &mut self,
        toks: &[Tok],
        params: &[Param],
        out: &mut Out,
        r: &mut Resp,
    ) -> io::Result<Flow>;

    /// Runs the statements of a batch or procedure body.
    fn run_text(
        &mut self,
        sql: &str,
        params: &[Param],
        out: &mut Out,
        r: &mut Resp,
    ) -> io::Result<Flow>;
}

/// A statement's failure: the connection's (ends the batch) or SQL Server's (sent as ERROR).
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
