//! σ on timely/differential-dataflow (docs/scaling.md): the rules
//! of `rules/` as one differential computation across worker threads and
//! processes (feature `dd`, `flow --engine dd`).
//!
//! The same relations and rules as the ascent engine (docs/rules.md §3):
//!
//! ```text
//! visit(X, O, W)  <-- read(X, O), W = prev_write(X).            (iterate:
//! step(X, O, W)   <-- visit(X, O, W), must(W), guard(op(W), L),   the walk)
//!                     L not cover(W)'s own, !closure(O, L).
//! step(X, O, W)   <-- visit(X, O, W), cover(W), closure(O, other(W)).
//! step(X, O, W)   <-- visit(X, O, W), may(W).
//! visit(X, O, H)  <-- step(X, O, W), H = link(W).
//! conflict(X, W)  <-- visit(X, O, W), cond_lit(op(W), I, B), cond_lit(O, I, !B).
//! source(X, W)    <-- visit(X, _, W), W != NONE, !conflict(X, W).
//! initial(X)      <-- visit(X, _, NONE).
//! ```
//!
//! `read`, `closure` and `cond_lit` are input collections, the negations
//! antijoins. Across processes, each process lowers only its share of the
//! program (`facts::lower_share`: a stretch of the access instances in
//! execution order, in the whole program's ids) and feeds the readers of its
//! stretch (spread over its workers by operation), with their operations'
//! `closure` and `cond_lit`. `prev_write` of a reader is in its own share;
//! `link`, `op`, `guard` and the kind of a write W are in W's owner's: each
//! visit (X, O, W) is exchanged to a worker of W's owner, which looks them up
//! in its columns (keyed by write id); spread, a visit of a frame's entry
//! write goes to X's owner, which knows it (`Share::is_entry`). One process
//! alone, or a program that cannot be cut (no count up front), holds the
//! whole program and looks everything up where it is; its worker k of
//! W × P feeds the readers of
//! the operations o with o mod (W × P) = k, in rounds ([`Cluster::round`]):
//! a round is fed once the one before the last is through the walk, so the
//! visits queued between operators stay bounded. Differential exchanges the
//! joins' inputs by key. No fuel: the walk runs to its end (links point
//! strictly back), and the walk-step budget is checked on the total once it
//! is done. `source` and `initial` go to worker 0 of process 0 as (slot,
//! operation) records, which builds the [`Flow`]; the other processes return
//! an empty flow (they only feed).
//!
//! Only the core kinds' rules exist here: an engine with a crate's added
//! rules (`Kinds::with_engine`) runs on the ascent engine instead.

use super::engine::{Acc, Collector, Engine, Kept, Limits, Op};
use super::part::{Held, Part};
use super::{DataflowError, Flow};
use crate::facts::{Facts, Lit, LowerError, Share, NONE};
use differential_dataflow::input::Input;
use differential_dataflow::operators::iterate::VecVariable;
use differential_dataflow::AsCollection;
use std::cell::RefCell;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
use timely::communication::allocator::ProcessBuilder;
use timely::communication::{AllocatorBuilder, Hooks};
use timely::dataflow::operators::vec::Input as VecInput;
use timely::dataflow::operators::{Exchange, Inspect, Probe};
use timely::order::Product;

/// Where the workers of a run are: timely's conventions (`-w`, `-n`, `-p`,
/// `-h`): `workers` threads in each of the `hosts.len()` processes (one
/// process when `hosts` is empty), this one being `process`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    /// Worker threads per process.
    pub workers: usize,
    /// This process's index in `hosts`.
    pub process: usize,
    /// `host:port` of every process, one per process (empty: one process).
    pub hosts: Vec<String>,
    /// How long to wait for the other processes to connect.
    pub timeout: Duration,
    /// Readers each worker feeds per round (at least 1; [`FEED`] by
    /// default): the walk holds at most two rounds' visits at once.
    pub round: usize,
    /// Each process keeps σ of its own stretch's readers (a partial
    /// [`Flow`], `part`) instead of process 0 gathering all of it: for
    /// output that merges per stretch (`flow`'s grouped formats).
    pub spread: bool,
    /// A deliberate fault, for the tests that check the checks can fail.
    #[doc(hidden)]
    pub mutate: Mutate,
}

/// A deliberate fault of a spread run ([`Cluster::mutate`]).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mutate {
    #[default]
    None,
    /// Process 0 absorbs the other processes' parts in reverse order.
    Order,
    /// Every record of a reader goes to the next process instead.
    Route,
    /// A visit of a frame's entry write goes to the write's owner, as any
    /// other (its source record then waits there and is shipped).
    EntryAtOwner,
    /// A process that fails says nothing to the others ([`abandon`]).
    Silent,
    /// The last process fails after its part of a spread run, as past the
    /// memory budget.
    FailAfterRun,
    /// Each process resolves reads across kernels by the exit reads it
    /// holds itself (none gathered: `db::exits`).
    LocalExits,
}

/// Source records this OS process has shipped to other processes for
/// their readers, in spread runs so far (tests and benches: where σ is
/// resolved).
#[doc(hidden)]
pub fn shipped_sources() -> u64 {
    super::part::SHIPPED.load(std::sync::atomic::Ordering::Relaxed)
}

