//! OpenMP's own clauses for a privatized loop of a C kernel
//! (`privatize --emit code` on C; docs/expansion.md §9.3).
//!
//! The kernel's arrays are the C function's parameters: the caller sees
//! their final contents, so a loop's writes matter after it unless the
//! program provably overwrites them first, whatever σ says of reads inside
//! the kernel. `lastprivate` copies the whole private copy of the thread
//! that ran the sequentially last iteration, so it is exact only when that
//! iteration wrote every cell any iteration wrote, and a cell no iteration
//! wrote must hold the shared value (`firstprivate`). Every decision here is
//! proved from the program's text, for every parameter value:
//!
//! - **covered**: an item of the loop's body writes every cell of the
//!   array, unconditionally (`t = ..` for a scalar; `X[c1, .., cn] = ..`
//!   under loops of step 1 over exactly the declared ranges; an `if` with
//!   an `else` each of whose branches holds such an item);
//! - **fresh** (no copy-in): covered, and no read of the array before or
//!   in that item;
//! - **invariant**: every write of the array is unconditional, in `for`
//!   loops whose bounds and at subscripts that do not use the loop's
//!   counter: every iteration writes the same cells;
//! - **dead after**: an item after the loop, in the same body, covers the
//!   array with no read of it in between.
//!
//! - **local and dead after**: the array is local to the code
//!   ([`Array::local`], a C local of the region), so no caller sees it, and
//!   nothing outside the loop reads it; when the loop may run again (inside
//!   another loop), each iteration must also write before reading, or a
//!   later execution would read what an earlier one left.
//!
//! Clauses: dead after → `private`, or `firstprivate` when not fresh;
//! covered → `lastprivate`, plus `firstprivate` when not fresh; invariant
//! → `firstprivate lastprivate`; otherwise none fit (the writes are
//! conditional or move with the loop, e.g. a last writer decided at run
//! time) and the loop keeps the explicit code of [`super::emit`].

use crate::cprint::emit::OmpPrivate;
use crate::model::*;
use std::collections::HashSet;

/// The clause for array `x` in loop `l`, whose siblings after it are
/// `after`, with why; `Err` says why no clause fits.
pub fn clause(
    p: &Program,
    l: &For,
    after: &[Node],
    x: ArrayId,
    locals: &Locals,
) -> Result<(OmpPrivate, String), String> {
    let name = &p.array_decl(x).name;
    let loop_name = &p.counter_decl(l.counter).name;
    let covered = l.body.iter().position(|n| covers(p, n, x, &mut Vec::new()));
    let fresh = covered.is_some_and(|k| !l.body[..=k].iter().any(|n| reads(n, x)));
    let dead = after
        .iter()
        .position(|n| covers(p, n, x, &mut Vec::new()))
        .filter(|&k| !after[..=k].iter().any(|n| reads(n, x)));
    let copy_in = if fresh {
        "every iteration writes it before reading it".to_string()
    } else {
        format!("an iteration may read {name} before writing it")
    };
    let make = |first, last| OmpPrivate {
        array: x,
        first,
        last,
    };
    if dead.is_some() {
        let why =
            format!("{copy_in}; its values are overwritten after loop {loop_name} before any read");
        return Ok((make(!fresh, false), why));
    }
    if locals.dead(l.counter, x, fresh) {
        let why = format!(
            "{copy_in}; {name} is local to the code and read nowhere outside loop {loop_name}"
        );
        return Ok((make(!fresh, false), why));
    }
    if covered.is_some() {
        let why = format!("{copy_in}; every iteration writes every cell, the last one included");
        return Ok((make(!fresh, true), why));
    }
    if let Err(why) = invariant(&l.body, x, l.counter) {
        return Err(format!(
            "{why}: the last iteration need not write every cell loop {loop_name} writes, \
             so each cell comes from its last writer (explicit code)"
        ));
    }
    let why = format!(
        "every iteration writes the same cells of {name}, not all of them: the others keep \
         the shared value"
    );
    Ok((make(true, true), why))
}

