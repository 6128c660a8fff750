//! Holding a FreeTDS executing thread inside its network wait while another thread calls
//! `SQLCancel` (issue 36 item 5).
//!
//! FreeTDS 1.3 (MARS build, as Debian's) loses the executing thread's wakeup when a cross-thread
//! `SQLCancel` finds nobody in its network loop (`tds_connection_network`): the cancelling
//! thread then writes the ATTENTION itself and leaves the loop without signalling
//! `packet_cond`, on which the executing thread, asking for its next packet meanwhile, waits
//! for ever (upstream still so). When the executing thread is inside the loop (it holds
//! `conn->in_net_tds`), `tds_send_cancel` only sets `in_cancel` and writes to the wakeup pipe;
//! the executing thread's `poll` wakes, and it sends the ATTENTION itself: no hazard.
//!
//! Seeing the thread in `poll` (`/proc/self/task/<tid>/syscall`) and then calling `SQLCancel`
//! leaves a window: a packet may arrive in between, and the thread leaves the loop to parse it.
//! This module closes it: a thread-directed signal interrupts that very `poll`, and its handler
//! holds the thread there (it spins on an atomic, async-signal-safe) until `SQLCancel` has
//! returned. The handler first proves from the interrupted context that the thread was
//! interrupted inside the same `poll` call the kernel reported: the same instruction pointer,
//! stack pointer and first three arguments, and the system call's result `-EINTR`. A thread
//! that had left the call (or finished it: the result is then the ready count) is released at
//! once and the caller tries again. Released, the interrupted `poll` returns `EINTR`, which
//! FreeTDS's `tds_select` retries; the retry sees the wakeup pipe and sends the ATTENTION.
//!
//! Only on Linux x86_64 (the registers are read from the signal's `ucontext`); elsewhere
//! [`hold_in_poll`] is never `Held` and the caller keeps its older, narrower gate.

use std::time::Duration;

/// What [`hold_in_poll`] did.
pub(super) enum Hold<R> {
    /// The thread was held inside its `poll` while `f` ran: `f`'s result.
    Held(R),
    /// The thread was not (or no longer) blocked in `poll`; `f` did not run.
    NotHeld,
    /// Not available here (platform, or the signal is taken by someone else).
    Unsupported,
}

/// How long the handler holds a thread at most, whatever the caller does (a cancel's
/// `tds_send_cancel` takes microseconds; the bound keeps a bug here from stopping a thread).
#[cfg_attr(
    not(all(target_os = "linux", target_arch = "x86_64")),
    allow(dead_code)
)]
const HOLD_LIMIT: Duration = Duration::from_secs(2);

