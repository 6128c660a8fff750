//! What an Arrow column can be ([`ArrowKind`]), the caller's choices per fetch
//! ([`ArrowOptions`], [`Unit`]), and the question each type family answers once per column
//! ([`ArrowColumn`]: which Arrow type, or a refusal naming the column).

use crate::backend::Dbms;
use crate::error::Error;
use crate::plan::ColumnPlan;
use arrow_schema::{DataType, Field, Fields, TimeUnit};

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
    /// fixed_size_list<float32>[dims]: a SQL Server vector (`types/vector/arrow.rs`).
    Float32List {
        dims: u16,
    },
}

impl ArrowKind {
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
            ArrowKind::Float32List { dims } => {
                DataType::FixedSizeList(crate::types::vector::arrow::item_field(), dims as i32)
            }
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
    /// Every text and binary column as large_utf8 / large_binary (64-bit offsets), bound or
    /// streamed: the types mssql-python's Arrow fetches give, built directly rather than cast
    /// from utf8 afterwards (a second copy of every string).
    pub large_types: bool,
}

/// The unit of timestamp arrays (`timestamp_unit=` of the Arrow fetches).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unit {
    /// Microseconds (the default): every year 1..9999 fits; datetime2(7)'s 7th fraction digit is
    /// truncated, as the row path's `datetime` does.
    #[default]
    Micros,
    /// Nanoseconds: datetime2(7) exact, but only 1677-09-21 .. 2262-04-11 fits in i64; a value
    /// outside is an error, never an overflow.
    Nanos,
}

impl Unit {
    pub const fn per_second(self) -> i64 {
        match self {
            Unit::Micros => 1_000_000,
            Unit::Nanos => 1_000_000_000,
        }
    }

    pub fn arrow(self) -> arrow_schema::TimeUnit {
        match self {
            Unit::Micros => arrow_schema::TimeUnit::Microsecond,
            Unit::Nanos => arrow_schema::TimeUnit::Nanosecond,
        }
    }
}

/// One planned column, as its family is asked for its Arrow type (`arrow.rs` of each family).
pub struct ArrowColumn<'a> {
    pub col: &'a ColumnPlan,
    pub index: usize,
    pub dbms: Dbms,
    pub options: ArrowOptions,
}

impl ArrowColumn<'_> {
    /// NotSupportedError: this column has no Arrow type, and why; what to do instead.
    pub fn refuse(&self, why: &str) -> Error {
        Error::NotSupported(format!(
            "Arrow fetch: column {:?} (index {}, SQL type {}) {why}; fetch it as rows or CAST it \
             in the query",
            self.col.desc.name, self.index, self.col.desc.sql_type
        ))
    }
}
