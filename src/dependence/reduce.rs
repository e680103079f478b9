//! Dropping the bounds of unused loop indices (digest §1.8, the "improved"
//! memo key), done exactly: a loop index in no equality whose every
//! inequality has coefficient ±1 is projected out by pairing each lower bound
//! with each upper bound. With unit coefficients this integer projection is
//! exact (`∃ integer i: L ≤ i ≤ U` ⇔ `L ≤ U` when L and U are integer-valued),
//! so the loop's non-emptiness survives while its extent does not: `j = 1 to
//! 10` and `j = 1 to 20` give the same problem. Columns no row mentions are
//! removed, so equal problems get equal keys.

use super::num::Int;
use super::problem::{coeffs, normalize_ineq, rhs, Normal, Problem, Rows};

/// The reduced problem, or `None` when nothing could be dropped.
/// `candidates[v]` marks the variables that may go (unprotected loop indices).
pub fn drop_unused(p: &Problem, candidates: &[bool]) -> Option<Problem> {
    let n = p.n();
    let mut in_eq = vec![false; n];
    for row in p.eqs.iter() {
        for (j, c) in coeffs(row).iter().enumerate() {
            in_eq[j] |= *c != 0;
        }
    }
    let mut ineqs: Option<Rows<i64>> = None;
    let mut progress = true;
    while progress {
        progress = false;
        for v in 0..n {
            if !candidates.get(v).copied().unwrap_or(false) || in_eq[v] {
                continue;
            }
            let cur = ineqs.as_ref().unwrap_or(&p.ineqs);
            let (mut lower, mut upper, mut unit) = (0usize, 0usize, true);
            for row in cur.iter() {
                match row[v] {
                    0 => {}
                    1 => upper += 1,
                    -1 => lower += 1,
                    _ => unit = false,
                }
            }
            if !unit || lower + upper == 0 || lower * upper > lower + upper {
                continue;
            }
            if let Some(next) = project(cur, v) {
                ineqs = Some(next);
                progress = true;
            }
        }
    }
    let changed = ineqs.is_some();
    let ineqs = ineqs.as_ref().unwrap_or(&p.ineqs);
    let mut used = in_eq;
    for row in ineqs.iter() {
        for (j, c) in coeffs(row).iter().enumerate() {
            used[j] |= *c != 0;
        }
    }
    let keep: Vec<usize> = (0..n).filter(|&j| used[j]).collect();
    if !changed && keep.len() == n {
        return None;
    }
    let mut out = Problem::new(keep.len());
    let mut buf = vec![0i64; keep.len()];
    for (src, dst) in [(&p.eqs, &mut out.eqs), (ineqs, &mut out.ineqs)] {
        for row in src.iter() {
            for (k, &j) in keep.iter().enumerate() {
                buf[k] = row[j];
            }
            dst.push(&buf, rhs(row));
        }
    }
    Some(out)
}

/// Eliminates `v` (all coefficients ±1); `None` on overflow.
fn project(rows: &Rows<i64>, v: usize) -> Option<Rows<i64>> {
    let n = rows.n();
    let mut out = Rows::with_capacity(n, rows.len());
    let mut infeasible = false;
    for row in rows.iter().filter(|r| r[v] == 0) {
        out.push_row(row);
    }
    for l in rows.iter().filter(|r| r[v] == -1) {
        for u in rows.iter().filter(|r| r[v] == 1) {
            let mut r = Vec::with_capacity(n + 1);
            for j in 0..=n {
                r.push(l[j].add(u[j]).ok()?);
            }
            match normalize_ineq(&mut r).ok()? {
                Normal::Constant(true) => {}
                Normal::Constant(false) => infeasible = true,
                Normal::Vars => out.push_row(&r),
            }
        }
    }
    if infeasible {
        // An empty loop: keep the contradiction as a row without variables.
        let mut zero = vec![0i64; n];
        zero.push(-1);
        out.push_row(&zero);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `for i = 1 to 10, for j = 1 to m: a[i+10] vs a[i]` over (i, j, i', j').
    fn memo_example(m: i64) -> Problem {
        let mut p = Problem::new(4);
        p.add_eq(&[1, 0, -1, 0], -10);
        for (v, hi) in [(0, 10), (1, m), (2, 10), (3, m)] {
            let mut c = [0i64; 4];
            c[v] = -1;
            p.add_le(&c, -1);
            c[v] = 1;
            p.add_le(&c, hi);
        }
        p
    }

    #[test]
    fn unused_extent_disappears() {
        let all = [true; 4];
        let a = drop_unused(&memo_example(10), &all).unwrap();
        let b = drop_unused(&memo_example(20), &all).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.n(), 2);
    }

    #[test]
    fn an_empty_unused_loop_stays_infeasible() {
        let r = drop_unused(&memo_example(0), &[true; 4]).unwrap();
        assert!(r
            .ineqs
            .iter()
            .any(|row| coeffs(row).iter().all(|&c| c == 0) && rhs(row) < 0));
    }

    #[test]
    fn protected_and_used_variables_stay() {
        assert_eq!(
            drop_unused(&memo_example(10), &[true, false, true, false]),
            None
        );
    }
}
