//! σ on several cores: the batches of [`super::engine`] run on rayon's
//! threads, and their results are merged in batch order, so the [`Flow`],
//! its stats and every error are those of the sequential engine (the
//! reference, `engine::evaluate_sequential`).
//!
//! - Batches are cut exactly as the sequential engine cuts them (at least
//!   `engine::BATCH`, 8192, readers, ending at an operation's end): a budget error
//!   names the same operation and count.
//! - At most `16 × threads` batches are in flight (a window): one thread
//!   merges the outcomes in batch order, starts batch `i + window` once
//!   batch `i` is merged, and runs queued batches while the next outcome is
//!   not in (`rayon::yield_now`), so no thread waits at a window's end.
//!   Each batch owns its input and output (handed over through its own
//!   uncontended mutex); the threads share two atomics (steps spent, stop).
//! - A walk out of fuel is run again on its own in the worker, with the
//!   budget left by every run finished so far (a bound the sequential run
//!   never goes under when it succeeds); the merge keeps that result when
//!   the sequential engine would have found the same, else runs it again
//!   with the sequential fuel (only on the way to a budget error).
//!
//! The thread count is rayon's: that of the pool the caller runs in
//! ([`with_threads`]), one thread meaning the sequential engine.

use super::engine::{self, Acc, Batch, Collector, Engine, Kept, Limits, Op, Outcome};
use super::{DataflowError, Flow};
use crate::budget::Exceeded;
use crate::facts::{role, Facts, NONE};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

/// Batches per thread in flight.
const PER_THREAD: usize = 16;

