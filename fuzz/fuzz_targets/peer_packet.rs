//! The peer's packet reader (8-byte headers, reassembly to EOM, the type check that drops
//! garbage) over arbitrary received bytes, each message then handed to the parser the session
//! would use: PRELOGIN, LOGIN7, RPC, SQL batch (ALL_HEADERS + UTF-16 text, tokenized).
//! Every failure must be an io::Error (the session closes the socket), never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tds_peer::io::Io;
use tds_peer::packet::{P_LOGIN7, P_PRELOGIN, P_RPC, P_SQL};
use tds_peer::{conv, login, prelogin, rpc, sql::lexer};

fuzz_target!(|data: &[u8]| {
    let mut io = Io::replay(data.to_vec());
    for _ in 0..64 {
        let Ok((typ, msg)) = io.read_message() else {
            break;
        };
        match typ {
            P_PRELOGIN => drop(prelogin::parse(&msg)),
            P_LOGIN7 => drop(login::parse(&msg)),
            P_RPC => drop(rpc::parse(&msg)),
            P_SQL => {
                // What session.rs does with a batch: skip ALL_HEADERS, decode, tokenize.
                let Some(h) = msg.get(..4) else { continue };
                let hl = u32::from_le_bytes(h.try_into().unwrap()) as usize;
                let text = conv::from_utf16(msg.get(hl.min(msg.len())..).unwrap_or(&[]));
                if let Ok(toks) = lexer::tokenize(&text) {
                    let _ = lexer::split(&toks);
                }
            }
            _ => {}
        }
    }
});
