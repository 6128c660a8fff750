//! T-SQL query forms SQLite lacks, rewritten at the token level before `Ctx::rw`:
//! - `SELECT name = expr` (select-item alias by assignment) -> `expr AS name`;
//! - `(VALUES (…), (…)) [AS] t (c1, c2)` (a table value constructor with column names) ->
//!   `(SELECT e11 AS c1, e12 AS c2 UNION ALL SELECT e21, e22) AS t`, which keeps each column's
//!   evident type (a CAST in the first row) visible to `Ctx::select_types`.

use super::lexer::{Tok, matching, next_sig, split_commas};

fn sp() -> Tok {
    Tok::Space(" ".into())
}

/// Rewritten tokens, or None when the statement has none of these forms.
pub fn rewrite(toks: &[Tok]) -> Option<Vec<Tok>> {
    let a = assignment_aliases(toks);
    let b = values_tables(a.as_deref().unwrap_or(toks)).or(a);
    let c = sysobjects(b.as_deref().unwrap_or(toks));
    c.or(b)
}

/// SQL Server's system base tables as `sysobjects` lists them (type S, their fixed ids), so
/// that `SELECT TOP 10 … FROM sysobjects` finds rows on an empty database too.
const SYSTEM_TABLES: &[(&str, i64)] = &[
    ("sysrscols", 3),
    ("sysrowsets", 5),
    ("sysclones", 6),
    ("sysallocunits", 7),
    ("sysfiles1", 8),
    ("sysseobjvalues", 9),
    ("syspriorities", 17),
    ("sysdbfrag", 18),
    ("sysfgfrag", 19),
    ("sysdbfiles", 20),
    ("syspru", 21),
    ("sysbrickfiles", 22),
    ("sysphfg", 23),
    ("sysprufiles", 24),
    ("sysftinds", 25),
    ("sysowners", 27),
    ("sysprivs", 29),
    ("sysschobjs", 34),
];

/// The compatibility view `sysobjects` ([dbo.|sys.]sysobjects) as a derived table in T-SQL, so
/// its columns keep their types (crdate/refdate are datetime) through `Ctx::select_types`.
fn sysobjects_query() -> Vec<Tok> {
    let system: String = SYSTEM_TABLES
        .iter()
        .map(|(n, id)| format!(" UNION ALL SELECT '{n}', {id}, 'S '"))
        .collect();
    let created = "CAST('2003-04-08 09:13:36.390' AS DATETIME)";
    let sql = format!(
        "(SELECT name, id, xtype, xtype AS type, 1 AS uid, {created} AS crdate, {created} AS refdate \
         FROM (SELECT name, rowid + 100 AS id, CASE type WHEN 'view' THEN 'V ' ELSE 'U ' END AS xtype \
         FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' \
         AND name NOT LIKE '__tdspeer%' AND name NOT LIKE '##%' UNION ALL SELECT name, 1000000 + rowid, 'P ' \
         FROM __tdspeer_procs{system}))"
    );
    super::lexer::tokenize(&sql).unwrap_or_default()
}

pub fn sysobjects(toks: &[Tok]) -> Option<Vec<Tok>> {
    let at = |i: usize| {
        toks[i].is_word("sysobjects") && !toks.get(i + 1).is_some_and(|t| t.is_punct('.'))
    };
    if !(0..toks.len()).any(at) {
        return None;
    }
    let mut out: Vec<Tok> = Vec::new();
    for i in 0..toks.len() {
        if !at(i) {
            out.push(toks[i].clone());
            continue;
        }
        // Drop a `dbo.` / `sys.` / `master..` qualifier already copied.
        while out.last().is_some_and(|t| t.is_punct('.') || matches!(t, Tok::Word(w) if ["dbo", "sys", "master"].iter().any(|q| w.eq_ignore_ascii_case(q)))) {
            out.pop();
        }
        out.extend(sysobjects_query());
        let next = next_sig(toks, i + 1).map(|j| &toks[j]);
        let aliased = match next {
            Some(Tok::Quoted(_)) => true,
            Some(Tok::Word(w)) => ![
                "WHERE", "ORDER", "GROUP", "JOIN", "INNER", "LEFT", "RIGHT", "CROSS", "FULL", "ON",
                "UNION", "HAVING", "OPTION", "WITH",
            ]
            .iter()
            .any(|k| w.eq_ignore_ascii_case(k)),
            _ => false,
        };
        if !aliased {
            out.extend([
                sp(),
                Tok::Word("AS".into()),
                sp(),
                Tok::Quoted("sysobjects".into()),
            ]);
        }
    }
    Some(out)
}

