//! Stopping a statement from another thread ([`CancelHandle`]: `SQLCancel` under a lock that
//! proves the handle is still allocated, or a cooperative request for drivers whose cancel is
//! not safe mid-call), and lending the handle to the prefetch thread for one fetch
//! ([`FetchLease`]).
//!
//! FreeTDS (cooperative) and its lost wakeup (issue 36 item 5). A cross-thread `SQLCancel` that
//! finds FreeTDS's executing thread outside its network loop writes the ATTENTION itself and
//! leaves the executing thread waiting for ever on a condition nobody signals. On Linux x86_64
//! `SQLCancel` is therefore only called while the executing thread is *held* inside the `poll`
//! of that loop ([`park`]: a thread-directed signal whose handler checks the interrupted
//! context and holds the thread until `SQLCancel` returned): FreeTDS then only wakes it, and
//! it sends the ATTENTION itself. A cancel that cannot hold the thread within
//! [`NETWORK_WAIT_LIMIT`] (it never waits for the server: a long local computation) is
//! recorded and acted on between driver calls, never sent into a parse.
//!
//! What is left: elsewhere (other architectures, or no free real-time signal) the older gate
//! applies (a 100 ms grace, then the thread seen in `poll` and looked at again under the
//! lock): it narrows the window to microseconds but does not close it. Fetches stay
//! cooperative on FreeTDS (a cancel mid-`SQLFetch` corrupted its heap in session 1; not
//! re-examined with holding). The hold relies on FreeTDS waiting in `poll` only inside its
//! network loop during an execute (true of 1.3's MARS build: `tds_select` is called from
//! `tds_connection_network` only once logged in) and on `tds_select` retrying `EINTR`.

mod park;

use super::call::Outcome;
use super::diag::Diagnostic;
use super::diag::read_diagnostics;
use crate::counters;
use crate::error::{Error, Result};
use crate::process::Owner;
use odbc_api::sys::{self, HStmt, HandleType};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long a cooperative driver's execute runs before another thread's cancel reaches it as a
/// real `SQLCancel`. FreeTDS 1.3 (built with MARS support, as Debian's is) lets the cancelling
/// thread write the ATTENTION itself when the executing thread is not inside its network loop
/// (still writing the request, or parsing a packet); the executing thread that then asks for
/// the next packet waits on a condition nobody signals, forever (seen 1 round in ~10 of
/// `test_cancel_racing_the_last_row`, gdb: `SQLExecDirectW` in `pthread_cond_wait`; FreeTDS's
/// `tds_connection_network` clears `in_net_tds` without waking waiters, still so upstream).
/// Past the first moments of an execute its thread waits for the server inside that loop, where
/// a cancel only wakes it up and it sends the ATTENTION itself.
const COOPERATIVE_EXECUTE_GRACE: Duration = Duration::from_millis(100);

/// How long a cooperative cancel waits for the executing thread to be seen blocked in its
/// network wait (below) before it sends the cancel anyway.
const NETWORK_WAIT_LIMIT: Duration = Duration::from_millis(250);

/// The system calls of a thread blocked waiting for its socket: FreeTDS's `tds_select` (poll,
/// ppoll; select and pselect6 for builds without poll). Only FreeTDS's network loop waits
/// there, holding the connection's network (`in_net_tds`): a `SQLCancel` then only wakes it,
/// and it sends the ATTENTION itself. None known: no check (the grace above is all there is).
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
const NETWORK_WAIT_SYSCALLS: &[u64] = &[7, 271, 23, 270];
#[cfg(all(target_os = "linux", target_arch = "aarch64"))]
const NETWORK_WAIT_SYSCALLS: &[u64] = &[73, 72];
#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
const NETWORK_WAIT_SYSCALLS: &[u64] = &[];

/// This thread's id (Linux: from `/proc/thread-self`, no libc needed); 0 when unknown.
fn current_tid() -> u64 {
    std::fs::read_link("/proc/thread-self")
        .ok()
        .and_then(|p| p.file_name()?.to_str()?.parse().ok())
        .unwrap_or(0)
}

/// Whether thread `tid` of this process is blocked in a network wait (see
/// [`NETWORK_WAIT_SYSCALLS`]); true when that cannot be known (no list, no tid, no /proc), so
/// the caller goes on as before.
fn blocked_in_network_wait(tid: u64) -> bool {
    if NETWORK_WAIT_SYSCALLS.is_empty() || tid == 0 {
        return true;
    }
    // "<syscall number> <args...>" while blocked in a call, "running" or "-1 ..." otherwise.
    match std::fs::read_to_string(format!("/proc/self/task/{tid}/syscall")) {
        Ok(text) => text
            .split_whitespace()
            .next()
            .and_then(|n| n.parse::<u64>().ok())
            .is_some_and(|n| NETWORK_WAIT_SYSCALLS.contains(&n)),
        Err(_) => true,
    }
}

