//! Writes that an `if`/`else` makes certain (docs/rules.md §1, *Covers*).
//! In `if (p) x = a; else x = b;` neither write is a must-write of `x` on
//! its own, but one of the two runs whenever the `if` does: a read after
//! the `if` never sees a value of `x` from before it. σ uses that through
//! the then-branch's write, marked here as a *cover*.

use super::{nodes, Node, Program, Stmt, StmtKind};

/// By statement id: whether the statement covers its cell. It does when it
/// is an assignment of core kind with affine subscripts placed directly in
/// the `then` body of an `if` with one unknown condition and an `else`,
/// when no statement after it in that body writes its array, and when
/// the `else` body holds, directly, an assignment of core kind to the same
/// array with the same affine subscripts. At any instance of the `if`,
/// the two write the same cell, and one of them runs; a walk back from a
/// read after the `if` meets the cover before anything earlier in the
/// `then` body.
pub fn covers(program: &Program) -> Vec<bool> {
    let mut out = vec![false; program.stmts().len()];
    nodes::each(&program.body, &mut |n| {
        let Node::If(i) = n else { return };
        let ([(c, then)], Some(otherwise)) = (i.branches.as_slice(), &i.otherwise) else {
            return;
        };
        if c.cond.is_static() {
            return;
        }
        for (k, n) in then.iter().enumerate() {
            let Node::Stmt(s) = n else { continue };
            let Some(target) = must_target(s) else {
                continue;
            };
            if writes_array(&then[k + 1..], target.array) {
                continue;
            }
            let same = otherwise.iter().any(|e| match e {
                Node::Stmt(e) => must_target(e).is_some_and(|t| {
                    t.array == target.array
                        && t.subscripts.len() == target.subscripts.len()
                        && (t.subscripts.iter().zip(&target.subscripts))
                            .all(|(a, b)| a.affine == b.affine)
                }),
                _ => false,
            });
            out[s.id.index()] = same;
        }
    });
    out
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
