//! T-SQL -> SQLite rewriting, plus the "result column type" side channel: for each item of
//! the main SELECT list whose SQL Server type is evident from the text (CAST/CONVERT target,
//! a parameter's declared type, GETDATE(), a literal), remember that type.

use super::lexer::{Tok, matching, next_sig, sig, split_commas};
use crate::conv;
use crate::types::Ty;

pub struct Ctx<'a> {
    /// Parameter names (with `@`) and declared types, in binding order (`?1` is the first).
    pub params: &'a [(String, Option<Ty>)],
    pub rowcount: i64,
    pub identity: Option<i64>,
    pub trancount: i64,
    pub spid: u16,
    /// The session's current database (login, USE, SQL_ATTR_CURRENT_CATALOG).
    pub database: String,
    /// Character-typed columns of the statement's tables, for `+` between columns (T-SQL
    /// concatenates strings); filled only when the statement has such a `+`.
    pub text_columns: Vec<String>,
    /// Decimal, numeric and money columns of the statement's tables, for `MAX(col)` /
    /// `MIN(col)` (decagg.rs); filled only when the statement has such a call.
    pub dec_columns: Vec<(String, Ty)>,
    /// The error being handled in a CATCH block.
    pub error: Option<crate::sql::errors::SqlError>,
    /// User schemas (CREATE SCHEMA): `s.t` names the SQLite table `"s.t"` (sysviews.rs).
    pub schemas: std::sync::Arc<Vec<String>>,
}

/// The version the login ack and @@VERSION announce.
pub const PRODUCT_VERSION: &str = "16.0.4096.0";

pub const VERSION: &str =
    "Microsoft SQL Server 2022 (RTM) - 16.0.4096.0 (X64) (tds-peer emulation: SQLite engine)";

/// End (exclusive) of the operand that starts at `from` (spaces skipped): signs, then a
/// parenthesized expression, `CASE … END`, a (dotted) name or call, a literal or a variable.
/// None for anything else.
pub(super) fn operand_end(toks: &[Tok], from: usize) -> Option<usize> {
    let mut j = next_sig(toks, from)?;
    while toks[j].is_punct('-') || toks[j].is_punct('+') {
        j = next_sig(toks, j + 1)?;
    }
    match &toks[j] {
        Tok::Punct('(') => Some(matching(toks, j)? + 1),
        Tok::Word(w) if w.eq_ignore_ascii_case("CASE") => case_end(toks, j).map(|e| e + 1),
        Tok::Word(_) | Tok::Quoted(_) => {
            let mut end = j + 1;
            loop {
                match next_sig(toks, end) {
                    Some(d) if toks[d].is_punct('.') => {
                        let n = next_sig(toks, d + 1)?;
                        if !matches!(toks[n], Tok::Word(_) | Tok::Quoted(_)) {
                            return None;
                        }
                        end = n + 1;
                    }
                    Some(p) if toks[p].is_punct('(') => return Some(matching(toks, p)? + 1),
                    _ => return Some(end),
                }
            }
        }
        Tok::Num(_) | Tok::Str { .. } | Tok::Var(_) | Tok::Hex(_) => Some(j + 1),
        _ => None,
    }
}

/// Index of the END closing the CASE at `case`.
fn case_end(toks: &[Tok], case: usize) -> Option<usize> {
    let mut d = 0;
    for (i, t) in toks.iter().enumerate().skip(case) {
        if t.is_word("CASE") {
            d += 1;
        } else if t.is_word("END") {
            d -= 1;
            if d == 0 {
                return Some(i);
            }
        }
    }
    None
}

fn text_of(toks: &[Tok]) -> String {
    toks.iter()
        .map(|t| t.text())
        .collect::<String>()
        .trim()
        .to_string()
}

fn parse_type(toks: &[Tok]) -> Result<Ty, String> {
    let t = text_of(toks);
    let clean: String = t.replace(['[', ']', '"'], "");
    let ty = Ty::parse(&clean)
        .ok_or_else(|| format!("Type {} is not a defined system type.", clean.trim()))?;
    // In CAST/CONVERT a character or binary type without a length is 30 long (1 in a
    // declaration): CAST(SERVERPROPERTY('ProductVersion') AS VARCHAR) is the whole version.
    Ok(match ty {
        _ if clean.contains('(') => ty,
        Ty::VarChar(Some(1), u) => Ty::VarChar(Some(30), u),
        Ty::Char(1, u) => Ty::Char(30, u),
        Ty::NVarChar(Some(1)) => Ty::NVarChar(Some(30)),
        Ty::NChar(1) => Ty::NChar(30),
        Ty::VarBinary(Some(1)) => Ty::VarBinary(Some(30)),
        Ty::Binary(1) => Ty::Binary(30),
        _ => ty,
    })
}

/// A numeric literal for SQLite. T-SQL reads `1234567890123456789012.5` as an exact
/// numeric; SQLite would round it to a REAL (about 15 digits) or overflow an INTEGER, so such
/// a literal becomes the decimal text, the peer's canonical exact form (a DECIMAL column stores
/// it as is). Shorter literals stay numbers, keeping SQLite's arithmetic and comparisons.
fn num_literal(n: &str) -> String {
    let exponent = n.contains(['e', 'E']);
    let digits = n.trim_start_matches('0').replace('.', "");
    let exact = exponent || digits.len() <= 15 || (!n.contains('.') && n.parse::<i64>().is_ok());
    if exact {
        n.to_string()
    } else {
        format!("'{n}'")
    }
}

/// Is `toks[i]` negated by a minus sign right before it (blanks between allowed, not a
/// comment), rather than subtracted? It is when what precedes the minus is no value: the
/// start, an operator or `(`/`,`, or a keyword.
fn unary_minus_before(toks: &[Tok], i: usize) -> bool {
    let blank = |t: &Tok| matches!(t, Tok::Space(s) if s.chars().all(char::is_whitespace));
    let Some(m) = toks[..i].iter().rposition(|t| !blank(t)) else {
        return false;
    };
    if !toks[m].is_punct('-') {
        return false;
    }
    match toks[..m].iter().rev().find(|t| !t.is_space()) {
        None => true,
        Some(Tok::Punct(c)) => *c != ')',
        Some(Tok::Word(w)) => matches!(
            w.to_ascii_uppercase().as_str(),
            "SELECT"
                | "VALUES"
                | "SET"
                | "WHERE"
                | "AND"
                | "OR"
                | "NOT"
                | "WHEN"
                | "THEN"
                | "ELSE"
                | "RETURN"
                | "BETWEEN"
                | "IN"
                | "IS"
                | "LIKE"
                | "ON"
                | "HAVING"
                | "TOP"
                | "AS"
                | "PRINT"
                | "CASE"
        ),
        Some(_) => false,
    }
}

fn quote_ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// Functions answered from the session (`DB_NAME()`, `SERVERPROPERTY('…')`, …): see
/// `Ctx::session_call`.
fn session_function(up: &str) -> bool {
    matches!(
        up,
        "DB_NAME"
            | "DB_ID"
            | "SCHEMA_NAME"
            | "SCHEMA_ID"
            | "USER_NAME"
            | "USER_ID"
            | "SUSER_SNAME"
            | "SUSER_NAME"
            | "SUSER_ID"
            | "ORIGINAL_LOGIN"
            | "SERVERPROPERTY"
            | "DATABASEPROPERTYEX"
            | "TYPE_ID"
            | "OBJECT_NAME"
            | "COL_NAME"
    )
}

fn prev_is_dot(toks: &[Tok], i: usize) -> bool {
    toks[..i]
        .iter()
        .rev()
        .find(|t| !t.is_space())
        .is_some_and(|t| t.is_punct('.'))
}

/// SQL Server 2022's SERVERPROPERTY answers (the version the login ack announces):
/// (property, base type, value as SQLite literal); unknown properties are NULL.
fn server_property(name: &str) -> Option<(&'static str, String)> {
    let s = |v: &str| ("nvarchar(128)", format!("'{v}'"));
    let n = |v: i64| ("int", v.to_string());
    Some(match name.to_ascii_lowercase().as_str() {
        "productversion" => s(PRODUCT_VERSION),
        "productmajorversion" => s("16"),
        "productminorversion" => s("0"),
        "productbuild" => s("4096"),
        "productlevel" => s("RTM"),
        "edition" => s("Developer Edition (64-bit)"),
        "editionid" => ("bigint", "-2117995310".into()),
        "engineedition" => n(3),
        "servername" | "machinename" | "computernamephysicalnetbios" => s("TDSPEER"),
        "collation" => s("SQL_Latin1_General_CP1_CI_AS"),
        "lcid" => n(1033),
        "sqlcharset" => ("tinyint", "1".into()),
        "sqlcharsetname" => s("iso_1"),
        "sqlsortorder" => ("tinyint", "52".into()),
        "sqlsortordername" => s("nocase_iso"),
        "isclustered"
        | "ishadrenabled"
        | "isintegratedsecurityonly"
        | "isfulltextinstalled"
        | "issingleuser"
        | "isxtpsupported"
        | "ispolybaseinstalled" => n(0),
        "processid" => n(std::process::id() as i64),
        "resourceversion" => s("16.00.4096"),
        _ => return None,
    })
}

