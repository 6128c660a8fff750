//! Virtual typed tables `peer.<shape>_<rows>`: values are pure functions of the row index
//! (mirrored in eng/peers/synthetic.py; formulas in eng/tds-peer/README.md). Encoded rows are
//! cached in blocks so repeated queries replay bytes at memory speed. Fault injection lives
//! here too (`/* fault:… */` in the query text).

use crate::conv;
use crate::faults::{Corrupt, Faults};
use crate::resp::Resp;
use crate::sql::lexer::Tok;
use crate::token::{self, Column, value};
use crate::types::Ty;
use rusqlite::types::Value;
use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};

/// Bytes of encoded rows per cached block (also the ATTENTION polling granularity).
const BLOCK: usize = 128 * 1024;
/// Total cache budget; results larger than `MAX_ONE` are streamed without caching.
const CACHE_BUDGET: usize = 1536 << 20;
const MAX_ONE: usize = 1024 << 20;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    TypesAll,
    Mixed,
    IntNvarchar,
    IntNvarcharFloat,
    Wide32,
    DtoDecGuid,
    LobNvarcharMax(u64),
    LobVarbinaryMax(u64),
}

impl Shape {
    pub fn parse(name: &str) -> Option<Shape> {
        Some(match name {
            "types_all" => Shape::TypesAll,
            "mixed" => Shape::Mixed,
            "int_nvarchar" => Shape::IntNvarchar,
            "int_nvarchar_float" => Shape::IntNvarcharFloat,
            "wide32" => Shape::Wide32,
            "dto_dec_guid" => Shape::DtoDecGuid,
            _ => {
                let kib = |p: &str| {
                    name.strip_prefix(p)
                        .and_then(|r| r.strip_suffix('k'))
                        .and_then(|n| n.parse::<u64>().ok())
                };
                if let Some(k) = kib("lob_nvarcharmax_") {
                    Shape::LobNvarcharMax(k)
                } else if let Some(k) = kib("lob_varbinarymax_") {
                    Shape::LobVarbinaryMax(k)
                } else {
                    return None;
                }
            }
        })
    }
}

pub const TYPES_ALL: &[(&str, &str)] = &[
    ("id", "int"),
    ("c_bit", "bit"),
    ("c_tinyint", "tinyint"),
    ("c_smallint", "smallint"),
    ("c_int", "int"),
    ("c_bigint", "bigint"),
    ("c_dec1", "decimal(1,0)"),
    ("c_dec9", "decimal(9,2)"),
    ("c_dec18", "decimal(18,4)"),
    ("c_dec19", "decimal(19,0)"),
    ("c_dec28", "decimal(28,10)"),
    ("c_dec38", "decimal(38,10)"),
    ("c_num", "numeric(10,3)"),
    ("c_money", "money"),
    ("c_smallmoney", "smallmoney"),
    ("c_real", "real"),
    ("c_float", "float"),
    ("c_date", "date"),
    ("c_time0", "time(0)"),
    ("c_time3", "time(3)"),
    ("c_time7", "time(7)"),
    ("c_datetime", "datetime"),
    ("c_smalldatetime", "smalldatetime"),
    ("c_dt2_0", "datetime2(0)"),
    ("c_dt2_3", "datetime2(3)"),
    ("c_dt2_7", "datetime2(7)"),
    ("c_dto0", "datetimeoffset(0)"),
    ("c_dto7", "datetimeoffset(7)"),
    ("c_char", "char(10)"),
    ("c_varchar", "varchar(50)"),
    (
        "c_varchar_utf8",
        "varchar(50) collate Latin1_General_100_CI_AS_SC_UTF8",
    ),
    ("c_nchar", "nchar(10)"),
    ("c_nvarchar", "nvarchar(50)"),
    ("c_varchar_max", "varchar(max)"),
    ("c_nvarchar_max", "nvarchar(max)"),
    ("c_varbinary_max", "varbinary(max)"),
    ("c_binary8", "binary(8)"),
    ("c_varbinary50", "varbinary(50)"),
    ("c_guid", "uniqueidentifier"),
    ("c_xml", "xml"),
    ("c_variant", "sql_variant"),
];

