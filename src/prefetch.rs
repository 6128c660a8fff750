//! The thread that runs block fetches ahead of the decoder: started on a result set's first
//! prefetch and kept until the statement leaves that result set. Starting a thread per row array
//! (~50 µs here) made small arrays expensive; with one thread per result set the arrays can stay
//! small enough that decoding one always overlaps fetching the next.
//!
//! Fork: these threads are the only ones ferrodbc starts (Driver 18, FreeTDS, SQLite3 ODBC and
//! psqlODBC start none for a connection and its queries; checked on Linux, 2026-12). A process
//! that forks while one runs has two problems: the child may inherit a driver or driver-manager
//! lock the thread held inside `SQLFetch` (and then hang on its own first connect), and Python
//! 3.12+ warns (`DeprecationWarning: This process ... is multi-threaded, use of fork() may lead
//! to deadlocks in the child`), which forking servers (gunicorn `--preload`, `multiprocessing`
//! with fork) print on every fork or, under `-W error`, fail on. So a `pthread_atfork` prepare
//! handler ([`before_fork`], installed by `crate::process`) waits for each fetch in flight (its
//! rows stay in the channel for their statement) and ends every worker; the process forks
//! with none of ours running, and a worker is started again only when a statement next
//! prefetches (lazily: Python counts the threads right after the fork, after its own hooks).

use crate::odbc::{Diagnostic, Outcome};
use crate::process::Owner;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::thread::JoinHandle;

/// What one background fetch returned (`None`: not started, a cancel was pending).
pub type FetchResult = Option<(Outcome, Vec<Diagnostic>)>;

/// One fetch for the worker to run (see `BlockSource::fetch_ahead`).
pub type FetchJob = Box<dyn FnOnce() -> FetchResult + Send>;

/// A running worker thread and the channel that feeds it jobs.
struct Worker {
    jobs: Sender<FetchJob>,
    thread: JoinHandle<()>,
}

impl Worker {
    /// Close its job channel and wait for it: the job in flight (if any) runs to its end and
    /// its result is sent before the thread returns.
    fn end(self) {
        drop(self.jobs);
        let _ = self.thread.join();
    }
}

/// One statement's worker slot, shared with the fork handler (which may end the worker).
type Slot = Mutex<Option<Worker>>;

/// Every prefetcher's slot, for the fork handler; dead entries are pruned as new ones come.
static SLOTS: Mutex<Vec<Weak<Slot>>> = Mutex::new(Vec::new());
/// Set by the fork handler from the moment it starts ending workers until the fork is over:
/// no worker is started meanwhile (the statement fetches that row array in line instead).
static FORKING: AtomicBool = AtomicBool::new(false);

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

pub struct Prefetcher {
    slot: Arc<Slot>,
    /// Results of the current worker (a new channel with each worker started).
    results: Receiver<FetchResult>,
    busy: bool,
    /// The process the thread runs in: a forked child has no such thread (see `Drop`).
    owner: Owner,
}

impl Prefetcher {
    /// A prefetcher whose thread starts with its first job.
    pub fn start() -> std::io::Result<Prefetcher> {
        let slot = Arc::new(Mutex::new(None));
        {
            let mut slots = locked(&SLOTS);
            slots.retain(|s| s.strong_count() > 0);
            slots.push(Arc::downgrade(&slot));
        }
        Ok(Prefetcher {
            slot,
            results: channel().1,
            busy: false,
            owner: Owner::current(),
        })
    }

    /// Start a fetch on the worker (starting the worker if the fork handler ended it).
    /// `false` if there is no worker to be had (the caller fetches in line).
    pub fn submit(&mut self, job: FetchJob) -> bool {
        debug_assert!(!self.busy, "one fetch at a time");
        let mut worker = locked(&self.slot);
        if worker.is_none() {
            // Read under the slot's lock, which the fork handler takes after setting it.
            if FORKING.load(Ordering::SeqCst) || !self.owner.is_current() {
                return false;
            }
            match spawn() {
                Ok((w, results)) => {
                    *worker = Some(w);
                    self.results = results;
                }
                Err(_) => return false,
            }
        }
        self.busy = worker.as_ref().is_some_and(|w| w.jobs.send(job).is_ok());
        self.busy
    }

    pub fn busy(&self) -> bool {
        self.busy
    }

    /// Wait for the submitted fetch: `None` if none is running, `Some(Err(()))` if the worker died
    /// (or is in the parent of this forked child: its result would never come).
    pub fn wait(&mut self) -> Option<Result<FetchResult, ()>> {
        if !self.busy {
            return None;
        }
        self.busy = false;
        if !self.owner.is_current() {
            return Some(Err(()));
        }
        // A worker the fork handler ended sent this result before it returned: still here.
        Some(self.results.recv().map_err(|_| ()))
    }
}

fn spawn() -> std::io::Result<(Worker, Receiver<FetchResult>)> {
    let (jobs, job_rx) = channel::<FetchJob>();
    let (result_tx, results) = channel();
    let thread = std::thread::Builder::new()
        .name("ferrodbc-prefetch".into())
        .spawn(move || {
            for job in job_rx {
                if result_tx.send(job()).is_err() {
                    break;
                }
            }
        })?;
    Ok((Worker { jobs, thread }, results))
}

impl Drop for Prefetcher {
    /// Waits for a running fetch, then ends the thread (its job channel closes). In a forked
    /// child the thread does not exist: joining it panicked ("threads should not terminate
    /// unexpectedly"), so its handle is forgotten.
    fn drop(&mut self) {
        let worker = locked(&self.slot).take();
        if !self.owner.is_current() {
            std::mem::forget(worker);
            return;
        }
        let _ = self.wait();
        if let Some(w) = worker {
            w.end();
        }
    }
}

/// The fork handler's prepare step (see the module comment): no new worker from now on, and
/// each running one finishes its fetch and ends. Runs in the forking thread; the workers need
/// nothing it holds (they make driver calls only, never touching Python).
pub fn before_fork() {
    FORKING.store(true, Ordering::SeqCst);
    let slots: Vec<Arc<Slot>> = locked(&SLOTS).iter().filter_map(Weak::upgrade).collect();
    for slot in slots {
        let worker = locked(&slot).take();
        if let Some(w) = worker {
            w.end();
        }
    }
}

/// After the fork, in the parent and in the child: workers may start again.
pub fn after_fork() {
    FORKING.store(false, Ordering::SeqCst);
}
