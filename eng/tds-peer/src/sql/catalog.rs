//! Catalog procedures the drivers call for SQLTables / SQLColumns: `sp_tables` and
//! `sp_columns_100` (result layouts of SQL Server 2022), answered from SQLite's schema.

use crate::resp::Resp;
use crate::sql::context::{Context, Out, Param, StmtErr};
use crate::token::{Column, value::as_text};
use crate::types::Ty;
use rusqlite::types::Value;
use std::io;

/// SQL Server LIKE pattern match, case-insensitive: `%`, `_` and `[…]` sets (`[_]`, `[%]`,
/// `[abc]`, `[a-c]`, `[^x]`), which is how Driver 18 and FreeTDS send an ODBC search pattern's
/// escaped `\_` to the catalog procedures.
pub(super) fn like(pattern: &str, s: &str) -> bool {
    /// The set at `p[0] == '['`: (matches `c`, its length in the pattern), None without `]`.
    fn set(p: &[char], c: char) -> Option<(bool, usize)> {
        let close = p.iter().skip(2).position(|&x| x == ']')? + 2;
        let body = &p[1..close];
        let (neg, body) = match body.first() {
            Some('^') if body.len() > 1 => (true, &body[1..]),
            _ => (false, body),
        };
        let lc = c.to_ascii_lowercase();
        let mut hit = false;
        let mut i = 0;
        while i < body.len() {
            if i + 2 < body.len() && body[i + 1] == '-' {
                let (a, b) = (
                    body[i].to_ascii_lowercase(),
                    body[i + 2].to_ascii_lowercase(),
                );
                hit |= a <= lc && lc <= b;
                i += 3;
            } else {
                hit |= body[i].to_ascii_lowercase() == lc;
                i += 1;
            }
        }
        Some((hit != neg, close + 1))
    }
    fn m(p: &[char], s: &[char]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some('%') => (0..=s.len()).any(|i| m(&p[1..], &s[i..])),
            Some('_') => !s.is_empty() && m(&p[1..], &s[1..]),
            Some('[') if s.first().is_some_and(|&c| set(p, c).is_some()) => {
                let (hit, len) = set(p, s[0]).unwrap();
                hit && m(&p[len..], &s[1..])
            }
            Some(c) => s.first().is_some_and(|x| x.eq_ignore_ascii_case(c)) && m(&p[1..], &s[1..]),
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let s: Vec<char> = s.chars().collect();
    m(&p, &s)
}

/// The qualifier (catalog) argument of a catalog procedure, as SQL Server's procedures check
/// it: NULL or the current database goes on (`Ok(true)`); an empty string forces an empty
/// result where the procedure says so (`empty_ok`: sp_tables, sp_stored_procedures;
/// `Ok(false)`); any other name is 15250.
pub(super) fn qualifier(
    cx: &Context,
    params: &[Param],
    name: &str,
    pos: usize,
    empty_ok: bool,
) -> Result<bool, crate::sql::errors::SqlError> {
    let Some(q) = param(params, name, pos).map(as_text) else {
        return Ok(true);
    };
    if q.eq_ignore_ascii_case(&cx.database) {
        return Ok(true);
    }
    if q.is_empty() && empty_ok {
        return Ok(false);
    }
    Err(crate::sql::errors::SqlError::new(
        15250,
        16,
        "The database name component of the object qualifier must be the name of the current database.",
    ))
}

/// The owner (schema) argument: NULL is any; a pattern (`fUsePattern`) or a name otherwise,
/// matched against `dbo`, the schema of every object the catalog procedures list.
pub(super) fn owner_matches(params: &[Param], name: &str, pos: usize, pattern: bool) -> bool {
    match param(params, name, pos).map(as_text) {
        None => true,
        Some(o) if pattern => like(&o, "dbo"),
        Some(o) => o.eq_ignore_ascii_case("dbo"),
    }
}

/// `@fUsePattern` (1 by default): name arguments are LIKE patterns; 0: exact names.
pub(super) fn use_pattern(params: &[Param]) -> bool {
    params
        .iter()
        .find(|p| p.name.eq_ignore_ascii_case("@fUsePattern"))
        .is_none_or(|p| as_text(&p.value) != "0")
}

/// A name argument matched as a pattern or exactly (case-insensitive, as the default collation).
pub(super) fn name_matches(pattern: &str, name: &str, use_pattern: bool) -> bool {
    if use_pattern {
        like(pattern, name)
    } else {
        pattern.eq_ignore_ascii_case(name)
    }
}

pub(super) fn param<'a>(params: &'a [Param], name: &str, pos: usize) -> Option<&'a Value> {
    params
        .iter()
        .find(|p| p.name.eq_ignore_ascii_case(name))
        .or_else(|| params.get(pos).filter(|p| p.name.is_empty()))
        .map(|p| &p.value)
        .filter(|v| !matches!(v, Value::Null))
}