pub fn columns(shape: &Shape) -> Vec<Column> {
    let c = |n: &str, t: &str| Column::new(n, Ty::parse(t).expect("shape type"));
    let mut cols = match shape {
        Shape::TypesAll => TYPES_ALL.iter().map(|(n, t)| c(n, t)).collect(),
        Shape::Mixed => vec![
            c("id", "int"),
            c("big", "bigint"),
            c("f", "float"),
            c("name", "nvarchar(50)"),
            c("ts", "datetime2(7)"),
            c("amount", "decimal(18,4)"),
            c("flag", "bit"),
            c("note", "nvarchar(100)"),
        ],
        Shape::IntNvarchar => vec![c("id", "int"), c("name", "nvarchar(50)")],
        Shape::IntNvarcharFloat => {
            vec![c("id", "int"), c("name", "nvarchar(50)"), c("val", "float")]
        }
        Shape::Wide32 => (0..32)
            .map(|k| {
                let t = [
                    "int",
                    "nvarchar(30)",
                    "float",
                    "datetime2(3)",
                    "decimal(12,2)",
                ][k % 5];
                c(&format!("c{k}"), t)
            })
            .collect(),
        Shape::DtoDecGuid => (0..3)
            .flat_map(|j| {
                [
                    c(&format!("dto_{j}"), "datetimeoffset(7)"),
                    c(&format!("dec_{j}"), "decimal(38,10)"),
                    c(&format!("guid_{j}"), "uniqueidentifier"),
                ]
            })
            .collect(),
        Shape::LobNvarcharMax(_) => vec![c("id", "int"), c("body", "nvarchar(max)")],
        Shape::LobVarbinaryMax(_) => vec![c("id", "int"), c("body", "varbinary(max)")],
    };
    cols[0].nullable = !matches!(
        shape,
        Shape::TypesAll
            | Shape::Mixed
            | Shape::IntNvarchar
            | Shape::IntNvarcharFloat
            | Shape::LobNvarcharMax(_)
            | Shape::LobVarbinaryMax(_)
    );
    cols
}

// ---- generator formulas (keep in sync with eng/peers/synthetic.py and README.md) ----------

pub fn mix(i: u64, k: u64) -> u64 {
    i.wrapping_mul(2_654_435_761)
        .wrapping_add(k.wrapping_mul(40_503))
        .wrapping_mul(11_400_714_819_323_198_485)
}

fn mix128(i: u64, k: u64) -> u128 {
    ((mix(i, k) as u128) << 64) | mix(i, k + 1000) as u128
}

fn dec_text(unscaled: i128, scale: u8) -> Value {
    Value::Text(
        conv::Dec {
            neg: unscaled < 0,
            mag: unscaled.unsigned_abs(),
            scale,
        }
        .to_string_fixed(),
    )
}

/// Decimal of precision p, scale s: m128 % (2*10^p - 1) - (10^p - 1).
fn gen_dec(i: u64, k: u64, p: u32, s: u8) -> Value {
    dec_text(dec_unscaled(mix128(i, k), p), s)
}

/// `m % (2*10^p - 1) - (10^p - 1)`, in -(10^p - 1)..=10^p - 1, without leaving u128/i128 range:
/// for p = 38 the remainder can exceed i128::MAX, so casting it first overflowed the subtraction
/// (a debug build panicked; release wrapped to this same value).
fn dec_unscaled(m: u128, p: u32) -> i128 {
    let top = 10u128.pow(p) - 1;
    let r = m % (2 * top + 1);
    if r >= top {
        (r - top) as i128
    } else {
        -((top - r) as i128)
    }
}

fn dt_text(days: u64, ticks: u64) -> String {
    format!(
        "{} {}",
        conv::fmt_date(days as i64),
        conv::fmt_time(ticks, 7)
    )
}

fn ticks_for(i: u64, k: u64, scale: u8) -> u64 {
    let m2 = mix(i, k + 1000);
    match scale {
        0 => (m2 % 86_400) * 10_000_000,
        3 => (m2 % 86_400_000) * 10_000,
        _ => m2 % 864_000_000_000,
    }
}

