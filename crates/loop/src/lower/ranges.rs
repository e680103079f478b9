//! W0005: an affine subscript that leaves its array's declared range at the
//! default parameter values.
//!
//! Subscripts whose interval over the loop bounds (interval arithmetic)
//! stays in range are dropped first; loops holding none are not walked. The
//! rest of the iteration domain is walked at the defaults the way W0002 walks it:
//! static guards exactly, every other condition "may go either way". A `for`
//! counter that no static bound or condition mentions only enters affine
//! subscripts, which are monotone in it, so only its first and last values
//! are visited: the minimum and maximum of every subscript are still exact.
//! A `while` with an unknown test is followed for [`WHILE_TRIPS`] trips. When
//! the walk runs out of budget or a guard cannot be evaluated, nothing is said.

use super::walk::{test, tick, values_note, BUDGET, WHILE_TRIPS};
use crate::diagnostics::{Diagnostic, FileId};
use crate::model::*;
use std::collections::HashMap;

/// One affine subscript of one access: the access, the dimension, its form.
type Site<'p> = (&'p Access, usize, &'p Affine);

/// The sites that may leave their range, found in one walk: every affine
/// subscript whose interval, over intervals of the counters (interval
/// arithmetic over their bounds, `while` counters any trip), is not inside
/// its declared range. Most programs have none, so most loops need no walk.
struct Sites<'a, 'p> {
    params: &'a [i64],
    ranges: &'a [Vec<Option<(i64, i64)>>],
    /// Per counter, an interval holding every value it takes at the defaults
    /// (empty: the loop never runs, and nothing inside can leave).
    boxes: Vec<(i128, i128)>,
    /// Per statement (by `StmtId`) and condition (by `CondId`), its sites in
    /// the order of [`Stmt::accesses`].
    stmts: Vec<Vec<Site<'p>>>,
    conds: Vec<Vec<Site<'p>>>,
    /// Per loop (by its counter): whether its body holds a site.
    live: Vec<bool>,
    reads: Vec<AccessRef<'p>>,
}

impl<'p> Sites<'_, 'p> {
    /// The sites of the accesses in `self.reads`, which it empties.
    fn take(&mut self) -> Vec<Site<'p>> {
        let mut out = Vec::new();
        for a in self.reads.drain(..) {
            for (k, s) in a.access.subscripts.iter().enumerate() {
                let (Some(form), Some((l, h))) =
                    (&s.affine, self.ranges[a.access.array.index()][k])
                else {
                    continue;
                };
                let (lo, hi) = interval(form, self.params, &self.boxes);
                if lo < l as i128 || hi > h as i128 {
                    out.push((a.access, k, form));
                }
            }
        }
        out
    }

    fn condition(&mut self, c: &'p Condition) -> bool {
        c.cond.collect_reads(&mut self.reads);
        let sites = self.take();
        let any = !sites.is_empty();
        self.conds.push(sites);
        any
    }

    fn nodes(&mut self, nodes: &'p [Node]) -> bool {
        let mut any = false;
        for n in nodes {
            any |= match n {
                Node::Stmt(s) => {
                    s.collect_accesses(&mut self.reads);
                    let sites = self.take();
                    let any = !sites.is_empty();
                    self.stmts.push(sites);
                    any
                }
                Node::For(f) => {
                    let lo = interval(&f.lower.affine, self.params, &self.boxes).0;
                    let hi = interval(&f.upper.affine, self.params, &self.boxes).1;
                    self.boxes[f.counter.index()] = (lo, hi);
                    self.body(f.counter, &f.body)
                }
                Node::While(w) => {
                    self.boxes[w.counter.index()] = (0, i64::MAX as i128);
                    let test = self.condition(&w.cond);
                    let live = self.body(w.counter, &w.body) | test;
                    self.live[w.counter.index()] = live;
                    live
                }
                Node::If(i) => {
                    let mut l = false;
                    for (c, b) in &i.branches {
                        l |= self.condition(c);
                        l |= self.nodes(b);
                    }
                    if let Some(e) = &i.otherwise {
                        l |= self.nodes(e);
                    }
                    l
                }
            };
        }
        any
    }

    fn body(&mut self, counter: CounterId, body: &'p [Node]) -> bool {
        let live = self.nodes(body);
        self.live[counter.index()] = live;
        live
    }
}

