//! The Arrow type of each column of a result set, decided once from its plan: the same
//! [`CellKind`] the row path decodes, plus the SQL type where Arrow is finer (TINYINT, TIME(n)).

use super::values::Unit;
use crate::backend::Dbms;
use crate::codes::sql;
use crate::error::{Error, Result};
use crate::plan::{CellKind, ColumnPlan, ResultPlan};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use std::collections::HashMap;
use std::sync::Arc;

/// The Arrow array one column becomes (see the table in the module doc of `arrow`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrowKind {
    Bool,
    UInt8,
    Int16,
    Int32,
    Int64,
    Float32,
    Float64,
    Decimal128 {
        precision: u8,
        scale: i8,
    },
    Date32,
    /// time64, nanoseconds when `nanos`, else microseconds.
    Time64 {
        nanos: bool,
    },
    /// timestamp[unit] without a zone.
    Timestamp(Unit),
    /// timestamp[unit, tz=UTC]: a datetimeoffset's instant.
    TimestampUtc(Unit),
    /// struct<instant: timestamp[unit, tz=UTC], offset_minutes: int16>: a datetimeoffset's
    /// instant and its own offset ([`ArrowOptions::offsets`]).
    InstantAndOffset(Unit),
    /// fixed_size_binary(16) with the `arrow.uuid` extension.
    Uuid,
    /// utf8: a uniqueidentifier as its lowercase hyphenated text ([`ArrowOptions::uuid_text`]).
    UuidText,
    Utf8,
    LargeUtf8,
    Binary,
    LargeBinary,
}

impl ArrowKind {
    /// The Arrow kind of one planned column, or NotSupportedError naming it.
    pub fn of(
        col: &ColumnPlan,
        index: usize,
        dbms: Dbms,
        options: ArrowOptions,
    ) -> Result<ArrowKind> {
        let refuse = |why: &str| {
            Err(Error::NotSupported(format!(
                "Arrow fetch: column {:?} (index {index}, SQL type {}) {why}; fetch it as rows \
                 or CAST it in the query",
                col.desc.name, col.desc.sql_type
            )))
        };
        let decimal = |precision: u8, scale: i8| {
            if (1..=38).contains(&precision) && (0..=precision as i8).contains(&scale) {
                Ok(ArrowKind::Decimal128 { precision, scale })
            } else {
                refuse(&format!(
                    "is a decimal({precision},{scale}): decimal128 holds precision 1..38 and \
                     scale 0..precision"
                ))
            }
        };
        Ok(match col.kind {
            CellKind::Bit => ArrowKind::Bool,
            CellKind::I16 if col.desc.sql_type == sql::TINYINT && dbms == Dbms::SqlServer => {
                ArrowKind::UInt8
            }
            CellKind::I16 => ArrowKind::Int16,
            CellKind::I32 => ArrowKind::Int32,
            CellKind::I64 => ArrowKind::Int64,
            CellKind::F32 => ArrowKind::Float32,
            CellKind::F64 => ArrowKind::Float64,
            CellKind::Numeric { precision, scale } => decimal(precision, scale)?,
            CellKind::Decimal {
                precision, scale, ..
            } => decimal(precision, scale)?,
            // Streamed digits: a declared (p,s) still gives the column's type (a decimal after
            // a (MAX) column); an unconstrained numeric (PostgreSQL) has none.
            CellKind::LongDecimal if (1..=38).contains(&col.desc.size) => decimal(
                col.desc.size as u8,
                col.desc.decimal_digits.clamp(-128, 127) as i8,
            )?,
            CellKind::LongDecimal => {
                return refuse("is a numeric of unknown precision (no decimal128 type fits it)");
            }
            CellKind::Date => ArrowKind::Date32,
            CellKind::SsTime2 | CellKind::TimeText => ArrowKind::Time64 {
                nanos: col.desc.decimal_digits > 6,
            },
            CellKind::Timestamp => ArrowKind::Timestamp(options.unit),
            CellKind::TimestampOffset | CellKind::OffsetText if options.offsets => {
                ArrowKind::InstantAndOffset(options.unit)
            }
            CellKind::TimestampOffset | CellKind::OffsetText => {
                ArrowKind::TimestampUtc(options.unit)
            }
            CellKind::Guid if options.uuid_text => ArrowKind::UuidText,
            CellKind::Guid => ArrowKind::Uuid,
            CellKind::WText { .. } => ArrowKind::Utf8,
            CellKind::LongWText => ArrowKind::LargeUtf8,
            CellKind::Binary { .. } => ArrowKind::Binary,
            CellKind::LongBinary => ArrowKind::LargeBinary,
            CellKind::Variant => {
                return refuse("is a sql_variant, which has no Arrow type in this version");
            }
        })
    }

