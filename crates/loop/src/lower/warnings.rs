//! Warnings about a valid program: arrays written and never read (W0001),
//! statements that never run at the default parameter values (W0002), a
//! program with no statement at all (W0003), and subscripts out of their
//! declared range at the default parameter values (W0005, in `ranges`).

use super::walk::{test, tick, values_note, BUDGET, WHILE_TRIPS};
use crate::diagnostics::{Diagnostic, FileId};
use crate::model::eval::{self, StaticEnv};
use crate::model::*;

pub fn check(p: &Program, file: FileId) -> Vec<Diagnostic> {
    check_filtered(p, file, &|_| true)
}

/// [`check`], with W0001 only for the arrays `unread_of` accepts (the C
/// front end reports it for local variables only: other arrays are results).
pub fn check_filtered(
    p: &Program,
    file: FileId,
    unread_of: &dyn Fn(ArrayId) -> bool,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut s = Survey {
        stmts: Vec::new(),
        read: vec![false; p.arrays.len()],
        first_write: vec![None; p.arrays.len()],
        guards: vec![false; p.counters.len()],
        ranges: vec![None; p.counters.len()],
        statics: Vec::new(),
        reads: Vec::new(),
    };
    s.nodes(&p.body);
    if s.stmts.is_empty() {
        out.push(
            Diagnostic::warning("W0003", "the program has no statements")
                .primary(file, Span::NONE, "nothing to analyse")
                .note("statements are assignments like `A[i] = ...;` or calls like `use(x);`"),
        );
        return out;
    }
    unread(p, &s, file, unread_of, &mut out);
    dead(p, &s, file, &mut out);
    super::ranges::check(p, &s.guards, &s.statics, file, &mut out);
    out
}

/// What the warnings need, gathered in one walk over the program.
struct Survey<'p> {
    /// Every statement, in textual order (so indexed by `StmtId`).
    stmts: Vec<&'p Stmt>,
    /// Per array: read anywhere, and the first write.
    read: Vec<bool>,
    first_write: Vec<Option<Span>>,
    /// Per counter: whether a static bound or condition mentions it (only
    /// those counters' values can change which statements run).
    guards: Vec<bool>,
    /// Per loop (by its counter): the ids of the first and last statements
    /// in its body.
    ranges: Vec<Option<(usize, usize)>>,
    /// Per condition (by `CondId`, which is textual order): whether it is
    /// static, so known at concrete parameter values.
    statics: Vec<bool>,
    /// A reusable buffer of reads.
    reads: Vec<AccessRef<'p>>,
}

impl<'p> Survey<'p> {
    fn nodes(&mut self, nodes: &'p [Node]) {
        for n in nodes {
            match n {
                Node::Stmt(s) => self.stmt(s),
                Node::For(f) => {
                    self.guard_expr(&f.lower.expr);
                    self.guard_expr(&f.upper.expr);
                    self.body(f.counter, &f.body);
                }
                Node::While(w) => {
                    self.condition(&w.cond);
                    self.body(w.counter, &w.body);
                }
                Node::If(i) => {
                    for (c, b) in &i.branches {
                        self.condition(c);
                        self.nodes(b);
                    }
                    if let Some(e) = &i.otherwise {
                        self.nodes(e);
                    }
                }
            }
        }
    }

    fn body(&mut self, counter: CounterId, body: &'p [Node]) {
        let first = self.stmts.len();
        self.nodes(body);
        if self.stmts.len() > first {
            self.ranges[counter.index()] = Some((first, self.stmts.len() - 1));
        }
    }

    fn stmt(&mut self, s: &'p Stmt) {
        self.stmts.push(s);
        match &s.kind {
            StmtKind::Assign { target, op, value } => {
                let i = target.array.index();
                if self.first_write[i].is_none() {
                    self.first_write[i] = Some(target.span);
                }
                if op.is_some() {
                    self.read[i] = true;
                }
                target.collect_subscript_reads(&mut self.reads);
                value.collect_reads(&mut self.reads);
            }
            StmtKind::Call { args, .. } => {
                args.iter().for_each(|a| a.collect_reads(&mut self.reads))
            }
        }
        self.drain_reads();
    }

    fn condition(&mut self, c: &'p Condition) {
        c.cond.collect_reads(&mut self.reads);
        self.drain_reads();
        let is_static = c.cond.is_static();
        debug_assert_eq!(self.statics.len(), c.id.index());
        self.statics.push(is_static);
        if is_static {
            self.guard_cond(&c.cond);
        }
    }

    fn drain_reads(&mut self) {
        for a in self.reads.drain(..) {
            self.read[a.access.array.index()] = true;
        }
    }

    /// Marks every counter mentioned (even one that cancels out, as in
    /// `i - i`: marking too many only costs iterations).
    fn guard_expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Counter(c) => self.guards[c.index()] = true,
            ExprKind::Neg(x) => self.guard_expr(x),
            ExprKind::Binary(_, l, r) => {
                self.guard_expr(l);
                self.guard_expr(r);
            }
            _ => {}
        }
    }

    fn guard_cond(&mut self, c: &Cond) {
        match c {
            Cond::Cmp(_, l, r) => {
                self.guard_expr(l);
                self.guard_expr(r);
            }
            Cond::And(a, b) | Cond::Or(a, b) => {
                self.guard_cond(a);
                self.guard_cond(b);
            }
            Cond::Not(a) => self.guard_cond(a),
            Cond::Unknown => {}
        }
    }
}

