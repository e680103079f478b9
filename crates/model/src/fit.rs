//! Exact affine fitting: the integer affine function y = a·x + b through a
//! set of integer points, if there is one (rational elimination in i128,
//! then a check of every point).

use crate::model::Var;

/// Coefficients `a` (one per coordinate of x) and the constant `b`.
pub type Fitted = (Vec<i64>, i64);

fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn normalize(row: &mut [i128]) {
    let g = row.iter().fold(0, |g, &v| gcd(g, v));
    if g > 1 {
        row.iter_mut().for_each(|v| *v /= g);
    }
}

/// The rank of an integer matrix over the rationals (fraction-free
/// elimination in i128, rows reduced by their gcd).
pub fn rank(m: &[Vec<i64>]) -> usize {
    let mut a: Vec<Vec<i128>> = (m.iter())
        .map(|r| r.iter().map(|&x| x as i128).collect())
        .collect();
    let cols = a.first().map_or(0, Vec::len);
    let mut r = 0;
    for c in 0..cols {
        let Some(p) = (r..a.len()).find(|&i| a[i][c] != 0) else {
            continue;
        };
        a.swap(r, p);
        for i in 0..a.len() {
            if i != r && a[i][c] != 0 {
                let (f, g) = (a[i][c], a[r][c]);
                let pivot = a[r].clone();
                for (x, y) in a[i].iter_mut().zip(&pivot) {
                    *x = *x * g - y * f;
                }
                normalize(&mut a[i]);
            }
        }
        r += 1;
    }
    r
}

/// Fits y = a·x + b through `points` (x, y); all x have the same length.
/// Free coefficients are 0; None when no integer solution with those free
/// values exists, or on overflow.
pub fn affine<X: AsRef<[i64]>>(points: &[(X, i64)]) -> Option<Fitted> {
    let n = points.first().map_or(0, |p| p.0.as_ref().len());
    affine_by(
        n,
        points.len(),
        |i, c| points[i].0.as_ref()[c],
        |i| points[i].1,
    )
}

/// [`affine`] over `len` points given by accessors: coordinate `c < n` of
/// point `i` is `x(i, c)`, its value `y(i)`. Lets a caller fit over a
/// subset of columns or a derived value without copying the points.
/// Every independent point enters the elimination, in order, with the
/// constant as the last column: on degenerate points the constant may be
/// the free column (see [`affine_by_lazy`]); `codegen` and `storage` were
/// validated with these choices.
pub fn affine_by(
    n: usize,
    len: usize,
    x: impl Fn(usize, usize) -> i64,
    y: impl Fn(usize) -> i64,
) -> Option<Fitted> {
    let cols = n + 1; // coefficients then constant
    let mut basis: Vec<(usize, Vec<i128>)> = Vec::new();
    for i in 0..len {
        if basis.len() == cols {
            break;
        }
        let mut row: Vec<i128> = (0..n).map(|c| x(i, c) as i128).collect();
        row.push(1);
        row.push(y(i) as i128);
        match reduce(&mut row, &basis, cols)? {
            Some(pc) => basis.push((pc, row)),
            None if row[cols] != 0 => return None,
            None => {}
        }
    }
    let sol = solve(&basis, cols)?;
    let (a, b) = (sol[..n].to_vec(), sol[n]);
    for i in 0..len {
        let mut v = b;
        for (c, coef) in a.iter().enumerate() {
            v = v.checked_add(coef.checked_mul(x(i, c))?)?;
        }
        if v != y(i) {
            return None;
        }
    }
    Some((a, b))
}

