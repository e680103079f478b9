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
}

impl ReduceOp {
    /// OpenMP's reduction identifier.
    pub fn openmp(self) -> &'static str {
        match self {
            ReduceOp::Add => "+",
            ReduceOp::Mul => "*",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::BitAnd => "&",
            ReduceOp::BitOr => "|",
            ReduceOp::BitXor => "^",
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

/// `s` as a reduction update of its target: the operator and the other
/// operand `e` (which does not read the target's cell), or `None`.
pub fn update<'s>(p: &Program, s: &'s Stmt) -> Option<(ReduceOp, &'s Expr)> {
    let StmtKind::Assign { target, op, value } = &s.kind else {
        return None;
    };
    let is_x = |e: &Expr| matches!(&e.kind, ExprKind::Access(a) if a.same_cell(target));
    // The operand that is not the cell, in either order.
    let other = |a: &'s Expr, b: &'s Expr| -> Option<&'s Expr> {
        if is_x(a) && !mentions(b, target) {
            Some(b)
        } else if is_x(b) && !mentions(a, target) {
            Some(a)
        } else {
            None
        }
    };
    let fold = |op| (!mentions(value, target)).then_some((op, value));
    match op {
        Some(BinOp::Add | BinOp::Sub) => return fold(ReduceOp::Add),
        Some(BinOp::Mul) => return fold(ReduceOp::Mul),
        Some(_) => return None,
        None => {}
    }
    match &value.kind {
        ExprKind::Binary(BinOp::Add, a, b) => Some((ReduceOp::Add, other(a, b)?)),
        ExprKind::Binary(BinOp::Sub, a, b) if is_x(a) && !mentions(b, target) => {
            Some((ReduceOp::Add, b))
        }
        ExprKind::Binary(BinOp::Mul, a, b) => Some((ReduceOp::Mul, other(a, b)?)),
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

/// `c ? t : f` as a maximum or minimum of the cell and one operand: `c`
/// compares the two (`>`, `>=`, `<`, `<=`, either way round) and the
/// branches are the two.
fn select<'s>(
    p: &Program,
    args: &'s [Expr],
    is_x: &dyn Fn(&Expr) -> bool,
    target: &Access,
) -> Option<(ReduceOp, &'s Expr)> {
    let [c, t, f] = args else {
        return None;
    };
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
    Some((op, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op_of(stmt: &str) -> Option<ReduceOp> {
        let src = format!(
            "param N = 4;\nreal A[0..N], s;\nint k[0..N];\nfor i = 0 to N do\n  S: {stmt}\nend\n"
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
        // Not updates of one cell by one operator.
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
