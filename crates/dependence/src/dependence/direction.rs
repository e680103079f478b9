//! Direction and distance vectors (digest §1.7) by Burke–Cytron hierarchical
//! refinement: test `(*, …, *)`; while dependent, expand the next `*` into
//! `+`, `0`, `−` (each a constraint added to the same problem, solved by the
//! same cascade) and prune the independent branches.
//!
//! Convention: `d = i_dst − i_src` over the common loops, so `+` means the
//! destination's iteration comes later in that loop. (The thesis writes
//! `d = i' − i` with `i` the first reference: the same thing when the source
//! is the first reference.)
//!
//! Pruning, without tests:
//! - an index whose two counters appear in no equality and only in their own
//!   constant bounds gets its directions from the two intervals (`*` when all
//!   three are possible);
//! - a component whose distance is the same for every integer solution of the
//!   equalities (GCD) gets the sign of that distance.
//!
//! Distances: a component is constant when the GCD lattice of the leaf fixes
//! it, or when the leaf's integer range for it (Fourier–Motzkin projection,
//! then exact tests) holds one value. That second step finds `(−2, 0)` for
//! `a[10*i+j] = a[10*(i+2)+j]`, which the thesis' GCD method misses.

use super::cascade::Tester;
use super::fourier;
use super::problem::{coeffs, rhs, support, Problem, Rows};
use super::svpc::Bounds;
use super::{Answer, Test, Verdict, Why};
use serde::{Serialize, Serializer};

/// One component of a direction vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dir {
    Plus,
    Zero,
    Minus,
    /// Any of the three.
    Star,
}

/// The levels that a dependence with direction vector `dirs` may be
/// carried by: the first level that is not `=`, and every level up to it
/// that is `*` (a `while` loop's, never refined: it may be `=` too, so the
/// levels after it may carry as well).
pub fn carrying_levels(dirs: &[Dir]) -> Vec<usize> {
    let mut out = Vec::new();
    for (l, d) in dirs.iter().enumerate() {
        match d {
            Dir::Zero => {}
            Dir::Star => out.push(l),
            Dir::Plus | Dir::Minus => {
                out.push(l);
                break;
            }
        }
    }
    out
}

impl Dir {
    pub fn symbol(self) -> &'static str {
        match self {
            Dir::Plus => "+",
            Dir::Zero => "0",
            Dir::Minus => "-",
            Dir::Star => "*",
        }
    }

    /// The signs a component may take.
    pub fn signs(self) -> &'static [Dir] {
        match self {
            Dir::Plus => &[Dir::Plus],
            Dir::Zero => &[Dir::Zero],
            Dir::Minus => &[Dir::Minus],
            Dir::Star => &[Dir::Plus, Dir::Zero, Dir::Minus],
        }
    }

    pub fn of(d: i64) -> Dir {
        match d.signum() {
            1 => Dir::Plus,
            0 => Dir::Zero,
            _ => Dir::Minus,
        }
    }
}

impl Serialize for Dir {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.symbol())
    }
}

/// The dependence problem of a pair of references.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairProblem {
    pub problem: Problem,
    /// Per common loop, outermost first: the variables of the source's and
    /// the destination's counter.
    pub loops: Vec<(usize, usize)>,
    /// Loop-index variables (the improved memo key may drop their bounds).
    pub indices: Vec<bool>,
    /// Vectors whose first `m` components are all zero are impossible: the
    /// same reference on both sides (an instance is not dependent on itself;
    /// `m` = every loop), or two accesses no single instance of an `if` can
    /// both reach (`m` = the loops around that `if`).
    pub exclude_zero_prefix: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DirVector {
    pub dirs: Vec<Dir>,
    /// Some pair of iterations has exactly these directions (not a "maybe").
    pub exact: bool,
    /// Why not, when not exact.
    pub why: Option<Why>,
    /// The distance `i_dst − i_src`, when it is the same for every such pair.
    pub distance: Option<Vec<i64>>,
}

/// The answer for a pair.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Dependence {
    /// The answer for `(*, …, *)`.
    pub top: Answer,
    pub vectors: Vec<DirVector>,
}

