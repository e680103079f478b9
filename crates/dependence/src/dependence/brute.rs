//! The plain reference the tests are checked against: run the program's loops
//! at concrete sizes (through `model::eval`, never the affine forms), record
//! every access with its iteration vector and cell, and compare the instances
//! of two references directly.
//!
//! Only programs whose control is static are enumerated: `for` loops and
//! `if`s whose conditions need nothing but counters and parameters, and
//! subscripts that read no memory. Anything else is an error.

use super::direction::Dir;
use super::pairs::RefId;
use super::report::Kind;
use crate::model::eval::{self, StaticEnv};
use crate::model::{ArrayId, CounterId, Node, Program, Site};
use std::collections::{BTreeSet, HashMap};

/// One access of one operation.
#[derive(Clone, Debug)]
struct Event {
    id: RefId,
    /// Operations numbered in execution order.
    op: u64,
    iter: Vec<i64>,
    loops: usize,
    reads: bool,
    writes: bool,
}

/// Every access of one run.
pub struct Trace {
    events: Vec<Event>,
    /// Events by cell.
    cells: HashMap<(ArrayId, Vec<i64>), Vec<usize>>,
    /// Loop counters around each reference that ran.
    loops: HashMap<RefId, Vec<CounterId>>,
}

/// One access as [`Trace::accesses`] lists it: operation, array, cell,
/// reads, writes.
pub type Access<'a> = (u64, ArrayId, &'a [i64], bool, bool);

/// What enumeration finds for a pair.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// Sign vectors of `i_dst − i_src` over the common loops.
    pub directions: BTreeSet<Vec<Dir>>,
    pub distances: BTreeSet<Vec<i64>>,
    pub kinds: BTreeSet<Kind>,
}

impl Found {
    pub fn dependent(&self) -> bool {
        !self.directions.is_empty()
    }
}

/// Runs the program's control at these parameter values, recording at most
/// `limit` accesses.
pub fn trace(program: &Program, params: &[i64], limit: usize) -> Result<Trace, String> {
    let mut t = Tracer {
        params,
        counters: vec![0; program.counters.len()],
        stack: Vec::new(),
        trace: Trace {
            events: Vec::new(),
            cells: HashMap::new(),
            loops: HashMap::new(),
        },
        op: 0,
        limit,
    };
    t.nodes(&program.body)?;
    Ok(t.trace)
}

struct Tracer<'a> {
    params: &'a [i64],
    counters: Vec<i64>,
    stack: Vec<CounterId>,
    trace: Trace,
    op: u64,
    limit: usize,
}

