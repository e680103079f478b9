//! The references of a program and the dependence problem of a pair of them.
//!
//! Variables: the counters of the source's loops, the counters of the
//! destination's loops (common loops get one variable per side), an auxiliary
//! `s ≥ 0` per loop with a step (`i = lo + step·s`), and every parameter a
//! constraint mentions (unbounded unless an `assume` fact bounds it).
//!
//! Constraints, each one necessary for both accesses to run and meet:
//! - `for` bounds (affine in outer counters and parameters);
//! - a `while` counter is `≥ 0` and otherwise unbounded;
//! - `if` guards: the affine comparisons a static guard implies (the
//!   condition of the branch taken, the negations of the ones before it). A
//!   guard that reads memory (or is `...`) is unknown at analysis time as a
//!   whole, each instance either way (language contract): it adds nothing,
//!   and nothing is lost;
//! - affine `assume` facts;
//! - one equality per subscript dimension where both subscripts are affine.
//!
//! Whatever is left out is recorded as a [`Note`]; a note that is not exact
//! makes a "dependent" answer conservative. An `independent` answer is exact
//! whatever was left out (the problem only got bigger).
//!
//! Two accesses that can never run in the same instance of an `if` (different
//! branches), and an access paired with itself, are handled exactly by
//! excluding the direction vectors whose components up to that point are all
//! zero ([`PairProblem::exclude_zero_prefix`]).

use super::direction::PairProblem;
use super::problem::Problem;
use crate::model::{
    Access, AccessKind, Affine, CmpOp, Cond, Condition, CounterId, For, Node, ParamId, Program,
    Site, Stmt, Var, While,
};

/// A reference's identity: its site and its position among the site's
/// accesses (`Stmt::accesses()`, or a condition's reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RefId {
    pub site: Site,
    pub position: usize,
}

/// One array reference: an access of a statement or of a condition.
#[derive(Clone, Debug)]
pub struct Reference<'p> {
    pub site: Site,
    pub position: usize,
    /// `None` for a statement's target (plain or compound), else the read's
    /// index in `Stmt::reads()` (or `Condition::reads()`).
    pub read: Option<usize>,
    pub access: &'p Access,
    pub kind: AccessKind,
    /// Textual order of the site (statements and conditions interleaved).
    pub order: usize,
    frames: Vec<Frame<'p>>,
}

