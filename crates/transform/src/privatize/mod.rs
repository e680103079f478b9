//! Array privatization at concrete sizes (maydan-digest.md §3.8).
//!
//! Loop L can run its iterations in parallel once array X is private to
//! each iteration when no value of X flows from one iteration of L to
//! another: no level-L data-flow vector, read off σ (value-based, so a cell
//! rewritten in every iteration before it is read does not count, where the
//! memory-based test of `expansion::parallel` sees a carried dependence).
//! A private copy then needs:
//! - **copy-in** (firstprivate) for the cells an iteration reads before
//!   writing them: σ gives them a source outside the current execution of L,
//!   or the initial value;
//! - **finalization** (lastprivate) for the cells read after L whose value L
//!   wrote: from the last iteration when every such value is written there,
//!   otherwise from the iteration that last wrote each cell (a static rule
//!   when σ names one writer, a dynamic "last writer wins" when σ has several
//!   possible ones, i.e. the writes are conditional).
//!
//! An execution of L is one iteration of the loops around it; everything is
//! per execution and then summed up per (L, X).

pub mod argmax;
pub mod document;
pub mod emit;
pub mod exact;
mod footprint;
pub mod guarded;
mod nodes;
pub mod omp;
pub mod possible;
pub mod reduction;
pub mod render;

use crate::dataflow::render::site_loops;
use crate::expansion::Expansion;
use crate::model::{ArrayId, CounterId, For, Node, Program, Var};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// What privatization does for one array in one loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// No dependence on the array crosses iterations of the loop: it stays
    /// shared.
    Shared,
    /// Memory dependences cross iterations, values do not: private copies
    /// remove them.
    Privatizable {
        /// Cells some iteration reads before writing (firstprivate).
        copy_in: BTreeSet<Vec<i64>>,
        finalization: Finalization,
    },
    /// A value flows across iterations: `source` writes it in one iteration
    /// of the loop, `read` reads it in a later one (the first such pair in
    /// execution order).
    Carried { source: Instance, read: Instance },
}

/// Where the values live after the loop come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finalization {
    /// Nothing the loop writes is read after it.
    None,
    /// Every value read after the loop is written by its last iteration
    /// (OpenMP `lastprivate`).
    LastIteration { cells: BTreeSet<Vec<i64>> },
    /// Some cell's value comes from an earlier iteration: each cell from the
    /// iteration that wrote it last. `dynamic` when that iteration depends
    /// on the data (σ gives a read several possible writers).
    LastWriter {
        cells: BTreeSet<Vec<i64>>,
        dynamic: bool,
    },
}

/// An operation: its site's name and iteration vector.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Instance {
    pub site: String,
    pub iter: Vec<i64>,
}

/// One loop and what privatization makes of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopPrivatization {
    pub counter: CounterId,
    pub name: String,
    /// Loops around it.
    pub depth: usize,
    /// Every array the loop accesses, by name.
    pub arrays: BTreeMap<String, Verdict>,
    /// Arrays whose verdict is approximate: the loop has a may-access of
    /// them (a non-affine subscript taken as any cell of its range, or a
    /// write under an unknown condition), so σ over-approximates and a
    /// "carried" or "last writer" answer may be too cautious.
    pub approximate: BTreeSet<String>,
}

impl LoopPrivatization {
    /// Parallel as it is: no array has a dependence across iterations.
    pub fn parallel_before(&self) -> bool {
        self.arrays.values().all(|v| *v == Verdict::Shared)
    }

    /// Parallel once the privatizable arrays are private.
    pub fn parallel_after(&self) -> bool {
        self.arrays
            .values()
            .all(|v| !matches!(v, Verdict::Carried { .. }))
    }

    /// The arrays to make private.
    pub fn private(&self) -> impl Iterator<Item = &str> {
        self.arrays
            .iter()
            .filter(|(_, v)| matches!(v, Verdict::Privatizable { .. }))
            .map(|(n, _)| n.as_str())
    }
}

