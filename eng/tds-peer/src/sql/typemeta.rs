//! What SQL Server's catalog says about a type: `sys.types.system_type_id`, the `max_length` /
//! `precision` / `scale` of `sys.columns`, and the TDS type byte and length that
//! sp_describe_* report as `tds_type_id` / `tds_length`.

use crate::types::{Ty, decimal_len};

/// The SQLite declared type of a rowversion column (`Ty::from_sqlite_decl` reads it as
/// binary(8); rowversion.rs keeps the column).
pub const ROWVERSION_DECL: &str = "MSBLOB_ROWVERSION";

/// SQL Server's system type id of timestamp/rowversion (sys.types, sys.columns).
pub const ROWVERSION_TYPE_ID: i64 = 189;

/// User type ids start here (SQL Server numbers user types from 257).
pub const USER_TYPE_BASE: i64 = 256;

/// Is a SQLite declared type a rowversion column's?
pub fn is_rowversion_decl(decl: &str) -> bool {
    decl.eq_ignore_ascii_case(ROWVERSION_DECL)
}

pub struct TypeMeta {
    pub system_type_id: i64,
    /// Bytes; -1 for `(max)` and xml.
    pub max_length: i64,
    pub precision: i64,
    pub scale: i64,
    pub tds_type_id: i64,
    pub tds_length: i64,
}

/// Bytes of a time part of scale `s` (TIME, DATETIME2 and DATETIMEOFFSET add 3 / 5).
fn time_len(s: u8) -> i64 {
    match s {
        0..=2 => 3,
        3..=4 => 4,
        _ => 5,
    }
}

/// Characters of a fractional-seconds suffix of scale `s` (`.fffffff` for 7).
fn frac_digits(s: u8) -> i64 {
    if s > 0 { 1 + s as i64 } else { 0 }
}

pub fn meta(ty: Ty) -> TypeMeta {
    let m = |system_type_id, max_length, precision, scale, tds_type_id, tds_length| TypeMeta {
        system_type_id,
        max_length,
        precision,
        scale,
        tds_type_id,
        tds_length,
    };
    let var = |n: Option<u16>, per: i64| n.map(|v| v as i64 * per).unwrap_or(-1);
    let tds_var = |n: Option<u16>, per: i64| n.map(|v| v as i64 * per).unwrap_or(0xFFFF);
    match ty {
        Ty::Bit => m(104, 1, 1, 0, 0x68, 1),
        Ty::TinyInt => m(48, 1, 3, 0, 0x26, 1),
        Ty::SmallInt => m(52, 2, 5, 0, 0x26, 2),
        Ty::Int => m(56, 4, 10, 0, 0x26, 4),
        Ty::BigInt => m(127, 8, 19, 0, 0x26, 8),
        Ty::Real => m(59, 4, 24, 0, 0x6D, 4),
        Ty::Float => m(62, 8, 53, 0, 0x6D, 8),
        Ty::Decimal(p, s) => {
            let l = decimal_len(p) as i64;
            m(106, l, p as i64, s as i64, 0x6A, l)
        }
        Ty::Numeric(p, s) => {
            let l = decimal_len(p) as i64;
            m(108, l, p as i64, s as i64, 0x6C, l)
        }
        Ty::Money => m(60, 8, 19, 4, 0x6E, 8),
        Ty::SmallMoney => m(122, 4, 10, 4, 0x6E, 4),
        Ty::Date => m(40, 3, 10, 0, 0x28, 3),
        Ty::Time(s) => m(
            41,
            time_len(s),
            8 + frac_digits(s),
            s as i64,
            0x29,
            time_len(s),
        ),
        Ty::DateTime => m(61, 8, 23, 3, 0x6F, 8),
        Ty::SmallDateTime => m(58, 4, 16, 0, 0x6F, 4),
        Ty::DateTime2(s) => {
            let l = time_len(s) + 3;
            m(42, l, 19 + frac_digits(s), s as i64, 0x2A, l)
        }
        Ty::DateTimeOffset(s) => {
            let l = time_len(s) + 5;
            m(43, l, 26 + frac_digits(s), s as i64, 0x2B, l)
        }
        Ty::Char(n, _) => m(175, n as i64, 0, 0, 0xAF, n as i64),
        Ty::VarChar(n, _) => m(167, var(n, 1), 0, 0, 0xA7, tds_var(n, 1)),
        Ty::NChar(n) => m(239, 2 * n as i64, 0, 0, 0xEF, 2 * n as i64),
        Ty::NVarChar(n) => m(231, var(n, 2), 0, 0, 0xE7, tds_var(n, 2)),
        Ty::Binary(n) => m(173, n as i64, 0, 0, 0xAD, n as i64),
        Ty::VarBinary(n) => m(165, var(n, 1), 0, 0, 0xA5, tds_var(n, 1)),
        Ty::Guid => m(36, 16, 0, 0, 0x24, 16),
        Ty::Xml => m(241, -1, 0, 0, 0xF1, 0xFFFF),
        Ty::Variant => m(98, 8016, 0, 0, 0x62, 8016),
        // sys.columns: vector is varbinary underneath (user type 255), 8 + 4n bytes.
        Ty::Vector(n) => m(
            165,
            crate::vector::payload_len(n) as i64,
            0,
            0,
            0xF5,
            crate::vector::payload_len(n) as i64,
        ),
        Ty::Json => m(244, -1, 0, 0, 0xF4, 0xFFFF),
    }
}

/// The type as SQL Server spells it in `system_type_name` (`nvarchar(50)`, `decimal(18,4)`):
/// the collation is a separate column there.
pub fn type_name(ty: Ty) -> String {
    let n = ty.name();
    match n.find(" collate") {
        Some(p) => n[..p].to_string(),
        None => n,
    }
}

/// Collation of a character type (the server default, or the UTF-8 one the peer knows).
pub fn collation(ty: Ty) -> Option<&'static str> {
    match ty {
        Ty::Char(_, true) | Ty::VarChar(_, true) => Some("Latin1_General_100_CI_AS_SC_UTF8"),
        Ty::Char(..) | Ty::VarChar(..) | Ty::NChar(_) | Ty::NVarChar(_) => {
            Some("SQL_Latin1_General_CP1_CI_AS")
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_sizes_match_sql_server() {
        let d = meta(Ty::Decimal(18, 4));
        assert_eq!(
            (d.system_type_id, d.max_length, d.precision, d.scale),
            (106, 9, 18, 4)
        );
        let t = meta(Ty::DateTime2(3));
        assert_eq!((t.max_length, t.precision, t.scale), (7, 23, 3));
        let o = meta(Ty::DateTimeOffset(7));
        assert_eq!((o.max_length, o.precision), (10, 34));
        assert_eq!(meta(Ty::NVarChar(Some(50))).max_length, 100);
        assert_eq!(meta(Ty::NVarChar(None)).max_length, -1);
        assert_eq!(meta(Ty::Time(7)).precision, 16);
        assert_eq!(type_name(Ty::VarChar(Some(5), true)), "varchar(5)");
    }
}
