//! Diagnostic records: every record the driver left on a handle, not just the first.
//!
//! SQL Server often sends several records for one failure (the real error plus "Statement(s) could
//! not be prepared"), and PRINT / RAISERROR with low severity arrive only as records on a
//! successful call; `cursor.messages` needs all of them.

pub use crate::diagnostic::Diagnostic;
use odbc_api::sys::{self, Handle, HandleType, SqlReturn};

/// Read every diagnostic record of `handle`. Stops at the first record number the driver does not
/// have. Bounded to 32,767 records (the i16 record number) so a misbehaving driver cannot keep
/// us here; a procedure printing 100 messages gets all 100 (pyodbc keeps them all too).
pub fn read_diagnostics(handle_type: HandleType, handle: Handle) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    // 4,096 units at least: psqlODBC does not report truncation (SQL_SUCCESS with the first 511
    // units, the rest handed out as extra "records", garbled where a piece cuts a multi-byte
    // character); with this size it returns one whole record (it caps at 4,096).
    let mut message: Vec<u16> = vec![0; 8192];
    for record in 1..=i16::MAX {
        let mut state = [0u16; 6];
        let mut native = 0i32;
        let mut len: i16 = 0;
        let mut get = |message: &mut Vec<u16>, len: &mut i16| {
            // SAFETY: all out pointers are valid for the lengths given; the handle is owned by
            // the caller and alive for the duration of the call.
            unsafe {
                sys::SQLGetDiagRecW(
                    handle_type,
                    handle,
                    record,
                    state.as_mut_ptr(),
                    &raw mut native,
                    message.as_mut_ptr(),
                    message.len() as i16,
                    len,
                )
            }
        };
        let mut ret = get(&mut message, &mut len);
        let ok = |r: SqlReturn| r == SqlReturn::SUCCESS || r == SqlReturn::SUCCESS_WITH_INFO;
        if ok(ret) && (len as usize) >= message.len() {
            // The message did not fit: ask again with room for all of it.
            message.resize(len as usize + 1, 0);
            ret = get(&mut message, &mut len);
        }
        if ret != SqlReturn::SUCCESS && ret != SqlReturn::SUCCESS_WITH_INFO {
            break;
        }
        let len = (len.max(0) as usize).min(message.len());
        let text: String = char::decode_utf16(message[..len].iter().copied())
            .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
            .filter(|&c| c != '\0')
            .collect();
        let sqlstate: String = char::decode_utf16(state[..5].iter().copied())
            .map(|c| c.unwrap_or('?'))
            .collect();
        out.push(Diagnostic {
            sqlstate,
            native_error: native,
            message: text,
        });
    }
    out
}
