//! Warnings about a valid program: arrays written and never read (W0001),
//! statements that never run at the default parameter values (W0002), and a
//! program with no statement at all (W0003).

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
    let stmts = p.stmts();
    if stmts.is_empty() {
        out.push(
            Diagnostic::warning("W0003", "the program has no statements")
                .primary(file, Span::NONE, "nothing to analyse")
                .note("statements are assignments like `A[i] = ...;` or calls like `use(x);`"),
        );
        return out;
    }
    unread(p, &stmts, file, unread_of, &mut out);
    dead(p, &stmts, file, &mut out);
    out
}

fn unread(
    p: &Program,
    stmts: &[&Stmt],
    file: FileId,
    unread_of: &dyn Fn(ArrayId) -> bool,
    out: &mut Vec<Diagnostic>,
) {
    let mut read = vec![false; p.arrays.len()];
    let mut first_write: Vec<Option<Span>> = vec![None; p.arrays.len()];
    // One buffer for the reads of every statement and condition.
    let mut reads = Vec::new();
    for s in stmts {
        match &s.kind {
            StmtKind::Assign { target, op, value } => {
                let i = target.array.index();
                if first_write[i].is_none() {
                    first_write[i] = Some(target.span);
                }
                if op.is_some() {
                    read[i] = true;
                }
                target.collect_subscript_reads(&mut reads);
                value.collect_reads(&mut reads);
            }
            StmtKind::Call { args, .. } => args.iter().for_each(|a| a.collect_reads(&mut reads)),
        }
        for a in reads.drain(..) {
            read[a.access.array.index()] = true;
        }
    }
    for c in p.conditions() {
        c.cond.collect_reads(&mut reads);
        for a in reads.drain(..) {
            read[a.access.array.index()] = true;
        }
    }
    for (i, array) in p.arrays.iter().enumerate() {
        if !unread_of(ArrayId(i as u32)) {
            continue;
        }
        if let (Some(w), false) = (first_write[i], read[i]) {
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

/// Work allowed to the search for statements that never run.
const BUDGET: u64 = 2_000_000;
/// Trips tried for a `while` whose trip count is unknown but whose counter
/// matters to some guard inside it.
const WHILE_TRIPS: i64 = 64;

fn dead(p: &Program, stmts: &[&Stmt], file: FileId, out: &mut Vec<Diagnostic>) {
    let Ok(params) = p.param_values(&[]) else {
        return; // no defaults, or they break an assumption: nothing to say
    };
    let mut guards = vec![false; p.counters.len()];
    mark_guard_counters(&p.body, &mut guards);
    let mut r = Reach {
        params: &params,
        counters: vec![0; p.counters.len()],
        guards,
        reached: vec![false; stmts.len()],
        missing: stmts.len(),
        budget: BUDGET,
        incomplete: false,
    };
    r.nodes(&p.body);
    if r.incomplete {
        return;
    }
    let values: Vec<String> = p
        .params
        .iter()
        .zip(&params)
        .map(|(q, v)| format!("{} = {v}", q.name))
        .collect();
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
            if !values.is_empty() {
                d = d.note(format!("with {}", values.join(", ")));
            }
            out.push(d.note("its loop bounds or `if` conditions are never all satisfied"));
        }
    }
}

/// Marks the counters that some static bound or condition mentions: only
/// their values can change which statements run.
fn mark_guard_counters(nodes: &[Node], out: &mut [bool]) {
    fn expr(e: &Expr, out: &mut [bool]) {
        if let Some(a) = Affine::from_expr(e) {
            for v in a.vars() {
                if let Var::Counter(c) = v {
                    out[c.index()] = true;
                }
            }
        } else {
            match &e.kind {
                ExprKind::Counter(c) => out[c.index()] = true,
                ExprKind::Neg(x) => expr(x, out),
                ExprKind::Binary(_, l, r) => {
                    expr(l, out);
                    expr(r, out);
                }
                _ => {}
            }
        }
    }
    fn cond(c: &Cond, out: &mut [bool]) {
        match c {
            Cond::Cmp(_, l, r) => {
                expr(l, out);
                expr(r, out);
            }
            Cond::And(a, b) | Cond::Or(a, b) => {
                cond(a, out);
                cond(b, out);
            }
            Cond::Not(a) => cond(a, out),
            Cond::Unknown => {}
        }
    }
    for n in nodes {
        match n {
            Node::Stmt(_) => {}
            Node::For(f) => {
                expr(&f.lower.expr, out);
                expr(&f.upper.expr, out);
                mark_guard_counters(&f.body, out);
            }
            Node::While(w) => {
                if w.cond.cond.is_static() {
                    cond(&w.cond.cond, out);
                }
                mark_guard_counters(&w.body, out);
            }
            Node::If(i) => {
                for (c, b) in &i.branches {
                    if c.cond.is_static() {
                        cond(&c.cond, out);
                    }
                    mark_guard_counters(b, out);
                }
                if let Some(e) = &i.otherwise {
                    mark_guard_counters(e, out);
                }
            }
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
    guards: Vec<bool>,
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
        if self.budget == 0 {
            self.incomplete = true;
            return false;
        }
        self.budget -= 1;
        true
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
    fn test(&mut self, c: &Cond) -> Option<bool> {
        if !c.is_static() {
            return None;
        }
        let mut env = StaticEnv {
            params: self.params,
            counters: &self.counters,
        };
        match eval::cond(c, &mut env) {
            Ok(b) => Some(b),
            Err(_) => {
                self.incomplete = true;
                Some(false)
            }
        }
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
                        match self.test(&c.cond) {
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
        let range = id_range(&f.body);
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
        let range = id_range(&w.body);
        let c = w.counter.index();
        let static_cond = w.cond.cond.is_static();
        let mut k = 0;
        while !self.done() && self.tick() {
            self.counters[c] = k;
            if static_cond && self.test(&w.cond.cond) != Some(true) {
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

/// The ids of the first and last statements in `nodes` (statements are
/// numbered in textual order, so a subtree's ids are contiguous).
fn id_range(nodes: &[Node]) -> Option<(usize, usize)> {
    fn first(nodes: &[Node]) -> Option<usize> {
        nodes.iter().find_map(|n| match n {
            Node::Stmt(s) => Some(s.id.index()),
            Node::For(f) => first(&f.body),
            Node::While(w) => first(&w.body),
            Node::If(i) => i
                .branches
                .iter()
                .find_map(|(_, b)| first(b))
                .or_else(|| i.otherwise.as_deref().and_then(first)),
        })
    }
    fn last(nodes: &[Node]) -> Option<usize> {
        nodes.iter().rev().find_map(|n| match n {
            Node::Stmt(s) => Some(s.id.index()),
            Node::For(f) => last(&f.body),
            Node::While(w) => last(&w.body),
            Node::If(i) => i
                .otherwise
                .as_deref()
                .and_then(last)
                .or_else(|| i.branches.iter().rev().find_map(|(_, b)| last(b))),
        })
    }
    Some((first(nodes)?, last(nodes)?))
}
