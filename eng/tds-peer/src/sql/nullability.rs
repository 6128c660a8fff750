//! Result-set nullability: whether COLMETADATA (and `sp_describe_first_result_set`) may clear a
//! result column's nullable flag, as SQL Server does for a NOT NULL column read as is and for an
//! expression that cannot be NULL.
//!
//! Two sources of knowledge, combined per result column:
//!
//! - SQLite's column metadata (`sqlite3_column_table_name` / `_origin_name`): a result column
//!   that is a table's column read as is (through views, derived tables and CTEs) names that
//!   column, whose NOT NULL / PRIMARY KEY declaration is the catalog's nullability (sys.columns
//!   reads the same `pragma_table_info`). Any expression has no origin.
//! - The T-SQL text: the SELECT list item behind the column (a literal, COUNT(*), ISNULL(x,
//!   literal) cannot be NULL) and the FROM clause, whose outer joins make the columns of their
//!   null-extended side nullable whatever the table declares.
//!
//! Never claims NOT NULL for something that can be NULL: anything not understood stays nullable
//! (a compound SELECT, ROLLUP/CUBE, a column reached through a view or derived table, a table
//! named twice with one side outer, expressions other than the forms above). SQL Server knows
//! more (`a + 1` of a NOT NULL `a`, `-1`); such columns are reported nullable here. A wrong
//! claim would be worse than a missing one: a NOT NULL int goes out as INT4, which has no NULL
//! (`token::Column::described`).

use super::lexer::{Tok, dotted, ident, matching, split_commas};

/// A result column read as is from a table column.
#[derive(Clone, Debug, PartialEq)]
pub struct Origin {
    /// The SQLite table (`t`, `s.t` for a user schema, `#t`, a table variable's TEMP table).
    pub table: String,
    /// SQLite enforces it as NOT NULL: declared so (key columns are, `rewrite::create_table`),
    /// or the INTEGER PRIMARY KEY of an IDENTITY column. A claim that fails would be worse than
    /// none: Driver 18 misreads a NULL sent in a column described NOT NULL.
    pub notnull: bool,
    /// A rowversion / timestamp column (sent with UserType 80).
    pub rowversion: bool,
    /// An IDENTITY column (the table's INTEGER PRIMARY KEY, as `sys.columns` says).
    pub identity: bool,
}

/// The origin of each result column of a prepared statement.
pub fn origins(stmt: &rusqlite::Statement) -> Vec<Option<Origin>> {
    (0..stmt.column_count())
        .map(|i| {
            let (_, table, _, decl, _, notnull, pk, _) = stmt.column_metadata(i).ok()??;
            let rowid = pk && decl.is_some_and(|d| d.to_bytes().eq_ignore_ascii_case(b"INTEGER"));
            Some(Origin {
                table: table.to_string_lossy().into_owned(),
                notnull: notnull || rowid,
                rowversion: decl
                    .is_some_and(|d| super::typemeta::is_rowversion_decl(&d.to_string_lossy())),
                identity: rowid,
            })
        })
        .collect()
}

/// Whether each result column (one per entry of `origins`) of the statement `toks` can be NULL.
/// `is_table(name)`: a SQLite table of that name exists (not a view: a view's column can be
/// anything its query makes it).
pub fn nullable(
    toks: &[Tok],
    origins: &[Option<Origin>],
    is_table: impl Fn(&str) -> bool,
) -> Vec<bool> {
    let sg: Vec<&Tok> = toks.iter().filter(|t| !t.is_space()).collect();
    let Some(mut q) = Query::parse(&sg) else {
        return vec![true; origins.len()];
    };
    if origins.iter().flatten().any(|o| o.notnull) {
        for s in &mut q.sources {
            if s.table.as_deref().is_some_and(|t| !is_table(t)) {
                s.table = None;
            }
        }
    }
    let items = q.columns(origins.len());
    origins
        .iter()
        .zip(items)
        .map(|(origin, item)| match (item, origin) {
            (Some(Expr::NotNull), _) => false,
            (Some(Expr::Column { qualifier }), Some(o)) => {
                q.nullable_column(qualifier.as_deref(), o)
            }
            (Some(Expr::Star), Some(o)) => q.nullable_column(None, o),
            _ => true,
        })
        .collect()
}