impl Ctx<'_> {
    /// For a database name starting a three-part name (`master.dbo.t`, `appdb..t`, the
    /// current database or a system one), the index after its dot(s); `dot` is the next
    /// significant token's index.
    fn database_prefix(&self, toks: &[Tok], up: &str, dot: Option<usize>) -> Option<usize> {
        let dot = dot.filter(|&j| toks[j].is_punct('.'))?;
        let known = ["MASTER", "TEMPDB", "MODEL", "MSDB"].contains(&up)
            || up.eq_ignore_ascii_case(&self.database);
        if !known {
            return None;
        }
        let n = next_sig(toks, dot + 1)?;
        match &toks[n] {
            Tok::Punct('.') => Some(n + 1),
            Tok::Word(_) | Tok::Quoted(_)
                if next_sig(toks, n + 1).is_some_and(|k| toks[k].is_punct('.')) =>
            {
                Some(dot + 1)
            }
            _ => None,
        }
    }

    /// SQLite text for a session function call with rewritten arguments.
    fn session_call(&self, up: &str, args: &[String]) -> String {
        let lit = |s: &str| format!("'{}'", s.replace('\'', "''"));
        // Database ids as on a fresh SQL Server: master 1, tempdb 2, model 3, msdb 4, then ours.
        let dbs = [("master", 1), ("tempdb", 2), ("model", 3), ("msdb", 4)];
        let own_id = dbs
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(&self.database))
            .map_or(5, |d| d.1);
        let arg = args.first();
        match up {
            "OBJECT_NAME" | "COL_NAME" => {
                super::objnames::call(up, args, self.spid).unwrap_or_else(|| "NULL".into())
            }
            "DB_NAME" => match arg {
                None => lit(&self.database),
                Some(a) => {
                    let mut case = format!("CASE {a}");
                    for (n, id) in dbs {
                        case.push_str(&format!(" WHEN {id} THEN '{n}'"));
                    }
                    if own_id == 5 {
                        case.push_str(&format!(" WHEN 5 THEN {}", lit(&self.database)));
                    }
                    case + " END"
                }
            },
            "DB_ID" => match arg {
                None => own_id.to_string(),
                Some(a) => {
                    let mut case = format!("CASE lower({a})");
                    for (n, id) in dbs {
                        case.push_str(&format!(" WHEN '{n}' THEN {id}"));
                    }
                    if own_id == 5 {
                        case.push_str(&format!(" WHEN lower({}) THEN 5", lit(&self.database)));
                    }
                    case + " END"
                }
            },
            // Schema ids of SQL Server: dbo 1, guest 2, INFORMATION_SCHEMA 3, sys 4.
            "SCHEMA_NAME" => match arg {
                None => "'dbo'".into(),
                Some(a) => format!(
                    "CASE {a} WHEN 1 THEN 'dbo' WHEN 2 THEN 'guest' WHEN 3 THEN 'INFORMATION_SCHEMA' WHEN 4 THEN 'sys' END"
                ),
            },
            "SCHEMA_ID" => match arg {
                None => "1".into(),
                Some(a) => format!(
                    "CASE lower({a}) WHEN 'dbo' THEN 1 WHEN 'guest' THEN 2 WHEN 'information_schema' THEN 3 WHEN 'sys' THEN 4 END"
                ),
            },
            // The login `sa` is the database owner: user dbo (id 1), login sa (principal id 1).
            "USER_NAME" => match arg {
                None => "'dbo'".into(),
                Some(a) => format!("CASE {a} WHEN 1 THEN 'dbo' WHEN 2 THEN 'guest' END"),
            },
            "USER_ID" | "SUSER_ID" => "1".into(),
            "SUSER_SNAME" | "SUSER_NAME" | "ORIGINAL_LOGIN" => "__login_name()".into(),
            // System types by their sys.types id, table types from the peer's catalog.
            "TYPE_ID" => {
                let name = arg
                    .map(|a| a.trim_matches('\'').to_string())
                    .unwrap_or_default();
                let name = crate::sql::schema::base_name(&name);
                match Ty::parse(&name) {
                    Some(ty) => crate::sql::typemeta::meta(ty).system_type_id.to_string(),
                    None => format!(
                        "(SELECT {} + rowid FROM __tdspeer_types WHERE name = {} COLLATE NOCASE)",
                        crate::sql::typemeta::USER_TYPE_BASE,
                        lit(&name)
                    ),
                }
            }
            "SERVERPROPERTY" => {
                let name = arg
                    .map(|a| a.trim_matches('\'').to_string())
                    .unwrap_or_default();
                match server_property(&name) {
                    Some((ty, v)) => format!("__cast({v}, 'sql_variant:{ty}')"),
                    None => "NULL".into(),
                }
            }
            // DATABASEPROPERTYEX(db, 'Collation' | 'Status' | 'Updateability' | …)
            _ => {
                let prop = args
                    .get(1)
                    .map(|a| a.trim_matches('\'').to_ascii_lowercase());
                let v = match prop.as_deref() {
                    Some("collation") => "'SQL_Latin1_General_CP1_CI_AS'",
                    Some("status") => "'ONLINE'",
                    Some("updateability") => "'READ_WRITE'",
                    Some("useraccess") => "'MULTI_USER'",
                    Some("recovery") => "'SIMPLE'",
                    Some("version") => "957",
                    _ => return "NULL".into(),
                };
                let ty = if v.starts_with('\'') {
                    "nvarchar(128)"
                } else {
                    "int"
                };
                format!("__cast({v}, 'sql_variant:{ty}')")
            }
        }
    }
}

