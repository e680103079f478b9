//! Datalog rules loaded at run time: a Soufflé-like rule file
//! (`syntax`), checked against the exported relations (`check`), evaluated
//! with datafrog (`eval`) over the relations `relations` exports from a
//! program's analyses; check relations become diagnostics in the program's
//! source (`report`); `souffle` writes the inputs for other Datalog tools.
//! docs/rules.md §8 is the tutorial and the reference.
//!
//! Layer: above the transformations (it exports their results, the
//! expansion's classes, as relations) and below the database that runs it
//! per file. Invariant: a rule file sees only the exported relations, at
//! the sizes the analysis ran at; it never changes what the analyses say.

pub mod check;
pub mod eval;
pub mod relations;
pub mod report;
pub mod souffle;
pub mod syntax;

pub use check::Rules;
pub use eval::{evaluate, Output, Row};
pub use relations::{schema, Exported};

use arrayflow_model::diagnostics::{Diagnostic, FileId};
use std::collections::HashMap;

/// Interned symbols: a symbol's value in a row is its id here.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Symbols {
    names: Vec<String>,
    ids: HashMap<String, i64>,
}

impl Symbols {
    pub fn intern(&mut self, s: &str) -> i64 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.names.len() as i64;
        self.names.push(s.to_string());
        self.ids.insert(s.to_string(), id);
        id
    }

    pub fn get(&self, s: &str) -> Option<i64> {
        self.ids.get(s).copied()
    }

    pub fn name(&self, id: i64) -> &str {
        usize::try_from(id)
            .ok()
            .and_then(|k| self.names.get(k))
            .map_or("?", String::as_str)
    }
}

/// Parses and checks a rule file against the exported relations. The
/// diagnostics point into `file`.
pub fn compile(text: &str, file: FileId) -> Result<Rules, Vec<Diagnostic>> {
    let (items, mut errors) = syntax::parse(text, file);
    match check::check(&items, &schema(), file) {
        Ok(rules) if errors.is_empty() => Ok(rules),
        Ok(_) => Err(errors),
        Err(more) => {
            errors.extend(more);
            Err(errors)
        }
    }
}
