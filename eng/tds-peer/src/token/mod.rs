//! Token-stream encoders (MS-TDS 2.2.7): login/session tokens, DONE family, messages,
//! COLMETADATA and rows.

#[cfg(test)]
mod golden;
pub mod value;

use crate::types::Ty;

pub const DONE_MORE: u16 = 0x01;
pub const DONE_ERROR: u16 = 0x02;
pub const DONE_COUNT: u16 = 0x10;
pub const DONE_ATTN: u16 = 0x20;

pub const TOK_DONE: u8 = 0xFD;
pub const TOK_DONEPROC: u8 = 0xFE;
pub const TOK_DONEINPROC: u8 = 0xFF;

/// CurCmd values SQL Server puts in DONE tokens.
pub const CMD_SELECT: u16 = 0xC1;
pub const CMD_INSERT: u16 = 0xC3;
pub const CMD_DELETE: u16 = 0xC4;
pub const CMD_UPDATE: u16 = 0xC5;
pub const CMD_EXECUTE: u16 = 0xE0;

pub fn b_varchar(out: &mut Vec<u8>, s: &str) {
    let u = crate::conv::utf16(s);
    out.push((u.len() / 2).min(255) as u8);
    out.extend_from_slice(&u[..u.len().min(510)]);
}

pub fn us_varchar(out: &mut Vec<u8>, s: &str) {
    let u = crate::conv::utf16(s);
    out.extend_from_slice(&((u.len() / 2) as u16).to_le_bytes());
    out.extend_from_slice(&u);
}

fn with_len(tok: u8, body: Vec<u8>) -> Vec<u8> {
    let mut v = Vec::with_capacity(body.len() + 3);
    v.push(tok);
    v.extend_from_slice(&(body.len() as u16).to_le_bytes());
    v.extend_from_slice(&body);
    v
}

pub fn envchange_str(typ: u8, new: &str, old: &str) -> Vec<u8> {
    let mut b = vec![typ];
    b_varchar(&mut b, new);
    b_varchar(&mut b, old);
    with_len(0xE3, b)
}

pub fn envchange_bytes(typ: u8, new: &[u8], old: &[u8]) -> Vec<u8> {
    let mut b = vec![typ, new.len() as u8];
    b.extend_from_slice(new);
    b.push(old.len() as u8);
    b.extend_from_slice(old);
    with_len(0xE3, b)
}

pub const SERVER_NAME: &str = "TDSPEER";

/// INFO (0xAB) or ERROR (0xAA) token. Severity > 10 makes it an ERROR.
pub fn message(number: i32, msg: &str, class: u8, state: u8, line: i32) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&number.to_le_bytes());
    b.push(state);
    b.push(class);
    us_varchar(&mut b, msg);
    b_varchar(&mut b, SERVER_NAME);
    b_varchar(&mut b, "");
    b.extend_from_slice(&line.to_le_bytes());
    with_len(if class > 10 { 0xAA } else { 0xAB }, b)
}

pub fn loginack() -> Vec<u8> {
    let mut b = vec![0x01, 0x74, 0x00, 0x00, 0x04];
    b_varchar(&mut b, "Microsoft SQL Server");
    b.extend_from_slice(&[16, 0, 0x10, 0x00]); // 16.0.4096
    with_len(0xAD, b)
}

/// FEATUREEXTACK: (FeatureId, data) per acknowledged feature, e.g. UTF8_SUPPORT (0x0A, `[1]`:
/// VARCHAR with a UTF-8 collation is legal) and FEDAUTH (0x02).
pub fn featureextack(acks: &[(u8, &[u8])]) -> Vec<u8> {
    let mut v = vec![0xAE];
    for (id, data) in acks {
        v.push(*id);
        v.extend_from_slice(&(data.len() as u32).to_le_bytes());
        v.extend_from_slice(data);
    }
    v.push(0xFF);
    v
}

pub fn done(tok: u8, status: u16, curcmd: u16, rows: u64) -> Vec<u8> {
    let mut v = Vec::with_capacity(13);
    v.push(tok);
    v.extend_from_slice(&status.to_le_bytes());
    v.extend_from_slice(&curcmd.to_le_bytes());
    v.extend_from_slice(&rows.to_le_bytes());
    v
}

/// What ends every procedure call (an RPC, or EXEC of a procedure in a batch): RETURNSTATUS
/// (1 after an error), `@handle` as RETURNVALUE when the call prepared a statement, and DONEPROC
/// (DONE_MORE when another call of the same request follows).
pub fn proc_end(more: bool, handle: Option<i32>, err: bool) -> Vec<u8> {
    let mut out = returnstatus(if err { 1 } else { 0 });
    if let Some(h) = handle {
        out.extend(returnvalue_int(0, "@handle", h));
    }
    out.extend(done(
        TOK_DONEPROC,
        (if err { DONE_ERROR } else { 0 }) | (if more { DONE_MORE } else { 0 }),
        CMD_EXECUTE,
        0,
    ));
    out
}

pub fn returnstatus(v: i32) -> Vec<u8> {
    let mut b = vec![0x79];
    b.extend_from_slice(&v.to_le_bytes());
    b
}

/// RETURNVALUE (0xAC) for an output parameter of any type.
pub fn returnvalue(ordinal: u16, name: &str, ty: Ty, v: &rusqlite::types::Value) -> Vec<u8> {
    let mut b = vec![0xAC];
    b.extend_from_slice(&ordinal.to_le_bytes());
    b_varchar(&mut b, name);
    b.push(0x01);
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&0x0009u16.to_le_bytes());
    ty.write_type_info(&mut b);
    value::put_value(&mut b, ty, v);
    b
}

