//! Decode and row-assembly paths on synthetic bound buffers: no database, no driver.
//!
//! Each group answers one design question, comparing variants on identical input in the same run
//! (wall-clock noise on a shared 2-core machine is large: read ratios within a run, not absolute
//! times across runs). Variants that build Python objects are checked for equal results before
//! timing. Run: `cargo bench --features python --bench decode` (see eng/profiler/README.md).
//!
//! Buffers are laid out exactly as the driver writes them: odbc-api's `TextColumn<u16>`
//! (strided UTF-16 elements + byte-length indicators) and plain value/indicator vectors.

use _native::backend::Dbms;
use _native::decode::{
    DecimalParts, TextClass, classify_utf16, decimal_parts, decimal_text, guid_to_u128,
};
use _native::odbc::ColumnDescription;
use _native::plan::ResultPlan;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use odbc_api::buffers::TextColumn;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};
use std::hint::black_box;

const ROWS: usize = 1000;
/// SQL Server's NULL indicator.
const NULL_DATA: isize = -1;

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

/// A bound NVARCHAR(50) column as the driver fills it.
fn text_column(strings: &[String]) -> TextColumn<u16> {
    let mut col = TextColumn::<u16>::new(strings.len(), 50);
    for (r, s) in strings.iter().enumerate() {
        let units: Vec<u16> = s.encode_utf16().collect();
        col.set_value(r, Some(&units));
    }
    col
}

fn cells(col: &TextColumn<u16>, rows: usize) -> impl Iterator<Item = &[u16]> {
    (0..rows).map(move |r| col.value_at(r).expect("no NULLs in text datasets"))
}

// ---- pure-Rust decode helpers ---------------------------------------------------------------

fn bench_classify(c: &mut Criterion) {
    let mut g = c.benchmark_group("classify_utf16");
    g.throughput(Throughput::Elements(ROWS as u64));
    for class in CLASSES {
        let col = text_column(&dataset(class));
        g.bench_with_input(BenchmarkId::new("classify", class), &col, |b, col| {
            b.iter(|| {
                cells(col, ROWS)
                    .map(|u| classify_utf16(black_box(u)))
                    .filter(|k| *k == TextClass::Ascii)
                    .count()
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
            &mut byteorder,
        );
        Bound::from_owned_ptr(py, ptr)
    }
}

/// Build the compact string directly in the narrowest kind (the engine's approach, §5.2).
fn via_compact<'py>(py: Python<'py>, units: &[u16]) -> Bound<'py, PyAny> {
    let (maxchar, one_byte) = match classify_utf16(units) {
        TextClass::Ascii => (127, true),
        TextClass::Latin1 => (255, true),
        TextClass::Bmp { max } => (max as ffi::Py_UCS4, false),
        TextClass::Surrogates => return via_decode_utf16(py, units),
    };
    // SAFETY: PyUnicode_New returns a fresh string of `len` code points of the kind implied by
    // `maxchar` (1 byte for < 256, else 2); we fill exactly that many before anyone sees it.
    unsafe {
        let s = ffi::PyUnicode_New(units.len() as ffi::Py_ssize_t, maxchar);
        let data = ffi::PyUnicode_DATA(s);
        if one_byte {
            let out = std::slice::from_raw_parts_mut(data.cast::<u8>(), units.len());
            for (o, &u) in out.iter_mut().zip(units) {
                *o = u as u8;
            }
        } else {
            std::ptr::copy_nonoverlapping(units.as_ptr(), data.cast::<u16>(), units.len());
        }
        Bound::from_owned_ptr(py, s)
    }
}

/// The naive route: UTF-16 -> Rust String (UTF-8) -> PyUnicode_FromStringAndSize.
fn via_utf8<'py>(py: Python<'py>, units: &[u16]) -> Bound<'py, PyAny> {
    PyString::new(py, &String::from_utf16_lossy(units)).into_any()
}

type Decoder = for<'py> fn(Python<'py>, &[u16]) -> Bound<'py, PyAny>;
const DECODERS: [(&str, Decoder); 3] = [
    ("PyUnicode_DecodeUTF16", via_decode_utf16),
    ("compact", via_compact),
    ("utf8_roundtrip", via_utf8),
];