/// What a SELECT list item is, as far as nullability goes.
#[derive(Debug, PartialEq)]
enum Expr {
    /// Cannot be NULL (a literal, COUNT, ISNULL with a literal replacement).
    NotNull,
    /// A column reference (`c`, `t.c`, `s.t.c`), nullable as its origin and FROM side say.
    Column { qualifier: Option<String> },
    /// `*` or `t.*`.
    Star,
    /// Anything else.
    Other,
}

/// A table source of the FROM clause.
#[derive(Debug)]
pub(super) struct Source {
    /// The name it is referred to by: its alias, else the last part of its name.
    pub(super) name: String,
    /// The SQLite table of a plain table source; None for a derived table, CTE, view-like
    /// catalog object, table-valued function or parenthesized join.
    pub(super) table: Option<String>,
    /// On the null-extended side of an outer join (LEFT/RIGHT/FULL, OUTER APPLY).
    outer: bool,
}

#[derive(Debug)]
struct Query {
    items: Vec<Expr>,
    sources: Vec<Source>,
}

/// Words ending a FROM clause at depth 0.
const FROM_END: &[&str] = &["WHERE", "GROUP", "HAVING", "ORDER", "OPTION", "WINDOW"];

impl Query {
    /// The item behind each of `n` result columns: `Star` for a column a `*` expands to, None
    /// where that is not known (several `*` with other items between or after them, or a list
    /// that does not add up to `n`).
    fn columns(&self, n: usize) -> Vec<Option<&Expr>> {
        let stars: Vec<usize> = (0..self.items.len())
            .filter(|&k| self.items[k] == Expr::Star)
            .collect();
        let fixed = self.items.len() - stars.len();
        match stars[..] {
            [] if self.items.len() == n => self.items.iter().map(Some).collect(),
            [s] if n >= fixed => {
                let expanded = n - fixed;
                (0..n)
                    .map(|i| {
                        Some(if i < s {
                            &self.items[i]
                        } else if i < s + expanded {
                            &Expr::Star
                        } else {
                            &self.items[i - expanded + 1]
                        })
                    })
                    .collect()
            }
            [s, ..] if self.items[s..].iter().all(|e| *e == Expr::Star) => (0..n)
                .map(|i| Some(self.items.get(i).filter(|_| i < s).unwrap_or(&Expr::Star)))
                .collect(),
            _ => vec![None; n],
        }
    }

    fn parse(sg: &[&Tok]) -> Option<Query> {
        let mut i = 0;
        let mut ctes = Vec::new();
        if sg.first()?.is_word("WITH") {
            i = 1;
            loop {
                ctes.push(ident(sg.get(i)?)?.to_string());
                i += 1;
                if sg.get(i)?.is_punct('(') {
                    i = matching(sg, i)? + 1;
                }
                if !sg.get(i)?.is_word("AS") || !sg.get(i + 1)?.is_punct('(') {
                    return None;
                }
                i = matching(sg, i + 1)? + 1;
                if sg.get(i)?.is_punct(',') {
                    i += 1;
                } else {
                    break;
                }
            }
        }
        if !sg.get(i)?.is_word("SELECT") {
            return None;
        }
        i += 1;
        // The rest at depth 0: anything making the column list other than one SELECT's.
        let mut d = 0i32;
        let mut from = None;
        let mut list_end = sg.len();
        let mut from_end = sg.len();
        for (k, t) in sg.iter().enumerate().skip(i) {
            if t.is_punct('(') {
                d += 1;
            } else if t.is_punct(')') {
                d -= 1;
            } else if ["ROLLUP", "CUBE", "GROUPING"].iter().any(|w| t.is_word(w)) {
                return None;
            } else if d == 0 {
                if ["UNION", "EXCEPT", "INTERSECT", "INTO", "FOR"]
                    .iter()
                    .any(|w| t.is_word(w))
                {
                    return None;
                }
                if t.is_word("FROM") && from.is_none() {
                    from = Some(k);
                    list_end = list_end.min(k);
                } else if FROM_END.iter().any(|w| t.is_word(w)) {
                    list_end = list_end.min(k);
                    if from.is_some() && from_end == sg.len() {
                        from_end = k;
                    }
                }
            }
        }
        // DISTINCT / ALL / TOP (n) [PERCENT] [WITH TIES].
        loop {
            let t = sg.get(i)?;
            if t.is_word("DISTINCT") || t.is_word("ALL") || t.is_word("PERCENT") {
                i += 1;
            } else if t.is_word("TOP") {
                i += 1;
                i = if sg.get(i)?.is_punct('(') {
                    matching(sg, i)? + 1
                } else {
                    i + 1
                };
            } else if t.is_word("WITH") && sg.get(i + 1).is_some_and(|t| t.is_word("TIES")) {
                i += 2;
            } else {
                break;
            }
        }
        let items = split_commas(sg.get(i..list_end)?)
            .into_iter()
            .map(item)
            .collect();
        let sources = match from {
            Some(f) => from_clause(sg.get(f + 1..from_end)?, &ctes)?,
            None => Vec::new(),
        };
        Some(Query { items, sources })
    }

