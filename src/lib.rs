//! arrayflow: instance-wise array dataflow analysis and maximal static
//! expansion for loop programs. See `docs/architecture.md` for the map.

// Paths in the rule sources (`rules/`) name this crate `arrayflow`, so they
// resolve the same here and in a crate that includes them (docs/rules.md §5).
extern crate self as arrayflow;

pub use arrayflow_c::cfront;
pub use arrayflow_dataflow::{dataflow, dataflow_engine, facts, kinds};
pub use arrayflow_dependence::{dependence, regions};
pub use arrayflow_interp::{equiv, gen, interp};
pub use arrayflow_loop::{lower, syntax};
pub use arrayflow_model::{budget, c_spelling, diagnostics, fit, hash, kind_syntax, model, print};
pub use arrayflow_symbolic::symbolic;

pub mod cli;
pub mod codegen;
pub mod datalog;
pub mod db;
pub mod expansion;
pub mod interproc;
pub mod lsp;
pub mod privatize;
pub mod storage;
pub mod verify;
