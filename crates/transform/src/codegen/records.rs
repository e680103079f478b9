//! What the label inference reads off the samples: each sample's bounded
//! expansion (`Sample`), the loops around every site (`Sites`), and per
//! array the write and read records with their classes, iteration vectors
//! and condition sides (`Recs`), evaluated into groups of atoms (`Eval`).

use crate::expansion::classes::NONE;
use crate::expansion::Expansion;
use crate::hash::WordHash;
use crate::model::{Affine, ArrayId, CounterId, Node, Program, Site, Var};
use std::collections::HashMap;

/// The bounded expansion at one parameter vector.
pub struct Sample {
    pub values: Vec<i64>,
    pub exp: Expansion,
}

/// The enclosing loops of every site (outermost first: the positions of the
/// iteration vector).
pub struct Sites {
    pub stmt: Vec<Vec<CounterId>>,
    pub cond: Vec<Vec<CounterId>>,
}

impl Sites {
    pub fn new(p: &Program) -> Sites {
        let mut s = Sites {
            stmt: vec![Vec::new(); p.stmts().len()],
            cond: vec![Vec::new(); p.conditions().len()],
        };
        walk(&p.body, &mut Vec::new(), &mut s);
        s
    }

    pub fn loops(&self, site: Site) -> &[CounterId] {
        match site {
            Site::Stmt(x) => &self.stmt[x.index()],
            Site::Cond(x) => &self.cond[x.index()],
        }
    }
}

fn walk(nodes: &[Node], outer: &mut Vec<CounterId>, s: &mut Sites) {
    for n in nodes {
        match n {
            Node::Stmt(st) => s.stmt[st.id.index()] = outer.clone(),
            Node::For(f) => {
                outer.push(f.counter);
                walk(&f.body, outer, s);
                outer.pop();
            }
            Node::While(w) => {
                outer.push(w.counter);
                s.cond[w.cond.id.index()] = outer.clone();
                walk(&w.body, outer, s);
                outer.pop();
            }
            Node::If(i) => {
                for (c, b) in &i.branches {
                    s.cond[c.id.index()] = outer.clone();
                    walk(b, outer, s);
                }
                if let Some(b) = &i.otherwise {
                    walk(b, outer, s);
                }
            }
        }
    }
}

/// Value of `e` at an operation of a site with loops `loops`.
pub fn eval_at(e: &Affine, loops: &[CounterId], iter: &[i64], params: &[i64]) -> Option<i64> {
    let ok = e.vars().all(|v| match v {
        Var::Param(_) => true,
        Var::Counter(c) => loops.contains(&c),
    });
    if !ok {
        return None;
    }
    e.eval(|v| match v {
        Var::Param(p) => params.get(p.index()).copied().unwrap_or(0),
        Var::Counter(c) => loops
            .iter()
            .position(|&l| l == c)
            .and_then(|k| iter.get(k).copied())
            .unwrap_or(0),
    })
}

/// A write's value: read by the program, only by the copy-out (and holding
/// no initial value), or by nothing.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Kind {
    Live,
    Final,
    Dead,
}

pub(super) struct WriteRec {
    pub stmt: usize,
    pub iter: Vec<i64>,
    pub class: u32,
    pub kind: Kind,
    pub cells: Vec<u32>,
    /// Per dimension of the array, the indices it may write (lo, hi).
    pub at: Vec<(i64, i64)>,
    /// Class the same operation reads from the same cell, or NONE.
    pub self_read: u32,
    /// Position of the write access (execution order).
    pub pos: u32,
    /// `class` and `self_read` as dense local class numbers (`Recs::reps`),
    /// or NONE.
    pub lc: u32,
    pub self_lc: u32,
}

/// A read of the array whose sources have a class.
pub(super) struct ReadRec {
    pub pos: u32,
    pub op: u32,
    pub cell: u32,
    pub class: u32,
}

/// The accesses of one array at one sample.
pub(super) struct Recs {
    pub writes: Vec<WriteRec>,
    pub reads: Vec<ReadRec>,
    /// Declared index ranges at the sample.
    pub declared: Vec<(i64, i64)>,
    /// Per local class: its first write.
    pub reps: Vec<u32>,
    /// Distinct (cell, local class) pairs, sorted: what the label counts
    /// run over (fixed for every split).
    pub pairs: Vec<(u32, u32)>,
    /// Per local class, `words` words of a bit set over the counters:
    /// those of a write's loops whose value there differs from their value
    /// at the class's first write (such a counter cannot be in κ).
    pub moving: Vec<u64>,
    pub words: usize,
    /// Dead updates in place: (dead write, first write of the class its
    /// operation reads from the same cell). Where both are in one group is
    /// the tie-break of the split search.
    pub updates: Vec<(u32, u32)>,
    /// (cell, write) for every cell of every write, sorted.
    pub cell_writes: Vec<(u32, u32)>,
    /// What evaluations read of every write, packed.
    pub slim: Vec<Slim>,
}

