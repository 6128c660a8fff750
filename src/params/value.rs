//! The write side's one list of value types: [`Value`], a borrowed view of one value, whatever
//! its origin. A parameter ([`ParamValue`], which owns its text and bytes) is viewed as one by
//! [`ParamValue::as_value`]; the Arrow feed of a bulk load (`bulk/arrow.rs`) makes one per
//! element without allocating. Every writer takes it: a bulk load's cell
//! (`bulk::encode::CellSink`), a parameter value ([`Value::to_param`]); and a parameter column's
//! [`Kind`] is the kind of its values' views ([`Value::kind`]).
//!
//! A new value type is a variant here, its arm in `as_value`, `kind` and `to_param`, and the
//! writers' arms (`bulk/encode.rs`); the loops that feed it need nothing.

use super::ParamValue;
use super::kind::Kind;
use crate::types::decimal::text::precision_scale;
use crate::types::temporal::{Date, Time, Timestamp, TimestampOffset};

/// One value to write, borrowed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// Plain decimal digits (`-12.3400`, no exponent).
    Decimal(&'a str),
    Date(Date),
    Time(Time),
    Timestamp(Timestamp),
    TimestampOffset(TimestampOffset),
    /// UTF-16 code units (a parameter's text: a Python `str`).
    Text(&'a [u16]),
    /// UTF-8 text (an Arrow string).
    Utf8(&'a str),
    Bytes(&'a [u8]),
    Guid(u128),
    /// A float32 vector (finite elements, 1 to 1998 of them; `types/vector`).
    Vector(&'a [f32]),
}

impl Value<'_> {
    /// The parameter kind of this value (text of either encoding is `Text`).
    #[inline]
    pub fn kind(self) -> Kind {
        match self {
            Value::Null => Kind::Null,
            Value::Bool(_) => Kind::Bool,
            Value::Int(_) => Kind::Int,
            Value::Float(_) => Kind::Float,
            Value::Decimal(_) => Kind::Decimal,
            Value::Date(_) => Kind::Date,
            Value::Time(_) => Kind::Time,
            Value::Timestamp(_) => Kind::Timestamp,
            Value::TimestampOffset(_) => Kind::TimestampOffset,
            Value::Text(_) | Value::Utf8(_) => Kind::Text,
            Value::Bytes(_) => Kind::Bytes,
            Value::Guid(_) => Kind::Guid,
            Value::Vector(_) => Kind::Vector,
        }
    }

    /// The value as an owned parameter (a decimal sized by its digits, UTF-8 text as UTF-16).
    #[inline]
    pub fn to_param(self) -> ParamValue {
        match self {
            Value::Null => ParamValue::Null,
            Value::Bool(b) => ParamValue::Bool(b),
            Value::Int(i) => ParamValue::Int(i),
            Value::Float(f) => ParamValue::Float(f),
            Value::Decimal(text) => {
                let (precision, scale) = precision_scale(text);
                ParamValue::Decimal {
                    text: text.to_owned(),
                    precision,
                    scale,
                }
            }
            Value::Date(d) => ParamValue::Date(d),
            Value::Time(t) => ParamValue::Time(t),
            Value::Timestamp(ts) => ParamValue::Timestamp(ts),
            Value::TimestampOffset(o) => ParamValue::TimestampOffset(o),
            Value::Text(u) => ParamValue::Text(u.to_vec()),
            Value::Utf8(s) => ParamValue::Text(s.encode_utf16().collect()),
            Value::Bytes(b) => ParamValue::Bytes(b.to_vec()),
            Value::Guid(g) => ParamValue::Guid(g),
            Value::Vector(v) => ParamValue::Vector(v.to_vec()),
        }
    }
}

impl ParamValue {
    /// The value's view; `None` for an output or table-valued parameter, which is no value of
    /// a column.
    #[inline]
    pub fn as_value(&self) -> Option<Value<'_>> {
        Some(match self {
            ParamValue::Null => Value::Null,
            ParamValue::Bool(b) => Value::Bool(*b),
            ParamValue::Int(i) => Value::Int(*i),
            ParamValue::Float(f) => Value::Float(*f),
            ParamValue::Decimal { text, .. } => Value::Decimal(text),
            ParamValue::Date(d) => Value::Date(*d),
            ParamValue::Time(t) => Value::Time(*t),
            ParamValue::Timestamp(ts) => Value::Timestamp(*ts),
            ParamValue::TimestampOffset(o) => Value::TimestampOffset(*o),
            ParamValue::Text(u) => Value::Text(u),
            ParamValue::Bytes(b) => Value::Bytes(b),
            ParamValue::Guid(g) => Value::Guid(*g),
            ParamValue::Vector(v) => Value::Vector(v),
            ParamValue::Output(_) | ParamValue::Table(_) => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_owned_again_is_the_same_parameter() {
        let values = [
            ParamValue::Null,
            ParamValue::Bool(true),
            ParamValue::Int(-3),
            ParamValue::Float(0.5),
            ParamValue::Text("é".encode_utf16().collect()),
            ParamValue::Bytes(vec![1, 2]),
            ParamValue::Guid(7),
            ParamValue::Vector(vec![1.0, -0.0]),
            ParamValue::Decimal {
                text: "-0012.340".into(),
                precision: 5,
                scale: 3,
            },
        ];
        for v in values {
            assert_eq!(v.as_value().unwrap().to_param(), v);
        }
        assert_eq!(
            Value::Utf8("é").to_param(),
            ParamValue::Text("é".encode_utf16().collect())
        );
        assert_eq!(Value::Utf8("x").kind(), Kind::Text);
    }
}
