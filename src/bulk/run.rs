//! A whole bulk load for any caller, Python or not: describe the table, choose the driver's bcp
//! API or `INSERT` parameter arrays, feed rows (`rows.rs`) or an Arrow stream (`stream.rs`) in
//! bounded chunks, end the load. The Python methods (`py/cursor/bulk*.rs`) are thin wrappers:
//! they check mssql-python's arguments, turn Python rows into [`ParamValue`](crate::params::ParamValue)s and release the
//! GIL through [`Release`].
//!
//! ```ignore
//! let request = Request::new("dbo.t", LoadOptions::default(), Mapping::Position);
//! let count = crate::bulk::load_arrow(&mut conn, &request, reader, Progress::none())?;
//! ```

use super::arrays::ArrayLoad;
use super::load::{BcpLoad, LoadCount, LoadOptions};
use super::target::{Fed, Mapping, Table};
use crate::backend::Driver;
use crate::connection::Connection;
use crate::error::Error;
use crate::odbc::bcp::Bcp;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// A chunk is sent when it holds this many rows or bytes, whichever comes first: a caller's lock
/// (Python's GIL) is released once per chunk, and memory stays bounded (two chunks at most, one
/// being filled and one being sent) whatever the source's length.
pub const CHUNK_ROWS: usize = 8192;
pub const CHUNK_BYTES: usize = 8 << 20;

/// What to load where: the destination table, mssql-python's options and `column_mappings`.
#[derive(Debug, Clone)]
pub struct Request {
    pub table: String,
    pub options: LoadOptions,
    pub mapping: Mapping,
}

impl Request {
    pub fn new(table: impl Into<String>, options: LoadOptions, mapping: Mapping) -> Request {
        Request {
            table: table.into(),
            options,
            mapping,
        }
    }
}

/// Why a load stopped: the engine's error (the driver's, the server's, a value's, the source's,
/// with the column, source row and rows copied in its context), or the caller's own error (its
/// row source's or its progress hook's), handed back unchanged.
///
/// While a load runs, the first three variants locate a failure; every public function of this
/// module resolves them into `Engine` (with the column's name and the rows that stayed copied)
/// before returning, so a caller sees `Engine` or `Caller` only.
#[derive(Debug)]
pub enum BulkError<E = Infallible> {
    Engine(Error),
    Caller(E),
    /// A value of fed column `col` (an index into the fed columns) at source row `row`.
    Value {
        col: usize,
        row: u64,
        reason: String,
        /// A NULL refused (an IntegrityError), else a value refused (a DataError).
        null: bool,
    },
    /// The source's error reading the batch after source row `after`.
    Source {
        reason: String,
        after: u64,
    },
    /// The bcp sending thread stopped on an error (which is the load's).
    Sender,
}

impl<E> From<Error> for BulkError<E> {
    fn from(e: Error) -> Self {
        BulkError::Engine(e)
    }
}

impl From<BulkError> for Error {
    fn from(e: BulkError) -> Error {
        match e.resolve(&[], 0) {
            BulkError::Engine(e) => e,
            _ => Error::Internal("bulk load: an unresolved error".into()),
        }
    }
}

impl<E> BulkError<E> {
    /// The engine's error, or the caller's own.
    pub fn into_result(self) -> Result<Error, E> {
        match self.resolve(&[], 0) {
            BulkError::Caller(e) => Err(e),
            BulkError::Engine(e) => Ok(e),
            _ => Ok(Error::Internal("bulk load: an unresolved error".into())),
        }
    }

    /// The engine's error for a located failure: `copied` are the rows that stayed, counted
    /// once every row sent is through.
    pub(super) fn resolve(self, fed: &[Fed], copied: u64) -> BulkError<E> {
        let name = |col: usize| fed.get(col).map_or(String::new(), |f| f.name.clone());
        let e = match self {
            BulkError::Value {
                col,
                row,
                reason,
                null,
            } => Error::Bulk {
                context: format!(
                    "bulk load: column {:?}, source row {row} ({copied} rows copied before it)",
                    name(col)
                ),
                inner: Box::new(if null {
                    Error::Integrity(reason)
                } else {
                    Error::Data(reason)
                }),
            },
            BulkError::Source { reason, after } => Error::Bulk {
                context: format!(
                    "bulk load: reading the Arrow source after source row {after} failed \
                     ({copied} rows copied before it)"
                ),
                inner: Box::new(Error::Data(reason)),
            },
            BulkError::Sender => {
                Error::Interface("bulk load: the sending thread stopped without an error".into())
            }
            other => return other,
        };
        BulkError::Engine(e)
    }
}

