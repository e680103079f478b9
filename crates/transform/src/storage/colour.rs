//! Renaming by colouring (storage paper §4, "minimal renaming"): arrays
//! whose final contents are not results (`--temporaries`) and whose values
//! are never live together share one array's storage. Two temporaries
//! *interfere* when, with the second's cells laid onto the first's (same
//! declared shape), some read would no longer find its value: in program
//! order the last write to its shared cell is not its source (σ), or the
//! schedule leaves two neighbouring accesses of the shared cell unordered
//! (the races of `mapping`), or the second's initial values are read
//! (they are the first's after sharing). Cell by cell at the analysed
//! sizes, so two temporaries alive at once in disjoint cells may share too.
//! The interference graph is coloured greedily, in declaration order; each
//! class is checked as a whole, and its first array holds the storage.

use super::dependences::neighbours;
use super::schedule::Order;
use crate::expansion::Expansion;
use crate::model::{Access, ArrayId, Node, Program, StmtKind};
use std::collections::HashMap;

/// The sharing found among the temporaries at one size.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sharing {
    /// Temporaries that may share, and those that may not, with the reason.
    pub candidates: Vec<ArrayId>,
    pub excluded: Vec<(ArrayId, String)>,
    /// Candidate pairs that interfere, with the first conflict.
    pub interfering: Vec<(ArrayId, ArrayId, String)>,
    /// Classes of two or more arrays; the first holds the storage.
    pub classes: Vec<Vec<ArrayId>>,
    /// Cells no longer declared at these sizes.
    pub saved: u64,
}

impl Sharing {
    /// The array whose storage `a` uses.
    pub fn holder(&self, a: ArrayId) -> ArrayId {
        self.classes
            .iter()
            .find(|c| c.contains(&a))
            .map_or(a, |c| c[0])
    }
}

/// The sharing among `temporaries` in one sample, under its schedule's
/// order, after its contraction's mapping.
pub fn compute(sample: &super::Sample, temporaries: &[ArrayId]) -> Sharing {
    let (program, exp, order) = (sample.program, sample.exp, sample.order);
    let (mapping, located) = (sample.mapping, sample.located);
    let f = &exp.inst.facts;
    let flow = &exp.inst.flow;
    let mut s = Sharing::default();
    // Arrays σ is not exact for, or that the contraction expanded.
    let mut inexact = vec![false; program.arrays.len()];
    for x in 0..f.n_accs() as u32 {
        if f.is_may(x) {
            if let Some((a, _)) = &located[x as usize] {
                inexact[a.index()] = true;
            }
        }
    }
    for r in flow.iter() {
        if flow.source_ops(r.index()).len() + usize::from(r.initial()) > 1 {
            inexact[r.array().index()] = true;
        }
    }
    for &a in temporaries {
        let m = &mapping.arrays[a.index()];
        if !m.dims.is_empty() {
            s.excluded
                .push((a, "the contraction added dimensions to it".to_string()));
        } else if inexact[a.index()] {
            s.excluded.push((
                a,
                "a may-access or a read with several possible sources (σ is not exact)".to_string(),
            ));
        } else {
            s.candidates.push(a);
        }
    }
    let shape = |a: ArrayId| {
        let d = program.array_decl(a);
        let dims: Vec<_> = d
            .dims
            .iter()
            .map(|r| (r.lo.affine.clone(), r.hi.affine.clone()))
            .collect();
        (d.elem, dims)
    };
    let c = &s.candidates;
    let places = Places::new(located);
    for (k, &a) in c.iter().enumerate() {
        for &b in &c[k + 1..] {
            let why = if shape(a) != shape(b) {
                Some("declared with other shapes or types".to_string())
            } else {
                conflict(program, exp, order, &places, &[a, b])
            };
            if let Some(w) = why {
                s.interfering.push((a, b, w));
            }
        }
    }
    let interferes = |a: ArrayId, b: ArrayId| {
        s.interfering
            .iter()
            .any(|&(x, y, _)| (x, y) == (a, b) || (x, y) == (b, a))
    };
    let mut classes: Vec<Vec<ArrayId>> = Vec::new();
    for &a in c {
        let fits = classes.iter().position(|cl| {
            cl.iter().all(|&b| !interferes(a, b)) && {
                let mut with = cl.clone();
                with.push(a);
                conflict(program, exp, order, &places, &with).is_none()
            }
        });
        match fits {
            Some(k) => classes[k].push(a),
            None => classes.push(vec![a]),
        }
    }
    classes.retain(|cl| cl.len() > 1);
    s.saved = classes
        .iter()
        .flat_map(|cl| &cl[1..])
        .map(|a| mapping.arrays[a.index()].cells)
        .sum();
    s.classes = classes;
    s
}