/// Runs `f` in a pool of `threads` threads (0: [`default_threads`]): every
/// bounded σ computed inside uses them ([`super::analyze`] and the
/// database's queries alike). One thread runs the sequential engine.
pub fn with_threads<R: Send>(
    threads: usize,
    f: impl FnOnce() -> R + Send,
) -> Result<R, rayon::ThreadPoolBuildError> {
    let n = if threads == 0 {
        default_threads()
    } else {
        threads
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        // The main thread's usual stack: the whole command may run here.
        .stack_size(8 << 20)
        .thread_name(|k| format!("arrayflow-{k}"))
        .build()?;
    Ok(pool.install(f))
}

/// `ARRAYFLOW_THREADS` when it is a positive integer, else the available
/// parallelism (1 when unknown).
pub fn default_threads() -> usize {
    env_threads()
        .ok()
        .flatten()
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The thread count `ARRAYFLOW_THREADS` asks for: `None` when unset, an
/// error when it is not a positive integer.
pub fn env_threads() -> Result<Option<usize>, String> {
    match std::env::var("ARRAYFLOW_THREADS") {
        Err(std::env::VarError::NotPresent) => Ok(None),
        Ok(v) => match v.trim().parse::<usize>() {
            Ok(n) if n > 0 => Ok(Some(n)),
            _ => Err(format!(
                "`ARRAYFLOW_THREADS={v}`: the thread count must be a positive integer"
            )),
        },
        Err(_) => Err("`ARRAYFLOW_THREADS` is not Unicode text".to_string()),
    }
}

/// One batch: the read instances `start..end` (pure reads and updates among
/// them), and the first operation after it.
#[derive(Clone, Copy)]
struct Spec {
    start: Acc,
    end: Acc,
    next_op: Op,
}

/// The batches of `facts` of at least `size` readers, cut where the
/// sequential engine cuts them.
fn split(facts: &Facts, size: usize) -> Vec<Spec> {
    cut(&facts.acc_role, &facts.acc_op, size)
}

/// [`split`] over the roles and operations of the access instances (`size`
/// at least 1). The
/// sequential engine's loop looks at every reader; here the readers that
/// cannot end a batch (the first `size` of it) are only counted, a byte
/// test the compiler vectorizes, since the loop's 8M steps at matmul N=128
/// ran before any thread had work (9 ms of the 90 ms after the lowering).
fn cut(roles: &[u8], ops: &[u32], size: usize) -> Vec<Spec> {
    let n = roles.len();
    let is_read = |x: usize| roles[x] & role::READ != 0;
    let mut specs = Vec::new();
    let mut x = 0;
    while let Some(start) = (x..n).find(|&y| is_read(y)) {
        // Past the `size`-th reader from `start`: a window of `need` access
        // instances holds at most `need` readers.
        let (mut y, mut need) = (start, size.max(1));
        while need > 0 && y < n {
            let end = n.min(y + need);
            need -= roles[y..end]
                .iter()
                .filter(|&&r| r & role::READ != 0)
                .count();
            y = end;
        }
        // The batch ends at the first reader of another operation than the
        // reader before it (the last counted one: every reader up to there
        // belongs to the batch).
        let mut last = (start..y)
            .rev()
            .find(|&z| is_read(z))
            .map_or(NONE, |z| ops[z]);
        let mut next = None;
        while y < n {
            if is_read(y) {
                if ops[y] != last {
                    next = Some(y);
                    break;
                }
                last = ops[y];
            }
            y += 1;
        }
        let (end, next_op) = next.map_or((n, NONE), |y| (y, ops[y]));
        specs.push(Spec {
            start: start as Acc,
            end: end as Acc,
            next_op,
        });
        x = end;
    }
    specs
}

/// What the threads share.
#[derive(Default)]
struct Shared {
    /// Walk steps of every run finished so far, in any order.
    spent: AtomicU64,
    /// Set on an error: workers skip what is left.
    stop: AtomicBool,
}

/// A walk run again on its own, with the fuel it had.
struct Redo {
    x: Acc,
    fuel: u32,
    out: Outcome,
}

/// One batch run by a worker.
struct Ran {
    len: usize,
    max_op: Op,
    visits: usize,
    /// `(slot, site << 32 | op)` of the batch's finished walks, sorted.
    pairs: Vec<(u32, u64)>,
    /// Finished walks the initial value reaches.
    initial: Vec<Acc>,
    redo: Vec<Redo>,
}

enum Done {
    Ran(Ran),
    /// Left after a stop: the merge runs it if it needs it.
    Skipped,
    Memory(Exceeded),
    /// A worker's panic, raised again by the merge.
    Panic(Box<dyn std::any::Any + Send>),
}

/// The fixed inputs of one evaluation.
struct Job<'a> {
    engine: &'a dyn Engine,
    facts: &'a Facts,
    max: u64,
    max_memory: u64,
    fuel: u32,
    shared: Shared,
}

impl Job<'_> {
    fn work(&self, spec: Spec, forced: bool) -> Done {
        let stopped = || !forced && self.shared.stop.load(Relaxed);
        if stopped() {
            return Done::Skipped;
        }
        if let Err(e) =
            crate::budget::check(self.max_memory, || "the sources of the reads".to_string())
        {
            self.shared.stop.store(true, Relaxed);
            return Done::Memory(e);
        }
        let facts = self.facts;
        let mut batch = Batch::default();
        for x in spec.start..spec.end {
            if facts.is_read(x) {
                batch.add(facts, x);
            }
        }
        let out = engine::run(self.engine, facts, &batch, self.fuel);
        self.spend(out.visits);
        let mut redo: Vec<Acc> = out.exhausted.iter().map(|&(x,)| x).collect();
        redo.sort_unstable();
        redo.dedup();
        let keep = |x: &Acc| redo.binary_search(x).is_err();
        let mut pairs: Vec<(u32, u64)> = (out.source.iter())
            .filter(|(x, _)| keep(x))
            .map(|&(x, w)| {
                let o = facts.op(w);
                let site = u64::from(facts.op_site[o as usize]);
                (facts.acc_slot[x as usize], site << 32 | u64::from(o))
            })
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        let initial = (out.initial.iter()).map(|&(x,)| x).filter(keep).collect();
        let mut ran = Ran {
            len: batch.len(),
            max_op: engine::max_op(&batch),
            visits: out.visits,
            pairs,
            initial,
            redo: Vec::with_capacity(redo.len()),
        };
        drop(batch);
        for x in redo {
            if stopped() {
                return Done::Skipped;
            }
            let left = self.max.saturating_sub(self.shared.spent.load(Relaxed));
            let fuel = u32::try_from(left).unwrap_or(u32::MAX - 1);
            let out = self.alone(x, fuel);
            self.spend(out.visits);
            ran.redo.push(Redo { x, fuel, out });
        }
        Done::Ran(ran)
    }

    /// Runs the walk of `x` on its own.
    fn alone(&self, x: Acc, fuel: u32) -> Outcome {
        let mut one = Batch::default();
        one.add(self.facts, x);
        engine::run(self.engine, self.facts, &one, fuel)
    }

    fn spend(&self, visits: usize) {
        let now = self.shared.spent.fetch_add(visits as u64, Relaxed) + visits as u64;
        // The sequential run fails too: its runs are a superset of these
        // with no fewer steps each.
        if now > self.max {
            self.shared.stop.store(true, Relaxed);
        }
    }

    /// Merges one batch, the next in order, as the sequential engine's
    /// `flush` does; returns the slots finished.
    fn merge(
        &self,
        spec: Spec,
        done: Done,
        flow: &mut Flow,
        col: &mut Collector,
        slot_done: usize,
    ) -> Result<usize, DataflowError> {
        let r = self.merge_one(spec, done, flow, col);
        if r.is_err() {
            self.shared.stop.store(true, Relaxed);
        }
        r?;
        let facts = self.facts;
        let mut end = slot_done;
        while end < facts.slots.len() && facts.slots[end].op < spec.next_op {
            end += 1;
        }
        flow.finish_slots(slot_done, end, &mut col.pairs);
        Ok(end)
    }

    fn merge_one(
        &self,
        spec: Spec,
        done: Done,
        flow: &mut Flow,
        col: &mut Collector,
    ) -> Result<(), DataflowError> {
        let facts = self.facts;
        let ran = match done {
            Done::Ran(ran) => ran,
            Done::Memory(e) => return Err(e.into()),
            Done::Panic(p) => {
                self.shared.stop.store(true, Relaxed);
                std::panic::resume_unwind(p)
            }
            Done::Skipped => match self.work(spec, true) {
                Done::Ran(ran) => ran,
                Done::Memory(e) => return Err(e.into()),
                Done::Skipped | Done::Panic(_) => unreachable!("a forced run is run here"),
            },
        };
        flow.stats.runs += 1;
        flow.stats.read_instances += ran.len as u64;
        col.charge_at(facts, ran.visits, ran.max_op)?;
        col.pairs.extend_from_slice(&ran.pairs);
        for x in ran.initial {
            col.initial(facts, flow, x);
        }
        for Redo { x, fuel, out } in ran.redo {
            let exact = u32::try_from(col.max.saturating_sub(col.visits)).unwrap_or(u32::MAX - 1);
            // A finished walk within the budget left finishes the same way
            // with the sequential fuel (its depth is below its steps).
            let same = fuel == exact
                || (out.exhausted.is_empty()
                    && col.visits.saturating_add(out.visits as u64) <= col.max);
            let out = if same { out } else { self.alone(x, exact) };
            flow.stats.runs += 1;
            let op = facts.op(x);
            col.charge_at(facts, out.visits, op)?;
            if !out.exhausted.is_empty() {
                return Err(col.over_at(facts, op));
            }
            col.add(facts, flow, &out.source, &out.initial, |_| true);
        }
        Ok(())
    }
}

