//! The peer's PRELOGIN option table and LOGIN7 record parsers on arbitrary bytes (offsets and
//! lengths that point anywhere, FeatureExt chains that loop or overrun).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tds_peer::{login, prelogin};

fuzz_target!(|data: &[u8]| {
    if let Ok(opts) = prelogin::parse(data) {
        for v in opts.values() {
            assert!(v.len() <= data.len());
        }
    }
    if let Ok(l) = login::parse(data) {
        assert!(l.user.len() <= 3 * data.len() && l.password.len() <= 3 * data.len());
        let _ = login::negotiate_packet_size(l.packet_size);
    }
});