fn types_all_value(i: u64, k: u64, name: &str) -> Value {
    let m1 = mix(i, k);
    let i64v = |x: u64| x as i64;
    match name {
        "id" => Value::Integer(i as i64),
        "c_bit" => Value::Integer((m1 % 2) as i64),
        "c_tinyint" => Value::Integer((m1 % 256) as i64),
        "c_smallint" => Value::Integer((m1 % 65_536) as i64 - 32_768),
        "c_int" => Value::Integer((m1 % (1 << 32)) as i64 - (1 << 31)),
        "c_bigint" => Value::Integer(i64v(m1)),
        "c_dec1" => gen_dec(i, k, 1, 0),
        "c_dec9" => gen_dec(i, k, 9, 2),
        "c_dec18" => gen_dec(i, k, 18, 4),
        "c_dec19" => gen_dec(i, k, 19, 0),
        "c_dec28" => gen_dec(i, k, 28, 10),
        "c_dec38" => gen_dec(i, k, 38, 10),
        "c_num" => gen_dec(i, k, 10, 3),
        "c_money" => gen_dec(i, k, 18, 4),
        "c_smallmoney" => dec_text((m1 % 4_000_000_001) as i128 - 2_000_000_000, 4),
        "c_real" => Value::Real(((m1 % 20_001) as i64 - 10_000) as f64 * 0.25),
        "c_float" => Value::Real((i64v(m1) >> 11) as f64 / 1_048_576.0),
        "c_date" => Value::Text(conv::fmt_date((m1 % 3_652_059) as i64)),
        "c_time0" => Value::Text(conv::fmt_time(ticks_for(i, k, 0), 7)),
        "c_time3" => Value::Text(conv::fmt_time(ticks_for(i, k, 3), 7)),
        "c_time7" => Value::Text(conv::fmt_time(ticks_for(i, k, 7), 7)),
        "c_datetime" => {
            let days = conv::DAY_1900 as u64 + m1 % 80_000;
            let t300 = (mix(i, k + 1000) % 8_640_000) * 3;
            Value::Text(dt_text(days, t300 / 3 * 100_000))
        }
        "c_smalldatetime" => Value::Text(dt_text(
            conv::DAY_1900 as u64 + m1 % 60_000,
            (mix(i, k + 1000) % 1440) * 600_000_000,
        )),
        "c_dt2_0" => Value::Text(dt_text(m1 % 3_652_059, ticks_for(i, k, 0))),
        "c_dt2_3" => Value::Text(dt_text(m1 % 3_652_059, ticks_for(i, k, 3))),
        "c_dt2_7" => Value::Text(dt_text(m1 % 3_652_059, ticks_for(i, k, 7))),
        "c_dto0" | "c_dto7" => {
            let off = (mix(i, k + 2000) % 57) as i16 * 30 - 840;
            let scale = if name == "c_dto0" { 0 } else { 7 };
            Value::Text(format!(
                "{} {}",
                dt_text(1 + m1 % 3_652_057, ticks_for(i, k, scale)),
                conv::fmt_offset(off)
            ))
        }
        "c_char" => Value::Text(format!("c{}é€", i % 1000)),
        "c_varchar" => Value::Text(format!("v{i} café €Š")),
        "c_varchar_utf8" => Value::Text(format!("u{i} 中文 ü😀")),
        "c_nchar" => Value::Text(format!("n{}ж", i % 1000)),
        "c_nvarchar" => Value::Text(format!("nv{i} 中文 ß 😀")),
        "c_varchar_max" => Value::Text(format!("x{i};").repeat((i % 5 * 700) as usize)),
        "c_nvarchar_max" => Value::Text(format!("ñ{i};").repeat((i % 4 * 1500) as usize)),
        "c_varbinary_max" => {
            Value::Blob((0..(i % 6) * 3000).map(|j| ((i + j) % 256) as u8).collect())
        }
        "c_binary8" => Value::Blob(i.to_be_bytes().to_vec()),
        "c_varbinary50" => Value::Blob((0..i % 51).map(|j| ((i * j) % 256) as u8).collect()),
        "c_guid" => Value::Text(conv::fmt_guid(&mix128(i, k).to_be_bytes())),
        "c_xml" => Value::Text(format!("<r i=\"{i}\">x&amp;y</r>")),
        "c_variant" => Value::Integer(i as i64 * 3 - 1000),
        _ => Value::Null,
    }
}