impl Cluster {
    /// One process with `workers` threads.
    pub fn local(workers: usize) -> Cluster {
        Cluster {
            workers: workers.max(1),
            process: 0,
            hosts: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            round: FEED,
            spread: false,
            mutate: Mutate::None,
        }
    }

    /// The number of processes.
    pub fn processes(&self) -> usize {
        self.hosts.len().max(1)
    }

    /// Whether this process prints (process 0 gathers σ).
    pub fn is_root(&self) -> bool {
        self.process == 0
    }
}

/// The default wait for the other processes.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

thread_local! {
    static CLUSTER: RefCell<Option<Cluster>> = const { RefCell::new(None) };
}

/// Runs `f` with every bounded σ it computes on this thread evaluated on
/// `cluster` ([`super::analyze`], the database's queries alike).
pub fn with_cluster<R>(cluster: Cluster, f: impl FnOnce() -> R) -> R {
    let old = CLUSTER.with(|c| c.replace(Some(cluster)));
    struct Restore(Option<Cluster>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let old = self.0.take();
            CLUSTER.with(|c| *c.borrow_mut() = old);
        }
    }
    let _restore = Restore(old);
    f()
}

/// The cluster installed by [`with_cluster`] on this thread, if any.
pub fn installed() -> Option<Cluster> {
    CLUSTER.with(|c| c.borrow().clone())
}

/// A guard literal as exchangeable data: (kind, instance, value or trip).
type LitKey = (u8, u32, u32);

fn lit_key(l: Lit) -> LitKey {
    match l {
        Lit::Cond { inst, value } => (0, inst, u32::from(value)),
        Lit::Runs { inst, trip } => (1, inst, trip),
    }
}

/// cond_lit(O, I, B) as data.
type CondLit = (Op, u32, bool);

/// Values keyed for a join.
type Keyed<K, V> = Vec<(K, V)>;

/// A visit of a reader's walk: (reader, its read slot, its operation, the
/// write visited or NONE).
type Visit = (Acc, Slot, Op, Acc);

/// A reader's slot with its owner: `process << 32 | slot`.
type Slot = u64;

/// What goes to worker 0 of process 0: `(SOURCE, slot, op, 0)` for a
/// source visit of a write of `op` (with -1 for a conflict, which cancels
/// it), `(INITIAL, slot, reader, 0)` for a walk that reached the initial
/// value, `(CONFLICT, 0, 0, 0)` for a conflict (a walk step). Spread
/// ([`Cluster::spread`]): `(SOURCE, slot, write, write's owner)`, to that
/// owner, which alone can name the write's operation.
type Record = (u8, Slot, u32, u32);
const SOURCE: u8 = 0;
const INITIAL: u8 = 1;
const CONFLICT: u8 = 2;
/// A source record with -1, as shipped.
const CANCELLED: u8 = 3;

/// A gathered record as shipped to process 0: a tag and its key (for
/// CONFLICT, their number).
type Shipped = (u8, u64);

/// What worker 0 of process 0 gathers, as the records come.
#[derive(Default)]
struct Gathered {
    /// `slot << 32 | op` of each source visit, and of each cancelled one.
    sources: Vec<u64>,
    cancelled: Vec<u64>,
    /// `slot << 32 | reader` of each walk that reached the initial value
    /// (unless folded).
    initial: Vec<u64>,
    conflicts: i64,
    /// The initial-value records go into `sources` as `slot << 32 | NONE`
    /// (the reader is not kept): one table, reserved once, for all.
    fold: bool,
}

impl Gathered {
    fn add(&mut self, (tag, a, b, _): Record, r: isize) {
        let key = (a & u64::from(u32::MAX)) << 32 | u64::from(b);
        let n = r.unsigned_abs();
        match tag {
            SOURCE if r > 0 => self.sources.extend(std::iter::repeat_n(key, n)),
            SOURCE => self.cancelled.extend(std::iter::repeat_n(key, n)),
            INITIAL => (0..n).for_each(|_| self.receive(INITIAL, key)),
            _ => self.conflicts += r as i64,
        }
    }

    /// One record shipped by a worker.
    fn receive(&mut self, tag: u8, key: u64) {
        match tag {
            SOURCE => self.sources.push(key),
            CANCELLED => self.cancelled.push(key),
            INITIAL if self.fold => self.sources.push(key | u64::from(NONE)),
            INITIAL => self.initial.push(key),
            _ => self.conflicts += key as i64,
        }
    }
}

/// σ of `facts` (the whole program, on every process) on `cluster`: the
/// [`Flow`] of the ascent engine, with `walk_steps` the visits (no fuel,
/// so no walk is run twice) and one run.
pub(super) fn evaluate(
    engine: &dyn Engine,
    facts: Facts,
    limits: Limits,
    cluster: &Cluster,
) -> Result<(Flow, Option<Kept>), DataflowError> {
    if engine.name() != super::engine::CoreEngine.name() {
        // A crate's own rules: only the ascent engine compiles them.
        return super::engine::evaluate_sequential(engine, facts, limits);
    }
    run(Share::whole(facts), limits, cluster)
}

