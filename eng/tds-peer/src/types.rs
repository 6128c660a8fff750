//! SQL Server column types: parsing declared type text, and the TDS TYPE_INFO encoding.

/// CP1252 collation SQL_Latin1_General_CP1_CI_AS (LCID 0x0409, flags CI/KI/WI, SortId 52).
pub const COLL_CP1252: [u8; 5] = [0x09, 0x04, 0xD0, 0x00, 0x34];
/// Latin1_General_100_CI_AS_SC_UTF8: LCID 0x0409, CI/KI/WI + fUTF8 (bit 26), version 2, SortId 0.
pub const COLL_UTF8: [u8; 5] = [0x09, 0x04, 0xD0, 0x24, 0x00];

/// A SQL Server data type as the peer sends it. `None` lengths mean `(max)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    Bit,
    TinyInt,
    SmallInt,
    Int,
    BigInt,
    Real,
    Float,
    Decimal(u8, u8),
    Numeric(u8, u8),
    Money,
    SmallMoney,
    Date,
    Time(u8),
    DateTime,
    SmallDateTime,
    DateTime2(u8),
    DateTimeOffset(u8),
    Char(u16, bool),
    VarChar(Option<u16>, bool),
    NChar(u16),
    NVarChar(Option<u16>),
    Binary(u16),
    VarBinary(Option<u16>),
    Guid,
    Xml,
    Variant,
    /// SQL Server 2025: VECTOR(n) float32 and JSON (vector.rs: wire form and downgrade).
    Vector(u16),
    Json,
}

fn len_arg(args: &[String], default: u16) -> Option<u16> {
    match args.first() {
        None => Some(default),
        Some(a) if a.eq_ignore_ascii_case("max") => None,
        Some(a) => Some(
            a.trim()
                .parse::<u32>()
                .ok()
                .map(|v| v.clamp(1, 8000) as u16)
                .unwrap_or(default),
        ),
    }
}

fn num_arg(args: &[String], i: usize, default: u8) -> u8 {
    args.get(i)
        .and_then(|a| a.trim().parse::<u8>().ok())
        .unwrap_or(default)
}

impl Ty {
    /// Parses declared type text such as `NVARCHAR(50)`, `decimal(38, 10)`, `VARBINARY(MAX)`,
    /// `datetimeoffset(7)`, `varchar(50) collate Latin1_General_100_CI_AS_SC_UTF8`.
    pub fn parse(text: &str) -> Option<Ty> {
        let t = text.trim();
        let utf8 = t.to_ascii_uppercase().contains("UTF8");
        let (name, args) = match t.find('(') {
            Some(p) => {
                let close = t[p..].find(')').map(|c| p + c).unwrap_or(t.len());
                let args: Vec<String> = t[p + 1..close]
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .collect();
                (t[..p].trim(), args)
            }
            None => (t.split_whitespace().next().unwrap_or(""), Vec::new()),
        };
        let name = name
            .trim_matches(|c| c == '[' || c == ']')
            .to_ascii_lowercase();
        let name = name.split_whitespace().next().unwrap_or("").to_string();
        Some(match name.as_str() {
            "bit" => Ty::Bit,
            "tinyint" => Ty::TinyInt,
            "smallint" => Ty::SmallInt,
            "int" | "integer" => Ty::Int,
            "bigint" => Ty::BigInt,
            "real" => Ty::Real,
            "float" => match args.first().and_then(|a| a.parse::<u8>().ok()) {
                Some(n) if n <= 24 => Ty::Real,
                _ => Ty::Float,
            },
            "double" => Ty::Float,
            "decimal" | "dec" => {
                Ty::Decimal(num_arg(&args, 0, 18).clamp(1, 38), num_arg(&args, 1, 0))
            }
            "numeric" => Ty::Numeric(num_arg(&args, 0, 18).clamp(1, 38), num_arg(&args, 1, 0)),
            "money" => Ty::Money,
            "smallmoney" => Ty::SmallMoney,
            "date" => Ty::Date,
            "time" => Ty::Time(num_arg(&args, 0, 7).min(7)),
            "datetime" => Ty::DateTime,
            "smalldatetime" => Ty::SmallDateTime,
            "datetime2" => Ty::DateTime2(num_arg(&args, 0, 7).min(7)),
            "datetimeoffset" => Ty::DateTimeOffset(num_arg(&args, 0, 7).min(7)),
            "char" | "character" => Ty::Char(len_arg(&args, 1).unwrap_or(8000), utf8),
            "varchar" => Ty::VarChar(len_arg(&args, 1), utf8),
            "text" => Ty::VarChar(None, utf8),
            "nchar" => Ty::NChar(len_arg(&args, 1).unwrap_or(4000).min(4000)),
            "nvarchar" => Ty::NVarChar(len_arg(&args, 1).map(|n| n.min(4000))),
            // sysname is SQL Server's nvarchar(128) NOT NULL alias type.
            "sysname" => Ty::NVarChar(Some(128)),
            "ntext" => Ty::NVarChar(None),
            "binary" => Ty::Binary(len_arg(&args, 1).unwrap_or(8000)),
            "varbinary" => Ty::VarBinary(len_arg(&args, 1)),
            "image" => Ty::VarBinary(None),
            "uniqueidentifier" => Ty::Guid,
            "xml" => Ty::Xml,
            "sql_variant" => Ty::Variant,
            "rowversion" | "timestamp" => Ty::Binary(8),
            "vector" | "json" => return crate::vector::parse_decl(&name, &args),
            _ => return None,
        })
    }

