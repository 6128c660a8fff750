//! The Python arm of each type family (`crate::types`): a column's served range into objects,
//! one `fill` per family, dispatched once per column by `py/decode.rs::fill_with`. The loop they
//! share and the cell errors are in `cell.rs`. sql_variant has no arm of its own: each cell goes
//! through the arm of its underlying type (`py/decode.rs`).

pub mod binary;
pub mod bit;
pub mod cell;
pub mod decimal;
pub mod float;
pub mod guid;
pub mod int;
pub mod temporal;
pub mod text;
pub mod vector;