/// How long the caller waits for the handler to run in the target thread.
#[cfg_attr(
    not(all(target_os = "linux", target_arch = "x86_64")),
    allow(dead_code)
)]
const DELIVERY_LIMIT: Duration = Duration::from_millis(100);

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub(super) use imp::hold_in_poll;

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
pub(super) fn hold_in_poll<R>(_tid: u64, _f: impl FnOnce() -> R) -> Hold<R> {
    Hold::Unsupported
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod imp {
    use super::{DELIVERY_LIMIT, HOLD_LIMIT, Hold};
    use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
    use std::sync::{Mutex, OnceLock};
    use std::time::Instant;

    /// The poll system calls (x86_64): poll, ppoll. FreeTDS's `tds_select` uses poll.
    const POLL_SYSCALLS: &[u64] = &[7, 271];

    const IDLE: u32 = 0;
    /// The signal is on its way; the handler has not run.
    const REQUESTED: u32 = 1;
    /// The handler runs and looks at the interrupted context.
    const CHECKING: u32 = 5;
    /// The handler runs and holds the thread in its poll.
    const HELD: u32 = 2;
    /// The handler found the thread elsewhere and returned.
    const MISSED: u32 = 3;
    /// The caller is done: the handler returns.
    const RELEASED: u32 = 4;

    static STATE: AtomicU32 = AtomicU32::new(IDLE);
    /// The interrupted context the handler must find: rip, rsp, rdi, rsi, rdx as the kernel
    /// reported them for the blocked poll.
    static EXPECT: [AtomicI64; 5] = [const { AtomicI64::new(0) }; 5];
    /// One hold at a time in the process (the handler's state is global).
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    /// The signal, once its handler is installed; `None`: unsupported.
    static SIGNAL: OnceLock<Option<i32>> = OnceLock::new();

    /// A real-time signal nobody else handles (its disposition is the default), with the
    /// handler installed; `None` when none is free or installing failed.
    fn signal() -> Option<i32> {
        *SIGNAL.get_or_init(|| {
            // From the top, away from the low real-time signals libraries tend to take.
            let (lo, hi) = (libc::SIGRTMIN(), libc::SIGRTMAX());
            (lo..=hi).rev().take(8).find(|&sig| install(sig))
        })
    }

    /// Installs the handler on `sig` if its disposition is the default.
    fn install(sig: i32) -> bool {
        // SAFETY: sigaction with a zeroed (then filled) struct and valid pointers; the handler
        // only uses atomics, nanosleep and errno (async-signal-safe).
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &raw mut old) != 0
                || old.sa_sigaction != libc::SIG_DFL
            {
                return false;
            }
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = handler as *const () as usize;
            // SA_RESTART: a system call the signal interrupts by mistake (the thread left its
            // poll) is restarted, not failed with EINTR; poll itself never restarts.
            act.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&raw mut act.sa_mask);
            libc::sigaction(sig, &raw const act, std::ptr::null_mut()) == 0
        }
    }

    /// Whether `sig` still runs [`handler`] (someone may have taken it since: then a signal
    /// would run their handler, or with the default disposition end the process).
    fn still_ours(sig: i32) -> bool {
        // SAFETY: queries the disposition into a zeroed struct.
        unsafe {
            let mut now: libc::sigaction = std::mem::zeroed();
            libc::sigaction(sig, std::ptr::null(), &raw mut now) == 0
                && now.sa_sigaction == handler as *const () as usize
        }
    }

    /// The signal handler: holds the thread if it was interrupted in the expected poll.
    extern "C" fn handler(_sig: i32, _info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
        if STATE
            .compare_exchange(REQUESTED, CHECKING, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            return; // a late signal whose caller gave up: nothing to do
        }
        // SAFETY: the kernel passes the interrupted context as a ucontext_t for SA_SIGINFO.
        let g = unsafe { &(*ctx.cast::<libc::ucontext_t>()).uc_mcontext.gregs };
        let reg = |r: i32| usize::try_from(r).map_or(0, |i| g[i]);
        let found = [
            reg(libc::REG_RIP),
            reg(libc::REG_RSP),
            reg(libc::REG_RDI),
            reg(libc::REG_RSI),
            reg(libc::REG_RDX),
        ];
        let interrupted = reg(libc::REG_RAX) == -i64::from(libc::EINTR);
        let same = found
            .iter()
            .zip(&EXPECT)
            .all(|(f, e)| *f == e.load(Ordering::SeqCst));
        if !(interrupted && same) {
            STATE.store(MISSED, Ordering::SeqCst); // the caller tries again
            return;
        }
        // SAFETY: errno of this thread, saved around nanosleep and clock_gettime.
        let errno = unsafe { *libc::__errno_location() };
        STATE.store(HELD, Ordering::SeqCst);
        let nap = libc::timespec {
            tv_sec: 0,
            tv_nsec: 20_000,
        };
        let limit =
            monotonic_ns().saturating_add(i64::try_from(HOLD_LIMIT.as_nanos()).unwrap_or(i64::MAX));
        while STATE.load(Ordering::SeqCst) == HELD && monotonic_ns() < limit {
            // SAFETY: nanosleep is async-signal-safe; `nap` is valid.
            unsafe { libc::nanosleep(&raw const nap, std::ptr::null_mut()) };
        }
        STATE.store(IDLE, Ordering::SeqCst);
        // SAFETY: as above.
        unsafe { *libc::__errno_location() = errno };
    }

    /// CLOCK_MONOTONIC in nanoseconds (async-signal-safe).
    fn monotonic_ns() -> i64 {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `t` is valid for writing.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &raw mut t) };
        t.tv_sec
            .saturating_mul(1_000_000_000)
            .saturating_add(t.tv_nsec)
    }

    /// The blocked system call of thread `tid`: number, then rip, rsp, arg1..arg3 in the order
    /// of [`EXPECT`]; `None` unless it is a poll.
    fn blocked_poll(tid: u64) -> Option<[i64; 5]> {
        // "nr arg1 .. arg6 sp pc" (hex after the number) while blocked in a call.
        let text = std::fs::read_to_string(format!("/proc/self/task/{tid}/syscall")).ok()?;
        let f: Vec<&str> = text.split_whitespace().collect();
        let nr: u64 = f.first()?.parse().ok()?;
        if !POLL_SYSCALLS.contains(&nr) || f.len() < 9 {
            return None;
        }
        let hex = |s: &str| {
            u64::from_str_radix(s.trim_start_matches("0x"), 16)
                .ok()
                // A register's bits (an address past i64::MAX stays itself).
                .map(|v| i64::from_ne_bytes(v.to_ne_bytes()))
        };
        Some([hex(f[8])?, hex(f[7])?, hex(f[1])?, hex(f[2])?, hex(f[3])?])
    }

    /// Runs `f` while thread `tid` (of this process) is held inside the poll it is blocked in.
    pub(in crate::odbc::cancel) fn hold_in_poll<R>(tid: u64, f: impl FnOnce() -> R) -> Hold<R> {
        let Some(sig) = signal() else {
            return Hold::Unsupported;
        };
        let Ok(tid_c) = libc::pid_t::try_from(tid) else {
            return Hold::Unsupported;
        };
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        if !still_ours(sig) {
            return Hold::Unsupported;
        }
        let Some(expect) = blocked_poll(tid) else {
            return Hold::NotHeld;
        };
        for (slot, v) in EXPECT.iter().zip(expect) {
            slot.store(v, Ordering::SeqCst);
        }
        STATE.store(REQUESTED, Ordering::SeqCst);
        // SAFETY: tgkill to a thread of this process with a signal whose handler is ours.
        let sent = unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), tid_c, sig) } == 0;
        if !sent {
            STATE.store(IDLE, Ordering::SeqCst);
            return Hold::NotHeld;
        }
        let start = Instant::now();
        loop {
            match STATE.load(Ordering::SeqCst) {
                HELD => break,
                MISSED => {
                    // The handler has decided and returned (MISSED is its last write).
                    STATE.store(IDLE, Ordering::SeqCst);
                    return Hold::NotHeld;
                }
                _ if start.elapsed() > DELIVERY_LIMIT => {
                    if STATE
                        .compare_exchange(REQUESTED, IDLE, Ordering::SeqCst, Ordering::SeqCst)
                        .is_ok()
                    {
                        return Hold::NotHeld; // never delivered; a late one is ignored
                    }
                }
                _ => std::thread::yield_now(),
            }
        }
        let r = f();
        // Released; unless the handler gave up first (HOLD_LIMIT), wait for it to leave (IDLE
        // is its last write), so the next hold starts clean.
        if STATE
            .compare_exchange(HELD, RELEASED, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            let start = Instant::now();
            while STATE.load(Ordering::SeqCst) == RELEASED && start.elapsed() < HOLD_LIMIT {
                std::thread::yield_now();
            }
        }
        Hold::Held(r)
    }
}