/// How a load releases its caller's lock around driver work (Python's GIL: `py.detach`), so
/// that other threads run while rows are sent. [`NoLock`] for callers without one.
pub trait Release {
    fn release<T: Send, F: FnOnce() -> T + Send>(&self, f: F) -> T;
}

/// A caller with no lock to release.
pub struct NoLock;

impl Release for NoLock {
    fn release<T: Send, F: FnOnce() -> T + Send>(&self, f: F) -> T {
        f()
    }
}

/// The caller's progress hook: called with the source rows taken so far each time they pass a
/// multiple of `every` (a record batch passing several at once makes one call); never when
/// `every` is 0. It runs with the caller's lock held; its error stops the load.
pub struct Progress<'a, E> {
    every: u64,
    next: u64,
    hook: Option<&'a mut dyn FnMut(u64) -> Result<(), E>>,
}

impl<'a, E> Progress<'a, E> {
    pub fn new(every: u64, hook: Option<&'a mut dyn FnMut(u64) -> Result<(), E>>) -> Self {
        Progress {
            every,
            next: every,
            hook,
        }
    }

    pub fn none() -> Self {
        Progress::new(0, None)
    }

    /// `rows` source rows are taken: call the hook if that is due.
    pub(super) fn taken(&mut self, rows: u64) -> Result<(), BulkError<E>> {
        let Some(hook) = self.hook.as_mut() else {
            return Ok(());
        };
        if self.every == 0 || rows < self.next {
            return Ok(());
        }
        self.next = (rows / self.every + 1) * self.every;
        hook(rows).map_err(BulkError::Caller)
    }
}

/// A load on either path.
#[allow(clippy::large_enum_variant)]
pub(super) enum Way<'c> {
    Bcp(BcpLoad<'c>),
    Arrays(ArrayLoad<'c>),
}

/// A load begun on a connection, held exclusively until [`BulkLoad::finish`]; dropping it
/// aborts (the batch in flight is not committed). Feed it with [`BulkLoad::rows`] or
/// [`BulkLoad::arrow`] (once).
pub struct BulkLoad<'c> {
    pub(super) way: Way<'c>,
    pub(super) table: String,
}

