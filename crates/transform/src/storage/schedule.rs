//! A schedule: loop-level, the `for` loops that run in parallel
//! (`--parallel i,j`, or the program's `doall` marks), every other loop and
//! every statement list in program order; or affine (`--schedule FILE`,
//! `affine`), a time vector per instance. Under a loop-level schedule two
//! operations are ordered when the first common loop whose iterations they
//! differ in is sequential, or when they share every common loop's
//! iteration (program order within a body); iterations of a parallel loop
//! are unordered. Under an affine one, `a` runs before `b` when its time is
//! lexicographically smaller; equal times are unordered. `Order` answers
//! both the same way, so the dependences, the mapping and the bound do not
//! ask which kind they have.

use super::affine::AffineSchedule;
use crate::dataflow::render::site_loops;
use crate::facts::Facts;
use crate::model::{CounterId, Program};
use std::collections::HashMap;

/// The parallel loops of a schedule, or its affine times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// By counter id (all false under an affine schedule).
    pub parallel: Vec<bool>,
    pub affine: Option<AffineSchedule>,
}

/// `--parallel` names no `for` loop of the program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownLoop(pub String);

/// Why a name of `--parallel` picks no loop ([`Schedule::picked`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoopChoice {
    /// No `for` loop has this counter.
    Unknown(String),
    /// `i@LINE`: no `for i` loop on that line; the lines of those there are.
    NotOnLine(String, Vec<u32>),
    /// `i@x` with `x` no line number.
    BadLine(String),
}

impl std::fmt::Display for LoopChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = |name: &str, lines: &[u32]| {
            let l: Vec<String> = lines.iter().map(|l| format!("`{name}@{l}`")).collect();
            l.join(", ")
        };
        match self {
            LoopChoice::Unknown(n) => {
                write!(f, "`--parallel {n}`: no `for` loop has the counter `{n}`")
            }
            LoopChoice::NotOnLine(n, lines) => {
                let name = n.rsplit_once('@').map_or(n.as_str(), |(x, _)| x);
                write!(
                    f,
                    "`--parallel {n}`: no `for {name}` loop starts on that line; there are {}",
                    at(name, lines)
                )
            }
            LoopChoice::BadLine(n) => write!(
                f,
                "`--parallel {n}`: expected `COUNTER` or `COUNTER@LINE` with LINE a line number"
            ),
        }
    }
}

impl Schedule {
    /// The loops named (every `for` loop whose counter has that name), or,
    /// with no names, the loops marked `doall`.
    pub fn new(program: &Program, names: Option<&[String]>) -> Result<Schedule, UnknownLoop> {
        let mut parallel = vec![false; program.counters.len()];
        let fors: Vec<(CounterId, bool)> = super::nodes::fors(&program.body)
            .into_iter()
            .map(|f| (f.counter, f.parallel))
            .collect();
        match names {
            None => {
                for (c, marked) in fors {
                    parallel[c.index()] = marked;
                }
            }
            Some(names) => {
                for n in names {
                    let mut found = false;
                    for &(c, _) in &fors {
                        if program.counter_decl(c).name == *n {
                            parallel[c.index()] = true;
                            found = true;
                        }
                    }
                    if !found {
                        return Err(UnknownLoop(n.clone()));
                    }
                }
            }
        }
        Ok(Schedule {
            parallel,
            affine: None,
        })
    }

    /// [`Schedule::new`] where a name may pick one of several loops with
    /// that counter (sibling loops): `i@12` is the `for i` loop on line 12
    /// (`lines`, by counter id), and a bare `i` must name one loop only.
    pub fn picked(
        program: &Program,
        names: Option<&[String]>,
        lines: &[Option<u32>],
    ) -> Result<Schedule, LoopChoice> {
        let Some(names) = names else {
            return Ok(Schedule::new(program, None).expect("no names"));
        };
        let fors: Vec<CounterId> = (super::nodes::fors(&program.body).into_iter())
            .map(|f| f.counter)
            .collect();
        let line = |c: CounterId| lines.get(c.index()).copied().flatten();
        let mut parallel = vec![false; program.counters.len()];
        for n in names {
            let (name, at) = match n.rsplit_once('@') {
                Some((name, l)) => match l.parse::<u32>() {
                    Ok(l) => (name, Some(l)),
                    Err(_) => return Err(LoopChoice::BadLine(n.clone())),
                },
                None => (n.as_str(), None),
            };
            let same: Vec<CounterId> = (fors.iter().copied())
                .filter(|&c| program.counter_decl(c).name == name)
                .collect();
            let mut at_lines: Vec<u32> = same.iter().filter_map(|&c| line(c)).collect();
            at_lines.sort_unstable();
            // A bare name stands for every `for` loop with that counter.
            let chosen: Vec<CounterId> = match at {
                Some(l) => same.into_iter().filter(|&c| line(c) == Some(l)).collect(),
                None => same,
            };
            match chosen.as_slice() {
                [] if at_lines.is_empty() => return Err(LoopChoice::Unknown(name.to_string())),
                [] => return Err(LoopChoice::NotOnLine(n.clone(), at_lines)),
                cs => cs.iter().for_each(|c| parallel[c.index()] = true),
            }
        }
        Ok(Schedule {
            parallel,
            affine: None,
        })
    }

