//! The Single Variable Per Constraint test (digest §1.3): exact, O(C+V), when
//! every constraint mentions at most one variable. Each constraint is a lower
//! or an upper bound; the system is feasible iff no variable ends with
//! `lb > ub`. Integer bounds are rounded inward (ceil for lower, floor for
//! upper).

use super::num::{Checked, Int};
use super::problem::{coeffs, rhs, Rows};

/// The tightest integer bounds seen so far for each variable; `None` is
/// unbounded.
#[derive(Clone, Debug)]
pub struct Bounds<T> {
    pub lb: Vec<Option<T>>,
    pub ub: Vec<Option<T>>,
}

impl<T: Int> Bounds<T> {
    pub fn new(n: usize) -> Bounds<T> {
        Bounds {
            lb: vec![None; n],
            ub: vec![None; n],
        }
    }

    /// Adds `a·x_v ≤ b` (`a ≠ 0`). Returns `false` when `x_v` has no integer
    /// value left.
    pub fn add(&mut self, v: usize, a: T, b: T) -> Checked<bool> {
        if a.is_pos() {
            let u = b.floor_div(a)?;
            if self.ub[v].is_none_or(|old| u < old) {
                self.ub[v] = Some(u);
            }
        } else {
            let l = b.ceil_div(a)?;
            if self.lb[v].is_none_or(|old| l > old) {
                self.lb[v] = Some(l);
            }
        }
        Ok(self.consistent(v))
    }

    pub fn consistent(&self, v: usize) -> bool {
        match (self.lb[v], self.ub[v]) {
            (Some(l), Some(u)) => l <= u,
            _ => true,
        }
    }

    /// Adds a row with at most one variable; `false` when it is violated.
    pub fn add_row(&mut self, row: &[T]) -> Checked<bool> {
        match coeffs(row).iter().position(|c| !c.is_zero()) {
            Some(v) => self.add(v, row[v], rhs(row)),
            None => Ok(!rhs(row).is_neg()),
        }
    }
}

/// `None` when some constraint has two or more variables; otherwise whether
/// the system has an integer solution.
pub fn test<T: Int>(rows: &Rows<T>) -> Checked<Option<bool>> {
    let n = rows.n();
    // Applicability first: the common case is cheap to reject.
    for row in rows.iter() {
        if coeffs(row).iter().filter(|c| !c.is_zero()).count() > 1 {
            return Ok(None);
        }
    }
    // O(C + V): one pass over the rows, the bounds on the stack when few.
    const SMALL: usize = 16;
    if n <= SMALL {
        let (mut lb, mut ub) = ([None; SMALL], [None; SMALL]);
        tightest(rows, &mut lb[..n], &mut ub[..n])
    } else {
        let (mut lb, mut ub) = (vec![None; n], vec![None; n]);
        tightest(rows, &mut lb, &mut ub)
    }
    .map(Some)
}

/// Keeps the tightest bound per variable; whether none ends with `lb > ub`.
fn tightest<T: Int>(rows: &Rows<T>, lb: &mut [Option<T>], ub: &mut [Option<T>]) -> Checked<bool> {
    for row in rows.iter() {
        let b = rhs(row);
        let Some(v) = coeffs(row).iter().position(|c| !c.is_zero()) else {
            if b.is_neg() {
                return Ok(false);
            }
            continue;
        };
        let a = row[v];
        if a.is_pos() {
            let u = b.floor_div(a)?;
            if ub[v].is_none_or(|old| u < old) {
                ub[v] = Some(u);
            }
        } else {
            let l = b.ceil_div(a)?;
            if lb[v].is_none_or(|old| l > old) {
                lb[v] = Some(l);
            }
        }
        if let (Some(l), Some(u)) = (lb[v], ub[v]) {
            if l > u {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thesis_svpc_example_is_independent() {
        // 1<=t1<=10, 1<=t2<=10, 1<=t2+9<=10, 1<=t1-10<=10 (digest §1.3).
        let mut r = Rows::<i64>::new(2);
        for row in [
            [-1, 0, -1],
            [1, 0, 10],
            [0, -1, -1],
            [0, 1, 10],
            [0, -1, 8],
            [0, 1, 1],
            [-1, 0, -11],
            [1, 0, 20],
        ] {
            r.push_row(&row);
        }
        assert_eq!(test(&r), Ok(Some(false)));
    }

    #[test]
    fn rounding_is_inward() {
        // 2x <= 3 and 2x >= 1 leave x = 1; 2x <= 1 and 2x >= 1 leave nothing.
        let mut r = Rows::<i64>::new(1);
        r.push_row(&[2, 3]);
        r.push_row(&[-2, -1]);
        assert_eq!(test(&r), Ok(Some(true)));
        let mut r = Rows::<i64>::new(1);
        r.push_row(&[2, 1]);
        r.push_row(&[-2, -1]);
        assert_eq!(test(&r), Ok(Some(false)));
    }

    #[test]
    fn two_variables_in_a_row_do_not_apply() {
        let mut r = Rows::<i64>::new(2);
        r.push_row(&[1, -1, 0]);
        assert_eq!(test(&r), Ok(None));
    }
}
