//! What a statement is, decided once from its first words: `classify` turns a statement's
//! tokens into a `Statement`, and the engine runs the handler of that variant. Every rule that
//! looks at first words lives here, in the order SQL Server's parser would settle them (a
//! procedure called without EXEC, say, only when the first word is no statement keyword).
//!
//! A new statement form is a new variant, one arm of `classify` and one arm of the engine's
//! dispatch: dynamic SQL (`EXEC ('…')`, `EXEC (N'…' + @v)`) before `ExecSystem`, `INSERT BULK`
//! (bulk load) before `Dml`, `SET IDENTITY_INSERT` before `Set`.

use crate::sql::lexer::{Tok, sig};

/// The kind of a data-modifying statement, as its DONE token reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DmlKind {
    Insert,
    Update,
    Delete,
    /// `REPLACE` (SQLite's, passed through) and `MERGE`: DONE says UPDATE.
    Other,
}

/// A statement of a batch. `P` is what the procedure lookup returns for a stored procedure
/// (its definition), so the engine looks a procedure up once.
#[derive(Debug)]
pub enum Statement<P> {
    /// Nothing but spaces and comments, or a stray `END`.
    Empty,
    /// `BEGIN TRY … END TRY BEGIN CATCH … END CATCH`.
    TryCatch,
    /// `BEGIN … END`.
    Block,
    /// `DECLARE @v type [= value], …` (and table variables).
    Declare,
    /// `SET @v = expr`.
    SetVariable,
    /// `SELECT @v = expr, …`.
    SelectAssign,
    /// `RETURN [n]`.
    Return,
    /// `CREATE|ALTER PROC[EDURE] …`.
    CreateProc,
    /// `DROP PROC[EDURE] …`.
    DropProc,
    /// `EXEC sp_executesql …`: `args` starts after the procedure name.
    ExecuteSql {
        args: usize,
    },
    /// `EXEC ( string_expr )` / `EXECUTE (…)`: dynamic SQL; `open` is the index of the `(`.
    ExecDynamic {
        open: usize,
    },
    /// `[EXEC] [schema.]proc args` of a stored procedure: `args` starts after the name.
    ExecProc {
        name: String,
        def: P,
        args: usize,
    },
    /// `SELECT …` (synthetic `peer.*` tables included).
    Select,
    /// `WITH …` / `VALUES …`: a query run as is.
    Query,
    /// `INSERT BULK t (cols) [WITH (hints)]`: the start of a bulk load (bulkload.rs).
    InsertBulk,
    /// `INSERT|UPDATE|DELETE|REPLACE|MERGE …`, with or without an OUTPUT clause.
    Dml {
        kind: DmlKind,
        output: bool,
    },
    /// `CREATE TYPE` / `DROP TYPE`.
    TypeDdl {
        create: bool,
    },
    /// `CREATE SCHEMA` / `DROP SCHEMA`.
    SchemaDdl,
    /// `CREATE SEQUENCE` / `DROP SEQUENCE`.
    SequenceDdl,
    /// Other `CREATE|DROP|ALTER|TRUNCATE …` (tables, views, indexes).
    Ddl,
    /// `SET option …` (NOCOUNT, isolation level and the options the peer ignores).
    Set,
    Print,
    Raiserror,
    Throw,
    /// `BEGIN TRAN[SACTION]`.
    BeginTran,
    /// `COMMIT …` (`rollback: false`) or `ROLLBACK …`.
    EndTran {
        rollback: bool,
    },
    /// `SAVE TRAN…`: accepted, nothing to do.
    Save,
    Use,
    Kill,
    Waitfor,
    /// `IF OBJECT_ID(…) IS NOT NULL DROP TABLE …`: `drop` is the index of the DROP.
    DropTableIfExists {
        drop: usize,
    },
    If,
    While,
    /// `EXEC name args` / `sp_x args` of a system procedure: `name` is where its name starts.
    ExecSystem {
        name: usize,
    },
    /// Anything else: the word SQL Server would stop at.
    Unsupported(String),
}