/// σ of `program` across the processes of `cluster`, each lowering only
/// its share (`facts::lower_share`); the core kinds' rules. Process 0's
/// [`Flow`] is the ascent engine's; the others' is empty (they only feed).
/// An error comes with the frame's instances (by which the walk-step
/// budget was raised).
pub(super) fn analyze_shared(
    program: &crate::model::Program,
    config: &crate::facts::Config,
    kinds: &[&'static dyn crate::facts::kinds::AccessLowering],
    frame: &crate::facts::Frame,
    cluster: &Cluster,
) -> Result<Flow, (DataflowError, u64)> {
    // Spread, process 0 needs no other stretch's operations.
    let lower = match cluster.spread {
        true => crate::facts::lower_share_light,
        false => crate::facts::lower_share,
    };
    let share = lower(
        program,
        config,
        kinds,
        frame,
        cluster.process,
        cluster.processes(),
    )
    .map_err(|e| {
        // The others are headed for the dd run's connections.
        abandon(cluster);
        (e, 0)
    })?;
    let extra = share.facts.frame_instances;
    let limits = Limits {
        max_visits: config.max_instances.saturating_add(extra),
        max_memory: config.max_memory,
        keep: false,
        cut: super::engine::Cut::DEFAULT,
    };
    let (flow, _) = run(share, limits, cluster).map_err(|e| (e, extra))?;
    Ok(flow)
}

/// Runs the rules on this process's `share` and, on process 0, builds the flow.
fn run(
    share: Share,
    limits: Limits,
    cluster: &Cluster,
) -> Result<(Flow, Option<Kept>), DataflowError> {
    if let Err(e) =
        crate::budget::check(limits.max_memory, || "the sources of the reads".to_string())
    {
        abandon(cluster);
        return Err(e.into());
    }
    if std::env::var_os("ARRAYFLOW_PEAK").is_some() {
        // What the lowering needed, before any dataflow (benches/dd.rs).
        let peak = crate::budget::peak().unwrap_or(0);
        eprintln!(
            "peak heap of process {} before the dd run: {peak} bytes",
            cluster.process
        );
    }
    // Room for a source per reader (matmul: exactly), not grown by doubling.
    let spread = cluster.spread && !share.is_whole();
    let root = cluster.is_root() && !spread;
    let gathered = Gathered {
        sources: Vec::with_capacity(if root { share.readers().0 as usize } else { 0 }),
        fold: !limits.keep,
        ..Gathered::default()
    };
    let share = Arc::new(share);
    let gathered = Arc::new(Mutex::new(gathered));
    let part: Arc<Mutex<Part>> = Arc::default();
    if spread {
        let readers = share.accs().filter(|&x| share.is_read(x)).count();
        part.lock()
            .unwrap_or_else(|e| e.into_inner())
            .reserve(readers);
    }
    let builders = connect(cluster).map_err(LowerError::Cluster)?;
    {
        let share = Arc::clone(&share);
        let gathered = Arc::clone(&gathered);
        let part = Arc::clone(&part);
        let process = cluster.process;
        let mutate = cluster.mutate;
        let workers = cluster.workers.max(1);
        let feed = cluster.round.max(1);
        let guards = timely::execute::execute_from(
            builders.0,
            builders.1,
            timely::WorkerConfig::default(),
            move |worker| {
                let spread = spread.then_some((process, &part));
                let gathered = root.then_some(&gathered);
                run_worker(worker, &share, workers, feed, gathered, spread, mutate)
            },
        )
        .map_err(|e| LowerError::Cluster(format!("the dd engine could not start: {e}")))?;
        for r in guards.join() {
            r.map_err(|e| LowerError::Cluster(format!("a dd worker failed: {e}")))?;
        }
    }
    let share = Arc::try_unwrap(share).map_err(|_| {
        LowerError::Cluster("the dd engine's workers still hold the facts".to_string())
    })?;
    if spread {
        if std::env::var_os("ARRAYFLOW_PEAK").is_some() {
            let peak = crate::budget::peak().unwrap_or(0);
            let p = cluster.process;
            eprintln!("peak heap of process {p} after the dd run: {peak} bytes");
        }
        let part = std::mem::take(&mut *part.lock().unwrap_or_else(|e| e.into_inner()));
        if cluster.is_root() {
            // The walk-step budget, on the steps of every process.
            let mut col = Collector::new(&share.facts, limits);
            let site = share.last_reader_site();
            let site = (site != NONE).then_some(site as usize);
            if let Err(e) = col.charge_site(&share.facts, part.steps.max(0) as usize, site) {
                // The others are headed for the groups' connections.
                abandon(cluster);
                return Err(e);
            }
        }
        let flow = part.flow(share);
        // Spread, the others are headed for another round of connections
        // (the next kernel's run, or the groups'): tell them.
        let last = cluster.process + 1 == cluster.processes();
        let what = || "the sources of the reads".to_string();
        let budget = match cluster.mutate == Mutate::FailAfterRun && last {
            true => Err(crate::budget::Exceeded {
                what: what(),
                bytes: 1,
                limit: 0,
                estimated: false,
            }),
            false => crate::budget::check(limits.max_memory, what),
        };
        if let Err(e) = budget {
            abandon(cluster);
            return Err(e.into());
        }
        return Ok((flow, None));
    }
    let got = std::mem::take(&mut *gathered.lock().unwrap_or_else(|e| e.into_inner()));
    let done = if !cluster.is_root() && (!share.is_whole() || cluster.spread) {
        // Only process 0 holds every operation (or, spread, σ of a program
        // it could not cut): the others' flow is empty.
        Ok((Flow::start(&Facts::default()), None))
    } else {
        if std::env::var_os("ARRAYFLOW_PEAK").is_some() {
            let peak = crate::budget::peak().unwrap_or(0);
            eprintln!("peak heap of process 0 after the dd run: {peak} bytes");
        }
        let done = assemble(share, limits, got);
        if std::env::var_os("ARRAYFLOW_PEAK").is_some() {
            // What the flow's assembly added, before any printing.
            let peak = crate::budget::peak().unwrap_or(0);
            eprintln!("peak heap of process 0 with the flow built: {peak} bytes");
        }
        done
    };
    let failed = cluster.is_root() && done.is_err();
    if cluster.spread {
        if failed {
            // A program no process could cut, spread: the others are
            // headed for another round of connections.
            abandon(cluster);
        }
    } else if cluster.processes() > 1 {
        // Gathered, the others do not know whether another round follows:
        // process 0 gives its verdict in one of its own.
        verdict(cluster, failed).map_err(LowerError::Cluster)?;
    }
    done
}

/// Gathered runs (not spread) across processes: every process meets once
/// more after the run, process 0 saying whether it built the flow, so
/// that a failure only it meets (the walk-step budget, on the total) stops
/// the others with E0305 instead of leaving them to a later timeout.
fn verdict(cluster: &Cluster, failed: bool) -> Result<(), String> {
    if failed && cluster.mutate == Mutate::Silent {
        return Ok(());
    }
    match handshake(cluster, if failed { FAILED } else { GOING }) {
        Err(why) if !failed => Err(why),
        _ => Ok(()),
    }
}

/// The [`Flow`] from the gathered records (empty on processes other than 0).
fn assemble(
    share: Share,
    limits: Limits,
    mut got: Gathered,
) -> Result<(Flow, Option<Kept>), DataflowError> {
    // A source survives when it has more visits than conflicts: each
    // (reader, write) visit counts once and is cancelled at most once.
    got.sources.sort_unstable();
    got.cancelled.sort_unstable();
    let visits =
        (got.sources.len() + got.initial.len()) as i64 - got.cancelled.len() as i64 + got.conflicts;
    // In place: the survivors, once each, at the front.
    let mut kept = got.sources;
    let (mut c, mut n, mut k) = (0, 0, 0);
    while k < kept.len() {
        let key = kept[k];
        let run = kept[k..].iter().take_while(|&&v| v == key).count();
        k += run;
        let mut cancelled = 0;
        while c < got.cancelled.len() && got.cancelled[c] <= key {
            cancelled += usize::from(got.cancelled[c] == key);
            c += 1;
        }
        if run > cancelled {
            kept[n] = key;
            n += 1;
        }
    }
    kept.truncate(n);
    drop(got.cancelled);
    let (readers, last) = share.readers();
    let n_accs = share.n_accs();
    let whole = share.is_whole();
    let mut facts = share.facts;
    if !whole {
        // Process 0's share: only the operations' tables are left to use.
        facts.acc_op = Vec::new();
        facts.acc_role = Vec::new();
        facts.acc_prev = Vec::new();
        facts.acc_link = Vec::new();
        facts.acc_slot = Vec::new();
    }
    let mut flow = Flow::start(&facts);
    flow.stats.access_instances = n_accs;
    let mut col = Collector::new(&facts, limits);
    flow.stats.runs = 1;
    flow.stats.read_instances = readers;
    col.charge_at(
        &facts,
        visits.max(0) as usize,
        if readers == 0 { 0 } else { last },
    )?;
    for key in got.initial {
        let (slot, x) = ((key >> 32) as u32, key as u32);
        flow.set_initial(slot);
        if let Some(w) = (col.initial_accs.as_mut()).and_then(|b| b.get_mut(x as usize / 64)) {
            *w |= 1 << (x % 64);
        }
    }
    // Slot by slot, its sources ordered by (site, operation).
    flow.src
        .reserve_exact(kept.iter().filter(|&&v| v as u32 != NONE).count());
    flow.src_start.reserve_exact(facts.slots.len());
    let mut k = 0;
    let mut ops: Vec<u64> = Vec::new();
    for s in 0..facts.slots.len() as u64 {
        ops.clear();
        while k < kept.len() && kept[k] >> 32 == s {
            let o = kept[k] as u32;
            k += 1;
            if o == NONE {
                flow.set_initial(s as u32);
                continue;
            }
            ops.push(u64::from(facts.op_site[o as usize]) << 32 | u64::from(o));
        }
        ops.sort_unstable();
        flow.src.extend(ops.iter().map(|&v| v as u32));
        flow.src_start.push(flow.src.len() as u32);
    }
    drop(kept);
    Ok(col.finish(flow, facts))
}

/// One worker: its share of the readers in, the walk, the results out to
/// worker 0 (of process 0, whose `gathered` is given). With a program cut
/// across processes, a visit of a write goes to a worker of the write's
/// owner, which looks up its kind, `link`, guard and operation.
fn run_worker(
    worker: &mut timely::worker::Worker,
    share: &Arc<Share>,
    workers: usize,
    feed: usize,
    gathered: Option<&Arc<Mutex<Gathered>>>,
    spread: Option<(usize, &Arc<Mutex<Part>>)>,
    mutate: Mutate,
) {
    let (index, peers) = (worker.index(), worker.peers());
    let whole = share.is_whole();
    // Spread: this process's index, and what it receives for its readers.
    let me = spread.map_or(0, |(p, _)| p);
    let part = spread.map(|(_, p)| Arc::clone(p));
    let spread = part.is_some();
    let held: Arc<Mutex<Held>> = Arc::default();
    let probe = timely::dataflow::ProbeHandle::new();
    let sink = gathered.filter(|_| index == 0).cloned();
    // Worker 0 of process 0 keeps its records in the flow's gathering.
    let local: Arc<Mutex<Gathered>> = sink.clone().unwrap_or_default();
    let gathers = sink.is_some();
    let (mut reads, mut closure, mut conds) = worker.dataflow::<u32, _, _>(|scope| {
        let (reads_in, start) = scope.new_collection::<Visit, isize>();
        let (closure_in, closure) = scope.new_collection::<(Op, LitKey), isize>();
        let (conds_in, conds) = scope.new_collection::<(Op, u32, bool), isize>();
        // The walk, semi-naive: the variable holds the visits past the
        // first (each derived once, so only new ones go round the loop).
        let (initial, owned, entries) = scope.iterative::<u64, _, _>(|sub| {
            let step = Product::new(Default::default(), 1);
            let (later, walked) = VecVariable::new(sub, step);
            let visits = walked.concat(start.clone().enter(sub));
            let closure = closure.enter(sub);
            let live = visits.clone().filter(|&(_, _, _, w)| w != NONE);
            // To a worker of the write's owner (a whole program: stays).
            // Spread, a visit of a frame's entry write goes to the reader's
            // owner instead, which knows the write (`Share::is_entry`): the
            // walk ends there, so no record of it waits on the process that
            // first touched the cell (process 0 for most cells).
            let arrived = if whole {
                live
            } else {
                let f = Arc::clone(share);
                let route = move |((_, s, _, w), _, _): &(Visit, _, isize)| {
                    let to = match spread && mutate != Mutate::EntryAtOwner && f.is_entry(*w) {
                        true => (*s >> 32) as usize,
                        false => f.owner(*w),
                    };
                    (to * workers + *w as usize % workers) as u64
                };
                live.inner.exchange(route).as_collection()
            };
            // An entry write of another stretch: a source, and nothing else
            // (no guard, no link, no condition literal).
            let f = Arc::clone(share);
            let entries = arrived.clone().filter(move |&(_, _, _, w)| !f.holds(w));
            let f = Arc::clone(share);
            let owned = arrived.filter(move |&(_, _, _, w)| f.holds(w));
            let f = Arc::clone(share);
            let may = (owned.clone())
                .filter(move |&(_, _, _, w)| f.is_may(w))
                .map({
                    let f = Arc::clone(share);
                    move |(x, s, o, w)| (x, s, o, f.link(w))
                });
            let f = Arc::clone(share);
            // One tuple per literal of the write's guard; the reader's
            // closure removes the forced ones.
            // A cover's own literal is left out (rules/must.rs): a reader
            // after its `if` counts it as forced.
            let must = (owned.clone())
                .flat_map(move |(x, s, o, w)| {
                    let lits: Keyed<(Op, LitKey), (Acc, Slot, Acc, Acc)> = if f.is_must(w) {
                        let h = f.link(w);
                        let own = f
                            .is_cover(w)
                            .then(|| f.cover_lits(w))
                            .flatten()
                            .map(|(_, l)| l);
                        (f.guard(f.op(w)))
                            .filter(|l| Some(*l) != own)
                            .map(|l| ((o, lit_key(l)), (x, s, w, h)))
                            .collect()
                    } else {
                        Vec::new()
                    };
                    lits
                })
                .antijoin(closure.clone());
            // ... and a reader in the `else` branch goes on past it.
            let f = Arc::clone(share);
            let in_else = (owned.clone())
                .flat_map(move |(x, s, o, w)| {
                    let other: Keyed<(Op, LitKey), (Acc, Slot, Acc, Acc)> =
                        match f.is_cover(w).then(|| f.cover_lits(w)).flatten() {
                            Some((other, _)) => vec![((o, lit_key(other)), (x, s, w, f.link(w)))],
                            None => Vec::new(),
                        };
                    other
                })
                .semijoin(closure);
            let must = (must.concat(in_else))
                .map(|((o, _), (x, s, w, h))| (x, s, o, w, h))
                .distinct()
                .map(|(x, s, o, _, h)| (x, s, o, h));
            later.set(may.concat(must));
            let initial = visits.filter(|&(_, _, _, w)| w == NONE);
            (
                initial.leave(scope),
                owned.leave(scope),
                entries.leave(scope),
            )
        });
        let f = Arc::clone(share);
        let q = me as u32;
        let conflict = (owned.clone())
            .flat_map(move |(x, s, o, w)| {
                let ow = f.op(w);
                let lits: Keyed<CondLit, (Acc, Slot, Acc, Op, u32)> =
                    (f.cond_lits(ow).map(|(i, b)| ((o, i, !b), (x, s, w, ow, q)))).collect();
                lits
            })
            .semijoin(conds)
            .map(|(_, xw)| xw)
            .distinct();
        // source = visit − conflict: every conflict is a visit, each once.
        // Spread, a source is the write's, at its owner (`q`).
        let f = Arc::clone(share);
        let out = (owned.concat(entries).map(move |(_, s, _, w)| match spread {
            true => (SOURCE, s, w, q),
            false => (SOURCE, s, f.write_op(w), 0),
        }))
        .concat(
            (conflict.clone())
                .map(move |(_, s, w, o, q)| match spread {
                    true => (SOURCE, s, w, q),
                    false => (SOURCE, s, o, 0),
                })
                .negate(),
        )
        .concat(conflict.map(|_| (CONFLICT, 0, 0, 0)))
        .concat(initial.map(|(x, s, _, _)| (INITIAL, s, x, 0)));
        // Kept where made until the walk is done everywhere, then shipped
        // (below): shipped as made, process 0 peaked at 448 MB instead of
        // 325 to 387 (matmul N=128, 4 processes).
        let local = Arc::clone(&local);
        let records = if spread {
            // A source to a worker of its write's owner, where its
            // cancellation meets it; the rest stays.
            let route = move |((tag, _, w, q), _, _): &(Record, _, isize)| match *tag {
                SOURCE => (*q as usize * workers + *w as usize % workers) as u64,
                _ => index as u64,
            };
            out.inner.exchange(route)
        } else {
            out.inner
        };
        let kept = Arc::clone(&held);
        records
            .inspect_core(move |event| {
                if let Ok((_, data)) = event {
                    if spread {
                        let mut h = kept.lock().unwrap_or_else(|e| e.into_inner());
                        for &((tag, s, w, _), _, r) in data.iter() {
                            match tag {
                                SOURCE => h.add_source(s, w, r),
                                INITIAL => h.add_initial(s, r),
                                _ => h.add_steps(r),
                            }
                        }
                        return;
                    }
                    let mut g = local.lock().unwrap_or_else(|e| e.into_inner());
                    for &(d, _, r) in data.iter() {
                        g.add(d, r);
                    }
                }
            })
            .probe_with(&probe);
        (reads_in, closure_in, conds_in)
    });
    // The second dataflow: every worker's records to worker 0 of process 0.
    let shipped = timely::dataflow::ProbeHandle::new();
    let ship = worker.dataflow::<u32, _, _>(|scope| {
        let (input, stream) = VecInput::new_input::<Shipped>(&scope);
        stream
            .exchange(|_| 0)
            .inspect(move |&(tag, key)| {
                if let Some(sink) = &sink {
                    let mut g = sink.lock().unwrap_or_else(|e| e.into_inner());
                    g.receive(tag, key);
                }
            })
            .probe_with(&shipped);
        input
    });
    // The readers this worker feeds: of a whole program, those of the
    // operations o with o mod (W × P) = k; of a share, this process's, by
    // operation modulo its workers.
    let (mine, of) = if whole {
        (index, peers)
    } else {
        (index % workers, workers)
    };
    let feeds = |x: &Acc| share.is_read(*x) && share.op(*x) as usize % of == mine;
    // Room for a source record per reader fed (matmul: exactly).
    if spread {
        let n = share.accs().filter(feeds).count();
        held.lock()
            .unwrap_or_else(|e| e.into_inner())
            .sources
            .reserve_exact(n);
    } else if !gathers {
        let n = share.accs().filter(feeds).count();
        let mut g = local.lock().unwrap_or_else(|e| e.into_inner());
        g.sources.reserve_exact(n);
    }
    let mut last = None;
    let mut fed = 0usize;
    let mut round = 0u32;
    for x in share.accs() {
        if !share.is_read(x) {
            continue;
        }
        let o = share.op(x);
        if o as usize % of != mine {
            continue;
        }
        let s = (me as u64) << 32 | u64::from(share.slot(x));
        reads.insert((x, s, o, share.prev(x)));
        fed += 1;
        if last != Some(o) {
            last = Some(o);
            let mut lits: Vec<LitKey> = share.closure(o).map(lit_key).collect();
            lits.sort_unstable();
            lits.dedup();
            for l in lits {
                closure.insert((o, l));
            }
            let mut cl: Vec<(u32, bool)> = share.cond_lits(o).collect();
            cl.sort_unstable();
            cl.dedup();
            for (i, b) in cl {
                conds.insert((o, i, b));
            }
        }
        if fed.is_multiple_of(feed) {
            // In rounds: round r is fed only once round r - 2 is through
            // the walk everywhere, so that at most two rounds of visits are
            // queued between the operators. Fed with one `step` per batch
            // instead, the queues of process 0 (matmul N=128, P=4) held up
            // to 60 MB more than its walk's working set (docs/scaling.md).
            // closure and cond_lit of an operation are fed in the round of
            // its first reader, so no result is ever retracted.
            round += 1;
            reads.advance_to(round);
            closure.advance_to(round);
            conds.advance_to(round);
            reads.flush();
            closure.flush();
            conds.flush();
            while probe.less_than(&(round - 1)) {
                worker.step_or_park(None);
            }
        }
    }
    reads.close();
    closure.close();
    conds.close();
    // Parked while idle: spinning workers starve each other when there are
    // more workers than free cores (3 workers on 2 busy cores: 4.8 s
    // instead of milliseconds on a generated program of many rounds).
    while !probe.done() {
        worker.step_or_park(None);
    }
    if (gathers || spread && index.is_multiple_of(workers))
        && std::env::var_os("ARRAYFLOW_PEAK").is_some()
    {
        // The walk's part of the peak, before the records are shipped.
        let peak = crate::budget::peak().unwrap_or(0);
        eprintln!("peak heap of process {me} after the walk: {peak} bytes");
    }
    if let Some(part) = part {
        let held = std::mem::take(&mut *held.lock().unwrap_or_else(|e| e.into_inner()));
        let n = peers / workers;
        let route = |to: usize| match mutate {
            Mutate::Route => (to + 1) % n,
            _ => to,
        };
        let remote = {
            let mut local = part.lock().unwrap_or_else(|e| e.into_inner());
            held.ship(share, me, route, &mut local)
        };
        ship_spread(worker, remote.words(share, route), workers, &part);
        return;
    }
    let local = if gathers {
        Gathered::default()
    } else {
        std::mem::take(&mut *local.lock().unwrap_or_else(|e| e.into_inner()))
    };
    let conflicts = (local.conflicts != 0).then_some((CONFLICT, local.conflicts as u64));
    let items = (local.sources.into_iter().map(|k| (SOURCE, k)))
        .chain(local.cancelled.into_iter().map(|k| (CANCELLED, k)))
        .chain(local.initial.into_iter().map(|k| (INITIAL, k)))
        .chain(conflicts);
    // In rounds, each waiting until process 0 has taken the ones before,
    // so that they cannot pile up there.
    send_in_rounds(worker, ship, &shipped, items);
}

/// Sends `items` in rounds of `SHIP`, each waiting until the receivers
/// have taken the ones before, then closes the input and waits for all.
fn send_in_rounds<D: Clone + 'static>(
    worker: &mut timely::worker::Worker,
    mut ship: timely::dataflow::operators::vec::input::Handle<u32, D>,
    shipped: &timely::dataflow::ProbeHandle<u32>,
    items: impl Iterator<Item = D>,
) {
    let mut round = 0;
    for (n, item) in items.enumerate() {
        ship.send(item);
        if (n + 1).is_multiple_of(SHIP) {
            round += 1;
            ship.advance_to(round);
            while shipped.less_than(&round) {
                worker.step_or_park(None);
            }
        }
    }
    ship.close();
    while !shipped.done() {
        worker.step_or_park(None);
    }
}

