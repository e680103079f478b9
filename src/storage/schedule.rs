//! A loop-level schedule: the `for` loops that run in parallel (`--parallel
//! i,j`, or the program's `doall` marks), every other loop and every
//! statement list in program order. Two operations are ordered by it when
//! the first common loop whose iterations they differ in is sequential, or
//! when they share every common loop's iteration (program order within a
//! body); iterations of a parallel loop are unordered.

use crate::dataflow::render::site_loops;
use crate::facts::Facts;
use crate::model::{CounterId, Program};

/// The parallel loops of a schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// By counter id.
    pub parallel: Vec<bool>,
}

/// `--parallel` names no `for` loop of the program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownLoop(pub String);

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
        Ok(Schedule { parallel })
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

/// The schedule over the operations of one bounded analysis.
pub struct Order<'a> {
    pub facts: &'a Facts,
    /// Loops around each site, by site index.
    pub loops_of: Vec<Vec<CounterId>>,
    pub schedule: &'a Schedule,
}

impl<'a> Order<'a> {
    pub fn new(program: &Program, facts: &'a Facts, schedule: &'a Schedule) -> Order<'a> {
        Order {
            facts,
            loops_of: site_loops(program),
            schedule,
        }
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

    /// Whether the schedule keeps `a` (earlier in program order) before `b`;
    /// when not, the parallel loop that breaks the order.
    pub fn broken_by(&self, a: u32, b: u32) -> Option<CounterId> {
        self.split(a, b)
            .map(|(c, _)| c)
            .filter(|&c| self.schedule.is_parallel(c))
    }

    /// The value of loop `c`'s counter in `op`, if `op` is inside it.
    pub fn counter_at(&self, op: u32, c: CounterId) -> Option<i64> {
        let d = self.loops(op).iter().position(|&x| x == c)?;
        Some(self.facts.op_iter(op)[d])
    }
}
