//! Reductions written with `if`: `if (a[i] > m) m = a[i];` (a maximum) and
//! `if (c) s += e;` (a sum of the terms `c` selects). Their conditions read
//! memory, so the program is outside static control and has no quasts; the
//! same updates written as one statement each (`m = a[i] > m ? a[i] : m`,
//! `s += c ? e : 0`) compute the same values and are static control. The
//! exact analysis reads the program with each such `if` folded into its
//! update ([`folded`]); what is emitted is the program as written.
//!
//! Folding keeps every decision: a folded statement reads its target
//! before it writes it, and where the condition is false it writes back
//! the value it read. So each cell holds the same value at every point, and
//! the first access of the target in any stretch of iterations is a read
//! either way.

use super::reduction;
use crate::model::*;

/// `p` with every guarded update folded into a reduction update, or `None`
/// when it has none.
pub fn folded(p: &Program) -> Option<Program> {
    let mut out = p.clone();
    if !fold_nodes(p, &mut out.body) {
        return None;
    }
    renumber_conditions(&mut out.body, &mut 0);
    Some(out)
}

/// Folds the guarded updates of `nodes` in place; whether any was.
fn fold_nodes(p: &Program, nodes: &mut [Node]) -> bool {
    let mut changed = false;
    for n in nodes.iter_mut() {
        let folded = match n {
            Node::If(i) => fold_if(p, i),
            _ => None,
        };
        if let Some(s) = folded {
            *n = Node::Stmt(s);
            changed = true;
            continue;
        }
        changed |= match n {
            Node::For(f) => fold_nodes(p, &mut f.body),
            Node::While(w) => fold_nodes(p, &mut w.body),
            Node::If(i) => {
                let mut c = false;
                for (_, b) in &mut i.branches {
                    c |= fold_nodes(p, b);
                }
                if let Some(b) = &mut i.otherwise {
                    c |= fold_nodes(p, b);
                }
                c
            }
            Node::Stmt(_) => false,
        };
    }
    changed
}

/// `if c then S end` as one update, when `S` is an assignment and the
/// result is a reduction update ([`reduction::update`]):
/// - `x = e` under a comparison of `x` and `e`: `x = c ? e : x`, a maximum
///   or a minimum;
/// - `x += e` (or `x = x + e`, `*`, `-`) under a condition that does not
///   read `x`: `x += c ? e : 0` (`1` for `*`).
fn fold_if(p: &Program, i: &If) -> Option<Stmt> {
    let [(cond, body)] = &i.branches[..] else {
        return None;
    };
    if i.otherwise.is_some() {
        return None;
    }
    let [Node::Stmt(s)] = &body[..] else {
        return None;
    };
    let StmtKind::Assign { target, op, value } = &s.kind else {
        return None;
    };
    let c = value_of(&cond.cond)?;
    let select = |t: Expr, f: Expr| {
        Expr::new(
            ExprKind::Call("__select".to_string(), vec![c.clone(), t, f]),
            cond.span,
        )
    };
    let with = |op, value| Stmt {
        kind: StmtKind::Assign {
            target: target.clone(),
            op,
            value,
        },
        ..s.clone()
    };
    let candidate = match (op, reduction::update(p, s)) {
        // `x = e`: a maximum or minimum once the condition picks.
        (None, None) => {
            let x = Expr::new(ExprKind::Access(target.clone()), target.span);
            with(None, select(value.clone(), x))
        }
        (_, Some((rop @ (reduction::ReduceOp::Add | reduction::ReduceOp::Mul), e))) => {
            let reads_target = {
                let mut reads = Vec::new();
                c.collect_reads(&mut reads);
                reads.iter().any(|r| r.access.array == target.array)
            };
            if reads_target {
                return None;
            }
            // `x -= e` and `x = x - e` subtract `e`; the others add or
            // multiply it.
            let subtracts = matches!(op, Some(BinOp::Sub))
                || op.is_none() && matches!(&value.kind, ExprKind::Binary(BinOp::Sub, ..));
            let bop = match rop {
                _ if subtracts => BinOp::Sub,
                reduction::ReduceOp::Add => BinOp::Add,
                _ => BinOp::Mul,
            };
            let identity = Expr::int(i64::from(bop == BinOp::Mul));
            with(Some(bop), select(e.clone(), identity))
        }
        _ => return None,
    };
    reduction::update(p, &candidate)
        .is_some()
        .then_some(candidate)
}

/// A condition as the value C gives it (`__gt(l, r)`, `__and(a, b)`), or
/// `None` for `...`.
fn value_of(c: &Cond) -> Option<Expr> {
    let call =
        |f: &str, args: Vec<Expr>| Expr::new(ExprKind::Call(f.to_string(), args), Span::NONE);
    Some(match c {
        Cond::Cmp(op, l, r) => {
            let f = match op {
                CmpOp::Eq => "__eq",
                CmpOp::Ne => "__ne",
                CmpOp::Lt => "__lt",
                CmpOp::Le => "__le",
                CmpOp::Gt => "__gt",
                CmpOp::Ge => "__ge",
            };
            call(f, vec![l.clone(), r.clone()])
        }
        Cond::And(a, b) => call("__and", vec![value_of(a)?, value_of(b)?]),
        Cond::Or(a, b) => call("__or", vec![value_of(a)?, value_of(b)?]),
        Cond::Not(a) => call("__not", vec![value_of(a)?]),
        Cond::Unknown => return None,
    })
}

