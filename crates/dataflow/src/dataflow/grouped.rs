//! σ grouped per read access: the instances of one access whose sources
//! read the same relative to the reader form one group, and a group lists its
//! reader iterations as disjoint boxes. matmul at N=128 is 4 groups, not
//! 6.3 M records. Every instance stays recoverable:
//! [`Group::instances`] and [`Source::at`] give back the per-instance σ.
//!
//! A source coordinate is relative ([`Coord::Same`]: the reader's counter at
//! that depth plus an offset) where the source and the reader sit in the same
//! loop at that depth, as in the text output, else an integer.

use super::Flow;
use crate::hash::WordHash;
use crate::model::{ArrayId, CondId, CounterId, Program, Site, StmtId};
use std::collections::HashMap;

/// One coordinate of a source's iteration vector, relative to the reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coord {
    /// The reader's coordinate at the same depth, plus this offset.
    Same(i64),
    /// This value.
    Int(i64),
}

/// A source of a group: a site, its iteration relative to the reader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub site: Site,
    pub iter: Vec<Coord>,
}

impl Source {
    /// The source's iteration vector for the reader iteration `reader`.
    pub fn at(&self, reader: &[i64]) -> Vec<i64> {
        self.iter
            .iter()
            .enumerate()
            .map(|(d, c)| match *c {
                Coord::Same(k) => reader.get(d).map_or(k, |&v| v + k),
                Coord::Int(v) => v,
            })
            .collect()
    }
}

/// A box of reader iterations: an inclusive range per coordinate.
pub type IterBox = Vec<(i64, i64)>;

/// The reader instances of one access with the same relative sources.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// Sorted by site, then by the iteration vector of each instance.
    pub sources: Vec<Source>,
    pub initial: bool,
    /// Disjoint, in lexicographic order of their lower corners.
    pub boxes: Vec<IterBox>,
    /// Reader instances in the group.
    pub count: u64,
}

impl Group {
    /// Every reader iteration of the group, in lexicographic order.
    pub fn instances(&self) -> impl Iterator<Item = Vec<i64>> + '_ {
        self.boxes.iter().flat_map(|b| BoxIter::new(b))
    }
}

/// The points of a box, lexicographically.
struct BoxIter<'a> {
    bx: &'a [(i64, i64)],
    next: Option<Vec<i64>>,
}

impl<'a> BoxIter<'a> {
    fn new(bx: &'a [(i64, i64)]) -> BoxIter<'a> {
        let empty = bx.iter().any(|&(lo, hi)| lo > hi);
        BoxIter {
            bx,
            next: (!empty).then(|| bx.iter().map(|&(lo, _)| lo).collect()),
        }
    }
}

impl Iterator for BoxIter<'_> {
    type Item = Vec<i64>;
    fn next(&mut self) -> Option<Vec<i64>> {
        let cur = self.next.take()?;
        let mut n = cur.clone();
        for d in (0..n.len()).rev() {
            if n[d] < self.bx[d].1 {
                n[d] += 1;
                self.next = Some(n);
                return Some(cur);
            }
            n[d] = self.bx[d].0;
        }
        Some(cur)
    }
}

/// The groups of one read access (a site and an access index).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessGroups {
    pub site: Site,
    pub access: usize,
    pub array: ArrayId,
    /// In order of each group's first reader instance.
    pub groups: Vec<Group>,
}

/// One access's groups in a stretch of the reads, unfinished
/// ([`Grouper::take_partial`]); as plain words ([`PartialAccess::words`])
/// it can be shipped to the process that merges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartialAccess {
    pub access: usize,
    pub array: ArrayId,
    groups: Vec<PartialGroup>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct PartialGroup {
    key: Vec<i64>,
    initial: bool,
    runs: Vec<i64>,
    count: u64,
}

impl PartialAccess {
    /// The access as words: access, array, groups, then per group its
    /// initial flag, count, key length, key, runs length, runs.
    pub fn words(&self) -> Vec<i64> {
        let mut out = vec![
            self.access as i64,
            i64::from(self.array.0),
            self.groups.len() as i64,
        ];
        for g in &self.groups {
            out.extend([i64::from(g.initial), g.count as i64, g.key.len() as i64]);
            out.extend_from_slice(&g.key);
            out.push(g.runs.len() as i64);
            out.extend_from_slice(&g.runs);
        }
        out
    }

