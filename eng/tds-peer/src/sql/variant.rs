//! `SQL_VARIANT_PROPERTY(expr, 'BaseType' | 'Precision' | 'Scale' | 'MaxLength' | 'TotalBytes'
//! | 'Collation')`. SQLite keeps no declared type with a value, so the base type is decided
//! when the statement is rewritten: the type of `CAST(x AS sql_variant)`'s `x` (a literal, a
//! CAST/CONVERT, a function of known type), else at run time from the value's storage class
//! (integer → int or bigint, real → float, text → nvarchar, blob → varbinary).

use crate::sql::lexer::{Tok, sig};
use crate::types::{Ty, decimal_len};

/// The property of a value of base type `ty`, as SQL Server reports it (SQLite literal); NULL
/// for an unknown property name, as SQL Server returns.
pub fn property(ty: Ty, prop: &str, len: Option<usize>) -> String {
    let (precision, scale, max_len): (u32, u32, u32) = match ty {
        Ty::Bit => (1, 0, 1),
        Ty::TinyInt => (3, 0, 1),
        Ty::SmallInt => (5, 0, 2),
        Ty::Int => (10, 0, 4),
        Ty::BigInt => (19, 0, 8),
        Ty::Real => (24, 0, 4),
        Ty::Float => (53, 0, 8),
        Ty::Decimal(p, s) | Ty::Numeric(p, s) => (p.into(), s.into(), decimal_len(p).into()),
        Ty::Money => (19, 4, 8),
        Ty::SmallMoney => (10, 4, 4),
        Ty::Date => (10, 0, 3),
        Ty::Time(s) => (if s == 0 { 8 } else { 9 + u32::from(s) }, s.into(), 5),
        Ty::DateTime => (23, 3, 8),
        Ty::SmallDateTime => (16, 0, 4),
        Ty::DateTime2(s) => (if s == 0 { 19 } else { 20 + u32::from(s) }, s.into(), 8),
        Ty::DateTimeOffset(s) => (if s == 0 { 26 } else { 27 + u32::from(s) }, s.into(), 10),
        Ty::Char(n, _) | Ty::Binary(n) => (0, 0, n.into()),
        Ty::NChar(n) => (0, 0, 2 * u32::from(n)),
        Ty::VarChar(n, _) | Ty::VarBinary(n) => (0, 0, n.map_or(8000, u32::from)),
        Ty::NVarChar(n) => (0, 0, n.map_or(8000, |n| 2 * u32::from(n))),
        Ty::Guid => (0, 0, 16),
        Ty::Xml | Ty::Variant | Ty::Vector(_) | Ty::Json => (0, 0, 8016),
    };
    let base = ty.name();
    let base = base.split('(').next().unwrap_or(&base);
    let text = matches!(
        ty,
        Ty::Char(..) | Ty::VarChar(..) | Ty::NChar(_) | Ty::NVarChar(_)
    );
    match prop.to_ascii_lowercase().as_str() {
        "basetype" => format!("'{base}'"),
        "precision" => precision.to_string(),
        "scale" => scale.to_string(),
        "maxlength" => max_len.to_string(),
        // The value's bytes plus its variant header (2 bytes, 7 more for strings' collation).
        "totalbytes" => {
            let data = len.map_or(max_len as usize, |l| {
                if matches!(ty, Ty::NChar(_) | Ty::NVarChar(_)) {
                    2 * l
                } else {
                    l
                }
            });
            (data + 2 + if text { 7 } else { 0 }).to_string()
        }
        "collation" if text => "'SQL_Latin1_General_CP1_CI_AS'".into(),
        _ => "NULL".into(),
    }
}

/// The base type of the first argument when it is known from its text, with a literal's
/// length; `item_type` is the rewriter's type of an expression.
pub fn static_base(
    arg: &[Tok],
    item_type: impl Fn(&[Tok]) -> Option<Ty>,
) -> Option<(Ty, Option<usize>)> {
    let sg = sig(arg);
    // CAST(x AS sql_variant) / CONVERT(sql_variant, x): the type of x.
    let inner: Vec<Tok> = match sg.as_slice() {
        [f, open, .., close] if f.is_word("CAST") && open.is_punct('(') && close.is_punct(')') => {
            let body: Vec<Tok> = sg[2..sg.len() - 1].iter().map(|t| (*t).clone()).collect();
            let asp = body.iter().rposition(|t| t.is_word("AS"))?;
            if !body.get(asp + 1).is_some_and(|t| t.is_word("SQL_VARIANT")) {
                return item_type(arg)
                    .filter(|t| *t != Ty::Variant)
                    .map(|t| (t, None));
            }
            body[..asp].to_vec()
        }
        [f, open, ty, comma, ..]
            if f.is_word("CONVERT")
                && open.is_punct('(')
                && ty.is_word("SQL_VARIANT")
                && comma.is_punct(',') =>
        {
            sg[4..sg.len() - 1].iter().map(|t| (*t).clone()).collect()
        }
        _ => arg.to_vec(),
    };
    let isg = sig(&inner);
    match isg.as_slice() {
        [Tok::Str { n, s }] => {
            let l = s.chars().count().max(1);
            let len = u16::try_from(l).ok();
            Some((
                if *n {
                    Ty::NVarChar(len)
                } else {
                    Ty::VarChar(len, false)
                },
                Some(l),
            ))
        }
        [Tok::Num(n)] | [Tok::Punct('-'), Tok::Num(n)] => {
            if let Some((int, frac)) = n.split_once('.') {
                let s = frac.len() as u8;
                let p = ((int.trim_start_matches('0').len() + frac.len()).max(1) as u8).max(s);
                Some((Ty::Numeric(p, s), None))
            } else if n.contains(['e', 'E']) {
                Some((Ty::Float, None))
            } else if n.parse::<i64>().is_ok_and(|v| i32::try_from(v).is_ok()) {
                Some((Ty::Int, None))
            } else {
                let p = n.trim_start_matches('0').len().max(1) as u8;
                Some((Ty::Numeric(p, 0), None))
            }
        }
        _ => item_type(&inner)
            .filter(|t| *t != Ty::Variant)
            .map(|t| (t, None)),
    }
}

/// The property decided from the value at run time (`e` is the rewritten expression).
pub fn runtime(e: &str, prop: &str) -> String {
    let pick = |ty: Ty| property(ty, prop, None);
    format!(
        "CASE typeof({e}) WHEN 'null' THEN NULL WHEN 'integer' THEN CASE WHEN ({e}) BETWEEN -2147483648 AND 2147483647 THEN {} ELSE {} END WHEN 'real' THEN {} WHEN 'text' THEN {} ELSE {} END",
        pick(Ty::Int),
        pick(Ty::BigInt),
        pick(Ty::Float),
        pick(Ty::NVarChar(Some(4000))),
        pick(Ty::VarBinary(Some(8000))),
    )
}
