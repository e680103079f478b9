//! Rescheduling: a program rewritten so that its loops run
//! every statement's instances in the lexicographic order of an affine
//! schedule's times (`affine::AffineSchedule`), each statement's original
//! counters recovered from the new ones and substituted into its accesses.
//!
//! Scope, refused otherwise with the statement and the reason: `for` loops
//! (a step other than 1 becomes a guard on the counter's residue) and
//! static conditions around each statement (no `while`, no
//! condition that reads memory, calls or is `...`); per statement, the time
//! rows that use its counters form, completed by unit rows for the
//! counters they leave free, a unimodular matrix (permutations, skews,
//! reversals), plus parameter and constant offsets; the other rows are
//! scalars (affine in the parameters) that order statements. The counters
//! a statement's time leaves free become innermost `doall` loops: its
//! instances with equal times run in any order.
//!
//! Per statement the domain, in the time coordinates, is projected
//! dimension by dimension (Fourier–Motzkin, `shadow`); a loop's bounds are
//! one unit-coefficient lower and upper bound, the others guards. At each time dimension the statements still together either
//! share one loop (their ranges differ by constants: the loop spans the
//! union, each statement guarded by its own range) or are split into
//! consecutive pieces (one range provably ends before the other starts);
//! any other pair is refused, as min/max bounds are not affine.

use super::affine::AffineSchedule;
use crate::codegen::expr_of;
use crate::interp::IterationMap;
use crate::model::builder::e::{bin, counter};
use crate::model::*;
use crate::symbolic::domain::Atom;
use crate::symbolic::project;
use std::collections::HashSet;

/// The rescheduled program and the name of each statement's operations in
/// the original (`interp::Options::iterations`, by which `equiv` compares).
pub struct Rescheduled {
    pub program: Program,
    pub iterations: IterationMap,
}

/// Why a program cannot be rescheduled: the statement (or loop, or
/// condition) at `span` and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RescheduleError {
    pub message: String,
    pub span: Span,
}

/// The loops and conditions are rewritten; the program is printed and read
/// back, so it is exactly what `check` accepts.
pub fn scan(program: &Program, schedule: &AffineSchedule) -> Result<Rescheduled, RescheduleError> {
    let mut p = program.clone();
    let body = std::mem::take(&mut p.body);
    let (body, iterations) = body_of(&mut p, body, schedule)?;
    p.body = body;
    derive_generated_labels(&mut p.body);
    let text = crate::print::program(&p);
    let (back, diags) = crate::lower::compile_errors(&text, crate::diagnostics::FileId(0));
    match back.filter(|_| !diags.iter().any(|d| d.is_error())) {
        Some(program) => Ok(Rescheduled {
            program,
            iterations,
        }),
        None => Err(RescheduleError {
            message: format!(
                "internal error: the rescheduled program does not check: {diags:?}\n{text}"
            ),
            span: Span::NONE,
        }),
    }
}

/// `body` (statements of `p`, numbered as `schedule` numbers its sites)
/// rescheduled; new counters are added to `p`.
pub fn body_of(
    p: &mut Program,
    body: Vec<Node>,
    schedule: &AffineSchedule,
) -> Result<(Vec<Node>, IterationMap), RescheduleError> {
    let mut leaves = Vec::new();
    collect(p, &body, &mut Vec::new(), &mut Vec::new(), &mut leaves)?;
    // The iteration map goes by base label, as `equiv` does.
    let mut seen = HashSet::new();
    for l in &leaves {
        if !seen.insert(base_label(&l.stmt.label)) {
            return refuse(
                format!(
                    "statement `{}` shares its base label `{}` with another statement: their operations could not be told apart",
                    l.stmt.label,
                    base_label(&l.stmt.label)
                ),
                l.stmt.span,
            );
        }
    }
    let nparams = p.params.len();
    let width = schedule.width;
    let mut stmts = Vec::new();
    for leaf in leaves {
        stmts.push(Statement::new(p, leaf, schedule, width, nparams)?);
    }
    let full = width + stmts.iter().map(|s| s.completions).max().unwrap_or(0);
    let taken: HashSet<String> = p
        .params
        .iter()
        .map(|x| x.name.clone())
        .chain(p.arrays.iter().map(|x| x.name.clone()))
        .collect();
    let mut g = Gen {
        p,
        stmts,
        width,
        taken,
        path: Vec::new(),
        bind: vec![None; full],
        iterations: IterationMap::default(),
    };
    let group: Vec<usize> = (0..g.stmts.len()).collect();
    let nodes = g.dim(0, group)?;
    Ok((nodes, g.iterations))
}

