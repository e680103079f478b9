//! The incremental database ([`db`]): source files, parameter values and
//! access kinds are salsa inputs; parsing, lowering, σ per kernel,
//! dependences, expansion and privatization are queries over them, so an
//! edit re-runs only what it touched. The `arrayflow` crate's `Host` and
//! `Analysis` are the door to it; the language server and the command line
//! go through that door.
//!
//! Architecture invariant: no protocol, no terminal, no file system beyond
//! the text it is given.

#[cfg(feature = "c")]
pub use arrayflow_c::cfront;
pub use arrayflow_dataflow::{dataflow, facts, kinds};
pub use arrayflow_dependence::{dependence, regions};
pub use arrayflow_loop::lower;
pub use arrayflow_model::{budget, diagnostics, hash, model, print};
pub use arrayflow_symbolic::symbolic;
pub use arrayflow_transform::{codegen, expansion, privatize};

pub mod db;
