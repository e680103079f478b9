//! Quasts of a program whose constant loop bounds were made parameters
//! (`model::lift`), taken back at the constants. A quast proved for every
//! value of the added parameters holds at the constant each stands for;
//! conditions that become constant pick their branch.

use super::domain::Atom;
use super::quast::{Quast, Source};
use crate::model::{Affine, ParamId, Var};

/// `a` with each parameter of `consts` replaced by its value.
fn fixed(a: &Affine, consts: &[(ParamId, i64)]) -> Option<Affine> {
    let mut out = Affine::constant(a.constant);
    for &(v, c) in &a.terms {
        let term = match v {
            Var::Param(p) => match consts.iter().find(|(q, _)| *q == p) {
                Some(&(_, x)) => Affine::constant(c.checked_mul(x)?),
                None => Affine::var(v).checked_scale(c)?,
            },
            Var::Counter(_) => Affine::var(v).checked_scale(c)?,
        };
        out = out.checked_add(&term)?;
    }
    Some(out)
}

/// `q` at the constants; None on overflow.
pub fn at(q: &Quast, consts: &[(ParamId, i64)]) -> Option<Quast> {
    Some(match q {
        Quast::Leaf(None) => Quast::Leaf(None),
        Quast::Leaf(Some(s)) => Quast::Leaf(Some(Source {
            stmt: s.stmt,
            iter: (s.iter.iter())
                .map(|a| fixed(a, consts))
                .collect::<Option<_>>()?,
            den: s.den,
        })),
        Quast::Split { cond, yes, no } => {
            let cond = fixed(cond, consts)?;
            if cond.terms.is_empty() {
                return at(if cond.constant >= 0 { yes } else { no }, consts);
            }
            Quast::Split {
                cond,
                yes: Box::new(at(yes, consts)?),
                no: Box::new(at(no, consts)?),
            }
        }
        Quast::Stride { expr, k, yes, no } => {
            let expr = fixed(expr, consts)?;
            if expr.terms.is_empty() {
                let holds = expr.constant.rem_euclid(*k) == 0;
                return at(if holds { yes } else { no }, consts);
            }
            Quast::Stride {
                expr,
                k: *k,
                yes: Box::new(at(yes, consts)?),
                no: Box::new(at(no, consts)?),
            }
        }
    })
}

/// Parameter constraints at the constants: those left on the program's
/// own parameters (a constant one says nothing more).
pub fn atoms_at(atoms: &[Atom], consts: &[(ParamId, i64)]) -> Vec<Atom> {
    let mut out: Vec<Atom> = Vec::new();
    for a in atoms {
        let Some(e) = fixed(a.expr(), consts) else {
            continue;
        };
        let a = a.with(e);
        if !a.expr().terms.is_empty() && !out.contains(&a) {
            out.push(a);
        }
    }
    out
}
