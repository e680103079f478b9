//! Running programs of the model: the interpreter ([`interp`]), which
//! records every value read and who wrote it; the comparison of two runs
//! ([`equiv`]), the check every transformation passes; and the random
//! program generator ([`gen`]) the tests and `arrayflow gen` use.
//!
//! Architecture invariant: values are uninterpreted (a read sees the
//! identity of its writer), so a transformation that keeps every value's
//! source keeps every value.

pub use arrayflow_model::{budget, diagnostics, hash, model};

pub mod equiv;
pub mod gen;
pub mod interp;
