//! The integer problem every test reads: `A x ≤ b` plus equalities `E x = e`
//! over integer variables that are otherwise unbounded.

use super::num::{gcd, Checked, Int};
use std::fmt;

/// Constraint rows over `n` variables, stored flat: each row is `n`
/// coefficients followed by its right-hand side `b`, meaning `Σ a_j·x_j ≤ b`
/// (or `= b` when the rows are equalities).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Rows<T> {
    n: usize,
    data: Vec<T>,
}

impl<T: Int> Rows<T> {
    pub fn new(n: usize) -> Rows<T> {
        Rows {
            n,
            data: Vec::new(),
        }
    }

    pub fn with_capacity(n: usize, rows: usize) -> Rows<T> {
        Rows {
            n,
            data: Vec::with_capacity(rows * (n + 1)),
        }
    }

    /// The number of variables.
    pub fn n(&self) -> usize {
        self.n
    }

    pub fn len(&self) -> usize {
        self.data.len() / (self.n + 1)
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn row(&self, i: usize) -> &[T] {
        let w = self.n + 1;
        &self.data[i * w..(i + 1) * w]
    }

    pub fn row_mut(&mut self, i: usize) -> &mut [T] {
        let w = self.n + 1;
        &mut self.data[i * w..(i + 1) * w]
    }

    pub fn iter(&self) -> std::slice::ChunksExact<'_, T> {
        self.data.chunks_exact(self.n + 1)
    }

    /// Appends `Σ coeffs·x (≤|=) b`; `coeffs` has `n` entries.
    pub fn push(&mut self, coeffs: &[T], b: T) {
        debug_assert_eq!(coeffs.len(), self.n);
        self.data.extend_from_slice(coeffs);
        self.data.push(b);
    }

    /// Empties the rows and sets the number of variables.
    pub fn reset(&mut self, n: usize) {
        self.n = n;
        self.data.clear();
    }

    /// Appends a row of zeros (to be filled through [`Rows::last_mut`]).
    pub fn push_zero(&mut self) {
        self.data.resize(self.data.len() + self.n + 1, T::ZERO);
    }

    /// The last row.
    pub fn last_mut(&mut self) -> &mut [T] {
        let w = self.n + 1;
        let len = self.data.len();
        &mut self.data[len - w..]
    }

    /// Rows given whole (`n` coefficients then `b` each).
    pub fn from_slices(n: usize, rows: &[&[T]]) -> Rows<T> {
        let mut r = Rows::with_capacity(n, rows.len());
        for row in rows {
            r.push_row(row);
        }
        r
    }

    /// `rows` rows of zeros, to be filled through [`Rows::row_mut`].
    pub fn zeros(n: usize, rows: usize) -> Rows<T> {
        Rows {
            n,
            data: vec![T::ZERO; rows * (n + 1)],
        }
    }

    /// Appends a whole row (`n` coefficients then `b`).
    pub fn push_row(&mut self, row: &[T]) {
        debug_assert_eq!(row.len(), self.n + 1);
        self.data.extend_from_slice(row);
    }

    /// Keeps the rows for which `keep` holds.
    pub fn retain(&mut self, mut keep: impl FnMut(&[T]) -> bool) {
        let w = self.n + 1;
        let mut out = 0;
        for i in 0..self.len() {
            if keep(&self.data[i * w..(i + 1) * w]) {
                self.data.copy_within(i * w..(i + 1) * w, out * w);
                out += 1;
            }
        }
        self.data.truncate(out * w);
    }

    pub fn raw(&self) -> &[T] {
        &self.data
    }

    /// The same rows in another integer type (`i64` → `i128`).
    pub fn widen<U: Int>(&self, conv: impl Fn(T) -> U) -> Rows<U> {
        Rows {
            n: self.n,
            data: self.data.iter().map(|&v| conv(v)).collect(),
        }
    }
}

/// Coefficients of a row (without its right-hand side).
pub fn coeffs<T>(row: &[T]) -> &[T] {
    &row[..row.len() - 1]
}

/// The right-hand side of a row.
pub fn rhs<T: Copy>(row: &[T]) -> T {
    row[row.len() - 1]
}

/// How many variables a row mentions.
pub fn support<T: Int>(row: &[T]) -> usize {
    coeffs(row).iter().filter(|c| !c.is_zero()).count()
}

/// What normalizing an inequality left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Normal {
    /// No variable left: the row holds (`true`) or is violated.
    Constant(bool),
    /// The row still mentions variables.
    Vars,
}

