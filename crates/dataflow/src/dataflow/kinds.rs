//! The access kinds of a run: the lowerings of the core and of any
//! extension crate, the engine compiled from their rules, and the checks
//! they add to `check` and the language server. A binary that adds kinds
//! hands its set to `arrayflow::cli::main_with` (docs/rules.md §5,
//! `examples/kinds/`). A kind written in C too adds a [`c::CSpelling`].

pub use crate::c_spelling as c;

pub use super::engine::{Engine, Input, Outcome};
use super::Flow;
use crate::diagnostics::{Diagnostic, FileId};
pub use crate::facts::kinds::{AccessLowering, CellTable, Point, Sink, CORE};
pub use crate::facts::{role, LowerError};
use crate::model::{Access, AccessKind, Program};

/// A check a kind adds: diagnostics about a program that has an extension
/// access, from its σ over the whole file (`check`, the language server).
pub type Check = fn(&Program, &Flow, FileId) -> Vec<Diagnostic>;

/// A set of access kinds: the lowerings, asked in order, and the engine that
/// runs the core rules with the kinds' rules. Cheap to clone (a few
/// pointers); two sets are equal when they hold the same kinds (by name) and
/// engine.
#[derive(Clone)]
pub struct Kinds {
    /// Extension kinds first (in the order added), then [`CORE`].
    lowerings: Vec<&'static dyn AccessLowering>,
    engine: &'static dyn Engine,
    checks: Vec<Check>,
    /// How added kinds are written in C, asked in the order added.
    spellings: Vec<&'static dyn c::CSpelling>,
}

impl Kinds {
    /// The built-in kinds (compound update, affine must, non-affine may) and
    /// the engine of the core rules.
    pub fn core() -> Kinds {
        Kinds {
            lowerings: CORE.to_vec(),
            engine: &super::engine::CoreEngine,
            checks: Vec::new(),
            spellings: Vec::new(),
        }
    }

    /// Adds an extension kind, asked before every core kind (it claims only
    /// the accesses written with its `@name`).
    pub fn with(mut self, kind: &'static dyn AccessLowering) -> Kinds {
        let at = self.lowerings.len() - CORE.len();
        self.lowerings.insert(at, kind);
        self
    }

    /// Runs the rules with `engine`: one made by [`crate::dataflow_engine!`]
    /// from the core rules and the added kinds' rules.
    pub fn with_engine(mut self, engine: &'static dyn Engine) -> Kinds {
        self.engine = engine;
        self
    }

    /// Adds a check run by `check` and the language server on programs that
    /// have an extension access.
    pub fn with_check(mut self, check: Check) -> Kinds {
        self.checks.push(check);
        self
    }

    /// Adds a C spelling: the C front end offers it calls and the ends of
    /// blocks that declare arrays (docs/rules.md §6).
    pub fn with_c(mut self, spelling: &'static dyn c::CSpelling) -> Kinds {
        self.spellings.push(spelling);
        self
    }

    /// The C spellings, in the order added.
    pub fn c_spellings(&self) -> &[&'static dyn c::CSpelling] {
        &self.spellings
    }

    pub fn has_checks(&self) -> bool {
        !self.checks.is_empty()
    }

    /// The diagnostics of every added check.
    pub fn diagnose(&self, program: &Program, flow: &Flow, file: FileId) -> Vec<Diagnostic> {
        self.checks
            .iter()
            .flat_map(|c| c(program, flow, file))
            .collect()
    }

    pub fn engine(&self) -> &'static dyn Engine {
        self.engine
    }

    /// Every kind, in the order the lowering asks them.
    pub fn all(&self) -> &[&'static dyn AccessLowering] {
        &self.lowerings
    }

    /// The kind written `@name`, if the set has one.
    pub fn by_syntax(&self, name: &str) -> Option<&'static dyn AccessLowering> {
        self.lowerings
            .iter()
            .copied()
            .find(|k| k.syntax() == Some(name))
    }

    /// The kind that lowers an access: for an extension access the kind
    /// whose syntax it names (an error when the set has none), otherwise the
    /// first that claims it.
    pub fn kind_of(
        &self,
        access: &Access,
        kind: AccessKind,
    ) -> Result<&'static dyn AccessLowering, LowerError> {
        crate::facts::kinds::kind_of(&self.lowerings, access, kind)
    }
}

impl Default for Kinds {
    fn default() -> Kinds {
        Kinds::core()
    }
}

impl PartialEq for Kinds {
    fn eq(&self, other: &Kinds) -> bool {
        self.engine.name() == other.engine.name()
            && self.checks.len() == other.checks.len()
            && self.spellings.len() == other.spellings.len()
            && self
                .spellings
                .iter()
                .zip(&other.spellings)
                .all(|(a, b)| a.name() == b.name())
            && self.lowerings.len() == other.lowerings.len()
            && self
                .lowerings
                .iter()
                .zip(&other.lowerings)
                .all(|(a, b)| a.name() == b.name())
    }
}
impl Eq for Kinds {}

impl std::fmt::Debug for Kinds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kinds")
            .field(
                "lowerings",
                &self.lowerings.iter().map(|k| k.name()).collect::<Vec<_>>(),
            )
            .field("engine", &self.engine.name())
            .field(
                "c",
                &self.spellings.iter().map(|k| k.name()).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl crate::kind_syntax::KindSyntax for Kinds {
    fn arity_of(&self, name: &str) -> Option<usize> {
        self.by_syntax(name).map(|k| k.arity())
    }
    fn names(&self) -> Vec<&'static str> {
        self.lowerings.iter().filter_map(|k| k.syntax()).collect()
    }
    fn takes(&self, access: &Access, kind: AccessKind) -> bool {
        self.kind_of(access, kind).is_ok()
    }
    fn c_spellings(&self) -> &[&'static dyn c::CSpelling] {
        &self.spellings
    }
}
