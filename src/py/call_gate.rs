//! One connection's driver calls from one thread at a time, for a driver that cannot take two
//! at once on one connection.
//!
//! SQLite3 ODBC (sqlite3odbc) keeps one connection-wide transaction flag and begins a
//! transaction inside a statement's execute when the flag is clear: four threads each with
//! their own cursor on one connection in manual-commit mode both saw the flag clear, and one
//! failed with `cannot start a transaction within a transaction`; on a loaded machine the same
//! test once ended the interpreter with a segmentation fault. Driver 18, FreeTDS and psqlODBC
//! lock their connections themselves (a second statement while results are pending is their
//! own error, e.g. "Connection is busy"), so for them the gate stands open.
//!
//! The gate is re-entrant per thread: a callback (output converter, row iterator) running
//! inside one of a thread's calls may use another cursor of the same connection. It is taken
//! before a cursor's own state and before the connection's lock, on every path, so the order
//! is always the same.

use pyo3::prelude::*;
use std::sync::{Condvar, Mutex, MutexGuard};

pub struct CallGate {
    /// Decided once, when the connection is opened.
    needed: bool,
    /// The thread inside (its token; 0: none) and how many times it entered.
    inside: Mutex<(usize, usize)>,
    free: Condvar,
}

impl CallGate {
    pub fn new(needed: bool) -> Self {
        CallGate {
            needed,
            inside: Mutex::new((0, 0)),
            free: Condvar::new(),
        }
    }

    /// Enter, waiting (GIL released) while another thread is inside.
    pub fn enter(&self, py: Python<'_>) -> GateGuard<'_> {
        if !self.needed {
            return GateGuard(None);
        }
        let me = thread_token();
        {
            let mut inside = self.lock();
            if inside.0 == 0 || inside.0 == me {
                *inside = (me, inside.1 + 1);
                return GateGuard(Some(self));
            }
        }
        py.detach(|| {
            let mut inside = self.lock();
            while inside.0 != 0 {
                inside = self.free.wait(inside).unwrap_or_else(|e| e.into_inner());
            }
            *inside = (me, 1);
        });
        GateGuard(Some(self))
    }

    fn lock(&self) -> MutexGuard<'_, (usize, usize)> {
        self.inside.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A per-thread token (the address of a thread-local): which thread is inside the gate, a
/// cursor's state (`cursor/state.rs`) or a bulk load's connection (`ConnShared::conn_holder`).
pub(crate) fn thread_token() -> usize {
    thread_local!(static TOKEN: u8 = const { 0 });
    TOKEN.with(|t| std::ptr::from_ref::<u8>(t) as usize)
}

/// Inside the gate until dropped.
pub struct GateGuard<'a>(Option<&'a CallGate>);

impl Drop for GateGuard<'_> {
    fn drop(&mut self) {
        if let Some(gate) = self.0 {
            let mut inside = gate.lock();
            inside.1 -= 1;
            if inside.1 == 0 {
                inside.0 = 0;
                gate.free.notify_one();
            }
        }
    }
}
