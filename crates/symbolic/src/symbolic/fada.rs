//! Possible sources where control is not static (FADA: Barthou, Collard
//! and Feautrier). A read under an unknown condition, in a `while` loop,
//! through a non-affine subscript, or of an array such statements write,
//! has a *set* of possible sources. It is built here from the engines'
//! definition (docs/rules.md §1), not fitted: W(y) may be the source of the
//! read at x, for a cell c the read may read, iff
//!
//! 1. W(y) may write c, and W(y) ≺ x;
//! 2. the guard literals of W(y) and of the read are consistent;
//! 3. no must-write K(z) of c with W(y) ≺ K(z) ≺ x has every guard literal
//!    forced by theirs.
//!
//! The initial value may be read iff no must-write K(z) ≺ x of c has its
//! literals forced by the read's. Counters of `while` loops range over all
//! trips (≥ 0): the answer holds for every parameter value and every trip
//! count. The ∃z of (3) and the ∃c of a non-affine read are projected
//! exactly (`project`) or the read falls back to bounded σ, with the reason.

use super::domain::{self, Atom, Dnf, Place};
use super::project;
use super::prove::{self, Prover};
use crate::dependence::Verdict;
use crate::model::{Affine, CondId, CounterId, Program, StmtId, Var};

/// The instances of one statement that may be the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Family {
    pub stmt: StmtId,
    /// The source statement's own counters (outermost first). In `when`,
    /// its coordinate k is the fresh counter `source_var(k)`.
    pub counters: Vec<CounterId>,
    /// Where `stmt(source_var(0), …)` may be the source: a DNF over the
    /// read's counters, the source's and the parameters, for the read in
    /// its domain.
    pub when: Dnf,
}

/// The possible sources of one read, for every parameter value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Possible {
    pub families: Vec<Family>,
    /// Where the initial value may be read: a DNF over the read's counters
    /// and the parameters (empty: never).
    pub initial: Dnf,
    /// Why the read is not static control (so has no quast).
    pub why: String,
}

/// The fresh counter standing for coordinate `k` of a possible source.
pub fn source_var(k: usize) -> CounterId {
    CounterId(u32::MAX - 64 - k as u32)
}

/// Which source coordinate a fresh counter stands for.
pub fn source_index(c: CounterId) -> Option<usize> {
    let k = (u32::MAX - 64).checked_sub(c.0)? as usize;
    (k < 64).then_some(k)
}

fn killer_var(k: usize) -> CounterId {
    CounterId(u32::MAX - 128 - k as u32)
}

fn cell_var(k: usize) -> CounterId {
    CounterId(u32::MAX - 192 - k as u32)
}

/// The most conjunctions a set may expand to before the read falls back.
const MAX_CASES: usize = 512;
const TOO_BIG: &str = "the set of possible sources expanded to too many cases";

/// A guard literal of a statement instance (docs/rules.md §1): an unknown
/// condition's outcome, or a trip of a `while` loop with an unknown
/// condition. `depth`: how many of the instance's coordinates name the
/// condition's (or loop's) instance; a trip is coordinate `depth`.
#[derive(Clone, Copy, Debug)]
enum Lit {
    Cond {
        id: CondId,
        truth: bool,
        depth: usize,
    },
    Runs {
        id: CondId,
        depth: usize,
    },
}

/// A statement's instances, its counters renamed.
struct Inst<'p> {
    place: &'p Place,
    iter: Vec<Affine>,
    vars: Vec<Var>,
    dom: Dnf,
    lits: Vec<Lit>,
}

