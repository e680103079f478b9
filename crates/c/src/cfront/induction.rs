//! Scalar analysis ahead of dataflow: integer locals whose value at a point
//! is a known expression of counters and parameters (*forwarded*), and
//! induction variables, whose value at the start of each trip of a loop is
//! a closed form of the loop's counter.
//!
//! The front end lowers statements in order, so it keeps, for each integer
//! local it can follow, the value the last assignment gave it when that
//! value is a static expression (integers, parameters, counters, `+ - *`):
//! `known`. A read of the local there is that expression (so `j = i + 1;
//! a[j] = 0;` writes `a[i + 1]`), and an update `x += e` of a known `x` is
//! the assignment `x = (value) + e`, which reads no `x`. The assignments
//! themselves stay in the model, so the variable keeps its C value, after
//! a loop too (privatization makes it `lastprivate` where it must).
//!
//! At a loop, every local the loop assigns is forgotten before its test is
//! read; a local whose only assignments in the body are unconditional
//! updates by a loop-invariant step at the body's top level (`j++;`,
//! `k += inc;`, and a second counter's update in the header) and whose
//! value is known on entry is an *induction variable*: at the start of trip
//! `t` (from 0) it is `entry + t * step`. A local updated anywhere else
//! (under an `if`, in an inner loop), by a step that changes, or declared
//! again in the body is forgotten as any other: it stays a scalar cell.
//! After an `if`, what either branch assigns is forgotten.

use super::fields::{Fields, F};
use super::lvalues::{assigned_names, lvalue_root, walk};
use super::scan::children;
use super::{affine_expr, Binding, Ctx, Skip, VarId};
use crate::model::*;
use std::collections::{HashMap, HashSet};
use tree_sitter::Node;

/// A forwarded value may nest this deep (a longer chain is forgotten).
const MAX_KNOWN_DEPTH: usize = 48;

/// How a loop's trip number `t` (0 at the first trip) is written in the
/// model's counters: `t = trips / divisor`.
#[derive(Clone)]
pub(super) struct Trip {
    pub trips: Affine,
    pub divisor: i64,
    /// The model counter `trips` is written in.
    pub counter: Var,
}

/// A wrap-around variable: assigned once per trip, at the body's top
/// level, a value that reads nothing the loop changes (`im1 = i;`), and
/// read before that assignment, where it holds the value it had on entry
/// at the first trip and the previous trip's value after.
pub(super) struct Wrap<'t> {
    v: VarId,
    /// Where its assignment stands among the body's top-level statements.
    at: usize,
    value: Node<'t>,
    entry: Option<Expr>,
}

/// Induction variables found for a loop, and what the loop assigns.
#[derive(Default)]
pub(super) struct LoopScalars<'t> {
    /// Names the loop (header and body) may assign: forgotten around it.
    assigned: HashSet<&'t str>,
    /// (variable, value on entry, step per trip).
    ivs: Vec<(VarId, Expr, Expr)>,
    wraps: Vec<Wrap<'t>>,
    /// The loop's trip number, once its counter exists.
    trip: Option<Trip>,
}

/// Whether `e` may stand for an integer local's C value: static, and made
/// of `+ - *` only (the model's `/` and `%` are Euclidean, C's truncate).
pub(super) fn forwardable(e: &Expr) -> bool {
    fn ok(e: &Expr, depth: usize) -> bool {
        if depth > MAX_KNOWN_DEPTH {
            return false;
        }
        match &e.kind {
            ExprKind::Int(_) | ExprKind::Param(_) | ExprKind::Counter(_) => true,
            ExprKind::Neg(x) => ok(x, depth + 1),
            ExprKind::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul, l, r) => {
                ok(l, depth + 1) && ok(r, depth + 1)
            }
            _ => false,
        }
    }
    ok(e, 0)
}

/// `l op r`, canonical when both are affine.
pub(super) fn combine(op: BinOp, l: &Expr, r: &Expr, at: Span) -> Expr {
    let affine = match (Affine::from_expr(l), Affine::from_expr(r)) {
        (Some(a), Some(b)) => match op {
            BinOp::Add => a.checked_add(&b),
            BinOp::Sub => a.checked_sub(&b),
            BinOp::Mul if a.is_constant() => b.checked_scale(a.constant),
            BinOp::Mul if b.is_constant() => a.checked_scale(b.constant),
            _ => None,
        },
        _ => None,
    };
    let int = |e: &Expr| match e.kind {
        ExprKind::Int(k) => Some(k),
        _ => None,
    };
    match (affine, op, int(l), int(r)) {
        (Some(a), ..) => affine_expr(&a, at),
        (None, BinOp::Add, Some(0), _) | (None, BinOp::Mul, Some(1), _) => r.clone(),
        (None, BinOp::Add | BinOp::Sub, _, Some(0)) | (None, BinOp::Mul, _, Some(1)) => l.clone(),
        _ => Expr::new(
            ExprKind::Binary(op, Box::new(l.clone()), Box::new(r.clone())),
            at,
        ),
    }
}

