//! Where each statement runs, symbolically: its loops (bounds affine in
//! outer counters and parameters), its guards, its textual order and its
//! position among siblings (the 2d+1 schedule). Conditions become
//! disjunctions of affine atoms; what cannot be one (`...`, a read of
//! memory, a `while`) is recorded as the reason the statement is not
//! static control.

use crate::model::{Affine, CmpOp, Cond, CondId, CounterId, Node, Program, StmtId};

/// `e ≤ 0`, `e = 0`, or (the counter of a loop with a step) `e ≡ 0` or
/// `e ≢ 0` modulo the step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Atom {
    Le(Affine),
    Eq(Affine),
    Stride(Affine, i64),
    NotStride(Affine, i64),
}

impl Atom {
    pub fn expr(&self) -> &Affine {
        match self {
            Atom::Le(e) | Atom::Eq(e) | Atom::Stride(e, _) | Atom::NotStride(e, _) => e,
        }
    }

    /// The same atom over another expression.
    pub fn with(&self, e: Affine) -> Atom {
        match self {
            Atom::Le(_) => Atom::Le(e),
            Atom::Eq(_) => Atom::Eq(e),
            Atom::Stride(_, s) => Atom::Stride(e, *s),
            Atom::NotStride(_, s) => Atom::NotStride(e, *s),
        }
    }
}

/// A disjunction of conjunctions of atoms.
pub type Dnf = Vec<Vec<Atom>>;

/// The most disjuncts a condition may expand to.
const MAX_DISJUNCTS: usize = 64;

#[derive(Clone, Debug)]
pub struct Loop {
    pub counter: CounterId,
    pub lo: Affine,
    pub hi: Affine,
    pub step: i64,
    /// A `while` loop: its counter is ≥ 0, the rest unknown.
    pub is_while: bool,
    /// The `while` loop's condition.
    pub cond: Option<CondId>,
}

impl Loop {
    /// `lo - c` and `c - hi`, each `≤ 0` inside the loop (None for a
    /// `while` loop, or on overflow).
    fn bounds(&self) -> Option<(Affine, Affine)> {
        if self.is_while {
            return None;
        }
        let c = Affine::var(crate::model::Var::Counter(self.counter));
        Some((self.lo.checked_sub(&c)?, c.checked_sub(&self.hi)?))
    }
}

/// One statement's place in the program.
#[derive(Clone, Debug)]
pub struct Place {
    pub loops: Vec<Loop>,
    /// The guards around it: condition and the branch taken.
    pub guards: Vec<(Cond, bool)>,
    /// Beside each guard: its condition's id and how many loops enclose
    /// it (its instances are the values of those loops' counters).
    pub guard_ids: Vec<(CondId, usize)>,
    /// Textual order among statements.
    pub order: usize,
    /// Position among its siblings at each depth (`loops.len() + 1` entries;
    /// the bodies of `if`s are flattened into their parent's sequence).
    pub beta: Vec<usize>,
}

impl Place {
    pub fn counters(&self) -> Vec<CounterId> {
        self.loops.iter().map(|l| l.counter).collect()
    }

    /// How many outer loops two places share.
    pub fn common(&self, other: &Place) -> usize {
        self.loops
            .iter()
            .zip(&other.loops)
            .take_while(|(a, b)| a.counter == b.counter)
            .count()
    }

    /// Why the set of instances is not exactly affine, if it is not.
    pub fn not_static(&self) -> Option<&'static str> {
        if self.loops.iter().any(|l| l.is_while) {
            return Some("inside a `while` loop");
        }
        if self.guards.iter().any(|(c, b)| dnf(c, *b).is_none()) {
            return Some("under a condition that is not affine (unknown or reads memory)");
        }
        None
    }

    /// The domain: loop bounds and guards, as a DNF over the counters and
    /// parameters (None when not static).
    pub fn domain(&self) -> Option<Dnf> {
        let mut out: Dnf = vec![Vec::new()];
        for l in &self.loops {
            let (lo, hi) = l.bounds()?;
            for conj in &mut out {
                conj.push(Atom::Le(lo.clone()));
                conj.push(Atom::Le(hi.clone()));
                if l.step != 1 {
                    conj.push(Atom::Stride(lo.checked_scale(-1)?, l.step));
                }
            }
        }
        for (c, b) in &self.guards {
            out = and(&out, &dnf(c, *b)?)?;
            // `i != 0` under `0 <= i` leaves one case of two: dropped here,
            // before every proof multiplies the cases.
            out.retain(|conj| !clashes(conj));
        }
        Some(out)
    }
}