/// One row of a shape (all columns).
pub fn row(shape: &Shape, i: u64) -> Vec<Value> {
    match shape {
        Shape::TypesAll => {
            if i % 7 == 3 {
                let mut v = vec![Value::Null; TYPES_ALL.len()];
                v[0] = Value::Integer(i as i64);
                v
            } else {
                TYPES_ALL
                    .iter()
                    .enumerate()
                    .map(|(k, (n, _))| types_all_value(i, k as u64, n))
                    .collect()
            }
        }
        Shape::Mixed => vec![
            Value::Integer(i as i64),
            Value::Integer(i as i64 * 1_000_003),
            Value::Real(i as f64 * 0.25),
            Value::Text(format!("name {i}")),
            Value::Text(dt_text(
                conv::days_from_civil(2020, 1, 1) as u64 + i / 86_400,
                (i % 86_400) * 10_000_000 + (i % 1000) * 10_000,
            )),
            dec_text((i as i128 * 12_345) % 10_000_000_000 - 5_000_000_000, 4),
            Value::Integer(i.is_multiple_of(3) as i64),
            if i.is_multiple_of(5) {
                Value::Null
            } else {
                Value::Text(format!("note {i} é"))
            },
        ],
        Shape::IntNvarchar => vec![
            Value::Integer(i as i64),
            Value::Text(format!("row {i} é中")),
        ],
        Shape::IntNvarcharFloat => vec![
            Value::Integer(i as i64),
            if i % 10 == 3 {
                Value::Null
            } else {
                Value::Text(format!("row {i} é中"))
            },
            Value::Real(i as f64 * 1.5),
        ],
        Shape::Wide32 => (0..32u64)
            .map(|k| match k % 5 {
                0 => Value::Integer((i + k) as i64),
                1 => Value::Text(format!("w{k}_{i}")),
                2 => Value::Real(i as f64 * 0.5 + k as f64),
                3 => {
                    let mins = i + k;
                    Value::Text(dt_text(
                        conv::days_from_civil(2021, 1, 1) as u64 + mins / 1440,
                        (mins % 1440) * 600_000_000,
                    ))
                }
                _ => dec_text(i as i128 * 100 + k as i128, 2),
            })
            .collect(),
        Shape::DtoDecGuid => (0..3u64)
            .flat_map(|j| {
                let k = 100 + j * 3;
                [
                    types_all_value(i, k, "c_dto7"),
                    gen_dec(i, k + 1, 38, 10),
                    types_all_value(i, k + 2, "c_guid"),
                ]
            })
            .collect(),
        Shape::LobNvarcharMax(kib) => {
            let n = (kib * 512) as usize;
            let s: String = (0..26u64)
                .map(|j| char::from(b'A' + ((i + j) % 26) as u8))
                .collect();
            vec![
                Value::Integer(i as i64),
                Value::Text(s.repeat(n / 26 + 1)[..n].to_string()),
            ]
        }
        Shape::LobVarbinaryMax(kib) => vec![
            Value::Integer(i as i64),
            Value::Blob((0..kib * 1024).map(|j| ((i + j) % 256) as u8).collect()),
        ],
    }
}

/// NBCROW vs ROW: types_all alternates so both encodings of NULL rows are exercised.
fn use_nbc(shape: &Shape, i: u64) -> bool {
    match shape {
        Shape::TypesAll => i % 14 == 3,
        _ => true,
    }
}

// ---- queries --------------------------------------------------------------------------------

#[derive(Clone, Debug)]
pub struct Query {
    pub shape: Shape,
    pub rows: u64,
    pub cols: Vec<usize>,
    pub faults: Faults,
}

impl Query {
    /// Recognises `SELECT [TOP n] * | cols FROM peer.<shape>_<rows> [;]`. Returns None when
    /// the statement does not name a `peer.` table, Some(Err) for an unknown shape.
    pub fn parse(sg: &[&Tok], text: &str) -> Option<Result<Query, String>> {
        let from = sg.iter().position(|t| t.is_word("FROM"))?;
        let name_of = |t: &Tok| match t {
            Tok::Word(w) => Some(w.to_ascii_lowercase()),
            Tok::Quoted(q) => Some(q.to_ascii_lowercase()),
            _ => None,
        };
        if sg.len() < from + 4
            || name_of(sg[from + 1]).as_deref() != Some("peer")
            || !sg[from + 2].is_punct('.')
        {
            return None;
        }
        let table = name_of(sg[from + 3])?;
        if sg[from + 4..].iter().any(|t| !t.is_punct(';')) {
            return Some(Err("tds-peer: synthetic tables support only SELECT [TOP n] cols FROM peer.<shape>_<rows>".into()));
        }
        let (shape_name, rows) = table.rsplit_once('_')?;
        let (Some(shape), Ok(rows)) = (Shape::parse(shape_name), rows.parse::<u64>()) else {
            return Some(Err(format!("Invalid object name 'peer.{table}'.")));
        };
        let mut i = 1;
        let mut top = None;
        if sg.get(i).is_some_and(|t| t.is_word("TOP")) {
            let paren = sg.get(i + 1).is_some_and(|t| t.is_punct('('));
            let n = sg
                .get(if paren { i + 2 } else { i + 1 })
                .and_then(|t| t.text().parse::<u64>().ok());
            top = n;
            i += if paren { 4 } else { 2 };
        }
        let all = columns(&shape);
        let mut cols = Vec::new();
        // `SELECT TOP FROM peer.x` (no count) puts `i` past `from`: slicing panicked
        // (fuzz/peer_sql).
        let Some(list) = sg.get(i..from) else {
            return Some(Err(
                "tds-peer: unsupported select list on a peer table".into()
            ));
        };
        for t in list {
            if t.is_punct(',') {
                continue;
            }
            if t.is_punct('*') {
                cols.extend(0..all.len());
                continue;
            }
            let Some(n) = name_of(t) else {
                return Some(Err(
                    "tds-peer: unsupported select list on a peer table".into()
                ));
            };
            match all.iter().position(|c| c.name.eq_ignore_ascii_case(&n)) {
                Some(p) => cols.push(p),
                None => return Some(Err(format!("Invalid column name '{n}'."))),
            }
        }
        let rows = top.map(|t| t.min(rows)).unwrap_or(rows);
        Some(Ok(Query {
            shape,
            rows,
            cols,
            faults: Faults::parse(text),
        }))
    }
}