fn inst<'p>(
    program: &Program,
    place: &'p Place,
    rename: Option<fn(usize) -> CounterId>,
) -> Result<Inst<'p>, String> {
    let counters = place.counters();
    let vars: Vec<Var> = counters
        .iter()
        .enumerate()
        .map(|(k, &c)| Var::Counter(rename.map_or(c, |f| f(k))))
        .collect();
    let map: Vec<(CounterId, Affine)> = counters
        .iter()
        .zip(&vars)
        .map(|(&c, &v)| (c, Affine::var(v)))
        .collect();
    let conds = program.conditions();
    let mut dom: Dnf = vec![Vec::new()];
    let mut lits = Vec::new();
    for (depth, l) in place.loops.iter().enumerate() {
        let c = Affine::var(vars[depth]);
        let Some(id) = l.cond else {
            let lo = prove::subst(&l.lo, &map).and_then(|lo| lo.checked_sub(&c));
            let hi = prove::subst(&l.hi, &map).and_then(|hi| c.checked_sub(&hi));
            let (Some(lo), Some(hi)) = (lo, hi) else {
                return Err(TOO_BIG.into());
            };
            for conj in &mut dom {
                conj.push(Atom::Le(lo.clone()));
                conj.push(Atom::Le(hi.clone()));
                if l.step != 1 {
                    conj.push(Atom::Stride(lo.checked_scale(-1).ok_or(TOO_BIG)?, l.step));
                }
            }
            continue;
        };
        if conds[id.index()].cond.is_static() {
            return Err(format!(
                "inside the `while` loop `{}`, whose condition is known from the counters but is not a loop bound",
                conds[id.index()].name
            ));
        }
        let neg = c.checked_scale(-1).ok_or(TOO_BIG)?;
        for conj in &mut dom {
            conj.push(Atom::Le(neg.clone()));
        }
        lits.push(Lit::Runs { id, depth });
    }
    for ((cond, truth), &(id, depth)) in place.guards.iter().zip(&place.guard_ids) {
        if !cond.is_static() {
            lits.push(Lit::Cond {
                id,
                truth: *truth,
                depth,
            });
            continue;
        }
        let d = domain::dnf(cond, *truth)
            .and_then(|d| prove::subst_dnf(&d, &map))
            .ok_or_else(|| {
                format!(
                    "under the condition `{}`, known from the counters but not affine",
                    conds[id.index()].name
                )
            })?;
        dom = product(&dom, &d)?;
    }
    let iter = vars.iter().map(|&v| Affine::var(v)).collect();
    Ok(Inst {
        place,
        iter,
        vars,
        dom,
        lits,
    })
}

/// The conjunction of two DNFs, within `MAX_CASES`.
fn product(a: &Dnf, b: &Dnf) -> Result<Dnf, String> {
    if a.len() * b.len() > MAX_CASES {
        return Err(TOO_BIG.into());
    }
    Ok(a.iter()
        .flat_map(|p| b.iter().map(move |q| p.iter().chain(q).cloned().collect()))
        .collect())
}

/// Equal first `n` coordinates.
fn same_prefix(a: &Inst, b: &Inst, n: usize) -> Result<Vec<Atom>, String> {
    (0..n)
        .map(|k| Ok(Atom::Eq(a.iter[k].checked_sub(&b.iter[k]).ok_or(TOO_BIG)?)))
        .collect()
}

/// Some of the first `n` coordinates differ: `a` and `b` are in other
/// instances of whatever those coordinates enclose.
fn apart(a: &Inst, b: &Inst, n: usize) -> Result<Dnf, String> {
    let mut out: Dnf = Vec::new();
    for e in &same_prefix(a, b, n)? {
        out.extend(
            domain::negate(e)
                .ok_or(TOO_BIG)?
                .into_iter()
                .map(|x| vec![x]),
        );
    }
    Ok(out)
}

/// Condition (2): no unknown condition instance with both outcomes.
fn consistent(a: &Inst, b: &Inst) -> Result<Dnf, String> {
    let mut out: Dnf = vec![Vec::new()];
    for la in &a.lits {
        for lb in &b.lits {
            let (
                Lit::Cond { id, truth, depth },
                Lit::Cond {
                    id: id2,
                    truth: truth2,
                    ..
                },
            ) = (la, lb)
            else {
                continue;
            };
            if id != id2 || truth == truth2 {
                continue;
            }
            out = product(&out, &apart(a, b, *depth)?)?;
        }
    }
    Ok(out)
}

