//! Bounded-domain array dataflow: for every read of every operation, the
//! operations that may have written the value it reads (the source function
//! σ of the maximal static expansion paper), at concrete parameter values.
//!
//! [`analyze`] lowers the program into the relations of [`crate::facts`] and
//! runs the ascent rules of `rules/` on them (docs/rules.md). The result is a
//! [`Flow`], kept compact (dense ids, one flat array of sources) so that it
//! costs a few bytes per read instance.

pub mod assemble;
#[doc(hidden)]
pub mod bag;
#[cfg(feature = "dd")]
pub mod dd;
pub mod dispatch;
pub mod engine;
pub mod grouped;
pub mod kinds;
#[cfg(feature = "dd")]
pub mod merge;
pub mod parallel;
#[cfg(feature = "dd")]
mod part;
pub mod reference;
pub mod render;
pub mod rules;

pub use crate::facts::{Config, LowerError as DataflowError, DEFAULT_MAX_INSTANCES};
pub use parallel::{default_threads, env_threads, with_threads};

use crate::diagnostics::{Diagnostic, FileId};
use crate::facts::{Facts, Slot};
use crate::model::{ArrayId, Operation, Program, Site};
use kinds::Kinds;
use std::sync::OnceLock;

/// Computes σ for every read of `program` at the sizes of `config`.
///
/// Errors: bad parameter values, a bound or static condition that cannot be
/// evaluated, or a budget exceeded: more than `config.max_instances` access
/// instances, or more than that many steps of the rules' walk.
pub fn analyze(program: &Program, config: &Config) -> Result<Flow, DataflowError> {
    analyze_with(program, config, &Kinds::core())
}

/// [`analyze`] with the access kinds of `kinds` (lowerings and rules).
pub fn analyze_with(
    program: &Program,
    config: &Config,
    kinds: &Kinds,
) -> Result<Flow, DataflowError> {
    analyze_framed(program, config, kinds, &crate::facts::Frame::default())
}

/// [`analyze`] with the statements of `frame` lowered only for the cells the
/// rest of the program touches ([`crate::facts::Frame`]); the walk-step
/// budget grows by their instances (a budget error counts without them).
pub fn analyze_framed(
    program: &Program,
    config: &Config,
    kinds: &Kinds,
    frame: &crate::facts::Frame,
) -> Result<Flow, DataflowError> {
    #[cfg(feature = "dd")]
    if let Some(cluster) = dd::installed().filter(|c| c.processes() > 1) {
        // Across processes, each lowers only its share.
        if engine::Engine::name(kinds.engine()) == engine::Engine::name(&engine::CoreEngine) {
            return dd::analyze_shared(program, config, kinds.all(), frame, &cluster)
                .map_err(|(e, extra)| uncount_frame(e, extra, config.max_instances));
        }
    }
    let facts = crate::facts::lower_framed(program, config, kinds.all(), false, frame)?;
    let extra = facts.frame_instances;
    let max = config.max_instances;
    dispatch::evaluate(
        kinds.engine(),
        facts,
        max.saturating_add(extra),
        config.max_memory,
    )
    .map_err(|e| uncount_frame(e, extra, max))
}

/// A walk-step budget error counted without the frame's `extra` instances
/// (which raised the budget), against the budget `max` given.
fn uncount_frame(e: DataflowError, extra: u64, max: u64) -> DataflowError {
    match e {
        DataflowError::Budget {
            unit,
            site,
            span,
            count,
            params,
            ..
        } => DataflowError::Budget {
            unit,
            site,
            span,
            count: count.saturating_sub(extra),
            max,
            params,
        },
        e => e,
    }
}

/// σ together with the facts it was computed from: the access instances
/// with their cells, and which of them the initial value reaches. For layers
/// that reason about cells (expansion, parallelism); [`analyze`] is leaner.
#[derive(Debug)]
pub struct Instances {
    pub flow: Flow,
    /// Lowered with [`crate::facts::lower_cells`]: `acc_cell` and `cells` are filled.
    pub facts: Facts,
    initial: Vec<u64>,
}