/// The interval of `form` when its counters range over `boxes`; saturating,
/// so never narrower than the truth.
fn interval(form: &Affine, params: &[i64], boxes: &[(i128, i128)]) -> (i128, i128) {
    let (mut lo, mut hi) = (form.constant as i128, form.constant as i128);
    for &(v, k) in &form.terms {
        let k = k as i128;
        let (a, b) = match v {
            Var::Param(q) => (params[q.index()] as i128, params[q.index()] as i128),
            Var::Counter(c) => boxes[c.index()],
        };
        let (x, y) = (k.saturating_mul(a), k.saturating_mul(b));
        lo = lo.saturating_add(x.min(y));
        hi = hi.saturating_add(x.max(y));
    }
    (lo, hi)
}

fn subscripted(counters: usize, stmts: &[Vec<Site>], conds: &[Vec<Site>]) -> Vec<bool> {
    let mut out = vec![false; counters];
    for &(_, _, form) in stmts.iter().chain(conds).flatten() {
        for v in form.vars() {
            if let Var::Counter(c) = v {
                out[c.index()] = true;
            }
        }
    }
    out
}

/// How far one subscript leaves its range on one side: the value furthest
/// out and the counters at which it is reached.
#[derive(Clone)]
struct Extreme {
    value: i64,
    at: Vec<(CounterId, i64)>,
}

struct Finding<'p> {
    access: &'p Access,
    dim: usize,
    range: (i64, i64),
    below: Option<Extreme>,
    above: Option<Extreme>,
    /// Some out-of-range instance runs whatever the unknown conditions do.
    certain: bool,
}

pub(super) fn check(
    p: &Program,
    guards: &[bool],
    statics: &[bool],
    file: FileId,
    out: &mut Vec<Diagnostic>,
) {
    let Ok(params) = p.param_values(&[]) else {
        return; // no defaults, or they break an assumption: nothing to say
    };
    let value = |b: &Bound| b.affine.eval(|v| var_value(v, &params, &[]));
    let ranges: Vec<Vec<Option<(i64, i64)>>> = p
        .arrays
        .iter()
        .map(|a| {
            a.dims
                .iter()
                .map(|r| Some((value(&r.lo)?, value(&r.hi)?)))
                .collect()
        })
        .collect();
    let mut sites = Sites {
        params: &params,
        ranges: &ranges,
        boxes: vec![(0, 0); p.counters.len()],
        stmts: Vec::new(),
        conds: Vec::new(),
        live: vec![false; p.counters.len()],
        reads: Vec::new(),
    };
    if !sites.nodes(&p.body) {
        return;
    }
    let (stmt_sites, cond_sites, live) = (sites.stmts, sites.conds, sites.live);
    let mut w = Walk {
        params: &params,
        counters: vec![0; p.counters.len()],
        loops: Vec::new(),
        guards,
        live: &live,
        subscripted: subscripted(p.counters.len(), &stmt_sites, &cond_sites),
        statics,
        ranges: &ranges,
        stmt_sites: &stmt_sites,
        cond_sites: &cond_sites,
        unsure: 0,
        budget: BUDGET,
        incomplete: false,
        found: HashMap::new(),
        findings: Vec::new(),
    };
    w.nodes(&p.body);
    if w.incomplete {
        return;
    }
    let mut findings = w.findings;
    findings.sort_by_key(|f| (f.access.subscripts[f.dim].expr.span.start, f.dim));
    let values = values_note(p, &params);
    for f in &findings {
        out.push(diagnostic(p, f, &values, file));
    }
}

fn var_value(v: Var, params: &[i64], counters: &[i64]) -> i64 {
    match v {
        Var::Param(q) => params[q.index()],
        Var::Counter(c) => counters[c.index()],
    }
}

