//! arrayflow: instance-wise array dataflow analysis and maximal static
//! expansion for loop programs. See `docs/architecture.md` for the map.

pub mod cli;
pub mod dataflow;
pub mod facts;
pub mod model;
