//! Early exits: `break`, `continue`, `return` before the end of a
//! function, `switch`, and `goto` forward to a label of an enclosing block,
//! lowered into the model's structured control (which has no jumps).
//!
//! The scheme: each jump *target* (the end of a loop or `switch` for
//! `break`, the end of a loop's trip for `continue`, the end of the
//! function for `return`, a label for `goto`) gets an integer flag, a local
//! scalar of the model, set to 1 where the jump is. In a block, the
//! statements after one that may set a flag run under `if flag == 0`; a
//! loop whose body may set a flag for a target outside its trip runs each
//! trip under `if flag == 0` (a `for` loop keeps its counter and bounds) or
//! tests the flag with its condition (a `while` loop), and a `continue`
//! flag is cleared at the start of each trip. A flag is cleared before the
//! construct it belongs to runs (a loop's or `switch`'s before it, a
//! label's at the start of its block, the function's at its start). So a
//! trip that follows a taken `break` reads the flag an earlier trip wrote:
//! the loop carries a flow dependence and is never parallel, unless no
//! write of the flag can run (`if (i > n) break;` inside `i < n`).
//!
//! No flag is needed where the jump ends the block anyway: an `if` with no
//! `else` whose branch ends in `break`, `continue` or `return` takes the
//! rest of its block as its `else` (`if (a[i] < 0) continue; rest` is
//! `if a[i] < 0 then else rest end`), and a jump to the end of the block it
//! closes (`continue` last in a loop body, `return` last in the function,
//! `break` last in a `case`) sets nothing. [`Ctx::structural`] decides which
//! jumps set a flag; the lowering follows the same decisions.
//!
//! `switch (e)` runs each group of statements under the condition that
//! `e` equals one of the labels that reach it (its own, and a falling
//! group's before it); `default` is `e` different from every label.
//! `return e;` of a function with a result assigns a local result scalar,
//! returned at the end of the region. A `for` counter C reads after a
//! loop it may leave by `break` is a cell set where C sets it
//! ([`Ctx::keep_counter`]).
//!
//! Refused (W0915, the region skipped): a `goto` backward or into a block,
//! a computed `goto`, `setjmp`, a `switch` whose cases assign what its
//! value reads, a `case` that is not a constant.

use super::fields::{Fields, F};
use super::lvalues::{assigned_names, walk};
use super::scan::children;
use super::stmt::Label;
use super::{span, Binding, Ctx, ModelRef, Skip, W_EXIT};
use crate::model::*;
use std::collections::HashMap;
use tree_sitter::Node;

/// Where a jump goes: a loop's or `switch`'s end (`break`), a loop's trip
/// end (`continue`), the function's end, or a label. Nodes by their id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Target<'t> {
    Break(usize),
    Continue(usize),
    Return,
    Label(&'t str),
}

/// The region's early exits being lowered.
#[derive(Default)]
pub(super) struct Exits<'t> {
    /// The flag of each target, made on first use.
    flags: HashMap<Target<'t>, ArrayId>,
    /// Targets whose flag may be set at this point and whose construct
    /// has not ended yet, in the order they were met.
    escaped: Vec<Target<'t>>,
    /// Labels some `goto` of the function names.
    goto_labels: Vec<&'t str>,
    /// The function's body, when the region is one: `return` may stand
    /// anywhere in it.
    body: Option<Node<'t>>,
    /// The region's last statement: a `return` there ends it.
    last: Option<usize>,
    /// The loops being lowered, innermost last.
    loops: Vec<LoopExits<'t>>,
    /// The kept counter of the loop that just ended.
    kept_after: Option<(ArrayId, &'t str)>,
    /// The function's result: the local scalar `return e;` assigns, when a
    /// `return` stands before the end.
    result: Option<ArrayId>,
}

/// The guards a block has opened for the flags set before this point.
#[derive(Default)]
struct Guards<'t> {
    pending: Vec<Target<'t>>,
    open: usize,
}

/// A loop's part in the scheme ([`Ctx::loop_exits`]).
struct LoopExits<'t> {
    node: usize,
    /// The flags every trip tests (set by an earlier trip or an inner
    /// exit to a target beyond the loop).
    tested: Vec<Target<'t>>,
    /// The `continue` flag, cleared at each trip's start.
    cont: bool,
    /// Each trip runs under `if tested == 0` (a `for` loop); a `while`
    /// loop tests the flags with its condition instead.
    guarded: bool,
    /// The cell of C's counter, when C reads it after the loop
    /// ([`Ctx::keep_counter`]), and its name.
    kept: Option<(ArrayId, &'t str)>,
}