    /// An affine schedule (no loop is parallel as such).
    pub fn affine(program: &Program, a: AffineSchedule) -> Schedule {
        Schedule {
            parallel: vec![false; program.counters.len()],
            affine: Some(a),
        }
    }

    pub fn is_parallel(&self, c: CounterId) -> bool {
        self.parallel.get(c.index()).copied().unwrap_or(false)
    }

    /// The parallel loops' names, in counter order.
    pub fn names(&self, program: &Program) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for k in (0..self.parallel.len()).filter(|&k| self.parallel[k]) {
            let n = &program.counter_decl(CounterId(k as u32)).name;
            if !v.contains(n) {
                v.push(n.clone());
            }
        }
        v
    }
}

/// The most operations `Order::loop_level_twin` compares pairwise.
const TWIN_LIMIT: usize = 3000;

/// The schedule over the operations of one bounded analysis.
pub struct Order<'a> {
    pub facts: &'a Facts,
    /// Loops around each site, by site index.
    pub loops_of: Vec<Vec<CounterId>>,
    pub schedule: &'a Schedule,
    /// Under an affine schedule: every operation's time, `width` apiece.
    times: Vec<i64>,
    width: usize,
}

/// How the schedule fails to keep an earlier operation before a later one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Breach {
    /// They differ first in this loop's iterations, which run in another
    /// order: a parallel loop, or reordered by an affine schedule.
    Loop(CounterId),
    /// One iteration of every common loop, and the affine schedule does not
    /// put the first one first.
    Body,
}

/// What the schedule does to an earlier operation and a later one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kept {
    /// Carried by this sequential loop.
    Carried(CounterId),
    /// One iteration of every common loop (program order in a body).
    Independent,
    /// Earlier in time at this dimension of an affine schedule.
    Time(usize),
    Broken(Breach),
}

