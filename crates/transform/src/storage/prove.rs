//! The contracted program proved for every parameter value: the
//! storage it uses keeps, under the schedule, every value its reads need.
//!
//! `emit` fits the places at sample sizes and checks them by `equiv` at
//! others; this module proves them. Over symbolic σ (`symbolic`: one proved
//! quast per read, σ for every parameter value) and each array's [`Layout`]
//! (where each write goes, where each read looks, where the final value
//! is), for every leaf of every read's quast, with the read at x and its
//! source W(h):
//!
//! 1. **the place:** the read looks where W(h) wrote (equal in an expanded
//!    dimension, congruent modulo d in a folded one), inside the declared
//!    extent;
//! 2. **no clobber:** no instance z of any write of the array lands on that
//!    cell and place and may run, in some execution the schedule allows,
//!    after W(h) and before x (`¬(z ≺ h) ∧ ¬(x ≺ z)`, z neither instance
//!    itself). For ⊥ (the initial value, which copy-in puts at every place),
//!    no such z before x at all;
//! 3. **the final values:** copy-out reads each cell's last writer's place
//!    (the quast of a virtual read of every cell after the program, as
//!    `codegen` makes them), and nothing the schedule may run after that
//!    writer lands there.
//!
//! A temporary laid out modulo a size (`modular`: cell `c` at `(a·c) mod
//! M`) lands on a read's place when `a·(c_z − c) ≡ 0 (mod M)`; with `M` a
//! parameter that is not affine, so [`Proving::lands`] takes the superset
//! `a·(c_z − c) = 0 ∨ a·(c_z − c) ≥ M ∨ a·(c_z − c) ≤ −M`, which is: a
//! proof over it holds for the congruence. Its final contents are not
//! results (no copy-out).
//!
//! Every instance is taken where it runs without error (its subscripts
//! in their declared ranges): where the original stops with an error there
//! is nothing to be equivalent to.
//!
//! Each is the integer infeasibility of conjunctions of affine constraints
//! (the congruences with a quotient variable), decided by the exact tests of
//! `dependence` through `symbolic::prove::Prover`, the parameters bounded
//! only by the program's assumptions. "May run after" is the schedule's
//! partial order: under a loop-level one, two instances are ordered by the
//! first common loop they differ in when it is sequential, unordered when it
//! is parallel, by the text when they differ in none; under an affine one,
//! by their times, lexicographically, unordered when equal. Arrays the
//! contraction leaves alone are proved too (no added dimension): the
//! schedule reorders them as well. Anything outside this (a read without a
//! proved quast, a read in a condition of a written array, a test that is
//! not exact) leaves the program "not proved", with the reason.

use super::affine::AffineSchedule;
use crate::dependence::Verdict;
use crate::model::{Access, Affine, ArrayId, CounterId, Program, Site, StmtId, Var};
use crate::symbolic::domain::{self, Atom, Dnf, Place};
use crate::symbolic::prove::{
    fresh, path_atoms, precedes, subscripts, subst, subst_dnf, vars_of, Prover,
};
use std::collections::HashMap;

/// The outcome, and how many exact tests it took.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Proof {
    Proved { tests: usize },
    NotProved(String),
}

impl Proof {
    pub fn proved(&self) -> bool {
        matches!(self, Proof::Proved { .. })
    }
}

/// Where one array's accesses go in the contracted program: its added
/// dimensions and, per dimension, the index before any `% d`, affine over
/// the site's counters and the parameters.
#[derive(Clone, Debug)]
pub struct Layout {
    pub array: ArrayId,
    /// Per added dimension: `Some(d)` folded modulo d, None expanded.
    pub folds: Vec<Option<i64>>,
    /// Per added dimension: the declared extent of an expanded one.
    pub ranges: Vec<Option<(Affine, Affine)>>,
    /// Per statement writing the array.
    pub writes: HashMap<StmtId, Vec<Affine>>,
    /// Per read (statement, read index): None reads the original array,
    /// which nothing writes before copy-out.
    pub reads: HashMap<(StmtId, usize), Option<Vec<Affine>>>,
    /// Where copy-out finds each cell's final value, over [`cell`]'s
    /// variables and the parameters; None: no copy-out.
    pub last: Option<Vec<Affine>>,
    /// Temporaries whose accesses use this array's storage (colouring:
    /// never live together on a cell); their final contents, and this
    /// array's, are not results.
    pub shared: Vec<ArrayId>,
    /// A temporary (or a merged group, `shared` holding the others) laid
    /// out modulo a size (`modular`): cell `c` of array X at `(a·(k_X, c))
    /// mod M`.
    pub modular: Option<Modulo>,
}

/// A modular layout: the coefficients (of `k` first when merged), each
/// array's `k`, and the modulus.
#[derive(Clone, Debug)]
pub struct Modulo {
    pub coefs: Vec<i64>,
    pub k: HashMap<ArrayId, i64>,
    pub modulus: Affine,
    /// Coefficients that are multiples of an extent (a row-major
    /// linearisation, `N*y - x`); None when none is.
    pub stride: Option<Stride>,
}

