//! Placement of dead writes: a group whose writes
//! no read sees (or only the copy-out) goes into the cells of another group
//! when, at every sample, simulating the expanded memory shows that it
//! clobbers no value a later read needs and adds no dependence carried by a
//! loop that is parallel after expansion; dead-only groups that fit nowhere
//! get a scratch array with one cell per iteration of those loops.

use super::boxes::{concrete_boxes, hull, volume};
use super::records::{kappa_of, Eval, Kind, Recs, Sample, Sites};
use crate::expansion::classes::NONE;
use crate::model::{CounterId, CounterKind, Program};
use std::collections::{HashMap, HashSet};

/// What placement decided.
pub(super) struct Placed {
    pub scratch: Vec<bool>,
    pub shared: u64,
    pub notes: Vec<String>,
}

/// An expanded cell: (cell or NONE for scratch, group, κ values).
type Key = (u32, usize, Vec<i64>);

/// One access of an expanded cell: position, write or read, class (NONE for
/// a dead write), who (write index, or read op with the flag).
#[derive(Clone, Copy)]
struct Ev {
    pos: u32,
    write: bool,
    class: u32,
    who: u32,
}

/// The loops (outermost first) and iteration of an event.
fn at<'a>(s: &'a Sample, rs: &'a Recs, sites: &'a Sites, e: &Ev) -> (&'a [CounterId], &'a [i64]) {
    if e.write {
        let w = &rs.writes[e.who as usize];
        (&sites.stmt[w.stmt], &w.iter)
    } else {
        let f = &s.exp.inst.facts;
        (sites.loops(f.site(e.who)), f.op_iter(e.who))
    }
}

/// The loop carrying a dependence between two events, if any.
fn carrier(s: &Sample, rs: &Recs, sites: &Sites, a: &Ev, b: &Ev) -> Option<CounterId> {
    let (la, ia) = at(s, rs, sites, a);
    let (lb, ib) = at(s, rs, sites, b);
    for k in 0..la.len().min(lb.len()) {
        if la[k] != lb[k] {
            return None;
        }
        if ia.get(k) != ib.get(k) {
            return Some(la[k]);
        }
    }
    None
}

/// Loops carrying a dependence among the accesses of one expanded cell (in
/// execution order), and whether a read would see another class's value.
/// Pairs: each write with the previous write and the reads since it, each
/// read with the previous write; the other pairs' carriers follow from these.
fn check(
    s: &Sample,
    rs: &Recs,
    sites: &Sites,
    list: &[Ev],
    carried: &mut HashSet<CounterId>,
) -> bool {
    let mut last: Option<&Ev> = None;
    let mut since: Vec<&Ev> = Vec::new();
    let mut ok = true;
    for e in list {
        let mut pair = |a: &Ev| {
            if let Some(c) = carrier(s, rs, sites, a, e) {
                carried.insert(c);
            }
        };
        if e.write {
            if let Some(w) = last {
                pair(w);
            }
            since.iter().for_each(|r| pair(r));
            since.clear();
            last = Some(e);
        } else {
            if let Some(w) = last {
                pair(w);
                ok &= w.class == e.class;
            }
            since.push(e);
        }
    }
    ok
}

fn sorted_insert(list: &mut Vec<Ev>, e: Ev) {
    let k = list.partition_point(|x| (x.pos, x.write) < (e.pos, e.write));
    list.insert(k, e);
}

/// The expanded-memory events of every sample, for groups `keep`.
fn events(
    sites: &Sites,
    recs: &[Recs],
    bits: &[Vec<u32>],
    ev: &Eval,
    member: &dyn Fn(usize) -> bool,
) -> Vec<HashMap<Key, Vec<Ev>>> {
    recs.iter()
        .zip(bits)
        .map(|(rs, bs)| {
            let mut m: HashMap<Key, Vec<Ev>> = HashMap::new();
            let mut label: HashMap<u32, (usize, Vec<i64>)> = HashMap::new();
            for (k, (w, &b)) in rs.writes.iter().zip(bs).enumerate() {
                let g = ev.atom_group[&(w.stmt, b)];
                if !member(g) {
                    continue;
                }
                let kv = kappa_of(&ev.kappa[g], sites, w);
                if w.class != NONE {
                    label.entry(w.class).or_insert((g, kv.clone()));
                }
                for &cell in &w.cells {
                    m.entry((cell, g, kv.clone())).or_default().push(Ev {
                        pos: w.pos,
                        write: true,
                        class: w.class,
                        who: k as u32,
                    });
                }
            }
            for r in &rs.reads {
                if let Some((g, kv)) = label.get(&r.class) {
                    m.entry((r.cell, *g, kv.clone())).or_default().push(Ev {
                        pos: r.pos,
                        write: false,
                        class: r.class,
                        who: r.op,
                    });
                }
            }
            for l in m.values_mut() {
                l.sort_by_key(|e| (e.pos, e.write));
            }
            m
        })
        .collect()
}

