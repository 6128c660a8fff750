//! One [`Value`] into one cell of a bulk-load column, in the column's [`Form`] ([`CellSink`]),
//! or into a parameter value ([`ParamSink`], the parameter-array path). The values come from
//! Python (a [`ParamValue`], the parameters' one conversion from Python, viewed by
//! [`ParamValue::as_value`]) or from Arrow (`arrow.rs`).
//!
//! The Python values of a column may be of any type, so [`CellSink`] is one `match` per value on
//! the value and the form together; the conversions and SQL Server's rules are the families'
//! (`types/temporal/bulk.rs` for a whole temporal column, `fit_decimal`, `parse_guid`). An
//! `Err` is the reason a value cannot go into the column; the caller adds column and row.

use super::cells::CellColumn;
use super::form::{Form, Temporal};
use crate::params::{ParamValue, Value};
use crate::types::decimal::fit_decimal;
use crate::types::decimal::text::whole_part;
use crate::types::guid::{parse_guid, u128_to_guid};
use crate::types::int::{in_range, overflow};
use crate::types::temporal::bulk::Cell;

/// Where source values go, whatever their origin (a Python object's [`ParamValue`], an Arrow
/// array's element): one value into one column. The value types are [`Value`]'s, listed once;
/// a sink's `put` is one `match` on it, inlined into each source loop, where the variant is
/// known, so no value pays for it.
pub trait Sink {
    fn put(&mut self, v: Value<'_>) -> Put;
}

/// `Err`: why the value cannot go into the column (the caller adds column and row).
pub type Put = Result<(), String>;

/// One [`ParamValue`] into `sink`.
#[inline]
pub fn put_param(v: &ParamValue, sink: &mut impl Sink) -> Put {
    match v.as_value() {
        Some(v) => sink.put(v),
        None => Err("an output or table-valued parameter is no column value".into()),
    }
}

/// Whether `v` suits a column of `form` (the parameter-array paths' check, with the form's
/// limits left to the DBMS: `form.without_limits()`), encoding it into `scratch`, which is
/// cleared first.
pub fn check_param(v: &ParamValue, form: Form, scratch: &mut CellColumn) -> Put {
    if let (ParamValue::Vector(v), Form::Vector { dims }) = (v, form) {
        // Bound as it is: only its dimension count to check (its elements were checked when
        // it became a value).
        return crate::types::vector::bulk::check_dims(v.len(), dims);
    }
    scratch.clear();
    put_param(v, &mut CellSink { form, out: scratch })
}

/// A sink that encodes into a bcp cell column in the column's form.
pub struct CellSink<'a> {
    pub form: Form,
    pub out: &'a mut CellColumn,
}

impl CellSink<'_> {
    fn wrong(&self, what: &str) -> Put {
        Err(wrong(what, self.form))
    }

    fn checked_int(&mut self, i: i64) -> Put {
        match self.form {
            Form::Int { min, max, name } => {
                let i = in_range(i, min, max, name)?;
                self.out.push(&i.to_ne_bytes());
                Ok(())
            }
            _ => unreachable!("checked_int is called for integer forms"),
        }
    }

    /// A temporal value (`what`, for the message) into a temporal column, as its family says.
    fn temporal(&mut self, what: &str, cell: impl FnOnce(Temporal) -> Cell) -> Put {
        match self.form {
            Form::Temporal(t) => match cell(t) {
                Some(text) => self.rendered(text?.as_str()),
                None => self.wrong(what),
            },
            _ => self.wrong(what),
        }
    }

    fn rendered(&mut self, text: &str) -> Put {
        self.out.push(text.as_bytes());
        Ok(())
    }

    fn wide(&mut self, units: impl Iterator<Item = u16> + Clone, count: usize) -> Put {
        let utf8 = match self.form {
            Form::Text { max_units, utf8 } => {
                if let Some(m) = max_units.filter(|&m| count > m) {
                    return Err(too_long(count, m, "characters"));
                }
                utf8
            }
            _ => false,
        };
        let start = self.out.open();
        if utf8 {
            let mut buf = [0u8; 4];
            for c in char::decode_utf16(units) {
                let c = c.unwrap_or(char::REPLACEMENT_CHARACTER);
                self.out.extend(c.encode_utf8(&mut buf).as_bytes());
            }
        } else {
            self.out.extend_utf16(units);
        }
        self.out.close(start);
        Ok(())
    }
}

