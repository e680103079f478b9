//! The C front end: `#pragma scop` regions and function bodies of C files
//! lowered into the program model through the same model-level passes as
//! `.loop` text ([`cfront`]), and the model printed back as C, with OpenMP
//! where a transformation asks for it ([`cfront::emit`]).
//!
//! Architecture invariant: no engine and no database; the access kinds of a
//! run are seen only through their C spellings ([`c_spelling`]).

pub use arrayflow_loop::lower;
pub use arrayflow_model::{c_spelling, diagnostics, model, print};

pub mod cfront;