/// [`affine_by`] for many points: a point enters the elimination only when
/// the solution so far misses it (at most n + 1 do), the others cost one
/// i64 check each (eliminating every point, in i128 with a gcd per row, was
/// most of `symbolic`'s fit). The constant is the first column, so on
/// degenerate points (nussinov's i + j = n + 2 at every one) the free
/// coefficients, set to 0, are the last ones (parameters), never the
/// constant: y = i - 1 there, where the constant left free has only a
/// fractional solution.
pub fn affine_by_lazy(
    n: usize,
    len: usize,
    x: impl Fn(usize, usize) -> i64,
    y: impl Fn(usize) -> i64,
) -> Option<Fitted> {
    let cols = n + 1; // constant then coefficients
    let mut basis: Vec<(usize, Vec<i128>)> = Vec::new();
    let mut sol = vec![0i64; cols];
    let value = |sol: &[i64], i: usize| -> Option<i64> {
        let mut v = sol[0];
        for c in 0..n {
            v = v.checked_add(sol[c + 1].checked_mul(x(i, c))?)?;
        }
        Some(v)
    };
    let mut i = 0;
    while i < len {
        if value(&sol, i)? == y(i) {
            i += 1;
            continue;
        }
        let mut row: Vec<i128> = Vec::with_capacity(cols + 1);
        row.push(1);
        row.extend((0..n).map(|c| x(i, c) as i128));
        row.push(y(i) as i128);
        // A row in the span of the basis that the solution misses: the
        // points are inconsistent.
        let pc = reduce(&mut row, &basis, cols)??;
        basis.push((pc, row));
        sol = solve(&basis, cols)?;
        i = 0;
    }
    Some((sol[1..].to_vec(), sol[0]))
}

/// Eliminates `row` (`cols` coefficients then the right-hand side) against
/// `basis`: its pivot column, or None when it reduces to no coefficient;
/// None outside on overflow.
fn reduce(row: &mut [i128], basis: &[(usize, Vec<i128>)], cols: usize) -> Option<Option<usize>> {
    for (pc, b) in basis {
        let f = row[*pc];
        if f != 0 {
            let bp = b[*pc];
            for (r, bv) in row.iter_mut().zip(b) {
                *r = r.checked_mul(bp)?.checked_sub(bv.checked_mul(f)?)?;
            }
            normalize(row);
        }
    }
    Some(row[..cols].iter().position(|&v| v != 0))
}

/// Back substitution over `basis` (pivot column, row of `cols`
/// coefficients then the right-hand side; each row zero at the pivots of
/// the rows before it), free columns 0; None when a pivot does not divide
/// (no integer solution with those free values) or on overflow.
fn solve(basis: &[(usize, Vec<i128>)], cols: usize) -> Option<Vec<i64>> {
    let mut sol = vec![0i128; cols];
    for (pc, row) in basis.iter().rev() {
        let mut rhs = row[cols];
        for c in 0..cols {
            if c != *pc {
                rhs = rhs.checked_sub(row[c].checked_mul(sol[c])?)?;
            }
        }
        if rhs % row[*pc] != 0 {
            return None;
        }
        sol[*pc] = rhs / row[*pc];
    }
    sol.into_iter().map(|v| i64::try_from(v).ok()).collect()
}

/// The simplest fit: among the affine functions through `points`, one with
/// the fewest variable terms, then the fewest terms in columns from
/// `params_from` on (the parameters: samples vary them least, so a term in
/// them is the likeliest to be a coincidence of the samples, e.g. `M - N +
/// j` where `j - 1` fits because M - N = -1 at every sample), then the
/// smallest column set as a bit mask. Subsets of the first fit's size are tried only when it
/// has more than one term and at most [`MAX_COLUMNS`] columns.
pub fn simplest<X: AsRef<[i64]>>(points: &[(X, i64)], params_from: usize) -> Option<Fitted> {
    let first = affine(points)?;
    let n = first.0.len();
    let support = first.0.iter().filter(|&&c| c != 0).count();
    if support <= 1 || n > MAX_COLUMNS {
        return Some(first);
    }
    let params = |set: u32| (set >> params_from.min(31)).count_ones();
    let mut subsets: Vec<u32> = (0..1u32 << n)
        .filter(|s| (s.count_ones() as usize) < support)
        .collect();
    subsets.sort_by_key(|&s| (s.count_ones(), params(s), s));
    let mut proj: Vec<(Vec<i64>, i64)> = Vec::with_capacity(points.len());
    for set in subsets {
        proj.clear();
        proj.extend(points.iter().map(|(x, y)| {
            let x = x.as_ref();
            let v: Vec<i64> = (0..n).filter(|c| set >> c & 1 == 1).map(|c| x[c]).collect();
            (v, *y)
        }));
        if let Some((a, b)) = affine(&proj) {
            let mut full = vec![0; n];
            for (c, v) in (0..n).filter(|c| set >> c & 1 == 1).zip(a) {
                full[c] = v;
            }
            return Some((full, b));
        }
    }
    Some(first)
}