    /// The access [`PartialAccess::words`] wrote, or None for other words.
    pub fn from_words(w: &[i64]) -> Option<PartialAccess> {
        let mut at = 0;
        let mut next = |n: usize| {
            let v = w.get(at..at + n)?;
            at += n;
            Some(v)
        };
        let head = next(3)?;
        let (access, array, n) = (head[0] as usize, head[1] as u32, head[2] as usize);
        let mut groups = Vec::with_capacity(n.min(w.len()));
        for _ in 0..n {
            let h = next(3)?;
            let (initial, count, k) = (h[0] != 0, h[1] as u64, h[2] as usize);
            let key = next(k)?.to_vec();
            let r = next(1)?[0] as usize;
            let runs = next(r)?.to_vec();
            groups.push(PartialGroup {
                key,
                initial,
                runs,
                count,
            });
        }
        Some(PartialAccess {
            access,
            array: ArrayId(array),
            groups,
        })
    }
}

struct GroupBuild {
    key: Vec<i64>,
    sources: Vec<Source>,
    initial: bool,
    /// Runs on the last coordinate: `dims - 1` prefix words, then lo, hi.
    runs: Vec<i64>,
    count: u64,
}

struct AccessBuild {
    access: usize,
    array: ArrayId,
    groups: Vec<GroupBuild>,
    index: HashMap<Vec<i64>, u32, WordHash>,
    last: u32,
}

impl AccessBuild {
    /// The access `access` among `accesses`, added when not there yet.
    fn of(accesses: &mut Vec<AccessBuild>, access: usize, array: ArrayId) -> &mut AccessBuild {
        let a = match accesses.iter().position(|b| b.access == access) {
            Some(a) => a,
            None => {
                accesses.push(AccessBuild {
                    access,
                    array,
                    groups: Vec::new(),
                    index: HashMap::default(),
                    last: 0,
                });
                accesses.len() - 1
            }
        };
        &mut accesses[a]
    }
}

/// Groups reads given one by one (each site's reads in execution order give
/// the fewest runs; any order is correct).
pub struct Grouper {
    n_stmts: usize,
    loops: Vec<Vec<CounterId>>,
    /// Per site index, its accesses under construction.
    open: Vec<Vec<AccessBuild>>,
    /// Loop entries compared to find common loop depths ([`Grouper::work`]).
    compared: u64,
    key: Vec<i64>,
}

impl Grouper {
    pub fn new(program: &Program) -> Grouper {
        let loops = crate::model::nodes::site_loops(program);
        let n_sites = loops.len();
        Grouper {
            n_stmts: program.stmts().len(),
            open: (0..n_sites).map(|_| Vec::new()).collect(),
            compared: 0,
            loops,
            key: Vec::new(),
        }
    }

    fn index(&self, site: Site) -> usize {
        match site {
            Site::Stmt(s) => s.index(),
            Site::Cond(c) => self.n_stmts + c.index(),
        }
    }

    fn site(&self, k: usize) -> Site {
        site_at(self.n_stmts, k)
    }

    /// The counters of the loops around a site, outermost first.
    pub fn loops(&self, site: Site) -> &[CounterId] {
        self.loops.get(self.index(site)).map_or(&[], Vec::as_slice)
    }

    /// The loops around both sites. Found per pair, in at most their depth:
    /// a table per reader site against every site made a program of n
    /// loops cost n² (100,000 loops: 17 s).
    fn shared_depth(&mut self, reader: usize, source: usize) -> usize {
        let (a, b) = (&self.loops[reader], &self.loops[source]);
        let n = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        self.compared += n as u64 + 1;
        n
    }

    /// Loop entries compared so far to find the loops a reader and its
    /// source share: linear in the sources grouped, whatever the number of
    /// sites.
    pub fn work(&self) -> u64 {
        self.compared
    }

    /// Adds one read of a bounded σ, as [`Grouper::read`] takes it.
    pub fn add(&mut self, r: &super::Read<'_>) {
        self.read(
            r.site(),
            r.iter(),
            r.access(),
            r.array(),
            r.writes(),
            r.initial(),
        );
    }