    /// Whether a column read as is from `o` can be NULL here, given the item's qualifier.
    fn nullable_column(&self, qualifier: Option<&str>, o: &Origin) -> bool {
        if !o.notnull {
            return true;
        }
        let plain = |s: &Source| {
            s.table
                .as_deref()
                .is_some_and(|t| t.eq_ignore_ascii_case(&o.table))
        };
        if let Some(q) = qualifier {
            let mut named = self
                .sources
                .iter()
                .filter(|s| s.name.eq_ignore_ascii_case(q));
            return match (named.next(), named.next()) {
                (Some(s), None) => !plain(s) || s.outer,
                _ => true,
            };
        }
        // Unqualified (or from a `*`): only a plain source can be the column's, and none of
        // them on an outer side. Anything else might hold the same table behind it.
        if self.sources.iter().any(|s| s.table.is_none()) {
            return true;
        }
        let mut candidates = self.sources.iter().filter(|s| plain(s)).peekable();
        candidates.peek().is_none() || candidates.any(|s| s.outer)
    }
}

/// The SELECT list item `sg` (alias included) as an `Expr`.
fn item(sg: &[&Tok]) -> Expr {
    let n = sg.len();
    let expr = if n >= 3 && sg[1].is_punct('=') && matches!(sg[0], Tok::Word(_) | Tok::Quoted(_)) {
        // T-SQL's `alias = expr`.
        &sg[2..]
    } else if n >= 3 && sg[n - 2].is_word("AS") {
        &sg[..n - 2]
    } else if n >= 2
        && match sg[n - 1] {
            Tok::Quoted(_) | Tok::Str { .. } => true,
            Tok::Word(w) => !["END", "NULL"].iter().any(|k| w.eq_ignore_ascii_case(k)),
            _ => false,
        }
        && match sg[n - 2] {
            Tok::Num(_) | Tok::Str { .. } | Tok::Hex(_) | Tok::Quoted(_) | Tok::Punct(')') => true,
            Tok::Word(w) => !w.eq_ignore_ascii_case("COLLATE"),
            _ => false,
        }
    {
        &sg[..n - 1]
    } else {
        sg
    };
    expr_kind(expr)
}

fn expr_kind(mut sg: &[&Tok]) -> Expr {
    // Outer parentheses.
    while sg.len() >= 2 && sg[0].is_punct('(') && matching(sg, 0) == Some(sg.len() - 1) {
        sg = &sg[1..sg.len() - 1];
    }
    match sg {
        [Tok::Num(_) | Tok::Str { .. } | Tok::Hex(_)] => return Expr::NotNull,
        [t] if t.is_punct('*') => return Expr::Star,
        // `t.*`, `s.t.*`
        [name @ .., dot, star]
            if dot.is_punct('.')
                && star.is_punct('*')
                && dotted(name, 0).is_some_and(|(_, end)| end == name.len()) =>
        {
            return Expr::Star;
        }
        _ => {}
    }
    if let Some((parts, end)) = dotted(sg, 0)
        && end == sg.len()
    {
        let null = parts.len() == 1 && sg[0].is_word("NULL");
        return if null {
            Expr::Other
        } else {
            Expr::Column {
                qualifier: (parts.len() > 1).then(|| parts[parts.len() - 2].clone()),
            }
        };
    }
    let call = |name: &str| -> Option<(usize, usize)> {
        (sg.len() >= 3 && sg[0].is_word(name) && sg[1].is_punct('('))
            .then(|| matching(sg, 1).map(|c| (1, c)))
            .flatten()
    };
    for f in ["COUNT", "COUNT_BIG"] {
        if let Some((_, c)) = call(f) {
            let rest = &sg[c + 1..];
            let over = rest.len() >= 3
                && rest[0].is_word("OVER")
                && rest[1].is_punct('(')
                && matching(rest, 1) == Some(rest.len() - 1);
            if rest.is_empty() || over {
                return Expr::NotNull;
            }
        }
    }
    if let Some((open, c)) = call("ISNULL")
        && c == sg.len() - 1
        && let [_, replacement] = split_commas(&sg[open + 1..c])[..]
        && expr_kind(replacement) == Expr::NotNull
    {
        return Expr::NotNull;
    }
    Expr::Other
}