/// Whether `n` writes every cell of `x` whenever it runs; `around` are the
/// loops inside `n` around the node, with their ranges.
fn covers(
    p: &Program,
    n: &Node,
    x: ArrayId,
    around: &mut Vec<(CounterId, Affine, Affine)>,
) -> bool {
    match n {
        Node::Stmt(s) => {
            let StmtKind::Assign { target, .. } = &s.kind else {
                return false;
            };
            let dims = &p.array_decl(x).dims;
            if target.array != x
                || target.subscripts.len() != dims.len()
                || around.len() != dims.len()
            {
                return false;
            }
            // Subscript k is a counter of its own loop, running over dim k.
            let mut used = Vec::new();
            target.subscripts.iter().zip(dims).all(|(sub, r)| {
                let Some(a) = &sub.affine else {
                    return false;
                };
                let Some(&(c, ref lo, ref hi)) = around
                    .iter()
                    .find(|(c, _, _)| a.constant == 0 && a.terms == [(Var::Counter(*c), 1)])
                else {
                    return false;
                };
                let fresh = !used.contains(&c);
                used.push(c);
                fresh && *lo == r.lo.affine && *hi == r.hi.affine
            })
        }
        Node::For(f) if f.step == 1 => {
            around.push((f.counter, f.lower.affine.clone(), f.upper.affine.clone()));
            let r = f.body.iter().any(|b| covers(p, b, x, around));
            around.pop();
            r
        }
        // One branch runs whenever the `if` does: each must cover.
        Node::If(i) => i.otherwise.as_ref().is_some_and(|otherwise| {
            (i.branches.iter().map(|(_, b)| b).chain([otherwise]))
                .all(|b| b.iter().any(|n| covers(p, n, x, around)))
        }),
        _ => false,
    }
}

/// Per `for` loop and array local to the code ([`Array::local`]): whether
/// nothing outside the loop reads it, and whether the loop may run more
/// than once (inside another loop).
#[derive(Debug, Default)]
pub struct Locals {
    only_inside: HashSet<(CounterId, ArrayId)>,
    nested: HashSet<CounterId>,
}

impl Locals {
    pub fn new(p: &Program) -> Locals {
        let locals: Vec<ArrayId> = (0..p.arrays.len() as u32)
            .map(ArrayId)
            .filter(|&a| p.array_decl(a).local)
            .collect();
        let mut out = Locals::default();
        if !locals.is_empty() {
            out.walk(p, &p.body, false, &locals);
        }
        out
    }

    fn walk(&mut self, p: &Program, nodes: &[Node], nested: bool, locals: &[ArrayId]) {
        for n in nodes {
            match n {
                Node::For(f) => {
                    if nested {
                        self.nested.insert(f.counter);
                    }
                    for &x in locals {
                        if !p.body.iter().any(|n| reads_skipping(n, x, Some(f.counter))) {
                            self.only_inside.insert((f.counter, x));
                        }
                    }
                    self.walk(p, &f.body, true, locals);
                }
                Node::While(w) => self.walk(p, &w.body, true, locals),
                Node::If(i) => {
                    for (_, b) in &i.branches {
                        self.walk(p, b, nested, locals);
                    }
                    self.walk(p, i.otherwise.as_deref().unwrap_or(&[]), nested, locals);
                }
                Node::Stmt(_) => {}
            }
        }
    }

    /// Whether the values of local `x` that loop `l` leaves are never
    /// read: none outside it, and none by a later execution of it unless
    /// every iteration writes before reading (`fresh`).
    fn dead(&self, l: CounterId, x: ArrayId, fresh: bool) -> bool {
        self.only_inside.contains(&(l, x)) && (fresh || !self.nested.contains(&l))
    }
}

/// Whether `n` reads `x` anywhere (an update `X[e] += ..` reads it).
fn reads(n: &Node, x: ArrayId) -> bool {
    reads_skipping(n, x, None)
}

