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
//! Each family is a folder of two layers, so that the import graph has no circle:
//! - `mod.rs`, below the bound batch: the kinds' `binding` (ODBC C type and bound element
//!   size, asked by `plan.rs`), how a SQL type picks a kind where that takes more than a line
//!   (`kind_for`), the Python-free value conversions (C structs, drivers' text), and the
//!   parameter/bulk encoder's section.
//! - `arrow.rs`, above it (it reads `batch::ColumnBuffer`): the Arrow type of a column
//!   (`kind`) and its builder (`Builder`: `new`, `append` a served range, `finish`).
//!
//! The Python arm (`py/types/<family>.rs`) turns a column's served range into objects.
//!
//! # Decide once, loop dumb
//! Every dispatch is one `match` per column: on the family, then inside the family on the
//! kind, once per column per served range; then a monomorphic loop over the rows. No per-cell
//! match on the kind, no per-cell dynamic call, no per-cell allocation beyond the value itself.
//!
//! # Adding a SQL type
//! A kind in an existing family: its variant in [`CellKind`] (and its arm in
//! [`CellKind::family`]), its arms in the family's files, and the line in
//! `plan::choose_kind` that picks it. A new family:
//! 1. `types/<family>/mod.rs` (`binding`, conversions, encoder section) and
//!    `types/<family>/arrow.rs` (`kind`, `Builder`), declared below;
//! 2. `py/types/<family>.rs` (`fill`), declared in `py/types/mod.rs`;
//! 3. its kinds in [`CellKind`] and its variant in [`Family`] (`kind.rs`);
//! 4. one line in each dispatch: `plan::choose_kind` (SQL type → kind), `CellKind::binding`
//!    (`plan.rs`), `ArrowKind::of` (`arrow/schema.rs`), `ColumnBuilder` (`arrow/columns.rs`:
//!    its variant and one line in `new`, `append` and `finish`), `fill_with` (`py/decode.rs`),
//!    and, if its converters' bytes are not the bound element, `raw_bytes` (`py/decode.rs`);
//! 5. its Python type code for `description` (`py/plan.rs::type_code`).

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