impl Dependence {
    pub fn dependent(&self) -> bool {
        !self.vectors.is_empty()
    }

    /// Every vector is certain and every pruned one refuted.
    pub fn exact(&self) -> bool {
        self.vectors.iter().all(|v| v.exact)
    }

    /// The test that decided the pair: the one that answered `(*, …, *)`,
    /// unless the refinement overturned a "maybe" or refuted every vector.
    pub fn decided_by(&self) -> Test {
        match (self.top.verdict, self.dependent()) {
            (Verdict::Independent, _) | (Verdict::Dependent, true) => self.top.decided_by,
            (Verdict::Maybe(_), true) if !self.exact() => self.top.decided_by,
            _ => Test::Directions,
        }
    }
}

/// An integer interval; `None` is unbounded on that side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Interval {
    lo: Option<i64>,
    hi: Option<i64>,
}

/// A component fixed during refinement.
#[derive(Clone, Copy, Debug)]
enum Choice {
    Sign(Dir),
    /// Not refined: the test budget ran out.
    Unknown,
    /// A component pruned as unused: the interval of `x_d − x_s`, whose two
    /// counters range over independent intervals.
    Free(Interval),
}

impl Interval {
    /// The part of the interval with this sign, if not empty.
    fn with_sign(self, dir: Dir) -> Option<Interval> {
        let (lo, hi) = match dir {
            Dir::Plus => (Some(self.lo.map_or(1, |l| l.max(1))), self.hi),
            Dir::Minus => (self.lo, Some(self.hi.map_or(-1, |h| h.min(-1)))),
            Dir::Zero => (Some(0), Some(0)),
            Dir::Star => (self.lo, self.hi),
        };
        let part = Interval { lo, hi };
        let inside = |v: i64| self.lo.is_none_or(|l| l <= v) && self.hi.is_none_or(|h| v <= h);
        let empty = match (lo, hi) {
            (Some(l), Some(h)) => l > h,
            _ => false,
        };
        (!empty && (dir != Dir::Zero || inside(0))).then_some(part)
    }

    fn single(self) -> Option<i64> {
        match (self.lo, self.hi) {
            (Some(l), Some(h)) if l == h => Some(l),
            _ => None,
        }
    }

    fn signs(self) -> [bool; 3] {
        [Dir::Plus, Dir::Zero, Dir::Minus].map(|d| self.with_sign(d).is_some())
    }
}

struct Leaf {
    choices: Vec<Choice>,
    node: Problem,
    answer: Answer,
}

/// What refinement collects, and how many more tests it may run.
struct Walk {
    leaves: Vec<Leaf>,
    budget: usize,
}

impl Tester {
    /// Whether the pair is dependent, with its direction vectors and constant
    /// distances.
    pub fn dependence(&mut self, pair: &PairProblem) -> Dependence {
        let top = self.test(&pair.problem, &pair.indices);
        if top.verdict == Verdict::Independent {
            return Dependence {
                top,
                vectors: Vec::new(),
            };
        }
        let free: Vec<Option<Choice>> = pair
            .loops
            .iter()
            .map(|&(s, d)| free_component(&pair.problem, s, d))
            .collect();
        let mut walk = Walk {
            leaves: Vec::new(),
            budget: self.config().max_direction_tests,
        };
        let mut choices = Vec::with_capacity(pair.loops.len());
        self.refine(
            pair,
            &free,
            pair.problem.clone(),
            top,
            &mut choices,
            &mut walk,
        );
        let mut vectors = Vec::new();
        let leaves = std::mem::take(&mut walk.leaves);
        for leaf in &leaves {
            let tested = if leaf.answer.exact() {
                self.tested_distances(pair, leaf, &mut walk.budget)
            } else {
                vec![None; leaf.choices.len()]
            };
            for dirs in expand(&leaf.choices, pair.exclude_zero_prefix) {
                let distance = if leaf.answer.exact() {
                    distance(&leaf.choices, &dirs, &tested)
                } else {
                    None
                };
                let why = match leaf.answer.verdict {
                    Verdict::Maybe(why) => Some(why),
                    _ => None,
                };
                vectors.push(DirVector {
                    dirs,
                    exact: leaf.answer.exact(),
                    why,
                    distance,
                });
            }
        }
        Dependence { top, vectors }
    }

