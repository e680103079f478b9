//! Array sizes as polynomials in the parameters: a declaration's cells are
//! the product of its affine extents, a form's total the sum over its
//! arrays. Only for the report ("6 * N - 1 cells"); the emitted program
//! keeps affine bounds.

use crate::model::{Affine, ParamId, Program, Var};
use std::collections::BTreeMap;

/// Σ coefficient · Π parameters; a monomial is its sorted parameter ids
/// (repeated for powers), the constant term the empty one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Poly(BTreeMap<Vec<u32>, i64>);

impl Poly {
    pub fn constant(c: i64) -> Poly {
        let mut m = BTreeMap::new();
        if c != 0 {
            m.insert(Vec::new(), c);
        }
        Poly(m)
    }

    /// An affine function of the parameters; None if it uses a counter.
    pub fn affine(a: &Affine) -> Option<Poly> {
        let mut p = Poly::constant(a.constant);
        for &(v, c) in &a.terms {
            let Var::Param(q) = v else {
                return None;
            };
            p.put(vec![q.0], c)?;
        }
        Some(p)
    }

    fn put(&mut self, mono: Vec<u32>, c: i64) -> Option<()> {
        let e = self.0.entry(mono).or_insert(0);
        *e = e.checked_add(c)?;
        if *e == 0 {
            self.0.retain(|_, c| *c != 0);
        }
        Some(())
    }

    pub fn add(&self, o: &Poly) -> Option<Poly> {
        let mut p = self.clone();
        for (m, &c) in &o.0 {
            p.put(m.clone(), c)?;
        }
        Some(p)
    }

    pub fn mul(&self, o: &Poly) -> Option<Poly> {
        let mut p = Poly::default();
        for (a, &x) in &self.0 {
            for (b, &y) in &o.0 {
                let mut m: Vec<u32> = a.iter().chain(b).copied().collect();
                m.sort_unstable();
                p.put(m, x.checked_mul(y)?)?;
            }
        }
        Some(p)
    }

    /// The value at a parameter vector.
    pub fn eval(&self, values: &[i64]) -> Option<i64> {
        self.0.iter().try_fold(0i64, |acc, (m, &c)| {
            let t = m
                .iter()
                .try_fold(c, |t, q| t.checked_mul(*values.get(*q as usize)?))?;
            acc.checked_add(t)
        })
    }

    /// "n^2 - n + 4", highest degree first.
    pub fn text(&self, p: &Program) -> String {
        if self.0.is_empty() {
            return "0".into();
        }
        let name = |q: u32| {
            p.params
                .get(ParamId(q).index())
                .map_or("?", |x| x.name.as_str())
        };
        let mut terms: Vec<(&Vec<u32>, i64)> = self.0.iter().map(|(m, &c)| (m, c)).collect();
        terms.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(b.0)));
        let mut out = String::new();
        for (k, (m, c)) in terms.into_iter().enumerate() {
            let mut factors: Vec<String> = Vec::new();
            let mut i = 0;
            while i < m.len() {
                let run = m[i..].iter().take_while(|&&q| q == m[i]).count();
                factors.push(if run == 1 {
                    name(m[i]).to_string()
                } else {
                    format!("{}^{run}", name(m[i]))
                });
                i += run;
            }
            let mag = c.unsigned_abs();
            let body = match (factors.is_empty(), mag) {
                (true, _) => mag.to_string(),
                (false, 1) => factors.join(" * "),
                (false, _) => format!("{mag} * {}", factors.join(" * ")),
            };
            out.push_str(match (k, c < 0) {
                (0, true) => "-",
                (0, false) => "",
                (_, true) => " - ",
                (_, false) => " + ",
            });
            out.push_str(&body);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n() -> Affine {
        Affine::var(Var::Param(ParamId(0)))
    }

    #[test]
    fn products_and_sums_expand_and_evaluate() {
        let p = crate::readback::compile("param n = 4;\nreal s;\ns = 0;\n", "a program")
            .expect("program");
        // n + n (n - 1) = n^2: the storage paper's single-assignment size.
        let a = Poly::affine(&n()).expect("affine");
        let b =
            Poly::affine(&n().checked_add(&Affine::constant(-1)).expect("n - 1")).expect("affine");
        let total = a.add(&a.mul(&b).expect("mul")).expect("add");
        assert_eq!(total.text(&p), "n^2");
        for v in [-3, 0, 1, 4, 7] {
            assert_eq!(total.eval(&[v]), Some(v * v));
        }
        // 2 (4n - 1) = 8n - 2: Example 2's rectangular form.
        let e = Poly::affine(
            &n().checked_scale(4)
                .and_then(|x| x.checked_add(&Affine::constant(-1)))
                .expect("4n - 1"),
        )
        .expect("affine");
        let r = e.mul(&Poly::constant(2)).expect("mul");
        assert_eq!(r.text(&p), "8 * n - 2");
        assert_eq!(Poly::constant(0).text(&p), "0");
        assert_eq!(Poly::constant(-1).add(&a).expect("add").text(&p), "n - 1");
    }

    #[test]
    fn counters_are_not_sizes() {
        let i = Affine::var(Var::Counter(crate::model::CounterId(0)));
        assert_eq!(Poly::affine(&i), None);
    }
}