impl Sink for CellSink<'_> {
    #[inline(always)]
    fn put(&mut self, v: Value<'_>) -> Put {
        match v {
            Value::Null => {
                self.out.push_null();
                Ok(())
            }
            Value::Bool(b) => self.boolean(b),
            Value::Int(i) => self.int(i),
            Value::Float(f) => self.float(f),
            Value::Decimal(text) => self.decimal(text),
            Value::Date(d) => self.temporal("date", |t| t.date(d)),
            Value::Time(t) => self.temporal("time", |c| c.time(t)),
            Value::Timestamp(ts) => self.temporal("datetime", |t| t.timestamp(ts)),
            Value::TimestampOffset(o) => self.temporal("datetime with tzinfo", |t| t.offset(o)),
            Value::Text(u) => self.utf16(u),
            Value::Utf8(s) => self.text(s),
            Value::Bytes(b) => self.bytes(b),
            Value::Guid(g) => self.guid(g),
            Value::Vector(v) => self.vector(v),
        }
    }
}

/// Each value type into the column's form: SQL Server's conversions between them, the
/// families' rules for each.
impl CellSink<'_> {
    fn boolean(&mut self, b: bool) -> Put {
        match self.form {
            Form::Bit => {
                self.out.push(&[u8::from(b)]);
                Ok(())
            }
            Form::Int { .. } => self.checked_int(i64::from(b)),
            Form::Float => self.float(f64::from(u8::from(b))),
            Form::Decimal { .. } | Form::Text { .. } => self.decimal(if b { "1" } else { "0" }),
            _ => self.wrong("bool"),
        }
    }

    fn int(&mut self, i: i64) -> Put {
        match self.form {
            Form::Bit if i == 0 || i == 1 => self.boolean(i == 1),
            Form::Int { .. } => self.checked_int(i),
            Form::Float => self.float(i as f64),
            Form::Decimal { .. } | Form::Text { .. } => self.decimal(&i.to_string()),
            _ => self.wrong("int"),
        }
    }

    fn float(&mut self, f: f64) -> Put {
        if !f.is_finite() {
            return Err(format!(
                "{f} cannot be stored (SQL Server has no NaN or infinity)"
            ));
        }
        match self.form {
            Form::Float => {
                self.out.push(&f.to_ne_bytes());
                Ok(())
            }
            Form::Decimal { .. } | Form::Text { .. } => self.decimal(&format!("{f}")),
            _ => self.wrong("float"),
        }
    }

    fn decimal(&mut self, text: &str) -> Put {
        match self.form {
            Form::Decimal { precision, scale } => {
                let fitted = fit_decimal(text, precision, scale)?;
                self.rendered(&fitted)
            }
            Form::Int { name, .. } => {
                // Decimal("12.0") is a whole number; Decimal("12.5") is refused, not cut.
                let Some(whole) = whole_part(text) else {
                    return Err(format!(
                        "{text} has a fraction; a {name} column holds whole numbers"
                    ));
                };
                let i = whole.parse::<i64>().map_err(|_| overflow(text, name))?;
                self.checked_int(i)
            }
            Form::Float => self.float(
                text.parse::<f64>()
                    .map_err(|_| wrong("Decimal", self.form))?,
            ),
            Form::Text { .. } => self.wide(text.encode_utf16(), text.encode_utf16().count()),
            _ => self.wrong("Decimal"),
        }
    }

    fn text(&mut self, s: &str) -> Put {
        match self.form {
            // A vector's JSON text: the server converts it (parameter arrays).
            Form::Text { .. } | Form::Vector { .. } => {
                self.wide(s.encode_utf16(), s.encode_utf16().count())
            }
            Form::Decimal { .. } => self.decimal(s.trim()),
            Form::Int { name, .. } => {
                let i = s
                    .trim()
                    .parse::<i64>()
                    .map_err(|_| format!("{s:?} is not an integer ({name})"))?;
                self.checked_int(i)
            }
            Form::Float => self.float(
                s.trim()
                    .parse::<f64>()
                    .map_err(|_| format!("{s:?} is not a number"))?,
            ),
            Form::Bit => match s.trim() {
                "1" => self.boolean(true),
                "0" => self.boolean(false),
                t if t.eq_ignore_ascii_case("true") => self.boolean(true),
                t if t.eq_ignore_ascii_case("false") => self.boolean(false),
                _ => self.wrong("str"),
            },
            // ISO text: the driver converts it as SQL Server converts text.
            Form::Temporal(_) => self.rendered(s.trim()),
            Form::Guid => {
                self.guid(parse_guid(s).ok_or_else(|| format!("{s:?} is not a uniqueidentifier"))?)
            }
            Form::Binary { .. } => self.wrong("str"),
        }
    }

    fn utf16(&mut self, u: &[u16]) -> Put {
        match self.form {
            Form::Text { .. } => self.wide(u.iter().copied(), u.len()),
            _ => match String::from_utf16(u) {
                Ok(s) => self.text(&s),
                Err(_) => Err("the string is not valid UTF-16".into()),
            },
        }
    }

    fn bytes(&mut self, b: &[u8]) -> Put {
        match self.form {
            Form::Binary { max_bytes } => {
                if let Some(m) = max_bytes.filter(|&m| b.len() > m) {
                    return Err(too_long(b.len(), m, "bytes"));
                }
                self.out.push(b);
                Ok(())
            }
            // 16 raw bytes in RFC 4122 order (Arrow's uuid extension, `uuid.UUID.bytes`).
            Form::Guid if b.len() == 16 => {
                let g = u128::from_be_bytes(b.try_into().expect("16 bytes"));
                self.guid(g)
            }
            _ => self.wrong("bytes"),
        }
    }

    fn guid(&mut self, g: u128) -> Put {
        match self.form {
            Form::Guid => {
                self.out.push(&u128_to_guid(g));
                Ok(())
            }
            Form::Text { .. } => {
                let t = crate::types::guid::guid_text(g);
                self.wide(t.iter().map(|&b| u16::from(b)), 36)
            }
            _ => self.wrong("UUID"),
        }
    }

    fn vector(&mut self, v: &[f32]) -> Put {
        match self.form {
            Form::Vector { dims } => {
                crate::types::vector::bulk::check_dims(v.len(), dims)?;
                let start = self.out.open();
                for f in v {
                    self.out.extend(&f.to_le_bytes());
                }
                self.out.close(start);
                Ok(())
            }
            _ => self.text(&crate::types::vector::json_text(v)),
        }
    }
}

