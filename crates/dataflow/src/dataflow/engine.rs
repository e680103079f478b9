//! Runs the rules over the lowered facts, a batch of reads at a time.
//!
//! Every read is independent of every other, so the rules run on batches of
//! reads: memory stays bounded by the batch, not by the program. The walk of
//! each read carries fuel; a read that runs out is run again on its own with
//! the rest of the budget, so no single batch can grow without bound.

use super::{DataflowError, Flow};
use crate::facts::{Facts, Lit, LowerError, NONE};

/// Access-instance ids.
pub type Acc = u32;
/// Operation ids.
pub type Op = u32;

/// Readers per batch (at least: a batch ends at an operation's end).
pub(super) const BATCH: usize = 1 << 13;
/// Steps each walk may take inside a batch before it is run on its own.
pub(super) const FUEL: u32 = 64;

/// How reads are cut into runs: batches of at least `batch` readers, each
/// walk with `fuel` steps before it is run on its own. Tests use small
/// ones, to run many batches and walks alone on small programs.
#[derive(Clone, Copy, Debug)]
pub(super) struct Cut {
    pub(super) batch: usize,
    pub(super) fuel: u32,
}

impl Cut {
    pub(super) const DEFAULT: Cut = Cut {
        batch: BATCH,
        fuel: FUEL,
    };
}

/// The context of one run of the rules, the one tuple of relation `ctx`:
/// the facts, looked up by key, the batch's readers, and the fuel of each
/// walk. Equal to every other context: there is one per run.
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    pub facts: &'a Facts,
    /// read(X, O) and update(X, O) of the batch.
    pub reads: &'a [(Acc, Op)],
    pub updates: &'a [(Acc, Op)],
    pub fuel: u32,
}

impl PartialEq for Ctx<'_> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for Ctx<'_> {}
impl std::hash::Hash for Ctx<'_> {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

/// What the rule sources name, for the program [`crate::dataflow_engine!`]
/// expands (rule files cannot import: they are pasted where they are
/// included).
pub mod prelude {
    pub use super::{Acc, Ctx, Op};
    pub use crate::facts::{Lit, NONE};
}

/// The input of one run of the rules.
pub struct Input<'a> {
    pub ctx: Ctx<'a>,
    /// closure(O, L) and cond_lit(O, I, B) of the batch's reading operations.
    pub closure: &'a [(Op, Lit)],
    pub conds: &'a [(Op, u32, bool)],
}

/// What one run of the rules derived.
pub struct Outcome {
    pub source: Vec<(Acc, Acc)>,
    pub initial: Vec<(Acc,)>,
    pub exhausted: Vec<(Acc,)>,
    /// `visit` tuples derived (what the walk budget counts).
    pub visits: usize,
}

/// A compiled program of rules: the core rules with the rules of a set of
/// access kinds. ascent compiles a program where `ascent!` is expanded, so a
/// crate that adds a kind with rules builds its own engine with
/// [`crate::dataflow_engine!`] and hands it to
/// [`super::kinds::Kinds::with_engine`].
pub trait Engine: Sync {
    /// Its name (for `Debug` and equality of kind sets).
    fn name(&self) -> &'static str;
    /// Runs the rules on one batch.
    fn run(&self, input: &Input<'_>) -> Outcome;
}

/// Defines a unit struct implementing [`Engine`] that runs the core rules
/// (`dataflow_core`, `dataflow_must`, `dataflow_may`, `dataflow_update` of
/// [`crate::dataflow::rules`]) together with the given ascent items,
/// typically `include_source!(path::to::my_kind_rules);` lines. The caller's
/// crate must depend on `ascent` 0.8 (ascent's expansion names `::ascent`).
///
/// ```ignore
/// arrayflow::dataflow_engine! {
///     pub struct MyEngine;
///     include_source!(crate::rules::my_kind);
/// }
/// ```
#[macro_export]
macro_rules! dataflow_engine {
    ($(#[$m:meta])* $vis:vis struct $name:ident; $($rules:tt)*) => {
        $(#[$m])*
        $vis struct $name;

        impl $crate::dataflow::engine::Engine for $name {
            fn name(&self) -> &'static str {
                concat!(module_path!(), "::", stringify!($name))
            }

            fn run<'a>(
                &self,
                input: &$crate::dataflow::engine::Input<'a>,
            ) -> $crate::dataflow::engine::Outcome {
                #[allow(unused_imports)]
                use $crate::dataflow::engine::prelude::*;
                let ctx = input.ctx;
                let r = ::ascent::ascent_run! {
                    struct Walk<'a>;
                    include_source!($crate::dataflow::rules::core_rules::dataflow_core);
                    include_source!($crate::dataflow::rules::must::dataflow_must);
                    include_source!($crate::dataflow::rules::may::dataflow_may);
                    include_source!($crate::dataflow::rules::update::dataflow_update);
                    $($rules)*

                    ctx(ctx);
                    closure(o, l) <-- for &(o, l) in input.closure.iter();
                    cond_lit(o, i, b) <-- for &(o, i, b) in input.conds.iter();
                };
                $crate::dataflow::engine::Outcome {
                    visits: r.visit.len(),
                    source: r.source,
                    initial: r.initial,
                    exhausted: r.exhausted,
                }
            }
        }
    };
}

crate::dataflow_engine! {
    /// The engine of the core kinds: the core rules alone.
    pub struct CoreEngine;
}

/// The input relations of one batch.
#[derive(Default)]
pub(super) struct Batch {
    pub(super) reads: Vec<(Acc, Op)>,
    pub(super) updates: Vec<(Acc, Op)>,
    closure: Vec<(Op, Lit)>,
    conds: Vec<(Op, u32, bool)>,
    pub(super) last_op: Option<Op>,
}

impl Batch {
    pub(super) fn add(&mut self, facts: &Facts, x: Acc) {
        let o = facts.op(x);
        if facts.is_update(x) {
            self.updates.push((x, o));
        } else {
            self.reads.push((x, o));
        }
        if self.last_op != Some(o) {
            self.last_op = Some(o);
            self.closure.extend(facts.closure(o).map(|l| (o, l)));
            self.conds
                .extend(facts.cond_lits(o).map(|(i, b)| (o, i, b)));
        }
    }

