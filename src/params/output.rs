//! Output and input/output parameters of procedure calls (`{CALL p(?, ?)}`).
//!
//! The buffer of an output parameter is sized for the value coming back, not for the value sent.
//! The driver writes it only once every result set of the call has been read (SQL Server sends
//! the RETURNVALUE tokens after the procedure's results; SQLMoreResults returning SQL_NO_DATA is
//! the point where Driver 18 and FreeTDS have stored them), so the statement keeps the binding
//! alive until then and decodes it here.

use super::array::cell_bytes;
use super::{Kind, ParamColumn, ParamValue, fixed_binding};
use crate::backend::Backend;
use crate::codes::sql;
use crate::error::{Error, Result};
use crate::odbc::sys::{CDataType, NULL_DATA, ParamType};
use crate::types::decimal::decimal_text;
use crate::types::decimal::text::digits_and_scale;
use crate::types::guid::{guid_to_u128, parse_guid};
use crate::types::temporal::{
    Date, Time, Timestamp, TimestampOffset, parse_offset_text, parse_time_text,
};

/// What an output parameter comes back as: the kind it is bound as, one of `Bool`, `Int`,
/// `Float`, `Text`, `Bytes`, `Decimal`, `Date`, `Time`, `Timestamp`, `TimestampOffset`, `Guid`
/// (the kinds of a parameter's values; `py/output.rs::output_type` makes only these).
pub type OutputType = Kind;

/// An output (or input/output) parameter: the type to receive, and the value to send.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputParam {
    pub ty: OutputType,
    /// Sent in; `Null` makes a pure output parameter.
    pub input: ParamValue,
    /// Characters (text) or bytes (binary) to make room for; `None`: 4000 / 8000.
    pub size: Option<usize>,
    /// Precision and scale of a decimal output (the declared `DECIMAL(p, s)`).
    pub precision: u32,
    pub scale: u32,
}

/// Default room: what SQL Server's non-MAX `nvarchar`/`varbinary` can hold.
const DEFAULT_TEXT_UNITS: usize = 4000;
const DEFAULT_BINARY_BYTES: usize = 8000;
/// `-` + 38 digits + `.` + terminating NUL, rounded up.
const DECIMAL_TEXT_BYTES: usize = 48;

/// The bound column of output parameter `index` (one row).
pub(super) fn encode(out: &OutputParam, index: usize, backend: Backend) -> Result<ParamColumn> {
    let kind = out.ty;
    let input_fits = match (&out.input, kind) {
        (ParamValue::Null, _) => true,
        (ParamValue::Output(_), _) => false,
        (v, k) => super::unify(super::kind_of(v), k) == Some(k),
    };
    if !input_fits {
        return Err(Error::Programming(format!(
            "parameter {index}: the input value of an output parameter of type {:?} must be of that type",
            out.ty
        )));
    }
    crate::types::vector::check_output(kind, out.size, backend.vectors, index)?;
    // An output parameter keeps its declared type, so the text form that carries early dates
    // through FreeTDS (see `carried_kind`) cannot stand in for its input value.
    if super::carried_kind(kind, [&out.input], backend) != kind {
        return Err(Error::Data(format!(
            "parameter {index}: FreeTDS sends dates before 1600-03-01 with the wrong day; an \
             input/output {:?} parameter cannot carry this value exactly through it (Driver 18 can)",
            out.ty
        )));
    }
    let (c_type, sql_type, column_size, digits, element_len) = match kind {
        Kind::Int => (CDataType::SBigInt, sql::BIGINT, 19, 0, 8),
        // `size` sizes the buffer only. The declared type stays nvarchar(4000) / varbinary(8000)
        // (or MAX): SQL Server converts the value to the caller's declared type, so declaring
        // the small size would have the server cut the value silently; with the wide type a
        // value too long for the buffer is seen (and refused) here instead.
        Kind::Text => {
            let units = out.size.unwrap_or(DEFAULT_TEXT_UNITS).max(1);
            let (sql_type, declared) = if units > DEFAULT_TEXT_UNITS {
                (sql::WLONGVARCHAR, units)
            } else {
                (sql::WVARCHAR, DEFAULT_TEXT_UNITS)
            };
            // Room for the terminating NUL the driver always writes.
            (CDataType::WChar, sql_type, declared, 0, (units + 1) * 2)
        }
        Kind::Bytes => {
            let bytes = out.size.unwrap_or(DEFAULT_BINARY_BYTES).max(1);
            let (sql_type, declared) = if bytes > DEFAULT_BINARY_BYTES {
                (sql::LONGVARBINARY, bytes)
            } else {
                (sql::VARBINARY, DEFAULT_BINARY_BYTES)
            };
            (CDataType::Binary, sql_type, declared, 0, bytes)
        }
        Kind::Decimal => {
            if !(1..=38).contains(&out.precision) || out.scale > out.precision {
                return Err(Error::Programming(format!(
                    "parameter {index}: a decimal output needs 1 <= precision <= 38 and scale <= precision (got {}, {})",
                    out.precision, out.scale
                )));
            }
            (
                CDataType::Char,
                sql::NUMERIC,
                out.precision as usize,
                i16::try_from(out.scale).unwrap_or(i16::MAX), // <= 38: checked above
                DECIMAL_TEXT_BYTES,
            )
        }
        Kind::Vector => crate::types::vector::output_binding(out.size.unwrap_or(0)),
        fixed => {
            let b = fixed_binding(fixed, backend).ok_or_else(|| {
                Error::Internal(format!("no fixed binding for output kind {fixed:?}"))
            })?;
            (b.c_type, b.sql_type, b.column_size, b.digits, b.element_len)
        }
    };
    let mut col = ParamColumn {
        direction: if out.input == ParamValue::Null {
            ParamType::Output
        } else {
            ParamType::InputOutput
        },
        output: Some(out.ty),
        c_type,
        sql_type,
        column_size,
        decimal_digits: digits,
        element_len,
        data: vec![0u64; element_len.div_ceil(8)],
        indicators: vec![NULL_DATA],
        table: None,
    };
    let bytes = cell_bytes(&out.input, kind, backend).map_err(|m| {
        Error::Internal(format!(
            "parameter {index}: the input did not fit its kind ({m:?})"
        ))
    })?;
    if let Some(bytes) = bytes {
        if bytes.len() > element_len {
            return Err(Error::Programming(format!(
                "parameter {index}: the input value ({} bytes) is larger than the output room ({element_len} bytes); pass a larger size",
                bytes.len()
            )));
        }
        col.data_bytes_mut()[..bytes.len()].copy_from_slice(&bytes);
        col.indicators[0] = crate::checked::alloc_len(bytes.len());
    }
    if kind == Kind::Vector {
        crate::types::vector::array_layout(col.data_bytes_mut(), element_len, 1);
    }
    Ok(col)
}