impl<'a> Order<'a> {
    pub fn new(program: &Program, facts: &'a Facts, schedule: &'a Schedule) -> Order<'a> {
        let mut times = Vec::new();
        let mut width = 0;
        if let Some(a) = &schedule.affine {
            width = a.width;
            let params: Vec<i64> = facts.params.iter().map(|&(_, v)| v).collect();
            times.reserve(facts.n_ops() * width);
            for op in 0..facts.n_ops() as u32 {
                let site = facts.op_site[op as usize] as usize;
                a.time(site, facts.op_iter(op), &params, &mut times);
            }
        }
        Order {
            facts,
            loops_of: site_loops(program),
            schedule,
            times,
            width,
        }
    }

    /// The time of `op` under an affine schedule (empty otherwise).
    pub fn time(&self, op: u32) -> &[i64] {
        let k = op as usize * self.width;
        self.times.get(k..k + self.width).unwrap_or(&[])
    }

    pub fn loops(&self, op: u32) -> &[CounterId] {
        &self.loops_of[self.facts.op_site[op as usize] as usize]
    }

    /// The first common loop whose iteration `a` and `b` differ in, with its
    /// depth.
    pub fn split(&self, a: u32, b: u32) -> Option<(CounterId, usize)> {
        let (la, lb) = (self.loops(a), self.loops(b));
        let (ia, ib) = (self.facts.op_iter(a), self.facts.op_iter(b));
        la.iter()
            .zip(lb)
            .take_while(|(x, y)| x == y)
            .enumerate()
            .find(|&(d, _)| ia[d] != ib[d])
            .map(|(d, (&c, _))| (c, d))
    }

    /// How the schedule treats `a` and `b`, `a` earlier in program order.
    pub fn kept(&self, a: u32, b: u32) -> Kept {
        let split = self.split(a, b).map(|(c, _)| c);
        if self.schedule.affine.is_some() {
            let (ta, tb) = (self.time(a), self.time(b));
            return match ta.iter().zip(tb).position(|(x, y)| x != y) {
                Some(d) if ta[d] < tb[d] => Kept::Time(d),
                _ => Kept::Broken(split.map_or(Breach::Body, Breach::Loop)),
            };
        }
        match split {
            None => Kept::Independent,
            Some(c) if self.schedule.is_parallel(c) => Kept::Broken(Breach::Loop(c)),
            Some(c) => Kept::Carried(c),
        }
    }

    /// Whether the schedule keeps `a` (earlier in program order) before `b`;
    /// when not, how it breaks the order.
    pub fn broken_by(&self, a: u32, b: u32) -> Option<Breach> {
        match self.kept(a, b) {
            Kept::Broken(x) => Some(x),
            _ => None,
        }
    }

    /// The loops whose iterations the schedule leaves unordered or
    /// reverses (some pair of operations first differs in them and is not
    /// kept in order), by counter; None when a pair in one iteration of
    /// every common loop is not kept, or past `TWIN_LIMIT` operations (the
    /// check is pairwise). With `same_as`, what finds the `doall` marking
    /// an affine schedule stands for.
    pub fn unordered_loops(&self, program: &Program) -> Option<Vec<bool>> {
        let n = self.facts.n_ops();
        if n > TWIN_LIMIT {
            return None;
        }
        let mut parallel = vec![false; program.counters.len()];
        for a in 0..n as u32 {
            for b in a + 1..n as u32 {
                match self.broken_by(a, b) {
                    Some(Breach::Loop(c)) => parallel[c.index()] = true,
                    Some(Breach::Body) => return None,
                    None => {}
                }
            }
        }
        Some(parallel)
    }

    /// Whether `other` keeps exactly the same pairs of operations in order
    /// (at most `TWIN_LIMIT` operations).
    pub fn same_as(&self, program: &Program, other: &Schedule) -> bool {
        let n = self.facts.n_ops();
        let o = Order::new(program, self.facts, other);
        n <= TWIN_LIMIT
            && (0..n as u32).all(|a| {
                (a + 1..n as u32)
                    .all(|b| self.broken_by(a, b).is_some() == o.broken_by(a, b).is_some())
            })
    }

    /// Every operation's step in one execution of the schedule (from 1; 0
    /// is before every operation) and the number of steps + 1. Loop-level:
    /// the operations of one statement that differ only in parallel
    /// counters share a step, steps in program order. Affine: one step per
    /// time, in lexicographic order.
    pub fn steps(&self) -> (Vec<u32>, u32) {
        let f = self.facts;
        let mut step = vec![0u32; f.n_ops()];
        if self.schedule.affine.is_some() {
            let mut ops: Vec<u32> = (0..f.n_ops() as u32).collect();
            ops.sort_by(|&a, &b| self.time(a).cmp(self.time(b)));
            let mut now = 0;
            for (k, &op) in ops.iter().enumerate() {
                if k == 0 || self.time(ops[k - 1]) != self.time(op) {
                    now += 1;
                }
                step[op as usize] = now;
            }
            return (step, now + 1);
        }
        let mut steps: HashMap<(u32, Vec<i64>), u32> = HashMap::new();
        for op in 0..f.n_ops() as u32 {
            let seq: Vec<i64> = self
                .loops(op)
                .iter()
                .zip(f.op_iter(op))
                .filter(|(c, _)| !self.schedule.is_parallel(**c))
                .map(|(_, &v)| v)
                .collect();
            let next = steps.len() as u32 + 1;
            step[op as usize] = *steps.entry((f.op_site[op as usize], seq)).or_insert(next);
        }
        (step, steps.len() as u32 + 1)
    }

    /// The value of loop `c`'s counter in `op`, if `op` is inside it.
    pub fn counter_at(&self, op: u32, c: CounterId) -> Option<i64> {
        let d = self.loops(op).iter().position(|&x| x == c)?;
        Some(self.facts.op_iter(op)[d])
    }
}