    pub(super) fn len(&self) -> usize {
        self.reads.len() + self.updates.len()
    }

    /// Empties the batch, keeping its buffers for the next one.
    fn clear(&mut self) {
        self.reads.clear();
        self.updates.clear();
        self.closure.clear();
        self.conds.clear();
        self.last_op = None;
    }
}

pub(super) fn run(engine: &dyn Engine, facts: &Facts, batch: &Batch, fuel: u32) -> Outcome {
    arrayflow_model::cancel::poll();
    engine.run(&Input {
        ctx: Ctx {
            facts,
            reads: &batch.reads,
            updates: &batch.updates,
            fuel,
        },
        closure: &batch.closure,
        conds: &batch.conds,
    })
}

/// Collects the results of the batches into a [`Flow`].
pub(super) struct Collector {
    pub(super) pairs: Vec<(u32, u64)>,
    pub(super) visits: u64,
    pub(super) max: u64,
    pub(super) max_memory: u64,
    /// Steps of each walk in a batch.
    pub(super) fuel: u32,
    /// When kept: one bit per access instance, set when the initial value
    /// of its cell reaches it.
    pub(super) initial_accs: Option<Vec<u64>>,
}

/// The facts and the initial-value bit of each access instance, when kept.
pub(super) type Kept = (Facts, Vec<u64>);

/// What one evaluation may spend and keep, and how it cuts its runs.
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    pub(super) max_visits: u64,
    pub(super) max_memory: u64,
    /// Keep the facts and the initial-value bits.
    pub(super) keep: bool,
    pub(super) cut: Cut,
}

/// The reference: one batch after the other on this thread.
pub(super) fn evaluate_sequential(
    engine: &dyn Engine,
    facts: Facts,
    limits: Limits,
) -> Result<(Flow, Option<Kept>), DataflowError> {
    let mut flow = Flow::start(&facts);
    let mut col = Collector::new(&facts, limits);
    let mut batch = Batch::default();
    let mut slot_done = 0usize;
    let n = facts.n_accs();
    for x in 0..n as u32 {
        if !facts.is_read(x) {
            continue;
        }
        if batch.len() >= limits.cut.batch && batch.last_op != Some(facts.op(x)) {
            slot_done = flush(
                engine,
                &facts,
                &mut batch,
                &mut col,
                &mut flow,
                slot_done,
                facts.op(x),
            )?;
        }
        batch.add(&facts, x);
    }
    flush(
        engine, &facts, &mut batch, &mut col, &mut flow, slot_done, NONE,
    )?;
    Ok(col.finish(flow, facts))
}

/// Runs one batch and finishes every slot of operations before `next_op`.
fn flush(
    engine: &dyn Engine,
    facts: &Facts,
    batch: &mut Batch,
    col: &mut Collector,
    flow: &mut Flow,
    slot_done: usize,
    next_op: Op,
) -> Result<usize, DataflowError> {
    if batch.len() > 0 {
        crate::budget::check(col.max_memory, || "the sources of the reads".to_string())?;
        let out = run(engine, facts, batch, col.fuel);
        flow.stats.runs += 1;
        flow.stats.read_instances += batch.len() as u64;
        col.charge(facts, out.visits, batch)?;
        let mut redo: Vec<Acc> = out.exhausted.iter().map(|&(x,)| x).collect();
        redo.sort_unstable();
        redo.dedup();
        let keep = |x: &Acc| redo.binary_search(x).is_err();
        col.add(facts, flow, &out.source, &out.initial, keep);
        for &x in &redo {
            let mut one = Batch::default();
            one.add(facts, x);
            let fuel = u32::try_from(col.max.saturating_sub(col.visits)).unwrap_or(u32::MAX - 1);
            let out = run(engine, facts, &one, fuel);
            flow.stats.runs += 1;
            col.charge(facts, out.visits, &one)?;
            if !out.exhausted.is_empty() {
                return Err(col.over(facts, &one));
            }
            col.add(facts, flow, &out.source, &out.initial, |_| true);
        }
        batch.clear();
    }
    let mut end = slot_done;
    while end < facts.slots.len() && facts.slots[end].op < next_op {
        end += 1;
    }
    flow.finish_slots(slot_done, end, &mut col.pairs);
    Ok(end)
}

