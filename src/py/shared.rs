//! What a connection and its cursors share ([`ConnShared`]): the driver connection behind its
//! lock, the settings that shape decoding and executes, the list of live cursors, and the loss
//! of the link, noted once and seen by every cursor.

use super::call_gate::{CallGate, GateGuard};
use super::cursor::state::CursorCell;
use super::errors::interface;
use crate::backend::Dbms;
use crate::types::text::TextErrors;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, Weak};

/// State shared by a connection and its cursors.
pub struct ConnShared {
    /// Statements of cursors dropped by the garbage collector, freed by the next call on the
    /// connection or its cursors (on that call's thread, before it) or when it closes. Freeing one
    /// from whichever thread the collector ran on could enter the driver beside another
    /// thread's call on the same connection: through FreeTDS, an `ferrodbc.aio` cancel race
    /// hung there (the event loop's collector freeing an old cursor's statement while the
    /// connection's worker thread executed and a cancel thread called SQLCancel). Declared
    /// before `conn`, so a connection dropped without `close()` frees them first.
    pub orphans: Mutex<Vec<crate::statement::Statement>>,
    pub conn: Mutex<Option<crate::Connection>>,
    pub closed: AtomicBool,
    /// Bumped by every change that shapes decoding (output converters, decode errors policy,
    /// connection loss): cursors rebuild their Python plan when it moves.
    pub generation: AtomicU64,
    pub converters: Mutex<HashMap<i16, Py<PyAny>>>,
    pub text_errors: Mutex<TextErrors>,
    /// Every live cursor of the connection (a cursor leaves the list when it is dropped).
    pub cursors: Mutex<Vec<Weak<CursorCell>>>,
    pub dbms: Dbms,
    /// Query timeout in seconds for executes (0 = none).
    pub timeout: AtomicUsize,
    /// Largest value (bytes) a cursor reads whole with SQLGetData; 0 = no limit.
    pub max_lob_bytes: AtomicUsize,
    /// uniqueidentifier as `uuid.UUID` (default) or upper-case `str` (pyodbc's old default).
    pub native_uuid: AtomicBool,
    /// The link died (a communication-link error was seen): every later call on this
    /// connection's cursors is an OperationalError, not whatever state the driver is left in.
    pub lost: AtomicBool,
    /// The connection string this connection returns to the pool under on close (pooling on and
    /// a poolable session); `None`: close disconnects.
    pub pool_key: Option<String>,
    /// The connection string with its secrets replaced (`PWD=***`): the only form a repr shows.
    pub shown: String,
    /// pyodbc settings with no engine meaning of their own (decimal_mode, readvar_initsize, ...).
    pub compat: Mutex<super::compat::ConnCompat>,
    /// The `row_factory` new cursors start with.
    pub row_factory: Mutex<Option<Py<PyAny>>>,
    /// `hook(exception) -> exception`, applied to the errors of this connection's fetches (the
    /// `mssql_python` face: its exception classes); None: ferrodbc's errors as they are.
    pub error_hook: Mutex<Option<Py<PyAny>>>,
    /// The thread of a bulk load that holds `conn` while it runs Python code (the rows'
    /// iterator, `progress`); 0: none. A call on the connection from that code would wait for
    /// the lock its own thread holds, so it is refused instead.
    pub conn_holder: AtomicUsize,
    /// The process that opened the connection. In a forked child every use raises; closing or
    /// dropping it there sends nothing (the session and its socket are the parent's).
    pub owner: crate::process::Owner,
    /// Driver calls one thread at a time, where the driver needs that (SQLite3 ODBC).
    pub calls: CallGate,
}

impl ConnShared {
    /// `err`, or what the connection's `error_hook` makes of it (see `error_hook`). Called on
    /// the error path only; a hook that raises gives its own exception.
    #[cold]
    pub fn hooked(&self, py: Python<'_>, err: PyErr) -> PyErr {
        let hook = self
            .error_hook
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|h| h.clone_ref(py));
        let Some(hook) = hook else { return err };
        match hook.call1(py, (err.value(py),)) {
            Ok(value) => PyErr::from_value(value.into_bound(py)),
            Err(raised) => raised,
        }
    }

    /// Free the statements of dropped cursors (GIL released: freeing one may wait for its
    /// prefetch thread).
    pub fn free_orphans(&self, py: Python<'_>) {
        let orphans = std::mem::take(&mut *self.orphans.lock().unwrap_or_else(|e| e.into_inner()));
        if !orphans.is_empty() {
            py.detach(move || drop(orphans));
        }
    }

    pub fn bump(&self) {
        self.generation.fetch_add(1, Ordering::Relaxed);
    }
    /// Note a connection loss in `e` (the plan generation moves, later calls fail fast).
    pub fn track(&self, e: crate::Error) -> crate::Error {
        let e = self.dead_link_named(e);
        if e.is_connection_loss() {
            self.lost.store(true, Ordering::Release);
            self.bump();
        }
        e
    }

    /// A driver error that says nothing of the link while the driver now reports the connection
    /// dead (FreeTDS after a killed session: HY000 "Unknown error"): the loss is added as a last
    /// 08S01 record, so the error is the OperationalError of a lost link. `try_lock`: a
    /// connection busy in another thread is not waited for (the error then stays as it is).
    fn dead_link_named(&self, e: crate::Error) -> crate::Error {
        match e {
            crate::Error::Odbc {
                function,
                mut records,
            } if !records.is_empty() && !crate::Error::is_loss_records(&records) => {
                let dead = self
                    .conn
                    .try_lock()
                    .ok()
                    .is_some_and(|c| c.as_ref().is_some_and(|c| c.is_dead()));
                if dead {
                    records.push(crate::odbc::Diagnostic {
                        sqlstate: "08S01".into(),
                        native_error: 0,
                        message: "[ferrodbc] the driver reports the connection dead (SQL_ATTR_CONNECTION_DEAD)".into(),
                    });
                }
                crate::Error::Odbc { function, records }
            }
            other => other,
        }
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// InterfaceError in a forked child (see `crate::process`): the connection is the parent's.
    pub fn check_process(&self) -> PyResult<()> {
        if self.owner.is_current() {
            return Ok(());
        }
        Err(interface(
            "This connection was opened before os.fork(), by the parent process: a child must \
             open connections of its own (using this one would interleave its requests with the \
             parent's on the same socket).",
        ))
    }

    /// The driver connection, waited for with the GIL released; a ProgrammingError when this
    /// thread already holds it for a bulk load (`conn_holder`), instead of waiting for itself.
    pub fn lock_conn<'a>(&'a self, py: Python<'_>) -> PyResult<ConnGuard<'a>> {
        if self.conn_holder.load(Ordering::Acquire) == super::cursor::state::thread_token() {
            return Err(super::errors::programming(
                "The connection is busy: a bulk load on one of its cursors is running the callback \
                 (its rows' iterator or progress) that used it.",
            ));
        }
        let gate = self.calls.enter(py);
        self.free_orphans(py);
        let conn = self
            .conn
            .lock_py_attached(py)
            .unwrap_or_else(|e| e.into_inner());
        Ok(ConnGuard { conn, _gate: gate })
    }
}

/// The driver connection, locked, inside the connection's [`CallGate`].
pub struct ConnGuard<'a> {
    conn: MutexGuard<'a, Option<crate::Connection>>,
    _gate: GateGuard<'a>,
}

impl std::ops::Deref for ConnGuard<'_> {
    type Target = Option<crate::Connection>;
    fn deref(&self) -> &Self::Target {
        &self.conn
    }
}

impl std::ops::DerefMut for ConnGuard<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.conn
    }
}
