//! What the rewriter can tell about an operand's T-SQL type from the text alone, for the two
//! places where the type changes what an operator means:
//! - `+` is string concatenation when an operand is a character string: a literal, a
//!   variable or parameter declared char/varchar/nchar/nvarchar, a character column of the
//!   statement's tables, a function returning a string (`QUOTENAME`, `COALESCE` of strings,
//!   `CAST(… AS varchar)`), or a parenthesized expression of those;
//! - `+ - *` and unary minus of integer operands (literals, integer variables/parameters,
//!   `CAST(… AS int)`, `COUNT(…)`, parenthesized integer expressions) have an integer result
//!   type by SQL Server's precedence (bigint > int > smallint > tinyint), and overflowing it
//!   is 8115. Columns are not typed here (their values are range-checked where stored).

use super::lexer::{Tok, matching, next_sig, sig, split_commas};
use super::rewrite::Ctx;
use crate::types::Ty;

/// Words that may stand before a parenthesized operand without calling it.
const NOT_CALLS: &[&str] = &[
    "SELECT", "AND", "OR", "NOT", "IN", "EXISTS", "WHERE", "ON", "VALUES", "WHEN", "THEN", "ELSE",
    "RETURN", "AS", "BY", "FROM", "JOIN", "SET", "IF", "WHILE", "PRINT", "CASE", "LIKE", "IS",
    "BETWEEN", "TOP", "HAVING", "EXEC", "EXECUTE", "INTO", "OVER", "ALL", "ANY", "SOME",
    "DISTINCT", "UNION",
];

fn is_call_name(t: &Tok) -> bool {
    match t {
        Tok::Word(w) => !NOT_CALLS.iter().any(|k| w.eq_ignore_ascii_case(k)),
        _ => false,
    }
}

/// The `(` matching the `)` at `close`, scanning backwards.
fn matching_back(toks: &[Tok], close: usize) -> Option<usize> {
    let mut d = 0usize;
    for i in (0..=close).rev() {
        if toks[i].is_punct(')') {
            d += 1;
        } else if toks[i].is_punct('(') {
            d = d.checked_sub(1)?;
            if d == 0 {
                return Some(i);
            }
        }
    }
    None
}

fn prev_sig(toks: &[Tok], end: usize) -> Option<usize> {
    toks[..end].iter().rposition(|t| !t.is_space())
}

/// Start of the operand that ends just before `end` (spaces skipped): a literal, variable,
/// (dotted) name, call or parenthesized group. None for anything else (a CASE, an operator).
pub(super) fn operand_start(toks: &[Tok], end: usize) -> Option<usize> {
    let j = prev_sig(toks, end)?;
    match &toks[j] {
        Tok::Punct(')') => {
            let open = matching_back(toks, j)?;
            match prev_sig(toks, open) {
                Some(k) if is_call_name(&toks[k]) => Some(k),
                _ => Some(open),
            }
        }
        Tok::Word(w) if w.eq_ignore_ascii_case("END") => None,
        Tok::Word(_) | Tok::Quoted(_) => {
            let mut s = j;
            while let Some(d) = prev_sig(toks, s).filter(|&d| toks[d].is_punct('.')) {
                match prev_sig(toks, d) {
                    Some(n) if matches!(toks[n], Tok::Word(_) | Tok::Quoted(_)) => s = n,
                    _ => break,
                }
            }
            Some(s)
        }
        Tok::Num(_) | Tok::Str { .. } | Tok::Var(_) | Tok::Hex(_) => Some(j),
        _ => None,
    }
}

fn is_char(ty: Ty) -> bool {
    matches!(
        ty,
        Ty::Char(..) | Ty::VarChar(..) | Ty::NChar(_) | Ty::NVarChar(_)
    )
}

fn int_rank(ty: Ty) -> Option<u8> {
    Some(match ty {
        Ty::TinyInt => 1,
        Ty::SmallInt => 2,
        Ty::Int => 3,
        Ty::BigInt => 4,
        _ => return None,
    })
}

