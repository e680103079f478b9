//! The Acyclic test (digest §1.4), the O(C·V²) version the thesis implemented.
//! Single-variable constraints become bounds (SVPC). A variable that every
//! multi-variable constraint bounds from the same side can be set to its own
//! bound on the other side without losing solutions: if every coefficient is
//! `≥ 0` it only needs to be small, so `t := lb` (and when `lb = −∞` its
//! constraints can always be met, so they go); symmetrically `t := ub`.
//! Substituting may turn constraints into bounds; repeat. All variables gone:
//! dependent. Every remaining variable bounded from both sides: the test does
//! not apply, and the simplified system (equisatisfiable) goes to the next test.

use super::num::{Checked, Int};
use super::problem::{coeffs, support, Rows};
use super::svpc::Bounds;

#[derive(Debug, PartialEq, Eq)]
pub enum Outcome<T> {
    Independent,
    Dependent,
    /// Not applicable: the remaining constraints (multi-variable ones plus the
    /// bounds of their variables), equisatisfiable with the input.
    Stuck(Rows<T>),
}

pub fn test<T: Int>(rows: &Rows<T>) -> Checked<Outcome<T>> {
    let n = rows.n();
    let mut bounds = Bounds::new(n);
    let mut multi: Vec<Vec<T>> = Vec::new();
    for row in rows.iter() {
        if support(row) > 1 {
            multi.push(row.to_vec());
        } else if !bounds.add_row(row)? {
            return Ok(Outcome::Independent);
        }
    }
    loop {
        if multi.is_empty() {
            return Ok(Outcome::Dependent);
        }
        let Some((v, upward)) = one_sided(&multi, n) else {
            break;
        };
        // `upward`: every coefficient is positive, so v only needs to be small.
        let value = if upward { bounds.lb[v] } else { bounds.ub[v] };
        let Some(value) = value else {
            multi.retain(|row| row[v].is_zero());
            continue;
        };
        let mut kept = Vec::with_capacity(multi.len());
        for mut row in multi.drain(..) {
            let a = row[v];
            if a.is_zero() {
                kept.push(row);
                continue;
            }
            row[n] = row[n].sub(a.mul(value)?)?;
            row[v] = T::ZERO;
            if support(&row) > 1 {
                kept.push(row);
            } else if !bounds.add_row(&row)? {
                return Ok(Outcome::Independent);
            }
        }
        multi = kept;
    }
    let mut out = Rows::with_capacity(n, multi.len() + 2 * n);
    let mut used = vec![false; n];
    for row in &multi {
        for (j, c) in coeffs(row).iter().enumerate() {
            used[j] |= !c.is_zero();
        }
        out.push_row(row);
    }
    let mut unit = vec![T::ZERO; n];
    for v in (0..n).filter(|&v| used[v]) {
        if let Some(u) = bounds.ub[v] {
            unit[v] = T::ONE;
            out.push(&unit, u);
        }
        if let Some(l) = bounds.lb[v] {
            unit[v] = T::ONE.neg()?;
            out.push(&unit, l.neg()?);
        }
        unit[v] = T::ZERO;
    }
    Ok(Outcome::Stuck(out))
}

/// A variable every multi-variable row mentioning it bounds from one side:
/// `(v, true)` when all its coefficients are positive, `(v, false)` when all
/// are negative.
fn one_sided<T: Int>(multi: &[Vec<T>], n: usize) -> Option<(usize, bool)> {
    (0..n).find_map(|v| {
        let (mut pos, mut neg) = (false, false);
        for row in multi {
            pos |= row[v].is_pos();
            neg |= row[v].is_neg();
        }
        match (pos, neg) {
            (true, false) => Some((v, true)),
            (false, true) => Some((v, false)),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dependence::problem::thesis_box;

    #[test]
    fn thesis_acyclic_example_is_dependent() {
        // t2 <= t1, t1 <= t3 + 4.
        let r = thesis_box(&[&[-1, 1, 0, 0], &[1, 0, -1, 4]]);
        assert_eq!(test(&r), Ok(Outcome::Dependent));
    }

    #[test]
    fn thesis_loop_residue_example_is_independent_already_here() {
        // t2 <= t1, 2 t1 <= 2 t3 - 7: no cycle, so the Acyclic test decides.
        let r = thesis_box(&[&[-1, 1, 0, 0], &[2, 0, -2, -7]]);
        assert_eq!(test(&r), Ok(Outcome::Independent));
    }

    #[test]
    fn a_cycle_is_stuck() {
        // t1 <= t2 and t2 <= t1 + 1: each variable bounded from both sides.
        let r = thesis_box(&[&[1, -1, 0, 0], &[-1, 1, 0, 1]]);
        match test(&r).unwrap() {
            Outcome::Stuck(s) => assert_eq!(s.len(), 2 + 4),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unbounded_side_drops_constraints() {
        // x - y <= 3 with y >= 0 only: x can go to -inf.
        let r = Rows::<i64>::from_slices(2, &[&[1, -1, 3], &[0, -1, 0]]);
        assert_eq!(test(&r), Ok(Outcome::Dependent));
    }
}
