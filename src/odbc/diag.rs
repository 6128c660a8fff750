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
                    // Telling the driver less room than the buffer has is safe.
                    i16::try_from(message.len()).unwrap_or(i16::MAX),
                    len,
                )
            }
        };
        let mut ret = get(&mut message, &mut len);
        let ok = |r: SqlReturn| r == SqlReturn::SUCCESS || r == SqlReturn::SUCCESS_WITH_INFO;
        // A negative length (a broken driver) must not become a huge resize.
        match usize::try_from(len) {
            Ok(n) if ok(ret) && n >= message.len() => {
                // The message did not fit: ask again with room for all of it.
                message.resize(n + 1, 0);
                ret = get(&mut message, &mut len);
            }
            _ => {}
        }
        if ret != SqlReturn::SUCCESS && ret != SqlReturn::SUCCESS_WITH_INFO {
            break;
        }
        // The record is still reported when its length is impossible: the text says so, since
        // there is no error to raise while reading the errors.
        let text: String = match usize::try_from(len) {
            Ok(len) => char::decode_utf16(message[..len.min(message.len())].iter().copied())
                .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
                .filter(|&c| c != '\0')
                .collect(),
            Err(_) => format!("(the driver reported an impossible message length, {len})"),
        };
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
