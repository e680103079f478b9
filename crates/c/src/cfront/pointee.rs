//! What the alias model (`alias`) says a pointer reaches, in a module of
//! its own so that the expression lowering (`expr`) and the alias model
//! can both name it without importing each other.

use super::VarId;
use crate::model::Expr;

/// A known pointer value: a position in the array `var`. `offsets` has
/// one entry per dimension of `var`; the pointer's own subscripts (and
/// arithmetic on it) start at dimension `level`.
#[derive(Clone, Debug)]
pub struct Pointee {
    pub var: VarId,
    pub offsets: Vec<Expr>,
    pub level: usize,
}

/// How a variable is reached through.
pub enum PtrUse {
    /// Not a pointer the alias model follows: an array, a scalar, or a
    /// parameter (an array of its own).
    NotPointer,
    Resolved(Pointee),
    /// A pointer whose value is not known: a may-alias.
    Unknown,
}
