//! Argmax and argmin: a maximum (or minimum) kept with values that go
//! with it, `if (a[i] > m) { m = a[i]; k = i; }`. The pair `(m, k)` is
//! one reduction keyed by the comparison: each block of iterations folds
//! into a partial pair with the comparison as written, and the partial
//! pairs, combined in the blocks' order with the same comparison, give
//! what the loop gives, ties included (`>` keeps the first index of the
//! maximum, `>=` the last).
//!
//! Why the combination is exact: the key only ever moves one way, and a
//! block's fold from the value before the loop, `p = fold(m0, B)`, either
//! updates (`hit`: then `p` is the block's extreme, at the index the
//! comparison picks among its ties, and it beats `m0`) or leaves `m0`.
//! Folding `B` from the running pair `F` (whose key is at least as far as
//! `m0`) updates exactly when the block's extreme beats `F` under the
//! comparison, and then gives `p`; otherwise `F`. So `F` combined with
//! `p` (`if hit and p.key beats F.key then F = p`) is `fold(F, B)`.
//! Without `hit`, a block that left `m0` would win a tie under `>=` and
//! bring back the index from before the loop. A comparison with NaN is
//! false both ways, so a NaN value is skipped in both, and a NaN key is
//! never replaced in both.
//!
//! [`group`] reads the `if` as written; [`super::guarded`] folds it into
//! one select update per cell for exact σ ([`folded_groups`] finds them
//! there), and [`emit`] writes the two passes for the C form.

use super::nodes::{access, copy, e, int};
use super::reduction::{self, ReduceOp};
use crate::codegen::Names;
use crate::model::*;

/// `if c then m = e; k1 = f1; ..; kn = fn end`, `c` comparing the cell
/// `m` with `e` (`<`, `<=`, `>`, `>=`, either way round), n >= 1, every
/// target a different array, and nothing but `c` reading the group's
/// arrays: `c` reads `m`'s array only at `m`, `e` and the `f`s read none.
pub struct Group<'p> {
    pub cond: &'p Condition,
    /// `m = e`.
    pub key: &'p Stmt,
    /// `k = f`, in their order.
    pub kept: Vec<&'p Stmt>,
}

impl Group<'_> {
    /// The cell `m`.
    pub fn key_cell(&self) -> &Access {
        target(self.key).expect("an assignment")
    }

    /// The value compared with the cell, `e`.
    pub fn value(&self) -> &Expr {
        match &self.key.kind {
            StmtKind::Assign { value, .. } => value,
            StmtKind::Call { .. } => unreachable!("an assignment"),
        }
    }

    /// Every cell the group updates, the key first.
    pub fn cells(&self) -> Vec<&Access> {
        std::iter::once(self.key)
            .chain(self.kept.iter().copied())
            .filter_map(target)
            .collect()
    }
}

fn target(s: &Stmt) -> Option<&Access> {
    match &s.kind {
        StmtKind::Assign {
            target, op: None, ..
        } => Some(target),
        _ => None,
    }
}

/// Whether `e` reads array `x`, anywhere.
fn reads_array(e: &Expr, x: ArrayId) -> bool {
    let mut reads = Vec::new();
    e.collect_reads(&mut reads);
    reads.iter().any(|r| r.access.array == x)
}