/// Words that start a statement and cannot name a procedure called without EXEC (SQL Server
/// reserves them; a procedure so named needs brackets, which lex as a quoted name).
fn is_statement_keyword(first: &str) -> bool {
    matches!(
        first,
        "SELECT"
            | "INSERT"
            | "UPDATE"
            | "DELETE"
            | "MERGE"
            | "WITH"
            | "VALUES"
            | "CREATE"
            | "DROP"
            | "ALTER"
            | "TRUNCATE"
            | "SET"
            | "DECLARE"
            | "IF"
            | "WHILE"
            | "BEGIN"
            | "END"
            | "COMMIT"
            | "ROLLBACK"
            | "SAVE"
            | "PRINT"
            | "RAISERROR"
            | "THROW"
            | "RETURN"
            | "USE"
            | "WAITFOR"
            | "KILL"
    )
}

/// `BEGIN` that is not `BEGIN TRAN[SACTION]` / `BEGIN DISTRIBUTED …`.
fn is_begin(sg: &[&Tok]) -> bool {
    sg.first().is_some_and(|t| t.is_word("BEGIN"))
        && !sg.get(1).is_some_and(|t| {
            t.is_word("TRAN") || t.is_word("TRANSACTION") || t.is_word("DISTRIBUTED")
        })
}

fn is_block(sg: &[&Tok]) -> bool {
    sg.len() > 1 && sg.last().is_some_and(|t| t.is_word("END"))
}

/// Classifies a statement; returns it with the tokens it is made of (a stray `BEGIN`, one not
/// opening a transaction, a TRY or a block ending in END, carries no meaning and is left out).
/// `lookup` finds a stored procedure by name; it is asked only where the statement may call one.
pub fn classify<P>(toks: &[Tok], lookup: impl Fn(&str) -> Option<P>) -> (Statement<P>, &[Tok]) {
    let sg = sig(toks);
    if is_begin(&sg) {
        if sg.get(1).is_some_and(|t| t.is_word("TRY")) {
            return (Statement::TryCatch, toks);
        }
        if is_block(&sg) {
            return (Statement::Block, toks);
        }
        let p = toks.iter().position(|t| t.is_word("BEGIN")).unwrap();
        let rest = &toks[p + 1..];
        return (statement(rest, &sig(rest), lookup), rest);
    }
    if sg.len() == 1 && sg[0].is_word("END") {
        return (Statement::Empty, toks);
    }
    (statement(toks, &sg, lookup), toks)
}

fn statement<P>(toks: &[Tok], sg: &[&Tok], lookup: impl Fn(&str) -> Option<P>) -> Statement<P> {
    let Some(first_tok) = sg.first() else {
        return Statement::Empty;
    };
    let first = first_tok.word().unwrap_or_default();
    let second = |w: &str| sg.get(1).is_some_and(|t| t.is_word(w));
    let second_is_var = matches!(sg.get(1), Some(Tok::Var(v)) if !v.starts_with("@@"));
    match first.as_str() {
        "DECLARE" => return Statement::Declare,
        "SET" if second_is_var => return Statement::SetVariable,
        "SELECT" if second_is_var && sg.get(2).is_some_and(|t| t.is_punct('=')) => {
            return Statement::SelectAssign;
        }
        "RETURN" => return Statement::Return,
        "CREATE" | "ALTER" if is_create_proc(toks) => return Statement::CreateProc,
        "DROP" if second("PROC") || second("PROCEDURE") => return Statement::DropProc,
        "EXEC" | "EXECUTE" if sg.get(1).is_some_and(|t| t.is_punct('(')) => {
            let open = sg[1];
            return Statement::ExecDynamic {
                open: toks.iter().position(|t| std::ptr::eq(t, open)).unwrap(),
            };
        }
        _ => {}
    }
    if let Some(s) = procedure_call(toks, sg, &first, &lookup) {
        return s;
    }
    keyword_statement(toks, sg, &first)
}