/// Whether a conjunction is plainly empty: an atom false on its own, or
/// two atoms over opposite (or equal) expressions whose constants cannot
/// both hold (`i + 1 <= 0` with `-i <= 0`). Syntactic: a conjunction kept
/// may still be empty.
pub fn clashes(conj: &[Atom]) -> bool {
    clashes_with(&[], conj)
}

/// Whether `added` clashes (as [`clashes`] finds) with itself or with
/// `atoms`.
pub fn clashes_with(atoms: &[&Atom], added: &[Atom]) -> bool {
    added.iter().enumerate().any(|(k, a)| {
        alone_false(a)
            || added[k + 1..].iter().any(|b| contradict(a, b))
            || atoms.iter().any(|b| contradict(a, b))
    })
}

fn alone_false(a: &Atom) -> bool {
    match a {
        Atom::Le(e) => e.terms.is_empty() && e.constant > 0,
        Atom::Eq(e) => e.terms.is_empty() && e.constant != 0,
        _ => false,
    }
}

/// `Some(true)`: `f`'s terms are `e`'s negated; `Some(false)`: equal; else
/// None.
fn terms_relation(e: &Affine, f: &Affine) -> Option<bool> {
    if e.terms.is_empty() || e.terms.len() != f.terms.len() {
        return None;
    }
    let pairs = || e.terms.iter().zip(&f.terms);
    if pairs().all(|(x, y)| x.0 == y.0 && x.1 == -y.1) {
        Some(true)
    } else if pairs().all(|(x, y)| x == y) {
        Some(false)
    } else {
        None
    }
}

/// Two atoms that cannot hold together, by their constants alone.
fn contradict(a: &Atom, b: &Atom) -> bool {
    let (ea, eb) = (a.expr(), b.expr());
    let Some(opposite) = terms_relation(ea, eb) else {
        return false;
    };
    // Written as t + c: opposite terms, t ≤ -ca and -t ≤ -cb; equal terms,
    // t ≤ -ca and t ≤ -cb.
    let (ca, cb) = (ea.constant as i128, eb.constant as i128);
    match (a, b, opposite) {
        // t ≤ -ca and t ≥ cb.
        (Atom::Le(_), Atom::Le(_), true) => ca + cb > 0,
        // t = -ca and t ≤ -cb (equal terms) or t ≥ cb (opposite).
        (Atom::Eq(_), Atom::Le(_), false) => -ca > -cb,
        (Atom::Le(_), Atom::Eq(_), false) => -cb > -ca,
        (Atom::Eq(_), Atom::Le(_), true) => -ca < cb,
        (Atom::Le(_), Atom::Eq(_), true) => -cb < ca,
        (Atom::Eq(_), Atom::Eq(_), false) => ca != cb,
        (Atom::Eq(_), Atom::Eq(_), true) => ca + cb != 0,
        _ => false,
    }
}

impl Place {
    /// The complement of [`Place::domain`], one disjunct per loop bound or
    /// guard that fails: negating the domain's DNF instead multiplies its
    /// disjuncts (a guard `i == 0 or … or j == N - 1` on both branches).
    pub fn outside(&self) -> Option<Dnf> {
        let mut out: Dnf = Vec::new();
        for l in &self.loops {
            let (lo, hi) = l.bounds()?;
            out.push(vec![Atom::Le(positive(&lo)?)]);
            out.push(vec![Atom::Le(positive(&hi)?)]);
            if l.step != 1 {
                out.push(vec![Atom::NotStride(lo.checked_scale(-1)?, l.step)]);
            }
        }
        for (c, b) in &self.guards {
            out.extend(dnf(c, !*b)?);
        }
        (out.len() <= MAX_DISJUNCTS).then_some(out)
    }
}