// ---- encoding, caching and streaming ----------------------------------------------------------

pub struct Encoded {
    meta: Vec<u8>,
    blocks: Vec<Arc<Vec<u8>>>,
}

/// (shape, rows, selected column indexes)
type CacheKey = (Shape, u64, Vec<usize>);

#[derive(Default)]
pub struct Cache {
    map: Mutex<HashMap<CacheKey, Arc<Encoded>>>,
    bytes: Mutex<usize>,
}

pub enum Streamed {
    Rows(u64),
    Cancelled,
    Error,
}

fn encode_row(q: &Query, tys: &[Ty], i: u64, out: &mut Vec<u8>) {
    let all_cols = |n: usize| q.cols.len() == n && q.cols.iter().enumerate().all(|(a, b)| a == *b);
    if q.shape == Shape::Mixed && all_cols(8) {
        encode_mixed_fast(i, out);
        return;
    }
    let full = row(&q.shape, i);
    if q.cols.len() == full.len() && q.cols.iter().enumerate().all(|(a, b)| a == *b) {
        value::put_row(out, tys, &full, use_nbc(&q.shape, i));
    } else {
        let sel: Vec<Value> = q.cols.iter().map(|&c| full[c].clone()).collect();
        value::put_row(out, tys, &sel, use_nbc(&q.shape, i));
    }
}

fn put_nvarchar_ascii_plus(out: &mut Vec<u8>, prefix: &str, i: u64, suffix: &str) {
    let len_pos = out.len();
    out.extend_from_slice(&[0, 0]);
    let mut ibuf = itoa_buf(i);
    for u in prefix
        .encode_utf16()
        .chain(ibuf.drain(..).map(|b| b as u16))
        .chain(suffix.encode_utf16())
    {
        out.extend_from_slice(&u.to_le_bytes());
    }
    let n = (out.len() - len_pos - 2) as u16;
    out[len_pos..len_pos + 2].copy_from_slice(&n.to_le_bytes());
}

fn itoa_buf(mut i: u64) -> Vec<u8> {
    let mut v = Vec::with_capacity(20);
    loop {
        v.push(b'0' + (i % 10) as u8);
        i /= 10;
        if i == 0 {
            break;
        }
    }
    v.reverse();
    v
}

/// Byte-identical to encoding `row(Shape::Mixed, i)` through `put_row`, without building
/// and re-parsing the canonical text values (first-run speed of the profiler's main shape).
pub(crate) fn encode_mixed_fast(i: u64, out: &mut Vec<u8>) {
    let null_note = i.is_multiple_of(5);
    if null_note {
        out.extend_from_slice(&[0xD2, 0x80]);
    } else {
        out.push(0xD1);
    }
    out.push(4);
    out.extend_from_slice(&(i as i32).to_le_bytes());
    out.push(8);
    out.extend_from_slice(&(i as i64 * 1_000_003).to_le_bytes());
    out.push(8);
    out.extend_from_slice(&(i as f64 * 0.25).to_le_bytes());
    put_nvarchar_ascii_plus(out, "name ", i, "");
    // datetime2(7): 5 bytes of 100 ns ticks, 3 bytes of days
    let days = conv::days_from_civil(2020, 1, 1) as u64 + i / 86_400;
    let ticks = (i % 86_400) * 10_000_000 + (i % 1000) * 10_000;
    out.push(8);
    out.extend_from_slice(&ticks.to_le_bytes()[..5]);
    out.extend_from_slice(&(days as u32).to_le_bytes()[..3]);
    // decimal(18,4): sign + 8 bytes
    let unscaled = (i as i128 * 12_345) % 10_000_000_000 - 5_000_000_000;
    out.push(9);
    out.push(if unscaled < 0 { 0 } else { 1 });
    out.extend_from_slice(&(unscaled.unsigned_abs() as u64).to_le_bytes());
    out.extend_from_slice(&[1, i.is_multiple_of(3) as u8]);
    if !null_note {
        put_nvarchar_ascii_plus(out, "note ", i, " é");
    }
}