/// Divides an inequality `a·x ≤ b` by the gcd `g` of its coefficients and
/// rounds `b/g` down: the same integer points, smaller numbers, and a tighter
/// real relaxation.
pub fn normalize_ineq<T: Int>(row: &mut [T]) -> Checked<Normal> {
    let n = row.len() - 1;
    let mut g = T::ZERO;
    for &c in &row[..n] {
        if !c.is_zero() {
            g = gcd(g, c)?;
            if g == T::ONE {
                break;
            }
        }
    }
    if g.is_zero() {
        return Ok(Normal::Constant(!row[n].is_neg()));
    }
    if g != T::ONE {
        for c in &mut row[..n] {
            *c = c.div_trunc(g)?;
        }
        row[n] = row[n].floor_div(g)?;
    }
    Ok(Normal::Vars)
}

/// An integer problem: does some integer `x` satisfy every equality and every
/// inequality? Variables have no implicit bounds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Problem {
    pub eqs: Rows<i64>,
    pub ineqs: Rows<i64>,
}

impl Problem {
    pub fn new(n: usize) -> Problem {
        Problem {
            eqs: Rows::new(n),
            ineqs: Rows::new(n),
        }
    }

    pub fn n(&self) -> usize {
        self.eqs.n()
    }

    /// `Σ coeffs·x ≤ b`.
    pub fn add_le(&mut self, coeffs: &[i64], b: i64) {
        self.ineqs.push(coeffs, b);
    }

    /// `Σ coeffs·x = b`.
    pub fn add_eq(&mut self, coeffs: &[i64], b: i64) {
        self.eqs.push(coeffs, b);
    }

    /// Is `x` a solution?
    pub fn holds(&self, x: &[i64]) -> bool {
        let value = |row: &[i64]| -> Option<i128> {
            coeffs(row).iter().zip(x).try_fold(0i128, |acc, (&a, &v)| {
                acc.checked_add(a as i128 * v as i128)
            })
        };
        self.eqs.iter().all(|r| value(r) == Some(rhs(r) as i128))
            && self
                .ineqs
                .iter()
                .all(|r| value(r).is_some_and(|v| v <= rhs(r) as i128))
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (rows, op) in [(&self.eqs, "="), (&self.ineqs, "<=")] {
            for row in rows.iter() {
                let mut first = true;
                for (j, &c) in coeffs(row).iter().enumerate() {
                    if c == 0 {
                        continue;
                    }
                    let sign = if c < 0 {
                        "-"
                    } else if first {
                        ""
                    } else {
                        "+"
                    };
                    let mag = c.unsigned_abs();
                    let sep = if first { "" } else { " " };
                    if mag == 1 {
                        write!(f, "{sep}{sign}x{j}")?;
                    } else {
                        write!(f, "{sep}{sign}{mag}x{j}")?;
                    }
                    first = false;
                }
                if first {
                    write!(f, "0")?;
                }
                writeln!(f, " {op} {}", rhs(row))?;
            }
        }
        Ok(())
    }
}

/// The box of the digest's Acyclic and Loop Residue examples,
/// `1 ≤ t1, t2 ≤ 10; 0 ≤ t3 ≤ 4`, with more rows over (t1, t2, t3).
#[cfg(test)]
pub fn thesis_box(extra: &[&[i64]]) -> Rows<i64> {
    let mut rs: Vec<&[i64]> = vec![
        &[-1, 0, 0, -1],
        &[1, 0, 0, 10],
        &[0, -1, 0, -1],
        &[0, 1, 0, 10],
        &[0, 0, -1, 0],
        &[0, 0, 1, 4],
    ];
    rs.extend_from_slice(extra);
    Rows::from_slices(3, &rs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizing_rounds_the_bound_down() {
        let mut row = [2i64, -4, 7];
        assert_eq!(normalize_ineq(&mut row), Ok(Normal::Vars));
        assert_eq!(row, [1, -2, 3]);
        let mut row = [3i64, 0, -7];
        normalize_ineq(&mut row).unwrap();
        assert_eq!(row, [1, 0, -3]);
        assert_eq!(
            normalize_ineq(&mut [0i64, 0, -1]),
            Ok(Normal::Constant(false))
        );
    }

    #[test]
    fn retain_keeps_order() {
        let mut r = Rows::<i64>::new(1);
        for k in 0..5 {
            r.push(&[k], k);
        }
        r.retain(|row| row[0] % 2 == 0);
        assert_eq!(r.raw(), &[0, 0, 2, 2, 4, 4]);
    }
}
