//! The single-assignment baseline: fully indexed expansion (Feautrier's
//! total memory expansion; Polly's fully-indexed expansion). Every write
//! statement S gets its own array `A_S`, indexed by S's iteration vector. A
//! read whose every instance has exactly one source, always of one
//! statement, through one affine function of its iteration vector, reads
//! that array directly; a read whose instances see only the initial value
//! reads the original array; every other read needs a φ-function (a
//! run-time choice among its possible sources).
//!
//! Polly's pass gives up on an array in five situations; [`PollyCase`]
//! names them, and this baseline handles each (docs/expansion.md §5).

use super::Expansion;
use crate::dataflow::render::site_loops;
use crate::model::{ArrayId, Program, Site};
use std::collections::BTreeMap;

/// How a read reference is served in single-assignment form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadKind {
    /// Reads `A_S` of one statement through one affine function.
    Direct { stmt: String },
    /// Sees only initial values: reads the original array.
    Original,
    /// Needs a φ-function, for these reasons.
    Phi(Vec<PhiReason>),
}

/// Why a read needs a φ-function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PhiReason {
    /// Some instance may read the initial value and another (or the same) a
    /// write: the value is in the original array or in an `A_S`.
    InitialAndWrites,
    /// Its sources come from more than one statement.
    SeveralStatements,
    /// Some instance has several possible sources.
    SeveralSources,
    /// One statement, one source per instance, but no single affine function
    /// maps the read's iteration to the source's.
    NotAffine,
}

impl PhiReason {
    pub fn describe(self) -> &'static str {
        match self {
            PhiReason::InitialAndWrites => "initial value or a write",
            PhiReason::SeveralStatements => "sources in several statements",
            PhiReason::SeveralSources => "several possible sources per instance",
            PhiReason::NotAffine => "no single affine source function",
        }
    }
}

/// One read reference (a read access of a statement or condition).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaRead {
    pub site: Site,
    pub site_name: String,
    pub access: usize,
    pub array: ArrayId,
    pub instances: u64,
    pub kind: ReadKind,
}

/// The array `A_S` of one write statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaArray {
    pub array: ArrayId,
    pub stmt: String,
    /// Cells actually written: one per operation.
    pub cells: u64,
    /// A rectangular declaration: the bounding box of the iteration vectors.
    pub declared: u64,
}

/// Where Polly's fully-indexed expansion gives up on an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PollyCase {
    /// More than one statement writes it.
    SeveralWrites,
    /// A write may not happen or may write an unknown cell (unknown
    /// condition, `while`, non-affine subscript).
    MayWrite,
    /// A read sees the initial value in some instances and writes in others.
    ReadFromOriginal,
    /// A read sees a write of the same loop iteration (Polly would put both
    /// in one statement and order the read first).
    LoadAfterStore,
    /// A read has several dependences: sources in several statements or
    /// several sources per instance.
    SeveralDependences,
}

impl PollyCase {
    pub fn describe(self) -> &'static str {
        match self {
            PollyCase::SeveralWrites => "more than one write",
            PollyCase::MayWrite => "may-write",
            PollyCase::ReadFromOriginal => "read from the original array",
            PollyCase::LoadAfterStore => "load after store in one statement",
            PollyCase::SeveralDependences => "several dependences per read",
        }
    }

    /// What this baseline does instead of giving up.
    pub fn handling(self) -> &'static str {
        match self {
            PollyCase::SeveralWrites => "one array per write statement",
            PollyCase::MayWrite => "the write gets its own cell; reads that may miss it keep a φ",
            PollyCase::ReadFromOriginal => "a φ between the original array and A_S",
            PollyCase::LoadAfterStore => "σ orders the read after the write; read directly",
            PollyCase::SeveralDependences => "a φ over the possible sources",
        }
    }
}

/// The single-assignment form at the analysed sizes.
#[derive(Clone, Debug, Default)]
pub struct SaReport {
    pub arrays: Vec<SaArray>,
    pub reads: Vec<SaRead>,
    /// Per original array, the cases where Polly gives up.
    pub polly: Vec<(ArrayId, Vec<PollyCase>)>,
}

