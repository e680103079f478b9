//! Sample and fit: σ at a few small parameter vectors (the bounded engine,
//! `dataflow::analyze`), then a quast fitted to it per read: leaves are
//! affine functions fitted exactly (`crate::fit`) on the samples; splits
//! are chosen among candidate conditions (the read's loop bounds shifted
//! by 1..3, the parameters ≥ 1..3, and the domains of the sources fitted
//! per statement and loop level, composed with those fits). The quast is
//! only a guess until `prove` accepts it.

use super::domain::{Atom, Place};
use super::quast::{Concrete, Quast, Source};
use crate::model::{Affine, CounterId, ParamId, Program, StmtId, Var};

/// One read instance: its counters then every parameter, and its source.
/// Inline up to 8 values: a kernel's samples make hundreds of thousands.
pub type Point = (Coords, Concrete);

/// A read instance's counters then every parameter.
pub type Coords = smallvec::SmallVec<[i64; 8]>;

/// The parameter vectors to sample, and the base they are around.
pub struct Samples {
    pub base: Vec<i64>,
    pub all: Vec<Vec<i64>>,
}

/// The parameter vectors to sample: from a base b (4, else 8, 16, 32:
/// the first with three vectors the assumptions allow, else the largest
/// set found), [`around`] it. The declared defaults only where that finds
/// fewer than three and they are small, so the cost does not grow with
/// them.
pub fn samples(program: &Program) -> Samples {
    let mut best = Samples {
        base: base(program, 4),
        all: Vec::new(),
    };
    for b in [4, 8, 16, 32] {
        let base = base(program, b);
        let all = around(program, &base);
        if all.len() >= 3 || program.params.is_empty() {
            return Samples { base, all };
        }
        if all.len() > best.all.len() {
            best = Samples { base, all };
        }
    }
    // Assumptions that pin a parameter (`LowBound <= 0`, `PID <= NumProc -
    // 1`) may reject every vector near a uniform base; the declared
    // defaults satisfy them, and when they are small they are cheap.
    let defaults: Option<Vec<i64>> = program.params.iter().map(|p| p.default).collect();
    if let Some(d) = defaults.filter(|d| best.all.len() < 3 && d.iter().all(|x| x.abs() <= 64)) {
        let all = around(program, &d);
        if all.len() > best.all.len() {
            best = Samples { base: d, all };
        }
    }
    best
}

/// Whether the program's assumptions allow the parameter vector `v`.
fn allowed(program: &Program, v: &[i64]) -> bool {
    let named: Vec<(String, i64)> = program
        .params
        .iter()
        .zip(v)
        .map(|(p, &x)| (p.name.clone(), x))
        .collect();
    program.param_values(&named).is_ok()
}

/// The base vector near b: every parameter at b, or, where assumptions
/// couple parameters (`n >= u + 4`) and reject that, b plus the smallest
/// offsets (each 0, 2, 4 or 8) they allow.
fn base(program: &Program, b: i64) -> Vec<i64> {
    let n = program.params.len();
    let uniform = vec![b; n];
    // 4^6 vectors at most: beyond six parameters, the uniform base only.
    if n == 0 || n > 6 || allowed(program, &uniform) {
        return uniform;
    }
    const STEPS: [i64; 4] = [0, 2, 4, 8];
    let mut best: Option<(i64, Vec<i64>)> = None;
    for code in 0..STEPS.len().pow(n as u32) {
        let mut c = code;
        let mut v = uniform.clone();
        let mut cost = 0;
        for x in &mut v {
            let d = STEPS[c % STEPS.len()];
            c /= STEPS.len();
            *x += d;
            cost += d;
        }
        if best.as_ref().is_some_and(|(k, _)| *k <= cost) || !allowed(program, &v) {
            continue;
        }
        best = Some((cost, v));
    }
    best.map_or(uniform, |(_, v)| v)
}

