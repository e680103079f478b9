//! What the C front end adds to the model for a call that is not pure
//! (docs/c.md, *Calls*), taken out again before the model is printed as C:
//! the statements that read and write the effects cell
//! ([`cvalue::EFFECTS`]) and every array a call may touch. They stand for
//! what the call itself does, and the call is printed as written, so
//! printing them too would do it twice (and name a cell C does not have).

use crate::cvalue;
use crate::model::nodes::each_access_mut;
use crate::model::*;
use std::collections::HashSet;

/// A program without its effect statements, and where each of the
/// original's arrays went (`None`: an effects cell, dropped).
pub struct Stripped {
    pub program: Program,
    pub map: Vec<Option<ArrayId>>,
}

/// Whether `s` is a statement the front end added for a call's effects.
pub fn is_effect_stmt(p: &Program, s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::Assign { target, value, .. } => {
            cvalue::is_effects_array(&p.array_decl(target.array).name)
                || matches!(&value.kind, ExprKind::Call(f, _) if cvalue::is_effect(f))
        }
        StmtKind::Call { func, .. } => cvalue::is_effect(func),
    }
}

/// `p` without its effect statements and effects cells; `None` when it has
/// none (nothing to take out).
pub fn strip(p: &Program) -> Option<Stripped> {
    let hidden: Vec<bool> = (p.arrays.iter())
        .map(|a| cvalue::is_effects_array(&a.name))
        .collect();
    let any_stmt = p.stmts().iter().any(|s| is_effect_stmt(p, s));
    if !any_stmt && !hidden.contains(&true) {
        return None;
    }
    let mut q = p.clone();
    retain(&mut q.body, &|s| !is_effect_stmt(p, s));
    // An effects cell still read or written elsewhere (it should not be)
    // stays, so that the program stays well formed.
    let used: HashSet<ArrayId> = (q.stmts().iter())
        .flat_map(|s| s.accesses().into_iter().map(|a| a.access.array))
        .chain(q.conditions().iter().flat_map(|c| {
            let mut reads = Vec::new();
            c.cond.collect_reads(&mut reads);
            reads
                .into_iter()
                .map(|a| a.access.array)
                .collect::<Vec<_>>()
        }))
        .collect();
    let mut map = Vec::with_capacity(p.arrays.len());
    let mut arrays = Vec::new();
    for (k, a) in p.arrays.iter().enumerate() {
        if hidden[k] && !used.contains(&ArrayId(k as u32)) {
            map.push(None);
        } else {
            map.push(Some(ArrayId(arrays.len() as u32)));
            arrays.push(a.clone());
        }
    }
    q.arrays = arrays;
    let to = map.clone();
    each_access_mut(&mut q.body, &|a: &mut Access| {
        if let Some(Some(n)) = to.get(a.array.index()) {
            a.array = *n;
        }
    });
    Some(Stripped { program: q, map })
}

/// Drops the statements below `nodes` that `keep` refuses.
fn retain(nodes: &mut Vec<Node>, keep: &dyn Fn(&Stmt) -> bool) {
    nodes.retain(|n| !matches!(n, Node::Stmt(s) if !keep(s)));
    for n in nodes {
        match n {
            Node::For(f) => retain(&mut f.body, keep),
            Node::While(w) => retain(&mut w.body, keep),
            Node::If(i) => {
                for (_, b) in &mut i.branches {
                    retain(b, keep);
                }
                if let Some(b) = &mut i.otherwise {
                    retain(b, keep);
                }
            }
            Node::Stmt(_) => {}
        }
    }
}

/// The arrays of `p`, a transformation of `original`, that a statement
/// standing for a pointer's overlap (`y[__any()] = __effect_overlap(..)`,
/// docs/c.md *Aliasing*) writes and that `original` does not have: copies
/// the transformation made (`y_1`). C's own overlap changes the caller's
/// memory, never such a copy, so printed without that statement the
/// program would lose the values it stands for.
pub fn renamed_overlaps(p: &Program, original: &Program) -> Vec<String> {
    let overlap = cvalue::effect("overlap");
    let mut out: Vec<String> = (p.stmts().into_iter())
        .filter_map(|s| match &s.kind {
            StmtKind::Assign { target, value, .. }
                if matches!(&value.kind, ExprKind::Call(f, _) if *f == overlap) =>
            {
                let name = &p.array_decl(target.array).name;
                original.array(name).is_none().then(|| name.clone())
            }
            _ => None,
        })
        .collect();
    out.sort();
    out.dedup();
    out
}