/// The value at the start of trip `t` of a variable worth `entry` on entry
/// and stepped by `step` each trip: `entry + step * t`. `None` when that is
/// not an expression of the counters (a step that `divisor` does not divide
/// when the model counter moves by more than one).
pub(super) fn closed_form(entry: &Expr, step: &Expr, trip: &Trip, at: Span) -> Option<Expr> {
    let trips = affine_expr(&trip.trips, at);
    let stepped = match &step.kind {
        ExprKind::Int(d) => {
            if d % trip.divisor != 0 {
                return None;
            }
            let per = trip.trips.checked_scale(d / trip.divisor)?;
            affine_expr(&per, at)
        }
        _ if trip.divisor == 1 => combine(BinOp::Mul, step, &trips, at),
        _ => return None,
    };
    let e = combine(BinOp::Add, entry, &stepped, at);
    forwardable(&e).then_some(e)
}

/// `x++`, `x--`, `x += e`, `x -= e`, `x = x + e`, `x = e + x`, `x = x - e`:
/// the variable's name, the step's node (`None` for `++`/`--`) and its sign.
pub(super) fn update_form<'t>(
    src: &'t str,
    n: Node<'t>,
) -> Option<(&'t str, Option<Node<'t>>, i64)> {
    let text = |x: Node<'_>| src.get(x.byte_range()).unwrap_or("");
    let ident = |x: Node<'t>| (x.kind() == "identifier").then(|| text(x));
    match n.kind() {
        "update_expression" => {
            let name = ident(n.field(F::Argument)?)?;
            match text(n.field(F::Operator)?) {
                "++" => Some((name, None, 1)),
                "--" => Some((name, None, -1)),
                _ => None,
            }
        }
        "assignment_expression" => {
            let name = ident(n.field(F::Left)?)?;
            let right = n.field(F::Right)?;
            match text(n.field(F::Operator)?) {
                "+=" => Some((name, Some(right), 1)),
                "-=" => Some((name, Some(right), -1)),
                "=" => {
                    let mut r = right;
                    while r.kind() == "parenthesized_expression" {
                        r = *children(r).first()?;
                    }
                    if r.kind() != "binary_expression" {
                        return None;
                    }
                    let (a, b) = (r.field(F::Left)?, r.field(F::Right)?);
                    match text(r.field(F::Operator)?) {
                        "+" if ident(a) == Some(name) => Some((name, Some(b), 1)),
                        "+" if ident(b) == Some(name) => Some((name, Some(a), 1)),
                        "-" if ident(a) == Some(name) => Some((name, Some(b), -1)),
                        _ => None,
                    }
                }
                _ => None,
            }
        }
        "parenthesized_expression" => update_form(src, *children(n).first()?),
        _ => None,
    }
}

/// The statements at the top level of a loop body (its block's items, or
/// the body itself), labels taken off.
fn top_level<'t>(body: Node<'t>) -> Vec<Node<'t>> {
    let items = match body.kind() {
        "compound_statement" => children(body),
        _ => vec![body],
    };
    items
        .into_iter()
        .map(|mut s| {
            while s.kind() == "labeled_statement" {
                match children(s)
                    .into_iter()
                    .rfind(|c| c.kind() != "statement_identifier")
                {
                    Some(x) => s = x,
                    None => break,
                }
            }
            s
        })
        .collect()
}

/// Whether an identifier `name` occurs under `n`.
fn mentions_name(src: &str, n: Node<'_>, name: &str) -> bool {
    let mut found = false;
    walk(&[n], |x| {
        found |= x.kind() == "identifier" && src.get(x.byte_range()) == Some(name);
    });
    found
}

