//! Constant loop bounds made parameters. Code generation and symbolic σ
//! sample a program at small parameter values; a loop whose bounds are constants
//! keeps its size at every sample (PolyBench's heat-3d runs `TSTEPS` = 500
//! time steps whatever `n` is), which makes the samples too large to
//! analyse. Such an upper bound becomes a parameter whose default is the
//! constant: the lifted program at its defaults is the original, and a
//! closed form valid for every value of the new parameter is valid at the
//! constant.

use crate::model::{Affine, Bound, Expr, ExprKind, Node, Param, ParamId, Program, Var};

/// The fewest trips a constant loop must have to be lifted: shorter loops
/// cost little at every sample.
const MIN_TRIPS: i64 = 16;

/// The lifted program and the parameters added (name, the constant).
pub struct Lifted {
    pub program: Program,
    pub added: Vec<(String, i64)>,
}

/// `p` with the constant upper bound of each loop of at least
/// `MIN_TRIPS` constant trips made a parameter (one per distinct
/// constant); None when there is no such loop.
pub fn constant_bounds(p: &Program) -> Option<Lifted> {
    // Most programs have no such loop: no copy of them.
    if !any(&p.body) {
        return None;
    }
    let mut out = p.clone();
    let mut added: Vec<(String, i64)> = Vec::new();
    let taken = |name: &str, p: &Program| {
        p.params.iter().any(|q| q.name == name)
            || p.arrays.iter().any(|a| a.name == name)
            || p.counters.iter().any(|c| c.name == name)
    };
    let mut body = std::mem::take(&mut out.body);
    lift(&mut body, &mut |hi: i64, span| {
        let k = match added.iter().position(|(_, v)| *v == hi) {
            Some(k) => k,
            None => {
                let mut name = format!("bound_{hi}");
                while taken(&name, &out) {
                    name.push('_');
                }
                out.params.push(Param {
                    name: name.clone(),
                    default: Some(hi),
                    span,
                    derived: None,
                });
                added.push((name, hi));
                added.len() - 1
            }
        };
        ParamId((p.params.len() + k) as u32)
    });
    out.body = body;
    (!added.is_empty()).then_some(Lifted {
        program: out,
        added,
    })
}

/// Whether a loop's bounds are constants at least `MIN_TRIPS` apart.
fn qualifies(f: &crate::model::For) -> bool {
    let (lo, hi) = (&f.lower.affine, &f.upper.affine);
    lo.terms.is_empty()
        && hi.terms.is_empty()
        && (hi.constant)
            .checked_sub(lo.constant)
            .is_some_and(|d| d + 1 >= MIN_TRIPS)
}

/// Whether some loop under `nodes` qualifies.
fn any(nodes: &[Node]) -> bool {
    nodes.iter().any(|n| match n {
        Node::For(f) => qualifies(f) || any(&f.body),
        Node::While(w) => any(&w.body),
        Node::If(i) => {
            i.branches.iter().any(|(_, b)| any(b)) || i.otherwise.as_deref().is_some_and(any)
        }
        Node::Stmt(_) => false,
    })
}

/// Replaces the qualifying bounds under `nodes`; `param` gives the
/// parameter for a constant.
fn lift(nodes: &mut [Node], param: &mut dyn FnMut(i64, crate::model::Span) -> ParamId) {
    for n in nodes {
        match n {
            Node::For(f) => {
                if qualifies(f) {
                    let span = f.upper.expr.span;
                    let id = param(f.upper.affine.constant, span);
                    f.upper = Bound {
                        expr: Expr {
                            kind: ExprKind::Param(id),
                            span,
                        },
                        affine: Affine::var(Var::Param(id)),
                    };
                }
                lift(&mut f.body, param);
            }
            Node::While(w) => lift(&mut w.body, param),
            Node::If(i) => {
                for (_, b) in &mut i.branches {
                    lift(b, param);
                }
                if let Some(b) = &mut i.otherwise {
                    lift(b, param);
                }
            }
            Node::Stmt(_) => {}
        }
    }
}
