//! Walks over a program's nodes, shared by the storage modules.

use crate::model::{CounterId, For, Node, Stmt};

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

/// Every statement below `nodes` with the counters of the loops around it
/// (`for` and `while`), outermost first.
pub fn loop_chains(nodes: &[Node]) -> Vec<(&Stmt, Vec<CounterId>)> {
    fn walk<'a>(
        nodes: &'a [Node],
        around: &mut Vec<CounterId>,
        out: &mut Vec<(&'a Stmt, Vec<CounterId>)>,
    ) {
        for n in nodes {
            match n {
                Node::For(f) => {
                    around.push(f.counter);
                    walk(&f.body, around, out);
                    around.pop();
                }
                Node::While(w) => {
                    around.push(w.counter);
                    walk(&w.body, around, out);
                    around.pop();
                }
                Node::If(i) => {
                    for (_, b) in &i.branches {
                        walk(b, around, out);
                    }
                    if let Some(b) = &i.otherwise {
                        walk(b, around, out);
                    }
                }
                Node::Stmt(s) => out.push((s, around.clone())),
            }
        }
    }
    let mut out = Vec::new();
    walk(nodes, &mut Vec::new(), &mut out);
    out
}
