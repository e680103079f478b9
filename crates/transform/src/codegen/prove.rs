//! A symbolic proof that an emitted program is static for every parameter
//! value: for every write w and
//! read r of an expanded array such that w may be a source of r, the label
//! w writes equals the label r reads. The source relation σ is replaced by
//! a superset, so equality over the superset implies it over σ:
//!
//! - w and r touch one cell (one variable per dimension, in the declared
//!   range; a non-affine subscript is any cell), run (loop bounds, the
//!   affine guards, unknown conditions free) and w ≺ r (lexicographic over
//!   the common loops, then textual order: one affine system per level);
//! - w is not killed: for a write K with affine subscripts, no `while`
//!   around it, step-1 loops and exact affine guards, an instance k of K
//!   determined by r (and the cell) is taken; w is killed when k runs,
//!   writes the cell and w ≺ k ≺ r; "not killed" is the disjunction of the
//!   negated conditions.
//!
//! The initial value is one more write, before every operation, of every
//! cell; it is in the original array and in every copied-in group (at every
//! label inside the group's declared box), so a read that may see it must
//! read the original array or a copied-in group inside its box.
//!
//! Every label must also exist: a write's label, where the write runs, and
//! a read's label, where the read may see the initial value, lie inside the
//! box the group is declared with (its cells and κ ranges, affine in the
//! parameters and fitted at the samples). An empty loop makes a box empty
//! (`1..M` at `M = 0`) while reads after the loop still run: a label such as
//! the last iteration's `(M, M)` would then be read outside the array.
//! [`guard_boxes`] splits such a read so that it reads the original array
//! where its label leaves the box.
//!
//! A bad pair is that system with the labels different (another group, or
//! some κ dimension `<` or `>`). Proved iff every bad pair's systems are
//! integer-infeasible by the exact tests of `dependence`, the parameters
//! being variables bounded only by the program's assumptions. An answer the
//! tests cannot give exactly (a cap) or a budget exceeded is "unknown".
//! The labels come in through [`Labels`] (per site, affine pieces), so the
//! prover does not depend on how `infer` finds them. docs/expansion.md §8.

use super::infer::{eval_at, ArrayForm, GroupBox, Test, Tree};
use crate::dependence::pairs::{negate as negate_op, Sparse as Lin};
use crate::dependence::{Config, Problem, Tester, Verdict};
use crate::model::{
    Access, Affine, ArrayId, CmpOp, Cond, CounterId, Node, Program, Site, StmtId, Var,
};
use std::collections::HashMap;

/// One piece of a label: under conditions (e ≤ 0 when true, e ≥ 1 when
/// false, over the site's counters and the parameters), the label: a group
/// and one affine κ function per dimension, or None (the original array).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    pub conds: Vec<(Test, bool)>,
    pub label: Option<(usize, Vec<Affine>)>,
}

/// Concrete label: None is the original array.
pub type Label = Option<(usize, Vec<i64>)>;

/// The closed-form labels of one array, as the emitter uses them: the
/// pieces of each writing statement and of each read (site, read index).
/// A site absent from the maps uses the original array.
#[derive(Clone, Debug)]
pub struct Labels {
    pub array: ArrayId,
    pub writes: HashMap<StmtId, Vec<Piece>>,
    pub reads: HashMap<(Site, usize), Vec<Piece>>,
    /// Per group: copied in from the original array before the program, so
    /// it holds the initial value wherever nothing wrote.
    pub copy_in: Vec<bool>,
    /// Per group: the box it is declared with (cells, then κ).
    pub boxes: Vec<GroupBox>,
}

impl Labels {
    /// The labels of `form` (writes: one piece per truth assignment of the
    /// statement's split conditions, group and κ counters) and `trees` (reads: one piece per leaf).
    pub fn new(form: &ArrayForm, trees: &HashMap<(Site, usize), Tree>) -> Labels {
        let mut writes = HashMap::new();
        for &(s, _) in form.atom_group.keys() {
            let id = StmtId(s as u32);
            if writes.contains_key(&id) {
                continue;
            }
            // The emitter's `write_access`: bit k set where condition k of
            // the statement holds; an atom without a group writes the
            // original array.
            let label = |bits: u32| {
                form.atom_group.get(&(s, bits)).map(|&g| {
                    let k = form.kappa[g]
                        .iter()
                        .map(|&c| Affine::var(Var::Counter(c)))
                        .collect();
                    (g, k)
                })
            };
            let conds = form.splits.get(&s).map_or(&[][..], |v| &v[..]);
            let pieces = (0..1u32 << conds.len())
                .map(|bits| Piece {
                    conds: conds
                        .iter()
                        .enumerate()
                        .map(|(k, e)| (Test::Le(e.clone()), bits & 1 << k != 0))
                        .collect(),
                    label: label(bits),
                })
                .collect();
            writes.insert(id, pieces);
        }
        let mut reads = HashMap::new();
        for (&key, t) in trees {
            let mut out = Vec::new();
            flatten(t, &mut Vec::new(), &mut out);
            reads.insert(key, out);
        }
        Labels {
            array: form.array,
            writes,
            reads,
            copy_in: form.copy_in.clone(),
            boxes: form.boxes.clone(),
        }
    }

    /// The label of a write of `stmt` at `iter` (its loops `loops`).
    pub fn write_at(&self, s: StmtId, loops: &[CounterId], iter: &[i64], params: &[i64]) -> Label {
        at(self.writes.get(&s), loops, iter, params)
    }

    /// The label read by read `k` of `site` at `iter`.
    pub fn read_at(
        &self,
        site: Site,
        k: usize,
        loops: &[CounterId],
        iter: &[i64],
        params: &[i64],
    ) -> Label {
        at(self.reads.get(&(site, k)), loops, iter, params)
    }
}