/// The part of a modular form that is `E·(s·c)`: `E` the extent of the
/// array's last dimension (affine in the parameters), `s` one coefficient
/// per entry of [`Modulo::coefs`] (0 where the coefficient is plain).
#[derive(Clone, Debug)]
pub struct Stride {
    pub coefs: Vec<i64>,
    pub extent: Affine,
}

/// The variable standing for dimension `k` of a cell in [`Layout::last`].
pub fn cell(k: usize) -> CounterId {
    CounterId(u32::MAX - 10_000 - k as u32)
}

impl Layout {
    /// The array kept as it is (no added dimension, every read of it).
    pub fn identity(program: &Program, array: ArrayId) -> Layout {
        Layout::of(program, array, Vec::new())
    }

    /// Temporaries sharing the storage of the first (`class[0]`), none of
    /// them contracted; None when their shapes differ.
    pub fn shared(program: &Program, class: &[ArrayId]) -> Option<Layout> {
        let shape = |a: ArrayId| -> Vec<(Affine, Affine)> {
            let d = &program.array_decl(a).dims;
            d.iter()
                .map(|r| (r.lo.affine.clone(), r.hi.affine.clone()))
                .collect()
        };
        let (&first, rest) = class.split_first()?;
        if rest.iter().any(|&a| shape(a) != shape(first)) {
            return None;
        }
        Some(Layout::of(program, first, rest.to_vec()))
    }

    fn of(program: &Program, array: ArrayId, shared: Vec<ArrayId>) -> Layout {
        let held = |a: ArrayId| a == array || shared.contains(&a);
        let mut reads = HashMap::new();
        for s in program.stmts() {
            for (k, a) in s.reads().into_iter().enumerate() {
                if held(a.array) {
                    reads.insert((s.id, k), Some(Vec::new()));
                }
            }
        }
        let writes = program
            .stmts()
            .iter()
            .filter(|s| s.write().is_some_and(|(a, _)| held(a.array)))
            .map(|s| (s.id, Vec::new()))
            .collect();
        Layout {
            array,
            folds: Vec::new(),
            ranges: Vec::new(),
            writes,
            reads,
            last: None,
            shared,
            modular: None,
        }
    }

    /// A temporary, or a merged group of temporaries (the first holding the
    /// storage), laid out modulo a size.
    pub fn modular(program: &Program, arrays: &[ArrayId], m: Modulo) -> Option<Layout> {
        let mut l = if arrays.len() > 1 {
            Layout::shared(program, arrays)?
        } else {
            Layout::identity(program, *arrays.first()?)
        };
        l.modular = Some(m);
        Some(l)
    }

    /// Whether `a`'s accesses use this layout's storage.
    pub fn holds(&self, a: ArrayId) -> bool {
        self.array == a || self.shared.contains(&a)
    }
}

/// The schedule's order.
#[derive(Clone, Copy)]
pub enum Time<'a> {
    /// Loop-level: the parallel loops, by counter.
    Loops(&'a [bool]),
    Affine(&'a AffineSchedule),
}

/// The most exact tests one proof may run.
const BUDGET: usize = 50_000;
/// A source coordinate with a division (under a stride).
const STRIDED: &str =
    "a source is a division under a stride, which storage mappings do not take apart";

const TOO_BIG: &str = "a constraint overflowed or expanded to too many cases";

/// Proves the contracted program whose arrays are laid out as `layouts`
/// (every array written: the contracted ones and the others as
/// [`Layout::identity`]) equivalent to `program` under `time`.
pub fn prove(program: &Program, time: Time, layouts: &[Layout]) -> Proof {
    prove_with(program, time, layouts, None)
}

/// [`prove`], given symbolic σ of `program` if it is already computed (the
/// proof then analyses only the final reads it adds).
pub fn prove_with(
    program: &Program,
    time: Time,
    layouts: &[Layout],
    sigma: Option<&crate::symbolic::Symbolic>,
) -> Proof {
    match Proving::run(program, time, layouts, sigma) {
        Ok(tests) => Proof::Proved { tests },
        Err(why) => Proof::NotProved(why),
    }
}

struct Proving<'p> {
    program: &'p Program,
    /// `program` with a virtual read of every written array's cells at the
    /// end (statement ids and counters as in `program`).
    plus: &'p Program,
    places: Vec<Place>,
    prover: Prover<'p>,
    time: Time<'p>,
    tests: usize,
    /// Each statement's domains, built once: by statement, 0 for
    /// [`Proving::domain`], 1 for [`Proving::fresh_domain`].
    domains: std::cell::RefCell<HashMap<(StmtId, u8), Dnf>>,
}

