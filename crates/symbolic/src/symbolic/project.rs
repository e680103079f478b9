//! Exact integer projection: `∃v. conj` as a conjunction without `v`, for
//! the kill conditions of `fada`. An equality with a unit coefficient on
//! `v` is solved and substituted; otherwise Fourier–Motzkin, which is exact
//! over the integers when every pair of a lower and an upper bound has a
//! unit coefficient on one side (then the real shadow is the integer one).
//! Anything else is refused rather than approximated.

use super::domain::Atom;
use crate::model::{Affine, Var};

/// Why a projection was refused.
pub const INEXACT: &str = "a kill condition needs a projection that is not exact \
     (a coefficient other than ±1 on an eliminated counter, or a loop step)";
const OVERFLOW: &str = "arithmetic overflow in a kill condition";

/// `e` with `v` replaced by `by`.
pub fn substitute(e: &Affine, v: Var, by: &Affine) -> Option<Affine> {
    let k = e.coeff(v);
    if k == 0 {
        return Some(e.clone());
    }
    let rest = e.checked_sub(&Affine::var(v).checked_scale(k)?)?;
    rest.checked_add(&by.checked_scale(k)?)
}

/// `∃v. conj`, exactly, or why not.
pub fn eliminate(conj: &[Atom], v: Var) -> Result<Vec<Atom>, &'static str> {
    let mentions = |a: &Atom| a.expr().coeff(v) != 0;
    // An equality a·v + rest = 0, the smallest |a| first: v = -rest/a where
    // a divides rest. Each other atom with b·v is scaled by |a| and
    // |a|·b·v replaced by -sign(a)·b·rest; |a| > 1 adds `rest ≡ 0 (mod |a|)`.
    let eq = conj
        .iter()
        .enumerate()
        .filter(|(_, a)| matches!(a, Atom::Eq(_)) && mentions(a))
        .min_by_key(|(_, a)| a.expr().coeff(v).abs());
    if let Some((k, e)) = eq {
        let e = e.expr();
        let a = e.coeff(v);
        let rest = e
            .checked_sub(&Affine::var(v).checked_scale(a).ok_or(OVERFLOW)?)
            .ok_or(OVERFLOW)?;
        let m = a.abs();
        let by = rest.checked_scale(-a.signum()).ok_or(OVERFLOW)?;
        let mut out = Vec::with_capacity(conj.len());
        for (j, atom) in conj.iter().enumerate() {
            if j == k {
                continue;
            }
            let x = atom.expr();
            let b = x.coeff(v);
            if b == 0 {
                out.push(atom.clone());
                continue;
            }
            let scaled = x
                .checked_sub(&Affine::var(v).checked_scale(b).ok_or(OVERFLOW)?)
                .and_then(|r| r.checked_scale(m))
                .and_then(|r| r.checked_add(&by.checked_scale(b)?))
                .ok_or(OVERFLOW)?;
            out.push(match atom {
                Atom::Le(_) | Atom::Eq(_) => atom.with(scaled),
                Atom::Stride(_, s) => Atom::Stride(scaled, s.checked_mul(m).ok_or(OVERFLOW)?),
                Atom::NotStride(_, s) => Atom::NotStride(scaled, s.checked_mul(m).ok_or(OVERFLOW)?),
            });
        }
        if m != 1 {
            out.push(Atom::Stride(rest, m));
        }
        return Ok(out);
    }
    if conj
        .iter()
        .any(|a| mentions(a) && matches!(a, Atom::Stride(..) | Atom::NotStride(..)))
    {
        return Err(INEXACT);
    }
    // Fourier–Motzkin on the `≤` atoms: lower bounds (coefficient < 0) and
    // upper bounds (> 0) pair up.
    let mut out: Vec<Atom> = conj.iter().filter(|a| !mentions(a)).cloned().collect();
    let (lower, upper): (Vec<&Affine>, Vec<&Affine>) = conj
        .iter()
        .filter(|a| mentions(a))
        .map(Atom::expr)
        .partition(|e| e.coeff(v) < 0);
    for l in &lower {
        let b = -l.coeff(v);
        for u in &upper {
            let a = u.coeff(v);
            if a != 1 && b != 1 {
                return Err(INEXACT);
            }
            // a·l + b·u cancels v: (b·v ≥ L) and (a·v ≤ -U) give a·L + b·U ≤ 0.
            let e = l
                .checked_scale(a)
                .and_then(|x| x.checked_add(&u.checked_scale(b)?))
                .ok_or(OVERFLOW)?;
            if e.is_constant() && e.constant <= 0 {
                continue;
            }
            out.push(Atom::Le(e));
        }
    }
    Ok(out)
}

