//! The execution engine: walks the model, keeps memory and the trace, and
//! answers the evaluator's questions ([`Env`]).

use super::{Cell, Contents, ErrorKind, Ops, Options, Read, Run, RunError, Writer};
use crate::hash::{SplitMix64, StableHasher};
use crate::model::eval::{self, Env, EvalError, StaticEnv};
use crate::model::{
    base_label, Access, Affine, CmpOp, Cond, Condition, CounterId, ExprKind, For, If, Node,
    ParamId, Program, Site, Span, Stmt, StmtKind, Var, While,
};
use std::collections::HashSet;

/// Hash domains: each kind of hashed value has its own, so no two kinds ever
/// share an input.
mod domain {
    pub const INITIAL: u64 = 1;
    pub const STMT_UNKNOWN: u64 = 2;
    pub const CALL: u64 = 3;
    pub const COND_UNKNOWN: u64 = 4;
    pub const COND_VALUE: u64 = 5;
    pub const SHUFFLE: u64 = 6;
    pub const BY_ZERO: u64 = 7;
}

/// The operation being executed.
struct Current {
    site: Site,
    /// Index in `Machine::ops`, once the operation has read or written.
    op: Option<u32>,
    /// Numbers the `...` values and conditions of the operation.
    position: u64,
    /// Whether its reads go into the trace (not for `@copy` statements).
    traced: bool,
    /// The origin of the value the last read returned.
    last_origin: Writer,
}

/// `unknown_hash`'s states for one site and domain: `base` after the
/// domain, seed, identity and iteration vector length `len`; `outer` after
/// `base` and all iteration entries but the last, valid while the entry
/// before the last one has epoch `outer_epoch`.
#[derive(Clone, Copy)]
struct Prefix {
    len: usize,
    base: StableHasher,
    outer: StableHasher,
    outer_epoch: u64,
}

/// An affine condition ([`Sites`]) at one run's parameter values: each
/// side is its constant plus the parameter terms, and its counter terms
/// (`Machine::cond_terms[l]` and `[r]`). Wrapping arithmetic is the
/// integers modulo 2^64, so summing in another order gives the same value.
#[derive(Clone, Copy)]
struct FoldedCmp {
    op: CmpOp,
    l: i64,
    r: i64,
    l_terms: (u32, u32),
    r_terms: (u32, u32),
}

/// A condition folded at one run's parameters: one comparison (most), or
/// several joined (in postfix order).
enum Folded {
    One(FoldedCmp),
    Many(Box<[Piece<FoldedCmp>]>),
}

fn initial_prefix(seed: u64, array: &str) -> StableHasher {
    StableHasher::new(domain::INITIAL).word(seed).str(array)
}

/// The initial value of cell `index` of the array named `array` on `seed`
/// (what an untouched cell of a sparse array holds).
pub fn initial_value(seed: u64, array: &str, index: &[i64]) -> i64 {
    initial_prefix(seed, array).ints(index).finish() as i64
}

/// What the machine looks up about a program's sites: the same for every
/// run of the program.
pub(super) struct Sites<'p> {
    /// The reads of each statement and condition, in access-index order.
    stmt_reads: Vec<Vec<&'p Access>>,
    cond_reads: Vec<Vec<&'p Access>>,
    /// Base labels of statements and identities of conditions.
    stmt_base: Vec<&'p str>,
    stmt_label: Vec<&'p str>,
    cond_name: Vec<&'p str>,
    /// A condition of comparisons of affine expressions (joined by `and`,
    /// `or`, `not`), as the affine forms: it reads and calls nothing, so
    /// evaluating the forms ([`eval::affine`], the same values) is all its
    /// test does.
    cond_affine: Vec<Option<Vec<Piece<eval::AffineCmp>>>>,
    /// The deepest nest of loops: the longest iteration vector an
    /// operation records.
    depth: usize,
}

/// One piece of a condition in postfix order: a comparison, or a
/// connective of the one or two values before it.
#[derive(Clone, Copy)]
pub(super) enum Piece<T> {
    Cmp(T),
    And,
    Or,
    Not,
}

/// The most pieces a condition folds to (its values fit one word).
const MAX_PIECES: usize = 64;

/// `c` in postfix order if every comparison in it is affine.
fn affine_cond(c: &Cond) -> Option<Vec<Piece<eval::AffineCmp>>> {
    fn walk(c: &Cond, out: &mut Vec<Piece<eval::AffineCmp>>) -> Option<()> {
        match c {
            Cond::Cmp(..) => out.push(Piece::Cmp(eval::AffineCmp::of(c)?)),
            Cond::And(a, b) | Cond::Or(a, b) => {
                walk(a, out)?;
                walk(b, out)?;
                out.push(match c {
                    Cond::And(..) => Piece::And,
                    _ => Piece::Or,
                });
            }
            Cond::Not(a) => {
                walk(a, out)?;
                out.push(Piece::Not);
            }
            Cond::Unknown => return None,
        }
        (out.len() <= MAX_PIECES).then_some(())
    }
    let mut out = Vec::new();
    walk(c, &mut out)?;
    Some(out)
}

