//! Labels from exact σ: where every read of an array has a quast proved for
//! every parameter value (`symbolic`), maximal static expansion is single
//! assignment. Each writing statement gets its own group, labelled by the
//! counters its subscripts do not determine (κ), and each read takes its
//! label from its quast, piecewise where the quast has pieces: a leaf
//! `W(g)` reads W's group at κ(g), ⊥ reads the original array. Nothing is
//! fitted or sampled, so the labels hold at every size by construction:
//! the quasts are proved, κ's box is interval arithmetic over the loop
//! bounds, and (subscripts, κ) is one-to-one on the statement's instances
//! by a rank argument. The sampled inference (`infer`) stays for arrays a
//! read of which has no exact quast.

use super::infer::{ArrayForm, GroupBox, Sites, Test, Tree};
use super::Trees;
use crate::model::*;
use crate::symbolic::{Outcome, Quast, ReadFlow, Symbolic};
use std::collections::{HashMap, HashSet};

/// An array's labels from exact σ.
pub struct Exact {
    pub form: ArrayForm,
    pub trees: Trees,
    /// The final values have no exact quast: the copy-out replays the
    /// program's writes of the array (its loops and affine conditions, each
    /// write a copy from its group) in program order, so that the last
    /// write of every cell is copied last.
    pub replay: bool,
}

/// What [`form`] reads of the whole program, gathered once for all its
/// arrays: a program of n statements writing n arrays is then O(n) per
/// array, not O(n²) (each array scanned every read and statement).
pub struct Index<'p> {
    stmts: Vec<&'p Stmt>,
    places: Vec<crate::symbolic::domain::Place>,
    counter_boxes: HashMap<CounterId, (Affine, Affine)>,
    /// The analysed reads of each array.
    reads: HashMap<ArrayId, Vec<&'p ReadFlow>>,
    /// The statements writing each array, in program order.
    writers: HashMap<ArrayId, Vec<StmtId>>,
    /// The first condition read of each array it reads: (condition, read).
    condition_reads: HashMap<ArrayId, &'p (String, usize)>,
    /// The copy-out statements of the final values.
    outs: HashSet<StmtId>,
    /// Arrays a copy-out reads that exact σ did not analyse.
    unanalysed_outs: HashSet<ArrayId>,
}

impl<'p> Index<'p> {
    /// The index of `plus`, with `outs` its copy-outs of final values.
    pub fn new(plus: &'p Program, sym: &'p Symbolic, outs: &[StmtId]) -> Index<'p> {
        let stmts = plus.stmts();
        let analysed: HashSet<StmtId> = sym.reads.iter().map(|r| r.stmt).collect();
        let unanalysed_outs = (outs.iter())
            .filter(|&s| !analysed.contains(s))
            .filter_map(|&s| stmts[s.index()].reads().first().map(|r| r.array))
            .collect();
        let mut writers: HashMap<ArrayId, Vec<StmtId>> = HashMap::new();
        for s in &stmts {
            if let Some((t, _)) = s.write() {
                writers.entry(t.array).or_default().push(s.id);
            }
        }
        let mut reads: HashMap<ArrayId, Vec<&ReadFlow>> = HashMap::new();
        for r in &sym.reads {
            reads.entry(r.array).or_default().push(r);
        }
        let conditions = plus.conditions();
        let mut condition_reads = HashMap::new();
        for ck in &sym.condition_reads {
            for c in conditions.iter().filter(|c| c.name == ck.0) {
                for x in c.reads() {
                    condition_reads.entry(x.array).or_insert(ck);
                }
            }
        }
        Index {
            places: crate::symbolic::domain::places(plus),
            // Every loop's box, in one walk (not one per writing statement).
            counter_boxes: super::infer::counter_boxes(plus),
            outs: outs.iter().copied().collect(),
            unanalysed_outs,
            stmts,
            reads,
            writers,
            condition_reads,
        }
    }
}

impl Index<'_> {
    /// The statements writing `a`, in program order.
    pub fn writing(&self, a: ArrayId) -> Vec<&Stmt> {
        let ids = self.writers.get(&a).map_or(&[][..], Vec::as_slice);
        ids.iter().map(|w| self.stmts[w.index()]).collect()
    }
}

