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
use crate::odbc::sys::CDataType;

pub(crate) mod arrow;

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
pub fn kind_for(size: usize, digits: i16) -> Option<CellKind> {
    let dims = size.checked_sub(STRUCT_LEN)? / 4;
    (digits == 0 && (1..=MAX_DIMS as usize).contains(&dims) && size == STRUCT_LEN + 4 * dims)
        .then_some(CellKind::Vector { dims: dims as u16 })
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
    if got as usize != n {
        return Err(format!("a vector({n}) cell holds {got} dimensions"));
    }
    Ok(&cell[STRUCT_LEN..])
}

// Encoder: parameters and bulk loads.

/// Why a value cannot be a float32 vector element: NaN and infinities (SQL Server refuses
/// them), and finite numbers past float32's range (they would become infinities).
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

/// A parameter's bound buffer: the struct (its `data` pointer left 0: the binder points it at
/// the floats once the buffer sits where the driver will read it, `point_at_floats`), then the
/// floats. Its length is the exact byte count Driver 18 requires.
pub fn param_buffer(vals: &[f32]) -> Vec<u8> {
    let mut b = Vec::with_capacity(STRUCT_LEN + 4 * vals.len());
    b.extend_from_slice(&(vals.len() as i16).to_le_bytes());
    b.extend_from_slice(&[0u8; 14]);
    for f in vals {
        b.extend_from_slice(&f.to_le_bytes());
    }
    b
}

/// Points the struct at the start of `buf` to the floats that follow it.
///
/// The pointer is an address inside `buf`: `buf` must not move or reallocate between this call
/// and the driver's last read of it (the parameter batch keeps it in place while bound).
pub fn point_at_floats(buf: &mut [u8]) {
    if buf.len() >= STRUCT_LEN {
        let at = buf.as_ptr() as usize + STRUCT_LEN;
        buf[8..16].copy_from_slice(&(at as u64).to_le_bytes());
    }
}

/// The text form of a vector (a JSON array, the shortest decimal that reads back as the same
/// float32), which SQL Server converts implicitly: parameters through FreeTDS or without
/// `VectorTypeSupport`, and bulk loads through the text path.
pub fn json_text(vals: &[f32]) -> String {
    let mut s = String::with_capacity(2 + vals.len() * 12);
    s.push('[');
    for (i, f) in vals.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        // Rust's f32 Display is the shortest round-trip form; `-0` keeps its sign.
        s.push_str(&format!("{f:?}"));
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
        assert_eq!(kind_for(28, 0), Some(CellKind::Vector { dims: 3 }));
        assert_eq!(kind_for(8008, 0), Some(CellKind::Vector { dims: 1998 }));
        assert_eq!(kind_for(16, 0), None);
        assert_eq!(kind_for(28, 1), None, "float16 is not bound");
        let mut cell = param_buffer(&[1.0, -0.0, 3.5]);
        point_at_floats(&mut cell);
        let f = float_bytes(&cell, 3).unwrap();
        assert_eq!(f, &[0, 0, 0x80, 0x3F, 0, 0, 0, 0x80, 0, 0, 0x60, 0x40]);
        assert!(float_bytes(&cell, 2).is_err());
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