/// How many loops the deepest point of `nodes` is inside.
fn deepest(nodes: &[Node]) -> usize {
    (nodes.iter())
        .map(|n| match n {
            Node::For(f) => 1 + deepest(&f.body),
            Node::While(w) => 1 + deepest(&w.body),
            Node::If(i) => (i.branches.iter().map(|(_, b)| deepest(b)))
                .chain(i.otherwise.iter().map(|b| deepest(b)))
                .max()
                .unwrap_or(0),
            Node::Stmt(_) => 0,
        })
        .max()
        .unwrap_or(0)
}

impl<'p> Sites<'p> {
    pub(super) fn new(program: &'p Program) -> Sites<'p> {
        let stmts = program.stmts();
        let conds = program.conditions();
        Sites {
            stmt_reads: stmts.iter().map(|s| s.reads()).collect(),
            cond_reads: conds.iter().map(|c| c.reads()).collect(),
            stmt_base: stmts.iter().map(|s| base_label(&s.label)).collect(),
            stmt_label: stmts.iter().map(|s| s.label.as_str()).collect(),
            cond_name: conds.iter().map(|c| c.name.as_str()).collect(),
            cond_affine: conds.iter().map(|c| affine_cond(&c.cond)).collect(),
            depth: deepest(&program.body),
        }
    }
}

/// A run's setup over the memory budget.
fn memory_error(e: crate::budget::Exceeded) -> RunError {
    RunError {
        kind: ErrorKind::Memory,
        message: format!(
            "the run would need {} of memory for {}, over the budget of {}; raise --max-memory or use smaller parameters",
            crate::budget::show(e.bytes),
            e.what,
            crate::budget::show(e.limit)
        ),
        span: Span::NONE,
    }
}

/// Steps between two polls of the memory budget (a power of 2).
const POLL: u64 = 4096;

/// Runs under way in this process: each may grow its trace by what its
/// last poll reserved before it polls again, so a poll reserves its own
/// growth once per run under way (two threads' runs each reserving only
/// their own passed the budget together).
static RUNNING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Counts one run in [`RUNNING`] while it lives.
struct Running;

impl Running {
    fn start() -> Running {
        RUNNING.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The trace buffers of a run, empty, possibly with room from an earlier
/// run.
pub(super) struct Buffers {
    pub(super) ops: Ops,
    pub(super) reads: Vec<Read>,
}

pub(super) struct Machine<'p> {
    program: &'p Program,
    options: &'p Options,
    sites: &'p Sites<'p>,
    /// `Sites::cond_affine` folded at this run's parameters.
    cond_folded: Vec<Option<Folded>>,
    cond_terms: Vec<(usize, i64)>,
    reverse: Vec<bool>,
    shuffle: Vec<bool>,
    /// Per counter: a loop over threads, not in iteration vectors
    /// (`Options::thread_loops`).
    thread_loop: Vec<bool>,
    counters: Vec<i64>,
    /// The counters of the loops around the current point, outermost first.
    loops: Vec<CounterId>,
    iter: Vec<i64>,
    /// When each entry of `iter` was last set (from `epoch`): an entry
    /// keeps its epoch exactly as long as it and every entry before it
    /// keep their values, as an outer entry only changes after the inner
    /// ones are popped.
    epochs: Vec<u64>,
    epoch: u64,
    memory: Vec<Contents>,
    /// Cells held: every cell of the dense arrays, the touched ones of the
    /// sparse arrays (bounded by `max_cells`).
    held: u64,
    /// The initial values handed out so far, when some array is sparse
    /// (its initial values are checked for collisions as they are read).
    initials: Option<Initials>,
    /// The error behind an `EvalError::Env` from memory (a collision, the
    /// cell budget), which has its own kind.
    pending: Option<RunError>,
    ops: Ops,
    reads: Vec<Read>,
    steps: u64,
    _running: Running,
    cur: Current,
    /// `unknown_hash`'s states by `3 * site slot + domain slot`
    /// (statements first, then conditions), filled on first use.
    unknown_prefix: Vec<Option<Prefix>>,
    /// A call's hash state after the domain, seed, function name and
    /// argument count.
    call_prefix: Vec<(String, usize, StableHasher)>,
    /// Spent shuffle orders, reused by later loop instances.
    spare_orders: Vec<Vec<u64>>,
    /// Per statement, the rows of the iteration vector it is named by
    /// (`Options::iterations`), if renamed.
    named: Vec<Option<&'p [Vec<i64>]>>,
}

/// The initial values handed out: the dense arrays' all at once, sorted
/// (a set of them cost more than the run), the sparse arrays' as they are
/// read.
struct Initials {
    dense: Vec<i64>,
    fetched: HashSet<i64>,
}

impl Initials {
    /// Records `value`; false when it was handed out before.
    fn insert(&mut self, value: i64) -> bool {
        self.dense.binary_search(&value).is_err() && self.fetched.insert(value)
    }
}

impl<'p> Machine<'p> {
    pub(super) fn new(
        program: &'p Program,
        sites: &'p Sites<'p>,
        options: &'p Options,
        buffers: Buffers,
    ) -> Result<Self, RunError> {
        // What a run sets up before its first step, per site, counter and
        // array: on a program of 10^5 statements, tens of MB per run.
        let n_sites = sites.stmt_base.len() + sites.cond_name.len();
        let setup = 3 * n_sites * std::mem::size_of::<Option<Prefix>>()
            + sites.stmt_base.len() * std::mem::size_of::<Option<&[i64]>>()
            + sites.cond_affine.len() * std::mem::size_of::<Option<Folded>>()
            + program.counters.len() * 2 * std::mem::size_of::<i64>()
            + program.arrays.len() * 2 * std::mem::size_of::<Contents>();
        crate::budget::reserve(setup as u64, options.max_memory, || {
            format!("the run's tables for {n_sites} statements and conditions")
        })
        .map_err(memory_error)?;
        let by_name = |names: &[String]| -> Vec<bool> {
            program
                .counters
                .iter()
                .map(|c| names.contains(&c.name))
                .collect()
        };
        let mut m = Machine {
            program,
            options,
            sites,
            reverse: by_name(&options.reverse),
            shuffle: by_name(&options.shuffle),
            thread_loop: by_name(&options.thread_loops),
            cond_folded: Vec::with_capacity(sites.cond_affine.len()),
            cond_terms: Vec::new(),
            counters: vec![0; program.counters.len()],
            loops: Vec::new(),
            iter: Vec::new(),
            epochs: Vec::new(),
            epoch: 0,
            memory: Vec::with_capacity(program.arrays.len()),
            held: 0,
            initials: None,
            pending: None,
            ops: buffers.ops,
            reads: buffers.reads,
            steps: 0,
            _running: Running::start(),
            unknown_prefix: vec![None; 3 * (sites.stmt_base.len() + sites.cond_name.len())],
            call_prefix: Vec::new(),
            spare_orders: Vec::new(),
            named: sites
                .stmt_base
                .iter()
                .map(|b| {
                    let map = options.iterations.as_deref()?;
                    map.0.get(*b).map(Vec::as_slice)
                })
                .collect(),
            cur: Current {
                site: Site::Stmt(crate::model::StmtId(0)),
                op: None,
                position: 0,
                traced: false,
                last_origin: Writer::Initial,
            },
        };
        m.fold_conditions();
        m.allocate()?;
        // The first steps' trace, as every later poll reserves the next ones.
        m.poll_memory(Span::NONE).map_err(|e| *e)?;
        Ok(m)
    }