    pub fn data_type(self) -> DataType {
        match self {
            ArrowKind::Bool => DataType::Boolean,
            ArrowKind::UInt8 => DataType::UInt8,
            ArrowKind::Int16 => DataType::Int16,
            ArrowKind::Int32 => DataType::Int32,
            ArrowKind::Int64 => DataType::Int64,
            ArrowKind::Float32 => DataType::Float32,
            ArrowKind::Float64 => DataType::Float64,
            ArrowKind::Decimal128 { precision, scale } => DataType::Decimal128(precision, scale),
            ArrowKind::Date32 => DataType::Date32,
            ArrowKind::Time64 { nanos: true } => DataType::Time64(TimeUnit::Nanosecond),
            ArrowKind::Time64 { nanos: false } => DataType::Time64(TimeUnit::Microsecond),
            ArrowKind::Timestamp(unit) => DataType::Timestamp(unit.arrow(), None),
            ArrowKind::TimestampUtc(unit) => DataType::Timestamp(unit.arrow(), Some("UTC".into())),
            ArrowKind::InstantAndOffset(unit) => DataType::Struct(instant_and_offset_fields(unit)),
            ArrowKind::Uuid => DataType::FixedSizeBinary(16),
            ArrowKind::Utf8 | ArrowKind::UuidText => DataType::Utf8,
            ArrowKind::LargeUtf8 => DataType::LargeUtf8,
            ArrowKind::Binary => DataType::Binary,
            ArrowKind::LargeBinary => DataType::LargeBinary,
        }
    }

    fn field(self, col: &ColumnPlan) -> Field {
        // Always nullable: a driver's NO_NULLS is a description, not a promise (outer joins,
        // views), and a null in a non-nullable field would make the whole batch invalid.
        let field = Field::new(col.desc.name.clone(), self.data_type(), true);
        if self == ArrowKind::Uuid {
            // The canonical extension type: pyarrow and polars read it as a UUID column.
            field.with_metadata(HashMap::from([
                ("ARROW:extension:name".to_string(), "arrow.uuid".to_string()),
                ("ARROW:extension:metadata".to_string(), String::new()),
            ]))
        } else {
            field
        }
    }
}

/// The children of [`ArrowKind::InstantAndOffset`]: never null themselves (a NULL
/// datetimeoffset is a null struct slot).
pub fn instant_and_offset_fields(unit: Unit) -> Fields {
    Fields::from(vec![
        Field::new("instant", ArrowKind::TimestampUtc(unit).data_type(), false),
        Field::new("offset_minutes", DataType::Int16, false),
    ])
}

/// Choices the caller makes per fetch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArrowOptions {
    /// datetimeoffset as a struct of its UTC instant and its own offset in minutes, instead of
    /// the UTC timestamp alone (the default: what every Arrow consumer reads as a point in time).
    pub offsets: bool,
    /// uniqueidentifier as utf8 text (`6f9619ff-8b86-d011-b42d-00c04fc964ff`, lowercase as
    /// Python's `str(uuid)`), for consumers without the `arrow.uuid` extension type.
    pub uuid_text: bool,
    /// The unit of every timestamp column (datetime2, datetime, smalldatetime, datetimeoffset).
    pub unit: Unit,
}

/// A result set's Arrow schema and each column's kind: built once per result set.
#[derive(Debug, Clone)]
pub struct ArrowLayout {
    pub schema: SchemaRef,
    pub kinds: Vec<ArrowKind>,
    pub plan: Arc<ResultPlan>,
}

impl ArrowLayout {
    /// The layout of `plan`, or NotSupportedError for its first column without an Arrow type.
    pub fn new(plan: Arc<ResultPlan>, options: ArrowOptions) -> Result<ArrowLayout> {
        let mut kinds = Vec::with_capacity(plan.columns.len());
        let mut fields = Vec::with_capacity(plan.columns.len());
        for (i, col) in plan.columns.iter().enumerate() {
            let kind = ArrowKind::of(col, i, plan.backend.dbms, options)?;
            fields.push(kind.field(col));
            kinds.push(kind);
        }
        Ok(ArrowLayout {
            schema: Arc::new(Schema::new(fields)),
            kinds,
            plan,
        })
    }
}