/// What is gathered per (loop, array) while walking the access instances.
#[derive(Default)]
struct Acc {
    /// The loop accesses the array (not only a read after it).
    inside: bool,
    /// The loop has a may-access of it.
    may: bool,
    /// A memory dependence crosses iterations.
    conflict: bool,
    carried: Option<(u32, u32)>,
    copy_in: BTreeSet<u32>,
    live_out: BTreeSet<u32>,
    live_out_not_last: bool,
    dynamic: bool,
}

/// Per (execution of the loop, cell): the iterations that access it.
#[derive(Clone, Copy)]
struct Touch {
    first: i64,
    written: bool,
    spread: bool,
}

/// Every loop of the program with its arrays' verdicts, from the expansion's
/// instances (its σ and cells at the analysed sizes).
pub fn analyze(program: &Program, exp: &Expansion) -> Vec<LoopPrivatization> {
    let f = &exp.inst.facts;
    let flow = &exp.inst.flow;
    let loops_of = site_loops(program);
    let mut out = Vec::new();
    for (counter, depth) in crate::expansion::parallel::loops(program) {
        let in_loop = |op: u32| {
            loops_of
                .get(f.op_site[op as usize] as usize)
                .and_then(|v| v.get(depth))
                == Some(&counter)
        };
        // The execution of the loop an operation is in: its outer iteration.
        let outer = |op: u32| &f.op_iter(op)[..depth];
        let at = |op: u32| f.op_iter(op)[depth];
        // The last iteration of each execution: a `for` loop's from its
        // bounds (a statement need not run there), a `while` loop's the
        // last trip any operation ran.
        let bounds = find_for(&program.body, counter, &mut Vec::new());
        let params: Vec<i64> = f.params.iter().map(|&(_, v)| v).collect();
        let mut last: HashMap<&[i64], i64> = HashMap::new();
        for op in 0..f.n_ops() as u32 {
            if in_loop(op) {
                let o = outer(op);
                let e = last.entry(o).or_insert_with(|| {
                    bounds
                        .as_ref()
                        .and_then(|(l, around)| last_value(l, around, o, &params))
                        .unwrap_or(i64::MIN)
                });
                *e = (*e).max(at(op));
            }
        }
        let mut acc: BTreeMap<ArrayId, Acc> = BTreeMap::new();
        let mut touch: HashMap<(&[i64], u32), Touch> = HashMap::new();
        let array_of = |cell: u32| f.cells.locate(cell as usize).map(|(a, _)| a);
        for x in 0..f.n_accs() as u32 {
            let op = f.op(x);
            let cell = f.acc_cell[x as usize];
            let Some(array) = array_of(cell) else {
                continue;
            };
            let r_in = in_loop(op);
            if r_in {
                let a = acc.entry(array).or_default();
                a.inside = true;
                a.may |= f.is_may(x) || (f.is_read(x) && range_read(f, x));
                let t = touch.entry((outer(op), cell)).or_insert(Touch {
                    first: at(op),
                    written: false,
                    spread: false,
                });
                t.written |= f.is_write(x);
                t.spread |= t.first != at(op);
                a.conflict |= t.written && t.spread;
            }
            if !f.is_read(x) {
                continue;
            }
            let sources = flow.source_ops(f.acc_slot[x as usize] as usize);
            let ambiguous = sources.len() + usize::from(exp.inst.initial_at(x)) > 1;
            if r_in && exp.inst.initial_at(x) {
                acc.entry(array).or_default().copy_in.insert(cell);
            }
            for &w in sources {
                let w_in = in_loop(w);
                let same = w_in && r_in && outer(w) == outer(op);
                if same && at(w) != at(op) {
                    let a = acc.entry(array).or_default();
                    a.carried.get_or_insert((w, op));
                } else if r_in && !same {
                    acc.entry(array).or_default().copy_in.insert(cell);
                }
                if w_in && !same {
                    let a = acc.entry(array).or_default();
                    a.live_out.insert(cell);
                    a.live_out_not_last |= last.get(outer(w)) != Some(&at(w));
                    a.dynamic |= ambiguous;
                }
            }
        }
        let name = |op: u32| Instance {
            site: f.site_names[f.op_site[op as usize] as usize].clone(),
            iter: f.op_iter(op).to_vec(),
        };
        let index = |cells: &BTreeSet<u32>| -> BTreeSet<Vec<i64>> {
            cells
                .iter()
                .filter_map(|&c| f.cells.locate(c as usize).map(|(_, i)| i))
                .collect()
        };
        let approximate = acc
            .iter()
            .filter(|(_, a)| a.inside && a.may)
            .map(|(&array, _)| program.array_decl(array).name.clone())
            .collect();
        let arrays = acc
            .into_iter()
            // Arrays the loop itself accesses: a read after it alone does
            // not make it one of the loop's.
            .filter(|(_, a)| a.inside)
            .map(|(array, a)| {
                let verdict = match a.carried {
                    Some((w, r)) => Verdict::Carried {
                        source: name(w),
                        read: name(r),
                    },
                    None if !a.conflict => Verdict::Shared,
                    None => Verdict::Privatizable {
                        copy_in: index(&a.copy_in),
                        finalization: if a.live_out.is_empty() {
                            Finalization::None
                        } else if !a.live_out_not_last {
                            Finalization::LastIteration {
                                cells: index(&a.live_out),
                            }
                        } else {
                            Finalization::LastWriter {
                                cells: index(&a.live_out),
                                dynamic: a.dynamic,
                            }
                        },
                    },
                };
                (program.array_decl(array).name.clone(), verdict)
            })
            .collect();
        out.push(LoopPrivatization {
            counter,
            name: program.counter_decl(counter).name.clone(),
            depth,
            arrays,
            approximate,
        });
    }
    out
}

