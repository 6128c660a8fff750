//! GetInfo: the vendor's name and version from the server (`SQLGetInfo` `SQL_DBMS_NAME` /
//! `SQL_DBMS_VER`, what the driver read at login), whether SQL is spoken (yes) and Substrait
//! (no), and this driver's name, version, arrow-rs line and ADBC version (1.1.0).

use crate::connection::{FerrodbcConnection, Reader, batches_reader};
use crate::error::{Engine, Result};
use adbc_core::options::InfoCode;
use adbc_core::schemas::GET_INFO_SCHEMA;
use arrow_array::{
    Array, ArrayRef, BooleanArray, Int32Array, Int64Array, RecordBatch, StringArray, UInt32Array,
    UnionArray, new_empty_array,
};
use arrow_buffer::ScalarBuffer;
use arrow_schema::DataType;
use ferrodbc::info::{InfoKind, InfoValue};
use std::collections::HashSet;
use std::sync::Arc;

const SQL_DBMS_NAME: u16 = 17;
const SQL_DBMS_VER: u16 = 18;
/// `ADBC_VERSION_1_1_0`.
const ADBC_1_1_0: i64 = 1_001_000;
const ALL: [InfoCode; 9] = [
    InfoCode::VendorName,
    InfoCode::VendorVersion,
    InfoCode::VendorSql,
    InfoCode::VendorSubstrait,
    InfoCode::DriverName,
    InfoCode::DriverVersion,
    InfoCode::DriverArrowVersion,
    InfoCode::DriverAdbcVersion,
    InfoCode::VendorArrowVersion,
];

enum Value {
    Text(String),
    Bool(bool),
    Int(i64),
}

fn text_info(conn: &FerrodbcConnection, info: u16) -> Result<Option<Value>> {
    Ok(
        match conn.session.lock().info(info, InfoKind::Text).adbc()? {
            InfoValue::Text(s) => Some(Value::Text(s)),
            _ => None,
        },
    )
}

fn value(conn: &FerrodbcConnection, code: &InfoCode) -> Result<Option<Value>> {
    Ok(match code {
        InfoCode::VendorName => text_info(conn, SQL_DBMS_NAME)?,
        InfoCode::VendorVersion => text_info(conn, SQL_DBMS_VER)?,
        InfoCode::VendorSql => Some(Value::Bool(true)),
        InfoCode::VendorSubstrait => Some(Value::Bool(false)),
        InfoCode::DriverName => Some(Value::Text("ADBC ferrodbc Driver".into())),
        InfoCode::DriverVersion => Some(Value::Text(env!("CARGO_PKG_VERSION").into())),
        InfoCode::DriverArrowVersion => Some(Value::Text("arrow-rs 57".into())),
        InfoCode::DriverAdbcVersion => Some(Value::Int(ADBC_1_1_0)),
        // Not an Arrow-native server; Substrait versions do not apply.
        _ => None,
    })
}

pub fn get_info(conn: &FerrodbcConnection, codes: Option<HashSet<InfoCode>>) -> Result<Reader> {
    let wanted: Vec<InfoCode> = match codes {
        Some(set) => set.into_iter().collect(),
        None => ALL.to_vec(),
    };
    let mut names = Vec::new();
    let mut type_ids: Vec<i8> = Vec::new();
    let mut offsets: Vec<i32> = Vec::new();
    let (mut texts, mut bools, mut ints) = (Vec::new(), Vec::new(), Vec::new());
    for code in &wanted {
        let Some(v) = value(conn, code)? else {
            continue;
        };
        names.push(u32::from(code));
        match v {
            Value::Text(s) => {
                type_ids.push(0);
                offsets.push(texts.len() as i32);
                texts.push(s);
            }
            Value::Bool(b) => {
                type_ids.push(1);
                offsets.push(bools.len() as i32);
                bools.push(b);
            }
            Value::Int(i) => {
                type_ids.push(2);
                offsets.push(ints.len() as i32);
                ints.push(i);
            }
        }
    }
    let schema = GET_INFO_SCHEMA.clone();
    let DataType::Union(fields, _) = schema.field(1).data_type() else {
        unreachable!("the GetInfo schema's value is a union");
    };
    let children: Vec<ArrayRef> = fields
        .iter()
        .map(|(id, f)| -> ArrayRef {
            match id {
                0 => Arc::new(StringArray::from(texts.clone())),
                1 => Arc::new(BooleanArray::from(bools.clone())),
                2 => Arc::new(Int64Array::from(ints.clone())),
                3 => Arc::new(Int32Array::from(Vec::<i32>::new())),
                _ => new_empty_array(f.data_type()),
            }
        })
        .collect();
    let union = UnionArray::try_new(
        fields.clone(),
        ScalarBuffer::from(type_ids),
        Some(ScalarBuffer::from(offsets)),
        children,
    )?;
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(UInt32Array::from(names)),
            Arc::new(union) as Arc<dyn Array>,
        ],
    )?;
    Ok(batches_reader(schema, vec![batch]))
}