/// The conjunction of two DNFs (None when too large).
pub fn and(a: &Dnf, b: &Dnf) -> Option<Dnf> {
    if a.len() * b.len() > MAX_DISJUNCTS {
        return None;
    }
    let mut out = Vec::with_capacity(a.len() * b.len());
    for p in a {
        for q in b {
            out.push(p.iter().chain(q).cloned().collect());
        }
    }
    Some(out)
}

/// `e ≥ 1`, the negation of `e ≤ 0`.
pub fn positive(e: &Affine) -> Option<Affine> {
    Affine::constant(1).checked_sub(e)
}

/// The alternatives of ¬atom.
pub fn negate(a: &Atom) -> Option<Vec<Atom>> {
    Some(match a {
        Atom::Le(e) => vec![Atom::Le(positive(e)?)],
        // e ≤ -1, or e ≥ 1.
        Atom::Eq(e) => vec![
            Atom::Le(e.checked_add(&Affine::constant(1))?),
            Atom::Le(positive(e)?),
        ],
        Atom::Stride(e, k) => vec![Atom::NotStride(e.clone(), *k)],
        Atom::NotStride(e, k) => vec![Atom::Stride(e.clone(), *k)],
    })
}

/// The DNF of `c == truth`, or None when `c` is not affine or too large.
pub fn dnf(c: &Cond, truth: bool) -> Option<Dnf> {
    Some(match c {
        Cond::Cmp(op, l, r) => {
            let d = Affine::from_expr(l)?.checked_sub(&Affine::from_expr(r)?)?;
            let op = if truth {
                *op
            } else {
                crate::dependence::pairs::negate(*op)
            };
            let one = Affine::constant(1);
            match op {
                CmpOp::Lt => vec![vec![Atom::Le(d.checked_add(&one)?)]],
                CmpOp::Le => vec![vec![Atom::Le(d)]],
                CmpOp::Gt => vec![vec![Atom::Le(positive(&d)?)]],
                CmpOp::Ge => vec![vec![Atom::Le(d.checked_scale(-1)?)]],
                CmpOp::Eq => vec![vec![Atom::Eq(d)]],
                CmpOp::Ne => negate(&Atom::Eq(d))?.into_iter().map(|a| vec![a]).collect(),
            }
        }
        Cond::And(a, b) | Cond::Or(a, b) => {
            let (x, y) = (dnf(a, truth)?, dnf(b, truth)?);
            if matches!(c, Cond::And(..)) == truth {
                and(&x, &y)?
            } else {
                x.into_iter().chain(y).collect()
            }
        }
        Cond::Not(a) => dnf(a, !truth)?,
        Cond::Unknown => return None,
    })
}

/// The places of every statement, indexed by `StmtId`.
pub fn places(program: &Program) -> Vec<Place> {
    let mut w = Walk {
        loops: Vec::new(),
        guards: Vec::new(),
        guard_ids: Vec::new(),
        beta: vec![0],
        out: Vec::new(),
    };
    w.nodes(&program.body);
    w.out.sort_by_key(|(id, _)| *id);
    w.out.into_iter().map(|(_, p)| p).collect()
}

struct Walk {
    loops: Vec<Loop>,
    guards: Vec<(Cond, bool)>,
    guard_ids: Vec<(CondId, usize)>,
    /// Next sibling position at each depth.
    beta: Vec<usize>,
    out: Vec<(StmtId, Place)>,
}

impl Walk {
    fn enter(&mut self, l: Loop, body: &[Node]) {
        self.loops.push(l);
        self.beta.push(0);
        self.nodes(body);
        self.beta.pop();
        self.loops.pop();
        *self.beta.last_mut().expect("depth 0 exists") += 1;
    }