/// The table sources of a FROM clause (`sg` after FROM), with their outer-join sides; None when
/// the clause is not understood.
pub(super) fn from_clause(sg: &[&Tok], ctes: &[String]) -> Option<Vec<Source>> {
    let mut sources: Vec<Source> = Vec::new();
    let mut i = 0;
    let mut join = Join::Inner;
    loop {
        let (mut s, next) = source(sg, i, ctes)?;
        match join {
            Join::Inner => {}
            Join::Left => s.outer = true,
            Join::Right | Join::Full => {
                sources.iter_mut().for_each(|p| p.outer = true);
                s.outer = join == Join::Full;
            }
        }
        sources.push(s);
        i = next;
        if i == sg.len() {
            return Some(sources);
        }
        if sg[i].is_punct(',') {
            join = Join::Inner;
            i += 1;
            continue;
        }
        if sg[i].is_word("ON") {
            // The condition runs to the next join (or comma) at depth 0.
            let mut d = 0i32;
            i += 1;
            while i < sg.len() {
                if sg[i].is_punct('(') {
                    d += 1;
                } else if sg[i].is_punct(')') {
                    d -= 1;
                } else if d == 0 && (sg[i].is_punct(',') || join_at(sg, i).is_some()) {
                    break;
                }
                i += 1;
            }
            if i == sg.len() {
                return Some(sources);
            }
            if sg[i].is_punct(',') {
                join = Join::Inner;
                i += 1;
                continue;
            }
        }
        let (j, next) = join_at(sg, i)?;
        join = j;
        i = next;
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Join {
    Inner,
    Left,
    Right,
    Full,
}

/// A join operator at `i` (`JOIN`, `LEFT OUTER HASH JOIN`, `CROSS APPLY`, `OUTER APPLY`, …):
/// its kind and the index after it.
fn join_at(sg: &[&Tok], mut i: usize) -> Option<(Join, usize)> {
    let w = |i: usize, s: &str| sg.get(i).is_some_and(|t| t.is_word(s));
    if w(i, "CROSS") && w(i + 1, "APPLY") {
        return Some((Join::Inner, i + 2));
    }
    if w(i, "OUTER") && w(i + 1, "APPLY") {
        return Some((Join::Left, i + 2));
    }
    let kind = if w(i, "LEFT") {
        Join::Left
    } else if w(i, "RIGHT") {
        Join::Right
    } else if w(i, "FULL") {
        Join::Full
    } else {
        Join::Inner
    };
    if w(i, "LEFT") || w(i, "RIGHT") || w(i, "FULL") || w(i, "INNER") || w(i, "CROSS") {
        i += 1;
    }
    if kind != Join::Inner && w(i, "OUTER") {
        i += 1;
    }
    if ["LOOP", "HASH", "MERGE", "REMOTE"].iter().any(|h| w(i, h)) {
        i += 1;
    }
    w(i, "JOIN").then_some((kind, i + 1))
}

/// The table source at `i` and the index after it (alias and table hints included).
fn source(sg: &[&Tok], i: usize, ctes: &[String]) -> Option<(Source, usize)> {
    let (name, table, mut i) = if sg.get(i)?.is_punct('(') {
        // A derived table or a parenthesized join: opaque.
        (String::new(), None, matching(sg, i)? + 1)
    } else {
        let (parts, end) = dotted(sg, i)?;
        let last = parts.last()?.clone();
        if sg.get(end).is_some_and(|t| t.is_punct('(')) {
            // A table-valued function.
            (last, None, matching(sg, end)? + 1)
        } else {
            let cte = parts.len() == 1 && ctes.iter().any(|c| c.eq_ignore_ascii_case(&last));
            let table = if cte || super::schema::virtual_schema(&parts) {
                None
            } else {
                super::schema::sqlite_name(&parts)
            };
            (last, table, end)
        }
    };
    let mut name = name;
    if sg.get(i).is_some_and(|t| t.is_word("AS")) {
        i += 1;
        name = ident(sg.get(i)?)?.to_string();
        i += 1;
    } else if let Some(t) = sg.get(i)
        && let Some(a) = ident(t)
        && (matches!(t, Tok::Quoted(_))
            || !super::lexer::NOT_ALIAS
                .iter()
                .any(|k| a.eq_ignore_ascii_case(k)))
    {
        name = a.to_string();
        i += 1;
    }
    // A derived table's column list, table hints.
    if sg.get(i).is_some_and(|t| t.is_punct('(')) && table.is_none() {
        i = matching(sg, i)? + 1;
    }
    if sg.get(i).is_some_and(|t| t.is_word("WITH"))
        && sg.get(i + 1).is_some_and(|t| t.is_punct('('))
    {
        i = matching(sg, i + 1)? + 1;
    }
    // Anything else here (PIVOT, TABLESAMPLE, FOR SYSTEM_TIME, …) is not understood.
    match sg.get(i) {
        None => {}
        Some(t) if t.is_punct(',') || t.is_word("ON") || join_at(sg, i).is_some() => {}
        Some(_) => return None,
    }
    Some((
        Source {
            name,
            table,
            outer: false,
        },
        i,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::lexer::tokenize;

    fn col(table: &str, notnull: bool) -> Option<Origin> {
        Some(Origin {
            table: table.into(),
            notnull,
            rowversion: false,
            identity: false,
        })
    }

    fn check(sql: &str, origins: &[Option<Origin>]) -> Vec<bool> {
        nullable(&tokenize(sql).unwrap(), origins, |t| t != "v")
    }

    #[test]
    fn literals_count_and_isnull_are_not_null() {
        let none = [None, None, None, None, None, None, None, None, None];
        assert_eq!(
            check(
                "SELECT 1, 'a', N'b' AS x, 2.5 y, 0x01, NULL, CAST(NULL AS int), @p, a + 1",
                &none
            ),
            [false, false, false, false, false, true, true, true, true]
        );
        let none = [None, None, None, None, None, None];
        assert_eq!(
            check(
                "SELECT COUNT(*), COUNT_BIG(x) AS n, COUNT(*) OVER (PARTITION BY y), \
                 ISNULL(x, 0), ISNULL(x, y), MAX(x) FROM t",
                &none
            ),
            [false, false, false, false, true, true]
        );
        assert_eq!(check("SELECT (1)", &[None]), [false]);
        assert_eq!(check("SELECT n = 1", &[None]), [false]);
    }

    #[test]
    fn columns_follow_their_declaration() {
        let o = [
            col("t", true),
            col("t", false),
            col("t", true),
            col("t", true),
        ];
        assert_eq!(
            check(
                "SELECT id, name, t.id AS x, dbo.t.id FROM dbo.t WHERE id > 1",
                &o
            ),
            [false, true, false, false]
        );
        assert_eq!(check("SELECT * FROM t", &o[..2]), [false, true]);
        // A column with no origin is an expression.
        assert_eq!(check("SELECT id FROM t", &[None]), [true]);
        // A user schema's table is the SQLite table "s.t".
        assert_eq!(check("SELECT id FROM s.t", &[col("s.t", true)]), [false]);
        assert_eq!(check("SELECT id FROM s.t", &[col("t", true)]), [true]);
    }

    #[test]
    fn outer_join_sides_are_nullable() {
        let o = [col("a", true), col("b", true)];
        assert_eq!(
            check("SELECT a.id, b.id FROM a LEFT JOIN b ON a.id = b.id", &o),
            [false, true]
        );
        assert_eq!(
            check(
                "SELECT x.id, y.id FROM a AS x LEFT OUTER JOIN b y ON x.id = y.id",
                &o
            ),
            [false, true]
        );
        assert_eq!(
            check("SELECT a.id, b.id FROM a RIGHT JOIN b ON a.id = b.id", &o),
            [true, false]
        );
        assert_eq!(
            check("SELECT a.id, b.id FROM a FULL JOIN b ON a.id = b.id", &o),
            [true, true]
        );
        assert_eq!(
            check("SELECT a.id, b.id FROM a INNER JOIN b ON a.id = b.id", &o),
            [false, false]
        );
        assert_eq!(
            check("SELECT a.id, b.id FROM a, b WHERE a.id = b.id", &o),
            [false, false]
        );
        assert_eq!(
            check("SELECT a.id, b.id FROM a OUTER APPLY (SELECT 1 AS z) b", &o),
            [false, true]
        );
        // Unqualified and `*`: by table, and only when no source is opaque.
        assert_eq!(
            check("SELECT * FROM a LEFT JOIN b ON a.id = b.id", &o),
            [false, true]
        );
        assert_eq!(
            check(
                "SELECT * FROM a LEFT JOIN (SELECT id FROM b) d ON a.id = d.id",
                &o
            ),
            [true, true]
        );
        // A condition with a function named like a join word.
        assert_eq!(
            check(
                "SELECT a.id, b.id FROM a JOIN b ON LEFT(a.n, 1) = b.n LEFT JOIN c ON 1 = 1",
                &o
            ),
            [false, false]
        );
        // A table twice, one side outer: the unqualified column is not known to be inner.
        assert_eq!(
            check(
                "SELECT * FROM a x LEFT JOIN a y ON x.id = y.id",
                &[col("a", true), col("a", true)]
            ),
            [true, true]
        );
    }

    #[test]
    fn what_is_not_understood_stays_nullable() {
        let o = [col("t", true)];
        for sql in [
            "SELECT id FROM t UNION ALL SELECT id FROM t",
            "SELECT id FROM t GROUP BY ROLLUP(id)",
            "SELECT id FROM v",
            "SELECT d.id FROM (SELECT id FROM t) d",
            "WITH t AS (SELECT id FROM t) SELECT id FROM t",
            "SELECT id FROM t PIVOT (MAX(x) FOR y IN ([1])) p",
            "SELECT id FROM sys.t",
        ] {
            assert_eq!(check(sql, &o), [true], "{sql}");
        }
        // …but a CTE does not hide the tables read next to it.
        assert_eq!(
            check(
                "WITH c AS (SELECT 1 AS z) SELECT t.id FROM t JOIN c ON 1 = 1",
                &o
            ),
            [false]
        );
        // A literal in a compound SELECT: its other branches may be NULL.
        assert_eq!(check("SELECT 1 UNION SELECT NULL", &[None]), [true]);
        // SQLite gives a scalar subquery the origin of its column, NULL when it finds no row.
        let o = [col("t", true), col("t", true)];
        assert_eq!(
            check("SELECT id, (SELECT id FROM t WHERE 0 = 1) FROM t", &o),
            [false, true]
        );
        assert_eq!(
            check("SELECT *, (SELECT id FROM t WHERE 0 = 1) FROM t", &o),
            [false, true]
        );
        assert_eq!(
            check("SELECT (SELECT id FROM t WHERE 0 = 1), * FROM t", &o),
            [true, false]
        );
        assert_eq!(
            check(
                "SELECT *, (SELECT id FROM t WHERE 0 = 1), * FROM t",
                &[col("t", true), col("t", true), col("t", true)]
            ),
            [true, true, true]
        );
        // …and a view with one such column is no table (`is_table` is false for v).
        assert_eq!(check("SELECT * FROM t, v", &o), [true, true]);
    }

    #[test]
    fn star_columns_are_placed() {
        let o = [None, col("t", true), col("t", true), None];
        assert_eq!(
            check("SELECT 1, *, 2 FROM t", &o),
            [false, false, false, false]
        );
        assert_eq!(
            check("SELECT 1, t.*, NULL FROM t", &o),
            [false, false, false, true]
        );
        assert_eq!(
            check("SELECT 1, a.*, b.* FROM t a, t b", &o),
            [false, false, false, true]
        );
    }
}
