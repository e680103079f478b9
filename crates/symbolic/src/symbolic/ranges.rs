//! The parameter values at which a run can complete. A run whose access
//! leaves its declared range stops (E0400), so a proof about the runs
//! that complete may assume every access stays inside. For one access and
//! one side of one dimension, the parameters where some instance leaves
//! the range are `∃x. domain(x) ∧ subscript(x) < lo` (or `> hi`),
//! projected exactly (`project`); its negation is a constraint on the
//! parameters alone. `n` in `a[i + n]` over `a[0..2*n + 11]` for i in
//! 1..10 gives `n >= -1`.

use super::domain::{negate, Atom, Place};
use super::project;
use crate::model::{Access, Affine, Program, Var};

/// Constraints on the parameters that hold in every run that completes.
/// Only what stays one atom is kept (the negation of a one-atom
/// projection), so the assumptions stay a conjunction per disjunct;
/// anything else (an inexact projection, a statement outside static
/// control, a range that is not affine) is left out, which only weakens
/// them.
pub fn in_range(program: &Program, places: &[Place]) -> Vec<Atom> {
    let mut out: Vec<Atom> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for s in program.stmts() {
        let place = &places[s.id.index()];
        if place.not_static().is_some() {
            continue;
        }
        let Some(dom) = place.domain() else { continue };
        let counters: Vec<Var> = place.counters().into_iter().map(Var::Counter).collect();
        let accesses = s.write().map(|(a, _)| a).into_iter().chain(s.reads());
        for a in accesses {
            for leaves in outside(program, a) {
                for conj in &dom {
                    let mut c = conj.clone();
                    c.push(leaves.clone());
                    // Statements of one shape pose the same problem.
                    if !seen.insert(format!("{c:?}")) {
                        continue;
                    }
                    if let Some(atom) = never(&c, &counters) {
                        if !out.contains(&atom) {
                            out.push(atom);
                        }
                    }
                }
            }
        }
    }
    out
}

/// The atoms "subscript d is below its range" and "above it", per
/// dimension with affine subscript and bounds.
fn outside(program: &Program, a: &Access) -> Vec<Atom> {
    let dims = &program.array_decl(a.array).dims;
    let mut out = Vec::new();
    for (sub, d) in a.subscripts.iter().zip(dims) {
        let Some(f) = &sub.affine else { continue };
        let (lo, hi) = (&d.lo.affine, &d.hi.affine);
        let one = Affine::constant(1);
        // f < lo: f - lo + 1 <= 0; f > hi: hi - f + 1 <= 0.
        if let Some(e) = f.checked_sub(lo).and_then(|e| e.checked_add(&one)) {
            out.push(Atom::Le(e));
        }
        if let Some(e) = hi.checked_sub(f).and_then(|e| e.checked_add(&one)) {
            out.push(Atom::Le(e));
        }
    }
    out
}

/// The negation of `∃counters. conj` when the projection is exact and one
/// atom on the parameters.
fn never(conj: &[Atom], counters: &[Var]) -> Option<Atom> {
    let projected = project::eliminate_all(conj, counters).ok()?;
    // Constant atoms: a false one means no instance ever leaves; true ones
    // say nothing.
    let mut rest = Vec::new();
    for a in projected {
        if !a.expr().terms.is_empty() {
            rest.push(a);
            continue;
        }
        let c = a.expr().constant;
        let holds = match a {
            Atom::Le(_) => c <= 0,
            Atom::Eq(_) => c == 0,
            Atom::Stride(_, k) => c.rem_euclid(k) == 0,
            Atom::NotStride(_, k) => c.rem_euclid(k) != 0,
        };
        if !holds {
            return None;
        }
    }
    // Empty: every parameter value leaves the range; assuming its negation
    // would make every proof vacuous.
    let [one] = rest.as_slice() else { return None };
    match negate(one)?.as_slice() {
        [Atom::Le(e)] => Some(Atom::Le(reduced(e))),
        [n] => Some(n.clone()),
        _ => None,
    }
}

/// `e ≤ 0` with the coefficients' common factor g divided out (the
/// constant rounded up: `2n + 2 ≤ 0` and `2n + 1 ≤ 0` are both `n + 1 ≤ 0`
/// over the integers), so that equal constraints print once.
fn reduced(e: &Affine) -> Affine {
    let g = e.terms.iter().fold(0i64, |g, t| gcd(g, t.1));
    if g <= 1 {
        return e.clone();
    }
    Affine {
        terms: e.terms.iter().map(|&(v, c)| (v, c / g)).collect(),
        constant: -(-e.constant).div_euclid(g),
    }
}

/// The greatest common divisor of |a| and |b| (0 when both are 0).
pub fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.min(i64::MAX as u64) as i64
}