pub(super) fn t(s: &str) -> Value {
    Value::Text(s.to_string())
}

pub(super) fn i(v: i64) -> Value {
    Value::Integer(v)
}

/// ODBC type code, type name, column size, decimal digits, char octet length.
pub(super) fn odbc_type(ty: Ty) -> (i64, String, Option<i64>, Option<i64>, Option<i64>) {
    let name = ty.name().split(['(', ' ']).next().unwrap_or("").to_string();
    match ty {
        Ty::Bit => (-7, name, Some(1), Some(0), None),
        Ty::TinyInt => (-6, name, Some(3), Some(0), None),
        Ty::SmallInt => (5, name, Some(5), Some(0), None),
        Ty::Int => (4, name, Some(10), Some(0), None),
        Ty::BigInt => (-5, name, Some(19), Some(0), None),
        Ty::Real => (7, name, Some(24), None, None),
        Ty::Float => (6, name, Some(53), None, None),
        Ty::Decimal(p, s) => (3, name, Some(p as i64), Some(s as i64), None),
        Ty::Numeric(p, s) => (2, name, Some(p as i64), Some(s as i64), None),
        Ty::Money => (3, name, Some(19), Some(4), None),
        Ty::SmallMoney => (3, name, Some(10), Some(4), None),
        Ty::Date => (91, name, Some(10), None, None),
        Ty::Time(s) => (
            -154,
            name,
            Some(8 + if s > 0 { 1 + s as i64 } else { 0 }),
            Some(s as i64),
            None,
        ),
        Ty::DateTime => (93, name, Some(23), Some(3), None),
        Ty::SmallDateTime => (93, name, Some(16), Some(0), None),
        Ty::DateTime2(s) => (
            93,
            name,
            Some(19 + if s > 0 { 1 + s as i64 } else { 0 }),
            Some(s as i64),
            None,
        ),
        Ty::DateTimeOffset(s) => (
            -155,
            name,
            Some(26 + if s > 0 { 1 + s as i64 } else { 0 }),
            Some(s as i64),
            None,
        ),
        Ty::Char(n, _) => (1, name, Some(n as i64), None, Some(n as i64)),
        Ty::VarChar(n, _) => (
            12,
            name,
            Some(n.map(|v| v as i64).unwrap_or(0)),
            None,
            Some(n.map(|v| v as i64).unwrap_or(0)),
        ),
        Ty::NChar(n) => (-8, name, Some(n as i64), None, Some(2 * n as i64)),
        Ty::NVarChar(n) => (
            -9,
            name,
            Some(n.map(|v| v as i64).unwrap_or(0)),
            None,
            Some(n.map(|v| 2 * v as i64).unwrap_or(0)),
        ),
        Ty::Binary(n) => (-2, name, Some(n as i64), None, Some(n as i64)),
        Ty::VarBinary(n) => (
            -3,
            name,
            Some(n.map(|v| v as i64).unwrap_or(0)),
            None,
            Some(n.map(|v| v as i64).unwrap_or(0)),
        ),
        Ty::Guid => (-11, name, Some(36), None, None),
        Ty::Xml => (-152, name, Some(0), None, Some(0)),
        Ty::Variant => (-150, name, Some(8000), Some(0), None),
        // As SQL Server's describe reports them (sql/vector.rs): varchar(max).
        Ty::Vector(_) | Ty::Json => (12, name, Some(0), None, Some(0)),
    }
}

/// sp_columns' LENGTH (ODBC BUFFER_LENGTH): bytes of the default C buffer for the type, as SQL
/// Server reports it (int 4, decimal p + 2, datetime2 16, nvarchar(n) 2n, …); 0 for `(max)`.
pub(super) fn buffer_length(ty: Ty) -> i64 {
    match ty {
        Ty::Bit | Ty::TinyInt => 1,
        Ty::SmallInt => 2,
        Ty::Int | Ty::Real => 4,
        Ty::BigInt | Ty::Float => 8,
        Ty::Decimal(p, _) | Ty::Numeric(p, _) => p as i64 + 2,
        Ty::Money => 21,
        Ty::SmallMoney => 12,
        Ty::Date => 6,
        Ty::Time(_) => 12,
        Ty::DateTime | Ty::SmallDateTime | Ty::DateTime2(_) => 16,
        Ty::DateTimeOffset(_) => 20,
        Ty::Guid => 16,
        Ty::Char(n, _) | Ty::Binary(n) => n as i64,
        Ty::NChar(n) => 2 * n as i64,
        Ty::VarChar(n, _) | Ty::VarBinary(n) => n.map_or(0, |v| v as i64),
        Ty::NVarChar(n) => n.map_or(0, |v| 2 * v as i64),
        Ty::Xml | Ty::Vector(_) | Ty::Json => 0,
        Ty::Variant => 8000,
    }
}

