//! The thread that runs block fetches ahead of the decoder: started on a result set's first
//! prefetch and kept until the statement leaves that result set. Starting a thread per row array
//! (~50 µs here) made small arrays expensive; with one thread per result set the arrays can stay
//! small enough that decoding one always overlaps fetching the next.

use crate::odbc::{Diagnostic, Outcome};
use crate::process::Owner;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;

/// What one background fetch returned (`None`: not started, a cancel was pending).
pub type FetchResult = Option<(Outcome, Vec<Diagnostic>)>;

/// One fetch for the worker to run (see `BlockSource::fetch_ahead`).
pub type FetchJob = Box<dyn FnOnce() -> FetchResult + Send>;

pub struct Prefetcher {
    jobs: Option<Sender<FetchJob>>,
    results: Receiver<FetchResult>,
    thread: Option<JoinHandle<()>>,
    busy: bool,
    /// The process the thread runs in: a forked child has no such thread (see `Drop`).
    owner: Owner,
}

impl Prefetcher {
    pub fn start() -> std::io::Result<Prefetcher> {
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
        Ok(Prefetcher {
            jobs: Some(jobs),
            results,
            thread: Some(thread),
            busy: false,
            owner: Owner::current(),
        })
    }

    /// Start a fetch on the worker. `false` if the worker is gone (the caller fetches in line).
    pub fn submit(&mut self, job: FetchJob) -> bool {
        self.busy = self.jobs.as_ref().is_some_and(|j| j.send(job).is_ok());
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
        Some(self.results.recv().map_err(|_| ()))
    }
}

impl Drop for Prefetcher {
    /// Waits for a running fetch, then ends the thread (its job channel closes). In a forked
    /// child the thread does not exist: joining it panicked ("threads should not terminate
    /// unexpectedly"), so its handle is forgotten.
    fn drop(&mut self) {
        if !self.owner.is_current() {
            std::mem::forget(self.thread.take());
            return;
        }
        let _ = self.wait();
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
