//! Exact answers about affine accesses: the dependence tests with direction
//! vectors and their memo ([`dependence`]), and the regions loops read and
//! write, as linear memory access descriptors ([`regions`]).
//!
//! Architecture invariant: these work on the model alone, for every
//! parameter value; nothing here runs a program or samples sizes.

pub use arrayflow_model::{hash, model};

pub mod dependence;
pub mod regions;