fn diagnostic(p: &Program, f: &Finding, values: &Option<String>, file: FileId) -> Diagnostic {
    let array = p.array_decl(f.access.array);
    let text = crate::print::access(p, f.access);
    let (lo, hi) = f.range;
    let verb = if f.certain { "leaves" } else { "may leave" };
    let (what, declared) = if array.dims.len() == 1 {
        (format!("`{text}`"), format!("`{}`", array.name))
    } else {
        (
            format!("subscript {} of `{text}`", f.dim + 1),
            format!("dimension {} of `{}`", f.dim + 1, array.name),
        )
    };
    let reached: Vec<String> = [&f.below, &f.above]
        .into_iter()
        .flatten()
        .map(|e| witness(p, e))
        .collect();
    let mut d = Diagnostic::warning(
        "W0005",
        format!(
            "{what} {verb} the declared range of `{}` at the default parameter values",
            array.name
        ),
    )
    .primary(
        file,
        f.access.subscripts[f.dim].expr.span,
        format!("outside {lo}..{hi}"),
    )
    .secondary(file, array.span, "declared here")
    .note(format!(
        "{what} reaches {}; {declared} is declared {lo}..{hi}",
        reached.join(" and ")
    ));
    if let Some(v) = values {
        d = d.note(v);
    }
    if !f.certain {
        d = d.note("only if the unknown conditions around it let it run");
    }
    d.note("`run` stops at such an access; `flow` treats each index outside the range as a cell of its own")
}

/// "6 for i = 5, j = 1", or "6" outside every loop.
fn witness(p: &Program, e: &Extreme) -> String {
    if e.at.is_empty() {
        return e.value.to_string();
    }
    let at: Vec<String> =
        e.at.iter()
            .map(|&(c, v)| format!("{} = {v}", p.counter_decl(c).name))
            .collect();
    format!("{} for {}", e.value, at.join(", "))
}

struct Walk<'a, 'p> {
    params: &'a [i64],
    counters: Vec<i64>,
    /// The counters of the loops around the current node, outermost first.
    loops: Vec<CounterId>,
    guards: &'a [bool],
    /// Per loop (by its counter): whether its body holds a site to check.
    live: &'a [bool],
    /// Per counter: whether some affine subscript mentions it.
    subscripted: Vec<bool>,
    statics: &'a [bool],
    /// Per array and dimension, the declared range at the defaults.
    ranges: &'a [Vec<Option<(i64, i64)>>],
    stmt_sites: &'a [Vec<Site<'p>>],
    cond_sites: &'a [Vec<Site<'p>>],
    /// How many unknown conditions the current node depends on.
    unsure: u32,
    budget: u64,
    incomplete: bool,
    /// Index into `findings` by (access address, dimension).
    found: HashMap<(usize, usize), usize>,
    findings: Vec<Finding<'p>>,
}

