//! The exit reads of a file's kernels, gathered from every process of a
//! spread dd run (`dataflow::dd::Cluster::spread`, docs/scaling.md).
//!
//! σ across kernels ([`super::resolve::Resolver`]) resolves a read that
//! reaches its kernel's entry write of a cell through an earlier kernel's
//! exit read of that cell. Spread, a process holds σ of its own stretch's
//! readers only, and a kernel's exit reads come at its end, in the last
//! stretches. So, once every kernel is analysed, each process sends the
//! exit reads it holds of every kernel but the last, and every process
//! gets all of them (`dataflow::merge::Merger::all_gather`): one table of
//! O(cells written) per process, whatever its stretch.

use super::kernel::{Augmented, Role};
use super::{kernel_flow, Kernel};
use crate::dataflow::Flow;
use crate::hash::WordHash;
use crate::model::{CondId, Site, StmtId};
use std::collections::HashMap;

/// One exit read's sources, in its kernel's local ids.
#[derive(Debug, PartialEq, Eq)]
pub struct Exit {
    pub initial: bool,
    pub writes: Vec<(Site, Vec<i64>)>,
}

/// Every exit read of a file's kernels but the last, by kernel, exit
/// statement and cell.
#[derive(Debug, Default)]
pub struct Exits {
    /// By `[kernel, exit statement, cell..]`.
    table: HashMap<Vec<i64>, Exit, WordHash>,
    key: Vec<i64>,
}

impl Exits {
    /// The exit read of `cell` by statement `exit` of kernel `k`, if the
    /// kernel wrote the cell (only those cells have exit reads).
    pub fn get(&mut self, k: usize, exit: StmtId, cell: &[i64]) -> Option<&Exit> {
        self.key.clear();
        self.key.extend([k as i64, i64::from(exit.0)]);
        self.key.extend_from_slice(cell);
        self.table.get(self.key.as_slice())
    }

    /// The exit reads of the words of every process ([`words`]); `None`
    /// when some words are malformed.
    pub fn from_words(all: &[Vec<i64>]) -> Option<Exits> {
        let mut out = Exits::default();
        for words in all {
            let mut w = words.as_slice();
            while !w.is_empty() {
                let (key, exit) = decode(&mut w)?;
                out.table.insert(key, exit);
            }
        }
        Some(out)
    }
}

/// Takes `n` words off the front of `w`.
fn take<'a>(w: &mut &'a [i64], n: usize) -> Option<&'a [i64]> {
    let (head, tail) = w.split_at_checked(n)?;
    *w = tail;
    Some(head)
}

fn len(w: &mut &[i64]) -> Option<usize> {
    usize::try_from(*take(w, 1)?.first()?).ok()
}

/// One exit read: `[kernel, exit, n, cell (n words), initial, m, then m
/// times (site, n, iteration vector (n words))]`; a condition site is
/// written `-1 - id` (exit reads are read by statements, so never).
fn decode(w: &mut &[i64]) -> Option<(Vec<i64>, Exit)> {
    let head = take(w, 2)?;
    let n = len(w)?;
    let mut key = head.to_vec();
    key.extend_from_slice(take(w, n)?);
    let initial = *take(w, 1)?.first()? != 0;
    let m = len(w)?;
    let mut writes = Vec::with_capacity(m.min(1 << 16));
    for _ in 0..m {
        let s = *take(w, 1)?.first()?;
        let site = match u32::try_from(s) {
            Ok(s) => Site::Stmt(StmtId(s)),
            Err(_) => Site::Cond(CondId(u32::try_from(-1 - s).ok()?)),
        };
        let n = len(w)?;
        writes.push((site, take(w, n)?.to_vec()));
    }
    Some((key, Exit { initial, writes }))
}

/// The exit reads this process holds of `kernels` but the last, as words
/// ([`Exits::from_words`]). Kernels whose σ failed are left out (the
/// caller checks them first).
pub fn words(db: &dyn salsa::Database, kernels: &[Kernel<'_>]) -> Vec<i64> {
    let mut out = Vec::new();
    let earlier = kernels.len().saturating_sub(1);
    for (k, &kernel) in kernels[..earlier].iter().enumerate() {
        let kf = kernel_flow(db, kernel);
        if let Ok(flow) = &kf.result {
            kernel_words(k, &kf.augmented, flow, &mut out);
        }
    }
    out
}

fn kernel_words(k: usize, aug: &Augmented, flow: &Flow, out: &mut Vec<i64>) {
    let exit = |site| matches!(site, Site::Stmt(s) if matches!(aug.role(s), Role::Exit(_)));
    // The exit reads run last: no index of the whole flow by site needed.
    let last: Vec<_> = flow.iter().rev().take_while(|r| exit(r.site())).collect();
    for read in last.into_iter().rev() {
        let Site::Stmt(s) = read.site() else {
            continue;
        };
        let cell = read.iter();
        out.extend([k as i64, i64::from(s.0), cell.len() as i64]);
        out.extend_from_slice(cell);
        out.push(i64::from(read.initial()));
        let at = out.len();
        out.push(0);
        for (site, iter) in read.writes() {
            out.push(match site {
                Site::Stmt(s) => i64::from(s.0),
                Site::Cond(c) => -1 - i64::from(c.0),
            });
            out.push(iter.len() as i64);
            out.extend_from_slice(iter);
            out[at] += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_read_back() {
        let mut words = Vec::new();
        // Kernel 0, exit statement 4, cell [2, 3], two writes.
        words.extend([0, 4, 2, 2, 3, 0, 2, 1, 2, 2, 3, 1, 1, 7]);
        // Kernel 1, exit statement 9, cell [5], the initial value.
        words.extend([1, 9, 1, 5, 1, 0]);
        let mut ex = Exits::from_words(&[words.clone(), Vec::new()]).expect("well formed");
        let want = Exit {
            initial: false,
            writes: vec![
                (Site::Stmt(StmtId(1)), vec![2, 3]),
                (Site::Stmt(StmtId(1)), vec![7]),
            ],
        };
        assert_eq!(ex.get(0, StmtId(4), &[2, 3]), Some(&want));
        assert_eq!(ex.get(0, StmtId(4), &[3, 2]), None);
        let init = ex.get(1, StmtId(9), &[5]).expect("kernel 1's");
        assert!(init.initial && init.writes.is_empty());
        // Cut short anywhere, the words are refused, never misread.
        for n in 1..words.len() {
            let cut = &words[..n];
            let whole = n == 14;
            assert_eq!(Exits::from_words(&[cut.to_vec()]).is_some(), whole, "{n}");
        }
    }
}