/// A write as `evaluate` sees it.
pub(super) struct Slim {
    pub stmt: usize,
    /// The first write of its class, or NONE.
    pub rep: u32,
    /// Live, dead, of a class holding an initial value (bits 0, 1, 2).
    pub flags: u8,
}

pub(super) fn records(
    program: &Program,
    sites: &Sites,
    s: &Sample,
    array: ArrayId,
    outs: &[usize],
) -> Recs {
    let stmts = program.stmts();
    let c = &s.exp.classes;
    let facts = &s.exp.inst.facts;
    let p = &s.values;
    let declared: Vec<(i64, i64)> = program
        .array_decl(array)
        .dims
        .iter()
        .map(|r| {
            let v = |a: &Affine| eval_at(a, &[], &[], p).unwrap_or(0);
            (v(&r.lo.affine), v(&r.hi.affine))
        })
        .collect();
    let mut wpos = vec![NONE; facts.n_ops()];
    let mut self_reads: HashMap<(u32, u32), u32, WordHash> = HashMap::default();
    let mut prog_read = vec![false; c.n_classes()];
    let mut reads = Vec::new();
    for x in 0..facts.n_accs() as u32 {
        let op = facts.op(x);
        if facts.is_write(x) && wpos[op as usize] == NONE {
            wpos[op as usize] = x;
        }
        if !facts.is_read(x) {
            continue;
        }
        let slot = facts.acc_slot[x as usize];
        let class = c.read_class.get(slot as usize).copied().unwrap_or(NONE);
        if class == NONE {
            continue;
        }
        let cell = facts.acc_cell[x as usize];
        let out = matches!(facts.site(op), Site::Stmt(st) if outs.contains(&st.index()));
        if !out {
            if let Some(r) = prog_read.get_mut(class as usize) {
                *r = true;
            }
        }
        self_reads.insert((op, cell), class);
        reads.push(ReadRec {
            pos: x,
            op,
            cell,
            class,
        });
    }
    let mut writes = Vec::new();
    for (w, &op) in c.write_ops.iter().enumerate() {
        let Site::Stmt(st) = facts.site(op) else {
            continue;
        };
        let Some((acc, _)) = stmts[st.index()].write() else {
            continue;
        };
        if acc.array != array {
            continue;
        }
        let iter = facts.op_iter(op).to_vec();
        let loops = &sites.stmt[st.index()];
        let at = acc
            .subscripts
            .iter()
            .zip(&declared)
            .map(|(sub, &d)| {
                sub.affine
                    .as_ref()
                    .and_then(|f| eval_at(f, loops, &iter, p))
                    .map_or(d, |v| (v, v))
            })
            .collect();
        let class = c.write_class[w];
        let kind = if class == NONE {
            Kind::Dead
        } else if prog_read.get(class as usize) == Some(&false)
            && c.class_rep_initial.get(class as usize) == Some(&false)
        {
            Kind::Final
        } else {
            Kind::Live
        };
        let cells = c.write_cells(w).to_vec();
        let self_read = match cells.as_slice() {
            [cell] => self_reads.get(&(op, *cell)).copied().unwrap_or(NONE),
            _ => NONE,
        };
        writes.push(WriteRec {
            stmt: st.index(),
            iter,
            class,
            kind,
            cells,
            at,
            self_read,
            pos: wpos[op as usize],
            lc: NONE,
            self_lc: NONE,
        });
    }
    // Local class of every class (NONE: none here), by class number.
    let mut local: Vec<u32> = vec![NONE; c.n_classes()];
    let local_of = |local: &[u32], class: u32| local.get(class as usize).copied().unwrap_or(NONE);
    let mut reps = Vec::new();
    let mut initial = Vec::new();
    for (k, w) in writes.iter_mut().enumerate() {
        if w.class == NONE {
            continue;
        }
        if local.len() <= w.class as usize {
            local.resize(w.class as usize + 1, NONE);
        }
        let l = &mut local[w.class as usize];
        if *l == NONE {
            reps.push(k as u32);
            initial.push(c.class_rep_initial.get(w.class as usize) == Some(&true));
            *l = reps.len() as u32 - 1;
        }
        w.lc = *l;
    }
    let mut pairs = Vec::new();
    for w in &mut writes {
        w.self_lc = local_of(&local, w.self_read);
        if w.lc != NONE {
            pairs.extend(w.cells.iter().map(|&cell| (cell, w.lc)));
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    reads.retain(|r| local_of(&local, r.class) != NONE);
    let words = program.counters.len().div_ceil(64);
    let slim = writes
        .iter()
        .map(|w| Slim {
            stmt: w.stmt,
            rep: if w.lc == NONE {
                NONE
            } else {
                reps[w.lc as usize]
            },
            flags: u8::from(w.kind == Kind::Live)
                | u8::from(w.kind == Kind::Dead) << 1
                | u8::from(w.lc != NONE && initial[w.lc as usize]) << 2,
        })
        .collect();
    let mut cell_writes: Vec<(u32, u32)> = writes
        .iter()
        .enumerate()
        .flat_map(|(x, w)| w.cells.iter().map(move |&c| (c, x as u32)))
        .collect();
    cell_writes.sort_unstable();
    let mut moving = vec![0u64; reps.len() * words];
    let mut updates = Vec::new();
    for (x, w) in writes.iter().enumerate() {
        if w.kind == Kind::Dead && w.self_lc != NONE {
            updates.push((x as u32, reps[w.self_lc as usize]));
        }
        if w.lc == NONE {
            continue;
        }
        let rep = &writes[reps[w.lc as usize] as usize];
        for &c in &sites.stmt[w.stmt] {
            if counter_at(sites, w, c) != counter_at(sites, rep, c) {
                moving[w.lc as usize * words + c.index() / 64] |= 1 << (c.index() % 64);
            }
        }
    }
    Recs {
        writes,
        reads,
        declared,
        reps,
        pairs,
        moving,
        words,
        updates,
        cell_writes,
        slim,
    }
}

/// Groups and κ under some splits.
pub(super) struct Eval {
    pub atom_group: HashMap<(usize, u32), usize, WordHash>,
    /// The group of every write at every sample (`atom_group` of its atom).
    pub groups: Vec<Vec<usize>>,
    pub kappa: Vec<Vec<CounterId>>,
    pub copy_in: Vec<bool>,
    /// Groups whose writes are all dead or live-out-only: placed later.
    pub placeable: Vec<bool>,
    pub labels: u64,
    pub classes: u64,
}

/// Side bits of every write at every sample.
pub(super) fn all_bits(
    sites: &Sites,
    samples: &[Sample],
    recs: &[Recs],
    splits: &HashMap<usize, Vec<Affine>>,
) -> Vec<Vec<u32>> {
    // The conditions of every statement, each variable's place looked up
    // once (`AtSite::eval` is `eval_at`, so the bits are `side_bits`').
    let at: Vec<Vec<AtSite>> = (0..sites.stmt.len())
        .map(|st| {
            splits.get(&st).map_or(Vec::new(), |cs| {
                cs.iter().map(|e| AtSite::new(e, &sites.stmt[st])).collect()
            })
        })
        .collect();
    recs.iter()
        .zip(samples)
        .map(|(rs, s)| {
            rs.writes
                .iter()
                .map(|w| {
                    at[w.stmt].iter().enumerate().fold(0, |b, (k, e)| {
                        if e.eval(&w.iter, &s.values).is_some_and(|v| v <= 0) {
                            b | 1 << k
                        } else {
                            b
                        }
                    })
                })
                .collect()
        })
        .collect()
}

/// κ values of a write in group g.
pub(super) fn kappa_of(kappa: &[CounterId], sites: &Sites, w: &WriteRec) -> Vec<i64> {
    let loops = &sites.stmt[w.stmt];
    kappa
        .iter()
        .map(|c| {
            loops
                .iter()
                .position(|l| l == c)
                .and_then(|p| w.iter.get(p).copied())
                .unwrap_or(0)
        })
        .collect()
}

/// Value of counter `c` at write `w` (0 where it does not enclose it, as in
/// `kappa_of`).
pub(super) fn counter_at(sites: &Sites, w: &WriteRec, c: CounterId) -> i64 {
    sites.stmt[w.stmt]
        .iter()
        .position(|&l| l == c)
        .and_then(|p| w.iter.get(p).copied())
        .unwrap_or(0)
}

/// `eval_at` of one affine function at the operations of one site, with
/// every variable's place looked up once.
pub(super) struct AtSite<'a> {
    e: &'a Affine,
    /// Per term: a parameter (Err) or a loop position (Ok); None when a
    /// counter is not among the loops.
    at: Option<Vec<Result<usize, usize>>>,
}

impl AtSite<'_> {
    pub(super) fn new<'a>(e: &'a Affine, loops: &[CounterId]) -> AtSite<'a> {
        let at = e
            .terms
            .iter()
            .map(|&(v, _)| match v {
                Var::Param(p) => Some(Err(p.index())),
                Var::Counter(c) => loops.iter().position(|&l| l == c).map(Ok),
            })
            .collect();
        AtSite { e, at }
    }

    /// The same value as `eval_at(e, loops, iter, params)`.
    pub(super) fn eval(&self, iter: &[i64], params: &[i64]) -> Option<i64> {
        let at = self.at.as_ref()?;
        let mut acc = self.e.constant;
        for (&(_, c), &place) in self.e.terms.iter().zip(at) {
            let v = match place {
                Ok(k) => iter.get(k),
                Err(p) => params.get(p),
            };
            acc = acc.checked_add(c.checked_mul(v.copied().unwrap_or(0))?)?;
        }
        Some(acc)
    }
}
