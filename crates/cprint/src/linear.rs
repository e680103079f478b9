//! Affine forms `constant + Σ coeff·var >= 0` the printer reasons with:
//! the facts a condition gives ([`facts`]) and whether a set of them has
//! no integer point ([`infeasible`]). The C printer drops branches and
//! guards its context makes empty; pointer extents check the accesses'
//! ranges with them.

use crate::model::*;
use std::collections::BTreeMap;

/// `constant + Σ coeff·var`, an affine form of the printer's context.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Linear {
    pub(crate) terms: BTreeMap<Var, i128>,
    pub(crate) constant: i128,
}

impl Linear {
    pub(crate) fn of(a: &Affine) -> Linear {
        Linear {
            terms: a.terms.iter().map(|&(v, k)| (v, k as i128)).collect(),
            constant: a.constant as i128,
        }
    }

    /// `self - other + k`.
    pub(crate) fn minus(&self, other: &Linear, k: i128) -> Linear {
        let mut out = self.clone();
        for (v, c) in &other.terms {
            *out.terms.entry(*v).or_insert(0) -= c;
        }
        out.terms.retain(|_, c| *c != 0);
        out.constant -= other.constant;
        out.constant += k;
        out
    }

    /// `a·self + b·other` (a, b > 0), or `None` on overflow.
    pub(crate) fn combine(&self, a: i128, other: &Linear, b: i128) -> Option<Linear> {
        let mut out = Linear {
            terms: BTreeMap::new(),
            constant: self
                .constant
                .checked_mul(a)?
                .checked_add(other.constant.checked_mul(b)?)?,
        };
        for (v, c) in &self.terms {
            out.terms.insert(*v, c.checked_mul(a)?);
        }
        for (v, c) in &other.terms {
            let t = out.terms.entry(*v).or_insert(0);
            *t = t.checked_add(c.checked_mul(b)?)?;
        }
        out.terms.retain(|_, c| *c != 0);
        Some(out)
    }

    /// Divided by the gcd of its coefficients, the constant rounded down:
    /// the same integer points.
    fn tightened(mut self) -> Linear {
        let g = self.terms.values().fold(0i128, |g, c| gcd(g, c.abs()));
        if g > 1 {
            self.terms.values_mut().for_each(|c| *c /= g);
            self.constant = self.constant.div_euclid(g);
        }
        self
    }
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The forms `>= 0` that say `c` holds (`positive`) or fails, when that is
/// a conjunction of affine comparisons; `None` when it is not.
pub(crate) fn facts(c: &Cond, positive: bool) -> Option<Vec<Linear>> {
    match (c, positive) {
        (Cond::Not(x), _) => facts(x, !positive),
        (Cond::And(l, r), true) | (Cond::Or(l, r), false) => {
            let mut out = facts(l, positive)?;
            out.extend(facts(r, positive)?);
            Some(out)
        }
        (Cond::Cmp(op, l, r), _) => {
            let (l, r) = (
                Linear::of(&Affine::from_expr(l)?),
                Linear::of(&Affine::from_expr(r)?),
            );
            let op = if positive {
                *op
            } else {
                match op {
                    CmpOp::Lt => CmpOp::Ge,
                    CmpOp::Le => CmpOp::Gt,
                    CmpOp::Gt => CmpOp::Le,
                    CmpOp::Ge => CmpOp::Lt,
                    CmpOp::Eq => CmpOp::Ne,
                    CmpOp::Ne => CmpOp::Eq,
                }
            };
            match op {
                CmpOp::Le => Some(vec![r.minus(&l, 0)]),
                CmpOp::Lt => Some(vec![r.minus(&l, -1)]),
                CmpOp::Ge => Some(vec![l.minus(&r, 0)]),
                CmpOp::Gt => Some(vec![l.minus(&r, -1)]),
                CmpOp::Eq => Some(vec![r.minus(&l, 0), l.minus(&r, 0)]),
                CmpOp::Ne => None,
            }
        }
        _ => None,
    }
}

/// Whether no integer point satisfies every form `>= 0` of `forms`:
/// Fourier-Motzkin elimination, each form tightened to its integer points;
/// `false` when it cannot tell (too many forms, overflow).
pub(crate) fn infeasible(forms: &[Linear]) -> bool {
    let mut forms: Vec<Linear> = forms.iter().cloned().map(Linear::tightened).collect();
    loop {
        if forms.iter().any(|f| f.terms.is_empty() && f.constant < 0) {
            return true;
        }
        forms.retain(|f| !f.terms.is_empty());
        let Some(&v) = forms.first().and_then(|f| f.terms.keys().next()) else {
            return false;
        };
        let (mut lower, mut upper, mut rest) = (Vec::new(), Vec::new(), Vec::new());
        for f in forms {
            match f.terms.get(&v).copied().unwrap_or(0) {
                0 => rest.push(f),
                c if c > 0 => lower.push((c, f)),
                c => upper.push((-c, f)),
            }
        }
        for (a, l) in &lower {
            for (b, u) in &upper {
                match l.combine(*b, u, *a) {
                    Some(f) => rest.push(f.tightened()),
                    None => return false,
                }
                if rest.len() > 400 {
                    return false;
                }
            }
        }
        forms = rest;
    }
}