/// The items of the SELECT list starting after `select` (index of the SELECT word), up to the
/// clause that ends it at the same depth: (start, end) index pairs.
fn list_items(toks: &[Tok], select: usize) -> Vec<(usize, usize)> {
    let mut s = select + 1;
    while let Some(j) = next_sig(toks, s) {
        if toks[j].is_word("DISTINCT") || toks[j].is_word("ALL") {
            s = j + 1;
        } else if toks[j].is_word("TOP") {
            let Some(k) = next_sig(toks, j + 1) else {
                break;
            };
            s = if toks[k].is_punct('(') {
                matching(toks, k).map_or(k + 1, |c| c + 1)
            } else {
                k + 1
            };
        } else {
            break;
        }
    }
    let mut d = 0;
    let mut items = Vec::new();
    let mut start = s;
    let mut i = s;
    while i < toks.len() {
        let t = &toks[i];
        if t.is_punct('(') {
            d += 1;
        } else if t.is_punct(')') {
            if d == 0 {
                break;
            }
            d -= 1;
        } else if d == 0 && t.is_punct(',') {
            items.push((start, i));
            start = i + 1;
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
                "OPTION",
                "FOR",
            ]
            .iter()
            .any(|k| t.is_word(k))
        {
            break;
        }
        i += 1;
    }
    items.push((start, i));
    items
}

/// The SELECT words that start a query's select lists: the statement's first, and each one
/// after a set operator at the top level (`SELECT a = 1 UNION ALL SELECT a = 2`: the alias form
/// is legal in every branch, and SQLite would read a later branch's `a = 2` as a comparison).
fn top_selects(toks: &[Tok]) -> Vec<usize> {
    let Some(first) = next_sig(toks, 0).filter(|&i| toks[i].is_word("SELECT")) else {
        return Vec::new();
    };
    let mut found = vec![first];
    let mut depth = 0usize;
    let mut after_set_op = false;
    for (i, t) in toks.iter().enumerate().skip(first + 1) {
        if t.is_punct('(') {
            depth += 1;
        } else if t.is_punct(')') {
            depth = depth.saturating_sub(1);
        } else if depth == 0
            && ["UNION", "EXCEPT", "INTERSECT"]
                .iter()
                .any(|k| t.is_word(k))
        {
            after_set_op = true;
        } else if depth == 0 && after_set_op && t.is_word("SELECT") {
            found.push(i);
            after_set_op = false;
        }
    }
    found
}

fn assignment_aliases(toks: &[Tok]) -> Option<Vec<Tok>> {
    let selects = top_selects(toks);
    let select = *selects.first()?;
    let mut out: Vec<Tok> = toks[..=select].to_vec();
    let mut changed = false;
    let mut last = select + 1;
    let items = selects.iter().flat_map(|&sel| list_items(toks, sel));
    for (s, e) in items {
        let Some(n) = next_sig(toks, s).filter(|&n| n < e) else {
            continue;
        };
        let Some(eq) = next_sig(toks, n + 1).filter(|&q| q < e && toks[q].is_punct('=')) else {
            continue;
        };
        let name = match &toks[n] {
            Tok::Word(w) if !w.starts_with('@') => w.clone(),
            Tok::Quoted(q) => q.clone(),
            _ => continue,
        };
        if next_sig(toks, eq + 1).is_none_or(|x| x >= e) {
            continue;
        }
        out.extend_from_slice(&toks[last..n]);
        out.extend_from_slice(&toks[eq + 1..e]);
        out.extend([sp(), Tok::Word("AS".into()), sp(), Tok::Quoted(name)]);
        last = e;
        changed = true;
    }
    out.extend_from_slice(&toks[last..]);
    changed.then_some(out)
}

fn values_tables(toks: &[Tok]) -> Option<Vec<Tok>> {
    let mut out = Vec::new();
    let mut changed = false;
    let mut i = 0;
    while i < toks.len() {
        if toks[i].is_punct('(')
            && let Some(v) = next_sig(toks, i + 1)
            && toks[v].is_word("VALUES")
            && let Some(close) = matching(toks, i)
            && let Some(done) = derived_values(toks, v, close, &mut out)
        {
            changed = true;
            i = done;
            continue;
        }
        out.push(toks[i].clone());
        i += 1;
    }
    changed.then_some(out)
}