impl Instances {
    /// Whether the initial value of its cell may reach read instance `acc`.
    pub fn initial_at(&self, acc: u32) -> bool {
        self.initial
            .get(acc as usize / 64)
            .is_some_and(|w| w & (1 << (acc % 64)) != 0)
    }
}

/// [`analyze`], keeping the facts and the access instances the initial value
/// reaches.
pub fn analyze_instances(program: &Program, config: &Config) -> Result<Instances, DataflowError> {
    analyze_instances_framed(
        program,
        config,
        &Kinds::core(),
        &crate::facts::Frame::default(),
    )
}

/// [`analyze_instances`] with the access kinds of `kinds`.
pub fn analyze_instances_with(
    program: &Program,
    config: &Config,
    kinds: &Kinds,
) -> Result<Instances, DataflowError> {
    analyze_instances_framed(program, config, kinds, &crate::facts::Frame::default())
}

/// [`analyze_instances_with`] with a [`crate::facts::Frame`] (as [`analyze_framed`]).
pub fn analyze_instances_framed(
    program: &Program,
    config: &Config,
    kinds: &Kinds,
    frame: &crate::facts::Frame,
) -> Result<Instances, DataflowError> {
    let facts = crate::facts::lower_framed(program, config, kinds.all(), true, frame)?;
    let max = config.max_instances.saturating_add(facts.frame_instances);
    let (flow, facts, initial) =
        dispatch::evaluate_keep(kinds.engine(), facts, max, config.max_memory)?;
    Ok(Instances {
        flow,
        facts,
        initial,
    })
}

/// The sources of one read: the writes it may read from, sorted (by
/// `Operation`'s order), and whether it may read the initial value.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Sources {
    pub writes: Vec<Operation>,
    pub initial: bool,
}

/// Sizes of one analysis, for budgets and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Access instances the lowering made (what `max_instances` bounds).
    pub access_instances: u64,
    /// Reader access instances (pure reads and updates).
    pub read_instances: u64,
    /// Writes the rules' walks visited (what bounds their work).
    pub walk_steps: u64,
    /// Runs of the rules (batches, and walks run again on their own).
    pub runs: u64,
}

/// σ for every read of a program: each read instance, named by its operation
/// and access index, with its sources.
#[derive(Debug)]
pub struct Flow {
    stats: Stats,
    params: Vec<(String, i64)>,
    max_trips: u32,
    n_stmts: u32,
    site_names: Vec<String>,
    site_arrays: Vec<Vec<ArrayId>>,
    /// Site index of each operation (statements, then conditions).
    op_site: Vec<u32>,
    op_iter_start: Vec<u32>,
    iters: Vec<i64>,
    slots: Vec<Slot>,
    /// Sources of slot s: `src[src_start[s]..src_start[s + 1]]`, op ids.
    src_start: Vec<u32>,
    src: Vec<u32>,
    initial: Vec<u64>,
    /// Slots grouped by site, each group in execution order (= iteration
    /// order), for lookups.
    by_site: OnceLock<(Vec<u32>, Vec<u32>)>,
}

impl Flow {
    /// An empty flow over the operations of `facts`, taking their side tables.
    fn start(facts: &Facts) -> Flow {
        Flow {
            stats: Stats {
                access_instances: facts.n_accs() as u64,
                ..Stats::default()
            },
            params: facts.params.clone(),
            max_trips: facts.max_trips,
            n_stmts: facts.n_stmts,
            site_names: facts.site_names.clone(),
            site_arrays: facts.site_arrays.clone(),
            op_site: Vec::new(),
            op_iter_start: Vec::new(),
            iters: Vec::new(),
            slots: Vec::new(),
            src_start: vec![0],
            src: Vec::new(),
            initial: vec![0; facts.slots.len().div_ceil(64)],
            by_site: OnceLock::new(),
        }
    }

    /// Moves the operation tables of `facts` in once the rules are done.
    fn adopt(&mut self, facts: Facts) {
        self.op_site = facts.op_site;
        self.op_iter_start = facts.op_iter_start;
        self.iters = facts.iters;
        self.slots = facts.slots;
    }