/// With `FERRODBC_TRACE_CANCEL` set, how each cooperative cancel ended goes to stderr (one
/// line each: "held", "recorded", "after the execute"): the evidence that the racing-cancel
/// tests reach the held path (tests/sqlserver/test_sqlserver_aio.py). Nothing else is printed.
fn trace(outcome: &str) {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *ON.get_or_init(|| std::env::var_os("FERRODBC_TRACE_CANCEL").is_some()) {
        eprintln!("ferrodbc cancel: {outcome}");
    }
}

/// Test hook: with `FERRODBC_CANCEL_DELAY_MS=N` in the environment, a cancel that records a
/// request holds it N ms before it goes on to `SQLCancel`, still under the handle's lock (as a
/// cancelling thread descheduled under load would), after saying so on stderr ("ferrodbc
/// cancel: recorded, delaying N ms"): the statement's own thread then runs into a request whose
/// `SQLCancel` has not returned, at a point the test chooses (tests/sqlserver/
/// test_sqlserver_cancel_points.py). Unset (always, outside those tests): nothing.
fn delay_for_tests() {
    static DELAY: std::sync::OnceLock<Option<Duration>> = std::sync::OnceLock::new();
    let delay = DELAY.get_or_init(|| {
        let ms = std::env::var("FERRODBC_CANCEL_DELAY_MS").ok()?;
        ms.trim().parse().ok().map(Duration::from_millis)
    });
    if let Some(d) = *delay {
        eprintln!("ferrodbc cancel: recorded, delaying {} ms", d.as_millis());
        std::thread::sleep(d);
    }
}

/// Shared, lockable access to the raw statement handle for `SQLCancel` from another thread.
/// The statement sets it to `None` before it frees the handle, under the same lock, so a cancel
/// can never reach a freed handle.
#[derive(Clone, Default)]
pub struct CancelHandle {
    pub(super) handle: Arc<Mutex<Option<RawStmt>>>,
    /// `cancel()` was called since the last execute.
    requested: Arc<AtomicBool>,
    /// Only record requests outside executes (see `set_cooperative`).
    cooperative: Arc<AtomicBool>,
    /// When the running execute started (`None` outside executes), and the signal of its end.
    /// Kept for cooperative drivers only, the only ones whose cancel asks (see
    /// [`COOPERATIVE_EXECUTE_GRACE`]).
    execute_started: Arc<(Mutex<Option<Instant>>, Condvar)>,
    /// The thread running the execute (cooperative drivers only; 0: none or unknown).
    execute_tid: Arc<AtomicU64>,
    /// The process the statement was allocated in: a forked child never cancels it (an
    /// attention on the socket it shares with the parent would cancel the parent's call).
    pub(super) owner: Owner,
}

/// A statement handle lent to another thread for one `SQLFetch` (the next row array, fetched
/// while the owner decodes the previous one). Made by [`Stmt::lend_for_fetch`], whose contract
/// keeps every other call off the handle until that thread is joined.
pub struct FetchLease {
    pub(super) handle: RawStmt,
    pub(super) cancel: CancelHandle,
}

impl FetchLease {
    /// `SQLFetch` into the bound buffers, and the diagnostic records when the driver left some
    /// (anything but plain success or no data). `None` when a (cooperative) cancel is pending:
    /// the fetch is not started.
    pub fn fetch(&self) -> Option<(Outcome, Vec<Diagnostic>)> {
        if self.cancel.is_requested() {
            return None;
        }
        counters::bump(&counters::FETCH_CALLS);
        let h = self.handle.0;
        // SAFETY: the lease's contract: the handle is allocated, its bound buffers alive, and
        // no other call runs on it.
        let outcome = Outcome::from_ret(unsafe { sys::SQLFetch(h) });
        let records = match outcome {
            Outcome::Success | Outcome::NoData => Vec::new(),
            _ => read_diagnostics(HandleType::Stmt, h.as_handle()),
        };
        Some((outcome, records))
    }
}

#[derive(Clone, Copy)]
pub(super) struct RawStmt(pub(super) HStmt);
// SAFETY: SQLCancel is the one ODBC call allowed concurrently with another call on the same
// statement; the handle is only used while the mutex proves it is still allocated.
unsafe impl Send for RawStmt {}

impl CancelHandle {
    /// Cancel cooperatively: only record the request; the thread running the statement acts on
    /// it between driver calls. For drivers whose SQLCancel is not safe against a call running
    /// on another thread: FreeTDS 1.3 hung in SQLFetch or corrupted its heap (glibc malloc
    /// assertion, through pyodbc too) when cancelled mid-fetch against the TDS peer.
    pub fn set_cooperative(&self, on: bool) {
        self.cooperative.store(on, Ordering::SeqCst);
    }