#[derive(Clone, Copy, Debug)]
enum Frame<'p> {
    For(&'p For),
    While(&'p While),
    /// A guard of an `if` branch: the condition holds (`true`) or not.
    Guard(&'p Condition, bool),
    /// Inside `if` number `id`: in the body of branch `k` (the `else` body is
    /// branch `len`), or the test of condition `k`.
    In {
        id: usize,
        pos: IfPos,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum IfPos {
    Body(usize),
    Test(usize),
}

/// Every reference in textual order: sites in order, accesses of a site in
/// `Stmt::accesses()` order (a condition's reads in source order).
pub fn references(program: &Program) -> Vec<Reference<'_>> {
    let mut w = Walker {
        out: Vec::new(),
        frames: Vec::new(),
        order: 0,
        ifs: 0,
    };
    w.nodes(&program.body);
    w.out
}

struct Walker<'p> {
    out: Vec<Reference<'p>>,
    frames: Vec<Frame<'p>>,
    order: usize,
    ifs: usize,
}

impl<'p> Walker<'p> {
    fn nodes(&mut self, nodes: &'p [Node]) {
        for n in nodes {
            match n {
                Node::Stmt(s) => self.stmt(s),
                Node::For(f) => {
                    self.frames.push(Frame::For(f));
                    self.nodes(&f.body);
                    self.frames.pop();
                }
                Node::While(w) => {
                    self.frames.push(Frame::While(w));
                    self.cond(&w.cond);
                    self.nodes(&w.body);
                    self.frames.pop();
                }
                Node::If(i) => {
                    let id = self.ifs;
                    self.ifs += 1;
                    let base = self.frames.len();
                    for (k, (c, body)) in i.branches.iter().enumerate() {
                        self.frames.push(Frame::In {
                            id,
                            pos: IfPos::Test(k),
                        });
                        self.cond(c);
                        self.frames.pop();
                        self.frames.push(Frame::Guard(c, true));
                        self.frames.push(Frame::In {
                            id,
                            pos: IfPos::Body(k),
                        });
                        self.nodes(body);
                        self.frames.pop();
                        self.frames.pop();
                        self.frames.push(Frame::Guard(c, false));
                    }
                    if let Some(e) = &i.otherwise {
                        self.frames.push(Frame::In {
                            id,
                            pos: IfPos::Body(i.branches.len()),
                        });
                        self.nodes(e);
                    }
                    self.frames.truncate(base);
                }
            }
        }
    }

    fn stmt(&mut self, s: &'p Stmt) {
        let order = self.order;
        self.order += 1;
        let mut reads = 0;
        for (position, a) in s.accesses().into_iter().enumerate() {
            let read = match a.kind {
                AccessKind::Write | AccessKind::Update => None,
                AccessKind::Read => Some(reads),
            };
            if a.kind.reads() {
                reads += 1;
            }
            self.out.push(Reference {
                site: Site::Stmt(s.id),
                position,
                read,
                access: a.access,
                kind: a.kind,
                order,
                frames: self.frames.clone(),
            });
        }
    }

    fn cond(&mut self, c: &'p Condition) {
        let order = self.order;
        self.order += 1;
        let mut accesses = Vec::new();
        c.cond.collect_reads(&mut accesses);
        for (k, a) in accesses.into_iter().enumerate() {
            self.out.push(Reference {
                site: Site::Cond(c.id),
                position: k,
                read: Some(k),
                access: a.access,
                kind: AccessKind::Read,
                order,
                frames: self.frames.clone(),
            });
        }
    }
}

impl<'p> Reference<'p> {
    /// The loops around the reference, outermost first.
    pub fn loops(&self) -> Vec<CounterId> {
        self.frames
            .iter()
            .filter_map(|f| match f {
                Frame::For(f) => Some(f.counter),
                Frame::While(w) => Some(w.counter),
                _ => None,
            })
            .collect()
    }

    pub fn id(&self) -> RefId {
        RefId {
            site: self.site,
            position: self.position,
        }
    }

    /// The reference with its `if` guards dropped: a problem built from it
    /// has every solution of the guarded one (and perhaps more).
    pub fn unguarded(&self) -> Reference<'p> {
        let frames = (self.frames.iter())
            .filter(|f| matches!(f, Frame::For(_) | Frame::While(_)))
            .copied()
            .collect();
        Reference {
            frames,
            ..self.clone()
        }
    }

    /// The two are the same access of the same site.
    pub fn same(&self, other: &Reference<'_>) -> bool {
        self.id() == other.id()
    }
}

/// Something the problem leaves out or assumes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub text: String,
    /// Leaving it out cannot make a "dependent" answer wrong.
    pub exact: bool,
}

/// The problem of a pair, with its notes and the common loops' counters.
pub struct Built {
    pub pair: PairProblem,
    pub common: Vec<CounterId>,
    pub notes: Vec<Note>,
}

