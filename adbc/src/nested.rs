//! GetObjects' nested result (catalogs > schemas > tables > columns and constraints) built from
//! the rows `objects.rs` gathered: each level a struct array over the flattened level below, its
//! lists made from lengths (a `None` length is a null list: the depth asked stopped above it).

use crate::objects::{Column, Constraint, Table, Usage};
use arrow_array::{
    ArrayRef, BooleanArray, Int16Array, Int32Array, ListArray, StringArray, StructArray,
};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, FieldRef, Fields};
use std::sync::Arc;

pub(crate) fn struct_fields(dt: &DataType) -> Fields {
    match dt {
        DataType::Struct(f) => f.clone(),
        other => unreachable!("a struct type, not {other}"),
    }
}

pub(crate) fn list_field(dt: &DataType) -> FieldRef {
    match dt {
        DataType::List(f) => f.clone(),
        other => unreachable!("a list type, not {other}"),
    }
}

/// A list array of `lens` (None: a null list) over `values`.
pub(crate) fn list(dt: &DataType, lens: &[Option<usize>], values: ArrayRef) -> ArrayRef {
    let offsets = OffsetBuffer::from_lengths(lens.iter().map(|l| l.unwrap_or(0)));
    let nulls = lens
        .iter()
        .any(Option::is_none)
        .then(|| NullBuffer::from_iter(lens.iter().map(Option::is_some)));
    Arc::new(ListArray::new(list_field(dt), offsets, values, nulls))
}

pub(crate) fn strings<'a>(v: impl IntoIterator<Item = Option<&'a str>>) -> ArrayRef {
    Arc::new(StringArray::from_iter(v))
}

pub(crate) fn struct_array(dt: &DataType, arrays: Vec<ArrayRef>) -> ArrayRef {
    Arc::new(StructArray::new(struct_fields(dt), arrays, None))
}

pub(crate) fn usage_array(dt: &DataType, u: &[&Usage]) -> ArrayRef {
    struct_array(
        dt,
        vec![
            strings(u.iter().map(|x| x.catalog.as_deref())),
            strings(u.iter().map(|x| x.schema.as_deref())),
            strings(u.iter().map(|x| Some(x.table.as_str()))),
            strings(u.iter().map(|x| Some(x.column.as_str()))),
        ],
    )
}

pub(crate) fn constraint_array(dt: &DataType, c: &[&Constraint]) -> ArrayRef {
    let fields = struct_fields(dt);
    let names_dt = fields[2].data_type();
    let usage_dt = fields[3].data_type();
    let col_names: Vec<&str> = c
        .iter()
        .flat_map(|x| x.columns.iter().map(String::as_str))
        .collect();
    let usages: Vec<&Usage> = c.iter().flat_map(|x| x.usage.iter()).collect();
    struct_array(
        dt,
        vec![
            strings(c.iter().map(|x| x.name.as_deref())),
            strings(c.iter().map(|x| Some(x.kind))),
            list(
                names_dt,
                &c.iter().map(|x| Some(x.columns.len())).collect::<Vec<_>>(),
                strings(col_names.into_iter().map(Some)),
            ),
            list(
                usage_dt,
                &c.iter().map(|x| Some(x.usage.len())).collect::<Vec<_>>(),
                usage_array(list_field(usage_dt).data_type(), &usages),
            ),
        ],
    )
}

pub(crate) fn column_array(dt: &DataType, c: &[&Column]) -> ArrayRef {
    let i16s = |g: fn(&Column) -> Option<i16>| -> ArrayRef {
        Arc::new(Int16Array::from_iter(c.iter().map(|x| g(x))))
    };
    let i32s = |g: fn(&Column) -> Option<i32>| -> ArrayRef {
        Arc::new(Int32Array::from_iter(c.iter().map(|x| g(x))))
    };
    let none = |_: usize| -> ArrayRef { strings(c.iter().map(|_| None)) };
    struct_array(
        dt,
        vec![
            strings(c.iter().map(|x| Some(x.name.as_str()))),
            i32s(|x| x.ordinal),
            strings(c.iter().map(|x| x.remarks.as_deref())),
            i16s(|x| x.data_type),
            strings(c.iter().map(|x| x.type_name.as_deref())),
            i32s(|x| x.column_size),
            i16s(|x| x.decimal_digits),
            i16s(|x| x.radix),
            i16s(|x| x.nullable),
            strings(c.iter().map(|x| x.default.as_deref())),
            i16s(|x| x.sql_data_type),
            i16s(|x| x.datetime_sub),
            i32s(|x| x.octet_length),
            strings(c.iter().map(|x| x.is_nullable.as_deref())),
            none(0),
            none(1),
            none(2),
            Arc::new(BooleanArray::from_iter(c.iter().map(|x| x.autoincrement))),
            Arc::new(BooleanArray::from_iter(c.iter().map(|_| None::<bool>))),
        ],
    )
}

pub(crate) fn table_array(dt: &DataType, t: &[&Table]) -> ArrayRef {
    let fields = struct_fields(dt);
    let cols_dt = fields[2].data_type();
    let cons_dt = fields[3].data_type();
    let cols: Vec<&Column> = t.iter().flat_map(|x| x.columns.iter().flatten()).collect();
    let cons: Vec<&Constraint> = t
        .iter()
        .flat_map(|x| x.constraints.iter().flatten())
        .collect();
    struct_array(
        dt,
        vec![
            strings(t.iter().map(|x| Some(x.name.as_str()))),
            strings(t.iter().map(|x| Some(x.kind.as_str()))),
            list(
                cols_dt,
                &t.iter()
                    .map(|x| x.columns.as_ref().map(Vec::len))
                    .collect::<Vec<_>>(),
                column_array(list_field(cols_dt).data_type(), &cols),
            ),
            list(
                cons_dt,
                &t.iter()
                    .map(|x| x.constraints.as_ref().map(Vec::len))
                    .collect::<Vec<_>>(),
                constraint_array(list_field(cons_dt).data_type(), &cons),
            ),
        ],
    )
}
