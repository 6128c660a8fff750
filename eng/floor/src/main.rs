//! `odbc-floor`: how fast can a native client drain a result set through the same driver?
//!
//! Executes one query, binds every column into a columnar buffer (text as UTF-16, as ferrodbc
//! binds it) and fetches in blocks, folding every cell into a checksum so nothing is optimised
//! away. No Python objects are built: the gap between this and a Python driver is that driver's
//! own per-cell cost. Prints one JSON object per run on stdout.
//!
//! Usage: odbc-floor --connection-string CS --query SQL [--batch ROWS|auto] [--repeat N]
//!
//! `--batch auto` (the default) sizes the row array as ferrodbc's full-grown one: as many rows
//! as fit [`BATCH_BYTE_BUDGET`] bytes of bound buffers, at most [`MAX_BATCH_ROWS`]. A fixed
//! 10,000 rows, as the profiler asked for until 2026-12, drained 10,000 x 32 columns ~30% slower
//! than 2,048-row arrays through Driver 18.

use odbc_api::buffers::{AnyColumnBufferSlice, BufferDesc, ColumnarDynBuffer};
use odbc_api::sys::{Date, Timestamp};
use odbc_api::{ConnectionOptions, Cursor, DataType, Environment, Nullability, ResultSetMetadata};
use std::process::ExitCode;
use std::time::Instant;

/// Unbounded (MAX) text gets this many UTF-16 units; the profiler runs the floor only on
/// bounded result sets, so this is a guard, not a measured path.
const MAX_TEXT_UNITS: usize = 4000;

/// ferrodbc's `batch::BATCH_BYTE_BUDGET` and `batch::MAX_BATCH_ROWS` (the floor is its own
/// crate, built without the engine).
const BATCH_BYTE_BUDGET: usize = 2 << 20;
const MAX_BATCH_ROWS: usize = 8192;

struct Args {
    connection_string: String,
    query: String,
    /// Rows per fetch; `None`: from the byte budget.
    batch: Option<usize>,
    repeat: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let (mut cs, mut q, mut batch, mut repeat) = (None, None, None, 1usize);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--connection-string" => cs = Some(value()?),
            "--query" => q = Some(value()?),
            "--batch" => {
                batch = match value()?.as_str() {
                    "auto" => None,
                    rows => Some(rows.parse().map_err(|e| format!("--batch: {e}"))?),
                }
            }
            "--repeat" => repeat = value()?.parse().map_err(|e| format!("--repeat: {e}"))?,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(Args {
        connection_string: cs.ok_or("--connection-string is required")?,
        query: q.ok_or("--query is required")?,
        batch: batch.map(|b: usize| b.max(1)),
        repeat: repeat.max(1),
    })
}

/// The buffer for one column: the C type ferrodbc would bind (text always wide), or one the
/// driver fills as cheaply where odbc-api has no buffer for it (decimals); other types odbc-api
/// has no buffer for are read as text, which is what the driver converts to.
fn desc_for(dt: DataType) -> BufferDesc {
    let nullable = true;
    match dt {
        DataType::Integer => BufferDesc::I32 { nullable },
        DataType::SmallInt => BufferDesc::I16 { nullable },
        DataType::TinyInt => BufferDesc::I8 { nullable },
        DataType::BigInt => BufferDesc::I64 { nullable },
        DataType::Bit => BufferDesc::Bit { nullable },
        // Any float precision as f64: a precision-0 SQL_FLOAT mapped to f32 loses data.
        DataType::Real | DataType::Float { .. } | DataType::Double => BufferDesc::F64 { nullable },
        DataType::Date => BufferDesc::Date { nullable },
        DataType::Timestamp { .. } => BufferDesc::Timestamp { nullable },
        // ferrodbc binds SQL_NUMERIC_STRUCT (19 bytes) through Driver 18. odbc-api's buffers have
        // no numeric struct, but Driver 18 fills a 19-byte SQL_C_BINARY buffer with that very
        // struct (seen: precision 18, scale 4, sign, magnitude). Bound as text, as the floor did
        // until 2026-12, mixed_100000 drained ~20% slower: a floor that was easy to beat.
        DataType::Decimal { .. } | DataType::Numeric { .. } => BufferDesc::Binary { max_bytes: 19 },
        DataType::Varbinary { length }
        | DataType::Binary { length }
        | DataType::LongVarbinary { length } => BufferDesc::Binary {
            max_bytes: length.map_or(2 * MAX_TEXT_UNITS, |l| l.get()),
        },
        DataType::Char { length }
        | DataType::WChar { length }
        | DataType::Varchar { length }
        | DataType::WVarchar { length }
        | DataType::LongVarchar { length }
        | DataType::WLongVarchar { length } => BufferDesc::WText {
            max_str_len: length.map_or(MAX_TEXT_UNITS, |l| l.get().min(MAX_TEXT_UNITS)),
        },
        // GUID, time(n), datetimeoffset, ...: the driver's text form.
        _ => BufferDesc::WText { max_str_len: 68 },
    }
}

fn fold(acc: u64, v: u64) -> u64 {
    (acc ^ v).wrapping_mul(0x100_0000_01b3)
}

