//! MAX / MIN of decimal, numeric and money columns. Their values are stored as exact decimal
//! text (README "Types"), which SQLite's MAX/MIN compare as text: `'9.75' > '62.25'`. The
//! rewriter turns `MAX(col)` / `MIN(col)` of such a column into `__dec_max` / `__dec_min`
//! (rewrite.rs, with the column's type as the result column's), which compare the values as
//! exact decimals (all 38 digits, no float) and return the winning value as stored.

use crate::conv::{Dec, parse_decimal};
use crate::sql::lexer::{Tok, matching, next_sig, sig};
use crate::sql::rewrite::Ctx;
use crate::types::Ty;
use rusqlite::functions::{Aggregate, Context, FunctionFlags};
use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, Result};
use std::cmp::Ordering;

/// The exact value of a stored decimal (text, or a number SQLite kept as one); None for NULL,
/// text that is no number, and a scale past SQL Server's 38 (no decimal column stores one, and
/// `cmp_dec`'s powers of ten must stay within u128).
fn dec_of(v: ValueRef<'_>) -> Option<Dec> {
    let d = match v {
        ValueRef::Null => None,
        ValueRef::Integer(i) => Some(Dec::from_i64(i)),
        ValueRef::Real(f) => Some(Dec::from_f64(f)),
        ValueRef::Text(t) | ValueRef::Blob(t) => parse_decimal(std::str::from_utf8(t).ok()?),
    }?;
    (d.scale <= 38).then_some(d)
}

fn pow10(n: u8) -> u128 {
    10u128.pow(u32::from(n))
}

/// Compares two decimals exactly, whatever their scales (a common scale could overflow u128:
/// the integer parts are compared first, then the fractions at the larger scale, < 10^38).
pub fn cmp_dec(a: Dec, b: Dec) -> Ordering {
    let (an, bn) = (a.neg && a.mag != 0, b.neg && b.mag != 0);
    if an != bn {
        return if an {
            Ordering::Less
        } else {
            Ordering::Greater
        };
    }
    let (ai, af) = (a.mag / pow10(a.scale), a.mag % pow10(a.scale));
    let (bi, bf) = (b.mag / pow10(b.scale), b.mag % pow10(b.scale));
    let s = a.scale.max(b.scale);
    let abs = ai
        .cmp(&bi)
        .then((af * pow10(s - a.scale)).cmp(&(bf * pow10(s - b.scale))));
    if an { abs.reverse() } else { abs }
}

/// `__dec_max` (`want` Greater) or `__dec_min` (Less).
struct Pick {
    want: Ordering,
}

impl Aggregate<Option<(Dec, Value)>, Value> for Pick {
    fn init(&self, _: &mut Context<'_>) -> Result<Option<(Dec, Value)>> {
        Ok(None)
    }

    fn step(&self, ctx: &mut Context<'_>, best: &mut Option<(Dec, Value)>) -> Result<()> {
        let v = ctx.get_raw(0);
        let Some(d) = dec_of(v) else {
            return Ok(());
        };
        if best
            .as_ref()
            .is_none_or(|(b, _)| cmp_dec(d, *b) == self.want)
        {
            *best = Some((d, Value::from(v)));
        }
        Ok(())
    }

    fn finalize(&self, _: &mut Context<'_>, best: Option<Option<(Dec, Value)>>) -> Result<Value> {
        Ok(best.flatten().map_or(Value::Null, |(_, v)| v))
    }
}

impl Ctx<'_> {
    /// The type of the decimal/numeric/money column `MAX(` / `MIN(` at `open` (its `(`)
    /// aggregates, when its argument is one such column (`c`, `t.c`, `[t].[c]`) and it is no
    /// window function (`OVER`: SQLite's own MAX is kept there).
    pub(crate) fn dec_agg_column(&self, toks: &[Tok], open: usize) -> Option<Ty> {
        if self.dec_columns.is_empty() || !toks.get(open)?.is_punct('(') {
            return None;
        }
        let close = matching(toks, open)?;
        if next_sig(toks, close + 1).is_some_and(|j| toks[j].is_word("OVER")) {
            return None;
        }
        let arg = sig(&toks[open + 1..close]);
        let dotted = arg.iter().enumerate().all(|(k, t)| {
            if k % 2 == 1 {
                t.is_punct('.')
            } else {
                matches!(t, Tok::Word(_) | Tok::Quoted(_))
            }
        });
        let name = match arg.last()? {
            Tok::Word(w) | Tok::Quoted(w) if dotted && arg.len() % 2 == 1 => w,
            _ => return None,
        };
        self.dec_columns
            .iter()
            .find(|(c, _)| c.eq_ignore_ascii_case(name))
            .map(|(_, ty)| *ty)
    }
}

/// A type whose values are stored as exact decimal text.
pub fn is_decimal(ty: Ty) -> bool {
    matches!(
        ty,
        Ty::Decimal(..) | Ty::Numeric(..) | Ty::Money | Ty::SmallMoney
    )
}

/// Whether the statement calls MAX( or MIN( at all (else no schema look-up).
pub fn has_max_min(toks: &[Tok]) -> bool {
    let sg = sig(toks);
    sg.windows(2)
        .any(|w| (w[0].is_word("MAX") || w[0].is_word("MIN")) && w[1].is_punct('('))
}

pub fn register(db: &Connection) -> Result<()> {
    let det = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    db.create_aggregate_function(
        "__dec_max",
        1,
        det,
        Pick {
            want: Ordering::Greater,
        },
    )?;
    db.create_aggregate_function(
        "__dec_min",
        1,
        det,
        Pick {
            want: Ordering::Less,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Dec {
        parse_decimal(s).unwrap()
    }

    #[test]
    fn decimals_compare_by_value_not_text() {
        assert_eq!(cmp_dec(d("9.75"), d("62.25")), Ordering::Less);
        assert_eq!(cmp_dec(d("-100.5"), d("-9.75")), Ordering::Less);
        assert_eq!(cmp_dec(d("1"), d("1.00")), Ordering::Equal);
        assert_eq!(cmp_dec(d("-0.00"), d("0")), Ordering::Equal);
        assert_eq!(
            cmp_dec(d("0.1"), d("0.09999999999999999999999999999999999999")),
            Ordering::Greater
        );
        let big = "99999999999999999999999999999999999999";
        assert_eq!(
            cmp_dec(d(big), d("99999999999999999999999999999999999998")),
            Ordering::Greater
        );
        assert_eq!(
            cmp_dec(
                d("1234567890123456789012345678.0123456789"),
                d("1234567890123456789012345678.012345678")
            ),
            Ordering::Greater
        );
    }

    #[test]
    fn max_and_min_keep_the_stored_value() {
        let db = Connection::open_in_memory().unwrap();
        register(&db).unwrap();
        db.execute_batch(
            "CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('9.75'), ('62.25'), (NULL), ('-100.5'), \
             ('99999999999999999999999999999.999999999'), ('-99999999999999999999999999999.999999998')",
        )
        .unwrap();
        let (mx, mn): (String, String) = db
            .query_row("SELECT __dec_max(v), __dec_min(v) FROM t", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!(mx, "99999999999999999999999999999.999999999");
        assert_eq!(mn, "-99999999999999999999999999999.999999998");
        let none: Option<String> = db
            .query_row("SELECT __dec_max(v) FROM t WHERE v IS NULL", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(none, None);
    }
}