/// [`engine::evaluate_sequential`] on the threads of the current rayon pool.
pub(super) fn evaluate_with(
    engine: &dyn Engine,
    facts: Facts,
    limits: Limits,
) -> Result<(Flow, Option<Kept>), DataflowError> {
    let specs = split(&facts, limits.cut.batch);
    if specs.len() < 2 {
        return engine::evaluate_sequential(engine, facts, limits);
    }
    let window = PER_THREAD * rayon::current_num_threads();
    let mut flow = Flow::start(&facts);
    let mut col = Collector::new(&facts, limits);
    let job = Job {
        engine,
        facts: &facts,
        max: limits.max_visits,
        max_memory: limits.max_memory,
        fuel: limits.cut.fuel,
        shared: Shared::default(),
    };
    // Each batch's outcome, put by the worker that ran it, taken by the merge.
    let outs: Vec<Mutex<Option<Done>>> = specs.iter().map(|_| Mutex::new(None)).collect();
    let take = |i: usize| outs[i].lock().unwrap_or_else(|e| e.into_inner()).take();
    let watch = arrayflow_model::cancel::current();
    let slot_done = rayon::scope(|s| -> Result<usize, DataflowError> {
        let spawn = |i: usize| {
            let (job, outs, spec, watch) = (&job, &outs, specs[i], watch.clone());
            s.spawn(move |_| {
                let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    arrayflow_model::cancel::watching(watch, || job.work(spec, false))
                }))
                .unwrap_or_else(Done::Panic);
                *outs[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(done);
            });
        };
        for i in 0..window.min(specs.len()) {
            spawn(i);
        }
        let mut slot_done = 0;
        for (i, &spec) in specs.iter().enumerate() {
            let done = loop {
                if let Some(done) = take(i) {
                    break done;
                }
                arrayflow_model::cancel::poll();
                // Runs another batch meanwhile, else waits for this one.
                if rayon::yield_now() != Some(rayon::Yield::Executed) {
                    std::thread::yield_now();
                }
            };
            if let Some(j) = (i + window < specs.len()).then_some(i + window) {
                spawn(j);
            }
            slot_done = job.merge(spec, done, &mut flow, &mut col, slot_done)?;
        }
        Ok(slot_done)
    })?;
    flow.finish_slots(slot_done, facts.slots.len(), &mut col.pairs);
    Ok(col.finish(flow, facts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The sequential engine's loop (`engine::evaluate_sequential`), reader
    /// by reader: the reference for [`cut`].
    fn plain(roles: &[u8], ops: &[u32], size: usize) -> Vec<(Acc, Acc, Op)> {
        let mut specs = Vec::new();
        let (mut start, mut len, mut last_op) = (0, 0usize, None);
        for x in 0..roles.len() {
            if roles[x] & role::READ == 0 {
                continue;
            }
            let o = ops[x];
            if len >= size && last_op != Some(o) {
                specs.push((start, x as Acc, o));
                (start, len) = (x as Acc, 0);
            }
            if len == 0 {
                start = x as Acc;
            }
            len += 1;
            last_op = Some(o);
        }
        if len > 0 {
            specs.push((start, roles.len() as Acc, NONE));
        }
        specs
    }

    fn check(roles: &[u8], ops: &[u32], size: usize) {
        let got: Vec<_> = (cut(roles, ops, size).iter())
            .map(|s| (s.start, s.end, s.next_op))
            .collect();
        assert_eq!(got, plain(roles, ops, size), "size {size}");
    }

    #[test]
    fn cuts_by_hand() {
        let (r, w) = (role::READ, role::WRITE);
        // Operations 0 0 1 1 1 2: a batch of 2 readers ends at operation 1,
        // the next takes all of 1 (3 readers) and ends at 2.
        let roles = [r, r, r, r | w, r, r];
        let ops = [0, 0, 1, 1, 1, 2];
        let cuts: Vec<_> = (cut(&roles, &ops, 2).iter())
            .map(|s| (s.start, s.end, s.next_op))
            .collect();
        assert_eq!(cuts, [(0, 2, 1), (2, 5, 2), (5, 6, NONE)]);
        // Writes only, or nothing: no batch.
        assert!(cut(&[w, w], &[0, 1], 1).is_empty());
        assert!(cut(&[], &[], 4).is_empty());
        // Leading and trailing writes: the first batch starts at the first
        // reader, the last one ends at the end.
        let cuts: Vec<_> = (cut(&[w, r, w, r, w], &[0, 1, 1, 2, 3], 1).iter())
            .map(|s| (s.start, s.end, s.next_op))
            .collect();
        assert_eq!(cuts, [(1, 3, 2), (3, 5, NONE)]);
    }

    proptest! {
        #[test]
        fn cuts_like_the_sequential_engine(
            runs in proptest::collection::vec((0u8..8, 1usize..6), 0..80),
            size in 1usize..12,
        ) {
            // Runs of access instances of one operation each; an operation
            // may come back later (a frame's operations need not be in
            // order).
            let (mut roles, mut ops) = (Vec::new(), Vec::new());
            for (k, &(bits, len)) in runs.iter().enumerate() {
                let op = if bits & 4 != 0 { k as u32 / 2 } else { k as u32 };
                for i in 0..len {
                    roles.push(if (bits >> (i % 2)) & 1 != 0 { role::READ } else { role::WRITE });
                    ops.push(op);
                }
            }
            check(&roles, &ops, size);
        }
    }
}