/// The integer type of higher precedence.
pub(super) fn wider(a: Ty, b: Ty) -> Ty {
    if int_rank(a) >= int_rank(b) { a } else { b }
}

/// The range of the call whose name is at `name` in `sg`: (upper-case name, its arguments)
/// when the call is the whole of `sg`.
fn whole_call<'t>(sg: &[&'t Tok], toks: &'t [Tok]) -> Option<(String, &'t [Tok])> {
    let Some(Tok::Word(w)) = sg.first() else {
        return None;
    };
    if !sg.get(1).is_some_and(|t| t.is_punct('(')) || !sg.last()?.is_punct(')') {
        return None;
    }
    let open = toks.iter().position(|t| t.is_punct('('))?;
    let close = matching(toks, open)?;
    if sig(&toks[close + 1..]).is_empty() {
        Some((w.to_ascii_uppercase(), &toks[open + 1..close]))
    } else {
        None
    }
}

/// The inner tokens when `toks` is one parenthesized group.
fn whole_paren(toks: &[Tok]) -> Option<&[Tok]> {
    let open = toks.iter().position(|t| !t.is_space())?;
    if !toks[open].is_punct('(') {
        return None;
    }
    let close = matching(toks, open)?;
    sig(&toks[close + 1..])
        .is_empty()
        .then(|| &toks[open + 1..close])
}

/// The target type of `CAST(x AS T)` / `CONVERT(T, x)` arguments.
fn cast_target(name: &str, args: &[Tok]) -> Option<Ty> {
    let ty_toks: &[Tok] = match name {
        "CAST" | "TRY_CAST" => {
            let asp = args.iter().rposition(|t| t.is_word("AS"))?;
            &args[asp + 1..]
        }
        "CONVERT" | "TRY_CONVERT" => split_commas(args).first().copied()?,
        _ => return None,
    };
    let text: String = ty_toks.iter().map(|t| t.text()).collect();
    Ty::parse(text.replace(['[', ']', '"'], "").trim())
}

