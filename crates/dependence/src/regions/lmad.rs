//! The Linear Memory Access Descriptor (Paek, Hoeflinger, Padua 1998;
//! docs/regions.md): a set of linearised offsets
//! `{ τ + Σ k_d·δ_d : 0 ≤ k_d·δ_d ≤ σ_d }`, with base τ, strides δ and
//! spans σ polynomials in the parameters (and the counters of loops outside
//! the summarised section). A span need not be a multiple of its stride: a
//! dimension reaches the last multiple of δ not past σ, which keeps a
//! loop with a step and symbolic bounds exact. A negative span, or a
//! negative `when` condition, makes the set empty.

use super::poly::Poly;
use crate::model::Var;
use std::collections::BTreeSet;

/// One dimension: stride δ and span σ.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Dim {
    pub stride: Poly,
    pub span: Poly,
}

impl Dim {
    pub fn new(stride: Poly, span: Poly) -> Dim {
        Dim { stride, span }
    }

    pub fn consts(stride: i64, span: i64) -> Dim {
        Dim::new(Poly::constant(stride), Poly::constant(span))
    }
}

/// An LMAD and whether it is exactly the set of offsets it stands for
/// (`false`: a superset).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Lmad {
    pub base: Poly,
    pub dims: Vec<Dim>,
    /// Conditions `e ≥ 0` for the set to be non-empty (the trip counts of
    /// loops the offset does not depend on).
    pub when: Vec<Poly>,
    pub exact: bool,
}

impl Lmad {
    pub fn new(base: Poly, dims: Vec<Dim>) -> Lmad {
        Lmad {
            base,
            dims,
            when: Vec::new(),
            exact: true,
        }
    }

    /// A constant LMAD: `(stride, span)` pairs.
    pub fn consts(base: i64, dims: &[(i64, i64)]) -> Lmad {
        Lmad::new(
            Poly::constant(base),
            dims.iter().map(|&(d, s)| Dim::consts(d, s)).collect(),
        )
    }

    pub fn inexact(mut self) -> Lmad {
        self.exact = false;
        self
    }

    /// The normal form (digest §1.3, Theorem 1): strides positive (a
    /// negative stride moves the base to the lowest offset; done when the
    /// span's quotient by the stride is known), constant spans rounded down
    /// to a multiple of their constant stride, dimensions with a zero
    /// stride or a zero span dropped, the rest sorted by stride, trivially
    /// true `when` conditions dropped.
    pub fn normalize(&self) -> Lmad {
        let mut base = self.base.clone();
        let mut dims = Vec::new();
        let mut exact = self.exact;
        let mut when = self.when.clone();
        for d in &self.dims {
            let (mut stride, mut span) = (d.stride.clone(), d.span.clone());
            if let (Some(s), Some(sp)) = (stride.as_constant(), span.as_constant()) {
                if s != 0 && sp >= 0 {
                    span = Poly::constant(sp - sp % s.abs());
                }
            }
            if stride.as_constant().is_some_and(|s| s < 0) {
                let s = stride.as_constant().unwrap_or(0);
                let moved = span
                    .as_constant()
                    .map(|sp| sp.div_euclid(-s) * s)
                    .map(Poly::constant)
                    .or_else(|| span.div_exact(-s).and_then(|q| q.scale(s)));
                match moved.and_then(|m| base.add(&m)) {
                    Some(b) if span.as_constant().is_none_or(|sp| sp >= 0) => {
                        base = b;
                        stride = Poly::constant(-s);
                    }
                    _ => {
                        // Offsets not aligned from the lowest one: every offset between.
                        match base.sub(&span) {
                            Some(b) => base = b,
                            None => return self.clone().inexact(),
                        }
                        exact = false;
                        stride = Poly::constant(1);
                    }
                }
            }
            if stride.is_zero() {
                // A zero stride adds nothing, but a negative span still empties the set.
                when.push(span);
                continue;
            }
            if span.is_zero() {
                continue;
            }
            dims.push(Dim::new(stride, span));
        }
        dims.sort_by(|a, b| {
            stride_key(&a.stride)
                .cmp(&stride_key(&b.stride))
                .then(a.cmp(b))
        });
        when.sort();
        when.dedup();
        // Drop conditions the others imply (constants ≥ 0 among them).
        let mut i = 0;
        while i < when.len() {
            let others: Vec<Poly> = when
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, w)| w.clone())
                .collect();
            if when[i].nonneg_given(&others) {
                when.remove(i);
            } else {
                i += 1;
            }
        }
        Lmad {
            base,
            dims,
            when,
            exact,
        }
    }

    /// Whether every stride, span, condition and the base are constants.
    pub fn is_constant(&self) -> bool {
        self.base.as_constant().is_some()
            && self.when.iter().all(|w| w.as_constant().is_some())
            && self
                .dims
                .iter()
                .all(|d| d.stride.as_constant().is_some() && d.span.as_constant().is_some())
    }

    /// Provably empty: a constant negative span or condition.
    pub fn is_empty(&self) -> bool {
        self.dims
            .iter()
            .any(|d| d.span.as_constant().is_some_and(|s| s < 0))
            || self
                .when
                .iter()
                .any(|w| w.as_constant().is_some_and(|c| c < 0))
    }

    /// The LMAD at concrete values of every variable it mentions.
    pub fn eval(&self, value: &dyn Fn(Var) -> i64) -> Option<Lmad> {
        self.partial(&|v| Some(value(v)))
    }

    /// The LMAD with the variables `value` knows replaced by their values.
    pub fn partial(&self, value: &dyn Fn(Var) -> Option<i64>) -> Option<Lmad> {
        let mut dims = Vec::new();
        for d in &self.dims {
            dims.push(Dim::new(d.stride.partial(value)?, d.span.partial(value)?));
        }
        let mut when = Vec::new();
        for w in &self.when {
            when.push(w.partial(value)?);
        }
        Some(
            Lmad {
                base: self.base.partial(value)?,
                dims,
                when,
                exact: self.exact,
            }
            .normalize(),
        )
    }

    /// The smallest and largest offset of a non-empty normalised LMAD
    /// (the largest is an upper bound when a span is not a multiple of
    /// its stride).
    pub fn first_last(&self) -> Option<(Poly, Poly)> {
        let mut last = self.base.clone();
        for d in &self.dims {
            last = last.add(&d.span)?;
        }
        Some((self.base.clone(), last))
    }

    /// The named variables, for rendering.
    pub fn vars(&self) -> BTreeSet<Var> {
        let mut out: BTreeSet<Var> = self.base.vars().collect();
        for d in &self.dims {
            out.extend(d.stride.vars());
            out.extend(d.span.vars());
        }
        for w in &self.when {
            out.extend(w.vars());
        }
        out
    }
}