    /// Adds read `access` (of `array`) of operation (`site`, `iter`) with its
    /// sources, sorted by site then iteration, and whether it may read the
    /// initial value.
    pub fn read<'a>(
        &mut self,
        site: Site,
        iter: &[i64],
        access: usize,
        array: ArrayId,
        writes: impl IntoIterator<Item = (Site, &'a [i64])>,
        initial: bool,
    ) {
        let reader = self.index(site);
        let mut key = std::mem::take(&mut self.key);
        key.clear();
        key.push(i64::from(initial));
        for (s, it) in writes {
            let k = self.index(s);
            let depth = self.shared_depth(reader, k);
            key.extend([k as i64, it.len() as i64]);
            for (d, &v) in it.iter().enumerate() {
                match iter
                    .get(d)
                    .filter(|_| d < depth)
                    .and_then(|r| v.checked_sub(*r))
                {
                    Some(off) => key.extend([1, off]),
                    None => key.extend([0, v]),
                }
            }
        }
        let n_stmts = self.n_stmts;
        let b = AccessBuild::of(&mut self.open[reader], access, array);
        let g = match b.groups.get(b.last as usize) {
            Some(g) if g.key == key => b.last as usize,
            _ => match b.index.get(&key) {
                Some(&g) => g as usize,
                None => {
                    let g = b.groups.len();
                    b.index.insert(key.clone(), g as u32);
                    b.groups.push(GroupBuild {
                        sources: decode(&key, n_stmts),
                        initial,
                        key: key.clone(),
                        runs: Vec::new(),
                        count: 0,
                    });
                    g
                }
            },
        };
        b.last = g as u32;
        b.groups[g].push(iter);
        self.key = key;
    }

    /// The groups of site `site`'s accesses read so far, which it forgets;
    /// sorted by access index.
    pub fn take(&mut self, site: Site) -> Vec<AccessGroups> {
        let k = self.index(site);
        let dims = self.loops[k].len();
        let mut out: Vec<AccessGroups> = std::mem::take(&mut self.open[k])
            .into_iter()
            .map(|b| AccessGroups {
                site,
                access: b.access,
                array: b.array,
                groups: b.groups.into_iter().map(|g| g.finish(dims)).collect(),
            })
            .collect();
        out.sort_by_key(|a| a.access);
        out
    }

    /// The groups of site `site`'s accesses read so far, unfinished, which
    /// it forgets: what a stretch of the reads (consecutive in
    /// [`Flow::sorted`] order) contributes, for [`Grouper::absorb`].
    pub fn take_partial(&mut self, site: Site) -> Vec<PartialAccess> {
        let k = self.index(site);
        std::mem::take(&mut self.open[k])
            .into_iter()
            .map(|b| PartialAccess {
                access: b.access,
                array: b.array,
                groups: (b.groups.into_iter())
                    .map(|g| PartialGroup {
                        key: g.key,
                        initial: g.initial,
                        runs: g.runs,
                        count: g.count,
                    })
                    .collect(),
            })
            .collect()
    }

    /// Appends the groups of the reads of site `site` that come after every
    /// read given so far (a later stretch's [`Grouper::take_partial`]): the
    /// groups [`Grouper::take`] then gives are those of one grouper fed
    /// every read in order. Exact because a group's runs are sorted and
    /// the touching ones merged when it is finished, so runs cut at a
    /// stretch's end come out whole; groups keep the order of their first
    /// reader, the earlier stretch's first.
    pub fn absorb(&mut self, site: Site, later: Vec<PartialAccess>) {
        let n_stmts = self.n_stmts;
        let k = self.index(site);
        let accesses = &mut self.open[k];
        for p in later {
            let b = AccessBuild::of(accesses, p.access, p.array);
            for g in p.groups {
                match b.index.get(&g.key) {
                    Some(&k) => {
                        let t = &mut b.groups[k as usize];
                        t.runs.extend_from_slice(&g.runs);
                        t.count += g.count;
                    }
                    None => {
                        b.index.insert(g.key.clone(), b.groups.len() as u32);
                        b.groups.push(GroupBuild {
                            sources: decode(&g.key, n_stmts),
                            initial: g.initial,
                            key: g.key,
                            runs: g.runs,
                            count: g.count,
                        });
                    }
                }
            }
        }
    }

    /// Every site's groups, in site order.
    pub fn finish(mut self) -> Vec<AccessGroups> {
        let mut out = Vec::new();
        for k in 0..self.open.len() {
            let site = self.site(k);
            out.extend(self.take(site));
        }
        out
    }
}

/// The site of site index `k` (statements, then conditions).
fn site_at(n_stmts: usize, k: usize) -> Site {
    if k < n_stmts {
        Site::Stmt(StmtId(k as u32))
    } else {
        Site::Cond(CondId((k - n_stmts) as u32))
    }
}

