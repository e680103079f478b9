//! Walks over a program's nodes: every loop, every node, in program order.

use super::{Access, Cond, CounterId, Expr, ExprKind, For, Node, Program, StmtKind};

/// Every `for` loop below `nodes`, outer loops first, in program order.
pub fn fors(nodes: &[Node]) -> Vec<&For> {
    let mut out = Vec::new();
    // Depth first, children in order: pushed reversed.
    let mut pending: Vec<&Node> = nodes.iter().rev().collect();
    while let Some(n) = pending.pop() {
        match n {
            Node::For(f) => {
                out.push(f);
                pending.extend(f.body.iter().rev());
            }
            Node::While(w) => pending.extend(w.body.iter().rev()),
            Node::If(i) => {
                if let Some(b) = &i.otherwise {
                    pending.extend(b.iter().rev());
                }
                for (_, b) in i.branches.iter().rev() {
                    pending.extend(b.iter().rev());
                }
            }
            Node::Stmt(_) => {}
        }
    }
    out
}

/// Calls `f` on every node below `nodes`, each before the nodes inside it,
/// in program order.
pub fn each<'p>(nodes: &'p [Node], f: &mut impl FnMut(&'p Node)) {
    for n in nodes {
        f(n);
        match n {
            Node::For(x) => each(&x.body, f),
            Node::While(w) => each(&w.body, f),
            Node::If(i) => {
                for (_, b) in &i.branches {
                    each(b, f);
                }
                if let Some(b) = &i.otherwise {
                    each(b, f);
                }
            }
            Node::Stmt(_) => {}
        }
    }
}

/// Calls `f` on every node below `nodes`, each before the nodes inside it.
pub fn each_mut(nodes: &mut [Node], f: &mut impl FnMut(&mut Node)) {
    for n in nodes {
        f(n);
        match n {
            Node::For(x) => each_mut(&mut x.body, f),
            Node::While(w) => each_mut(&mut w.body, f),
            Node::If(i) => {
                for (_, b) in &mut i.branches {
                    each_mut(b, f);
                }
                if let Some(b) = &mut i.otherwise {
                    each_mut(b, f);
                }
            }
            Node::Stmt(_) => {}
        }
    }
}

/// Calls `f` on `e` and every expression inside it, outermost first.
pub fn expr<'p>(e: &'p Expr, f: &mut impl FnMut(&'p Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Access(a) => a.subscripts.iter().for_each(|s| expr(&s.expr, f)),
        ExprKind::Call(_, args) => args.iter().for_each(|x| expr(x, f)),
        ExprKind::Neg(x) => expr(x, f),
        ExprKind::Binary(_, l, r) => {
            expr(l, f);
            expr(r, f);
        }
        ExprKind::Int(_) | ExprKind::Param(_) | ExprKind::Counter(_) | ExprKind::Unknown => {}
    }
}
/// Calls `f` on every expression of `c`, as [`expr`] does.
pub fn cond<'p>(c: &'p Cond, f: &mut impl FnMut(&'p Expr)) {
    match c {
        Cond::Cmp(_, l, r) => {
            expr(l, f);
            expr(r, f);
        }
        Cond::And(a, b) | Cond::Or(a, b) => {
            cond(a, f);
            cond(b, f);
        }
        Cond::Not(a) => cond(a, f),
        Cond::Unknown => {}
    }
}

/// Calls `f` on every expression below `nodes`, each before the
/// expressions inside it: loop bounds, conditions, subscripts of targets,
/// values and call arguments. Read-only; a pass that looks for one form
/// (a call, a parameter) matches on it instead of walking the tree again.
pub fn each_expr<'p>(nodes: &'p [Node], f: &mut impl FnMut(&'p Expr)) {
    for n in nodes {
        match n {
            Node::Stmt(s) => match &s.kind {
                StmtKind::Assign { target, value, .. } => {
                    target.subscripts.iter().for_each(|x| expr(&x.expr, f));
                    expr(value, f);
                }
                StmtKind::Call { args, .. } => args.iter().for_each(|x| expr(x, f)),
            },
            Node::For(x) => {
                expr(&x.lower.expr, f);
                expr(&x.upper.expr, f);
                each_expr(&x.body, f);
            }
            Node::While(w) => {
                cond(&w.cond.cond, f);
                each_expr(&w.body, f);
            }
            Node::If(i) => {
                for (c, b) in &i.branches {
                    cond(&c.cond, f);
                    each_expr(b, f);
                }
                if let Some(b) = &i.otherwise {
                    each_expr(b, f);
                }
            }
        }
    }
}

