//! The peer's bulk-load parsers: the `INSERT BULK` statement text and the BULK LOAD message
//! (COLMETADATA with every TYPE_INFO including the legacy LOB types, ROW and NBCROW tokens,
//! PLP values, DONE), decoded with the RPC parameter decoder as the peer does.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tds_peer::{bulk, rpc};

fuzz_target!(|data: &[u8]| {
    let parsed = bulk::parse_bulk_message(data, rpc::decode_value);
    if let Ok(rows) = &parsed {
        // Every row has one value per announced column.
        assert!(rows.rows.iter().all(|r| r.len() == rows.columns.len()));
    }
    // The walk `--bulk-discard` uses sees the same rows and fails where the parse fails.
    let mut seen = 0;
    let scanned = bulk::scan_bulk_message(data, rpc::decode_value, |_| seen += 1);
    assert_eq!(scanned.is_ok(), parsed.is_ok());
    if let Ok(rows) = &parsed {
        assert_eq!(seen, rows.rows.len());
    }
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(Some(stmt)) = bulk::parse_insert_bulk(text)
    {
        assert!(!stmt.table.last().is_none_or(String::is_empty));
    }
});
