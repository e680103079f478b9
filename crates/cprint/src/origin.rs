//! The C function a program's one region came from, so that a transformed
//! region can be printed back into it (`emit::program_in`): the function's
//! text before and after the region as the file spells it (its signature
//! with `static`, `DATA_TYPE` and PolyBench's macros kept), the names the
//! region sees there, and each array's element type as declared. The C
//! front end fills it in from the parse tree.

use crate::model::{ArrayId, Node, Program, StmtKind};
use std::collections::{HashMap, HashSet};

/// The functions of a C file that hold its regions, each to be printed
/// back in its place ([`crate::inplace`]), and the file as written.
#[derive(Clone, Debug, Default)]
pub struct Origins {
    /// One per region, in file order.
    pub functions: Vec<Origin>,
    /// The file as written: `-o` writes it with each transformed function
    /// replaced.
    pub text: String,
}

/// A function with one region, in the file's own text.
#[derive(Clone, Debug, Default)]
pub struct Origin {
    /// The function's name.
    pub name: String,
    /// The function's byte range in the text the program was lowered from
    /// (preprocessed or not): its statements' spans fall inside it.
    pub source: (usize, usize),
    /// The function's byte range in the file as written (from its
    /// specifiers to its closing brace).
    pub at: (usize, usize),
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
    /// Variables the region itself declares, with their type as written
    /// (`real_t`, `float`): the printed region declares them again.
    pub region_types: HashMap<String, String>,
    /// The model names of the arrays and scalars local to the region
    /// ([`Origin::for_program`]): declared in the printed region even where
    /// a global of the same name is visible (a local `x` hiding `x[]`).
    pub region_locals: HashSet<String>,
    /// The function's result type as written (`double`, `real_t *`);
    /// `None` for `void`.
    pub returns: Option<String>,
    /// The names of the program lowered from the file (its arrays,
    /// parameters and counters: C's names) ([`Origin::for_program`]).
    pub lowered: HashSet<String>,
    /// Every identifier of the file (and of the headers it includes): the
    /// names the printer makes avoid them all.
    pub identifiers: HashSet<String>,
    /// The value of each parameter that is a pointer's extent C does not
    /// say, from what the program accesses, or why there is none
    /// ([`crate::extent::pointer_extents`]).
    pub extents: HashMap<String, Result<crate::extent::Extent, String>>,
}

impl Origin {
    /// Whether the lowered `program` names every array it shares with C
    /// by its C name: only then does printing into the
    /// function mean the same variables. A `return` must be a statement of
    /// the region's top level, in a function with a result (it is printed
    /// last, so that what the transformation puts after it still runs).
    pub fn fits(&self, program: &Program) -> bool {
        let returns_ok = (crate::calls::collect_calls(program).iter())
            .filter(|(f, _)| f == "return")
            .count()
            == top_returns(program)
            && (self.returns.is_some() || top_returns(program) == 0);
        // A parameter C does not declare is a local of the printed region
        // (`inplace::program_into`); the effects cell is the analysis's own.
        let used = crate::accessed::arrays_of(&program.body);
        let names_ok = returns_ok
            && (program.arrays.iter().enumerate())
                .filter(|(k, _)| used.contains(&ArrayId(*k as u32)))
                .filter(|(_, a)| !a.local && !crate::cvalue::is_effects_array(&a.name))
                .all(|(_, a)| self.visible.contains(&a.name));
        names_ok && !self.prefix.is_empty()
    }

    /// This origin for `original`, the program lowered from the file: the
    /// names of its arrays local to the region (a transformation's program,
    /// printed back from `.loop` text, no longer says which are).
    pub fn for_program(&self, original: &Program) -> Origin {
        let mut o = self.clone();
        // This function's own: declared inside it (a file's functions are
        // one program, each with its locals).
        let inside = |a: &crate::model::Array| {
            a.span.is_none()
                || self.source == (0, 0)
                || (self.source.0..self.source.1).contains(&(a.span.start as usize))
        };
        o.region_locals = (original.arrays.iter().filter(|a| a.local && inside(a)))
            .map(|a| a.name.clone())
            .collect();
        o.lowered = (original.arrays.iter().map(|a| &a.name))
            .chain(original.params.iter().map(|p| &p.name))
            .chain(original.counters.iter().map(|c| &c.name))
            .cloned()
            .collect();
        o
    }

    /// Whether the model name `name` is one the C function knows: a name
    /// of the program lowered from it (else, without that program, one
    /// declared where the region is or by the region). Other names are
    /// the transformation's, made fresh against [`Origin::identifiers`].
    pub fn knows(&self, name: &str) -> bool {
        if !self.lowered.is_empty() {
            return self.lowered.contains(name);
        }
        self.visible.contains(name) || self.region_types.contains_key(name)
    }

    /// Whether the model name `name` is a variable the function sees
    /// where the region is (not declared again): one C knows, and visible.
    pub fn shares(&self, name: &str) -> bool {
        self.knows(name) && self.visible.contains(name)
    }

    /// The element type written for `name`, or for the array whose name it
    /// extends (`C_2` of an expansion of `C`).
    pub fn type_of(&self, name: &str) -> Option<&str> {
        let mut n = name;
        loop {
            if let Some(t) = self.region_types.get(n).or_else(|| self.types.get(n)) {
                return Some(t);
            }
            n = &n[..n.rfind('_')?];
        }
    }
}

/// How many statements of the program's top level are `return` calls.
fn top_returns(program: &Program) -> usize {
    (program.body.iter())
        .filter(|n| matches!(n, Node::Stmt(s) if matches!(&s.kind, StmtKind::Call { func, .. } if func == "return")))
        .count()
}

/// The identifiers in C text, outside comments (a name a comment
/// mentions, such as the copy a fixture documents, stays available).
pub fn identifiers(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut word = String::new();
    let mut in_number = false;
    let mut chars = text.chars().chain(std::iter::once(' ')).peekable();
    while let Some(ch) = chars.next() {
        if ch == '/' && matches!(chars.peek(), Some('/' | '*')) {
            let block = chars.next() == Some('*');
            let mut last = ' ';
            for c in chars.by_ref() {
                if (!block && c == '\n') || (block && last == '*' && c == '/') {
                    break;
                }
                last = c;
            }
        } else if ch.is_ascii_alphanumeric() || ch == '_' {
            if word.is_empty() && !in_number {
                in_number = ch.is_ascii_digit();
            }
            word.push(ch);
            continue;
        }
        if !word.is_empty() && !in_number {
            out.insert(std::mem::take(&mut word));
        }
        word.clear();
        in_number = false;
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn identifiers_skip_comments_and_numbers() {
        let ids = super::identifiers("int x_r = 2e3; /* y_p */ // z\nfloat w; // q");
        let mut got: Vec<&str> = ids.iter().map(String::as_str).collect();
        got.sort();
        assert_eq!(got, ["float", "int", "w", "x_r"]);
    }
}
