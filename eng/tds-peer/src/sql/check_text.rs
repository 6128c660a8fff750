//! The `definition` text SQL Server stores for a CHECK constraint (sys.check_constraints,
//! INFORMATION_SCHEMA.CHECK_CONSTRAINTS), from the T-SQL tokens of its expression (checks.rs).

use super::lexer::{Tok, matching, sig, split_commas};

/// What a piece of the normalised text is, for the spacing between pieces.
#[derive(Clone, Copy, PartialEq)]
enum Piece {
    Operand,
    Op,
    Keyword,
    Open,
    Close,
    Comma,
}

const KEYWORDS: &[&str] = &[
    "AND", "OR", "NOT", "IS", "NULL", "LIKE", "ESCAPE", "CASE", "WHEN", "THEN", "ELSE", "END",
    "EXISTS",
];

/// SQL Server's stored text of a CHECK expression (the tokens inside `CHECK ( … )`): the whole
/// in parentheses, names bracketed, numbers parenthesised (`(-1)`), operators without spaces,
/// AND/OR/NOT/IS NULL upper case with spaces, LIKE and function names lower case,
/// `x IN (a, b)` as `[x]=b OR [x]=a` and `x BETWEEN a AND b` as `[x]>=a AND [x]<=b`, `!=` as
/// `<>`.
pub fn definition(toks: &[Tok]) -> String {
    let s: Vec<&Tok> = sig(toks);
    format!("({})", expr(&s))
}

fn expr(s: &[&Tok]) -> String {
    let mut pieces: Vec<(String, Piece)> = Vec::new();
    let mut i = 0;
    while i < s.len() {
        // `operand [NOT] IN ( list )` and `operand [NOT] BETWEEN a AND b` with a one-token
        // (or signed number) operand.
        if let Some((end, text)) = rewrite_in_between(s, i) {
            let whole = i == 0 && end == s.len();
            pieces.push((
                if whole { text } else { format!("({text})") },
                Piece::Operand,
            ));
            i = end;
            continue;
        }
        let t = s[i];
        let prev_is_operand = pieces
            .last()
            .is_some_and(|p| matches!(p.1, Piece::Operand | Piece::Close));
        match t {
            Tok::Punct('-') | Tok::Punct('+')
                if !prev_is_operand && matches!(s.get(i + 1), Some(Tok::Num(_))) =>
            {
                let Some(Tok::Num(n)) = s.get(i + 1) else {
                    unreachable!()
                };
                let sign = if t.is_punct('-') { "-" } else { "" };
                pieces.push((format!("({sign}{n})"), Piece::Operand));
                i += 2;
                continue;
            }
            Tok::Num(n) => pieces.push((format!("({n})"), Piece::Operand)),
            Tok::Str { n, s: v } => pieces.push((
                format!("{}'{}'", if *n { "N" } else { "" }, v.replace('\'', "''")),
                Piece::Operand,
            )),
            Tok::Hex(h) => pieces.push((h.clone(), Piece::Operand)),
            Tok::Var(v) => pieces.push((v.clone(), Piece::Operand)),
            Tok::Word(w) if s.get(i + 1).is_some_and(|n| n.is_punct('(')) && !is_keyword(w) => {
                pieces.push((w.to_ascii_lowercase(), Piece::Operand));
                pieces.push(("(".into(), Piece::Open));
                i += 2;
                continue;
            }
            Tok::Word(w) if w.eq_ignore_ascii_case("LIKE") => {
                pieces.push(("like".into(), Piece::Keyword));
            }
            Tok::Word(w) if is_keyword(w) => pieces.push((w.to_ascii_uppercase(), Piece::Keyword)),
            Tok::Word(w) | Tok::Quoted(w) => {
                pieces.push((format!("[{}]", w.replace(']', "]]")), Piece::Operand));
            }
            Tok::Punct('(') => pieces.push(("(".into(), Piece::Open)),
            Tok::Punct(')') => pieces.push((")".into(), Piece::Close)),
            Tok::Punct(',') => pieces.push((",".into(), Piece::Comma)),
            Tok::Punct('.') => pieces.push((".".into(), Piece::Op)),
            Tok::Punct(c) => {
                // Two-character comparisons arrive as two tokens: one piece.
                if let Some(last) = pieces.last_mut()
                    && last.1 == Piece::Op
                    && matches!(last.0.as_str(), "<" | ">" | "!")
                    && matches!(c, '=' | '>')
                {
                    last.0.push(*c);
                    if last.0 == "!=" {
                        last.0 = "<>".into();
                    }
                } else {
                    pieces.push((c.to_string(), Piece::Op));
                }
            }
            Tok::Space(_) => {}
        }
        i += 1;
    }
    let mut out = String::new();
    for (k, (text, kind)) in pieces.iter().enumerate() {
        if k > 0 {
            let prev = pieces[k - 1].1;
            let spaced = (prev == Piece::Keyword || *kind == Piece::Keyword)
                && prev != Piece::Open
                && !matches!(kind, Piece::Close | Piece::Comma);
            if spaced {
                out.push(' ');
            }
        }
        out.push_str(text);
    }
    out.replace(" .", ".").replace(". ", ".")
}