#[cfg(all(test, target_os = "linux", target_arch = "x86_64"))]
mod tests {
    use super::Hold;
    use super::imp::hold_in_poll;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;
    use std::time::{Duration, Instant};

    /// Waits (at most 5 s) until `tid` is blocked in poll.
    fn until_polling(tid: u64) {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            let text = std::fs::read_to_string(format!("/proc/self/task/{tid}/syscall"));
            if text.is_ok_and(|t| t.starts_with("7 ") || t.starts_with("271 ")) {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        panic!("thread {tid} never blocked in poll");
    }

    /// Whether this test runs under valgrind (its preloaded core library is in LD_PRELOAD).
    fn under_valgrind() -> bool {
        std::env::var("LD_PRELOAD").is_ok_and(|p| p.contains("vgpreload"))
    }

    /// A thread blocked in poll is held while the closure runs, and its poll returns EINTR
    /// once (it retries, as FreeTDS's `tds_select` does, and reads the byte sent later); a
    /// thread that is not in poll is never signalled.
    #[test]
    fn holds_a_thread_in_poll_and_never_one_elsewhere() {
        let (a, mut b) = UnixStream::pair().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let poller = std::thread::spawn(move || {
            tx.send(super::super::current_tid()).unwrap();
            let mut fds = libc::pollfd {
                fd: a.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let mut interrupted = 0;
            loop {
                // SAFETY: one valid pollfd.
                let rc = unsafe { libc::poll(&raw mut fds, 1, -1) };
                // SAFETY: this thread's errno.
                if rc < 0 && unsafe { *libc::__errno_location() } == libc::EINTR {
                    interrupted += 1;
                    continue;
                }
                return (rc, interrupted);
            }
        });
        let tid = rx.recv().unwrap();
        until_polling(tid);
        let mut ran = false;
        let held = hold_in_poll(tid, || {
            ran = true;
            // Held: still in its poll call (interrupted, not returned).
            std::thread::sleep(Duration::from_millis(20));
            41 + 1
        });
        if under_valgrind() && matches!(held, Hold::NotHeld) {
            // valgrind runs the thread's system calls itself, so the interrupted context is
            // not the kernel's poll: never held there, and the caller keeps its older gate.
            assert!(!ran);
            b.write_all(b"x").unwrap();
            assert_eq!(poller.join().unwrap().0, 1);
            return;
        }
        match held {
            Hold::Held(v) => assert_eq!(v, 42),
            Hold::NotHeld => panic!("not held"),
            Hold::Unsupported => panic!("unsupported"),
        }
        assert!(ran);
        b.write_all(b"x").unwrap();
        assert_eq!(poller.join().unwrap(), (1, 1));

        let (tx, rx) = std::sync::mpsc::channel();
        let sleeper = std::thread::spawn(move || {
            tx.send(super::super::current_tid()).unwrap();
            std::thread::sleep(Duration::from_millis(300));
        });
        let tid = rx.recv().unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(matches!(hold_in_poll(tid, || ()), Hold::NotHeld));
        sleeper.join().unwrap();
    }
}
