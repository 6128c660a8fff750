//! Parameters: Python-free values and their column-wise binding (one row for `execute`, a
//! parameter array for `executemany`, sent in one round trip per array).

use crate::backend::{Backend, Dbms, Driver};
use crate::codes::sql;
use crate::decode::{Date, Time, Timestamp, TimestampOffset, u128_to_guid};
use crate::error::{Error, Result};
use crate::odbc::Stmt;
use crate::odbc::sys::{CDataType, Len, NULL_DATA, ParamType, Pointer};

mod identifier;
mod markers;
mod output;

pub use identifier::check_procedure_name;
pub use markers::count_markers;
pub use output::{OutputParam, OutputType};

/// One parameter value, already converted from the caller's language.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// UTF-16 code units (bound as `SQL_C_WCHAR`, so no code page is involved).
    Text(Vec<u16>),
    Bytes(Vec<u8>),
    /// Plain decimal text (`-123.4500`, no exponent) with its precision and scale.
    Decimal {
        text: String,
        precision: u32,
        scale: u32,
    },
    Date(Date),
    Time(Time),
    Timestamp(Timestamp),
    TimestampOffset(TimestampOffset),
    Guid(u128),
    /// An output or input/output parameter of a procedure call (`execute` only).
    Output(Box<OutputParam>),
}

/// A `setinputsizes` entry: overrides of the SQL type and size the engine would choose.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InputSize {
    pub sql_type: Option<i16>,
    pub column_size: Option<usize>,
    pub decimal_digits: Option<i16>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    Bool,
    Int,
    Float,
    Text,
    Bytes,
    Decimal,
    Date,
    Time,
    Timestamp,
    TimestampOffset,
    Guid,
    Output,
    /// Dates and timestamps sent as ISO text for the server to convert (see
    /// [`freetds_misencodes`]); chosen per column after [`unify`], never by it.
    DateText,
    TimestampText,
}

fn kind_of(v: &ParamValue) -> Kind {
    match v {
        ParamValue::Null => Kind::Null,
        ParamValue::Bool(_) => Kind::Bool,
        ParamValue::Int(_) => Kind::Int,
        ParamValue::Float(_) => Kind::Float,
        ParamValue::Text(_) => Kind::Text,
        ParamValue::Bytes(_) => Kind::Bytes,
        ParamValue::Decimal { .. } => Kind::Decimal,
        ParamValue::Date(_) => Kind::Date,
        ParamValue::Time(_) => Kind::Time,
        ParamValue::Timestamp(_) => Kind::Timestamp,
        ParamValue::TimestampOffset(_) => Kind::TimestampOffset,
        ParamValue::Guid(_) => Kind::Guid,
        ParamValue::Output(_) => Kind::Output,
    }
}

/// The common kind of two values of one parameter column, if one binding can carry both.
fn unify(a: Kind, b: Kind) -> Option<Kind> {
    use Kind::*;
    match (a, b) {
        (Output, _) | (_, Output) => None,
        (x, y) if x == y => Some(x),
        (Null, x) | (x, Null) => Some(x),
        (Bool, Int) | (Int, Bool) => Some(Int),
        (Bool | Int, Float) | (Float, Bool | Int) => Some(Float),
        (Int, Decimal) | (Decimal, Int) => Some(Decimal),
        _ => None,
    }
}

/// FreeTDS 1.3.17 puts the wrong day number on the wire for DATE and DATETIME2 parameters before
/// 1600-03-01, whether bound from `SQL_C_TYPE_DATE`/`_TIMESTAMP` (0001-01-01 goes out as day -1,
/// i.e. 0xFFFFFF, which reads back as 9999-12-31 or beyond; 0001-03-01 as 0001-02-28;
/// 1000-01-01 as 0999-12-31; 1582-10-15 as 1582-10-16: 382,066 of the 584,082 days before
/// 1600-03-01 were wrong in a sweep, every day from 1600-03-01 to 9999-12-31 exact) or from text
/// (its own parser reads '0001-01-01' as 2001-01-01 and '1000-01-01' as 1900-01-01). Driver 18 is
/// exact, and FreeTDS decodes such dates from the server exactly. So through FreeTDS a date or
/// timestamp column holding such a value is sent as nvarchar ISO text, which the server converts.
fn freetds_misencodes(d: &Date) -> bool {
    (d.year, d.month) < (1600, 3)
}

