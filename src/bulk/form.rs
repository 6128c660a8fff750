//! The form a bulk load sends one destination column in, decided once per load from the
//! column's SQL type: the bcp program type the driver reads, and what the family's encoder
//! checks (range, length, precision). The SQL type picks the family as it does for a fetch
//! (`types::Family::of`); the family picks the form (its `bulk_form`). The hot loop only calls
//! the chosen family's encoder.

use crate::error::{Error, Result};
use crate::odbc::ColumnDescription;
use crate::types::{self, Family};

/// bcp program types (msodbcsql.h / FreeTDS odbcss.h) of the forms below.
pub mod bcp_type {
    pub const BIT: u8 = 0x32;
    pub const INT8: u8 = 0x7F;
    pub const FLT8: u8 = 0x3E;
    /// 8-bit text the driver converts (digits of a decimal, ISO dates and times).
    pub const CHARACTER: u8 = 0x2F;
    /// UTF-16 text.
    pub const NCHAR: u8 = 0xE7;
    pub const BINARY: u8 = 0xA5;
    pub const UNIQUEID: u8 = 0x24;
}

pub use crate::types::temporal::bulk::Temporal;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Bit,
    /// Any integer width, sent as a 64-bit integer after a range check against the column's.
    Int {
        min: i64,
        max: i64,
        name: &'static str,
    },
    /// `real` or `float`, sent as a double (the driver narrows a `real`).
    Float,
    /// `decimal`/`numeric`/`money`, sent as plain digits the driver converts exactly.
    Decimal {
        precision: u8,
        scale: u8,
    },
    Temporal(Temporal),
    /// Every text type, sent as UTF-16 (the driver converts to a `varchar` column's code page),
    /// or as UTF-8 where `utf8` (FreeTDS: it reads a bcp NVARCHAR program value as text of the
    /// client charset, so UTF-16 arrived with a NUL after every character); `max_units`
    /// (UTF-16 code units, as SQL Server counts) is `None` for (MAX), `text`, `ntext`, `xml`.
    Text {
        max_units: Option<usize>,
        utf8: bool,
    },
    Binary {
        max_bytes: Option<usize>,
    },
    Guid,
    /// A `VECTOR(n)` column described as `SQL_SS_VECTOR` (a `VectorTypeSupport=v1`
    /// connection): sent as native vectors, through `INSERT` parameter arrays, because the
    /// driver's bcp describes the column as varchar(max) (`types/vector/bulk.rs`).
    Vector {
        dims: u16,
    },
}

impl Form {
    /// The form of a destination column: the SQL type's family ([`Family::of`]), then the
    /// family's form for the column (its `bulk_form`), one line per family; `NotSupported` for
    /// types bulk load cannot send (`sql_variant`, CLR types, types no family knows).
    pub fn of(desc: &ColumnDescription) -> Result<Form> {
        let form = match Family::of(desc.sql_type) {
            Some(Family::Bit) => types::bit::bulk_form(desc),
            Some(Family::Int) => types::int::bulk_form(desc),
            Some(Family::Float) => types::float::bulk_form(desc),
            Some(Family::Decimal) => types::decimal::bulk_form(desc),
            Some(Family::Temporal) => types::temporal::bulk::bulk_form(desc),
            Some(Family::Guid) => types::guid::bulk_form(desc),
            Some(Family::Text) => types::text::bulk_form(desc),
            Some(Family::Binary) => types::binary::bulk_form(desc),
            Some(Family::Vector) => types::vector::bulk::bulk_form(desc),
            Some(Family::Variant) | None => None,
        };
        form.ok_or_else(|| {
            Error::NotSupported(format!(
                "bulk load: column {:?} has SQL type {}, which bulk copy cannot send",
                desc.name, desc.sql_type
            ))
        })
    }

    /// A declared length as a form's limit: `None` where the driver reports none (0) or a
    /// (MAX)-like size.
    pub fn limit(size: usize) -> Option<usize> {
        (size > 0 && size < (1 << 30)).then_some(size)
    }

    /// The form with no length or width limit: what a parameter-array load checks (the type,
    /// and a decimal that fits decimal(38, 0) once rounded; the DBMS keeps its own limits, and
    /// SQLite enforces none it declares).
    pub fn without_limits(self) -> Form {
        match self {
            Form::Int { .. } => Form::Int {
                min: i64::MIN,
                max: i64::MAX,
                name: "integer",
            },
            Form::Decimal { .. } => Form::Decimal {
                precision: 38,
                scale: 0,
            },
            Form::Text { utf8, .. } => Form::Text {
                max_units: None,
                utf8,
            },
            Form::Binary { .. } => Form::Binary { max_bytes: None },
            other => other,
        }
    }

