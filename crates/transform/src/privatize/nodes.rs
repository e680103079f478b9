//! The pieces of model the privatized program is built from (generated
//! statements and accesses have no source span), shared by the per-thread
//! copies ([`super::emit`]) and the keyed reductions ([`super::argmax`]).

use crate::model::*;

pub(super) fn e(k: ExprKind) -> Expr {
    Expr::new(k, Span::NONE)
}

pub(super) fn int(v: i64) -> Expr {
    e(ExprKind::Int(v))
}

pub(super) fn access(array: ArrayId, subs: Vec<Expr>) -> Access {
    Access {
        array,
        subscripts: subs.into_iter().map(Subscript::new).collect(),
        span: Span::NONE,
        ext: None,
    }
}

/// A generated copy statement `label: target = value`.
pub(super) fn copy(label: String, target: Access, value: Expr) -> Node {
    Node::Stmt(Stmt::copy(label, target, value))
}