impl Ctx<'_> {
    fn param_index(&self, name: &str) -> Option<usize> {
        self.params
            .iter()
            .position(|(n, _)| n.eq_ignore_ascii_case(name))
    }

    fn global(&self, name: &str) -> Option<String> {
        Some(match name.to_ascii_uppercase().as_str() {
            "@@ROWCOUNT" => self.rowcount.to_string(),
            "@@IDENTITY" => self
                .identity
                .map(|v| v.to_string())
                .unwrap_or_else(|| "NULL".into()),
            "@@VERSION" => format!("'{VERSION}'"),
            "@@SPID" => self.spid.to_string(),
            "@@DBTS" => "__dbts()".into(),
            "@@TRANCOUNT" => self.trancount.to_string(),
            "@@ERROR" => "0".into(),
            "@@SERVERNAME" | "@@SERVICENAME" => "'TDSPEER'".into(),
            "@@LANGUAGE" => "'us_english'".into(),
            _ => return None,
        })
    }

    /// Rewrites a token slice to SQLite text.
    pub fn rw(&self, toks: &[Tok]) -> Result<String, String> {
        // `sysobjects` anywhere (an IF EXISTS condition, a subquery) is a derived table.
        if let Some(expanded) = super::forms::sysobjects(toks) {
            return self.rw(&expanded);
        }
        let mut w = Rw {
            cx: self,
            toks,
            out: String::new(),
            limits: Vec::new(),
            depth: 0,
            starts: Vec::new(),
            wrapped: None,
        };
        let arith = toks
            .iter()
            .any(|t| matches!(t, Tok::Punct('+' | '-' | '*')));
        if arith {
            w.starts = vec![usize::MAX; toks.len()];
        }
        let mut i = 0;
        while i < toks.len() {
            if arith {
                w.starts[i] = w.out.len();
            }
            i = w.token(i)?.unwrap_or(i + 1);
        }
        while let Some((_, n)) = w.limits.pop() {
            w.out.push_str(&format!(" LIMIT {n}"));
        }
        Ok(w.out)
    }

    /// Types of the items of the statement's main SELECT list (see module doc).
    pub fn select_types(&self, toks: &[Tok]) -> Vec<Option<Ty>> {
        let inner = super::forms::inner_items(toks);
        select_list(toks)
            .into_iter()
            .map(|item| {
                let sg = sig(item);
                self.item_type(item, &sg).or_else(|| {
                    // A bare column of a derived table takes the type of the inner item that
                    // names it (`SELECT v FROM (SELECT CAST(… AS DECIMAL(5,2)) AS v …) t`).
                    let name = match sg.as_slice() {
                        [Tok::Word(n) | Tok::Quoted(n)] => n,
                        [_, Tok::Punct('.'), Tok::Word(n) | Tok::Quoted(n)] => n,
                        _ => return None,
                    };
                    inner.iter().find_map(|&(s, e)| {
                        let it = &toks[s..e];
                        let isg = sig(it);
                        (isg.len() > 2
                            && item_name(&isg).is_some_and(|x| x.eq_ignore_ascii_case(name)))
                        .then(|| self.item_type(it, &isg))
                        .flatten()
                    })
                })
            })
            .collect()
    }

    fn item_type(&self, item: &[Tok], sg: &[&Tok]) -> Option<Ty> {
        let first = sg.first()?;
        // Length of the leading expression if it is a single call/paren group.
        let call_end = |name_pos: usize| -> Option<usize> {
            let open = next_sig(item, name_pos + 1)?;
            if !item[open].is_punct('(') {
                return None;
            }
            matching(item, open)
        };
        let pos = item.iter().position(|t| !t.is_space())?;
        let only = |end: usize| -> bool {
            // Remaining tokens after the expression: nothing, `AS alias` or `alias`.
            let rest = sig(&item[end + 1..]);
            rest.is_empty()
                || (rest.len() <= 2
                    && (rest[0].is_word("AS") || rest.len() == 1)
                    && rest
                        .iter()
                        .all(|t| matches!(t, Tok::Word(_) | Tok::Quoted(_) | Tok::Str { .. })))
        };
        match first {
            Tok::Word(w) => {
                let up = w.to_ascii_uppercase();
                let end = if up == "CURRENT_TIMESTAMP" {
                    pos
                } else {
                    call_end(pos)?
                };
                if !only(end) {
                    return None;
                }
                match up.as_str() {
                    "CAST" | "TRY_CAST" => {
                        let open = next_sig(item, pos + 1)?;
                        let inner = &item[open + 1..end];
                        let asp = inner.iter().rposition(|t| t.is_word("AS"))?;
                        parse_type(&inner[asp + 1..]).ok()
                    }
                    "CONVERT" | "TRY_CONVERT" => {
                        let open = next_sig(item, pos + 1)?;
                        parse_type(split_commas(&item[open + 1..end])[0]).ok()
                    }
                    "GETDATE" | "CURRENT_TIMESTAMP" | "GETUTCDATE" => Some(Ty::DateTime),
                    "SYSDATETIME" | "SYSUTCDATETIME" => Some(Ty::DateTime2(7)),
                    "SYSDATETIMEOFFSET" => Some(Ty::DateTimeOffset(7)),
                    "NEWID" => Some(Ty::Guid),
                    "SCOPE_IDENTITY" | "IDENT_CURRENT" | "IDENT_SEED" | "IDENT_INCR" => {
                        Some(Ty::Numeric(38, 0))
                    }
                    "ERROR_MESSAGE" | "ERROR_PROCEDURE" => Some(Ty::NVarChar(Some(4000))),
                    "ERROR_NUMBER" | "ERROR_SEVERITY" | "ERROR_STATE" | "ERROR_LINE" => {
                        Some(Ty::Int)
                    }
                    "LEN" | "DATALENGTH" | "CHARINDEX" | "DATEDIFF" | "DATEPART" | "YEAR"
                    | "MONTH" | "DAY" => Some(Ty::Int),
                    "DATEDIFF_BIG" => Some(Ty::BigInt),
                    "DATEADD" => {
                        // The type of the date argument; a string literal means DATETIME.
                        let open = next_sig(item, pos + 1)?;
                        let parts = split_commas(&item[open + 1..end]);
                        let arg = parts.get(2)?;
                        Some(
                            self.item_type(arg, &sig(arg))
                                .filter(|t| {
                                    matches!(
                                        t,
                                        Ty::Date
                                            | Ty::Time(_)
                                            | Ty::DateTime
                                            | Ty::SmallDateTime
                                            | Ty::DateTime2(_)
                                            | Ty::DateTimeOffset(_)
                                    )
                                })
                                .unwrap_or(Ty::DateTime),
                        )
                    }
                    "DB_NAME" | "SCHEMA_NAME" | "USER_NAME" | "SUSER_SNAME" | "SUSER_NAME"
                    | "ORIGINAL_LOGIN" | "OBJECT_NAME" | "OBJECT_SCHEMA_NAME" | "TYPE_NAME"
                    | "COL_NAME" => Some(Ty::NVarChar(Some(128))),
                    "DB_ID" => Some(Ty::SmallInt),
                    "SCHEMA_ID" | "USER_ID" | "SUSER_ID" | "OBJECT_ID" | "TYPE_ID" => Some(Ty::Int),
                    "SERVERPROPERTY" | "DATABASEPROPERTYEX" | "SQL_VARIANT_PROPERTY" => {
                        Some(Ty::Variant)
                    }
                    "COUNT" => Some(Ty::Int),
                    "COUNT_BIG" => Some(Ty::BigInt),
                    "MAX" | "MIN" => self.dec_agg_column(item, next_sig(item, pos + 1)?),
                    _ => None,
                }
            }
            _ if !only(pos) => None,
            Tok::Var(v) => match v.to_ascii_uppercase().as_str() {
                "@@ROWCOUNT" | "@@SPID" | "@@TRANCOUNT" | "@@ERROR" => Some(Ty::Int),
                "@@IDENTITY" => Some(Ty::Numeric(38, 0)),
                "@@DBTS" => Some(Ty::VarBinary(Some(8))),
                "@@VERSION" | "@@SERVERNAME" | "@@SERVICENAME" | "@@LANGUAGE" => {
                    Some(Ty::NVarChar(Some(300)))
                }
                _ => self.param_index(v).and_then(|ix| self.params[ix].1),
            },
            Tok::Num(n) if n.contains('.') && !n.contains(['e', 'E']) => {
                let d = conv::parse_decimal(n)?;
                let digits = d.mag.to_string().len() as u8;
                Some(Ty::Numeric(digits.max(d.scale).max(1), d.scale))
            }
            Tok::Num(n) if n.contains(['e', 'E']) => Some(Ty::Float),
            // Beyond BIGINT: sent as decimal text (see `num_literal`).
            Tok::Num(n) if n.parse::<i64>().is_err() => Some(Ty::Numeric(
                n.trim_start_matches('0').len().clamp(1, 38) as u8,
                0,
            )),
            Tok::Str { n: true, s } => Some(Ty::NVarChar(Some(
                s.encode_utf16().count().clamp(1, 4000) as u16,
            ))),
            Tok::Str { n: false, s } => Some(Ty::VarChar(
                Some(s.chars().count().clamp(1, 8000) as u16),
                false,
            )),
            Tok::Hex(h) => Some(Ty::VarBinary(Some(
                ((h.len() - 2).div_ceil(2)).clamp(1, 8000) as u16,
            ))),
            _ => None,
        }
    }
}

/// The items of the statement's main SELECT list (its first depth-0 SELECT), up to the first
/// `*` / `t.*` item: after it, items no longer map one-to-one onto result columns.
fn select_list(toks: &[Tok]) -> Vec<&[Tok]> {
    // Find the first SELECT at paren depth 0.
    let mut depth = 0;
    let mut start = None;
    for (i, t) in toks.iter().enumerate() {
        if t.is_punct('(') {
            depth += 1;
        } else if t.is_punct(')') {
            depth -= 1;
        } else if depth == 0 && t.is_word("SELECT") {
            start = Some(i + 1);
            break;
        }
    }
    let Some(mut s) = start else {
        return Vec::new();
    };
    // Skip DISTINCT/ALL/TOP n.
    loop {
        let Some(j) = next_sig(toks, s) else {
            return Vec::new();
        };
        if toks[j].is_word("DISTINCT") || toks[j].is_word("ALL") {
            s = j + 1;
        } else if toks[j].is_word("TOP") {
            let Some(k) = next_sig(toks, j + 1) else {
                return Vec::new();
            };
            s = if toks[k].is_punct('(') {
                matching(toks, k).map(|c| c + 1).unwrap_or(k + 1)
            } else {
                k + 1
            };
        } else {
            break;
        }
    }
    let mut d = 0;
    let mut end = toks.len();
    for (i, t) in toks.iter().enumerate().skip(s) {
        if t.is_punct('(') {
            d += 1;
        } else if t.is_punct(')') {
            d -= 1;
        } else if d == 0
            && [
                "FROM",
                "WHERE",
                "GROUP",
                "ORDER",
                "UNION",
                "EXCEPT",
                "INTERSECT",
                "INTO",
                "HAVING",
            ]
            .iter()
            .any(|k| t.is_word(k))
        {
            end = i;
            break;
        }
    }
    split_commas(&toks[s..end])
        .into_iter()
        .take_while(|item| {
            let sg = sig(item);
            !(sg.iter().any(|t| t.is_punct('*')) && sg.len() <= 3)
        })
        .collect()
}

/// The name each item of the main SELECT list may give its column (see `select_list`): the
/// alias of `expr AS a` and `expr a`, or the column of `col` / `t.col`. A candidate
/// only: SQLite's column name confirms it (`CASE … END` ends with a word but has no name).
pub fn select_names(toks: &[Tok]) -> Vec<Option<String>> {
    select_list(toks)
        .into_iter()
        .map(|item| item_name(&sig(item)))
        .collect()
}

fn item_name(sg: &[&Tok]) -> Option<String> {
    let as_before = sg.len() >= 2 && sg[sg.len() - 2].is_word("AS");
    match sg.last()? {
        Tok::Word(w) if !w.eq_ignore_ascii_case("NULL") => Some(w.clone()),
        Tok::Quoted(q) => Some(q.clone()),
        Tok::Str { s, .. } if as_before => Some(s.clone()),
        _ => None,
    }
}

/// Every object with the id that OBJECT_ID, sys.objects and sysobjects agree on: tables and
/// views by SQLite rowid + 100 (ids below are SQL Server's system tables), temp tables negative (as SQL Server's are), procedures 1000000 + rowid.
const OBJECT_IDS: &str = "SELECT name, rowid + 100 AS id, CASE type WHEN 'view' THEN 'V' ELSE 'U' END AS xtype FROM sqlite_master WHERE type IN ('table','view') UNION ALL SELECT name, -rowid, 'U' FROM sqlite_temp_master WHERE type = 'table' UNION ALL SELECT name, 1000000 + rowid, 'P' FROM __tdspeer_procs";

