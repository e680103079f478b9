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
    /// Per variable: live rows with coefficient +1, with -1, with any other.
    count: Vec<(u32, u32, u32)>,
    rows: Vec<i64>,
    alive: Vec<bool>,
    lows: Vec<usize>,
    ups: Vec<usize>,
    keep: Vec<usize>,
}

/// The reduced problem, or `None` when nothing could be dropped.
/// `candidates[v]` marks the variables that may go (loop indices).
pub fn drop_unused(p: &Problem, candidates: &[bool]) -> Option<Problem> {
    let mut out = Problem::new(0);
    drop_unused_into(p, candidates, &mut Scratch::default(), &mut out).then_some(out)
}

/// Adds (or removes) a row's coefficients to the per-variable counts.
fn tally(count: &mut [(u32, u32, u32)], row: &[i64], add: bool) {
    for (j, &c) in coeffs(row).iter().enumerate() {
        let slot = match c {
            0 => continue,
            1 => &mut count[j].0,
            -1 => &mut count[j].1,
            _ => &mut count[j].2,
        };
        if add {
            *slot += 1;
        } else {
            *slot -= 1;
        }
    }
}

impl Scratch {
    fn eligible(&self, candidates: &[bool]) -> Option<usize> {
        (0..self.count.len()).find(|&v| {
            let (upper, lower, other) = self.count[v];
            candidates.get(v).copied().unwrap_or(false)
                && !self.in_eq[v]
                && other == 0
                && upper + lower > 0
                && lower * upper <= lower + upper
        })
    }
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
    s.count.clear();
    s.count.resize(n, (0, 0, 0));
    for row in p.ineqs.iter() {
        tally(&mut s.count, row, true);
    }
    let mut changed = false;
    if s.eligible(candidates).is_some() {
        // Rows are only ever appended; a projected row is marked dead.
        s.rows.clear();
        s.rows.extend_from_slice(p.ineqs.raw());
        s.alive.clear();
        s.alive.resize(p.ineqs.len(), true);
        while let Some(v) = s.eligible(candidates) {
            if !project(s, w, v) {
                break;
            }
            changed = true;
        }
    }
    // Columns some live row (or equality) still mentions.
    let mut used = std::mem::take(&mut s.in_eq);
    let live = |s: &Scratch, k: usize| !changed || s.alive[k];
    let ineqs: &[i64] = if changed { &s.rows } else { p.ineqs.raw() };
    for (k, row) in ineqs.chunks_exact(w).enumerate() {
        if live(s, k) {
            for (j, c) in coeffs(row).iter().enumerate() {
                used[j] |= *c != 0;
            }
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
    for row in p.eqs.iter() {
        copy_kept(row, &s.keep, &mut out.eqs);
    }
    for (k, row) in ineqs.chunks_exact(w).enumerate() {
        if live(s, k) {
            copy_kept(row, &s.keep, &mut out.ineqs);
        }
    }
    true
}

fn copy_kept(row: &[i64], keep: &[usize], to: &mut super::problem::Rows<i64>) {
    to.push_zero();
    let dst = to.last_mut();
    for (k, &j) in keep.iter().enumerate() {
        dst[k] = row[j];
    }
    dst[keep.len()] = row[row.len() - 1];
}

/// Eliminates `v` (all its coefficients ±1) from the live rows of width `w`:
/// every lower bound plus every upper bound, appended; the originals die.
/// `false` on overflow (nothing changed).
fn project(s: &mut Scratch, w: usize, v: usize) -> bool {
    let n = w - 1;
    s.lows.clear();
    s.ups.clear();
    for k in 0..s.alive.len() {
        if s.alive[k] {
            match s.rows[k * w + v] {
                -1 => s.lows.push(k),
                1 => s.ups.push(k),
                _ => {}
            }
        }
    }
    let before = s.rows.len();
    let mut infeasible = false;
    for &l in &s.lows {
        for &u in &s.ups {
            let at = s.rows.len();
            for j in 0..=n {
                match s.rows[l * w + j].add(s.rows[u * w + j]) {
                    Ok(x) => s.rows.push(x),
                    Err(_) => {
                        s.rows.truncate(before);
                        return false;
                    }
                }
            }
            match normalize_ineq(&mut s.rows[at..]) {
                Ok(Normal::Vars) => {}
                Ok(Normal::Constant(true)) => s.rows.truncate(at),
                Ok(Normal::Constant(false)) => {
                    s.rows.truncate(at);
                    infeasible = true;
                }
                Err(_) => {
                    s.rows.truncate(before);
                    return false;
                }
            }
        }
    }
    if infeasible {
        // An empty loop: keep the contradiction as a row without variables.
        s.rows.extend(std::iter::repeat_n(0, n));
        s.rows.push(-1);
    }
    let (lows, ups) = (std::mem::take(&mut s.lows), std::mem::take(&mut s.ups));
    for &k in lows.iter().chain(&ups) {
        s.alive[k] = false;
        tally(&mut s.count, &s.rows[k * w..(k + 1) * w], false);
    }
    (s.lows, s.ups) = (lows, ups);
    let added = (s.rows.len() - before) / w;
    for k in 0..added {
        s.alive.push(true);
        let at = before + k * w;
        tally(&mut s.count, &s.rows[at..at + w], true);
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
