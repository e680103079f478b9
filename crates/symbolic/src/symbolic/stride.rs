//! Quasts split by a stride. A write `a[2 * i]` fills only even cells, so
//! the source of a read `a[i]` depends on the parity of i: W(i / 2) where i
//! is even, ⊥ where it is odd. No affine split separates those points, so
//! the fit in `infer` fails. Here the read's points are split by residue
//! class of the read's subscript modulo the stride of a writer's subscript;
//! each class is fitted over its quotient (i = 2q + r: a function affine in
//! q is affine in i divided by 2), and the classes are chained by stride
//! conditions. The quast is a guess until `prove` accepts it, as any other.

use super::infer::{Dense, Fitter, Point};
use super::quast::{Quast, Source};
use super::ranges::gcd;
use crate::model::{Access, Affine, CounterId, Var};

/// The largest stride tried: each residue class needs points of its own.
const MAX_STRIDE: i64 = 8;

/// A form of the read's subscripts and a modulus worth splitting by.
pub struct Candidate {
    pub expr: Affine,
    pub modulus: i64,
}

/// Per dimension where a writer's subscript steps by k ≥ 2 over its
/// counters (`2 * i - 1`): the read's subscript there, modulo k.
pub fn candidates(read: &Access, writes: &[&Access]) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    for w in writes {
        for (ws, rs) in w.subscripts.iter().zip(&read.subscripts) {
            let (Some(wf), Some(rf)) = (&ws.affine, &rs.affine) else {
                continue;
            };
            let k = (wf.terms.iter())
                .filter(|(v, _)| matches!(v, Var::Counter(_)))
                .fold(0i64, |g, &(_, c)| gcd(g, c));
            if !(2..=MAX_STRIDE).contains(&k) || rf.terms.is_empty() {
                continue;
            }
            if !out.iter().any(|c| c.expr == *rf && c.modulus == k) {
                out.push(Candidate {
                    expr: rf.clone(),
                    modulus: k,
                });
            }
        }
    }
    out
}

impl Fitter<'_> {
    /// A quast through every point split by one of `cands`, if some class
    /// split lets each class be fitted.
    pub fn strided(&self, pts: &[&Point], cands: &[Candidate]) -> Option<Quast> {
        cands.iter().find_map(|c| self.by_classes(pts, c))
    }

    fn by_classes(&self, pts: &[&Point], c: &Candidate) -> Option<Quast> {
        let m = c.modulus;
        // A counter of the form with coefficient ±1 carries the quotient:
        // replacing it by q keeps every affine function affine.
        let k =
            (self.counters.iter()).position(|&ctr| c.expr.coeff(Var::Counter(ctr)).abs() == 1)?;
        let dense = Dense::new(&c.expr, self.counters);
        let mut classes: Vec<Quast> = Vec::new();
        for r in 0..m {
            let class: Vec<Point> = (pts.iter())
                .filter_map(|p| {
                    let e = dense.at(&p.0);
                    (e != i64::MIN && e.rem_euclid(m) == r).then(|| {
                        let mut x = p.0.clone();
                        x[k] = (e - r).div_euclid(m);
                        (x, p.1.clone())
                    })
                })
                .collect();
            // Too few points to tell a function from a coincidence.
            if class.len() < 3 {
                return None;
            }
            let q = self.fit(&class.iter().collect::<Vec<_>>())?;
            let shifted = c.expr.checked_sub(&Affine::constant(r))?;
            classes.push(back(&q, self.counters[k], &shifted, m)?);
        }
        // if m | e then Q0 else if m | e - 1 then Q1 ... else Q(m-1).
        let mut out = classes.pop()?;
        for (r, q) in classes.into_iter().enumerate().rev() {
            out = Quast::Stride {
                expr: c.expr.checked_sub(&Affine::constant(r as i64))?,
                k: m,
                yes: Box::new(q),
                no: Box::new(out),
            };
        }
        Some(out)
    }
}

/// `q` fitted with counter `c` standing for the quotient (e - r) / m, in
/// the read's own variables: a condition a·c + f ≥ 0 becomes
/// a·(e - r) + m·f ≥ 0, a coordinate a·c + f becomes (a·(e - r) + m·f) / m.
fn back(q: &Quast, c: CounterId, shifted: &Affine, m: i64) -> Option<Quast> {
    let scaled = |f: &Affine| -> Option<Affine> {
        let a = f.coeff(Var::Counter(c));
        let rest = Affine {
            terms: f
                .terms
                .iter()
                .copied()
                .filter(|&(v, _)| v != Var::Counter(c))
                .collect(),
            constant: f.constant,
        };
        rest.checked_scale(m)?
            .checked_add(&shifted.checked_scale(a)?)
    };
    Some(match q {
        Quast::Leaf(None) => Quast::Leaf(None),
        Quast::Leaf(Some(s)) => {
            let iter = s.iter.iter().map(scaled).collect::<Option<Vec<_>>>()?;
            Quast::Leaf(Some(reduced(s.stmt, iter, m)))
        }
        Quast::Split { cond, yes, no } => Quast::Split {
            cond: scaled(cond)?,
            yes: Box::new(back(yes, c, shifted, m)?),
            no: Box::new(back(no, c, shifted, m)?),
        },
        Quast::Stride { .. } => return None,
    })
}

/// A source `iter / den` with the common factor divided out.
fn reduced(stmt: crate::model::StmtId, iter: Vec<Affine>, den: i64) -> Source {
    let g = (iter.iter())
        .flat_map(|a| a.terms.iter().map(|t| t.1).chain([a.constant]))
        .fold(den, gcd);
    let div = |a: &Affine| Affine {
        terms: a.terms.iter().map(|&(v, x)| (v, x / g)).collect(),
        constant: a.constant / g,
    };
    Source {
        stmt,
        iter: iter.iter().map(div).collect(),
        den: den / g,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_factors_leave_the_division() {
        let i = Var::Counter(CounterId(0));
        // (2i + 4) / 2 = i + 2; (i + 1) / 2 stays.
        let s = reduced(
            crate::model::StmtId(0),
            vec![Affine {
                terms: vec![(i, 2)],
                constant: 4,
            }],
            2,
        );
        assert_eq!((s.iter[0].coeff(i), s.iter[0].constant, s.den), (1, 2, 1));
        let s = reduced(
            crate::model::StmtId(0),
            vec![Affine {
                terms: vec![(i, 1)],
                constant: 1,
            }],
            2,
        );
        assert_eq!(s.den, 2);
    }
}
