//! The program model every front end builds and every analysis reads:
//! parameters, arrays, loops, guards, statements and their accesses
//! ([`model`]), with source spans and the diagnostics that point at them
//! ([`diagnostics`]), the printers back to text ([`print`](mod@print)), and the small
//! pieces every layer above shares (hashing, memory budgets, affine fitting).
//!
//! Architecture invariant: this crate knows no front end, no engine and no
//! database. Front ends reach the access kinds of a run only through
//! [`kind_syntax::KindSyntax`] and [`c_spelling::CSpelling`].

pub mod budget;
pub mod c_spelling;
pub mod cancel;
pub mod diagnostics;
pub mod fit;
pub mod hash;
pub mod kind_syntax;
pub mod model;
mod params;
pub mod print;