/// [`simplest`] with one column per variable of `vars`, parameters last.
pub fn simplest_over<X: AsRef<[i64]>>(points: &[(X, i64)], vars: &[Var]) -> Option<Fitted> {
    let params_from = vars.iter().position(|v| matches!(v, Var::Param(_)));
    simplest(points, params_from.unwrap_or(vars.len()))
}

/// The most columns [`simplest`] searches subsets of (2^n fits at worst).
pub const MAX_COLUMNS: usize = 10;

#[cfg(test)]
mod tests {
    use super::{affine, affine_by_lazy, simplest};

    #[test]
    fn fits_offsets_and_params() {
        // y = j - 1 over (i, j, N)
        let pts: Vec<(Vec<i64>, i64)> = [(1, 2, 4), (1, 3, 4), (2, 4, 5), (3, 2, 7)]
            .iter()
            .map(|&(i, j, n)| (vec![i, j, n], j - 1))
            .collect();
        assert_eq!(affine(&pts), Some((vec![0, 1, 0], -1)));
        // y = N
        let pts: Vec<(Vec<i64>, i64)> = [4, 5, 7].iter().map(|&n| (vec![n], n)).collect();
        assert_eq!(affine(&pts), Some((vec![1], 0)));
    }

    /// nussinov's points: i + j = n + 2 at every one, y = i - 1. With the
    /// constant free (set to 0, `affine`) the only solution is fractional:
    /// no fit; `affine_by_lazy` frees n instead.
    #[test]
    fn fits_points_on_a_hyperplane() {
        let pts: Vec<(Vec<i64>, i64)> = [(3, 3, 4), (3, 4, 5), (4, 3, 5), (4, 4, 6), (5, 5, 8)]
            .iter()
            .map(|&(i, j, n)| (vec![i, j, n], i - 1))
            .collect();
        assert_eq!(affine(&pts), None);
        let lazy = affine_by_lazy(3, pts.len(), |i, c| pts[i].0[c], |i| pts[i].1);
        assert_eq!(lazy, Some((vec![1, 0, 0], -1)));
        // Where the fit is unique both agree.
        let pts: Vec<(Vec<i64>, i64)> = [(1, 2, 4), (1, 3, 4), (2, 4, 5), (3, 2, 7)]
            .iter()
            .map(|&(i, j, n)| (vec![i, j, n], 2 * j - n + 1))
            .collect();
        let lazy = affine_by_lazy(3, pts.len(), |i, c| pts[i].0[c], |i| pts[i].1);
        assert_eq!(lazy, affine(&pts));
        assert_eq!(lazy, Some((vec![0, 2, -1], 1)));
    }

    #[test]
    fn rejects_non_affine() {
        let pts: Vec<(Vec<i64>, i64)> = [1, 2, 3].iter().map(|&x| (vec![x], x * x)).collect();
        assert_eq!(affine(&pts), None);
        let pts = vec![(vec![1], 1), (vec![1], 2)];
        assert_eq!(affine(&pts), None);
    }

    /// Samples where parameters move together: (i, j, M, N) with M - N = -1
    /// at every point; y = j - 1. `affine` returns M - N + j (free constant
    /// 0), `simplest` the one-term j - 1.
    #[test]
    fn prefers_fewest_terms() {
        let pts: Vec<(Vec<i64>, i64)> = [(2, 2, 3, 4), (3, 4, 3, 4), (2, 3, 4, 5), (5, 6, 6, 7)]
            .iter()
            .map(|&(i, j, m, n)| (vec![i, j, m, n], j - 1))
            .collect();
        let (a, _) = affine(&pts).expect("fits");
        assert!(a.iter().filter(|&&c| c != 0).count() > 1, "{a:?}");
        assert_eq!(simplest(&pts, 2), Some((vec![0, 1, 0, 0], -1)));
        // Tie on one term: a counter (i = N - 1 here) before a parameter.
        let pts: Vec<(Vec<i64>, i64)> = [(3, 4), (4, 5), (6, 7)]
            .iter()
            .map(|&(i, n)| (vec![i, n], n - 1))
            .collect();
        assert_eq!(simplest(&pts, 1), Some((vec![1, 0], 0)));
        // Nothing simpler than a genuine two-term function.
        let pts: Vec<(Vec<i64>, i64)> = [(1, 1), (2, 1), (1, 3)]
            .iter()
            .map(|&(i, j)| (vec![i, j], i + 2 * j))
            .collect();
        assert_eq!(simplest(&pts, 2), Some((vec![1, 2], 0)));
    }
}
