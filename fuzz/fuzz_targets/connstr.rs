//! The connection-string builder: `quote_value` must make every value read back exactly by the
//! ODBC grammar (`parse`), `redact` must never show a secret, and `validate` / `parse` must
//! never panic on any text.
#![no_main]

use _native::connection::validate_connection_string;
use _native::connstr::{attribute, is_secret_key, parse, quote_value, redact};
use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;

fn run(u: &mut Unstructured<'_>) -> Result<()> {
    // Arbitrary text: no panic, and a parsed secret never survives redaction.
    let raw: String = u.arbitrary()?;
    let _ = validate_connection_string(&raw);
    let shown = redact(&raw);
    if let Ok(attrs) = parse(&raw) {
        for a in attrs.iter().filter(|a| is_secret_key(&a.key)) {
            if checkable(&a.value) && !shown_elsewhere(&attrs, &a.value) {
                assert!(!shown.contains(a.value.as_str()), "{raw:?} -> {shown:?}");
            }
        }
    }
    // Built from pieces: every value comes back exactly, keys and order kept.
    let mut pairs: Vec<(String, String)> = Vec::new();
    for _ in 0..u.int_in_range(1..=5usize)? {
        let key: String = u.arbitrary()?;
        // A key is plain text (the grammar has no quoting for keys).
        if key.is_empty() || key.contains(['=', ';', '{', '}']) || key.trim() != key {
            continue;
        }
        pairs.push((key, u.arbitrary()?));
    }
    let built = pairs
        .iter()
        .map(|(k, v)| attribute(k, v))
        .collect::<Vec<_>>()
        .join(";");
    let parsed = parse(&built).expect("a built connection string parses");
    assert_eq!(parsed.len(), pairs.len(), "{built:?}");
    for ((k, v), a) in pairs.iter().zip(&parsed) {
        assert_eq!(&a.key, k, "{built:?}");
        assert_eq!(&a.value, v, "{built:?}");
        assert_eq!(a.braced, quote_value(v) != *v);
    }
    if !built.contains('\0') && built.len() <= 32_000 && !built.trim().is_empty() {
        validate_connection_string(&built).expect("a built connection string is valid");
    }
    let shown = redact(&built);
    for (k, v) in &pairs {
        if is_secret_key(k) && checkable(v) && !shown_elsewhere(&parsed, v) {
            assert!(!shown.contains(v.as_str()), "{built:?} -> {shown:?}");
        }
    }
    Ok(())
}

/// A secret whose absence from the redacted text can be checked: at least 4 alphanumerics
/// (text with `;` or `=` could span two attributes of the output).
fn checkable(secret: &str) -> bool {
    secret.chars().count() >= 4 && secret.chars().all(char::is_alphanumeric)
}

/// Whether `secret` also appears in a key or a non-secret value (then it is shown legitimately).
fn shown_elsewhere(attrs: &[_native::connstr::Attribute], secret: &str) -> bool {
    attrs
        .iter()
        .any(|a| a.key.contains(secret) || (!is_secret_key(&a.key) && a.value.contains(secret)))
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
