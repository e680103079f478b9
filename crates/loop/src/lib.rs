//! The `.loop` front end: text to syntax tree ([`syntax`]), and syntax tree
//! to the program model ([`lower`]), with the model-level passes every
//! front end shares (inlining of procedures, range checks, warnings).
//!
//! Architecture invariant: no engine, no database, no other front end. The
//! access kinds of a run are seen only through
//! [`kind_syntax::KindSyntax`].

pub use arrayflow_model::{budget, diagnostics, hash, kind_syntax, model, print};

pub mod lower;
pub mod syntax;