/// A statement with what is around it.
struct Leaf {
    stmt: Stmt,
    loops: Vec<For>,
    conds: Vec<Cond>,
}

fn refuse<T>(message: String, span: Span) -> Result<T, RescheduleError> {
    Err(RescheduleError { message, span })
}

fn collect(
    p: &Program,
    nodes: &[Node],
    loops: &mut Vec<For>,
    conds: &mut Vec<Cond>,
    out: &mut Vec<Leaf>,
) -> Result<(), RescheduleError> {
    for n in nodes {
        match n {
            Node::Stmt(s) => out.push(Leaf {
                stmt: s.clone(),
                loops: loops.clone(),
                conds: conds.clone(),
            }),
            Node::For(f) => {
                let n = conds.len();
                if f.step != 1 {
                    // `(i - lower) % step == 0`: the new loops run every
                    // integer of the range, the statement only on the
                    // original's iterations.
                    let from = bin(BinOp::Sub, counter(f.counter), f.lower.expr.clone());
                    let rem = bin(BinOp::Rem, from, Expr::int(f.step));
                    conds.push(Cond::Cmp(CmpOp::Eq, rem, Expr::int(0)));
                }
                loops.push(For {
                    body: Vec::new(),
                    lower: f.lower.clone(),
                    upper: f.upper.clone(),
                    ..*f
                });
                collect(p, &f.body, loops, conds, out)?;
                loops.pop();
                conds.truncate(n);
            }
            Node::While(w) => {
                let inside = stmts_in(&w.body);
                return refuse(
                    format!(
                        "{} inside the `while` loop `{}`: its trip count is known only at run time (dynamic control), so its instances have no static domain to scan",
                        match inside.first() {
                            Some(s) => format!("statement `{}` is", s.label),
                            None => "nothing is".to_string(),
                        },
                        p.counter_decl(w.counter).name
                    ),
                    w.span,
                );
            }
            Node::If(i) => {
                let mut before: Vec<Cond> = Vec::new();
                for (c, b) in &i.branches {
                    if !c.cond.is_static() {
                        let v = stmts_in(b);
                        return refuse(
                            format!(
                                "{} under the condition `{}`, which reads memory, calls a function or is `...` (dynamic control)",
                                v.first().map_or("a branch is".to_string(), |s| format!("statement `{}` is", s.label)),
                                c.name
                            ),
                            c.span,
                        );
                    }
                    let n = conds.len();
                    conds.extend(before.iter().cloned());
                    conds.push(c.cond.clone());
                    collect(p, b, loops, conds, out)?;
                    conds.truncate(n);
                    before.push(Cond::Not(Box::new(c.cond.clone())));
                }
                if let Some(b) = &i.otherwise {
                    let n = conds.len();
                    conds.extend(before);
                    collect(p, b, loops, conds, out)?;
                    conds.truncate(n);
                }
            }
        }
    }
    Ok(())
}

/// The placeholder variable of time dimension `k` (before loops exist).
fn tvar(k: usize) -> Var {
    Var::Counter(CounterId((1 << 30) + k as u32))
}

fn placeholder(v: Var) -> Option<usize> {
    match v {
        Var::Counter(c) if c.0 >= 1 << 30 => Some((c.0 - (1 << 30)) as usize),
        _ => None,
    }
}

