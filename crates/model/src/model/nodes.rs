//! Walks over a program's nodes: every loop, every node, in program order.

use super::{For, Node};

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
