//! The vector family: SQL Server 2025 `VECTOR(n)` (float32), which Driver 18 describes as
//! `SQL_SS_VECTOR` (-156) on a connection with `VectorTypeSupport=v1`. Without that keyword (its
//! default), and through FreeTDS, the server sends a vector as varchar(max) JSON text and it is a
//! text column (`str`); `parse_text` is the opt-in that turns such text into the same values.
//!
//! Bound as `SQL_C_BINARY`, one element of 16 + 4n bytes: Driver 18 writes its `SQL_SS_VECTOR`
//! struct (SQLSMALLINT dimension, the element type, padding, `float *data`) followed by the n
//! little-endian floats (`eng/tds-peer/captures/vector.md`); the floats are copied out from
//! byte 16, never through the pointer. Column size (SQLDescribeCol) is that element length.
//! Arrow arm: `arrow.rs` (`fixed_size_list<float32>[n]`); Python arm: `py/types/vector.rs`
//! (`array.array('f')`, which numpy reads without a copy).

use super::kind::{Binding, CellKind};
use crate::backend::Backend;
use crate::odbc::ColumnDescription;
use crate::odbc::sys::CDataType;

pub(crate) mod arrow;
pub mod bulk;

/// Driver 18's SQL type of a vector column or parameter.
pub const SQL_SS_VECTOR: i16 = -156;
/// Driver 18's C type of its vector struct (parameters; msodbcsql.h's value, also mssql-rs').
pub const SQL_C_SS_VECTOR: i16 = 0x4002;
/// Bytes of the struct before the floats (dimension, type, padding, pointer).
pub const STRUCT_LEN: usize = 16;
/// SQL Server's largest float32 vector.
pub const MAX_DIMS: u16 = 1998;

/// The kind of a `SQL_SS_VECTOR` column of column size `size` and decimal digits `digits`
/// (the element type: 0 float32). None: not a float32 vector the family can bind.
pub fn native_kind(size: usize, digits: i16) -> Option<CellKind> {
    let dims = u16::try_from(size.checked_sub(STRUCT_LEN)? / 4).ok()?;
    (digits == 0 && (1..=MAX_DIMS).contains(&dims) && size == element_len(dims))
        .then_some(CellKind::Vector { dims })
}

/// The kind of a `SQL_SS_VECTOR` column: a float32 vector, else (float16) its bytes, streamed.
pub fn kind_for(desc: &ColumnDescription, _backend: Backend) -> CellKind {
    native_kind(desc.size, desc.decimal_digits).unwrap_or(CellKind::LongBinary)
}

/// The binding of [`CellKind::Vector`].
pub fn binding(kind: CellKind) -> Binding {
    match kind {
        CellKind::Vector { dims } => Binding::new(CDataType::Binary, element_len(dims)),
        _ => Binding::new(CDataType::Binary, 0),
    }
}

pub const fn element_len(dims: u16) -> usize {
    STRUCT_LEN + 4 * dims as usize
}

/// The little-endian float bytes of one cell (`STRUCT_LEN` + 4n bytes as the driver wrote them),
/// or why the cell is not an n-dimensional float32 vector.
pub fn float_bytes(cell: &[u8], dims: u16) -> Result<&[u8], String> {
    let n = dims as usize;
    if cell.len() != element_len(dims) {
        return Err(format!("a vector({n}) cell of {} bytes", cell.len()));
    }
    let got = i16::from_le_bytes([cell[0], cell[1]]);
    if usize::try_from(got).ok() != Some(n) {
        return Err(format!("a vector({n}) cell holds {got} dimensions"));
    }
    Ok(&cell[STRUCT_LEN..])
}

// Encoder: parameters and bulk loads.

/// Why a value cannot be a float32 vector element: NaN and infinities (SQL Server refuses
/// them), and finite numbers past float32's range (they would become infinities).
#[allow(
    clippy::cast_possible_truncation,
    reason = "rounding to the nearest float32 is the conversion; past its range it gives an \
              infinity, refused below"
)]
pub fn element(v: f64, i: usize) -> Result<f32, String> {
    if v.is_nan() {
        return Err(format!(
            "vector element {i} is NaN, which SQL Server's vectors cannot hold"
        ));
    }
    let f = v as f32;
    if !f.is_finite() {
        return Err(format!(
            "vector element {i} ({v}) is outside float32's range (±3.4028235e38)"
        ));
    }
    Ok(f)
}