/// A statement's time dimension: a scalar (affine in the parameters), or
/// one of its loops in the new coordinates.
#[derive(Clone)]
enum Kind {
    Scalar(Affine),
    Iter(Level),
}

/// A new loop of one statement: its bounds and the other constraints on it
/// (over the outer time dimensions' placeholders and the parameters).
#[derive(Clone)]
struct Level {
    lower: Affine,
    upper: Affine,
    guards: Vec<Atom>,
    /// The counter the dimension stands for, when it is one (its name).
    name: Option<String>,
}

struct Statement {
    stmt: Stmt,
    conds: Vec<Cond>,
    loops: Vec<CounterId>,
    /// Per time dimension (the schedule's, then its completions).
    dims: Vec<Kind>,
    completions: usize,
    /// Each original counter over the placeholders and parameters.
    inverse: Vec<Affine>,
    /// Guards added on the way down (ranges of fused loops), in the new
    /// loops' counters.
    pending: Vec<Atom>,
}

fn row_affine(row: &[i64], d: usize, time: Option<&[Var]>, nparams: usize) -> Option<Affine> {
    let mut a = Affine::constant(row[d + nparams]);
    if let Some(vars) = time {
        for (k, &c) in row[..d].iter().enumerate() {
            a = a.checked_add(&Affine::var(vars[k]).checked_scale(c)?)?;
        }
    }
    for q in 0..nparams {
        a =
            a.checked_add(&Affine::var(Var::Param(ParamId(q as u32))).checked_scale(row[d + q])?)?;
    }
    Some(a)
}

