//! Reductions written with `if`: `if (a[i] > m) m = a[i];` (a maximum),
//! `if (c) s += e;` (a sum of the terms `c` selects) and `if (a[i] > m) {
//! m = a[i]; k = i; }` (a maximum with its index, [`super::argmax`]).
//! Their conditions read memory, so the program is outside static control
//! and has no quasts; the same updates written as one statement per cell
//! (`m = a[i] > m ? a[i] : m`, `s = c ? s + e : s`, `k = a[i] > m ? i : k`
//! before `m`'s) compute the same values and are static control. The
//! exact analysis reads the program with each such `if` folded into its
//! updates ([`folded`]); what is emitted is the program as written.
//!
//! Folding keeps every decision: a folded statement reads its target
//! before it writes it, and where the condition is false it writes back
//! the value it read. So each cell holds the same value at every point, and
//! the first access of the target in any stretch of iterations is a read
//! either way.

use super::reduction;
use crate::model::*;

/// `p` with every guarded update folded into reduction updates, or `None`
/// when it has none.
pub fn folded(p: &Program) -> Option<Program> {
    let mut out = p.clone();
    if !fold_nodes(p, &mut out.body) {
        return None;
    }
    renumber(&mut out.body, &mut 0, &mut 0);
    Some(out)
}