fn is_jump(n: Node<'_>) -> bool {
    matches!(
        n.kind(),
        "break_statement" | "continue_statement" | "return_statement" | "goto_statement"
    )
}

fn is_loop(n: Node<'_>) -> bool {
    matches!(
        n.kind(),
        "for_statement" | "while_statement" | "do_statement"
    )
}

/// The statements of a block or a `case` group (a case's value aside).
fn items<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    let value = n.field(F::Value).map(|v| v.id());
    children(n)
        .into_iter()
        .filter(|c| Some(c.id()) != value && c.kind() != "statement_identifier")
        .collect()
}

/// Whether control never leaves `n` at its end: it is, or its block ends
/// with, `break`, `continue` or `return` (a `goto` is not counted: its
/// label may be further on in the same block).
fn ends_in_jump(n: Node<'_>) -> bool {
    match n.kind() {
        "break_statement" | "continue_statement" | "return_statement" => true,
        "compound_statement" | "case_statement" => {
            items(n).last().is_some_and(|&l| ends_in_jump(l))
        }
        _ => false,
    }
}

/// The statements of the block `n` stands in that follow it.
fn rest_after<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    let Some(p) = n.parent() else {
        return Vec::new();
    };
    if !matches!(p.kind(), "compound_statement" | "case_statement") {
        return Vec::new();
    }
    let all = items(p);
    match all.iter().position(|c| c.id() == n.id()) {
        Some(k) => all[k + 1..].to_vec(),
        None => Vec::new(),
    }
}