    /// Canonical declared text (inverse of `parse`).
    pub fn name(&self) -> String {
        fn l(n: Option<u16>) -> String {
            n.map(|v| v.to_string()).unwrap_or_else(|| "max".into())
        }
        let u = |b: bool| {
            if b {
                " collate Latin1_General_100_CI_AS_SC_UTF8"
            } else {
                ""
            }
        };
        match *self {
            Ty::Bit => "bit".into(),
            Ty::TinyInt => "tinyint".into(),
            Ty::SmallInt => "smallint".into(),
            Ty::Int => "int".into(),
            Ty::BigInt => "bigint".into(),
            Ty::Real => "real".into(),
            Ty::Float => "float".into(),
            Ty::Decimal(p, s) => format!("decimal({p},{s})"),
            Ty::Numeric(p, s) => format!("numeric({p},{s})"),
            Ty::Money => "money".into(),
            Ty::SmallMoney => "smallmoney".into(),
            Ty::Date => "date".into(),
            Ty::Time(s) => format!("time({s})"),
            Ty::DateTime => "datetime".into(),
            Ty::SmallDateTime => "smalldatetime".into(),
            Ty::DateTime2(s) => format!("datetime2({s})"),
            Ty::DateTimeOffset(s) => format!("datetimeoffset({s})"),
            Ty::Char(n, b) => format!("char({n}){}", u(b)),
            Ty::VarChar(n, b) => format!("varchar({}){}", l(n), u(b)),
            Ty::NChar(n) => format!("nchar({n})"),
            Ty::NVarChar(n) => format!("nvarchar({})", l(n)),
            Ty::Binary(n) => format!("binary({n})"),
            Ty::VarBinary(n) => format!("varbinary({})", l(n)),
            Ty::Guid => "uniqueidentifier".into(),
            Ty::Xml => "xml".into(),
            Ty::Variant => "sql_variant".into(),
            Ty::Vector(n) => format!("vector({n})"),
            Ty::Json => "json".into(),
        }
    }