/// Names declared anywhere under `roots`.
fn declared_names<'t>(src: &'t str, roots: &[Node<'t>]) -> HashSet<&'t str> {
    let mut out = HashSet::new();
    walk(roots, |n| {
        if n.kind() == "declaration" {
            let mut c = n.walk();
            for d in n.children_by_field_name("declarator", &mut c) {
                let mut d = d;
                while let Some(inner) = d.child_by_field_name("declarator") {
                    d = inner;
                }
                if d.kind() == "identifier" {
                    out.extend(src.get(d.byte_range()));
                }
            }
        }
    });
    out
}

impl<'t> Ctx<'t> {
    /// Whether the front end can follow every assignment of `v`: an
    /// integer local (or parameter) of a signed type, not an array or a
    /// pointer, whose address the function never takes.
    pub(super) fn followed(&self, v: VarId) -> bool {
        let var = &self.vars[v.index()];
        let signed = var.ctype.split_whitespace().all(|w| {
            matches!(
                w,
                "int" | "long" | "signed" | "const" | "register" | "ptrdiff_t"
            )
        });
        var.dims.is_empty()
            && var.pointers == 0
            && var.elem == ElemType::Int
            && !var.is_struct
            && !var.global
            && signed
            && !self.addressed.contains(var.name)
    }

    /// The variable a plain identifier lvalue names, when it is followed.
    fn followed_var(&self, left: Node<'t>) -> Option<VarId> {
        let mut left = left;
        while left.kind() == "parenthesized_expression" {
            left = *children(left).first()?;
        }
        if left.kind() != "identifier" {
            return None;
        }
        match self.lookup(self.text(left))? {
            Binding::Var(v) if self.followed(v) => Some(v),
            _ => None,
        }
    }

    /// Names the function takes the address of (`&x`): their values can
    /// change behind the front end's back.
    pub(super) fn addressed_in(&mut self, func: Node<'t>) {
        self.addressed.clear();
        let src = self.src;
        let mut found = HashSet::new();
        walk(&[func], |n| {
            if n.kind() == "pointer_expression"
                && n.field(F::Operator).and_then(|o| src.get(o.byte_range())) == Some("&")
            {
                if let Some(name) = n.field(F::Argument).and_then(|a| lvalue_root(src, a)) {
                    found.insert(name);
                }
            }
        });
        self.addressed = found;
    }

    /// An assignment `left op= value` about to be emitted: updates what is
    /// known of a followed variable, and returns the value to assign
    /// instead when the update can be written without reading it (`x += 1`
    /// of a known `x` is `x = known + 1`), or when a constant expression
    /// was folded for it.
    pub(super) fn forward(
        &mut self,
        left: Node<'t>,
        op: Option<BinOp>,
        value: &Expr,
        at: Span,
    ) -> Option<Expr> {
        let v = self.followed_var(left)?;
        let given = value;
        let value = match value.is_static() {
            true => self.folded(value.clone()),
            false => value.clone(),
        };
        let new = match op {
            None => Some(value.clone()),
            Some(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul)) => (self.known.get(&v))
                .filter(|_| forwardable(&value))
                .map(|k| combine(op, k, &value, at)),
            Some(_) => None,
        };
        match new.filter(forwardable) {
            Some(e) => {
                self.known.insert(v, e.clone());
                (op.is_some() || &e != given).then_some(e)
            }
            None => {
                self.known.remove(&v);
                None
            }
        }
    }

    /// The forwarded value of `v` here, if any.
    pub(super) fn known_value(&mut self, v: VarId) -> Option<Expr> {
        let e = self.known.get(&v)?.clone();
        self.forwarded.insert(v);
        Some(e)
    }

    /// Forgets every followed variable named in `names`.
    pub(super) fn forget(&mut self, names: &HashSet<&'t str>) {
        let vars = &self.vars;
        self.known
            .retain(|v, _| !names.contains(vars[v.index()].name));
    }

    /// What is known before an `if`: restored at each branch.
    pub(super) fn known_snapshot(&self) -> HashMap<VarId, Expr> {
        self.known.clone()
    }

    /// After an `if`: what was known before it, less what it may assign.
    pub(super) fn after_branches(&mut self, before: HashMap<VarId, Expr>, n: Node<'t>) {
        self.known = before;
        let names = assigned_names(self.src, &[n]);
        self.forget(&names);
    }

    /// Before a loop's test is read: finds its induction variables (with
    /// their values on entry) and forgets everything it assigns. `header`
    /// holds the header's parts the loop runs every trip (the update),
    /// `extra` the header's updates of other variables (`j--` in
    /// `i++, j--`), run after the body.
    pub(super) fn enter_loop(
        &mut self,
        header: &[Node<'t>],
        body: Node<'t>,
        extra: &[Node<'t>],
        counter: Option<&'t str>,
    ) -> Result<LoopScalars<'t>, Skip> {
        let mut roots = header.to_vec();
        roots.push(body);
        roots.extend_from_slice(extra);
        let assigned = assigned_names(self.src, &roots);
        let mut out = LoopScalars {
            assigned,
            ..LoopScalars::default()
        };
        if counter.is_some() {
            self.find_ivs(body, extra, counter, &mut out)?;
        }
        self.forget(&out.assigned);
        Ok(out)
    }

    fn find_ivs(
        &mut self,
        body: Node<'t>,
        extra: &[Node<'t>],
        counter: Option<&'t str>,
        out: &mut LoopScalars<'t>,
    ) -> Result<(), Skip> {
        let src = self.src;
        // Updates at the top level of the body, and the header's.
        let mut tops: Vec<Node<'t>> = Vec::new();
        for s in top_level(body) {
            if s.kind() == "expression_statement" {
                tops.extend(children(s).first().copied());
            }
        }
        tops.extend_from_slice(extra);
        let mut steps: HashMap<&'t str, Vec<(Option<Node<'t>>, i64)>> = HashMap::new();
        for &t in &tops {
            if let Some((name, step, sign)) = update_form(src, t) {
                steps.entry(name).or_default().push((step, sign));
            }
        }
        // Any other assignment of the name disqualifies it.
        let mut writes: HashMap<&'t str, usize> = HashMap::new();
        let mut roots = vec![body];
        roots.extend_from_slice(extra);
        walk(&roots, |n| {
            let target = match n.kind() {
                "assignment_expression" => n.field(F::Left),
                "update_expression" => n.field(F::Argument),
                _ => None,
            };
            if let Some(name) = target.and_then(|t| lvalue_root(src, t)) {
                *writes.entry(name).or_default() += 1;
            }
        });
        let declared = declared_names(src, &[body]);
        self.find_wraps(body, &writes, &declared, counter, out);
        let mut names: Vec<&'t str> = steps.keys().copied().collect();
        names.sort_unstable();
        for name in names {
            let ups = &steps[name];
            if writes.get(name) != Some(&ups.len()) {
                continue;
            }
            let Some(v) = self.candidate(name, &declared, counter) else {
                continue;
            };
            let Some(entry) = self.known.get(&v).cloned() else {
                continue;
            };
            let mut total = Expr::new(ExprKind::Int(0), Span::NONE);
            let mut ok = true;
            for &(step, sign) in ups {
                let e = match step {
                    None => Expr::new(ExprKind::Int(1), Span::NONE),
                    Some(s) => match self.invariant_step(s, &out.assigned, counter, name)? {
                        Some(e) => e,
                        None => {
                            ok = false;
                            break;
                        }
                    },
                };
                let op = if sign > 0 { BinOp::Add } else { BinOp::Sub };
                total = combine(op, &total, &e, Span::NONE);
            }
            if ok && forwardable(&total) {
                out.ivs.push((v, entry, total));
            }
        }
        Ok(())
    }

    /// The value of a step that every trip of the loop sees the same: it
    /// names nothing the loop assigns, not the counter nor the variable,
    /// and calls nothing.
    fn invariant_step(
        &mut self,
        s: Node<'t>,
        assigned: &HashSet<&'t str>,
        counter: Option<&'t str>,
        name: &str,
    ) -> Result<Option<Expr>, Skip> {
        let src = self.src;
        let mut variant = false;
        walk(&[s], |x| match x.kind() {
            "identifier" => {
                let t = src.get(x.byte_range()).unwrap_or("");
                variant |= assigned.contains(t) || Some(t) == counter || t == name;
            }
            "call_expression"
            | "subscript_expression"
            | "pointer_expression"
            | "field_expression"
            | "assignment_expression"
            | "update_expression" => variant = true,
            _ => {}
        });
        if variant {
            return Ok(None);
        }
        let e = self.value(s)?;
        let e = if e.is_static() { self.folded(e) } else { e };
        Ok(forwardable(&e).then_some(e))
    }

    /// The variable `name` names, when a loop over `counter` may follow
    /// it: not the counter, not declared inside the body (`declared`), and
    /// a variable the front end follows.
    fn candidate(
        &self,
        name: &str,
        declared: &HashSet<&'t str>,
        counter: Option<&str>,
    ) -> Option<VarId> {
        if declared.contains(name) || Some(name) == counter {
            return None;
        }
        let Some(Binding::Var(v)) = self.lookup(name) else {
            return None;
        };
        self.followed(v).then_some(v)
    }

    /// Wrap-around variables of a loop body: one plain top-level
    /// assignment `x = e` in the body, `e` reading no variable the loop
    /// assigns but its counter, and every read of `x` before it in a
    /// top-level expression statement (each is lowered twice, below).
    fn find_wraps(
        &self,
        body: Node<'t>,
        writes: &HashMap<&'t str, usize>,
        declared: &HashSet<&'t str>,
        counter: Option<&'t str>,
        out: &mut LoopScalars<'t>,
    ) {
        let src = self.src;
        let tops = top_level(body);
        if body.kind() != "compound_statement" {
            return;
        }
        for (k, &s) in tops.iter().enumerate() {
            let Some(&e) = children(s)
                .first()
                .filter(|_| s.kind() == "expression_statement")
            else {
                continue;
            };
            if e.kind() != "assignment_expression"
                || e.field(F::Operator).map(|o| self.text(o)) != Some("=")
            {
                continue;
            }
            let (Some(left), Some(value)) = (e.field(F::Left), e.field(F::Right)) else {
                continue;
            };
            let name = self.text(left);
            if left.kind() != "identifier" || writes.get(name) != Some(&1) {
                continue;
            }
            let Some(v) = self.candidate(name, declared, counter) else {
                continue;
            };
            let mut fixed = true;
            walk(&[value], |x| match x.kind() {
                "identifier" => {
                    let t = src.get(x.byte_range()).unwrap_or("");
                    fixed &= Some(t) == counter || !out.assigned.contains(t);
                }
                "call_expression"
                | "subscript_expression"
                | "pointer_expression"
                | "field_expression"
                | "assignment_expression"
                | "update_expression" => fixed = false,
                _ => {}
            });
            let reads_before = tops[..k].iter().filter(|&&t| mentions_name(src, t, name));
            let simple = reads_before
                .clone()
                .all(|t| t.kind() == "expression_statement");
            if fixed && simple && reads_before.count() > 0 {
                let entry = self.known.get(&v).cloned();
                out.wraps.push(Wrap {
                    v,
                    at: k,
                    value,
                    entry,
                });
            }
        }
    }

    /// Once the loop's counter exists: each induction variable's value at
    /// the start of a trip.
    pub(super) fn start_trip(&mut self, scalars: &mut LoopScalars<'t>, trip: &Trip, at: Span) {
        for (v, entry, step) in &scalars.ivs {
            if let Some(e) = closed_form(entry, step, trip, at) {
                self.known.insert(*v, e);
            }
        }
        scalars.trip = Some(trip.clone());
    }

    /// Whether the body's top-level statement number `k` (`s`) reads a
    /// wrap-around variable before its assignment: if so it is lowered
    /// twice, under `if` the first trip `then` with the value on entry
    /// `else` with the previous trip's value, and `true` is returned.
    pub(super) fn split_wrapped(
        &mut self,
        scalars: &LoopScalars<'t>,
        k: usize,
        s: Node<'t>,
        mut lower: impl FnMut(&mut Self, Node<'t>, bool) -> Result<(), Skip>,
    ) -> Result<bool, Skip> {
        let Some(trip) = &scalars.trip else {
            return Ok(false);
        };
        let src = self.src;
        let wraps: Vec<&Wrap<'t>> = (scalars.wraps.iter())
            .filter(|w| k < w.at && mentions_name(src, s, self.vars[w.v.index()].name))
            .collect();
        if wraps.is_empty() {
            return Ok(false);
        }
        // The previous trip's values: each assigned value is affine in the
        // counter, so one trip back is `value - coeff * divisor`.
        let mut prev = Vec::new();
        for w in &wraps {
            let e = self.value(w.value)?;
            let back = Affine::from_expr(&e).and_then(|a| {
                let c = a.coeff(trip.counter).checked_mul(trip.divisor)?;
                a.checked_sub(&Affine::constant(c))
            });
            match back {
                Some(b) => prev.push(affine_expr(&b, e.span)),
                None => return Ok(false),
            }
        }
        let at = super::span(s);
        let first = Cond::Cmp(
            CmpOp::Eq,
            affine_expr(&trip.trips, at),
            Expr::new(ExprKind::Int(0), at),
        );
        let r = self.b.begin_if_at(None, first, at);
        self.build(r, at)?;
        for w in &wraps {
            match &w.entry {
                Some(e) => self.known.insert(w.v, e.clone()),
                None => self.known.remove(&w.v),
            };
        }
        lower(self, s, true)?;
        let r = self.b.otherwise();
        self.build(r, at)?;
        for (w, p) in wraps.iter().zip(prev) {
            self.known.insert(w.v, p);
        }
        lower(self, s, false)?;
        for w in &wraps {
            self.known.remove(&w.v);
        }
        let r = self.b.end();
        self.build(r, at)?;
        Ok(true)
    }

    /// After the loop: what it assigns is forgotten (its values mention
    /// the loop's counter).
    pub(super) fn leave_loop(&mut self, scalars: &LoopScalars<'t>) {
        self.forget(&scalars.assigned);
    }
}

impl<'t> Ctx<'t> {
    /// A declaration's initialiser of a followed variable: it is known
    /// from here (folded when it is a constant expression).
    pub(super) fn forward_init(&mut self, v: VarId, value: Expr) -> Expr {
        if !self.followed(v) {
            return value;
        }
        let folded = match value.is_static() {
            true => self.folded(value.clone()),
            false => value.clone(),
        };
        if forwardable(&folded) {
            self.known.insert(v, folded.clone());
            folded
        } else {
            self.known.remove(&v);
            value
        }
    }
}

impl LoopScalars<'_> {
    pub(super) fn has_wraps(&self) -> bool {
        !self.wraps.is_empty() && self.trip.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> Span {
        Span::NONE
    }

    fn int(k: i64) -> Expr {
        Expr::new(ExprKind::Int(k), at())
    }

    fn counter() -> Var {
        Var::Counter(CounterId(0))
    }

    fn trip(divisor: i64, lo: i64) -> Trip {
        let trips = Affine::var(counter()).checked_sub(&Affine::constant(lo));
        Trip {
            trips: trips.unwrap(),
            divisor,
            counter: counter(),
        }
    }

    fn affine(e: &Expr) -> Affine {
        Affine::from_expr(e).expect("affine")
    }

    #[test]
    fn closed_forms_of_constant_steps() {
        // j = -1 stepped by 1 from i = 0: j = i - 1 at the start of trip i.
        let e = closed_form(&int(-1), &int(1), &trip(1, 0), at()).unwrap();
        assert_eq!(
            affine(&e),
            Affine::var(counter())
                .checked_sub(&Affine::constant(1))
                .unwrap()
        );
        // From i = 3: j = 10 - 2 (i - 3) = 16 - 2i.
        let e = closed_form(&int(10), &int(-2), &trip(1, 3), at()).unwrap();
        let want = Affine::var(counter()).checked_scale(-2).unwrap();
        assert_eq!(affine(&e), want.checked_add(&Affine::constant(16)).unwrap());
        // A loop of step 2 (i = 0, 2, ...) and k += 4: k = 1 + 2i.
        let e = closed_form(&int(1), &int(4), &trip(2, 0), at()).unwrap();
        let want = Affine::var(counter()).checked_scale(2).unwrap();
        assert_eq!(affine(&e), want.checked_add(&Affine::constant(1)).unwrap());
        // k += 3 in that loop is 3i/2: no expression of the counter.
        assert!(closed_form(&int(1), &int(3), &trip(2, 0), at()).is_none());
    }

    #[test]
    fn closed_forms_of_parameter_steps() {
        let inc = Expr::new(ExprKind::Param(ParamId(0)), at());
        // k = 0 stepped by inc: inc * i, exact but not affine.
        let e = closed_form(&int(0), &inc, &trip(1, 0), at()).unwrap();
        assert!(Affine::from_expr(&e).is_none());
        let ExprKind::Binary(BinOp::Mul, l, r) = &e.kind else {
            panic!("{e:?}")
        };
        assert_eq!(
            (&l.kind, &r.kind),
            (&inc.kind, &ExprKind::Counter(CounterId(0)))
        );
        // In a loop of step 2, inc * i / 2 is no expression of the counter.
        assert!(closed_form(&int(0), &inc, &trip(2, 0), at()).is_none());
    }

    #[test]
    fn only_c_exact_values_are_forwarded() {
        let n = Expr::new(ExprKind::Param(ParamId(0)), at());
        let half = Expr::new(
            ExprKind::Binary(BinOp::Div, Box::new(n.clone()), Box::new(int(2))),
            at(),
        );
        // The model's `/` is Euclidean, C's truncates: not forwarded.
        assert!(!forwardable(&half));
        assert!(forwardable(&combine(BinOp::Mul, &n, &n, at())));
        let read = Expr::new(ExprKind::Unknown, at());
        assert!(!forwardable(&read));
    }
}
