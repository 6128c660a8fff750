//! The peer's SQL lexer and the token-level passes over it: batch splitting, statement
//! classification, statement forms rewritten for SQLite, select-list names, the
//! synthetic-table query parser, the result-set nullability analysis and the UPDATE target
//! parser of the rowversion check. Arbitrary
//! text (from UTF-8, lossy) must lex or fail with a message, and lexing the tokens' own text
//! again must give the same tokens.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tds_peer::sql::lexer::{self, Tok};
use tds_peer::sql::nullability::{self, Origin};
use tds_peer::sql::{forms, rewrite, rowversion, statement};
use tds_peer::synthetic::Query;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(toks) = lexer::tokenize(&text) else {
        return;
    };
    // Two quoted identifiers back to back (`[a]"b"`, never valid T-SQL) print as `"a""b"`, one
    // identifier with an escaped quote: the only token pair whose texts run together.
    let adjacent_quoted = toks
        .windows(2)
        .any(|w| matches!(w, [Tok::Quoted(_), Tok::Quoted(_)]));
    if !adjacent_quoted {
        let again: String = toks.iter().map(Tok::text).collect();
        let relexed = lexer::tokenize(&again).expect("the tokens' own text lexes");
        assert_eq!(relexed, toks, "{text:?} -> {again:?}");
    }
    for stmt in lexer::split(&toks) {
        // Every name is a procedure, so the procedure-call paths are walked too.
        let _ = statement::classify(&stmt, |_| Some(()));
        let _ = forms::rewrite(&stmt);
        let _ = forms::sysobjects(&stmt);
        let _ = forms::inner_items(&stmt);
        let _ = rewrite::select_names(&stmt);
        let sg: Vec<&Tok> = stmt.iter().filter(|t| !t.is_space()).collect();
        let _ = Query::parse(&sg, &text);
        let _ = rowversion::updated_columns(&sg);
        // Every column from a NOT NULL table column, so the analysis walks every item.
        let origins: Vec<Option<Origin>> = (0..4)
            .map(|_| {
                Some(Origin {
                    table: "t".into(),
                    notnull: true,
                    rowversion: false,
                    identity: false,
                })
            })
            .collect();
        let described = nullability::nullable(&stmt, &origins, |_| true);
        assert_eq!(described.len(), origins.len());
    }
});