    /// The most bytes one value of this form usually takes (`None`: no small bound). Text forms
    /// of decimals and dates can be longer (more fraction digits than the scale): the bulk load
    /// points at such a value instead of copying it.
    pub fn max_cell_bytes(self) -> Option<usize> {
        match self {
            Form::Bit => Some(1),
            Form::Int { .. } | Form::Float => Some(8),
            Form::Guid => Some(16),
            // Sign, 38 digits, a point, and room for a longer fraction.
            Form::Decimal { .. } => Some(64),
            // `YYYY-MM-DD hh:mm:ss.fffffff +hh:mm` is 34.
            Form::Temporal(_) => Some(48),
            Form::Text { max_units, utf8 } => max_units.map(|n| n * if utf8 { 4 } else { 2 }),
            Form::Binary { max_bytes } => max_bytes,
            Form::Vector { dims } => Some(types::vector::element_len(dims)),
        }
    }

    /// A (MAX), `text`, `ntext`, `xml` or `image` column: no length limit.
    pub fn unbounded(self) -> bool {
        matches!(
            self,
            Form::Text {
                max_units: None,
                ..
            } | Form::Binary { max_bytes: None }
        )
    }

    /// A column FreeTDS 1.3's bcp cannot load: (MAX) ones (an assertion aborts the process)
    /// and datetimeoffset (its text parser refuses every offset).
    pub fn freetds_bcp_cannot(self) -> bool {
        self.unbounded() || matches!(self, Form::Temporal(Temporal::Offset { .. }))
    }

    /// A column the driver's bcp cannot send in this form, so the load goes as parameter
    /// arrays: a native vector (bcp describes the column as varchar(max) text).
    pub fn needs_arrays(self) -> bool {
        matches!(self, Form::Vector { .. })
    }

    /// The bcp program type the driver reads this form's bytes as.
    pub fn bcp_type(self) -> u8 {
        match self {
            Form::Bit => bcp_type::BIT,
            Form::Int { .. } => bcp_type::INT8,
            Form::Float => bcp_type::FLT8,
            Form::Decimal { .. } | Form::Temporal(_) => bcp_type::CHARACTER,
            Form::Text { utf8: true, .. } => bcp_type::CHARACTER,
            Form::Text { .. } => bcp_type::NCHAR,
            Form::Binary { .. } => bcp_type::BINARY,
            Form::Guid => bcp_type::UNIQUEID,
            // Never sent through bcp (`needs_arrays`).
            Form::Vector { .. } => bcp_type::BINARY,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::sql;

    fn of(sql_type: i16, size: usize, decimal_digits: i16) -> Result<Form> {
        Form::of(&ColumnDescription {
            name: "c".into(),
            sql_type,
            size,
            decimal_digits,
            nullable: Some(true),
            unsigned: false,
        })
    }

    #[test]
    fn each_family_gives_its_columns_form() {
        let text = |max_units| Form::Text {
            max_units,
            utf8: false,
        };
        assert_eq!(of(sql::BIT, 1, 0).unwrap(), Form::Bit);
        assert_eq!(
            of(sql::TINYINT, 3, 0).unwrap(),
            Form::Int {
                min: 0,
                max: 255,
                name: "tinyint"
            }
        );
        assert_eq!(of(sql::REAL, 24, 0).unwrap(), Form::Float);
        assert_eq!(
            of(sql::NUMERIC, 10, 2).unwrap(),
            Form::Decimal {
                precision: 10,
                scale: 2
            }
        );
        assert_eq!(
            of(sql::SS_TIME2, 16, 7).unwrap(),
            Form::Temporal(Temporal::Time { scale: 7 })
        );
        assert_eq!(of(sql::GUID, 36, 0).unwrap(), Form::Guid);
        assert_eq!(of(sql::WVARCHAR, 50, 0).unwrap(), text(Some(50)));
        assert_eq!(of(sql::VARCHAR, 0, 0).unwrap(), text(None));
        assert_eq!(of(sql::SS_XML, 0, 0).unwrap(), text(None));
        assert_eq!(
            of(sql::BINARY, 16, 0).unwrap(),
            Form::Binary {
                max_bytes: Some(16)
            }
        );
        assert_eq!(
            of(sql::LONGVARBINARY, 0, 0).unwrap(),
            Form::Binary { max_bytes: None }
        );
        assert_eq!(
            of(types::vector::SQL_SS_VECTOR, 28, 0).unwrap(),
            Form::Vector { dims: 3 }
        );
        // Families without a bulk form for the type, and types no family knows.
        for t in [
            sql::SS_VARIANT,
            sql::SS_UDT,
            sql::DATETIME,
            crate::codes::c::SBIGINT,
            999,
        ] {
            assert!(of(t, 0, 0).is_err(), "{t}");
        }
    }
}
