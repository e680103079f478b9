//! Buffers indexed modulo their extent, unfolded: a double buffer written
//! `A[(t + 1) % 2, i] = f(A[t % 2, i - 1], …)` keeps every step's values in
//! two rows, so a mapping of its cells cannot go below them; the same
//! program with `A[t + 1, i]` (one row per step) is single assignment
//! along `t`, and its modular mapping follows the values (heat-1d's N + 1
//! cells, SMO's double buffer). The subscript modulo `m` of the first
//! dimension (declared `0..m-1`) loses its `% m`, a constant `c` there stays
//! `c`, and the dimension's range becomes the hull of those subscripts over
//! the loops around them (the bound below all the others, as the exact
//! tests find it under the program's `assume`s).
//!
//! The unfolded program is the original's equivalent only when nothing it
//! reads changes: proved for every parameter value by `prove`, the original
//! being the unfolded program laid out modulo the extent (cell `(e, i)` at
//! `(E·e + i) mod m·E`, E the last dimension's extent: the original's own
//! row-major places). Only temporaries (arrays that are not live-out: the
//! final contents move), of one or two dimensions, none read by a
//! condition or before their first write, are unfolded.

use super::prove::{self, Layout, Modulo, Proof, Stride, Time};
use crate::model::{
    Access, Affine, ArrayId, BinOp, Bound, ExprKind, Program, Range, Subscript, Var,
};
use crate::symbolic::domain::{self, Atom, Place};
use crate::symbolic::prove::Prover;
use std::collections::HashMap;

/// What unfolding made of a program.
#[derive(Clone, Debug)]
pub struct Unfolded {
    /// The program with the arrays unfolded (same statements, loops and
    /// array ids).
    pub program: Program,
    pub unfolding: Unfolding,
}

/// What the reports say of an unfolding.
#[derive(Clone, Debug)]
pub struct Unfolding {
    /// One line per array unfolded.
    pub lines: Vec<String>,
    /// Exact tests of the proof that the original is the unfolded program
    /// laid out modulo the extents.
    pub tests: usize,
}

/// A candidate: the array, its first extent `m`, and the first subscript
/// of each of its accesses with the statement's index.
type Candidate = (ArrayId, i64, Vec<(usize, First)>);

/// The first subscript of one access of a candidate.
enum First {
    /// `e % m`: the affine `e`.
    Modulo(Affine),
    /// A constant below `m`.
    Constant(i64),
}