pub(crate) fn sleep_polling(r: &mut Resp, secs: f64) -> bool {
    let until = std::time::Instant::now() + std::time::Duration::from_secs_f64(secs);
    while std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(10));
        if r.io.poll_attention() {
            return true;
        }
    }
    false
}

/// Streams COLMETADATA + rows (caller sends the DONE). Honors ATTENTION between blocks.
pub fn stream(cache: &Cache, q: &Query, r: &mut Resp) -> io::Result<Streamed> {
    let all = columns(&q.shape);
    let cols: Vec<Column> = q.cols.iter().map(|&c| all[c].clone()).collect();
    let tys: Vec<Ty> = cols.iter().map(|c| c.ty).collect();
    if q.faults.any() {
        return stream_faulty(q, &cols, &tys, r);
    }
    let key = (q.shape.clone(), q.rows, q.cols.clone());
    let hit = cache.map.lock().unwrap().get(&key).cloned();
    if let Some(enc) = hit {
        r.put(&enc.meta)?;
        for b in &enc.blocks {
            r.put(b)?;
            if r.cancelled() {
                return Ok(Streamed::Cancelled);
            }
        }
        return Ok(Streamed::Rows(q.rows));
    }
    let meta = token::colmetadata(&cols);
    r.put(&meta)?;
    let mut blocks = Vec::new();
    let mut total = 0usize;
    let mut keep = true;
    let mut buf = Vec::with_capacity(BLOCK + 4096);
    for i in 0..q.rows {
        encode_row(q, &tys, i, &mut buf);
        if buf.len() >= BLOCK || i + 1 == q.rows {
            r.put(&buf)?;
            total += buf.len();
            if total > MAX_ONE {
                keep = false;
                blocks.clear();
            }
            if keep {
                blocks.push(Arc::new(std::mem::replace(
                    &mut buf,
                    Vec::with_capacity(BLOCK + 4096),
                )));
            } else {
                buf.clear();
            }
            if r.cancelled() {
                return Ok(Streamed::Cancelled);
            }
        }
    }
    if keep {
        cache.insert(key, Encoded { meta, blocks }, total);
    }
    Ok(Streamed::Rows(q.rows))
}

impl Cache {
    fn insert(&self, key: CacheKey, enc: Encoded, total: usize) {
        let mut used = self.bytes.lock().unwrap();
        let mut map = self.map.lock().unwrap();
        if *used + total > CACHE_BUDGET {
            map.clear();
            *used = 0;
        }
        *used += total;
        map.insert(key, Arc::new(enc));
    }
}

/// Encodes `peer.<table>` (all columns) into the cache ahead of the first query
/// (`--prewarm`), so even the first SELECT replays bytes.
pub fn prewarm(cache: &Cache, table: &str) -> Result<u64, String> {
    let (shape_name, rows) = table
        .rsplit_once('_')
        .ok_or_else(|| format!("bad table name {table}"))?;
    let shape = Shape::parse(shape_name).ok_or_else(|| format!("unknown shape {shape_name}"))?;
    let rows: u64 = rows
        .parse()
        .map_err(|_| format!("bad row count in {table}"))?;
    let cols = columns(&shape);
    let q = Query {
        shape: shape.clone(),
        rows,
        cols: (0..cols.len()).collect(),
        faults: Faults::default(),
    };
    let tys: Vec<Ty> = cols.iter().map(|c| c.ty).collect();
    let mut blocks = Vec::new();
    let mut total = 0usize;
    let mut buf = Vec::with_capacity(BLOCK + 4096);
    for i in 0..rows {
        encode_row(&q, &tys, i, &mut buf);
        if buf.len() >= BLOCK || i + 1 == rows {
            total += buf.len();
            if total > MAX_ONE {
                return Err(format!("{table}: more than {MAX_ONE} bytes, not cacheable"));
            }
            blocks.push(Arc::new(std::mem::replace(
                &mut buf,
                Vec::with_capacity(BLOCK + 4096),
            )));
        }
    }
    cache.insert(
        (shape, rows, q.cols.clone()),
        Encoded {
            meta: token::colmetadata(&cols),
            blocks,
        },
        total,
    );
    Ok(total as u64)
}