/// `∃vars. conj`: first the variables an equality fixes (their
/// substitution may turn a stride on another into one on the rest), then
/// the others, in order.
pub fn eliminate_all(conj: &[Atom], vars: &[Var]) -> Result<Vec<Atom>, &'static str> {
    let mut c = conj.to_vec();
    let mut left = vars.to_vec();
    while !left.is_empty() {
        let k = left
            .iter()
            .position(|&v| {
                c.iter()
                    .any(|a| matches!(a, Atom::Eq(e) if e.coeff(v) != 0))
            })
            .unwrap_or(0);
        let v = left.remove(k);
        c = eliminate(&c, v)?;
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CounterId;

    fn var(k: u32) -> Var {
        Var::Counter(CounterId(k))
    }

    fn aff(terms: &[(u32, i64)], c: i64) -> Affine {
        let mut a = Affine::constant(c);
        for &(v, k) in terms {
            a = a
                .checked_add(&Affine::var(var(v)).checked_scale(k).unwrap())
                .unwrap();
        }
        a
    }

    fn holds(conj: &[Atom], at: &dyn Fn(Var) -> i64) -> bool {
        conj.iter().all(|a| {
            let e = a.expr().eval(at).unwrap();
            match a {
                Atom::Le(_) => e <= 0,
                Atom::Eq(_) => e == 0,
                Atom::Stride(_, k) => e.rem_euclid(*k) == 0,
                Atom::NotStride(_, k) => e.rem_euclid(*k) != 0,
            }
        })
    }

    /// Against enumeration: random small systems over three counters,
    /// eliminating the first; where the projection is accepted it must
    /// hold exactly where some value of the eliminated counter satisfies
    /// the system.
    #[test]
    fn projection_equals_enumeration() {
        let mut seed = 7u64;
        let mut next = |m: i64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) as i64).rem_euclid(m)
        };
        let mut accepted = 0;
        for _ in 0..400 {
            let n = 1 + next(4) as usize;
            let mut conj = Vec::new();
            for _ in 0..n {
                let e = aff(
                    &[(0, next(5) - 2), (1, next(5) - 2), (2, next(3) - 1)],
                    next(9) - 4,
                );
                conj.push(match next(6) {
                    0 => Atom::Eq(e),
                    1 => Atom::Stride(e, 2 + next(2)),
                    _ => Atom::Le(e),
                });
            }
            // Keep the eliminated counter bounded so enumeration is finite.
            conj.push(Atom::Le(aff(&[(0, 1)], -6)));
            conj.push(Atom::Le(aff(&[(0, -1)], -6)));
            let Ok(p) = eliminate(&conj, var(0)) else {
                continue;
            };
            accepted += 1;
            for a in -4..=4 {
                for b in -4..=4 {
                    let exists = (-6..=6).any(|z| {
                        holds(&conj, &|v| match v {
                            Var::Counter(CounterId(0)) => z,
                            Var::Counter(CounterId(1)) => a,
                            _ => b,
                        })
                    });
                    let shadow = holds(&p, &|v| match v {
                        Var::Counter(CounterId(1)) => a,
                        _ => b,
                    });
                    assert_eq!(exists, shadow, "{conj:?} at ({a}, {b}): {p:?}");
                }
            }
        }
        assert!(accepted > 100, "only {accepted} projections accepted");
    }
}