fn bench_utf16_to_str(c: &mut Criterion) {
    let mut g = c.benchmark_group("utf16_to_str");
    g.throughput(Throughput::Elements(ROWS as u64));
    for class in CLASSES {
        let col = text_column(&dataset(class));
        Python::attach(|py| {
            for (_, decode) in &DECODERS[1..] {
                for u in cells(&col, ROWS) {
                    let reference = via_decode_utf16(py, u);
                    assert!(
                        decode(py, u).eq(&reference).unwrap(),
                        "decoders disagree on {class}"
                    );
                }
            }
        });
        for (name, decode) in DECODERS {
            g.bench_with_input(BenchmarkId::new(name, class), &col, |b, col| {
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

// ---- row assembly: row-major vs column-major ------------------------------------------------

/// A bound batch of (INT NOT NULL, BIGINT, FLOAT, NVARCHAR(50), NVARCHAR(100) every 7th NULL).
struct SyntheticBatch {
    ids: Vec<i32>,
    bigs: Vec<i64>,
    floats: Vec<f64>,
    names: TextColumn<u16>,
    notes: TextColumn<u16>,
    note_ind: Vec<isize>,
}

fn synthetic_batch() -> SyntheticBatch {
    let names = text_column(&dataset("ascii"));
    let mut notes = TextColumn::<u16>::new(ROWS, 100);
    let mut note_ind = vec![0isize; ROWS];
    for (r, ind) in note_ind.iter_mut().enumerate() {
        if r % 7 == 0 {
            notes.set_value(r, None);
            *ind = NULL_DATA;
        } else {
            let units: Vec<u16> = format!("note {r} é").encode_utf16().collect();
            notes.set_value(r, Some(&units));
            *ind = (units.len() * 2) as isize;
        }
    }
    SyntheticBatch {
        ids: (0..ROWS as i32).collect(),
        bigs: (0..ROWS as i64).map(|i| i * 1_000_003).collect(),
        floats: (0..ROWS).map(|i| i as f64 * 0.25).collect(),
        names,
        notes,
        note_ind,
    }
}

fn cell<'py>(py: Python<'py>, b: &SyntheticBatch, r: usize, c: usize) -> Bound<'py, PyAny> {
    match c {
        0 => b.ids[r].into_pyobject(py).unwrap().into_any(),
        1 => b.bigs[r].into_pyobject(py).unwrap().into_any(),
        2 => b.floats[r].into_pyobject(py).unwrap().into_any(),
        3 => via_compact(py, b.names.value_at(r).unwrap()),
        _ if b.note_ind[r] == NULL_DATA => py.None().into_bound(py),
        _ => via_compact(py, b.notes.value_at(r).unwrap()),
    }
}

const COLUMNS: usize = 5;

fn rows_row_major<'py>(py: Python<'py>, b: &SyntheticBatch) -> Bound<'py, PyList> {
    let rows =
        (0..ROWS).map(|r| PyTuple::new(py, (0..COLUMNS).map(|c| cell(py, b, r, c))).unwrap());
    PyList::new(py, rows).unwrap()
}

/// Decode each column into a vector first (one type dispatch per column, tight loops), then
/// assemble the tuples.
fn rows_column_major<'py>(py: Python<'py>, b: &SyntheticBatch) -> Bound<'py, PyList> {
    let mut columns: Vec<std::vec::IntoIter<Bound<'py, PyAny>>> = (0..COLUMNS)
        .map(|c| {
            (0..ROWS)
                .map(|r| cell(py, b, r, c))
                .collect::<Vec<_>>()
                .into_iter()
        })
        .collect();
    let rows = (0..ROWS)
        .map(|_| PyTuple::new(py, columns.iter_mut().map(|it| it.next().unwrap())).unwrap());
    PyList::new(py, rows).unwrap()
}

fn bench_row_assembly(c: &mut Criterion) {
    let batch = synthetic_batch();
    Python::attach(|py| {
        let a = rows_row_major(py, &batch);
        assert!(
            a.eq(rows_column_major(py, &batch)).unwrap(),
            "assembly orders disagree"
        );
    });
    let mut g = c.benchmark_group("row_assembly_1000x5");
    g.throughput(Throughput::Elements(ROWS as u64));
    g.bench_function("row_major", |b| {
        Python::attach(|py| b.iter(|| rows_row_major(py, black_box(&batch))))
    });
    g.bench_function("column_major", |b| {
        Python::attach(|py| b.iter(|| rows_column_major(py, black_box(&batch))))
    });
    g.finish();
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
            let raw = _native::py::decimal::new_decimal(py, d).ok().unwrap();
            // SAFETY: new_decimal returns a new reference.
            let got = unsafe { Bound::from_owned_ptr(py, raw) };
            assert!(
                want.eq(&got).unwrap()
                    && want.str().unwrap().to_str().unwrap()
                        == got.str().unwrap().to_str().unwrap()
            );
        }
        assert!(_native::py::decimal::fast_path(py), "layout did not verify");
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
                    let raw = _native::py::decimal::new_decimal(py, black_box(d))
                        .ok()
                        .unwrap();
                    // SAFETY: a new reference, released at once.
                    unsafe { ffi::Py_DecRef(raw) };
                }
            })
        });
        g.finish();
    });
}

fn python_benches(c: &mut Criterion) {
    Python::initialize();
    bench_utf16_to_str(c);
    bench_row_assembly(c);
    bench_decimal_objects(c);
}

criterion_group!(pure, bench_classify, bench_decimal_and_guid, bench_plan);
criterion_group!(embedded, python_benches);
criterion_main!(pure, embedded);