    /// Mark the statement as inside an execute (where even a cooperative driver takes a real
    /// SQLCancel, after [`COOPERATIVE_EXECUTE_GRACE`]: FreeTDS interrupts a stalled execute
    /// fine, pyodbc does the same) or not. Changed under the handle's lock, so a cancel never
    /// straddles the transition.
    pub(super) fn set_executing(&self, on: bool) {
        if !self.cooperative.load(Ordering::Relaxed) {
            return;
        }
        let _guard = self.handle.lock().unwrap_or_else(|e| e.into_inner());
        let (started, ended) = &*self.execute_started;
        self.execute_tid
            .store(if on { current_tid() } else { 0 }, Ordering::SeqCst);
        *started.lock().unwrap_or_else(|e| e.into_inner()) = on.then(Instant::now);
        if !on {
            ended.notify_all();
        }
    }

    /// Whether the statement is inside an execute (cooperative drivers only).
    fn executing(&self) -> bool {
        let (started, _) = &*self.execute_started;
        started.lock().unwrap_or_else(|e| e.into_inner()).is_some()
    }

    /// Wait (at most [`COOPERATIVE_EXECUTE_GRACE`]) until the running execute has run past its
    /// first moments or ended.
    fn wait_out_execute_start(&self) {
        let (started, ended) = &*self.execute_started;
        let mut since = started.lock().unwrap_or_else(|e| e.into_inner());
        while let Some(t) = *since {
            let Some(left) = COOPERATIVE_EXECUTE_GRACE.checked_sub(t.elapsed()) else {
                return;
            };
            since = ended
                .wait_timeout(since, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Wait (at most [`NETWORK_WAIT_LIMIT`]) until the executing thread is blocked waiting for
    /// the server inside FreeTDS's network loop, or the execute ended. FreeTDS 1.3 loses the
    /// executing thread's wakeup when a cross-thread cancel finds nobody in that loop (the
    /// thread is writing its request or parsing a packet): the cancelling thread then sends the
    /// ATTENTION itself, and the executing thread asking for its next packet meanwhile waits
    /// for ever. Seen blocked in poll, the thread holds the loop (it leaves it only after a
    /// packet arrived and was queued, microseconds), so the cancel only wakes it.
    fn wait_for_network_wait(&self, until: Instant) {
        while self.executing() && Instant::now() < until {
            if blocked_in_network_wait(self.execute_tid.load(Ordering::SeqCst)) {
                return;
            }
            std::thread::sleep(Duration::from_micros(500));
        }
    }

    /// A cooperative cancel that calls `SQLCancel` only while the executing thread is held in
    /// its network wait (see [`park`]): then FreeTDS's `tds_send_cancel` only wakes that thread,
    /// which sends the ATTENTION itself, and it never runs while the thread parses a packet.
    /// Outside an execute, or when the thread is not seen waiting within
    /// [`NETWORK_WAIT_LIMIT`], the request is only recorded (acted on between driver calls).
    /// `None` where holding is unsupported (the caller's older gate applies).
    fn cancel_held(&self) -> Option<Result<()>> {
        let until = Instant::now() + NETWORK_WAIT_LIMIT;
        loop {
            self.wait_for_network_wait(until);
            let guard = self.handle.lock().unwrap_or_else(|e| e.into_inner());
            self.record_request();
            let Some(RawStmt(h)) = *guard else {
                return Some(Ok(()));
            };
            if !self.executing() {
                trace("after the execute");
                return Some(Ok(()));
            }
            let tid = self.execute_tid.load(Ordering::SeqCst);
            // SAFETY: the handle is allocated while it is stored here (see type docs).
            match park::hold_in_poll(tid, || unsafe { sys::SQLCancel(h) }) {
                park::Hold::Held(ret) => {
                    trace("held");
                    if !Outcome::from_ret(ret).is_ok() {
                        return Some(Err(Error::odbc(
                            "SQLCancel",
                            read_diagnostics(HandleType::Stmt, h.as_handle()),
                        )));
                    }
                    return Some(Ok(()));
                }
                park::Hold::Unsupported => return None,
                park::Hold::NotHeld if Instant::now() >= until => {
                    trace("recorded");
                    return Some(Ok(()));
                }
                // Not in its wait after all (it got an answer meanwhile): look again,
                // without the lock (the execute's end takes it).
                park::Hold::NotHeld => drop(guard),
            }
        }
    }

    /// Record the request (call under the handle's lock, before any `SQLCancel`).
    fn record_request(&self) {
        if !self.requested.swap(true, Ordering::SeqCst) {
            delay_for_tests();
        }
    }

    /// Whether a cancel is pending (without consuming it). When one is, its `SQLCancel` has
    /// returned (see [`Self::wait_for_cancel_call`]).
    pub fn is_requested(&self) -> bool {
        let requested = self.requested.load(Ordering::SeqCst);
        if requested {
            self.wait_for_cancel_call();
        }
        requested
    }

    /// Whether `cancel` was called since the last take: drivers report the
    /// interrupted call in their own words (Driver 18: HY008 or HY010 on the next call, FreeTDS:
    /// 24000), so the engine remembers that it asked. When it was, its `SQLCancel` has returned
    /// (see [`Self::wait_for_cancel_call`]).
    pub fn take_requested(&self) -> bool {
        let requested = self.requested.swap(false, Ordering::SeqCst);
        if requested {
            self.wait_for_cancel_call();
        }
        requested
    }

    /// Wait until the `SQLCancel` of a request already recorded has returned: the request is
    /// recorded and the call made under the handle's lock, so taking the lock is enough.
    ///
    /// Why the statement's next call must wait for it: unixODBC's `SQLCancel`, once the driver's
    /// returned, treats a statement it finds with an open cursor (states S5-S7, read *then*) as
    /// `SQLFreeStmt(SQL_CLOSE)` would: state S1, no columns. Driver 18's `SQLCancel` of a
    /// statement between calls sends the ATTENTION and reads its acknowledgement (~15 ms); a
    /// thread that saw the request, closed the cursor and executed the next statement meanwhile
    /// had that statement's cursor closed in the driver manager's eyes, and its first `SQLFetch`
    /// failed with the driver manager's HY010 "Function sequence error" (the flake of
    /// `test_cursor_cancel_from_another_task`, 1 CI run in ~7; tests/sqlserver/
    /// test_sqlserver_cancel_points.py cancels at each point).
    fn wait_for_cancel_call(&self) {
        drop(self.handle.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// Ask the driver to cancel whatever the statement is doing. A no-op once it is freed, and
    /// in a forked child. With a cooperative driver (FreeTDS), `SQLCancel` is only called while
    /// the executing thread is held inside its network wait ([`park`]); where that is not
    /// available, a cancel that comes in the first moments of an execute waits them out (or for
    /// the execute's end, leaving a recorded request).
    pub fn cancel(&self) -> Result<()> {
        if !self.owner.is_current() {
            return Ok(());
        }
        let cooperative = self.cooperative.load(Ordering::SeqCst);
        if cooperative && let Some(done) = self.cancel_held() {
            return done;
        }
        if cooperative {
            // Not under the handle's lock: the execute's end takes it.
            self.wait_out_execute_start();
        }
        let until = Instant::now() + NETWORK_WAIT_LIMIT;
        let guard = loop {
            if cooperative {
                self.wait_for_network_wait(until);
            }
            let guard = self.handle.lock().unwrap_or_else(|e| e.into_inner());
            // Looked at again under the lock, right before the call: the thread may have
            // left its wait meanwhile (an answer arrived), and then the look starts over.
            if !cooperative
                || !self.executing()
                || Instant::now() >= until
                || blocked_in_network_wait(self.execute_tid.load(Ordering::SeqCst))
            {
                break guard;
            }
        };
        self.record_request();
        if cooperative && !self.executing() {
            return Ok(());
        }
        if let Some(RawStmt(h)) = *guard {
            // SAFETY: the handle is allocated while it is stored here (see type docs).
            let ret = unsafe { sys::SQLCancel(h) };
            if !Outcome::from_ret(ret).is_ok() {
                return Err(Error::odbc(
                    "SQLCancel",
                    read_diagnostics(HandleType::Stmt, h.as_handle()),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request is recorded and its `SQLCancel` made under the handle's lock: the statement's
    /// thread that sees the request waits for that call to return before its own next call.
    #[test]
    fn a_recorded_request_is_taken_once_its_cancel_call_returned() {
        let cancel = CancelHandle::default();
        let call = cancel.handle.lock().unwrap();
        cancel.record_request();
        // `released` is set just before the cancel's call returns (the lock dropped); the taker
        // reads it once `take_requested` has returned, so it must see it set. The taker says
        // when it is about to take, so the check is made with the taker really waiting, not
        // merely not started yet (a slow start could only make it pass without proving).
        let released = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let taker = {
            let (cancel, released) = (cancel.clone(), released.clone());
            std::thread::spawn(move || {
                ready_tx.send(()).unwrap();
                let requested = cancel.take_requested();
                (requested, released.load(Ordering::SeqCst))
            })
        };
        ready_rx.recv().unwrap();
        std::thread::sleep(Duration::from_millis(50));
        released.store(true, Ordering::SeqCst);
        drop(call);
        assert_eq!(taker.join().unwrap(), (true, true));
        assert!(!cancel.is_requested());
    }
}