    /// How the value is stored in SQLite (the affinity word embedded in the SQLite declared type).
    pub fn affinity(&self) -> &'static str {
        match self {
            Ty::Bit | Ty::TinyInt | Ty::SmallInt | Ty::Int | Ty::BigInt => "INT",
            Ty::Real | Ty::Float => "REAL",
            Ty::Binary(_) | Ty::VarBinary(_) | Ty::Vector(_) => "BLOB",
            _ => "TEXT",
        }
    }

    /// SQLite declared type that both fixes the storage affinity and lets us recover the SQL
    /// Server type from `decltype` (e.g. `TEXT_DECIMAL_38_10`, `INT_BIGINT`, `TEXT_VARCHAR_MAX_UTF8`).
    /// The affinity word comes first; no other part contains INT/CHAR/TEXT/BLOB/REAL by design
    /// except where it matches the chosen affinity anyway (SQLite checks INT before CHAR).
    pub fn sqlite_decl(&self) -> String {
        let mut n = self.name().to_ascii_uppercase();
        let utf8 = n.contains("UTF8");
        if let Some(p) = n.find(" COLLATE") {
            n.truncate(p);
        }
        let body: String = n
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let body = body.trim_end_matches('_').replace("__", "_");
        // Obfuscate names that would otherwise trip SQLite's affinity substring rules.
        let body = body
            .replace("CHAR", "CHR")
            .replace("INT", "IN_T")
            .replace("TEXT", "TXT");
        format!(
            "MS{}_{}{}",
            self.affinity(),
            body,
            if utf8 { "_UTF8" } else { "" }
        )
    }

    /// Inverse of `sqlite_decl`.
    pub fn from_sqlite_decl(decl: &str) -> Option<Ty> {
        let d = decl.to_ascii_uppercase();
        let rest = d
            .strip_prefix("MSINT_")
            .or_else(|| d.strip_prefix("MSREAL_"))
            .or_else(|| d.strip_prefix("MSBLOB_"))
            .or_else(|| d.strip_prefix("MSTEXT_"))?;
        let utf8 = rest.ends_with("_UTF8");
        let rest = rest
            .trim_end_matches("_UTF8")
            .replace("CHR", "CHAR")
            .replace("IN_T", "INT")
            .replace("TXT", "TEXT");
        // The one type name with an underscore of its own.
        if rest == "SQL_VARIANT" {
            return Some(Ty::Variant);
        }
        let mut parts = rest.split('_');
        let name = parts.next()?;
        let args: Vec<&str> = parts.collect();
        let text = if args.is_empty() {
            name.to_string()
        } else {
            format!("{name}({})", args.join(","))
        };
        let text = if utf8 { format!("{text} UTF8") } else { text };
        Ty::parse(&text)
    }

    /// The declared length of a character or binary type with one (not `(max)`): a longer
    /// value is an error (truncation), checked by the `__fits` CHECK of typed columns.
    pub fn length_limit(&self) -> Option<u16> {
        match *self {
            Ty::Char(n, _)
            | Ty::VarChar(Some(n), _)
            | Ty::NChar(n)
            | Ty::NVarChar(Some(n))
            | Ty::Binary(n)
            | Ty::VarBinary(Some(n)) => Some(n),
            _ => None,
        }
    }

    /// The types whose stored values the `__fits` CHECK range-checks (a value past the type's
    /// range is an arithmetic overflow): integers, money, decimal and the bounded date/times.
    pub fn range_checked(&self) -> bool {
        self.is_exact_numeric()
            || matches!(
                self,
                Ty::DateTime | Ty::SmallDateTime | Ty::DateTimeOffset(_)
            )
    }

    /// The exact numeric types: integers (bit aside), money and decimal/numeric.
    pub fn is_exact_numeric(&self) -> bool {
        matches!(
            self,
            Ty::TinyInt
                | Ty::SmallInt
                | Ty::Int
                | Ty::BigInt
                | Ty::Decimal(..)
                | Ty::Numeric(..)
                | Ty::Money
                | Ty::SmallMoney
        )
    }

    pub fn is_plp(&self) -> bool {
        matches!(
            self,
            Ty::VarChar(None, _) | Ty::NVarChar(None) | Ty::VarBinary(None) | Ty::Xml
        ) || crate::vector::is_plp(*self)
    }

    pub fn nullable_fixed_len(&self) -> u8 {
        match self {
            Ty::Bit | Ty::TinyInt => 1,
            Ty::SmallInt => 2,
            Ty::Int | Ty::Real | Ty::SmallMoney | Ty::SmallDateTime => 4,
            _ => 8,
        }
    }

    /// The fixed-length TDS type SQL Server sends for a NOT NULL column of this type (INT4 for
    /// `int NOT NULL` or `SELECT 1`, where a nullable int is INTN), if it has one. Its values are
    /// the nullable type's without their length byte.
    pub fn fixed_len_type(&self) -> Option<u8> {
        Some(match self {
            Ty::TinyInt => 0x30,
            Ty::Bit => 0x32,
            Ty::SmallInt => 0x34,
            Ty::Int => 0x38,
            Ty::SmallDateTime => 0x3A,
            Ty::Real => 0x3B,
            Ty::Money => 0x3C,
            Ty::DateTime => 0x3D,
            Ty::Float => 0x3E,
            Ty::SmallMoney => 0x7A,
            Ty::BigInt => 0x7F,
            _ => return None,
        })
    }

    /// The 5-byte TDS collation of a character type (none for the others).
    pub fn tds_collation(&self) -> Option<[u8; 5]> {
        match *self {
            Ty::Char(_, true) | Ty::VarChar(_, true) => Some(COLL_UTF8),
            Ty::Char(..) | Ty::VarChar(..) | Ty::NChar(_) | Ty::NVarChar(_) => Some(COLL_CP1252),
            _ => None,
        }
    }

    /// Appends TYPE_INFO (type byte + length/precision/collation) as in COLMETADATA/RETURNVALUE.
    pub fn write_type_info(&self, out: &mut Vec<u8>) {
        let coll = |b: bool| if b { COLL_UTF8 } else { COLL_CP1252 };
        match *self {
            Ty::Bit => out.extend_from_slice(&[0x68, 1]),
            Ty::TinyInt | Ty::SmallInt | Ty::Int | Ty::BigInt => {
                out.extend_from_slice(&[0x26, self.nullable_fixed_len()])
            }
            Ty::Real | Ty::Float => out.extend_from_slice(&[0x6D, self.nullable_fixed_len()]),
            Ty::Money | Ty::SmallMoney => out.extend_from_slice(&[0x6E, self.nullable_fixed_len()]),
            Ty::DateTime | Ty::SmallDateTime => {
                out.extend_from_slice(&[0x6F, self.nullable_fixed_len()])
            }
            Ty::Decimal(p, s) => out.extend_from_slice(&[0x6A, decimal_len(p), p, s]),
            Ty::Numeric(p, s) => out.extend_from_slice(&[0x6C, decimal_len(p), p, s]),
            Ty::Date => out.push(0x28),
            Ty::Time(s) => out.extend_from_slice(&[0x29, s]),
            Ty::DateTime2(s) => out.extend_from_slice(&[0x2A, s]),
            Ty::DateTimeOffset(s) => out.extend_from_slice(&[0x2B, s]),
            Ty::Char(n, u) => {
                out.push(0xAF);
                out.extend_from_slice(&n.to_le_bytes());
                out.extend_from_slice(&coll(u));
            }
            Ty::VarChar(n, u) => {
                out.push(0xA7);
                out.extend_from_slice(&n.unwrap_or(0xFFFF).to_le_bytes());
                out.extend_from_slice(&coll(u));
            }
            Ty::NChar(n) => {
                out.push(0xEF);
                out.extend_from_slice(&(n * 2).to_le_bytes());
                out.extend_from_slice(&COLL_CP1252);
            }
            Ty::NVarChar(n) => {
                out.push(0xE7);
                out.extend_from_slice(&n.map(|v| v * 2).unwrap_or(0xFFFF).to_le_bytes());
                out.extend_from_slice(&COLL_CP1252);
            }
            Ty::Binary(n) => {
                out.push(0xAD);
                out.extend_from_slice(&n.to_le_bytes());
            }
            Ty::VarBinary(n) => {
                out.push(0xA5);
                out.extend_from_slice(&n.unwrap_or(0xFFFF).to_le_bytes());
            }
            Ty::Guid => out.extend_from_slice(&[0x24, 16]),
            Ty::Xml => out.extend_from_slice(&[0xF1, 0]),
            Ty::Variant => {
                out.push(0x62);
                out.extend_from_slice(&8009u32.to_le_bytes());
            }
            Ty::Vector(_) | Ty::Json => crate::vector::write_type_info(*self, out),
        }
    }
}

