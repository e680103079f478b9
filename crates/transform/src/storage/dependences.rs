//! The dependences under a schedule, on the original memory at the
//! analysed sizes. A flow dependence (σ: a read and its source) that a
//! parallel loop breaks makes the schedule invalid: no storage can mend it.
//! An anti or output dependence (memory reuse) is *neutral* when the
//! schedule still orders its two accesses (a sequential loop carries it, or
//! both are in one iteration of every common loop), *broken* when a parallel
//! loop would run them in any order: those are what expansion must remove.
//!
//! Memory-based dependences are taken between neighbours on a cell (a write
//! and the reads of the previous value, the previous write): the schedule's
//! order is transitive, so they decide the rest.

use super::schedule::{Breach, Kept, Order};
use crate::expansion::Expansion;
use crate::interp::format_op;
use crate::model::{ArrayId, CounterId, Program, Site};
use std::collections::BTreeMap;

/// A flow dependence a parallel loop (or an affine schedule) breaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The loop whose iterations the schedule reorders (empty when both
    /// are in one iteration of every common loop).
    pub loop_name: String,
    /// That loop (sibling loops may share its name).
    pub counter: Option<CounterId>,
    /// Under an affine schedule: the source's and the read's times.
    pub times: Option<(Vec<i64>, Vec<i64>)>,
    pub source: String,
    pub source_site: Site,
    pub read: String,
    pub read_site: Site,
    pub access: usize,
    pub array: String,
    /// How many (source, read instance) pairs the loop breaks in all.
    pub count: u64,
}

/// The kind of a memory-based dependence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Anti,
    Output,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Anti => "anti",
            Kind::Output => "output",
        }
    }
}

/// What the schedule does to a dependence.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Ordered: carried by this sequential loop.
    Carried(String),
    /// Ordered: both in one iteration of every common loop.
    Independent,
    /// Broken by this parallel loop: needs expansion.
    Broken(String),
    /// Ordered by an affine schedule: earlier at this time dimension.
    Scheduled(usize),
    /// Not ordered by an affine schedule (equal or later time): needs
    /// expansion along this loop, or renaming when none (empty).
    Reordered(String),
}

impl Verdict {
    pub fn neutral(&self) -> bool {
        !matches!(self, Verdict::Broken(_) | Verdict::Reordered(_))
    }

    /// The same verdict naming its loop `name` (`i@12`).
    pub fn renamed(&self, name: &str) -> Verdict {
        match self {
            Verdict::Carried(_) => Verdict::Carried(name.into()),
            Verdict::Broken(_) => Verdict::Broken(name.into()),
            Verdict::Reordered(l) if !l.is_empty() => Verdict::Reordered(name.into()),
            other => other.clone(),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Verdict::Carried(l) => format!("neutral (carried by sequential {l})"),
            Verdict::Independent => "neutral (loop-independent)".to_string(),
            Verdict::Broken(l) => format!("broken by parallel {l}"),
            Verdict::Scheduled(d) => format!("neutral (ordered at schedule dimension {d})"),
            Verdict::Reordered(l) if l.is_empty() => {
                "broken by the schedule (not earlier in time, one iteration of every common loop)"
                    .to_string()
            }
            Verdict::Reordered(l) => {
                format!("broken by the schedule (not earlier in time, across iterations of {l})")
            }
        }
    }
}

/// Memory-based dependences of one kind between two sites on one array,
/// with one verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dependence {
    pub kind: Kind,
    pub array: String,
    pub from: String,
    pub to: String,
    pub verdict: Verdict,
    /// The loop the verdict names (sibling loops may share its name).
    pub counter: Option<CounterId>,
    /// Instances (neighbouring pairs) at the analysed sizes.
    pub count: u64,
    /// The first pair, as operations.
    pub example: (String, String),
}

/// `S(i, j)`; named from the flow's table of sites (`Program::site_name`
/// walks every statement, too slow per instance).
pub(crate) fn op_name(exp: &Expansion, op: u32) -> String {
    let f = &exp.inst.facts;
    format_op(exp.inst.flow.site_name(f.site(op)), f.op_iter(op))
}

fn loop_name(program: &Program, c: CounterId) -> String {
    program.counter_decl(c).name.clone()
}

