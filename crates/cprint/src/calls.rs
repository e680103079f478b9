//! The calls a program makes, which the printer declares and the origin
//! of a region checks for a `return`.

use crate::model::*;

/// Every call of the program, with its argument count.
pub fn collect_calls(p: &Program) -> Vec<(String, usize)> {
    fn expr(e: &Expr, out: &mut Vec<(String, usize)>) {
        match &e.kind {
            ExprKind::Call(f, args) => {
                out.push((f.clone(), args.len()));
                args.iter().for_each(|a| expr(a, out));
            }
            ExprKind::Access(a) => a.subscripts.iter().for_each(|s| expr(&s.expr, out)),
            ExprKind::Neg(x) => expr(x, out),
            ExprKind::Binary(_, l, r) => {
                expr(l, out);
                expr(r, out);
            }
            ExprKind::Int(_) | ExprKind::Param(_) | ExprKind::Counter(_) | ExprKind::Unknown => {}
        }
    }
    fn cond(c: &Cond, out: &mut Vec<(String, usize)>) {
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
    let mut out = Vec::new();
    for s in p.stmts() {
        match &s.kind {
            StmtKind::Assign { target, value, .. } => {
                target
                    .subscripts
                    .iter()
                    .for_each(|x| expr(&x.expr, &mut out));
                expr(value, &mut out);
            }
            StmtKind::Call { func, args } => {
                out.push((func.clone(), args.len()));
                args.iter().for_each(|a| expr(a, &mut out));
            }
        }
    }
    for c in p.conditions() {
        cond(&c.cond, &mut out);
    }
    out
}
