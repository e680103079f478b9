//! The extended GCD test (Banerjee; digest §1.2): solve the equalities alone,
//! ignoring the bounds. No integer solution means independence. Otherwise every
//! solution is `x = x0 + V·t` for free integers `t`, and the inequalities are
//! rewritten over `t` (Wolfe). This removes every equality (which the Acyclic
//! test needs) and one variable per independent equation.
//!
//! The factoring is column-wise: unimodular column operations (Euclid between
//! columns) bring `E` to echelon form `E·U = H`, then `H·y = e` is solved by
//! forward substitution. The first `rank` entries of `y` are fixed, the rest
//! are the free `t`; `x = U·y`.

use super::num::{Checked, Int};
use super::problem::{coeffs, rhs, Rows};

/// The integer solutions of a set of equalities: `x = x0 + V·t`, `t ∈ Z^k`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lattice<T> {
    n: usize,
    k: usize,
    /// `x0` (n entries) then `V` (n rows of k); empty for the identity.
    data: Vec<T>,
}

impl<T: Int> Lattice<T> {
    /// No equalities: `x = t`.
    pub fn identity(n: usize) -> Lattice<T> {
        Lattice {
            n,
            k: n,
            data: Vec::new(),
        }
    }

    fn is_identity(&self) -> bool {
        self.data.is_empty() && self.n > 0
    }

    pub fn n(&self) -> usize {
        self.n
    }

    /// The number of free variables `t`.
    pub fn k(&self) -> usize {
        self.k
    }

    pub fn x0(&self, i: usize) -> T {
        if self.data.is_empty() {
            T::ZERO
        } else {
            self.data[i]
        }
    }

    /// `V[i][j]`.
    pub fn v(&self, i: usize, j: usize) -> T {
        if self.data.is_empty() {
            if i == j {
                T::ONE
            } else {
                T::ZERO
            }
        } else {
            self.data[self.n + i * self.k + j]
        }
    }

    fn vrow(&self, i: usize) -> &[T] {
        let at = self.n + i * self.k;
        &self.data[at..at + self.k]
    }

    /// `x_a − x_b` when it is the same for every solution (a constant distance).
    pub fn difference(&self, a: usize, b: usize) -> Option<T> {
        if self.data.is_empty() {
            return (a == b).then_some(T::ZERO);
        }
        if self.vrow(a) == self.vrow(b) {
            self.x0(a).sub(self.x0(b)).ok()
        } else {
            None
        }
    }

    /// Rewrites inequalities over `x` as inequalities over `t`.
    pub fn transform(&self, ineqs: &Rows<T>) -> Checked<Rows<T>> {
        if self.is_identity() || self.n == 0 {
            return Ok(ineqs.clone());
        }
        let (n, k) = (self.n, self.k);
        let mut out: Rows<T> = Rows::zeros(k, ineqs.len());
        for (t, r) in ineqs.iter().enumerate() {
            let row = out.row_mut(t);
            let mut b = rhs(r);
            for (i, &a) in coeffs(r).iter().enumerate().take(n) {
                if a.is_zero() {
                    continue;
                }
                b = b.sub(a.mul(self.data[i])?)?;
                for (j, &vij) in self.vrow(i).iter().enumerate() {
                    if !vij.is_zero() {
                        row[j] = row[j].add(a.mul(vij)?)?;
                    }
                }
            }
            row[k] = b;
        }
        Ok(out)
    }
}

/// Solves `E x = e` over the integers: `None` when there is no integer
/// solution (the references are independent whatever the bounds).
///
/// `bounded` (bit `v`: some inequality mentions `x_v`) steers the choice of
/// pivots: among the columns with the smallest coefficient, an untouched
/// column of a variable no inequality mentions is expressed through the
/// others first, so the variables that stay free are the ones the bounds
/// mention. For `i + n = i' + 2n + 1` that eliminates the unbounded `n` and
/// leaves every bound on one variable (SVPC) instead of two.
pub fn solve<T: Int>(eqs: &Rows<T>, bounded: u64) -> Checked<Option<Lattice<T>>> {
    let n = eqs.n();
    let m = eqs.len();
    if m == 0 {
        return Ok(Some(Lattice::identity(n)));
    }
    // One buffer: `h` starts as E (m×n, row-major), `u` as the identity
    // (n×n), then the right-hand sides `e` and the fixed part `y` of the
    // solution. Every column operation is applied to `h` and `u`, so
    // E·U = H throughout.
    let mut work = vec![T::ZERO; m * n + n * n + m + n];
    let (h, rest) = work.split_at_mut(m * n);
    let (u, rest) = rest.split_at_mut(n * n);
    let (e, y) = rest.split_at_mut(m);
    for (r, row) in eqs.iter().enumerate() {
        h[r * n..(r + 1) * n].copy_from_slice(coeffs(row));
        e[r] = rhs(row);
    }
    for i in 0..n {
        u[i * n + i] = T::ONE;
    }
    // The original variable a column still is (up to sign), or `u32::MAX`.
    let mut tag: Vec<u32> = (0..n as u32).collect();
    let weight = |tag: &[u32], c: usize| match tag[c] {
        v if v < 64 => (bounded >> v) & 1,
        _ => 2,
    };
    let mut piv = 0;
    for r in 0..m {
        // Euclid among the columns piv.. of row r until one nonzero is left.
        loop {
            let mut p = None;
            let mut nonzero = 0;
            for c in piv..n {
                let v = h[r * n + c];
                if !v.is_zero() {
                    nonzero += 1;
                    let key = (v.abs()?, weight(&tag, c));
                    if p.is_none_or(|(_, best)| key < best) {
                        p = Some((c, key));
                    }
                }
            }
            let Some((p, _)) = p else { break };
            if nonzero == 1 {
                if p != piv {
                    swap_cols(h, n, r, p, piv);
                    swap_cols(u, n, 0, p, piv);
                    tag.swap(p, piv);
                }
                if h[r * n + piv].is_neg() {
                    neg_col(h, n, r, piv)?;
                    neg_col(u, n, 0, piv)?;
                }
                break;
            }
            let hp = h[r * n + p];
            for c in piv..n {
                let hc = h[r * n + c];
                if c == p || hc.is_zero() {
                    continue;
                }
                let q = hc.div_trunc(hp)?;
                sub_col(h, n, r, c, p, q)?;
                sub_col(u, n, 0, c, p, q)?;
                tag[c] = u32::MAX;
            }
        }
        // Forward substitution: the part of row r already fixed by y.
        let mut known = T::ZERO;
        for (c, &yc) in y[..piv].iter().enumerate() {
            known = known.add(h[r * n + c].mul(yc)?)?;
        }
        let rest = e[r].sub(known)?;
        if piv < n && !h[r * n + piv].is_zero() {
            let d = h[r * n + piv];
            if !rest.rem_trunc(d)?.is_zero() {
                return Ok(None);
            }
            y[piv] = rest.div_trunc(d)?;
            piv += 1;
        } else if !rest.is_zero() {
            return Ok(None);
        }
    }
    let k = n - piv;
    let mut data = vec![T::ZERO; n + n * k];
    for i in 0..n {
        let urow = &u[i * n..(i + 1) * n];
        let mut acc = T::ZERO;
        for (c, &yc) in y[..piv].iter().enumerate() {
            acc = acc.add(urow[c].mul(yc)?)?;
        }
        data[i] = acc;
        data[n + i * k..n + (i + 1) * k].copy_from_slice(&urow[piv..]);
    }
    Ok(Some(Lattice { n, k, data }))
}