/// A sink pushing [`ParamValue`]s: the parameter-array path's column of values.
pub struct ParamSink<'a> {
    pub out: &'a mut Vec<ParamValue>,
}

impl Sink for ParamSink<'_> {
    #[inline(always)]
    fn put(&mut self, v: Value<'_>) -> Put {
        self.out.push(v.to_param());
        Ok(())
    }
}

fn wrong(what: &str, form: Form) -> String {
    format!(
        "a {what} value cannot be converted to the column's type ({})",
        form_name(form)
    )
}

pub fn form_name(form: Form) -> String {
    match form {
        Form::Bit => "bit".into(),
        Form::Int { name, .. } => name.into(),
        Form::Float => "float".into(),
        Form::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
        Form::Temporal(t) => t.name(),
        Form::Text {
            max_units: Some(n), ..
        } => format!("text of at most {n} characters"),
        Form::Text {
            max_units: None, ..
        } => "text".into(),
        Form::Binary { max_bytes: Some(n) } => format!("binary of at most {n} bytes"),
        Form::Binary { max_bytes: None } => "binary".into(),
        Form::Guid => "uniqueidentifier".into(),
        Form::Vector { dims } => format!("vector({dims})"),
    }
}

fn too_long(len: usize, max: usize, unit: &str) -> String {
    format!("a value of {len} {unit} is longer than the column's {max} (it would be truncated)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_are_range_checked_per_width() {
        let form = Form::Int {
            min: 0,
            max: 255,
            name: "tinyint",
        };
        let mut c = CellColumn::default();
        let mut sink = CellSink { form, out: &mut c };
        assert!(put_param(&ParamValue::Int(255), &mut sink).is_ok());
        let e = put_param(&ParamValue::Int(256), &mut sink).unwrap_err();
        assert!(e.contains("tinyint"), "{e}");
        assert_eq!(c.rows(), 1);
    }

    #[test]
    fn text_longer_than_the_column_leaves_no_cell() {
        let form = Form::Text {
            max_units: Some(3),
            utf8: false,
        };
        let mut c = CellColumn::default();
        let long = ParamValue::Text("abcd".encode_utf16().collect());
        assert!(put_param(&long, &mut CellSink { form, out: &mut c }).is_err());
        assert_eq!(c.rows(), 0);
        let ok = ParamValue::Text("abc".encode_utf16().collect());
        put_param(&ok, &mut CellSink { form, out: &mut c }).unwrap();
        assert_eq!(c.value(0).unwrap().len(), 6);
    }
}
