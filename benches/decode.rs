//! The engine's own decode functions on bound buffers filled as a driver fills them: no
//! database, no driver. `ColumnBuffer`s come from a real `ResultPlan` and `Batch`; cells are
//! read with the engine's accessors, turned into objects by the engine's decoders
//! (`py::types::text::utf16_to_str`, `py::types::decimal::new_decimal`) and into rows by its row builder
//! (`py::decode::build_rows`). Where a group compares, the other side is what a peer does
//! (CPython's UTF-16 decoder, `Decimal(text)`), never a copy of engine code.
//!
//! Wall-clock noise on a shared 2-core machine is large: read ratios within a run, not
//! absolute times across runs. Run: `cargo bench --features python,bench-internals --bench
//! decode` (see eng/profiler/README.md).

#![allow(
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    clippy::cast_possible_truncation,
    reason = "synthetic fixtures: row counts and values far below every type's range"
)]

use _native::arrow::text::utf16_to_utf8;
use _native::backend::Dbms;
use _native::batch::{Batch, ColumnBuffer};
use _native::odbc::ColumnDescription;
use _native::plan::ResultPlan;
use _native::py::decode::RowObject::Row;
use _native::py::plan::PyPlan;
use _native::types::decimal::{DecimalParts, decimal_parts, decimal_text};
use _native::types::guid::guid_to_u128;
use _native::types::text::{TextClass, TextErrors, classify_utf16};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Arc;

const ROWS: usize = 1000;

// ---- synthetic text datasets ----------------------------------------------------------------

/// One string per row, ~20 characters each, in the four classes the decoder distinguishes.
fn dataset(class: &str) -> Vec<String> {
    (0..ROWS)
        .map(|i| match class {
            "ascii" => format!("customer-{i:06}-abcdef"),
            "latin1" => format!("Müller-Ångström {i}"),
            "bmp" => format!("Ωμέγα 中文データ {i}"),
            "surrogates" => format!("emoji 😀 row {i} 🙂"),
            _ => unreachable!(),
        })
        .collect()
}

const CLASSES: [&str; 4] = ["ascii", "latin1", "bmp", "surrogates"];

/// A bound NVARCHAR(50) column of `strings`, as the driver fills it.
fn text_batch(strings: &[String]) -> Batch {
    let plan = ResultPlan::build(vec![desc("s", -9, 50, 0)], Dbms::SqlServer);
    let mut batch = Batch::new(&plan, strings.len());
    for (r, s) in strings.iter().enumerate() {
        let bytes: Vec<u8> = s.encode_utf16().flat_map(u16::to_ne_bytes).collect();
        batch.columns[0].put_cell(r, &bytes, bytes.len() as isize);
    }
    batch
}

fn cells(col: &ColumnBuffer, rows: usize) -> impl Iterator<Item = &[u16]> {
    (0..rows).map(move |r| col.text(r).expect("no NULLs or cut cells in text datasets"))
}

// ---- pure-Rust decode helpers ---------------------------------------------------------------

fn bench_classify(c: &mut Criterion) {
    let mut g = c.benchmark_group("classify_utf16");
    g.throughput(Throughput::Elements(ROWS as u64));
    for class in CLASSES {
        let batch = text_batch(&dataset(class));
        g.bench_with_input(BenchmarkId::new("classify", class), &batch, |b, batch| {
            b.iter(|| {
                cells(&batch.columns[0], ROWS)
                    .map(|u| classify_utf16(black_box(u)))
                    .filter(|k| *k == TextClass::Ascii)
                    .count()
            })
        });
    }
    g.finish();
}

