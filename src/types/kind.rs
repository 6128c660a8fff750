//! The vocabulary of the type families: each column's [`CellKind`] (its bound C buffer and its
//! decoder, as one decision) and the [`Family`] that owns it. Nothing here knows a family's
//! details: the plan asks the family for its binding (`plan.rs`), the fetch paths for its
//! Arrow and Python arms.

use crate::odbc::sys::CDataType;

/// The bound buffer and the decoder of one column, as one decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellKind {
    /// `SQL_C_BIT` → bool.
    Bit,
    /// `SQL_C_SSHORT` → int (TINYINT, signed or not, and SMALLINT).
    I16,
    /// `SQL_C_SLONG` → int.
    I32,
    /// `SQL_C_SBIGINT` → int.
    I64,
    /// `SQL_C_FLOAT` → float (REAL; widened exactly like pyodbc does).
    F32,
    /// `SQL_C_DOUBLE` → float.
    F64,
    /// `SQL_C_NUMERIC` struct (sign, 128-bit magnitude) with the column's precision and scale set
    /// on the ARD → `Decimal`, exact: SQL Server's DECIMAL/NUMERIC/MONEY (p ≤ 38) through Driver
    /// 18 (FreeTDS ignores the ARD scale). Driver 18
    /// spends ~150 ns a cell rendering a decimal as text; the struct is a copy of the wire value.
    Numeric { precision: u8, scale: i8 },
    /// `SQL_C_CHAR` digits → `Decimal`, exact. `buffer_len` includes the NUL.
    Decimal {
        precision: u8,
        scale: i8,
        buffer_len: u16,
    },
    /// `SQL_C_TYPE_DATE` → date.
    Date,
    /// Generic TIME as `SQL_C_WCHAR` text (`SQL_C_TYPE_TIME` has no fraction) → time.
    TimeText,
    /// SQL Server TIME(n): `SQL_C_SS_TIME2` struct (nanoseconds) → time.
    SsTime2,
    /// `SQL_C_TYPE_TIMESTAMP` → naive datetime.
    Timestamp,
    /// SQL Server DATETIMEOFFSET: `SQL_C_SS_TIMESTAMPOFFSET` → aware datetime.
    TimestampOffset,
    /// DATETIMEOFFSET rendered as text (`YYYY-MM-DD hh:mm:ss.fffffff +hh:mm`) by drivers
    /// without `SQL_C_SS_TIMESTAMPOFFSET` (FreeTDS) → aware datetime.
    OffsetText,
    /// `SQL_C_GUID` → UUID.
    Guid,
    /// `SQL_C_WCHAR`, at most `max_units` code units → str.
    WText { max_units: u32 },
    /// `SQL_C_BINARY`, at most `max_bytes` → bytes.
    Binary { max_bytes: u32 },
    /// Unbounded text streamed with SQLGetData in chunks → str.
    LongWText,
    /// Unbounded binary streamed with SQLGetData in chunks → bytes.
    LongBinary,
    /// SQL Server `sql_variant`: streamed; each cell's underlying type is read from the driver
    /// (`SQL_CA_SS_VARIANT_TYPE`) and decoded as that type.
    Variant,
    /// DECIMAL/NUMERIC of unknown size (psqlODBC's unconstrained numeric): digits streamed
    /// with SQLGetData so no length is ever too short → `Decimal`.
    LongDecimal,
    /// SQL Server 2025 `VECTOR(n)` float32 (Driver 18, `VectorTypeSupport=v1`): `SQL_C_BINARY`,
    /// the driver's struct then n floats → `array('f')` (`types/vector/`).
    Vector { dims: u16 },
}

/// The type families: one module each under `types/` (and its Python arm under `py/types/`).
/// Every dispatch (column kind, binding, Arrow arm, Python arm, bulk form) has one line per
/// family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Bit,
    Int,
    Float,
    Decimal,
    Temporal,
    Guid,
    Text,
    Binary,
    Variant,
    Vector,
}

