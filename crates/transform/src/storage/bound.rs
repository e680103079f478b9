//! A lower bound on the memory any storage needs under a schedule: the most
//! values live at once, by simulation at the analysed sizes. Time is the
//! schedule's wavefront (`Order::steps`): operations of one statement that
//! differ only in parallel counters run at one step, steps in program
//! order; under an affine schedule, a step per time. A value (a
//! write, or the initial value of a cell some read sees) is live from its
//! step up to the step of its last read (half-open: a step's reads and
//! writes may share a cell, as an update does), at least its own step, and
//! to the end when it is the cell's final value (the program's result;
//! not for a temporary, whose final contents are not results).
//! A cell of a result (not a temporary) that nothing writes keeps its
//! initial value to the end, read or not: the result holds it.
//! Counted per array, and for the first array of each class of
//! temporaries sharing storage, over the whole class (the storage it
//! holds); none for an array with a may-access (a non-affine
//! subscript) or a read with several possible sources (unknown control),
//! where σ over-approximates lifetimes. Counted also over every written
//! array together ([`Bound::all`]): no storage of the program's values,
//! however laid out, holds them in fewer cells under this schedule.

use super::schedule::Order;
use crate::expansion::Expansion;
use crate::model::ArrayId;
use std::collections::HashMap;

/// The most values live at once.
#[derive(Clone, Debug, Default)]
pub struct Bound {
    /// By array id; a class's first array counts the values of the whole
    /// class. None with may-accesses.
    pub arrays: Vec<Option<u64>>,
    /// Every written array's values together (`declared` names which);
    /// None when one of them has may-accesses.
    pub all: Option<u64>,
}

/// The most values of each array live at once, and of the written arrays
/// together; `declared` gives each array's declared cells, or None for an
/// array nothing writes.
pub fn live_values(
    exp: &Expansion,
    order: &Order,
    declared: &[Option<u64>],
    temporaries: &[ArrayId],
    classes: &[Vec<ArrayId>],
) -> Bound {
    let n_arrays = declared.len();
    let f = &exp.inst.facts;
    let flow = &exp.inst.flow;
    let (step, end) = order.steps();
    // Values: per write operation (start, end, array); initial values per cell.
    let mut writes: HashMap<u32, (u32, u32, ArrayId)> = HashMap::new();
    let mut initial: HashMap<u32, (u32, ArrayId)> = HashMap::new();
    let mut last_write: HashMap<u32, u32> = HashMap::new();
    let mut array_of: HashMap<u32, Option<ArrayId>> = HashMap::new();
    let mut may = vec![false; n_arrays];
    for x in 0..f.n_accs() as u32 {
        let cell = f.acc_cell[x as usize];
        let Some(a) = *array_of
            .entry(cell)
            .or_insert_with(|| f.cells.locate(cell as usize).map(|(a, _)| a))
        else {
            continue;
        };
        let op = f.op(x);
        if f.is_may(x) {
            if let Some(m) = may.get_mut(a.index()) {
                *m = true;
            }
        }
        if f.is_read(x) && exp.inst.initial_at(x) {
            let e = initial.entry(cell).or_insert((0, a));
            e.0 = e.0.max(step[op as usize]);
        }
        if f.is_write(x) {
            writes
                .entry(op)
                .or_insert((step[op as usize], step[op as usize], a));
            last_write.insert(cell, op);
        }
    }
    for r in flow.iter() {
        // Several possible sources: σ is not exact here (dynamic control).
        if flow.source_ops(r.index()).len() + usize::from(r.initial()) > 1 {
            if let Some(m) = may.get_mut(r.array().index()) {
                *m = true;
            }
        }
        let at = step[f.slots[r.index()].op as usize];
        for src in flow.source_ops(r.index()) {
            if let Some(w) = writes.get_mut(src) {
                w.1 = w.1.max(at);
            }
        }
    }
    for op in last_write.values() {
        if let Some(w) = writes.get_mut(op).filter(|w| !temporaries.contains(&w.2)) {
            w.1 = end;
        }
    }
    // A result's cells nothing writes: their initial values are final.
    let result = |a: ArrayId| !temporaries.contains(&a);
    let mut untouched: Vec<u64> = declared.iter().map(|d| d.unwrap_or(0)).collect();
    for (&cell, &(_, a)) in &initial {
        if !last_write.contains_key(&cell) && result(a) {
            untouched[a.index()] = untouched[a.index()].saturating_sub(1);
        }
    }
    for &cell in last_write.keys() {
        if let Some(&Some(a)) = array_of.get(&cell) {
            untouched[a.index()] = untouched[a.index()].saturating_sub(1);
        }
    }
    for (&cell, v) in initial.iter_mut() {
        if !last_write.contains_key(&cell) && result(v.1) {
            v.0 = end;
        }
    }
    let mut events: Vec<Vec<(u32, i64)>> = vec![Vec::new(); n_arrays];
    let mut every: Vec<(u32, i64)> = Vec::new();
    for (k, &u) in untouched.iter().enumerate() {
        let a = ArrayId(k as u32);
        if u > 0 && result(a) && declared[k].is_some() {
            for v in [&mut events[k], &mut every] {
                v.push((0, u as i64));
                v.push((end.max(1), -(u as i64)));
            }
        }
    }
    let intervals = writes
        .values()
        .copied()
        .chain(initial.values().map(|&(e, a)| (0, e, a)));
    let class_of = |a: ArrayId| classes.iter().position(|cl| cl.contains(&a));
    let mut shared: Vec<Vec<(u32, i64)>> = vec![Vec::new(); classes.len()];
    for (s, e, a) in intervals {
        if let Some(v) = events.get_mut(a.index()) {
            v.push((s, 1));
            v.push((e.max(s + 1), -1));
        }
        if declared.get(a.index()).is_some_and(|d| d.is_some()) {
            every.push((s, 1));
            every.push((e.max(s + 1), -1));
        }
        if let Some(k) = class_of(a) {
            shared[k].push((s, 1));
            shared[k].push((e.max(s + 1), -1));
        }
    }
    let written = |k: usize| declared[k].is_some();
    let all = (!(0..n_arrays).any(|k| written(k) && may[k])).then(|| most(every));
    let mut out: Vec<Option<u64>> = (events.into_iter().zip(&may))
        .map(|(v, &may)| (!may).then(|| most(v)))
        .collect();
    for (cl, v) in classes.iter().zip(shared) {
        let may = cl
            .iter()
            .any(|a| may.get(a.index()).copied().unwrap_or(true));
        if let Some(b) = out.get_mut(cl[0].index()) {
            *b = (!may).then(|| most(v));
        }
    }
    Bound { arrays: out, all }
}

/// The most intervals open at once, from their (time, +1 | -1) ends.
fn most(mut v: Vec<(u32, i64)>) -> u64 {
    v.sort_unstable();
    let (mut now, mut most) = (0i64, 0i64);
    for (_, d) in v {
        now += d;
        most = most.max(now);
    }
    most as u64
}