impl Proving<'_> {
    fn run(
        program: &Program,
        time: Time,
        layouts: &[Layout],
        sigma: Option<&crate::symbolic::Symbolic>,
    ) -> Result<usize, String> {
        for c in program.conditions() {
            if let Some(a) = c.reads().into_iter().find(|a| {
                layouts
                    .iter()
                    .any(|l| l.holds(a.array) && !l.writes.is_empty())
            }) {
                return Err(format!(
                    "condition `{}` reads `{}`, which is written: reads in conditions have no quast",
                    c.name,
                    program.array_decl(a.array).name
                ));
            }
        }
        let mut names = crate::codegen::Names::new(program);
        // Final reads only where copy-out needs them: the arrays kept as
        // they are take `output_order`, which needs no σ.
        let contracted: Vec<ArrayId> = layouts
            .iter()
            .filter(|l| !l.folds.is_empty() && !l.writes.is_empty())
            .map(|l| l.array)
            .collect();
        // Nothing contracted: no final reads, and no reprinting to add them.
        let (plus, outs) = match contracted.is_empty() {
            true => (program.clone(), Vec::new()),
            false => crate::codegen::augment_arrays(program, &mut names, &contracted)?,
        };
        let same = program
            .stmts()
            .iter()
            .zip(plus.stmts())
            .all(|(a, b)| a.id == b.id && a.label == b.label)
            && program
                .counters
                .iter()
                .zip(&plus.counters)
                .all(|(a, b)| a.name == b.name);
        if !same {
            return Err("internal: the program with its final reads renumbers it".into());
        }
        let places = domain::places(&plus);
        let prover = Prover::new(program).ok_or("the assumptions are not affine")?;
        let mut p = Proving {
            program,
            plus: &plus,
            places,
            prover,
            time,
            tests: 0,
            domains: Default::default(),
        };
        // Arrays kept as they are whose dependences the schedule keeps need
        // no σ; symbolic σ (sampling, fitting, proving quasts) only for the
        // others.
        let mut rest = Vec::new();
        for l in layouts {
            // Not for storage shared by several arrays: keeping their
            // accesses in order keeps one array's write between another's
            // write and read.
            // Nor for a modular layout: cells live apart share places.
            let plain = l.folds.is_empty() && l.shared.is_empty() && l.modular.is_none();
            if !(plain && p.dependences_kept(l)?) {
                rest.push(l);
            }
        }
        if !rest.is_empty() {
            // The final reads write nothing: the program's own reads keep
            // their σ in `plus`, which numbers statements and counters as
            // `program` does (checked above).
            let sym = match sigma {
                Some(s) if outs.is_empty() => std::borrow::Cow::Borrowed(s),
                Some(s) => {
                    let mut only = crate::symbolic::analyze_only(&plus, &|id| outs.contains(&id));
                    only.reads.extend(s.reads.iter().cloned());
                    std::borrow::Cow::Owned(only)
                }
                None => std::borrow::Cow::Owned(crate::symbolic::analyze(&plus)),
            };
            for l in rest {
                p.array(l, &sym, &outs)?;
            }
        }
        Ok(p.tests)
    }

    fn name(&self, s: StmtId) -> String {
        self.program.site_name(Site::Stmt(s))
    }

    fn array(
        &mut self,
        l: &Layout,
        sym: &crate::symbolic::Symbolic,
        outs: &[StmtId],
    ) -> Result<(), String> {
        let plus = self.plus;
        let stmts = plus.stmts();
        let mut writers: Vec<(StmtId, &Access)> = Vec::new();
        for &w in l.writes.keys() {
            let Some((a, _)) = stmts[w.index()].write() else {
                return Err(format!("internal: `{}` writes nothing", self.name(w)));
            };
            if !a.is_affine() {
                return Err(format!(
                    "`{}` writes `{}` with a subscript that is not affine",
                    self.name(w),
                    self.program.array_decl(l.array).name
                ));
            }
            if let Some(why) = self.places[w.index()].not_static() {
                return Err(format!("`{}` is {why}", self.name(w)));
            }
            writers.push((w, a));
        }
        writers.sort_by_key(|w| w.0);
        if writers.is_empty() {
            return Ok(());
        }
        // A modulus of at least 1 wherever a write runs (reads see those
        // writes).
        if let Some(m) = &l.modular {
            for &(w, _) in &writers {
                let dom = self.domain(w)?;
                let small = vec![vec![Atom::Le(m.modulus.clone())]];
                if self.feasible(&[&dom, &small])? {
                    return Err(format!(
                        "the modulus of `{}` may be 0 or less where `{}` writes",
                        self.program.array_decl(l.array).name,
                        self.name(w)
                    ));
                }
            }
        }
        // Expanded indices of writes inside the declared extent.
        for &(w, _) in &writers {
            let place = &l.writes[&w];
            let dom = self.domain(w)?;
            let out = self.outside(l, place)?;
            if self.feasible(&[&dom, &out])? {
                return Err(format!(
                    "`{}` may write outside the extent of the contracted array",
                    self.name(w)
                ));
            }
        }
        let mut reads: Vec<(StmtId, usize)> = l.reads.keys().copied().collect();
        reads.sort();
        for (s, k) in reads {
            let target = &l.reads[&(s, k)];
            let program = self.program;
            let what = || crate::codegen::read_name::read_of(program, Site::Stmt(s), k);
            let q = sym
                .quast(s, k)
                .ok_or_else(|| format!("{} has no symbolic σ: {}", what(), why_not(sym, s, k)))?;
            let access = stmts[s.index()].reads()[k];
            let x: Vec<Affine> = vars_of(&self.places[s.index()].counters());
            let cell = subscripts(access).ok_or_else(|| format!("{}: not affine", what()))?;
            let dom = self.domain(s)?;
            for (path, leaf) in q.leaves() {
                let base =
                    domain::and(&dom, &vec![path_atoms(&path).ok_or(TOO_BIG)?]).ok_or(TOO_BIG)?;
                let Some(target) = target else {
                    // The original array holds only initial values.
                    if let Some(src) = leaf {
                        return Err(format!(
                            "{} reads the original array but may see a write of `{}`",
                            what(),
                            self.name(src.stmt)
                        ));
                    }
                    continue;
                };
                let out = self.outside(l, target)?;
                if self.feasible(&[&base, &out])? {
                    return Err(format!("{} may look outside the contracted array", what()));
                }
                let source = match leaf {
                    Some(src) => {
                        let it = src
                            .affine()
                            .ok_or_else(|| format!("{}: {STRIDED}", what()))?;
                        let wp = self.write_place(l, src.stmt, it)?;
                        let differ = differ(l, target, &wp)?;
                        if self.feasible(&[&base, &differ])? {
                            return Err(format!(
                                "{} may look elsewhere than its source `{}` wrote",
                                what(),
                                self.name(src.stmt)
                            ));
                        }
                        Some((src.stmt, it))
                    }
                    None => None,
                };
                for &(w, wacc) in &writers {
                    let z = self.instance(w);
                    let mut factors = vec![base.clone()];
                    factors.push(self.fresh_domain(w)?);
                    factors.push(self.lands(l, w, wacc, &z, (access.array, &cell), target)?);
                    if let Some((src, h)) = source {
                        factors.push(self.not_before(w, &z, src, h)?);
                    }
                    factors.push(self.not_before(s, &x, w, &z)?);
                    let refs: Vec<&Dnf> = factors.iter().collect();
                    if self.feasible(&refs)? {
                        return Err(match source {
                            Some((src, _)) => format!(
                                "an instance of `{}` may overwrite the value {} sees, between its source `{}` and the read, in some order the schedule allows",
                                self.name(w),
                                what(),
                                self.name(src)
                            ),
                            None => format!(
                                "an instance of `{}` may overwrite the initial value {} sees, before the read, in some order the schedule allows",
                                self.name(w),
                                what()
                            ),
                        });
                    }
                }
            }
        }
        self.copy_out(l, sym, outs, &writers)
    }

    /// Copy-out reads each cell's last writer's place, which nothing that may
    /// run after that writer overwrites.
    fn copy_out(
        &mut self,
        l: &Layout,
        sym: &crate::symbolic::Symbolic,
        outs: &[StmtId],
        writers: &[(StmtId, &Access)],
    ) -> Result<(), String> {
        let plus = self.plus;
        if !l.shared.is_empty() || l.modular.is_some() {
            // Temporaries: their final contents are not results.
            return Ok(());
        }
        if l.folds.is_empty() {
            return self.output_order(l, writers);
        }
        let stmts = plus.stmts();
        let name = &self.program.array_decl(l.array).name;
        let Some(&o) = outs.iter().find(|&&o| {
            stmts[o.index()]
                .reads()
                .first()
                .is_some_and(|a| a.array == l.array)
        }) else {
            return Err(format!("internal: no final read of `{name}`"));
        };
        let Some(q) = sym.quast(o, 0) else {
            return Err(format!(
                "the final values of `{name}` have no symbolic σ: {}",
                why_not(sym, o, 0)
            ));
        };
        let oc: Vec<CounterId> = self.places[o.index()].counters();
        let map: Vec<(CounterId, Affine)> = oc
            .iter()
            .enumerate()
            .map(|(k, &c)| (cell(k), Affine::var(Var::Counter(c))))
            .collect();
        // The place copy-out reads; None: there is no copy-out.
        let target: Option<Vec<Affine>> = match &l.last {
            Some(last) => Some(
                last.iter()
                    .map(|a| subst(a, &map))
                    .collect::<Option<_>>()
                    .ok_or(TOO_BIG)?,
            ),
            None => None,
        };
        let access = stmts[o.index()].reads()[0];
        let cell_at = subscripts(access).ok_or("internal: the final read is not affine")?;
        let dom = self.domain(o)?;
        for (path, leaf) in q.leaves() {
            let base =
                domain::and(&dom, &vec![path_atoms(&path).ok_or(TOO_BIG)?]).ok_or(TOO_BIG)?;
            let Some(target) = &target else {
                if let Some(src) = leaf {
                    return Err(format!(
                        "`{name}` has no copy-out but `{}` may leave a final value in it",
                        self.name(src.stmt)
                    ));
                }
                continue;
            };
            // Copy-out is guarded by the extent: outside it, the original
            // array keeps its initial value.
            let inside = self.inside(l, target)?;
            let source = match leaf {
                Some(src) => {
                    let out = self.outside(l, target)?;
                    if self.feasible(&[&base, &out])? {
                        return Err(format!(
                            "copy-out of `{name}` may skip a cell `{}` wrote last",
                            self.name(src.stmt)
                        ));
                    }
                    let it = src.affine().ok_or_else(|| format!("`{name}`: {STRIDED}"))?;
                    let wp = self.write_place(l, src.stmt, it)?;
                    let differ = differ(l, target, &wp)?;
                    if self.feasible(&[&base, &differ])? {
                        return Err(format!(
                            "copy-out of `{name}` may look elsewhere than the last writer `{}` wrote",
                            self.name(src.stmt)
                        ));
                    }
                    Some((src.stmt, it))
                }
                None => None,
            };
            for &(w, wacc) in writers {
                let z = self.instance(w);
                let mut factors = vec![base.clone(), inside.clone()];
                factors.push(self.fresh_domain(w)?);
                factors.push(self.lands(l, w, wacc, &z, (l.array, &cell_at), target)?);
                if let Some((src, h)) = source {
                    factors.push(self.not_before(w, &z, src, h)?);
                }
                let refs: Vec<&Dnf> = factors.iter().collect();
                if self.feasible(&refs)? {
                    return Err(format!(
                        "an instance of `{}` may overwrite the final value of a cell of `{name}` in some order the schedule allows",
                        self.name(w)
                    ));
                }
            }
        }
        Ok(())
    }

    /// Without the final values' σ, for an array kept as it is: any two
    /// writes of one cell stay in program order, so the last one stays
    /// last.
    fn output_order(&mut self, l: &Layout, writers: &[(StmtId, &Access)]) -> Result<(), String> {
        for &w1 in writers {
            for &w2 in writers {
                if self.reordered(w1, w2)? {
                    return Err(format!(
                        "`{}` and `{}` may write one cell of `{}` in another order than the program's (the final values have no symbolic σ to say which matters)",
                        self.name(w1.0),
                        self.name(w2.0),
                        self.program.array_decl(l.array).name
                    ));
                }
            }
        }
        Ok(())
    }

    /// For an array kept as it is, without σ: every two accesses of one
    /// cell, one a write, stay in program order under the schedule (the
    /// classic test; stronger than needed, so a failure only sends the
    /// array to the σ proof).
    fn dependences_kept(&mut self, l: &Layout) -> Result<bool, String> {
        let plus = self.plus;
        let stmts = plus.stmts();
        let mut writers = Vec::new();
        // A subscript that is not affine says nothing of the cell: its
        // dimension is left out of "on one cell", which only adds pairs.
        for &w in l.writes.keys() {
            match stmts[w.index()].write() {
                Some((a, _)) => writers.push((w, a)),
                None => return Ok(false),
            }
        }
        let mut all = writers.clone();
        for &(s, k) in l.reads.keys() {
            all.push((s, stmts[s.index()].reads()[k]));
        }
        for &(s, _) in &all {
            if self.places[s.index()].not_static().is_some() {
                return Ok(false);
            }
        }
        writers.sort_by_key(|w| w.0);
        all.sort_by_key(|a| a.0);
        for &w in &writers {
            for &x in &all {
                if self.reordered(w, x)? || self.reordered(x, w)? {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// Whether an instance of `a` before one of `b` in program order, on
    /// one cell, may run after it (or at once) under the schedule.
    fn reordered(&mut self, a: (StmtId, &Access), b: (StmtId, &Access)) -> Result<bool, String> {
        let (m1, m2) = (self.renaming(a.0, 0), self.renaming(b.0, 1));
        let z1: Vec<Affine> = m1.iter().map(|(_, x)| x.clone()).collect();
        let z2: Vec<Affine> = m2.iter().map(|(_, x)| x.clone()).collect();
        let (p1, p2) = (&self.places[a.0.index()], &self.places[b.0.index()]);
        let d1 = subst_dnf(&self.runs(a.0)?, &m1).ok_or(TOO_BIG)?;
        let d2 = subst_dnf(&self.runs(b.0)?, &m2).ok_or(TOO_BIG)?;
        let mut same = Vec::new();
        for (x, y) in a.1.subscripts.iter().zip(&b.1.subscripts) {
            let (Some(x), Some(y)) = (&x.affine, &y.affine) else {
                continue;
            };
            let d = subst(x, &m1)
                .zip(subst(y, &m2))
                .and_then(|(x, y)| x.checked_sub(&y))
                .ok_or(TOO_BIG)?;
            same.push(Atom::Eq(d));
        }
        let earlier = precedes(&z1, p1, &z2, p2).ok_or(TOO_BIG)?;
        let late = self.not_before(a.0, &z1, b.0, &z2)?;
        let base = self.prover.assumptions.clone();
        self.feasible(&[&base, &d1, &d2, &vec![same], &earlier, &late])
    }

    /// Assumptions and the statement's domain.
    fn domain(&self, s: StmtId) -> Result<Dnf, String> {
        self.cached(s, 0, || {
            domain::and(&self.prover.assumptions, &self.runs(s)?).ok_or_else(|| TOO_BIG.to_string())
        })
    }

    /// One of the statement's domains, built on first use.
    fn cached(
        &self,
        s: StmtId,
        kind: u8,
        build: impl FnOnce() -> Result<Dnf, String>,
    ) -> Result<Dnf, String> {
        if let Some(d) = self.domains.borrow().get(&(s, kind)) {
            return Ok(d.clone());
        }
        let d = build()?;
        self.domains.borrow_mut().insert((s, kind), d.clone());
        Ok(d)
    }

    /// The instances of `s` that run without error: its loops and guards,
    /// and its affine subscripts inside their declared ranges (where one is
    /// not, the original program stops with an error, so no claim is made
    /// there).
    fn runs(&self, s: StmtId) -> Result<Dnf, String> {
        let d = self.places[s.index()]
            .domain()
            .ok_or_else(|| format!("`{}` is not static control", self.name(s)))?;
        let st = self.plus.stmts()[s.index()];
        let mut conj = Vec::new();
        for a in st.write().map(|(a, _)| a).into_iter().chain(st.reads()) {
            let decl = self.plus.array_decl(a.array);
            for (sub, r) in a.subscripts.iter().zip(&decl.dims) {
                let Some(e) = &sub.affine else { continue };
                conj.push(Atom::Le(r.lo.affine.checked_sub(e).ok_or(TOO_BIG)?));
                conj.push(Atom::Le(e.checked_sub(&r.hi.affine).ok_or(TOO_BIG)?));
            }
        }
        domain::and(&d, &vec![conj]).ok_or_else(|| TOO_BIG.to_string())
    }

    /// Another instance of `s`: its counters renamed apart (`set` 0 or 1,
    /// two such instances at once).
    fn renaming(&self, s: StmtId, set: usize) -> Vec<(CounterId, Affine)> {
        self.places[s.index()]
            .counters()
            .into_iter()
            .enumerate()
            .map(|(j, c)| (c, Affine::var(Var::Counter(fresh(64 * set + j)))))
            .collect()
    }

    fn instance(&self, s: StmtId) -> Vec<Affine> {
        self.renaming(s, 0).into_iter().map(|(_, a)| a).collect()
    }

    fn fresh_domain(&self, s: StmtId) -> Result<Dnf, String> {
        self.cached(s, 1, || {
            subst_dnf(&self.runs(s)?, &self.renaming(s, 0)).ok_or_else(|| TOO_BIG.to_string())
        })
    }

    /// The place statement `s` writes at iteration `at`.
    fn write_place(&self, l: &Layout, s: StmtId, at: &[Affine]) -> Result<Vec<Affine>, String> {
        let raw = l
            .writes
            .get(&s)
            .ok_or_else(|| format!("internal: no place for `{}`", self.name(s)))?;
        let map: Vec<(CounterId, Affine)> = self.places[s.index()]
            .counters()
            .into_iter()
            .zip(at.iter().cloned())
            .collect();
        raw.iter()
            .map(|a| subst(a, &map))
            .collect::<Option<_>>()
            .ok_or_else(|| TOO_BIG.to_string())
    }

    /// Instance z of writer `w` writes cell `cell` at place `place`.
    fn lands(
        &self,
        l: &Layout,
        w: StmtId,
        wacc: &Access,
        z: &[Affine],
        (read_array, cell): (ArrayId, &[Affine]),
        place: &[Affine],
    ) -> Result<Dnf, String> {
        let map = self.renaming(w, 0);
        let mut conj = Vec::new();
        let wcell = subscripts(wacc).ok_or("a write is not affine")?;
        if let Some(m) = &l.modular {
            // Same place: a·(c_z − c) ≡ 0 (mod M), over-approximated by
            // a·(c_z − c) = 0 or |a·(c_z − c)| ≥ M (linear in M, affine in
            // the parameters); the same cell is among the first.
            let kz = m.k.get(&wacc.array).copied().unwrap_or(0);
            let kr = m.k.get(&read_array).copied().unwrap_or(0);
            let mut diff: Vec<Affine> = Vec::new();
            if m.coefs.len() > wcell.len() {
                diff.push(Affine::constant(kz - kr));
            }
            for (a, b) in wcell.iter().zip(cell) {
                diff.push(
                    subst(a, &map)
                        .and_then(|a| a.checked_sub(b))
                        .ok_or(TOO_BIG)?,
                );
            }
            let plain = dot(&m.coefs, &diff)?;
            return match &m.stride {
                None => zero_or_beyond(&plain, &m.modulus, Vec::new()),
                Some(st) => strided_lands(&plain, &dot(&st.coefs, &diff)?, st, &m.modulus),
            };
        }
        for (a, b) in wcell.iter().zip(cell) {
            let d = subst(a, &map)
                .and_then(|a| a.checked_sub(b))
                .ok_or(TOO_BIG)?;
            conj.push(Atom::Eq(d));
        }
        let wp = self.write_place(l, w, z)?;
        for (k, (a, b)) in wp.iter().zip(place).enumerate() {
            let d = a.checked_sub(b).ok_or(TOO_BIG)?;
            conj.push(match l.folds[k] {
                Some(m) => Atom::Stride(d, m),
                None => Atom::Eq(d),
            });
        }
        Ok(vec![conj])
    }

    /// Some expanded index outside its declared extent.
    fn outside(&self, l: &Layout, place: &[Affine]) -> Result<Dnf, String> {
        let mut out = Vec::new();
        for (k, a) in place.iter().enumerate() {
            if let Some((lo, hi)) = l.ranges.get(k).and_then(|r| r.as_ref()) {
                let below = a
                    .checked_sub(lo)
                    .and_then(|e| e.checked_add(&Affine::constant(1)));
                let above = hi
                    .checked_sub(a)
                    .and_then(|e| e.checked_add(&Affine::constant(1)));
                out.push(vec![Atom::Le(below.ok_or(TOO_BIG)?)]);
                out.push(vec![Atom::Le(above.ok_or(TOO_BIG)?)]);
            }
        }
        Ok(out)
    }

    /// Every expanded index inside its declared extent.
    fn inside(&self, l: &Layout, place: &[Affine]) -> Result<Dnf, String> {
        let mut conj = Vec::new();
        for (k, a) in place.iter().enumerate() {
            if let Some((lo, hi)) = l.ranges.get(k).and_then(|r| r.as_ref()) {
                conj.push(Atom::Le(lo.checked_sub(a).ok_or(TOO_BIG)?));
                conj.push(Atom::Le(a.checked_sub(hi).ok_or(TOO_BIG)?));
            }
        }
        Ok(vec![conj])
    }

    /// `¬(a ≺ b) ∧ a ≠ b` in the schedule's order: a may run after b, or at
    /// the same time; `a` and `b` the instances of statements `sa`, `sb`.
    fn not_before(
        &self,
        sa: StmtId,
        a: &[Affine],
        sb: StmtId,
        b: &[Affine],
    ) -> Result<Dnf, String> {
        let (pa, pb) = (&self.places[sa.index()], &self.places[sb.index()]);
        let eq = |x: &Affine, y: &Affine| x.checked_sub(y).map(Atom::Eq);
        // x > y, as y - x + 1 ≤ 0.
        let gt = |x: &Affine, y: &Affine| {
            y.checked_sub(x)
                .and_then(|e| e.checked_add(&Affine::constant(1)))
                .map(Atom::Le)
        };
        let mut out: Dnf = Vec::new();
        match self.time {
            Time::Loops(parallel) => {
                let common = pa.common(pb);
                let mut prefix = Vec::new();
                for k in 0..common {
                    let mut alt = prefix.clone();
                    alt.push(gt(&a[k], &b[k]).ok_or(TOO_BIG)?);
                    out.push(alt);
                    let c = pa.loops[k].counter;
                    if parallel.get(c.index()) == Some(&true) {
                        let mut alt = prefix.clone();
                        alt.push(gt(&b[k], &a[k]).ok_or(TOO_BIG)?);
                        out.push(alt);
                    }
                    prefix.push(eq(&a[k], &b[k]).ok_or(TOO_BIG)?);
                }
                // One iteration of every common loop: the text orders two
                // statements; one statement there is one instance.
                if pa.order > pb.order {
                    out.push(prefix);
                }
            }
            Time::Affine(s) => {
                let (ta, tb) = (self.times(s, sa, a)?, self.times(s, sb, b)?);
                let mut prefix = Vec::new();
                for (x, y) in ta.iter().zip(&tb) {
                    let mut alt = prefix.clone();
                    alt.push(gt(x, y).ok_or(TOO_BIG)?);
                    out.push(alt);
                    prefix.push(eq(x, y).ok_or(TOO_BIG)?);
                }
                if sa != sb {
                    out.push(prefix);
                } else {
                    for (x, y) in a.iter().zip(b) {
                        for alt in [gt(x, y), gt(y, x)] {
                            let mut c = prefix.clone();
                            c.push(alt.ok_or(TOO_BIG)?);
                            out.push(c);
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    /// The affine schedule's time of statement `s` at iteration `at`.
    fn times(
        &self,
        sched: &AffineSchedule,
        s: StmtId,
        at: &[Affine],
    ) -> Result<Vec<Affine>, String> {
        let rows = sched
            .times
            .get(s.index())
            .and_then(|r| r.as_ref())
            .ok_or_else(|| format!("the schedule has no time for `{}`", self.name(s)))?;
        let n = at.len();
        let mut out = Vec::new();
        for row in rows {
            let mut t = Affine::constant(row[row.len() - 1]);
            for (j, &c) in row[..row.len() - 1].iter().enumerate() {
                let v = if j < n {
                    at[j].clone()
                } else {
                    Affine::var(Var::Param(crate::model::ParamId((j - n) as u32)))
                };
                t = t
                    .checked_add(&v.checked_scale(c).ok_or(TOO_BIG)?)
                    .ok_or(TOO_BIG)?;
            }
            out.push(t);
        }
        out.resize(sched.width, Affine::constant(0));
        Ok(out)
    }

    /// Whether one conjunction of one disjunct per factor has an integer
    /// solution ([`Prover::first_possible`]); an error when a test cannot
    /// tell or the proof runs past its budget of exact tests.
    fn feasible(&mut self, factors: &[&Dnf]) -> Result<bool, String> {
        let tests = &mut self.tests;
        let mut count = || {
            *tests += 1;
            if *tests > BUDGET {
                return Err(format!("the proof needs more than {BUDGET} exact tests"));
            }
            Ok(())
        };
        match self.prover.first_possible(factors, &mut count)? {
            None => Ok(false),
            Some(Some(Verdict::Maybe(why))) => Err(format!(
                "an exact test could not decide ({})",
                why.describe()
            )),
            Some(None) => Err("arithmetic overflow in a test".into()),
            Some(Some(_)) => Ok(true),
        }
    }
}

/// Why read `k` of `s` has no quast.
fn why_not(sym: &crate::symbolic::Symbolic, s: StmtId, k: usize) -> String {
    sym.reads
        .iter()
        .find(|r| r.stmt == s && r.read == k)
        .map_or("no quast".to_string(), |r| match &r.outcome {
            crate::symbolic::Outcome::Fallback(w) => w.clone(),
            crate::symbolic::Outcome::Exact(_) => "exact".to_string(),
            crate::symbolic::Outcome::Possible(_) => {
                "its sources are only known as a set".to_string()
            }
        })
}

/// `Σ c·d`.
fn dot(coefs: &[i64], diff: &[Affine]) -> Result<Affine, String> {
    let mut dot = Affine::constant(0);
    for (c, d) in coefs.iter().zip(diff) {
        dot = d
            .checked_scale(*c)
            .and_then(|t| dot.checked_add(&t))
            .ok_or(TOO_BIG)?;
    }
    Ok(dot)
}

/// `x = 0 or x ≥ m or x ≤ −m`, each case with `with` added: a superset of
/// `x ≡ 0 (mod m)` (a multiple of m is 0 or at least m in size).
fn zero_or_beyond(x: &Affine, m: &Affine, with: Vec<Atom>) -> Result<Dnf, String> {
    let above = m.checked_sub(x).ok_or(TOO_BIG)?;
    let below = x.checked_add(m).ok_or(TOO_BIG)?;
    Ok([Atom::Eq(x.clone()), Atom::Le(above), Atom::Le(below)]
        .into_iter()
        .map(|a| {
            let mut c = with.clone();
            c.push(a);
            c
        })
        .collect())
}

/// Same place under a form with extents as coefficients: `E·S + P ≡ 0
/// (mod q·E)`, S the strided part and P the plain one. Then E divides P,
/// so P = 0 or |P| ≥ E; and when P = 0, q divides S. The superset
/// `(P = 0 and (S = 0 or |S| ≥ q)) or |P| ≥ E` is affine. A modulus that
/// is not a whole multiple of E is not taken.
fn strided_lands(plain: &Affine, strided: &Affine, st: &Stride, m: &Affine) -> Result<Dnf, String> {
    let q = multiple_of(m, &st.extent).ok_or_else(|| {
        "the modulus of a form with an extent as a coefficient is not a multiple of that extent"
            .to_string()
    })?;
    let mut out = zero_or_beyond(strided, &Affine::constant(q), vec![Atom::Eq(plain.clone())])?;
    let beyond = zero_or_beyond(plain, &st.extent, Vec::new())?;
    out.extend(beyond.into_iter().skip(1));
    Ok(out)
}

/// The constant q ≥ 1 with `m = q·e`, if there is one.
pub fn multiple_of(m: &Affine, e: &Affine) -> Option<i64> {
    let q = match e.terms.first() {
        Some((v, c)) => {
            let mc = m.terms.iter().find(|(w, _)| w == v)?.1;
            (mc % c == 0).then(|| mc / c)?
        }
        None if e.constant != 0 && m.terms.is_empty() => {
            (m.constant % e.constant == 0).then(|| m.constant / e.constant)?
        }
        None => return None,
    };
    let rest = m.checked_sub(&e.checked_scale(q)?)?;
    (q >= 1 && rest.is_constant() && rest.constant == 0).then_some(q)
}

/// The two places differ: an expanded index `<` or `>`, a folded one not
/// congruent.
fn differ(l: &Layout, a: &[Affine], b: &[Affine]) -> Result<Dnf, String> {
    let mut out = Vec::new();
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        let d = x.checked_sub(y).ok_or(TOO_BIG)?;
        if d.terms.is_empty() && d.constant == 0 {
            continue;
        }
        match l.folds[k] {
            Some(m) => out.push(vec![Atom::NotStride(d, m)]),
            None => {
                for n in domain::negate(&Atom::Eq(d)).ok_or(TOO_BIG)? {
                    out.push(vec![n]);
                }
            }
        }
    }
    Ok(out)
}