/// A parameter's bound element: the struct (its `data` pointer left 0: `point_params` points
/// it at the floats once the buffer sits where the driver will read it), then the floats. Its
/// length is the exact byte count Driver 18 requires (16 + 4n).
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    reason = "a vector parameter holds 1 to MAX_DIMS (1998) values: py/types/vector.rs::param \
              refuses any other length"
)]
pub fn param_buffer(vals: &[f32]) -> Vec<u8> {
    let mut b = Vec::with_capacity(STRUCT_LEN + 4 * vals.len());
    b.extend_from_slice(&(vals.len() as i16).to_le_bytes());
    b.extend_from_slice(&[0u8; 14]);
    for f in vals {
        b.extend_from_slice(&f.to_le_bytes());
    }
    b
}

/// Lays a parameter column of vectors out as Driver 18 reads a parameter array: the 16-byte
/// structs of all rows first (the driver steps through them 16 bytes at a time, whatever the
/// bound length), then each row's floats, `element_len - 16` bytes apart. `data` arrives with
/// each row's struct and floats together at `r * element_len` (`params/encode.rs`); the total
/// size is the same. A NULL row's struct gets the column's dimension count. For one row the
/// two layouts are the same. Checked against Driver 18.6: with the structs `element_len`
/// apart, a second row fails (22027/22028).
pub fn array_layout(data: &mut [u8], element_len: usize, rows: usize) {
    if element_len < STRUCT_LEN || rows < 2 || data.len() < element_len * rows {
        if rows == 1 && data.len() >= STRUCT_LEN {
            fill_null_dims(&mut data[..STRUCT_LEN], element_len);
        }
        return;
    }
    // In place, so an array's floats are moved once (not copied out and back): the structs are
    // saved, then each row's floats move right to their place, last row first (row r's new
    // place lies after every earlier row's old one), then the structs fill the front.
    let floats = element_len - STRUCT_LEN;
    let structs: Vec<u8> = (0..rows)
        .flat_map(|r| &data[r * element_len..r * element_len + STRUCT_LEN])
        .copied()
        .collect();
    for r in (0..rows).rev() {
        let from = r * element_len + STRUCT_LEN;
        data.copy_within(from..from + floats, rows * STRUCT_LEN + r * floats);
    }
    for (r, saved) in structs.chunks_exact(STRUCT_LEN).enumerate() {
        let s = &mut data[r * STRUCT_LEN..(r + 1) * STRUCT_LEN];
        s.copy_from_slice(saved);
        fill_null_dims(s, element_len);
    }
}

#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    reason = "element_len is a bound vector's, 16 + 4n with n <= MAX_DIMS (1998)"
)]
fn fill_null_dims(s: &mut [u8], element_len: usize) {
    if s.len() >= 2 && s[0] == 0 && s[1] == 0 {
        let dims = ((element_len - STRUCT_LEN) / 4) as i16;
        s[..2].copy_from_slice(&dims.to_le_bytes());
    }
}

/// Points each struct of a bound vector column (`array_layout`) at its row's floats: Driver 18
/// reads the floats through that pointer (a struct without it is refused, 22027). Nothing for
/// other columns. Called as the column is bound, so the addresses are the buffer's final ones:
/// the buffer must not move or reallocate until the statement has executed
/// (`BoundParams::bind`'s contract). Idempotent.
pub fn point_params(sql_type: i16, element_len: usize, data: &mut [u8]) {
    if sql_type != SQL_SS_VECTOR || element_len < STRUCT_LEN {
        return;
    }
    // The buffer is rows * element_len bytes rounded up to 8: fewer than element_len extra.
    let rows = data.len() / element_len;
    let floats = element_len - STRUCT_LEN;
    let base = data.as_ptr() as usize;
    for r in 0..rows {
        let at = base + rows * STRUCT_LEN + r * floats;
        data[r * STRUCT_LEN + 8..r * STRUCT_LEN + 16].copy_from_slice(&(at as u64).to_ne_bytes());
    }
}

