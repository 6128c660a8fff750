//! Chaos mode (`--chaos RATE[,seed=N][,stall=SECS][,login=RATE]`): random faults on any
//! session, for eng/chaos (a load of reads, writes, bulk loads, transactions and cancels that
//! must lose and duplicate nothing). Each request (SQL batch, RPC, transaction manager
//! request, bulk load rows) draws a fault with probability RATE, and each login with the
//! login rate (default RATE):
//! - `drop`: the socket is closed before the request runs (a killed session or a failover);
//! - `t40613` / `t40501` / `t40197`: Azure SQL's transient errors answer the request unrun;
//!   40501 and 40197 (class 20) also end the session, which rolls its transaction back;
//! - `slow`: the answer comes 20-200 ms late, `stall`: SECS late (default 3; the client's
//!   timeout or cancel ends it);
//! - `malformed`: the answer is a token stream no server sends, then the socket closes.
//!
//! A login draws `login_40613` (refused, as a database in reconfiguration). An ATTENTION
//! during a slow or stalled answer cancels the request unrun (`cancelled`). Every fault acts
//! before the request runs, so a request the client saw fail had no effect (what the chaos
//! runner checks); a request that ran was answered in full.
//!
//! A SQL batch whose text holds `chaos:pause` (or `chaos:resume`) switches the faults off (on)
//! for every session, and `chaos:pause` prints the counts on stderr as one JSON line
//! (`tds-peer: chaos {...}`) that the runner reads.

use crate::io::Io;
use crate::packet::{P_BULK, P_REPLY, P_RPC, P_SQL, P_TM};
use crate::resp::Resp;
use crate::sql::engine::Engine;
use crate::token;
use std::io;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The faults, in the order of their counters.
const KINDS: [&str; 10] = [
    "login_40613",
    "drop",
    "t40613",
    "t40501",
    "t40197",
    "slow",
    "stall",
    "malformed",
    "cancelled",
    "requests",
];

#[derive(Clone, Copy)]
enum Kind {
    Login40613 = 0,
    Drop,
    T40613,
    T40501,
    T40197,
    Slow,
    Stall,
    Malformed,
    Cancelled,
    Requests,
}

pub struct Chaos {
    rate: f64,
    login_rate: f64,
    stall: Duration,
    rng: Mutex<u64>,
    paused: AtomicBool,
    counts: [AtomicU64; KINDS.len()],
}

impl Chaos {
    /// `RATE[,seed=N][,stall=SECS][,login=RATE]`.
    pub fn parse(v: &str) -> Result<Chaos, String> {
        let mut it = v.split(',');
        let rate: f64 = it
            .next()
            .unwrap_or_default()
            .parse()
            .map_err(|e| format!("--chaos: rate: {e}"))?;
        let mut c = Chaos {
            rate,
            login_rate: rate,
            stall: Duration::from_secs(3),
            rng: Mutex::new(0x9E37_79B9_7F4A_7C15),
            paused: AtomicBool::new(false),
            counts: Default::default(),
        };
        for kv in it {
            let (k, val) = kv
                .split_once('=')
                .ok_or_else(|| format!("--chaos: {kv:?} is not key=value"))?;
            let num = |s: &str| s.parse::<f64>().map_err(|e| format!("--chaos {k}: {e}"));
            match k {
                "seed" => {
                    let seed: u64 = val.parse().map_err(|e| format!("--chaos seed: {e}"))?;
                    *c.rng.get_mut().unwrap_or_else(|e| e.into_inner()) = seed | 1;
                }
                "stall" => c.stall = Duration::from_secs_f64(num(val)?),
                "login" => c.login_rate = num(val)?,
                _ => return Err(format!("--chaos: unknown key {k}")),
            }
        }
        if !(0.0..=1.0).contains(&c.rate) || !(0.0..=1.0).contains(&c.login_rate) {
            return Err("--chaos: rates are between 0 and 1".into());
        }
        Ok(c)
    }

