//! `SQLGetInfo` of any type, `SQLSetConnectAttr` of any attribute, and the driver manager's
//! lists of drivers and data sources.

use super::call::Outcome;
use super::call::to_wide;
use super::dbc::Dbc;
use super::env::environment;
use crate::error::{Error, Result};
use crate::info::{AttrValue, InfoKind, InfoValue};
use odbc_api::sys::{HDbc, HEnv, SqlReturn};

unsafe extern "system" {
    // Plain-integer signatures (odbc-sys types `info_type` and `attribute` as enums that cannot
    // carry every value).
    fn SQLGetInfoW(h: HDbc, info: u16, value: *mut u8, len: i16, out_len: *mut i16) -> SqlReturn;
    fn SQLSetConnectAttrW(h: HDbc, attr: i32, value: *mut u8, len: i32) -> SqlReturn;
    fn SQLDriversW(
        h: HEnv,
        direction: u16,
        desc: *mut u16,
        desc_max: i16,
        desc_len: *mut i16,
        attrs: *mut u16,
        attrs_max: i16,
        attrs_len: *mut i16,
    ) -> SqlReturn;
    fn SQLDataSourcesW(
        h: HEnv,
        direction: u16,
        name: *mut u16,
        name_max: i16,
        name_len: *mut i16,
        desc: *mut u16,
        desc_max: i16,
        desc_len: *mut i16,
    ) -> SqlReturn;
}

const SQL_FETCH_NEXT: u16 = 1;
const SQL_FETCH_FIRST: u16 = 2;
/// `SQL_IS_INTEGER`-style lengths are ignored for integer attributes; strings pass their byte
/// length; binary values `SQL_LEN_BINARY_ATTR(len)` = -100 - len.
const SQL_LEN_BINARY_ATTR_OFFSET: i32 = -100;

impl Dbc {
    /// `SQLGetInfo(info_type)`, read as `kind` says.
    pub fn info(&self, info_type: u16, kind: InfoKind) -> Result<InfoValue> {
        let mut buf = vec![0u8; 2048];
        let mut len: i16 = 0;
        let room = crate::checked::to_driver::<i16>(buf.len(), "the SQLGetInfo buffer")?;
        // SAFETY: the buffer is valid for the byte length given (even for the 2- and 4-byte
        // answers, which drivers write at its start); the length out pointer is valid.
        let ret = unsafe {
            SQLGetInfoW(
                self.as_sys(),
                info_type,
                buf.as_mut_ptr(),
                room,
                &raw mut len,
            )
        };
        self.check(ret, "SQLGetInfo")?;
        Ok(match kind {
            InfoKind::Text | InfoKind::YesNo => {
                let bytes =
                    crate::checked::driver_len(len, "SQLGetInfo length")?.min(buf.len() - 2);
                let units: Vec<u16> = buf[..bytes & !1]
                    .chunks_exact(2)
                    .map(|c| u16::from_ne_bytes([c[0], c[1]]))
                    .collect();
                let text = String::from_utf16_lossy(&units);
                if kind == InfoKind::YesNo {
                    InfoValue::Bool(text.starts_with('Y') || text.starts_with('y'))
                } else {
                    InfoValue::Text(text)
                }
            }
            InfoKind::U32 => InfoValue::U32(u32::from_ne_bytes([buf[0], buf[1], buf[2], buf[3]])),
            InfoKind::U16 => InfoValue::U16(u16::from_ne_bytes([buf[0], buf[1]])),
        })
    }

