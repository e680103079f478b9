//! arrayflow: instance-wise array dataflow analysis and maximal static
//! expansion for loop programs. See `docs/architecture.md` for the map.

pub mod cfront;
pub mod cli;
pub mod codegen;
pub mod dataflow;
pub mod db;
pub mod dependence;
pub mod diagnostics;
pub mod equiv;
pub mod expansion;
pub mod facts;
pub mod fit;
pub mod gen;
pub mod hash;
pub mod interp;
pub mod lower;
pub mod lsp;
pub mod model;
pub mod print;
pub mod symbolic;
pub mod syntax;
pub mod verify;