fn flatten(t: &Tree, path: &mut Vec<(Test, bool)>, out: &mut Vec<Piece>) {
    match t {
        Tree::Leaf(l) => out.push(Piece {
            conds: path.clone(),
            label: l.clone(),
        }),
        Tree::Split(e, yes, no) => {
            for (b, sub) in [(true, yes), (false, no)] {
                path.push((e.clone(), b));
                flatten(sub, path, out);
                path.pop();
            }
        }
    }
}

fn at(pieces: Option<&Vec<Piece>>, loops: &[CounterId], iter: &[i64], params: &[i64]) -> Label {
    let pieces = pieces?;
    let holds = |(t, b): &(Test, bool)| t.holds(|e| eval_at(e, loops, iter, params)) == Some(*b);
    let p = pieces.iter().find(|p| p.conds.iter().all(holds))?;
    let (g, ks) = p.label.as_ref()?;
    let ks = ks
        .iter()
        .map(|k| eval_at(k, loops, iter, params))
        .collect::<Option<Vec<i64>>>()?;
    Some((*g, ks))
}

/// The outcome of a proof attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Proof {
    /// Every bad-pair system is integer-infeasible.
    Proved,
    /// Some bad-pair system has an integer solution (in the superset of σ:
    /// the labels may still be right, the proof does not say).
    Refuted(String),
    /// A test was not exact (a cap, an overflow) or the shape is outside
    /// what the prover encodes.
    Unknown(String),
}

impl Proof {
    pub fn proved(&self) -> bool {
        *self == Proof::Proved
    }
}

/// The most tests one array's proof may run.
const BUDGET: usize = 20_000;

/// Proves the labels static for every parameter value satisfying the
/// program's assumptions (`program`: the program the labels were inferred
/// on, with its copy-out reads).
pub fn prove(program: &Program, labels: &Labels) -> Proof {
    let places = places(program);
    let mut tester = Tester::new(Config::default());
    let mut search = Search::new(&mut tester);
    let array = labels.array;
    let writers = writers(program, array);
    let readers = readers(program, array);
    let kills = kills(program, &places, &writers);
    let original = vec![Piece {
        conds: Vec::new(),
        label: None,
    }];
    let mut unknown: Option<String> = None;
    // Every write's label exists where the write runs.
    for &(s, wacc) in &writers {
        let ctx = Pair {
            program,
            places: &places,
            w: None,
            r: (Site::Stmt(s), wacc),
            kills: &[],
            copy_in: &labels.copy_in,
            boxes: &labels.boxes,
        };
        for piece in labels.writes.get(&s).map_or(&[][..], |v| &v[..]) {
            match ctx.leaves_box(&mut search, piece) {
                Found::None => {}
                Found::Some => {
                    return Proof::Refuted(format!(
                        "the label `{}` writes may lie outside the declared range of its expanded array",
                        program.site_name(Site::Stmt(s))
                    ))
                }
                Found::Unknown(why) => {
                    unknown.get_or_insert(format!(
                        "{why} (the range of `{}`'s label)",
                        program.site_name(Site::Stmt(s))
                    ));
                }
            }
        }
    }
    // The writes, then the initial value (None).
    let sources = writers
        .iter()
        .map(|&(w, wacc)| Some((Site::Stmt(w), wacc)))
        .chain([None]);
    for w in sources {
        let wp = match w {
            Some((Site::Stmt(s), _)) => labels.writes.get(&s).unwrap_or(&original),
            _ => &original,
        };
        let source = match w {
            Some((site, _)) => format!("`{}`", program.site_name(site)),
            None => "the initial value".to_string(),
        };
        for &(r, k, racc) in &readers {
            let rp = labels.reads.get(&(r, k)).unwrap_or(&original);
            let ctx = Pair {
                program,
                places: &places,
                w,
                r: (r, racc),
                kills: &kills,
                copy_in: &labels.copy_in,
                boxes: &labels.boxes,
            };
            match ctx.run(&mut search, wp, rp) {
                Found::None => {}
                Found::Some if w.is_none() => {
                    return Proof::Refuted(format!(
                        "{source} may be a source of {} with another label (or one outside \
                         the declared range of its expanded array)",
                        super::read_name::read_of(program, r, k)
                    ))
                }
                Found::Some => {
                    return Proof::Refuted(format!(
                        "{source} may be a source of {} with another label",
                        super::read_name::read_of(program, r, k)
                    ))
                }
                Found::Unknown(why) => {
                    unknown.get_or_insert(format!(
                        "{why} ({source} and {})",
                        super::read_name::read_of(program, r, k)
                    ));
                }
            }
        }
    }
    match unknown {
        Some(why) => Proof::Unknown(why),
        None => Proof::Proved,
    }
}

/// The statements writing `array`, with their write access.
fn writers(program: &Program, array: ArrayId) -> Vec<(StmtId, &Access)> {
    (program.stmts().into_iter())
        .filter_map(|s| s.write().map(|(a, _)| (s.id, a)))
        .filter(|(_, a)| a.array == array)
        .collect()
}

/// Every read of `array`: (site, read index, access).
fn readers(program: &Program, array: ArrayId) -> Vec<(Site, usize, &Access)> {
    let mut out = Vec::new();
    for s in program.stmts() {
        for (k, a) in s.reads().into_iter().enumerate() {
            if a.array == array {
                out.push((Site::Stmt(s.id), k, a));
            }
        }
    }
    for c in program.conditions() {
        for (k, a) in c.reads().into_iter().enumerate() {
            if a.array == array {
                out.push((Site::Cond(c.id), k, a));
            }
        }
    }
    out
}

/// A writer that can serve as a kill, with the place its instances are
/// taken from.
struct Kill<'a> {
    stmt: StmtId,
    access: &'a Access,
    place: Place,
    /// For a cover (`model::cover`): its `if`'s condition, left out of
    /// `place`. One of the `if`'s branches writes the cell, so an instance
    /// kills for a read outside that `if` whether or not the condition
    /// held; a read inside it takes no kill from the cover (a superset).
    cover: Option<Cond>,
}

