//! The integer boxes a group of writes covers at each sample, and their
//! hulls and volumes: what placement and the merging of groups compare.

use super::records::{counter_at, Eval, Recs, Sites};

/// A concrete box: (lo, hi) per dimension.
pub(super) type IntBox = Vec<(i64, i64)>;

/// Per sample, per group: a concrete box (None: no write there).
pub(super) type Boxes = Vec<Vec<Option<IntBox>>>;

/// Concrete box of each group at each sample (None: no write there): index
/// ranges (declared for copied-in groups, none for scratch), then κ ranges.
pub(super) fn concrete_boxes(sites: &Sites, recs: &[Recs], ev: &Eval, scratch: &[bool]) -> Boxes {
    let n = ev.kappa.len();
    recs.iter()
        .zip(&ev.groups)
        .map(|(rs, gs)| {
            let mut out: Vec<Option<Vec<(i64, i64)>>> = vec![None; n];
            for (w, &g) in rs.writes.iter().zip(gs) {
                let cells: &[(i64, i64)] = if scratch.get(g) == Some(&true) {
                    &[]
                } else if ev.copy_in[g] {
                    &rs.declared
                } else {
                    &w.at
                };
                let v = cells.iter().copied().chain(ev.kappa[g].iter().map(|&c| {
                    let k = counter_at(sites, w, c);
                    (k, k)
                }));
                // `hull` without a vector per write.
                match &mut out[g] {
                    None => out[g] = Some(v.collect()),
                    Some(a) => {
                        for (x, y) in a.iter_mut().zip(v) {
                            x.0 = x.0.min(y.0);
                            x.1 = x.1.max(y.1);
                        }
                    }
                }
            }
            out
        })
        .collect()
}

pub(super) fn hull(acc: &mut Option<Vec<(i64, i64)>>, v: &[(i64, i64)]) {
    match acc {
        None => *acc = Some(v.to_vec()),
        Some(a) => {
            for (x, y) in a.iter_mut().zip(v) {
                x.0 = x.0.min(y.0);
                x.1 = x.1.max(y.1);
            }
        }
    }
}

pub(super) fn volume(b: &Option<Vec<(i64, i64)>>) -> i64 {
    b.as_ref().map_or(0, |b| {
        b.iter()
            .map(|&(l, h)| (h.saturating_sub(l) + 1).max(0))
            .fold(1i64, |a, x| a.saturating_mul(x))
    })
}
