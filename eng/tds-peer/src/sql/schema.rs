//! The SQLite schema read back as SQL Server sees it: a table's columns with their declared
//! SQL Server types (`Ty::sqlite_decl` round trip), nullability, keys and IDENTITY.

use super::lexer::Tok;
use crate::types::Ty;

#[derive(Clone, Debug)]
pub struct ColInfo {
    pub name: String,
    pub ty: Ty,
    pub notnull: bool,
    /// Position in the primary key (1-based), 0 when not part of it.
    pub pk: i64,
    pub identity: bool,
    /// A rowversion/timestamp column (its `ty` is binary(8)).
    pub rowversion: bool,
}

/// Schemas whose objects are not SQLite tables (catalog views, synthetic tables).
pub fn virtual_schema(parts: &[String]) -> bool {
    parts.len() > 1 && {
        let s = parts[parts.len() - 2].to_ascii_lowercase();
        matches!(s.as_str(), "sys" | "information_schema" | "peer")
    }
}

/// The result columns of a prepared statement: names and the SQL Server types their SQLite
/// declared types encode (none for an expression).
pub fn declared_columns(stmt: &rusqlite::Statement) -> Vec<(String, Option<Ty>)> {
    stmt.columns()
        .iter()
        .map(|c| {
            let ty = c
                .decl_type()
                .and_then(|d| Ty::from_sqlite_decl(d).or_else(|| Ty::parse(d)));
            (c.name().to_string(), ty)
        })
        .collect()
}

/// Last part of a T-SQL multi-part name (`master.dbo.t`, `[dbo].[t]`, `master..t` -> `t`;
/// `[x.y]` -> `x.y`, `[c]]d]` -> `c]d`).
pub fn base_name(name: &str) -> String {
    super::names::last(name)
}

/// The SQLite table a T-SQL table name's parts (`t`, `dbo.t`, `master.dbo.t`, `s.t`) name:
/// `"s.t"` in a user schema (`Ctx::schemas`), the last part otherwise.
pub fn sqlite_name(parts: &[String]) -> Option<String> {
    let name = parts.last()?;
    // `dbo` and a left-out schema (`db..t`) are the default schema, SQLite's main one.
    let schema = parts.len().checked_sub(2).map(|i| parts[i].as_str());
    Some(match schema {
        Some(s) if !s.is_empty() && !s.eq_ignore_ascii_case("dbo") => format!("{s}.{name}"),
        _ => name.clone(),
    })
}

/// Columns of a table or view (temp tables included), None when no such object exists.
pub fn table_columns(db: &rusqlite::Connection, table: &str) -> Option<Vec<ColInfo>> {
    // A name as created first (`x.y`, from `[x.y]`), then its last part (`dbo.t`).
    columns_of(db, table).or_else(|| columns_of(db, &base_name(table)))
}

fn columns_of(db: &rusqlite::Connection, table: &str) -> Option<Vec<ColInfo>> {
    let sql = format!("PRAGMA table_info(\"{}\")", table.replace('"', "\"\""));
    let mut st = db.prepare(&sql).ok()?;
    let cols: Vec<ColInfo> = st
        .query_map([], |r| {
            let decl: String = r.get::<_, Option<String>>(2)?.unwrap_or_default();
            let pk: i64 = r.get(5)?;
            // IDENTITY columns are stored as INTEGER PRIMARY KEY AUTOINCREMENT (rewrite.rs).
            let identity = pk > 0 && decl.eq_ignore_ascii_case("INTEGER");
            let ty = if identity {
                Ty::Int
            } else {
                Ty::from_sqlite_decl(&decl)
                    .or_else(|| Ty::parse(&decl))
                    .unwrap_or(Ty::NVarChar(Some(4000)))
            };
            Ok(ColInfo {
                name: r.get(1)?,
                ty,
                notnull: r.get::<_, i64>(3)? != 0 || identity,
                pk,
                identity,
                rowversion: super::typemeta::is_rowversion_decl(&decl),
            })
        })
        .ok()?
        .flatten()
        .collect();
    if cols.is_empty() { None } else { Some(cols) }
}

/// For `INSERT [INTO] t [(cols)] VALUES …` of literals into a table with sql_variant
/// columns: which VALUES positions target one. None otherwise — and for statements with
/// parameters, so that executemany's INSERTs never pay for the schema look-up.
pub fn variant_targets(db: &rusqlite::Connection, toks: &[Tok]) -> Option<Vec<bool>> {
    let sg: Vec<&Tok> = toks.iter().filter(|t| !t.is_space()).collect();
    if sg.iter().any(|t| matches!(t, Tok::Var(_))) {
        return None;
    }
    let mut i = 1 + usize::from(sg.get(1).is_some_and(|t| t.is_word("INTO")));
    let mut name = None;
    while let Some(Tok::Word(w) | Tok::Quoted(w)) = sg.get(i) {
        name = Some(w.clone());
        if sg.get(i + 1).is_some_and(|t| t.is_punct('.')) {
            i += 2;
            while sg.get(i).is_some_and(|t| t.is_punct('.')) {
                i += 1;
            }
        } else {
            i += 1;
            break;
        }
    }
    let cols = table_columns(db, &name?)?;
    if !cols.iter().any(|c| c.ty == Ty::Variant) {
        return None;
    }
    if sg.get(i).is_some_and(|t| t.is_punct('(')) {
        let mut targets = Vec::new();
        let mut k = i + 1;
        while let Some(t) = sg.get(k) {
            match t {
                Tok::Punct(')') => break,
                Tok::Word(w) | Tok::Quoted(w) => targets.push(
                    cols.iter()
                        .any(|c| c.name.eq_ignore_ascii_case(w) && c.ty == Ty::Variant),
                ),
                _ => {}
            }
            k += 1;
        }
        return Some(targets);
    }
    Some(
        cols.iter()
            .filter(|c| !c.identity)
            .map(|c| c.ty == Ty::Variant)
            .collect(),
    )
}