/// The sources a key encodes (after the initial flag): per source its site
/// index and length, then per coordinate a tag (1 relative, 0 integer) and a
/// value.
fn decode(key: &[i64], n_stmts: usize) -> Vec<Source> {
    let mut out = Vec::new();
    let mut w = 1;
    while w + 1 < key.len() {
        let (k, dims) = (key[w] as usize, key[w + 1] as usize);
        w += 2;
        let iter = (0..dims)
            .map(|d| {
                let (tag, v) = (key[w + 2 * d], key[w + 2 * d + 1]);
                if tag == 1 {
                    Coord::Same(v)
                } else {
                    Coord::Int(v)
                }
            })
            .collect();
        w += 2 * dims;
        out.push(Source {
            site: site_at(n_stmts, k),
            iter,
        });
    }
    out
}

impl GroupBuild {
    fn push(&mut self, iter: &[i64]) {
        self.count += 1;
        let Some((&last, prefix)) = iter.split_last() else {
            return;
        };
        let w = iter.len() + 1;
        if self.runs.len() >= w {
            let at = self.runs.len() - w;
            let run = &mut self.runs[at..];
            if &run[..prefix.len()] == prefix && run[w - 1].checked_add(1) == Some(last) {
                run[w - 1] = last;
                return;
            }
        }
        self.runs.extend_from_slice(prefix);
        self.runs.extend([last, last]);
    }

    fn finish(self, dims: usize) -> Group {
        let boxes = if dims == 0 {
            if self.count > 0 {
                vec![Vec::new()]
            } else {
                Vec::new()
            }
        } else {
            let mut runs: Vec<&[i64]> = self.runs.chunks(dims + 1).collect();
            if !runs.is_sorted() {
                runs.sort_unstable();
            }
            // Runs out of order (a decreasing loop, say) may touch once sorted.
            let mut merged: Vec<Vec<i64>> = Vec::with_capacity(runs.len());
            for r in runs {
                match merged.last_mut() {
                    Some(m)
                        if m[..dims - 1] == r[..dims - 1]
                            && m[dims].checked_add(1) == Some(r[dims - 1]) =>
                    {
                        m[dims] = r[dims];
                    }
                    _ => merged.push(r.to_vec()),
                }
            }
            let refs: Vec<&[i64]> = merged.iter().map(Vec::as_slice).collect();
            boxes(&refs, 0, dims)
        };
        Group {
            sources: self.sources,
            initial: self.initial,
            boxes,
            count: self.count,
        }
    }
}

/// Boxes covering sorted, disjoint runs (prefix, lo, hi) from depth `d`:
/// consecutive values of coordinate `d` whose sub-boxes are equal merge.
fn boxes(runs: &[&[i64]], d: usize, dims: usize) -> Vec<IterBox> {
    if d + 1 == dims {
        return runs.iter().map(|r| vec![(r[dims - 1], r[dims])]).collect();
    }
    let mut levels: Vec<(i64, i64, Vec<IterBox>)> = Vec::new();
    let mut start = 0;
    while start < runs.len() {
        let v = runs[start][d];
        let end = start + runs[start..].iter().take_while(|r| r[d] == v).count();
        let sub = boxes(&runs[start..end], d + 1, dims);
        match levels.last_mut() {
            Some((_, hi, s)) if hi.checked_add(1) == Some(v) && *s == sub => *hi = v,
            _ => levels.push((v, v, sub)),
        }
        start = end;
    }
    let mut out = Vec::new();
    for (lo, hi, sub) in levels {
        for b in sub {
            let mut bx = Vec::with_capacity(dims - d);
            bx.push((lo, hi));
            bx.extend(b);
            out.push(bx);
        }
    }
    out
}

/// σ of `flow` grouped, one site at a time in site order: `each` gets the
/// accesses of a site as soon as its reads are grouped.
pub fn for_each<E>(
    program: &Program,
    flow: &Flow,
    mut each: impl FnMut(Vec<AccessGroups>) -> Result<(), E>,
) -> Result<(), E> {
    let mut g = Grouper::new(program);
    let mut current: Option<Site> = None;
    for r in flow.sorted() {
        let site = r.site();
        if let Some(c) = current.filter(|&c| c != site) {
            each(g.take(c))?;
        }
        current = Some(site);
        g.add(&r);
    }
    if let Some(c) = current {
        each(g.take(c))?;
    }
    Ok(())
}

/// σ of `flow` grouped, every access in site order.
pub fn group(program: &Program, flow: &Flow) -> Vec<AccessGroups> {
    let mut out = Vec::new();
    let _ = for_each::<()>(program, flow, |a| {
        out.extend(a);
        Ok(())
    });
    out
}