/// The single-assignment form of one array from exact σ, or why there is
/// none (in the words of the user's program).
pub fn form(
    plus: &Program,
    sites: &Sites,
    ix: &Index,
    a: ArrayId,
    base: &[i64],
) -> Result<Exact, String> {
    let stmts = &ix.stmts;
    // Every read of the array must have an exact quast.
    if let Some((c, k)) = ix.condition_reads.get(&a) {
        return Err(format!(
            "read {k} of condition `{c}` reads memory, so the control is not static"
        ));
    }
    let reads: &[&ReadFlow] = ix.reads.get(&a).map_or(&[], Vec::as_slice);
    // Every read of the program must have an exact quast; the final
    // values may lack one (a last writer that needs a division), or not be
    // analysed (a big array): then the copy-out replays the writes instead.
    let mut replay = ix.unanalysed_outs.contains(&a);
    for r in reads {
        let why = match &r.outcome {
            Outcome::Exact(_) => continue,
            Outcome::Possible(p) => &p.why,
            Outcome::Fallback(why) => why,
        };
        if ix.outs.contains(&r.stmt) {
            replay = true;
            continue;
        }
        let read = super::read_name::read_of(plus, Site::Stmt(r.stmt), r.read);
        return Err(format!("{read} has no exact source: {why}"));
    }
    let (places, counter_boxes) = (&ix.places, &ix.counter_boxes);
    let mut trees = Trees::new();
    // One group per writing statement, its κ and κ's box.
    let mut group_of: HashMap<usize, usize> = HashMap::new();
    let mut kappa: Vec<Vec<CounterId>> = Vec::new();
    let mut boxes = Vec::new();
    let mut atom_group = HashMap::default();
    for &w in ix.writers.get(&a).map_or(&[][..], Vec::as_slice) {
        let s = stmts[w.index()];
        let Some((acc, _)) = s.write() else {
            continue;
        };
        let loops = &sites.stmt[s.id.index()];
        let mut subs = Vec::new();
        for x in &acc.subscripts {
            match &x.affine {
                Some(f) => subs.push(f.clone()),
                None => {
                    return Err(format!(
                        "`{}` writes `{}` with a subscript that is not affine",
                        s.label,
                        plus.array_decl(a).name
                    ))
                }
            }
        }
        // Static control of every write: the labels name its instances,
        // and a replayed copy-out runs them again.
        if let Some(why) = places[s.id.index()].not_static() {
            let name = &plus.array_decl(a).name;
            return Err(format!("`{}` writes `{name}` and is {why}", s.label));
        }
        if loops
            .iter()
            .any(|&c| plus.counter_decl(c).kind != CounterKind::For)
        {
            return Err(format!("`{}` is inside a `while` loop", s.label));
        }
        let k = label_counters(&subs, loops);
        let mut kb = Vec::new();
        for &c in &k {
            kb.push(counter_boxes.get(&c).cloned().ok_or_else(|| {
                format!(
                    "the bounds of loop `{}` around `{}` have no affine box",
                    plus.counter_decl(c).name,
                    s.label
                )
            })?);
        }
        let g = kappa.len();
        group_of.insert(s.id.index(), g);
        atom_group.insert((s.id.index(), 0u32), g);
        kappa.push(k);
        boxes.push(GroupBox {
            cells: cell_box(plus, a, &subs, base, counter_boxes),
            kappa: Some(kb),
        });
    }
    // Each read's label, leaf by leaf from its quast.
    for r in reads {
        let Outcome::Exact(q) = &r.outcome else {
            continue; // a final value, copied out by replay
        };
        if replay && ix.outs.contains(&r.stmt) {
            continue;
        }
        let t = tree(q, &|w: StmtId| {
            let g = *group_of.get(&w.index())?;
            let at: Vec<usize> = (kappa[g].iter())
                .map(|c| sites.stmt[w.index()].iter().position(|x| x == c))
                .collect::<Option<_>>()?;
            Some((g, at))
        })
        .ok_or_else(|| {
            format!(
                "internal error: the quast of read {} of `{}` names a statement that does not write `{}`",
                r.read,
                stmts[r.stmt.index()].label,
                plus.array_decl(a).name
            )
        })?;
        trees.insert((Site::Stmt(r.stmt), r.read), t);
    }
    let n = kappa.len();
    let how = if replay {
        "single assignment from exact σ; copy-out replays the writes in program order"
    } else {
        "single assignment from exact σ"
    };
    Ok(Exact {
        form: ArrayForm {
            array: a,
            splits: HashMap::new(),
            atom_group,
            kappa,
            boxes,
            scratch: vec![false; n],
            copy_in: vec![false; n],
            labels: 0,
            classes: 0,
            shared: 0,
            notes: vec![how.into()],
        },
        trees,
        replay,
    })
}

/// The cells a statement writes, per dimension the smaller at the base
/// parameter values `base` of the declared range and the range of its
/// subscript over its loops' boxes (both hold every cell it writes: the
/// language keeps writes in the declared range); None: the declared ranges.
fn cell_box(
    p: &Program,
    a: ArrayId,
    subs: &[Affine],
    base: &[i64],
    boxes: &HashMap<CounterId, (Affine, Affine)>,
) -> Option<Vec<(Affine, Affine)>> {
    let at = |e: &Affine| {
        e.eval(|v| match v {
            Var::Param(q) => base.get(q.index()).copied().unwrap_or(0),
            Var::Counter(_) => 0,
        })
    };
    let extent = |(lo, hi): &(Affine, Affine)| Some(at(hi)? as i128 - at(lo)? as i128);
    let mut tighter = false;
    let mut out = Vec::new();
    for (f, d) in subs.iter().zip(&p.array_decl(a).dims) {
        let declared = (d.lo.affine.clone(), d.hi.affine.clone());
        let pick = match super::infer::range_by(f, |c| boxes.get(&c).cloned()) {
            Some(r) if extent(&r)? < extent(&declared)? => {
                tighter = true;
                r
            }
            _ => declared,
        };
        out.push(pick);
    }
    tighter.then_some(out)
}

