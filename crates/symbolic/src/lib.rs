//! σ for every parameter value ([`symbolic`]): per read, a quast (a tree of
//! affine conditions over the read's counters and the parameters, with a
//! writer instance or the initial value at each leaf), fitted from bounded
//! σ at sampled sizes and then proved by the exact dependence tests, so a
//! proved quast holds at every size.
//!
//! Architecture invariant: a quast is either proved for every parameter
//! value it claims, or not used; bounded σ ([`dataflow`]) is what this layer
//! samples, never what it returns.

pub use arrayflow_dataflow::dataflow;
pub use arrayflow_dependence::dependence;
pub use arrayflow_model::{budget, fit, hash, model, print};

pub mod symbolic;
