//! Dropping the bounds of unused loop indices (digest §1.8, the "improved"
//! memo key), done exactly: a loop index in no equality whose every
//! inequality has coefficient ±1 is projected out by pairing each lower bound
//! with each upper bound. With unit coefficients this integer projection is
//! exact (`∃ integer i: L ≤ i ≤ U` ⇔ `L ≤ U` when L and U are integer-valued),
//! so the loop's non-emptiness survives while its extent does not: `j = 1 to
//! 10` and `j = 1 to 20` give the same problem. Columns no row mentions are
//! removed, so equal problems get equal keys.

use super::num::Int;
use super::problem::{coeffs, normalize_ineq, Normal, Problem};

/// Buffers reused from one problem to the next (the improved key is built
/// for every problem, so it must not allocate).
#[derive(Debug, Default)]
pub struct Scratch {
    in_eq: Vec<bool>,
    /// Per variable: rows with coefficient +1, with -1, with any other.
    count: Vec<(u32, u32, u32)>,
    cur: Vec<i64>,
    next: Vec<i64>,
    keep: Vec<usize>,
}

/// The reduced problem, or `None` when nothing could be dropped.
/// `candidates[v]` marks the variables that may go (loop indices).
pub fn drop_unused(p: &Problem, candidates: &[bool]) -> Option<Problem> {
    let mut out = Problem::new(0);
    drop_unused_into(p, candidates, &mut Scratch::default(), &mut out).then_some(out)
}

/// [`drop_unused`] into `out`; `false` (and `out` untouched) when nothing
/// could be dropped.
pub fn drop_unused_into(
    p: &Problem,
    candidates: &[bool],
    s: &mut Scratch,
    out: &mut Problem,
) -> bool {
    let n = p.n();
    let w = n + 1;
    s.in_eq.clear();
    s.in_eq.resize(n, false);
    for row in p.eqs.iter() {
        for (j, c) in coeffs(row).iter().enumerate() {
            s.in_eq[j] |= *c != 0;
        }
    }
    // The inequalities being reduced live in `s.cur` once something changed.
    let mut changed = false;
    s.count.resize(n, (0, 0, 0));
    loop {
        let cur: &[i64] = if changed { &s.cur } else { p.ineqs.raw() };
        s.count.iter_mut().for_each(|c| *c = (0, 0, 0));
        for row in cur.chunks_exact(w) {
            for (j, &c) in coeffs(row).iter().enumerate() {
                match c {
                    0 => {}
                    1 => s.count[j].0 += 1,
                    -1 => s.count[j].1 += 1,
                    _ => s.count[j].2 += 1,
                }
            }
        }
        let eligible = (0..n).find(|&v| {
            let (upper, lower, other) = s.count[v];
            candidates.get(v).copied().unwrap_or(false)
                && !s.in_eq[v]
                && other == 0
                && upper + lower > 0
                && lower * upper <= lower + upper
        });
        let Some(v) = eligible else { break };
        s.next.clear();
        if !project(cur, w, v, &mut s.next) {
            break;
        }
        std::mem::swap(&mut s.cur, &mut s.next);
        changed = true;
    }
    let cur: &[i64] = if changed { &s.cur } else { p.ineqs.raw() };
    let mut used = std::mem::take(&mut s.in_eq);
    for row in cur.chunks_exact(w) {
        for (j, c) in coeffs(row).iter().enumerate() {
            used[j] |= *c != 0;
        }
    }
    s.keep.clear();
    s.keep.extend((0..n).filter(|&j| used[j]));
    s.in_eq = used;
    if !changed && s.keep.len() == n {
        return false;
    }
    let m = s.keep.len();
    out.eqs.reset(m);
    out.ineqs.reset(m);
    for (src, dst) in [(p.eqs.raw(), &mut out.eqs), (cur, &mut out.ineqs)] {
        for row in src.chunks_exact(w) {
            dst.push_zero();
            let to = dst.last_mut();
            for (k, &j) in s.keep.iter().enumerate() {
                to[k] = row[j];
            }
            to[m] = row[n];
        }
    }
    true
}

/// Eliminates `v` (all coefficients ±1) from the rows of width `w` in `rows`,
/// appending the result to `out`; `false` on overflow.
fn project(rows: &[i64], w: usize, v: usize, out: &mut Vec<i64>) -> bool {
    let n = w - 1;
    let mut infeasible = false;
    for row in rows.chunks_exact(w).filter(|r| r[v] == 0) {
        out.extend_from_slice(row);
    }
    for l in rows.chunks_exact(w).filter(|r| r[v] == -1) {
        for u in rows.chunks_exact(w).filter(|r| r[v] == 1) {
            let at = out.len();
            for j in 0..=n {
                match l[j].add(u[j]) {
                    Ok(x) => out.push(x),
                    Err(_) => return false,
                }
            }
            match normalize_ineq(&mut out[at..]) {
                Ok(Normal::Vars) => {}
                Ok(Normal::Constant(true)) => out.truncate(at),
                Ok(Normal::Constant(false)) => {
                    out.truncate(at);
                    infeasible = true;
                }
                Err(_) => return false,
            }
        }
    }
    if infeasible {
        // An empty loop: keep the contradiction as a row without variables.
        out.extend(std::iter::repeat_n(0, n));
        out.push(-1);
    }
    true
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
            .any(|row| coeffs(row).iter().all(|&c| c == 0) && row[row.len() - 1] < 0));
    }

    #[test]
    fn protected_and_used_variables_stay() {
        assert_eq!(
            drop_unused(&memo_example(10), &[true, false, true, false]),
            None
        );
    }
}