fn rows_from(mat_len: usize, n: usize, from: usize) -> std::ops::Range<usize> {
    from..mat_len / n
}

fn swap_cols<T: Int>(mat: &mut [T], n: usize, from: usize, a: usize, b: usize) {
    for r in rows_from(mat.len(), n, from) {
        mat.swap(r * n + a, r * n + b);
    }
}

fn neg_col<T: Int>(mat: &mut [T], n: usize, from: usize, c: usize) -> Checked<()> {
    for r in rows_from(mat.len(), n, from) {
        mat[r * n + c] = mat[r * n + c].neg()?;
    }
    Ok(())
}

/// column `c` -= `q` · column `p`.
fn sub_col<T: Int>(mat: &mut [T], n: usize, from: usize, c: usize, p: usize, q: T) -> Checked<()> {
    for r in rows_from(mat.len(), n, from) {
        let v = mat[r * n + p];
        if !v.is_zero() {
            mat[r * n + c] = mat[r * n + c].sub(q.mul(v)?)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_equation_follows_the_gcd_rule() {
        // 2x + 4y = 3 has no integer solution; 2x + 4y = 6 does.
        assert_eq!(
            solve(&Rows::<i64>::from_slices(2, &[&[2, 4, 3]]), 0),
            Ok(None)
        );
        let l = solve(&Rows::<i64>::from_slices(2, &[&[2, 4, 6]]), 0)
            .unwrap()
            .unwrap();
        assert_eq!(l.k(), 1);
        for t in -5..=5 {
            let x: Vec<i64> = (0..2).map(|i| l.x0(i) + l.v(i, 0) * t).collect();
            assert_eq!(2 * x[0] + 4 * x[1], 6);
        }
    }

    #[test]
    fn thesis_example_distance() {
        // a[i] = a[i - 3]: i = i' - 3 over (i, i').
        let l = solve(&Rows::<i64>::from_slices(2, &[&[1, -1, -3]]), 0)
            .unwrap()
            .unwrap();
        assert_eq!(l.difference(1, 0), Some(3));
    }

    #[test]
    fn inconsistent_system_of_two_rows() {
        // x + y = 1, x + y = 2.
        assert_eq!(
            solve(&Rows::<i64>::from_slices(2, &[&[1, 1, 1], &[1, 1, 2]]), 0),
            Ok(None)
        );
        // x + y = 1, 2x + 2y = 2 is redundant but consistent.
        let l = solve(&Rows::<i64>::from_slices(2, &[&[1, 1, 1], &[2, 2, 2]]), 0)
            .unwrap()
            .unwrap();
        assert_eq!(l.k(), 1);
    }

    #[test]
    fn every_lattice_point_solves_and_the_lattice_is_complete() {
        // 3x + 5y - 7z = 1, x - z = 2, checked by enumeration of a box.
        let rows = Rows::<i64>::from_slices(3, &[&[3, 5, -7, 1], &[1, 0, -1, 2]]);
        let l = solve(&rows, 0).unwrap().unwrap();
        assert_eq!(l.k(), 1);
        let on_lattice = |x: &[i64]| {
            // x - x0 must be a multiple of the single column of V.
            let d: Vec<i64> = (0..3).map(|i| x[i] - l.x0(i)).collect();
            let j = (0..3).find(|&i| l.v(i, 0) != 0).unwrap();
            d[j] % l.v(j, 0) == 0 && (0..3).all(|i| d[i] * l.v(j, 0) == l.v(i, 0) * d[j])
        };
        for x in -20..=20i64 {
            for y in -20..=20i64 {
                for z in -20..=20i64 {
                    let sol = 3 * x + 5 * y - 7 * z == 1 && x - z == 2;
                    assert_eq!(sol, on_lattice(&[x, y, z]), "{x} {y} {z}");
                }
            }
        }
    }
}
