//! The Simple Loop Residue test (Pratt; Shostak without his inexact
//! extensions; digest §1.5): exact, O(C·V), when every constraint is a bound
//! `a·t ≤ c` or a difference `a·(t_i − t_j) ≤ c`, normalized to
//! `t_i − t_j ≤ ⌊c/a⌋`. Each constraint `x − y ≤ w` is an edge `y → x` of
//! weight `w` (a bound uses the special node `n0` for the constant); the system
//! is infeasible iff the graph has a negative cycle (Bellman-Ford). Integer
//! weights make a real solution an integer one, so the test is exact.

use super::num::{Checked, Int};
use super::problem::{coeffs, rhs, Rows};

/// `None` when some constraint is not a bound or a difference; otherwise
/// whether the system has an integer solution.
pub fn test<T: Int>(rows: &Rows<T>) -> Checked<Option<bool>> {
    let n = rows.n();
    let n0 = n;
    let mut edges: Vec<(usize, usize, T)> = Vec::with_capacity(rows.len());
    for row in rows.iter() {
        let mut vars = coeffs(row)
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.is_zero())
            .map(|(j, &c)| (j, c));
        let b = rhs(row);
        match (vars.next(), vars.next(), vars.next()) {
            (None, _, _) => {
                if b.is_neg() {
                    return Ok(Some(false));
                }
            }
            (Some((v, a)), None, _) => {
                if a.is_pos() {
                    // v - n0 <= floor(b/a)
                    edges.push((n0, v, b.floor_div(a)?));
                } else {
                    // v >= ceil(b/a), i.e. n0 - v <= -ceil(b/a)
                    edges.push((v, n0, b.ceil_div(a)?.neg()?));
                }
            }
            (Some((i, ai)), Some((j, aj)), None) if ai.add(aj)?.is_zero() => {
                let (x, y, a) = if ai.is_pos() { (i, j, ai) } else { (j, i, aj) };
                // a (x - y) <= b  ⇔  x - y <= floor(b/a): edge y → x.
                edges.push((y, x, b.floor_div(a)?));
            }
            _ => return Ok(None),
        }
    }
    Ok(Some(!negative_cycle(n + 1, &edges)?))
}

/// Bellman-Ford from a virtual source joined to every node by a zero edge.
fn negative_cycle<T: Int>(nodes: usize, edges: &[(usize, usize, T)]) -> Checked<bool> {
    let mut dist = vec![T::ZERO; nodes];
    for _ in 0..nodes {
        let mut changed = false;
        for &(from, to, w) in edges {
            let via = dist[from].add(w)?;
            if via < dist[to] {
                dist[to] = via;
                changed = true;
            }
        }
        if !changed {
            return Ok(false);
        }
    }
    // Still relaxing after |V| rounds (|V|-1 suffice without a negative cycle;
    // the virtual source adds one).
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dependence::problem::thesis_box;

    #[test]
    fn thesis_loop_residue_example_is_independent() {
        // t2 <= t1, 2 t1 <= 2 t3 - 7 (cycle t1 → t3 → n0 → t1 of weight -1).
        assert_eq!(
            test(&thesis_box(&[&[-1, 1, 0, 0], &[2, 0, -2, -7]])),
            Ok(Some(false))
        );
    }

    #[test]
    fn thesis_acyclic_example_is_dependent_here_too() {
        assert_eq!(
            test(&thesis_box(&[&[-1, 1, 0, 0], &[1, 0, -1, 4]])),
            Ok(Some(true))
        );
    }

    #[test]
    fn tight_cycle_of_zero_weight_is_feasible() {
        // t1 <= t2, t2 <= t1: t1 = t2 is fine.
        assert_eq!(
            test(&thesis_box(&[&[1, -1, 0, 0], &[-1, 1, 0, 0]])),
            Ok(Some(true))
        );
        // t1 <= t2 - 1, t2 <= t1: negative cycle.
        assert_eq!(
            test(&thesis_box(&[&[1, -1, 0, -1], &[-1, 1, 0, 0]])),
            Ok(Some(false))
        );
    }

    #[test]
    fn other_shapes_do_not_apply() {
        assert_eq!(test(&thesis_box(&[&[1, 2, 0, 0]])), Ok(None));
        assert_eq!(test(&thesis_box(&[&[1, 1, -1, 0]])), Ok(None));
    }
}