impl Statement {
    fn new(
        p: &Program,
        leaf: Leaf,
        schedule: &AffineSchedule,
        width: usize,
        nparams: usize,
    ) -> Result<Statement, RescheduleError> {
        let Leaf { stmt, loops, conds } = leaf;
        let d = loops.len();
        let span = stmt.span;
        let label = stmt.label.clone();
        let Some(Some(rows)) = schedule.times.get(stmt.id.index()) else {
            return refuse(
                format!("statement `{label}` has no time in the schedule"),
                span,
            );
        };
        let mut rows = rows.clone();
        rows.resize(width, vec![0; d + nparams + 1]);
        let overflow = || RescheduleError {
            message: format!("statement `{label}`: arithmetic overflow in its schedule"),
            span,
        };
        // The rows that use the counters, then unit rows for the counters
        // they leave free.
        let iter_rows: Vec<usize> = (0..width)
            .filter(|&r| rows[r][..d].iter().any(|&c| c != 0))
            .collect();
        let mut m: Vec<Vec<i64>> = iter_rows.iter().map(|&r| rows[r][..d].to_vec()).collect();
        if crate::fit::rank(&m) < m.len() {
            return refuse(
                format!(
                    "statement `{label}`: its time has {} dimensions that depend on its {d} counter(s), and they are not independent (one is a combination of the others): only schedules invertible on each statement's counters are rescheduled",
                    m.len()
                ),
                span,
            );
        }
        let mut free = Vec::new();
        for k in 0..d {
            let mut e = vec![0; d];
            e[k] = 1;
            let mut with = m.clone();
            with.push(e.clone());
            if crate::fit::rank(&with) > crate::fit::rank(&m) {
                m = with;
                free.push(k);
            }
        }
        let det = determinant(&m);
        if det.abs() != 1 {
            return refuse(
                format!(
                    "statement `{label}`: its schedule is not unimodular on its counters (determinant {det} with the free counters completed): the new loops would need strides, which this rescheduling does not make"
                ),
                span,
            );
        }
        let inv = inverse(&m, det).ok_or_else(overflow)?;
        // Time positions of m's rows.
        let positions: Vec<usize> = iter_rows
            .iter()
            .copied()
            .chain((0..free.len()).map(|j| width + j))
            .collect();
        // Offsets (parameters and constant) of m's rows.
        let offsets: Vec<Affine> = iter_rows
            .iter()
            .map(|&r| row_affine(&rows[r], d, None, nparams))
            .chain(free.iter().map(|_| Some(Affine::constant(0))))
            .collect::<Option<_>>()
            .ok_or_else(overflow)?;
        // x = M⁻¹ (y - offset).
        let mut inverse_x = Vec::with_capacity(d);
        for row in &inv {
            let mut a = Affine::constant(0);
            for (j, &c) in row.iter().enumerate() {
                let y = Affine::var(tvar(positions[j]))
                    .checked_sub(&offsets[j])
                    .and_then(|y| y.checked_scale(c))
                    .ok_or_else(overflow)?;
                a = a.checked_add(&y).ok_or_else(overflow)?;
            }
            inverse_x.push(a);
        }
        let to_time = |a: &Affine| -> Option<Affine> {
            let mut out = a.clone();
            for (k, f) in loops.iter().enumerate() {
                out = project::substitute(&out, Var::Counter(f.counter), &inverse_x[k])?;
            }
            Some(out)
        };
        let mut sys = Vec::new();
        for f in &loops {
            let x = Affine::var(Var::Counter(f.counter));
            let lo = f.lower.affine.checked_sub(&x).and_then(|e| to_time(&e));
            let hi = x.checked_sub(&f.upper.affine).and_then(|e| to_time(&e));
            sys.push(Atom::Le(lo.ok_or_else(overflow)?));
            sys.push(Atom::Le(hi.ok_or_else(overflow)?));
        }
        // Projection, innermost new dimension first. The domain's own
        // constraints that are no loop's bound are guards; the projection's
        // are implied by them, so only ever bounds.
        let domain = sys.clone();
        let mut order = positions.clone();
        order.sort_unstable();
        let mut levels: Vec<Option<Level>> = vec![None; width + free.len()];
        for &k in order.iter().rev() {
            let v = tvar(k);
            let here: Vec<Atom> = sys
                .iter()
                .filter(|a| a.expr().coeff(v) != 0)
                .cloned()
                .collect();
            let mut lower = None;
            let mut upper = None;
            let mut guards = Vec::new();
            for a in here {
                let e = a.expr();
                match e.coeff(v) {
                    -1 if lower.is_none() => lower = e.checked_add(&Affine::var(v)),
                    1 if upper.is_none() => {
                        upper = e
                            .checked_sub(&Affine::var(v))
                            .and_then(|x| x.checked_scale(-1))
                    }
                    _ if domain.contains(&a) => guards.push(a.clone()),
                    _ => {}
                }
            }
            let name_of = |k: usize| -> Option<String> {
                // A dimension that is one counter (with ±1) is named after it.
                let j = positions.iter().position(|&q| q == k)?;
                let nz: Vec<usize> = (0..d).filter(|&c| m[j][c] != 0).collect();
                match nz[..] {
                    [c] if m[j][c].abs() == 1 => {
                        Some(p.counter_decl(loops[c].counter).name.clone())
                    }
                    _ => None,
                }
            };
            let (Some(lower), Some(upper)) = (lower, upper) else {
                return refuse(
                    format!(
                        "statement `{label}`: time dimension {k} has no lower or no upper bound with a unit coefficient in the new coordinates (a bound would need a division)"
                    ),
                    span,
                );
            };
            levels[k] = Some(Level {
                lower,
                upper,
                guards,
                name: name_of(k),
            });
            sys = shadow(&sys, v).ok_or_else(overflow)?;
        }
        let mut dims = Vec::with_capacity(width + free.len());
        for (k, level) in levels.into_iter().enumerate() {
            dims.push(match level {
                Some(l) => Kind::Iter(l),
                None => Kind::Scalar(row_affine(&rows[k], d, None, nparams).ok_or_else(overflow)?),
            });
        }
        Ok(Statement {
            stmt,
            conds,
            loops: loops.iter().map(|f| f.counter).collect(),
            dims,
            completions: free.len(),
            inverse: inverse_x,
            pending: Vec::new(),
        })
    }
}

