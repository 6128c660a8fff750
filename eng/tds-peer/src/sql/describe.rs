//! `sp_describe_undeclared_parameters` and `sp_describe_first_result_set` (SQL Server 2012+),
//! with SQL Server's result columns. Driver 18 calls the first for SQLDescribeParam, and pyodbc's
//! `fast_executemany` binds each parameter as the type it reports: without it text went narrow
//! ('é中😀' stored as 'é??').
//!
//! A parameter's type is deduced as SQL Server does for the common shapes: the target column
//! of `INSERT … (cols) VALUES (@p, …)` / `INSERT … SELECT @p, …`, and the column on the other
//! side of `=`, `<>`, `<`, `>`, `<=`, `>=`, `LIKE`, `IN (…)`, `BETWEEN … AND …` (which covers
//! `UPDATE … SET col = @p` and WHERE clauses). A parameter used nowhere typed is nvarchar(4000).

use super::errors::SqlError;
use super::lexer::{self, Tok, dotted, ident};
use super::schema::{ColInfo, base_name};
use super::typemeta::{collation, meta, type_name};
use crate::resp::Resp;
use crate::sql::context::{Context, Decl, Flow, Out, Param, StmtErr};
use crate::token::Column;
use crate::types::Ty;
use rusqlite::types::Value;

/// The deduced type of a parameter: a system type, or a table type (a TVP of a procedure).
pub enum PType {
    Scalar(Ty),
    Table {
        schema: String,
        name: String,
        id: i64,
    },
}

/// A table the statement reads or writes, with its alias and columns.
struct TableRef {
    name: String,
    alias: Option<String>,
    cols: Vec<ColInfo>,
}

fn invalid_object(name: &str) -> StmtErr {
    StmtErr::Sql(SqlError::new(
        208,
        16,
        format!("Invalid object name '{name}'."),
    ))
}

fn is_cmp(t: &Tok) -> bool {
    matches!(t, Tok::Punct('=' | '<' | '>' | '!')) || t.is_word("LIKE")
}

/// Tables named after FROM / JOIN / INTO / UPDATE / DELETE, each with its alias.
fn referenced_tables(cx: &Context, sg: &[Tok]) -> Result<Vec<TableRef>, StmtErr> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < sg.len() {
        let kw = ["FROM", "JOIN", "INTO", "UPDATE", "TABLE"]
            .iter()
            .any(|k| sg[i].is_word(k))
            || (sg[i].is_word("DELETE") && !sg.get(i + 1).is_some_and(|t| t.is_word("FROM")));
        i += 1;
        if !kw {
            continue;
        }
        while let Some((parts, next)) = dotted(sg, i) {
            if lexer::NOT_ALIAS.iter().any(|k| sg[i].is_word(k)) {
                break;
            }
            i = next;
            let name = parts.last().cloned().unwrap_or_default();
            let mut alias = None;
            if sg.get(i).is_some_and(|t| t.is_word("AS")) {
                alias = sg.get(i + 1).and_then(ident).map(str::to_string);
                i += 2;
            } else if let Some(a) = sg.get(i).and_then(ident)
                && !lexer::NOT_ALIAS.iter().any(|k| a.eq_ignore_ascii_case(k))
            {
                alias = Some(a.to_string());
                i += 1;
            }
            if !super::schema::virtual_schema(&parts) {
                let cols = super::schema::table_columns(&cx.db, &name)
                    .ok_or_else(|| invalid_object(&name))?;
                out.push(TableRef { name, alias, cols });
            }
            if sg.get(i).is_some_and(|t| t.is_punct(',')) {
                i += 1;
                continue;
            }
            break;
        }
    }
    Ok(out)
}

