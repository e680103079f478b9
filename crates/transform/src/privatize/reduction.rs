//! Reductions: a statement that folds a value into one cell with an
//! associative, commutative operator (`s += A[i]`, `x = x * e`,
//! `t = (t >= e) ? t : e`). A loop whose only carried values flow through
//! such updates of one cell can run its iterations in any order and
//! combine per-thread partial results (OpenMP's `reduction(op:x)`).
//!
//! This module reads the statement's shape; [`super::exact`] proves the
//! rest for every parameter value: the cell does not move with the loop,
//! and no other access in the loop touches it.

use crate::model::*;

/// The operator a reduction combines with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReduceOp {
    /// `x += e`, `x = x + e`, `x -= e`, `x = x - e` (a difference adds
    /// the negated operands).
    Add,
    Mul,
    /// `x = (x >= e) ? x : e` and its mirror images, `fmax(x, e)`.
    Max,
    Min,
    BitAnd,
    BitOr,
    BitXor,
    /// A maximum kept with values that go with it, each cell of the group
    /// (`if (a[i] > m) { m = a[i]; k = i; }`: `m` and `k`,
    /// [`super::argmax`]).
    ArgMax,
    ArgMin,
}

impl ReduceOp {
    /// OpenMP's reduction identifier; `argmax` and `argmin` have none (the
    /// C form combines them itself, [`super::argmax`]) and are named so.
    pub fn openmp(self) -> &'static str {
        match self {
            ReduceOp::Add => "+",
            ReduceOp::Mul => "*",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::BitAnd => "&",
            ReduceOp::BitOr => "|",
            ReduceOp::BitXor => "^",
            ReduceOp::ArgMax => "argmax",
            ReduceOp::ArgMin => "argmin",
        }
    }
}

/// Whether `e` reads the cell of `target` (as written: other accesses of
/// the array are for the exact tests).
fn mentions(e: &Expr, target: &Access) -> bool {
    let mut reads = Vec::new();
    e.collect_reads(&mut reads);
    reads.iter().any(|r| r.access.same_cell(target))
}

/// `s` as a reduction update of its target: the operator and the parts
/// of the value other than the cell's own read (the operands, and the
/// condition of a conditional update), none of which reads the cell; or
/// `None`. Read by meaning, not spelling: `x = x + t0 + t1` and
/// `x = t0 + x - t1` add `t0 + t1` and `t0 - t1` once the sum is
/// reassociated (which a real needs `--reassociate` for, as any sum of
/// reals does), and `x = c ? x + e : x` adds what `c` selects.
pub fn update<'s>(p: &Program, s: &'s Stmt) -> Option<(ReduceOp, Vec<&'s Expr>)> {
    let StmtKind::Assign { target, op, value } = &s.kind else {
        return None;
    };
    let fold = |op| (!mentions(value, target)).then(|| (op, vec![value]));
    match op {
        Some(BinOp::Add | BinOp::Sub) => fold(ReduceOp::Add),
        Some(BinOp::Mul) => fold(ReduceOp::Mul),
        Some(_) => None,
        None => of_value(p, value, target),
    }
}