/// The writers that can serve as kills: affine subscripts, exact places;
/// covers whose place is exact but for their own `if`.
fn kills<'a>(
    program: &Program,
    places: &HashMap<Site, Place>,
    writers: &[(StmtId, &'a Access)],
) -> Vec<Kill<'a>> {
    let covers = crate::model::cover::covers(program);
    let mut out = Vec::new();
    for &(stmt, access) in writers {
        let Some(place) = places.get(&Site::Stmt(stmt)).filter(|_| access.is_affine()) else {
            continue;
        };
        if place.exact() {
            let place = place.clone();
            out.push(Kill {
                stmt,
                access,
                place,
                cover: None,
            });
        } else if covers[stmt.index()] {
            let mut place = place.clone();
            if let Some((cond, true)) = place.guards.pop() {
                if place.exact() {
                    let cover = Some(cond);
                    out.push(Kill {
                        stmt,
                        access,
                        place,
                        cover,
                    });
                }
            }
        }
    }
    out
}

/// The read labels of `trees` (fitted at the samples) made to exist at
/// every parameter value: a leaf that reads a copied-in group where the
/// read may see the initial value with its label outside the group's
/// declared box (a box `1..M` is empty at `M = 0`, and a read after the
/// loop still runs) reads the original array there instead, which holds
/// the initial value throughout the expanded program. Each bound that may
/// be crossed becomes a split of the leaf; [`prove`] then checks the pieces
/// like any others (no write may reach the original array's piece).
pub fn guard_boxes(program: &Program, form: &ArrayForm, trees: &mut HashMap<(Site, usize), Tree>) {
    let places = places(program);
    let mut tester = Tester::new(Config::default());
    let mut search = Search::new(&mut tester);
    let writers = writers(program, form.array);
    let kills = kills(program, &places, &writers);
    let readers = readers(program, form.array);
    for (site, k, racc) in readers {
        let Some(t) = trees.get(&(site, k)) else {
            continue;
        };
        let ctx = Pair {
            program,
            places: &places,
            w: None,
            r: (site, racc),
            kills: &kills,
            copy_in: &form.copy_in,
            boxes: &form.boxes,
        };
        let Ok(f) = ctx.frame() else {
            continue; // left to `prove`, which says why
        };
        let guarded = guard_leaves(t, &mut Vec::new(), &mut |piece| {
            let copied =
                (piece.label.as_ref()).is_some_and(|(g, _)| form.copy_in.get(*g) == Some(&true));
            let Some(sides) = copied.then(|| ctx.outside(piece, &f).ok()).flatten() else {
                return Vec::new();
            };
            // Only the bounds the read may cross (and the original array
            // where the tests cannot tell).
            (sides.into_iter())
                .filter(|(atom, _)| {
                    let bad = vec![vec![atom.clone()]];
                    !matches!(
                        ctx.search(&mut search, &f, &[(piece, &f.er)], bad),
                        Found::None
                    )
                })
                .filter_map(|(_, inside)| inside)
                .collect()
        });
        trees.insert((site, k), guarded);
    }
}

/// `t` with each leaf wrapped in the splits `inside` gives it (each test
/// true inside the box; false: the original array).
fn guard_leaves(
    t: &Tree,
    path: &mut Vec<(Test, bool)>,
    inside: &mut dyn FnMut(&Piece) -> Vec<Test>,
) -> Tree {
    match t {
        Tree::Leaf(l) => {
            let piece = Piece {
                conds: path.clone(),
                label: l.clone(),
            };
            (inside(&piece).into_iter().rev()).fold(t.clone(), |yes, test| {
                Tree::Split(test, Box::new(yes), Box::new(Tree::Leaf(None)))
            })
        }
        Tree::Split(e, yes, no) => {
            path.push((e.clone(), true));
            let yes = guard_leaves(yes, path, inside);
            path.pop();
            path.push((e.clone(), false));
            let no = guard_leaves(no, path, inside);
            path.pop();
            Tree::Split(e.clone(), Box::new(yes), Box::new(no))
        }
    }
}

/// Where a site runs: its loops (outermost first), the guards around it
/// and its textual position (statements and conditions interleaved).
#[derive(Clone, Debug)]
struct Place {
    loops: Vec<Loop>,
    guards: Vec<(Cond, bool)>,
    order: usize,
}

#[derive(Clone, Debug)]
struct Loop {
    counter: CounterId,
    lo: Affine,
    hi: Affine,
    step: i64,
    /// A `while`: its counter is ≥ 0 and otherwise free.
    is_while: bool,
}

impl Place {
    /// Every instance's existence is exactly affine: no `while`, static
    /// affine guards (so it can serve as a kill). A loop with a step is
    /// exact on its grid, which `instance` keeps to.
    fn exact(&self) -> bool {
        self.loops.iter().all(|l| !l.is_while) && self.guards.iter().all(|(c, _)| affine_cond(c))
    }
}

fn affine_cond(c: &Cond) -> bool {
    match c {
        Cond::Cmp(_, l, r) => Affine::from_expr(l).is_some() && Affine::from_expr(r).is_some(),
        Cond::And(a, b) | Cond::Or(a, b) => affine_cond(a) && affine_cond(b),
        Cond::Not(a) => affine_cond(a),
        Cond::Unknown => false,
    }
}

