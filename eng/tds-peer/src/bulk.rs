//! SQL Server's bulk load as a client sends it: the `INSERT BULK` statement (a SQL batch) and
//! the BULK LOAD message (packet type 0x07) that follows it: COLMETADATA, one ROW or NBCROW
//! token per row, DONE (MS-TDS 2.2.1.5, 2.2.6.1).
//!
//! Both parsers are pure: they turn what the client sent into a statement and rows of the
//! canonical values RPC parameters decode to (`rpc.rs`), and the engine applies them with SQL
//! Server's bulk semantics. What the three clients send is recorded in
//! `captures/bulk-load.md`: Driver 18 writes the statement in lower case with collations and
//! announces every column nullable; FreeTDS writes upper-case types without a datetime2 scale
//! and sends NOT NULL columns with their fixed-length types.

// A wire parser: every cast that can lose sign or bits is decided (issue 36; a hostile
// client's numbers end in a TDS error or a closed connection, never a wrapped length/handle).
#![warn(
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    clippy::cast_possible_truncation
)]

use crate::conv;
use crate::sql::lexer::{self, Tok};
use crate::wire::{IMAGE, NTEXT, TEXT, get, proto_err, type_info_len, u16_at, u32_at, value_len};
use std::io;

/// One `INSERT BULK` statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkStatement {
    /// The target's name parts as written (`[dbo].[t]` is `["dbo", "t"]`; `db..t` keeps an
    /// empty part).
    pub table: Vec<String>,
    pub columns: Vec<BulkColumn>,
    pub hints: BulkHints,
}

/// One column of the statement's list, in the order the rows send them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkColumn {
    pub name: String,
    /// The type as written (`nvarchar(50)`, `DECIMAL(18,4)`, `DATETIME2`).
    pub type_text: String,
    pub collation: Option<String>,
}

/// The `WITH (...)` list. SqlClient and mssql-python send the first four; `ORDER` and the
/// batch-size hints come from bcp's `-h`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BulkHints {
    pub keep_nulls: bool,
    pub tablock: bool,
    pub check_constraints: bool,
    pub fire_triggers: bool,
    /// `ORDER(col [ASC|DESC], ...)`: the columns the rows are sorted by, with descending flags.
    pub order: Vec<(String, bool)>,
    pub rows_per_batch: Option<u64>,
    pub kilobytes_per_batch: Option<u64>,
}

/// The statement in `sql`, `None` when it does not start with `INSERT BULK`, or the reason it
/// is malformed (SQL Server answers those with syntax error 102).
pub fn parse_insert_bulk(sql: &str) -> Result<Option<BulkStatement>, String> {
    let toks: Vec<Tok> = lexer::tokenize(sql)?
        .into_iter()
        .filter(|t| !t.is_space())
        .collect();
    if !(toks.first().is_some_and(|t| t.is_word("INSERT"))
        && toks.get(1).is_some_and(|t| t.is_word("BULK")))
    {
        return Ok(None);
    }
    let mut p = 2;
    let table = name_parts(&toks, &mut p)?;
    if !toks.get(p).is_some_and(|t| t.is_punct('(')) {
        return Err("INSERT BULK needs its column list".into());
    }
    let close = lexer::matching(&toks, p).ok_or("unclosed column list")?;
    let columns = split_top(&toks[p + 1..close])
        .into_iter()
        .map(column)
        .collect::<Result<Vec<_>, _>>()?;
    p = close + 1;
    let mut hints = BulkHints::default();
    if toks.get(p).is_some_and(|t| t.is_word("WITH")) {
        if !toks.get(p + 1).is_some_and(|t| t.is_punct('(')) {
            return Err("WITH needs a parenthesised hint list".into());
        }
        let close = lexer::matching(&toks, p + 1).ok_or("unclosed hint list")?;
        for hint in split_top(&toks[p + 2..close]) {
            apply_hint(&mut hints, hint)?;
        }
        p = close + 1;
    }
    if p < toks.len() && !toks[p..].iter().all(|t| t.is_punct(';')) {
        return Err(format!("unexpected {} after INSERT BULK", toks[p].text()));
    }
    Ok(Some(BulkStatement {
        table,
        columns,
        hints,
    }))
}