fn is_keyword(w: &str) -> bool {
    KEYWORDS.iter().any(|k| w.eq_ignore_ascii_case(k))
}

/// `x IN (a, b, c)` -> `[x]=(c) OR [x]=(b) OR [x]=(a)` (SQL Server's order), `x NOT IN (…)` ->
/// `[x]<>(a) AND …`, `x BETWEEN a AND b` -> `[x]>=(a) AND [x]<=(b)`: (end, text).
fn rewrite_in_between(s: &[&Tok], i: usize) -> Option<(usize, String)> {
    let first = s.get(i)?;
    if !matches!(first, Tok::Word(w) if !is_keyword(w)) && !matches!(first, Tok::Quoted(_)) {
        return None;
    }
    if s.get(i + 1)
        .is_some_and(|t| t.is_punct('(') || t.is_punct('.'))
    {
        return None;
    }
    let mut j = i + 1;
    let not = s.get(j).is_some_and(|t| t.is_word("NOT"));
    if not {
        j += 1;
    }
    if !s
        .get(j)
        .is_some_and(|t| t.is_word("IN") || t.is_word("BETWEEN"))
    {
        return None;
    }
    let operand = expr(&s[i..=i]);
    let one = |k: usize| -> Option<(usize, String)> {
        let t = s.get(k)?;
        if (t.is_punct('-') || t.is_punct('+')) && matches!(s.get(k + 1), Some(Tok::Num(_))) {
            Some((k + 2, expr(&s[k..k + 2])))
        } else if matches!(
            t,
            Tok::Num(_) | Tok::Str { .. } | Tok::Word(_) | Tok::Quoted(_)
        ) {
            Some((k + 1, expr(&s[k..=k])))
        } else {
            None
        }
    };
    if s.get(j)?.is_word("IN") && s.get(j + 1)?.is_punct('(') {
        let close = matching(s, j + 1)?;
        let items: Vec<String> = split_commas(&s[j + 2..close])
            .into_iter()
            .map(expr)
            .collect();
        let (op, join) = if not { ("<>", " AND ") } else { ("=", " OR ") };
        let text = items
            .iter()
            .rev()
            .map(|v| format!("{operand}{op}{v}"))
            .collect::<Vec<_>>()
            .join(join);
        return Some((close + 1, text));
    }
    if s.get(j)?.is_word("BETWEEN") {
        let (k, lo) = one(j + 1)?;
        if !s.get(k)?.is_word("AND") {
            return None;
        }
        let (end, hi) = one(k + 1)?;
        let text = if not {
            format!("{operand}<{lo} OR {operand}>{hi}")
        } else {
            format!("{operand}>={lo} AND {operand}<={hi}")
        };
        return Some((end, text));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::lexer::tokenize;

    fn def(sql: &str) -> String {
        definition(&tokenize(sql).unwrap())
    }

    #[test]
    fn definitions_are_normalised_as_sql_server_stores_them() {
        assert_eq!(def("x > 0"), "([x]>(0))");
        assert_eq!(
            def("[qty] >= -1 AND price<100.5"),
            "([qty]>=(-1) AND [price]<(100.5))"
        );
        assert_eq!(def("len(name) > 0"), "(len([name])>(0))");
        assert_eq!(def("code LIKE 'A%'"), "([code] like 'A%')");
        assert_eq!(def("x IS NOT NULL"), "([x] IS NOT NULL)");
        assert_eq!(def("x != 3"), "([x]<>(3))");
        assert_eq!(
            def("status IN ('a', 'b')"),
            "([status]='b' OR [status]='a')"
        );
        assert_eq!(def("x BETWEEN 1 AND 10"), "([x]>=(1) AND [x]<=(10))");
        assert_eq!(
            def("a > 0 AND s IN (1, 2)"),
            "([a]>(0) AND ([s]=(2) OR [s]=(1)))"
        );
        assert_eq!(def("lo <= hi"), "([lo]<=[hi])");
    }
}