impl SaReport {
    /// Read references that need a φ-function, and their instances.
    pub fn phi_reads(&self) -> (usize, u64) {
        self.reads
            .iter()
            .filter(|r| matches!(r.kind, ReadKind::Phi(_)))
            .fold((0, 0), |(n, i), r| (n + 1, i + r.instances))
    }

    /// Cells of the single-assignment arrays of `array` (exact, declared).
    pub fn memory(&self, array: ArrayId) -> (u64, u64) {
        self.arrays
            .iter()
            .filter(|a| a.array == array)
            .fold((0, 0), |(c, d), a| (c + a.cells, d + a.declared))
    }
}

/// Per read reference, what the analysis saw.
#[derive(Default)]
struct RefStats {
    array: Option<ArrayId>,
    instances: u64,
    initial: bool,
    with_writes: bool,
    several: bool,
    sites: Vec<Site>,
    points: Vec<(Vec<i64>, Vec<i64>)>,
    load_after_store: bool,
}

/// Computes the single-assignment baseline of an expansion's σ.
pub fn single_assignment(program: &Program, exp: &Expansion) -> SaReport {
    let facts = &exp.inst.facts;
    let flow = &exp.inst.flow;
    let c = &exp.classes;
    let loops = site_loops(program);
    let stmt_arrays = super::stmt_arrays(program);

    // A_S per write statement: operations and bounding box.
    let mut per_stmt: BTreeMap<usize, (u64, Vec<(i64, i64)>)> = BTreeMap::new();
    let mut polly: BTreeMap<ArrayId, Vec<PollyCase>> = BTreeMap::new();
    for (w, &op) in c.write_ops.iter().enumerate() {
        let Site::Stmt(s) = facts.site(op) else {
            continue;
        };
        let it = facts.op_iter(op);
        let e = per_stmt
            .entry(s.index())
            .or_insert_with(|| (0, it.iter().map(|&v| (v, v)).collect()));
        e.0 += 1;
        for (b, &v) in e.1.iter_mut().zip(it) {
            *b = (b.0.min(v), b.1.max(v));
        }
        let guarded = facts.op_scope[op as usize] != crate::facts::NONE;
        if c.write_may[w] || guarded {
            if let Some(Some(a)) = stmt_arrays.get(s.index()) {
                polly.entry(*a).or_default().push(PollyCase::MayWrite);
            }
        }
    }
    let stmts = program.stmts();
    let mut arrays = Vec::new();
    let mut writers: BTreeMap<ArrayId, usize> = BTreeMap::new();
    for (&s, (cells, bbox)) in &per_stmt {
        let Some(Some(array)) = stmt_arrays.get(s) else {
            continue;
        };
        *writers.entry(*array).or_default() += 1;
        let declared = bbox
            .iter()
            .map(|&(lo, hi)| (hi - lo + 1).max(0) as u64)
            .product();
        arrays.push(SaArray {
            array: *array,
            stmt: stmts[s].label.clone(),
            cells: *cells,
            declared,
        });
    }
    for (a, n) in writers {
        if n > 1 {
            polly.entry(a).or_default().push(PollyCase::SeveralWrites);
        }
    }

    // Reads, grouped by reference.
    let mut refs: BTreeMap<(Site, usize), RefStats> = BTreeMap::new();
    for r in flow.iter() {
        let slot = r.index();
        let st = refs.entry((r.site(), r.access())).or_default();
        st.array = Some(r.array());
        st.instances += 1;
        st.initial |= r.initial();
        let srcs = flow.source_ops(slot);
        st.with_writes |= !srcs.is_empty();
        st.several |= srcs.len() > 1 || (r.initial() && !srcs.is_empty());
        let read_loops = &loops[facts.site_index(r.site())];
        for &o in srcs {
            let site = facts.site(o);
            if !st.sites.contains(&site) {
                st.sites.push(site);
            }
            let src_loops = &loops[facts.site_index(site)];
            if src_loops == read_loops && facts.op_iter(o) == r.iter() {
                st.load_after_store = true;
            }
        }
        if srcs.len() == 1 && !r.initial() && st.points.len() < 4096 {
            st.points
                .push((r.iter().to_vec(), facts.op_iter(srcs[0]).to_vec()));
        }
    }
    let mut reads = Vec::new();
    for ((site, access), st) in refs {
        let Some(array) = st.array else { continue };
        let mut reasons = Vec::new();
        if st.initial && st.with_writes {
            reasons.push(PhiReason::InitialAndWrites);
        }
        if st.sites.len() > 1 {
            reasons.push(PhiReason::SeveralStatements);
        }
        if st.several {
            reasons.push(PhiReason::SeveralSources);
        }
        if reasons.is_empty() && st.with_writes && !affine_map(&st.points) {
            reasons.push(PhiReason::NotAffine);
        }
        let kind = if !st.with_writes {
            ReadKind::Original
        } else if reasons.is_empty() {
            ReadKind::Direct {
                stmt: exp.inst.flow.site_name(st.sites[0]).to_string(),
            }
        } else {
            ReadKind::Phi(reasons.clone())
        };
        let cases = polly.entry(array).or_default();
        if reasons.contains(&PhiReason::InitialAndWrites) {
            cases.push(PollyCase::ReadFromOriginal);
        }
        if reasons.iter().any(|r| {
            matches!(
                r,
                PhiReason::SeveralStatements | PhiReason::SeveralSources | PhiReason::NotAffine
            )
        }) {
            cases.push(PollyCase::SeveralDependences);
        }
        if st.load_after_store {
            cases.push(PollyCase::LoadAfterStore);
        }
        reads.push(SaRead {
            site,
            site_name: flow.site_name(site).to_string(),
            access,
            array,
            instances: st.instances,
            kind,
        });
    }
    let polly = polly
        .into_iter()
        .map(|(a, mut v)| {
            v.sort();
            v.dedup();
            (a, v)
        })
        .filter(|(_, v)| !v.is_empty())
        .collect();
    SaReport {
        arrays,
        reads,
        polly,
    }
}