/// Declared table rewrite result.
pub struct CreateTable {
    pub sql: String,
}

/// CREATE TABLE: column types become affinity-carrying SQLite declared types (see
/// `Ty::sqlite_decl`), IDENTITY becomes INTEGER PRIMARY KEY AUTOINCREMENT, `#t` becomes a TEMP
/// table, COLLATE/CLUSTERED are dropped.
/// `CHECK (__fits(col, 'type', 'table', 'column'))` for a column whose values SQL Server
/// bounds (length, range, precision), else "". SQLite stores whatever it is given.
fn fits_check(col: &str, ty: Ty, table: &str, name: &Tok) -> String {
    if ty.length_limit().is_none() && !ty.range_checked() && !super::vector::checked(ty) {
        return String::new();
    }
    let name = match name {
        Tok::Word(n) | Tok::Quoted(n) => n.clone(),
        other => other.text(),
    };
    let lit = |s: &str| format!("'{}'", s.replace('\'', "''"));
    format!(
        "CHECK (__fits({col}, {}, {}, {}))",
        lit(&ty.name()),
        lit(table),
        lit(&name)
    )
}

/// Columns of a table-level PRIMARY KEY (…): NOT NULL in SQL Server, which SQLite does not
/// make them (only an INTEGER PRIMARY KEY is never NULL there).
fn primary_key_columns(defs: &[&[Tok]]) -> Vec<String> {
    defs.iter()
        .filter_map(|d| {
            let sg = sig(d);
            let first = sg.first()?;
            if !(first.is_word("PRIMARY") || first.is_word("CONSTRAINT")) {
                return None;
            }
            let key = sg.iter().position(|t| t.is_word("KEY"))?;
            sg[..key].last().filter(|t| t.is_word("PRIMARY"))?;
            let open = sg.iter().skip(key).position(|t| t.is_punct('('))? + key;
            let close = matching(&sg, open)?;
            let names: Vec<String> = split_commas(&sg[open + 1..close])
                .into_iter()
                .filter_map(|part| Some(super::lexer::ident(part.first()?)?.to_string()))
                .collect();
            Some(names)
        })
        .flatten()
        .collect()
}

/// One column definition of CREATE TABLE (`name type [IDENTITY] [COLLATE] constraints`) as
/// SQLite's, with the range check of its type; a rowversion column adds its triggers.
fn column_def(
    ctx: &Ctx,
    def: &[Tok],
    table: &str,
    after_table: &str,
    temp: bool,
    key_cols: &[String],
    triggers: &mut String,
) -> Result<String, String> {
    // column: name type [args] constraints...
    let name_pos = def.iter().position(|t| !t.is_space()).unwrap();
    let col = match &def[name_pos] {
        Tok::Word(w) => quote_ident(w),
        Tok::Quoted(q) => quote_ident(q),
        other => return Err(format!("Incorrect syntax near '{}'.", other.text())),
    };
    let tstart = next_sig(def, name_pos + 1).ok_or("Column definition without a type")?;
    let mut tend = tstart + 1;
    if let Some(j) = next_sig(def, tend)
        && (def[j].is_word("PRECISION") || def[j].is_word("VARYING"))
    {
        tend = j + 1;
    }
    if let Some(j) = next_sig(def, tend)
        && def[j].is_punct('(')
    {
        tend = matching(def, j).ok_or("Incorrect syntax near ')'.")? + 1;
    }
    let mut ty_text = text_of(&def[tstart..tend]).replace(['[', ']'], "");
    let mut rest: Vec<Tok> = Vec::new();
    let mut case_sensitive = false;
    let mut identity = false;
    // `id INT PRIMARY KEY IDENTITY(1,1)` names the key before the identity: the column is
    // SQLite's INTEGER PRIMARY KEY either way, so its own PRIMARY KEY words go.
    let identity_col = def[tend..].iter().any(|t| t.is_word("IDENTITY"));
    let mut k = tend;
    while k < def.len() {
        let t = &def[k];
        if t.is_word("IDENTITY") {
            identity = true;
            if let Some(j) = next_sig(def, k + 1)
                && def[j].is_punct('(')
            {
                k = matching(def, j).unwrap_or(j) + 1;
                continue;
            }
        } else if t.is_word("COLLATE") {
            if let Some(j) = next_sig(def, k + 1) {
                let coll = def[j].text().to_ascii_uppercase();
                if coll.contains("UTF8") {
                    ty_text.push_str(" UTF8");
                }
                case_sensitive = coll.contains("_CS") || coll.contains("_BIN");
                k = j + 1;
                continue;
            }
        } else if t.is_word("ROWGUIDCOL")
            || t.is_word("SPARSE")
            || (identity_col
                && (t.is_word("PRIMARY")
                    || t.is_word("KEY")
                    || t.is_word("CLUSTERED")
                    || t.is_word("NONCLUSTERED")))
        {
            // dropped: no SQLite meaning (identity columns are INTEGER PRIMARY KEY already)
        } else {
            rest.push(t.clone());
        }
        k += 1;
    }
    let ty = Ty::parse(&ty_text).ok_or_else(|| {
        format!("Column, parameter, or variable #1: Cannot find data type {ty_text}.")
    })?;
    let rowversion = super::rowversion::is_type_text(&ty_text);
    if rowversion {
        triggers.push_str(&super::rowversion::triggers(after_table, &col, temp));
    }
    let decl = if identity {
        "INTEGER PRIMARY KEY AUTOINCREMENT".to_string()
    } else if rowversion {
        super::rowversion::column_decl()
    } else if matches!(
        ty,
        Ty::Char(..) | Ty::VarChar(..) | Ty::NChar(_) | Ty::NVarChar(_)
    ) && !case_sensitive
    {
        // SQL Server's default collations are case-insensitive (ASCII letters here).
        format!("{} COLLATE NOCASE", ty.sqlite_decl())
    } else {
        ty.sqlite_decl()
    };
    let check = if identity || rowversion {
        String::new()
    } else {
        fits_check(&col, ty, table, &def[name_pos])
    };
    let key = rest.iter().any(|t| t.is_word("PRIMARY"))
        || key_cols
            .iter()
            .any(|k| matches!(&def[name_pos], Tok::Word(n) | Tok::Quoted(n) if n.eq_ignore_ascii_case(k)));
    let not_null = rest
        .iter()
        .filter(|t| !t.is_space())
        .collect::<Vec<_>>()
        .windows(2)
        .any(|w| w[0].is_word("NOT") && w[1].is_word("NULL"));
    let decl = if key && !identity && !not_null {
        format!("{decl} NOT NULL")
    } else {
        decl
    };
    let rest = ctx.rw(&rest)?;
    let parts = [col.as_str(), decl.as_str(), rest.trim(), check.as_str()];
    Ok(parts
        .iter()
        .filter(|p| !p.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" "))
}

pub fn create_table(ctx: &Ctx, toks: &[Tok]) -> Result<CreateTable, String> {
    let open = toks
        .iter()
        .position(|t| t.is_punct('('))
        .ok_or("Incorrect syntax near 'TABLE'.")?;
    let close = matching(toks, open).ok_or("Incorrect syntax near ')'.")?;
    let head = sig(&toks[..open]);
    let name_tok = head.last().ok_or("Incorrect syntax near 'TABLE'.")?;
    // `#t` is the session's own (a SQLite TEMP table); `##t`, a global temporary table, is
    // a table of the shared database that every session sees (ddl.rs drops it at the end of
    // the session that made it).
    let temp = matches!(name_tok, Tok::Word(w) | Tok::Quoted(w) if w.starts_with('#') && !w.starts_with("##"));
    let name = ctx.rw(&toks[head
        .iter()
        .position(|t| t.is_word("TABLE"))
        .map(|_| 0)
        .unwrap_or(0)..open])?;
    let name = name.trim().to_string();
    // name currently holds "CREATE TABLE x"; rebuild with TEMP if needed.
    let after_table = name
        .to_ascii_uppercase()
        .find("TABLE")
        .map(|p| name[p + 5..].trim().to_string())
        .unwrap_or_default();
    // The table as SQL Server names it in messages.
    let table = match name_tok {
        Tok::Word(n) | Tok::Quoted(n) => {
            format!("{}.dbo.{n}", if temp { "tempdb" } else { "master" })
        }
        other => other.text(),
    };
    let mut defs_out = Vec::new();
    let defs = split_commas(&toks[open + 1..close]);
    let has_identity = defs.iter().any(|d| d.iter().any(|t| t.is_word("IDENTITY")));
    let key_cols = primary_key_columns(&defs);
    // Statements to run after the CREATE TABLE (the triggers of rowversion columns).
    let mut triggers = String::new();
    for def in defs {
        let sg = sig(def);
        let Some(first) = sg.first() else { continue };
        if [
            "CONSTRAINT",
            "PRIMARY",
            "UNIQUE",
            "CHECK",
            "FOREIGN",
            "INDEX",
        ]
        .iter()
        .any(|k| first.is_word(k))
        {
            if has_identity
                && (first.is_word("PRIMARY")
                    || (first.is_word("CONSTRAINT") && sg.iter().any(|t| t.is_word("PRIMARY"))))
            {
                continue;
            }
            defs_out.push(ctx.rw(def)?.trim().to_string());
            continue;
        }
        defs_out.push(column_def(
            ctx,
            def,
            &table,
            &after_table,
            temp,
            &key_cols,
            &mut triggers,
        )?);
    }
    let tail = ctx.rw(&toks[close + 1..])?;
    Ok(CreateTable {
        sql: format!(
            "CREATE {}TABLE {} ({}){}{triggers}",
            if temp { "TEMP " } else { "" },
            after_table,
            defs_out.join(", "),
            tail.trim_end()
        ),
    })
}