/// `EXEC name …`, `sp_…`/`xp_…` and a bare procedure name: sp_executesql or a stored
/// procedure. None when it is neither (a system procedure is then `ExecSystem`).
fn procedure_call<P>(
    toks: &[Tok],
    sg: &[&Tok],
    first: &str,
    lookup: &impl Fn(&str) -> Option<P>,
) -> Option<Statement<P>> {
    let exec = first == "EXEC" || first == "EXECUTE";
    if !(exec
        || first.starts_with("SP_")
        || first.starts_with("XP_")
        || (!is_statement_keyword(first) && lookup(&sg[0].text()).is_some()))
    {
        return None;
    }
    let mut at = usize::from(exec);
    // A multi-part name (`dbo.p`, `"dbo".p`, `master..p`) names the procedure by its last part.
    while sg.get(at + 1).is_some_and(|t| t.is_punct('.')) {
        let mut k = at + 1;
        while sg.get(k).is_some_and(|t| t.is_punct('.')) {
            k += 1;
        }
        if !sg
            .get(k)
            .is_some_and(|t| matches!(t, Tok::Word(_) | Tok::Quoted(_)))
        {
            break;
        }
        at = k;
    }
    let name_tok = sg.get(at)?;
    let name = proc_name_of(&name_tok.text().replace('"', ""));
    let pos = toks
        .iter()
        .position(|t| std::ptr::eq(t, *name_tok))
        .unwrap();
    if name.eq_ignore_ascii_case("sp_executesql") {
        return Some(Statement::ExecuteSql { args: pos + 1 });
    }
    let def = lookup(&name)?;
    let mut args = pos + 1;
    while toks.get(args).is_some_and(|t| t.is_punct('.')) {
        args += 2;
    }
    Some(Statement::ExecProc {
        name,
        def,
        args: args.min(toks.len()),
    })
}

/// Statements known by their first word (and for DDL the second).
fn keyword_statement<P>(toks: &[Tok], sg: &[&Tok], first: &str) -> Statement<P> {
    let second = |w: &str| sg.get(1).is_some_and(|t| t.is_word(w));
    let dml = |kind| Statement::Dml {
        kind,
        output: crate::sql::lexer::depth0_word(toks, 0, &["OUTPUT"]).is_some(),
    };
    match first {
        "SELECT" => Statement::Select,
        "WITH" | "VALUES" => Statement::Query,
        "INSERT" if second("BULK") => Statement::InsertBulk,
        "INSERT" => dml(DmlKind::Insert),
        "UPDATE" => dml(DmlKind::Update),
        "DELETE" => dml(DmlKind::Delete),
        "REPLACE" | "MERGE" => dml(DmlKind::Other),
        "CREATE" | "DROP" if second("TYPE") => Statement::TypeDdl {
            create: first == "CREATE",
        },
        "CREATE" | "DROP" if second("SCHEMA") => Statement::SchemaDdl,
        "CREATE" | "DROP" if second("SEQUENCE") => Statement::SequenceDdl,
        "CREATE" | "DROP" | "ALTER" | "TRUNCATE" | "DBCC" => Statement::Ddl,
        "SET" => Statement::Set,
        "PRINT" => Statement::Print,
        "RAISERROR" => Statement::Raiserror,
        "THROW" => Statement::Throw,
        "BEGIN" if second("TRAN") || second("TRANSACTION") => Statement::BeginTran,
        "COMMIT" => Statement::EndTran { rollback: false },
        "ROLLBACK" => Statement::EndTran { rollback: true },
        "SAVE" => Statement::Save,
        "USE" => Statement::Use,
        "KILL" => Statement::Kill,
        "WAITFOR" => Statement::Waitfor,
        "IF" if sg.iter().any(|t| t.is_word("OBJECT_ID"))
            && sg
                .windows(2)
                .any(|w| w[0].is_word("DROP") && w[1].is_word("TABLE")) =>
        {
            Statement::DropTableIfExists {
                drop: toks.iter().position(|t| t.is_word("DROP")).unwrap(),
            }
        }
        "IF" => Statement::If,
        "WHILE" => Statement::While,
        "EXEC" | "EXECUTE" => Statement::ExecSystem {
            name: toks.iter().position(|t| t.is_word(first)).unwrap() + 1,
        },
        w if w.starts_with("SP_") || w.starts_with("XP_") => Statement::ExecSystem { name: 0 },
        _ => Statement::Unsupported(sg[0].text()),
    }
}