    pub(super) fn run(mut self) -> Result<Run, RunError> {
        let program = self.program;
        self.block(&program.body).map_err(|e| *e)?;
        Ok(Run {
            ops: self.ops,
            reads: self.reads,
            arrays: self.memory,
            steps: self.steps,
        })
    }

    fn fold_conditions(&mut self) {
        let params = &self.options.params;
        let terms = &mut self.cond_terms;
        let mut side = |a: &Affine| -> (i64, (u32, u32)) {
            let start = terms.len() as u32;
            let mut constant = a.constant;
            for &(v, c) in &a.terms {
                match v {
                    Var::Param(p) => {
                        constant = constant.wrapping_add(c.wrapping_mul(params[p.index()]))
                    }
                    Var::Counter(k) => terms.push((k.index(), c)),
                }
            }
            (constant, (start, terms.len() as u32))
        };
        let mut fold = |a: &eval::AffineCmp| {
            let (op, l, r) = a.parts();
            let (l, l_terms) = side(l);
            let (r, r_terms) = side(r);
            FoldedCmp {
                op,
                l,
                r,
                l_terms,
                r_terms,
            }
        };
        for f in &self.sites.cond_affine {
            let folded = f.as_ref().map(|pieces| match pieces.as_slice() {
                [Piece::Cmp(a)] => Folded::One(fold(a)),
                _ => Folded::Many(
                    (pieces.iter())
                        .map(|p| match p {
                            Piece::Cmp(a) => Piece::Cmp(fold(a)),
                            Piece::And => Piece::And,
                            Piece::Or => Piece::Or,
                            Piece::Not => Piece::Not,
                        })
                        .collect(),
                ),
            });
            self.cond_folded.push(folded);
        }
    }

    fn folded_cmp(&self, f: &FoldedCmp) -> bool {
        eval::compare(
            f.op,
            self.folded_side(f.l, f.l_terms),
            self.folded_side(f.r, f.r_terms),
        )
    }