/// The form a date or timestamp column is sent in: native, or text where the driver would
/// corrupt the native form.
fn carried_kind<'a>(
    kind: Kind,
    values: impl IntoIterator<Item = &'a ParamValue>,
    backend: Backend,
) -> Kind {
    if backend.driver != Driver::FreeTds || !matches!(kind, Kind::Date | Kind::Timestamp) {
        return kind;
    }
    let early = values.into_iter().any(|v| match v {
        ParamValue::Date(d) => freetds_misencodes(d),
        ParamValue::Timestamp(ts) => freetds_misencodes(&ts.date),
        _ => false,
    });
    match kind {
        Kind::Date if early => Kind::DateText,
        Kind::Timestamp if early => Kind::TimestampText,
        k => k,
    }
}

/// Declared sizes are bucketed so SQL Server sees one parameter type per bucket
/// (`nvarchar(4000)` or `nvarchar(max)`), not one plan per distinct string length.
const TEXT_BUCKET_UNITS: usize = 4000;
const BINARY_BUCKET_BYTES: usize = 8000;

/// One bound parameter column: `rows` elements of `element_len` bytes plus indicators.
struct ParamColumn {
    direction: ParamType,
    /// What an output parameter's buffer is read back as (`None` for inputs).
    output: Option<OutputType>,
    c_type: CDataType,
    sql_type: i16,
    column_size: usize,
    decimal_digits: i16,
    element_len: usize,
    data: Vec<u64>,
    indicators: Vec<Len>,
}

impl ParamColumn {
    fn data_bytes(&self) -> &[u8] {
        // SAFETY: a u64 buffer viewed as bytes: same memory, u8 has no alignment requirement.
        unsafe { std::slice::from_raw_parts(self.data.as_ptr().cast::<u8>(), self.data.len() * 8) }
    }

    fn data_bytes_mut(&mut self) -> &mut [u8] {
        let len = self.data.len() * 8;
        // SAFETY: a u64 buffer viewed as bytes: same memory, u8 has no alignment requirement.
        unsafe { std::slice::from_raw_parts_mut(self.data.as_mut_ptr().cast::<u8>(), len) }
    }
}

/// Parameters ready to bind: column-wise arrays of `rows` rows.
pub struct BoundParams {
    columns: Vec<ParamColumn>,
    rows: usize,
}

