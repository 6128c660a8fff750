//! The peer's RPC request parser: procedure names or ids, parameter names and status flags,
//! every TYPE_INFO token the drivers send (fixed, variable-length, PLP, decimal, temporal,
//! collations, sql_variant, table-valued parameters) and the values after them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tds_peer::rpc;

fuzz_target!(|data: &[u8]| {
    if let Ok(reqs) = rpc::parse(data) {
        // Every request has its parameters; the last one is marked last.
        if let Some(last) = reqs.last() {
            assert!(last.last);
        }
    }
});