    /// A folded condition's value: its pieces' values kept as bits, the
    /// latest lowest.
    fn folded_cond(&self, pieces: &[Piece<FoldedCmp>]) -> bool {
        let mut bits = 0u64;
        for p in pieces {
            bits = match p {
                Piece::Cmp(f) => (bits << 1) | u64::from(self.folded_cmp(f)),
                Piece::And => (bits >> 1) & (bits | !1),
                Piece::Or => (bits >> 1) | (bits & 1),
                Piece::Not => bits ^ 1,
            };
        }
        bits & 1 == 1
    }

    #[inline]
    fn folded_side(&self, constant: i64, (start, end): (u32, u32)) -> i64 {
        self.cond_terms[start as usize..end as usize]
            .iter()
            .fold(constant, |acc, &(k, c)| {
                acc.wrapping_add(c.wrapping_mul(self.counters[k]))
            })
    }

    /// Lays out every array at the parameter values: small ones densely,
    /// filled with their initial values, which must all differ; big ones
    /// (or past the cell budget) sparse, their initial values made and
    /// checked when read.
    fn allocate(&mut self) -> Result<(), RunError> {
        let mut total = 0u64;
        let mut layouts = Vec::with_capacity(self.program.arrays.len());
        for a in &self.program.arrays {
            let mut dims = Vec::with_capacity(a.dims.len());
            for r in &a.dims {
                dims.push((
                    self.static_value(&r.lo.expr).map_err(|e| *e)?,
                    self.static_value(&r.hi.expr).map_err(|e| *e)?,
                ));
            }
            // Positions of every array fit `usize` (`Machine::cell`).
            let Some(n) = Contents::size(&dims).filter(|&n| usize::try_from(n).is_ok()) else {
                return Err(self.too_large(&a.name, a.span));
            };
            let dense = n <= super::memory::DENSE_MAX
                && total
                    .checked_add(n)
                    .is_some_and(|t| t <= self.options.max_cells);
            if dense {
                total += n;
            }
            layouts.push((dims, dense));
        }
        let sparse = layouts.iter().any(|(_, dense)| !dense);
        // The dense cells and the set of initial values that checks them.
        let bytes = total.saturating_mul(2 * std::mem::size_of::<Cell>() as u64);
        crate::budget::reserve(bytes, self.options.max_memory, || {
            format!("{total} array cells")
        })
        .map_err(memory_error)?;
        let mut all = Vec::with_capacity(total as usize);
        for (a, (dims, dense)) in self.program.arrays.iter().zip(layouts) {
            if !dense {
                self.memory.push(Contents::sparse(dims));
                continue;
            }
            let mut c = Contents {
                dims,
                cells: Vec::new(),
                touched: None,
            };
            let n = Contents::size(&c.dims).unwrap_or(0) as usize;
            let prefix = self.initial(&a.name);
            // The index of cell k (`Contents::index`), counted row-major.
            let mut index: Vec<i64> = c.dims.iter().map(|d| d.0).collect();
            c.cells = Vec::with_capacity(n);
            for _ in 0..n {
                let value = prefix.ints(&index).finish() as i64;
                all.push(value);
                c.cells.push(Cell {
                    value,
                    writer: Writer::Initial,
                    origin: Writer::Initial,
                });
                for (v, &(lo, hi)) in index.iter_mut().zip(&c.dims).rev() {
                    if *v < hi {
                        *v += 1;
                        break;
                    }
                    *v = lo;
                }
            }
            self.memory.push(c);
        }
        self.held = total;
        all.sort_unstable();
        if let Some(w) = all.windows(2).find(|w| w[0] == w[1]) {
            return Err(self.collision(w[0]));
        }
        if sparse {
            self.initials = Some(Initials {
                dense: all,
                fetched: HashSet::new(),
            });
        }
        Ok(())
    }

    fn too_large(&self, name: &str, span: Span) -> RunError {
        RunError {
            kind: ErrorKind::TooLarge,
            message: format!(
                "the arrays need more than {} cells at these parameter values \
                 (array `{name}` goes over); use smaller parameters or raise --max-cells",
                self.options.max_cells
            ),
            span,
        }
    }

    /// The cell at `flat` of array `array`; an untouched cell of a sparse
    /// array is made from its initial value (which must differ from every
    /// other one handed out) and counted against the cell budget.
    fn fetch(&mut self, array: usize, flat: usize) -> Result<Cell, EvalError> {
        if let Some(c) = self.memory[array].get(flat) {
            return Ok(c);
        }
        let index = self.memory[array].index(flat);
        let value = self
            .initial(&self.program.arrays[array].name)
            .ints(&index)
            .finish() as i64;
        let cell = Cell {
            value,
            writer: Writer::Initial,
            origin: Writer::Initial,
        };
        self.store(array, flat, cell)?;
        if let Some(seen) = &mut self.initials {
            if !seen.insert(value) {
                return Err(self.fail(self.collision(value)));
            }
        }
        Ok(cell)
    }

    /// Sets a cell, counting a new cell of a sparse array against the budget.
    fn store(&mut self, array: usize, flat: usize, cell: Cell) -> Result<(), EvalError> {
        if self.memory[array].set(flat, cell) {
            self.held += 1;
            if self.held > self.options.max_cells {
                let program = self.program;
                let a = &program.arrays[array];
                return Err(self.fail(self.too_large(&a.name, a.span)));
            }
        }
        Ok(())
    }

