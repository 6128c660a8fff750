//! The peer as a library: the server binary (src/main.rs) is a thin CLI over it, and the fuzz
//! targets (fuzz/) call its parsers directly on arbitrary bytes.

pub mod bulk;
pub mod chaos;
pub mod conv;
pub mod faults;
pub mod fedauth;
pub mod io;
pub mod login;
pub mod packet;
pub mod prelogin;
pub mod resp;
pub mod result_cache;
pub mod rpc;
pub mod session;
pub mod sessions;
pub mod sql;
pub mod synthetic;
pub mod tls;
pub mod token;
pub mod transient;
pub mod tvp;
pub mod types;
pub mod vector;
pub mod wire;