/// The dependence problem of `src` and `dst`.
pub fn build(program: &Program, src: &Reference<'_>, dst: &Reference<'_>) -> Built {
    let mut b = Builder {
        program,
        n: 0,
        indices: Vec::new(),
        params: Vec::new(),
        eqs: Vec::new(),
        ineqs: Vec::new(),
        notes: Vec::new(),
    };
    let src_map = b.side(src, "source");
    let dst_map = b.side(dst, "destination");
    for (k, a) in program.assumptions.iter().enumerate() {
        if !b.cond(&src_map, a, true) {
            b.note(
                format!(
                    "assumption {} is not a conjunction of affine comparisons: ignored",
                    k + 1
                ),
                false,
            );
        }
    }
    let (sa, da) = (src.access, dst.access);
    // An extension access touches cells its kind decides: compare none.
    let ext = sa.ext.as_ref().or(da.ext.as_ref());
    if let Some(x) = ext {
        b.note(
            format!(
                "an access of kind `@{}`: its cells are not compared (every dimension may meet)",
                x.name
            ),
            false,
        );
    }
    let compared = if ext.is_some() {
        0
    } else {
        sa.subscripts.len()
    };
    for (k, (fs, fd)) in sa
        .subscripts
        .iter()
        .zip(&da.subscripts)
        .enumerate()
        .take(compared)
    {
        let diff = match (&fs.affine, &fd.affine) {
            (Some(f), Some(g)) => b
                .lin(&src_map, f)
                .zip(b.lin(&dst_map, g))
                .and_then(|(f, g)| f.sub(&g)),
            _ => None,
        };
        match diff {
            Some(d) => b.eqs.push(d),
            None => b.note(
                format!(
                    "subscript {} is not affine on both sides: that dimension is not compared",
                    k + 1
                ),
                false,
            ),
        }
    }
    if sa.subscripts.len() != da.subscripts.len() {
        b.note(
            "the two accesses have different numbers of subscripts".into(),
            false,
        );
    }
    let common: Vec<CounterId> = src
        .loops()
        .into_iter()
        .zip(dst.loops())
        .take_while(|(a, c)| a == c)
        .map(|(a, _)| a)
        .collect();
    let loops = common
        .iter()
        .map(|c| (col(&src_map, *c), col(&dst_map, *c)))
        .collect();
    let exclude = exclusive_prefix(src, dst, common.len());
    let n = b.n;
    let mut overflow = false;
    let mut problem = Problem::new(n);
    let mut dense = vec![0i64; n];
    for (rows, is_eq) in [(&b.eqs, true), (&b.ineqs, false)] {
        for s in rows {
            dense.iter_mut().for_each(|c| *c = 0);
            for &(j, c) in &s.terms {
                dense[j] = c;
            }
            // Σ terms + constant (= | ≤) 0, so the right-hand side is -constant.
            let Some(rhs) = s.constant.checked_neg() else {
                overflow = true;
                continue;
            };
            if is_eq {
                problem.add_eq(&dense, rhs);
            } else {
                problem.add_le(&dense, rhs);
            }
        }
    }
    if overflow {
        b.note("a constraint overflowed 64 bits: left out".into(), false);
    }
    let mut indices = b.indices;
    indices.resize(n, false);
    Built {
        pair: PairProblem {
            problem,
            loops,
            indices,
            exclude_zero_prefix: exclude,
        },
        common,
        notes: b.notes,
    }
}

fn col(map: &[(CounterId, usize)], c: CounterId) -> usize {
    map.iter().find(|(k, _)| *k == c).map_or(0, |&(_, v)| v)
}

/// How many leading common loops must not all have distance zero: the two
/// accesses are the same one (all loops), or sit where one `if` instance can
/// run only one of them (the loops around that `if`).
fn exclusive_prefix(src: &Reference<'_>, dst: &Reference<'_>, common: usize) -> Option<usize> {
    let mut prefix = None::<usize>;
    if src.same(dst) {
        prefix = Some(common);
    }
    let mut depth = 0;
    for f in &src.frames {
        match *f {
            Frame::For(_) | Frame::While(_) => depth += 1,
            Frame::In { id, pos } => {
                for g in &dst.frames {
                    if let Frame::In { id: id2, pos: pos2 } = *g {
                        if id == id2 && exclusive(pos, pos2) {
                            prefix = Some(prefix.map_or(depth, |p: usize| p.max(depth)));
                        }
                    }
                }
            }
            Frame::Guard(..) => {}
        }
    }
    prefix.map(|p| p.min(common))
}

/// Two positions in one instance of an `if` that cannot both be reached.
fn exclusive(a: IfPos, b: IfPos) -> bool {
    match (a, b) {
        (IfPos::Body(j), IfPos::Body(k)) => j != k,
        (IfPos::Body(j), IfPos::Test(k)) | (IfPos::Test(k), IfPos::Body(j)) => j < k,
        (IfPos::Test(_), IfPos::Test(_)) => false,
    }
}

