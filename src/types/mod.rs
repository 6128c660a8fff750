//! The type families: what each SQL type is, in one place per family.
//!
//! A family owns its kinds ([`CellKind`], grouped by [`Family`]) from the driver's buffer to the
//! caller's value:
//!
//! | family | kinds | module (core) | Python arm |
//! |---|---|---|---|
//! | bit | `Bit` | `bit/` | `py/types/bit.rs` |
//! | integers | `I16` `I32` `I64` | `int/` | `py/types/int.rs` |
//! | floating point | `F32` `F64` | `float/` | `py/types/float.rs` |
//! | decimal | `Numeric` `Decimal` `LongDecimal` | `decimal/` | `py/types/decimal.rs` |
//! | date and time | `Date` `TimeText` `SsTime2` `Timestamp` `TimestampOffset` `OffsetText` | `temporal/` | `py/types/temporal.rs` |
//! | uniqueidentifier | `Guid` | `guid/` | `py/types/guid.rs` |
//! | text | `WText` `LongWText` | `text/` | `py/types/text.rs` |
//! | binary | `Binary` `LongBinary` | `binary/` | `py/types/binary.rs` |
//! | sql_variant | `Variant` | `variant/` | each cell through its own family (`py/decode.rs`) |
//!
//! Each family is a folder of two layers, so that the import graph has no circle (the bound
//! batch reads the lower layer; the upper one reads the bound batch):
//! - `mod.rs`: the kinds' `binding` (ODBC C type and bound element size, asked by `plan.rs`),
//!   how a SQL type picks a kind where that takes more than a line (`kind_for`), the
//!   Python-free value conversions (C structs, drivers' text), and an `Encoder` section: what a
//!   parameter (and, next, a bulk load) sends for the family's values. temporal and guid keep
//!   their encoders there (structs, ISO or hyphenated text); the scalar families' values are
//!   their own bytes (one line each in `params/encode.rs::encode_cell`, where the parameter
//!   kinds also widen bool → int → float), and their section says so.
//! - `arrow.rs`: the Arrow type of a column (`kind`) and its builder (a
//!   `FamilyBuilder` of `arrow/cells.rs`: `new`, `append` a served range, `finish`).
//!
//! The Python arm (`py/types/<family>.rs`) turns a column's served range into objects (`fill`).
//!
//! # Decide once, loop dumb
//! Every dispatch is one `match` per column and served range: on the family, then inside the
//! family on the kind; then a monomorphic loop over the rows (`Fill::each` on the Python side,
//! the family builder's loop on the Arrow side). No per-cell match on the kind, no per-cell
//! dynamic call, no per-cell allocation beyond the value itself.
//!
//! # Adding a SQL type
//! A kind in an existing family: its variant in [`CellKind`] and its arm in
//! [`CellKind::family`] (`kind.rs`), its arms in the family's three files, and the line in
//! `plan::choose_kind` that picks it.
//!
//! A new family: three new files and one line in each dispatch.
//! 1. New: `types/<family>/mod.rs` (`binding`, conversions, encoder section),
//!    `types/<family>/arrow.rs` (`kind`, `Builder`), `py/types/<family>.rs` (`fill`).
//! 2. Declared: `pub mod` below, and in `py/types/mod.rs`.
//! 3. Named: its kinds in [`CellKind`] and its variant in [`Family`] (`kind.rs`).
//! 4. Dispatched, one line each: `plan::choose_kind` (SQL type → kind), `CellKind::binding`
//!    (`plan.rs`), `ArrowKind::of` (`arrow/schema.rs`), `ColumnBuilder` (`arrow/columns.rs`: its
//!    variant, and a line in `new`, `append`, `finish`), `fill_with` (`py/decode.rs`), its
//!    `description` type code (`py/plan.rs::type_code`); a new Arrow array type also needs its
//!    [`ArrowKind`](crate::arrow::ArrowKind) variant (`arrow/kind.rs`), and output converters
//!    get the bound element unless `raw_bytes` (`py/decode.rs`) says otherwise.
//! 5. Sent as a parameter: its `ParamValue`, parameter kind and binding (`params/`), encoded by
//!    its family's encoder section.

pub mod binary;
pub mod bit;
pub mod decimal;
pub mod float;
pub mod guid;
pub mod int;
mod kind;
pub mod temporal;
pub mod text;
pub mod variant;

pub use kind::{Binding, CellKind, Family};
