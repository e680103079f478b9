//! Exit flags printed back as `break`. The C front end lowers `break`,
//! `return` and `goto` out of a loop to a flag: the jump sets it, and
//! every trip and every statement after the jump is guarded by it being
//! 0 (docs/c.md, *Early exits*). Printed as it is, a loop that broke at
//! its first trip still runs every other trip to test the flag. Where the
//! loop runs in order (no OpenMP on it), the printer ends it there
//! instead: after the statement that sets the flag, `break;`, which skips
//! only what the flag would have skipped, and after an inner loop that may
//! have set it, `if (flag != 0) break;`.

use crate::model::*;

/// The flag a loop body can `break` on: the body is one `if (F == 0)
/// { B }` on a scalar F, every statement of B that assigns F sets it to a
/// constant other than 0, none does so inside a loop of B, and in B every
/// statement after one that may set F is itself guarded by `F == 0`. So
/// once F is set, nothing more of this trip runs, nor of any later one.
pub fn exit_flag(body: &[Node]) -> Option<ArrayId> {
    let [Node::If(i)] = body else {
        return None;
    };
    let ([(c, b)], None) = (i.branches.as_slice(), &i.otherwise) else {
        return None;
    };
    let f = flag_test(&c.cond)?;
    (ends_after_set(b, f) != Ends::Never).then_some(f)
}

/// Whether `s` is the statement that sets `flag` for an [`exit_flag`]
/// loop: `F = k`, k a constant other than 0.
pub fn sets(s: &Stmt, flag: ArrayId) -> bool {
    match &s.kind {
        StmtKind::Assign {
            target,
            op: None,
            value,
        } => {
            target.array == flag
                && target.subscripts.is_empty()
                && matches!(value.kind, ExprKind::Int(k) if k != 0)
        }
        _ => false,
    }
}

/// `F == 0` on a scalar F: the flag.
fn flag_test(c: &Cond) -> Option<ArrayId> {
    let Cond::Cmp(CmpOp::Eq, l, r) = c else {
        return None;
    };
    match (&l.kind, &r.kind) {
        (ExprKind::Access(a), ExprKind::Int(0)) if a.subscripts.is_empty() => Some(a.array),
        _ => None,
    }
}

/// What a block does to the flag.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ends {
    /// It never assigns the flag.
    Untouched,
    /// It may set the flag, and runs nothing unguarded after that.
    Guarded,
    /// It assigns the flag in a way `break` cannot stand for.
    Never,
}

fn ends_after_set(nodes: &[Node], flag: ArrayId) -> Ends {
    let mut set = false;
    for n in nodes {
        // After a statement that may set the flag, only guarded blocks.
        if set {
            match n {
                Node::If(i)
                    if i.otherwise.is_none()
                        && i.branches.len() == 1
                        && flag_test(&i.branches[0].0.cond) == Some(flag) => {}
                _ => return Ends::Never,
            }
        }
        let this = match n {
            Node::Stmt(s) if sets(s, flag) => Ends::Guarded,
            Node::Stmt(s) => match s.write() {
                Some((a, _)) if a.array == flag => Ends::Never,
                _ => Ends::Untouched,
            },
            Node::If(i) => {
                let blocks = (i.branches.iter().map(|(_, b)| b)).chain(&i.otherwise);
                let mut ends = Ends::Untouched;
                for b in blocks {
                    match ends_after_set(b, flag) {
                        Ends::Never => return Ends::Never,
                        Ends::Guarded => ends = Ends::Guarded,
                        Ends::Untouched => {}
                    }
                }
                ends
            }
            Node::For(f) => inside_loop(&f.body, flag),
            Node::While(w) => inside_loop(&w.body, flag),
        };
        match this {
            Ends::Never => return Ends::Never,
            Ends::Guarded => set = true,
            Ends::Untouched => {}
        }
    }
    if set {
        Ends::Guarded
    } else {
        Ends::Untouched
    }
}

/// A loop inside B: one that may set the flag must itself be an
/// [`exit_flag`] loop on it (its own `break` ends it at the set, and none
/// of its later trips runs anything), and counts as a set: the printer
/// puts `if (F != 0) break;` after it.
fn inside_loop(body: &[Node], flag: ArrayId) -> Ends {
    match ends_after_set(body, flag) {
        Ends::Untouched => Ends::Untouched,
        Ends::Guarded if exit_flag(body) == Some(flag) => Ends::Guarded,
        _ => Ends::Never,
    }
}

/// Whether a loop with this body, inside an [`exit_flag`] loop on `flag`,
/// may set the flag: the printer then ends the outer loop after it.
pub fn loop_sets(body: &[Node], flag: ArrayId) -> bool {
    inside_loop(body, flag) == Ends::Guarded
}
