//! Polynomials over parameters and loop counters with integer coefficients:
//! the strides, spans and base offsets of an LMAD. Row-major linearisation
//! multiplies declared extents (`(N+1)*(M+1)`), so affine is not enough.
//! All arithmetic is checked; an overflow gives `None`.

use crate::model::{Affine, Var};
use std::collections::BTreeMap;

/// `Σ c·m` over monomials `m` (sorted variable lists, `[]` the constant);
/// no zero coefficient is stored, so equal polynomials are structurally equal.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Poly {
    terms: BTreeMap<Vec<Var>, i64>,
}

impl Poly {
    pub fn constant(c: i64) -> Poly {
        let mut terms = BTreeMap::new();
        if c != 0 {
            terms.insert(Vec::new(), c);
        }
        Poly { terms }
    }

    pub fn var(v: Var) -> Poly {
        Poly {
            terms: BTreeMap::from([(vec![v], 1)]),
        }
    }

    pub fn from_affine(a: &Affine) -> Poly {
        let mut p = Poly::constant(a.constant);
        for &(v, c) in &a.terms {
            p.terms.insert(vec![v], c);
        }
        p
    }

    /// The value when it mentions no variable.
    pub fn as_constant(&self) -> Option<i64> {
        match self.terms.len() {
            0 => Some(0),
            1 => self.terms.get(&Vec::new()).copied(),
            _ => None,
        }
    }

    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    pub fn mentions(&self, v: Var) -> bool {
        self.terms.keys().any(|m| m.contains(&v))
    }