/// Calls `f` on every access below `nodes` (targets, values, call
/// arguments, conditions), each after the accesses in its subscripts.
pub fn each_access_mut(nodes: &mut [Node], f: &dyn Fn(&mut Access)) {
    each_mut(nodes, &mut |node| match node {
        Node::Stmt(s) => match &mut s.kind {
            StmtKind::Assign { target, value, .. } => {
                for sub in &mut target.subscripts {
                    expr_accesses_mut(&mut sub.expr, f);
                }
                f(target);
                expr_accesses_mut(value, f);
            }
            StmtKind::Call { args, .. } => args.iter_mut().for_each(|e| expr_accesses_mut(e, f)),
        },
        Node::If(i) => {
            for (c, _) in &mut i.branches {
                cond_accesses_mut(&mut c.cond, f);
            }
        }
        Node::While(w) => cond_accesses_mut(&mut w.cond.cond, f),
        Node::For(_) => {}
    });
}

fn expr_accesses_mut(e: &mut Expr, f: &dyn Fn(&mut Access)) {
    match &mut e.kind {
        ExprKind::Access(a) => {
            for s in &mut a.subscripts {
                expr_accesses_mut(&mut s.expr, f);
            }
            f(a);
        }
        ExprKind::Call(_, args) => args.iter_mut().for_each(|x| expr_accesses_mut(x, f)),
        ExprKind::Neg(x) => expr_accesses_mut(x, f),
        ExprKind::Binary(_, l, r) => {
            expr_accesses_mut(l, f);
            expr_accesses_mut(r, f);
        }
        ExprKind::Int(_) | ExprKind::Param(_) | ExprKind::Counter(_) | ExprKind::Unknown => {}
    }
}

fn cond_accesses_mut(c: &mut Cond, f: &dyn Fn(&mut Access)) {
    match c {
        Cond::Cmp(_, l, r) => {
            expr_accesses_mut(l, f);
            expr_accesses_mut(r, f);
        }
        Cond::And(a, b) | Cond::Or(a, b) => {
            cond_accesses_mut(a, f);
            cond_accesses_mut(b, f);
        }
        Cond::Not(a) => cond_accesses_mut(a, f),
        Cond::Unknown => {}
    }
}

/// The counters of the loops around every site, outermost first, by site
/// index (statements, then conditions).
pub fn site_loops(program: &Program) -> Vec<Vec<CounterId>> {
    fn walk(
        nodes: &[Node],
        stack: &mut Vec<CounterId>,
        n_stmts: usize,
        out: &mut [Vec<CounterId>],
    ) {
        for n in nodes {
            match n {
                Node::Stmt(s) => out[s.id.index()] = stack.clone(),
                Node::For(f) => {
                    stack.push(f.counter);
                    walk(&f.body, stack, n_stmts, out);
                    stack.pop();
                }
                Node::While(w) => {
                    stack.push(w.counter);
                    out[n_stmts + w.cond.id.index()] = stack.clone();
                    walk(&w.body, stack, n_stmts, out);
                    stack.pop();
                }
                Node::If(i) => {
                    for (c, b) in &i.branches {
                        out[n_stmts + c.id.index()] = stack.clone();
                        walk(b, stack, n_stmts, out);
                    }
                    if let Some(b) = &i.otherwise {
                        walk(b, stack, n_stmts, out);
                    }
                }
            }
        }
    }
    let n_stmts = program.stmts().len();
    let mut out = vec![Vec::new(); n_stmts + program.conditions().len()];
    walk(&program.body, &mut Vec::new(), n_stmts, &mut out);
    out
}