/// Where every literal of `k` is forced by a literal of `by`.
fn forced(k: &Inst, by: &[&Inst]) -> Result<Dnf, String> {
    let mut out: Dnf = vec![Vec::new()];
    for l in &k.lits {
        let mut alts: Dnf = Vec::new();
        for b in by {
            for m in &b.lits {
                match (l, m) {
                    (
                        Lit::Cond { id, truth, depth },
                        Lit::Cond {
                            id: id2,
                            truth: truth2,
                            ..
                        },
                    ) if id == id2 && truth == truth2 => alts.push(same_prefix(k, b, *depth)?),
                    (Lit::Runs { id, depth }, Lit::Runs { id: id2, .. }) if id == id2 => {
                        let mut conj = same_prefix(k, b, *depth)?;
                        conj.push(Atom::Le(
                            k.iter[*depth].checked_sub(&b.iter[*depth]).ok_or(TOO_BIG)?,
                        ));
                        alts.push(conj);
                    }
                    _ => {}
                }
            }
        }
        out = product(&out, &alts)?;
    }
    Ok(out)
}

/// Where cover `k` (`model::cover`) kills for the read `rd`, within
/// `cases` (k writes the cell between the source and the read): one branch
/// of k's `if` writes the cell, so k's own literal, the `if`'s condition
/// true, counts as forced unless the read is in the `else` branch of the
/// same instance of the `if`; its other literals must be forced by the
/// read's (docs/rules.md §1, *Covers*).
fn cover_kills(k: &Inst, rd: &Inst, cases: &Dnf) -> Result<Dnf, String> {
    let Some(at) = k.lits.iter().rposition(|l| matches!(l, Lit::Cond { .. })) else {
        return Ok(Vec::new());
    };
    let Lit::Cond {
        id,
        truth: true,
        depth,
    } = k.lits[at]
    else {
        return Ok(Vec::new());
    };
    let mut enclosing = k.lits.clone();
    enclosing.remove(at);
    let outer = Inst {
        place: k.place,
        iter: k.iter.clone(),
        vars: k.vars.clone(),
        dom: Vec::new(),
        lits: enclosing,
    };
    let mut out = product(cases, &forced(&outer, &[rd])?)?;
    for l in &rd.lits {
        if let Lit::Cond {
            id: id2,
            truth: false,
            ..
        } = l
        {
            if *id2 == id {
                // The read's instance of the `if` is another one.
                out = product(&out, &apart(k, rd, depth)?)?;
            }
        }
    }
    Ok(out)
}

/// Decides conjunctions under a context with the exact tests.
struct Decide<'a, 'p> {
    prover: &'a mut Prover<'p>,
    ctx: Dnf,
}

impl Decide<'_, '_> {
    /// Proved empty under every case of the context.
    fn empty(&mut self, conj: &[Atom]) -> bool {
        let ctx = std::mem::take(&mut self.ctx);
        let out = ctx.iter().all(|c| {
            let atoms: Vec<&Atom> = c.iter().chain(conj).collect();
            matches!(self.prover.test(&atoms), Some(Verdict::Independent))
        });
        self.ctx = ctx;
        out
    }

    /// Drops atoms the others imply; None when the whole is empty.
    fn simplify(&mut self, conj: &[Atom]) -> Option<Vec<Atom>> {
        self.simplify_in(&[], conj)
    }

    /// `conj` without the atoms that `base` and the others imply; None
    /// when `base ∧ conj` is empty.
    fn simplify_in(&mut self, base: &[Atom], conj: &[Atom]) -> Option<Vec<Atom>> {
        let with = |c: &[Atom]| -> Vec<Atom> { base.iter().chain(c).cloned().collect() };
        if self.empty(&with(conj)) {
            return None;
        }
        let mut keep: Vec<Atom> = Vec::with_capacity(conj.len());
        for a in conj {
            if !keep.contains(a) {
                keep.push(a.clone());
            }
        }
        let mut k = 0;
        while k < keep.len() {
            let a = keep.remove(k);
            let implied = domain::negate(&a).is_some_and(|alts| {
                alts.into_iter().all(|n| {
                    let mut c = with(&keep);
                    c.push(n);
                    self.empty(&c)
                })
            });
            if !implied {
                keep.insert(k, a);
                k += 1;
            }
        }
        Some(equalities(keep))
    }