/// Spread: each item to worker 0 of the process it names, in rounds, each
/// waiting until the receivers have taken the ones before.
fn ship_spread(
    worker: &mut timely::worker::Worker,
    items: impl Iterator<Item = (usize, Vec<i64>)>,
    workers: usize,
    part: &Arc<Mutex<Part>>,
) {
    let index = worker.index();
    let shipped = timely::dataflow::ProbeHandle::new();
    let sink = index.is_multiple_of(workers).then(|| Arc::clone(part));
    let ship = worker.dataflow::<u32, _, _>(|scope| {
        let (input, stream) = VecInput::new_input::<(u64, Vec<i64>)>(&scope);
        stream
            .exchange(|(to, _)| *to)
            .inspect(move |(_, words)| {
                if let Some(sink) = &sink {
                    sink.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .receive(words);
                }
            })
            .probe_with(&shipped);
        input
    });
    let items = items.map(|(to, words)| ((to * workers) as u64, words));
    send_in_rounds(worker, ship, &shipped, items);
}

/// Records shipped to process 0 in one round (1 MB).
const SHIP: usize = 1 << 16;

/// Readers a worker feeds per round, by default.
pub const FEED: usize = 1 << 14;

/// The allocators of this process's workers: threads only, or connected to
/// the other processes (each process i connects to the processes before it
/// and accepts those after it, within the cluster's timeout).
type Builders = (Vec<AllocatorBuilder>, Box<dyn std::any::Any + Send>);

