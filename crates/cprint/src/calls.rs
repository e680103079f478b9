//! The calls a program makes, which the printer declares and the origin
//! of a region checks for a `return`.

use crate::model::*;

/// Every call of the program, with its argument count: the call
/// statements, then the calls inside expressions.
pub fn collect_calls(p: &Program) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for s in p.stmts() {
        if let StmtKind::Call { func, args } = &s.kind {
            out.push((func.clone(), args.len()));
        }
    }
    nodes::each_expr(&p.body, &mut |e| {
        if let ExprKind::Call(f, args) = &e.kind {
            out.push((f.clone(), args.len()));
        }
    });
    out
}