/// fn_listextendedproperty(...) as a derived table (its arguments are not applied).
pub const EXTPROPS_LIST: &str =
    "(SELECT 'TABLE' AS objtype, tbl AS objname, name, value FROM __tdspeer_extprops)";

/// SQL Server's JSON functions on SQLite's: `JSON_VALUE(e, path)` is the scalar at `path` as
/// text (`true`/`false` for booleans; NULL for objects, arrays and JSON null), `JSON_QUERY(e,
/// path)` the object or array there (NULL for scalars), `ISJSON(e)` 1/0. The path's `lax` /
/// `strict` mode prefix is dropped (`__jpath`); lax is SQLite's behaviour.
pub fn json_call(func: &str, args: &[String]) -> Result<String, String> {
    let (e, p) = match (func, args) {
        ("ISJSON", [e]) => {
            return Ok(format!(
                "(CASE WHEN ({e}) IS NULL THEN NULL WHEN json_valid({e}) THEN 1 ELSE 0 END)"
            ));
        }
        (_, [e, p]) => (e, p),
        _ => return Err(format!("The {func} function requires 2 arguments.")),
    };
    let at = format!("json_type({e}, __jpath({p}))");
    let val = format!("json_extract({e}, __jpath({p}))");
    Ok(if func == "JSON_VALUE" {
        format!(
            "(CASE {at} WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' WHEN 'null' THEN NULL WHEN 'object' THEN NULL WHEN 'array' THEN NULL ELSE CAST({val} AS TEXT) END)"
        )
    } else {
        format!("(CASE WHEN {at} IN ('object', 'array') THEN {val} END)")
    })
}

/// One rewrite in progress: the SQLite text so far and the TOP clauses waiting for the end of
/// their scope. Each step reads the token at `i` and returns where the next step starts (None:
/// the next token).
struct Rw<'a, 'c> {
    cx: &'a Ctx<'c>,
    toks: &'a [Tok],
    out: String,
    /// (paren depth of the SELECT, LIMIT text) for TOP clauses waiting for their scope end.
    limits: Vec<(i32, String)>,
    depth: i32,
    /// Where each token's text starts in `out` (filled when the statement has `+ - *`), so an
    /// arithmetic result can be wrapped in its overflow check after its left operand is out.
    starts: Vec<usize>,
    /// The last checked arithmetic: (token index after it, its start in `out`, result type).
    wrapped: Option<(usize, usize, Ty)>,
}

type Step = Result<Option<usize>, String>;

impl Rw<'_, '_> {
    fn token(&mut self, i: usize) -> Step {
        let toks = self.toks;
        match &toks[i] {
            Tok::Punct('(') => {
                self.depth += 1;
                self.out.push('(');
            }
            Tok::Punct(')') => {
                while self.limits.last().is_some_and(|(d, _)| *d >= self.depth) {
                    let n = self.limits.pop().unwrap().1;
                    self.out.push_str(&format!(" LIMIT {n}"));
                }
                self.depth -= 1;
                self.out.push(')');
            }
            Tok::Quoted(q) => return Ok(self.quoted(i, q)),
            Tok::Num(n) => self.number(i, n),
            Tok::Str { s, .. } => self.out.push_str(&format!("'{}'", s.replace('\'', "''"))),
            Tok::Hex(h) => self.out.push_str(&format!(
                "X'{}'",
                if h.len() % 2 == 1 {
                    format!("0{}", &h[2..])
                } else {
                    h[2..].to_string()
                }
            )),
            Tok::Var(v) => {
                if let Some(g) = self.cx.global(v) {
                    self.out.push_str(&g);
                } else if let Some(ix) = self.cx.param_index(v) {
                    self.out.push_str(&format!("?{}", ix + 1));
                } else {
                    return Err(format!("Must declare the scalar variable \"{v}\"."));
                }
            }
            Tok::Punct('+') => return self.plus(i),
            Tok::Punct(op @ ('-' | '*')) => {
                if let Some(end) = self.int_arith(i, *op)? {
                    return Ok(Some(end));
                }
                self.out.push(*op);
            }
            Tok::Punct(op @ ('/' | '%')) => {
                // SQLite divides by zero into NULL; T-SQL raises 8134: guard the divisor.
                self.out.push(*op);
                if let Some(end) = operand_end(toks, i + 1) {
                    let divisor = self.cx.rw(&toks[i + 1..end])?;
                    self.out.push_str(&format!(" __nz({})", divisor.trim()));
                    return Ok(Some(end));
                }
            }
            Tok::Word(w) if w.starts_with('#') => self.out.push_str(&quote_ident(w)),
            Tok::Word(w) => return self.word(i, w),
            t => self.out.push_str(&t.text()),
        }
        Ok(None)
    }

    /// `[master].[dbo].[t]`: bracketed database and schema prefixes as bare ones.
    fn quoted(&mut self, i: usize, q: &str) -> Option<usize> {
        let toks = self.toks;
        let next = next_sig(toks, i + 1);
        let up = q.to_ascii_uppercase();
        if let Some(after) = self.cx.database_prefix(toks, &up, next) {
            return Some(after);
        }
        if up == "DBO" && next.is_some_and(|j| toks[j].is_punct('.')) {
            return Some(next.unwrap() + 1);
        }
        if let Some((text, after)) = self.cx.catalog_ref(toks, &up, next) {
            self.out.push_str(&text);
            return Some(after);
        }
        if let Some((text, after)) = self.cx.schema_object(toks, q, next) {
            self.out.push_str(&text);
            return Some(after);
        }
        self.out.push_str(&quote_ident(q));
        None
    }

    fn number(&mut self, i: usize, n: &str) {
        let lit = num_literal(n);
        if lit.starts_with('\'')
            && unary_minus_before(self.toks, i)
            && self.out.trim_end().ends_with('-')
        {
            // `-9223372036854775809`: SQLite would negate the text as a REAL and round it (to
            // -2^63, which then fits a bigint); the sign goes inside.
            self.out.truncate(self.out.trim_end().len() - 1);
            self.out.push_str(&format!("'-{n}'"));
        } else {
            self.out.push_str(&lit);
        }
    }

    /// `+`: T-SQL string concatenation when an operand is a string or a text column.
    fn plus(&mut self, i: usize) -> Step {
        let toks = self.toks;
        let prev = toks[..i].iter().rev().find(|t| !t.is_space());
        let next = next_sig(toks, i + 1).map(|j| &toks[j]);
        let text_col = |t: Option<&Tok>| match t {
            Some(Tok::Word(w) | Tok::Quoted(w)) => self
                .cx
                .text_columns
                .iter()
                .any(|c| c.eq_ignore_ascii_case(w)),
            _ => false,
        };
        // The next operand's column is after its qualifier (`t.c`).
        let next_col = next_sig(toks, i + 1).map(|j| {
            let mut k = j;
            while toks.get(k + 1).is_some_and(|t| t.is_punct('.')) {
                k += 2;
            }
            toks.get(k)
        });
        if matches!(prev, Some(Tok::Str { .. }))
            || matches!(next, Some(Tok::Str { .. }))
            || text_col(prev)
            || text_col(next_col.flatten())
            || self.typed_concat(i)
        {
            self.out.push_str("||");
            return Ok(None);
        }
        if let Some(end) = self.int_arith(i, '+')? {
            return Ok(Some(end));
        }
        self.out.push('+');
        Ok(None)
    }

    /// `+` where one operand is a string by its type (a variable, parameter, string function,
    /// parenthesized string expression) and the other is not a number: concatenation.
    fn typed_concat(&self, i: usize) -> bool {
        let toks = self.toks;
        let left = super::optype::operand_start(toks, i).map(|s| &toks[s..i]);
        let right = operand_end(toks, i + 1).map(|e| &toks[i + 1..e]);
        let (Some(left), Some(right)) = (left, right) else {
            return false;
        };
        let cx = self.cx;
        (cx.is_text(left) && !cx.is_number(right)) || (cx.is_text(right) && !cx.is_number(left))
    }