fn connect(cluster: &Cluster) -> Result<Builders, String> {
    let threads = cluster.workers.max(1);
    if cluster.processes() == 1 {
        return timely::CommunicationConfig::Process(threads).try_build();
    }
    let sockets = sockets(cluster)?;
    let hooks = Hooks::default();
    let process = ProcessBuilder::new_typed_vector(threads, hooks.refill.clone(), None);
    let (builders, guard) =
        initialize_networking_from_sockets(process, sockets, cluster.process, threads, hooks)
            .map_err(|e| format!("the dd engine could not start its network threads: {e}"))?;
    Ok((
        builders.into_iter().map(AllocatorBuilder::Tcp).collect(),
        Box::new(guard),
    ))
}

/// A magic word before a process index, so that a stray connection is refused.
const HELLO: u64 = 0x6172_7261_7966_6c77; // "arrayflw"

/// A process's status in the handshake: each connection carries the
/// connecting process's (after its index) and the accepting one's (its
/// reply), so that a process that failed before a round of connections
/// ([`abandon`]) stops the others in that round instead of leaving them to
/// the timeout.
const GOING: u64 = 0;
const FAILED: u64 = 1;

/// One socket per other process (None at this process's own index); an
/// error when another process joined the round only to say it failed.
pub(super) fn sockets(cluster: &Cluster) -> Result<Vec<Option<TcpStream>>, String> {
    handshake(cluster, GOING)
}