fn stream_faulty(q: &Query, cols: &[Column], tys: &[Ty], r: &mut Resp) -> io::Result<Streamed> {
    let f = &q.faults;
    r.put(&token::colmetadata(cols))?;
    if let Some(s) = f.stall {
        r.flush_partial()?;
        if sleep_polling(r, s) {
            return Ok(Streamed::Cancelled);
        }
    }
    let all_mixed = q.shape == Shape::Mixed && q.cols.iter().copied().eq(0..8);
    let lob = matches!(
        q.shape,
        Shape::LobNvarcharMax(_) | Shape::LobVarbinaryMax(_)
    ) && q.cols.iter().copied().eq(0..2);
    if (f.corrupt.is_some() && !all_mixed) || (f.plp_unknown && !lob) {
        r.put(&token::message(
            50000,
            "tds-peer: value faults need SELECT * FROM peer.mixed_N (plp_unknown: peer.lob_*_N)",
            16,
            1,
            1,
        ))?;
        return Ok(Streamed::Error);
    }
    let mut buf = Vec::new();
    for i in 0..q.rows {
        if let Some((c, at)) = f.corrupt
            && at == i
        {
            let mut good = Vec::new();
            encode_mixed_fast(i, &mut good);
            crate::faults::corrupt_mixed_row(good, i, c, &mut buf);
            if c == Corrupt::Truncated {
                r.put(&buf)?;
                r.end_message_now()?;
                eprintln!("tds-peer: fault: row {i} truncated, dropping connection");
                return Err(crate::faults::killed("fault:truncated_at"));
            }
            continue;
        }
        if f.drop_after == Some(i) {
            r.put(&buf)?;
            r.flush_partial()?;
            eprintln!("tds-peer: fault: dropping connection after {i} rows");
            return Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "fault:drop_after",
            ));
        }
        if f.pause_after == Some(i) {
            r.put(&buf)?;
            buf.clear();
            r.flush_partial()?;
            if sleep_polling(r, f.pause.unwrap_or(0.5)) {
                return Ok(Streamed::Cancelled);
            }
        }
        if f.error_after == Some(i) {
            r.put(&buf)?;
            r.put(&token::message(
                50000,
                &format!("tds-peer fault: error after {i} rows"),
                16,
                1,
                1,
            ))?;
            return Ok(Streamed::Error);
        }
        if f.malformed_after == Some(i) {
            r.put(&buf)?;
            // 0xEE is not a valid token type: the client must report a protocol error.
            r.put(&[0xEE, 0xFF, 0xFF, 0xFF, 0x13, 0x37])?;
            r.end_message_now()?;
            eprintln!(
                "tds-peer: fault: malformed token stream after {i} rows, dropping connection"
            );
            return Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "fault:malformed_after",
            ));
        }
        let start = buf.len();
        encode_row(q, tys, i, &mut buf);
        if f.plp_unknown {
            crate::faults::plp_unknown_length(&mut buf[start..]);
        }
        if buf.len() >= BLOCK {
            r.put(&buf)?;
            buf.clear();
            if r.cancelled() {
                return Ok(Streamed::Cancelled);
            }
        }
    }
    r.put(&buf)?;
    Ok(Streamed::Rows(q.rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::{corrupt_mixed_row, name_offset};
    use crate::sql::lexer::tokenize;

    #[test]
    fn corrupt_rows_change_only_their_value() {
        for i in [0u64, 1, 7] {
            let mut good = Vec::new();
            encode_mixed_fast(i, &mut good);
            let mut bad = Vec::new();
            corrupt_mixed_row(good.clone(), i, Corrupt::Surrogate, &mut bad);
            assert_eq!(good.len(), bad.len());
            let at = name_offset(i);
            assert_eq!(&bad[at + 10..at + 12], &[0x00, 0xD8]);
            let mut odd = Vec::new();
            corrupt_mixed_row(good.clone(), i, Corrupt::OddLength, &mut odd);
            assert_eq!(odd.len(), good.len() + 1);
            assert_eq!(u16::from_le_bytes([odd[at], odd[at + 1]]) % 2, 1);
            let mut cut = Vec::new();
            corrupt_mixed_row(good.clone(), i, Corrupt::Truncated, &mut cut);
            assert_eq!(cut.len(), at + 6);
        }
    }

    fn q(sql: &str) -> Option<Result<Query, String>> {
        let t = tokenize(sql).unwrap();
        let sg: Vec<&Tok> = t.iter().filter(|t| !t.is_space()).collect();
        Query::parse(&sg, sql)
    }

    /// Found by fuzz/peer_sql: a TOP with no count before FROM sliced the select list with its
    /// start past its end.
    #[test]
    fn top_without_count_is_an_error_not_a_panic() {
        assert!(matches!(q("SELECT TOP FROM peer.mixed_10"), Some(Err(_))));
        assert!(matches!(q("SELECT TOP ( FROM peer.mixed_10"), Some(Err(_))));
        assert!(q("SELECT TOP 3 * FROM peer.mixed_10").unwrap().is_ok());
    }

    /// Regression: `gen_dec(.., 38, ..)` cast a remainder above i128::MAX before subtracting
    /// (a debug build panicked with "attempt to subtract with overflow"). The values must be the
    /// ones release builds always produced (the wrapping arithmetic), which eng/peers/synthetic.py
    /// mirrors.
    #[test]
    fn dec_unscaled_stays_in_range_and_matches_wrapping() {
        let top = 10u128.pow(38) - 1;
        for m in [
            0,
            1,
            top - 1,
            top,
            top + 1,
            2 * top,
            2 * top + 1,
            u128::MAX,
            u128::MAX / 2 + 7,
        ] {
            let u = dec_unscaled(m, 38);
            let wrapping = ((m % (2 * top + 1)) as i128).wrapping_sub(top as i128);
            assert_eq!(u, wrapping, "m={m}");
            assert!(u.unsigned_abs() <= top);
        }
        for p in [1, 9, 18, 19, 28, 38] {
            for i in 0..200 {
                let _ = gen_dec(i, 7, p, 0);
            }
        }
        assert_eq!(dec_unscaled(0, 1), -9);
        assert_eq!(dec_unscaled(18, 1), 9);
    }

    #[test]
    fn parse_queries() {
        let x = q("SELECT * FROM peer.mixed_100000 /* fault:drop_after=500 */")
            .unwrap()
            .unwrap();
        assert_eq!(
            (x.shape, x.rows, x.cols.len(), x.faults.drop_after),
            (Shape::Mixed, 100_000, 8, Some(500))
        );
        let x = q("SELECT * FROM peer.mixed_10 /* fault:pause_after=5 fault:pause=0.25 */")
            .unwrap()
            .unwrap();
        assert_eq!(
            (x.faults.pause_after, x.faults.pause),
            (Some(5), Some(0.25))
        );
        assert!(x.faults.any());
        let x = q("select top 5 id, body from [peer].[lob_nvarcharmax_256k_20]")
            .unwrap()
            .unwrap();
        assert_eq!(
            (x.shape, x.rows, x.cols.clone()),
            (Shape::LobNvarcharMax(256), 5, vec![0, 1])
        );
        assert!(q("select * from t").is_none());
        assert!(q("select * from peer.nosuch_10").unwrap().is_err());
    }

    #[test]
    fn gen_dec_38_digits_stays_in_range() {
        // Rows 0..10 of types_all include a c_dec38 draw past i128::MAX (debug builds panicked).
        let top = 10i128.pow(38) - 1;
        for i in 0..2000 {
            let Value::Text(t) = gen_dec(i, 11, 38, 10) else {
                panic!("decimal text")
            };
            let digits: String = t.chars().filter(|c| c.is_ascii_digit()).collect();
            assert!(digits.len() <= 38, "{t}");
            let unscaled: i128 = digits.parse().unwrap();
            assert!(unscaled <= top, "{t}");
        }
    }

    #[test]
    fn mixed_fast_path_matches_generic() {
        let tys: Vec<Ty> = columns(&Shape::Mixed).iter().map(|c| c.ty).collect();
        for i in (0..3000).chain([86_399, 86_400, 999_999, 12_345_678]) {
            let mut fast = Vec::new();
            encode_mixed_fast(i, &mut fast);
            let mut slow = Vec::new();
            value::put_row(&mut slow, &tys, &row(&Shape::Mixed, i), true);
            assert_eq!(fast, slow, "row {i}");
        }
    }

    #[test]
    fn mix_is_stable() {
        // Mirrored in eng/peers/synthetic.py; this pins the formula.
        assert_eq!(mix(0, 0), 0);
        assert_eq!(
            mix(1, 0),
            2_654_435_761u64.wrapping_mul(11_400_714_819_323_198_485)
        );
    }
}