    fn refine(
        &mut self,
        pair: &PairProblem,
        free: &[Option<Choice>],
        node: Problem,
        answer: Answer,
        choices: &mut Vec<Choice>,
        walk: &mut Walk,
    ) {
        let k = choices.len();
        if k == pair.loops.len() {
            walk.leaves.push(Leaf {
                choices: choices.clone(),
                node,
                answer,
            });
            return;
        }
        if let Some(c) = free[k] {
            choices.push(c);
            self.refine(pair, free, node, answer, choices, walk);
            choices.pop();
            return;
        }
        let (s, d) = pair.loops[k];
        if let Some(dist) = self.lattice(&node).and_then(|l| l.difference(d, s)) {
            choices.push(Choice::Sign(Dir::of(dist)));
            self.refine(pair, free, node, answer, choices, walk);
            choices.pop();
            return;
        }
        for dir in [Dir::Plus, Dir::Zero, Dir::Minus] {
            let child = constrain(&node, s, d, dir);
            if walk.budget == 0 {
                // Out of tests: this direction and every later component
                // may be anything.
                let mut rest = choices.clone();
                rest.push(Choice::Sign(dir));
                rest.extend(free[k + 1..].iter().map(|f| f.unwrap_or(Choice::Unknown)));
                walk.leaves.push(Leaf {
                    choices: rest,
                    node: child,
                    answer: Answer::new(Verdict::Maybe(Why::DirectionCap), answer.decided_by),
                });
                continue;
            }
            walk.budget -= 1;
            let a = self.test(&child, &pair.indices);
            if a.verdict == Verdict::Independent {
                continue;
            }
            choices.push(Choice::Sign(dir));
            self.refine(pair, free, child, a, choices, walk);
            choices.pop();
        }
    }

    /// For each tested component of an exactly dependent leaf, its distance
    /// when it is the same for every solution.
    fn tested_distances(
        &mut self,
        pair: &PairProblem,
        leaf: &Leaf,
        budget: &mut usize,
    ) -> Vec<Option<i64>> {
        let lattice = self.lattice(&leaf.node);
        let mut out = Vec::with_capacity(leaf.choices.len());
        for (&choice, &(s, d)) in leaf.choices.iter().zip(&pair.loops) {
            let v = match choice {
                Choice::Free(_) | Choice::Unknown => None,
                Choice::Sign(Dir::Zero) => Some(0),
                Choice::Sign(_) => match lattice.as_ref().and_then(|l| l.difference(d, s)) {
                    Some(v) => Some(v),
                    None => self.pinned(pair, &leaf.node, s, d, budget),
                },
            };
            out.push(v);
        }
        out
    }