/// `i` as a keyed group, or `None`.
pub fn group<'p>(p: &Program, i: &'p If) -> Option<Group<'p>> {
    let [(cond, body)] = &i.branches[..] else {
        return None;
    };
    if i.otherwise.is_some() || body.len() < 2 {
        return None;
    }
    let stmts: Vec<&Stmt> = (body.iter())
        .map(|n| match n {
            Node::Stmt(s) if target(s).is_some() && !s.copy => Some(s),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let Cond::Cmp(CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge, l, r) = &cond.cond else {
        return None;
    };
    let printed = |e: &Expr| crate::print::expr(p, e);
    // The key: the statement assigning one compared side the other.
    let is_key = |s: &Stmt, cell: &Expr, e: &Expr| {
        let StmtKind::Assign { target, value, .. } = &s.kind else {
            return false;
        };
        matches!(&cell.kind, ExprKind::Access(a) if a.same_cell(target))
            && printed(value) == printed(e)
    };
    let at = stmts
        .iter()
        .position(|s| is_key(s, l, r) || is_key(s, r, l))?;
    let key = stmts[at];
    let kept: Vec<&Stmt> = (stmts.iter().enumerate())
        .filter(|&(k, _)| k != at)
        .map(|(_, s)| *s)
        .collect();
    let arrays: Vec<ArrayId> = stmts
        .iter()
        .filter_map(|s| target(s))
        .map(|a| a.array)
        .collect();
    let mut distinct = arrays.clone();
    distinct.sort();
    distinct.dedup();
    if distinct.len() != arrays.len() {
        return None;
    }
    let g = Group { cond, key, kept };
    let m = g.key_cell().clone();
    // Nothing reads the group's arrays but `c`, at the key cell.
    let mut cond_reads = Vec::new();
    cond.cond.collect_reads(&mut cond_reads);
    if (cond_reads.iter()).any(|r| arrays.contains(&r.access.array) && !r.access.same_cell(&m)) {
        return None;
    }
    for s in &stmts {
        let StmtKind::Assign { target, value, .. } = &s.kind else {
            return None;
        };
        let subs = target.subscripts.iter().map(|x| &x.expr);
        if (std::iter::once(value).chain(subs)).any(|e| arrays.iter().any(|&x| reads_array(e, x))) {
            return None;
        }
    }
    Some(g)
}

/// A group as [`super::guarded`] folds it for exact σ: `k = __select(c,
/// f, k)` for each kept value, then the key's update `m = __select(c, e,
/// m)`, consecutive in one body. Statement ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Folded {
    pub key: StmtId,
    pub kept: Vec<StmtId>,
    /// `ArgMax` or `ArgMin`.
    pub op: ReduceOp,
}

/// Every folded group of `p` (a program [`super::guarded::folded`] made).
pub fn folded_groups(p: &Program) -> Vec<Folded> {
    let mut out = Vec::new();
    bodies(&p.body, &mut |body| find_folded(p, body, &mut out));
    out
}

/// Calls `f` on `nodes` and on every body inside them.
fn bodies<'p>(nodes: &'p [Node], f: &mut dyn FnMut(&'p [Node])) {
    f(nodes);
    for n in nodes {
        match n {
            Node::For(x) => bodies(&x.body, f),
            Node::While(w) => bodies(&w.body, f),
            Node::If(i) => {
                for (_, b) in &i.branches {
                    bodies(b, f);
                }
                if let Some(b) = &i.otherwise {
                    bodies(b, f);
                }
            }
            Node::Stmt(_) => {}
        }
    }
}

/// The folded groups whose key statement is in `body`.
fn find_folded(p: &Program, body: &[Node], out: &mut Vec<Folded>) {
    let printed = |e: &Expr| crate::print::expr(p, e);
    for (k, n) in body.iter().enumerate() {
        let Node::Stmt(key) = n else { continue };
        let Some((op, c)) = key_update(p, key) else {
            continue;
        };
        let m = target(key).expect("an update").array;
        let mut kept = Vec::new();
        for before in body[..k].iter().rev() {
            let Node::Stmt(s) = before else { break };
            let Some((x, kc, f)) = kept_update(s) else {
                break;
            };
            // `c` reads the key's array only at the key, and nothing
            // else in `s` reads it or `s`'s own array.
            let key_cell = target(key).expect("an update");
            let mut c_reads = Vec::new();
            kc.collect_reads(&mut c_reads);
            let subs = x.subscripts.iter().map(|e| &e.expr);
            if printed(kc) != printed(c)
                || x.array == m
                || (c_reads.iter()).any(|r| r.access.array == m && !r.access.same_cell(key_cell))
                || (std::iter::once(f).chain(subs))
                    .any(|e| reads_array(e, m) || reads_array(e, x.array))
            {
                break;
            }
            kept.push(s.id);
        }
        if kept.is_empty() {
            continue;
        }
        kept.reverse();
        out.push(Folded {
            key: key.id,
            kept,
            op: if op == ReduceOp::Max {
                ReduceOp::ArgMax
            } else {
                ReduceOp::ArgMin
            },
        });
    }
}