/// `∃v. sys` over the rationals (Fourier–Motzkin's real shadow): a
/// superset of the integer projection `symbolic::project` computes or
/// refuses, enough here, as every constraint of the domain is checked again
/// at the statement (as a bound or a guard): outer loops may run an
/// iteration with nothing inside, never miss one. Constant truths dropped.
fn shadow(sys: &[Atom], v: Var) -> Option<Vec<Atom>> {
    let mut out: Vec<Atom> = sys
        .iter()
        .filter(|a| a.expr().coeff(v) == 0)
        .cloned()
        .collect();
    let (lower, upper): (Vec<&Affine>, Vec<&Affine>) = sys
        .iter()
        .map(Atom::expr)
        .filter(|e| e.coeff(v) != 0)
        .partition(|e| e.coeff(v) < 0);
    for l in &lower {
        for u in &upper {
            let (a, b) = (u.coeff(v), -l.coeff(v));
            let g = gcd(a as i128, b as i128) as i64;
            let e = l
                .checked_scale(a / g)?
                .checked_add(&u.checked_scale(b / g)?)?;
            let a = Atom::Le(e);
            if !out.contains(&a) {
                out.push(a);
            }
        }
    }
    out.retain(|a| !(a.expr().is_constant() && a.expr().constant <= 0));
    Some(out)
}

fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `m` without row `i` and column `j`.
fn minor(m: &[Vec<i64>], i: usize, j: usize) -> Vec<Vec<i64>> {
    let skip = |k: usize, at: usize| k != at;
    m.iter()
        .enumerate()
        .filter(|&(k, _)| skip(k, i))
        .map(|(_, r)| {
            r.iter()
                .enumerate()
                .filter(|&(k, _)| skip(k, j))
                .map(|(_, &x)| x)
                .collect()
        })
        .collect()
}

/// The determinant of a square matrix (cofactor expansion: a statement has
/// a few counters).
fn determinant(m: &[Vec<i64>]) -> i128 {
    match m.len() {
        0 => 1,
        1 => m[0][0] as i128,
        n => (0..n)
            .map(|c| {
                let s = if c % 2 == 0 { 1 } else { -1 };
                s * m[0][c] as i128 * determinant(&minor(m, 0, c))
            })
            .sum(),
    }
}

/// The inverse of a unimodular matrix: the adjugate divided by ±1.
fn inverse(m: &[Vec<i64>], det: i128) -> Option<Vec<Vec<i64>>> {
    let n = m.len();
    let mut inv = vec![vec![0i64; n]; n];
    for i in 0..n {
        for (j, out) in inv.iter_mut().enumerate() {
            let s = if (i + j) % 2 == 0 { 1 } else { -1 };
            out[i] = i64::try_from(s * determinant(&minor(m, i, j)) * det).ok()?;
        }
    }
    Some(inv)
}

/// The generator's state.
struct Gen<'p> {
    p: &'p mut Program,
    stmts: Vec<Statement>,
    width: usize,
    taken: HashSet<String>,
    /// The loops around the point being generated.
    path: Vec<CounterId>,
    /// Per statement base label, its original iteration over `path`.
    iterations: IterationMap,
    /// Each time dimension's value there: a new loop's counter, or a
    /// scalar in the parameters.
    bind: Vec<Option<Affine>>,
}

/// One range of a time dimension, and the statements in it.
struct Piece {
    lo: Affine,
    hi: Affine,
    members: Vec<usize>,
}

fn constant_diff(a: &Affine, b: &Affine) -> Option<i64> {
    let d = a.checked_sub(b)?;
    d.is_constant().then_some(d.constant)
}