    /// `x_d − x_s` when the bounds pin it to one value on an (exactly)
    /// dependent node: the integer range from a Fourier–Motzkin projection,
    /// then exact tests at its low end.
    fn pinned(
        &mut self,
        pair: &PairProblem,
        node: &Problem,
        s: usize,
        d: usize,
        budget: &mut usize,
    ) -> Option<i64> {
        let lattice = self.lattice(node)?;
        let k = lattice.k();
        // The projection costs like a test (more on wide problems).
        if k > PINNED_MAX_VARS {
            return None;
        }
        *budget = budget.checked_sub(1)?;
        let t = lattice.transform(&node.ineqs).ok()?;
        // Over (t, z): every row of t, plus z = x_d − x_s.
        let mut rows = Rows::<i64>::with_capacity(k + 1, t.len() + 2);
        let mut buf = vec![0i64; k + 1];
        for row in t.iter() {
            buf[..k].copy_from_slice(coeffs(row));
            buf[k] = 0;
            rows.push(&buf, rhs(row));
        }
        let c0 = lattice.x0(d).checked_sub(lattice.x0(s))?;
        for (j, c) in buf[..k].iter_mut().enumerate() {
            *c = lattice.v(d, j).checked_sub(lattice.v(s, j))?;
        }
        buf[k] = -1;
        rows.push(&buf, c0.checked_neg()?); // d(t) - z <= 0
        for c in &mut buf {
            *c = c.checked_neg()?;
        }
        rows.push(&buf, c0); // z - d(t) <= 0
        let limits = self.config().limits;
        let (lo, hi) = fourier::range(&rows, k, limits.max_rows).ok()??;
        let (lo, hi) = (lo?, hi?);
        if lo == hi {
            return Some(lo);
        }
        // The smallest attainable value by bisection (d ≤ hi holds for some
        // solution, d ≤ lo − 1 for none), then nothing above it.
        let (mut a, mut b) = (lo, hi);
        while a < b {
            *budget = budget.checked_sub(1)?;
            let mid = a + (b - a) / 2;
            let mut below = node.clone();
            below.add_le(&unit2(node.n(), s, d, -1, 1), mid);
            match self.test(&below, &pair.indices).verdict {
                Verdict::Dependent => b = mid,
                Verdict::Independent => a = mid + 1,
                Verdict::Maybe(_) => return None,
            }
        }
        *budget = budget.checked_sub(1)?;
        let mut above = node.clone();
        above.add_le(
            &unit2(node.n(), s, d, 1, -1),
            a.checked_add(1)?.checked_neg()?,
        );
        let verdict = self.test(&above, &pair.indices).verdict;
        (verdict == Verdict::Independent).then_some(a)
    }
}

/// A vector's distance: every component constant (tested ones from
/// `tested`, free ones from their interval restricted to the sign).
fn distance(choices: &[Choice], dirs: &[Dir], tested: &[Option<i64>]) -> Option<Vec<i64>> {
    choices
        .iter()
        .zip(dirs)
        .zip(tested)
        .map(|((c, &dir), &t)| match c {
            Choice::Sign(_) => t,
            Choice::Unknown => None,
            Choice::Free(range) => range.with_sign(dir)?.single(),
        })
        .collect()
}

/// Distances pinned by bounds are looked for on leaves with at most this
/// many free variables (Fourier–Motzkin grows fast with more).
const PINNED_MAX_VARS: usize = 16;

/// `cs·x_s + cd·x_d` as a coefficient vector.
fn unit2(n: usize, s: usize, d: usize, cs: i64, cd: i64) -> Vec<i64> {
    let mut c = vec![0; n];
    c[s] = cs;
    c[d] = cd;
    c
}

/// The node with the direction `dir` for `x_d − x_s` added.
fn constrain(node: &Problem, s: usize, d: usize, dir: Dir) -> Problem {
    let mut child = node.clone();
    let n = node.n();
    match dir {
        Dir::Plus => child.add_le(&unit2(n, s, d, 1, -1), -1),
        Dir::Minus => child.add_le(&unit2(n, s, d, -1, 1), -1),
        Dir::Zero | Dir::Star => child.add_eq(&unit2(n, s, d, -1, 1), 0),
    }
    child
}

/// An unused component: both counters in no equality and only in their own
/// bounds, so `x_d − x_s` ranges over the difference of two intervals.
fn free_component(p: &Problem, s: usize, d: usize) -> Option<Choice> {
    if p.eqs.iter().any(|r| r[s] != 0 || r[d] != 0) {
        return None;
    }
    let mut b = Bounds::<i64>::new(p.n());
    for row in p.ineqs.iter() {
        if row[s] == 0 && row[d] == 0 {
            continue;
        }
        if support(row) > 1 {
            return None;
        }
        let v = if row[s] != 0 { s } else { d };
        b.add(v, row[v], rhs(row)).ok()?;
    }
    let sub = |x: Option<i64>, y: Option<i64>| match (x, y) {
        (Some(x), Some(y)) => x.checked_sub(y).map(Some),
        _ => Some(None),
    };
    Some(Choice::Free(Interval {
        lo: sub(b.lb[d], b.ub[s])?,
        hi: sub(b.ub[d], b.lb[s])?,
    }))
}