/// The condition and the value of a folded group's update `x =
/// __select(c, v, x)`.
pub fn parts(s: &Stmt) -> Option<Vec<&Expr>> {
    let StmtKind::Assign { value, .. } = &s.kind else {
        return None;
    };
    match &value.kind {
        ExprKind::Call(f, args) if f == "__select" && args.len() == 3 => {
            Some(vec![&args[0], &args[1]])
        }
        _ => None,
    }
}

/// `m = __select(c, e, m)` as a maximum or a minimum: the operator and `c`.
fn key_update<'s>(p: &Program, s: &'s Stmt) -> Option<(ReduceOp, &'s Expr)> {
    let (op, _) = reduction::update(p, s)?;
    let StmtKind::Assign {
        op: None, value, ..
    } = &s.kind
    else {
        return None;
    };
    let ExprKind::Call(f, args) = &value.kind else {
        return None;
    };
    match (f.as_str(), &args[..]) {
        ("__select", [c, ..]) if matches!(op, ReduceOp::Max | ReduceOp::Min) => Some((op, c)),
        _ => None,
    }
}

/// `k = __select(c, f, k)`: the cell, `c` and `f`.
fn kept_update(s: &Stmt) -> Option<(&Access, &Expr, &Expr)> {
    let StmtKind::Assign {
        target,
        op: None,
        value,
    } = &s.kind
    else {
        return None;
    };
    let ExprKind::Call(f, args) = &value.kind else {
        return None;
    };
    let ("__select", [c, v, old]) = (f.as_str(), &args[..]) else {
        return None;
    };
    let keeps = matches!(&old.kind, ExprKind::Access(a) if a.same_cell(target));
    (keeps && !reads_array(c, target.array)).then_some((target, c, v))
}

/// Whether a loop with these reductions reduces keyed groups only, and
/// has nothing private (`has_private` false): the loops [`emit`] writes.
pub fn only(reductions: &[(String, ReduceOp)], has_private: bool) -> bool {
    any(reductions)
        && !has_private
        && (reductions.iter()).all(|(_, op)| matches!(op, ReduceOp::ArgMax | ReduceOp::ArgMin))
}

/// Whether `reductions` has a keyed group's cell.
pub fn any(reductions: &[(String, ReduceOp)]) -> bool {
    (reductions.iter()).any(|(_, op)| matches!(op, ReduceOp::ArgMax | ReduceOp::ArgMin))
}

fn read(a: Access) -> Expr {
    e(ExprKind::Access(a))
}

fn condition(name: String, cond: Cond) -> Condition {
    Condition {
        id: CondId(0),
        name,
        generated: false,
        cond,
        span: Span::NONE,
    }
}

/// One cell of a group and its per-thread partial `X_p[t]`.
struct Partial {
    cell: Access,
    copy: ArrayId,
}

/// What [`emit`] needs from the privatizer: the thread count's
/// parameter, the thread's block of the loop, and names.
pub(crate) struct Threads<'a> {
    pub param: ParamId,
    pub names: &'a mut Names,
    /// Whether iteration `i` of the loop is in thread `t`'s block of
    /// `threads` consecutive blocks in increasing order (`emit::block_of`).
    pub block: &'a dyn Fn(&For, &Expr, &Expr) -> Cond,
}