/// An output parameter of vectors: its dimension count is its `size` (`Output(array.array,
/// value, size=n)`), and it needs a connection with native vectors (a text connection would
/// get the server's varchar(max) text back, which an output's declared type cannot say).
pub fn check_output(
    kind: crate::params::OutputType,
    size: Option<usize>,
    native: bool,
    index: usize,
) -> crate::error::Result<()> {
    if kind != crate::params::OutputType::Vector {
        return Ok(());
    }
    let bad = |why: &str| {
        Err(crate::error::Error::Programming(format!(
            "parameter {index}: {why}"
        )))
    };
    if !native {
        return bad("a vector output parameter needs a connection with VectorTypeSupport=v1");
    }
    match size {
        Some(n) if (1..=MAX_DIMS as usize).contains(&n) => Ok(()),
        _ => bad("a vector output parameter needs its dimension count as size= (1 to 1998)"),
    }
}

/// The binding of a vector output parameter of `dims` dimensions: C type, SQL type, column
/// size, digits, bytes (the struct and the floats, `array_layout` / `point_params`).
pub fn output_binding(dims: usize) -> (CDataType, i16, usize, i16, usize) {
    (
        CDataType::Binary,
        SQL_SS_VECTOR,
        0,
        0,
        STRUCT_LEN + 4 * dims,
    )
}