fn places(p: &Program) -> HashMap<Site, Place> {
    struct W {
        loops: Vec<Loop>,
        guards: Vec<(Cond, bool)>,
        order: usize,
        out: HashMap<Site, Place>,
    }
    impl W {
        fn here(&mut self, site: Site) {
            self.out.insert(
                site,
                Place {
                    loops: self.loops.clone(),
                    guards: self.guards.clone(),
                    order: self.order,
                },
            );
            self.order += 1;
        }
        fn nodes(&mut self, nodes: &[Node]) {
            for n in nodes {
                match n {
                    Node::Stmt(s) => self.here(Site::Stmt(s.id)),
                    Node::For(f) => {
                        self.loops.push(Loop {
                            counter: f.counter,
                            lo: f.lower.affine.clone(),
                            hi: f.upper.affine.clone(),
                            step: f.step,
                            is_while: false,
                        });
                        self.nodes(&f.body);
                        self.loops.pop();
                    }
                    Node::While(w) => {
                        self.loops.push(Loop {
                            counter: w.counter,
                            lo: Affine::constant(0),
                            hi: Affine::constant(0),
                            step: 1,
                            is_while: true,
                        });
                        self.here(Site::Cond(w.cond.id));
                        self.nodes(&w.body);
                        self.loops.pop();
                    }
                    Node::If(i) => {
                        let base = self.guards.len();
                        for (c, body) in &i.branches {
                            self.here(Site::Cond(c.id));
                            self.guards.push((c.cond.clone(), true));
                            self.nodes(body);
                            self.guards.pop();
                            self.guards.push((c.cond.clone(), false));
                        }
                        if let Some(b) = &i.otherwise {
                            self.nodes(b);
                        }
                        self.guards.truncate(base);
                    }
                }
            }
        }
    }
    let mut w = W {
        loops: Vec::new(),
        guards: Vec::new(),
        order: 0,
        out: HashMap::new(),
    };
    w.nodes(&p.body);
    w.out
}

/// `-x`.
fn neg(x: &Lin) -> Option<Lin> {
    Lin::default().sub(x)
}

/// `e ≤ 0` or `e = 0`.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Atom {
    Le(Lin),
    Eq(Lin),
}

/// A disjunction of conjunctions.
type Dnf = Vec<Vec<Atom>>;

/// a < b, as `a - b + 1 ≤ 0`.
fn lt(a: &Lin, b: &Lin) -> Option<Atom> {
    Some(Atom::Le(a.sub(b)?.plus(1)?))
}

/// The alternatives of ¬atom.
fn negate(a: &Atom) -> Option<Vec<Atom>> {
    Some(match a {
        Atom::Le(e) => vec![Atom::Le(neg(e)?.plus(1)?)],
        Atom::Eq(e) => vec![Atom::Le(e.clone().plus(1)?), Atom::Le(neg(e)?.plus(1)?)],
    })
}

/// Maps a site's counters and the parameters to system variables.
#[derive(Clone, Debug, Default)]
struct Env {
    params: Vec<usize>,
    counters: Counters,
}

/// Counter -> its value, for the few counters of one site (a linear
/// search beats hashing at this size).
#[derive(Clone, Debug, Default)]
struct Counters(Vec<(CounterId, Lin)>);

impl Counters {
    fn get(&self, k: &CounterId) -> Option<&Lin> {
        self.0.iter().find(|(c, _)| c == k).map(|(_, l)| l)
    }

    fn contains_key(&self, k: &CounterId) -> bool {
        self.get(k).is_some()
    }

    fn insert(&mut self, k: CounterId, v: Lin) {
        match self.0.iter_mut().find(|(c, _)| *c == k) {
            Some((_, l)) => *l = v,
            None => self.0.push((k, v)),
        }
    }

    fn iter(&self) -> impl Iterator<Item = (&CounterId, &Lin)> {
        self.0.iter().map(|(c, l)| (c, l))
    }
}

impl Env {
    fn lin(&self, a: &Affine) -> Option<Lin> {
        let mut out = Lin {
            terms: Vec::with_capacity(a.terms.len()),
            constant: a.constant,
        };
        for &(v, c) in &a.terms {
            match v {
                Var::Param(p) => {
                    out.add_scaled_terms(&[(*self.params.get(p.index())?, 1)], 0, c)?
                }
                Var::Counter(k) => {
                    let x = self.counters.get(&k)?;
                    out.add_scaled_terms(&x.terms, x.constant, c)?
                }
            }
        }
        Some(out)
    }

    /// The DNF of `c == positive` (None: not affine, unknown, or too big).
    fn dnf(&self, c: &Cond, positive: bool) -> Option<Dnf> {
        Some(match c {
            Cond::Cmp(op, l, r) => {
                let d = self
                    .lin(&Affine::from_expr(l)?)?
                    .sub(&self.lin(&Affine::from_expr(r)?)?)?;
                let op = if positive { *op } else { negate_op(*op) };
                match op {
                    CmpOp::Lt => vec![vec![Atom::Le(d.plus(1)?)]],
                    CmpOp::Le => vec![vec![Atom::Le(d)]],
                    CmpOp::Gt => vec![vec![Atom::Le(neg(&d)?.plus(1)?)]],
                    CmpOp::Ge => vec![vec![Atom::Le(neg(&d)?)]],
                    CmpOp::Eq => vec![vec![Atom::Eq(d)]],
                    CmpOp::Ne => negate(&Atom::Eq(d))?.into_iter().map(|a| vec![a]).collect(),
                }
            }
            Cond::And(a, b) | Cond::Or(a, b) => {
                let both = matches!(c, Cond::And(..)) == positive;
                let (x, y) = (self.dnf(a, positive)?, self.dnf(b, positive)?);
                if both {
                    if x.len() * y.len() > 16 {
                        return None;
                    }
                    let mut out = Vec::new();
                    for p in &x {
                        for q in &y {
                            out.push(p.iter().chain(q).cloned().collect());
                        }
                    }
                    out
                } else {
                    x.into_iter().chain(y).collect()
                }
            }
            Cond::Not(a) => self.dnf(a, !positive)?,
            Cond::Unknown => return None,
        })
    }
}

/// What a search found.
enum Found {
    /// Every system is infeasible.
    None,
    /// Some system has an integer solution.
    Some,
    Unknown(String),
}

