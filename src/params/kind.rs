//! The kinds a parameter column can be bound as: one per value type (a value's kind is
//! [`Value::kind`](super::Value::kind)), the common kind of a column's values, and the form a
//! driver can carry them in.

use super::ParamValue;
use crate::backend::{Backend, Driver};
use crate::types::temporal::Date;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Null,
    Bool,
    Int,
    Float,
    Text,
    Bytes,
    Decimal,
    Date,
    Time,
    Timestamp,
    TimestampOffset,
    Guid,
    Output,
    Table,
    /// Dates and timestamps sent as ISO text for the server to convert (see
    /// `freetds_misencodes`); chosen per column after `unify`, never by it.
    DateText,
    TimestampText,
    /// Times with a digit below the microsecond, sent through FreeTDS as text with seven
    /// fraction digits (its TYPE_TIME keeps six); chosen per column like `DateText`.
    TimeText,
    /// A float32 vector: native (`SQL_SS_VECTOR`), or its JSON text where the connection did
    /// not ask for native vectors (chosen per column like `DateText`).
    Vector,
    VectorText,
}

/// A parameter's kind: its value's ([`Value::kind`](super::Value::kind)), or the output or
/// table-valued parameter it is.
pub(super) fn kind_of(v: &ParamValue) -> Kind {
    match (v.as_value(), v) {
        (Some(value), _) => value.kind(),
        (None, ParamValue::Output(_)) => Kind::Output,
        (None, _) => Kind::Table,
    }
}

/// The common kind of two values of one parameter column, if one binding can carry both.
pub(super) fn unify(a: Kind, b: Kind) -> Option<Kind> {
    use Kind::*;
    match (a, b) {
        (Output | Table, _) | (_, Output | Table) => None,
        (x, y) if x == y => Some(x),
        (Null, x) | (x, Null) => Some(x),
        (Bool, Int) | (Int, Bool) => Some(Int),
        (Bool | Int, Float) | (Float, Bool | Int) => Some(Float),
        (Int, Decimal) | (Decimal, Int) => Some(Decimal),
        _ => None,
    }
}

/// FreeTDS 1.3.17 puts the wrong day number on the wire for DATE and DATETIME2 parameters before
/// 1600-03-01, whether bound from `SQL_C_TYPE_DATE`/`_TIMESTAMP` (0001-01-01 goes out as day -1,
/// i.e. 0xFFFFFF, which reads back as 9999-12-31 or beyond; 0001-03-01 as 0001-02-28;
/// 1000-01-01 as 0999-12-31; 1582-10-15 as 1582-10-16: 382,066 of the 584,082 days before
/// 1600-03-01 were wrong in a sweep, every day from 1600-03-01 to 9999-12-31 exact) or from text
/// (its own parser reads '0001-01-01' as 2001-01-01 and '1000-01-01' as 1900-01-01). Driver 18 is
/// exact, and FreeTDS decodes such dates from the server exactly. So through FreeTDS a date or
/// timestamp column holding such a value is sent as nvarchar ISO text, which the server converts.
pub(super) fn freetds_misencodes(d: Date) -> bool {
    (d.year, d.month) < (1600, 3)
}

/// The form a date or timestamp column is sent in: native, or text where the driver would
/// corrupt the native form.
pub(super) fn carried_kind<'a>(
    kind: Kind,
    values: impl IntoIterator<Item = &'a ParamValue>,
    backend: Backend,
) -> Kind {
    if kind == Kind::Vector && !backend.vectors {
        return Kind::VectorText;
    }
    if backend.driver != Driver::FreeTds
        || !matches!(kind, Kind::Date | Kind::Timestamp | Kind::Time)
    {
        return kind;
    }
    if kind == Kind::Time {
        // Python times have microseconds; an Arrow ns time (bulk copy as parameter arrays)
        // can have the 100-ns digit of a time(7). Only then is the column sent as text (the
        // server's answer to `SELECT ?` is then nvarchar, not time).
        let sub_micro = values
            .into_iter()
            .any(|v| matches!(v, ParamValue::Time(t) if t.nanosecond % 1000 != 0));
        return if sub_micro { Kind::TimeText } else { kind };
    }
    let early = values.into_iter().any(|v| match v {
        ParamValue::Date(d) => freetds_misencodes(*d),
        ParamValue::Timestamp(ts) => freetds_misencodes(ts.date),
        _ => false,
    });
    match kind {
        Kind::Date if early => Kind::DateText,
        Kind::Timestamp if early => Kind::TimestampText,
        k => k,
    }
}
