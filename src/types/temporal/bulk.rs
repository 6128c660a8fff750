//! The temporal family's bulk-load side: the form of a date or time destination column
//! ([`Temporal`], decided once per load from its SQL type) and each temporal value into a cell
//! of it, as the ISO text the driver converts exactly (`iso.rs`), rounded first as SQL Server
//! rounds (`round.rs`). SQL Server's conversions between the types are kept: a date into a
//! datetime is its midnight, a naive datetime into a datetimeoffset is at +00:00, and a
//! datetimeoffset into a type without an offset keeps its local time.

use super::iso::{IsoText, date_text, offset_text, time_text, timestamp_text};
use super::round::{midnight, rounded_time, rounded_timestamp, rounded_to_minute};
use super::{Date, Time, Timestamp, TimestampOffset};
use crate::bulk::Form;
use crate::codes::sql;
use crate::odbc::ColumnDescription;

/// The temporal SQL types, each sent as ISO text the driver converts exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Temporal {
    Date,
    /// `time(scale)`.
    Time {
        scale: u8,
    },
    /// `datetime2(scale)`, `datetime` (3) and `smalldatetime` (0, `minutes`: whole minutes,
    /// described with column size 16).
    DateTime {
        scale: u8,
        minutes: bool,
    },
    /// `datetimeoffset(scale)`.
    Offset {
        scale: u8,
    },
}

/// The bulk-load form of a temporal destination column; `None` for the ODBC 2 codes
/// (`DATETIME`, `TIME_OR_INTERVAL`, `TIMESTAMP`), which no SQL Server driver describes.
pub fn bulk_form(desc: &ColumnDescription) -> Option<Form> {
    Temporal::of(desc).map(Form::Temporal)
}

/// A value's cell: `None` when the column takes no value of its type (the caller names both),
/// `Some(Err)` when this value does not fit (out of range once rounded).
pub type Cell = Option<Result<IsoText, String>>;

impl Temporal {
    /// The temporal column of a destination column's SQL type; `None` for any other type.
    #[allow(
        clippy::cast_sign_loss,
        clippy::cast_possible_truncation,
        reason = "clamped to 0..=7 first"
    )]
    pub fn of(desc: &ColumnDescription) -> Option<Temporal> {
        let scale = desc.decimal_digits.clamp(0, 7) as u8;
        Some(match desc.sql_type {
            sql::TYPE_DATE => Temporal::Date,
            sql::TYPE_TIME | sql::SS_TIME2 => Temporal::Time { scale },
            sql::TYPE_TIMESTAMP => Temporal::DateTime {
                scale,
                minutes: desc.size == 16,
            },
            sql::SS_TIMESTAMPOFFSET => Temporal::Offset { scale },
            _ => return None,
        })
    }

    /// The SQL type's name, for messages.
    pub fn name(self) -> String {
        match self {
            Temporal::Date => "date".into(),
            Temporal::Time { scale } => format!("time({scale})"),
            Temporal::DateTime { minutes: true, .. } => "smalldatetime".into(),
            Temporal::DateTime { scale, .. } => format!("datetime2({scale})"),
            Temporal::Offset { scale } => format!("datetimeoffset({scale})"),
        }
    }

    pub fn date(self, d: Date) -> Cell {
        match self {
            Temporal::Date => Some(Ok(date_text(d))),
            Temporal::DateTime { .. } | Temporal::Offset { .. } => self.timestamp(midnight(d)),
            Temporal::Time { .. } => None,
        }
    }

    pub fn time(self, t: Time) -> Cell {
        match self {
            Temporal::Time { scale } => Some(Ok(time_text(&rounded_time(t, scale).0, scale))),
            _ => None,
        }
    }

    pub fn timestamp(self, ts: Timestamp) -> Cell {
        Some(match self {
            Temporal::Date => Ok(date_text(ts.date)),
            Temporal::Time { scale } => Ok(time_text(&rounded_time(ts.time, scale).0, scale)),
            Temporal::DateTime { scale, minutes } => {
                let rounded = if minutes {
                    rounded_to_minute(ts)
                } else {
                    rounded_timestamp(ts, scale)
                };
                rounded.map(|r| timestamp_text(&r, scale))
            }
            // A naive datetime into datetimeoffset: offset +00:00, as SQL Server converts.
            Temporal::Offset { .. } => {
                return self.offset(TimestampOffset {
                    timestamp: ts,
                    offset_minutes: 0,
                });
            }
        })
    }

    pub fn offset(self, o: TimestampOffset) -> Cell {
        match self {
            Temporal::Offset { scale } => {
                Some(rounded_timestamp(o.timestamp, scale).map(|local| {
                    let o = TimestampOffset {
                        timestamp: local,
                        ..o
                    };
                    offset_text(&o, scale)
                }))
            }
            // SQL Server keeps the local time when it drops an offset.
            Temporal::DateTime { .. } | Temporal::Date | Temporal::Time { .. } => {
                self.timestamp(o.timestamp)
            }
        }
    }
}