/// Depth-first search over the choices of a conjunction of disjunctions,
/// pruning a branch as soon as its conjunction is infeasible.
struct Search<'t> {
    tester: &'t mut Tester,
    n: usize,
    tests: usize,
    /// Reused by every test (a conjunction is rebuilt row by row).
    problem: Problem,
    dense: Vec<i64>,
}

impl<'t> Search<'t> {
    fn new(tester: &'t mut Tester) -> Search<'t> {
        Search {
            tester,
            n: 0,
            tests: 0,
            problem: Problem::new(0),
            dense: Vec::new(),
        }
    }

    fn test(&mut self, atoms: &[&Atom]) -> Option<Verdict> {
        let p = &mut self.problem;
        p.eqs.reset(self.n);
        p.ineqs.reset(self.n);
        self.dense.resize(self.n, 0);
        for a in atoms {
            let (Atom::Le(e) | Atom::Eq(e)) = a;
            self.dense.iter_mut().for_each(|c| *c = 0);
            for &(j, c) in &e.terms {
                self.dense[j] = c;
            }
            let rhs = e.constant.checked_neg()?;
            match a {
                Atom::Le(_) => p.add_le(&self.dense, rhs),
                Atom::Eq(_) => p.add_eq(&self.dense, rhs),
            }
        }
        Some(self.tester.test_distinct(p).verdict)
    }

    fn run<'a>(&mut self, base: &mut Vec<&'a Atom>, rest: &[&'a Dnf]) -> Found {
        self.run_from(base, rest, None)
    }

    /// `known`: the verdict of `base` when the caller already has it (an
    /// empty alternative leaves the conjunction as it was).
    fn run_from<'a>(
        &mut self,
        base: &mut Vec<&'a Atom>,
        rest: &[&'a Dnf],
        known: Option<Verdict>,
    ) -> Found {
        if self.tests >= BUDGET {
            return Found::Unknown(format!("the proof needs more than {BUDGET} tests"));
        }
        self.tests += 1;
        let v = match known.or_else(|| self.test(base)) {
            Some(v) => v,
            None => return Found::Unknown("arithmetic overflow".into()),
        };
        if v == Verdict::Independent {
            return Found::None;
        }
        let Some((first, rest)) = rest.split_first() else {
            return match v {
                Verdict::Maybe(why) => Found::Unknown(why.describe().into()),
                _ => Found::Some,
            };
        };
        let mut unknown = None;
        for alt in first.iter() {
            let len = base.len();
            base.extend(alt.iter());
            let f = self.run_from(base, rest, alt.is_empty().then_some(v));
            base.truncate(len);
            match f {
                Found::Some => return Found::Some,
                Found::Unknown(w) => {
                    unknown.get_or_insert(w);
                }
                Found::None => {}
            }
        }
        unknown.map_or(Found::None, Found::Unknown)
    }
}

/// One (write statement, read) pair; `w` None is the initial value.
struct Pair<'a> {
    program: &'a Program,
    places: &'a HashMap<Site, Place>,
    w: Option<(Site, &'a Access)>,
    r: (Site, &'a Access),
    kills: &'a [Kill<'a>],
    copy_in: &'a [bool],
    boxes: &'a [GroupBox],
}

/// The part of a pair's system its label pieces share (`Pair::frame`).
struct Frame {
    sys: Sys,
    ew: Env,
    er: Env,
    xs: Vec<usize>,
    kills: Vec<Dnf>,
}

/// A system under construction: conjunction `base` and disjunctions `dnfs`.
#[derive(Default)]
struct Sys {
    n: usize,
    base: Vec<Atom>,
    dnfs: Vec<Dnf>,
    /// Some part could not be encoded (overflow).
    broken: bool,
}

impl Sys {
    fn fresh(&mut self) -> usize {
        self.n += 1;
        self.n - 1
    }

    fn atom(&mut self, a: Option<Atom>) {
        match a {
            Some(a) => self.base.push(a),
            None => self.broken = true,
        }
    }

    fn le(&mut self, a: Option<Lin>, b: Option<Lin>) {
        let e = a.zip(b).and_then(|(a, b)| a.sub(&b));
        self.atom(e.map(Atom::Le));
    }

    fn eq(&mut self, a: Option<Lin>, b: Option<Lin>) {
        let e = a.zip(b).and_then(|(a, b)| a.sub(&b));
        self.atom(e.map(Atom::Eq));
    }

    /// A disjunction (one alternative goes to the base).
    fn dnf(&mut self, d: Dnf) {
        if d.len() == 1 {
            self.base.extend(d.into_iter().flatten());
        } else {
            self.dnfs.push(d);
        }
    }

    /// The variables of one side's instance: loop bounds and the affine
    /// guards it needs (a superset of the instances that run).
    fn side(&mut self, params: &[usize], place: &Place) -> Env {
        let mut env = Env {
            params: params.to_vec(),
            counters: Counters::default(),
        };
        for l in &place.loops {
            let i = self.fresh();
            let x = Some(Lin::var(i));
            if l.is_while {
                self.le(Some(Lin::default()), x);
            } else {
                let (lo, hi) = (env.lin(&l.lo), env.lin(&l.hi));
                self.le(x.clone(), hi);
                if l.step == 1 {
                    self.le(lo, x);
                } else {
                    // i = lo + step·s, s ≥ 0.
                    let s = self.fresh();
                    let e = lo.and_then(|lo| lo.add_scaled(&Lin::var(s), l.step));
                    self.eq(x, e);
                    self.le(Some(Lin::default()), Some(Lin::var(s)));
                }
            }
            env.counters.insert(l.counter, Lin::var(i));
        }
        for (c, pos) in &place.guards {
            // Not affine or unknown: free (a superset).
            if let Some(d) = env.dnf(c, *pos) {
                self.dnf(d);
            }
        }
        env
    }