impl Samples {
    /// The first round's vectors: all parameters moved together by -1..=1
    /// from the base, and each parameter moved alone by 1 (so that no two
    /// parameters are equal at every point); all of them when that leaves
    /// fewer than three.
    pub fn first(&self) -> Vec<Vec<i64>> {
        if self.base.is_empty() {
            return self.all.clone();
        }
        let near: Vec<Vec<i64>> = (self.all.iter())
            .filter(|v| {
                let off: Vec<i64> = v.iter().zip(&self.base).map(|(x, b)| x - b).collect();
                let moved = off.iter().filter(|&&d| d != 0).count();
                let equal = off.iter().all(|&d| d == off[0]);
                (equal && off[0].abs() <= 1) || (moved == 1 && off.iter().all(|d| d.abs() <= 1))
            })
            .cloned()
            .collect();
        if near.len() < 3 {
            self.all.clone()
        } else {
            near
        }
    }
}

/// All parameters moved together from `base` (by -3..=1) and each
/// parameter moved on its own (by -4..=4), those the assumptions allow.
pub fn around(program: &Program, base: &[i64]) -> Vec<Vec<i64>> {
    let n = program.params.len();
    if base.len() != n {
        return Vec::new();
    }
    let mut cands: Vec<Vec<i64>> = Vec::new();
    for k in -3..=1 {
        cands.push(base.iter().map(|b| b + k).collect());
    }
    for p in 0..n {
        for d in -4..=4 {
            let mut v = base.to_vec();
            v[p] += d;
            cands.push(v);
        }
    }
    let mut out: Vec<Vec<i64>> = Vec::new();
    for c in cands {
        if !out.contains(&c) && allowed(program, &c) {
            out.push(c);
        }
    }
    out
}

/// The affine function (over the read's counters then the parameters) a
/// fitted coefficient vector stands for.
fn affine_of(counters: &[CounterId], n_params: usize, (a, b): &(Vec<i64>, i64)) -> Affine {
    let mut terms: Vec<(Var, i64)> = counters
        .iter()
        .map(|&c| Var::Counter(c))
        .chain((0..n_params).map(|p| Var::Param(ParamId(p as u32))))
        .zip(a.iter().copied())
        .filter(|&(_, c)| c != 0)
        .collect();
    terms.sort();
    Affine {
        terms,
        constant: *b,
    }
}

/// An affine over a point's features (counters then parameters), each
/// term's variable resolved to its feature index once: `Affine::eval` with
/// a lookup per term and point was a sixth of the fit's time.
pub struct Dense {
    /// (feature index, or None for a counter the read is not under: 0)
    terms: Vec<(Option<usize>, i64)>,
    constant: i64,
}

impl Dense {
    pub fn new(e: &Affine, counters: &[CounterId]) -> Dense {
        let terms = e
            .terms
            .iter()
            .map(|&(v, c)| {
                let k = match v {
                    Var::Counter(v) => counters.iter().position(|&k| k == v),
                    Var::Param(p) => Some(counters.len() + p.index()),
                };
                (k, c)
            })
            .collect();
        Dense {
            terms,
            constant: e.constant,
        }
    }

    /// The value at `x` (checked as `Affine::eval`), i64::MIN on overflow.
    pub fn at(&self, x: &[i64]) -> i64 {
        let mut acc = self.constant;
        for &(k, c) in &self.terms {
            let v = k.map_or(0, |k| x[k]);
            match c.checked_mul(v).and_then(|t| acc.checked_add(t)) {
                Some(a) => acc = a,
                None => return i64::MIN,
            }
        }
        acc
    }
}

pub struct Fitter<'a> {
    pub counters: &'a [CounterId],
    pub n_params: usize,
    pub place: &'a Place,
    /// Places of every statement (by `StmtId`).
    pub places: &'a [Place],
    /// Point tests left (a candidate split tested on n points costs n):
    /// every fit of one read draws on it, so a read with millions of
    /// sample points cannot make a split search that runs for seconds.
    pub steps: std::cell::Cell<u64>,
}

/// The most nested splits a quast may have.
const DEPTH: usize = 6;

/// Point tests one read's fits may make: PolyBench's and the shipped
/// fixtures' reads take at most 2.3 million; 20 million take about 0.05 s.
pub const FIT_STEPS: u64 = 20_000_000;

