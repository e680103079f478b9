//! Writes that an `if`/`else` makes certain (docs/rules.md §1, *Covers*).
//! In `if (p) x = a; else x = b;` neither write is a must-write of `x` on
//! its own, but one of the two runs whenever the `if` does: a read after
//! the `if` never sees a value of `x` from before it. σ uses that through
//! the first branch's write, marked here as a *cover* (and in an `elsif`
//! chain, each branch's whose later branches all write the cell).

use super::{nodes, Node, Program, Stmt, StmtKind};

/// By statement id: whether the statement covers its cell. It does when it
/// is an assignment of core kind with affine subscripts placed directly in
/// the body of a branch of an `if` with an `else`, the branch's condition
/// unknown; when no statement after it in that body writes its array; and
/// when every later branch (`elsif`) and the `else` body hold, directly,
/// an assignment of core kind to the same array with the same affine
/// subscripts. At any instance of the `if`, those write the same cell, and
/// one of them runs if the branch's test does; a walk back from a read
/// after the `if` meets the cover before anything earlier in its body.
pub fn covers(program: &Program) -> Vec<bool> {
    let mut out = vec![false; program.stmts().len()];
    nodes::each(&program.body, &mut |n| {
        let Node::If(i) = n else { return };
        let Some(otherwise) = &i.otherwise else {
            return;
        };
        for (b, (c, body)) in i.branches.iter().enumerate() {
            if c.cond.is_static() {
                continue;
            }
            let later = (i.branches[b + 1..].iter().map(|(_, l)| l.as_slice()))
                .chain([otherwise.as_slice()]);
            let later: Vec<&[Node]> = later.collect();
            for (k, n) in body.iter().enumerate() {
                let Node::Stmt(s) = n else { continue };
                let Some(target) = must_target(s) else {
                    continue;
                };
                if writes_array(&body[k + 1..], target.array) {
                    continue;
                }
                out[s.id.index()] = later.iter().all(|l| writes_directly(l, target));
            }
        }
    });
    out
}

/// Whether `body` holds, directly, an assignment to `target`'s cell.
fn writes_directly(body: &[Node], target: &super::Access) -> bool {
    body.iter().any(|e| match e {
        Node::Stmt(e) => must_target(e).is_some_and(|t| {
            t.array == target.array
                && t.subscripts.len() == target.subscripts.len()
                && (t.subscripts.iter().zip(&target.subscripts)).all(|(a, b)| a.affine == b.affine)
        }),
        _ => false,
    })
}

/// The target of an assignment that writes exactly its cell: core kind,
/// every subscript affine.
fn must_target(s: &Stmt) -> Option<&super::Access> {
    match &s.kind {
        StmtKind::Assign { target, .. } if target.ext.is_none() && target.is_affine() => {
            Some(target)
        }
        _ => None,
    }
}

/// Whether any statement below `nodes` assigns `array`.
fn writes_array(body: &[Node], array: super::ArrayId) -> bool {
    let mut any = false;
    nodes::each(body, &mut |n| {
        if let Node::Stmt(s) = n {
            any |= s.write().is_some_and(|(t, _)| t.array == array);
        }
    });
    any
}