    /// The access touches the cell `xs` (a non-affine dimension: any cell).
    fn touches(&mut self, env: &Env, a: &Access, xs: &[usize]) {
        for (s, &x) in a.subscripts.iter().zip(xs) {
            if let Some(f) = &s.affine {
                self.eq(env.lin(f), Some(Lin::var(x)));
            }
        }
    }
}

/// a ≺ b: one alternative per level of the common loops, plus textual
/// order when every common counter is equal.
fn before(a: (&Place, &Env), b: (&Place, &Env)) -> Option<Dnf> {
    let common = common(a.0, b.0);
    let mut out = Vec::new();
    let mut eqs = Vec::new();
    for l in &a.0.loops[..common] {
        let (x, y) = (a.1.counters.get(&l.counter)?, b.1.counters.get(&l.counter)?);
        let mut alt = eqs.clone();
        alt.push(lt(x, y)?);
        out.push(alt);
        eqs.push(Atom::Eq(x.sub(y)?));
    }
    if a.0.order < b.0.order {
        out.push(eqs);
    }
    Some(out)
}

/// The same operation (same site, every counter equal).
fn same(site_a: Site, a: (&Place, &Env), site_b: Site, b: (&Place, &Env)) -> Option<Dnf> {
    if site_a != site_b {
        return Some(Vec::new());
    }
    let mut eqs = Vec::new();
    for l in &a.0.loops {
        let (x, y) = (a.1.counters.get(&l.counter)?, b.1.counters.get(&l.counter)?);
        eqs.push(Atom::Eq(x.sub(y)?));
    }
    Some(vec![eqs])
}

fn common(a: &Place, b: &Place) -> usize {
    a.loops
        .iter()
        .zip(&b.loops)
        .take_while(|(x, y)| x.counter == y.counter)
        .count()
}

/// Which instance of a kill statement is taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    /// Loops common with r at r's values.
    Same,
    /// Common loops before level l at r's values, level l one less.
    Prev(usize),
    /// No counter bound to r: the last iteration of each loop.
    Last,
    /// No counter bound to r: the first iteration of each loop (a kill of
    /// the initial value needs only some write before r, and the first one
    /// runs where a guard cuts the last one off).
    First,
}

