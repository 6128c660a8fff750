//! The PEP 249 exception hierarchy and the one mapping from engine errors to it.

use crate::error::{Error as EngineError, ErrorClass};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

create_exception!(
    ferrodbc,
    Warning,
    PyException,
    "Important warnings (PEP 249)."
);
create_exception!(
    ferrodbc,
    Error,
    PyException,
    "Base class of every ferrodbc error (PEP 249)."
);
create_exception!(
    ferrodbc,
    InterfaceError,
    Error,
    "Errors of the driver interface rather than the database."
);
create_exception!(
    ferrodbc,
    DatabaseError,
    Error,
    "Errors reported by the database."
);
create_exception!(
    ferrodbc,
    DataError,
    DatabaseError,
    "Problems with the processed data (bad value, out of range, malformed text)."
);
create_exception!(
    ferrodbc,
    OperationalError,
    DatabaseError,
    "Errors of the database's operation (lost link, timeout, cancel)."
);
create_exception!(
    ferrodbc,
    IntegrityError,
    DatabaseError,
    "Relational integrity violated (constraint, duplicate key)."
);
create_exception!(
    ferrodbc,
    InternalError,
    DatabaseError,
    "The database or driver hit an internal error."
);
create_exception!(
    ferrodbc,
    ProgrammingError,
    DatabaseError,
    "Programming errors (bad SQL, wrong parameter count, closed cursor)."
);
create_exception!(
    ferrodbc,
    NotSupportedError,
    DatabaseError,
    "A method or API the database does not support."
);

/// Turn an engine error into the right Python exception, carrying `sqlstate`, `native_error` and
/// every diagnostic record (`diagnostics`: list of `(sqlstate, native_error, message)`).
#[cold]
#[allow(clippy::needless_pass_by_value)] // consumes the error: used as `map_err(|e| to_pyerr(py, e))`
pub fn to_pyerr(py: Python<'_>, err: EngineError) -> PyErr {
    let message = err.to_string();
    // pyodbc's shape for errors the driver reported: args = (sqlstate, message), so programs
    // written for it (`e.args[0] == '23000'`, `e.args[1]`) keep working. Errors of ferrodbc's
    // own have the message alone, as pyodbc's own do.
    let args: Py<PyTuple> = match (&err, err.sqlstate()) {
        (EngineError::Odbc { .. } | EngineError::Cancelled { .. }, Some(state)) => {
            PyTuple::new(py, [state.to_owned(), message])
        }
        _ => PyTuple::new(py, [message]),
    }
    .map(Bound::unbind)
    .unwrap_or_else(|_| PyTuple::empty(py).unbind());
    let pyerr = match err.class() {
        ErrorClass::Interface => InterfaceError::new_err(args),
        ErrorClass::Database => DatabaseError::new_err(args),
        ErrorClass::Data => DataError::new_err(args),
        ErrorClass::Operational => OperationalError::new_err(args),
        ErrorClass::Integrity => IntegrityError::new_err(args),
        ErrorClass::Internal => InternalError::new_err(args),
        ErrorClass::Programming => ProgrammingError::new_err(args),
        ErrorClass::NotSupported => NotSupportedError::new_err(args),
    };
    let value = pyerr.value(py);
    let (sqlstate, native) = (err.sqlstate().map(str::to_owned), err.native_error());
    let _ = value.setattr("sqlstate", sqlstate);
    let _ = value.setattr("native_error", native);
    if let EngineError::Odbc { records, .. } | EngineError::Cancelled { records } = &err {
        let items: Vec<Bound<'_, PyTuple>> = records
            .iter()
            .filter_map(|d| {
                (d.sqlstate.clone(), d.native_error, d.message.clone())
                    .into_pyobject(py)
                    .ok()
            })
            .collect();
        let _ = value.setattr("diagnostics", items);
    } else {
        let _ = value.setattr("diagnostics", Vec::<(String, i32, String)>::new());
    }
    pyerr
}

/// The error of any call on a connection whose link was already lost: OperationalError with
/// SQLSTATE 08S01 (communication link failure), as the driver's own error for it had, so code
/// that tells a disconnect by its SQLSTATE sees the same on every later call.
pub fn lost_link(py: Python<'_>) -> PyErr {
    const MESSAGE: &str = "The connection to the database was lost; open a new connection.";
    let err = OperationalError::new_err(("08S01", MESSAGE));
    let _ = err.value(py).setattr("sqlstate", "08S01");
    err
}

pub fn programming(msg: impl Into<String>) -> PyErr {
    ProgrammingError::new_err(msg.into())
}

pub fn interface(msg: impl Into<String>) -> PyErr {
    InterfaceError::new_err(msg.into())
}

pub fn data(msg: impl Into<String>) -> PyErr {
    DataError::new_err(msg.into())
}

/// Extension to convert `crate::Result` into `PyResult` with the mapping above.
pub trait IntoPyResult<T> {
    fn py(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for crate::Result<T> {
    #[inline]
    fn py(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_pyerr(py, e))
    }
}

pub fn register(py: Python<'_>, m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Class defaults, so that every `Error` has the attributes `to_pyerr` and `fetchall` set on
    // theirs: the ones ferrodbc raises itself (`programming()`, ...) and any raised by user code.
    // `diagnostics` is an empty tuple, not a list, so no caller can mutate a shared default.
    let base = py.get_type::<Error>();
    base.setattr("sqlstate", py.None())?;
    base.setattr("native_error", py.None())?;
    base.setattr("diagnostics", PyTuple::empty(py))?;
    base.setattr("partial_rows", py.None())?;
    m.add("Warning", py.get_type::<Warning>())?;
    m.add("Error", py.get_type::<Error>())?;
    m.add("InterfaceError", py.get_type::<InterfaceError>())?;
    m.add("DatabaseError", py.get_type::<DatabaseError>())?;
    m.add("DataError", py.get_type::<DataError>())?;
    m.add("OperationalError", py.get_type::<OperationalError>())?;
    m.add("IntegrityError", py.get_type::<IntegrityError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    m.add("ProgrammingError", py.get_type::<ProgrammingError>())?;
    m.add("NotSupportedError", py.get_type::<NotSupportedError>())?;
    Ok(())
}
