//! The SQL side: T-SQL tokenizer/splitter, rewriting to SQLite, SQLite functions, and the
//! statement executor that turns results into TDS tokens.

pub mod bulkload;
pub mod bulkplan;
pub mod catalog;
pub mod catalog_keys;
pub mod constraints;
pub mod context;
pub mod control;
pub mod ddl;
pub mod describe;
pub mod dml;
pub mod dynamic;
pub mod engine;
pub mod errors;
pub mod extprops;
pub mod forms;
pub mod functions;
pub mod lexer;
pub mod messages;
pub mod nullability;
pub mod procs;
pub mod ranges;
pub mod rewrite;
pub mod rowversion;
pub mod schema;
pub mod select;
pub mod sequences;
pub mod settings;
pub mod statement;
pub mod sysprocs;
pub mod sysviews;
pub mod tabletypes;
pub mod typeinfo;
pub mod typemeta;
pub mod variables;
pub mod variant;
