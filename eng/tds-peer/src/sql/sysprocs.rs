//! System procedures (`sp_*`, `xp_*` that SQL Server ships), called by name in a batch
//! (`EXEC master..xp_msver 'ProductVersion'`, `sp_datatype_info_100 -9,3`) or as an RPC
//! (`[sys].sp_describe_undeclared_parameters`): one dispatcher for both.

use super::errors::SqlError;
use super::lexer::{self, Tok};
use super::typeinfo;
use crate::resp::Resp;
use crate::sql::context::{Context, Flow, Out, Param, StmtErr};
use crate::sql::{catalog, catalog_keys, describe, extprops, variables};
use crate::token::{Column, value::as_text};
use crate::types::Ty;
use rusqlite::types::Value;
use std::io;

/// `master..xp_msver`, `[sys].[sp_tables]`, `dbo.sp_x` -> `xp_msver`, `sp_tables`, `sp_x`.
pub fn normalize(name: &str) -> String {
    super::schema::base_name(name).to_ascii_lowercase()
}

pub fn is_system_proc(name: &str) -> bool {
    let n = normalize(name);
    n.starts_with("sp_datatype_info")
        || matches!(
            n.as_str(),
            "xp_msver"
                | "sp_tables"
                | "sp_columns"
                | "sp_columns_90"
                | "sp_columns_100"
                | "sp_describe_undeclared_parameters"
                | "sp_describe_first_result_set"
                | "sp_statistics"
                | "sp_statistics_100"
                | "sp_pkeys"
                | "sp_fkeys"
                | "sp_table_privileges"
                | "sp_special_columns"
                | "sp_special_columns_100"
                | "sp_tablecollations"
                | "sp_tablecollations_90"
                | "sp_tablecollations_100"
                | "sp_stored_procedures"
                | "sp_sproc_columns"
                | "sp_sproc_columns_100"
                | "sp_addextendedproperty"
                | "sp_updateextendedproperty"
                | "sp_dropextendedproperty"
        )
}

fn io_only(res: io::Result<()>) -> Result<Flow, StmtErr> {
    res.map(|_| Flow::Continue).map_err(StmtErr::Io)
}

