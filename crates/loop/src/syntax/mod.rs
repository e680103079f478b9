//! The `.loop` text front end: lexer, syntax tree and parser. Semantic checks
//! and lowering to the model live in `lower`.

pub mod ast;
pub mod lexer;
pub mod parser;

pub use parser::{parse, MAX_EXPR_DEPTH};
