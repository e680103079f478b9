//! Fourier–Motzkin elimination (digest §1.6), the backup test: exact over the
//! reals, not over the integers. Each eliminated row is divided by the gcd of
//! its coefficients with the bound rounded down, which keeps every integer
//! point and can only tighten the real shadow.
//!
//! - Real-infeasible: independent.
//! - Otherwise back-substitute, each variable at the integer in the middle of
//!   its range. An integral sample: dependent.
//! - Extension (a): the first back-substituted variable has no integer in its
//!   range: independent (no earlier choice constrained it).
//! - Otherwise branch and bound on the variable whose range had no integer:
//!   `x ≤ ⌊hi⌋` or `x ≥ ⌊hi⌋ + 1`, each branch solved again, up to a cap on the
//!   number of nodes. Over the cap: a conservative "maybe".
//!
//! Extension (b), the implicit branch and bound through direction vectors,
//! lives in `direction`: a pair whose every direction is independent is
//! independent even when this test said "maybe" for `(*, …, *)`.

use super::num::{Checked, Int};
use super::problem::{coeffs, normalize_ineq, rhs, Normal, Rows};

/// Limits that keep the test polynomial on hostile input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most rows elimination may hold at once.
    pub max_rows: usize,
    /// The most branch-and-bound nodes (the first run counts as one).
    pub max_nodes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_rows: 2000,
            max_nodes: 64,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Independent,
    Dependent,
    /// Too many rows during elimination.
    Blowup,
    /// Branch and bound reached its node cap.
    Cap,
}

/// Decides the system; the flag says whether branch and bound was needed
/// (more than one node).
pub fn test<T: Int>(rows: &Rows<T>, limits: Limits) -> Checked<(Outcome, bool)> {
    let mut stack = vec![rows.clone()];
    let mut nodes = 0;
    while let Some(p) = stack.pop() {
        nodes += 1;
        if nodes > limits.max_nodes {
            return Ok((Outcome::Cap, true));
        }
        match sample(&p, limits.max_rows)? {
            Sample::Infeasible | Sample::NoIntegerFirst => {}
            Sample::Point(x) => {
                debug_assert!(satisfies(&p, &x).unwrap_or(true));
                return Ok((Outcome::Dependent, nodes > 1));
            }
            Sample::Stuck { var, at } => {
                let n = p.n();
                let mut unit = vec![T::ZERO; n];
                let mut low = p.clone();
                unit[var] = T::ONE;
                low.push(&unit, at);
                let mut high = p;
                unit[var] = T::ONE.neg()?;
                high.push(&unit, at.add(T::ONE)?.neg()?);
                stack.push(high);
                stack.push(low);
            }
            Sample::Blowup => return Ok((Outcome::Blowup, nodes > 1)),
        }
    }
    Ok((Outcome::Independent, nodes > 1))
}

/// Integer bounds that every integer solution gives variable `v` (from the
/// real projection, rounded inward); `None` when there is no real solution or
/// elimination blew up.
pub fn range<T: Int>(
    rows: &Rows<T>,
    v: usize,
    max_rows: usize,
) -> Checked<Option<(Option<T>, Option<T>)>> {
    let Elim::Done { rest, .. } = eliminate(rows, Some(v), max_rows)? else {
        return Ok(None);
    };
    let (mut lo, mut hi) = (None::<T>, None::<T>);
    for row in &rest {
        let a = row[v];
        let b = rhs(row);
        if a.is_pos() {
            let u = b.floor_div(a)?;
            hi = Some(hi.map_or(u, |h| h.min(u)));
        } else if a.is_neg() {
            let l = b.ceil_div(a)?;
            lo = Some(lo.map_or(l, |h| h.max(l)));
        }
    }
    Ok(Some((lo, hi)))
}

enum Sample<T> {
    Infeasible,
    NoIntegerFirst,
    Point(Vec<T>),
    /// Variable `var` had no integer in its range, which lies in `(at, at+1)`.
    Stuck {
        var: usize,
        at: T,
    },
    Blowup,
}