/// A catalog procedure's error (15250): sent, the call goes on to its DONEPROC.
fn send_error(out: &mut Out, r: &mut Resp, e: &crate::sql::errors::SqlError) -> io::Result<()> {
    out.error(r, e)
}

pub(crate) fn user_tables(cx: &mut Context) -> Vec<(String, String)> {
    let mut st = match cx.db.prepare("SELECT name, type FROM sqlite_master WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '__tdspeer%' AND name NOT LIKE '##%' ORDER BY name") {
        Ok(s) => s,
        Err(_) => return Vec::new(),
    };
    st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .map(|it| it.flatten().collect())
        .unwrap_or_default()
}

/// sp_tables @table_name, @table_owner, @table_qualifier, @table_type
pub(crate) fn sp_tables(
    cx: &mut Context,
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> io::Result<()> {
    let name = param(params, "@table_name", 0)
        .map(as_text)
        .unwrap_or_else(|| "%".into());
    let types = param(params, "@table_type", 3)
        .map(as_text)
        .unwrap_or_default()
        .to_ascii_uppercase();
    let cols = vec![
        Column::new("TABLE_QUALIFIER", Ty::NVarChar(Some(128))),
        Column::new("TABLE_OWNER", Ty::NVarChar(Some(128))),
        Column::new("TABLE_NAME", Ty::NVarChar(Some(128))),
        Column::new("TABLE_TYPE", Ty::VarChar(Some(32), false)),
        Column::new("REMARKS", Ty::VarChar(Some(254), false)),
    ];
    let pattern = use_pattern(params);
    let go = match qualifier(cx, params, "@table_qualifier", 2, true) {
        Ok(go) => go && owner_matches(params, "@table_owner", 1, pattern),
        Err(e) => return send_error(out, r, &e),
    };
    let rows: Vec<Vec<Value>> = user_tables(cx)
        .into_iter()
        .filter(|_| go)
        .filter(|(n, _)| name_matches(&name, n, pattern))
        .map(|(n, ty)| (n, if ty == "view" { "VIEW" } else { "TABLE" }))
        .filter(|(_, ty)| types.is_empty() || types.contains(ty))
        .map(|(n, ty)| {
            vec![
                Value::Text(cx.database.clone()),
                t("dbo"),
                t(&n),
                t(ty),
                Value::Null,
            ]
        })
        .collect();
    match cx.send_rows(&cols, &rows, out, r) {
        Err(StmtErr::Io(e)) => Err(e),
        _ => Ok(()),
    }
}

/// sp_columns_100 @table_name, @table_owner, @table_qualifier, @column_name, …
pub(crate) fn sp_columns(
    cx: &mut Context,
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> io::Result<()> {
    let tname = param(params, "@table_name", 0)
        .map(as_text)
        .unwrap_or_else(|| "%".into());
    let cname = param(params, "@column_name", 3)
        .map(as_text)
        .unwrap_or_else(|| "%".into());
    let n = |s: &str| Column::new(s, Ty::NVarChar(Some(128)));
    let si = |s: &str| Column::new(s, Ty::SmallInt);
    let int = |s: &str| Column::new(s, Ty::Int);
    let cols = vec![
        n("TABLE_QUALIFIER"),
        n("TABLE_OWNER"),
        n("TABLE_NAME"),
        n("COLUMN_NAME"),
        si("DATA_TYPE"),
        n("TYPE_NAME"),
        int("PRECISION"),
        int("LENGTH"),
        si("SCALE"),
        si("RADIX"),
        si("NULLABLE"),
        Column::new("REMARKS", Ty::VarChar(Some(254), false)),
        Column::new("COLUMN_DEF", Ty::NVarChar(Some(4000))),
        si("SQL_DATA_TYPE"),
        si("SQL_DATETIME_SUB"),
        int("CHAR_OCTET_LENGTH"),
        int("ORDINAL_POSITION"),
        Column::new("IS_NULLABLE", Ty::VarChar(Some(254), false)),
        Column::new("SS_IS_SPARSE", Ty::SmallInt),
        Column::new("SS_IS_COLUMN_SET", Ty::SmallInt),
        Column::new("SS_IS_COMPUTED", Ty::SmallInt),
        Column::new("SS_IS_IDENTITY", Ty::SmallInt),
        n("SS_UDT_CATALOG_NAME"),
        n("SS_UDT_SCHEMA_NAME"),
        n("SS_UDT_ASSEMBLY_TYPE_NAME"),
        n("SS_XML_SCHEMACOLLECTION_CATALOG_NAME"),
        n("SS_XML_SCHEMACOLLECTION_SCHEMA_NAME"),
        n("SS_XML_SCHEMACOLLECTION_NAME"),
        Column::new("SS_DATA_TYPE", Ty::TinyInt),
    ];
    let pattern = use_pattern(params);
    let go = match qualifier(cx, params, "@table_qualifier", 2, false) {
        Ok(go) => go && owner_matches(params, "@table_owner", 1, pattern),
        Err(e) => return send_error(out, r, &e),
    };
    let mut rows = Vec::new();
    for (table, _) in user_tables(cx)
        .into_iter()
        .filter(|_| go)
        .filter(|(n, _)| name_matches(&tname, n, pattern))
    {
        let info: Vec<(String, String, bool, Option<String>, bool)> = match cx.db.prepare(&format!(
            "PRAGMA table_info(\"{}\")",
            table.replace('"', "\"\"")
        )) {
            Ok(mut st) => st
                .query_map([], |r| {
                    Ok((
                        r.get(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, i64>(3)? != 0,
                        r.get::<_, Option<String>>(4)?,
                        r.get::<_, i64>(5)? != 0,
                    ))
                })
                .map(|it| it.flatten().collect())
                .unwrap_or_default(),
            Err(_) => continue,
        };
        for (pos, (col, decl, notnull, dflt, pk)) in info.into_iter().enumerate() {
            if !name_matches(&cname, &col, pattern) {
                continue;
            }
            let identity = pk && decl.eq_ignore_ascii_case("INTEGER");
            let ty = Ty::from_sqlite_decl(&decl)
                .or_else(|| Ty::parse(&decl))
                .unwrap_or(Ty::NVarChar(Some(4000)));
            let (code, mut tname, size, digits, octets) = odbc_type(ty);
            let mut dflt = dflt;
            if super::typemeta::is_rowversion_decl(&decl) {
                tname = "timestamp".into();
                dflt = None;
            }
            let nullable = !notnull && !identity;
            let (sql_type, sub) = match code {
                91 => (9, Some(1)),
                93 => (9, Some(3)),
                c => (c, None),
            };
            let radix = match ty {
                Ty::Real | Ty::Float => Some(2),
                t if matches!(t, Ty::Bit) || t.is_exact_numeric() => Some(10),
                _ => None,
            };
            let o = |v: Option<i64>| v.map(Value::Integer).unwrap_or(Value::Null);
            rows.push(vec![
                Value::Text(cx.database.clone()),
                t("dbo"),
                t(&table),
                t(&col),
                i(code),
                t(&if identity {
                    format!("{tname} identity")
                } else {
                    tname
                }),
                o(size),
                i(buffer_length(ty)),
                o(digits),
                o(radix),
                i(nullable as i64),
                Value::Null,
                dflt.map(Value::Text).unwrap_or(Value::Null),
                i(sql_type),
                o(sub),
                o(octets),
                i(pos as i64 + 1),
                t(if nullable { "YES" } else { "NO" }),
                i(0),
                i(0),
                i(0),
                i(identity as i64),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                i(0),
            ]);
        }
    }
    match cx.send_rows(&cols, &rows, out, r) {
        Err(StmtErr::Io(e)) => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn like_patterns() {
        assert!(super::like("%", "abc"));
        assert!(super::like("a_c", "ABC"));
        assert!(super::like("a[_]b", "a_b") && !super::like("a[_]b", "axb"));
        assert!(super::like("t[%]%", "t%1") && !super::like("t[%]%", "tx"));
        assert!(super::like("[a-c]x", "Bx") && !super::like("[^a-c]x", "bx"));
        assert!(super::like("a[b", "a[b"));
        assert!(super::like("t%", "table1"));
        assert!(!super::like("x%", "table1"));
    }
}
