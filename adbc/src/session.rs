//! One ODBC connection shared by an ADBC connection and its statements (each statement holds it,
//! so the connection handle outlives every statement handle made on it), and the reads the
//! metadata functions make on it: a statement executed or a catalog function called, its result
//! read whole through the engine's Arrow path (the same fetch plan and row stream as
//! `fetch_arrow_table`).

use crate::error::{Engine, Result};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use ferrodbc::arrow::{ArrowLayout, ArrowOptions, BatchAssembler, assemble_table};
use ferrodbc::catalog::CatalogCall;
use ferrodbc::odbc::CancelHandle;
use ferrodbc::types::text::TextErrors;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// Rows per record batch unless the `adbc.ferrodbc.statement.batch_rows` option says otherwise:
/// the engine's largest row array, so memory is bounded by a batch.
pub const DEFAULT_BATCH_ROWS: usize = ferrodbc::batch::MAX_BATCH_ROWS;

pub struct Session {
    conn: Mutex<ferrodbc::Connection>,
    /// The cancel handles of the live statements made here: a connection's cancel reaches each.
    cancels: Mutex<Vec<Weak<CancelHandle>>>,
}

impl Session {
    pub fn new(conn: ferrodbc::Connection) -> Arc<Session> {
        Arc::new(Session {
            conn: Mutex::new(conn),
            cancels: Mutex::new(Vec::new()),
        })
    }

    pub fn lock(&self) -> MutexGuard<'_, ferrodbc::Connection> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new engine statement on this connection.
    pub fn statement(&self) -> Result<ferrodbc::Statement> {
        let conn = self.lock();
        let stmt = conn.new_statement().adbc()?;
        Ok(ferrodbc::Statement::new(stmt, conn.backend()))
    }

    /// Register a statement's cancel handle for [`Session::cancel_all`] (held weakly: it is
    /// forgotten when the statement that owns it is released).
    pub fn register_cancel(&self, handle: &Arc<CancelHandle>) {
        let mut cancels = self.cancels.lock().unwrap_or_else(|e| e.into_inner());
        cancels.retain(|w| w.strong_count() > 0);
        cancels.push(Arc::downgrade(handle));
    }

    /// Cancel whatever every statement of this connection is doing.
    pub fn cancel_all(&self) -> Result<()> {
        let cancels = self
            .cancels
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        for c in cancels.iter().filter_map(Weak::upgrade) {
            c.cancel().adbc()?;
        }
        Ok(())
    }

    /// `sql` executed on a fresh statement, its first result set read whole.
    pub fn query(&self, sql: &str) -> Result<(SchemaRef, Vec<RecordBatch>)> {
        let mut stmt = self.statement()?;
        stmt.execute(sql, Vec::new(), &[]).adbc()?;
        read_all(&mut stmt)
    }

    /// A catalog function's result read whole.
    pub fn catalog(&self, call: &CatalogCall) -> Result<(SchemaRef, Vec<RecordBatch>)> {
        let mut stmt = self.statement()?;
        stmt.catalog(call).adbc()?;
        read_all(&mut stmt)
    }
}

/// The Arrow layout of the statement's current result set (None: it has none), its row source
/// set to fetch in line as every Arrow read does.
pub fn layout_of(
    stmt: &mut ferrodbc::Statement,
    options: ArrowOptions,
) -> Result<Option<Arc<ArrowLayout>>> {
    let Some(plan) = stmt.row_set().plan().cloned() else {
        return Ok(None);
    };
    let layout = ArrowLayout::new(plan, options).adbc()?;
    stmt.rows().without_prefetch();
    Ok(Some(Arc::new(layout)))
}

/// The rest of the current result set as record batches (an empty schema when there is none).
pub fn read_all(stmt: &mut ferrodbc::Statement) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let Some(layout) = layout_of(stmt, ArrowOptions::default())? else {
        return Ok((Arc::new(arrow_schema::Schema::empty()), Vec::new()));
    };
    let mut assembler = BatchAssembler::new(&layout, DEFAULT_BATCH_ROWS, TextErrors::Strict);
    let batches = assemble_table(&mut stmt.rows(), &mut assembler, DEFAULT_BATCH_ROWS).adbc()?;
    Ok((layout.schema.clone(), batches))
}

/// Cell readers for the metadata results (strings and small integers, by column index).
pub mod cell {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    use arrow_array::{Array, RecordBatch};
    use arrow_schema::DataType;

    pub fn text(batch: &RecordBatch, col: usize, row: usize) -> Option<String> {
        let a = batch.column(col);
        if a.is_null(row) {
            return None;
        }
        Some(match a.data_type() {
            DataType::Utf8 => a.as_string::<i32>().value(row).to_string(),
            DataType::LargeUtf8 => a.as_string::<i64>().value(row).to_string(),
            _ => int(batch, col, row)?.to_string(),
        })
    }

    pub fn int(batch: &RecordBatch, col: usize, row: usize) -> Option<i64> {
        let a = batch.column(col);
        if a.is_null(row) {
            return None;
        }
        Some(match a.data_type() {
            DataType::UInt8 => a.as_primitive::<UInt8Type>().value(row).into(),
            DataType::Int16 => a.as_primitive::<Int16Type>().value(row).into(),
            DataType::Int32 => a.as_primitive::<Int32Type>().value(row).into(),
            DataType::Int64 => a.as_primitive::<Int64Type>().value(row),
            DataType::Boolean => a.as_boolean().value(row).into(),
            DataType::Utf8 | DataType::LargeUtf8 => text(batch, col, row)?.trim().parse().ok()?,
            _ => return None,
        })
    }
}