    /// An error of memory, kept for `eval_error` behind the `EvalError` the
    /// evaluator passes up.
    #[cold]
    fn fail(&mut self, e: RunError) -> EvalError {
        let span = e.span;
        self.pending = Some(e);
        EvalError::Env(String::new(), span)
    }

    fn collision(&self, value: i64) -> RunError {
        let mut cells = Vec::new();
        for (a, c) in self.program.arrays.iter().zip(&self.memory) {
            for (k, cell) in c.held() {
                if cell.value == value && cell.writer == Writer::Initial {
                    cells.push(format!("{}{:?}", a.name, c.index(k)));
                }
            }
        }
        RunError {
            kind: ErrorKind::Collision,
            message: format!(
                "initial values of {} collide for seed {}; use another seed",
                cells.join(" and "),
                self.options.seed
            ),
            span: Span::NONE,
        }
    }

    /// The hash state an initial value of `array` starts from; the cell's
    /// index completes it.
    fn initial(&self, array: &str) -> StableHasher {
        initial_prefix(self.options.seed, array)
    }

    fn static_value(&self, e: &crate::model::Expr) -> Result<i64, Box<RunError>> {
        let mut env = StaticEnv {
            params: &self.options.params,
            counters: &self.counters,
        };
        eval::expr(e, &mut env).map_err(|err| Box::new(self.eval_error(err)))
    }

    #[inline]
    fn step(&mut self, span: Span) -> Result<(), Box<RunError>> {
        self.steps += 1;
        if self.steps > self.options.max_steps {
            return Err(self.over_budget(span));
        }
        if self.steps & (POLL - 1) == 0 {
            self.poll_memory(span)?;
        }
        Ok(())
    }

    /// The memory budget, every [`POLL`] steps: the bytes live, and what
    /// the trace could allocate before the next poll (a doubling of its
    /// vectors would otherwise jump past the budget, and past `ulimit -v`).
    #[cold]
    fn poll_memory(&self, span: Span) -> Result<(), Box<RunError>> {
        let limit = self.options.max_memory;
        let sites = self.sites.stmt_reads.iter().chain(&self.sites.cond_reads);
        let per_step = sites.map(Vec::len).max().unwrap_or(0).max(1);
        let depth = self.sites.depth.max(1);
        let more = POLL as usize;
        let runs = RUNNING.load(std::sync::atomic::Ordering::Relaxed).max(1) as u64;
        let ahead = (super::doubling(&self.reads, more * per_step) + self.ops.growth(more, depth))
            .saturating_mul(runs);
        let ok = crate::budget::check(limit, String::new).is_ok()
            && crate::budget::reserve(ahead, limit, String::new).is_ok();
        match ok {
            true => Ok(()),
            false => Err(self.over_memory(span)),
        }
    }

    #[cold]
    fn over_memory(&self, span: Span) -> Box<RunError> {
        let held = crate::budget::live().unwrap_or(0);
        let at = match self.steps {
            0 => "before its first step".to_string(),
            n => format!("at {}, after {n} steps", self.here()),
        };
        Box::new(RunError {
            kind: ErrorKind::Memory,
            message: format!(
                "the run would need more memory than the budget of {} (it holds {} of memory {at}, and its trace of reads grows); raise --max-memory or use smaller parameters",
                crate::budget::show(self.options.max_memory),
                crate::budget::show(held),
            ),
            span,
        })
    }

    #[cold]
    fn over_budget(&self, span: Span) -> Box<RunError> {
        Box::new(RunError {
            kind: ErrorKind::StepBudget,
            message: format!(
                "the run exceeded {} steps (at {}); raise --max-steps or use smaller parameters",
                self.options.max_steps,
                self.here()
            ),
            span,
        })
    }

    fn block(&mut self, nodes: &'p [Node]) -> Result<(), Box<RunError>> {
        for n in nodes {
            match n {
                Node::For(f) => self.for_loop(f)?,
                Node::While(w) => self.while_loop(w)?,
                Node::If(i) => self.if_node(i)?,
                Node::Stmt(s) => self.stmt(s)?,
            }
        }
        Ok(())
    }