/// The Arrow columns' UTF-16 -> UTF-8 transcoder (into one value buffer, as a text column is
/// built) against std's decoding pushed into the same kind of buffer.
fn bench_utf16_to_utf8(c: &mut Criterion) {
    let mut g = c.benchmark_group("utf16_to_utf8");
    g.throughput(Throughput::Elements(ROWS as u64));
    for class in CLASSES {
        let batch = text_batch(&dataset(class));
        g.bench_with_input(BenchmarkId::new("arrow", class), &batch, |b, batch| {
            let mut out = Vec::with_capacity(ROWS * 64);
            b.iter(|| {
                out.clear();
                for u in cells(&batch.columns[0], ROWS) {
                    let _ = utf16_to_utf8(black_box(u), &mut out, false);
                }
                out.len()
            })
        });
        g.bench_with_input(BenchmarkId::new("std", class), &batch, |b, batch| {
            let mut out = Vec::with_capacity(ROWS * 64);
            b.iter(|| {
                out.clear();
                for u in cells(&batch.columns[0], ROWS) {
                    for ch in char::decode_utf16(black_box(u).iter().copied()) {
                        let mut buf = [0u8; 4];
                        let ch = ch.unwrap_or(char::REPLACEMENT_CHARACTER);
                        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                    }
                }
                out.len()
            })
        });
    }
    g.finish();
}

fn bench_decimal_and_guid(c: &mut Criterion) {
    let decimals: Vec<Vec<u8>> = (0..ROWS as i64)
        .map(|i| format!("{}.{:04}", i * 7919 - 500_000, i % 10_000).into_bytes())
        .collect();
    let guids: Vec<[u8; 16]> = (0..ROWS as u128)
        .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).to_le_bytes())
        .collect();
    let mut g = c.benchmark_group("fixed_cells");
    g.throughput(Throughput::Elements(ROWS as u64));
    g.bench_function("decimal_text", |b| {
        b.iter(|| {
            decimals
                .iter()
                .filter_map(|d| decimal_text(black_box(d)))
                .map(str::len)
                .sum::<usize>()
        })
    });
    g.bench_function("decimal_parts", |b| {
        b.iter(|| {
            decimals
                .iter()
                .filter_map(|d| decimal_parts(black_box(d)))
                .map(|p| p.words[0])
                .fold(0u64, |a, v| a ^ v)
        })
    });
    let numerics: Vec<[u8; 19]> = (0..ROWS as u128)
        .map(|i| {
            let mut raw = [0u8; 19];
            raw[0] = 18;
            raw[1] = 4;
            raw[2] = (i % 2) as u8;
            raw[3..].copy_from_slice(&(i * 7_919_000_003).to_le_bytes());
            raw
        })
        .collect();
    g.bench_function("numeric_struct_parts", |b| {
        b.iter(|| {
            numerics
                .iter()
                .filter_map(|n| DecimalParts::from_numeric(black_box(n)))
                .map(|p| p.words[0])
                .fold(0u64, |a, v| a ^ v)
        })
    });
    g.bench_function("guid_to_u128", |b| {
        b.iter(|| {
            guids
                .iter()
                .map(|&raw| guid_to_u128(black_box(raw)))
                .fold(0u128, |a, v| a ^ v)
        })
    });
    g.finish();
}

fn desc(name: &str, sql_type: i16, size: usize, digits: i16) -> ColumnDescription {
    ColumnDescription {
        name: name.into(),
        sql_type,
        size,
        decimal_digits: digits,
        nullable: Some(true),
        unsigned: false,
    }
}

/// The peer's `mixed` shape as msodbcsql describes it.
fn mixed_descs() -> Vec<ColumnDescription> {
    vec![
        desc("id", 4, 10, 0),
        desc("big", -5, 19, 0),
        desc("f", 6, 53, 0),
        desc("name", -9, 50, 0),
        desc("ts", 93, 27, 7),
        desc("amount", 3, 18, 4),
        desc("flag", -7, 1, 0),
        desc("note", -9, 100, 0),
    ]
}

fn bench_plan(c: &mut Criterion) {
    let mut g = c.benchmark_group("plan");
    g.bench_function("ResultPlan::build mixed (8 columns)", |b| {
        b.iter(|| ResultPlan::build(black_box(mixed_descs()), Dbms::SqlServer))
    });
    let wide: Vec<ColumnDescription> = (0..32)
        .map(|k| match k % 5 {
            0 => desc("i", 4, 10, 0),
            1 => desc("s", -9, 30, 0),
            2 => desc("f", 6, 53, 0),
            3 => desc("t", 93, 23, 3),
            _ => desc("d", 3, 12, 2),
        })
        .collect();
    g.bench_function("ResultPlan::build wide32", |b| {
        b.iter(|| ResultPlan::build(black_box(wide.clone()), Dbms::SqlServer))
    });
    let plan = ResultPlan::build(mixed_descs(), Dbms::SqlServer);
    for rows in [32usize, 1024] {
        g.bench_with_input(
            BenchmarkId::new("Batch::new mixed", rows),
            &rows,
            |b, &rows| b.iter(|| _native::batch::Batch::new(black_box(&plan), rows)),
        );
    }
    g.finish();
}