fn fold_nullable<T>(acc: &mut u64, col: AnyColumnBufferSlice<'_>, f: impl Fn(T) -> u64) -> bool
where
    T: Copy + odbc_api::buffers::Item + odbc_api::Pod,
{
    let Some(slice) = col.as_nullable_slice::<T>() else {
        return false;
    };
    let (values, indicators) = slice.raw_values();
    for (v, ind) in values.iter().zip(indicators) {
        *acc = fold(*acc, if *ind < 0 { 0x9e37 } else { f(*v) });
    }
    true
}

/// Touch every cell of the batch. Returns the folded checksum.
fn touch(batch: &ColumnarDynBuffer, columns: usize, mut acc: u64) -> u64 {
    for c in 0..columns {
        let col = batch.column(c);
        if let Some(text) = col.as_wide_text() {
            for r in 0..text.len() {
                acc = match text.get(r) {
                    None => fold(acc, 0x9e37),
                    Some(units) => units
                        .iter()
                        .fold(fold(acc, units.len() as u64), |a, &u| fold(a, u as u64)),
                };
            }
            continue;
        }
        if let Some(text) = col.as_text() {
            for r in 0..text.len() {
                acc = match text.get(r) {
                    None => fold(acc, 0x9e37),
                    Some(b) => b
                        .iter()
                        .fold(fold(acc, b.len() as u64), |a, &u| fold(a, u as u64)),
                };
            }
            continue;
        }
        if let Some(bin) = col.as_binary() {
            for r in 0..bin.len() {
                acc = match bin.get(r) {
                    None => fold(acc, 0x9e37),
                    Some(b) => b
                        .iter()
                        .fold(fold(acc, b.len() as u64), |a, &u| fold(a, u as u64)),
                };
            }
            continue;
        }
        let done = fold_nullable::<i32>(&mut acc, col, |v| v as u64)
            || fold_nullable::<i64>(&mut acc, col, |v| v as u64)
            || fold_nullable::<i16>(&mut acc, col, |v| v as u64)
            || fold_nullable::<i8>(&mut acc, col, |v| v as u64)
            || fold_nullable::<odbc_api::Bit>(&mut acc, col, |v| v.0 as u64)
            || fold_nullable::<f64>(&mut acc, col, f64::to_bits)
            || fold_nullable::<Date>(&mut acc, col, |d| {
                (d.year as u64) << 16 | (d.month as u64) << 8 | d.day as u64
            })
            || fold_nullable::<Timestamp>(&mut acc, col, |t| {
                ((t.year as u64) << 40 | (t.month as u64) << 32 | (t.day as u64) << 24)
                    ^ ((t.hour as u64) << 16 | (t.minute as u64) << 8 | t.second as u64)
                    ^ (t.fraction as u64) << 20
            });
        assert!(done, "column {c}: buffer type without a reader");
    }
    acc
}

struct Run {
    rows: u64,
    cells: u64,
    batches: u64,
    checksum: u64,
    ms: f64,
}

fn run_once(conn: &odbc_api::Connection<'_>, args: &Args) -> Result<Run, odbc_api::Error> {
    let start = Instant::now();
    let mut cursor =
        conn.execute(&args.query, (), None)?
            .ok_or(odbc_api::Error::NoDiagnostics {
                function: "execute: no result set",
            })?;
    let n = cursor.num_result_cols()? as u16;
    let mut descs = Vec::with_capacity(n as usize);
    for i in 1..=n {
        let _ = cursor.col_nullability(i).unwrap_or(Nullability::Unknown);
        descs.push(desc_for(cursor.col_data_type(i)?));
    }
    let rows_per_fetch = args.batch.unwrap_or_else(|| {
        let row_bytes: usize = descs.iter().map(|d| d.bytes_per_row()).sum();
        (BATCH_BYTE_BUDGET / row_bytes.max(1)).clamp(1, MAX_BATCH_ROWS)
    });
    let buffer = ColumnarDynBuffer::from_descs(rows_per_fetch, descs);
    let mut block = cursor.bind_buffer(buffer)?;
    let (mut rows, mut batches, mut acc) = (0u64, 0u64, 0xcbf2_9ce4_8422_2325u64);
    while let Some(batch) = block.fetch()? {
        rows += batch.num_rows() as u64;
        batches += 1;
        acc = touch(batch, n as usize, acc);
    }
    drop(block);
    Ok(Run {
        rows,
        cells: rows * n as u64,
        batches,
        checksum: acc,
        ms: start.elapsed().as_secs_f64() * 1e3,
    })
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("odbc-floor: {e}");
            return ExitCode::from(2);
        }
    };
    let result = (|| -> Result<(), odbc_api::Error> {
        let env = Environment::new()?;
        let conn = env.connect_with_connection_string(
            &args.connection_string,
            ConnectionOptions::default(),
        )?;
        for _ in 0..args.repeat {
            let r = run_once(&conn, &args)?;
            println!(
                "{{\"rows\": {}, \"cells\": {}, \"batches\": {}, \"checksum\": \"{:016x}\", \"ms\": {:.3}}}",
                r.rows, r.cells, r.batches, r.checksum, r.ms
            );
        }
        Ok(())
    })();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("odbc-floor: {e}");
            ExitCode::FAILURE
        }
    }
}