/// The direction vectors a leaf stands for: free components expanded (`*`
/// when all three signs are possible), and the vectors whose first `m`
/// components are all zero taken out (`exclude = Some(m)`).
fn expand(choices: &[Choice], exclude: Option<usize>) -> Vec<Vec<Dir>> {
    let mut out: Vec<Vec<Dir>> = vec![Vec::with_capacity(choices.len())];
    for c in choices {
        let options: Vec<Dir> = match *c {
            Choice::Sign(d) => vec![d],
            Choice::Unknown => vec![Dir::Star],
            Choice::Free(range) => match range.signs() {
                [true, true, true] => vec![Dir::Star],
                set => [Dir::Plus, Dir::Zero, Dir::Minus]
                    .into_iter()
                    .zip(set)
                    .filter(|(_, ok)| *ok)
                    .map(|(d, _)| d)
                    .collect(),
            },
        };
        out = out
            .into_iter()
            .flat_map(|v| {
                options.iter().map(move |&d| {
                    let mut v = v.clone();
                    v.push(d);
                    v
                })
            })
            .collect();
    }
    let Some(m) = exclude else { return out };
    let mut kept = Vec::with_capacity(out.len());
    for v in out {
        let m = m.min(v.len());
        if v[..m].iter().any(|d| matches!(d, Dir::Plus | Dir::Minus)) {
            kept.push(v);
            continue;
        }
        // The prefix is all `0` and `*`: the `*`s must not all be 0. Split on
        // the first star that is not 0.
        let stars: Vec<usize> = (0..m).filter(|&i| v[i] == Dir::Star).collect();
        for (j, &p) in stars.iter().enumerate() {
            for sign in [Dir::Plus, Dir::Minus] {
                let mut w = v.clone();
                for &q in &stars[..j] {
                    w[q] = Dir::Zero;
                }
                w[p] = sign;
                kept.push(w);
            }
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANY: Interval = Interval { lo: None, hi: None };

    #[test]
    fn zero_prefix_is_excluded() {
        let c = [Choice::Free(ANY), Choice::Sign(Dir::Zero)];
        let v = expand(&c, Some(2));
        assert_eq!(
            v,
            vec![vec![Dir::Plus, Dir::Zero], vec![Dir::Minus, Dir::Zero]]
        );
        assert!(expand(&[Choice::Sign(Dir::Zero)], Some(1)).is_empty());
        let two_stars = [Choice::Free(ANY), Choice::Free(ANY)];
        let v = expand(&two_stars, Some(2));
        assert_eq!(
            v,
            vec![
                vec![Dir::Plus, Dir::Star],
                vec![Dir::Minus, Dir::Star],
                vec![Dir::Zero, Dir::Plus],
                vec![Dir::Zero, Dir::Minus],
            ]
        );
        // Only the first component is constrained: (0, *) goes entirely.
        let c = [Choice::Sign(Dir::Zero), Choice::Free(ANY)];
        assert!(expand(&c, Some(1)).is_empty());
        let c = [Choice::Sign(Dir::Plus), Choice::Sign(Dir::Zero)];
        assert_eq!(expand(&c, Some(2)), vec![vec![Dir::Plus, Dir::Zero]]);
    }

    #[test]
    fn free_component_of_two_intervals() {
        // s in [1, 1], d in [1, 5]: d - s is 0 or positive.
        let mut p = Problem::new(2);
        p.add_le(&[1, 0], 1);
        p.add_le(&[-1, 0], -1);
        p.add_le(&[0, 1], 5);
        p.add_le(&[0, -1], -1);
        match free_component(&p, 0, 1) {
            Some(Choice::Free(range)) => {
                assert_eq!(
                    range,
                    Interval {
                        lo: Some(0),
                        hi: Some(4)
                    }
                );
                assert_eq!(range.signs(), [true, true, false]);
                assert_eq!(range.with_sign(Dir::Plus).and_then(Interval::single), None);
            }
            other => panic!("{other:?}"),
        }
        // Two values: + has the single distance 1.
        let two = Interval {
            lo: Some(-1),
            hi: Some(1),
        };
        assert_eq!(two.with_sign(Dir::Plus).and_then(Interval::single), Some(1));
        assert_eq!(
            two.with_sign(Dir::Minus).and_then(Interval::single),
            Some(-1)
        );
    }
}