    /// `SQLSetConnectAttr(attr, value)`.
    pub fn set_attr(&mut self, attr: i32, value: &AttrValue) -> Result<()> {
        let ret = match value {
            // SAFETY: integer attributes are passed by value in the pointer argument.
            AttrValue::Int(v) => unsafe {
                SQLSetConnectAttrW(self.as_sys(), attr, *v as *mut u8, 0)
            },
            AttrValue::Text(s) => {
                let mut wide = to_wide(s);
                let bytes = i32::try_from(wide.len() * 2)
                    .map_err(|_| Error::Programming("the attribute value is too long".into()))?;
                wide.push(0);
                let mut copy: Box<[u16]> = wide.into();
                let ptr = copy.as_mut_ptr().cast::<u8>();
                // Kept as long as the handle, like binary values (a driver may keep the pointer).
                self.attr_texts.push(copy);
                // SAFETY: `ptr` points at the NUL-terminated UTF-16 text (`bytes` long without
                // the NUL), alive until the handle is freed.
                unsafe { SQLSetConnectAttrW(self.as_sys(), attr, ptr, bytes) }
            }
            AttrValue::Bytes(b) => {
                let len = i32::try_from(b.len())
                    .map_err(|_| Error::Programming("the attribute value is too long".into()))?;
                let mut copy: Box<[u8]> = b.as_slice().into();
                let ptr = copy.as_mut_ptr();
                // Kept as long as the handle: a driver may keep the pointer (see the field).
                // Moving the Box into the Vec does not move its heap buffer.
                self.attr_buffers.push(copy);
                // SAFETY: `ptr` points at `len` bytes that live until the handle is freed.
                unsafe {
                    SQLSetConnectAttrW(self.as_sys(), attr, ptr, SQL_LEN_BINARY_ATTR_OFFSET - len)
                }
            }
        };
        self.check(ret, "SQLSetConnectAttr").map(|_| ())
    }
}

/// The environment handle's address (pyodbc exposes it as `pyodbc.henv`).
pub fn environment_address() -> Result<usize> {
    Ok(environment()?.0.0 as usize)
}

/// Walk one of the driver manager's lists (`SQLDrivers` / `SQLDataSources`): (first, second)
/// strings of each entry.
fn walk(
    call: impl Fn(HEnv, u16, *mut u16, i16, *mut i16, *mut u16, i16, *mut i16) -> SqlReturn,
    function: &'static str,
) -> Result<Vec<(String, String)>> {
    let env = environment()?;
    let mut out = Vec::new();
    let mut direction = SQL_FETCH_FIRST;
    let mut a = vec![0u16; 1024];
    let mut b = vec![0u16; 8192];
    let (aroom, broom) = (
        crate::checked::to_driver::<i16>(a.len(), "a driver list buffer")?,
        crate::checked::to_driver::<i16>(b.len(), "a driver list buffer")?,
    );
    loop {
        let (mut alen, mut blen) = (0i16, 0i16);
        let ret = call(
            env.0,
            direction,
            a.as_mut_ptr(),
            aroom,
            &raw mut alen,
            b.as_mut_ptr(),
            broom,
            &raw mut blen,
        );
        match Outcome::from_ret(ret) {
            Outcome::NoData => break,
            o if o.is_ok() => {}
            _ => return Err(Error::Interface(format!("{function} failed"))),
        }
        // Lengths are in characters; a truncated entry is cut at the buffer.
        let take = |buf: &[u16], len: i16| -> Result<String> {
            let n = crate::checked::driver_len(len, function)?.min(buf.len() - 1);
            Ok(String::from_utf16_lossy(&buf[..n]))
        };
        out.push((take(&a, alen)?, take(&b, blen)?));
        direction = SQL_FETCH_NEXT;
    }
    Ok(out)
}

/// The names of the installed ODBC drivers.
pub fn drivers() -> Result<Vec<String>> {
    let list = walk(
        // SAFETY: buffers valid for the character counts given; env handle valid.
        |h, d, a, am, al, b, bm, bl| unsafe { SQLDriversW(h, d, a, am, al, b, bm, bl) },
        "SQLDrivers",
    )?;
    Ok(list.into_iter().map(|(name, _)| name).collect())
}

/// The configured data sources: (name, driver description).
pub fn data_sources() -> Result<Vec<(String, String)>> {
    walk(
        // SAFETY: buffers valid for the character counts given; env handle valid.
        |h, d, a, am, al, b, bm, bl| unsafe { SQLDataSourcesW(h, d, a, am, al, b, bm, bl) },
        "SQLDataSources",
    )
}