/// After a failure on this process, where the others are headed for a
/// round of connections (the dd run's, or the spread groups'): that round,
/// telling every other process this one failed, so that they stop at once
/// (E0305) rather than wait for it to the timeout. Process 0 prints its
/// own diagnostic as it would have.
pub fn abandon(cluster: &Cluster) {
    if cluster.processes() > 1 && cluster.mutate != Mutate::Silent {
        let _ = handshake(cluster, FAILED);
    }
}

fn handshake(cluster: &Cluster, status: u64) -> Result<Vec<Option<TcpStream>>, String> {
    let me = cluster.process;
    let n = cluster.processes();
    let deadline = Instant::now() + cluster.timeout;
    let waited = || {
        format!(
            "the dd engine's processes did not all connect within {} s (process {me} of {n}, hosts {}); start every process with the same --hosts file, or raise --dd-timeout",
            cluster.timeout.as_secs(),
            cluster.hosts.join(", ")
        )
    };
    let listener = TcpListener::bind(&cluster.hosts[me])
        .map_err(|e| format!("process {me} cannot listen at `{}`: {e}", cluster.hosts[me]))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("cannot poll the listener: {e}"))?;
    let mut out: Vec<Option<TcpStream>> = (0..n).map(|_| None).collect();
    // The first process that said it failed.
    let mut failed = None;
    for (k, host) in cluster.hosts.iter().enumerate().take(me) {
        let addr = host
            .to_socket_addrs()
            .map_err(|e| format!("host `{host}`: {e}"))?
            .next()
            .ok_or_else(|| format!("host `{host}` has no address"))?;
        let mut stream = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(waited());
            }
            match TcpStream::connect_timeout(&addr, left.min(Duration::from_secs(1))) {
                Ok(s) => break s,
                // Polled briefly: processes started together connect in ms.
                Err(_) => std::thread::sleep(Duration::from_millis(5).min(left)),
            }
        };
        let mut hello = [0u8; 24];
        hello[..8].copy_from_slice(&HELLO.to_be_bytes());
        hello[8..16].copy_from_slice(&(me as u64).to_be_bytes());
        hello[16..].copy_from_slice(&status.to_be_bytes());
        let mut reply = [0u8; 8];
        let left = deadline.saturating_duration_since(Instant::now());
        stream
            .write_all(&hello)
            .and_then(|()| stream.set_nodelay(true))
            .and_then(|()| stream.set_read_timeout(Some(left.max(Duration::from_millis(1)))))
            .and_then(|()| stream.read_exact(&mut reply))
            .and_then(|()| stream.set_read_timeout(None))
            .map_err(|e| match e.kind() {
                // Its reply waits on the processes before it: they did not come.
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => waited(),
                _ => format!("cannot greet process {k} at `{host}`: {e}"),
            })?;
        if u64::from_be_bytes(reply) == FAILED {
            failed.get_or_insert(k);
        }
        out[k] = Some(stream);
    }
    while out.iter().skip(me + 1).any(Option::is_none) {
        match listener.accept() {
            Ok((mut stream, _)) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(waited());
                }
                let mut hello = [0u8; 24];
                let ok = stream.set_nonblocking(false).is_ok()
                    && stream.set_read_timeout(Some(left)).is_ok()
                    && stream.read_exact(&mut hello).is_ok();
                let word =
                    |i: usize| u64::from_be_bytes(hello[i..i + 8].try_into().unwrap_or_default());
                let k = word(8) as usize;
                if ok
                    && word(0) == HELLO
                    && k > me
                    && k < n
                    && out[k].is_none()
                    && stream.write_all(&status.to_be_bytes()).is_ok()
                {
                    if word(16) == FAILED {
                        failed.get_or_insert(k);
                    }
                    let _ = stream.set_read_timeout(None);
                    let _ = stream.set_nodelay(true);
                    out[k] = Some(stream);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(waited());
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(format!("process {me} cannot accept connections: {e}")),
        }
    }
    match failed {
        Some(k) if status == GOING => Err(format!(
            "process {k} of the dd engine failed (its own output says why); process {me} stops"
        )),
        _ => Ok(out),
    }
}
