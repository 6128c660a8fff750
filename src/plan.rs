//! The fetch plan: for every result-set column, the bound C buffer and the decoder, chosen
//! together, once per result set. The fetch loop never looks at SQL types again.

use crate::backend::Backend;
use crate::odbc::ColumnDescription;
use crate::odbc::sys::CDataType;
use crate::types::{self, Binding, Family};

pub use crate::types::CellKind;
pub use crate::types::binary::MAX_BOUND_BINARY_BYTES;
pub use crate::types::text::MAX_BOUND_TEXT_UNITS;

/// The binding of each kind, as its family gives it: asked when buffers are laid out and bound,
/// never per cell.
impl CellKind {
    pub fn binding(self) -> Binding {
        match self.family() {
            Family::Bit => types::bit::binding(self),
            Family::Int => types::int::binding(self),
            Family::Float => types::float::binding(self),
            Family::Decimal => types::decimal::binding(self),
            Family::Temporal => types::temporal::binding(self),
            Family::Guid => types::guid::binding(self),
            Family::Text => types::text::binding(self),
            Family::Binary => types::binary::binding(self),
            Family::Variant => types::variant::binding(self),
            Family::Vector => types::vector::binding(self),
        }
    }

    pub fn c_type(self) -> CDataType {
        self.binding().c_type
    }

    /// Bytes per element in a column buffer (for long kinds: 0, they own a growable buffer).
    pub fn element_len(self) -> usize {
        self.binding().element_len
    }
}

/// How one result-set column is fetched and decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnPlan {
    pub desc: ColumnDescription,
    pub kind: CellKind,
    /// Bound in the row array (`true`) or read with SQLGetData after the fetch (`false`).
    pub bound: bool,
    /// Bound by a declared size the database does not enforce: a cell the buffer cut is read
    /// again whole after the block fetch (`reread.rs`) instead of raising.
    pub reread: bool,
    /// A column that would be read as UTF-16 text, read as the driver's bytes (`SQL_C_BINARY`)
    /// instead for an output converter registered at execute ([`ResultPlan::build_with_raw`]).
    /// Kept apart from `kind` because the binding outlives the converter: if it is removed in
    /// the middle of the result set, these bytes are still text.
    pub raw_text: bool,
}

/// The plan of one result set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultPlan {
    pub columns: Vec<ColumnPlan>,
    /// Columns `0..bound_prefix` are bound; the rest are streamed in ascending order.
    pub bound_prefix: usize,
    /// Bytes per row of the bound columns (values + indicators).
    pub row_bytes: usize,
    pub backend: Backend,
    /// Some column has `reread` set: every block fetch is checked for cut cells.
    pub rereads: bool,
}

impl ResultPlan {
    pub fn build(descs: Vec<ColumnDescription>, backend: impl Into<Backend>) -> ResultPlan {
        Self::build_with_raw(descs, backend, &[])
    }

    /// As [`Self::build`], but text columns whose SQL type is in `raw_sql_types` are read as the
    /// driver's bytes (`SQL_C_BINARY`) instead of UTF-16: the value a pyodbc-style output
    /// converter is given (pyodbc reads every converted column that way: psqlODBC hands over
    /// UTF-8, SQL Server's drivers a varchar's code-page bytes and an nvarchar's UTF-16LE).
    pub fn build_with_raw(
        descs: Vec<ColumnDescription>,
        backend: impl Into<Backend>,
        raw_sql_types: &[i16],
    ) -> ResultPlan {
        let backend = backend.into();
        crate::counters::bump(&crate::counters::PLANS_BUILT);
        let (kinds, raw) = descs
            .iter()
            .map(|d| {
                let kind = choose_kind(d, backend);
                if raw_sql_types.contains(&d.sql_type) {
                    let raw = raw_text_kind(kind);
                    (raw, raw != kind)
                } else {
                    (kind, false)
                }
            })
            .unzip();
        Self::lay_out(descs, kinds, raw, backend)
    }

    /// The same columns with other kinds, laid out by the same rules: a column re-laid out in
    /// the middle of a result set because it holds more than its declared size (`reread.rs`).
    /// Not a new plan: the result set and its decoders are the same.
    pub fn with_kinds(&self, kinds: Vec<CellKind>) -> ResultPlan {
        let descs = self.columns.iter().map(|c| c.desc.clone()).collect();
        let raw = self.columns.iter().map(|c| c.raw_text).collect();
        Self::lay_out(descs, kinds, raw, self.backend)
    }

