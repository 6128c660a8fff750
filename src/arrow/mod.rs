//! Arrow record batches from the same bound batches as rows: one more consumer of the row
//! stream ([`crate::rowset::RowStream`]), no fetch loop of its own. [`assemble_batch`] takes
//! served rows from the stream exactly as the tuple paths do and hands each [`Served`] range to
//! a [`BatchAssembler`]; the assembler copies the cells into Arrow arrays (fixed-width values in
//! one slice copy per range, text transcoded once from UTF-16 straight into the UTF-8 value
//! buffer, validity from the length indicators; `columns.rs` says why fixed-width values are
//! copied once rather than handed over).
//!
//! No overlap with the driver: Arrow's consumer asks the row source to fetch in line
//! ([`crate::rowset::RowSet::without_prefetch`]). Converting a row array to Arrow is a small
//! share of fetching it, and on this project's 2-core machine the driver ran slower on the
//! prefetch thread than the overlap saved (10,000 x 32 columns: 26.4 ms a read prefetching,
//! 21.7 ms in line); tuples, whose conversion is half the work, keep the overlap.
//!
//! `kind.rs`: what an Arrow column can be and the caller's options; `schema.rs`: the schema of a
//! result set (each column's family picks its type once per result set, or refuses it);
//! `columns.rs`: one builder per column, a dispatch to its family's builder (the families'
//! Arrow arms, with their exact value conversions, are `types/<family>/arrow.rs`); `cells.rs`:
//! the kit those builders share; `assemble.rs`: record batches from the row stream;
//! `stream.rs`: the C stream; `text.rs`: UTF-16 → UTF-8 text columns.
//!
//! # Type mapping
//!
//! | SQL type (C binding) | Arrow type | notes |
//! |---|---|---|
//! | bit | bool | |
//! | tinyint | uint8 (SQL Server) / int16 (other DBMS) | SQL Server TINYINT is 0..255 |
//! | smallint / int / bigint | int16 / int32 / int64 | unsigned types widen as the row path does |
//! | real / float | float32 / float64 | |
//! | decimal/numeric(p,s), p ≤ 38 | decimal128(p,s) | exact: the numeric struct's magnitude, or the driver's digits parsed without a float; more fraction digits than `s` is an error, never rounded (psqlODBC describes an unconstrained numeric as (28,6)) |
//! | money / smallmoney | decimal128(19,4) / decimal128(10,4) | the driver reports them as decimal(19,4)/(10,4) |
//! | numeric of unknown or > 38 precision | — | NotSupportedError (no decimal256 yet) |
//! | date | date32 | 0001-01-01 is day -719,162 |
//! | time(n) | `time64[us]` for n ≤ 6, `time64[ns]` for n = 7 | |
//! | datetime2(n) / datetime / smalldatetime | `timestamp[us]` (no zone) | µs holds 0001-01-01 .. 9999-12-31 23:59:59.999999 whole (±292,000 years); datetime2(7)'s 7th digit is truncated, as the row path's `datetime` does. [`ArrowOptions::unit`] = nanoseconds: exact, within 1677..2262 only; outside, a DataError (i128 arithmetic, never an overflow) |
//! | datetimeoffset(n) | timestamp[us, tz=UTC] | the instant, exact to the µs (7th digit truncated as above; to 100 ns with [`ArrowOptions::unit`] = nanoseconds, within its range, instants computed in i128); with [`ArrowOptions::offsets`], struct<instant: timestamp[us, tz=UTC], offset_minutes: int16> keeps each value's own offset too |
//! | uniqueidentifier | fixed_size_binary(16), extension `arrow.uuid` | RFC 4122 byte order (the big-endian bytes of the UUID); with [`ArrowOptions::uuid_text`], utf8 lowercase hyphenated text |
//! | char / varchar / nchar / nvarchar / xml (bounded) | utf8 | UTF-16 transcoded once; lone surrogates follow `connection.decode_errors` (`strict` raises, `replace` gives U+FFFD, `surrogatepass` raises: UTF-8 cannot hold them) |
//! | binary / varbinary / rowversion (bounded) | binary | |
//! | (MAX), text/ntext/image, xml, any streamed column | large_utf8 / large_binary | |
//! | sql_variant | — | NotSupportedError through Driver 18; FreeTDS renders it as text (large_utf8), like the row path |
//!
//! NULL in every type is a null slot (the validity bitmap), from the length indicator.
//! Output converters are not applied to Arrow: with any registered for a result set's column
//! types, Arrow fetch raises NotSupportedError (the binding layer decides that once per result
//! set).
//!
//! [`Served`]: crate::rowset::Served

mod assemble;
pub(crate) mod cells;
mod columns;
pub mod kind;
mod schema;
mod stream;
pub mod text;

pub use assemble::{BatchAssembler, assemble_batch, assemble_table};
pub use kind::{ArrowKind, ArrowOptions, Unit};
pub use schema::ArrowLayout;
pub use stream::export_stream;
