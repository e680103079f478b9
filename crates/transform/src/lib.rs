//! What arrayflow does with σ: maximal static expansion ([`expansion`],
//! R* and the labels ν) and the program it emits ([`codegen`]), with
//! privatization per loop ([`privatize`]), storage mappings under a
//! schedule ([`storage`]), the check of a transformation by runs
//! ([`verify`]) and procedure summaries ([`interproc`]). The run-time rules
//! users write over the facts are the crate above, `arrayflow-rules`.
//!
//! Architecture invariant: every transformation takes its sources from
//! exact σ ([`symbolic`]) wherever it exists, and from bounded σ only where
//! it does not; every emitted program can be run against the original.

pub use arrayflow_cprint as cprint;
pub use arrayflow_dataflow::{dataflow, facts, kinds};
pub use arrayflow_dependence::{dependence, regions};
pub use arrayflow_interp::{equiv, interp};
pub use arrayflow_loop::lower;
pub use arrayflow_model::{budget, diagnostics, fit, hash, model, print};
pub use arrayflow_symbolic::symbolic;

pub mod codegen;
pub mod expansion;
pub mod interproc;
pub mod privatize;
pub mod readback;
pub mod storage;
pub mod verify;