impl Family {
    /// The family of a column of SQL type `sql_type`: the one place a SQL type is mapped, for
    /// reads (`plan::choose_kind`) and bulk loads (`bulk::Form::of`) alike; the family then
    /// decides its column's kind (`kind_for`) and bulk form (`bulk_form`). `None`: a type no
    /// family knows (read as its text, streamed; refused by bulk loads).
    pub fn of(sql_type: i16) -> Option<Family> {
        use crate::codes::{c, sql};
        Some(match sql_type {
            sql::BIT => Family::Bit,
            // sqlite3odbc reports BIGINT columns with the C type code SQL_C_SBIGINT.
            sql::TINYINT | sql::SMALLINT | sql::INTEGER | sql::BIGINT | c::SBIGINT => Family::Int,
            sql::REAL | sql::FLOAT | sql::DOUBLE => Family::Float,
            sql::NUMERIC | sql::DECIMAL => Family::Decimal,
            sql::TYPE_DATE
            | sql::DATETIME
            | sql::TYPE_TIME
            | sql::TIME_OR_INTERVAL
            | sql::SS_TIME2
            | sql::TYPE_TIMESTAMP
            | sql::TIMESTAMP
            | sql::SS_TIMESTAMPOFFSET => Family::Temporal,
            sql::GUID => Family::Guid,
            sql::CHAR
            | sql::VARCHAR
            | sql::WCHAR
            | sql::WVARCHAR
            | sql::LONGVARCHAR
            | sql::WLONGVARCHAR
            | sql::SS_XML => Family::Text,
            sql::BINARY | sql::VARBINARY | sql::LONGVARBINARY | sql::SS_UDT => Family::Binary,
            sql::SS_VARIANT => Family::Variant,
            super::vector::SQL_SS_VECTOR => Family::Vector,
            _ => return None,
        })
    }
}

/// How a kind is bound: its ODBC C type and the bytes one element takes in a column buffer
/// (0 for the streamed kinds: they own a growable buffer). Given by the kind's family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Binding {
    pub c_type: CDataType,
    pub element_len: usize,
}

impl Binding {
    pub const fn new(c_type: CDataType, element_len: usize) -> Binding {
        Binding {
            c_type,
            element_len,
        }
    }
}

impl CellKind {
    /// The family that owns this kind.
    pub const fn family(self) -> Family {
        match self {
            CellKind::Bit => Family::Bit,
            CellKind::I16 | CellKind::I32 | CellKind::I64 => Family::Int,
            CellKind::F32 | CellKind::F64 => Family::Float,
            CellKind::Numeric { .. } | CellKind::Decimal { .. } | CellKind::LongDecimal => {
                Family::Decimal
            }
            CellKind::Date
            | CellKind::TimeText
            | CellKind::SsTime2
            | CellKind::Timestamp
            | CellKind::TimestampOffset
            | CellKind::OffsetText => Family::Temporal,
            CellKind::Guid => Family::Guid,
            CellKind::WText { .. } | CellKind::LongWText => Family::Text,
            CellKind::Binary { .. } | CellKind::LongBinary => Family::Binary,
            CellKind::Variant => Family::Variant,
            CellKind::Vector { .. } => Family::Vector,
        }
    }

    /// Read with SQLGetData in chunks (no bound element). Checked per cell by the column
    /// accessors: a plain `matches!`, never a call into a family.
    #[inline]
    pub fn is_long(self) -> bool {
        matches!(
            self,
            CellKind::LongWText | CellKind::LongBinary | CellKind::LongDecimal | CellKind::Variant
        )
    }

    /// The streamed equivalent, for a bounded column that must be read with SQLGetData because it
    /// follows an unbounded one (SQL Server only allows SQLGetData on columns after the bound ones).
    pub fn streamed(self) -> CellKind {
        match self {
            CellKind::WText { .. } => CellKind::LongWText,
            CellKind::Binary { .. } => CellKind::LongBinary,
            // SQLGetData would convert with the ARD's default scale 0: read the digits instead.
            CellKind::Numeric { .. } => CellKind::LongDecimal,
            other => other,
        }
    }
}