/// `value`, assigned to `target`, as an update of it ([`update`]).
fn of_value<'s>(
    p: &Program,
    value: &'s Expr,
    target: &Access,
) -> Option<(ReduceOp, Vec<&'s Expr>)> {
    let is_x = |e: &Expr| matches!(&e.kind, ExprKind::Access(a) if a.same_cell(target));
    // The operand that is not the cell, in either order.
    let other = |a: &'s Expr, b: &'s Expr| -> Option<Vec<&'s Expr>> {
        if is_x(a) && !mentions(b, target) {
            Some(vec![b])
        } else if is_x(b) && !mentions(a, target) {
            Some(vec![a])
        } else {
            None
        }
    };
    match &value.kind {
        ExprKind::Binary(BinOp::Add | BinOp::Sub, ..) => {
            Some((ReduceOp::Add, chain(value, target, &is_x, true)?))
        }
        ExprKind::Binary(BinOp::Mul, ..) => {
            Some((ReduceOp::Mul, chain(value, target, &is_x, false)?))
        }
        ExprKind::Call(f, args) => {
            let op = match f.as_str() {
                "__bitand" => ReduceOp::BitAnd,
                "__bitor" => ReduceOp::BitOr,
                "__bitxor" => ReduceOp::BitXor,
                "fmax" | "fmaxf" | "fmaxl" => ReduceOp::Max,
                "fmin" | "fminf" | "fminl" => ReduceOp::Min,
                "__select" => return select(p, args, &is_x, target),
                _ => return None,
            };
            match &args[..] {
                [a, b] => Some((op, other(a, b)?)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The terms of a sum (`additive`: `+` and `-`) or of a product (`*`)
/// other than one occurrence of the cell, which must be added (not
/// subtracted) or multiplied, when no other term reads the cell.
fn chain<'s>(
    value: &'s Expr,
    target: &Access,
    is_x: &dyn Fn(&Expr) -> bool,
    additive: bool,
) -> Option<Vec<&'s Expr>> {
    // (term, subtracted)
    fn leaves<'s>(e: &'s Expr, additive: bool, neg: bool, out: &mut Vec<(&'s Expr, bool)>) {
        match &e.kind {
            ExprKind::Binary(BinOp::Add, l, r) if additive => {
                leaves(l, additive, neg, out);
                leaves(r, additive, neg, out);
            }
            ExprKind::Binary(BinOp::Sub, l, r) if additive => {
                leaves(l, additive, neg, out);
                leaves(r, additive, !neg, out);
            }
            ExprKind::Binary(BinOp::Mul, l, r) if !additive => {
                leaves(l, additive, neg, out);
                leaves(r, additive, neg, out);
            }
            _ => out.push((e, neg)),
        }
    }
    let mut terms = Vec::new();
    leaves(value, additive, false, &mut terms);
    let cell = terms.iter().position(|(t, _)| is_x(t))?;
    if terms[cell].1 {
        return None;
    }
    terms.remove(cell);
    if terms.is_empty() || terms.iter().any(|(t, _)| mentions(t, target)) {
        return None;
    }
    Some(terms.into_iter().map(|(t, _)| t).collect())
}

/// `c ? t : f` as an update: a maximum or minimum of the cell and one
/// operand (`c` compares the two, `>`, `>=`, `<`, `<=` either way round,
/// and the branches are the two), or the cell in one branch and an
/// update of it in the other, under a condition that does not read it
/// (`s = c ? s + e : s`: the terms `c` selects).
fn select<'s>(
    p: &Program,
    args: &'s [Expr],
    is_x: &dyn Fn(&Expr) -> bool,
    target: &Access,
) -> Option<(ReduceOp, Vec<&'s Expr>)> {
    let [c, t, f] = args else {
        return None;
    };
    if let Some(m) = extreme(p, c, t, f, is_x, target) {
        return Some(m);
    }
    let updated = match (is_x(t), is_x(f)) {
        (true, false) => f,
        (false, true) => t,
        _ => return None,
    };
    if mentions(c, target) {
        return None;
    }
    let (op, mut parts) = of_value(p, updated, target)?;
    parts.push(c);
    Some((op, parts))
}

/// `c ? t : f` as a maximum or minimum of the cell and one operand `e`.
fn extreme<'s>(
    p: &Program,
    c: &'s Expr,
    t: &'s Expr,
    f: &'s Expr,
    is_x: &dyn Fn(&Expr) -> bool,
    target: &Access,
) -> Option<(ReduceOp, Vec<&'s Expr>)> {
    let ExprKind::Call(cmp, lr) = &c.kind else {
        return None;
    };
    let [l, r] = &lr[..] else {
        return None;
    };
    // Whether the comparison holds when `l` is the larger one.
    let l_larger = match cmp.as_str() {
        "__gt" | "__ge" => true,
        "__lt" | "__le" => false,
        _ => return None,
    };
    let same = |a: &Expr, b: &Expr| crate::print::expr(p, a) == crate::print::expr(p, b);
    let e = if is_x(t) { f } else { t };
    if mentions(e, target) || !(is_x(t) || is_x(f)) {
        return None;
    }
    // The branches are {x, e}, and so are the compared values.
    let compared = (is_x(l) && same(r, e)) || (is_x(r) && same(l, e));
    if !compared || is_x(t) == is_x(f) {
        return None;
    }
    // The true branch picks `l` exactly when `t` is `l`.
    let picks_l = if is_x(l) { is_x(t) } else { !is_x(t) };
    let op = if picks_l == l_larger {
        ReduceOp::Max
    } else {
        ReduceOp::Min
    };
    Some((op, vec![e]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op_of(stmt: &str) -> Option<ReduceOp> {
        let src = format!(
            "param N = 4;\nreal A[0..N], B[0..N], s;\nint k[0..N];\nfor i = 0 to N do\n  S: {stmt}\nend\n"
        );
        let (p, d) = crate::lower::compile(&src, crate::diagnostics::FileId(0));
        let p = p.unwrap_or_else(|| panic!("{src}: {d:?}"));
        let s = p.stmts()[0];
        update(&p, s).map(|(op, _)| op)
    }

    #[test]
    fn shapes_of_updates() {
        assert_eq!(op_of("s += A[i];"), Some(ReduceOp::Add));
        assert_eq!(op_of("s = A[i] + s;"), Some(ReduceOp::Add));
        assert_eq!(op_of("s = s - A[i];"), Some(ReduceOp::Add));
        assert_eq!(op_of("s *= A[i];"), Some(ReduceOp::Mul));
        assert_eq!(
            op_of("s = __select(__ge(s, A[i]), s, A[i]);"),
            Some(ReduceOp::Max)
        );
        assert_eq!(
            op_of("s = __select(__ge(s, A[i]), A[i], s);"),
            Some(ReduceOp::Min)
        );
        assert_eq!(
            op_of("s = __select(__lt(A[i], s), A[i], s);"),
            Some(ReduceOp::Min)
        );
        assert_eq!(
            op_of("s = __select(__lt(A[i], s), s, A[i]);"),
            Some(ReduceOp::Max)
        );
        assert_eq!(op_of("s = fmax(A[i], s);"), Some(ReduceOp::Max));
        // By meaning: sums of several terms, either order, and an update
        // under a condition that does not read the cell.
        assert_eq!(op_of("s = s + A[i] + A[0] + B[i];"), Some(ReduceOp::Add));
        assert_eq!(op_of("s = A[i] + s - B[i];"), Some(ReduceOp::Add));
        assert_eq!(op_of("s = A[i] * (s * B[i]);"), Some(ReduceOp::Mul));
        assert_eq!(
            op_of("s = __select(__gt(A[i], 0), s + A[i], s);"),
            Some(ReduceOp::Add)
        );
        assert_eq!(
            op_of("s = __select(__gt(A[i], 0), s, s * A[i]);"),
            Some(ReduceOp::Mul)
        );
        // Not updates of one cell by one operator.
        assert_eq!(op_of("s = A[i] - s + B[i];"), None);
        assert_eq!(op_of("s = s + A[i] + s;"), None);
        assert_eq!(op_of("s = s + A[i] * s;"), None);
        assert_eq!(op_of("s = __select(__gt(s, 0), s + A[i], s);"), None);
        assert_eq!(
            op_of("s = __select(__gt(A[i], 0), s + A[i], s - A[i]);"),
            None
        );
        assert_eq!(op_of("s = __select(__gt(A[i], 0), A[i], s);"), None);
        assert_eq!(op_of("s = A[i] - s;"), None);
        assert_eq!(op_of("s = s + s;"), None);
        assert_eq!(op_of("s = s * 2 + A[i];"), None);
        assert_eq!(op_of("s = __select(__ge(s, A[i]), s, A[0]);"), None);
        assert_eq!(op_of("s = __select(__ge(s, A[i]), s, s);"), None);
        assert_eq!(op_of("A[i] = A[i] + s;"), Some(ReduceOp::Add));
        assert_eq!(op_of("A[i] = A[i + 1] + s;"), None);
        assert_eq!(op_of("s /= A[i];"), None);
    }
}