impl<'c> BulkLoad<'c> {
    /// Describe the table, map `fields` source fields (`None`: an empty source) to its columns
    /// and begin the load: through the driver's bcp API when the connection has it on and the
    /// driver can take these columns, else as `INSERT` parameter arrays. `cancel` set stops it
    /// between rows. Driver work: call it with the caller's lock released.
    pub fn begin(
        conn: &'c mut Connection,
        request: &Request,
        fields: Option<usize>,
        cancel: Arc<AtomicBool>,
    ) -> Result<BulkLoad<'c>, Error> {
        let options = &request.options;
        if options.use_internal_transaction && !conn.autocommit() {
            // In manual-commit mode an ODBC connection is always inside a transaction (SQL
            // Server's drivers begin the next one at each commit: @@TRANCOUNT is 1 right after
            // it), so a batch committing on its own would commit the caller's work with it.
            // In autocommit each batch already is its own transaction.
            return Err(Error::Programming(
                "use_internal_transaction=True needs autocommit: in manual-commit mode the \
                 connection is always inside the caller's transaction, which a batch's own \
                 commit would commit too"
                    .into(),
            ));
        }
        let dbms = conn.dbms();
        let table = Table::describe(conn.dbc(), dbms, &request.table)?;
        let fed = table.feed(
            &request.mapping,
            fields,
            options.keep_identity,
            options.keep_nulls,
        )?;
        let backend = conn.backend();
        // FreeTDS 1.3's bcp cannot take two kinds of column: a (MAX) one aborts the process (an
        // assertion in its row writer), and it parses no datetimeoffset text with an offset
        // (22018 for every form tried). Loads with such columns go as parameter arrays on the
        // same connection, where the server converts.
        let freetds_arrays =
            backend.driver == Driver::FreeTds && fed.iter().any(|f| f.form.freetds_bcp_cannot());
        // A VECTOR column on a VectorTypeSupport=v1 connection goes as native vectors in INSERT
        // parameter arrays: Driver 18's bcp describes it as varchar(max) and would send text.
        let arrays = freetds_arrays || fed.iter().any(|f| f.form.needs_arrays());
        let bcp = if conn.bcp_on()
            && !arrays
            && matches!(backend.driver, Driver::MsOdbc | Driver::FreeTds)
        {
            Some(Bcp::of(conn.dbc(), backend.driver)?)
        } else {
            None
        };
        let way = match bcp {
            Some(bcp) => {
                crate::counters::bump(&crate::counters::BULK_BCP_LOADS);
                let autocommit = conn.autocommit();
                let options = options.clone();
                let load = BcpLoad::begin(
                    conn.dbc_mut(),
                    bcp,
                    &table,
                    fed,
                    options,
                    autocommit,
                    cancel,
                )
                .map_err(|e| Error::Bulk {
                    context: format!("bulk load into {}: bcp_init", request.table),
                    inner: Box::new(e),
                })?;
                Way::Bcp(load)
            }
            None => {
                crate::counters::bump(&crate::counters::BULK_ARRAY_LOADS);
                let stmt = conn.new_statement()?;
                let dbc = conn.autocommit().then(|| conn.dbc_mut());
                let options = options.clone();
                Way::Arrays(ArrayLoad::begin(
                    dbc, stmt, backend, &table, fed, options, cancel,
                )?)
            }
        };
        Ok(BulkLoad {
            way,
            table: request.table.clone(),
        })
    }

    /// The destination columns that receive values, in table order.
    pub fn fed(&self) -> &[Fed] {
        match &self.way {
            Way::Bcp(l) => l.fed(),
            Way::Arrays(l) => l.fed(),
        }
    }

    pub fn count(&self) -> LoadCount {
        match &self.way {
            Way::Bcp(l) => l.count(),
            Way::Arrays(l) => l.count(),
        }
    }

    /// Whether the load goes through the driver's bcp API.
    pub fn is_bcp(&self) -> bool {
        matches!(self.way, Way::Bcp(_))
    }

    /// What stops the statement in flight from another thread: an array load's statement (an
    /// SQLCancel on an array waiting on the server). A bcp load has none: its cancel flag is
    /// checked between rows, and an SQLCancel would enter the driver while the sending thread is
    /// inside bcp_sendrow on the same connection.
    pub fn cancel_handle(&self) -> Option<crate::odbc::CancelHandle> {
        match &self.way {
            Way::Arrays(load) => Some(load.cancel_handle()),
            Way::Bcp(_) => None,
        }
    }

    /// The destination's name, as the request gave it.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// End the load: the last batch is sent and committed. Driver work.
    pub fn finish(self) -> Result<LoadCount, Error> {
        match self.way {
            Way::Bcp(load) => load.done(),
            Way::Arrays(load) => load.finish(),
        }
    }
}

/// A whole load of `reader`'s record batches into `request.table` on `conn`, for callers with
/// no lock to release (ADBC, Rust programs).
pub fn load_arrow<R, E>(
    conn: &mut Connection,
    request: &Request,
    reader: R,
    progress: Progress<'_, E>,
) -> Result<LoadCount, BulkError<E>>
where
    R: arrow_array::RecordBatchReader + Send,
    E: Send,
{
    let fields = reader.schema().fields().len();
    let cancel = Arc::new(AtomicBool::new(false));
    let mut load = BulkLoad::begin(conn, request, Some(fields), cancel)?;
    load.arrow(&NoLock, reader, progress)?;
    Ok(load.finish()?)
}

/// [`load_arrow`] from a C stream (`FFI_ArrowArrayStream`, as an ADBC driver receives one).
pub fn load_arrow_stream<E: Send>(
    conn: &mut Connection,
    request: &Request,
    stream: arrow_array::ffi_stream::FFI_ArrowArrayStream,
    progress: Progress<'_, E>,
) -> Result<LoadCount, BulkError<E>> {
    let reader = arrow_array::ffi_stream::ArrowArrayStreamReader::try_new(stream).map_err(|e| {
        Error::Programming(format!(
            "bulk load: the Arrow stream cannot be imported: {e}"
        ))
    })?;
    load_arrow(conn, request, reader, progress)
}

/// A whole load of `rows` (one value per source field; see [`super::rows::Rows`]) into
/// `request.table` on `conn`.
pub fn load_rows<I>(
    conn: &mut Connection,
    request: &Request,
    fields: usize,
    rows: I,
) -> Result<LoadCount, Error>
where
    I: Iterator<Item = Vec<crate::params::ParamValue>>,
{
    let cancel = Arc::new(AtomicBool::new(false));
    let mut load = BulkLoad::begin(conn, request, Some(fields), cancel)?;
    load.rows(&NoLock, &mut super::rows::Rows::new(rows), Progress::none())?;
    load.finish()
}