/// The value the driver stored in output column `col` (parameter `index`).
pub(super) fn decode(col: &ParamColumn, index: usize) -> Result<ParamValue> {
    let Some(ty) = col.output else {
        return Err(Error::Internal(format!(
            "parameter {index} is not an output"
        )));
    };
    let ind = col.indicators[0];
    if ind == NULL_DATA {
        return Ok(ParamValue::Null);
    }
    let bytes = col.data_bytes();
    let bad = |what: &str| Error::Data(format!("output parameter {index}: {what}"));
    // Variable-length values: the indicator is the full length, which may exceed the room
    // (SQL_NO_TOTAL when the driver does not know it). Never hand out a cut value.
    let var_len = |terminator: usize| -> Result<usize> {
        let room = col.element_len - terminator;
        match usize::try_from(ind) {
            Ok(n) if n <= room => Ok(n),
            _ => Err(bad(&format!(
                "the value ({}) does not fit the {room} bytes reserved; pass a larger size",
                if ind == crate::odbc::sys::NO_TOTAL {
                    "of unknown length".to_string()
                } else if ind < 0 {
                    // Neither NULL nor NO_TOTAL: a broken driver; name what it said.
                    format!("of impossible length {ind}")
                } else {
                    format!("{ind} bytes")
                }
            ))),
        }
    };
    let units = |n: usize| -> Vec<u16> {
        bytes[..n]
            .chunks_exact(2)
            .map(|c| u16::from_ne_bytes([c[0], c[1]]))
            .collect()
    };
    let arr = |n: usize| &bytes[..n];
    Ok(match ty {
        OutputType::Bool => ParamValue::Bool(bytes[0] != 0),
        OutputType::Int => ParamValue::Int(i64::from_ne_bytes(arr(8).try_into().unwrap())),
        OutputType::Float => ParamValue::Float(f64::from_ne_bytes(arr(8).try_into().unwrap())),
        OutputType::Text => ParamValue::Text(units(var_len(2)?)),
        OutputType::Bytes => ParamValue::Bytes(bytes[..var_len(0)?].to_vec()),
        OutputType::Decimal => {
            let n = var_len(1)?;
            let text = decimal_text(&bytes[..n])
                .ok_or_else(|| bad("the driver returned a decimal that is not plain decimal text"))?
                .to_string();
            let (digits, scale) = digits_and_scale(&text);
            ParamValue::Decimal {
                scale,
                precision: digits.max(1),
                text,
            }
        }
        OutputType::Date => ParamValue::Date(Date::from_ne_bytes(arr(6).try_into().unwrap())),
        OutputType::Time if col.c_type == CDataType::SsTime2 => {
            ParamValue::Time(Time::from_ss_time2(arr(12).try_into().unwrap()))
        }
        OutputType::Time => ParamValue::Time(
            parse_time_text(&units(var_len(2)?)).ok_or_else(|| bad("unreadable TIME text"))?,
        ),
        OutputType::Timestamp => {
            ParamValue::Timestamp(Timestamp::from_ne_bytes(arr(16).try_into().unwrap()))
        }
        OutputType::TimestampOffset if col.c_type == CDataType::SsTimestampOffset => {
            ParamValue::TimestampOffset(TimestampOffset::from_ne_bytes(arr(20).try_into().unwrap()))
        }
        OutputType::TimestampOffset => ParamValue::TimestampOffset(
            parse_offset_text(&units(var_len(2)?))
                .ok_or_else(|| bad("unreadable DATETIMEOFFSET text"))?,
        ),
        OutputType::Guid if col.c_type == CDataType::Guid => {
            ParamValue::Guid(guid_to_u128(arr(16).try_into().unwrap()))
        }
        OutputType::Vector => ParamValue::Vector(
            crate::types::vector::output_value(&bytes[..var_len(0)?]).map_err(|why| bad(&why))?,
        ),
        OutputType::Guid => {
            let text = String::from_utf16(&units(var_len(2)?)).map_err(|_| bad("bad GUID text"))?;
            ParamValue::Guid(parse_guid(&text).ok_or_else(|| bad("bad GUID text"))?)
        }
        other => {
            return Err(Error::Internal(format!(
                "parameter {index}: {other:?} is no output parameter's type"
            )));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Dbms;

    fn out(ty: OutputType, input: ParamValue, size: Option<usize>) -> OutputParam {
        OutputParam {
            ty,
            input,
            size,
            precision: 38,
            scale: 4,
        }
    }

    #[test]
    fn text_output_has_room_for_size_plus_terminator() {
        let col = encode(
            &out(OutputType::Text, ParamValue::Null, Some(10)),
            0,
            Dbms::SqlServer.into(),
        )
        .unwrap();
        assert_eq!(col.element_len, 22);
        assert_eq!(col.direction, ParamType::Output);
        assert_eq!(col.indicators, vec![NULL_DATA]);
    }

    #[test]
    fn input_output_sends_its_value_and_reads_back() {
        let mut col = encode(
            &out(OutputType::Int, ParamValue::Int(7), None),
            1,
            Dbms::SqlServer.into(),
        )
        .unwrap();
        assert_eq!(col.direction, ParamType::InputOutput);
        assert_eq!(decode(&col, 1).unwrap(), ParamValue::Int(7));
        col.indicators[0] = NULL_DATA;
        assert_eq!(decode(&col, 1).unwrap(), ParamValue::Null);
    }

    #[test]
    fn truncated_text_is_an_error_not_a_cut_value() {
        let mut col = encode(
            &out(OutputType::Text, ParamValue::Null, Some(2)),
            0,
            Dbms::SqlServer.into(),
        )
        .unwrap();
        col.indicators[0] = 10; // the driver had 5 characters for a 2-character buffer
        assert!(matches!(decode(&col, 0), Err(Error::Data(_))));
    }

    #[test]
    fn hostile_output_indicators_are_data_errors_naming_them() {
        for ty in [OutputType::Text, OutputType::Bytes, OutputType::Decimal] {
            let mut col = encode(
                &out(ty, ParamValue::Null, Some(4)),
                0,
                Dbms::SqlServer.into(),
            )
            .unwrap();
            for ind in [-2isize, -5, isize::MIN, 1 << 40, isize::MAX] {
                col.indicators[0] = ind;
                let e = decode(&col, 0).unwrap_err();
                assert!(matches!(e, Error::Data(_)), "{e}");
                assert!(e.to_string().contains(&ind.to_string()), "{e}");
            }
            col.indicators[0] = crate::odbc::sys::NO_TOTAL;
            let e = decode(&col, 0).unwrap_err();
            assert!(e.to_string().contains("unknown length"), "{e}");
        }
    }

    #[test]
    fn mismatched_input_is_a_programming_error() {
        let e = encode(
            &out(OutputType::Int, ParamValue::Text(vec![b'x' as u16]), None),
            0,
            Dbms::SqlServer.into(),
        );
        assert!(matches!(e, Err(Error::Programming(_))));
    }

    #[test]
    fn decimal_output_reads_plain_text() {
        let mut col = encode(
            &out(OutputType::Decimal, ParamValue::Null, None),
            0,
            Dbms::SqlServer.into(),
        )
        .unwrap();
        let text = b"-12.3400";
        col.data_bytes_mut()[..text.len()].copy_from_slice(text);
        col.indicators[0] = crate::checked::alloc_len(text.len());
        assert_eq!(
            decode(&col, 0).unwrap(),
            ParamValue::Decimal {
                text: "-12.3400".into(),
                precision: 6,
                scale: 4
            }
        );
    }
}