/// The flow dependences the schedule breaks, one per (loop, source site,
/// read site, access), the first in program order of the read first.
pub fn violations(program: &Program, exp: &Expansion, order: &Order) -> Vec<Violation> {
    let f = &exp.inst.facts;
    let mut out: Vec<Violation> = Vec::new();
    let mut seen: BTreeMap<(u32, Site, Site, usize), usize> = BTreeMap::new();
    for r in exp.inst.flow.iter() {
        let op = f.slots[r.index()].op;
        for &src in exp.inst.flow.source_ops(r.index()) {
            let Some(breach) = order.broken_by(src, op) else {
                continue;
            };
            let l = match breach {
                Breach::Loop(c) => Some(c),
                Breach::Body => None,
            };
            let key = (
                l.map_or(u32::MAX, |c| c.0),
                f.site(src),
                r.site(),
                r.access(),
            );
            match seen.get(&key) {
                Some(&k) => out[k].count += 1,
                None => {
                    seen.insert(key, out.len());
                    out.push(Violation {
                        loop_name: l.map_or(String::new(), |c| loop_name(program, c)),
                        counter: l,
                        times: order
                            .schedule
                            .affine
                            .as_ref()
                            .map(|_| (order.time(src).to_vec(), order.time(op).to_vec())),
                        source: op_name(exp, src),
                        source_site: f.site(src),
                        read: op_name(exp, op),
                        read_site: r.site(),
                        access: r.access(),
                        array: program.array_decl(r.array()).name.clone(),
                        count: 1,
                    });
                }
            }
        }
    }
    out
}

/// One access instance on its original cell: (cell, op, write).
pub(crate) fn cell_events(exp: &Expansion) -> Vec<(u32, u32, bool)> {
    let f = &exp.inst.facts;
    let mut v = Vec::with_capacity(f.n_accs());
    for x in 0..f.n_accs() as u32 {
        let cell = f.acc_cell[x as usize];
        if f.is_read(x) {
            v.push((cell, f.op(x), false));
        }
        if f.is_write(x) {
            v.push((cell, f.op(x), true));
        }
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// Visits the neighbouring pairs `(a, b, kind)` of a sorted event list on
/// one memory (per cell: reads of a value then the next write, anti; one
/// write then the next, output; a write then the reads of its value, with
/// `kind` None), in program order within each cell.
pub(crate) fn neighbours<K: Copy + Eq>(
    events: &[(K, u32, bool)],
    mut visit: impl FnMut(K, u32, u32, Option<Kind>),
) {
    let mut k = 0;
    while k < events.len() {
        let mem = events[k].0;
        let mut last_write: Option<u32> = None;
        let mut reads: Vec<u32> = Vec::new();
        while k < events.len() && events[k].0 == mem {
            let (_, op, write) = events[k];
            if write {
                for &r in &reads {
                    if r != op {
                        visit(mem, r, op, Some(Kind::Anti));
                    }
                }
                if let Some(w) = last_write {
                    visit(mem, w, op, Some(Kind::Output));
                }
                last_write = Some(op);
                reads.clear();
            } else {
                if let Some(w) = last_write {
                    if w != op {
                        visit(mem, w, op, None);
                    }
                }
                reads.push(op);
            }
            k += 1;
        }
    }
}

/// The anti and output dependences on the original memory, grouped by
/// (kind, array, sites, verdict), in order of first appearance.
pub fn memory_based(program: &Program, exp: &Expansion, order: &Order) -> Vec<Dependence> {
    let f = &exp.inst.facts;
    let events = cell_events(exp);
    let mut arrays: BTreeMap<u32, Option<ArrayId>> = BTreeMap::new();
    type Key = (Kind, u32, Site, Site, Verdict, Option<u32>);
    let mut groups: BTreeMap<Key, usize> = BTreeMap::new();
    let mut out: Vec<Dependence> = Vec::new();
    neighbours(&events, |cell, a, b, kind| {
        let Some(kind) = kind else { return };
        let array = *arrays
            .entry(cell)
            .or_insert_with(|| f.cells.locate(cell as usize).map(|(a, _)| a));
        let Some(array) = array else { return };
        let kept = order.kept(a, b);
        let counter = match kept {
            Kept::Carried(l) | Kept::Broken(Breach::Loop(l)) => Some(l),
            _ => None,
        };
        let verdict = match kept {
            Kept::Independent => Verdict::Independent,
            Kept::Carried(l) => Verdict::Carried(loop_name(program, l)),
            Kept::Time(d) => Verdict::Scheduled(d),
            Kept::Broken(Breach::Loop(l)) if order.schedule.affine.is_none() => {
                Verdict::Broken(loop_name(program, l))
            }
            Kept::Broken(Breach::Loop(l)) => Verdict::Reordered(loop_name(program, l)),
            Kept::Broken(Breach::Body) => Verdict::Reordered(String::new()),
        };
        let key = (
            kind,
            array.0,
            f.site(a),
            f.site(b),
            verdict.clone(),
            counter.map(|c| c.0),
        );
        match groups.get(&key) {
            Some(&k) => out[k].count += 1,
            None => {
                groups.insert(key, out.len());
                out.push(Dependence {
                    kind,
                    array: program.array_decl(array).name.clone(),
                    from: exp.inst.flow.site_name(f.site(a)).to_string(),
                    to: exp.inst.flow.site_name(f.site(b)).to_string(),
                    verdict,
                    counter,
                    count: 1,
                    example: (op_name(exp, a), op_name(exp, b)),
                });
            }
        }
    });
    out
}