// ---- UTF-16 -> str with an embedded interpreter ---------------------------------------------

/// CPython's own decoder (what pyodbc and mssql-python use), lossless for lone surrogates.
fn via_decode_utf16<'py>(py: Python<'py>, units: &[u16]) -> Bound<'py, PyAny> {
    let mut byteorder: std::os::raw::c_int = -1; // little-endian; 0 would eat a leading U+FEFF
    // SAFETY: the pointer/length describe `units`; the error handler name is a C string literal.
    unsafe {
        let ptr = ffi::PyUnicode_DecodeUTF16(
            units.as_ptr().cast(),
            (units.len() * 2) as ffi::Py_ssize_t,
            c"surrogatepass".as_ptr(),
            &raw mut byteorder,
        );
        Bound::from_owned_ptr(py, ptr)
    }
}

/// The engine's decoder (the one every fetch path uses).
fn via_engine<'py>(py: Python<'py>, units: &[u16]) -> Bound<'py, PyAny> {
    match _native::py::types::text::utf16_to_str(py, units, TextErrors::SurrogatePass) {
        Ok(s) => s,
        Err(_) => panic!("the engine refused text CPython decodes"),
    }
}

/// The naive route: UTF-16 -> Rust String (UTF-8) -> PyUnicode_FromStringAndSize.
fn via_utf8<'py>(py: Python<'py>, units: &[u16]) -> Bound<'py, PyAny> {
    PyString::new(py, &String::from_utf16_lossy(units)).into_any()
}

type Decoder = for<'py> fn(Python<'py>, &[u16]) -> Bound<'py, PyAny>;
const DECODERS: [(&str, Decoder); 3] = [
    ("PyUnicode_DecodeUTF16", via_decode_utf16),
    ("engine utf16_to_str", via_engine),
    ("utf8_roundtrip", via_utf8),
];

fn bench_utf16_to_str(c: &mut Criterion) {
    let mut g = c.benchmark_group("utf16_to_str");
    g.throughput(Throughput::Elements(ROWS as u64));
    for class in CLASSES {
        let batch = text_batch(&dataset(class));
        let col = &batch.columns[0];
        Python::attach(|py| {
            for u in cells(col, ROWS) {
                let reference = via_decode_utf16(py, u);
                assert!(
                    via_engine(py, u).eq(&reference).unwrap(),
                    "decoders disagree on {class}"
                );
            }
        });
        for (name, decode) in DECODERS {
            g.bench_with_input(BenchmarkId::new(name, class), col, |b, col| {
                Python::attach(|py| {
                    b.iter(|| {
                        cells(col, ROWS).for_each(|u| drop(black_box(decode(py, black_box(u)))))
                    })
                })
            });
        }
    }
    g.finish();
}

// ---- rows: the engine's row builder over the mixed shape -----------------------------------

/// A full row array of the peer's `mixed` shape (8 columns, every 7th `note` NULL).
fn mixed_batch(plan: &ResultPlan) -> Batch {
    let mut batch = Batch::new(plan, ROWS);
    let wide = |s: String| -> Vec<u8> { s.encode_utf16().flat_map(u16::to_ne_bytes).collect() };
    for r in 0..ROWS {
        let cols = &mut batch.columns;
        cols[0].put_cell(r, &(r as i32).to_ne_bytes(), 4);
        cols[1].put_cell(r, &(r as i64 * 1_000_003).to_ne_bytes(), 8);
        cols[2].put_cell(r, &(r as f64 * 0.25).to_ne_bytes(), 8);
        let name = wide(format!("customer-{r:06}"));
        cols[3].put_cell(r, &name, name.len() as isize);
        // SQL_TIMESTAMP_STRUCT: year, month, day, hour, minute, second (i16/u16), fraction (u32).
        let mut ts = Vec::with_capacity(16);
        for v in [
            2024u16,
            1 + (r % 12) as u16,
            1 + (r % 28) as u16,
            12,
            30,
            15,
        ] {
            ts.extend(v.to_ne_bytes());
        }
        ts.extend(123_456_700u32.to_ne_bytes());
        cols[4].put_cell(r, &ts, 16);
        let amount = format!("{}.{:04}", r as i64 * 7919 - 500_000, r % 10_000).into_bytes();
        cols[5].put_cell(r, &amount, amount.len() as isize);
        cols[6].put_cell(r, &[(r % 2) as u8], 1);
        if r % 7 == 0 {
            cols[7].put_cell(r, &[], -1);
        } else {
            let note = wide(format!("note {r} é"));
            cols[7].put_cell(r, &note, note.len() as isize);
        }
    }
    batch
}

