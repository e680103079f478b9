//! σ on timely/differential-dataflow (issue 20, docs/scaling.md): the rules
//! of `rules/` as one differential computation across worker threads and
//! processes (feature `dd`, `flow --engine dd`).
//!
//! The same relations and rules as the ascent engine (docs/rules.md §3):
//!
//! ```text
//! visit(X, O, W)  <-- read(X, O), W = prev_write(X).            (iterate:
//! step(X, O, W)   <-- visit(X, O, W), must(W), guard(op(W), L),   the walk)
//!                     !closure(O, L).
//! step(X, O, W)   <-- visit(X, O, W), may(W).
//! visit(X, O, H)  <-- step(X, O, W), H = link(W).
//! conflict(X, W)  <-- visit(X, O, W), cond_lit(op(W), I, B), cond_lit(O, I, !B).
//! source(X, W)    <-- visit(X, _, W), W != NONE, !conflict(X, W).
//! initial(X)      <-- visit(X, _, NONE).
//! ```
//!
//! `read`, `closure` and `cond_lit` are input collections, the negations
//! antijoins; `prev_write`, `link`, `op`, `guard` and the kinds are looked up
//! by key in the lowered columns, as the ascent rules do (every process
//! lowers the whole program: the lowering is deterministic). Worker k of the
//! W × P workers feeds the readers of the operations o with o mod (W × P) = k,
//! with those operations' `closure` and `cond_lit`; differential exchanges
//! the rest by key. No fuel: the walk runs to its end (links point strictly
//! back), and the walk-step budget is checked on the total once it is done.
//! `source` and `initial` go to worker 0 of process 0, which builds the
//! [`Flow`]; other processes return a flow without sources (they only feed).
//!
//! Only the core kinds' rules exist here: an engine with a crate's added
//! rules (`Kinds::with_engine`) runs on the ascent engine instead.

use super::engine::{Acc, Collector, Engine, Kept, Limits, Op};
use super::{DataflowError, Flow};
use crate::facts::{Facts, Lit, LowerError, NONE};
use differential_dataflow::input::Input;
use differential_dataflow::operators::iterate::VecVariable;
use std::cell::RefCell;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
use timely::communication::allocator::ProcessBuilder;
use timely::communication::{AllocatorBuilder, Hooks};
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
}