    /// `+ - *` between integer operands, or a unary minus of one (not of a literal): the
    /// result goes through `__ck(…, 'type')`, SQL Server's 8115 when it leaves its type.
    /// Some(index after the right operand) when it wrapped; None leaves the operator as is.
    fn int_arith(&mut self, i: usize, op: char) -> Step {
        let toks = self.toks;
        let cx = self.cx;
        let prev_sig = |end: usize| toks[..end].iter().rposition(|t| !t.is_space());
        if op == '-'
            && let Some(n) = next_sig(toks, i + 1)
            && unary_minus_before(toks, n)
        {
            if matches!(toks[n], Tok::Num(_)) {
                return Ok(None);
            }
            let Some(end) = operand_end(toks, n) else {
                return Ok(None);
            };
            let Some(ty) = cx.int_ty(&toks[n..end]).filter(|t| *t != Ty::TinyInt) else {
                return Ok(None);
            };
            let inner = cx.rw(&toks[n..end])?;
            let p = self.out.len();
            self.out
                .push_str(&format!("__ck(-{}, '{}')", inner.trim(), ty.name()));
            self.wrapped = Some((end, p, ty));
            return Ok(Some(end));
        }
        if self.starts.is_empty() {
            return Ok(None);
        }
        let j = prev_sig(i);
        let (p, lt) = match self.wrapped {
            Some((e, p, t)) if j.map(|j| j + 1) == Some(e) => (p, t),
            _ => {
                let Some(mut s) = super::optype::operand_start(toks, i) else {
                    return Ok(None);
                };
                if unary_minus_before(toks, s)
                    && let Some(m) = prev_sig(s)
                {
                    s = m;
                }
                // An operator binding as tight or tighter already holds the left operand.
                match prev_sig(s).map(|b| &toks[b]) {
                    Some(Tok::Punct('*' | '/' | '%' | '.' | '~' | '&' | '|' | '^')) => {
                        return Ok(None);
                    }
                    Some(Tok::Punct('+' | '-')) if op != '*' => return Ok(None),
                    _ => {}
                }
                let Some(t) = cx.int_ty(&toks[s..i]) else {
                    return Ok(None);
                };
                match self.starts[s] {
                    usize::MAX => return Ok(None),
                    p => (p, t),
                }
            }
        };
        let Some(mut end) = operand_end(toks, i + 1) else {
            return Ok(None);
        };
        if op != '*' {
            while let Some(q) =
                next_sig(toks, end).filter(|&q| matches!(toks[q], Tok::Punct('*' | '/' | '%')))
            {
                let Some(e) = operand_end(toks, q + 1) else {
                    return Ok(None);
                };
                end = e;
            }
        }
        let Some(rt) = cx.int_expr_ty(&toks[i + 1..end]) else {
            return Ok(None);
        };
        let ty = super::optype::wider(lt, rt);
        let right = cx.rw(&toks[i + 1..end])?;
        self.out.insert_str(p, "__ck(");
        self.out
            .push_str(&format!("{op} {}, '{}')", right.trim(), ty.name()));
        self.wrapped = Some((end, p, ty));
        Ok(Some(end))
    }

    /// The parenthesised arguments of a call whose `(` is at `open`: the index of its `)`.
    fn close(&self, open: usize, msg: &str) -> Result<usize, String> {
        matching(self.toks, open).ok_or_else(|| msg.to_string())
    }

    /// A word: T-SQL functions and clauses SQLite spells differently or lacks.
    fn word(&mut self, i: usize, w: &str) -> Step {
        let toks = self.toks;
        let up = w.to_ascii_uppercase();
        let next = next_sig(toks, i + 1);
        let call = next.is_some_and(|j| toks[j].is_punct('('));
        let cx = self.cx;
        let open = next.unwrap_or(i);
        match up.as_str() {
            "CAST" | "TRY_CAST" | "CONVERT" | "TRY_CONVERT" if call => self.cast(&up, open),
            "GETDATE" | "CURRENT_TIMESTAMP" | "SYSDATETIME" | "GETUTCDATE" | "SYSUTCDATETIME"
            | "SYSDATETIMEOFFSET" | "NEWID" | "SCOPE_IDENTITY"
                if call || up == "CURRENT_TIMESTAMP" =>
            {
                self.clock(i, &up, call.then_some(open))
            }
            _ if call && session_function(&up) => {
                let close = self.close(open, "Incorrect syntax near ')'.")?;
                let args: Vec<String> = split_commas(&toks[open + 1..close])
                    .into_iter()
                    .filter(|p| p.iter().any(|t| !t.is_space()))
                    .map(|p| cx.rw(p).map(|s| s.trim().to_string()))
                    .collect::<Result<_, _>>()?;
                self.out.push_str(&cx.session_call(&up, &args));
                Ok(Some(close + 1))
            }
            "CURRENT_USER" | "SESSION_USER" | "SYSTEM_USER" | "USER"
                if !call && !prev_is_dot(toks, i) =>
            {
                self.out.push_str(if up == "SYSTEM_USER" {
                    "__login_name()"
                } else {
                    "'dbo'"
                });
                Ok(None)
            }
            "DATEADD" | "DATEDIFF" | "DATEPART" | "DATEDIFF_BIG" if call => {
                self.date_call(&up, open)
            }
            "OBJECT_ID" if call => self.object_id(open),
            "IDENT_CURRENT" | "IDENT_SEED" | "IDENT_INCR" if call => self.ident_info(&up, open),
            "SQL_VARIANT_PROPERTY" if call => self.variant_property(open),
            "OBJECTPROPERTY" if call => self.object_property(open),
            "INFORMATION_SCHEMA" | "SYS"
                if let Some((text, after)) = cx.catalog_ref(toks, &up, next) =>
            {
                self.out.push_str(&text);
                Ok(Some(after))
            }
            _ if let Some((text, after)) = cx.schema_object(toks, w, next) => {
                self.out.push_str(&text);
                Ok(Some(after))
            }
            "ERROR_MESSAGE" | "ERROR_NUMBER" | "ERROR_SEVERITY" | "ERROR_STATE" | "ERROR_LINE"
            | "ERROR_PROCEDURE"
                if call =>
            {
                self.error_function(&up, open)
            }
            "JSON_VALUE" | "JSON_QUERY" | "ISJSON" if call => {
                let close = self.close(open, "Incorrect syntax near ')'.")?;
                let args = split_commas(&toks[open + 1..close])
                    .into_iter()
                    .map(|a| cx.rw(a))
                    .collect::<Result<Vec<_>, _>>()?;
                self.out.push_str(&json_call(&up, &args)?);
                Ok(Some(close + 1))
            }
            "JSON_MODIFY" | "JSON_OBJECT" | "JSON_ARRAY" | "OPENJSON" if call => {
                let close = self.close(open, "Incorrect syntax near ')'.")?;
                let rw = |a: &[Tok]| cx.rw(a);
                self.out
                    .push_str(&super::json::call(&up, &toks[open + 1..close], &rw)?);
                Ok(Some(close + 1))
            }
            "FN_LISTEXTENDEDPROPERTY" if call => {
                let close = self.close(open, "Incorrect syntax near '('.")?;
                self.out.push_str(EXTPROPS_LIST);
                Ok(Some(close + 1))
            }
            "ISNULL" if call => self.push("IFNULL"),
            "MAX" | "MIN" if call && cx.dec_agg_column(toks, open).is_some() => {
                self.push(if up == "MAX" {
                    "__dec_max"
                } else {
                    "__dec_min"
                })
            }
            // SQLite's COUNT is already 64-bit; the column is typed bigint above.
            "COUNT_BIG" if call => self.push("COUNT"),
            "LEN" if call => self.push("__len"),
            "DATALENGTH" if call => self.push("__datalength"),
            "CHARINDEX" if call => self.push("__charindex"),
            "SUBSTRING" if call => self.push("SUBSTR"),
            "TOP" => self.top(next),
            "OFFSET" => self.offset(i),
            "NOLOCK" | "CLUSTERED" | "NONCLUSTERED" => Ok(None),
            // `db.schema.name` / `db..name`: the peer has one database.
            _ if let Some(after) = cx.database_prefix(toks, &up, next) => Ok(Some(after)),
            // SQLite would read dbo as an attached database name.
            "DBO" if next.is_some_and(|j| toks[j].is_punct('.')) => Ok(Some(open + 1)),
            "WITH"
                if call
                    && toks.get(open + 1..).is_some_and(|r| {
                        r.iter()
                            .find(|t| !t.is_space())
                            .is_some_and(super::hints::opens_table_hint)
                    }) =>
            {
                // table hint WITH (NOLOCK), WITH (ROWLOCK, UPDLOCK), ... (hints.rs)
                Ok(Some(matching(toks, open).unwrap_or(i) + 1))
            }
            _ => self.push(w),
        }
    }

    fn push(&mut self, s: &str) -> Step {
        self.out.push_str(s);
        Ok(None)
    }

    /// `CAST(x AS t)` / `CONVERT(t, x)` (and TRY_) as `__cast(x, 't'[, 'source type'])`.
    fn cast(&mut self, up: &str, open: usize) -> Step {
        let cx = self.cx;
        let close = self.close(open, "Incorrect syntax near ')'.")?;
        let inner = &self.toks[open + 1..close];
        let (expr, ty) = if up.ends_with("CAST") {
            let asp = inner
                .iter()
                .rposition(|t| t.is_word("AS"))
                .ok_or("Incorrect syntax near 'CAST', expected 'AS'.")?;
            (&inner[..asp], parse_type(&inner[asp + 1..])?)
        } else {
            let parts = split_commas(inner);
            if parts.len() < 2 {
                return Err("Incorrect syntax near 'CONVERT'.".into());
            }
            (parts[1], parse_type(parts[0])?)
        };
        // sql_variant keeps the inner expression's type when it is evident
        // (CAST(CAST(x AS DECIMAL(5,2)) AS SQL_VARIANT)).
        let base = if ty == Ty::Variant {
            cx.item_type(expr, &sig(expr))
        } else {
            None
        };
        let target = match base {
            Some(b) => format!("sql_variant:{}", b.name()),
            None => ty.name(),
        };
        // Character data converts to binary in its own encoding; an overflow message names a
        // float source differently (ranges.rs).
        let names_source = ty.is_exact_numeric() || matches!(ty, Ty::Binary(_) | Ty::VarBinary(_));
        let from = if names_source {
            cx.item_type(expr, &sig(expr))
                .map(|t| format!(", '{}'", t.name()))
                .unwrap_or_default()
        } else {
            String::new()
        };
        self.out.push_str(&format!(
            "__cast({}, '{}'{from})",
            cx.rw(expr)?.trim(),
            target
        ));
        Ok(Some(close + 1))
    }

