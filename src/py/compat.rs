//! pyodbc's connection settings and value conversions that have no engine meaning of their own:
//! `decimal_mode`, `readvar_initsize`, `maxwrite`, `attrs_before` / `set_attr` values, `getinfo`
//! answers. Kept here so `connection.rs` and `cursor.rs` only declare the methods.

use super::errors::{NotSupportedError, programming};
use crate::backend::Dbms;
use crate::info::{AttrValue, InfoValue};
use pyo3::exceptions::{PyFutureWarning, PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyInt, PyString};

/// How pyodbc 5.5 reads DECIMAL/NUMERIC columns. ferrodbc reads them exactly (as text the driver
/// formats, parsed without any locale) in every mode; the mode is kept so programs that set and
/// read it keep working.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecimalMode {
    Binary,
    Text,
    Locale,
}

impl DecimalMode {
    pub fn name(self) -> &'static str {
        match self {
            DecimalMode::Binary => "binary",
            DecimalMode::Text => "text",
            DecimalMode::Locale => "locale",
        }
    }

    /// pyodbc's default: 'text' where the driver cannot fill SQL_NUMERIC_STRUCT faithfully
    /// (psqlODBC: NaN, Infinity, more than 38 digits), 'binary' elsewhere.
    pub fn default_for(dbms: Dbms) -> DecimalMode {
        match dbms {
            Dbms::PostgreSql => DecimalMode::Text,
            _ => DecimalMode::Binary,
        }
    }
}

/// pyodbc settings of one connection.
pub struct ConnCompat {
    pub decimal_mode: DecimalMode,
    pub readvar_initsize: usize,
    pub maxwrite: usize,
}

impl ConnCompat {
    pub fn new(dbms: Dbms) -> ConnCompat {
        ConnCompat {
            decimal_mode: DecimalMode::default_for(dbms),
            // pyodbc's defaults.
            readvar_initsize: 4096,
            maxwrite: 0,
        }
    }
}

/// Deleting a pyodbc connection setting is a TypeError (pyodbc 5.5).
pub fn cannot_delete(attr: &str) -> PyErr {
    PyTypeError::new_err(format!("cannot delete {attr}"))
}

fn future_warning(py: Python<'_>, message: &std::ffi::CStr) -> PyResult<()> {
    PyErr::warn(py, &py.get_type::<PyFutureWarning>(), message, 1)
}

/// A `decimal_mode` assignment: 'binary' | 'text' | 'locale', or (deprecated) a bool.
pub fn parse_decimal_mode(value: Option<&Bound<'_, PyAny>>, attr: &str) -> PyResult<DecimalMode> {
    let Some(value) = value else {
        return Err(PyTypeError::new_err(format!("cannot delete {attr}")));
    };
    if let Ok(flag) = value.cast::<PyBool>() {
        let message: &std::ffi::CStr = if attr == "decimal_mode" {
            c"decimal_mode = True/False is deprecated; use 'locale' or 'binary'"
        } else {
            c"fetch_decimal_as_string is deprecated; use decimal_mode"
        };
        future_warning(value.py(), message)?;
        return Ok(if flag.is_true() {
            DecimalMode::Locale
        } else {
            DecimalMode::Binary
        });
    }
    if attr != "decimal_mode" {
        return Err(PyTypeError::new_err(format!("{attr} must be a bool")));
    }
    let text = value
        .cast::<PyString>()
        .map_err(|_| PyTypeError::new_err("decimal_mode must be 'binary', 'text' or 'locale'"))?;
    match text.to_str()? {
        "binary" => Ok(DecimalMode::Binary),
        "text" => Ok(DecimalMode::Text),
        "locale" => Ok(DecimalMode::Locale),
        other => Err(PyValueError::new_err(format!(
            "decimal_mode must be 'binary', 'text' or 'locale', not {other:?}"
        ))),
    }
}

