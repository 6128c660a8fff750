//! Bulk load: rows into a table on the caller's own connection, so `#temp` tables and the
//! caller's open transaction are those of its other statements (mssql-python opens a second
//! connection for this and sees neither).
//!
//! The whole load is here, for any caller (the Python methods in `py/cursor/bulk*.rs` and the
//! ADBC driver are thin wrappers): [`BulkLoad::begin`] on a core [`Connection`](crate::Connection)
//! describes the table and chooses the path, [`BulkLoad::rows`] or [`BulkLoad::arrow`] feeds it,
//! [`BulkLoad::finish`] ends it; [`load_arrow`], [`load_arrow_stream`] and [`load_rows`] do all
//! three. Every failure is one [`BulkError`]: the engine's [`Error`](crate::Error), or the
//! caller's own (its row source's or progress hook's).
//!
//! - `run.rs`: the load as a whole: the request, the bcp-or-arrays choice, chunk sizes, the
//!   progress hook, [`Release`] (how the caller's lock, Python's GIL, is let go around driver
//!   work), [`BulkError`].
//! - `rows.rs`: a [`RowSource`]'s rows into the load (the tuple path).
//! - `stream.rs`: an Arrow `RecordBatchReader` into the load, batch by batch.
//! - `target.rs`: the destination described once (`SELECT TOP 0 *`), and `column_mappings`.
//! - `form.rs`: the form each destination column is sent in (its bcp program type and
//!   limits), decided once per load: the SQL type's family (`types::Family::of`, the same
//!   decision the fetch plan makes), then the family's `bulk_form` for the column, one line per
//!   family.
//! - `encode.rs`: the [`Sink`] both sources feed: one `put` of a [`Value`](crate::params::Value),
//!   the write side's one list of value types (a parameter's borrowed view, or an Arrow element
//!   made without allocating). [`CellSink`] puts a value into a cell of its column's form (one
//!   `match` on the value and the form, since a Python column may hold any type; the SQL Server
//!   rules are the families': rounding and ISO text in `types/temporal`, `fit_decimal` in
//!   `types/decimal/text.rs`, GUID text in `types/guid`, dimensions in `types/vector`),
//!   `ParamSink` into a parameter value ([`Value::to_param`](crate::params::Value::to_param)).
//!   Each sink's `put` is inlined into the loops that feed it, where the value's variant is
//!   known, so the `match` on the value costs nothing per value.
//! - `cells.rs`: a chunk's column of length-prefixed cells, as the bcp API reads them.
//! - `load.rs`: the driver's bcp API (Driver 17/18, FreeTDS): `bcp_init`, a `bcp_bind` per
//!   column, each row's cells copied into the bound slots (or pointed at) and `bcp_sendrow`,
//!   `bcp_batch` per batch, `bcp_done`.
//! - `pipe.rs`: a bcp load's chunks sent on a second thread while the next one is filled.
//! - `arrays.rs`: every other driver, and loads the driver's bcp cannot send in their form
//!   (native vectors, FreeTDS's (MAX) and datetimeoffset columns), as `INSERT` parameter arrays
//!   per chunk.
//! - `arrow.rs`: an Arrow array's elements into a [`Sink`]: the array's type looked at once,
//!   then one loop per type, each putting one [`Value`](crate::params::Value) variant (Arrow's
//!   numbers into calendar values: `types/temporal/from_arrow.rs`; vectors:
//!   `types/vector/bulk.rs`).
//!
//! Both paths report what they did in [`LoadCount`]; the counters below prove which ran.

pub mod arrays;
pub mod arrow;
pub mod cells;
pub mod encode;
pub mod form;
pub mod load;
pub mod pipe;
pub mod rows;
pub mod run;
pub mod stream;
pub mod target;

pub use arrays::ArrayLoad;
pub use cells::CellColumn;
pub use encode::{CellSink, Put, Sink, check_param, put_param};
pub use form::Form;
pub use load::{BcpLoad, Chunk, LoadCount, LoadOptions};
pub use pipe::{Pipe, pipelined};
pub use rows::{RowSource, RowWriter, Rows, RowsOut, null_refused};
pub use run::{
    BulkError, BulkLoad, CHUNK_BYTES, CHUNK_ROWS, NoLock, Progress, Release, Request, load_arrow,
    load_arrow_stream, load_rows,
};
pub use target::{Fed, Mapping, Table};

use crate::info::AttrValue;
use crate::odbc::bcp::{SQL_BCP_ON, SQL_COPT_SS_BCP};

/// The attribute that enables the driver's bcp API, when the connection string names a driver
/// that has one (Microsoft's ODBC Driver 17/18, FreeTDS) and the caller did not set it. It must
/// be set before the connection is made, so this is decided from the connection string; a DSN
/// naming such a driver needs `attrs_before={1219: 1}` (else loads take the parameter-array
/// path). Enabling it changes nothing else a connection does (measured: see the README).
pub fn bcp_attr_for(
    connection_string: &str,
    attrs_before: &[(i32, AttrValue)],
) -> Option<(i32, AttrValue)> {
    if attrs_before.iter().any(|(a, _)| *a == SQL_COPT_SS_BCP) {
        return None;
    }
    let attrs = crate::connstr::parse(connection_string).ok()?;
    let driver = attrs
        .iter()
        .find(|a| a.key.eq_ignore_ascii_case("driver"))?;
    let has_bcp =
        crate::backend::Driver::from_driver_keyword(&driver.value) != crate::backend::Driver::Other;
    has_bcp.then_some((SQL_COPT_SS_BCP, AttrValue::Int(SQL_BCP_ON)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bcp_is_enabled_for_sql_server_drivers_only() {
        assert!(bcp_attr_for("Driver={ODBC Driver 18 for SQL Server};Server=x", &[]).is_some());
        assert!(bcp_attr_for("DRIVER=FreeTDS;Server=x", &[]).is_some());
        assert!(bcp_attr_for("Driver={SQLite3};Database=:memory:", &[]).is_none());
        assert!(bcp_attr_for("DSN=prod", &[]).is_none());
        let off = [(SQL_COPT_SS_BCP, AttrValue::Int(0))];
        assert!(bcp_attr_for("Driver={ODBC Driver 18 for SQL Server}", &off).is_none());
    }
}