/// The largest operation of a batch (what a budget error names).
pub(super) fn max_op(batch: &Batch) -> Op {
    batch
        .reads
        .iter()
        .chain(&batch.updates)
        .map(|&(_, o)| o)
        .max()
        .unwrap_or(0)
}

impl Collector {
    pub(super) fn new(facts: &Facts, limits: Limits) -> Collector {
        Collector {
            pairs: Vec::new(),
            visits: 0,
            max: limits.max_visits,
            max_memory: limits.max_memory,
            fuel: limits.cut.fuel,
            initial_accs: (limits.keep).then(|| vec![0; facts.n_accs().div_ceil(64)]),
        }
    }

    /// The flow with its stats and tables, and the facts when kept.
    pub(super) fn finish(self, mut flow: Flow, facts: Facts) -> (Flow, Option<Kept>) {
        flow.stats.walk_steps = self.visits;
        match self.initial_accs {
            Some(bits) => {
                flow.adopt_copy(&facts);
                (flow, Some((facts, bits)))
            }
            None => {
                flow.adopt(facts);
                (flow, None)
            }
        }
    }

    fn charge(&mut self, facts: &Facts, visits: usize, batch: &Batch) -> Result<(), DataflowError> {
        self.charge_at(facts, visits, max_op(batch))
    }

    /// Adds `visits` walk steps of a run whose largest operation is `op`.
    pub(super) fn charge_at(
        &mut self,
        facts: &Facts,
        visits: usize,
        op: Op,
    ) -> Result<(), DataflowError> {
        self.visits = self.visits.saturating_add(visits as u64);
        if self.visits > self.max {
            return Err(self.over_at(facts, op));
        }
        Ok(())
    }

    fn over(&self, facts: &Facts, batch: &Batch) -> DataflowError {
        self.over_at(facts, max_op(batch))
    }

    /// The walk-step budget error at operation `op`.
    pub(super) fn over_at(&self, facts: &Facts, op: Op) -> DataflowError {
        let site = facts.op_site.get(op as usize).map(|_| facts.site(op));
        self.over_site(facts, site.map(|s| facts.site_index(s)))
    }

    /// Adds `visits` walk steps, the last reader's site index being `site`.
    #[cfg_attr(not(feature = "dd"), allow(dead_code))]
    pub(super) fn charge_site(
        &mut self,
        facts: &Facts,
        visits: usize,
        site: Option<usize>,
    ) -> Result<(), DataflowError> {
        self.visits = self.visits.saturating_add(visits as u64);
        if self.visits > self.max {
            return Err(self.over_site(facts, site));
        }
        Ok(())
    }

    /// The walk-step budget error at a reader of site index `site`.
    fn over_site(&self, facts: &Facts, site: Option<usize>) -> DataflowError {
        LowerError::Budget {
            unit: "walk steps",
            site: (site.and_then(|s| facts.site_names.get(s)))
                .map_or_else(String::new, Clone::clone),
            span: crate::model::Span::NONE,
            count: self.visits,
            max: self.max,
            params: facts.params.clone(),
        }
    }

    pub(super) fn add(
        &mut self,
        facts: &Facts,
        flow: &mut Flow,
        source: &[(Acc, Acc)],
        initial: &[(Acc,)],
        keep: impl Fn(&Acc) -> bool,
    ) {
        for &(x, w) in source {
            if keep(&x) {
                let o = facts.op(w);
                let site = u64::from(facts.op_site[o as usize]);
                self.pairs
                    .push((facts.acc_slot[x as usize], site << 32 | u64::from(o)));
            }
        }
        for &(x,) in initial {
            if keep(&x) {
                self.initial(facts, flow, x);
            }
        }
    }

    /// Records that the initial value of its cell reaches read `x`.
    pub(super) fn initial(&mut self, facts: &Facts, flow: &mut Flow, x: Acc) {
        flow.set_initial(facts.acc_slot[x as usize]);
        if let Some(w) = self
            .initial_accs
            .as_mut()
            .and_then(|b| b.get_mut(x as usize / 64))
        {
            *w |= 1 << (x % 64);
        }
    }
}