impl Cluster {
    /// One process with `workers` threads.
    pub fn local(workers: usize) -> Cluster {
        Cluster {
            workers: workers.max(1),
            process: 0,
            hosts: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
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

/// (reader, write) pairs keyed for a join.
type Keyed<K> = Vec<(K, (Acc, Acc))>;

/// What worker 0 of process 0 gathers: (reader, write) for a source,
/// (reader, NONE) for the initial value, (NONE, reader) for a conflict
/// (counted as a walk step), each with its multiplicity.
type Gathered = Vec<((Acc, Acc), isize)>;

/// σ of `facts` on `cluster`: the [`Flow`] of the ascent engine, with
/// `walk_steps` the visits (no fuel, so no walk is run twice) and one run.
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
    crate::budget::check(limits.max_memory, || "the sources of the reads".to_string())?;
    if std::env::var_os("ARRAYFLOW_PEAK").is_some() {
        // What the lowering needed, before any dataflow (benches/dd.rs).
        let peak = crate::budget::peak().unwrap_or(0);
        eprintln!(
            "peak heap of process {} before the dd run: {peak} bytes",
            cluster.process
        );
    }
    let facts = Arc::new(facts);
    let gathered: Arc<Mutex<Gathered>> = Arc::default();
    let builders = connect(cluster).map_err(LowerError::Cluster)?;
    {
        let facts = Arc::clone(&facts);
        let gathered = Arc::clone(&gathered);
        let root = cluster.is_root();
        let guards = timely::execute::execute_from(
            builders.0,
            builders.1,
            timely::WorkerConfig::default(),
            move |worker| run_worker(worker, &facts, root.then_some(&gathered)),
        )
        .map_err(|e| LowerError::Cluster(format!("the dd engine could not start: {e}")))?;
        for r in guards.join() {
            r.map_err(|e| LowerError::Cluster(format!("a dd worker failed: {e}")))?;
        }
    }
    let facts = Arc::try_unwrap(facts).map_err(|_| {
        LowerError::Cluster("the dd engine's workers still hold the facts".to_string())
    })?;
    let records = std::mem::take(&mut *gathered.lock().unwrap_or_else(|e| e.into_inner()));
    assemble(facts, limits, records)
}

/// The [`Flow`] from the gathered records (empty on processes other than 0).
fn assemble(
    facts: Facts,
    limits: Limits,
    mut records: Gathered,
) -> Result<(Flow, Option<Kept>), DataflowError> {
    records.sort_unstable();
    let mut source = Vec::new();
    let mut initial = Vec::new();
    let mut visits = 0usize;
    let mut k = 0;
    while k < records.len() {
        let key = records[k].0;
        let mut n = 0isize;
        while k < records.len() && records[k].0 == key {
            n += records[k].1;
            k += 1;
        }
        if n <= 0 {
            continue;
        }
        match key {
            (NONE, _) => visits += n as usize,
            (x, NONE) => {
                visits += 1;
                initial.push((x,));
            }
            (x, w) => {
                visits += 1;
                source.push((x, w));
            }
        }
    }
    // Freed before the pairs of the Flow are made: process 0's peak.
    drop(records);
    let mut flow = Flow::start(&facts);
    let mut col = Collector::new(&facts, limits);
    let readers = (0..facts.n_accs() as Acc).filter(|&x| facts.is_read(x));
    let (count, last) = readers.fold((0u64, 0), |(n, _), x| (n + 1, facts.op(x)));
    flow.stats.runs = 1;
    flow.stats.read_instances = count;
    col.charge_at(&facts, visits, last)?;
    col.add(&facts, &mut flow, &source, &initial, |_| true);
    flow.finish_slots(0, facts.slots.len(), &mut col.pairs);
    Ok(col.finish(flow, facts))
}

/// One worker: its share of the readers in, the walk, the results out to
/// worker 0 (of process 0, whose `gathered` is given).
fn run_worker(
    worker: &mut timely::worker::Worker,
    facts: &Arc<Facts>,
    gathered: Option<&Arc<Mutex<Gathered>>>,
) {
    let (index, peers) = (worker.index(), worker.peers());
    let probe = timely::dataflow::ProbeHandle::new();
    let sink = gathered.filter(|_| index == 0).cloned();
    let (mut reads, mut closure, mut conds) = worker.dataflow::<u32, _, _>(|scope| {
        let (reads_in, reads) = scope.new_collection::<(Acc, Op), isize>();
        let (closure_in, closure) = scope.new_collection::<(Op, LitKey), isize>();
        let (conds_in, conds) = scope.new_collection::<(Op, u32, bool), isize>();
        let f = Arc::clone(facts);
        let start = reads.map(move |(x, o)| (x, o, f.prev(x)));
        // The walk, semi-naive: the variable holds the visits past the
        // first (each derived once, so only new ones go round the loop).
        let visits = scope.iterative::<u64, _, _>(|sub| {
            let step = Product::new(Default::default(), 1);
            let (later, walked) = VecVariable::new(sub, step);
            let visits = walked.concat(start.clone().enter(sub));
            let closure = closure.enter(sub);
            let f = Arc::clone(facts);
            let may = visits
                .clone()
                .filter(move |&(_, _, w)| w != NONE && f.is_may(w));
            let f = Arc::clone(facts);
            // One tuple per literal of the write's guard; the reader's
            // closure removes the forced ones.
            let must = visits
                .clone()
                .flat_map(move |(x, o, w)| {
                    let lits: Keyed<(Op, LitKey)> = if w != NONE && f.is_must(w) {
                        f.guard(f.op(w))
                            .map(|l| ((o, lit_key(l)), (x, w)))
                            .collect()
                    } else {
                        Vec::new()
                    };
                    lits
                })
                .antijoin(closure)
                .map(|((o, _), (x, w))| (x, o, w))
                .distinct();
            let f = Arc::clone(facts);
            later.set(may.concat(must).map(move |(x, o, w)| (x, o, f.link(w))));
            visits.leave(scope)
        });
        let f = Arc::clone(facts);
        let conflict = visits
            .clone()
            .flat_map(move |(x, o, w)| {
                let lits: Keyed<(Op, u32, bool)> = if w != NONE {
                    (f.cond_lits(f.op(w)).map(|(i, b)| ((o, i, !b), (x, w)))).collect()
                } else {
                    Vec::new()
                };
                lits
            })
            .semijoin(conds)
            .map(|(_, xw)| xw)
            .distinct();
        // source = visit − conflict: every conflict is a visit, each once.
        let out = visits
            .map(|(x, _, w)| (x, w))
            .concat(conflict.clone().negate())
            .concat(conflict.map(|(x, _)| (NONE, x)));
        out.inner
            .exchange(|_| 0)
            .inspect_core(move |event| {
                if let (Ok((_, data)), Some(sink)) = (event, &sink) {
                    let mut s = sink.lock().unwrap_or_else(|e| e.into_inner());
                    s.extend(data.iter().map(|&(d, _, r)| (d, r)));
                }
            })
            .probe_with(&probe);
        (reads_in, closure_in, conds_in)
    });
    let mut last = None;
    let mut fed = 0usize;
    for x in 0..facts.n_accs() as Acc {
        if !facts.is_read(x) {
            continue;
        }
        let o = facts.op(x);
        if o as usize % peers != index {
            continue;
        }
        reads.insert((x, o));
        fed += 1;
        if fed.is_multiple_of(FEED) {
            // Let the readers fed so far through before feeding more: the
            // walk is linear where no guard is involved, so queues stay short.
            reads.flush();
            worker.step();
        }
        if last != Some(o) {
            last = Some(o);
            let mut lits: Vec<LitKey> = facts.closure(o).map(lit_key).collect();
            lits.sort_unstable();
            lits.dedup();
            for l in lits {
                closure.insert((o, l));
            }
            let mut cl: Vec<(u32, bool)> = facts.cond_lits(o).collect();
            cl.sort_unstable();
            cl.dedup();
            for (i, b) in cl {
                conds.insert((o, i, b));
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
}

/// Readers fed between two steps of a worker.
const FEED: usize = 1 << 14;

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

/// One socket per other process (None at this process's own index).
fn sockets(cluster: &Cluster) -> Result<Vec<Option<TcpStream>>, String> {
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
                Err(_) => std::thread::sleep(Duration::from_millis(50).min(left)),
            }
        };
        let mut hello = [0u8; 16];
        hello[..8].copy_from_slice(&HELLO.to_be_bytes());
        hello[8..].copy_from_slice(&(me as u64).to_be_bytes());
        stream
            .write_all(&hello)
            .and_then(|()| stream.set_nodelay(true))
            .map_err(|e| format!("cannot greet process {k} at `{host}`: {e}"))?;
        out[k] = Some(stream);
    }
    while out.iter().skip(me + 1).any(Option::is_none) {
        match listener.accept() {
            Ok((mut stream, _)) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(waited());
                }
                let mut hello = [0u8; 16];
                let ok = stream.set_nonblocking(false).is_ok()
                    && stream.set_read_timeout(Some(left)).is_ok()
                    && stream.read_exact(&mut hello).is_ok();
                let word = u64::from_be_bytes(hello[..8].try_into().unwrap_or_default());
                let k = u64::from_be_bytes(hello[8..].try_into().unwrap_or_default()) as usize;
                if ok && word == HELLO && k > me && k < n && out[k].is_none() {
                    let _ = stream.set_read_timeout(None);
                    let _ = stream.set_nodelay(true);
                    out[k] = Some(stream);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(waited());
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(format!("process {me} cannot accept connections: {e}")),
        }
    }
    Ok(out)
}