impl Pair<'_> {
    fn place(&self, s: Site) -> Option<&Place> {
        self.places.get(&s)
    }

    /// The write's place; Some(None) for the initial value.
    fn w_place(&self) -> Option<Option<&Place>> {
        match self.w {
            Some((s, _)) => self.place(s).map(Some),
            None => Some(None),
        }
    }

    /// The system every label piece of the pair shares: the parameters
    /// under the assumptions, the cell in the declared range, both sides
    /// running and touching it, w ≺ r, and the kills' "not killed".
    fn frame(&self) -> Result<Frame, String> {
        let (Some(pw), Some(pr)) = (self.w_place(), self.place(self.r.0)) else {
            return Err("a site outside the program".into());
        };
        let overflow = || "arithmetic overflow".to_string();
        let p = self.program;
        let mut sys = Sys::default();
        let params: Vec<usize> = (0..p.params.len()).map(|_| sys.fresh()).collect();
        let penv = Env {
            params: params.clone(),
            counters: Counters::default(),
        };
        for a in &p.assumptions {
            // Not affine: ignored (a superset).
            if let Some(d) = penv.dnf(a, true) {
                sys.dnf(d);
            }
        }
        let decl = p.array_decl(self.r.1.array);
        let xs: Vec<usize> = decl.dims.iter().map(|_| sys.fresh()).collect();
        for (r, &x) in decl.dims.iter().zip(&xs) {
            let x = Some(Lin::var(x));
            sys.le(penv.lin(&r.lo.affine), x.clone());
            sys.le(x, penv.lin(&r.hi.affine));
        }
        // The initial value writes every cell before everything: no loops,
        // no subscripts, no order.
        let ew = match (pw, self.w) {
            (Some(pw), Some((_, wacc))) => {
                let ew = sys.side(&params, pw);
                sys.touches(&ew, wacc, &xs);
                ew
            }
            _ => penv.clone(),
        };
        let er = sys.side(&params, pr);
        sys.touches(&er, self.r.1, &xs);
        if let Some(pw) = pw {
            sys.dnf(before((pw, &ew), (pr, &er)).ok_or_else(overflow)?);
        }
        let mut kills = Vec::new();
        for kill in self.kills {
            let (k, kacc, pk) = (kill.stmt, kill.access, &kill.place);
            if let Some(c) = &kill.cover {
                if pr.guards.iter().any(|(g, _)| g == c) {
                    continue;
                }
            }
            let mut seen: Vec<Vec<(CounterId, Lin)>> = Vec::new();
            let levels = common(pk, pr);
            let variants = [Variant::Same, Variant::Last, Variant::First]
                .into_iter()
                .chain((0..levels).map(Variant::Prev));
            for v in variants {
                let Some(inst) = instance(pk, kacc, &er, pr, &xs, &params, v) else {
                    continue;
                };
                let mut key: Vec<(CounterId, Lin)> =
                    inst.counters.iter().map(|(c, l)| (*c, l.clone())).collect();
                key.sort_by_key(|x| x.0);
                if seen.contains(&key) {
                    continue;
                }
                seen.push(key);
                if let Some(d) = self.not_killed(Site::Stmt(k), pk, kacc, &inst, &ew, &er, &xs) {
                    kills.push(d);
                }
            }
        }
        if sys.broken {
            return Err(overflow());
        }
        Ok(Frame {
            sys,
            ew,
            er,
            xs,
            kills,
        })
    }

    /// Whether the frame, the conditions of `pieces` (each over its side's
    /// variables) and one alternative of `bad` have an integer solution.
    fn search(&self, search: &mut Search, f: &Frame, pieces: &[(&Piece, &Env)], bad: Dnf) -> Found {
        let mut own = Vec::new();
        for (piece, env) in pieces {
            for (t, holds) in &piece.conds {
                let Test::Le(e) = t else {
                    return Found::Unknown("a stride condition".into());
                };
                let Some(e) = env.lin(e) else {
                    return Found::Unknown("a label condition outside the site".into());
                };
                let atom = if *holds {
                    Some(Atom::Le(e))
                } else {
                    neg(&e).and_then(|e| e.plus(1)).map(Atom::Le)
                };
                match atom {
                    Some(a) => own.push(a),
                    None => return Found::Unknown("arithmetic overflow".into()),
                }
            }
        }
        search.n = f.sys.n;
        let mut base: Vec<&Atom> = f.sys.base.iter().chain(&own).collect();
        let dnfs: Vec<&Dnf> = f.sys.dnfs.iter().chain([&bad]).chain(&f.kills).collect();
        search.run(&mut base, &dnfs)
    }

    /// The ways r's label in `piece` may leave its group's declared box:
    /// per bound crossed, the atom that says so (over the frame's
    /// variables) and the test that holds inside it (over r's site, None
    /// for a subscript that is not affine). Empty for the original array.
    fn outside(&self, piece: &Piece, f: &Frame) -> Result<Vec<(Atom, Option<Test>)>, String> {
        let Some((g, ks)) = &piece.label else {
            return Ok(Vec::new());
        };
        let gb = (self.boxes.get(*g)).ok_or("a group without a declared box")?;
        let kb = (gb.kappa.as_ref()).ok_or("a label counter has no affine box")?;
        let overflow = || "arithmetic overflow".to_string();
        let mut out = Vec::new();
        let mut bound = |x: &Lin, e: Option<&Affine>, lo: &Affine, hi: &Affine| {
            let (l, h) = (f.er.lin(lo), f.er.lin(hi));
            let (l, h) = l.zip(h).ok_or_else(overflow)?;
            let below = lt(x, &l).ok_or_else(overflow)?;
            let above = lt(&h, x).ok_or_else(overflow)?;
            let inside_lo = e.map(|e| lo.checked_sub(e).map(Test::Le));
            let inside_hi = e.map(|e| e.checked_sub(hi).map(Test::Le));
            let test = |t: Option<Option<Test>>| t.map(|t| t.ok_or_else(overflow)).transpose();
            out.push((below, test(inside_lo)?));
            out.push((above, test(inside_hi)?));
            Ok::<(), String>(())
        };
        // A group declared over fewer cells than the array: the read's cell.
        for (d, (lo, hi)) in gb.cells.iter().flatten().enumerate() {
            let x = Lin::var(*f.xs.get(d).ok_or("a cell box of another rank")?);
            let sub = self.r.1.subscripts.get(d).and_then(|s| s.affine.as_ref());
            bound(&x, sub, lo, hi)?;
        }
        if ks.len() != kb.len() {
            return Err("a label of another rank than its group".into());
        }
        for (k, (lo, hi)) in ks.iter().zip(kb) {
            let x = f.er.lin(k).ok_or_else(overflow)?;
            bound(&x, Some(k), lo, hi)?;
        }
        Ok(out)
    }

    /// Whether r may run with the label of `piece` outside its group's box
    /// (with `w` None and kills, while the initial value may reach r).
    fn leaves_box(&self, search: &mut Search, piece: &Piece) -> Found {
        let f = match self.frame() {
            Ok(f) => f,
            Err(why) => return Found::Unknown(why),
        };
        let bad = match self.outside(piece, &f) {
            Ok(sides) => sides.into_iter().map(|(a, _)| vec![a]).collect(),
            Err(why) => return Found::Unknown(why),
        };
        self.search(search, &f, &[(piece, &f.er)], bad)
    }

    fn run(&self, search: &mut Search, wp: &[Piece], rp: &[Piece]) -> Found {
        let f = match self.frame() {
            Ok(f) => f,
            Err(why) => return Found::Unknown(why),
        };
        let mut unknown = None;
        for a in wp {
            for b in rp {
                let Some(differ) = differ(a, &f.ew, b, &f.er) else {
                    return Found::Unknown("arithmetic overflow".into());
                };
                let initial_there = self.w.is_none()
                    && b.label
                        .as_ref()
                        .is_some_and(|(g, _)| self.copy_in.get(*g) == Some(&true));
                // A copied-in group holds the initial value, but only at
                // the labels inside its declared box.
                let bad = if initial_there {
                    match self.outside(b, &f) {
                        Ok(sides) => sides.into_iter().map(|(a, _)| vec![a]).collect(),
                        Err(why) => return Found::Unknown(why),
                    }
                } else {
                    differ
                };
                if bad.is_empty() {
                    continue;
                }
                match self.search(search, &f, &[(a, &f.ew), (b, &f.er)], bad) {
                    Found::None => {}
                    Found::Some => return Found::Some,
                    Found::Unknown(w) => {
                        unknown.get_or_insert(w);
                    }
                }
            }
        }
        unknown.map_or(Found::None, Found::Unknown)
    }

    /// ¬(k runs ∧ k writes the cell ∧ w ≺ k ≺ r) as one disjunction.
    #[allow(clippy::too_many_arguments)]
    fn not_killed(
        &self,
        site: Site,
        pk: &Place,
        kacc: &Access,
        ek: &Env,
        ew: &Env,
        er: &Env,
        xs: &[usize],
    ) -> Option<Dnf> {
        let pw = self.w_place()?;
        let pr = self.place(self.r.0)?;
        let mut out: Dnf = Vec::new();
        let mut neg = |a: Atom| -> Option<()> {
            for n in negate(&a)? {
                out.push(vec![n]);
            }
            Some(())
        };
        for l in &pk.loops {
            let x = ek.counters.get(&l.counter)?;
            neg(Atom::Le(ek.lin(&l.lo)?.sub(x)?))?;
            neg(Atom::Le(x.sub(&ek.lin(&l.hi)?)?))?;
        }
        for (s, &x) in kacc.subscripts.iter().zip(xs) {
            let f = ek.lin(s.affine.as_ref()?)?;
            let e = f.sub(&Lin::var(x))?;
            if !e.terms.is_empty() || e.constant != 0 {
                neg(Atom::Eq(e))?;
            }
        }
        for (c, pos) in &pk.guards {
            out.extend(ek.dnf(c, !pos)?);
        }
        // ¬(w ≺ k) = k ≺ w ∨ k = w (never for the initial value);
        // ¬(k ≺ r) = r ≺ k ∨ r = k.
        if let (Some(pw), Some((w, _))) = (pw, self.w) {
            out.extend(before((pk, ek), (pw, ew))?);
            out.extend(same(site, (pk, ek), w, (pw, ew))?);
        }
        out.extend(before((pr, er), (pk, ek))?);
        out.extend(same(self.r.0, (pr, er), site, (pk, ek))?);
        Some(out)
    }
}