impl Tracer<'_> {
    fn env(&self) -> StaticEnv<'_> {
        StaticEnv {
            params: self.params,
            counters: &self.counters,
        }
    }

    fn nodes(&mut self, nodes: &[Node]) -> Result<(), String> {
        for n in nodes {
            match n {
                Node::For(f) => {
                    let lo =
                        eval::expr(&f.lower.expr, &mut self.env()).map_err(|e| format!("{e:?}"))?;
                    let hi =
                        eval::expr(&f.upper.expr, &mut self.env()).map_err(|e| format!("{e:?}"))?;
                    self.stack.push(f.counter);
                    let mut i = lo;
                    while i <= hi {
                        self.counters[f.counter.index()] = i;
                        self.nodes(&f.body)?;
                        i = i.checked_add(f.step).ok_or("counter overflow")?;
                    }
                    self.stack.pop();
                }
                Node::While(_) => return Err("while loops are not enumerated".into()),
                Node::If(i) => {
                    let mut taken = false;
                    for (c, body) in &i.branches {
                        let mut refs = Vec::new();
                        c.cond.collect_reads(&mut refs);
                        if !refs.is_empty() {
                            return Err("conditions reading memory are not enumerated".into());
                        }
                        self.op += 1;
                        let holds =
                            eval::cond(&c.cond, &mut self.env()).map_err(|e| format!("{e:?}"))?;
                        if holds {
                            self.nodes(body)?;
                            taken = true;
                            break;
                        }
                    }
                    if !taken {
                        if let Some(e) = &i.otherwise {
                            self.nodes(e)?;
                        }
                    }
                }
                Node::Stmt(s) => {
                    self.op += 1;
                    let iter: Vec<i64> = self
                        .stack
                        .iter()
                        .map(|c| self.counters[c.index()])
                        .collect();
                    for (position, a) in s.accesses().into_iter().enumerate() {
                        let cell = eval::subscripts(a.access, &mut self.env())
                            .map_err(|e| format!("subscript not enumerable: {e:?}"))?;
                        let id = RefId {
                            site: Site::Stmt(s.id),
                            position,
                        };
                        let ev = Event {
                            id,
                            op: self.op,
                            iter: iter.clone(),
                            loops: self.stack.len(),
                            reads: a.kind.reads(),
                            writes: a.kind.writes(),
                        };
                        self.trace
                            .loops
                            .entry(id)
                            .or_insert_with(|| self.stack.clone());
                        let k = self.trace.events.len();
                        if k >= self.limit {
                            return Err(format!("more than {} accesses", self.limit));
                        }
                        self.trace.events.push(ev);
                        self.trace
                            .cells
                            .entry((a.access.array, cell))
                            .or_default()
                            .push(k);
                    }
                }
            }
        }
        Ok(())
    }
}

impl Trace {
    /// Every access of the run in execution order: the operation's number
    /// (increasing; an operation's reads come before its write), the
    /// array, the cell, whether it reads and whether it writes.
    pub fn accesses(&self) -> Vec<Access<'_>> {
        let mut out: Vec<(usize, Access<'_>)> = Vec::new();
        for ((array, cell), events) in &self.cells {
            for &k in events {
                let e = &self.events[k];
                out.push((k, (e.op, *array, cell, e.reads, e.writes)));
            }
        }
        out.sort_unstable_by_key(|a| a.0);
        out.into_iter().map(|(_, a)| a).collect()
    }

    /// Every pair of an instance of `src` and an instance of `dst` touching
    /// the same cell (an instance is not paired with itself).
    pub fn pair(&self, src: RefId, dst: RefId) -> Found {
        let mut found = Found::default();
        let (Some(ls), Some(ld)) = (self.loops.get(&src), self.loops.get(&dst)) else {
            return found;
        };
        let common = ls.iter().zip(ld).take_while(|(a, b)| a == b).count();
        for events in self.cells.values() {
            for &a in events.iter().filter(|&&k| self.events[k].id == src) {
                for &b in events.iter().filter(|&&k| self.events[k].id == dst) {
                    if a == b {
                        continue;
                    }
                    let (ea, eb) = (&self.events[a], &self.events[b]);
                    debug_assert!(ea.loops >= common && eb.loops >= common);
                    let dist: Vec<i64> = (0..common).map(|k| eb.iter[k] - ea.iter[k]).collect();
                    found
                        .directions
                        .insert(dist.iter().map(|&d| Dir::of(d)).collect());
                    found.distances.insert(dist);
                    // Within one operation the reads come before the write.
                    let parts = |e: &Event| {
                        let mut p = Vec::new();
                        if e.reads {
                            p.push(((e.op, 0), false));
                        }
                        if e.writes {
                            p.push(((e.op, 1), true));
                        }
                        p
                    };
                    for (ta, wa) in parts(ea) {
                        for (tb, wb) in parts(eb) {
                            if !(wa || wb) {
                                continue;
                            }
                            let (w1, w2) = if ta < tb { (wa, wb) } else { (wb, wa) };
                            found.kinds.insert(match (w1, w2) {
                                (true, true) => Kind::Output,
                                (true, false) => Kind::Flow,
                                _ => Kind::Anti,
                            });
                        }
                    }
                }
            }
        }
        found
    }
}
