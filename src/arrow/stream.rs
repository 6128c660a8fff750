//! The Arrow C stream (`ArrowArrayStream`) that hands record batches to another library.

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchIterator};
use arrow_schema::{ArrowError, SchemaRef};

/// An Arrow C stream (`ArrowArrayStream`) over `batches`, for a PyCapsule or any C consumer.
/// The consumer pulls; each pull runs `batches.next()` on the consumer's thread.
pub fn export_stream(
    schema: SchemaRef,
    batches: impl Iterator<Item = std::result::Result<RecordBatch, ArrowError>> + Send + 'static,
) -> FFI_ArrowArrayStream {
    FFI_ArrowArrayStream::new(Box::new(RecordBatchIterator::new(batches, schema)))
}
