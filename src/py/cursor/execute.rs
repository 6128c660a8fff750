//! The execute side of a cursor: execute, executemany, callproc, parameters and their sizes,
//! output parameters delivered once the last result has been read.

use super::execute_many::{Arrays, fill_arrays};
use super::execute_rows::{ParamRow, param_rows};
use super::*;
use crate::params::{BoundParams, InputSize, ParamValue, check_procedure_name, count_markers};
use crate::py::errors::{IntoPyResult, programming};
use crate::py::output::Output;
use crate::py::params::{from_param, to_input_size, to_param};
use crate::statement::Statement;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use std::sync::atomic::Ordering;

impl Cursor {
    /// Run an execute on the statement (GIL released), with the `setinputsizes` of this call,
    /// then plan the result set it produced.
    pub(super) fn run(
        &self,
        py: Python<'_>,
        outputs: Vec<(usize, Py<Output>)>,
        catalog: bool,
        op: impl FnOnce(&mut Statement, &[InputSize]) -> crate::Result<()> + Send,
    ) -> PyResult<()> {
        let mut guard = self.lock(py)?;
        let st = &mut *guard;
        st.catalog_result = catalog;
        st.pending = None;
        st.discard_outputs();
        for (_, out) in &outputs {
            out.get().reset();
        }
        st.outputs = outputs;
        // `st.plan` stays: `ensure_plan` reuses it only if the new result set has exactly the
        // same shape (re-executing a query), and never past a converter or setting change.
        self.apply_timeout(py, st)?;
        let sizes = std::mem::take(&mut st.input_sizes);
        if let Some(bad) = sizes
            .iter()
            .find(|s| s.decimal_digits.is_some_and(|d| d < 0))
        {
            // pyodbc refuses it at bind time with the same words; a negative scale would
            // index past the scaling table in its binder.
            return Err(programming(format!(
                "setinputsizes: scale {} is negative (Numeric overflow: no value can be scaled by it)",
                bad.decimal_digits.unwrap_or_default()
            )));
        }
        // Converted columns are read as the driver's bytes, as pyodbc gives them to converters.
        let raw_sql_types: Vec<i16> = self
            .shared
            .converters
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .copied()
            .collect();
        let stmt = self.statement(py, st)?;
        stmt.set_raw_sql_types(raw_sql_types);
        if let Err(e) = py.detach(|| op(stmt, &sizes)) {
            st.discard_outputs();
            return Err(crate::py::errors::to_pyerr(py, self.shared.track(e)));
        }
        self.deliver_outputs(py, st)?;
        self.ensure_plan(py, st)?;
        Ok(())
    }

    /// Hand output parameter values to their `Output` objects once the statement has them.
    pub(super) fn deliver_outputs(&self, py: Python<'_>, st: &mut CursorState) -> PyResult<()> {
        let Some(values) = st.stmt.as_mut().and_then(Statement::take_outputs) else {
            return Ok(());
        };
        let errors = *self
            .shared
            .text_errors
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for (index, value) in values {
            if let Some((_, out)) = st.outputs.iter().find(|(i, _)| *i == index) {
                out.get().set_value(from_param(py, &value, errors)?);
            }
        }
        st.outputs.clear();
        Ok(())
    }

    /// Forget the current result set (an execute was rejected before reaching the driver).
    pub(super) fn discard_result(&self, py: Python<'_>) -> PyResult<()> {
        let mut guard = self.lock(py)?;
        let st = &mut *guard;
        st.pending = None;
        st.plan = None;
        st.discard_outputs();
        if let Some(stmt) = st.stmt.as_mut() {
            py.detach(|| stmt.close()).py(py)?;
        }
        Ok(())
    }
}

/// A parameter row: a tuple, list or Row (pyodbc refuses sets and other iterables: their
/// order is not the parameters' order).
pub(super) fn is_param_row(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(obj.is_instance_of::<PyTuple>()
        || obj.is_instance_of::<PyList>()
        || crate::py::row::is_row(py, obj)?)
}