/// Loop `f`, whose groups ([`group`]) update the cells of `arrays` and
/// which has no other carried value, as two passes: a loop over threads
/// (the counter returned, to be run in parallel) where thread `t` runs
/// its block of `f` on partials `m_p[t, 0], k_p[t, 0]` ([`line`])
/// starting from the values before the loop, with `m_h[t, 0] = 1` once
/// its block updated them; then, in thread order, `if m_h[t, 0] == 1 and
/// (c with m_p[t, 0] for e) then m = m_p[t, 0]; k = k_p[t, 0]; end`. `None` when a group's `if` is not found or
/// some other statement touches its arrays.
pub(crate) fn emit(
    mut f: For,
    arrays: &[ArrayId],
    p: &mut Program,
    th: Threads,
) -> Option<(Vec<Node>, CounterId, Vec<String>)> {
    // Each group: its condition and cells, from the loop as written.
    let mut groups: Vec<(Condition, Vec<Access>, Expr)> = Vec::new();
    // The groups' statements and conditions, whose reads differ from the
    // loop's as written (`interp::Options::unordered`).
    let mut sites = Vec::new();
    bodies(&f.body, &mut |body| {
        for n in body {
            let Node::If(i) = n else { continue };
            let Some(g) = group(p, i) else { continue };
            if arrays.contains(&g.key_cell().array) {
                let cells = g.cells().into_iter().cloned().collect();
                groups.push((g.cond.clone(), cells, g.value().clone()));
                let labels = std::iter::once(g.key).chain(g.kept.iter().copied());
                sites.extend(labels.map(|s| base_label(&s.label).to_string()));
                sites.push(base_label(&g.cond.name).to_string());
            }
        }
    });
    let covered: Vec<ArrayId> = (groups.iter())
        .flat_map(|(_, cells, _)| cells.iter().map(|a| a.array))
        .collect();
    if groups.is_empty() || arrays.iter().any(|x| !covered.contains(x)) {
        return None;
    }
    let names = th.names;
    let last = Affine::var(Var::Param(th.param))
        .checked_sub(&Affine::constant(1))
        .expect("a small bound");
    let per_thread = Range {
        lo: Bound {
            expr: int(0),
            affine: Affine::constant(0),
        },
        hi: Bound {
            expr: crate::model::affine_expr(&last, Span::NONE),
            affine: last,
        },
    };
    let mut declare = |p: &mut Program, base: &str, elem: ElemType| {
        p.arrays.push(Array {
            name: names.fresh(base),
            elem,
            dims: vec![per_thread.clone(), line(elem)],
            span: Span::NONE,
            local: false,
        });
        ArrayId(p.arrays.len() as u32 - 1)
    };
    // Per group: its partials (the key first) and its hit flag.
    let mut parts: Vec<(Vec<Partial>, ArrayId)> = Vec::new();
    for (_, cells, _) in &groups {
        let partials = (cells.iter())
            .map(|a| {
                let decl = p.array_decl(a.array).clone();
                Partial {
                    cell: a.clone(),
                    copy: declare(p, &format!("{}_p", decl.name), decl.elem),
                }
            })
            .collect();
        let key = p.array_decl(cells[0].array).name.clone();
        parts.push((partials, declare(p, &format!("{key}_h"), ElemType::Int)));
    }
    let t = crate::codegen::push_counter(p, names.fresh("t"));
    let te = e(ExprKind::Counter(t));
    let all = e(ExprKind::Param(th.param));
    let at = |x: ArrayId, t: &Expr| on_line(x, t);
    let mut head = Vec::new();
    for (partials, hit) in &parts {
        for v in partials {
            head.push(copy(
                names.fresh("start"),
                at(v.copy, &te),
                read(v.cell.clone()),
            ));
        }
        head.push(copy(names.fresh("none"), at(*hit, &te), int(0)));
    }
    let mut body = std::mem::take(&mut f.body);
    on_partials(&mut body, &parts, &te, p, names);
    f.body = vec![Node::If(If {
        branches: vec![(
            condition(names.fresh("mine"), (th.block)(&f, &te, &all)),
            body,
        )],
        otherwise: None,
        span: Span::NONE,
    })];
    f.parallel = false;
    head.push(Node::For(f));
    let upper = per_thread.hi.clone();
    let mut out = vec![Node::For(For {
        counter: t,
        lower: per_thread.lo.clone(),
        upper: upper.clone(),
        step: 1,
        parallel: true,
        body: head,
        span: Span::NONE,
    })];
    // The partials in thread order, with the comparison as written.
    let t2 = crate::codegen::push_counter(p, names.fresh("t"));
    let te2 = e(ExprKind::Counter(t2));
    let printed_value = |p: &Program, x: &Expr| crate::print::expr(p, x);
    let mut combine = Vec::new();
    for ((cond, _, value), (partials, hit)) in groups.iter().zip(&parts) {
        let key = read(at(partials[0].copy, &te2));
        let v = printed_value(p, value);
        let side = |x: &Expr| {
            if printed_value(p, x) == v {
                key.clone()
            } else {
                x.clone()
            }
        };
        let Cond::Cmp(op, l, r) = &cond.cond else {
            return None;
        };
        let beats = Cond::Cmp(*op, side(l), side(r));
        let hit = Cond::Cmp(CmpOp::Eq, read(at(*hit, &te2)), int(1));
        let take = (partials.iter())
            .map(|v| {
                copy(
                    names.fresh("combine"),
                    v.cell.clone(),
                    read(at(v.copy, &te2)),
                )
            })
            .collect();
        // Named after the group's condition (its reads are the group's),
        // `c.2` on: a generated `c` in the loop is printed `c.1`.
        let base = base_label(&cond.name);
        let name = (2..)
            .map(|k| (format!("{base}.{k}"), names.fresh(&format!("{base}.{k}"))))
            .find_map(|(want, got)| (want == got).then_some(got))
            .expect("some suffix is free");
        combine.push(Node::If(If {
            branches: vec![(
                condition(name, Cond::And(Box::new(hit), Box::new(beats))),
                take,
            )],
            otherwise: None,
            span: Span::NONE,
        }));
    }
    out.push(Node::For(For {
        counter: t2,
        lower: per_thread.lo,
        upper,
        step: 1,
        parallel: false,
        body: combine,
        span: Span::NONE,
    }));
    Some((out, t, sites))
}

