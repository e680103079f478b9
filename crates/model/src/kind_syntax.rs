//! What a front end asks of the access kinds of a run, and nothing more:
//! the `@name`s extension kinds are written with, how many arguments each
//! takes, whether a kind takes an access in a given position, and how kinds
//! are spelled in C. The kinds themselves (their lowerings into facts and
//! their rules) live with the dataflow engine, which implements this trait
//! for its kind sets; the front ends stay free of the engine.

use crate::c_spelling::CSpelling;
use crate::model::{Access, AccessKind};

/// The syntax side of a set of access kinds.
pub trait KindSyntax {
    /// The arity of the extension kind written `@name`, if the set has one.
    fn arity_of(&self, name: &str) -> Option<usize>;
    /// The `@name`s of the set's extension kinds, in the order asked.
    fn names(&self) -> Vec<&'static str>;
    /// Whether some kind of the set lowers `access` in this position (for
    /// an extension access: a kind of the name it is written with).
    fn takes(&self, access: &Access, kind: AccessKind) -> bool;
    /// The C spellings of the set's extension kinds, in the order added.
    fn c_spellings(&self) -> &[&'static dyn CSpelling];
}

/// The core's kinds as a front end sees them: no extension syntax, and
/// every plain access taken.
pub struct CoreSyntax;

impl KindSyntax for CoreSyntax {
    fn arity_of(&self, _: &str) -> Option<usize> {
        None
    }
    fn names(&self) -> Vec<&'static str> {
        Vec::new()
    }
    fn takes(&self, access: &Access, _: AccessKind) -> bool {
        access.ext.is_none()
    }
    fn c_spellings(&self) -> &[&'static dyn CSpelling] {
        &[]
    }
}
