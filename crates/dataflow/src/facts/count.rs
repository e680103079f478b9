//! Counting what [`super::lower`] would make, without making it: access
//! instances, operations, read slots, iteration-vector entries and loop
//! iterations, at the concrete sizes, so that an over-budget request is
//! refused in milliseconds and an admitted one allocates its tables once.
//!
//! The walk mirrors the lowering's (same order, same skipped subtrees, same
//! budget checks), so an over-budget program gets the very error the
//! lowering would give, at the same statement and count. It is cheap because
//! a loop whose body's counts do not depend on its counter (no bound or
//! static condition inside mentions it) is counted as trips × one iteration;
//! only the loops whose counter does shape their body are walked iteration
//! by iteration. A walk that would take more than `WORK` steps, or meets a
//! value it cannot evaluate, gives up (`Ok(None)`): the lowering then counts
//! as it goes, as before.

use super::{Config, LowerError, NONE};
use crate::model::eval::{self, StaticEnv};
use crate::model::{
    Access, AccessRef, Condition, CounterId, Expr, ExprKind, Node, Program, Span, Var,
};

/// What the lowering makes, exactly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Count {
    /// Access instances (`Facts::n_accs`).
    pub instances: u64,
    /// Operations (`Facts::n_ops`).
    pub ops: u64,
    /// Read slots (`Facts::slots`).
    pub slots: u64,
    /// Iteration-vector entries of all operations (`Facts::iters`).
    pub iter_entries: u64,
    /// Loop iterations entered (what the lowering also bounds).
    pub iterations: u64,
}

impl Count {
    fn add_scaled(&mut self, o: &Count, k: u64) {
        let f = |a: u64, b: u64| a.saturating_add(b.saturating_mul(k));
        self.instances = f(self.instances, o.instances);
        self.ops = f(self.ops, o.ops);
        self.slots = f(self.slots, o.slots);
        self.iter_entries = f(self.iter_entries, o.iter_entries);
        self.iterations = f(self.iterations, o.iterations);
    }
}

/// Steps the walk may take before it gives up.
const WORK: u64 = 1 << 22;

/// Why the walk stopped early.
enum Stop {
    /// The budget is exceeded: the lowering's error.
    Over(LowerError),
    /// Too much work, or a value that cannot be evaluated here.
    GiveUp,
}

/// Counts what lowering `program` at `params` would make. `Err` is the
/// budget error the lowering would stop with; `Ok(None)` when the count
/// could not be made cheaply. Statements marked in `skip` (by statement
/// index; empty: none) are a `Frame`'s, which the lowering makes outside the
/// budget: they count for nothing, and loops holding only them are skipped.
pub fn count(
    program: &Program,
    config: &Config,
    params: &[i64],
    dims: &[Vec<(i64, i64)>],
    param_names: &[(String, i64)],
    skip: &[bool],
) -> Result<Option<Count>, LowerError> {
    let mut c = Counter::new(program, config, params, dims, param_names, skip);
    match c.block(&program.body) {
        Ok(()) => Ok(Some(c.total)),
        Err(Stop::Over(e)) => Err(e),
        Err(Stop::GiveUp) => Ok(None),
    }
}

/// What each trip of the top-level loop `f` makes when its counter takes
/// the values `at(0), .., at(trips - 1)`: one [`Count`] per trip, the
/// trip's own iteration included, without budgets (`facts::lower::place`
/// sizes chunks with it; the lowering checks the budgets). `None` when
/// it cannot be counted cheaply. No frame: `skip` is empty.
pub(super) fn per_trip(
    program: &Program,
    config: &Config,
    params: &[i64],
    dims: &[Vec<(i64, i64)>],
    f: &crate::model::For,
    trips: u64,
    at: impl Fn(u64) -> i64,
) -> Option<Vec<Count>> {
    let mut c = Counter::new(program, config, params, dims, &[], &[]);
    c.limits = false;
    (0..trips)
        .map(|k| {
            c.total = Count::default();
            c.counters[f.counter.index()] = at(k);
            c.one(None, &f.body).ok()?;
            c.total.iterations += 1;
            Some(c.total)
        })
        .collect()
}