/// The labels of two pieces differ: another group (always), or some κ
/// dimension `<` or `>`. Empty: they are equal.
fn differ(a: &Piece, ea: &Env, b: &Piece, eb: &Env) -> Option<Dnf> {
    let always = Some(vec![Vec::new()]);
    match (&a.label, &b.label) {
        (None, None) => Some(Vec::new()),
        (None, Some(_)) | (Some(_), None) => always,
        (Some((g, ka)), Some((h, kb))) => {
            if g != h || ka.len() != kb.len() {
                return always;
            }
            let mut out = Vec::new();
            for (x, y) in ka.iter().zip(kb) {
                let (x, y) = (ea.lin(x)?, eb.lin(y)?);
                let d = x.sub(&y)?;
                if d.terms.is_empty() && d.constant == 0 {
                    continue;
                }
                out.push(vec![lt(&x, &y)?]);
                out.push(vec![lt(&y, &x)?]);
            }
            Some(out)
        }
    }
}

/// The instance of kill statement K determined by r and the cell: counters
/// solved from K's subscripts and guard equalities (coefficient ±1), else
/// bound as `variant` says, else at the loop's upper bound (its lower one
/// for `First`; outermost first). None when some counter stays free.
fn instance(
    pk: &Place,
    kacc: &Access,
    er: &Env,
    pr: &Place,
    xs: &[usize],
    params: &[usize],
    variant: Variant,
) -> Option<Env> {
    let mut env = Env {
        params: params.to_vec(),
        counters: Counters::default(),
    };
    // Equations `f = x`, as (f, Some(x)), and guard equalities `f = 0`.
    let mut eqs: Vec<(Affine, Option<usize>)> = Vec::new();
    for (s, &x) in kacc.subscripts.iter().zip(xs) {
        eqs.push((s.affine.clone()?, Some(x)));
    }
    for (c, pos) in &pk.guards {
        guard_eqs(c, *pos, &mut eqs);
    }
    let levels = common(pk, pr);
    // Counters solved from equations: off the grid of a loop with a step.
    let mut solved = Vec::new();
    loop {
        let mut progress = true;
        while progress {
            progress = false;
            for (f, x) in &eqs {
                // f(k) - x = 0 with exactly one free counter.
                let mut known = match x {
                    Some(x) => neg(&Lin::var(*x))?,
                    None => Lin::default(),
                };
                known.constant = f.constant;
                let mut free = Vec::new();
                for &(v, c) in &f.terms {
                    match v {
                        Var::Counter(k) if !env.counters.contains_key(&k) => free.push((k, c)),
                        _ => known = known.add_scaled(&env.lin(&Affine::var(v))?, c)?,
                    }
                }
                if let [(k, c)] = free[..] {
                    if c == 1 || c == -1 {
                        // c·k + known = 0 → k = -c·known.
                        env.counters
                            .insert(k, Lin::default().add_scaled(&known, -c)?);
                        solved.push(k);
                        progress = true;
                    }
                }
            }
        }
        let Some(pos) = pk
            .loops
            .iter()
            .position(|l| !env.counters.contains_key(&l.counter))
        else {
            let on_grid = pk
                .loops
                .iter()
                .all(|l| l.step == 1 || !solved.contains(&l.counter));
            return on_grid.then_some(env);
        };
        let l = &pk.loops[pos];
        let at_r = || er.counters.get(&l.counter).cloned();
        // r's counters, the previous iteration and the first are on the
        // grid; the upper bound is only with step 1.
        let v = match variant {
            Variant::Same if pos < levels => at_r()?,
            Variant::Prev(lv) if pos < lv => at_r()?,
            Variant::Prev(lv) if pos == lv => at_r()?.plus(-l.step)?,
            Variant::First => env.lin(&l.lo)?,
            _ if l.step == 1 => env.lin(&l.hi)?,
            _ => return None,
        };
        env.counters.insert(l.counter, v);
    }
}

/// The equalities a guard implies at top level (`a == b` under `and`).
fn guard_eqs(c: &Cond, positive: bool, out: &mut Vec<(Affine, Option<usize>)>) {
    match c {
        Cond::Cmp(op, l, r) => {
            let op = if positive { *op } else { negate_op(*op) };
            if op == CmpOp::Eq {
                if let (Some(l), Some(r)) = (Affine::from_expr(l), Affine::from_expr(r)) {
                    if let Some(d) = l.checked_sub(&r) {
                        out.push((d, None));
                    }
                }
            }
        }
        Cond::And(a, b) if positive => {
            guard_eqs(a, true, out);
            guard_eqs(b, true, out);
        }
        Cond::Or(a, b) if !positive => {
            guard_eqs(a, false, out);
            guard_eqs(b, false, out);
        }
        Cond::Not(a) => guard_eqs(a, !positive, out),
        _ => {}
    }
}