    /// GETDATE() & co, NEWID(), SCOPE_IDENTITY() (`open`: the call's parenthesis, if any).
    fn clock(&mut self, i: usize, up: &str, open: Option<usize>) -> Step {
        let end = match open {
            Some(open) => self.close(open, "Incorrect syntax near '('.")?,
            None => i,
        };
        let fun = match up {
            "GETDATE" | "CURRENT_TIMESTAMP" | "SYSDATETIME" => "__now(0)".to_string(),
            "GETUTCDATE" | "SYSUTCDATETIME" => "__now(1)".to_string(),
            "SYSDATETIMEOFFSET" => "__now(2)".to_string(),
            "NEWID" => "__newid()".to_string(),
            _ => self
                .cx
                .identity
                .map(|v| v.to_string())
                .unwrap_or_else(|| "NULL".into()),
        };
        self.out.push_str(&fun);
        Ok(Some(end + 1))
    }

    /// DATEADD / DATEDIFF / DATEPART: the date part is a bare keyword, passed as a string.
    fn date_call(&mut self, up: &str, open: usize) -> Step {
        let close = self.close(open, "Incorrect syntax near ')'.")?;
        let parts = split_commas(&self.toks[open + 1..close]);
        let part = text_of(parts[0]).to_ascii_lowercase();
        let rest: Vec<String> = parts[1..]
            .iter()
            .map(|p| self.cx.rw(p).map(|s| s.trim().to_string()))
            .collect::<Result<_, _>>()?;
        let f = match up {
            "DATEADD" => "__dateadd",
            "DATEPART" => "__datepart",
            _ => "__datediff",
        };
        self.out
            .push_str(&format!("{f}('{part}', {})", rest.join(", ")));
        Ok(Some(close + 1))
    }

    /// OBJECT_ID(name [, type]): an existence check against SQLite's schema (tables, views,
    /// temp tables, peer procedures); any non-NULL value means "exists".
    fn object_id(&mut self, open: usize) -> Step {
        let cx = self.cx;
        let close = self.close(open, "Incorrect syntax near ')'.")?;
        let parts = split_commas(&self.toks[open + 1..close]);
        let name = match sig(parts[0]).as_slice() {
            [Tok::Str { s, .. }] => s.clone(),
            _ => {
                // A parameter or expression (SQLAlchemy: `object_id(?, 'U')`): its last name
                // part is looked up when the statement runs.
                let expr = cx.rw(parts[0])?;
                let kind = parts.get(1).map(|p| cx.rw(p)).transpose()?;
                self.out.push_str(&format!(
                    "(SELECT id FROM ({OBJECT_IDS}) WHERE name = __base_name({expr}) COLLATE NOCASE{} LIMIT 1)",
                    kind.map(|k| format!(" AND xtype = upper({k})")).unwrap_or_default()
                ));
                return Ok(Some(close + 1));
            }
        };
        let name = super::names::last(&name).replace('\'', "''");
        // The object's id as sys.objects / sysobjects number it; the optional type ('U', 'V',
        // 'P') narrows the search as in SQL Server.
        let kind = parts.get(1).and_then(|p| match sig(p).first() {
            Some(Tok::Str { s, .. }) => Some(s.trim().to_ascii_uppercase()),
            _ => None,
        });
        self.out.push_str(&format!(
            "(SELECT id FROM ({OBJECT_IDS}) WHERE name = '{name}' COLLATE NOCASE{} LIMIT 1)",
            kind.map(|k| format!(" AND xtype = '{}'", k.replace('\'', "")))
                .unwrap_or_default()
        ));
        Ok(Some(close + 1))
    }

    /// IDENT_SEED / IDENT_INCR / IDENT_CURRENT('t'): the declared seed and increment, and the
    /// last value given (the seed before any row): kept by an increment's trigger in
    /// `__tdspeer_ident`, else SQLite's AUTOINCREMENT counter. NULL for a table without an
    /// IDENTITY column.
    fn ident_info(&mut self, up: &str, open: usize) -> Step {
        let close = self.close(open, "Incorrect syntax near ')'.")?;
        let arg = self.cx.rw(&self.toks[open + 1..close])?;
        let t = format!("__base_name({})", arg.trim());
        let part = |n: u8| {
            let pick = if n == 1 {
                "substr(k.cols, 1, instr(k.cols, ',') - 1)"
            } else {
                "substr(k.cols, instr(k.cols, ',') + 1)"
            };
            format!(
                "(SELECT CAST({pick} AS INTEGER) FROM __tdspeer_constraints k WHERE k.tbl = {t} COLLATE NOCASE AND k.kind = 'ID')"
            )
        };
        let sql = match up {
            "IDENT_SEED" => part(1),
            "IDENT_INCR" => part(2),
            _ => format!(
                "(CASE WHEN {seed} IS NULL THEN NULL WHEN {incr} <> 1 THEN (SELECT COALESCE(cur, seed) FROM __tdspeer_ident WHERE tbl = {t} COLLATE NOCASE) ELSE (SELECT CASE WHEN q.seq IS NULL OR q.seq < {seed} THEN {seed} ELSE q.seq END FROM (SELECT (SELECT seq FROM sqlite_sequence WHERE name = {t} COLLATE NOCASE) AS seq) q) END)",
                seed = part(1),
                incr = part(2),
            ),
        };
        self.out.push_str(&sql);
        Ok(Some(close + 1))
    }

    /// OBJECTPROPERTY(id, 'IsProcedure' | 'IsUserTable' | 'IsTable' | 'IsView').
    /// `SQL_VARIANT_PROPERTY(expr, 'prop')` (variant.rs).
    fn variant_property(&mut self, open: usize) -> Step {
        let toks = self.toks;
        let close = self.close(open, "Incorrect syntax near ')'.")?;
        let args = split_commas(&toks[open + 1..close]);
        let [arg, prop] = args.as_slice() else {
            return Err("The sql_variant_property function requires 2 argument(s).".into());
        };
        let prop = match sig(prop).as_slice() {
            [Tok::Str { s, .. }] => s.clone(),
            _ => return Err("SQL_VARIANT_PROPERTY: the property must be a string literal.".into()),
        };
        let cx = self.cx;
        let e = cx.rw(arg)?;
        let e = e.trim();
        let item_type = |t: &[Tok]| cx.item_type(t, &sig(t));
        let text = match super::variant::static_base(arg, item_type) {
            Some((ty, len)) => format!(
                "(CASE WHEN ({e}) IS NULL THEN NULL ELSE {} END)",
                super::variant::property(ty, &prop, len)
            ),
            None => format!("({})", super::variant::runtime(e, &prop)),
        };
        self.out.push_str(&text);
        Ok(Some(close + 1))
    }

    fn object_property(&mut self, open: usize) -> Step {
        let close = self.close(open, "Incorrect syntax near ')'.")?;
        let parts = split_commas(&self.toks[open + 1..close]);
        let id = self.cx.rw(parts[0])?.trim().to_string();
        let prop = match parts.get(1).and_then(|p| sig(p).first().cloned()) {
            Some(Tok::Str { s, .. }) => s.to_ascii_lowercase(),
            _ => String::new(),
        };
        let of = |x: &str| {
            format!("(SELECT COUNT(*) FROM ({OBJECT_IDS}) WHERE id = ({id}) AND xtype = '{x}')")
        };
        self.out.push_str(&match prop.as_str() {
            "isprocedure" => of("P"),
            "isusertable" | "istable" => of("U"),
            "isview" => of("V"),
            _ => "NULL".into(),
        });
        Ok(Some(close + 1))
    }

    /// ERROR_MESSAGE() & co: the error the CATCH block handles, as literals.
    fn error_function(&mut self, up: &str, open: usize) -> Step {
        let close = self.close(open, "Incorrect syntax near '('.")?;
        let v = match (&self.cx.error, up) {
            (None, _) | (Some(_), "ERROR_PROCEDURE") => "NULL".to_string(),
            (Some(e), "ERROR_MESSAGE") => format!("'{}'", e.msg.replace('\'', "''")),
            (Some(e), "ERROR_NUMBER") => e.number.to_string(),
            (Some(e), "ERROR_SEVERITY") => e.class.to_string(),
            (Some(e), "ERROR_STATE") => e.state.to_string(),
            (Some(_), _) => "1".to_string(),
        };
        self.out.push_str(&v);
        Ok(Some(close + 1))
    }