struct Counter<'p> {
    program: &'p Program,
    /// A frame's statements, by statement index (empty: none).
    skip: &'p [bool],
    config: &'p Config,
    params: &'p [i64],
    dims: &'p [Vec<(i64, i64)>],
    param_names: &'p [(String, i64)],
    counters: Vec<i64>,
    depth: u64,
    total: Count,
    /// Whether the budget applies (not while counting one sample iteration).
    limits: bool,
    work: u64,
    shape: Shape,
}

/// What the counts of a program's subtrees depend on.
pub(super) struct Shape {
    /// Per loop (by counter) and per `if` (by its first condition): whether
    /// its subtree makes instances (as the lowering decides).
    loop_touches: Vec<bool>,
    if_touches: Vec<bool>,
    /// Per loop counter: some bound or static condition in its body uses it,
    /// so its trips may make different counts.
    pub(super) varies: Vec<bool>,
}

impl Shape {
    /// The shape of `program`, the statements marked in `skip` (a frame's)
    /// making nothing.
    pub(super) fn of(program: &Program, skip: &[bool]) -> Shape {
        let mut shape = Shape {
            loop_touches: vec![false; program.counters.len()],
            if_touches: vec![false; program.conditions().len()],
            varies: vec![false; program.counters.len()],
        };
        shape.walk(skip, &program.body);
        shape
    }

    /// Fills the tables for `nodes`; returns whether they make instances and
    /// the counters their shape uses.
    fn walk(&mut self, skip: &[bool], nodes: &[Node]) -> (bool, Vec<CounterId>) {
        let mut any = false;
        let mut used = Vec::new();
        for n in nodes {
            match n {
                Node::Stmt(s) => {
                    let skipped = skip.get(s.id.index()).copied().unwrap_or(false);
                    any |= !skipped && !s.accesses().is_empty();
                }
                Node::For(f) => {
                    let (t, inner) = self.walk(skip, &f.body);
                    self.loop_touches[f.counter.index()] = t;
                    self.varies[f.counter.index()] = inner.contains(&f.counter);
                    any |= t;
                    used.extend(inner);
                    for b in [&f.lower, &f.upper] {
                        used.extend(b.affine.vars().filter_map(|v| match v {
                            Var::Counter(c) => Some(c),
                            Var::Param(_) => None,
                        }));
                    }
                }
                Node::While(w) => {
                    let (t, mut inner) = self.walk(skip, &w.body);
                    let t = t || !reads(&w.cond).is_empty();
                    cond_counters(&w.cond, &mut inner);
                    self.loop_touches[w.counter.index()] = t;
                    self.varies[w.counter.index()] = inner.contains(&w.counter);
                    any |= t;
                    used.extend(inner);
                }
                Node::If(i) => {
                    let mut t = false;
                    for (c, b) in &i.branches {
                        let (tb, inner) = self.walk(skip, b);
                        t |= tb | !reads(c).is_empty();
                        cond_counters(c, &mut used);
                        used.extend(inner);
                    }
                    if let Some(b) = &i.otherwise {
                        let (tb, inner) = self.walk(skip, b);
                        t |= tb;
                        used.extend(inner);
                    }
                    if let Some((c, _)) = i.branches.first() {
                        self.if_touches[c.id.index()] = t;
                    }
                    any |= t;
                }
            }
        }
        used.sort_unstable();
        used.dedup();
        (any, used)
    }
}

/// Counters a static expression uses.
fn expr_counters(e: &Expr, out: &mut Vec<CounterId>) {
    match &e.kind {
        ExprKind::Counter(c) => out.push(*c),
        ExprKind::Neg(a) => expr_counters(a, out),
        ExprKind::Binary(_, l, r) => {
            expr_counters(l, out);
            expr_counters(r, out);
        }
        // Reads, calls and `...` make a condition unknown: no count depends on them.
        _ => {}
    }
}