    /// `dep ∧ ¬kill`, each case simplified, empty cases dropped.
    fn difference(&mut self, dep: &Dnf, kill: &Dnf) -> Result<Dnf, String> {
        let mut out = Vec::new();
        for d in dep {
            let Some(d) = self.simplify(d) else { continue };
            let mut acc: Dnf = vec![d.clone()];
            for k in kill {
                let Some(k) = self.simplify_in(&d, k) else {
                    continue;
                };
                let mut next = Vec::new();
                for a in &acc {
                    for atom in &k {
                        for n in domain::negate(atom).ok_or(TOO_BIG)? {
                            let mut c = a.clone();
                            c.push(n);
                            if !self.empty(&c) {
                                next.push(c);
                            }
                        }
                    }
                }
                if next.len() > MAX_CASES {
                    return Err(TOO_BIG.into());
                }
                acc = next;
                if acc.is_empty() {
                    break;
                }
            }
            out.extend(acc);
        }
        let mut done: Dnf = Vec::new();
        for c in out {
            if let Some(c) = self.simplify(&c) {
                if !done.contains(&c) {
                    done.push(c);
                }
            }
        }
        Ok(done)
    }
}

/// `e ≤ 0 ∧ -e ≤ 0` as `e = 0` (a `while` trip `w' = w - 1` is found as
/// two bounds).
fn equalities(mut conj: Vec<Atom>) -> Vec<Atom> {
    let mut k = 0;
    while k < conj.len() {
        let Atom::Le(e) = &conj[k] else {
            k += 1;
            continue;
        };
        let Some(neg) = e.checked_scale(-1) else {
            k += 1;
            continue;
        };
        match conj.iter().position(|a| *a == Atom::Le(neg.clone())) {
            Some(j) => {
                conj[k] = Atom::Eq(e.clone());
                conj.remove(j);
                if j < k {
                    k -= 1;
                }
                k += 1;
            }
            None => k += 1,
        }
    }
    conj
}

/// ∃vars of each case.
fn project_dnf(d: Dnf, vars: &[Var]) -> Result<Dnf, String> {
    if vars.is_empty() {
        return Ok(d);
    }
    d.iter()
        .map(|c| project::eliminate_all(c, vars).map_err(String::from))
        .collect()
}