/// Numbers the conditions left in textual order (`CondId(k)` is the k-th),
/// as [`Program::conditions`] expects.
fn renumber_conditions(nodes: &mut [Node], next: &mut u32) {
    for n in nodes {
        match n {
            Node::For(f) => renumber_conditions(&mut f.body, next),
            Node::While(w) => {
                w.cond.id = CondId(*next);
                *next += 1;
                renumber_conditions(&mut w.body, next);
            }
            Node::If(i) => {
                for (c, b) in &mut i.branches {
                    c.id = CondId(*next);
                    *next += 1;
                    renumber_conditions(b, next);
                }
                if let Some(b) = &mut i.otherwise {
                    renumber_conditions(b, next);
                }
            }
            Node::Stmt(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reduction::ReduceOp;

    /// The operator of the one statement of `body` (inside `for i`) after
    /// folding, or `None` when nothing was folded.
    fn folded_op(body: &str) -> Option<ReduceOp> {
        let src = format!(
            "param N = 4;\nreal A[0..N], s, m;\nint k[0..N];\nfor i = 0 to N do\n  {body}\nend\n"
        );
        let (p, d) = crate::lower::compile(&src, crate::diagnostics::FileId(0));
        let p = p.unwrap_or_else(|| panic!("{src}: {d:?}"));
        let f = folded(&p)?;
        assert!(f.conditions().is_empty(), "{body}: the `if` is gone");
        let s = f.stmts()[0];
        Some(reduction::update(&f, s).expect("a reduction update").0)
    }

    #[test]
    fn guarded_updates_fold_into_reductions() {
        assert_eq!(
            folded_op("if A[i] > m then S: m = A[i]; end"),
            Some(ReduceOp::Max)
        );
        assert_eq!(
            folded_op("if m < A[i] then S: m = A[i]; end"),
            Some(ReduceOp::Max)
        );
        assert_eq!(
            folded_op("if A[i] < m then S: m = A[i]; end"),
            Some(ReduceOp::Min)
        );
        assert_eq!(
            folded_op("if A[i] > 0 then S: s += A[i]; end"),
            Some(ReduceOp::Add)
        );
        assert_eq!(
            folded_op("if A[i] > 0 then S: s = s + A[i]; end"),
            Some(ReduceOp::Add)
        );
        assert_eq!(
            folded_op("if A[i] > 0 then S: s -= A[i]; end"),
            Some(ReduceOp::Add)
        );
        assert_eq!(
            folded_op("if A[i] > 0 then S: s = s - A[i]; end"),
            Some(ReduceOp::Add)
        );
        assert_eq!(
            folded_op("if k[i] != 0 then S: s *= A[i]; end"),
            Some(ReduceOp::Mul)
        );
        assert_eq!(
            folded_op("if A[i] > 0 and A[i] < 9 then S: s += A[i]; end"),
            Some(ReduceOp::Add)
        );
    }

    #[test]
    fn other_guarded_statements_stay() {
        // The condition reads the sum: not a sum of selected terms.
        assert_eq!(folded_op("if s > 0 then S: s += A[i]; end"), None);
        // The value is not the compared one.
        assert_eq!(folded_op("if A[i] > m then S: m = A[i] + 1; end"), None);
        assert_eq!(folded_op("if A[i] > s then S: m = A[i]; end"), None);
        // An `else`, two statements, an unknown condition.
        assert_eq!(
            folded_op("if A[i] > m then S: m = A[i]; else T: s = 0; end"),
            None
        );
        assert_eq!(
            folded_op("if A[i] > m then S: m = A[i]; T: s = A[i]; end"),
            None
        );
        assert_eq!(folded_op("if ... then S: s += A[i]; end"), None);
        // Division is no reduction.
        assert_eq!(folded_op("if A[i] > 0 then S: s /= A[i]; end"), None);
    }

    #[test]
    fn a_folded_difference_still_subtracts() {
        for body in [
            "if A[i] > 0 then S: s = s - A[i]; end",
            "if A[i] > 0 then S: s -= A[i]; end",
        ] {
            let src = format!("param N = 4;\nreal A[0..N], s;\nfor i = 0 to N do\n  {body}\nend\n");
            let (p, _) = crate::lower::compile(&src, crate::diagnostics::FileId(0));
            let printed = crate::print::program(&folded(&p.unwrap()).unwrap());
            assert!(
                printed.contains("s -= __select(__gt(A[i], 0), A[i], 0);"),
                "{body}:\n{printed}"
            );
        }
    }

    #[test]
    fn conditions_after_a_folded_one_are_renumbered() {
        let src = "param N = 4;\nreal A[0..N], m, s;\nfor i = 0 to N do\n  \
                   if A[i] > m then S: m = A[i]; end\n  \
                   if s > 0 then T: s += A[i]; end\nend\n";
        let (p, _) = crate::lower::compile(src, crate::diagnostics::FileId(0));
        let f = folded(&p.unwrap()).unwrap();
        let conds = f.conditions();
        assert_eq!(conds.len(), 1);
        assert_eq!(conds[0].id, CondId(0));
    }
}
