//! The loops that carry a dependence for some parameter value.
//!
//! [`naive`] runs the exact tests on every pair of references that share a
//! loop. [`loops`] gives the same answer with far fewer problems on programs
//! made of many guarded copies of one statement, which is what expansion
//! emits (one copy per piece of a quast): it first tests each pair with its
//! `if` guards dropped, a relaxed problem whose direction vectors include
//! the guarded ones. Relaxed answers are memoised by the shape of the two
//! references (their loops, subscripts and kinds), which the copies share.
//! A pair gets its exact problem only when the relaxed one says it may
//! carry a dependence on a loop not yet known to carry one.

use super::direction::{carrying_levels, Dependence};
use super::pairs::{self, Reference};
use super::report::{self, Scope};
use super::{Config, Tester};
use crate::model::{Affine, ArrayId, CounterId, Program};
use std::collections::{HashMap, HashSet};

/// What [`loops`] did: pairs visited, relaxed problems tested (one per
/// shape), exact problems tested.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    pub pairs: usize,
    pub relaxed: usize,
    pub exact: usize,
}

/// Every loop that carries a dependence for some parameter value, by the
/// exact tests on each pair of references.
pub fn naive(p: &Program) -> HashSet<CounterId> {
    carried_on(p, &|_| true)
}

/// [`naive`] on the references to the arrays `on` keeps: the loops that
/// carry a dependence on one of them (a loop whose other arrays are
/// private carries none on those).
pub fn carried_on(p: &Program, on: &dyn Fn(ArrayId) -> bool) -> HashSet<CounterId> {
    let refs = pairs::references(p);
    let mut tester = Tester::new(Config::default());
    let mut out = HashSet::new();
    let _ = report::visit(p, &refs, Scope::CommonLoop, |i, j| {
        if on(refs[i].access.array) {
            let built = pairs::build(p, &refs[i], &refs[j]);
            out.extend(carried_by(&tester.dependence(&built.pair), &built.common));
        }
        Ok::<(), ()>(())
    });
    out
}

/// The same set as [`naive`], with the relaxed problems first.
pub fn loops(p: &Program) -> (HashSet<CounterId>, Work) {
    let refs = pairs::references(p);
    let unguarded: Vec<Reference<'_>> = refs.iter().map(Reference::unguarded).collect();
    let shapes = shapes(&refs);
    let mut tester = Tester::new(Config::default());
    let mut relaxed: HashMap<(usize, usize, bool), Vec<CounterId>> = HashMap::new();
    let mut out = HashSet::new();
    let mut work = Work::default();
    let _ = report::visit(p, &refs, Scope::CommonLoop, |i, j| {
        work.pairs += 1;
        let (src, dst) = (&refs[i], &refs[j]);
        let common = common_loops(src, dst);
        if common.iter().all(|c| out.contains(c)) {
            return Ok::<(), ()>(());
        }
        let key = (shapes[i], shapes[j], i == j);
        let may = relaxed.entry(key).or_insert_with(|| {
            work.relaxed += 1;
            let built = pairs::build(p, &unguarded[i], &unguarded[j]);
            carried_by(&tester.dependence(&built.pair), &built.common)
        });
        if may.iter().all(|c| out.contains(c)) {
            return Ok(());
        }
        work.exact += 1;
        let built = pairs::build(p, src, dst);
        out.extend(carried_by(&tester.dependence(&built.pair), &built.common));
        Ok(())
    });
    (out, work)
}

/// The loops a pair's direction vectors may carry.
fn carried_by(dep: &Dependence, common: &[CounterId]) -> Vec<CounterId> {
    (dep.vectors.iter())
        .flat_map(|v| carrying_levels(&v.dirs))
        .filter_map(|l| common.get(l).copied())
        .collect()
}

fn common_loops(src: &Reference<'_>, dst: &Reference<'_>) -> Vec<CounterId> {
    (src.loops().into_iter().zip(dst.loops()))
        .take_while(|(a, b)| a == b)
        .map(|(a, _)| a)
        .collect()
}

/// A number per reference, equal for references whose unguarded problems
/// are the same: same loops, subscripts, extension or not, and kind.
fn shapes(refs: &[Reference<'_>]) -> Vec<usize> {
    type Shape = (Vec<CounterId>, Vec<Option<Affine>>, bool, bool);
    let mut ids: HashMap<Shape, usize> = HashMap::new();
    (refs.iter())
        .map(|r| {
            let shape = (
                r.loops(),
                r.access
                    .subscripts
                    .iter()
                    .map(|s| s.affine.clone())
                    .collect(),
                r.access.ext.is_some(),
                r.kind.writes(),
            );
            let next = ids.len();
            *ids.entry(shape).or_insert(next)
        })
        .collect()
}
