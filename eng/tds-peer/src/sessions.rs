//! The live sessions by SPID, so `KILL <spid>` can end one from another connection (tests kill
//! a pooled or mid-transaction session the way a DBA or a failover would).

use std::collections::HashMap;
use std::net::{Shutdown, TcpStream};
use std::sync::Mutex;

#[derive(Default)]
pub struct Sessions {
    live: Mutex<HashMap<u16, TcpStream>>,
}

impl Sessions {
    /// Note a session's socket (a clone of it: shutting the clone ends the session's reads)
    /// until the returned guard drops, also when the session's thread panics: a clone left
    /// behind would keep the socket open and the client waiting for ever.
    pub fn add<'a>(&'a self, spid: u16, tcp: &TcpStream) -> Registered<'a> {
        if let Ok(clone) = tcp.try_clone() {
            self.lock().insert(spid, clone);
        }
        Registered {
            sessions: self,
            spid,
        }
    }

    /// Shut the socket of session `spid`; false when there is no such session.
    pub fn kill(&self, spid: u16) -> bool {
        match self.lock().remove(&spid) {
            Some(tcp) => {
                eprintln!("tds-peer: [{spid}] killed (KILL)");
                let _ = tcp.shutdown(Shutdown::Both);
                true
            }
            None => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u16, TcpStream>> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A session's entry in [`Sessions`], removed on drop.
pub struct Registered<'a> {
    sessions: &'a Sessions,
    spid: u16,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.sessions.lock().remove(&self.spid);
    }
}