/// A partial's cells per thread: one cache line of 64 bytes (8 `double`,
/// 16 `int`), so that threads updating their partials in the loop do not
/// write one line (false sharing made two threads 20 times slower than
/// one); the partial is the first cell.
fn line(elem: ElemType) -> Range {
    let last = if elem == ElemType::Int { 15 } else { 7 };
    let bound = |v| Bound {
        expr: int(v),
        affine: Affine::constant(v),
    };
    Range {
        lo: bound(0),
        hi: bound(last),
    }
}

/// Thread `t`'s partial in `x`: `x[t, 0]`.
fn on_line(x: ArrayId, t: &Expr) -> Access {
    access(x, vec![t.clone(), int(0)])
}

/// The loop's body on thread `t`'s partials: each group's cells are
/// `X_p[t]`, and each group's `if` also sets its hit flag.
fn on_partials(
    nodes: &mut [Node],
    parts: &[(Vec<Partial>, ArrayId)],
    t: &Expr,
    p: &Program,
    names: &mut Names,
) {
    crate::model::nodes::each_mut(nodes, &mut |n| {
        let Node::If(i) = n else { return };
        let Some(key) = group(p, i).map(|g| g.key_cell().clone()) else {
            return;
        };
        if let Some((_, h)) = parts.iter().find(|(ps, _)| ps[0].cell.same_cell(&key)) {
            let flag = copy(names.fresh("hit"), on_line(*h, t), int(1));
            i.branches[0].1.push(flag);
        }
    });
    crate::model::nodes::each_access_mut(nodes, &|a| {
        for (partials, _) in parts {
            if let Some(v) = partials.iter().find(|v| v.cell.same_cell(a)) {
                *a = on_line(v.copy, t);
            }
        }
    });
}