    fn lay_out(
        descs: Vec<ColumnDescription>,
        kinds: Vec<CellKind>,
        raw: Vec<bool>,
        backend: Backend,
    ) -> ResultPlan {
        let mut columns: Vec<ColumnPlan> = Vec::with_capacity(descs.len());
        let mut streaming = false;
        for ((desc, mut kind), raw_text) in descs.into_iter().zip(kinds).zip(raw) {
            if kind.is_long() {
                streaming = true;
            }
            if streaming {
                kind = kind.streamed();
            }
            let reread = !streaming
                && !backend.sizes_trusted()
                && matches!(kind, CellKind::WText { .. } | CellKind::Binary { .. });
            columns.push(ColumnPlan {
                desc,
                kind,
                bound: !streaming,
                reread,
                raw_text,
            });
        }
        let bound_prefix = columns.iter().take_while(|c| c.bound).count();
        let row_bytes = columns[..bound_prefix]
            .iter()
            .map(|c| c.kind.element_len() + std::mem::size_of::<isize>())
            .sum();
        let rereads = columns.iter().any(|c| c.reread);
        ResultPlan {
            columns,
            bound_prefix,
            row_bytes,
            backend,
            rereads,
        }
    }

    pub fn has_streamed(&self) -> bool {
        self.bound_prefix < self.columns.len()
    }

    /// Whether buffers built for `other` can serve this plan unchanged (same kinds in order).
    pub fn same_buffers(&self, other: &ResultPlan) -> bool {
        self.columns.len() == other.columns.len()
            && self.bound_prefix == other.bound_prefix
            && self
                .columns
                .iter()
                .zip(&other.columns)
                .all(|(a, b)| a.kind == b.kind)
    }
}

/// A text column read as bytes: room for the longest encoding of its declared characters (4
/// bytes each covers UTF-8 and every code page). Other kinds are unchanged.
fn raw_text_kind(kind: CellKind) -> CellKind {
    match kind {
        CellKind::WText { max_units } => CellKind::Binary {
            max_bytes: max_units.saturating_mul(4),
        },
        CellKind::LongWText => CellKind::LongBinary,
        other => other,
    }
}