    /// A uniform draw in [0, 1) (xorshift64*: reproducible per seed, not per session order).
    fn draw(&self) -> f64 {
        let mut s = self.rng.lock().unwrap_or_else(|e| e.into_inner());
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        let x = s.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x >> 11) as f64 / (1u64 << 53) as f64
    }

    fn bump(&self, k: Kind) {
        self.counts[k as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// The counts as one JSON object.
    pub fn report(&self) -> String {
        let fields: Vec<String> = KINDS
            .iter()
            .zip(&self.counts)
            .map(|(k, n)| format!("\"{k}\": {}", n.load(Ordering::Relaxed)))
            .collect();
        format!("{{{}}}", fields.join(", "))
    }

    /// A login: the refusal to send (40613), or None to go on.
    pub fn login(&self, database: &str) -> Option<Vec<u8>> {
        if self.paused.load(Ordering::SeqCst) || self.draw() >= self.login_rate {
            return None;
        }
        self.bump(Kind::Login40613);
        crate::transient::error(40613, database)
    }

    /// Before a request runs: Ok(true) when a fault answered it (skip it), Ok(false) to run
    /// it, Err to close the session.
    pub fn before_request(
        &self,
        io: &mut Io,
        typ: u8,
        data: &[u8],
        engine: &mut Engine,
    ) -> io::Result<bool> {
        if typ == P_SQL {
            let text = crate::conv::from_utf16(data);
            if text.contains("chaos:pause") {
                self.paused.store(true, Ordering::SeqCst);
                eprintln!("tds-peer: chaos {}", self.report());
                return Ok(false);
            }
            if text.contains("chaos:resume") {
                self.paused.store(false, Ordering::SeqCst);
                return Ok(false);
            }
        }
        if self.paused.load(Ordering::SeqCst) || ![P_SQL, P_RPC, P_TM, P_BULK].contains(&typ) {
            return Ok(false);
        }
        self.bump(Kind::Requests);
        if self.draw() >= self.rate {
            return Ok(false);
        }
        // An answered bulk load's rows never arrive: its pending INSERT BULK is dropped.
        if typ == P_BULK {
            engine.bulk = None;
        }
        let pick = self.draw();
        match pick {
            p if p < 0.15 => {
                self.bump(Kind::Drop);
                Err(crate::faults::killed("chaos: connection dropped"))
            }
            p if p < 0.25 => self.transient(io, Kind::T40613, 40613, &engine.database),
            p if p < 0.35 => self.transient(io, Kind::T40501, 40501, &engine.database),
            p if p < 0.45 => self.transient(io, Kind::T40197, 40197, &engine.database),
            p if p < 0.75 => {
                self.bump(Kind::Slow);
                let ms = 20.0 + 180.0 * self.draw();
                self.wait(io, Duration::from_secs_f64(ms / 1000.0))
            }
            p if p < 0.87 => {
                self.bump(Kind::Stall);
                self.wait(io, self.stall)
            }
            _ => {
                self.bump(Kind::Malformed);
                let mut r = Resp::new(io);
                // 0xEE is no token type: the client must report a protocol error.
                r.put(&[0xEE, 0xFF, 0xFF, 0xFF, 0x13, 0x37])?;
                r.finish()?;
                Err(crate::faults::killed("chaos: malformed answer"))
            }
        }
    }

    fn transient(&self, io: &mut Io, k: Kind, code: i32, database: &str) -> io::Result<bool> {
        self.bump(k);
        let error = crate::transient::error(code, database).unwrap_or_default();
        io.send_message(P_REPLY, &error, io.psize)?;
        if matches!(k, Kind::T40501 | Kind::T40197) {
            return Err(crate::faults::killed("chaos: class 20 transient error"));
        }
        Ok(true)
    }

    /// Hold the answer for `d`: an ATTENTION meanwhile cancels the request unrun.
    fn wait(&self, io: &mut Io, d: Duration) -> io::Result<bool> {
        let until = Instant::now() + d;
        while Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
            if io.poll_attention() {
                self.bump(Kind::Cancelled);
                let mut r = Resp::new(io);
                r.put(&token::done(token::TOK_DONE, token::DONE_ATTN, 0, 0))?;
                r.io.attention = false;
                r.finish()?;
                return Ok(true);
            }
            if io.closed {
                return Err(crate::faults::killed("chaos: the client left"));
            }
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_draws_reproducibly() {
        let a = Chaos::parse("0.1,seed=7,stall=2.5,login=0").unwrap();
        let b = Chaos::parse("0.1,seed=7").unwrap();
        assert_eq!(a.stall, Duration::from_secs_f64(2.5));
        assert_eq!(a.login_rate, 0.0);
        let xs: Vec<f64> = (0..100).map(|_| a.draw()).collect();
        assert!(xs.iter().all(|x| (0.0..1.0).contains(x)));
        assert_eq!(xs[..5], (0..5).map(|_| b.draw()).collect::<Vec<_>>()[..]);
        assert!(a.login("db").is_none());
        assert!(Chaos::parse("2").is_err() && Chaos::parse("0.1,x=1").is_err());
        assert!(a.report().starts_with("{\"login_40613\": 0"));
    }
}