/// The read label tree of a quast: a split `e >= 0` becomes the tree's
/// `-e <= 0`; a leaf `W(g)` W's group at the positions of κ in g; ⊥ the
/// original array. `group` gives a writing statement's group and the
/// positions of its κ counters in its iteration vector.
fn tree(q: &Quast, group: &dyn Fn(StmtId) -> Option<(usize, Vec<usize>)>) -> Option<Tree> {
    Some(match q {
        Quast::Leaf(None) => Tree::Leaf(None),
        Quast::Leaf(Some(s)) => {
            let (g, at) = group(s.stmt)?;
            // κ coordinates must be affine: the division of a leaf under a
            // stride is exact, and usually falls on a subscript-determined one.
            let ks = (at.iter())
                .map(|&k| crate::symbolic::quast::divided(&s.iter[k], s.den))
                .collect::<Option<_>>()?;
            Tree::Leaf(Some((g, ks)))
        }
        Quast::Split { cond, yes, no } => split(
            Test::Le(cond.checked_scale(-1)?),
            tree(yes, group)?,
            tree(no, group)?,
        ),
        Quast::Stride { expr, k, yes, no } => split(
            Test::Stride(expr.clone(), *k),
            tree(yes, group)?,
            tree(no, group)?,
        ),
    })
}

fn split(t: Test, yes: Tree, no: Tree) -> Tree {
    if yes == no {
        return yes;
    }
    Tree::Split(t, Box::new(yes), Box::new(no))
}

/// The fewest counters κ, dropped outermost last, such that a statement's
/// subscripts and κ determine its iteration vector: the subscripts' rows
/// over `loops` plus a unit row per κ counter have full rank.
fn label_counters(subs: &[Affine], loops: &[CounterId]) -> Vec<CounterId> {
    let row =
        |f: &Affine| -> Vec<i64> { loops.iter().map(|&c| f.coeff(Var::Counter(c))).collect() };
    let unit = |k: usize| -> Vec<i64> { (0..loops.len()).map(|j| (j == k) as i64).collect() };
    let mut keep: Vec<bool> = vec![true; loops.len()];
    // Innermost first: an outer counter (a time step) is the more natural
    // label, and a subscript usually names the inner ones.
    for k in (0..loops.len()).rev() {
        keep[k] = false;
        let mut rows: Vec<Vec<i64>> = subs.iter().map(row).collect();
        rows.extend((0..loops.len()).filter(|&j| keep[j]).map(unit));
        if crate::fit::rank(&rows) < loops.len() {
            keep[k] = true;
        }
    }
    (loops.iter().zip(&keep))
        .filter(|(_, &k)| k)
        .map(|(&c, _)| c)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(k: u32) -> CounterId {
        CounterId(k)
    }

    fn aff(terms: &[(u32, i64)], k: i64) -> Affine {
        Affine {
            terms: terms
                .iter()
                .map(|&(v, x)| (Var::Counter(c(v)), x))
                .collect(),
            constant: k,
        }
    }

    #[test]
    fn kappa_is_what_the_subscripts_leave_free() {
        // A[i] in for t, for i: t labels.
        assert_eq!(
            label_counters(&[aff(&[(1, 1)], 0)], &[c(0), c(1)]),
            vec![c(0)]
        );
        // C[i, j] in for i, j, k: k labels.
        let ij = [aff(&[(0, 1)], 0), aff(&[(1, 1)], 0)];
        assert_eq!(label_counters(&ij, &[c(0), c(1), c(2)]), vec![c(2)]);
        // A[i + j]: one of the two, the outer one kept.
        assert_eq!(
            label_counters(&[aff(&[(0, 1), (1, 1)], 0)], &[c(0), c(1)]),
            vec![c(0)]
        );
        // A[0] in two loops: both.
        assert_eq!(
            label_counters(&[aff(&[], 0)], &[c(0), c(1)]),
            vec![c(0), c(1)]
        );
        // A[2i, 2i]: rank 1, so j... and i's partner needed.
        let d = [aff(&[(0, 2)], 0), aff(&[(0, 2)], 1)];
        assert_eq!(label_counters(&d, &[c(0), c(1)]), vec![c(1)]);
    }

    #[test]
    fn rank_of_small_matrices() {
        use crate::fit::rank;
        assert_eq!(rank(&[vec![1, 1], vec![2, 2]]), 1);
        assert_eq!(rank(&[vec![1, 1], vec![1, -1]]), 2);
        assert_eq!(rank(&[vec![0, 0]]), 0);
        assert_eq!(rank(&[vec![2, 4, 6], vec![1, 2, 3], vec![0, 1, 1]]), 2);
    }
}