/// `Σ terms + constant`, compared with zero.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sparse {
    pub terms: Vec<(usize, i64)>,
    pub constant: i64,
}

impl Sparse {
    pub fn add_scaled(&self, other: &Sparse, k: i64) -> Option<Sparse> {
        let mut out = self.clone();
        out.add_scaled_terms(&other.terms, other.constant, k)?;
        Some(out)
    }
    /// `self += k·(terms + constant)` in place: new variables appended in
    /// order, zero coefficients dropped (None on overflow, `self` then
    /// partly updated).
    pub fn add_scaled_terms(
        &mut self,
        terms: &[(usize, i64)],
        constant: i64,
        k: i64,
    ) -> Option<()> {
        for &(j, c) in terms {
            let c = c.checked_mul(k)?;
            match self.terms.iter_mut().find(|(v, _)| *v == j) {
                Some((_, e)) => *e = e.checked_add(c)?,
                None => self.terms.push((j, c)),
            }
        }
        self.terms.retain(|&(_, c)| c != 0);
        self.constant = self.constant.checked_add(constant.checked_mul(k)?)?;
        Some(())
    }
    pub fn sub(&self, other: &Sparse) -> Option<Sparse> {
        self.add_scaled(other, -1)
    }
    pub fn var(j: usize) -> Sparse {
        Sparse {
            terms: vec![(j, 1)],
            constant: 0,
        }
    }
    pub fn plus(mut self, k: i64) -> Option<Sparse> {
        self.constant = self.constant.checked_add(k)?;
        Some(self)
    }
}

struct Builder<'p> {
    program: &'p Program,
    n: usize,
    indices: Vec<bool>,
    params: Vec<(ParamId, usize)>,
    eqs: Vec<Sparse>,
    ineqs: Vec<Sparse>,
    notes: Vec<Note>,
}

