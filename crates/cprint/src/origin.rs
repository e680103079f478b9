//! The C function a program's one region came from, so that a transformed
//! region can be printed back into it (`emit::program_in`): the function's
//! text before and after the region as the file spells it (its signature
//! with `static`, `DATA_TYPE` and PolyBench's macros kept), the names the
//! region sees there, and each array's element type as declared. The C
//! front end fills it in from the parse tree.

use crate::model::Program;
use std::collections::{HashMap, HashSet};

/// A function with one region, in the file's own text.
#[derive(Clone, Debug, Default)]
pub struct Origin {
    /// From the function's start through the line of `#pragma scop` (or the
    /// body's `{`).
    pub prefix: String,
    /// From `#pragma endscop` (or the body's `}`) through the function's end.
    pub suffix: String,
    /// Names declared where the region is: the function's parameters, the
    /// locals declared before the region, globals, macros.
    pub visible: HashSet<String>,
    /// Element type of each visible variable, as written (`DATA_TYPE`,
    /// `float`); the preprocessed spelling where the file's is not known.
    pub types: HashMap<String, String>,
    /// The function's locals declared before the region.
    pub locals: HashSet<String>,
    /// Those of them that have no value where the region starts: declared
    /// without an initialiser, and nothing but declarations before it.
    pub unset: HashSet<String>,
    /// Functions the file declares or defines, and those the region calls
    /// (declared by the file's headers).
    pub functions: HashSet<String>,
    /// Functions the file defines.
    pub defined: HashSet<String>,
}

impl Origin {
    /// Whether the lowered `program` names every array and parameter it
    /// shares with C by its C name: only then does printing into the
    /// function mean the same variables. A function that returns (the call
    /// statement `return(x)` of the model) does not fit: statements the
    /// transformation puts after the return would not run.
    pub fn fits(&self, program: &Program) -> bool {
        let returns = (crate::calls::collect_calls(program).iter()).any(|(f, _)| f == "return");
        let names_ok = !returns
            && (program.arrays.iter())
                .filter(|a| !a.local && !crate::cvalue::is_effects_array(&a.name))
                .all(|a| self.visible.contains(&a.name))
            && (program.params.iter()).all(|p| self.visible.contains(&p.name));
        names_ok && !self.prefix.is_empty()
    }

    /// The element type written for `name`, or for the array whose name it
    /// extends (`C_2` of an expansion of `C`).
    pub fn type_of(&self, name: &str) -> Option<&str> {
        let mut n = name;
        loop {
            if let Some(t) = self.types.get(n) {
                return Some(t);
            }
            n = &n[..n.rfind('_')?];
        }
    }
}