/// `master..p`, `[dbo].[p]` -> `p`.
pub fn proc_name_of(name: &str) -> String {
    name.rsplit('.')
        .next()
        .unwrap_or(name)
        .trim_matches(|c| c == '[' || c == ']')
        .to_string()
}

/// The batch is a CREATE/ALTER PROCEDURE (which must be alone in its batch in T-SQL).
pub fn is_create_proc(toks: &[Tok]) -> bool {
    let sg: Vec<&Tok> = toks.iter().filter(|t| !t.is_space()).take(4).collect();
    let create = sg
        .first()
        .is_some_and(|t| t.is_word("CREATE") || t.is_word("ALTER"));
    create
        && sg
            .iter()
            .skip(1)
            .any(|t| t.is_word("PROC") || t.is_word("PROCEDURE"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::lexer::tokenize;

    fn kind(sql: &str) -> String {
        let toks = tokenize(sql).unwrap();
        let (s, _) = classify(&toks, |n: &str| {
            n.eq_ignore_ascii_case("myproc").then_some(())
        });
        let d = format!("{s:?}");
        d.split([' ', '(', '{']).next().unwrap().to_string()
    }

    #[test]
    fn first_words_decide() {
        for (sql, want) in [
            ("", "Empty"),
            ("END", "Empty"),
            (
                "BEGIN TRY SELECT 1 END TRY BEGIN CATCH END CATCH",
                "TryCatch",
            ),
            ("BEGIN SELECT 1 END", "Block"),
            ("BEGIN SELECT 1", "Select"),
            ("BEGIN TRAN", "BeginTran"),
            ("BEGIN DISTRIBUTED TRAN", "Unsupported"),
            ("DECLARE @a INT", "Declare"),
            ("SET @a = 1", "SetVariable"),
            ("SET NOCOUNT ON", "Set"),
            ("SELECT @a = 1", "SelectAssign"),
            ("SELECT @@ROWCOUNT", "Select"),
            ("CREATE PROCEDURE p AS SELECT 1", "CreateProc"),
            ("DROP PROC p", "DropProc"),
            ("EXEC sp_executesql N'SELECT 1'", "ExecuteSql"),
            ("EXEC dbo.myproc 1", "ExecProc"),
            ("EXEC ('SELECT 1')", "ExecDynamic"),
            ("EXECUTE (N'SELECT ' + @c)", "ExecDynamic"),
            ("myproc 1", "ExecProc"),
            ("otherproc 1", "Unsupported"),
            ("EXEC sp_tables", "ExecSystem"),
            ("sp_columns 't'", "ExecSystem"),
            ("INSERT INTO t OUTPUT inserted.id VALUES (1)", "Dml"),
            ("insert bulk t([id] int)", "InsertBulk"),
            ("CREATE TYPE t AS TABLE (a INT)", "TypeDdl"),
            ("DROP SCHEMA s", "SchemaDdl"),
            ("CREATE SEQUENCE s", "SequenceDdl"),
            ("TRUNCATE TABLE t", "Ddl"),
            (
                "IF OBJECT_ID('t') IS NOT NULL DROP TABLE t",
                "DropTableIfExists",
            ),
            ("IF 1 = 1 SELECT 1", "If"),
            ("COMMIT", "EndTran"),
            ("WITH c AS (SELECT 1 a) SELECT a FROM c", "Query"),
        ] {
            assert_eq!(kind(sql), want, "{sql}");
        }
    }
}