fn bench_build_rows(c: &mut Criterion) {
    // Text-bound decimals (FreeTDS's binding, and what `Decimal(text)` competes with).
    let plan = Arc::new(ResultPlan::build(mixed_descs(), Dbms::Other));
    let batch = mixed_batch(&plan);
    Python::attach(|py| {
        let py_plan = PyPlan::build(
            py,
            plan.clone(),
            0,
            0,
            &HashMap::new(),
            TextErrors::Strict,
            false,
            false,
            false,
        )
        .unwrap();
        let mut rows = Vec::new();
        let failure =
            _native::py::decode::build_rows(py, &py_plan, Row, &batch, 0..ROWS, 0, &mut rows)
                .unwrap();
        assert!(
            failure.is_none() && rows.len() == ROWS,
            "the mixed batch did not decode"
        );
        let mut g = c.benchmark_group("build_rows_mixed_1000x8");
        g.throughput(Throughput::Elements(ROWS as u64));
        g.bench_function("engine build_rows", |b| {
            b.iter(|| {
                let mut out = Vec::with_capacity(ROWS);
                let failure = _native::py::decode::build_rows(
                    py,
                    &py_plan,
                    Row,
                    black_box(&batch),
                    0..ROWS,
                    0,
                    &mut out,
                )
                .unwrap();
                assert!(failure.is_none());
                out
            })
        });
        g.finish();
    });
}

/// Decimal objects from driver text: `Decimal(text)` against the verified-layout build.
fn bench_decimal_objects(c: &mut Criterion) {
    let decimals: Vec<Vec<u8>> = (0..ROWS as i64)
        .map(|i| format!("{}.{:04}", i * 7919 - 500_000, i % 10_000).into_bytes())
        .collect();
    Python::attach(|py| {
        let ctor = py.import("decimal").unwrap().getattr("Decimal").unwrap();
        for d in &decimals {
            let want = ctor.call1((std::str::from_utf8(d).unwrap(),)).unwrap();
            let got = _native::py::types::decimal::new_decimal(py, d)
                .ok()
                .unwrap();
            assert!(
                want.eq(&got).unwrap()
                    && want.str().unwrap().to_str().unwrap()
                        == got.str().unwrap().to_str().unwrap()
            );
        }
        assert!(
            _native::py::types::decimal::fast_path(py),
            "layout did not verify"
        );
        let mut g = c.benchmark_group("decimal_objects");
        g.throughput(Throughput::Elements(ROWS as u64));
        g.bench_function("Decimal(text)", |b| {
            b.iter(|| {
                for d in &decimals {
                    black_box(ctor.call1((std::str::from_utf8(d).unwrap(),)).unwrap());
                }
            })
        });
        g.bench_function("verified layout", |b| {
            b.iter(|| {
                for d in &decimals {
                    drop(black_box(
                        _native::py::types::decimal::new_decimal(py, black_box(d))
                            .ok()
                            .unwrap(),
                    ));
                }
            })
        });
        g.finish();
    });
}

fn python_benches(c: &mut Criterion) {
    Python::initialize();
    bench_utf16_to_str(c);
    bench_build_rows(c);
    bench_decimal_objects(c);
}

criterion_group!(
    pure,
    bench_classify,
    bench_utf16_to_utf8,
    bench_decimal_and_guid,
    bench_plan
);
criterion_group!(embedded, python_benches);
criterion_main!(pure, embedded);