impl<'t> Ctx<'t> {
    /// Before a region: what its jumps need (W0915 for those the model
    /// cannot express).
    pub(super) fn enter_exits(
        &mut self,
        func: Node<'t>,
        items: &[Node<'t>],
        pragma: bool,
    ) -> Result<(), Skip> {
        self.exits = Exits::default();
        if !pragma {
            self.exits.body = func.field(F::Body);
        }
        self.exits.last = items.last().map(|l| l.id());
        let mut jumps = Vec::new();
        let mut setjmp = None;
        walk(items, |n| {
            if is_jump(n) {
                jumps.push(n);
            }
            if n.kind() == "call_expression" {
                let f = n.field(F::Function).map(|f| self.text(f));
                if matches!(f, Some("setjmp" | "_setjmp" | "sigsetjmp" | "__sigsetjmp")) {
                    setjmp = Some(n);
                }
            }
        });
        if let Some(n) = setjmp {
            return Err(self.exit_refused(
                "a call to `setjmp` (a `longjmp` may come back to it)".to_string(),
                span(n),
            ));
        }
        let mut early_return = false;
        for &j in &jumps {
            let t = self.target_of(j)?;
            if let Target::Label(l) = t {
                if !self.exits.goto_labels.contains(&l) {
                    self.exits.goto_labels.push(l);
                }
            }
            if t == Target::Return {
                // The last statement, under its labels.
                let mut at_end = items.last().copied();
                while let Some(l) = at_end.filter(|l| l.kind() == "labeled_statement") {
                    at_end = self::items(l).last().copied();
                }
                let last = at_end.is_some_and(|l| l.id() == j.id());
                if !last && self.exits.body.is_none() {
                    return Err(self.exit_refused(
                        "`return` before the end of a `#pragma scop` region".to_string(),
                        span(j),
                    ));
                }
                early_return |= !last;
            }
        }
        // A function with a result and a `return` before its end: the
        // result is a local scalar, returned at the end.
        let returns_value = jumps
            .iter()
            .any(|j| j.kind() == "return_statement" && !children(*j).is_empty());
        if early_return && returns_value {
            let elem = self.result_elem(func);
            let name = self.flag_name("result");
            let a = self.b.array_at(&name, elem, Vec::new(), span(func));
            let a = self.build(a, span(func))?;
            self.note_local(a, name);
            self.exits.result = Some(a);
            let zero = Expr::new(ExprKind::Int(0), span(func));
            self.b
                .assign_at(None, false, scalar(a, span(func)), None, zero, span(func));
        }
        if jumps
            .iter()
            .any(|&j| self.target_of(j).ok() == Some(Target::Return) && !self.structural(j))
        {
            self.set_flag(Target::Return, 0, span(func))?;
        }
        Ok(())
    }

    /// The statements of a region: [`Ctx::seq`], then the function's
    /// result where a `return` before the end assigned it.
    pub(super) fn exits_region_end(&mut self, at: Span) {
        if let Some(a) = self.exits.result {
            let v = Expr::new(ExprKind::Access(scalar(a, at)), at);
            self.b.call_at(None, false, "return", vec![v], at);
        }
    }

    /// The model's element type of the function's result.
    fn result_elem(&self, func: Node<'t>) -> ElemType {
        let mut ty = func.field(F::Type).map_or("", |t| self.text(t));
        for _ in 0..16 {
            match self.typedefs.get(ty) {
                Some(&t) => ty = t,
                None => break,
            }
        }
        if ty.contains("float") || ty.contains("double") {
            ElemType::Real
        } else {
            ElemType::Int
        }
    }

    /// A name for a scalar the lowering adds: apart from every name of
    /// the model and every word of the file.
    fn flag_name(&mut self, base: &str) -> String {
        let src = self.src;
        let (name, _) = Self::fresh_from(base, 1, |n| {
            !self.taken.contains(n) && !self.counter_names.contains(n) && !src.contains(n)
        });
        self.taken.insert(name.clone());
        self.undo.push(super::Undo::Name(name.clone()));
        name
    }

    fn note_local(&mut self, a: ArrayId, name: String) {
        self.array_names.push(name);
        self.locals.push(a);
        self.b.set_local(a);
    }

    fn exit_refused(&self, what: String, at: Span) -> Skip {
        self.skip(
            W_EXIT,
            format!("{what} is not supported"),
            at,
            "not supported",
            "supported: `break`, `continue`, `return`, `switch`, and `goto` forward to a label of an enclosing block (docs/c.md, Early exits)",
        )
    }

    /// Where the jump `j` goes.
    fn target_of(&self, j: Node<'t>) -> Result<Target<'t>, Skip> {
        let up_to = |stop: &dyn Fn(Node<'t>) -> bool| {
            let mut n = j;
            while let Some(p) = n.parent() {
                if stop(p) {
                    return Some(p);
                }
                if p.kind() == "function_definition" {
                    return None;
                }
                n = p;
            }
            None
        };
        match j.kind() {
            "break_statement" => up_to(&|p| is_loop(p) || p.kind() == "switch_statement")
                .map(|p| Target::Break(p.id()))
                .ok_or_else(|| self.exit_refused("`break` outside a loop".to_string(), span(j))),
            "continue_statement" => up_to(&is_loop)
                .map(|p| Target::Continue(p.id()))
                .ok_or_else(|| self.exit_refused("`continue` outside a loop".to_string(), span(j))),
            "return_statement" => Ok(Target::Return),
            _ => self.goto_target(j),
        }
    }

    /// A `goto`'s label, when it is a label of a block around the `goto`
    /// that comes after the statement holding it.
    fn goto_target(&self, j: Node<'t>) -> Result<Target<'t>, Skip> {
        let label = match j.field(F::Label) {
            Some(l) if l.kind() == "statement_identifier" => self.text(l),
            _ => return Err(self.exit_refused("a computed `goto`".to_string(), span(j))),
        };
        let mut n = j;
        while let Some(p) = n.parent() {
            if matches!(p.kind(), "compound_statement" | "case_statement") {
                let all = items(p);
                let at = all.iter().position(|c| c.id() == n.id());
                let labelled = |c: &Node<'t>| {
                    c.kind() == "labeled_statement"
                        && c.field(F::Label).is_some_and(|l| self.text(l) == label)
                };
                if let Some(k) = at {
                    if all[k + 1..].iter().any(labelled) {
                        return Ok(Target::Label(label));
                    }
                    if all[..=k].iter().any(labelled) {
                        return Err(
                            self.exit_refused(format!("a backward `goto {label}`"), span(j))
                        );
                    }
                }
            }
            if p.kind() == "function_definition" {
                break;
            }
            n = p;
        }
        Err(self.exit_refused(
            format!("a `goto {label}` to a label not in a block around it (a backward jump, or into a block)"),
            span(j),
        ))
    }

    /// Whether `if_node` takes the rest of its block as its `else`: it has
    /// none, its branch ends in a jump, something follows it, and no label
    /// a `goto` names is in what follows.
    fn takes_rest(&self, if_node: Node<'t>) -> bool {
        if if_node.field(F::Alternative).is_some()
            || !if_node.field(F::Consequence).is_some_and(ends_in_jump)
        {
            return false;
        }
        let rest = rest_after(if_node);
        let mut target = false;
        walk(&rest, |n| {
            if n.kind() == "labeled_statement"
                && (n.field(F::Label))
                    .is_some_and(|l| self.exits.goto_labels.contains(&self.text(l)))
            {
                target = true;
            }
        });
        !rest.is_empty() && !target
    }

    /// Whether the jump `j` reaches its target by the structure alone
    /// (sets no flag): climbing from it, every statement is last in its
    /// block, or the branch of an `if` that takes the rest of its block,
    /// up to the block its target ends.
    pub(super) fn structural(&self, j: Node<'t>) -> bool {
        let Ok(t) = self.target_of(j) else {
            return false;
        };
        let ends_here = |x: Node<'t>| match t {
            Target::Continue(l) => {
                x.parent().is_some_and(|p| p.id() == l)
                    && x.parent()
                        .and_then(|p| p.field(F::Body))
                        .is_some_and(|b| b.id() == x.id())
            }
            Target::Return => {
                self.exits.body.is_some_and(|b| b.id() == x.id()) || self.exits.last == Some(x.id())
            }
            // A `case` group that does not fall into the next one.
            Target::Break(s) => {
                x.kind() == "case_statement"
                    && x.parent()
                        .and_then(|b| b.parent())
                        .is_some_and(|sw| sw.id() == s)
                    && ends_in_jump(x)
            }
            Target::Label(_) => false,
        };
        let mut x = j;
        loop {
            if ends_here(x) {
                return true;
            }
            let Some(p) = x.parent() else {
                return false;
            };
            x = match p.kind() {
                "labeled_statement" | "else_clause" => p,
                "compound_statement" | "case_statement" => match items(p).last() {
                    Some(l) if l.id() == x.id() => p,
                    _ => return false,
                },
                "if_statement" => {
                    let then = p.field(F::Consequence).is_some_and(|c| c.id() == x.id());
                    match (then && self.takes_rest(p), p.parent()) {
                        // At the branch's end, the block around the `if` ends.
                        (true, Some(block)) => block,
                        _ => p,
                    }
                }
                "switch_statement" if p.field(F::Body).is_some_and(|b| b.id() == x.id()) => p,
                _ => return false,
            };
        }
    }

    /// The flag of `t`, made on first use.
    fn flag(&mut self, t: Target<'t>, at: Span) -> Result<ArrayId, Skip> {
        if let Some(&a) = self.exits.flags.get(&t) {
            return Ok(a);
        }
        let base = match t {
            Target::Break(_) => "broke".to_string(),
            Target::Continue(_) => "skip".to_string(),
            Target::Return => "returned".to_string(),
            Target::Label(l) => format!("to_{l}"),
        };
        let name = self.flag_name(&base);
        let a = self.b.array_at(&name, ElemType::Int, Vec::new(), at);
        let a = self.build(a, at)?;
        self.note_local(a, name);
        self.exits.flags.insert(t, a);
        Ok(a)
    }

    fn set_flag(&mut self, t: Target<'t>, v: i64, at: Span) -> Result<(), Skip> {
        let a = self.flag(t, at)?;
        let value = Expr::new(ExprKind::Int(v), at);
        self.b
            .assign_at(None, false, scalar(a, at), None, value, at);
        Ok(())
    }

    /// `f1 == 0 and f2 == 0 ...` over the flags of `ts`.
    fn clear(&mut self, ts: &[Target<'t>], at: Span) -> Result<Option<Cond>, Skip> {
        let mut out: Option<Cond> = None;
        for &t in ts {
            let a = self.flag(t, at)?;
            let c = Cond::Cmp(
                CmpOp::Eq,
                Expr::new(ExprKind::Access(scalar(a, at)), at),
                Expr::new(ExprKind::Int(0), at),
            );
            out = Some(match out {
                None => c,
                Some(o) => Cond::And(Box::new(o), Box::new(c)),
            });
        }
        Ok(out)
    }

    /// The targets of the jumps in `roots` that set a flag, less those
    /// `keep` rejects, without repeats.
    fn flagged(&self, roots: &[Node<'t>], keep: impl Fn(Target<'t>) -> bool) -> Vec<Target<'t>> {
        let mut out = Vec::new();
        walk(roots, |n| {
            if is_jump(n) && !self.structural(n) {
                if let Ok(t) = self.target_of(n) {
                    if keep(t) && !out.contains(&t) {
                        out.push(t);
                    }
                }
            }
        });
        out
    }

    /// A jump statement: its flag set (unless the structure takes it
    /// there), a `return`'s value assigned.
    pub(super) fn jump(&mut self, n: Node<'t>, label: Label<'t>) -> Result<(), Skip> {
        let at = span(n);
        let t = self.target_of(n)?;
        if t == Target::Return {
            if let Some(&e) = children(n).first() {
                let v = self.value(e)?;
                let label = self.stmt_label(label);
                self.flush(label.as_deref(), false)?;
                match self.exits.result {
                    Some(a) => {
                        (self.b).assign_at(label.as_deref(), false, scalar(a, at), None, v, at);
                    }
                    // The last statement of the region.
                    None => {
                        (self.b).call_at(label.as_deref(), false, "return", vec![v], at);
                    }
                }
            }
        }
        if self.structural(n) {
            return Ok(());
        }
        // The counter C reads after its loop: its value here.
        if let Target::Break(id) = t {
            let kept = (self.exits.loops.iter().rev())
                .find(|e| e.node == id)
                .and_then(|e| e.kept);
            if let Some((a, name)) = kept {
                if let Some(Binding::Counter(value)) = self.lookup(name) {
                    self.b
                        .assign_at(None, false, scalar(a, at), None, value, at);
                }
            }
        }
        self.set_flag(t, 1, at)?;
        if !self.exits.escaped.contains(&t) {
            self.exits.escaped.push(t);
        }
        Ok(())
    }

    /// The statements of a block, with the ones after a statement that
    /// may set a flag guarded by it, and an `if` that takes the rest of
    /// its block given it as its `else`.
    pub(super) fn seq(&mut self, items: &[Node<'t>]) -> Result<(), Skip> {
        let outer = std::mem::take(&mut self.exits.escaped);
        let r = self.seq_inner(items);
        for t in outer {
            if !self.exits.escaped.contains(&t) {
                self.exits.escaped.push(t);
            }
        }
        r
    }

    fn seq_inner(&mut self, items: &[Node<'t>]) -> Result<(), Skip> {
        let at = match (items.first(), items.last()) {
            (Some(&f), Some(&l)) => Span::new(f.start_byte(), l.end_byte()),
            _ => return Ok(()),
        };
        // The flags of the labels of this block that a `goto` sets.
        let mut labels = Vec::new();
        for &item in items {
            let (label, _) = self.unlabel(item);
            if let Some((l, _)) = label {
                if self.exits.goto_labels.contains(&l) {
                    labels.push(l);
                }
            }
        }
        if !labels.is_empty() {
            let roots = self.exits.body.map_or(items.to_vec(), |b| vec![b]);
            let set = self.flagged(
                &roots,
                |t| matches!(t, Target::Label(l) if labels.contains(&l)),
            );
            for t in set {
                self.set_flag(t, 0, at)?;
            }
        }
        let mut g = Guards::default();
        let mut since = 0;
        for (k, &item) in items.iter().enumerate() {
            let (label, inner) = self.unlabel(item);
            // A label a `goto` before it jumps to: what follows runs
            // either way.
            if let Some((l, _)) = label {
                if g.pending.contains(&Target::Label(l)) {
                    self.close_guards(&mut g, at)?;
                    g.pending.retain(|&t| t != Target::Label(l));
                    self.exits.escaped.retain(|&t| t != Target::Label(l));
                    let names = assigned_names(self.src, &items[since..k]);
                    self.forget(&names);
                    since = k;
                    if !g.pending.is_empty() {
                        let pending = g.pending.clone();
                        self.open_guard(&mut g, &pending, at)?;
                    }
                }
            }
            if inner.kind() == "if_statement" && self.takes_rest(inner) {
                return self
                    .if_with_rest(inner, label, &items[k + 1..])
                    .and_then(|()| self.close_guards(&mut g, at));
            }
            self.stmt(item, None)?;
            let new: Vec<Target<'t>> = (self.exits.escaped.iter())
                .filter(|t| !g.pending.contains(t))
                .copied()
                .collect();
            // Not for a label that comes next: nothing stands between.
            let next = items.get(k + 1).and_then(|&n| self.unlabel(n).0);
            let skipped =
                |t: &Target<'t>| matches!((t, next), (Target::Label(l), Some((m, _))) if *l == m);
            g.pending.extend(new.iter().copied());
            let new: Vec<Target<'t>> = new.into_iter().filter(|t| !skipped(t)).collect();
            if !new.is_empty() && k + 1 < items.len() {
                self.open_guard(&mut g, &new, at)?;
            }
        }
        self.close_guards(&mut g, at)
    }

    fn open_guard(&mut self, g: &mut Guards<'t>, ts: &[Target<'t>], at: Span) -> Result<(), Skip> {
        if let Some(c) = self.clear(ts, at)? {
            let r = self.b.begin_if_at(None, c, at);
            self.build(r, at)?;
            g.open += 1;
        }
        Ok(())
    }

    fn close_guards(&mut self, g: &mut Guards<'t>, at: Span) -> Result<(), Skip> {
        for _ in 0..g.open {
            let r = self.b.end();
            self.build(r, at)?;
        }
        g.open = 0;
        Ok(())
    }

    /// `if (c) { ...; jump; } rest` as `if c then ... else rest end`.
    fn if_with_rest(
        &mut self,
        n: Node<'t>,
        label: Label<'t>,
        rest: &[Node<'t>],
    ) -> Result<(), Skip> {
        let (name, cond, then, header) = self.test(n, F::Consequence, label, false, true)?;
        let before = self.known_snapshot();
        let r = self.b.begin_if_at(name.as_deref(), cond, header);
        self.build(r, header)?;
        self.branch(then)?;
        self.known.clone_from(&before);
        let r = self.b.otherwise();
        self.build(r, span(n))?;
        self.seq(rest)?;
        let mut roots = vec![n];
        roots.extend_from_slice(rest);
        self.known = before;
        let names = assigned_names(self.src, &roots);
        self.forget(&names);
        let r = self.b.end();
        self.build(r, span(n))
    }

    /// Before a loop: its `break` flag cleared, and what each trip tests
    /// (the loop is the innermost open one until [`Ctx::loop_done`]).
    pub(super) fn loop_exits(&mut self, n: Node<'t>, body: Node<'t>) -> Result<(), Skip> {
        let id = n.id();
        // Targets beyond the trip: the loop's end, and outer ones (a
        // `break` or `continue` of an inner construct ends inside it).
        let tested = self.flagged(&[body], |t| match t {
            Target::Break(b) => b == id,
            Target::Continue(_) => false,
            Target::Return => true,
            Target::Label(l) => !self.label_inside(l, body),
        });
        let cont = !(self.flagged(&[body], |t| t == Target::Continue(id))).is_empty();
        if tested.contains(&Target::Break(id)) {
            self.set_flag(Target::Break(id), 0, span(n))?;
        }
        self.exits.loops.push(LoopExits {
            node: id,
            tested,
            cont,
            guarded: true,
            kept: None,
        });
        Ok(())
    }

    /// Whether C reads the counter `name` of the `for` loop `n` (not
    /// declared in its header, a step of 1 either way) after the loop,
    /// which it may leave by `break`: `for (i = 0; i < n; i++) if (a[i] ==
    /// x) break; return i;`. Then the counter's variable is a cell that
    /// gets C's value at the `break`, and after a loop that ran out
    /// ([`Ctx::counter_after`]).
    pub(super) fn keep_counter(
        &mut self,
        n: Node<'t>,
        name: &'t str,
        declared: bool,
        step: i64,
        start: Expr,
        at: Span,
    ) -> Result<(), Skip> {
        let leaves = (self.exits.loops.last())
            .is_some_and(|e| e.node == n.id() && e.tested.contains(&Target::Break(n.id())));
        let Some(body) = self
            .exits
            .body
            .filter(|_| leaves && !declared && step.abs() == 1)
        else {
            return Ok(());
        };
        let mut read_after = false;
        walk(&[body], |x| {
            read_after |=
                x.kind() == "identifier" && x.start_byte() >= n.end_byte() && self.text(x) == name;
        });
        let Some(Binding::Var(v)) = self.lookup(name).filter(|_| read_after) else {
            return Ok(());
        };
        if let ModelRef::Array(a, 0) = self.model_of(v, at)? {
            // C's header sets it first.
            self.b
                .assign_at(None, false, scalar(a, at), None, start, at);
            if let Some(e) = self.exits.loops.last_mut() {
                e.kept = Some((a, name));
            }
        }
        Ok(())
    }

    /// After a `for` loop from `lo` to `hi` whose counter is kept (set to
    /// its start before the loop): when no `break` was taken and the loop
    /// ran, C leaves `hi + 1` counting up, `lo - 1` counting down.
    pub(super) fn counter_after(
        &mut self,
        n: Node<'t>,
        step: i64,
        lo: Expr,
        hi: Expr,
        at: Span,
    ) -> Result<(), Skip> {
        let Some((a, name)) = self.exits.kept_after.take() else {
            return Ok(());
        };
        let (op, end) = match step > 0 {
            true => (BinOp::Add, hi.clone()),
            false => (BinOp::Sub, lo.clone()),
        };
        let one = Expr::new(ExprKind::Int(1), at);
        let past = Expr::new(ExprKind::Binary(op, Box::new(end), Box::new(one)), at);
        let ran_out = self.clear(&[Target::Break(n.id())], at)?;
        let ran_out = ran_out.ok_or(Skip(None))?;
        let ran = Cond::Cmp(CmpOp::Le, lo, hi);
        let r = self
            .b
            .begin_if_at(None, Cond::And(Box::new(ran_out), Box::new(ran)), at);
        self.build(r, at)?;
        self.b.assign_at(None, false, scalar(a, at), None, past, at);
        let r = self.b.end();
        self.build(r, at)?;
        self.exited.remove(name);
        self.forget(&[name].into_iter().collect());
        Ok(())
    }

    fn label_inside(&self, label: &str, body: Node<'t>) -> bool {
        let mut found = false;
        walk(&[body], |x| {
            found |= x.kind() == "labeled_statement"
                && x.field(F::Label).is_some_and(|l| self.text(l) == label)
        });
        found
    }

    /// The innermost loop, a `do ... while` loop, stops by its own `break`
    /// flag, which its test at the end of each trip sets: tested by every
    /// trip, cleared before the loop. Returns the flags its body may set.
    pub(super) fn stops_by_flag(&mut self, n: Node<'t>) -> Result<Vec<Target<'t>>, Skip> {
        let t = Target::Break(n.id());
        let Some(e) = self.exits.loops.last_mut() else {
            return Ok(Vec::new());
        };
        let set_in_body = e.tested.clone();
        if !e.tested.contains(&t) {
            e.tested.push(t);
            self.set_flag(t, 0, span(n))?;
        }
        Ok(set_in_body)
    }

    /// The end of a trip of a `do ... while` loop: `if !(test) then` its
    /// `break` flag is set, unless a jump in the body set one of `set`.
    pub(super) fn test_at_trip_end(
        &mut self,
        n: Node<'t>,
        set: &[Target<'t>],
        test: Cond,
        at: Span,
    ) -> Result<(), Skip> {
        let stop = Cond::Not(Box::new(test));
        let cond = match self.clear(set, at)? {
            Some(c) => Cond::And(Box::new(c), Box::new(stop)),
            None => stop,
        };
        let r = self.b.begin_if_at(None, cond, at);
        self.build(r, at)?;
        self.set_flag(Target::Break(n.id()), 1, at)?;
        let r = self.b.end();
        self.build(r, at)
    }

    /// The test of the innermost loop, a `while` loop: with its flags.
    pub(super) fn loop_test(&mut self, cond: Cond, at: Span) -> Result<Cond, Skip> {
        let tested = match self.exits.loops.last_mut() {
            Some(e) => {
                e.guarded = false;
                e.tested.clone()
            }
            None => return Ok(cond),
        };
        Ok(match self.clear(&tested, at)? {
            Some(c) => Cond::And(Box::new(cond), Box::new(c)),
            None => cond,
        })
    }

    /// At the start of each trip of the innermost loop: the guard of a
    /// `for` loop, the `continue` flag cleared. Returns whether a guard
    /// was opened.
    pub(super) fn trip_start(&mut self, at: Span) -> Result<bool, Skip> {
        let Some(e) = self.exits.loops.last() else {
            return Ok(false);
        };
        let (guarded, tested, cont, node) = (e.guarded, e.tested.clone(), e.cont, e.node);
        let mut opened = false;
        if guarded {
            if let Some(c) = self.clear(&tested, at)? {
                let r = self.b.begin_if_at(None, c, at);
                self.build(r, at)?;
                opened = true;
            }
        }
        if cont {
            self.set_flag(Target::Continue(node), 0, at)?;
        }
        Ok(opened)
    }

    /// At the end of each trip: the guard closed.
    pub(super) fn trip_end(&mut self, opened: bool, at: Span) -> Result<(), Skip> {
        if opened {
            let r = self.b.end();
            self.build(r, at)?;
        }
        Ok(())
    }

    /// After the innermost loop: its own targets are reached.
    pub(super) fn loop_done(&mut self) {
        if let Some(e) = self.exits.loops.pop() {
            self.construct_ends(e.node);
            self.exits.kept_after = e.kept;
        }
    }

    /// After a loop or `switch`: its own targets are reached.
    fn construct_ends(&mut self, id: usize) {
        (self.exits.escaped).retain(|&t| t != Target::Break(id) && t != Target::Continue(id));
    }

    /// Whether the loop at `body` may leave a trip early other than by
    /// ending it (a `continue`, a `goto` into its body, or any exit):
    /// its scalars then are not induction variables.
    pub(super) fn trip_may_end_early(&self, body: Node<'t>) -> bool {
        let mut found = false;
        walk(&[body], |n| found |= is_jump(n));
        found
    }

    /// `switch (e) { case ...: ... }`.
    pub(super) fn switch_stmt(&mut self, n: Node<'t>, label: Label<'t>) -> Result<(), Skip> {
        self.ignore_label(label, "a `switch`");
        let (Some(c), Some(body)) = (n.field(F::Condition), n.field(F::Body)) else {
            return Err(Skip(None));
        };
        let header = Span::new(n.start_byte(), body.start_byte());
        // Each group tests the value again: nothing in the cases may
        // change what it reads.
        let assigned = assigned_names(self.src, &[body]);
        let mut changed = None;
        walk(&[c], |x| {
            if x.kind() == "identifier" && assigned.contains(self.text(x)) {
                changed = Some(self.text(x));
            }
        });
        if let Some(name) = changed {
            return Err(self.exit_refused(
                format!("a `switch` on a value that its cases change (`{name}`)"),
                header,
            ));
        }
        let value = self.value(c)?;
        self.flush(None, false)?;
        self.no_writes_in("a `switch` value", header)?;
        let groups = children(body);
        let mut labels: Vec<Option<i64>> = Vec::new();
        for &g in &groups {
            if g.kind() != "case_statement" {
                return Err(self.exit_refused(
                    "a statement in a `switch` before its first `case`".to_string(),
                    span(g),
                ));
            }
            match g.field(F::Value) {
                None => labels.push(None),
                Some(v) => match self.const_value(v, 0) {
                    Some(k) => labels.push(Some(k)),
                    None => {
                        return Err(self.exit_refused(
                            "a `case` whose value is not a constant".to_string(),
                            span(v),
                        ))
                    }
                },
            }
        }
        let at = span(n);
        let eq = |k: i64, op: CmpOp| Cond::Cmp(op, value.clone(), Expr::new(ExprKind::Int(k), at));
        let join = |a: Option<Cond>, b: Cond, and: bool| match a {
            None => b,
            Some(a) if and => Cond::And(Box::new(a), Box::new(b)),
            Some(a) => Cond::Or(Box::new(a), Box::new(b)),
        };
        // `default`: none of the labels.
        let mut none: Option<Cond> = None;
        for &k in labels.iter().flatten() {
            none = Some(join(none, eq(k, CmpOp::Ne), true));
        }
        let none = none.unwrap_or(Cond::Cmp(
            CmpOp::Eq,
            Expr::new(ExprKind::Int(0), at),
            Expr::new(ExprKind::Int(0), at),
        ));
        let id = n.id();
        if !self.flagged(&[body], |t| t == Target::Break(id)).is_empty() {
            self.set_flag(Target::Break(id), 0, at)?;
        }
        let outer = std::mem::take(&mut self.exits.escaped);
        let mut g = Guards::default();
        let mut reach: Option<Cond> = None;
        let mut result = Ok(());
        for (k, &group) in groups.iter().enumerate() {
            let own = match labels[k] {
                Some(v) => eq(v, CmpOp::Eq),
                None => none.clone(),
            };
            let cond = join(reach.take(), own, false);
            let stmts = items(group);
            if !stmts.is_empty() {
                let before = self.known_snapshot();
                let r = self.b.begin_if_at(None, cond.clone(), span(group));
                result = self.build(r, span(group)).map(|_| ());
                if result.is_err() {
                    break;
                }
                let mark = self.scope.len();
                result = self.seq(&stmts);
                self.scope.truncate(mark);
                self.after_branches(before, group);
                if result.is_err() {
                    break;
                }
                let r = self.b.end();
                result = self.build(r, span(group));
                if result.is_err() {
                    break;
                }
            }
            // A group that falls into the next one.
            if !ends_in_jump(group) {
                reach = Some(cond);
            }
            let new: Vec<Target<'t>> = (self.exits.escaped.iter())
                .filter(|t| !g.pending.contains(t))
                .copied()
                .collect();
            if !new.is_empty() && k + 1 < groups.len() {
                g.pending.extend(new.iter().copied());
                result = self.open_guard(&mut g, &new, at);
                if result.is_err() {
                    break;
                }
            }
        }
        result?;
        self.close_guards(&mut g, at)?;
        for t in outer {
            if !self.exits.escaped.contains(&t) {
                self.exits.escaped.push(t);
            }
        }
        self.construct_ends(id);
        Ok(())
    }
}

/// The scalar `a` as an access.
fn scalar(a: ArrayId, at: Span) -> Access {
    Access {
        array: a,
        subscripts: Vec::new(),
        span: at,
        ext: None,
    }
}