enum Elim<T> {
    Infeasible,
    Blowup,
    Done {
        /// Eliminated variables, in order.
        order: Vec<usize>,
        /// For each eliminated variable, the rows that mentioned it then.
        stash: Vec<Vec<Vec<T>>>,
        /// What is left: rows over the kept variable only.
        rest: Vec<Vec<T>>,
    },
}

/// Eliminates every variable except `keep`.
fn eliminate<T: Int>(rows: &Rows<T>, keep: Option<usize>, max_rows: usize) -> Checked<Elim<T>> {
    let n = rows.n();
    let mut cur: Vec<Vec<T>> = Vec::with_capacity(rows.len());
    for row in rows.iter() {
        let mut r = row.to_vec();
        match normalize_ineq(&mut r)? {
            Normal::Constant(true) => {}
            Normal::Constant(false) => return Ok(Elim::Infeasible),
            Normal::Vars => cur.push(r),
        }
    }
    dedupe(&mut cur, n);
    let mut order = Vec::new();
    let mut stash = Vec::new();
    while let Some(v) = pick(&cur, n, keep)? {
        let (with, without): (Vec<_>, Vec<_>) = cur.into_iter().partition(|r| !r[v].is_zero());
        cur = without;
        for l in with.iter().filter(|r| r[v].is_neg()) {
            for u in with.iter().filter(|r| r[v].is_pos()) {
                let (al, au) = (l[v].neg()?, u[v]);
                let mut r = Vec::with_capacity(n + 1);
                for j in 0..=n {
                    r.push(al.mul(u[j])?.add(au.mul(l[j])?)?);
                }
                match normalize_ineq(&mut r)? {
                    Normal::Constant(true) => {}
                    Normal::Constant(false) => return Ok(Elim::Infeasible),
                    Normal::Vars => cur.push(r),
                }
            }
        }
        dedupe(&mut cur, n);
        if cur.len() > max_rows {
            return Ok(Elim::Blowup);
        }
        order.push(v);
        stash.push(with);
    }
    Ok(Elim::Done {
        order,
        stash,
        rest: cur,
    })
}

/// The next variable to eliminate: one whose coefficients are all ±1 first
/// (its integer shadow is exact), then the fewest new rows.
fn pick<T: Int>(rows: &[Vec<T>], n: usize, keep: Option<usize>) -> Checked<Option<usize>> {
    let mut best: Option<(bool, usize, usize)> = None;
    for v in (0..n).filter(|&v| Some(v) != keep) {
        let (mut p, mut q, mut unit) = (0usize, 0usize, true);
        for r in rows {
            let a = r[v];
            if a.is_zero() {
                continue;
            }
            unit &= a.abs()? == T::ONE;
            if a.is_pos() {
                q += 1
            } else {
                p += 1
            }
        }
        if p + q == 0 {
            continue;
        }
        let key = (!unit, p * q, v);
        if best.is_none_or(|b| key < b) {
            best = Some(key);
        }
    }
    Ok(best.map(|(_, _, v)| v))
}

/// Keeps one row per coefficient vector, the tightest.
fn dedupe<T: Int>(rows: &mut Vec<Vec<T>>, n: usize) {
    rows.sort_unstable();
    rows.dedup_by(|later, earlier| later[..n] == earlier[..n]);
}

fn sample<T: Int>(rows: &Rows<T>, max_rows: usize) -> Checked<Sample<T>> {
    let n = rows.n();
    let (order, stash) = match eliminate(rows, None, max_rows)? {
        Elim::Infeasible => return Ok(Sample::Infeasible),
        Elim::Blowup => return Ok(Sample::Blowup),
        Elim::Done { order, stash, .. } => (order, stash),
    };
    let mut x = vec![T::ZERO; n];
    for (k, (&v, rows)) in order.iter().zip(&stash).enumerate().rev() {
        let (mut lo, mut hi) = (None::<T>, None::<T>);
        for row in rows {
            let mut rest = rhs(row);
            for (j, &a) in coeffs(row).iter().enumerate() {
                if j != v && !a.is_zero() {
                    rest = rest.sub(a.mul(x[j])?)?;
                }
            }
            let a = row[v];
            if a.is_pos() {
                let u = rest.floor_div(a)?;
                hi = Some(hi.map_or(u, |h| h.min(u)));
            } else {
                let l = rest.ceil_div(a)?;
                lo = Some(lo.map_or(l, |h| h.max(l)));
            }
        }
        x[v] = match (lo, hi) {
            (Some(l), Some(h)) if l > h => {
                return Ok(if k + 1 == order.len() {
                    Sample::NoIntegerFirst
                } else {
                    Sample::Stuck { var: v, at: h }
                });
            }
            (Some(l), Some(h)) => l.add(h.sub(l)?.floor_div(T::ONE.add(T::ONE)?)?)?,
            (Some(l), None) => l,
            (None, Some(h)) => h,
            (None, None) => T::ZERO,
        };
    }
    Ok(Sample::Point(x))
}

