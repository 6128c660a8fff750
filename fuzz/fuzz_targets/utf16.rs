//! The one UTF-16 → `str` decoder (`py::types::text::utf16_to_str`) and its classification, and the
//! Arrow columns' UTF-16 → UTF-8 transcoder (`arrow::text::utf16_to_utf8`), against references:
//! std's UTF-16 decoding and CPython's own codec with the same policy.
//! Input: native-endian code units (an odd trailing byte is dropped).
#![no_main]

use _native::arrow::text::utf16_to_utf8;
use _native::types::text::{TextClass, TextErrors, classify_utf16, first_lone_surrogate};
use _native::py::types::text::{TextFailure, utf16_to_str};
use libfuzzer_sys::fuzz_target;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// The code points of `units` with each lone surrogate kept as itself (`surrogatepass`), and
/// the index of the first lone one.
fn reference(units: &[u16]) -> (Vec<u32>, Option<usize>) {
    let mut points = Vec::with_capacity(units.len());
    let mut first = None;
    let mut at = 0;
    for r in char::decode_utf16(units.iter().copied()) {
        match r {
            Ok(c) => {
                points.push(c as u32);
                at += c.len_utf16();
            }
            Err(e) => {
                first.get_or_insert(at);
                points.push(e.unpaired_surrogate() as u32);
                at += 1;
            }
        }
    }
    (points, first)
}

fn code_points(s: &Bound<'_, PyAny>) -> Vec<u32> {
    let b = s
        .call_method1("encode", ("utf-32-le", "surrogatepass"))
        .unwrap();
    let b = b.cast::<PyBytes>().unwrap().as_bytes();
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fuzz_target!(init: { Python::initialize(); }, |data: &[u8]| {
    let units: Vec<u16> = data
        .chunks_exact(2)
        .map(|c| u16::from_ne_bytes([c[0], c[1]]))
        .collect();
    let (points, first) = reference(&units);
    assert_eq!(first_lone_surrogate(&units), first);
    let max = units.iter().copied().max().unwrap_or(0);
    let has_surrogate = units.iter().any(|u| (0xD800..0xE000).contains(u));
    match classify_utf16(&units) {
        TextClass::Ascii => assert!(max < 0x80),
        TextClass::Latin1 => assert!((0x80..0x100).contains(&max)),
        TextClass::Bmp { max: m } => assert!(m == max && max >= 0x100 && !has_surrogate),
        TextClass::Surrogates => assert!(has_surrogate),
    }
    for replace in [false, true] {
        // Appended after a byte already in the buffer, as a cell after the batch's others.
        let mut out = vec![b'x'];
        match utf16_to_utf8(&units, &mut out, replace) {
            Ok(()) => {
                let want: String = points
                    .iter()
                    .map(|&p| char::from_u32(p).unwrap_or('\u{FFFD}'))
                    .collect();
                assert!(replace || first.is_none(), "strict accepted a lone surrogate");
                assert_eq!(std::str::from_utf8(&out[1..]), Ok(&*want));
            }
            Err(e) => {
                assert!(!replace, "replace refused a cell");
                assert_eq!(Some(e.at), first);
            }
        }
    }
    Python::attach(|py| {
        for policy in [TextErrors::Strict, TextErrors::Replace, TextErrors::SurrogatePass] {
            match utf16_to_str(py, &units, policy) {
                Ok(s) => {
                    let got = code_points(&s);
                    let want: Vec<u32> = match policy {
                        TextErrors::Strict => {
                            assert!(first.is_none(), "strict accepted a lone surrogate");
                            points.clone()
                        }
                        TextErrors::Replace => points
                            .iter()
                            .map(|&p| if (0xD800..0xE000).contains(&p) { 0xFFFD } else { p })
                            .collect(),
                        TextErrors::SurrogatePass => points.clone(),
                    };
                    assert_eq!(got, want, "{policy:?}");
                    // CPython compares strings kind first: equal to the codec's own string only
                    // if ours has the narrowest kind (the compact-string invariant).
                    let bytes: Vec<u8> = want.iter().flat_map(|p| p.to_le_bytes()).collect();
                    let canonical = PyBytes::new(py, &bytes)
                        .call_method1("decode", ("utf-32-le", "surrogatepass"))
                        .unwrap();
                    assert!(s.eq(&canonical).unwrap(), "{policy:?}: not the canonical str");
                }
                Err(TextFailure::LoneSurrogate(at)) => {
                    assert_eq!(policy, TextErrors::Strict);
                    assert_eq!(Some(at), first);
                }
                Err(TextFailure::Python(e)) => panic!("{policy:?}: Python raised {e}"),
            }
        }
    });
});