/// One sample's sharing, for [`across`]: its parameters, the sharing
/// found there (None: no temporaries) and the expansion it came from.
pub type AtSample<'a> = (&'a [i64], Option<&'a Sharing>, &'a Expansion);

/// The classes to emit from the sharing found at each sample: those every
/// sample whose parameters are all at least 3 agrees on (else at least 2,
/// else all samples), each then checked whole at the other samples. At the smallest
/// sizes lifetimes degenerate (at N = 0 nothing is live, so every temporary
/// fits in one class), so asking every sample for the same classes would
/// drop the sharing the larger sizes find. A class that fails at a smaller
/// sample is dropped; the second list says why.
pub fn across(
    program: &Program,
    schedule: &super::Schedule,
    at: &[AtSample],
) -> (Vec<Vec<ArrayId>>, Vec<String>) {
    let at_least =
        |k: i64| -> Vec<&AtSample> { at.iter().filter(|s| s.0.iter().all(|&v| v >= k)).collect() };
    let stable = [at_least(3), at_least(2)]
        .into_iter()
        .find(|s| !s.is_empty())
        .unwrap_or_else(|| at.iter().collect());
    let mut classes: Option<Vec<Vec<ArrayId>>> = None;
    for (_, sharing, _) in &stable {
        let here = sharing.map(|s| s.classes.clone()).unwrap_or_default();
        classes = Some(match classes {
            None => here,
            Some(v) => v.into_iter().filter(|cl| here.contains(cl)).collect(),
        });
    }
    let mut classes = classes.unwrap_or_default();
    let mut dropped = Vec::new();
    for (p, sharing, exp) in at.iter().filter(|s| !stable.iter().any(|t| t.0 == s.0)) {
        let order = Order::new(program, &exp.inst.facts, schedule);
        let places = Places::new(&super::locate_accesses(exp));
        classes.retain(|cl| {
            let candidate = |a: &ArrayId| sharing.is_some_and(|s| s.candidates.contains(a));
            let why = match cl.iter().find(|a| !candidate(a)) {
                Some(a) => Some(format!("`{}` is no candidate", program.array_decl(*a).name)),
                None => conflict(program, exp, &order, &places, cl),
            };
            let Some(why) = why else { return true };
            let names: Vec<&str> = (cl[1..].iter())
                .map(|&a| program.array_decl(a).name.as_str())
                .collect();
            let size: Vec<String> = (program.params.iter().zip(p.iter()))
                .map(|(q, v)| format!("{}={v}", q.name))
                .collect();
            dropped.push(format!(
                "{} in {} at ({}): {why}",
                names.join(", "),
                program.array_decl(cl[0]).name,
                size.join(", ")
            ));
            false
        });
    }
    (classes, dropped)
}

