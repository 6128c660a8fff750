//! Which process an ODBC handle belongs to.
//!
//! After `fork()` the child holds copies of the parent's connection and statement handles, and
//! they share the parent's sockets. Anything the child does with them goes out on the parent's
//! session: a rollback, a logout (SQLDisconnect), an attention (SQLFreeHandle or SQLCancel on a
//! statement with pending rows) ended the parent's session in tests (Driver 18 and FreeTDS: the
//! parent's next fetch failed with 08S01). The prefetch thread of a statement does not exist in
//! the child either: waiting for it hung the child at exit. So every handle remembers the
//! process that made it ([`Owner`]); in any other process, dropping or closing it abandons it
//! (no driver call, the memory is the child's copy and goes with it) and the binding layer
//! refuses every other use. A child opens connections of its own.
//!
//! "Another process" is told by a counter a `pthread_atfork` child handler bumps: one atomic load
//! per check (the binding layer checks on every cursor call; `getpid()` is a system call).

use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};

/// Forks this process is removed from its first ancestor that loaded the engine: 0 there, 1 in
/// a child, 2 in a grandchild. Only the process's own value is ever compared with.
static FORKS: AtomicU64 = AtomicU64::new(0);

#[cfg(unix)]
unsafe extern "C" {
    fn pthread_atfork(
        prepare: Option<unsafe extern "C" fn()>,
        parent: Option<unsafe extern "C" fn()>,
        child: Option<unsafe extern "C" fn()>,
    ) -> std::ffi::c_int;
}

/// Runs in the forking thread just before `fork()`: ends the prefetch threads, so the process
/// forks with none of ours running (see `crate::prefetch`).
#[cfg(unix)]
unsafe extern "C" fn before_fork() {
    crate::prefetch::before_fork();
}

/// Runs in the parent right after `fork()`.
#[cfg(unix)]
unsafe extern "C" fn after_fork_in_parent() {
    crate::prefetch::after_fork();
}

/// Runs in the child right after `fork()`, with one thread: only atomic stores, which are
/// async-signal-safe.
#[cfg(unix)]
unsafe extern "C" fn after_fork_in_child() {
    FORKS.fetch_add(1, Ordering::SeqCst);
    crate::prefetch::after_fork();
}

/// Windows has no fork: nothing to watch.
#[cfg(not(unix))]
fn watch_forks() {}

#[cfg(unix)]
fn watch_forks() {
    static WATCH: Once = Once::new();
    WATCH.call_once(|| {
        // SAFETY: the handlers are plain functions with static lifetime; the child's and the
        // parent's only touch atomics, the prepare one runs before the fork like any code of
        // the forking thread. A failure (ENOMEM) leaves forks unnoticed: handles then behave as
        // before.
        let _ = unsafe {
            pthread_atfork(
                Some(before_fork),
                Some(after_fork_in_parent),
                Some(after_fork_in_child),
            )
        };
    });
}

/// The process a handle was made in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner(u64);

impl Owner {
    /// This process (and from now on, forks are counted).
    pub fn current() -> Owner {
        watch_forks();
        Owner(FORKS.load(Ordering::SeqCst))
    }

    /// Whether this is still the process the owner was taken in (false in a forked child).
    #[inline]
    pub fn is_current(self) -> bool {
        FORKS.load(Ordering::Relaxed) == self.0
    }
}

impl Default for Owner {
    fn default() -> Owner {
        Owner::current()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owner_is_current_in_its_own_process() {
        let owner = Owner::current();
        assert!(owner.is_current());
        assert_eq!(owner, Owner::default());
    }
}