/// SQL type → bound C type and decoder: the SQL type's family ([`Family::of`]), then the
/// family's choice for the column (its `kind_for`). One line per family.
pub fn choose_kind(desc: &ColumnDescription, backend: impl Into<Backend>) -> CellKind {
    let backend = backend.into();
    match Family::of(desc.sql_type) {
        Some(Family::Bit) => types::bit::kind_for(desc, backend),
        Some(Family::Int) => types::int::kind_for(desc, backend),
        Some(Family::Float) => types::float::kind_for(desc, backend),
        Some(Family::Decimal) => types::decimal::kind_for(desc, backend),
        Some(Family::Temporal) => types::temporal::kind_for(desc, backend),
        Some(Family::Guid) => types::guid::kind_for(desc, backend),
        Some(Family::Text) => types::text::kind_for(desc, backend),
        Some(Family::Binary) => types::binary::kind_for(desc, backend),
        Some(Family::Variant) => types::variant::kind_for(desc, backend),
        Some(Family::Vector) => types::vector::kind_for(desc, backend),
        // Anything unknown: its text rendering, streamed (never truncated).
        None => CellKind::LongWText,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Dbms;
    use crate::codes::sql;

    #[test]
    fn a_postgres_long_varchar_of_bounded_size_is_bound() {
        let pg = ResultPlan::build(vec![col(sql::WLONGVARCHAR, 50, 0)], Dbms::PostgreSql);
        assert_eq!(pg.columns[0].kind, CellKind::WText { max_units: 100 });
        assert!(pg.columns[0].bound);
        // Unknown (0) or huge (text/ntext) sizes stay streamed; so does SQLite (not enforced).
        for (dbms, size) in [
            (Dbms::PostgreSql, 0),
            (Dbms::SqlServer, 2_147_483_647),
            (Dbms::SqlServer, 0),
            (Dbms::Sqlite, 50),
        ] {
            let p = ResultPlan::build(vec![col(sql::WLONGVARCHAR, size, 0)], dbms);
            assert_eq!(p.columns[0].kind, CellKind::LongWText, "{dbms:?} {size}");
        }
    }

    #[test]
    fn converted_text_columns_are_read_as_bytes_and_others_are_unchanged() {
        let descs = vec![
            col(sql::VARCHAR, 10, 0),
            col(sql::INTEGER, 10, 0),
            col(sql::WVARCHAR, 10, 0),
            col(sql::WLONGVARCHAR, 0, 0),
        ];
        let raw = [sql::VARCHAR, sql::INTEGER, sql::WLONGVARCHAR];
        let plan = ResultPlan::build_with_raw(descs.clone(), Dbms::SqlServer, &raw);
        let kinds: Vec<CellKind> = plan.columns.iter().map(|c| c.kind).collect();
        let plain = ResultPlan::build(descs, Dbms::SqlServer);
        assert_eq!(kinds[0], CellKind::Binary { max_bytes: 40 });
        let raw: Vec<bool> = plan.columns.iter().map(|c| c.raw_text).collect();
        assert_eq!(
            raw,
            [true, false, false, true],
            "only text read as bytes is raw text"
        );
        let relaid = plan.with_kinds(kinds.clone());
        assert!(relaid.columns[0].raw_text, "a re-layout keeps the flag");
        assert_eq!(
            kinds[1], plain.columns[1].kind,
            "a converted integer keeps its kind"
        );
        assert_eq!(
            kinds[2], plain.columns[2].kind,
            "no converter for WVARCHAR: unchanged"
        );
        assert_eq!(kinds[3], CellKind::LongBinary);
    }

    fn col(sql_type: i16, size: usize, digits: i16) -> ColumnDescription {
        ColumnDescription {
            name: "c".into(),
            sql_type,
            size,
            decimal_digits: digits,
            nullable: Some(true),
            unsigned: false,
        }
    }

    #[test]
    fn float_precision_zero_is_double() {
        // PostgreSQL float8 arrives as SQL_FLOAT with precision 0; binding f32 lost digits
        // silently in arrow-odbc.
        assert_eq!(choose_kind(&col(6, 0, 0), Dbms::PostgreSql), CellKind::F64);
        assert_eq!(choose_kind(&col(6, 53, 0), Dbms::SqlServer), CellKind::F64);
        assert_eq!(choose_kind(&col(6, 17, 0), Dbms::PostgreSql), CellKind::F64);
        assert_eq!(choose_kind(&col(7, 24, 0), Dbms::Other), CellKind::F32);
    }

    #[test]
    fn max_types_are_streamed_and_force_later_columns_to_stream() {
        let plan = ResultPlan::build(
            vec![col(4, 10, 0), col(-9, 0, 0), col(4, 10, 0), col(-9, 50, 0)],
            Dbms::SqlServer,
        );
        assert_eq!(plan.bound_prefix, 1);
        assert_eq!(plan.columns[1].kind, CellKind::LongWText);
        assert_eq!(plan.columns[2].kind, CellKind::I32);
        assert!(!plan.columns[2].bound);
        assert_eq!(plan.columns[3].kind, CellKind::LongWText);
    }

    #[test]
    fn nvarchar_units_follow_the_dbms() {
        assert_eq!(
            choose_kind(&col(-9, 50, 0), Dbms::SqlServer),
            CellKind::WText { max_units: 50 }
        );
        assert_eq!(
            choose_kind(&col(12, 50, 0), Dbms::PostgreSql),
            CellKind::WText { max_units: 100 }
        );
        assert_eq!(
            choose_kind(&col(12, 50, 0), Dbms::Sqlite),
            CellKind::LongWText
        );
        assert_eq!(
            choose_kind(&col(-9, 4000, 0), Dbms::SqlServer),
            CellKind::WText { max_units: 4000 }
        );
        assert_eq!(
            choose_kind(&col(-1, 8000, 0), Dbms::SqlServer),
            CellKind::LongWText
        );
    }

    #[test]
    fn sql_server_specific_types() {
        assert_eq!(
            choose_kind(&col(-154, 16, 7), Dbms::SqlServer),
            CellKind::SsTime2
        );
        assert_eq!(
            choose_kind(&col(-155, 34, 7), Dbms::SqlServer),
            CellKind::TimestampOffset
        );
        assert_eq!(
            choose_kind(&col(-11, 36, 0), Dbms::SqlServer),
            CellKind::Guid
        );
        assert_eq!(
            choose_kind(&col(-152, 0, 0), Dbms::SqlServer),
            CellKind::LongWText
        );
        assert_eq!(
            choose_kind(&col(3, 38, 10), Dbms::SqlServer),
            CellKind::Numeric {
                precision: 38,
                scale: 10,
            }
        );
        assert!(matches!(
            choose_kind(&col(3, 38, 10), Dbms::PostgreSql),
            CellKind::Decimal {
                precision: 38,
                scale: 10,
                ..
            }
        ));
    }

    #[test]
    fn same_shape_reuses_buffers() {
        let a = ResultPlan::build(vec![col(4, 10, 0), col(-9, 50, 0)], Dbms::SqlServer);
        let b = ResultPlan::build(vec![col(4, 10, 0), col(-9, 50, 0)], Dbms::SqlServer);
        let c = ResultPlan::build(vec![col(4, 10, 0), col(-9, 60, 0)], Dbms::SqlServer);
        assert!(a.same_buffers(&b));
        assert!(!a.same_buffers(&c));
    }
}