/// `EXEC proc @P1, @name = @P2`: each parameter takes the type of the procedure's formal
/// parameter it is passed to (a table type for a TVP).
fn exec_arguments(cx: &Context, sg: &[Tok]) -> Result<Option<Vec<(String, PType)>>, StmtErr> {
    if !sg
        .first()
        .is_some_and(|t| t.is_word("EXEC") || t.is_word("EXECUTE"))
    {
        return Ok(None);
    }
    let Some((parts, next)) = dotted(sg, 1) else {
        return Ok(None);
    };
    let name = parts.last().cloned().unwrap_or_default();
    let Some((formal, _)) = crate::sql::procs::lookup_proc(cx, &name) else {
        return Err(StmtErr::Sql(SqlError::new(
            2812,
            16,
            format!("Could not find stored procedure '{name}'."),
        )));
    };
    let defs = super::procs::parse_params(&formal)?;
    let mut out = Vec::new();
    for (pos, arg) in lexer::split_commas(&sg[next..]).into_iter().enumerate() {
        let (def, actual) = match arg {
            [Tok::Var(n), Tok::Punct('='), Tok::Var(a), ..] => {
                (defs.iter().find(|d| d.name.eq_ignore_ascii_case(n)), a)
            }
            [Tok::Var(a), ..] => (defs.get(pos), a),
            _ => continue,
        };
        let Some(def) = def else { continue };
        if out
            .iter()
            .any(|(n, _): &(String, PType)| n.eq_ignore_ascii_case(actual))
        {
            continue;
        }
        let ty = match &def.table_type {
            Some(tt) => match crate::sql::tabletypes::lookup_type(cx, tt) {
                Some((schema, _, id)) => PType::Table {
                    schema,
                    name: tt.clone(),
                    id,
                },
                None => continue,
            },
            None => PType::Scalar(def.ty),
        };
        out.push((actual.clone(), ty));
    }
    Ok(Some(out))
}

/// Character-typed columns of the tables a statement reads, when it has a `+` with no
/// string literal beside it (else nothing: no schema look-up on the common path).
pub(crate) fn plus_text_columns(cx: &Context, toks: &[Tok]) -> Vec<String> {
    let sg: Vec<Tok> = toks.iter().filter(|t| !t.is_space()).cloned().collect();
    let bare_plus = (0..sg.len()).any(|k| {
        sg[k].is_punct('+')
            && !matches!(sg.get(k.wrapping_sub(1)), Some(Tok::Str { .. }))
            && !matches!(sg.get(k + 1), Some(Tok::Str { .. }))
    });
    if !bare_plus {
        return Vec::new();
    }
    let tables = referenced_tables(cx, &sg).unwrap_or_default();
    tables
        .iter()
        .flat_map(|t| t.cols.iter())
        .filter(|c| {
            matches!(
                c.ty,
                Ty::Char(..) | Ty::VarChar(..) | Ty::NChar(_) | Ty::NVarChar(_)
            )
        })
        .map(|c| c.name.clone())
        .collect()
}

/// Decimal, numeric and money columns of the tables a statement reads, when it calls MAX or
/// MIN (else nothing). A name that is another type's column in another of its tables is left
/// out: which one `MAX(name)` means is not known here.
pub(crate) fn aggregated_decimal_columns(cx: &Context, toks: &[Tok]) -> Vec<(String, Ty)> {
    if !super::decagg::has_max_min(toks) {
        return Vec::new();
    }
    let sg: Vec<Tok> = toks.iter().filter(|t| !t.is_space()).cloned().collect();
    let cols: Vec<(String, Ty)> = referenced_tables(cx, &sg)
        .unwrap_or_default()
        .into_iter()
        .flat_map(|t| t.cols)
        .map(|c| (c.name, c.ty))
        .collect();
    cols.iter()
        .filter(|(n, ty)| {
            super::decagg::is_decimal(*ty)
                && cols
                    .iter()
                    .all(|(m, u)| !m.eq_ignore_ascii_case(n) || u == ty)
        })
        .cloned()
        .collect()
}

