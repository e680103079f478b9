//! What a verdict on a C file rests on beyond the model: choices the front
//! end made that no analysis of the model can check. Reports and the
//! emitted C's header print each as an "assumes" line, so that "parallel
//! for every parameter value" never hides one.
//!
//! Three today: a `for` loop's step that is a parameter is taken to be at
//! least 1 (`stmt`, W0903), a macro that multiplies a counter has its
//! value (`fold`, W0912), and a `<math.h>` function may set `errno`. In a file that never
//! names `errno` it is read as a pure function (`effects`), which holds
//! with `-fno-math-errno`, or when nothing reads `errno` after the code.
//!
//! Beside them, [`notes`] explains the names the front end made that
//! reports show: the cell `__effects`.

use crate::model::nodes::each_expr;
use crate::model::{CmpOp, Cond, ExprKind, Program};
use std::collections::BTreeSet;

/// The premises of `program`, lowered from the C text `src`, as sentences
/// that follow "assumes".
pub fn premises(program: &Program, src: &str) -> Vec<String> {
    // C has no `assume`: each one is the front end's. `P == k` pins a
    // macro folded where it multiplies a counter; any other is a `for`
    // loop's step that is a parameter taken to be at least 1.
    let mut out: Vec<String> = (program.assumptions.iter())
        .map(|a| {
            let why = match a {
                Cond::Cmp(CmpOp::Eq, _, _) => {
                    "the macro multiplies a counter in the code, which the affine forms \
                     take only at its value"
                }
                _ => "a `for` loop steps by it, and C's loop ends for such steps only",
            };
            format!("`{}`: {why}", crate::print::cond(program, a))
        })
        .collect();
    out.extend(math_premises(program, src));
    out
}

/// The `<math.h>` premise: its functions set no `errno` read later.
fn math_premises(program: &Program, src: &str) -> Vec<String> {
    if super::effects::names_errno(src) {
        // Every math call is then a barrier: nothing is assumed.
        return Vec::new();
    }
    let mut math = BTreeSet::new();
    each_expr(&program.body, &mut |e| {
        if let ExprKind::Call(name, _) = &e.kind {
            if super::cvalue::is_math(name) {
                math.insert(name.as_str());
            }
        }
    });
    if math.is_empty() {
        return Vec::new();
    }
    let names: Vec<String> = math.iter().map(|m| format!("`{m}`")).collect();
    vec![format!(
        "{} set no `errno` that is read after this code (read as pure: this file never \
         names `errno`; -fno-math-errno makes it so)",
        names.join(", ")
    )]
}

/// What a report of `program` should explain about names the front end
/// made: the cell `__effects`, which stands for the state calls reach
/// (`effects`), named with the calls that read and write it.
pub fn notes(program: &Program) -> Vec<String> {
    use super::cvalue::{EFFECT, EFFECTS};
    if !program.arrays.iter().any(|a| a.name == EFFECTS) {
        return Vec::new();
    }
    let mut calls = BTreeSet::new();
    each_expr(&program.body, &mut |e| {
        if let ExprKind::Call(name, _) = &e.kind {
            if let Some(f) = name.strip_prefix(EFFECT).filter(|f| *f != "overlap") {
                calls.insert(f);
            }
        }
    });
    let names: Vec<String> = calls.iter().map(|f| format!("`{f}`")).collect();
    vec![format!(
        "`{EFFECTS}` stands for the state that calls to {} may read and write: a loop around \
         one carries a dependence through it (docs/c.md, Calls)",
        names.join(", ")
    )]
}
