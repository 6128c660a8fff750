//! The numeric decoders (DECIMAL / NUMERIC / MONEY cells): driver text → parts → the Decimal
//! fast path (`py::types::decimal::new_decimal`, which writes libmpdec's layout directly), and
//! `SQL_NUMERIC_STRUCT` → parts, each against `decimal.Decimal(text)`.
#![no_main]

use _native::types::decimal::{DecimalParts, decimal_parts, decimal_text};
use _native::py::types::decimal::{DecimalFailure, decimal_from_parts, new_decimal};
use libfuzzer_sys::fuzz_target;
use pyo3::prelude::*;

fn reference<'py>(py: Python<'py>, text: &str) -> Bound<'py, PyAny> {
    py.import("decimal")
        .unwrap()
        .getattr("Decimal")
        .unwrap()
        .call1((text,))
        .unwrap()
}

/// Same value and same exponent (`12.30` is not `12.3`): compare `str()` as well as `==`.
fn assert_same(got: &Bound<'_, PyAny>, want: &Bound<'_, PyAny>, what: &str) {
    let (g, w) = (got.str().unwrap(), want.str().unwrap());
    // NaN equals nothing, itself included: for it the text is the whole comparison.
    let nan = want.call_method0("is_nan").unwrap().is_truthy().unwrap();
    assert!(nan || got.eq(want).unwrap(), "{what}: {g} != {w}");
    assert_eq!(g.to_cow().unwrap(), w.to_cow().unwrap(), "{what}");
    let _ = got.call_method0("__hash__").unwrap();
}

fuzz_target!(init: { Python::initialize(); }, |data: &[u8]| {
    Python::attach(|py| {
        // Driver text.
        let text = decimal_text(data);
        let parts = decimal_parts(data);
        if parts.is_some() {
            assert!(text.is_some(), "parts of text decimal_text refuses");
        }
        match new_decimal(py, data) {
            Ok(d) => {
                let t = text.expect("a Decimal from text decimal_text refuses");
                assert_same(&d, &reference(py, t), "new_decimal");
                if let Some(p) = parts {
                    assert_same(&reference(py, &p.to_text()), &d, "to_text");
                }
            }
            Err(DecimalFailure::NotDecimal) => assert!(text.is_none()),
            Err(DecimalFailure::Python(e)) => panic!("new_decimal raised {e}"),
        }
        // SQL_NUMERIC_STRUCT: precision, scale, sign, 16-byte little-endian magnitude.
        if let Ok(raw) = <[u8; 19]>::try_from(data.get(..19).unwrap_or(&[])) {
            if let Some(p) = DecimalParts::from_numeric(&raw) {
                let mag = u128::from_le_bytes(raw[3..19].try_into().unwrap());
                let scale = raw[1] as i8 as i32;
                let sign = if raw[2] == 0 { "-" } else { "" };
                let want = reference(py, &format!("{sign}{mag}E-{scale}"));
                let got = decimal_from_parts(py, &p).unwrap();
                assert!(got.eq(&want).unwrap(), "numeric struct {raw:?}");
                assert_same(&reference(py, &p.to_text()), &got, "numeric to_text");
            }
        }
    });
});