    pub fn vars(&self) -> impl Iterator<Item = Var> + '_ {
        self.terms.keys().flat_map(|m| m.iter().copied())
    }

    fn add_term(&mut self, m: Vec<Var>, c: i64) -> Option<()> {
        let e = self.terms.entry(m).or_insert(0);
        *e = e.checked_add(c)?;
        if *e == 0 {
            self.terms.retain(|_, c| *c != 0);
        }
        Some(())
    }

    pub fn add(&self, o: &Poly) -> Option<Poly> {
        let mut p = self.clone();
        for (m, &c) in &o.terms {
            p.add_term(m.clone(), c)?;
        }
        Some(p)
    }

    pub fn sub(&self, o: &Poly) -> Option<Poly> {
        self.add(&o.scale(-1)?)
    }

    pub fn add_const(&self, c: i64) -> Option<Poly> {
        self.add(&Poly::constant(c))
    }

    pub fn scale(&self, k: i64) -> Option<Poly> {
        if k == 0 {
            return Some(Poly::default());
        }
        let mut terms = BTreeMap::new();
        for (m, &c) in &self.terms {
            terms.insert(m.clone(), c.checked_mul(k)?);
        }
        Some(Poly { terms })
    }

    pub fn mul(&self, o: &Poly) -> Option<Poly> {
        let mut p = Poly::default();
        for (m1, &c1) in &self.terms {
            for (m2, &c2) in &o.terms {
                let mut m: Vec<Var> = m1.iter().chain(m2).copied().collect();
                m.sort();
                p.add_term(m, c1.checked_mul(c2)?)?;
            }
        }
        Some(p)
    }

    /// `self / k` when every coefficient is a multiple of `k`.
    pub fn div_exact(&self, k: i64) -> Option<Poly> {
        if k == 0 || self.terms.values().any(|c| c % k != 0) {
            return None;
        }
        Some(Poly {
            terms: self.terms.iter().map(|(m, c)| (m.clone(), c / k)).collect(),
        })
    }

    /// The constant `q` with `self = q·d`, if there is one.
    pub fn quotient(&self, d: &Poly) -> Option<i64> {
        if self.is_zero() {
            return Some(0);
        }
        let (m, &cd) = d.terms.iter().next()?;
        let cs = self.terms.get(m).copied().unwrap_or(0);
        if cs % cd != 0 {
            return None;
        }
        let q = cs / cd;
        (d.scale(q)? == *self).then_some(q)
    }

    /// The leading term in degree-then-lexicographic order.
    fn leading(&self) -> Option<(&Vec<Var>, i64)> {
        self.terms
            .iter()
            .max_by(|a, b| a.0.len().cmp(&b.0.len()).then(a.0.cmp(b.0)))
            .map(|(m, &c)| (m, c))
    }

    /// `self / d` when the division leaves no remainder and the quotient
    /// has integer coefficients (so it divides for every value).
    pub fn div_poly(&self, d: &Poly) -> Option<Poly> {
        let (dm, dc) = d.leading()?;
        let (dm, dc) = (dm.clone(), dc);
        let mut rest = self.clone();
        let mut q = Poly::default();
        for _ in 0..64 {
            let Some((m, c)) = rest.leading() else {
                return Some(q);
            };
            if c % dc != 0 {
                return None;
            }
            // The monomial `m / dm`, if `dm` divides it.
            let mut left = m.clone();
            for v in &dm {
                let i = left.iter().position(|w| w == v)?;
                left.remove(i);
            }
            let t = Poly {
                terms: BTreeMap::from([(left, c / dc)]),
            };
            rest = rest.sub(&t.mul(d)?)?;
            q = q.add(&t)?;
        }
        None
    }

    /// Whether `d` provably divides `self` for every value of the variables:
    /// a constant `d` dividing every coefficient, or an exact polynomial
    /// quotient with integer coefficients.
    pub fn divisible_by(&self, d: &Poly) -> bool {
        match d.as_constant() {
            Some(0) => self.is_zero(),
            Some(k) => self.terms.values().all(|c| c % k == 0),
            None => self.div_poly(d).is_some(),
        }
    }

    /// Whether `self ≥ 0` follows from the hypotheses `h ≥ 0`: its
    /// coefficients (or those of `self − h`) are non-negative once every
    /// variable is shifted by a lower bound some hypothesis `k·v + c` gives.
    pub fn nonneg_given(&self, hyps: &[Poly]) -> bool {
        if let Some(c) = self.as_constant() {
            return c >= 0;
        }
        let mut lb: BTreeMap<Var, i64> = BTreeMap::new();
        for h in hyps {
            let linear: Vec<(&Vec<Var>, &i64)> =
                h.terms.iter().filter(|(m, _)| !m.is_empty()).collect();
            if let [(m, &k)] = linear[..] {
                if m.len() == 1 && k > 0 {
                    let c = h.terms.get(&Vec::new()).copied().unwrap_or(0);
                    let b = (-c).div_euclid(k) + i64::from((-c).rem_euclid(k) != 0);
                    let e = lb.entry(m[0]).or_insert(b);
                    *e = (*e).max(b);
                }
            }
        }
        let shifted_ok = |p: &Poly| -> bool {
            let mut p = p.clone();
            for v in p.vars().collect::<std::collections::BTreeSet<_>>() {
                let Some(&b) = lb.get(&v) else {
                    return false;
                };
                match Poly::var(v).add_const(b).and_then(|by| p.subst(v, &by)) {
                    Some(q) => p = q,
                    None => return false,
                }
            }
            p.terms.values().all(|&c| c >= 0)
        };
        shifted_ok(self)
            || hyps
                .iter()
                .any(|h| self.sub(h).is_some_and(|d| shifted_ok(&d)))
    }

    /// `self ≤ o`, decided when their difference is a constant.
    pub fn le(&self, o: &Poly) -> Option<bool> {
        o.sub(self)?.as_constant().map(|c| c >= 0)
    }

    /// `self < o`, decided when their difference is a constant.
    pub fn lt(&self, o: &Poly) -> Option<bool> {
        o.sub(self)?.as_constant().map(|c| c > 0)
    }

    /// Substitutes the polynomial `by` for `v`.
    pub fn subst(&self, v: Var, by: &Poly) -> Option<Poly> {
        let mut out = Poly::default();
        for (m, &c) in &self.terms {
            let mut term = Poly::constant(c);
            let mut rest = Vec::new();
            for &w in m {
                if w == v {
                    term = term.mul(by)?;
                } else {
                    rest.push(w);
                }
            }
            let rest = Poly {
                terms: BTreeMap::from([(rest, 1)]),
            };
            out = out.add(&term.mul(&rest)?)?;
        }
        Some(out)
    }

    /// The value at concrete values of the variables; `None` on overflow.
    pub fn eval(&self, value: &dyn Fn(Var) -> i64) -> Option<i64> {
        let mut acc: i64 = 0;
        for (m, &c) in &self.terms {
            let mut t = c;
            for &v in m {
                t = t.checked_mul(value(v))?;
            }
            acc = acc.checked_add(t)?;
        }
        Some(acc)
    }

    /// Substitutes the values `value` knows, keeping the other variables.
    pub fn partial(&self, value: &dyn Fn(Var) -> Option<i64>) -> Option<Poly> {
        let mut out = self.clone();
        for v in self.vars().collect::<std::collections::BTreeSet<_>>() {
            if let Some(x) = value(v) {
                out = out.subst(v, &Poly::constant(x))?;
            }
        }
        Some(out)
    }

    /// Human-readable, highest degree first: `nb*nb + 2*nb - 1`.
    pub fn show(&self, name: &dyn Fn(Var) -> String) -> String {
        self.render(name, "*")
    }

    /// [`Poly::show`] with a chosen product sign.
    pub fn render(&self, name: &dyn Fn(Var) -> String, times: &str) -> String {
        if self.terms.is_empty() {
            return "0".to_string();
        }
        let mut terms: Vec<(&Vec<Var>, i64)> = self.terms.iter().map(|(m, &c)| (m, c)).collect();
        terms.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(b.0)));
        let mut out = String::new();
        for (i, (m, c)) in terms.into_iter().enumerate() {
            let (neg, mag) = (c < 0, c.unsigned_abs());
            match (i, neg) {
                (0, true) => out.push('-'),
                (0, false) => {}
                (_, true) => out.push_str(" - "),
                (_, false) => out.push_str(" + "),
            }
            let vars: Vec<String> = m.iter().map(|&v| name(v)).collect();
            if vars.is_empty() {
                out.push_str(&mag.to_string());
            } else if mag == 1 {
                out.push_str(&vars.join(times));
            } else {
                out.push_str(&format!("{mag}{times}{}", vars.join(times)));
            }
        }
        out
    }
}