/// [`reads`], leaving out the loop of counter `skip`.
fn reads_skipping(n: &Node, x: ArrayId, skip: Option<CounterId>) -> bool {
    let reads = |n: &Node, x| reads_skipping(n, x, skip);
    match n {
        Node::Stmt(s) => match &s.kind {
            StmtKind::Assign { target, op, value } => {
                (op.is_some() && target.array == x)
                    || target.subscripts.iter().any(|e| expr_reads(&e.expr, x))
                    || expr_reads(value, x)
            }
            StmtKind::Call { args, .. } => args.iter().any(|e| expr_reads(e, x)),
        },
        Node::For(f) if Some(f.counter) == skip => false,
        Node::For(f) => f.body.iter().any(|b| reads(b, x)),
        Node::While(w) => cond_reads(&w.cond.cond, x) || w.body.iter().any(|b| reads(b, x)),
        Node::If(i) => {
            i.branches
                .iter()
                .any(|(c, b)| cond_reads(&c.cond, x) || b.iter().any(|n| reads(n, x)))
                || i.otherwise.iter().flatten().any(|n| reads(n, x))
        }
    }
}

fn expr_reads(e: &Expr, x: ArrayId) -> bool {
    match &e.kind {
        ExprKind::Access(a) => a.array == x || a.subscripts.iter().any(|s| expr_reads(&s.expr, x)),
        ExprKind::Call(_, args) => args.iter().any(|a| expr_reads(a, x)),
        ExprKind::Neg(a) => expr_reads(a, x),
        ExprKind::Binary(_, l, r) => expr_reads(l, x) || expr_reads(r, x),
        ExprKind::Int(_) | ExprKind::Param(_) | ExprKind::Counter(_) | ExprKind::Unknown => false,
    }
}

fn cond_reads(c: &Cond, x: ArrayId) -> bool {
    match c {
        Cond::Cmp(_, l, r) => expr_reads(l, x) || expr_reads(r, x),
        Cond::And(a, b) | Cond::Or(a, b) => cond_reads(a, x) || cond_reads(b, x),
        Cond::Not(a) => cond_reads(a, x),
        Cond::Unknown => false,
    }
}

/// `Ok` when every write of `x` in `body` is unconditional, inside `for`
/// loops whose bounds do not use `counter`, at affine subscripts that do
/// not either; otherwise why not.
fn invariant(body: &[Node], x: ArrayId, counter: CounterId) -> Result<(), &'static str> {
    let moves = |a: &Affine| a.coeff(Var::Counter(counter)) != 0;
    for n in body {
        match n {
            Node::Stmt(s) => {
                let StmtKind::Assign { target, .. } = &s.kind else {
                    continue;
                };
                if target.array != x {
                    continue;
                }
                for sub in &target.subscripts {
                    match &sub.affine {
                        None => return Err("a write at a subscript that is not affine"),
                        Some(a) if moves(a) => {
                            return Err("a write at a subscript that changes with the loop")
                        }
                        Some(_) => {}
                    }
                }
            }
            Node::For(f) => {
                if writes(&f.body, x) && (moves(&f.lower.affine) || moves(&f.upper.affine)) {
                    return Err("a write in a loop whose bounds change with the loop");
                }
                invariant(&f.body, x, counter)?;
            }
            Node::While(w) if writes(&w.body, x) => return Err("a write in a while loop"),
            Node::If(i)
                if i.branches.iter().any(|(_, b)| writes(b, x))
                    || i.otherwise.as_deref().is_some_and(|b| writes(b, x)) =>
            {
                return Err("a write under a condition")
            }
            Node::While(_) | Node::If(_) => {}
        }
    }
    Ok(())
}

fn writes(body: &[Node], x: ArrayId) -> bool {
    body.iter().any(|n| match n {
        Node::Stmt(s) => matches!(&s.kind, StmtKind::Assign { target, .. } if target.array == x),
        Node::For(f) => writes(&f.body, x),
        Node::While(w) => writes(&w.body, x),
        Node::If(i) => {
            i.branches.iter().any(|(_, b)| writes(b, x))
                || i.otherwise.as_deref().is_some_and(|b| writes(b, x))
        }
    })
}