/// `a` ends before `b` starts, for every parameter value.
fn before(a: &Piece, b: &Piece) -> bool {
    constant_diff(&b.lo, &a.hi).is_some_and(|d| d >= 1)
}

impl Gen<'_> {
    /// Substitutes the bound time dimensions' values for their placeholders.
    fn bound(&self, a: &Affine) -> Affine {
        let mut out = a.clone();
        for &(v, _) in &a.terms {
            if let Some(k) = placeholder(v) {
                if let Some(b) = &self.bind[k] {
                    out = project::substitute(&out, v, b).unwrap_or(out);
                }
            }
        }
        out
    }

    /// A counter name free among the parameters, the arrays and the loops
    /// around (sibling loops may share one).
    fn fresh(&mut self, base: &str) -> String {
        crate::codegen::fresh_name(base, |n| {
            self.taken.contains(n) || self.path.iter().any(|&c| self.p.counter_decl(c).name == n)
        })
    }

    fn new_counter(&mut self, base: &str) -> CounterId {
        let name = self.fresh(base);
        crate::codegen::push_counter(self.p, name)
    }

    fn dim(&mut self, k: usize, group: Vec<usize>) -> Result<Vec<Node>, RescheduleError> {
        if k == self.width {
            let mut out = Vec::new();
            for s in group {
                out.extend(self.leaf(s, k)?);
            }
            return Ok(out);
        }
        let mut pieces: Vec<Piece> = Vec::new();
        for &s in &group {
            let (lo, hi) = match &self.stmts[s].dims[k] {
                Kind::Scalar(c) => (c.clone(), c.clone()),
                Kind::Iter(l) => (self.bound(&l.lower), self.bound(&l.upper)),
            };
            let mut new = Piece {
                lo,
                hi,
                members: vec![s],
            };
            loop {
                let Some(i) = pieces
                    .iter()
                    .position(|q| !before(q, &new) && !before(&new, q))
                else {
                    pieces.push(new);
                    break;
                };
                let q = &pieces[i];
                match (constant_diff(&new.lo, &q.lo), constant_diff(&new.hi, &q.hi)) {
                    (Some(dl), Some(dh)) => {
                        let q = pieces.remove(i);
                        new.lo = if dl < 0 { new.lo } else { q.lo };
                        new.hi = if dh > 0 { new.hi } else { q.hi };
                        new.members.extend(q.members);
                        new.members.sort_unstable();
                    }
                    _ => {
                        let (a, b) = (&self.stmts[q.members[0]].stmt, &self.stmts[s].stmt);
                        return refuse(
                            format!(
                                "statements `{}` and `{}` meet at time dimension {k} with ranges that are neither ordered nor a constant apart ({} .. {} and {} .. {}): one loop would need min/max bounds",
                                a.label,
                                b.label,
                                expr_text(self.p, &q.lo),
                                expr_text(self.p, &q.hi),
                                expr_text(self.p, &new.lo),
                                expr_text(self.p, &new.hi)
                            ),
                            b.span,
                        );
                    }
                }
            }
        }
        pieces.sort_by(|a, b| {
            if before(a, b) {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Greater
            }
        });
        let mut out = Vec::new();
        for piece in pieces {
            let single = piece.lo == piece.hi;
            let name = piece
                .members
                .iter()
                .find_map(|&s| match &self.stmts[s].dims[k] {
                    Kind::Iter(l) => l.name.clone(),
                    Kind::Scalar(_) => None,
                })
                .unwrap_or_else(|| format!("t{k}"));
            let counter = (!single).then(|| self.new_counter(&name));
            let at = match counter {
                Some(c) => Affine::var(Var::Counter(c)),
                None => piece.lo.clone(),
            };
            for &s in &piece.members {
                let (lo, hi) = match &self.stmts[s].dims[k] {
                    Kind::Scalar(c) => (c.clone(), c.clone()),
                    Kind::Iter(l) => (self.bound(&l.lower), self.bound(&l.upper)),
                };
                let mut add = Vec::new();
                if lo != piece.lo || single {
                    add.push(lo.checked_sub(&at));
                }
                if hi != piece.hi || single {
                    add.push(at.checked_sub(&hi));
                }
                for a in add {
                    let a = a.ok_or_else(|| RescheduleError {
                        message: "arithmetic overflow in a loop bound".into(),
                        span: self.stmts[s].stmt.span,
                    })?;
                    self.stmts[s].pending.push(Atom::Le(a));
                }
            }
            self.bind[k] = Some(at);
            let body = match counter {
                Some(c) => {
                    self.path.push(c);
                    let body = self.dim(k + 1, piece.members)?;
                    self.path.pop();
                    vec![Node::For(For {
                        counter: c,
                        lower: bound_of(&piece.lo),
                        upper: bound_of(&piece.hi),
                        step: 1,
                        parallel: false,
                        body,
                        span: Span::NONE,
                    })]
                }
                None => self.dim(k + 1, piece.members)?,
            };
            self.bind[k] = None;
            out.extend(body);
        }
        Ok(out)
    }

    /// Affine forms over the loops around (`path`) and the parameters as
    /// rows: the coefficients of the loops, outermost first, then of the
    /// parameters, then the constant.
    fn rows(&self, forms: &[Affine]) -> Vec<Vec<i64>> {
        let (n, q) = (self.path.len(), self.p.params.len());
        forms
            .iter()
            .map(|a| {
                let mut r = vec![0; n + q + 1];
                for &(v, c) in &a.terms {
                    match v {
                        Var::Counter(k) => {
                            let j = self.path.iter().position(|&x| x == k);
                            r[j.expect("a loop around")] = c;
                        }
                        Var::Param(p) => r[n + p.index()] = c,
                    }
                }
                r[n + q] = a.constant;
                r
            })
            .collect()
    }

    /// Statement `s` alone from time dimension `k` on: its free counters as
    /// `doall` loops, its guards, itself with its counters substituted.
    fn leaf(&mut self, s: usize, k: usize) -> Result<Vec<Node>, RescheduleError> {
        if k < self.stmts[s].dims.len() {
            let Kind::Iter(l) = self.stmts[s].dims[k].clone() else {
                return self.leaf(s, k + 1);
            };
            let name = l.name.clone().unwrap_or_else(|| format!("t{k}"));
            let c = self.new_counter(&name);
            let (lo, hi) = (self.bound(&l.lower), self.bound(&l.upper));
            self.bind[k] = Some(Affine::var(Var::Counter(c)));
            self.path.push(c);
            let body = self.leaf(s, k + 1)?;
            self.path.pop();
            self.bind[k] = None;
            return Ok(vec![Node::For(For {
                counter: c,
                lower: bound_of(&lo),
                upper: bound_of(&hi),
                step: 1,
                parallel: true,
                body,
                span: Span::NONE,
            })]);
        }
        let st = &self.stmts[s];
        // `top` (the parameters' constraints) is implied: every constraint
        // of the domain is a bound or a guard at some level.
        let mut atoms: Vec<Atom> = Vec::new();
        for d in &st.dims {
            if let Kind::Iter(l) = d {
                atoms.extend(l.guards.iter().cloned());
            }
        }
        let mut guards: Vec<Affine> = Vec::new();
        for a in atoms
            .iter()
            .map(|a| self.bound(a.expr()))
            .chain(st.pending.iter().map(|a| a.expr().clone()))
        {
            if a.is_constant() && a.constant <= 0 {
                continue;
            }
            if !guards.contains(&a) {
                guards.push(a);
            }
        }
        let originals: Vec<Affine> = st.inverse.iter().map(|a| self.bound(a)).collect();
        let values: Vec<Expr> = originals.iter().map(expr_of).collect();
        let rows = self.rows(&originals);
        let label = base_label(&st.stmt.label).to_string();
        self.iterations.0.insert(label, rows);
        let st = &self.stmts[s];
        let loops = st.loops.clone();
        let sub = |e: &Expr| substitute(e, &loops, &values);
        let mut stmt = st.stmt.clone();
        match &mut stmt.kind {
            StmtKind::Assign { target, value, .. } => {
                *target = substitute_access(target, &loops, &values);
                *value = sub(value);
            }
            StmtKind::Call { args, .. } => {
                for a in args.iter_mut() {
                    *a = sub(a);
                }
            }
        }
        let mut node = Node::Stmt(stmt);
        let conds: Vec<Cond> = st.conds.iter().map(|c| c.map_exprs(&sub)).collect();
        for cond in [
            and_all(conds),
            and_all(guards.iter().map(le_zero).collect()),
        ]
        .into_iter()
        .flatten()
        {
            node = Node::If(If {
                branches: vec![(
                    Condition {
                        id: CondId(0),
                        name: String::new(),
                        generated: true,
                        cond,
                        span: Span::NONE,
                    },
                    vec![node],
                )],
                otherwise: None,
                span: Span::NONE,
            });
        }
        Ok(vec![node])
    }
}