impl BoundParams {
    /// Build the binding for `rows` (each row one value per marker). Returns `Ok(None)` when a
    /// column mixes values no single binding can carry (e.g. text and integers); the caller then
    /// executes row by row.
    pub fn build(
        rows: &[Vec<ParamValue>],
        sizes: &[InputSize],
        backend: impl Into<Backend>,
    ) -> Result<Option<BoundParams>> {
        let backend = backend.into();
        let n_rows = rows.len();
        let n_cols = rows.first().map_or(0, |r| r.len());
        if let Some(bad) = rows.iter().position(|r| r.len() != n_cols) {
            return Err(Error::Programming(format!(
                "row {bad} of the parameter sequence has {} values; row 0 has {n_cols}",
                rows[bad].len()
            )));
        }
        let has_output = |r: &Vec<ParamValue>| r.iter().any(|v| matches!(v, ParamValue::Output(_)));
        if n_rows > 1 && rows.iter().any(has_output) {
            return Err(Error::Programming(
                "output parameters are supported by execute (one parameter row), not executemany"
                    .into(),
            ));
        }
        let mut columns = Vec::with_capacity(n_cols);
        for c in 0..n_cols {
            if let (1, ParamValue::Output(out)) = (n_rows, &rows[0][c]) {
                columns.push(output::encode(out, c, backend)?);
                continue;
            }
            let mut kind = Kind::Null;
            for row in rows {
                match unify(kind, kind_of(&row[c])) {
                    Some(k) => kind = k,
                    None => return Ok(None),
                }
            }
            let kind = carried_kind(kind, rows.iter().map(|r| &r[c]), backend);
            let size = sizes.get(c).copied().unwrap_or_default();
            columns.push(encode_column(rows, c, kind, size, backend)?);
        }
        Ok(Some(BoundParams {
            columns,
            rows: n_rows,
        }))
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    pub fn has_outputs(&self) -> bool {
        self.columns.iter().any(|c| c.output.is_some())
    }

    /// The values the driver stored in the output parameters, as (parameter index, value).
    /// Only meaningful once every result of the execution has been read.
    pub fn read_outputs(&self) -> Result<Vec<(usize, ParamValue)>> {
        self.columns
            .iter()
            .enumerate()
            .filter(|(_, c)| c.output.is_some())
            .map(|(i, c)| Ok((i, output::decode(c, i)?)))
            .collect()
    }

    /// Bind every column to `stmt`.
    ///
    /// # Safety
    /// `self` must stay alive and unmodified until the statement has executed; the statement's
    /// parameter bindings must be reset (or the statement freed) before `self` is dropped.
    pub unsafe fn bind(&mut self, stmt: &mut Stmt) -> Result<()> {
        stmt.set_paramset_size(self.rows.max(1))?;
        for (i, col) in self.columns.iter_mut().enumerate() {
            // SAFETY: forwarded contract; data covers rows * element_len bytes, indicators rows.
            unsafe {
                stmt.bind_parameter(
                    (i + 1) as u16,
                    col.direction,
                    col.c_type,
                    col.sql_type,
                    col.column_size,
                    col.decimal_digits,
                    col.data.as_mut_ptr() as Pointer,
                    col.element_len as Len,
                    col.indicators.as_mut_ptr(),
                )?
            };
        }
        Ok(())
    }
}

fn text_of_time(t: &Time) -> String {
    format!(
        "{:02}:{:02}:{:02}.{:06}",
        t.hour,
        t.minute,
        t.second,
        t.nanosecond / 1000
    )
}

fn text_of_date(d: &Date) -> String {
    format!("{:04}-{:02}-{:02}", d.year, d.month, d.day)
}

/// All seven fraction digits: the server's conversion to datetime2(7) keeps them.
fn text_of_timestamp(ts: &Timestamp) -> String {
    let t = ts.time;
    format!(
        "{} {:02}:{:02}:{:02}.{:07}",
        text_of_date(&ts.date),
        t.hour,
        t.minute,
        t.second,
        t.nanosecond / 100
    )
}

fn text_of_offset(v: &TimestampOffset) -> String {
    let d = v.timestamp.date;
    let t = v.timestamp.time;
    let sign = if v.offset_minutes < 0 { '-' } else { '+' };
    let off = v.offset_minutes.unsigned_abs();
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:06} {sign}{:02}:{:02}",
        d.year,
        d.month,
        d.day,
        t.hour,
        t.minute,
        t.second,
        t.nanosecond / 1000,
        off / 60,
        off % 60
    )
}