    /// `TOP n` / `TOP (expr) [PERCENT]`: a LIMIT at the end of the SELECT's scope.
    fn top(&mut self, next: Option<usize>) -> Step {
        let toks = self.toks;
        let Some(j) = next else {
            return Err("Incorrect syntax near 'TOP'.".into());
        };
        let (n, end) = if toks[j].is_punct('(') {
            let c = self.close(j, "Incorrect syntax near 'TOP'.")?;
            (self.cx.rw(&toks[j + 1..c])?, c)
        } else {
            (toks[j].text(), j)
        };
        self.limits.push((self.depth, n));
        let mut after = end + 1;
        if let Some(k) = next_sig(toks, after)
            && toks[k].is_word("PERCENT")
        {
            after = k + 1;
        }
        Ok(Some(after))
    }

    /// `OFFSET x ROWS [FETCH NEXT|FIRST y ROWS ONLY]` -> `LIMIT y OFFSET x`.
    fn offset(&mut self, i: usize) -> Step {
        let toks = self.toks;
        let rows = (i + 1..toks.len())
            .find(|&k| toks[k].is_word("ROWS") || toks[k].is_word("ROW"))
            .ok_or("Incorrect syntax near 'OFFSET'.")?;
        let off = self.cx.rw(&toks[i + 1..rows])?;
        let mut lim = "-1".to_string();
        let mut end = rows;
        if let Some(f) = next_sig(toks, rows + 1)
            && toks[f].is_word("FETCH")
        {
            let r2 = (f + 1..toks.len())
                .find(|&k| toks[k].is_word("ROWS") || toks[k].is_word("ROW"))
                .ok_or("Incorrect syntax near 'FETCH'.")?;
            let n = toks[f + 1..r2]
                .iter()
                .filter(|t| !t.is_space() && !t.is_word("NEXT") && !t.is_word("FIRST"))
                .cloned()
                .collect::<Vec<_>>();
            lim = self.cx.rw(&n)?;
            end = next_sig(toks, r2 + 1)
                .filter(|&k| toks[k].is_word("ONLY"))
                .unwrap_or(r2);
        }
        self.out.push_str(&format!("LIMIT {lim} OFFSET {off}"));
        Ok(Some(end + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::lexer::tokenize;

    fn ctx() -> Ctx<'static> {
        Ctx {
            params: &[],
            rowcount: 3,
            identity: Some(7),
            trancount: 0,
            spid: 51,
            database: "master".into(),
            text_columns: Vec::new(),
            dec_columns: Vec::new(),
            error: None,
            schemas: Default::default(),
        }
    }

    fn rw(s: &str) -> String {
        ctx().rw(&tokenize(s).unwrap()).unwrap()
    }

    #[test]
    fn basic_rewrites() {
        assert_eq!(
            rw("SELECT TOP 5 [a b] FROM #t"),
            "SELECT  \"a b\" FROM \"#t\" LIMIT 5"
        );
        assert_eq!(
            rw("select N'x' + 'y', @@ROWCOUNT, SCOPE_IDENTITY()"),
            "select 'x' || 'y', 3, 7"
        );
        assert_eq!(
            rw("select CAST(1.5 AS DECIMAL(10,2))"),
            "select __cast(1.5, 'decimal(10,2)', 'numeric(2,1)')"
        );
        assert_eq!(
            rw("select convert(varchar(10), x, 120)"),
            "select __cast(x, 'varchar(10)')"
        );
        assert_eq!(
            rw("select a from t order by a offset 2 rows fetch next 3 rows only"),
            "select a from t order by a LIMIT 3 OFFSET  2 "
        );
        assert_eq!(
            rw("select * from (select top (2) a from t) x"),
            "select * from (select  a from t LIMIT 2) x"
        );
    }

    #[test]
    fn select_types() {
        let c = ctx();
        let t = c.select_types(
            &tokenize("SELECT CAST(1.5 AS DECIMAL(10,2)) AS d, x, N'ab', GETDATE(), 1.25 FROM t")
                .unwrap(),
        );
        assert_eq!(
            t,
            vec![
                Some(Ty::Decimal(10, 2)),
                None,
                Some(Ty::NVarChar(Some(2))),
                Some(Ty::DateTime),
                Some(Ty::Numeric(3, 2))
            ]
        );
    }

    #[test]
    fn divisors_are_guarded() {
        assert_eq!(
            rw("SELECT a / b, a % -t.c, 1 / (x + 1) * 2, 2 / f(x), 3 / CASE WHEN a = 1 THEN 0 END"),
            "SELECT a / __nz(b), a % __nz(-t.c), 1 / __nz((x + 1)) * 2, 2 / __nz(f(x)), \
             3 / __nz(CASE WHEN a = 1 THEN 0 END)"
        );
    }

    #[test]
    fn bounded_columns_get_a_fits_check() {
        let c = ctx();
        let sql = super::create_table(
            &c,
            &tokenize(
                "CREATE TABLE t (id INT IDENTITY(1,1), s NVARCHAR(5), m NVARCHAR(MAX), f FLOAT)",
            )
            .unwrap(),
        )
        .unwrap()
        .sql;
        assert!(sql.contains(r#""s" MSTEXT_NVARCHR_5 COLLATE NOCASE CHECK (__fits("s", 'nvarchar(5)', 'master.dbo.t', 's'))"#), "{sql}");
        assert_eq!(sql.matches("__fits").count(), 1, "{sql}");
    }

    #[test]
    fn long_numeric_literals_become_text() {
        assert_eq!(super::num_literal("1.5"), "1.5");
        assert_eq!(
            super::num_literal("9223372036854775807"),
            "9223372036854775807"
        );
        assert_eq!(super::num_literal("1.5e300"), "1.5e300");
        assert_eq!(
            super::num_literal("12345678901234567890.0123456789"),
            "'12345678901234567890.0123456789'"
        );
        assert_eq!(
            super::num_literal("9223372036854775808"),
            "'9223372036854775808'"
        );
    }

    #[test]
    fn negative_long_literals_keep_their_digits() {
        let rw = |sql: &str| ctx().rw(&tokenize(sql).unwrap()).unwrap();
        assert_eq!(
            rw("VALUES (-9223372036854775809, - 922337203685477.5808)"),
            "VALUES ('-9223372036854775809', '-922337203685477.5808')"
        );
        // A subtraction keeps its operator; short literals stay numbers; a comment between
        // sign and digits leaves the negation to SQLite (the rare form keeps the old rounding).
        assert_eq!(
            rw("SELECT -/* a-b */9223372036854775809"),
            "SELECT -/* a-b */'9223372036854775809'"
        );
        assert_eq!(
            rw("SELECT a - 9223372036854775809, -5"),
            "SELECT a - '9223372036854775809', -5"
        );
    }

    #[test]
    fn select_names() {
        let n = super::select_names(
            &tokenize("SELECT 1, 2 AS [😀], 3 x, t.c, NULL, 4 AS 'lit', a + b, *, 5 AS y FROM t")
                .unwrap(),
        );
        let s = |v: &str| Some(v.to_string());
        assert_eq!(
            n,
            vec![None, s("😀"), s("x"), s("c"), None, s("lit"), s("b")]
        );
    }

    #[test]
    fn create_table() {
        let c = ctx();
        let ct = super::create_table(&c, &tokenize("CREATE TABLE #t (id INT IDENTITY(1,1) PRIMARY KEY, [n] NVARCHAR(50) NOT NULL, v varchar(20) COLLATE Latin1_General_100_CI_AS_SC_UTF8, d DECIMAL(38, 10))").unwrap()).unwrap();
        assert_eq!(
            ct.sql,
            "CREATE TEMP TABLE \"#t\" (\"id\" INTEGER PRIMARY KEY AUTOINCREMENT, \
             \"n\" MSTEXT_NVARCHR_50 COLLATE NOCASE NOT NULL CHECK (__fits(\"n\", 'nvarchar(50)', 'tempdb.dbo.#t', 'n')), \
             \"v\" MSTEXT_VARCHR_20_UTF8 COLLATE NOCASE CHECK (__fits(\"v\", 'varchar(20) collate Latin1_General_100_CI_AS_SC_UTF8', 'tempdb.dbo.#t', 'v')), \
             \"d\" MSTEXT_DECIMAL_38_10 CHECK (__fits(\"d\", 'decimal(38,10)', 'tempdb.dbo.#t', 'd')))"
        );
        // Key columns are NOT NULL, inline or named by a table constraint.
        let sql = |t: &str| super::create_table(&c, &tokenize(t).unwrap()).unwrap().sql;
        let ct = sql("CREATE TABLE k (a INT PRIMARY KEY, b INT NOT NULL PRIMARY KEY, c INT)");
        assert!(ct.contains("\"a\" MSINT_IN_T NOT NULL PRIMARY KEY"), "{ct}");
        assert_eq!(ct.matches("NOT NULL").count(), 2, "{ct}");
        let ct = sql("CREATE TABLE k (a INT, [b] VARCHAR(5), c INT, \
             CONSTRAINT pk PRIMARY KEY CLUSTERED (a, b DESC) WITH (PAD_INDEX = ON))");
        assert!(ct.contains("\"a\" MSINT_IN_T NOT NULL"), "{ct}");
        assert!(
            ct.contains("\"b\" MSTEXT_VARCHR_5 COLLATE NOCASE NOT NULL"),
            "{ct}"
        );
        assert!(!ct.contains("\"c\" MSINT_IN_T NOT NULL"), "{ct}");
    }
}