/// `(VALUES rows) [AS] alias (cols)` with `v` at VALUES and `close` at the `)`: appends the
/// rewrite and returns the index after the column list, or None when it is not this form.
fn derived_values(toks: &[Tok], v: usize, close: usize, out: &mut Vec<Tok>) -> Option<usize> {
    let mut a = next_sig(toks, close + 1)?;
    if toks[a].is_word("AS") {
        a = next_sig(toks, a + 1)?;
    }
    let alias = match &toks[a] {
        Tok::Word(w) => Tok::Word(w.clone()),
        Tok::Quoted(q) => Tok::Quoted(q.clone()),
        _ => return None,
    };
    let open = next_sig(toks, a + 1).filter(|&o| toks[o].is_punct('('))?;
    let cols_close = matching(toks, open)?;
    let cols: Vec<&[Tok]> = split_commas(&toks[open + 1..cols_close]);
    let mut rows = Vec::new();
    let mut r = next_sig(toks, v + 1)?;
    while r < close {
        if !toks[r].is_punct('(') {
            return None;
        }
        let rc = matching(toks, r)?;
        rows.push(split_commas(&toks[r + 1..rc]));
        r = match next_sig(toks, rc + 1) {
            Some(n) if toks[n].is_punct(',') => next_sig(toks, n + 1)?,
            Some(n) => n,
            None => return None,
        };
    }
    if rows.is_empty() || rows.iter().any(|row| row.len() != cols.len()) {
        return None;
    }
    out.push(Tok::Punct('('));
    for (k, row) in rows.iter().enumerate() {
        if k > 0 {
            out.extend([
                sp(),
                Tok::Word("UNION".into()),
                sp(),
                Tok::Word("ALL".into()),
                sp(),
            ]);
        }
        out.push(Tok::Word("SELECT".into()));
        for (c, expr) in row.iter().enumerate() {
            out.push(if c == 0 { sp() } else { Tok::Punct(',') });
            out.push(sp());
            out.extend_from_slice(expr);
            if k == 0 {
                out.extend([sp(), Tok::Word("AS".into()), sp()]);
                out.extend(cols[c].iter().filter(|t| !t.is_space()).cloned());
            }
        }
    }
    out.extend([Tok::Punct(')'), sp(), Tok::Word("AS".into()), sp(), alias]);
    Some(cols_close + 1)
}

/// For `Ctx::select_types`: the select items of every nested SELECT (index ranges), so that a
/// bare column name of the outer query can take the type of the inner item it names.
pub fn inner_items(toks: &[Tok]) -> Vec<(usize, usize)> {
    let mut d = 0;
    let mut items = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if t.is_punct('(') {
            d += 1;
        } else if t.is_punct(')') {
            d -= 1;
        } else if d > 0 && t.is_word("SELECT") {
            items.extend(list_items(toks, i));
        }
    }
    items
}

/// `INSERT … VALUES (…)` into a table with sql_variant columns: each value bound for one
/// (`targets[k]`) becomes `CAST(value AS SQL_VARIANT)`, which keeps the value's evident type as
/// the variant's base type (SQL Server stores 456.7 as numeric(4,1), 'x' as varchar(1)).
pub fn wrap_variant_values(toks: &[Tok], targets: &[bool]) -> Option<Vec<Tok>> {
    let values = toks.iter().position(|t| t.is_word("VALUES"))?;
    let mut out: Vec<Tok> = toks[..=values].to_vec();
    let mut i = values + 1;
    while i < toks.len() {
        if !toks[i].is_punct('(') {
            out.push(toks[i].clone());
            i += 1;
            continue;
        }
        let close = matching(toks, i)?;
        out.push(Tok::Punct('('));
        for (k, item) in split_commas(&toks[i + 1..close]).into_iter().enumerate() {
            if k > 0 {
                out.push(Tok::Punct(','));
            }
            if targets.get(k).copied().unwrap_or(false) {
                out.extend([Tok::Word("CAST".into()), Tok::Punct('(')]);
                out.extend_from_slice(item);
                out.extend([
                    sp(),
                    Tok::Word("AS".into()),
                    sp(),
                    Tok::Word("SQL_VARIANT".into()),
                    Tok::Punct(')'),
                ]);
            } else {
                out.extend_from_slice(item);
            }
        }
        out.push(Tok::Punct(')'));
        i = close + 1;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::lexer::tokenize;

    fn text(t: &[Tok]) -> String {
        t.iter().map(|t| t.text()).collect()
    }

    #[test]
    fn select_assignment_alias() {
        let out = rewrite(&tokenize("select i = 1, [j k] = 'x', n").unwrap()).unwrap();
        assert_eq!(text(&out), r#"select  1 AS "i",  'x' AS "j k", n"#);
    }

    #[test]
    fn assignment_alias_in_every_union_branch() {
        let sql = "select a = 1, b = 2\nunion all\nselect a = 3, b = (select x = 4)";
        let out = rewrite(&tokenize(sql).unwrap()).unwrap();
        assert_eq!(
            text(&out),
            "select  1 AS \"a\",  2\n AS \"b\"union all\nselect  3 AS \"a\",  (select x = 4) AS \"b\""
        );
    }

    #[test]
    fn values_with_column_names() {
        let out =
            rewrite(&tokenize("select v from (values (1, 2), (3, 4)) t(n, v) order by n").unwrap())
                .unwrap();
        assert_eq!(
            text(&out),
            "select v from (SELECT  1 AS n,  2 AS v UNION ALL SELECT  3,  4) AS t order by n"
        );
    }
}