    /// Gives back the room its tables grew into: a flow a database keeps
    /// (a kernel's, until the file's other kernels are done).
    #[cfg_attr(not(feature = "dd"), allow(dead_code))]
    fn shrink(&mut self) {
        self.op_site.shrink_to_fit();
        self.op_iter_start.shrink_to_fit();
        self.iters.shrink_to_fit();
        self.slots.shrink_to_fit();
        self.src_start.shrink_to_fit();
        self.src.shrink_to_fit();
    }

    /// Copies the operation tables of `facts`, which the caller keeps.
    fn adopt_copy(&mut self, facts: &Facts) {
        self.op_site = facts.op_site.clone();
        self.op_iter_start = facts.op_iter_start.clone();
        self.iters = facts.iters.clone();
        self.slots = facts.slots.clone();
    }

    /// The operations (ids as in the facts) read slot `slot` may read from,
    /// sorted by site, then execution order.
    pub fn source_ops(&self, slot: usize) -> &[u32] {
        match (self.src_start.get(slot), self.src_start.get(slot + 1)) {
            (Some(&a), Some(&b)) => &self.src[a as usize..b as usize],
            _ => &[],
        }
    }

    fn set_initial(&mut self, slot: u32) {
        if let Some(w) = self.initial.get_mut(slot as usize / 64) {
            *w |= 1 << (slot % 64);
        }
    }

    /// Closes slots `from..to`, taking their `(slot, site << 32 | op)` pairs.
    fn finish_slots(&mut self, from: usize, to: usize, pairs: &mut Vec<(u32, u64)>) {
        pairs.sort_unstable();
        pairs.dedup();
        let mut k = 0;
        for s in from..to {
            while k < pairs.len() && pairs[k].0 as usize == s {
                self.src.push(pairs[k].1 as u32);
                k += 1;
            }
            self.src_start.push(self.src.len() as u32);
        }
        pairs.clear();
    }

    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The parameter values the analysis used, in declaration order.
    pub fn params(&self) -> &[(String, i64)] {
        &self.params
    }

    pub fn max_trips(&self) -> u32 {
        self.max_trips
    }

    /// The number of reads (pairs of an operation and an access index).
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Every read, in execution order of its operation, then access order
    /// (backwards too: a kernel's exit reads are its last).
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Read<'_>> {
        (0..self.slots.len() as u32).map(|slot| Read { flow: self, slot })
    }

    /// Every read, sorted by operation (site, then iteration vector), then
    /// access index: the order of every output.
    pub fn sorted(&self) -> impl Iterator<Item = Read<'_>> {
        let (_, order) = self.by_site.get_or_init(|| self.index_by_site());
        order.iter().map(move |&slot| Read { flow: self, slot })
    }

    /// The read of access `access` of operation `op`, if `op` is a potential
    /// operation with such a read.
    pub fn get(&self, op: &Operation, access: usize) -> Option<Read<'_>> {
        self.get_at(op.site, &op.iter, access)
    }

    /// [`Flow::get`] by site and iteration vector (no `Operation` needed).
    pub fn get_at(&self, site: Site, iter: &[i64], access: usize) -> Option<Read<'_>> {
        let (starts, order) = self.by_site.get_or_init(|| self.index_by_site());
        let site = self.site_index(site);
        let group = &order[*starts.get(site)? as usize..*starts.get(site + 1)? as usize];
        let k = group
            .binary_search_by(|&slot| {
                let s = self.slots[slot as usize];
                self.op_iter(s.op)
                    .cmp(iter)
                    .then((s.access as usize).cmp(&access))
            })
            .ok()?;
        Some(Read {
            flow: self,
            slot: group[k],
        })
    }

    /// The sources of access `access` of operation `op`.
    pub fn sources(&self, op: &Operation, access: usize) -> Option<Sources> {
        self.get(op, access).map(|r| r.sources())
    }

    fn index_by_site(&self) -> (Vec<u32>, Vec<u32>) {
        let n_sites = self.site_names.len();
        let mut starts = vec![0u32; n_sites + 1];
        for s in &self.slots {
            starts[self.op_site[s.op as usize] as usize + 1] += 1;
        }
        for k in 0..n_sites {
            starts[k + 1] += starts[k];
        }
        let mut fill = starts.clone();
        let mut order = vec![0u32; self.slots.len()];
        for (k, s) in self.slots.iter().enumerate() {
            let site = self.op_site[s.op as usize] as usize;
            order[fill[site] as usize] = k as u32;
            fill[site] += 1;
        }
        (starts, order)
    }

    fn site_index(&self, site: Site) -> usize {
        match site {
            Site::Stmt(s) => s.index(),
            Site::Cond(c) => self.n_stmts as usize + c.index(),
        }
    }

    /// The name of a site in every output.
    pub fn site_name(&self, site: Site) -> &str {
        self.site_names
            .get(self.site_index(site))
            .map_or("", String::as_str)
    }

    fn site(&self, op: u32) -> Site {
        let k = self.op_site[op as usize];
        if k < self.n_stmts {
            Site::Stmt(crate::model::StmtId(k))
        } else {
            Site::Cond(crate::model::CondId(k - self.n_stmts))
        }
    }

    fn op_iter(&self, op: u32) -> &[i64] {
        let o = op as usize;
        &self.iters[self.op_iter_start[o] as usize..self.op_iter_start[o + 1] as usize]
    }

    fn operation(&self, op: u32) -> Operation {
        Operation {
            site: self.site(op),
            iter: self.op_iter(op).to_vec(),
        }
    }
}

