//! Bounded σ: the program model at concrete parameter values lowered into
//! Datalog facts ([`facts`]), the rules of `rules/` run on them by ascent
//! ([`dataflow`]), and the access kinds that say how each access becomes
//! facts and which rules it adds ([`kinds`]). A plain reference engine sits
//! beside the optimised one ([`dataflow::reference`]).
//!
//! Architecture invariant: nothing here knows a front end, a transformation
//! or the database. The kinds reach the front ends only through
//! [`kind_syntax::KindSyntax`].

// The rule sources in `rules/` name their helpers `arrayflow::dataflow::...`,
// so they resolve the same here and in a crate that includes them through
// the `arrayflow` crate (docs/rules.md §5).
extern crate self as arrayflow;

pub use arrayflow_model::{budget, c_spelling, diagnostics, hash, kind_syntax, model};

pub mod dataflow;
pub mod facts;
pub use dataflow::kinds;