/// The temporaries of `program` indexed modulo their extent, unfolded and
/// proved; None when there are none; why not when some cannot be.
pub fn unfold(program: &Program, temporaries: &[ArrayId]) -> Result<Option<Unfolded>, String> {
    let mut found: Vec<Candidate> = Vec::new();
    for &a in temporaries {
        if let Some((m, firsts)) = candidate(program, a) {
            found.push((a, m, firsts));
        }
    }
    if found.is_empty() {
        return Ok(None);
    }
    let places = domain::places(program);
    let mut prover = Prover::new(program).ok_or("the assumptions are not affine")?;
    let mut unfolded = program.clone();
    let mut lines = Vec::new();
    let mut moduli: HashMap<ArrayId, i64> = HashMap::new();
    for (a, m, firsts) in &found {
        let name = &program.array_decl(*a).name;
        let mut lows = Vec::new();
        let mut highs = Vec::new();
        for (stmt, first) in firsts {
            let (lo, hi) = match first {
                First::Constant(c) => (Affine::constant(*c), Affine::constant(*c)),
                First::Modulo(e) => hull(e, &places[*stmt]).ok_or_else(|| {
                    format!("`{name}`: a subscript modulo {m} under a loop without affine bounds")
                })?,
            };
            lows.push(lo);
            highs.push(hi);
        }
        let lo = least(&mut prover, &lows, false).ok_or_else(|| {
            format!("`{name}`: no subscript bound lies below the others for every parameter value (an `assume` may say which)")
        })?;
        let hi = least(&mut prover, &highs, true).ok_or_else(|| {
            format!("`{name}`: no subscript bound lies above the others for every parameter value (an `assume` may say which)")
        })?;
        let bound = |x: &Affine| Bound {
            expr: crate::codegen::expr_of(x),
            affine: x.clone(),
        };
        unfolded.arrays[a.index()].dims[0] = Range {
            lo: bound(&lo),
            hi: bound(&hi),
        };
        moduli.insert(*a, *m);
        let show = |x: &Affine| crate::print::expr(program, &crate::codegen::expr_of(x));
        lines.push(format!(
            "{name}: its first dimension, indexed modulo {m}, unfolded over {}..{} (one row per \
             value's step; the original is it modulo {m})",
            show(&lo),
            show(&hi)
        ));
    }
    crate::model::nodes::each_access_mut(&mut unfolded.body, &|acc: &mut Access| {
        let Some(&m) = moduli.get(&acc.array) else {
            return;
        };
        if let ExprKind::Binary(BinOp::Rem, inner, r) = &acc.subscripts[0].expr.kind {
            if matches!(r.kind, ExprKind::Int(x) if x == m) {
                acc.subscripts[0] = Subscript::new((**inner).clone());
            }
        }
    });
    // Every value read written first: the unfolded rows past the declared
    // ones have no initial contents of the original's.
    let sym = crate::symbolic::analyze(&unfolded);
    for s in unfolded.stmts() {
        for (k, r) in s.reads().into_iter().enumerate() {
            if !moduli.contains_key(&r.array) {
                continue;
            }
            let name = &program.array_decl(r.array).name;
            let q = sym
                .quast(s.id, k)
                .ok_or_else(|| format!("`{name}`: a read without symbolic σ"))?;
            if q.leaves().iter().any(|(_, leaf)| leaf.is_none()) {
                return Err(format!("`{name}` may be read before it is written"));
            }
        }
    }
    let tests = proved(&unfolded, &moduli)?;
    Ok(Some(Unfolded {
        program: unfolded,
        unfolding: Unfolding { lines, tests },
    }))
}

/// The temporaries of `program` indexed modulo their extent, which
/// [`unfold`] tries.
pub fn candidates(program: &Program, temporaries: &[ArrayId]) -> Vec<ArrayId> {
    (temporaries.iter().copied())
        .filter(|&a| candidate(program, a).is_some())
        .collect()
}

/// `a`'s extent `m` and the first subscript of each of its accesses (with
/// the statement's index), when it is a candidate.
fn candidate(program: &Program, a: ArrayId) -> Option<(i64, Vec<(usize, First)>)> {
    let decl = program.array_decl(a);
    if decl.dims.is_empty() || decl.dims.len() > 2 {
        return None;
    }
    let d0 = &decl.dims[0];
    let (lo, hi) = (&d0.lo.affine, &d0.hi.affine);
    if !lo.is_constant() || lo.constant != 0 || !hi.is_constant() || hi.constant < 1 {
        return None;
    }
    let m = hi.constant + 1;
    if program
        .conditions()
        .iter()
        .any(|c| c.reads().iter().any(|r| r.array == a))
    {
        return None;
    }
    let mut firsts = Vec::new();
    let mut modulo = false;
    for s in program.stmts() {
        let accesses = s.write().map(|(w, _)| w).into_iter().chain(s.reads());
        for acc in accesses.filter(|x| x.array == a) {
            if acc.subscripts.len() != decl.dims.len()
                || acc.subscripts[1..].iter().any(|x| x.affine.is_none())
            {
                return None;
            }
            let first = match &acc.subscripts[0].expr.kind {
                ExprKind::Int(c) if (0..m).contains(c) => First::Constant(*c),
                ExprKind::Binary(BinOp::Rem, inner, r) if matches!(r.kind, ExprKind::Int(x) if x == m) =>
                {
                    modulo = true;
                    First::Modulo(Affine::from_expr(inner)?)
                }
                _ => return None,
            };
            firsts.push((s.id.index(), first));
        }
    }
    modulo.then_some((m, firsts))
}