/// The deprecated `fetch_decimal_as_string` read: warns, then says whether decimals are text.
pub fn fetch_decimal_as_string(py: Python<'_>, mode: DecimalMode) -> PyResult<bool> {
    future_warning(
        py,
        c"fetch_decimal_as_string is deprecated; use decimal_mode",
    )?;
    Ok(mode != DecimalMode::Binary)
}

/// A non-negative size setting (`readvar_initsize`, `maxwrite`).
pub fn parse_size(value: Option<&Bound<'_, PyAny>>, attr: &str) -> PyResult<usize> {
    let Some(value) = value else {
        return Err(PyTypeError::new_err(format!("cannot delete {attr}")));
    };
    if !value.is_instance_of::<PyInt>() || value.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!("{attr} must be an int")));
    }
    let n: i64 = value.extract()?;
    usize::try_from(n).map_err(|_| PyValueError::new_err(format!("{attr} must not be negative")))
}

/// One attribute value for `SQLSetConnectAttr`: int (by value), str (wide string), bytes.
pub fn attr_value(value: &Bound<'_, PyAny>) -> PyResult<AttrValue> {
    if value.is_instance_of::<PyInt>() {
        // SQLULEN by value: negative values are passed as their two's complement (the C API
        // takes SQLPOINTER); anything wider than 64 bits cannot be passed.
        if let Ok(n) = value.extract::<isize>() {
            return Ok(AttrValue::Int(usize::from_ne_bytes(n.to_ne_bytes())));
        }
        return value
            .extract::<usize>()
            .map(AttrValue::Int)
            .map_err(|_| PyOverflowError::new_err("the attribute value does not fit an SQLULEN"));
    }
    if let Ok(s) = value.cast::<PyString>() {
        // `to_str` raises UnicodeEncodeError for lone surrogates: they cannot be sent.
        return Ok(AttrValue::Text(s.to_str()?.to_owned()));
    }
    if let Ok(b) = value.cast::<PyBytes>() {
        return Ok(AttrValue::Bytes(b.as_bytes().to_vec()));
    }
    if let Ok(b) = value.cast::<PyByteArray>() {
        return Ok(AttrValue::Bytes(b.to_vec()));
    }
    Err(PyTypeError::new_err(format!(
        "an attribute value must be an int, str, bytes or bytearray, not {}",
        value.get_type().name()?
    )))
}

/// An attribute number: an SQLINTEGER (a wider key would be silently truncated into another
/// attribute: 2**40 + 102 became 102, SQL_ATTR_AUTOCOMMIT).
pub fn attr_key(key: &Bound<'_, PyAny>) -> PyResult<i32> {
    if !key.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err("attribute keys must be ints"));
    }
    key.extract::<i32>()
        .map_err(|_| PyOverflowError::new_err("the attribute key does not fit an SQLINTEGER"))
}