/// One read of a [`Flow`].
#[derive(Clone, Copy)]
pub struct Read<'a> {
    flow: &'a Flow,
    slot: u32,
}

impl<'a> Read<'a> {
    fn slot(&self) -> Slot {
        self.flow.slots[self.slot as usize]
    }

    /// The read's position in [`Flow::iter`] order (its slot).
    pub fn index(&self) -> usize {
        self.slot as usize
    }

    pub fn site(&self) -> Site {
        self.flow.site(self.slot().op)
    }

    pub fn iter(&self) -> &'a [i64] {
        self.flow.op_iter(self.flow.slots[self.slot as usize].op)
    }

    pub fn operation(&self) -> Operation {
        self.flow.operation(self.slot().op)
    }

    /// The access index: the read's position among its site's reads.
    pub fn access(&self) -> usize {
        self.slot().access as usize
    }

    pub fn array(&self) -> ArrayId {
        let site = self.flow.site_index(self.site());
        self.flow.site_arrays[site][self.access()]
    }

    pub fn initial(&self) -> bool {
        self.flow.initial[self.slot as usize / 64] & (1 << (self.slot % 64)) != 0
    }

    /// The writes it may read from, as (site, iteration vector), sorted.
    pub fn writes(&self) -> impl Iterator<Item = (Site, &'a [i64])> + 'a {
        let f = self.flow;
        let s = self.slot as usize;
        f.src[f.src_start[s] as usize..f.src_start[s + 1] as usize]
            .iter()
            .map(move |&o| (f.site(o), f.op_iter(o)))
    }

    pub fn sources(&self) -> Sources {
        Sources {
            writes: self
                .writes()
                .map(|(site, iter)| Operation {
                    site,
                    iter: iter.to_vec(),
                })
                .collect(),
            initial: self.initial(),
        }
    }
}

/// The diagnostic for an analysis error, pointing at the statement or
/// condition it is about when there is one.
pub fn diagnostic(e: &DataflowError, file: FileId) -> Diagnostic {
    let code = match e {
        DataflowError::Params(_) => "E0301",
        DataflowError::Budget { .. } => "E0302",
        DataflowError::Eval { .. } => "E0303",
        DataflowError::Memory(_) => "E0304",
        DataflowError::Cluster(_) => "E0305",
    };
    let d = Diagnostic::error(code, e.to_string());
    match e.span() {
        Some(span) if !span.is_none() => d.primary(file, span, "here"),
        _ => d,
    }
}