    fn nodes(&mut self, nodes: &[Node]) {
        for n in nodes {
            match n {
                Node::Stmt(s) => {
                    let place = Place {
                        loops: self.loops.clone(),
                        guards: self.guards.clone(),
                        guard_ids: self.guard_ids.clone(),
                        order: self.out.len(),
                        beta: self.beta.clone(),
                    };
                    self.out.push((s.id, place));
                    *self.beta.last_mut().expect("depth 0 exists") += 1;
                }
                Node::For(f) => self.enter(
                    Loop {
                        counter: f.counter,
                        lo: f.lower.affine.clone(),
                        hi: f.upper.affine.clone(),
                        step: f.step,
                        is_while: false,
                        cond: None,
                    },
                    &f.body,
                ),
                Node::While(wl) => self.enter(
                    Loop {
                        counter: wl.counter,
                        lo: Affine::constant(0),
                        hi: Affine::constant(0),
                        step: 1,
                        is_while: true,
                        cond: Some(wl.cond.id),
                    },
                    &wl.body,
                ),
                Node::If(i) => {
                    let base = self.guards.len();
                    let depth = self.loops.len();
                    for (c, body) in &i.branches {
                        self.guards.push((c.cond.clone(), true));
                        self.guard_ids.push((c.id, depth));
                        self.nodes(body);
                        self.guards.pop();
                        self.guard_ids.pop();
                        self.guards.push((c.cond.clone(), false));
                        self.guard_ids.push((c.id, depth));
                    }
                    if let Some(b) = &i.otherwise {
                        self.nodes(b);
                    }
                    self.guards.truncate(base);
                    self.guard_ids.truncate(base);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ¬(e = 0) is e ≤ -1 or e ≥ 1, on constants -3..3. (It once gave
    /// e ≤ -1 twice, and the prover accepted a quast wrong where e ≥ 1.)
    #[test]
    fn negated_equalities_cover_both_sides() {
        let holds = |a: &Atom| match a {
            Atom::Le(e) => e.constant <= 0,
            Atom::Eq(e) => e.constant == 0,
            _ => unreachable!(),
        };
        for c in -3..=3 {
            let alts = negate(&Atom::Eq(Affine::constant(c))).unwrap();
            assert_eq!(alts.iter().any(holds), c != 0, "c = {c}");
            let alts = negate(&Atom::Le(Affine::constant(c))).unwrap();
            assert_eq!(alts.iter().any(holds), c > 0, "c = {c}");
        }
    }

    /// `clashes` against brute force over one counter: it never drops a
    /// pair of atoms that can hold together, and over `±x + c` (the loop
    /// bounds and negated guards it is for) it drops every pair that cannot.
    #[test]
    fn clashes_agree_with_brute_force() {
        use crate::model::Var;
        let x = |k: i64, c: i64| {
            let v = Affine::var(Var::Counter(CounterId(0)))
                .checked_scale(k)
                .unwrap();
            v.checked_add(&Affine::constant(c)).unwrap()
        };
        let value =
            |e: &Affine, at: i64| e.terms.iter().map(|t| t.1 * at).sum::<i64>() + e.constant;
        let holds = |a: &Atom, at: i64| match a {
            Atom::Le(e) => value(e, at) <= 0,
            Atom::Eq(e) => value(e, at) == 0,
            _ => unreachable!(),
        };
        let mut atoms = Vec::new();
        for k in [-2, -1, 1, 2] {
            for c in -3..=3 {
                atoms.push(Atom::Le(x(k, c)));
                atoms.push(Atom::Eq(x(k, c)));
            }
        }
        atoms.push(Atom::Le(Affine::constant(1)));
        atoms.push(Atom::Eq(Affine::constant(0)));
        for a in &atoms {
            for b in &atoms {
                let pair = [a.clone(), b.clone()];
                let possible = (-20..=20).any(|at| holds(a, at) && holds(b, at));
                if clashes(&pair) {
                    assert!(
                        !possible,
                        "{a:?} and {b:?} dropped, but both hold somewhere"
                    );
                }
                let unit = |e: &Affine| e.terms.iter().all(|t| t.1.abs() == 1);
                if unit(a.expr()) && unit(b.expr()) {
                    assert_eq!(clashes(&pair), !possible, "{a:?} and {b:?}");
                }
            }
        }
    }
}