/// The least and greatest values of `e` over the loops around `place`:
/// each counter, innermost first, replaced by the bound its coefficient's
/// sign picks.
fn hull(e: &Affine, place: &Place) -> Option<(Affine, Affine)> {
    let (mut lo, mut hi) = (e.clone(), e.clone());
    for l in place.loops.iter().rev() {
        if l.is_while {
            return None;
        }
        let c = Var::Counter(l.counter);
        let pick = |x: &Affine, up: bool| {
            let k = x.coeff(c);
            let b = if (k > 0) == up { &l.hi } else { &l.lo };
            x.checked_sub(&Affine::var(c).checked_scale(k)?)?
                .checked_add(&b.checked_scale(k)?)
        };
        (lo, hi) = (pick(&lo, false)?, pick(&hi, true)?);
    }
    Some((lo, hi))
}

/// The bound of `all` below every other for every parameter value the
/// assumptions allow (above, with `above`), if one is.
fn least(prover: &mut Prover, all: &[Affine], above: bool) -> Option<Affine> {
    let assumptions = prover.assumptions.clone();
    'candidate: for x in all {
        for y in all {
            // x beyond y somewhere: x - y ≥ 1 (above: y - x ≥ 1), as
            // 1 - (x - y) ≤ 0.
            let beyond = if above {
                y.checked_sub(x)?
            } else {
                x.checked_sub(y)?
            };
            let excess = vec![vec![Atom::Le(Affine::constant(1).checked_sub(&beyond)?)]];
            if prover
                .infeasible(&[&assumptions, &excess], &String::new)
                .is_err()
            {
                continue 'candidate;
            }
        }
        return Some(x.clone());
    }
    None
}

/// Proves that `program` (unfolded) laid out modulo the extents of
/// `moduli`'s arrays (the original's storage) computes what it does, in
/// program order: the exact tests it took, or why not.
fn proved(program: &Program, moduli: &HashMap<ArrayId, i64>) -> Result<usize, String> {
    let mut layouts = Vec::new();
    for (k, decl) in program.arrays.iter().enumerate() {
        let a = ArrayId(k as u32);
        let written = program
            .stmts()
            .iter()
            .any(|s| s.write().is_some_and(|(w, _)| w.array == a));
        if !written {
            continue;
        }
        let Some(&m) = moduli.get(&a) else {
            layouts.push(Layout::identity(program, a));
            continue;
        };
        let (coefs, modulus, stride) = match decl.dims.len() {
            1 => (vec![1], Affine::constant(m), None),
            _ => {
                let extent =
                    super::modular::last_extent_affine(program, a).ok_or("an extent overflows")?;
                let modulus = extent.checked_scale(m).ok_or("an extent overflows")?;
                let stride = Stride {
                    coefs: vec![1, 0],
                    extent,
                };
                (vec![0, 1], modulus, Some(stride))
            }
        };
        let mo = Modulo {
            coefs,
            k: [(a, 0)].into_iter().collect(),
            modulus,
            stride,
        };
        layouts.push(Layout::modular(program, &[a], mo).ok_or("a layout of no array")?);
    }
    let order = vec![false; program.counters.len()];
    match prove::prove(program, Time::Loops(&order), &layouts) {
        Proof::Proved { tests } => Ok(tests),
        Proof::NotProved(why) => Err(format!("the unfolding is not proved: {why}")),
    }
}

/// The cells `program` declares at its parameters' defaults.
pub fn declared_cells(program: &Program) -> u64 {
    let Ok(values) = program.param_values(&[]) else {
        return u64::MAX;
    };
    (0..program.arrays.len() as u32)
        .map(|a| crate::codegen::declared_cells(program, ArrayId(a), &values))
        .fold(0u64, |n, c| n.saturating_add(c))
}