/// Runs a system procedure; None when `name` is not one.
fn system_proc(
    cx: &mut Context,
    name: &str,
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Option<Result<Flow, StmtErr>> {
    let n = normalize(name);
    if !is_system_proc(&n) {
        return None;
    }
    // `[tempdb].[sys].sp_tables` (Driver 18 for a catalog other than the current one) runs in
    // that database, as SQL Server runs a procedure named with a database: its qualifier
    // checks and TABLE_QUALIFIER see that name (the peer has one database behind every name).
    let parts = catalog_keys::name_parts(name);
    if parts.len() >= 3 && !parts[0].is_empty() && !parts[0].eq_ignore_ascii_case(&cx.database) {
        let saved = std::mem::replace(&mut cx.database, parts[0].clone());
        let res = system_proc(cx, &n, params, out, r);
        cx.database = saved;
        return res;
    }
    Some(match n.as_str() {
        _ if n.starts_with("sp_datatype_info") => {
            let dt = params
                .first()
                .map(|p| crate::token::value::as_i64(&p.value))
                .unwrap_or(0);
            cx.send_rows(&typeinfo::columns(), &typeinfo::rows(dt), out, r)
        }
        "xp_msver" => xp_msver(cx, params, out, r),
        "sp_tables" => io_only(catalog::sp_tables(cx, params, out, r)),
        "sp_columns" | "sp_columns_90" | "sp_columns_100" => {
            io_only(catalog::sp_columns(cx, params, out, r))
        }
        "sp_describe_undeclared_parameters" => {
            describe::sp_describe_undeclared_parameters(cx, params, out, r)
        }
        "sp_describe_first_result_set" => {
            describe::sp_describe_first_result_set(cx, params, out, r)
        }
        "sp_statistics" | "sp_statistics_100" => catalog_keys::sp_statistics(cx, params, out, r),
        "sp_pkeys" => catalog_keys::sp_pkeys(cx, params, out, r),
        "sp_fkeys" => catalog_keys::sp_fkeys(cx, params, out, r),
        "sp_table_privileges" => catalog_keys::sp_table_privileges(cx, params, out, r),
        "sp_special_columns" | "sp_special_columns_100" => {
            catalog_keys::sp_special_columns(cx, params, out, r)
        }
        "sp_tablecollations" | "sp_tablecollations_90" | "sp_tablecollations_100" => {
            catalog_keys::sp_tablecollations(cx, params, out, r)
        }
        "sp_stored_procedures" => catalog_keys::sp_stored_procedures(cx, params, out, r),
        "sp_sproc_columns" | "sp_sproc_columns_100" => {
            catalog_keys::sp_sproc_columns(cx, params, out, r)
        }
        "sp_addextendedproperty" => extprops::sp_extendedproperty(cx, "add", params),
        "sp_updateextendedproperty" => extprops::sp_extendedproperty(cx, "update", params),
        "sp_dropextendedproperty" => extprops::sp_extendedproperty(cx, "drop", params),
        _ => return None,
    })
}

/// An RPC of a system procedure: its results, RETURNSTATUS, DONEPROC.
pub(crate) fn call_system_rpc(
    cx: &mut Context,
    name: &str,
    params: &[Param],
    more: bool,
    r: &mut Resp,
) -> io::Result<()> {
    let mut out = Out::new(true);
    if std::env::var_os("TDS_PEER_TRACE").is_some() {
        let v: Vec<_> = params
            .iter()
            .map(|p| (&p.name, as_text(&p.value)))
            .collect();
        eprintln!("tds-peer: system rpc {name} {v:?}");
    }
    let err = match system_proc(cx, name, params, &mut out, r) {
        None | Some(Ok(_)) => false,
        Some(Err(StmtErr::Io(e))) => return Err(e),
        Some(Err(StmtErr::Sql(e))) => {
            out.error(r, &e)?;
            true
        }
    };
    let err = out.finish(r)? || err;
    r.put(&crate::token::proc_end(more, None, err))
}

/// `EXEC name args` in a batch for a system procedure: `toks` starts at the name.
pub(crate) fn exec_system(
    cx: &mut Context,
    toks: &[Tok],
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    let start = toks
        .iter()
        .position(|t| !t.is_space())
        .unwrap_or(toks.len());
    // The (multi-part) name: words, brackets and dots without spaces between them.
    let mut end = start;
    while end < toks.len() && matches!(toks[end], Tok::Word(_) | Tok::Quoted(_) | Tok::Punct('.')) {
        end += 1;
    }
    let name: String = toks[start..end].iter().map(|t| t.text()).collect();
    let mut args = Vec::new();
    for part in lexer::split_commas(&toks[end..]) {
        let sg: Vec<&Tok> = part.iter().filter(|t| !t.is_space()).collect();
        if sg.is_empty() {
            continue;
        }
        let (pname, expr) = match (sg.first(), sg.get(1)) {
            (Some(Tok::Var(v)), Some(Tok::Punct('='))) => {
                let eq = part.iter().position(|t| t.is_punct('=')).unwrap();
                (v.clone(), &part[eq + 1..])
            }
            _ => (String::new(), part),
        };
        // A bare name as an argument is a string, as in T-SQL (`EXEC sp_x dbo, [t]`).
        let esg: Vec<&Tok> = expr.iter().filter(|t| !t.is_space()).collect();
        let value = match esg.as_slice() {
            [Tok::Quoted(q)] => Value::Text(q.clone()),
            [Tok::Word(w)]
                if !w.eq_ignore_ascii_case("NULL")
                    && !w.eq_ignore_ascii_case("DEFAULT")
                    && !w.starts_with('@') =>
            {
                Value::Text(w.clone())
            }
            _ => variables::eval_value(cx, expr, params)?,
        };
        args.push(Param {
            name: pname,
            ty: None,
            value,
            output: false,
            table: None,
        });
    }
    match system_proc(cx, &name, &args, out, r) {
        Some(res) => res,
        None => Err(StmtErr::Sql(SqlError::new(
            2812,
            16,
            format!("Could not find stored procedure '{name}'."),
        ))),
    }
}

/// xp_msver [name]: SQL Server 2022's version facts (what the login ack announces).
fn xp_msver(
    cx: &mut Context,
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    let want = params
        .first()
        .map(|p| as_text(&p.value).to_ascii_lowercase());
    let cols = vec![
        Column::new("Index", Ty::Int),
        Column::new("Name", Ty::NVarChar(Some(128))),
        Column::new("Internal_Value", Ty::Int),
        Column::new("Character_Value", Ty::NVarChar(Some(255))),
    ];
    let facts: [(&str, Option<i64>, &str); 12] = [
        ("ProductName", None, "Microsoft SQL Server"),
        (
            "ProductVersion",
            Some(16 << 16),
            super::rewrite::PRODUCT_VERSION,
        ),
        ("Language", Some(1033), "English (United States)"),
        ("Platform", None, "Linux"),
        ("Comments", None, "SQL"),
        ("CompanyName", None, "Microsoft Corporation"),
        ("FileDescription", None, "SQL Server Windows NT - 64 Bit"),
        ("FileVersion", None, "2022.0160.4096.00"),
        ("InternalName", None, "SQLSERVR"),
        (
            "LegalCopyright",
            None,
            "Microsoft Corp. All rights reserved.",
        ),
        ("OriginalFilename", None, "SQLSERVR.EXE"),
        ("ProcessorCount", Some(2), "2"),
    ];
    let rows: Vec<Vec<Value>> = facts
        .iter()
        .enumerate()
        .filter(|(_, (n, _, _))| want.as_deref().is_none_or(|w| w == n.to_ascii_lowercase()))
        .map(|(i, (n, iv, cv))| {
            vec![
                Value::Integer(i as i64 + 1),
                Value::Text(n.to_string()),
                iv.map(Value::Integer).unwrap_or(Value::Null),
                Value::Text(cv.to_string()),
            ]
        })
        .collect();
    cx.send_rows(&cols, &rows, out, r)
}