/// Constant strides first, by value; symbolic ones after, structurally.
fn stride_key(p: &Poly) -> (bool, i64, Poly) {
    match p.as_constant() {
        Some(c) => (false, c, Poly::default()),
        None => (true, 0, p.clone()),
    }
}

/// A constant LMAD as plain numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Concrete {
    pub base: i64,
    /// `(stride, number of steps)` per dimension, strides positive.
    pub dims: Vec<(i64, i64)>,
    pub empty: bool,
}

impl Concrete {
    /// A constant, normalised LMAD as numbers; `None` when something is
    /// symbolic.
    pub fn of(l: &Lmad) -> Option<Concrete> {
        let l = l.normalize();
        if !l.is_constant() {
            return None;
        }
        let empty = l.is_empty();
        let mut dims = Vec::new();
        for d in &l.dims {
            let s = d.stride.as_constant()?;
            let sp = d.span.as_constant()?;
            if s > 0 && sp >= 0 {
                dims.push((s, sp / s));
            }
        }
        Some(Concrete {
            base: l.base.as_constant()?,
            dims,
            empty,
        })
    }

    /// How many (offset, multiplicity) points: the product of the counts.
    pub fn points(&self) -> u128 {
        if self.empty {
            return 0;
        }
        self.dims
            .iter()
            .fold(1u128, |acc, &(_, n)| acc.saturating_mul(n as u128 + 1))
    }

    /// Every offset, when there are at most `limit` points.
    pub fn offsets(&self, limit: u128) -> Option<BTreeSet<i64>> {
        if self.points() > limit {
            return None;
        }
        let mut out = BTreeSet::new();
        if self.empty {
            return Some(out);
        }
        let mut cur = vec![self.base];
        for &(s, n) in &self.dims {
            let mut next = Vec::with_capacity(cur.len() * (n as usize + 1));
            for &c in &cur {
                for k in 0..=n {
                    next.push(c.checked_add(k.checked_mul(s)?)?);
                }
            }
            next.sort_unstable();
            next.dedup();
            cur = next;
        }
        out.extend(cur);
        Some(out)
    }

    /// Whether `o` is one of the offsets (a bounded search, largest stride
    /// first); `None` past `budget` steps.
    pub fn contains(&self, o: i64, budget: &mut u64) -> Option<bool> {
        if self.empty {
            return Some(false);
        }
        let mut dims = self.dims.clone();
        dims.sort_by_key(|d| std::cmp::Reverse(d.0));
        // The most the remaining dimensions can add after each position.
        let mut reach = vec![0i128; dims.len() + 1];
        for i in (0..dims.len()).rev() {
            reach[i] = reach[i + 1] + dims[i].0 as i128 * dims[i].1 as i128;
        }
        fn go(dims: &[(i64, i64)], reach: &[i128], rest: i128, budget: &mut u64) -> Option<bool> {
            if dims.is_empty() {
                return Some(rest == 0);
            }
            if rest < 0 || rest > reach[0] {
                return Some(false);
            }
            let (s, n) = dims[0];
            let g = dims.iter().fold(0i128, |g, &(s, _)| gcd(g, s as i128));
            if g > 0 && rest % g != 0 {
                return Some(false);
            }
            let hi = (rest / s as i128).min(n as i128);
            let lo = ((rest - reach[1]).max(0) + s as i128 - 1) / s as i128;
            for k in (lo..=hi).rev() {
                *budget = budget.checked_sub(1)?;
                if go(&dims[1..], &reach[1..], rest - k * s as i128, budget)? {
                    return Some(true);
                }
            }
            Some(false)
        }
        go(&dims, &reach, o as i128 - self.base as i128, budget)
    }
}

pub fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}