/// The floats of an output parameter's value. Bound as `SQL_C_BINARY`, Driver 18.6 writes the
/// vector's wire form into an output buffer (`A9 01`, u16 dimensions, element type, three zero
/// bytes, the floats; its indicator 8 + 4n), not the struct a result cell gets; both are read.
pub fn output_value(cell: &[u8]) -> Result<Vec<f32>, String> {
    let floats = if cell.len() >= 8 && cell[0] == 0xA9 && cell[1] == 0x01 {
        let dims = u16::from_le_bytes([cell[2], cell[3]]) as usize;
        if cell[4] != 0 || cell.len() != 8 + 4 * dims {
            return Err(format!(
                "a vector value of {} bytes for {dims} float32 dimensions",
                cell.len()
            ));
        }
        &cell[8..]
    } else {
        let dims = cell.len().saturating_sub(STRUCT_LEN) / 4;
        let dims =
            u16::try_from(dims).map_err(|_| format!("a vector value of {} bytes", cell.len()))?;
        float_bytes(cell, dims)?
    };
    Ok(floats
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// Whether a connection string asks Driver 18 for native vectors (`VectorTypeSupport=v1` or
/// `v2`; `off`, the driver's default, or no keyword: text).
pub fn asks_native(connection_string: &str) -> bool {
    crate::connstr::parse_attributes(connection_string)
        .map(|attrs| {
            attrs.iter().any(|a| {
                a.key.eq_ignore_ascii_case("VectorTypeSupport")
                    && !a.value.trim().eq_ignore_ascii_case("off")
            })
        })
        .unwrap_or(false)
}

/// The text form of a vector (a JSON array, the shortest decimal that reads back as the same
/// float32), which SQL Server converts implicitly: parameters through FreeTDS or without
/// `VectorTypeSupport`, and bulk loads through the text path.
pub fn json_text(vals: &[f32]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(2 + vals.len() * 12);
    s.push('[');
    for (i, f) in vals.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        // Rust's f32 Debug is the shortest round-trip form (`-0.0` keeps its sign), written
        // in place (no String per element).
        let _ = write!(s, "{f:?}");
    }
    s.push(']');
    s
}

/// The opt-in parse of SQL Server's text form (`[1.0000000e+000,...]`, or any JSON array of
/// numbers) into float32 values. SQL Server's 8 significant digits do not always name a
/// float32 exactly: the value read is the nearest float32 to the text.
pub fn parse_text(s: &str) -> Result<Vec<f32>, String> {
    let inner = s
        .trim()
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .ok_or_else(|| format!("not a JSON array of numbers: {:.40}", s))?;
    if inner.trim().is_empty() {
        return Ok(Vec::new());
    }
    inner
        .split(',')
        .enumerate()
        .map(|(i, x)| {
            let v: f64 = x
                .trim()
                .parse()
                .map_err(|_| format!("vector element {i} is not a number: {:.40}", x.trim()))?;
            element(v, i)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_and_kinds() {
        assert_eq!(native_kind(28, 0), Some(CellKind::Vector { dims: 3 }));
        assert_eq!(native_kind(8008, 0), Some(CellKind::Vector { dims: 1998 }));
        assert_eq!(native_kind(16, 0), None);
        assert_eq!(native_kind(28, 1), None, "float16 is not bound");
        let mut cell = param_buffer(&[1.0, -0.0, 3.5]);
        array_layout(&mut cell, 28, 1);
        point_params(SQL_SS_VECTOR, cell.len(), &mut cell);
        let at = usize::try_from(u64::from_ne_bytes(cell[8..16].try_into().unwrap())).unwrap();
        assert_eq!(at, cell.as_ptr() as usize + STRUCT_LEN);
        let f = float_bytes(&cell, 3).unwrap();
        assert_eq!(f, &[0, 0, 0x80, 0x3F, 0, 0, 0, 0x80, 0, 0, 0x60, 0x40]);
        assert!(float_bytes(&cell, 2).is_err());
    }

    #[test]
    fn parameter_arrays_are_structs_then_floats() {
        let (a, b) = (param_buffer(&[1.0, 2.0]), param_buffer(&[3.0, 4.0]));
        let mut data = [a.clone(), vec![0; 24], b.clone(), vec![0; 8]].concat();
        array_layout(&mut data, 24, 3);
        point_params(SQL_SS_VECTOR, 24, &mut data);
        let base = data.as_ptr() as usize;
        for (r, want) in [(0usize, Some(&a)), (1, None), (2, Some(&b))] {
            let s = &data[r * 16..r * 16 + 16];
            assert_eq!(
                i16::from_le_bytes([s[0], s[1]]),
                2,
                "row {r}: dimension (NULL too)"
            );
            let at =
                usize::try_from(u64::from_ne_bytes(s[8..16].try_into().unwrap())).unwrap() - base;
            assert_eq!(at, 3 * 16 + r * 8);
            if let Some(w) = want {
                assert_eq!(&data[at..at + 8], &w[16..]);
            }
        }
    }

    #[test]
    fn output_values_in_either_form() {
        let mut wire = vec![0xA9, 0x01, 2, 0, 0, 0, 0, 0];
        wire.extend_from_slice(&[0, 0, 0x80, 0x3F, 0, 0, 0, 0xC0]);
        assert_eq!(output_value(&wire).unwrap(), vec![1.0, -2.0]);
        assert_eq!(
            output_value(&param_buffer(&[1.0, -2.0])).unwrap(),
            vec![1.0, -2.0]
        );
        assert!(output_value(&wire[..12]).is_err());
    }

    #[test]
    fn connection_strings_that_ask_for_native_vectors() {
        assert!(asks_native(
            "Driver={ODBC Driver 18 for SQL Server};VectorTypeSupport=v1"
        ));
        assert!(asks_native("vectortypesupport = V1;Server=x"));
        assert!(!asks_native("Driver=x;VectorTypeSupport=off"));
        assert!(!asks_native("Driver=x;Server=y"));
    }

    #[test]
    fn elements_and_text() {
        assert!(element(f64::NAN, 0).is_err());
        assert!(element(f64::INFINITY, 0).is_err());
        assert!(element(1e39, 0).is_err());
        assert_eq!(element(3.4028234663852886e38, 0).unwrap(), f32::MAX);
        let vals = [f32::MAX, -f32::MAX, f32::from_bits(1), -0.0, 0.1];
        assert_eq!(parse_text(&json_text(&vals)).unwrap(), vals.to_vec());
        assert_eq!(
            parse_text("[1.0000000e-001,2.0000000e+000]").unwrap(),
            vec![0.1, 2.0]
        );
        assert!(parse_text("[1,x]").is_err());
        assert!(parse_text("1,2").is_err());
    }
}