impl Fitter<'_> {
    /// Whether a fit stopped on [`FIT_STEPS`] (then it says nothing of
    /// whether a quast fits).
    pub fn exhausted(&self) -> bool {
        self.steps.get() == 0
    }

    /// A single leaf fitting every point, if there is one.
    fn leaf(&self, pts: &[&Point]) -> Option<Option<Source>> {
        let first = &pts.first()?.1;
        let Some((stmt, it)) = first else {
            return pts.iter().all(|p| p.1.is_none()).then_some(None);
        };
        if !pts
            .iter()
            .all(|p| matches!(&p.1, Some((s, i)) if s == stmt && i.len() == it.len()))
        {
            return None;
        }
        // Features constant over the points are left out first, so that a
        // constant source coordinate is a constant, not a multiple of them.
        let width = pts[0].0.len();
        let varying: Vec<usize> = (0..width)
            .filter(|&k| pts.iter().any(|p| p.0[k] != pts[0].0[k]))
            .collect();
        let mut iter = Vec::with_capacity(it.len());
        for d in 0..it.len() {
            let y = |i: usize| pts[i].1.as_ref().map_or(0, |s| s.1[d]);
            let reduced = crate::fit::affine_by_lazy(
                varying.len(),
                pts.len(),
                |i, c| pts[i].0[varying[c]],
                y,
            );
            let f = match reduced {
                Some((a, b)) => {
                    let mut full = vec![0; width];
                    for (&k, c) in varying.iter().zip(a) {
                        full[k] = c;
                    }
                    (full, b)
                }
                None => crate::fit::affine_by_lazy(width, pts.len(), |i, c| pts[i].0[c], y)?,
            };
            iter.push(affine_of(self.counters, self.n_params, &f));
        }
        Some(Some(Source {
            stmt: *stmt,
            iter,
            den: 1,
        }))
    }

    /// Candidate split conditions (`e ≥ 0`).
    fn candidates(&self, pts: &[&Point]) -> Vec<Affine> {
        let mut out: Vec<Affine> = Vec::new();
        let mut add = |e: Affine| {
            if !e.terms.is_empty() && !out.contains(&e) {
                out.push(e);
            }
        };
        // The sources' own conditions first: they are the likeliest splits,
        // and a good split found early lets the search skip the rest.
        // Sources grouped by statement and the level at which they precede.
        let mut groups: Vec<((StmtId, usize), Vec<&Point>)> = Vec::new();
        for p in pts {
            if let Some((s, it)) = &p.1 {
                let level = it
                    .iter()
                    .zip(&p.0[..self.counters.len()])
                    .position(|(a, b)| a != b)
                    .unwrap_or(it.len());
                match groups.iter_mut().find(|g| g.0 == (*s, level)) {
                    Some(g) => g.1.push(p),
                    None => groups.push(((*s, level), vec![p])),
                }
            }
        }
        for ((s, level), g) in &groups {
            let Some(Some(src)) = self.leaf(g) else {
                continue;
            };
            // Where the source precedes: its coordinate at that level against
            // the read's counter (Feautrier's lexicographic split, e.g.
            // floyd-warshall's `j ≥ k + 1`).
            if let (Some(&c), Some(e)) = (self.counters.get(*level), src.iter.get(*level)) {
                let counter = Affine {
                    terms: vec![(Var::Counter(c), 1)],
                    constant: 0,
                };
                for k in 0..=1 {
                    if let Some(d) = e
                        .checked_scale(-1)
                        .and_then(|d| d.checked_add(&counter))
                        .and_then(|d| d.checked_add(&Affine::constant(-k)))
                    {
                        add(d);
                    }
                }
            }
            let wp = &self.places[s.index()];
            let map: Vec<(CounterId, Affine)> = wp.counters().into_iter().zip(src.iter).collect();
            let Some(dom) = wp.domain() else { continue };
            for atom in dom.iter().flatten() {
                if let Atom::Le(e) = atom {
                    if let Some(c) = super::prove::subst(e, &map).and_then(|c| c.checked_scale(-1))
                    {
                        add(c);
                    }
                }
            }
        }
        if let Some(dom) = self.place.domain() {
            for atom in dom.iter().flatten() {
                if let Atom::Le(e) = atom {
                    for k in 1..=3 {
                        if let Some(c) = e
                            .checked_scale(-1)
                            .and_then(|c| c.checked_add(&Affine::constant(-k)))
                        {
                            add(c);
                        }
                    }
                }
            }
        }
        for p in 0..self.n_params {
            for k in 1..=3 {
                add(Affine {
                    terms: vec![(Var::Param(ParamId(p as u32)), 1)],
                    constant: -k,
                });
            }
        }
        out
    }

    /// `q` with each source leaf W(g) kept only where W's domain holds at g
    /// (a chain of its loop bounds and affine guards, composed with g), ⊥
    /// elsewhere; None when nothing changes or a domain is not one
    /// conjunction of inequalities. The samples may never reach the edge of
    /// a domain in every direction at once (the final value of a boundary
    /// cell of a stencil, at a time step count of 0): the fit then leaves a
    /// condition out, and this guess, proved like any quast, puts it back.
    pub fn guarded(&self, q: &Quast) -> Option<Quast> {
        let mut changed = false;
        let g = self.guard(q, &mut changed)?;
        changed.then_some(g)
    }

    fn guard(&self, q: &Quast, changed: &mut bool) -> Option<Quast> {
        Some(match q {
            Quast::Leaf(None) => q.clone(),
            // A divided leaf: its domain composed with g is not affine.
            Quast::Leaf(Some(src)) if src.den != 1 => return None,
            Quast::Leaf(Some(src)) => {
                let wp = &self.places[src.stmt.index()];
                let map: Vec<(CounterId, Affine)> = wp
                    .counters()
                    .into_iter()
                    .zip(src.iter.iter().cloned())
                    .collect();
                let dom = wp.domain()?;
                let [conj] = dom.as_slice() else { return None };
                let mut out = q.clone();
                for atom in conj.iter().rev() {
                    let Atom::Le(e) = atom else { return None };
                    // e ≤ 0 at g, as -e ≥ 0; constant atoms need no test.
                    let c = super::prove::subst(e, &map)?.checked_scale(-1)?;
                    if c.terms.is_empty() {
                        if c.constant < 0 {
                            *changed = true;
                            return Some(Quast::Leaf(None));
                        }
                        continue;
                    }
                    *changed = true;
                    out = Quast::Split {
                        cond: c,
                        yes: Box::new(out),
                        no: Box::new(Quast::Leaf(None)),
                    };
                }
                out
            }
            Quast::Split { cond, yes, no } => Quast::Split {
                cond: cond.clone(),
                yes: Box::new(self.guard(yes, changed)?),
                no: Box::new(self.guard(no, changed)?),
            },
            Quast::Stride { expr, k, yes, no } => Quast::Stride {
                expr: expr.clone(),
                k: *k,
                yes: Box::new(self.guard(yes, changed)?),
                no: Box::new(self.guard(no, changed)?),
            },
        })
    }

    /// A quast through every point, if one is found within the depth.
    pub fn fit(&self, pts: &[&Point]) -> Option<Quast> {
        self.fit_at(pts, DEPTH)
    }

    fn fit_at(&self, pts: &[&Point], depth: usize) -> Option<Quast> {
        if pts.is_empty() {
            return Some(Quast::Leaf(None));
        }
        self.fit_known(pts, self.leaf(pts), depth)
    }

    /// [`Self::fit_at`] for non-empty points whose [`Self::leaf`] is known.
    fn fit_known(
        &self,
        pts: &[&Point],
        leaf: Option<Option<Source>>,
        depth: usize,
    ) -> Option<Quast> {
        if let Some(l) = leaf {
            return Some(Quast::Leaf(l));
        }
        if depth == 0 {
            return None;
        }
        // Best: most points settled by a leaf, then fewest kinds of source
        // (distinct source statements, ⊥ included). Candidates splitting the
        // points as an earlier one did score the same and never win (the
        // first best is kept): skipped.
        type Leaves = [Option<Option<Source>>; 2];
        let mut best: Option<((usize, std::cmp::Reverse<usize>), Affine, Leaves)> = None;
        let mut seen: std::collections::HashSet<Vec<u64>, crate::hash::WordHash> =
            Default::default();
        // Each point's kind once, and buffers reused across candidates
        // (allocation per candidate was a tenth of the fit).
        let kind: Vec<Option<StmtId>> = pts.iter().map(|p| p.1.as_ref().map(|s| s.0)).collect();
        let mut mask = vec![0u64; pts.len().div_ceil(64)];
        let mut kinds: [Vec<Option<StmtId>>; 2] = [Vec::new(), Vec::new()];
        for c in self.candidates(pts) {
            // 0 left means stopped (`exhausted`): a budget used up exactly
            // stops here too.
            let Some(left) = (self.steps.get().checked_sub(pts.len() as u64)).filter(|&l| l > 0)
            else {
                self.steps.set(0);
                return None;
            };
            self.steps.set(left);
            let dense = Dense::new(&c, self.counters);
            // One pass: the side of each point (a bit mask), the side sizes
            // and their kinds (few, so lists); the sides are built only for
            // a candidate that may win.
            mask.iter_mut().for_each(|w| *w = 0);
            kinds.iter_mut().for_each(Vec::clear);
            let mut size = [0usize; 2];
            for (i, (p, k)) in pts.iter().zip(&kind).enumerate() {
                let side = (dense.at(&p.0) < 0) as usize;
                if side == 0 {
                    mask[i / 64] |= 1 << (i % 64);
                }
                size[side] += 1;
                if !kinds[side].contains(k) {
                    kinds[side].push(*k);
                }
            }
            if size[0] == 0 || size[1] == 0 || seen.contains(&mask) {
                continue;
            }
            seen.insert(mask.clone());
            let ks = [kinds[0].len(), kinds[1].len()];
            // A side with two kinds of source is no leaf: the best this
            // candidate can score, without fitting.
            let bound = (
                (ks[0] == 1) as usize * size[0] + (ks[1] == 1) as usize * size[1],
                std::cmp::Reverse(ks[0] + ks[1]),
            );
            if best.as_ref().is_some_and(|(b, _, _)| bound <= *b) {
                continue;
            }
            let (yes, no): (Vec<&Point>, Vec<&Point>) =
                pts.iter().partition(|p| dense.at(&p.0) >= 0);
            let leaves = [self.leaf(&yes), self.leaf(&no)];
            let settled = (leaves[0].is_some() as usize * yes.len())
                + (leaves[1].is_some() as usize * no.len());
            let score = (settled, bound.1);
            if best.as_ref().is_none_or(|(b, _, _)| score > *b) {
                best = Some((score, c, leaves));
                // Every point settled by two one-kind sides is the most any
                // candidate can score: no later one can win.
                if settled == pts.len() {
                    break;
                }
            }
        }
        let (_, cond, [leaf_yes, leaf_no]) = best?;
        let dense = Dense::new(&cond, self.counters);
        let (yes, no): (Vec<&Point>, Vec<&Point>) = pts.iter().partition(|p| dense.at(&p.0) >= 0);
        Some(Quast::Split {
            cond,
            yes: Box::new(self.fit_known(&yes, leaf_yes, depth - 1)?),
            no: Box::new(self.fit_known(&no, leaf_no, depth - 1)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A split search that runs out of point tests gives up and says so;
    /// with them it finds the split (here `N >= 2`: initial below, S0 from
    /// there).
    #[test]
    fn a_fit_stops_when_its_point_tests_run_out() {
        let place = Place {
            loops: Vec::new(),
            guards: Vec::new(),
            guard_ids: Vec::new(),
            order: 0,
            beta: vec![0],
        };
        let places = [place.clone()];
        let pts: Vec<Point> = (0..10)
            .map(|n| {
                let src = (n >= 2).then(|| (StmtId(0), Vec::new()));
                (Coords::from_slice(&[n]), src)
            })
            .collect();
        let pts: Vec<&Point> = pts.iter().collect();
        let fitter = |steps| Fitter {
            counters: &[],
            n_params: 1,
            place: &place,
            places: &places,
            steps: std::cell::Cell::new(steps),
        };
        let f = fitter(FIT_STEPS);
        assert!(f.fit(&pts).is_some());
        assert!(!f.exhausted());
        let f = fitter(5);
        assert!(f.fit(&pts).is_none());
        assert!(f.exhausted());
    }
}