fn bound_of(a: &Affine) -> Bound {
    Bound {
        expr: expr_of(a),
        affine: a.clone(),
    }
}

/// `a <= 0` written as `positive terms <= negative terms`.
fn le_zero(a: &Affine) -> Cond {
    let mut l = Affine::constant(a.constant.max(0));
    let mut r = Affine::constant((-a.constant).max(0));
    for &(v, c) in &a.terms {
        let t = Affine {
            terms: vec![(v, c.abs())],
            constant: 0,
        };
        if c > 0 {
            l = l.checked_add(&t).unwrap_or(l);
        } else {
            r = r.checked_add(&t).unwrap_or(r);
        }
    }
    Cond::Cmp(CmpOp::Le, expr_of(&l), expr_of(&r))
}

fn and_all(cs: Vec<Cond>) -> Option<Cond> {
    cs.into_iter()
        .reduce(|a, b| Cond::And(Box::new(a), Box::new(b)))
}

fn expr_text(p: &Program, a: &Affine) -> String {
    crate::print::expr(p, &expr_of(a))
}

/// `e` with each counter of `loops` replaced by its value.
fn substitute(e: &Expr, loops: &[CounterId], values: &[Expr]) -> Expr {
    let kind = match &e.kind {
        ExprKind::Counter(c) => match loops.iter().position(|x| x == c) {
            Some(k) => return values[k].clone(),
            None => ExprKind::Counter(*c),
        },
        ExprKind::Access(a) => ExprKind::Access(substitute_access(a, loops, values)),
        ExprKind::Call(f, args) => ExprKind::Call(
            f.clone(),
            args.iter().map(|a| substitute(a, loops, values)).collect(),
        ),
        ExprKind::Neg(x) => ExprKind::Neg(Box::new(substitute(x, loops, values))),
        ExprKind::Binary(op, l, r) => ExprKind::Binary(
            *op,
            Box::new(substitute(l, loops, values)),
            Box::new(substitute(r, loops, values)),
        ),
        k => k.clone(),
    };
    Expr::new(kind, e.span)
}

fn substitute_access(a: &Access, loops: &[CounterId], values: &[Expr]) -> Access {
    let mut n = a.clone();
    for s in &mut n.subscripts {
        *s = Subscript::new(substitute(&s.expr, loops, values));
    }
    n
}

/// Generated labels (`_S3`: the third statement) would be renumbered by the
/// copies put before them; `_S3.1` keeps standing for `_S3` under `equiv`.
pub(crate) fn derive_generated_labels(nodes: &mut [Node]) {
    super::nodes::each_mut(nodes, &mut |n| {
        if let Node::Stmt(s) = n {
            if s.label_generated {
                s.label = format!("{}.1", s.label);
                s.label_generated = false;
            }
        }
    });
}