/// The possible sources of read `read` of `stmt`, or why they are not
/// known for every parameter value.
pub fn possible(
    prover: &mut Prover,
    places: &[Place],
    stmt: StmtId,
    read: usize,
) -> Result<Possible, String> {
    let program = prover.program;
    let stmts = program.stmts();
    let access = stmts[stmt.index()].reads()[read];
    let decl = program.array_decl(access.array);
    let rd = inst(program, &places[stmt.index()], None)?;
    let in_range = |g: &Affine, d: usize| -> Result<Vec<Atom>, String> {
        let r = &decl.dims[d];
        Ok(vec![
            Atom::Le(r.lo.affine.checked_sub(g).ok_or(TOO_BIG)?),
            Atom::Le(g.checked_sub(&r.hi.affine).ok_or(TOO_BIG)?),
        ])
    };
    // The cell: the read's subscripts, or a fresh counter in the declared
    // range where a subscript is not affine (the read may read any cell).
    let mut cell = Vec::new();
    let mut cvars = Vec::new();
    let mut crange = Vec::new();
    for (d, s) in access.subscripts.iter().enumerate() {
        match &s.affine {
            Some(g) => cell.push(g.clone()),
            None => {
                let v = Var::Counter(cell_var(d));
                crange.extend(in_range(&Affine::var(v), d)?);
                cell.push(Affine::var(v));
                cvars.push(v);
            }
        }
    }
    let ctx = product(&prover.assumptions, &rd.dom)?;
    let mut decide = Decide { prover, ctx };
    let writers: Vec<_> = stmts
        .iter()
        .filter_map(|s| {
            let (a, _) = s.write()?;
            (a.array == access.array).then_some((s.id, a))
        })
        .collect();
    let covers = crate::model::cover::covers(program);
    // Kills of (3): must-writes of the cell after `after` (if any) and
    // before the read, their literals forced by `by`'s; a cover's own
    // literal forced for a read after its `if` (`cover_kills`).
    let kills = |after: Option<&Inst>, by: &[&Inst]| -> Result<Dnf, String> {
        let mut out = Vec::new();
        for &(k, a) in &writers {
            let Some(subs) = a
                .subscripts
                .iter()
                .map(|s| s.affine.clone())
                .collect::<Option<Vec<_>>>()
            else {
                continue;
            };
            let ki = inst(program, &places[k.index()], Some(killer_var))?;
            let map: Vec<(CounterId, Affine)> = places[k.index()]
                .counters()
                .into_iter()
                .zip(ki.iter.iter().cloned())
                .collect();
            let mut same = Vec::new();
            for (f, g) in subs.iter().zip(&cell) {
                let f = prove::subst(f, &map).ok_or(TOO_BIG)?;
                same.push(Atom::Eq(f.checked_sub(g).ok_or(TOO_BIG)?));
            }
            let mut cases = product(&ki.dom, &vec![same])?;
            cases = product(
                &cases,
                &prove::precedes(&ki.iter, ki.place, &rd.iter, rd.place).ok_or(TOO_BIG)?,
            )?;
            if let Some(w) = after {
                cases = product(
                    &cases,
                    &prove::precedes(&w.iter, w.place, &ki.iter, ki.place).ok_or(TOO_BIG)?,
                )?;
            }
            let mut all = product(&cases, &forced(&ki, by)?)?;
            if covers[k.index()] {
                all.extend(cover_kills(&ki, &rd, &cases)?);
            }
            for c in all {
                out.push(project::eliminate_all(&c, &ki.vars).map_err(String::from)?);
            }
        }
        Ok(out)
    };
    let mut families = Vec::new();
    for &(w, a) in &writers {
        let wi = inst(program, &places[w.index()], Some(source_var))?;
        let map: Vec<(CounterId, Affine)> = places[w.index()]
            .counters()
            .into_iter()
            .zip(wi.iter.iter().cloned())
            .collect();
        // (1): W may write the cell.
        let mut may = crange.clone();
        for (d, s) in a.subscripts.iter().enumerate() {
            match &s.affine {
                Some(f) => {
                    let f = prove::subst(f, &map).ok_or(TOO_BIG)?;
                    may.push(Atom::Eq(f.checked_sub(&cell[d]).ok_or(TOO_BIG)?));
                }
                None => may.extend(in_range(&cell[d], d)?),
            }
        }
        let mut dep = product(&wi.dom, &vec![may])?;
        dep = product(
            &dep,
            &prove::precedes(&wi.iter, wi.place, &rd.iter, rd.place).ok_or(TOO_BIG)?,
        )?;
        dep = product(&dep, &consistent(&wi, &rd)?)?;
        let kill = kills(Some(&wi), &[&wi, &rd])?;
        let when = decide.difference(&dep, &kill)?;
        let when = simplify_all(&mut decide, project_dnf(when, &cvars)?);
        if !when.is_empty() {
            families.push(Family {
                stmt: w,
                counters: places[w.index()].counters(),
                when,
            });
        }
    }
    let kill = kills(None, &[&rd])?;
    let initial = decide.difference(&vec![crange.clone()], &kill)?;
    let initial = simplify_all(&mut decide, project_dnf(initial, &cvars)?);
    Ok(Possible {
        families,
        initial,
        why: String::new(),
    })
}