    fn for_loop(&mut self, f: &'p For) -> Result<(), Box<RunError>> {
        let lo = self.static_value(&f.lower.expr)?;
        let hi = self.static_value(&f.upper.expr)?;
        let count: u128 = if hi < lo {
            0
        } else {
            (hi as i128 - lo as i128) as u128 / f.step as u128 + 1
        };
        let c = f.counter.index();
        let shuffled = self.shuffle[c] || (f.parallel && self.options.shuffle_parallel);
        let order: Option<Vec<u64>> = if shuffled {
            let left = self.options.max_steps.saturating_sub(self.steps) as u128;
            if count > left {
                // Every iteration costs a step: the run would stop anyway.
                self.steps = self.options.max_steps;
                return self.step(f.span);
            }
            let mut order = self.spare_orders.pop().unwrap_or_default();
            order.clear();
            order.extend(0..count as u64);
            let seed = StableHasher::new(domain::SHUFFLE)
                .word(self.options.seed)
                .str(&self.program.counters[c].name)
                .ints(&self.iter)
                .finish();
            SplitMix64::new(seed).shuffle(&mut order);
            Some(order)
        } else {
            None
        };
        // A loop over threads is no part of the operations' names.
        let named = !self.thread_loop[c];
        if named {
            self.loops.push(f.counter);
            self.push_iter(lo);
        }
        let mut k: u128 = 0;
        while k < count {
            let trip = match &order {
                Some(o) => o[k as usize] as u128,
                None if self.reverse[c] => count - 1 - k,
                None => k,
            };
            // lo + trip*step <= hi, so it fits.
            let value = (lo as i128 + trip as i128 * f.step as i128) as i64;
            self.counters[c] = value;
            if named {
                self.set_iter(value);
            }
            self.step(f.span)?;
            self.block(&f.body)?;
            k += 1;
        }
        if named {
            self.pop_iter();
            self.loops.pop();
        }
        self.spare_orders.extend(order);
        Ok(())
    }

    fn while_loop(&mut self, w: &'p While) -> Result<(), Box<RunError>> {
        let c = w.counter.index();
        self.loops.push(w.counter);
        self.push_iter(0);
        for trip in 0..self.options.max_trips as i64 {
            self.counters[c] = trip;
            self.set_iter(trip);
            if !self.test(&w.cond)? {
                break;
            }
            self.block(&w.body)?;
        }
        self.pop_iter();
        self.loops.pop();
        Ok(())
    }

    fn push_iter(&mut self, v: i64) {
        self.iter.push(v);
        self.epochs.push(0);
        self.set_iter(v);
    }

    #[inline]
    fn set_iter(&mut self, v: i64) {
        self.epoch += 1;
        *self.iter.last_mut().expect("pushed") = v;
        *self.epochs.last_mut().expect("pushed") = self.epoch;
    }

    fn pop_iter(&mut self) {
        self.iter.pop();
        self.epochs.pop();
    }

    fn if_node(&mut self, i: &'p If) -> Result<(), Box<RunError>> {
        for (c, body) in &i.branches {
            if self.test(c)? {
                return self.block(body);
            }
        }
        match &i.otherwise {
            Some(body) => self.block(body),
            None => Ok(()),
        }
    }

    fn begin(&mut self, site: Site, traced: bool, span: Span) -> Result<(), Box<RunError>> {
        self.cur = Current {
            site,
            op: None,
            position: 0,
            traced,
            last_origin: Writer::Initial,
        };
        self.step(span)
    }

    fn test(&mut self, c: &'p Condition) -> Result<bool, Box<RunError>> {
        if let Some(f) = &self.cond_folded[c.id.index()] {
            let holds = match f {
                Folded::One(f) => self.folded_cmp(f),
                Folded::Many(pieces) => self.folded_cond(pieces),
            };
            // It reads, writes and hashes nothing: only the site (for a
            // step budget error) is needed of the operation.
            self.cur.site = Site::Cond(c.id);
            self.step(c.span)?;
            return Ok(holds);
        }
        self.begin(Site::Cond(c.id), true, c.span)?;
        eval::cond(&c.cond, self).map_err(|e| self.run_error(e))
    }

    fn stmt(&mut self, s: &'p Stmt) -> Result<(), Box<RunError>> {
        self.begin(
            Site::Stmt(s.id),
            !s.copy || self.options.trace_copies,
            s.span,
        )?;
        self.exec(s).map_err(|e| self.run_error(e))
    }

    fn exec(&mut self, s: &'p Stmt) -> Result<(), EvalError> {
        match &s.kind {
            StmtKind::Assign { target, op, value } => {
                let cell = eval::with_subscripts(target, self, |m, subs| m.cell(target, subs))?;
                let new = match op {
                    Some(op) => {
                        let old = self.load(target, cell)?;
                        let v = eval::expr(value, self)?;
                        eval::binary_in(*op, old, v, value.span, self)?
                    }
                    None => eval::expr(value, self)?,
                };
                let me = Writer::Op(self.op_index());
                // A copy of a plain read passes the value's origin on.
                let origin = match (&value.kind, op) {
                    (ExprKind::Access(_), None) if s.copy => self.cur.last_origin,
                    _ => me,
                };
                let (array, flat) = cell;
                let cell = Cell {
                    value: new,
                    writer: me,
                    origin,
                };
                self.store(array, flat, cell)?;
            }
            StmtKind::Call { args, .. } => {
                for a in args {
                    eval::expr(a, self)?;
                }
            }
        }
        Ok(())
    }