/// Byte length of a DECIMALN value (sign byte included) for a precision.
pub fn decimal_len(p: u8) -> u8 {
    match p {
        0..=9 => 5,
        10..=19 => 9,
        20..=28 => 13,
        _ => 17,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_name_roundtrip() {
        for t in [
            "NVARCHAR(50)",
            "DATETIMEOFFSET(7)",
            "DECIMAL(38,10)",
            "VARBINARY(MAX)",
            "TIME(7)",
            "UNIQUEIDENTIFIER",
            "MONEY",
            "BIT",
            "TINYINT",
            "varchar(50) collate Latin1_General_100_CI_AS_SC_UTF8",
            "nvarchar(max)",
            "char(10)",
            "sql_variant",
        ] {
            let ty = Ty::parse(t).unwrap();
            assert_eq!(Ty::parse(&ty.name()), Some(ty), "{t}");
            assert_eq!(
                Ty::from_sqlite_decl(&ty.sqlite_decl()),
                Some(ty),
                "{t} {}",
                ty.sqlite_decl()
            );
        }
    }

    #[test]
    fn sqlite_decl_affinity() {
        // SQLite affinity: contains INT -> integer; CHAR/CLOB/TEXT -> text; BLOB -> blob; REAL/FLOA/DOUB -> real.
        let d = Ty::parse("nvarchar(50)").unwrap().sqlite_decl();
        assert!(d.contains("TEXT") && !d.contains("INT"), "{d}");
        let d = Ty::parse("decimal(38,10)").unwrap().sqlite_decl();
        assert!(d.contains("TEXT") && !d.contains("INT"), "{d}");
        let d = Ty::parse("smallint").unwrap().sqlite_decl();
        assert!(d.contains("INT"), "{d}");
        let d = Ty::parse("varbinary(max)").unwrap().sqlite_decl();
        assert!(
            d.contains("BLOB") && !d.contains("INT") && !d.contains("CHAR"),
            "{d}"
        );
        let d = Ty::parse("float").unwrap().sqlite_decl();
        assert!(
            d.contains("REAL") && !d.contains("INT") && !d.contains("CHAR"),
            "{d}"
        );
    }

    #[test]
    fn type_info_bytes() {
        let mut v = Vec::new();
        Ty::NVarChar(Some(50)).write_type_info(&mut v);
        assert_eq!(v, [0xE7, 100, 0, 0x09, 0x04, 0xD0, 0x00, 0x34]);
        v.clear();
        Ty::Decimal(38, 10).write_type_info(&mut v);
        assert_eq!(v, [0x6A, 17, 38, 10]);
    }
}