/// `a`, `[a].[b]`, `#t`, `db..t`: the parts up to the first token that is not a name or a dot.
fn name_parts(toks: &[Tok], p: &mut usize) -> Result<Vec<String>, String> {
    let mut parts = vec![String::new()];
    while let Some(t) = toks.get(*p) {
        match t {
            Tok::Word(w) | Tok::Quoted(w) if parts.last().is_some_and(String::is_empty) => {
                *parts.last_mut().expect("never empty") = w.clone();
            }
            Tok::Punct('.') => parts.push(String::new()),
            _ => break,
        }
        *p += 1;
    }
    if parts.last().is_none_or(String::is_empty) {
        return Err("INSERT BULK needs a table name".into());
    }
    Ok(parts)
}

/// The comma-separated items of a list, commas inside parentheses kept.
fn split_top(toks: &[Tok]) -> Vec<&[Tok]> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, t) in toks.iter().enumerate() {
        match t {
            Tok::Punct('(') => depth += 1,
            Tok::Punct(')') => depth = depth.saturating_sub(1),
            Tok::Punct(',') if depth == 0 => {
                items.push(&toks[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < toks.len() {
        items.push(&toks[start..]);
    }
    items
}

/// `[name] type[(args)] [COLLATE collation]`.
fn column(toks: &[Tok]) -> Result<BulkColumn, String> {
    let name = match toks.first() {
        Some(Tok::Word(w) | Tok::Quoted(w)) => w.clone(),
        _ => return Err("a column of INSERT BULK needs a name".into()),
    };
    // After the name: a column may itself be called COLLATE (fuzz: peer_bulk).
    let collate = toks
        .iter()
        .skip(1)
        .position(|t| t.is_word("COLLATE"))
        .map(|i| i + 1);
    let type_toks = &toks[1..collate.unwrap_or(toks.len())];
    if type_toks.is_empty() {
        return Err(format!("column {name} of INSERT BULK needs a type"));
    }
    let collation = match collate {
        Some(i) => Some(match toks.get(i + 1) {
            Some(Tok::Word(w) | Tok::Quoted(w)) => w.clone(),
            _ => return Err("COLLATE needs a collation name".into()),
        }),
        None => None,
    };
    Ok(BulkColumn {
        name,
        type_text: type_toks.iter().map(Tok::text).collect(),
        collation,
    })
}

fn apply_hint(hints: &mut BulkHints, toks: &[Tok]) -> Result<(), String> {
    let word = toks.first().and_then(Tok::word).unwrap_or_default();
    let number = || -> Result<u64, String> {
        match (toks.get(1), toks.get(2)) {
            (Some(t), Some(Tok::Num(n))) if t.is_punct('=') => n
                .parse()
                .map_err(|_| format!("{word} needs a whole number")),
            _ => Err(format!("{word} needs = and a number")),
        }
    };
    match word.to_ascii_uppercase().as_str() {
        "KEEP_NULLS" => hints.keep_nulls = true,
        "TABLOCK" => hints.tablock = true,
        "CHECK_CONSTRAINTS" => hints.check_constraints = true,
        "FIRE_TRIGGERS" => hints.fire_triggers = true,
        "ROWS_PER_BATCH" => hints.rows_per_batch = Some(number()?),
        "KILOBYTES_PER_BATCH" => hints.kilobytes_per_batch = Some(number()?),
        "ORDER" => {
            let close = match toks.get(1) {
                Some(t) if t.is_punct('(') => lexer::matching(toks, 1).ok_or("unclosed ORDER")?,
                _ => return Err("ORDER needs a column list".into()),
            };
            for item in split_top(&toks[2..close]) {
                let name = match item.first() {
                    Some(Tok::Word(w) | Tok::Quoted(w)) => w.clone(),
                    _ => return Err("ORDER needs column names".into()),
                };
                hints
                    .order
                    .push((name, item.get(1).is_some_and(|t| t.is_word("DESC"))));
            }
        }
        _ => return Err(format!("'{word}' is not a recognized bulk load hint")),
    }
    Ok(())
}

/// The rows of one BULK LOAD message, with the columns its COLMETADATA announced.
#[derive(Debug, Default)]
pub struct BulkRows {
    /// Each column's name and TYPE_INFO bytes as announced.
    pub columns: Vec<(String, Vec<u8>)>,
    pub rows: Vec<Vec<rusqlite::types::Value>>,
}

/// A BULK LOAD message as received, with the decoder its values are read with (the RPC
/// parameter decoder, passed in by the session: the engine does not depend on `rpc.rs`).
#[derive(Clone, Copy)]
pub struct BulkMessage<'d> {
    pub data: &'d [u8],
    pub decode: fn(&[u8]) -> io::Result<rusqlite::types::Value>,
}

impl BulkMessage<'_> {
    /// Every row, kept.
    pub fn rows(&self) -> io::Result<BulkRows> {
        parse_bulk_message(self.data, self.decode)
    }

    /// Each row in turn (see [`scan_bulk_message`]); the announced columns.
    pub fn scan(
        &self,
        on_row: impl FnMut(&mut Vec<rusqlite::types::Value>),
    ) -> io::Result<Vec<(String, Vec<u8>)>> {
        scan_bulk_message(self.data, self.decode, on_row)
    }
}

const COLMETADATA: u8 = 0x81;
const ROW: u8 = 0xD1;
const NBCROW: u8 = 0xD2;
const DONE: u8 = 0xFD;

/// Parses a BULK LOAD message, keeping every row. `read_value` decodes one TYPE_INFO followed
/// by its value (the RPC parameter decoder); legacy LOB values reach it as the (MAX) type of
/// the same family.
pub fn parse_bulk_message(
    d: &[u8],
    read_value: impl Fn(&[u8]) -> io::Result<rusqlite::types::Value>,
) -> io::Result<BulkRows> {
    let mut rows = Vec::new();
    let columns = scan_bulk_message(d, read_value, |row| rows.push(std::mem::take(row)))?;
    Ok(BulkRows { columns, rows })
}

/// Walks a BULK LOAD message: `on_row` gets each row, decoded into one buffer that is reused
/// for the next unless `on_row` takes it (`--bulk-discard` checks and counts a million-row load
/// without a million allocations: they were most of the peer's time in the profiler's bulk
/// tasks). Returns the columns the message's COLMETADATA announced.
pub fn scan_bulk_message(
    d: &[u8],
    read_value: impl Fn(&[u8]) -> io::Result<rusqlite::types::Value>,
    mut on_row: impl FnMut(&mut Vec<rusqlite::types::Value>),
) -> io::Result<Vec<(String, Vec<u8>)>> {
    let mut columns = Vec::new();
    let mut row = Vec::new();
    let mut scratch = Vec::new();
    let mut p = 0;
    while p < d.len() {
        let token = d[p];
        p += 1;
        match token {
            COLMETADATA => {
                columns = colmetadata(d, &mut p)?;
            }
            ROW | NBCROW => {
                if columns.is_empty() {
                    return Err(proto_err("a row before COLMETADATA"));
                }
                let n = columns.len();
                let nulls = if token == NBCROW {
                    let bitmap = get(d, p, n.div_ceil(8))?;
                    p += bitmap.len();
                    Some(bitmap)
                } else {
                    None
                };
                row.clear();
                row.reserve(n);
                for (i, (_, ti)) in columns.iter().enumerate() {
                    if nulls.is_some_and(|b| b[i / 8] & (1 << (i % 8)) != 0) {
                        row.push(rusqlite::types::Value::Null);
                        continue;
                    }
                    row.push(value(ti, d, &mut p, &read_value, &mut scratch)?);
                }
                on_row(&mut row);
            }
            DONE => {
                // Status, CurCmd and an 8-byte row count (TDS 7.2+), or a 4-byte one as
                // mssql-python 1.16 sends it (captures/bulk-load.md): the message ends there.
                match d.len().checked_sub(p) {
                    Some(12 | 8) => return Ok(columns),
                    Some(n) if n > 12 => {
                        return Err(proto_err("bytes after the bulk load's DONE"));
                    }
                    _ => return Err(proto_err("truncated DONE in a bulk load")),
                }
            }
            t => {
                return Err(proto_err(format!(
                    "unexpected token {t:#04x} in a bulk load"
                )));
            }
        }
    }
    // FreeTDS 1.3 ends its BULK LOAD message after the last row, without a DONE token
    // (captures/bulk-load.md); SQL Server takes it, so the message's end ends the rows.
    // An empty message: FreeTDS's bcp_done after a row it could not convert sends the BULK
    // LOAD message with no tokens at all; it copies no row.
    if columns.is_empty() && !d.is_empty() {
        return Err(proto_err("a bulk load message without COLMETADATA"));
    }
    Ok(columns)
}

fn colmetadata(d: &[u8], p: &mut usize) -> io::Result<Vec<(String, Vec<u8>)>> {
    let count = u16_at(d, *p)?;
    *p += 2;
    if count == 0xFFFF {
        return Ok(Vec::new());
    }
    let mut columns = Vec::with_capacity(count.min(4096));
    for _ in 0..count {
        *p += 4 + 2; // UserType (Driver 18 puts the type byte there), Flags
        let n = type_info_len(d, *p)?;
        let ti = get(d, *p, n)?.to_vec();
        *p += n;
        if matches!(ti[0], IMAGE | TEXT | NTEXT) {
            // TableName: a count of parts, each a US_VARCHAR.
            let parts = get(d, *p, 1)?[0];
            *p += 1;
            for _ in 0..parts {
                *p += 2 + 2 * u16_at(d, *p)?;
            }
        }
        let name_len = usize::from(get(d, *p, 1)?[0]);
        let name = conv::from_utf16(get(d, *p + 1, 2 * name_len)?);
        *p += 1 + 2 * name_len;
        columns.push((name, ti));
    }
    Ok(columns)
}

/// One non-NULL-bitmapped value of a column whose TYPE_INFO is `ti`, decoded.
/// `scratch` holds the TYPE_INFO and value together, as the decoder reads them; it is reused
/// from value to value.
fn value(
    ti: &[u8],
    d: &[u8],
    p: &mut usize,
    read_value: &impl Fn(&[u8]) -> io::Result<rusqlite::types::Value>,
    scratch: &mut Vec<u8>,
) -> io::Result<rusqlite::types::Value> {
    if matches!(ti[0], IMAGE | TEXT | NTEXT) {
        return legacy_lob(ti, d, p, read_value);
    }
    let n = value_len(ti, d, *p)?;
    // Bounds-checked before anything is reserved: `n` is a length the client announced.
    let bytes = get(d, *p, n)?;
    scratch.clear();
    scratch.extend_from_slice(ti);
    scratch.extend_from_slice(bytes);
    *p += n;
    read_value(scratch)
}

/// A text/ntext/image value: a text pointer (its length byte 0 for NULL), a timestamp, then
/// the value with a 4-byte length. Decoded as the (MAX) type of its family, one PLP chunk.
fn legacy_lob(
    ti: &[u8],
    d: &[u8],
    p: &mut usize,
    read_value: &impl Fn(&[u8]) -> io::Result<rusqlite::types::Value>,
) -> io::Result<rusqlite::types::Value> {
    let ptr_len = usize::from(get(d, *p, 1)?[0]);
    *p += 1;
    if ptr_len == 0 {
        return Ok(rusqlite::types::Value::Null);
    }
    *p += ptr_len + 8; // text pointer, timestamp
    let n = u32_at(d, *p)?;
    // The 4 length bytes as sent are the PLP chunk's length (no cast back to u32).
    let chunk_len = get(d, *p, 4)?;
    let data = get(d, *p + 4, n)?;
    *p += 4 + n;
    let mut buf = match ti[0] {
        IMAGE => vec![0xA5, 0xFF, 0xFF],
        TEXT => [&[0xA7, 0xFF, 0xFF][..], &ti[5..10]].concat(),
        _ => [&[0xE7, 0xFF, 0xFF][..], &ti[5..10]].concat(),
    };
    buf.extend_from_slice(&(n as u64).to_le_bytes());
    buf.extend_from_slice(chunk_len);
    buf.extend_from_slice(data);
    buf.extend_from_slice(&[0; 4]);
    read_value(&buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::types::Value;

    #[test]
    fn driver_18s_statement() {
        let s = parse_insert_bulk(
            "insert bulk bcpt3([id] int,[name] nvarchar(50) collate SQL_Latin1_General_CP1_CI_AS,[amt] decimal(18,4),[ts] datetime2(7),[b] varbinary(max))",
        )
        .unwrap()
        .unwrap();
        assert_eq!(s.table, vec!["bcpt3"]);
        let cols: Vec<_> = s
            .columns
            .iter()
            .map(|c| {
                (
                    c.name.as_str(),
                    c.type_text.as_str(),
                    c.collation.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            cols,
            vec![
                ("id", "int", None),
                ("name", "nvarchar(50)", Some("SQL_Latin1_General_CP1_CI_AS")),
                ("amt", "decimal(18,4)", None),
                ("ts", "datetime2(7)", None),
                ("b", "varbinary(max)", None),
            ]
        );
        assert_eq!(s.hints, BulkHints::default());
    }

    #[test]
    fn freetds_statement_and_every_hint() {
        let s = parse_insert_bulk(
            "insert bulk [dbo].[t] ([id] INT, [ts] DATETIME2) with (KEEP_NULLS, TABLOCK, CHECK_CONSTRAINTS, FIRE_TRIGGERS, ROWS_PER_BATCH = 10, ORDER([id] ASC, ts DESC))",
        )
        .unwrap()
        .unwrap();
        assert_eq!(s.table, vec!["dbo", "t"]);
        assert_eq!(s.columns[1].type_text, "DATETIME2");
        let h = s.hints;
        assert!(h.keep_nulls && h.tablock && h.check_constraints && h.fire_triggers);
        assert_eq!(h.rows_per_batch, Some(10));
        assert_eq!(
            h.order,
            vec![("id".to_string(), false), ("ts".to_string(), true)]
        );
    }

    #[test]
    fn other_statements_and_malformed_ones() {
        assert_eq!(parse_insert_bulk("INSERT INTO t VALUES (1)").unwrap(), None);
        assert_eq!(parse_insert_bulk("select 1").unwrap(), None);
        assert!(parse_insert_bulk("insert bulk t").is_err());
        assert!(parse_insert_bulk("insert bulk t (a int").is_err());
        assert!(parse_insert_bulk("insert bulk t (a int) with (NOPE)").is_err());
        assert!(parse_insert_bulk("insert bulk t (a int) garbage").is_err());
        assert!(parse_insert_bulk("insert bulk (a int)").is_err());
        // A column named COLLATE (found by fuzzing: the slice before it was empty and reversed).
        // (the engine, not the parser, refuses the unknown type)
        let s = parse_insert_bulk("insert bulk t ([x] int, collate Latin1_General_CI_AS)");
        assert_eq!(s.unwrap().unwrap().columns[1].name, "collate");
        let s =
            parse_insert_bulk("insert bulk t ([collate] nvarchar(5) collate Latin1_General_CI_AS)");
        assert_eq!(
            s.unwrap().unwrap().columns[0].collation.as_deref(),
            Some("Latin1_General_CI_AS")
        );
    }

    /// A decoder standing in for the RPC one: INTN, NVARCHAR (as its byte length) and PLP
    /// VARBINARY (as its bytes).
    fn read(b: &[u8]) -> io::Result<Value> {
        Ok(match b[0] {
            0x26 => match b[2] {
                0 => Value::Null,
                4 => Value::Integer(i64::from(i32::from_le_bytes(b[3..7].try_into().unwrap()))),
                _ => unreachable!(),
            },
            0xE7 => match u16::from_le_bytes([b[8], b[9]]) {
                0xFFFF => Value::Null,
                n => Value::Text(conv::from_utf16(&b[10..10 + usize::from(n)])),
            },
            0xA5 => Value::Blob(b[3 + 8 + 4..b.len() - 4].to_vec()),
            t => panic!("type {t:#04x}"),
        })
    }

    #[test]
    fn driver_18s_rows_with_plp_and_an_nbcrow() {
        let mut d = hex("810300");
        d.extend(hex("38000000040026040269006400")); // id: INTN(4), UserType = 0x38
        d.extend(hex("e70000000500e764000904d00034046e0061006d006500")); // name nvarchar(50)
        d.extend(hex("a50000000500a5ffff016200")); // b varbinary(max)
        d.extend(hex("d10407000000")); // ROW: id 7
        d.extend(hex("0400")); // name: 2 bytes
        d.extend("hé".encode_utf16().flat_map(u16::to_le_bytes));
        d.extend(hex("feffffffffffffff03000000010203 00000000"
            .replace(' ', "")
            .as_str()));
        d.extend(hex("d206")); // NBCROW: name and b NULL
        d.extend(hex("0408000000"));
        d.extend(hex("fd000000000000000000000000"));
        let rows = parse_bulk_message(&d, read).unwrap();
        let names: Vec<_> = rows.columns.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["id", "name", "b"]);
        assert_eq!(
            rows.rows,
            vec![
                vec![
                    Value::Integer(7),
                    Value::Text("hé".into()),
                    Value::Blob(vec![1, 2, 3])
                ],
                vec![Value::Integer(8), Value::Null, Value::Null],
            ]
        );
    }

    #[test]
    fn a_legacy_ntext_value_reads_as_nvarchar_max() {
        let mut d = hex("810100");
        d.extend(hex(
            "00000000 0900 63 ffffff7f 0904d00034 01 0100 7400 01 6e00"
                .replace(' ', "")
                .as_str(),
        ));
        d.push(ROW);
        d.push(16);
        d.extend([0xAA; 16]); // text pointer
        d.extend([0xBB; 8]); // timestamp
        d.extend(4u32.to_le_bytes());
        d.extend("ok".encode_utf16().flat_map(u16::to_le_bytes));
        d.extend(hex("fd000000000000000000000000"));
        let decode = |b: &[u8]| -> io::Result<Value> {
            assert_eq!(&b[..3], &[0xE7, 0xFF, 0xFF]);
            Ok(Value::Text(conv::from_utf16(
                &b[3 + 5 + 8 + 4..b.len() - 4],
            )))
        };
        let rows = parse_bulk_message(&d, decode).unwrap();
        assert_eq!(rows.rows, vec![vec![Value::Text("ok".into())]]);
    }

    #[test]
    fn truncated_and_malformed_messages_are_protocol_errors() {
        let whole = hex("8101002600000004002604016100d10407000000fd000000000000000000000000");
        assert_eq!(parse_bulk_message(&whole, read).unwrap().rows.len(), 1);
        // FreeTDS's form: the message ends after COLMETADATA or after a whole row, no DONE.
        // A DONE with a 4-byte row count (mssql-python 1.16) is whole too.
        let (metadata_end, done_at, short_done) = (14, whole.len() - 13, whole.len() - 4);
        for cut in 1..whole.len() {
            let parsed = parse_bulk_message(&whole[..cut], read);
            if cut == metadata_end || cut == done_at || cut == short_done {
                assert_eq!(parsed.unwrap().rows.len(), usize::from(cut != metadata_end));
            } else {
                assert!(parsed.is_err(), "cut at {cut}");
            }
        }
        assert!(parse_bulk_message(&hex("d10407000000"), read).is_err());
        assert!(parse_bulk_message(&hex("ee"), read).is_err());
        // A PLP chunk that announces 4 GiB is refused before anything is reserved.
        let mut huge = hex("810100a50000000500a5ffff016200d1feffffffffffffff");
        huge.extend(u32::MAX.to_le_bytes());
        assert!(parse_bulk_message(&huge, read).is_err());
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }
}