/// `execute(sql, a, b)` and `execute(sql, [a, b])` / `execute(sql, (a, b))` are both accepted.
pub(super) fn flatten_params<'py>(params: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyAny>> {
    if params.len() == 1 {
        let first = params.get_item(0)?;
        let is_sequence = is_param_row(params.py(), &first)?
            && !first.is_instance_of::<PyString>()
            && !first.is_instance_of::<PyBytes>();
        if is_sequence {
            return Ok(first);
        }
    }
    Ok(params.clone().into_any())
}

pub(super) fn convert_row(seq: &Bound<'_, PyAny>) -> PyResult<Vec<ParamValue>> {
    let mut out = Vec::new();
    for (i, item) in seq.try_iter()?.enumerate() {
        out.push(to_param(&item?, i)?);
    }
    Ok(out)
}

/// The `Output` objects among one row of parameters, by index.
pub(super) fn outputs_of(seq: &Bound<'_, PyAny>) -> PyResult<Vec<(usize, Py<Output>)>> {
    let mut out = Vec::new();
    for (i, item) in seq.try_iter()?.enumerate() {
        if let Ok(o) = item?.cast_into::<Output>() {
            out.push((i, o.unbind()));
        }
    }
    Ok(out)
}

impl Cursor {
    /// The connection's backend (what the parameter arrays are encoded for).
    fn backend(&self, py: Python<'_>) -> PyResult<crate::backend::Backend> {
        let conn = self.shared.lock_conn(py)?;
        conn.as_ref()
            .map(|c| c.backend())
            .ok_or_else(|| programming("The cursor's connection has been closed."))
    }
}

pub(super) fn check_count(sql: &str, supplied: usize, dbms: crate::backend::Dbms) -> PyResult<()> {
    let markers = count_markers(sql, dbms);
    if markers != supplied {
        return Err(programming(format!(
            "The SQL contains {markers} parameter markers, but {supplied} parameters were supplied"
        )));
    }
    Ok(())
}

#[pymethods]
impl Cursor {
    /// Execute `sql` with qmark (`?`) parameters; returns the cursor.
    #[pyo3(signature = (sql, *params))]
    pub fn execute<'py>(
        slf: &Bound<'py, Self>,
        sql: &str,
        params: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, Self>> {
        let py = slf.py();
        let this = slf.get();
        let params = flatten_params(params)?;
        let converted = convert_row(&params)
            .and_then(|v| check_count(sql, v.len(), this.shared.dbms).map(|_| v))
            .and_then(|v| Ok((v, outputs_of(&params)?)));
        let (values, outputs) = match converted {
            Ok(v) => v,
            Err(e) => {
                // A rejected execute still ends the previous result: no stale row may follow.
                this.discard_result(py)?;
                return Err(e);
            }
        };
        this.run(py, outputs, false, move |stmt, sizes| {
            stmt.execute(sql, values, sizes)
        })?;
        Ok(slf.clone())
    }

