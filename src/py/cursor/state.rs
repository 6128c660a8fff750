//! A cursor's state behind its one mutex ([`CursorState`]), the cell that holds it with the
//! thread inside it ([`CursorCell`]), and the guard that clears that thread on unlock. The
//! connection keeps weak references to the cells of its cursors (closing it frees their
//! statements), so this lives apart from the `Cursor` class, which refers to the connection.

use crate::params::InputSize;
pub(crate) use crate::py::call_gate::thread_token;
use crate::py::output::Output;
use crate::py::plan::PyPlan;
use crate::py::shape::RowShape;
use crate::statement::Statement;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Everything a cursor changes while it works, behind one mutex.
#[derive(Default)]
pub struct CursorState {
    pub(super) stmt: Option<Statement>,
    /// The Python half of the current result set's plan (decoders, row schema); shared with
    /// the lazy rows fetched under it.
    pub(super) plan: Option<Arc<PyPlan>>,
    /// What `row_factory` resolved to for the current result set: chosen at its first fetch,
    /// forgotten when the result set changes, chosen again when the factory does.
    pub(super) shape: Option<RowShape>,
    /// The cursor's `row_factory_version` when `shape` was chosen.
    pub(super) shape_version: u64,
    pub(super) closed: bool,
    pub(super) input_sizes: Vec<InputSize>,
    /// An error found after some rows were already delivered: raised by the next fetch.
    pub(super) pending: Option<PyErr>,
    pub(super) applied_timeout: usize,
    pub(super) applied_max_lob_bytes: usize,
    /// `Output` parameters of the last execute, by parameter index: filled when its last result
    /// set has been read.
    pub(super) outputs: Vec<(usize, Py<Output>)>,
    /// The current result set came from a catalog function: its column names are given in
    /// lower case (pyodbc does, so `row.column_name` works on every driver).
    pub(super) catalog_result: bool,
    /// Whether `plan` was built with lower-case names.
    pub(super) plan_lowercase: bool,
}

impl CursorState {
    /// The last execute's results are gone: its unfilled outputs never will be.
    pub(super) fn discard_outputs(&mut self) {
        for (_, out) in self.outputs.drain(..) {
            out.get().discard();
        }
    }

    /// Give up the statement (connection close): the cursor is unusable afterwards. The caller
    /// drops the statement with the GIL released: freeing it waits for a running prefetch and
    /// calls the driver.
    #[must_use = "drop the statement with the GIL released"]
    pub fn release(&mut self) -> Option<Statement> {
        self.discard_outputs();
        self.plan = None;
        self.shape = None;
        self.closed = true;
        self.stmt.take()
    }
}

/// A cursor's state and the thread inside it. The connection holds a weak reference to each of
/// its cursors' cells: closing it frees their statements, and must not wait on a cell this very
/// thread holds (a callback of that cursor is running).
pub struct CursorCell {
    pub(super) state: Mutex<CursorState>,
    /// Token of the thread holding `state` (0: none). A Python callback run while the cursor
    /// works (an output converter) may touch the same cursor: that must be an error, not a
    /// self-deadlock on `state`.
    pub(super) owner: AtomicUsize,
}

impl CursorCell {
    /// Whether this thread holds the state: one of the cursor's calls is running a callback.
    pub fn held_by_this_thread(&self) -> bool {
        self.owner.load(Ordering::Acquire) == thread_token()
    }

    /// The state, waiting (GIL released) for a call running on another thread.
    pub fn lock_state(&self, py: Python<'_>) -> MutexGuard<'_, CursorState> {
        self.state
            .lock_py_attached(py)
            .unwrap_or_else(|e| e.into_inner())
    }
}

/// `state`, locked by this thread; clears the owner token before unlocking.
pub(super) struct Guard<'a> {
    pub(super) inner: MutexGuard<'a, CursorState>,
    pub(super) owner: &'a AtomicUsize,
    /// Taken before `inner` (see `call_gate`); released after it.
    pub(super) _gate: crate::py::call_gate::GateGuard<'a>,
}

impl std::ops::Deref for Guard<'_> {
    type Target = CursorState;
    fn deref(&self) -> &CursorState {
        &self.inner
    }
}

impl std::ops::DerefMut for Guard<'_> {
    fn deref_mut(&mut self) -> &mut CursorState {
        &mut self.inner
    }
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        self.owner.store(0, Ordering::Release);
    }
}