/// Counters a static condition uses (none for an unknown one).
fn cond_counters(c: &Condition, out: &mut Vec<CounterId>) {
    fn walk(c: &crate::model::Cond, out: &mut Vec<CounterId>) {
        use crate::model::Cond;
        match c {
            Cond::Cmp(_, l, r) => {
                expr_counters(l, out);
                expr_counters(r, out);
            }
            Cond::And(a, b) | Cond::Or(a, b) => {
                walk(a, out);
                walk(b, out);
            }
            Cond::Not(a) => walk(a, out),
            Cond::Unknown => {}
        }
    }
    if c.cond.is_static() {
        walk(&c.cond, out);
    }
}

impl<'p> Counter<'p> {
    /// A counter at the start of `program`, its shape worked out.
    fn new(
        program: &'p Program,
        config: &'p Config,
        params: &'p [i64],
        dims: &'p [Vec<(i64, i64)>],
        param_names: &'p [(String, i64)],
        skip: &'p [bool],
    ) -> Counter<'p> {
        Counter {
            program,
            skip,
            config,
            params,
            dims,
            param_names,
            counters: vec![0; program.counters.len()],
            depth: 0,
            total: Count::default(),
            limits: true,
            work: 0,
            shape: Shape::of(program, skip),
        }
    }

    fn skipped(&self, s: &crate::model::Stmt) -> bool {
        self.skip.get(s.id.index()).copied().unwrap_or(false)
    }

    fn tick(&mut self) -> Result<(), Stop> {
        self.work += 1;
        if self.work > WORK {
            return Err(Stop::GiveUp);
        }
        Ok(())
    }

    fn over(&self, unit: &'static str, name: &str, span: Span, count: u64, max: u64) -> Stop {
        Stop::Over(LowerError::Budget {
            unit,
            site: name.to_string(),
            span,
            count,
            max,
            params: self.param_names.to_vec(),
        })
    }

    fn iteration(&mut self, name: &str, span: Span) -> Result<(), Stop> {
        self.total.iterations += 1;
        let max = self.config.max_instances;
        if self.limits && self.total.iterations > max {
            return Err(self.over("loop iterations", name, span, self.total.iterations, max));
        }
        Ok(())
    }

    fn block(&mut self, nodes: &'p [Node]) -> Result<(), Stop> {
        for n in nodes {
            self.tick()?;
            match n {
                Node::Stmt(s) if self.skipped(s) => {}
                Node::Stmt(s) => {
                    let accs = s.accesses();
                    self.op(&accs, &s.label, s.span)?;
                }
                Node::For(f) => {
                    if !self.shape.loop_touches[f.counter.index()] {
                        continue;
                    }
                    let lo = self.affine(&f.lower.affine)?;
                    let hi = self.affine(&f.upper.affine)?;
                    if f.step < 1 {
                        return Err(Stop::GiveUp);
                    }
                    let trips = if hi < lo {
                        0
                    } else {
                        ((i128::from(hi) - i128::from(lo)) / i128::from(f.step) + 1) as u64
                    };
                    let name = &self.program.counter_decl(f.counter).name;
                    let at = |k: u64| lo + (k as i64) * f.step;
                    self.repeat(f.counter, trips, at, name, f.span, &f.body, None)?;
                }
                Node::While(w) => {
                    if !self.shape.loop_touches[w.counter.index()] {
                        continue;
                    }
                    let trips = u64::from(self.config.max_trips);
                    let name = &w.cond.name;
                    if w.cond.cond.is_static() {
                        // The condition decides the trips: one at a time.
                        for k in 0..trips {
                            self.tick()?;
                            self.iteration(name, w.span)?;
                            self.counters[w.counter.index()] = k as i64;
                            self.depth += 1;
                            let go = self.test(&w.cond).and_then(|()| self.holds(&w.cond));
                            let r = match go {
                                Ok(true) => self.block(&w.body).map(|()| true),
                                other => other,
                            };
                            self.depth -= 1;
                            if !r? {
                                break;
                            }
                        }
                    } else {
                        let test = Some(&w.cond);
                        self.repeat(w.counter, trips, |k| k as i64, name, w.span, &w.body, test)?;
                    }
                }
                Node::If(i) => {
                    let any = i
                        .branches
                        .first()
                        .is_none_or(|(c, _)| self.shape.if_touches[c.id.index()]);
                    if !any {
                        continue;
                    }
                    let mut taken = false;
                    for (c, body) in &i.branches {
                        self.test(c)?;
                        if c.cond.is_static() {
                            if self.holds(c)? {
                                self.block(body)?;
                                taken = true;
                                break;
                            }
                        } else {
                            self.block(body)?;
                        }
                    }
                    if !taken {
                        if let Some(body) = &i.otherwise {
                            self.block(body)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// `trips` iterations of a loop (counter value `at(k)` at trip k), each
    /// first testing `test` when given (a `while` loop's unknown condition).
    #[allow(clippy::too_many_arguments)]
    fn repeat(
        &mut self,
        counter: CounterId,
        trips: u64,
        at: impl Fn(u64) -> i64,
        name: &str,
        span: Span,
        body: &'p [Node],
        test: Option<&'p Condition>,
    ) -> Result<(), Stop> {
        let mut k = 0;
        if trips > 1 && !self.shape.varies[counter.index()] {
            // Every iteration counts the same: count one, take as many as fit.
            let saved = (self.total, self.limits);
            self.total = Count::default();
            self.limits = false;
            self.counters[counter.index()] = at(0);
            let one = self.one(test, body);
            let mut each = self.total;
            (self.total, self.limits) = saved;
            one?;
            each.iterations += 1;
            let room = |max: u64, now: u64, per: u64| match per {
                0 => u64::MAX,
                p => max.saturating_sub(now) / p,
            };
            let fit = if self.limits {
                let max_acc = self.config.max_instances.min(u64::from(NONE) - 1);
                room(max_acc, self.total.instances, each.instances).min(room(
                    self.config.max_instances,
                    self.total.iterations,
                    each.iterations,
                ))
            } else {
                u64::MAX
            };
            k = fit.min(trips);
            self.total.add_scaled(&each, k);
        }
        // The rest one at a time: all of them when the body varies, else the
        // one that goes over the budget.
        while k < trips {
            self.tick()?;
            self.iteration(name, span)?;
            self.counters[counter.index()] = at(k);
            self.one(test, body)?;
            k += 1;
        }
        Ok(())
    }

    /// One iteration's test (when given) and body, one level deeper,
    /// without the iteration itself.
    fn one(&mut self, test: Option<&'p Condition>, body: &'p [Node]) -> Result<(), Stop> {
        self.depth += 1;
        let r = match test {
            Some(c) => self.test(c).and_then(|()| self.block(body)),
            None => self.block(body),
        };
        self.depth -= 1;
        r
    }

    fn test(&mut self, c: &'p Condition) -> Result<(), Stop> {
        let accs = reads(c);
        self.op(&accs, &c.name, c.span)
    }

    /// One operation with these accesses.
    fn op(&mut self, accs: &[AccessRef<'_>], name: &str, span: Span) -> Result<(), Stop> {
        if accs.is_empty() {
            return Ok(());
        }
        let n = accs
            .iter()
            .map(|a| self.instances(a.access))
            .fold(0u64, u64::saturating_add);
        let t = &mut self.total;
        t.instances = t.instances.saturating_add(n);
        t.ops += 1;
        t.slots += accs.iter().filter(|a| a.kind.reads()).count() as u64;
        t.iter_entries += self.depth;
        let max = self.config.max_instances.min(u64::from(NONE) - 1);
        if self.limits && t.instances > max {
            let count = t.instances;
            return Err(self.over("access instances", name, span, count, max));
        }
        Ok(())
    }

    /// Instances of one access per operation: one cell when its subscripts
    /// are affine, else every cell of the declared range in the dimensions
    /// that are not (`kinds::RangeMay`).
    fn instances(&self, a: &Access) -> u64 {
        let dims = &self.dims[a.array.index()];
        a.subscripts
            .iter()
            .zip(dims)
            .filter(|(s, _)| s.affine.is_none())
            .fold(1u64, |n, (_, &(lo, hi))| {
                let ext = if hi < lo {
                    0
                } else {
                    hi.saturating_sub(lo).saturating_add(1) as u64
                };
                n.saturating_mul(ext)
            })
    }

    fn env(&self) -> StaticEnv<'_> {
        StaticEnv {
            params: self.params,
            counters: &self.counters,
        }
    }

    fn affine(&self, a: &crate::model::Affine) -> Result<i64, Stop> {
        a.eval(|v| match v {
            Var::Param(p) => self.params[p.index()],
            Var::Counter(c) => self.counters[c.index()],
        })
        .ok_or(Stop::GiveUp)
    }

    fn holds(&self, c: &Condition) -> Result<bool, Stop> {
        let mut env = self.env();
        match eval::AffineCmp::of(&c.cond) {
            Some(a) => Ok(a.holds(&env)),
            None => eval::cond(&c.cond, &mut env).map_err(|_| Stop::GiveUp),
        }
    }
}

/// The reads of a condition (its accesses).
fn reads(c: &Condition) -> Vec<AccessRef<'_>> {
    let mut out = Vec::new();
    c.cond.collect_reads(&mut out);
    out
}

impl Count {
    /// The least bytes the facts of this count take, and σ computed from
    /// them (a lower bound of the analysis' peak: the rules' batches, the
    /// cell table and the sources beyond one per read come on top).
    pub fn bytes(&self, keep_cells: bool) -> u64 {
        let per_acc = if keep_cells { 21 } else { 17 };
        // Kept facts are copied into the flow's operation tables.
        let copies = if keep_cells { 2 } else { 1 };
        self.instances
            .saturating_mul(per_acc)
            .saturating_add(self.ops.saturating_mul(12 * copies))
            .saturating_add(self.iter_entries.saturating_mul(8 * copies))
            .saturating_add(self.slots.saturating_mul(8 * copies + 8))
    }

    /// Refuses a count whose facts would not fit in `config.max_memory`.
    pub fn admit(&self, config: &Config, keep_cells: bool) -> Result<(), LowerError> {
        let what = || format!("{} access instances", self.instances);
        crate::budget::reserve(self.bytes(keep_cells), config.max_memory, what)?;
        Ok(())
    }

    /// Allocates the tables of `facts` at their final sizes: no growth,
    /// so no doubling past the budget.
    pub fn reserve(&self, f: &mut super::Facts, keep_cells: bool) {
        let n = |v: u64| v as usize;
        f.reserve_tables(
            [
                n(self.instances),
                n(self.ops),
                n(self.iter_entries),
                n(self.slots),
            ],
            keep_cells,
        );
    }
}

/// [`count`] of `program` at the sizes of `config`, from scratch (tests and
/// benchmarks; the lowering calls [`count`] with what it has evaluated).
pub fn of(program: &Program, config: &Config) -> Result<Option<Count>, LowerError> {
    let params = program
        .param_values(&config.params)
        .map_err(LowerError::Params)?;
    let names: Vec<(String, i64)> = program
        .params
        .iter()
        .zip(&params)
        .map(|(p, &v)| (p.name.clone(), v))
        .collect();
    let dims = dims(program, &params)?;
    count(program, config, &params, &dims, &names, &[])
}

/// The declared range `(lo, hi)` of every dimension of every array at
/// these parameter values.
pub fn dims(program: &Program, params: &[i64]) -> Result<Vec<Vec<(i64, i64)>>, LowerError> {
    let point = super::kinds::Point {
        params,
        counters: &[],
    };
    let mut dims = Vec::new();
    for a in &program.arrays {
        let mut d = Vec::new();
        for r in &a.dims {
            d.push((
                point.affine(&r.lo.affine, r.lo.expr.span)?,
                point.affine(&r.hi.affine, r.hi.expr.span)?,
            ));
        }
        dims.push(d);
    }
    Ok(dims)
}