/// Folds the guarded updates of `nodes` in place; whether any was.
fn fold_nodes(p: &Program, nodes: &mut Vec<Node>) -> bool {
    let mut changed = false;
    let mut out = Vec::with_capacity(nodes.len());
    for mut n in std::mem::take(nodes) {
        if let Node::If(i) = &n {
            if let Some(stmts) = fold_if(p, i) {
                out.extend(stmts.into_iter().map(Node::Stmt));
                changed = true;
                continue;
            }
        }
        changed |= match &mut n {
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
        out.push(n);
    }
    *nodes = out;
    changed
}

/// `if c then S end` as updates, when the result is a reduction
/// ([`reduction::update`]):
/// - `x = e` under a comparison of `x` and `e`: `x = c ? e : x`, a maximum
///   or a minimum;
/// - `x += e` (or `x = x + e`, `*`, `-`, any update) under a condition that
///   does not read `x`: `x = c ? x + e : x`;
/// - a keyed group ([`super::argmax::group`]), `m = e; k = f` under a
///   comparison of `m` and `e`: `k = c ? f : k` for each kept value, then
///   `m = c ? e : m` (the kept values' conditions read `m` before it
///   changes).
fn fold_if(p: &Program, i: &If) -> Option<Vec<Stmt>> {
    let [(cond, body)] = &i.branches[..] else {
        return None;
    };
    if i.otherwise.is_some() {
        return None;
    }
    let c = value_of(&cond.cond)?;
    let select = |s: &Stmt| -> Option<Stmt> {
        let StmtKind::Assign { target, op, value } = &s.kind else {
            return None;
        };
        let x = Expr::new(ExprKind::Access(target.clone()), target.span);
        // `x op= e` is `x = x op e`.
        let new = match op {
            None => value.clone(),
            Some(op) => Expr::new(
                ExprKind::Binary(*op, Box::new(x.clone()), Box::new(value.clone())),
                value.span,
            ),
        };
        let value = Expr::new(
            ExprKind::Call("__select".to_string(), vec![c.clone(), new, x]),
            cond.span,
        );
        Some(Stmt {
            kind: StmtKind::Assign {
                target: target.clone(),
                op: None,
                value,
            },
            ..s.clone()
        })
    };
    if let Some(g) = super::argmax::group(p, i) {
        let mut out: Vec<Stmt> = g.kept.iter().map(|s| select(s)).collect::<Option<_>>()?;
        out.push(select(g.key)?);
        return Some(out);
    }
    let [Node::Stmt(s)] = &body[..] else {
        return None;
    };
    let candidate = select(s)?;
    reduction::update(p, &candidate)
        .is_some()
        .then(|| vec![candidate])
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

/// Numbers the statements and the conditions in textual order
/// (`StmtId(k)` is the k-th statement, `CondId(k)` the k-th condition), as
/// [`Program::stmts`] and [`Program::conditions`] expect.
fn renumber(nodes: &mut [Node], stmts: &mut u32, conds: &mut u32) {
    for n in nodes {
        match n {
            Node::Stmt(s) => {
                s.id = StmtId(*stmts);
                *stmts += 1;
            }
            Node::For(f) => renumber(&mut f.body, stmts, conds),
            Node::While(w) => {
                w.cond.id = CondId(*conds);
                *conds += 1;
                renumber(&mut w.body, stmts, conds);
            }
            Node::If(i) => {
                for (c, b) in &mut i.branches {
                    c.id = CondId(*conds);
                    *conds += 1;
                    renumber(b, stmts, conds);
                }
                if let Some(b) = &mut i.otherwise {
                    renumber(b, stmts, conds);
                }
            }
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
        assert_eq!(
            folded_op("if A[i] > 0 then S: s = s + A[i] * 2 - A[0]; end"),
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
                printed.contains("s = __select(__gt(A[i], 0), s - A[i], s);"),
                "{body}:\n{printed}"
            );
        }
    }

    /// The folded program's statements and groups, printed.
    fn folded_text(body: &str) -> (String, Vec<super::super::argmax::Folded>) {
        let src = format!(
            "param N = 4;\nreal A[0..N], B[0..N, 0..N], m, v;\nint k, j2;\nfor i = 0 to N do\n  {body}\nend\n"
        );
        let (p, d) = crate::lower::compile(&src, crate::diagnostics::FileId(0));
        let p = p.unwrap_or_else(|| panic!("{src}: {d:?}"));
        let f = folded(&p).expect("folded");
        let groups = super::super::argmax::folded_groups(&f);
        (crate::print::program(&f), groups)
    }

    #[test]
    fn a_maximum_with_its_index_folds_into_a_group() {
        use super::super::argmax::Folded;
        // The kept values first (their condition reads the old `m`), then
        // the key; statements numbered in their new order.
        let (text, groups) =
            folded_text("if A[i] > m then S: m = A[i]; T: k = i; U: v = B[i, 0]; end");
        let want = "  T: k = __select(__gt(A[i], m), i, k);\n  \
                    U: v = __select(__gt(A[i], m), B[i, 0], v);\n  \
                    S: m = __select(__gt(A[i], m), A[i], m);";
        assert!(text.contains(want), "{text}");
        let g = |key, kept: Vec<u32>, op| Folded {
            key: StmtId(key),
            kept: kept.into_iter().map(StmtId).collect(),
            op,
        };
        assert_eq!(groups, vec![g(2, vec![0, 1], ReduceOp::ArgMax)]);
        let (_, groups) = folded_text("if m >= A[i] then S: m = A[i]; T: k = i + 1; end");
        assert_eq!(groups, vec![g(1, vec![0], ReduceOp::ArgMin)]);
    }

    #[test]
    fn near_misses_of_a_group_are_not_folded() {
        for body in [
            // The index reads itself: a count, not a value kept.
            "if A[i] > m then S: m = A[i]; T: k = k + 1; end",
            // The kept value reads the key.
            "if A[i] > m then S: m = A[i]; T: v = m; end",
            // Not the compared value.
            "if A[i] > m then S: m = A[i + 1]; T: k = i; end",
            // An `else`.
            "if A[i] > m then S: m = A[i]; T: k = i; else U: k = 0; end",
            // Two kept writes of one array.
            "if A[i] > m then S: m = A[i]; T: k = i; U: k = 0; end",
        ] {
            let src = format!(
                "param N = 4;\nreal A[0..N], m, v;\nint k;\nfor i = 0 to N do\n  {body}\nend\n"
            );
            let (p, _) = crate::lower::compile(&src, crate::diagnostics::FileId(0));
            assert!(folded(&p.unwrap()).is_none(), "{body}");
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