fn text_of_guid(v: u128) -> String {
    let h = format!("{v:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// Append the encoded bytes of one cell for the chosen column kind to `out`; `false` for NULL
/// (nothing appended). Appending to one buffer per column spares an allocation per cell (an
/// executemany of 10,000 rows x 3 columns made 30,000).
fn encode_cell(v: &ParamValue, kind: Kind, backend: Backend, out: &mut Vec<u8>) -> bool {
    let dbms = backend.dbms;
    let wide = |s: &str, out: &mut Vec<u8>| out.extend(s.encode_utf16().flat_map(u16::to_ne_bytes));
    match (v, kind) {
        (ParamValue::Null, _) => return false,
        (ParamValue::Bool(b), Kind::Bool) => out.push(u8::from(*b)),
        (ParamValue::Bool(b), Kind::Int) => out.extend(i64::from(*b).to_ne_bytes()),
        (ParamValue::Bool(b), Kind::Float) => out.extend(f64::from(u8::from(*b)).to_ne_bytes()),
        (ParamValue::Int(i), Kind::Int) => out.extend(i.to_ne_bytes()),
        (ParamValue::Int(i), Kind::Float) => out.extend((*i as f64).to_ne_bytes()),
        (ParamValue::Int(i), Kind::Decimal) => out.extend(i.to_string().as_bytes()),
        (ParamValue::Float(f), _) => out.extend(f.to_ne_bytes()),
        (ParamValue::Text(u), _) => out.extend(u.iter().flat_map(|x| x.to_ne_bytes())),
        (ParamValue::Bytes(b), _) => out.extend_from_slice(b),
        (ParamValue::Decimal { text, .. }, _) => out.extend_from_slice(text.as_bytes()),
        (ParamValue::Date(d), Kind::DateText) => wide(&text_of_date(d), out),
        (ParamValue::Timestamp(ts), Kind::TimestampText) => wide(&text_of_timestamp(ts), out),
        (ParamValue::Date(d), _) => {
            out.extend(d.year.to_ne_bytes());
            out.extend(d.month.to_ne_bytes());
            out.extend(d.day.to_ne_bytes());
        }
        (ParamValue::Time(t), _) if backend.ss_c_types() => {
            out.extend(t.hour.to_ne_bytes());
            out.extend(t.minute.to_ne_bytes());
            out.extend(t.second.to_ne_bytes());
            out.extend([0u8, 0]);
            out.extend(t.nanosecond.to_ne_bytes());
        }
        (ParamValue::Time(t), _) => wide(&text_of_time(t), out),
        (ParamValue::Timestamp(ts), _) => out.extend(ts.to_ne_bytes()),
        (ParamValue::TimestampOffset(v), _) if backend.ss_c_types() => out.extend(v.to_ne_bytes()),
        (ParamValue::TimestampOffset(v), _) => wide(&text_of_offset(v), out),
        (ParamValue::Guid(g), _) if matches!(dbms, Dbms::SqlServer | Dbms::PostgreSql) => {
            out.extend(u128_to_guid(*g))
        }
        (ParamValue::Guid(g), _) => wide(&text_of_guid(*g), out),
        // `unify` only produces the combinations above.
        (_, _) => return false,
    }
    true
}

/// The binding of a fixed-size kind: C type, SQL type, column size, digits and the bytes one
/// value takes in the buffer (text fallbacks: room for the longest rendering plus NUL).
struct FixedBinding {
    c_type: CDataType,
    sql_type: i16,
    column_size: usize,
    digits: i16,
    element_len: usize,
}

fn fixed_binding(kind: Kind, backend: Backend) -> Option<FixedBinding> {
    let sql_server = backend.dbms == Dbms::SqlServer;
    // Output room for a driver's rendering, which may be longer than ours (7 fraction digits).
    let wide = |sql_type, chars: usize, digits| {
        (CDataType::WChar, sql_type, chars, digits, (chars + 10) * 2)
    };
    let (c_type, sql_type, column_size, digits, element_len) = match kind {
        Kind::Bool => (CDataType::Bit, sql::BIT, 1, 0, 1),
        Kind::Float => (CDataType::Double, sql::DOUBLE, 15, 0, 8),
        Kind::Date => (CDataType::TypeDate, sql::TYPE_DATE, 10, 0, 6),
        Kind::DateText => wide(sql::WVARCHAR, 10, 0),
        Kind::TimestampText => wide(sql::WVARCHAR, 27, 0),
        Kind::Time if backend.ss_c_types() => (CDataType::SsTime2, sql::SS_TIME2, 16, 7, 12),
        Kind::Time => wide(sql::TYPE_TIME, 15, 6),
        Kind::Timestamp if sql_server => (CDataType::TypeTimestamp, sql::TYPE_TIMESTAMP, 27, 7, 16),
        Kind::Timestamp => (CDataType::TypeTimestamp, sql::TYPE_TIMESTAMP, 26, 6, 16),
        Kind::TimestampOffset if backend.ss_c_types() => (
            CDataType::SsTimestampOffset,
            sql::SS_TIMESTAMPOFFSET,
            34,
            7,
            20,
        ),
        Kind::TimestampOffset => wide(sql::WVARCHAR, 40, 0),
        Kind::Guid if matches!(backend.dbms, Dbms::SqlServer | Dbms::PostgreSql) => {
            (CDataType::Guid, sql::GUID, 36, 0, 16)
        }
        Kind::Guid => wide(sql::WVARCHAR, 36, 0),
        Kind::Null | Kind::Int | Kind::Text | Kind::Bytes | Kind::Decimal | Kind::Output => {
            return None;
        }
    };
    Some(FixedBinding {
        c_type,
        sql_type,
        column_size,
        digits,
        element_len,
    })
}

fn encode_column(
    rows: &[Vec<ParamValue>],
    c: usize,
    kind: Kind,
    size: InputSize,
    backend: Backend,
) -> Result<ParamColumn> {
    let dbms = backend.dbms;
    if dbms == Dbms::PostgreSql {
        // PostgreSQL text cannot hold U+0000 and psqlODBC silently cuts the value there.
        if let Some(r) = rows
            .iter()
            .position(|row| matches!(&row[c], ParamValue::Text(u) if u.contains(&0)))
        {
            return Err(Error::Data(format!(
                "parameter {c} (row {r}): PostgreSQL text cannot contain U+0000; the driver would cut the value there"
            )));
        }
    }
    // Every cell encoded back to back into one buffer; `spans` says where each one is.
    let mut packed: Vec<u8> = Vec::with_capacity(rows.len() * 8);
    let spans: Vec<Option<std::ops::Range<usize>>> = rows
        .iter()
        .map(|r| {
            let start = packed.len();
            encode_cell(&r[c], kind, backend, &mut packed).then_some(start..packed.len())
        })
        .collect();
    let max_len = spans.iter().flatten().map(|s| s.len()).max().unwrap_or(0);
    let sql_server = dbms == Dbms::SqlServer;
    let (c_type, sql_type, column_size, digits) = match kind {
        // NULL of unknown type: VARCHAR converts implicitly to almost every SQL Server type.
        Kind::Null => (CDataType::Char, sql::VARCHAR, 1, 0),
        Kind::Int => {
            let fits_i32 = rows.iter().all(|r| match r[c] {
                ParamValue::Int(i) => i32::try_from(i).is_ok(),
                _ => true,
            });
            if fits_i32 {
                (CDataType::SBigInt, sql::INTEGER, 10, 0)
            } else {
                (CDataType::SBigInt, sql::BIGINT, 19, 0)
            }
        }
        Kind::Text => {
            let units = max_len / 2;
            if units > TEXT_BUCKET_UNITS {
                (CDataType::WChar, sql::WLONGVARCHAR, units, 0)
            } else if sql_server {
                (CDataType::WChar, sql::WVARCHAR, TEXT_BUCKET_UNITS, 0)
            } else {
                (CDataType::WChar, sql::WVARCHAR, units.max(1), 0)
            }
        }
        Kind::Bytes => {
            if max_len > BINARY_BUCKET_BYTES {
                (CDataType::Binary, sql::LONGVARBINARY, max_len, 0)
            } else if sql_server {
                (CDataType::Binary, sql::VARBINARY, BINARY_BUCKET_BYTES, 0)
            } else {
                (CDataType::Binary, sql::VARBINARY, max_len.max(1), 0)
            }
        }
        Kind::Decimal => {
            // The widest integer part and the widest scale of the column decide its type.
            let (mut int_digits, mut scale) = (0u32, 0u32);
            for r in rows {
                match &r[c] {
                    ParamValue::Decimal {
                        precision: p,
                        scale: s,
                        ..
                    } => {
                        int_digits = int_digits.max(p.saturating_sub(*s));
                        scale = scale.max(*s);
                    }
                    ParamValue::Int(i) => {
                        int_digits = int_digits.max(i.unsigned_abs().to_string().len() as u32)
                    }
                    _ => {}
                }
            }
            let precision = (int_digits + scale).max(1);
            // SQLite has nothing exact beyond 64-bit integers: a wider integral value would be
            // stored as a REAL and read back as another number (sqlite3odbc even reads a REAL
            // 1e40 in an INTEGER column as 1).
            if dbms == Dbms::Sqlite && scale == 0 && int_digits > 18 {
                return Err(Error::Data(format!(
                    "parameter {c}: an integer of {int_digits} digits cannot be stored exactly by SQLite (64-bit integers)"
                )));
            }
            // SQL Server's DECIMAL stops at 38 digits; PostgreSQL's numeric goes far beyond.
            if dbms == Dbms::SqlServer && precision > 38 {
                return Err(Error::Data(format!(
                    "parameter {c}: a Decimal needing precision {precision} (scale {scale}) does not fit SQL Server's DECIMAL(38)"
                )));
            }
            (
                CDataType::Char,
                sql::NUMERIC,
                precision as usize,
                scale.min(i16::MAX as u32) as i16,
            )
        }
        Kind::Output => {
            return Err(Error::Internal(
                "output parameter in a parameter array".into(),
            ));
        }
        fixed => {
            let b = fixed_binding(fixed, backend)
                .ok_or_else(|| Error::Internal(format!("no binding for {fixed:?}")))?;
            (b.c_type, b.sql_type, b.column_size, b.digits)
        }
    };
    let element_len = max_len.max(1);
    let mut col = ParamColumn {
        direction: ParamType::Input,
        output: None,
        c_type,
        sql_type: size.sql_type.unwrap_or(sql_type),
        column_size: size.column_size.unwrap_or(column_size),
        decimal_digits: size.decimal_digits.unwrap_or(digits),
        element_len,
        data: vec![0u64; (element_len * rows.len().max(1)).div_ceil(8)],
        indicators: vec![NULL_DATA; rows.len().max(1)],
    };
    for (r, span) in spans.iter().enumerate() {
        if let Some(span) = span {
            col.indicators[r] = span.len() as Len;
        }
    }
    let data = col.data_bytes_mut();
    for (r, span) in spans.into_iter().enumerate() {
        if let Some(span) = span {
            let start = r * element_len;
            data[start..start + span.len()].copy_from_slice(&packed[span]);
        }
    }
    Ok(col)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> ParamValue {
        ParamValue::Text(s.encode_utf16().collect())
    }

    #[test]
    fn text_is_bucketed_for_sql_server() {
        let p = BoundParams::build(&[vec![w("ab")], vec![w("abcdef")]], &[], Dbms::SqlServer)
            .unwrap()
            .unwrap();
        let col = &p.columns[0];
        assert_eq!(col.sql_type, sql::WVARCHAR);
        assert_eq!(col.column_size, 4000);
        assert_eq!(col.element_len, 12);
        assert_eq!(col.indicators, vec![4, 12]);
    }

    #[test]
    fn long_text_becomes_max() {
        let long: String = "x".repeat(4001);
        let p = BoundParams::build(&[vec![w(&long)]], &[], Dbms::SqlServer)
            .unwrap()
            .unwrap();
        assert_eq!(p.columns[0].sql_type, sql::WLONGVARCHAR);
    }

    #[test]
    fn ints_widen_to_floats_and_nulls_take_the_column_kind() {
        let p = BoundParams::build(
            &[
                vec![ParamValue::Int(1)],
                vec![ParamValue::Null],
                vec![ParamValue::Float(2.5)],
            ],
            &[],
            Dbms::Other,
        )
        .unwrap()
        .unwrap();
        assert_eq!(p.columns[0].sql_type, sql::DOUBLE);
        assert_eq!(p.columns[0].indicators, vec![8, NULL_DATA, 8]);
    }

    #[test]
    fn incompatible_column_falls_back() {
        assert!(
            BoundParams::build(&[vec![ParamValue::Int(1)], vec![w("x")]], &[], Dbms::Other)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn big_ints_are_bigint_and_input_sizes_override() {
        let p = BoundParams::build(&[vec![ParamValue::Int(1 << 40)]], &[], Dbms::SqlServer)
            .unwrap()
            .unwrap();
        assert_eq!(p.columns[0].sql_type, sql::BIGINT);
        let sizes = [InputSize {
            sql_type: Some(sql::VARCHAR),
            column_size: Some(20),
            decimal_digits: None,
        }];
        let p = BoundParams::build(&[vec![w("x")]], &sizes, Dbms::SqlServer)
            .unwrap()
            .unwrap();
        assert_eq!(
            (p.columns[0].sql_type, p.columns[0].column_size),
            (sql::VARCHAR, 20)
        );
    }

    fn freetds() -> Backend {
        Backend {
            dbms: Dbms::SqlServer,
            driver: Driver::FreeTds,
            reread: false,
        }
    }

    fn date(year: i16, month: u16, day: u16) -> ParamValue {
        ParamValue::Date(Date { year, month, day })
    }

    fn utf16_cells(col: &ParamColumn) -> Vec<Option<String>> {
        let data = col.data_bytes();
        (0..col.indicators.len())
            .map(|r| {
                let n = usize::try_from(col.indicators[r]).ok()?;
                let cell = &data[r * col.element_len..r * col.element_len + n];
                let units: Vec<u16> = cell
                    .chunks(2)
                    .map(|b| u16::from_ne_bytes([b[0], b[1]]))
                    .collect();
                Some(String::from_utf16(&units).unwrap())
            })
            .collect()
    }

    #[test]
    fn freetds_early_dates_go_as_text_for_the_whole_column() {
        let rows = [
            vec![date(1, 1, 1)],
            vec![ParamValue::Null],
            vec![date(2024, 2, 29)],
        ];
        let p = BoundParams::build(&rows, &[], freetds()).unwrap().unwrap();
        let col = &p.columns[0];
        assert_eq!(
            (col.c_type, col.sql_type),
            (CDataType::WChar, sql::WVARCHAR)
        );
        assert_eq!(
            utf16_cells(col),
            [Some("0001-01-01".into()), None, Some("2024-02-29".into())]
        );
    }

    #[test]
    fn freetds_early_timestamps_keep_seven_fraction_digits_as_text() {
        let ts = ParamValue::Timestamp(Timestamp {
            date: Date {
                year: 1600,
                month: 2,
                day: 29,
            },
            time: Time {
                hour: 23,
                minute: 59,
                second: 58,
                nanosecond: 123_456_700,
            },
        });
        let p = BoundParams::build(&[vec![ts]], &[], freetds())
            .unwrap()
            .unwrap();
        assert_eq!(p.columns[0].sql_type, sql::WVARCHAR);
        assert_eq!(
            utf16_cells(&p.columns[0]),
            [Some("1600-02-29 23:59:58.1234567".into())]
        );
    }

    #[test]
    fn dates_from_1600_03_01_and_other_drivers_stay_native() {
        let p = BoundParams::build(&[vec![date(1600, 3, 1)]], &[], freetds())
            .unwrap()
            .unwrap();
        assert_eq!(p.columns[0].sql_type, sql::TYPE_DATE);
        let driver18 = Backend {
            dbms: Dbms::SqlServer,
            driver: Driver::MsOdbc,
            reread: false,
        };
        let p = BoundParams::build(&[vec![date(1, 1, 1)]], &[], driver18)
            .unwrap()
            .unwrap();
        assert_eq!(p.columns[0].sql_type, sql::TYPE_DATE);
    }

    #[test]
    fn freetds_early_input_output_date_is_a_data_error() {
        let out = OutputParam {
            ty: OutputType::Date,
            input: date(1000, 1, 1),
            size: None,
            precision: 38,
            scale: 0,
        };
        let e = BoundParams::build(&[vec![ParamValue::Output(Box::new(out))]], &[], freetds())
            .err()
            .unwrap();
        assert!(matches!(e, Error::Data(m) if m.contains("1600-03-01")));
    }

    #[test]
    fn ragged_rows_are_a_programming_error() {
        let e = BoundParams::build(&[vec![ParamValue::Int(1)], vec![]], &[], Dbms::Other)
            .err()
            .unwrap();
        assert!(matches!(e, Error::Programming(_)));
    }
}
