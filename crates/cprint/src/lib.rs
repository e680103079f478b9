//! The program model printed back as C99 ([`emit`]): the value
//! expressions C gave the model ([`cvalue`]), OpenMP clauses where a
//! transformation proved them, and the function the region came from
//! ([`origin`]) around it.
//!
//! Architecture invariant: no parser. The transformations print C through
//! this crate without bringing the C front end (tree-sitter) with them.

pub use arrayflow_model::{diagnostics, model, print};

mod accessed;
pub mod calls;
pub mod cost;
pub mod cvalue;
pub mod effects;
pub mod emit;
pub mod exits;
pub mod extent;
pub mod inplace;
mod linear;
pub mod origin;

/// Whether a path names a C file (`.c` or `.h`).
pub fn is_c_path(path: &std::path::Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("c") || e.eq_ignore_ascii_case("h"))
}
