//! Affine expressions: integer linear combinations of loop counters and
//! parameters plus a constant. All arithmetic is checked; an overflow makes the
//! expression non-affine (`None`) rather than wrapping silently.

use super::{BinOp, CounterId, Expr, ExprKind, ParamId};
use std::fmt;

/// A variable an affine expression may mention.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Var {
    Param(ParamId),
    Counter(CounterId),
}

/// `constant + Σ coeff·var`. Terms are sorted by variable and never hold a zero
/// coefficient, so equal expressions are structurally equal.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Affine {
    pub terms: Vec<(Var, i64)>,
    pub constant: i64,
}

impl Affine {
    pub fn constant(c: i64) -> Affine {
        Affine {
            terms: Vec::new(),
            constant: c,
        }
    }

    pub fn var(v: Var) -> Affine {
        Affine {
            terms: vec![(v, 1)],
            constant: 0,
        }
    }

    pub fn is_constant(&self) -> bool {
        self.terms.is_empty()
    }

    pub fn coeff(&self, v: Var) -> i64 {
        self.terms
            .iter()
            .find(|(w, _)| *w == v)
            .map_or(0, |&(_, c)| c)
    }

    pub fn vars(&self) -> impl Iterator<Item = Var> + '_ {
        self.terms.iter().map(|&(v, _)| v)
    }

    /// Does it mention any loop counter?
    pub fn uses_counters(&self) -> bool {
        self.vars().any(|v| matches!(v, Var::Counter(_)))
    }

    pub fn checked_add(&self, other: &Affine) -> Option<Affine> {
        let mut terms = Vec::with_capacity(self.terms.len() + other.terms.len());
        let (mut a, mut b) = (self.terms.iter().peekable(), other.terms.iter().peekable());
        loop {
            match (a.peek(), b.peek()) {
                (Some(&&(va, ca)), Some(&&(vb, cb))) => {
                    if va == vb {
                        let c = ca.checked_add(cb)?;
                        if c != 0 {
                            terms.push((va, c));
                        }
                        a.next();
                        b.next();
                    } else if va < vb {
                        terms.push((va, ca));
                        a.next();
                    } else {
                        terms.push((vb, cb));
                        b.next();
                    }
                }
                (Some(&&t), None) => {
                    terms.push(t);
                    a.next();
                }
                (None, Some(&&t)) => {
                    terms.push(t);
                    b.next();
                }
                (None, None) => break,
            }
        }
        Some(Affine {
            terms,
            constant: self.constant.checked_add(other.constant)?,
        })
    }

    pub fn checked_scale(&self, k: i64) -> Option<Affine> {
        if k == 0 {
            return Some(Affine::constant(0));
        }
        let mut terms = Vec::with_capacity(self.terms.len());
        for &(v, c) in &self.terms {
            terms.push((v, c.checked_mul(k)?));
        }
        Some(Affine {
            terms,
            constant: self.constant.checked_mul(k)?,
        })
    }

    pub fn checked_sub(&self, other: &Affine) -> Option<Affine> {
        self.checked_add(&other.checked_scale(-1)?)
    }

    /// Evaluates at concrete values; `None` on overflow.
    pub fn eval(&self, value: impl Fn(Var) -> i64) -> Option<i64> {
        let mut acc = self.constant;
        for &(v, c) in &self.terms {
            acc = acc.checked_add(c.checked_mul(value(v))?)?;
        }
        Some(acc)
    }

    /// The affine form of an expression, or `None` when it is not affine: it
    /// mentions an array element, a call, `...`, a product of two variables, a
    /// division or a remainder, or its arithmetic overflows.
    pub fn from_expr(e: &Expr) -> Option<Affine> {
        match &e.kind {
            ExprKind::Int(n) => Some(Affine::constant(*n)),
            ExprKind::Param(p) => Some(Affine::var(Var::Param(*p))),
            ExprKind::Counter(c) => Some(Affine::var(Var::Counter(*c))),
            ExprKind::Neg(x) => Affine::from_expr(x)?.checked_scale(-1),
            ExprKind::Binary(op, l, r) => {
                let (l, r) = (Affine::from_expr(l)?, Affine::from_expr(r)?);
                match op {
                    BinOp::Add => l.checked_add(&r),
                    BinOp::Sub => l.checked_sub(&r),
                    BinOp::Mul if l.is_constant() => r.checked_scale(l.constant),
                    BinOp::Mul if r.is_constant() => l.checked_scale(r.constant),
                    _ => None,
                }
            }
            ExprKind::Access(_) | ExprKind::Call(..) | ExprKind::Unknown => None,
        }
    }
}

impl fmt::Display for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Var::Param(p) => write!(f, "p{}", p.0),
            Var::Counter(c) => write!(f, "c{}", c.0),
        }
    }
}

/// The canonical expression of an affine form: terms in variable order,
/// then the constant (`2*N - i + 1`).
pub fn affine_expr(a: &Affine, span: super::Span) -> Expr {
    let mk = |k: ExprKind| Expr::new(k, span);
    let var = |v: Var| match v {
        Var::Param(p) => mk(ExprKind::Param(p)),
        Var::Counter(c) => mk(ExprKind::Counter(c)),
    };
    let mut acc: Option<Expr> = None;
    for &(v, c) in &a.terms {
        let term = |c: i64| {
            if c == 1 {
                var(v)
            } else {
                mk(ExprKind::Binary(
                    BinOp::Mul,
                    Box::new(mk(ExprKind::Int(c))),
                    Box::new(var(v)),
                ))
            }
        };
        acc = Some(match acc {
            None if c == -1 => mk(ExprKind::Neg(Box::new(var(v)))),
            None => term(c),
            Some(e) => match c.checked_neg() {
                Some(n) if c < 0 => {
                    mk(ExprKind::Binary(BinOp::Sub, Box::new(e), Box::new(term(n))))
                }
                _ => mk(ExprKind::Binary(BinOp::Add, Box::new(e), Box::new(term(c)))),
            },
        });
    }
    let k = a.constant;
    match acc {
        None => mk(ExprKind::Int(k)),
        Some(e) if k == 0 => e,
        Some(e) => match k.checked_neg() {
            Some(n) if k < 0 => mk(ExprKind::Binary(
                BinOp::Sub,
                Box::new(e),
                Box::new(mk(ExprKind::Int(n))),
            )),
            _ => mk(ExprKind::Binary(
                BinOp::Add,
                Box::new(e),
                Box::new(mk(ExprKind::Int(k))),
            )),
        },
    }
}