/// Whether read instance `x` is one of several of its read slot: a read of
/// a non-affine subscript, which may read any cell of its range.
fn range_read(f: &crate::facts::Facts, x: u32) -> bool {
    let slot = f.acc_slot[x as usize];
    let same = |y: usize| f.acc_slot.get(y).is_some_and(|&s| s == slot);
    (x > 0 && same(x as usize - 1)) || same(x as usize + 1)
}

/// The `for` loop of `counter` and the counters of the loops around it.
fn find_for<'p>(
    nodes: &'p [Node],
    counter: CounterId,
    around: &mut Vec<CounterId>,
) -> Option<(&'p For, Vec<CounterId>)> {
    for n in nodes {
        let found = match n {
            Node::For(f) if f.counter == counter => return Some((f, around.clone())),
            Node::For(f) => {
                around.push(f.counter);
                let r = find_for(&f.body, counter, around);
                around.pop();
                r
            }
            Node::While(w) => {
                around.push(w.counter);
                let r = find_for(&w.body, counter, around);
                around.pop();
                r
            }
            Node::If(i) => i
                .branches
                .iter()
                .map(|(_, b)| b)
                .chain(&i.otherwise)
                .find_map(|b| find_for(b, counter, around)),
            Node::Stmt(_) => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// The counter's last value in the execution whose outer counters
/// (`around`) have the values `outer`; `None` when it runs no iteration.
fn last_value(l: &For, around: &[CounterId], outer: &[i64], params: &[i64]) -> Option<i64> {
    let value = |v: Var| match v {
        Var::Param(p) => params.get(p.index()).copied().unwrap_or(0),
        Var::Counter(c) => around
            .iter()
            .position(|&a| a == c)
            .and_then(|k| outer.get(k).copied())
            .unwrap_or(0),
    };
    let lo = l.lower.affine.eval(value)?;
    let hi = l.upper.affine.eval(value)?;
    (hi >= lo).then(|| lo + (hi - lo) / l.step * l.step)
}