fn satisfies<T: Int>(rows: &Rows<T>, x: &[T]) -> Checked<bool> {
    for row in rows.iter() {
        if super::num::dot(coeffs(row), x)? > rhs(row) {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_infeasible_is_independent() {
        // x + y <= 1, x >= 1, y >= 1.
        let r = Rows::<i64>::from_slices(2, &[&[1, 1, 1], &[-1, 0, -1], &[0, -1, -1]]);
        assert_eq!(
            test(&r, Limits::default()),
            Ok((Outcome::Independent, false))
        );
    }

    #[test]
    fn real_but_not_integer_first_variable() {
        // 1 <= 3x <= 2: x in [1/3, 2/3], no integer; normalization alone sees it.
        let r = Rows::<i64>::from_slices(1, &[&[3, 2], &[-3, -1]]);
        assert_eq!(
            test(&r, Limits::default()),
            Ok((Outcome::Independent, false))
        );
    }

    #[test]
    fn branch_and_bound_decides_a_thin_slab() {
        // 2x - 3y = 1 in the box 0..3: x = 2, y = 1 is a solution.
        let slab = |a: i64, b: i64| {
            Rows::<i64>::from_slices(
                2,
                &[
                    &[a, -b, 1],
                    &[-a, b, -1],
                    &[-1, 0, 0],
                    &[1, 0, 3],
                    &[0, -1, 0],
                    &[0, 1, 3],
                ],
            )
        };
        assert_eq!(
            test(&slab(2, 3), Limits::default()).unwrap().0,
            Outcome::Dependent
        );
        // 4x - 6y = 1 has real solutions in the box but no integer one.
        assert_eq!(
            test(&slab(4, 6), Limits::default()).unwrap().0,
            Outcome::Independent
        );
    }

    #[test]
    fn range_of_a_variable() {
        // 0 <= x <= 10, y = x + 2 (two rows), so y in [2, 12].
        let r = Rows::<i64>::from_slices(2, &[&[-1, 0, 0], &[1, 0, 10], &[1, -1, -2], &[-1, 1, 2]]);
        assert_eq!(range(&r, 1, 100), Ok(Some((Some(2), Some(12)))));
    }

    /// Every verdict against enumeration of a box, on small random systems.
    #[test]
    fn agrees_with_enumeration() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: i64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % (2 * m as u64 + 1)) as i64 - m
        };
        let limits = Limits::default();
        for _ in 0..3000 {
            let n = 3;
            let mut r = Rows::<i64>::new(n);
            for v in 0..n {
                let mut unit = vec![0; n];
                unit[v] = 1;
                r.push(&unit, 4);
                unit[v] = -1;
                r.push(&unit, 4);
            }
            for _ in 0..(1 + next(1) + 2) {
                let c: Vec<i64> = (0..n).map(|_| next(4)).collect();
                r.push(&c, next(6));
            }
            let brute = (-4..=4)
                .any(|a| (-4..=4).any(|b| (-4..=4).any(|c| satisfies(&r, &[a, b, c]).unwrap())));
            match test(&r, limits).unwrap().0 {
                Outcome::Dependent => assert!(brute, "{r:?}"),
                Outcome::Independent => assert!(!brute, "{r:?}"),
                Outcome::Cap | Outcome::Blowup => {}
            }
        }
    }
}