/// SQL Server's deduced type of each undeclared parameter, in order of first use.
fn undeclared_parameters(
    cx: &Context,
    tsql: &str,
    declared: &[String],
) -> Result<Vec<(String, PType)>, StmtErr> {
    let toks = lexer::tokenize(tsql).map_err(|e| StmtErr::Sql(SqlError::syntax(e)))?;
    let sg: Vec<Tok> = toks.into_iter().filter(|t| !t.is_space()).collect();
    if let Some(found) = exec_arguments(cx, &sg)? {
        return Ok(found
            .into_iter()
            .filter(|(n, _)| !declared.iter().any(|d| d.eq_ignore_ascii_case(n)))
            .collect());
    }
    let tables = referenced_tables(cx, &sg)?;
    let mut locals: Vec<String> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for (k, t) in sg.iter().enumerate() {
        if let Tok::Var(v) = t {
            if v.starts_with("@@") {
                continue;
            }
            // DECLARE @x … makes @x a local variable, not a parameter.
            if k > 0
                && (sg[k - 1].is_word("DECLARE") || sg[k - 1].is_punct(','))
                && sg[..k]
                    .iter()
                    .rev()
                    .take_while(|t| !t.is_punct(';'))
                    .any(|t| t.is_word("DECLARE"))
                && sg.get(k + 1).is_some_and(|t| ident(t).is_some())
            {
                locals.push(v.to_ascii_lowercase());
            }
            let lower = v.to_ascii_lowercase();
            if !names.iter().any(|n| n.eq_ignore_ascii_case(v))
                && !locals.contains(&lower)
                && !declared.iter().any(|d| d.eq_ignore_ascii_case(v))
            {
                names.push(v.clone());
            }
        }
    }
    let mut types: Vec<Option<Ty>> = vec![None; names.len()];
    let mut assign = |name: &str, ty: Ty| {
        if let Some(i) = names.iter().position(|n| n.eq_ignore_ascii_case(name))
            && types[i].is_none()
        {
            types[i] = Some(ty);
        }
    };
    insert_targets(&sg, &tables, &mut assign);
    for k in 0..sg.len() {
        let Tok::Var(v) = &sg[k] else { continue };
        if let Some(ty) = compared_column(&sg, k, &tables) {
            assign(v, ty);
        }
    }
    Ok(names
        .into_iter()
        .zip(types)
        .map(|(n, t)| (n, PType::Scalar(t.unwrap_or(Ty::NVarChar(Some(4000))))))
        .collect())
}