    fn op_index(&mut self) -> u32 {
        if let Some(k) = self.cur.op {
            return k;
        }
        // The step budget (below u32::MAX, checked by the CLI) bounds this.
        let k = match self.named_iter() {
            Some(v) => self.ops.push(self.cur.site, &v),
            None => self.ops.push(self.cur.site, &self.iter),
        };
        self.cur.op = Some(k);
        k
    }

    /// The cell an access touches: `(array, position)`. A subscript that is a
    /// call is first reduced into its dimension's range; any other subscript
    /// outside the range is an error.
    fn cell(&self, a: &Access, subs: &[i64]) -> Result<(usize, usize), EvalError> {
        let contents = &self.memory[a.array.index()];
        let reduce = |k: usize, v: i64| {
            let (lo, hi) = contents.dims[k];
            if matches!(a.subscripts[k].expr.kind, ExprKind::Call(..)) && lo <= hi {
                let extent = hi as i128 - lo as i128 + 1;
                (lo as i128 + (v as i128).rem_euclid(extent)) as i64
            } else {
                v
            }
        };
        let mut flat = 0usize;
        for (k, (&(lo, hi), &v)) in contents.dims.iter().zip(subs).enumerate() {
            let v = reduce(k, v);
            if v < lo || v > hi {
                let index: Vec<i64> = subs
                    .iter()
                    .enumerate()
                    .map(|(k, &v)| reduce(k, v))
                    .collect();
                let name = &self.program.arrays[a.array.index()].name;
                return Err(EvalError::Env(
                    format!(
                        "subscript {} of `{name}` is {}, outside its declared range {lo}..{hi} \
                         (index {name}{:?})",
                        k + 1,
                        index[k],
                        index
                    ),
                    a.subscripts[k].expr.span,
                ));
            }
            // In range, so the extent and the product fit: the cell count was
            // checked against the cell budget (as in `Contents::offset`).
            flat = flat * (hi - lo + 1) as usize + (v - lo) as usize;
        }
        Ok((a.array.index(), flat))
    }

    /// Reads a cell for access `a` of the current operation and traces it.
    fn load(&mut self, a: &Access, (array, flat): (usize, usize)) -> Result<i64, EvalError> {
        let cell = self.fetch(array, flat)?;
        self.cur.last_origin = cell.origin;
        if self.cur.traced {
            let reads = match self.cur.site {
                Site::Stmt(s) => &self.sites.stmt_reads[s.index()],
                Site::Cond(c) => &self.sites.cond_reads[c.index()],
            };
            let access = reads
                .iter()
                .position(|r| std::ptr::eq(*r, a))
                .expect("every evaluated access is one of its site's reads")
                as u32;
            let op = self.op_index();
            self.reads.push(Read {
                op,
                access,
                value: cell.value,
                writer: cell.writer,
                origin: cell.origin,
            });
        }
        Ok(cell.value)
    }

    /// The iteration vector the current statement is named by, when
    /// `Options::iterations` renames it (wrapping, as `eval::affine`).
    fn named_iter(&self) -> Option<Vec<i64>> {
        let Site::Stmt(s) = self.cur.site else {
            return None;
        };
        let rows = self.named.get(s.index()).copied().flatten()?;
        let vars: Vec<i64> = self
            .iter
            .iter()
            .chain(&self.options.params)
            .copied()
            .collect();
        Some(
            rows.iter()
                .map(|r| {
                    let (c, coef) = r.split_last().expect("a constant");
                    coef.iter()
                        .zip(&vars)
                        .fold(*c, |acc, (a, x)| acc.wrapping_add(a.wrapping_mul(*x)))
                })
                .collect(),
        )
    }

    /// The name the current operation's hashed values are keyed by.
    fn identity(&self) -> &'p str {
        match self.cur.site {
            Site::Stmt(s) => self.sites.stmt_base[s.index()],
            Site::Cond(c) => base_label(self.sites.cond_name[c.index()]),
        }
    }

    fn unknown_hash(&mut self, domain: u64) -> u64 {
        let position = self.cur.position;
        self.cur.position += 1;
        let site = match self.cur.site {
            Site::Stmt(s) => s.index(),
            Site::Cond(c) => self.sites.stmt_base.len() + c.index(),
        };
        let d = match domain {
            domain::STMT_UNKNOWN => 0,
            domain::COND_VALUE => 1,
            _ => 2,
        };
        let slot = 3 * site + d;
        if let Some(v) = self.named_iter() {
            // The words `ints` hashes, for the vector the operation is named by.
            let h = StableHasher::new(domain)
                .word(self.options.seed)
                .str(self.identity())
                .ints(&v);
            return h.word(position).finish();
        }
        let n = self.iter.len();
        let mut p = match self.unknown_prefix[slot] {
            Some(p) if p.len == n => p,
            _ => {
                // `ints` starts with the length.
                let base = StableHasher::new(domain)
                    .word(self.options.seed)
                    .str(self.identity())
                    .word(n as u64);
                Prefix {
                    len: n,
                    base,
                    outer: base,
                    outer_epoch: 0,
                }
            }
        };
        // The same words as `prefix.ints(&self.iter)`, the outer entries'
        // part reused while they are unchanged.
        let h = match self.iter.split_last() {
            None => p.base,
            Some((&last, outer)) => {
                let epoch = if n >= 2 { self.epochs[n - 2] } else { 0 };
                if p.outer_epoch != epoch {
                    p.outer = outer.iter().fold(p.base, |h, &v| h.int(v));
                    p.outer_epoch = epoch;
                }
                p.outer.int(last)
            }
        };
        self.unknown_prefix[slot] = Some(p);
        h.word(position).finish()
    }

