//! arrayflow: instance-wise array dataflow analysis and maximal static
//! expansion for loop programs.
//!
//! The door is [`Host`] and [`Analysis`]: open files (`.loop` text or C),
//! edit them, set parameters and rules, and ask for diagnostics, the
//! sources of a read, the loops and their dependences, expansion,
//! privatization and regions. Everything below the door is re-exported by
//! layer, as the crates of the workspace hold it (docs/architecture.md
//! draws the map): [`model`] to build programs, [`kinds`] to add access
//! kinds, [`dataflow`] and [`symbolic`] for σ, [`expansion`] and
//! [`codegen`] for the transformations.
//!
//! With the default feature `cli`, the crate also holds the `arrayflow`
//! command line and language server; an embedder that only wants the
//! analyses depends on it with `default-features = false`.
#![warn(missing_docs)]

// Paths in the rule sources (`rules/`) name this crate `arrayflow`, so they
// resolve the same here and in a crate that includes them (docs/rules.md §5).
extern crate self as arrayflow;

#[cfg(feature = "c")]
pub use arrayflow_c::cfront;
pub use arrayflow_dataflow::{dataflow, dataflow_engine, facts, kinds};
pub use arrayflow_db::db;
pub use arrayflow_dependence::{dependence, regions};
pub use arrayflow_interp::{equiv, gen, interp};
pub use arrayflow_loop::{lower, syntax};
pub use arrayflow_model::{budget, c_spelling, diagnostics, fit, hash, kind_syntax, model, print};
pub use arrayflow_rules as datalog;
pub use arrayflow_symbolic::symbolic;
pub use arrayflow_transform::{codegen, expansion, interproc, privatize, storage, verify};
pub use change::{SourceChange, TextEdit};
pub use host::{
    Analysis, Cancellable, Cancelled, Canceller, Change, FileId, FlowError, Host, LoopReport,
    Options, Remark, RuleReport, Symbol, SymbolKind,
};

pub mod change;
#[cfg(feature = "cli")]
#[allow(missing_docs)]
pub mod cli;
pub mod host;
#[cfg(feature = "cli")]
#[allow(missing_docs)]
pub mod lsp;