/// sp_describe_undeclared_parameters @tsql [, @params]
pub(crate) fn sp_describe_undeclared_parameters(
    cx: &mut Context,
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    let tsql = arg_text(params, "@tsql", 0).unwrap_or_default();
    let declared: Vec<String> = arg_text(params, "@params", 1)
        .map(|d| {
            lexer::tokenize(&d)
                .unwrap_or_default()
                .into_iter()
                .filter_map(|t| match t {
                    Tok::Var(v) => Some(v),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    let found = undeclared_parameters(cx, &tsql, &declared)?;
    let sysname = || Ty::NVarChar(Some(128));
    let c = |n: &str, ty: Ty, nullable: bool| Column::described(n, ty, nullable);
    let cols = vec![
        c("parameter_ordinal", Ty::Int, false),
        c("name", sysname(), false),
        c("suggested_system_type_id", Ty::Int, false),
        c("suggested_system_type_name", Ty::NVarChar(Some(256)), true),
        c("suggested_max_length", Ty::SmallInt, false),
        c("suggested_precision", Ty::TinyInt, false),
        c("suggested_scale", Ty::TinyInt, false),
        c("suggested_user_type_id", Ty::Int, true),
        c("suggested_user_type_database", sysname(), true),
        c("suggested_user_type_schema", sysname(), true),
        c("suggested_user_type_name", sysname(), true),
        c(
            "suggested_assembly_qualified_type_name",
            Ty::NVarChar(Some(4000)),
            true,
        ),
        c("suggested_xml_collection_id", Ty::Int, true),
        c("suggested_xml_collection_database", sysname(), true),
        c("suggested_xml_collection_schema", sysname(), true),
        c("suggested_xml_collection_name", sysname(), true),
        c("suggested_is_xml_document", Ty::Bit, false),
        c("suggested_is_case_sensitive", Ty::Bit, false),
        c("suggested_is_fixed_length_clr_type", Ty::Bit, false),
        c("suggested_is_input", Ty::Bit, false),
        c("suggested_is_output", Ty::Bit, false),
        c("formal_parameter_name", sysname(), true),
        c("suggested_tds_type_id", Ty::Int, false),
        c("suggested_tds_length", Ty::Int, false),
    ];
    let rows: Vec<Vec<Value>> = found
        .into_iter()
        .enumerate()
        .map(|(i, (name, pty))| {
            let text = |s: &str| Value::Text(s.to_string());
            let mut row = vec![Value::Integer(i as i64 + 1), Value::Text(name)];
            match pty {
                PType::Scalar(ty) => {
                    let ty = super::vector::described(ty);
                    let m = meta(ty);
                    row.extend([
                        Value::Integer(m.system_type_id),
                        Value::Text(type_name(ty)),
                        Value::Integer(m.max_length),
                        Value::Integer(m.precision),
                        Value::Integer(m.scale),
                        Value::Integer(m.system_type_id),
                    ]);
                    row.extend(std::iter::repeat_n(Value::Null, 8));
                    row.extend([0, 0, 0, 1, 0].map(Value::Integer));
                    row.push(Value::Null);
                    row.push(Value::Integer(m.tds_type_id));
                    row.push(Value::Integer(m.tds_length));
                }
                // A table type (system type 243): its user type names where it lives.
                PType::Table { schema, name, id } => {
                    row.extend([
                        Value::Integer(243),
                        Value::Text(format!("{}.{}.{name}", cx.database, schema)),
                        Value::Integer(-1),
                        Value::Integer(0),
                        Value::Integer(0),
                        Value::Integer(id),
                        text(&cx.database),
                        text(&schema),
                        text(&name),
                    ]);
                    row.extend(std::iter::repeat_n(Value::Null, 5));
                    row.extend([0, 0, 0, 1, 0].map(Value::Integer));
                    row.push(Value::Null);
                    row.push(Value::Integer(0xF3));
                    row.push(Value::Integer(-1));
                }
            }
            row
        })
        .collect();
    cx.send_rows(&cols, &rows, out, r)
}

/// sp_describe_first_result_set @tsql [, @params, @browse_information_mode]
pub(crate) fn sp_describe_first_result_set(
    cx: &mut Context,
    params: &[Param],
    out: &mut Out,
    r: &mut Resp,
) -> Result<Flow, StmtErr> {
    let tsql = arg_text(params, "@tsql", 0).unwrap_or_default();
    let described = describe_result(cx, &tsql)?;
    let sysname = || Ty::NVarChar(Some(128));
    let c = |n: &str, ty: Ty, nullable: bool| Column::described(n, ty, nullable);
    let mut cols = vec![
        c("is_hidden", Ty::Bit, false),
        c("column_ordinal", Ty::Int, false),
        c("name", sysname(), true),
        c("is_nullable", Ty::Bit, false),
        c("system_type_id", Ty::Int, false),
        c("system_type_name", Ty::NVarChar(Some(256)), true),
        c("max_length", Ty::SmallInt, false),
        c("precision", Ty::TinyInt, false),
        c("scale", Ty::TinyInt, false),
        c("collation_name", sysname(), true),
        c("user_type_id", Ty::Int, true),
        c("user_type_database", sysname(), true),
        c("user_type_schema", sysname(), true),
        c("user_type_name", sysname(), true),
        c(
            "assembly_qualified_type_name",
            Ty::NVarChar(Some(4000)),
            true,
        ),
        c("xml_collection_id", Ty::Int, true),
        c("xml_collection_database", sysname(), true),
        c("xml_collection_schema", sysname(), true),
        c("xml_collection_name", sysname(), true),
        c("is_xml_document", Ty::Bit, false),
        c("is_case_sensitive", Ty::Bit, false),
        c("is_fixed_length_clr_type", Ty::Bit, false),
    ];
    for n in [
        "source_server",
        "source_database",
        "source_schema",
        "source_table",
        "source_column",
    ] {
        cols.push(c(n, sysname(), true));
    }
    for n in [
        "is_identity_column",
        "is_part_of_unique_key",
        "is_updateable",
        "is_computed_column",
        "is_sparse_column_set",
    ] {
        cols.push(c(n, Ty::Bit, true));
    }
    for n in [
        "ordinal_in_order_by_list",
        "order_by_list_length",
        "order_by_is_descending",
    ] {
        cols.push(c(n, Ty::SmallInt, true));
    }
    cols.push(c("tds_type_id", Ty::Int, false));
    cols.push(c("tds_length", Ty::Int, false));
    cols.push(c("tds_collation_id", Ty::Int, true));
    cols.push(c("tds_collation_sort_id", Ty::TinyInt, true));
    let rows: Vec<Vec<Value>> = described
        .into_iter()
        .enumerate()
        .map(|(i, d)| {
            let Described {
                name,
                ty,
                nullable,
                identity,
                timestamp,
                source,
            } = d;
            let ty = super::vector::described(ty);
            let mut m = meta(ty);
            // A rowversion column is timestamp (189) in SQL Server's description, binary(8)
            // on the wire (tds_type_id 173).
            let type_name = if timestamp {
                m.system_type_id = super::typemeta::ROWVERSION_TYPE_ID;
                "timestamp".to_string()
            } else {
                type_name(ty)
            };
            let text =
                |s: Option<&str>| s.map(|s| Value::Text(s.to_string())).unwrap_or(Value::Null);
            let mut row = vec![
                Value::Integer(0),
                Value::Integer(i as i64 + 1),
                if name.is_empty() {
                    Value::Null
                } else {
                    Value::Text(name)
                },
                Value::Integer(nullable as i64),
                Value::Integer(m.system_type_id),
                Value::Text(type_name),
                Value::Integer(m.max_length),
                Value::Integer(m.precision),
                Value::Integer(m.scale),
                text(collation(ty)),
                Value::Integer(m.system_type_id),
            ];
            row.extend(std::iter::repeat_n(Value::Null, 8));
            row.extend([0, 0, 0].map(Value::Integer));
            // source_server .. source_column, then is_identity_column .. is_sparse_column_set.
            // Driver 18's bcp_initW reads is_updateable: a column not marked updateable makes
            // bcp_sendrow fail with "All bound columns are read-only". SQL Server says 1 for a
            // base-table column and 0 (no source) for an expression.
            row.push(Value::Null);
            match &source {
                Some(s) => {
                    row.extend(
                        [&s.database, &s.schema, &s.table, &s.column]
                            .map(|v| Value::Text(v.clone())),
                    );
                }
                None => row.extend(std::iter::repeat_n(Value::Null, 4)),
            }
            row.push(Value::Integer(identity as i64));
            row.push(Value::Null); // is_part_of_unique_key: browse mode only
            row.push(Value::Integer(source.is_some() as i64));
            // The peer has no computed columns: a base-table column is a stored one.
            row.push(Value::Integer(0));
            row.push(Value::Integer(0)); // is_sparse_column_set
            row.extend(std::iter::repeat_n(Value::Null, 3));
            // As COLMETADATA sends it: INT4 for an int that cannot be NULL, INTN else.
            let tds_type = ty.fixed_len_type().filter(|_| !nullable);
            row.push(Value::Integer(tds_type.map_or(m.tds_type_id, i64::from)));
            row.push(Value::Integer(m.tds_length));
            // The collation as TDS sends it: 4 bytes (LCID + flags) as an int, then the sort id
            // (SQL_Latin1_General_CP1_CI_AS: 0x00D00409, 52). bcp_initW uses them to encode text.
            match ty.tds_collation() {
                Some(c) => {
                    let id = i32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    row.push(Value::Integer(i64::from(id)));
                    row.push(Value::Integer(i64::from(c[4])));
                }
                None => row.extend([Value::Null, Value::Null]),
            }
            row
        })
        .collect();
    cx.send_rows(&cols, &rows, out, r)
}

/// Each column of the first SELECT of `tsql` (none for a statement that returns no rows).
fn describe_result(cx: &mut Context, tsql: &str) -> Result<Vec<Described>, StmtErr> {
    let toks = lexer::tokenize(tsql).map_err(|e| StmtErr::Sql(SqlError::syntax(e)))?;
    let Some(stmt) = lexer::split(&toks).into_iter().find(|s| {
        s.iter()
            .find(|t| !t.is_space())
            .is_some_and(|t| t.is_word("SELECT") || t.is_word("WITH"))
    }) else {
        return Ok(Vec::new());
    };
    let sg: Vec<Tok> = stmt.iter().filter(|t| !t.is_space()).cloned().collect();
    let tables = referenced_tables(cx, &sg)?;
    // Parameters of the statement are untyped placeholders here (nothing is bound).
    let mut decl: Decl = Vec::new();
    for t in &sg {
        if let Tok::Var(v) = t
            && !v.starts_with("@@")
            && !decl.iter().any(|(n, _)| n.eq_ignore_ascii_case(v))
        {
            decl.push((v.clone(), None));
        }
    }
    let ctx = cx.ctx(&decl);
    let sql = ctx
        .rw(&stmt)
        .map_err(|e| StmtErr::Sql(SqlError::syntax(e)))?;
    let forced = ctx.select_types(&stmt);
    let names = super::rewrite::select_names(&stmt);
    let st = cx
        .db
        .prepare(&sql)
        .map_err(|e| StmtErr::Sql(super::errors::from_sqlite(&e)))?;
    let cols = super::schema::declared_columns(&st);
    // As COLMETADATA describes the result (`select::query`).
    let origins = super::nullability::origins(&st);
    let nullable = super::nullability::nullable(&stmt, &origins, |t| cx.is_table(t));
    let database = cx.database.clone();
    let sources: Vec<Option<Source>> = (0..st.column_count())
        .map(|i| {
            let (_, table, column, ..) = st.column_metadata(i).ok()??;
            let table = table.to_string_lossy();
            let column = column.to_string_lossy().into_owned();
            // SQLite names a user schema's table `s.t`, a temporary table `#t` (in tempdb).
            let (schema, table) = table.split_once('.').unwrap_or(("dbo", &table));
            let database = if table.starts_with('#') {
                "tempdb".to_string()
            } else {
                database.clone()
            };
            Some(Source {
                database,
                schema: schema.to_string(),
                table: table.to_string(),
                column,
            })
        })
        .collect();
    Ok(cols
        .into_iter()
        .enumerate()
        .map(|(i, (sqlite_name, decl))| {
            let name = names.get(i).cloned().flatten().unwrap_or(sqlite_name);
            let col = tables
                .iter()
                .flat_map(|t| t.cols.iter())
                .find(|c| c.name.eq_ignore_ascii_case(&name));
            let ty = forced.get(i).copied().flatten().or(decl).unwrap_or(Ty::Int);
            Described {
                name,
                ty,
                nullable: nullable[i],
                identity: col.is_some_and(|c| c.identity),
                timestamp: ty == Ty::Binary(8) && origins[i].as_ref().is_some_and(|o| o.rowversion),
                source: sources.get(i).cloned().flatten(),
            }
        })
        .collect())
}

/// A result column as `sp_describe_first_result_set` describes it.
struct Described {
    name: String,
    ty: Ty,
    nullable: bool,
    identity: bool,
    /// A rowversion column read as is.
    timestamp: bool,
    /// The base-table column it reads as is (none for an expression).
    source: Option<Source>,
}

/// Where a result column comes from, as the `source_*` columns name it.
#[derive(Clone)]
struct Source {
    database: String,
    schema: String,
    table: String,
    column: String,
}

/// A procedure argument by name or position, as text.
fn arg_text(params: &[Param], name: &str, pos: usize) -> Option<String> {
    params
        .iter()
        .find(|p| p.name.eq_ignore_ascii_case(name))
        .or_else(|| params.get(pos).filter(|p| p.name.is_empty()))
        .map(|p| crate::token::value::as_text(&p.value))
}

/// INSERT [INTO] t [(cols)] VALUES (@p, …)[, (…)] | SELECT @p, …: each bare parameter takes the
/// type of its target column (without a column list: the table's columns but IDENTITY).
fn insert_targets(sg: &[Tok], tables: &[TableRef], assign: &mut impl FnMut(&str, Ty)) {
    let Some(ins) = sg.iter().position(|t| t.is_word("INSERT")) else {
        return;
    };
    let mut i = ins + 1;
    if sg.get(i).is_some_and(|t| t.is_word("INTO")) {
        i += 1;
    }
    let Some((parts, next)) = dotted(sg, i) else {
        return;
    };
    i = next;
    let name = base_name(parts.last().map(String::as_str).unwrap_or(""));
    let Some(table) = tables.iter().find(|t| t.name.eq_ignore_ascii_case(&name)) else {
        return;
    };
    let mut targets: Vec<&ColInfo> = table.cols.iter().filter(|c| !c.identity).collect();
    if sg.get(i).is_some_and(|t| t.is_punct('(')) {
        let close = lexer::matching(sg, i).unwrap_or(sg.len());
        targets = lexer::split_commas(&sg[i + 1..close])
            .into_iter()
            .filter_map(|part| part.last().and_then(ident))
            .filter_map(|n| table.cols.iter().find(|c| c.name.eq_ignore_ascii_case(n)))
            .collect();
        i = close + 1;
    }
    // OUTPUT INSERTED.… before VALUES/SELECT.
    while i < sg.len() && !(sg[i].is_word("VALUES") || sg[i].is_word("SELECT")) {
        i += 1;
    }
    let mut bind_list = |items: &[&[Tok]]| {
        for (item, col) in items.iter().zip(&targets) {
            if let [Tok::Var(v)] = item {
                assign(v, col.ty);
            }
        }
    };
    if sg.get(i).is_some_and(|t| t.is_word("VALUES")) {
        i += 1;
        while sg.get(i).is_some_and(|t| t.is_punct('(')) {
            let close = lexer::matching(sg, i).unwrap_or(sg.len());
            bind_list(&lexer::split_commas(&sg[i + 1..close]));
            i = close + 1;
            if sg.get(i).is_some_and(|t| t.is_punct(',')) {
                i += 1;
            }
        }
    } else if sg.get(i).is_some_and(|t| t.is_word("SELECT")) {
        let end = (i + 1..sg.len())
            .find(|&k| sg[k].is_word("FROM"))
            .unwrap_or(sg.len());
        bind_list(&lexer::split_commas(&sg[i + 1..end]));
    }
}

/// A column reference ending at `end` (inclusive): `col`, `alias.col`, `[t].[col]`.
fn column_ending_at(sg: &[Tok], end: usize, tables: &[TableRef]) -> Option<Ty> {
    let col = ident(sg.get(end)?)?;
    let qualifier = (end >= 2 && sg[end - 1].is_punct('.'))
        .then(|| sg.get(end - 2).and_then(ident))
        .flatten();
    tables
        .iter()
        .filter(|t| {
            qualifier.is_none_or(|q| {
                t.name.eq_ignore_ascii_case(q)
                    || t.alias
                        .as_deref()
                        .is_some_and(|a| a.eq_ignore_ascii_case(q))
            })
        })
        .flat_map(|t| t.cols.iter())
        .find(|c| c.name.eq_ignore_ascii_case(col))
        .map(|c| c.ty)
}

/// A column reference starting at `start`: `col`, `alias.col`.
fn column_starting_at(sg: &[Tok], start: usize, tables: &[TableRef]) -> Option<Ty> {
    let (parts, _) = dotted(sg, start)?;
    let last = start + 2 * (parts.len() - 1);
    column_ending_at(sg, last.min(sg.len() - 1), tables)
}

/// The type of the column a parameter at `k` is compared with or assigned to.
fn compared_column(sg: &[Tok], k: usize, tables: &[TableRef]) -> Option<Ty> {
    // col OP @p  (OP of one or two characters, or LIKE)
    let mut j = k;
    let mut ops = 0;
    while j > 0 && is_cmp(&sg[j - 1]) && ops < 2 {
        j -= 1;
        ops += 1;
    }
    if ops > 0
        && j > 0
        && let Some(ty) = column_ending_at(sg, j - 1, tables)
    {
        return Some(ty);
    }
    // @p OP col
    let mut j = k + 1;
    let mut ops = 0;
    while j < sg.len() && is_cmp(&sg[j]) && ops < 2 {
        j += 1;
        ops += 1;
    }
    if ops > 0
        && j < sg.len()
        && let Some(ty) = column_starting_at(sg, j, tables)
    {
        return Some(ty);
    }
    // col BETWEEN @p AND @q
    if k >= 2 && sg[k - 1].is_word("BETWEEN") {
        return column_ending_at(sg, k - 2, tables);
    }
    if k >= 4 && sg[k - 1].is_word("AND") && sg[k - 3].is_word("BETWEEN") {
        return column_ending_at(sg, k - 4, tables);
    }
    // col [NOT] IN (@p, @q, …)
    let mut j = k;
    while j > 0 && !sg[j - 1].is_punct('(') {
        if !matches!(
            sg[j - 1],
            Tok::Punct(',') | Tok::Var(_) | Tok::Num(_) | Tok::Str { .. }
        ) {
            return None;
        }
        j -= 1;
    }
    if j >= 3 && sg[j - 2].is_word("IN") {
        return column_ending_at(sg, j - 3, tables);
    }
    None
}