    /// Execute `sql` once per parameter row, the rows written column-wise into parameter
    /// arrays (`execute_many.rs`), one round trip per array.
    fn executemany<'py>(
        slf: &Bound<'py, Self>,
        sql: &str,
        seq_of_params: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        let py = slf.py();
        let this = slf.get();
        if seq_of_params.is_instance_of::<pyo3::types::PySet>()
            || seq_of_params.is_instance_of::<pyo3::types::PyFrozenSet>()
            || seq_of_params.is_instance_of::<pyo3::types::PyDict>()
        {
            // Unordered: which row runs first would be an accident (pyodbc refuses it too).
            this.discard_result(py)?;
            return Err(programming(format!(
                "executemany: the rows must be a sequence, iterator or generator, not {}",
                seq_of_params.get_type().name()?
            )));
        }
        let fast = this.fast_executemany.load(Ordering::Relaxed);
        let markers = count_markers(sql, this.shared.dbms);
        let filled = (|| -> PyResult<(Vec<ParamRow<'py>>, Arrays)> {
            let rows = param_rows(py, seq_of_params, markers)?;
            let backend = this.backend(py)?;
            let arrays = fill_arrays(&rows, markers, sql.len(), backend, fast)?;
            Ok((rows, arrays))
        })();
        let (rows, arrays) = match filled {
            Ok(v) => v,
            Err(e) => {
                this.discard_result(py)?;
                return Err(e);
            }
        };
        if let Some(arrays) = arrays {
            this.run(py, Vec::new(), false, move |stmt, sizes| {
                let bound = arrays
                    .into_iter()
                    .map(|columns| BoundParams::from_columns(columns, sizes))
                    .collect::<crate::Result<Vec<_>>>()?;
                stmt.execute_arrays(sql, bound)
            })?;
            return Ok(slf.clone());
        }
        // The general way: every row to values, one array per request where a column's values
        // share a binding, else row by row.
        let converted = (|| -> PyResult<Vec<Vec<ParamValue>>> {
            let mut values = Vec::with_capacity(rows.len());
            for (index, row) in rows.iter().enumerate() {
                if fast {
                    crate::py::compat::check_fast_executemany_row(py, row.as_any(), index)?;
                }
                let row = convert_row(row.as_any())?;
                if fast {
                    crate::py::compat::check_fast_executemany_values(&row, index)?;
                }
                values.push(row);
            }
            Ok(values)
        })();
        let values = match converted {
            Ok(v) => v,
            Err(e) => {
                this.discard_result(py)?;
                return Err(e);
            }
        };
        this.run(py, Vec::new(), false, move |stmt, sizes| {
            stmt.execute_many(sql, values, sizes)
        })?;
        Ok(slf.clone())
    }

    /// Call a stored procedure as `{CALL procname(?, ...)}`. Row counts before the procedure's
    /// first result set are skipped, so the cursor is on its rows (if any). Returns a copy of
    /// `parameters` with each `Output` replaced by its value when the value has arrived (the
    /// call produced no result set); otherwise the `Output` objects stay in the copy and their
    /// `.value` is set once the last result set has been read.
    #[pyo3(signature = (procname, parameters = None))]
    fn callproc<'py>(
        slf: &Bound<'py, Self>,
        procname: &str,
        parameters: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        check_procedure_name(procname).py(py)?;
        let params: Vec<Bound<'py, PyAny>> = match parameters {
            Some(p) => p.try_iter()?.collect::<PyResult<_>>()?,
            None => Vec::new(),
        };
        let sql = if params.is_empty() {
            format!("{{CALL {procname}}}")
        } else {
            format!(
                "{{CALL {procname}({})}}",
                vec!["?"; params.len()].join(", ")
            )
        };
        Self::execute(slf, &sql, &PyTuple::new(py, [PyList::new(py, &params)?])?)?;
        let this = slf.get();
        loop {
            let on_rows = this
                .lock(py)?
                .stmt
                .as_ref()
                .is_some_and(Statement::has_result_set);
            if on_rows || !this.nextset(py)? {
                break;
            }
        }
        let copy = params
            .iter()
            .map(|p| {
                match p
                    .cast::<Output>()
                    .ok()
                    .and_then(|o| o.get().ready_value(py))
                {
                    Some(v) => v.into_bound(py),
                    None => p.clone(),
                }
            })
            .collect::<Vec<_>>();
        if parameters.is_some_and(|p| p.is_instance_of::<PyList>()) {
            Ok(PyList::new(py, copy)?.into_any())
        } else {
            Ok(PyTuple::new(py, copy)?.into_any())
        }
    }

    /// Declare parameter types for the next execute/executemany: a sequence with one entry per
    /// parameter: None, an SQL type code, or `(sql_type, size[, decimal_digits])`.
    fn setinputsizes(&self, py: Python<'_>, sizes: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut parsed = Vec::new();
        if !sizes.is_none() {
            for item in sizes.try_iter()? {
                parsed.push(to_input_size(&item?)?);
            }
        }
        self.lock(py)?.input_sizes = parsed;
        Ok(())
    }

    #[pyo3(signature = (size, column = None))]
    fn setoutputsize(&self, size: isize, column: Option<isize>) {
        // PEP 249 allows a no-op: (MAX) columns are streamed whole anyway.
        let _ = (size, column);
    }
}