impl Ctx<'_> {
    fn var_ty(&self, v: &str) -> Option<Ty> {
        self.params
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(v))
            .and_then(|(_, t)| *t)
    }

    /// Is the operand `toks` (one operand, see `operand_start`) a character string?
    pub(super) fn is_text(&self, toks: &[Tok]) -> bool {
        let sg = sig(toks);
        match sg.as_slice() {
            [] => false,
            [Tok::Str { .. }] => true,
            [Tok::Var(v)] => match v.to_ascii_uppercase().as_str() {
                "@@VERSION" | "@@SERVERNAME" | "@@SERVICENAME" | "@@LANGUAGE" => true,
                _ => self.var_ty(v).is_some_and(is_char),
            },
            [.., Tok::Word(c) | Tok::Quoted(c)]
                if sg
                    .iter()
                    .all(|t| matches!(t, Tok::Word(_) | Tok::Quoted(_)) || t.is_punct('.')) =>
            {
                !sg[0].is_word("NULL")
                    && self.text_columns.iter().any(|x| x.eq_ignore_ascii_case(c))
            }
            _ => {
                if let Some(inner) = whole_paren(toks) {
                    return self.is_text_expr(inner);
                }
                let Some((name, args)) = whole_call(&sg, toks) else {
                    return false;
                };
                match name.as_str() {
                    "QUOTENAME" | "UPPER" | "LOWER" | "LTRIM" | "RTRIM" | "TRIM" | "SUBSTRING"
                    | "REPLACE" | "LEFT" | "RIGHT" | "CONCAT" | "CONCAT_WS" | "FORMAT" | "STR"
                    | "CHAR" | "NCHAR" | "REPLICATE" | "STUFF" | "REVERSE" | "SPACE"
                    | "DB_NAME" | "OBJECT_NAME" | "OBJECT_SCHEMA_NAME" | "SCHEMA_NAME"
                    | "USER_NAME" | "SUSER_SNAME" | "SUSER_NAME" | "ORIGINAL_LOGIN"
                    | "HOST_NAME" | "APP_NAME" | "TYPE_NAME" | "COL_NAME" | "STRING_AGG"
                    | "JSON_VALUE" | "JSON_QUERY" | "TRANSLATE" | "SOUNDEX" | "ERROR_MESSAGE"
                    | "ERROR_PROCEDURE" | "DATENAME" => true,
                    "CAST" | "TRY_CAST" | "CONVERT" | "TRY_CONVERT" => {
                        cast_target(&name, args).is_some_and(is_char)
                    }
                    "COALESCE" | "ISNULL" | "NULLIF" | "MAX" | "MIN" => {
                        split_commas(args).iter().any(|a| self.is_text_expr(a))
                    }
                    "IIF" => split_commas(args)
                        .iter()
                        .skip(1)
                        .any(|a| self.is_text_expr(a)),
                    _ => false,
                }
            }
        }
    }

    /// Is the expression `toks` a `+` chain with a character-string operand?
    pub(super) fn is_text_expr(&self, toks: &[Tok]) -> bool {
        let mut i = 0;
        loop {
            let Some(end) = super::rewrite::operand_end(toks, i) else {
                return false;
            };
            if self.is_text(&toks[i..end]) {
                return true;
            }
            match next_sig(toks, end) {
                Some(p) if toks[p].is_punct('+') => i = p + 1,
                _ => return false,
            }
        }
    }

    /// Is the operand a number by its text (a numeric literal, a numeric-typed variable)?
    pub(super) fn is_number(&self, toks: &[Tok]) -> bool {
        match sig(toks).as_slice() {
            [Tok::Num(_)] => true,
            [Tok::Var(v)] => self.var_ty(v).is_some_and(|t| !is_char(t)),
            _ => false,
        }
    }

    /// The integer type of one operand (leading signs allowed), None when not known integer.
    pub(super) fn int_ty(&self, toks: &[Tok]) -> Option<Ty> {
        let from = toks
            .iter()
            .position(|t| !t.is_space() && !t.is_punct('-') && !t.is_punct('+'))?;
        let toks = &toks[from..];
        let sg = sig(toks);
        match sg.as_slice() {
            [Tok::Num(n)] => {
                if n.contains(['.', 'e', 'E']) {
                    return None;
                }
                // An integer literal past int is numeric(p, 0) in T-SQL, not bigint.
                n.parse::<i32>().ok().map(|_| Ty::Int)
            }
            [Tok::Var(v)] => match v.to_ascii_uppercase().as_str() {
                "@@ROWCOUNT" | "@@SPID" | "@@TRANCOUNT" | "@@ERROR" => Some(Ty::Int),
                _ => self.var_ty(v).filter(|t| int_rank(*t).is_some()),
            },
            _ => {
                if let Some(inner) = whole_paren(toks) {
                    return self.int_expr_ty(inner);
                }
                let (name, args) = whole_call(&sg, toks)?;
                match name.as_str() {
                    "CAST" | "TRY_CAST" | "CONVERT" | "TRY_CONVERT" => {
                        cast_target(&name, args).filter(|t| int_rank(*t).is_some())
                    }
                    "COUNT" | "LEN" | "DATALENGTH" | "CHARINDEX" | "DATEDIFF" | "DATEPART"
                    | "YEAR" | "MONTH" | "DAY" => Some(Ty::Int),
                    "COUNT_BIG" | "DATEDIFF_BIG" => Some(Ty::BigInt),
                    _ => None,
                }
            }
        }
    }

    /// The integer result type of an expression of integer operands joined by `+ - * / %`.
    pub(super) fn int_expr_ty(&self, toks: &[Tok]) -> Option<Ty> {
        let mut i = 0;
        let mut ty: Option<Ty> = None;
        loop {
            let end = super::rewrite::operand_end(toks, i)?;
            let t = self.int_ty(&toks[i..end])?;
            ty = Some(ty.map_or(t, |u| wider(u, t)));
            match next_sig(toks, end) {
                None => return ty,
                Some(p) if matches!(toks[p], Tok::Punct('+' | '-' | '*' | '/' | '%')) => i = p + 1,
                Some(_) => return None,
            }
        }
    }
}