impl<'p> Walk<'_, 'p> {
    fn tick(&mut self) -> bool {
        tick(&mut self.budget, &mut self.incomplete)
    }

    fn visit(&mut self, sites: &[Site<'p>]) {
        for &(access, dim, form) in sites {
            let Some(range) = self.ranges[access.array.index()][dim] else {
                continue;
            };
            let Some(v) = form.eval(|x| var_value(x, self.params, &self.counters)) else {
                continue; // overflows: the run would wrap, the model has no claim
            };
            if (range.0..=range.1).contains(&v) {
                continue;
            }
            let key = (access as *const Access as usize, dim);
            let k = *self.found.entry(key).or_insert_with(|| {
                self.findings.push(Finding {
                    access,
                    dim,
                    range,
                    below: None,
                    above: None,
                    certain: false,
                });
                self.findings.len() - 1
            });
            let at = || {
                self.loops
                    .iter()
                    .map(|&c| (c, self.counters[c.index()]))
                    .collect()
            };
            let f = &mut self.findings[k];
            f.certain |= self.unsure == 0;
            let side = if v < range.0 {
                &mut f.below
            } else {
                &mut f.above
            };
            let further = |e: &Extreme| {
                if v < range.0 {
                    v < e.value
                } else {
                    v > e.value
                }
            };
            if side.as_ref().is_none_or(further) {
                *side = Some(Extreme { value: v, at: at() });
            }
        }
    }

    /// [`test`] at the current counters.
    fn known(&mut self, c: &Condition) -> Option<bool> {
        let (statics, params) = (self.statics, self.params);
        test(statics, c, params, &self.counters, &mut self.incomplete)
    }

    fn bound(&mut self, b: &Bound) -> Option<i64> {
        let v = b.affine.eval(|x| var_value(x, self.params, &self.counters));
        if v.is_none() {
            self.incomplete = true;
        }
        v
    }

    fn under(&mut self, unsure: bool, nodes: &'p [Node]) {
        self.unsure += u32::from(unsure);
        self.nodes(nodes);
        self.unsure -= u32::from(unsure);
    }

    fn condition(&mut self, unsure: bool, c: &Condition) {
        let sites = self.cond_sites;
        self.unsure += u32::from(unsure);
        self.visit(&sites[c.id.index()]);
        self.unsure -= u32::from(unsure);
    }

    fn nodes(&mut self, nodes: &'p [Node]) {
        for n in nodes {
            if self.incomplete || !self.tick() {
                return;
            }
            match n {
                Node::Stmt(s) => {
                    let sites = self.stmt_sites;
                    self.visit(&sites[s.id.index()]);
                }
                Node::For(f) if self.live[f.counter.index()] => self.for_loop(f),
                Node::While(w) if self.live[w.counter.index()] => self.while_loop(w),
                Node::For(_) | Node::While(_) => {}
                Node::If(i) => {
                    // A later branch is tested, and taken, only when every
                    // earlier condition was false.
                    let mut unsure = false;
                    let mut taken = false;
                    for (c, body) in &i.branches {
                        self.condition(unsure, c);
                        match self.known(c) {
                            Some(true) => {
                                self.under(unsure, body);
                                taken = true;
                                break;
                            }
                            Some(false) => {}
                            None => {
                                unsure = true;
                                self.under(true, body);
                            }
                        }
                    }
                    if let (false, Some(e)) = (taken, &i.otherwise) {
                        self.under(unsure, e);
                    }
                }
            }
        }
    }

    fn for_loop(&mut self, f: &'p For) {
        let (Some(lo), Some(hi)) = (self.bound(&f.lower), self.bound(&f.upper)) else {
            return;
        };
        if lo > hi {
            return;
        }
        let c = f.counter.index();
        self.loops.push(f.counter);
        if self.guards[c] {
            let mut v = lo;
            while v <= hi && !self.incomplete && self.tick() {
                self.counters[c] = v;
                self.nodes(&f.body);
                match v.checked_add(f.step) {
                    Some(next) => v = next,
                    None => break,
                }
            }
        } else {
            // Nothing but affine subscripts depends on the counter: they
            // are monotone in it, so their extremes are at the ends.
            let last =
                (lo as i128 + (hi as i128 - lo as i128) / f.step as i128 * f.step as i128) as i64;
            for v in [lo, last].into_iter().take(if last == lo { 1 } else { 2 }) {
                self.counters[c] = v;
                self.nodes(&f.body);
            }
        }
        self.loops.pop();
    }

    fn while_loop(&mut self, w: &'p While) {
        let c = w.counter.index();
        let known = self.statics[w.cond.id.index()];
        self.loops.push(w.counter);
        let mut k = 0;
        while !self.incomplete && self.tick() {
            self.counters[c] = k;
            // With an unknown test, trip k > 0 is tested only if the trips
            // before it ran, which they may not.
            self.condition(!known && k > 0, &w.cond);
            if known {
                if self.known(&w.cond) != Some(true) {
                    break;
                }
                self.nodes(&w.body);
            } else {
                self.under(true, &w.body);
            }
            if !self.guards[c] && !self.subscripted[c] {
                break; // every trip does the same
            }
            k += 1;
            if !known && k >= WHILE_TRIPS {
                break; // later trips: no claim either way
            }
        }
        self.loops.pop();
    }
}