impl Builder<'_> {
    fn fresh(&mut self, index: bool) -> usize {
        self.n += 1;
        self.indices.push(index);
        self.n - 1
    }

    fn note(&mut self, text: String, exact: bool) {
        let note = Note { text, exact };
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    /// An affine expression over one side's counters and the parameters.
    fn lin(&mut self, map: &[(CounterId, usize)], a: &Affine) -> Option<Sparse> {
        let mut s = Sparse {
            terms: Vec::with_capacity(a.terms.len()),
            constant: a.constant,
        };
        for &(v, c) in &a.terms {
            let j = match v {
                Var::Counter(k) => map.iter().find(|(m, _)| *m == k)?.1,
                Var::Param(p) => match self.params.iter().find(|(q, _)| *q == p) {
                    Some(&(_, j)) => j,
                    None => {
                        let j = self.fresh(false);
                        self.params.push((p, j));
                        j
                    }
                },
            };
            s.terms.push((j, c));
        }
        Some(s)
    }

    /// `e ≤ 0`, or a note when it could not be built.
    fn le0(&mut self, e: Option<Sparse>, what: &str) {
        match e {
            Some(e) => self.ineqs.push(e),
            None => self.note(format!("{what}: arithmetic overflow, left out"), false),
        }
    }

    /// The loops and guards of one side; returns its counter → variable map.
    fn side(&mut self, r: &Reference<'_>, which: &str) -> Vec<(CounterId, usize)> {
        let mut map: Vec<(CounterId, usize)> = Vec::new();
        for f in &r.frames {
            match *f {
                Frame::For(f) => {
                    let i = self.fresh(true);
                    let name = &self.program.counter_decl(f.counter).name;
                    let what = format!("bounds of loop `{name}`");
                    let lo = self.lin(&map, &f.lower.affine);
                    let hi = self.lin(&map, &f.upper.affine);
                    map.push((f.counter, i));
                    let var = Sparse::var(i);
                    // hi: i - U <= 0.
                    let upper = hi.and_then(|u| var.sub(&u));
                    self.le0(upper, &what);
                    if f.step == 1 {
                        // lo: L - i <= 0.
                        let lower = lo.and_then(|l| l.sub(&var));
                        self.le0(lower, &what);
                    } else {
                        // i = L + step·s with s >= 0.
                        let s = self.fresh(false);
                        let eq = lo.and_then(|l| var.add_scaled(&Sparse::var(s), -f.step)?.sub(&l));
                        match eq {
                            Some(e) => self.eqs.push(e),
                            None => {
                                self.note(format!("{what}: arithmetic overflow, left out"), false)
                            }
                        }
                        self.ineqs.push(Sparse {
                            terms: vec![(s, -1)],
                            constant: 0,
                        });
                    }
                }
                Frame::While(w) => {
                    let i = self.fresh(true);
                    map.push((w.counter, i));
                    self.ineqs.push(Sparse {
                        terms: vec![(i, -1)],
                        constant: 0,
                    });
                    let exact = !w.cond.cond.is_static();
                    self.note(
                        format!(
                            "while loop `{}`: its counter is an unbounded integer >= 0{}",
                            w.cond.name,
                            if exact {
                                " (its condition is unknown at analysis time, so every trip count can happen)"
                            } else {
                                "; its condition is ignored"
                            }
                        ),
                        exact,
                    );
                }
                Frame::Guard(c, positive) => {
                    if !self.cond(&map, &c.cond, positive) {
                        self.note(
                            format!(
                                "guard `{}` of the {which} is not a conjunction of affine comparisons: only its affine part is used",
                                c.name
                            ),
                            false,
                        );
                    }
                }
                Frame::In { .. } => {}
            }
        }
        map
    }

    /// Adds the affine constraints `c == positive` implies; returns whether
    /// they say exactly when it holds. A condition that reads memory (or is
    /// `...`) is unknown at analysis time as a whole: each instance may go
    /// either way (language contract), so it adds nothing and is exact.
    fn cond(&mut self, map: &[(CounterId, usize)], c: &Cond, positive: bool) -> bool {
        if !c.is_static() {
            return true;
        }
        self.necessary(map, c, positive)
    }

    /// For a static condition: the affine comparisons it implies.
    fn necessary(&mut self, map: &[(CounterId, usize)], c: &Cond, positive: bool) -> bool {
        match c {
            Cond::Cmp(op, l, r) => {
                let op = if positive { *op } else { negate(*op) };
                let (Some(la), Some(ra)) = (Affine::from_expr(l), Affine::from_expr(r)) else {
                    // Static but not affine (a product, a division).
                    return false;
                };
                let diff = self
                    .lin(map, &la)
                    .zip(self.lin(map, &ra))
                    .and_then(|(a, b)| a.sub(&b));
                let Some(diff) = diff else { return false };
                let zero = Sparse::default();
                let row = match op {
                    CmpOp::Lt => diff.plus(1),
                    CmpOp::Le => Some(diff),
                    CmpOp::Gt => zero.sub(&diff).and_then(|d| d.plus(1)),
                    CmpOp::Ge => zero.sub(&diff),
                    CmpOp::Eq => {
                        self.eqs.push(diff);
                        return true;
                    }
                    CmpOp::Ne => return false,
                };
                match row {
                    Some(r) => {
                        self.ineqs.push(r);
                        true
                    }
                    None => false,
                }
            }
            Cond::And(a, b) if positive => {
                let x = self.necessary(map, a, true);
                let y = self.necessary(map, b, true);
                x && y
            }
            Cond::Or(a, b) if !positive => {
                let x = self.necessary(map, a, false);
                let y = self.necessary(map, b, false);
                x && y
            }
            // A disjunction: nothing is necessary.
            Cond::And(..) | Cond::Or(..) => false,
            Cond::Not(a) => self.necessary(map, a, !positive),
            Cond::Unknown => true,
        }
    }
}

pub fn negate(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Eq => CmpOp::Ne,
        CmpOp::Ne => CmpOp::Eq,
        CmpOp::Lt => CmpOp::Ge,
        CmpOp::Le => CmpOp::Gt,
        CmpOp::Gt => CmpOp::Le,
        CmpOp::Ge => CmpOp::Lt,
    }
}
