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
//! | vector | `Vector` | `vector/` | `py/types/vector.rs` |
//!
//! Each family is a folder whose files read in one direction (the bound batch reads the lower
//! layer; the upper ones read the bound batch), so that the import graph has no circle:
//! - `mod.rs`: the kinds' `binding` (ODBC C type and bound element size, asked by `plan.rs`),
//!   the kind of each of its columns (`kind_for(desc, backend)`, asked by `plan::choose_kind`)
//!   and the bulk-load form of each of its destination columns (`bulk_form(desc)`, asked by
//!   `bulk::Form::of`; in `bulk.rs` where the family has one), the Python-free value conversions
//!   (C structs, drivers' text), and an `Encoder` section: the bytes or text a parameter sends
//!   for the family's values (`params/array.rs` chooses which, per driver, in the family's
//!   `ArrayColumn::push_*` method; the scalar families' values are their own bytes, where the
//!   parameter kinds also widen bool → int → float). Which family a SQL type belongs to is
//!   decided once, for reads and bulk loads alike: [`Family::of`] (`kind.rs`).
//! - `arrow.rs`: the Arrow type of a column (`kind`) and its builder (a `FamilyBuilder` of
//!   `arrow/cells.rs`: `new`, `append` a served range, `finish`).
//! - The write side's rules, where the family has any: SQL Server's value rules and text forms.
//!   temporal: `iso.rs` (the one ISO writer), `round.rs` (SQL Server's rounding to a column's
//!   scale, smalldatetime's minute), `from_arrow.rs` (Arrow's numbers into calendar values, the
//!   inverse of `arrow.rs`), `bulk.rs` (the form of a date/time destination column, decided
//!   once per load, and each temporal value into its cell). decimal: `text.rs` (every decimal
//!   text read or written: the drivers' digits, `fit_decimal` for a column, Arrow's unscaled
//!   integers, a Python `Decimal`'s str()). guid: `parse_guid` and the struct byte order.
//!
//! The Python arm (`py/types/<family>.rs`) turns a column's served range into objects (`fill`);
//! a Python value into a parameter is `py/params.rs::to_param` (one arm per Python type).
//!
//! # Decide once, loop dumb
//! Every dispatch is one `match` per column and served range: on the family, then inside the
//! family on the kind; then a monomorphic loop over the rows (`Fill::each` on the Python side,
//! the family builder's loop on the Arrow side). No per-cell match on the kind, no per-cell
//! dynamic call, no per-cell allocation beyond the value itself.
//!
//! # Adding a SQL type
//! A kind in an existing family: its variant in [`CellKind`] and its arm in
//! [`CellKind::family`] (`kind.rs`), its arms in the family's files, and the line in the
//! family's `kind_for` that picks it. A new SQL type code of an existing family: its line in
//! [`Family::of`], and its arms in the family's `kind_for` and `bulk_form`.
//!
//! A new family (the VECTOR family is the model: `types/vector/`):
//! 1. New files: `types/<family>/mod.rs` (`binding`, `kind_for`, conversions, encoder section),
//!    `types/<family>/arrow.rs` (`kind`, `Builder`), `types/<family>/bulk.rs` (`bulk_form`: its
//!    destination columns' form, the family's rules for each source value, and its Arrow
//!    sources if it has its own, as `vector/bulk.rs` has), `py/types/<family>.rs` (`fill`).
//! 2. Declared, one line each: `pub mod` below, and in `py/types/mod.rs`.
//! 3. Named, one line each: its kinds in [`CellKind`] and their arm in [`CellKind::family`], its
//!    variant in [`Family`] and its SQL types in [`Family::of`] (`kind.rs`).
//! 4. Read side, one line each: `plan::choose_kind` (family → its `kind_for`),
//!    `CellKind::binding` (`plan.rs`), `ArrowKind::of` (`arrow/schema.rs`), `ColumnBuilder`
//!    (`arrow/columns.rs`: its variant, and a line in `new`, `append`, `finish`), `fill_with`
//!    (`py/decode.rs`), its `description` type code (`py/plan.rs::type_code`); a new Arrow
//!    array type also needs its [`ArrowKind`](crate::arrow::ArrowKind) variant
//!    (`arrow/kind.rs`), and output converters get the bound element unless `raw_bytes`
//!    (`py/decode.rs`) says otherwise.
//! 5. Values and parameters, one line each (the value's encoder is the family's `mod.rs`):
//!    - `params/value.rs`: its [`Value`](crate::params::Value) variant, the write side's one
//!      list of value types (a borrowed view, which the Arrow feed makes without allocating),
//!      and its arms in `ParamValue::as_value`, `Value::kind` and `Value::to_param`;
//!    - `params/mod.rs`: its [`ParamValue`](crate::params::ParamValue) variant (the owned value);
//!    - `params/kind.rs`: its `Kind` variant (`kind_of` needs nothing: a parameter's kind is its
//!      value's `Value::kind`; `unify` needs nothing: equal kinds unify, and no other kind widens
//!      into a new one);
//!    - `params/array.rs`: its `ArrayColumn::push_*` method (the family's cell bytes, and the
//!      `Misfit` of a column of another kind) and its arm in `push_value`;
//!    - `params/encode.rs`: its binding: an arm in `fixed_binding` (fixed size) or in `finish`
//!      (sized by the values);
//!    - `py/types/<family>.rs::param_cell`, if it has a Python type worth a fast path: that exact
//!      type into a cell (`executemany`), and its line in `py/cursor/execute_many.rs::encoder`;
//!      any other value of the family goes through `to_param` and `push_value`;
//!    - output parameters, if it has them: its arm in `params/output.rs::decode` and its name
//!      in `py/output.rs::output_type` (`OutputType` is the parameter `Kind`: no list of its own);
//!    - `py/params.rs::to_param`: the Python types that become it (a `cast` and a `return`);
//!      `py/params.rs::from_param`: the Python object of an output value.
//! 6. Bulk load, one line each (the rules are the family's `bulk.rs`):
//!    - `bulk/form.rs`: its `Form` variant (wrapping the family's column form), its line in
//!      `Form::of` (`Some(Family::<Family>) => types::<family>::bulk::bulk_form(desc)`), and its
//!      arm in `max_cell_bytes` and `bcp_type` (and `without_limits` if its form carries limits);
//!    - `bulk/encode.rs`: its arm in `CellSink::put` (calling the family's `bulk.rs`, as the
//!      temporal arms do) and in `form_name`; `ParamSink` needs nothing (`Value::to_param`);
//!    - `bulk/arrow.rs`: its Arrow types in `check_type` and `put_array` (one loop each, putting
//!      its `Value` variant), or one line calling the family's own Arrow feed.
//!
//!    The `Sink` trait (one `put`), the row loop, chunking, the bcp-or-arrays choice and the
//!    Arrow feed (`bulk/run.rs`, `rows.rs`, `stream.rs`) need nothing.

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
pub mod vector;

pub use kind::{Binding, CellKind, Family};