    /// "statement `S` at iteration (i=1, j=2)".
    fn here(&self) -> String {
        let what = match self.cur.site {
            Site::Stmt(s) => format!("statement `{}`", self.sites.stmt_label[s.index()]),
            Site::Cond(c) => format!("condition `{}`", self.sites.cond_name[c.index()]),
        };
        if self.loops.is_empty() {
            return format!("{what} (outside every loop)");
        }
        let parts: Vec<String> = self
            .loops
            .iter()
            .zip(&self.iter)
            .map(|(c, v)| format!("{}={v}", self.program.counters[c.index()].name))
            .collect();
        format!("{what} at iteration ({})", parts.join(", "))
    }

    /// The error an evaluation stopped with: a memory error kept in
    /// `pending`, or what `eval_error` makes of it.
    fn run_error(&mut self, e: EvalError) -> Box<RunError> {
        Box::new(self.pending.take().unwrap_or_else(|| self.eval_error(e)))
    }

    fn eval_error(&self, e: EvalError) -> RunError {
        let (kind, message, span) = match e {
            EvalError::DivisionByZero(span) => (
                ErrorKind::DivisionByZero,
                format!("division by zero in {}", self.here()),
                span,
            ),
            EvalError::Env(msg, span) => (
                ErrorKind::OutOfRange,
                format!("{}: {msg}", self.here()),
                span,
            ),
            EvalError::NotStatic(span) => (
                ErrorKind::OutOfRange,
                format!("{}: a bound or range is not static", self.here()),
                span,
            ),
        };
        RunError {
            kind,
            message,
            span,
        }
    }
}

impl Env for Machine<'_> {
    fn param(&self, p: ParamId) -> i64 {
        self.options.params[p.index()]
    }

    fn counter(&self, c: CounterId) -> i64 {
        self.counters[c.index()]
    }

    fn read(&mut self, access: &Access, subscripts: &[i64]) -> Result<i64, EvalError> {
        let cell = self.cell(access, subscripts)?;
        self.load(access, cell)
    }

    fn call(&mut self, func: &str, args: &[i64], _span: Span) -> Result<i64, EvalError> {
        let n = args.len();
        let found = self
            .call_prefix
            .iter()
            .find(|(f, k, _)| *k == n && f == func);
        let prefix = match found {
            Some(&(_, _, h)) => h,
            None => {
                // `ints` starts with the length.
                let h = StableHasher::new(domain::CALL)
                    .word(self.options.seed)
                    .str(func)
                    .word(n as u64);
                self.call_prefix.push((func.to_string(), n, h));
                h
            }
        };
        Ok(args.iter().fold(prefix, |h, &v| h.int(v)).finish() as i64)
    }

    /// Values are hashed, so a computed divisor is 0 now and then (durbin's
    /// `beta` picks up a factor 2 each step until it wraps to 0): the
    /// quotient is a value of its own, the same in every program that
    /// divides that value by zero, never an error.
    fn by_zero(&mut self, op: crate::model::BinOp, l: i64, _span: Span) -> Result<i64, EvalError> {
        let h = StableHasher::new(domain::BY_ZERO)
            .word(self.options.seed)
            .word(matches!(op, crate::model::BinOp::Rem) as u64)
            .int(l);
        Ok(h.finish() as i64)
    }

    fn unknown(&mut self, _span: Span) -> Result<i64, EvalError> {
        let domain = match self.cur.site {
            Site::Stmt(_) => domain::STMT_UNKNOWN,
            Site::Cond(_) => domain::COND_VALUE,
        };
        Ok(self.unknown_hash(domain) as i64)
    }

    fn unknown_cond(&mut self, _span: Span) -> Result<bool, EvalError> {
        Ok(self.unknown_hash(domain::COND_UNKNOWN) & 1 == 1)
    }
}

#[cfg(test)]
mod initials_tests {
    use super::Initials;

    #[test]
    fn a_value_handed_out_before_is_refused_dense_or_fetched() {
        let mut seen = Initials {
            dense: vec![-7, 3, 10],
            fetched: Default::default(),
        };
        assert!(!seen.insert(3), "a dense array's value");
        assert!(!seen.insert(-7));
        assert!(seen.insert(4), "a new value");
        assert!(!seen.insert(4), "a value fetched before");
        assert!(seen.insert(11));
    }
}