/// Why `group` (the first holding the storage) cannot share, if it cannot.
fn conflict(
    program: &Program,
    exp: &Expansion,
    order: &Order,
    places: &Places,
    group: &[ArrayId],
) -> Option<String> {
    let f = &exp.inst.facts;
    let flow = &exp.inst.flow;
    let name = |op: u32| crate::interp::format_op(flow.site_name(f.site(op)), f.op_iter(op));
    let mut last: Vec<Option<u32>> = vec![None; places.places];
    let mut events: Vec<(u32, u32, bool)> = Vec::new();
    // Access instances are in execution order: program order.
    for x in 0..f.n_accs() as u32 {
        let Some((a, place)) = places.access[x as usize] else {
            continue;
        };
        if !group.contains(&a) {
            continue;
        }
        let op = f.op(x);
        if f.is_read(x) {
            let slot = f.acc_slot[x as usize] as usize;
            let want = flow.source_ops(slot).first().copied();
            if want.is_none() && a != group[0] {
                return Some(format!(
                    "{} reads an initial value of `{}`",
                    name(op),
                    program.array_decl(a).name
                ));
            }
            let found = last[place as usize];
            if found != want {
                return Some(format!(
                    "{} would read the value of {} instead of {}",
                    name(op),
                    found.map_or("the initial contents".to_string(), name),
                    want.map_or("the initial contents".to_string(), name)
                ));
            }
            events.push((place, op, false));
        }
        if f.is_write(x) {
            last[place as usize] = Some(op);
            events.push((place, op, true));
        }
    }
    events.sort_unstable();
    events.dedup();
    let mut race = None;
    neighbours(&events, |_, a, b, _| {
        if race.is_none() && order.broken_by(a, b).is_some() {
            race = Some(format!(
                "the schedule does not keep {} before {} on a shared cell",
                name(a),
                name(b)
            ));
        }
    });
    race
}

/// Each access's array and place, found once for every group [`conflict`]
/// checks: places are numbered by index, so the same index of two arrays
/// of one shape is one place.
struct Places {
    access: Vec<Option<(ArrayId, u32)>>,
    places: usize,
}

impl Places {
    fn new(located: &super::Located) -> Places {
        let mut ids: HashMap<&[i64], u32> = HashMap::new();
        let access = (located.iter())
            .map(|l| {
                let (a, index) = l.as_ref()?;
                let next = ids.len() as u32;
                Some((*a, *ids.entry(index.as_slice()).or_insert(next)))
            })
            .collect();
        Places {
            access,
            places: ids.len(),
        }
    }
}

/// Rewrites `p` (the contracted program, the original's arrays first) so
/// that each class's arrays use its first array's storage, and drops the
/// others' declarations.
pub fn apply(p: &mut Program, classes: &[Vec<ArrayId>]) {
    let n = p.arrays.len();
    let mut to: Vec<ArrayId> = (0..n as u32).map(ArrayId).collect();
    for cl in classes {
        for &a in &cl[1..] {
            to[a.index()] = cl[0];
        }
    }
    // Dropped arrays out, the rest renumbered in order.
    let dropped: Vec<bool> = (0..n).map(|k| to[k].index() != k).collect();
    let mut new_id = vec![0u32; n];
    let mut next = 0;
    for k in 0..n {
        new_id[k] = next;
        next += u32::from(!dropped[k]);
    }
    let map = |a: ArrayId| ArrayId(new_id[to[a.index()].index()]);
    let mut rw = |_: usize, a: &Access| {
        let mut b = a.clone();
        b.array = map(a.array);
        Some(b)
    };
    super::nodes::each_mut(&mut p.body, &mut |node| match node {
        Node::Stmt(s) => match &mut s.kind {
            StmtKind::Assign { target, value, .. } => {
                target.array = map(target.array);
                for sub in &mut target.subscripts {
                    crate::codegen::rewrite_expr(&mut sub.expr, &mut 0, &mut rw);
                }
                crate::codegen::rewrite_expr(value, &mut 0, &mut rw);
            }
            StmtKind::Call { args, .. } => {
                for e in args {
                    crate::codegen::rewrite_expr(e, &mut 0, &mut rw);
                }
            }
        },
        Node::If(i) => {
            for (c, _) in &mut i.branches {
                crate::codegen::rewrite_cond(&mut c.cond, &mut 0, &mut rw);
            }
        }
        Node::While(w) => crate::codegen::rewrite_cond(&mut w.cond.cond, &mut 0, &mut rw),
        Node::For(_) => {}
    });
    let mut k = 0;
    p.arrays.retain(|_| {
        k += 1;
        !dropped[k - 1]
    });
}