/// RETURNVALUE (0xAC) for an output INT parameter such as sp_prepexec's @handle.
pub fn returnvalue_int(ordinal: u16, name: &str, value: i32) -> Vec<u8> {
    let mut b = vec![0xAC];
    b.extend_from_slice(&ordinal.to_le_bytes());
    b_varchar(&mut b, name);
    b.push(0x01); // status: output parameter
    b.extend_from_slice(&0u32.to_le_bytes()); // UserType
    b.extend_from_slice(&0x0009u16.to_le_bytes()); // flags: nullable | updateable-unknown
    b.extend_from_slice(&[0x26, 4, 4]);
    b.extend_from_slice(&value.to_le_bytes());
    b
}

#[derive(Clone, Debug)]
pub struct Column {
    pub name: String,
    pub ty: Ty,
    pub nullable: bool,
    /// Sent as the type's fixed-length TDS type (`Ty::fixed_len_type`) instead of its nullable
    /// one; its ROW values then carry no length byte (`value::put_row_with`'s `fixed`).
    pub fixed_len: bool,
    /// COLMETADATA's UserType: 0, or `USER_TYPE_TIMESTAMP` for a rowversion column.
    pub user_type: u32,
    /// An IDENTITY column (fIdentity in its flags): Driver 18 reports it as
    /// SQL_DESC_AUTO_UNIQUE_VALUE, FreeTDS's bcp leaves it out of its INSERT BULK.
    pub identity: bool,
}

/// SQL Server's UserType of a timestamp / rowversion column (binary(8) on the wire).
pub const USER_TYPE_TIMESTAMP: u32 = 80;

impl Column {
    pub fn new(name: &str, ty: Ty) -> Column {
        Column {
            name: name.to_string(),
            ty,
            nullable: true,
            fixed_len: false,
            user_type: 0,
            identity: false,
        }
    }

    /// A result column as SQL Server describes it: a NOT NULL column of a type with a
    /// fixed-length TDS type (int, bit, float, datetime, money, …) is sent as that type.
    /// Clients read nullability from both: Driver 18 reports an INTN column nullable whatever
    /// its flags say.
    pub fn described(name: &str, ty: Ty, nullable: bool) -> Column {
        Column {
            nullable,
            fixed_len: !nullable && ty.fixed_len_type().is_some(),
            ..Column::new(name, ty)
        }
    }

    /// Per column: sent fixed-length (`fixed` of `value::put_row_with`).
    pub fn fixed(cols: &[Column]) -> Vec<bool> {
        cols.iter().map(|c| c.fixed_len).collect()
    }
}

pub fn colmetadata(cols: &[Column]) -> Vec<u8> {
    let mut v = vec![0x81];
    v.extend_from_slice(&(cols.len() as u16).to_le_bytes());
    for c in cols {
        v.extend_from_slice(&c.user_type.to_le_bytes());
        let flags: u16 =
            if c.nullable { 0x0009 } else { 0x0008 } | if c.identity { 0x0010 } else { 0 };
        v.extend_from_slice(&flags.to_le_bytes());
        match c.ty.fixed_len_type().filter(|_| c.fixed_len) {
            Some(t) => v.push(t),
            None => c.ty.write_type_info(&mut v),
        }
        b_varchar(&mut v, &c.name);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn done_layout() {
        assert_eq!(
            done(TOK_DONE, DONE_COUNT, CMD_SELECT, 3),
            vec![0xFD, 0x10, 0, 0xC1, 0, 3, 0, 0, 0, 0, 0, 0, 0]
        );
    }

    #[test]
    fn not_null_fixed_types_are_sent_fixed_length() {
        let cols = [
            Column::described("a", Ty::Int, false),
            Column::described("b", Ty::Int, true),
            Column::described("c", Ty::NVarChar(Some(2)), false),
        ];
        assert!(cols[0].fixed_len && !cols[1].fixed_len && !cols[2].fixed_len);
        let m = colmetadata(&cols);
        // count, then per column UserType (4), flags (2), TYPE_INFO, name.
        assert_eq!(&m[..3], &[0x81, 3, 0]);
        assert_eq!(
            &m[3..11],
            &[0, 0, 0, 0, 0x08, 0, 0x38, 1],
            "INT4, not nullable"
        );
        assert_eq!(
            &m[13..22],
            &[0, 0, 0, 0, 0x09, 0, 0x26, 4, 1],
            "INTN(4), nullable"
        );
        assert_eq!(
            &m[24..31],
            &[0, 0, 0, 0, 0x08, 0, 0xE7],
            "NVARCHAR, not nullable"
        );
    }

    #[test]
    fn timestamp_columns_carry_their_user_type() {
        let rv = Column {
            user_type: USER_TYPE_TIMESTAMP,
            ..Column::described("rv", Ty::Binary(8), false)
        };
        let m = colmetadata(&[rv]);
        assert_eq!(&m[3..12], &[80, 0, 0, 0, 0x08, 0, 0xAD, 8, 0]);
    }

    #[test]
    fn error_token() {
        let e = message(50000, "x", 16, 1, 1);
        assert_eq!(e[0], 0xAA);
        let i = message(0, "hi", 0, 1, 1);
        assert_eq!(i[0], 0xAB);
    }
}