/// `attrs_before={attr: value}`; a value may be a sequence of values, each set in order.
pub fn attrs_before(attrs: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<(i32, AttrValue)>> {
    let Some(attrs) = attrs.filter(|a| !a.is_none()) else {
        return Ok(Vec::new());
    };
    let dict = attrs
        .cast::<PyDict>()
        .map_err(|_| PyTypeError::new_err("attrs_before must be a dict"))?;
    let mut out = Vec::new();
    for (key, value) in dict.iter() {
        let key = attr_key(&key)?;
        let is_scalar = value.is_instance_of::<PyInt>()
            || value.is_instance_of::<PyString>()
            || value.is_instance_of::<PyBytes>()
            || value.is_instance_of::<PyByteArray>();
        if is_scalar {
            out.push((key, attr_value(&value)?));
            continue;
        }
        let n = value.len()?;
        for i in 0..n {
            out.push((key, attr_value(&value.get_item(i)?)?));
        }
    }
    Ok(out)
}

pub fn info_to_py(py: Python<'_>, value: InfoValue) -> PyResult<Py<PyAny>> {
    Ok(match value {
        InfoValue::Text(s) => s.into_pyobject(py)?.into_any().unbind(),
        InfoValue::Bool(b) => PyBool::new(py, b).to_owned().into_any().unbind(),
        InfoValue::U32(n) => n.into_pyobject(py)?.into_any().unbind(),
        InfoValue::U16(n) => n.into_pyobject(py)?.into_any().unbind(),
    })
}

/// A handle address as pyodbc gives it: a `ctypes.c_void_p`.
pub fn void_p(py: Python<'_>, address: usize) -> PyResult<Py<PyAny>> {
    Ok(py
        .import("ctypes")?
        .getattr("c_void_p")?
        .call1((address,))?
        .unbind())
}

/// pyodbc's module-level switches that shape a result set's plan, read when a plan is built
/// (never per row). A deleted attribute means its default (pyodbc 5.5 does the same).
pub struct ModuleFlags {
    /// `ferrodbc.lowercase`: column names in lower case.
    pub lowercase: bool,
    /// `ferrodbc.native_uuid`: uniqueidentifier as uuid.UUID (else upper-case str).
    pub native_uuid: bool,
}

impl ModuleFlags {
    pub fn read(py: Python<'_>) -> ModuleFlags {
        // The module's namespace, looked up once: an import per plan would go through the
        // import machinery (and its lock) every time.
        static NAMESPACE: PyOnceLock<Py<PyDict>> = PyOnceLock::new();
        let namespace =
            NAMESPACE.get_or_try_init(py, || py.import("ferrodbc").map(|m| m.dict().unbind()));
        let flag = |name: &str, default: bool| {
            namespace
                .as_ref()
                .ok()
                .and_then(|ns| ns.bind(py).get_item(name).ok().flatten())
                .and_then(|v| v.is_truthy().ok())
                .unwrap_or(default)
        };
        ModuleFlags {
            lowercase: flag("lowercase", false),
            native_uuid: flag("native_uuid", true),
        }
    }
}

const SQL_CHAR: i16 = 1;
const SQL_WCHAR: i16 = -8;
/// pyodbc's pseudo type for column names and other metadata.
const SQL_WMETADATA: i16 = -888;
const SQL_C_CHAR: i16 = 1;
const SQL_C_WCHAR: i16 = -8;

/// pyodbc's `setdecoding` / `setencoding`, honoured or refused.
///
/// ferrodbc always exchanges text with the driver as UTF-16 (SQL_C_WCHAR, the W entry points):
/// the driver converts from and to the database's character set. A UTF-8 or UTF-16 setting
/// therefore gives exactly the text pyodbc would give, and is accepted. Any other encoding (a
/// legacy code page, 'ascii') asks pyodbc to reinterpret the driver's bytes, which ferrodbc
/// never sees: NotSupportedError, never a silently different result. Column names
/// (SQL_WMETADATA) are read only through the W API, so only UTF-16 fits there.
pub fn check_text_setting(
    py: Python<'_>,
    sqltype: Option<i16>,
    encoding: Option<&str>,
    ctype: Option<i16>,
) -> PyResult<()> {
    if let Some(t) = sqltype {
        if ![SQL_CHAR, SQL_WCHAR, SQL_WMETADATA].contains(&t) {
            return Err(PyValueError::new_err(format!(
                "Invalid sqltype {t}: must be SQL_CHAR, SQL_WCHAR or SQL_WMETADATA"
            )));
        }
    }
    if let Some(c) = ctype {
        if c != SQL_C_CHAR && c != SQL_C_WCHAR {
            return Err(PyValueError::new_err(format!(
                "Invalid ctype {c}: must be SQL_CHAR or SQL_WCHAR"
            )));
        }
    }
    let Some(encoding) = encoding else {
        return Ok(());
    };
    let name: String = py
        .import("codecs")?
        .call_method1("lookup", (encoding,))?
        .getattr("name")?
        .extract()?;
    let utf16 = matches!(name.as_str(), "utf-16" | "utf-16-le");
    let fits = utf16 || (name == "utf-8" && sqltype != Some(SQL_WMETADATA));
    if fits {
        return Ok(());
    }
    Err(NotSupportedError::new_err(format!(
        "ferrodbc exchanges text with the driver as UTF-16 (the driver converts from the \
         database's character set), so it cannot decode or encode {} as {name:?}; UTF-8 and \
         UTF-16 settings give the same text and are accepted",
        if sqltype == Some(SQL_WMETADATA) {
            "column names"
        } else {
            "text"
        }
    )))
}

/// pyodbc's `fast_executemany` errors, kept when a program turns it on: pyodbc binds Decimals
/// there as SQL_NUMERIC_STRUCT, which holds at most 38 digits and no NaN or infinity, and
/// refuses such a value with ProgrammingError instead of sending it. ferrodbc always sends
/// exact decimal text (any value the column can take is stored when the flag is off).
pub fn check_fast_executemany_row(
    py: Python<'_>,
    row: &Bound<'_, PyAny>,
    index: usize,
) -> PyResult<()> {
    for (column, value) in row.try_iter()?.enumerate() {
        check_fast_decimal(py, &value?, index, column)?;
    }
    Ok(())
}

/// [`check_fast_executemany_row`] for one value (row `index`, parameter `column`).
pub fn check_fast_decimal(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    index: usize,
    column: usize,
) -> PyResult<()> {
    if !value.is_instance(super::cache::decimal_type(py)?)? {
        return Ok(());
    }
    if value.call_method0("is_snan")?.is_truthy()? {
        return Err(programming(format!(
            "fast_executemany row {index}, parameter {column}: Decimal {} is a signaling \
             NaN, which no database stores",
            value.str()?
        )));
    }
    if !value.call_method0("is_finite")?.is_truthy()? {
        return Err(programming(format!(
            "fast_executemany row {index}, parameter {column}: Decimal {} cannot be bound \
             as a numeric (no NaN or infinity in SQL_NUMERIC_STRUCT)",
            value.str()?
        )));
    }
    // 38 digits before the point at most: checked on the exponent, before a huge one is
    // written out (Decimal('1E+999999999999999999')).
    let adjusted: i64 = value.call_method0("adjusted")?.extract()?;
    if adjusted >= 38 && value.is_truthy()? {
        return Err(programming(format!(
            "fast_executemany row {index}, parameter {column}: Numeric overflow (Decimal \
             with {} digits before the point; a numeric holds at most 38)",
            adjusted + 1
        )));
    }
    Ok(())
}

/// The digit limits of the same check, on the converted values (Decimals and big ints).
pub fn check_fast_executemany_values(
    values: &[crate::params::ParamValue],
    index: usize,
) -> PyResult<()> {
    for (column, value) in values.iter().enumerate() {
        check_fast_value(value, index, column)?;
    }
    Ok(())
}

/// [`check_fast_executemany_values`] for one value (row `index`, parameter `column`).
pub fn check_fast_value(
    value: &crate::params::ParamValue,
    index: usize,
    column: usize,
) -> PyResult<()> {
    const MAX_DIGITS: u32 = 38;
    let crate::params::ParamValue::Decimal { text, .. } = value else {
        return Ok(());
    };
    // Digits that carry value: trailing zeros after the point and leading zeros before it
    // fit any scale (pyodbc binds 1.000...0 with 40 zeros, and 0E-50, without complaint).
    let (precision, scale) = crate::types::decimal::text::significant(text);
    if scale > MAX_DIGITS {
        return Err(programming(format!(
            "fast_executemany row {index}, parameter {column}: converting the value loses \
             precision ({scale} decimal places; a numeric holds at most {MAX_DIGITS})"
        )));
    }
    if precision > MAX_DIGITS {
        return Err(programming(format!(
            "fast_executemany row {index}, parameter {column}: Numeric overflow ({precision} \
             digits; a numeric holds at most {MAX_DIGITS})"
        )));
    }
    Ok(())
}
