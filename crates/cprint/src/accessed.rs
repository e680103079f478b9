//! The arrays a part of a program touches: what a function printed back
//! in its place declares, and which of its arrays a region uses.

use crate::model::*;
use std::collections::HashSet;

/// Every array (and scalar) `body` accesses: in statements and in
/// conditions.
pub fn arrays_of(body: &[Node]) -> HashSet<ArrayId> {
    let mut out = HashSet::new();
    for s in stmts_in(body) {
        out.extend(s.accesses().iter().map(|r| r.access.array));
    }
    let mut pending: Vec<&Node> = body.iter().collect();
    let cond = |c: &Cond, out: &mut HashSet<ArrayId>| {
        let mut reads = Vec::new();
        c.collect_reads(&mut reads);
        out.extend(reads.iter().map(|r| r.access.array));
    };
    while let Some(n) = pending.pop() {
        match n {
            Node::For(f) => pending.extend(&f.body),
            Node::While(w) => {
                cond(&w.cond.cond, &mut out);
                pending.extend(&w.body);
            }
            Node::If(i) => {
                for (c, b) in &i.branches {
                    cond(&c.cond, &mut out);
                    pending.extend(b);
                }
                pending.extend(i.otherwise.iter().flatten());
            }
            Node::Stmt(_) => {}
        }
    }
    out
}