fn simplify_all(decide: &mut Decide, d: Dnf) -> Dnf {
    let mut out: Dnf = Vec::new();
    for c in d {
        if let Some(c) = decide.simplify(&c) {
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    out
}

impl Possible {
    /// Whether `stmt` at `iter` may be the source of the read at `x`
    /// (`counters` of the read, `params`): for tests and hovers.
    pub fn contains(
        &self,
        counters: &[CounterId],
        x: &[i64],
        params: &[i64],
        source: Option<(StmtId, &[i64])>,
    ) -> bool {
        let value = |v: Var, y: &[i64]| -> i64 {
            match v {
                Var::Param(p) => params[p.index()],
                Var::Counter(c) => match source_index(c) {
                    Some(k) => y.get(k).copied().unwrap_or(0),
                    None => counters.iter().position(|&k| k == c).map_or(0, |k| x[k]),
                },
            }
        };
        let holds = |d: &Dnf, y: &[i64]| {
            d.iter().any(|conj| {
                conj.iter().all(|a| {
                    let Some(e) = a.expr().eval(|v| value(v, y)) else {
                        return false;
                    };
                    match a {
                        Atom::Le(_) => e <= 0,
                        Atom::Eq(_) => e == 0,
                        Atom::Stride(_, k) => e.rem_euclid(*k) == 0,
                        Atom::NotStride(_, k) => e.rem_euclid(*k) != 0,
                    }
                })
            })
        };
        match source {
            None => holds(&self.initial, &[]),
            Some((s, y)) => self
                .families
                .iter()
                .any(|f| f.stmt == s && f.counters.len() == y.len() && holds(&f.when, y)),
        }
    }
}

/// One case of a family for printing: the source's iteration vector (a
/// coordinate an equality fixes is written as that function of the others
/// and the read's counters) and the constraints left.
pub struct Case {
    pub iter: Vec<Affine>,
    pub rest: Vec<Atom>,
}

impl Family {
    /// The cases of `when`, equalities solved for source coordinates
    /// (innermost first) where the coefficient is ±1.
    pub fn cases(&self) -> Vec<Case> {
        self.when
            .iter()
            .map(|conj| {
                let mut iter: Vec<Affine> = (0..self.counters.len())
                    .map(|k| Affine::var(Var::Counter(source_var(k))))
                    .collect();
                let mut rest = conj.clone();
                for k in (0..iter.len()).rev() {
                    let v = Var::Counter(source_var(k));
                    let Some(j) = rest
                        .iter()
                        .position(|a| matches!(a, Atom::Eq(e) if e.coeff(v).abs() == 1))
                    else {
                        continue;
                    };
                    let e = rest[j].expr().clone();
                    let c = e.coeff(v);
                    let Some(by) = e
                        .checked_sub(&Affine::var(v).checked_scale(c).unwrap_or_default())
                        .and_then(|r| r.checked_scale(-c))
                    else {
                        continue;
                    };
                    // Written as a function of the read only: `S(i', j')
                    // where i' - j' = i - j` reads better than `S(i', i' - i + j)`.
                    if by
                        .vars()
                        .any(|w| matches!(w, Var::Counter(c) if source_index(c).is_some()))
                    {
                        continue;
                    }
                    let solved: Option<Vec<Atom>> = rest
                        .iter()
                        .enumerate()
                        .filter(|&(i, _)| i != j)
                        .map(|(_, a)| Some(a.with(project::substitute(a.expr(), v, &by)?)))
                        .collect();
                    let it: Option<Vec<Affine>> = iter
                        .iter()
                        .map(|a| project::substitute(a, v, &by))
                        .collect();
                    if let (Some(s), Some(it)) = (solved, it) {
                        rest = s;
                        iter = it;
                    }
                }
                Case { iter, rest }
            })
            .collect()
    }
}

impl Family {
    /// A variable's name for printing: a source coordinate is its
    /// counter's name primed (`j'`).
    pub fn name(&self, program: &Program, v: Var) -> String {
        match v {
            Var::Param(p) => program.params[p.index()].name.clone(),
            Var::Counter(c) => match source_index(c).and_then(|k| self.counters.get(k)) {
                Some(&own) => format!("{}'", program.counter_decl(own).name),
                None => program.counter_decl(c).name.clone(),
            },
        }
    }
}
