//! The Arrow schema of a result set, decided once from its plan: each column's family picks its
//! Arrow type from the same [`CellKind`](crate::plan::CellKind) the row path decodes, plus the
//! SQL type where Arrow is finer (TINYINT, TIME(n)).

use super::kind::{ArrowColumn, ArrowKind, ArrowOptions};
use crate::backend::Dbms;
use crate::error::Result;
use crate::plan::{ColumnPlan, ResultPlan};
use crate::types::{
    Family, binary, bit, decimal, float, guid, int, temporal, text, variant, vector,
};
use arrow_schema::{Field, Schema, SchemaRef};
use std::collections::HashMap;
use std::sync::Arc;

impl ArrowKind {
    /// The Arrow kind of one planned column (its family decides), or NotSupportedError naming
    /// it.
    pub fn of(
        col: &ColumnPlan,
        index: usize,
        dbms: Dbms,
        options: ArrowOptions,
    ) -> Result<ArrowKind> {
        let column = ArrowColumn {
            col,
            index,
            dbms,
            options,
        };
        match col.kind.family() {
            Family::Bit => bit::arrow::kind(&column),
            Family::Int => int::arrow::kind(&column),
            Family::Float => float::arrow::kind(&column),
            Family::Decimal => decimal::arrow::kind(&column),
            Family::Temporal => temporal::arrow::kind(&column),
            Family::Guid => guid::arrow::kind(&column),
            Family::Text => text::arrow::kind(&column),
            Family::Binary => binary::arrow::kind(&column),
            Family::Variant => variant::arrow::kind(&column),
            Family::Vector => vector::arrow::kind(&column),
        }
    }

    fn field(self, col: &ColumnPlan) -> Field {
        // Always nullable: a driver's NO_NULLS is a description, not a promise (outer joins,
        // views), and a null in a non-nullable field would make the whole batch invalid.
        let field = Field::new(col.desc.name.clone(), self.data_type(), true);
        if self == ArrowKind::Uuid {
            // The canonical extension type: pyarrow and polars read it as a UUID column.
            field.with_metadata(HashMap::from([
                ("ARROW:extension:name".to_string(), "arrow.uuid".to_string()),
                ("ARROW:extension:metadata".to_string(), String::new()),
            ]))
        } else {
            field
        }
    }
}

/// A result set's Arrow schema and each column's kind: built once per result set.
#[derive(Debug, Clone)]
pub struct ArrowLayout {
    pub schema: SchemaRef,
    pub kinds: Vec<ArrowKind>,
    pub plan: Arc<ResultPlan>,
}

impl ArrowLayout {
    /// The layout of `plan`, or NotSupportedError for its first column without an Arrow type.
    pub fn new(plan: Arc<ResultPlan>, options: ArrowOptions) -> Result<ArrowLayout> {
        let mut kinds = Vec::with_capacity(plan.columns.len());
        let mut fields = Vec::with_capacity(plan.columns.len());
        for (i, col) in plan.columns.iter().enumerate() {
            let kind = ArrowKind::of(col, i, plan.backend.dbms, options)?;
            fields.push(kind.field(col));
            kinds.push(kind);
        }
        Ok(ArrowLayout {
            schema: Arc::new(Schema::new(fields)),
            kinds,
            plan,
        })
    }
}