fn unread(
    p: &Program,
    s: &Survey,
    file: FileId,
    unread_of: &dyn Fn(ArrayId) -> bool,
    out: &mut Vec<Diagnostic>,
) {
    for (i, array) in p.arrays.iter().enumerate() {
        if !unread_of(ArrayId(i as u32)) {
            continue;
        }
        if let (Some(w), false) = (s.first_write[i], s.read[i]) {
            out.push(
                Diagnostic::warning(
                    "W0001",
                    format!("`{}` is written but never read", array.name),
                )
                .primary(file, w, "written here")
                .secondary(file, array.span, "declared here")
                .note("if it holds a result of the program, this is expected"),
            );
        }
    }
}

fn dead(p: &Program, s: &Survey, file: FileId, out: &mut Vec<Diagnostic>) {
    let Ok(params) = p.param_values(&[]) else {
        return; // no defaults, or they break an assumption: nothing to say
    };
    let stmts = &s.stmts;
    let mut r = Reach {
        params: &params,
        counters: vec![0; p.counters.len()],
        guards: &s.guards,
        ranges: &s.ranges,
        statics: &s.statics,
        reached: vec![false; stmts.len()],
        missing: stmts.len(),
        budget: BUDGET,
        incomplete: false,
    };
    r.nodes(&p.body);
    if r.incomplete {
        return;
    }
    let values = values_note(p, &params);
    for s in stmts {
        if !r.reached[s.id.index()] {
            let mut d = Diagnostic::warning(
                "W0002",
                format!(
                    "statement `{}` never runs at the default parameter values",
                    s.label
                ),
            )
            .primary(file, s.span, "never runs");
            if let Some(v) = &values {
                d = d.note(v);
            }
            out.push(d.note("its loop bounds or `if` conditions are never all satisfied"));
        }
    }
}

/// Enumerates the iterations of the program at concrete parameter values,
/// following static guards exactly and treating every other condition as
/// "may go either way". Bounded by [`BUDGET`]; when the bound is hit, or a
/// guard cannot be evaluated, the result is `incomplete` and says nothing.
struct Reach<'a> {
    params: &'a [i64],
    counters: Vec<i64>,
    guards: &'a [bool],
    ranges: &'a [Option<(usize, usize)>],
    statics: &'a [bool],
    reached: Vec<bool>,
    missing: usize,
    budget: u64,
    incomplete: bool,
}

impl Reach<'_> {
    fn done(&self) -> bool {
        self.missing == 0 || self.incomplete
    }

    fn tick(&mut self) -> bool {
        tick(&mut self.budget, &mut self.incomplete)
    }

    fn eval(&mut self, e: &Expr) -> Option<i64> {
        let mut env = StaticEnv {
            params: self.params,
            counters: &self.counters,
        };
        let v = eval::expr(e, &mut env).ok();
        if v.is_none() {
            self.incomplete = true;
        }
        v
    }

    /// `Some(outcome)` for a static condition, `None` when it may go either way.
    fn test(&mut self, c: &Condition) -> Option<bool> {
        test(
            self.statics,
            c,
            self.params,
            &self.counters,
            &mut self.incomplete,
        )
    }

    fn nodes(&mut self, nodes: &[Node]) {
        for n in nodes {
            if self.done() || !self.tick() {
                return;
            }
            match n {
                Node::Stmt(s) => {
                    if !self.reached[s.id.index()] {
                        self.reached[s.id.index()] = true;
                        self.missing -= 1;
                    }
                }
                Node::For(f) => self.for_loop(f),
                Node::While(w) => self.while_loop(w),
                Node::If(i) => {
                    let mut taken = false;
                    for (c, body) in &i.branches {
                        match self.test(c) {
                            Some(true) => {
                                self.nodes(body);
                                taken = true;
                                break;
                            }
                            Some(false) => {}
                            None => self.nodes(body),
                        }
                    }
                    if let (false, Some(e)) = (taken, &i.otherwise) {
                        self.nodes(e);
                    }
                }
            }
        }
    }

    /// Whether every statement of `body` (ids `range`) has been reached, so
    /// running it again can show nothing new.
    fn all_reached(&self, range: Option<(usize, usize)>) -> bool {
        range.is_none_or(|(a, b)| self.reached[a..=b].iter().all(|&r| r))
    }

    fn for_loop(&mut self, f: &For) {
        let range = self.ranges[f.counter.index()];
        if range.is_none() {
            return;
        }
        let (Some(lo), Some(hi)) = (self.eval(&f.lower.expr), self.eval(&f.upper.expr)) else {
            return;
        };
        let c = f.counter.index();
        let mut v = lo;
        while v <= hi && !self.done() && self.tick() {
            self.counters[c] = v;
            self.nodes(&f.body);
            if !self.guards[c] || self.all_reached(range) {
                break; // the counter's value changes nothing
            }
            match v.checked_add(f.step) {
                Some(next) => v = next,
                None => break,
            }
        }
    }

    fn while_loop(&mut self, w: &While) {
        let range = self.ranges[w.counter.index()];
        let c = w.counter.index();
        let static_cond = self.statics[w.cond.id.index()];
        let mut k = 0;
        while !self.done() && self.tick() {
            self.counters[c] = k;
            if static_cond && self.test(&w.cond) != Some(true) {
                return;
            }
            self.nodes(&w.body);
            if !self.guards[c] || self.all_reached(range) {
                return; // every trip runs the same statements
            }
            k += 1;
            if !static_cond && k >= WHILE_TRIPS {
                // The trip count is unknown and the counter matters: later
                // trips might run what these did not.
                self.incomplete = true;
                return;
            }
        }
    }
}