pub(super) fn place(
    program: &Program,
    sites: &Sites,
    samples: &[Sample],
    recs: &[Recs],
    bits: &[Vec<u32>],
    ev: &mut Eval,
) -> Placed {
    let n = ev.kappa.len();
    let mut scratch = vec![false; n];
    let mut shared = 0;
    // (text, group): the group's label number is known after renumbering.
    let mut notes: Vec<(String, usize)> = Vec::new();
    let todo: Vec<usize> = (0..n).filter(|&g| ev.placeable[g]).collect();
    if todo.is_empty() {
        return Placed {
            scratch,
            shared,
            notes: Vec::new(),
        };
    }
    let placeable = ev.placeable.clone();
    let mut mem = events(sites, recs, bits, ev, &|g| !placeable[g]);
    // Loops parallel after expansion (for this array): enclosing some
    // access and carrying no dependence among the live ones.
    let mut carried: HashSet<CounterId> = HashSet::new();
    let mut enclosing: HashSet<CounterId> = HashSet::new();
    for ((m, rs), s) in mem.iter().zip(recs).zip(samples) {
        for l in m.values() {
            check(s, rs, sites, l, &mut carried);
            for e in l {
                enclosing.extend(at(s, rs, sites, e).0.iter().copied());
            }
        }
    }
    let parallel: HashSet<CounterId> = enclosing
        .into_iter()
        .filter(|c| !carried.contains(c) && program.counter_decl(*c).kind == CounterKind::For)
        .collect();
    let mut boxes = concrete_boxes(sites, recs, ev, &[]);
    let stmt_label = |s: usize| program.stmts()[s].label.clone();
    for p in todo {
        let stmts: Vec<usize> = {
            let mut v: Vec<usize> = ev
                .atom_group
                .iter()
                .filter(|(_, &g)| g == p)
                .map(|(a, _)| a.0)
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        let names: Vec<String> = stmts.iter().map(|&s| stmt_label(s)).collect();
        let common: Vec<CounterId> = match stmts.first() {
            Some(&f) => sites.stmt[f]
                .iter()
                .copied()
                .filter(|c| program.counter_decl(*c).kind == CounterKind::For)
                .filter(|c| stmts.iter().all(|&s| sites.stmt[s].contains(c)))
                .collect(),
            None => continue,
        };
        let dead_only = recs.iter().zip(bits).all(|(rs, bs)| {
            rs.writes
                .iter()
                .zip(bs)
                .all(|(w, &b)| ev.atom_group[&(w.stmt, b)] != p || w.kind == Kind::Dead)
        });
        let mut best: Option<(usize, i64)> = None;
        for g in 0..ev.kappa.len() {
            if ev.placeable[g] || (scratch[g] && !dead_only) {
                continue;
            }
            if !ev.kappa[g].iter().all(|c| common.contains(c)) {
                continue;
            }
            let mv = moved(p, g, ev, &scratch, sites, recs, bits);
            let mut fits = true;
            let mut cost = 0;
            for (k, evs) in mv.iter().enumerate() {
                let mut touched: HashMap<&Key, Vec<Ev>> = HashMap::new();
                for (key, e) in evs {
                    let l = touched
                        .entry(key)
                        .or_insert_with(|| mem[k].get(key).cloned().unwrap_or_default());
                    sorted_insert(l, *e);
                }
                let mut c = HashSet::new();
                for l in touched.values() {
                    fits &= check(&samples[k], &recs[k], sites, l, &mut c);
                }
                fits &= c.is_disjoint(&parallel);
                let mut b = boxes[k][g].clone();
                if let Some(pb) = &boxes[k][p] {
                    let mut pb = pb.clone();
                    let nd = recs[k].declared.len();
                    if ev.copy_in[g] {
                        pb[..nd].copy_from_slice(&recs[k].declared);
                    }
                    let pk = pb.len() - ev.kappa[p].len();
                    let mut nb: Vec<(i64, i64)> = if scratch[g] {
                        Vec::new()
                    } else {
                        pb[..pk].to_vec()
                    };
                    // κ of g at p's writes.
                    let mut kb: Option<Vec<(i64, i64)>> = None;
                    for (w, &bb) in recs[k].writes.iter().zip(&bits[k]) {
                        if ev.atom_group[&(w.stmt, bb)] == p {
                            let kv: Vec<(i64, i64)> = kappa_of(&ev.kappa[g], sites, w)
                                .into_iter()
                                .map(|x| (x, x))
                                .collect();
                            hull(&mut kb, &kv);
                        }
                    }
                    nb.extend(kb.unwrap_or_default());
                    hull(&mut b, &nb);
                }
                cost += volume(&b) - volume(&boxes[k][g]);
                if !fits {
                    break;
                }
            }
            if fits && best.is_none_or(|(_, c)| cost < c) {
                best = Some((g, cost));
            }
        }
        let target = match best {
            Some((g, _)) => {
                let what = if dead_only {
                    "dead writes"
                } else {
                    "dead and live-out-only writes"
                };
                notes.push((format!("{what} of {} share label", names.join(", ")), g));
                g
            }
            None if dead_only => {
                let ks: Vec<CounterId> = common
                    .iter()
                    .copied()
                    .filter(|c| parallel.contains(c))
                    .collect();
                let g = match (0..ev.kappa.len()).find(|&g| scratch[g] && ev.kappa[g] == ks) {
                    Some(g) => g,
                    None => {
                        ev.kappa.push(ks);
                        ev.copy_in.push(false);
                        ev.placeable.push(false);
                        scratch.push(true);
                        for b in &mut boxes {
                            b.push(None);
                        }
                        ev.kappa.len() - 1
                    }
                };
                notes.push((
                    format!(
                        "dead writes of {} go to a scratch array (one cell per iteration of the parallel loops), label",
                        names.join(", ")
                    ),
                    g,
                ));
                g
            }
            None => {
                notes.push((
                    format!(
                        "dead and live-out-only writes of {} fit in no other label: they keep",
                        names.join(", ")
                    ),
                    p,
                ));
                continue;
            }
        };
        // Commit: events, boxes, atoms; count shared live-out-only classes.
        for (k, evs) in moved(p, target, ev, &scratch, sites, recs, bits)
            .into_iter()
            .enumerate()
        {
            for (key, e) in evs {
                sorted_insert(mem[k].entry(key).or_default(), e);
            }
        }
        if !scratch[target] {
            for rs in recs.iter().zip(bits) {
                let mut cls: Vec<u32> =
                    rs.0.writes
                        .iter()
                        .zip(rs.1)
                        .filter(|(w, &b)| ev.atom_group[&(w.stmt, b)] == p && w.class != NONE)
                        .map(|(w, _)| w.class)
                        .collect();
                cls.sort_unstable();
                cls.dedup();
                shared += cls.len() as u64;
            }
        }
        for g in ev
            .atom_group
            .values_mut()
            .chain(ev.groups.iter_mut().flatten())
        {
            if *g == p {
                *g = target;
            }
        }
        ev.placeable[p] = false;
        boxes = concrete_boxes(sites, recs, ev, &scratch);
    }
    // Drop the groups left empty, keeping the order.
    let used: HashSet<usize> = ev.atom_group.values().copied().collect();
    let keep: Vec<usize> = (0..ev.kappa.len()).filter(|g| used.contains(g)).collect();
    for g in ev
        .atom_group
        .values_mut()
        .chain(ev.groups.iter_mut().flatten())
    {
        *g = keep.iter().position(|k| k == g).unwrap_or(0);
    }
    ev.kappa = keep.iter().map(|&g| ev.kappa[g].clone()).collect();
    ev.copy_in = keep.iter().map(|&g| ev.copy_in[g]).collect();
    ev.placeable = keep.iter().map(|&g| ev.placeable[g]).collect();
    let notes = notes
        .into_iter()
        .map(|(t, g)| {
            let id = keep.iter().position(|&k| k == g).unwrap_or(0);
            format!("{t} {}", id + 1)
        })
        .collect();
    Placed {
        scratch: keep.iter().map(|&g| scratch[g]).collect(),
        shared,
        notes,
    }
}

/// The events of group p's writes (and of the reads of their classes) once
/// placed in group g.
fn moved(
    p: usize,
    g: usize,
    ev: &Eval,
    scratch: &[bool],
    sites: &Sites,
    recs: &[Recs],
    bits: &[Vec<u32>],
) -> Vec<Vec<(Key, Ev)>> {
    recs.iter()
        .zip(bits)
        .map(|(rs, bs)| {
            let mut v = Vec::new();
            let mut label: HashMap<u32, Vec<i64>> = HashMap::new();
            for (k, (w, &b)) in rs.writes.iter().zip(bs).enumerate() {
                if ev.atom_group[&(w.stmt, b)] != p {
                    continue;
                }
                let kv = kappa_of(&ev.kappa[g], sites, w);
                if w.class != NONE {
                    label.entry(w.class).or_insert(kv.clone());
                }
                let cells: Vec<u32> = if scratch[g] {
                    vec![NONE]
                } else {
                    w.cells.clone()
                };
                for cell in cells {
                    let e = Ev {
                        pos: w.pos,
                        write: true,
                        class: w.class,
                        who: k as u32,
                    };
                    v.push(((cell, g, kv.clone()), e));
                }
            }
            for r in &rs.reads {
                if let Some(kv) = label.get(&r.class) {
                    let e = Ev {
                        pos: r.pos,
                        write: false,
                        class: r.class,
                        who: r.op,
                    };
                    v.push(((r.cell, g, kv.clone()), e));
                }
            }
            v
        })
        .collect()
}
