//! `ferrodbc.Output`: an output (or input/output) parameter of a procedure call, and the value
//! it receives once the call's last result set has been read.

use super::cache;
use super::errors::programming;
use crate::params::{OutputParam, OutputType, ParamValue};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDate, PyDateTime, PyFloat, PyInt, PyString, PyTime,
};
use std::sync::Mutex;

enum State {
    /// Not bound yet, or bound to a call whose results are still being read.
    Pending,
    Ready(Py<PyAny>),
    /// The call's results were discarded (another execute, close) before the value arrived.
    Discarded,
}

/// `Output(type, value=None, *, size=None, precision=38, scale=None, tz=False)`.
#[pyclass(frozen, module = "ferrodbc", name = "Output")]
pub struct Output {
    ty: OutputType,
    type_name: String,
    input: Py<PyAny>,
    size: Option<usize>,
    precision: u32,
    scale: u32,
    state: Mutex<State>,
}

pub(super) fn output_type(py: Python<'_>, ty: &Bound<'_, PyAny>, tz: bool) -> PyResult<OutputType> {
    // Order matters: bool is an int subclass and datetime a date subclass.
    let is = |t: &Bound<'_, PyAny>| ty.is(t);
    Ok(if is(&py.get_type::<PyBool>()) {
        OutputType::Bool
    } else if is(&py.get_type::<PyInt>()) {
        OutputType::Int
    } else if is(&py.get_type::<PyFloat>()) {
        OutputType::Float
    } else if is(&py.get_type::<PyString>()) {
        OutputType::Text
    } else if is(&py.get_type::<PyBytes>()) || is(&py.get_type::<PyByteArray>()) {
        OutputType::Bytes
    } else if is(cache::decimal_type(py)?) {
        OutputType::Decimal
    } else if is(&py.get_type::<PyDateTime>()) {
        if tz {
            OutputType::TimestampOffset
        } else {
            OutputType::Timestamp
        }
    } else if is(&py.get_type::<PyDate>()) {
        OutputType::Date
    } else if is(&py.get_type::<PyTime>()) {
        OutputType::Time
    } else if is(cache::uuid_type(py)?) {
        OutputType::Guid
    } else if is(&py.import("array")?.getattr("array")?) {
        OutputType::Vector
    } else {
        return Err(programming(format!(
            "Output type must be one of bool, int, float, str, bytes, Decimal, date, time, datetime, UUID, array.array (a vector; got {})",
            ty.repr()?
        )));
    })
}

impl Output {
    /// A pending output parameter (`params.rs` makes it from the Python arguments: the input
    /// value's conversion decides the default scale).
    pub fn new(
        ty: OutputType,
        type_name: String,
        input: Py<PyAny>,
        size: Option<usize>,
        precision: u32,
        scale: u32,
    ) -> Output {
        Output {
            ty,
            type_name,
            input,
            size,
            precision,
            scale,
            state: Mutex::new(State::Pending),
        }
    }

    /// The value sent in (None for a pure output parameter).
    pub fn input(&self) -> &Py<PyAny> {
        &self.input
    }

    /// The engine parameter for a call, with `input` the converted [`Self::input`].
    pub fn param(&self, input: ParamValue) -> ParamValue {
        ParamValue::Output(Box::new(OutputParam {
            ty: self.ty,
            input,
            size: self.size,
            precision: self.precision,
            scale: self.scale,
        }))
    }

    /// The value the call set, as a Python object.
    pub fn set_value(&self, value: Py<PyAny>) {
        *self.lock() = State::Ready(value);
    }

    /// Bound to a new call: the value is pending again.
    pub fn reset(&self) {
        *self.lock() = State::Pending;
    }

    /// The call's results were thrown away before the value arrived.
    pub fn discard(&self) {
        let mut state = self.lock();
        if matches!(*state, State::Pending) {
            *state = State::Discarded;
        }
    }

    /// The value, if it has arrived.
    pub fn ready_value(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        match &*self.lock() {
            State::Ready(v) => Some(v.clone_ref(py)),
            _ => None,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[pymethods]
impl Output {
    /// The value the procedure set. Raises ProgrammingError until the call's last result set has
    /// been read (`nextset()` returned False; `callproc` does this when the call returns no rows).
    #[getter]
    fn value(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match &*self.lock() {
            State::Ready(v) => Ok(v.clone_ref(py)),
            State::Pending => Err(programming(
                "the output value arrives after the call's last result set: read the results and \
                 call nextset() until it returns False",
            )),
            State::Discarded => Err(programming(
                "the call's results were discarded (execute or close) before its output value arrived",
            )),
        }
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(match &*self.lock() {
            State::Ready(v) => format!("Output({}, value={})", self.type_name, v.bind(py).repr()?),
            State::Pending => format!("Output({}, pending)", self.type_name),
            State::Discarded => format!("Output({}, discarded)", self.type_name),
        })
    }
}