/// Whether one affine function maps every `x` to its `y`: the rank of the
/// rows `[x, 1 | y]` equals the rank of `[x, 1]` (exact integer elimination).
fn affine_map(points: &[(Vec<i64>, Vec<i64>)]) -> bool {
    let mut basis: Vec<(usize, Vec<i128>)> = Vec::new(); // (pivot column, row)
    for (x, y) in points {
        let n = x.len() + 1;
        let mut row: Vec<i128> = x.iter().map(|&v| i128::from(v)).collect();
        row.push(1);
        row.extend(y.iter().map(|&v| i128::from(v)));
        for (p, b) in &basis {
            if row.get(*p).copied().unwrap_or(0) != 0 && b.len() == row.len() {
                let (f, g) = (b[*p], row[*p]);
                for (r, &bv) in row.iter_mut().zip(b) {
                    *r = *r * f - bv * g;
                }
                normalize(&mut row);
            }
        }
        match row[..n].iter().position(|&v| v != 0) {
            Some(p) => basis.push((p, row)),
            None => {
                if row[n..].iter().any(|&v| v != 0) {
                    return false;
                }
            }
        }
    }
    true
}

fn normalize(row: &mut [i128]) {
    let g = row.iter().fold(0i128, |g, &v| gcd(g, v.abs()));
    if g > 1 {
        row.iter_mut().for_each(|v| *v /= g);
    }
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::affine_map;

    #[test]
    fn affine_maps() {
        let p = |x: &[i64], y: &[i64]| (x.to_vec(), y.to_vec());
        // y = (i, i) from x = (i): affine.
        assert!(affine_map(&[
            p(&[0], &[0, 0]),
            p(&[1], &[1, 1]),
            p(&[3], &[3, 3])
        ]));
        // y = i - 1 for i >= 1, and 7 at i = 0: not affine.
        assert!(!affine_map(&[p(&[0], &[7]), p(&[1], &[0]), p(&[2], &[1])]));
        // y = i*i: not affine.
        assert!(!affine_map(&[p(&[1], &[1]), p(&[2], &[4]), p(&[3], &[9])]));
        // Constant.
        assert!(affine_map(&[p(&[1, 2], &[5]), p(&[4, 9], &[5])]));
    }
}
