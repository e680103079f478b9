//! A deterministic interpreter of [`Program`]s.
//!
//! Every value that is not computed by the program itself comes from a stable
//! hash (see [`crate::hash`] and docs/interpreter.md): initial array cells,
//! `...` values, uninterpreted calls, unknown conditions and `while` tests.
//! Their inputs are names that a transformation keeps (array names, base
//! statement labels, condition identities) and iteration vectors, so a
//! program and its transformed version see the same world and their read
//! traces can be compared ([`crate::equiv`]).
//!
//! Expressions are evaluated only through [`crate::model::eval`]; this module
//! supplies memory and the hashed values through its [`Env`](crate::model::eval::Env).

mod machine;
mod memory;
pub mod output;
#[cfg(test)]
pub mod tests;

pub use machine::initial_value;
pub use memory::{Cell, Contents};

use crate::model::{base_label, CounterKind, Operation, Program, Site, Span};
use std::fmt;

/// How to run a program.
#[derive(Clone, Debug)]
pub struct Options {
    /// Concrete parameter values, indexed by `ParamId` (see
    /// [`Program::param_values`]).
    pub params: Vec<i64>,
    pub seed: u64,
    /// The most trips any one `while` loop instance runs; the test before trip
    /// `max_trips` is not evaluated.
    pub max_trips: u32,
    /// The most steps (statements executed, conditions tested, loop
    /// iterations started) before the run stops.
    pub max_steps: u64,
    /// The most array cells all declared arrays may hold together.
    pub max_cells: u64,
    /// The most bytes the process may hold while running (`crate::budget`;
    /// polled, so only with the counting allocator, as in the binary).
    pub max_memory: u64,
    /// Counter names of `for` loops whose iterations run last to first.
    pub reverse: Vec<String>,
    /// Counter names of `for` loops whose iterations run in a seeded random
    /// order, a new one for every instance of the loop.
    pub shuffle: Vec<String>,
    /// Also shuffle every `doall` loop.
    pub shuffle_parallel: bool,
    /// Trace the reads of `@copy` statements too (for `verify`, which checks
    /// every read against σ).
    pub trace_copies: bool,
    /// The iteration vector each statement's operations are named by, when
    /// not the counters around it (a rescheduled program's operations keep
    /// the original's names: `storage::reschedule`).
    pub iterations: Option<std::sync::Arc<IterationMap>>,
    /// Counter names of `for` loops over threads (privatization's
    /// per-thread copies run `for t = 0 to threads - 1 doall` around the
    /// loop they privatize): left out of iteration vectors, so an
    /// operation inside keeps the name it has in the program without them.
    pub thread_loops: Vec<String>,
    /// Base names of statements and conditions whose reads `equiv` does
    /// not compare, in either program: a reduction that B folds in blocks
    /// of iterations and combines reads other values, in another order,
    /// than A does (privatization's maxima kept with their indices); the
    /// final contents still say whether the two agree.
    pub unordered: Vec<String>,
}

/// Per statement base label: the iteration vector its operations are named
/// by, one affine row per entry over the counters of the loops around the
/// statement (outermost first), then the parameters, then a constant.
/// Hashed values (`...`) and `equiv`'s read keys use that name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IterationMap(pub std::collections::HashMap<String, Vec<Vec<i64>>>);

pub const DEFAULT_MAX_STEPS: u64 = 1_000_000;
pub const DEFAULT_MAX_CELLS: u64 = 1 << 22;

impl Options {
    pub fn new(params: Vec<i64>) -> Options {
        Options {
            params,
            seed: 0,
            max_trips: 4,
            max_steps: DEFAULT_MAX_STEPS,
            max_cells: DEFAULT_MAX_CELLS,
            max_memory: crate::budget::limit(),
            reverse: Vec::new(),
            shuffle: Vec::new(),
            shuffle_parallel: false,
            trace_copies: false,
            iterations: None,
            thread_loops: Vec::new(),
            unordered: Vec::new(),
        }
    }
}

/// Who wrote a value: the initial contents, or an operation (an index into
/// [`Run::ops`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Writer {
    Initial,
    Op(u32),
}

/// One executed read access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Read {
    /// The reading operation, an index into [`Run::ops`].
    pub op: u32,
    /// The read's index among its site's reads (`Stmt::reads`, `Condition::reads`).
    pub access: u32,
    pub value: i64,
    /// The last operation that wrote the cell (possibly a `@copy` statement).
    pub writer: Writer,
    /// The writer behind any chain of `@copy` statements that moved the value.
    pub origin: Writer,
}

/// An operation of a run, borrowed from its [`Ops`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op<'r> {
    pub site: Site,
    pub iter: &'r [i64],
}

impl Op<'_> {
    pub fn to_operation(self) -> Operation {
        Operation {
            site: self.site,
            iter: self.iter.to_vec(),
        }
    }
}

impl<'r> From<&'r Operation> for Op<'r> {
    fn from(o: &'r Operation) -> Op<'r> {
        Op {
            site: o.site,
            iter: &o.iter,
        }
    }
}

impl PartialEq<Operation> for Op<'_> {
    fn eq(&self, o: &Operation) -> bool {
        self.site == o.site && self.iter == o.iter.as_slice()
    }
}

/// The operations of a run, numbered from 0. The iteration vectors lie end
/// to end in one buffer: a run makes no allocation per operation.
#[derive(Clone, Debug)]
pub struct Ops {
    sites: Vec<Site>,
    /// Operation k's vector is `iters[starts[k]..starts[k + 1]]`.
    starts: Vec<usize>,
    iters: Vec<i64>,
}

impl Default for Ops {
    fn default() -> Ops {
        Ops {
            sites: Vec::new(),
            starts: vec![0],
            iters: Vec::new(),
        }
    }
}

impl Ops {
    pub fn len(&self) -> usize {
        self.sites.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sites.is_empty()
    }

    /// Operation `k`; panics past the end, like indexing.
    pub fn get(&self, k: u32) -> Op<'_> {
        let k = k as usize;
        Op {
            site: self.sites[k],
            iter: &self.iters[self.starts[k]..self.starts[k + 1]],
        }
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = Op<'_>> + '_ {
        (0..self.len() as u32).map(|k| self.get(k))
    }

    fn with_capacity(ops: usize, iters: usize) -> Ops {
        let mut starts = Vec::with_capacity(ops + 1);
        starts.push(0);
        Ops {
            sites: Vec::with_capacity(ops),
            starts,
            iters: Vec::with_capacity(iters),
        }
    }

    fn clear(&mut self) {
        self.sites.clear();
        self.starts.truncate(1);
        self.iters.clear();
    }

    /// Bytes the next `steps` operations (each at most `depth` counters
    /// deep) could allocate: a vector that would outgrow its capacity
    /// doubles, its new buffer allocated while the old one is live.
    fn growth(&self, steps: usize, depth: usize) -> u64 {
        doubling(&self.sites, steps)
            + doubling(&self.starts, steps)
            + doubling(&self.iters, steps * depth)
    }

    /// Appends an operation; its number.
    fn push(&mut self, site: Site, iter: &[i64]) -> u32 {
        let k = self.sites.len() as u32;
        self.sites.push(site);
        self.iters.extend_from_slice(iter);
        self.starts.push(self.iters.len());
        k
    }
}

/// Bytes `v` allocates if `more` elements are pushed: a vector that would
/// outgrow its capacity doubles, the new buffer allocated while the old one
/// is live.
pub(super) fn doubling<T>(v: &Vec<T>, more: usize) -> u64 {
    match v.capacity() - v.len() < more {
        true => (2 * v.capacity().max(more) * std::mem::size_of::<T>()) as u64,
        false => 0,
    }
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct Run {
    /// Every operation that read or wrote, in the order it first did.
    pub ops: Ops,
    /// Every executed read except those of `@copy` statements, in execution
    /// order.
    pub reads: Vec<Read>,
    /// Final contents, indexed by `ArrayId`.
    pub arrays: Vec<Contents>,
    pub steps: u64,
}

impl Run {
    pub fn op(&self, w: Writer) -> Option<Op<'_>> {
        match w {
            Writer::Initial => None,
            Writer::Op(k) => Some(self.ops.get(k)),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A subscript outside the declared range.
    OutOfRange,
    DivisionByZero,
    /// `--max-steps` exceeded.
    StepBudget,
    /// The arrays need more cells than `--max-cells`.
    TooLarge,
    /// The run holds more memory than `--max-memory` (its trace of reads
    /// grows with the steps).
    Memory,
    /// Two initial cells hashed to the same value (another seed avoids it).
    Collision,
    /// Inconsistent options: a loop option naming no `for` loop or one loop
    /// twice, a wrong number of parameter values, a step budget too large.
    BadOption,
    /// An access of an extension kind (`A[i] @name(...)`): the interpreter
    /// knows the meaning of the core accesses only.
    Unsupported,
}

/// Why a run stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunError {
    pub kind: ErrorKind,
    pub message: String,
    /// Where in the source; `Span::NONE` when no one place is to blame.
    pub span: Span,
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RunError {}

/// Runs `program` to the end, or to the first error.
pub fn run(program: &Program, options: &Options) -> Result<Run, RunError> {
    Interpreter::new(program).run(options)
}

/// One program run many times (seeds, parameters): what depends on the
/// program alone is worked out once, a run handed back by
/// [`Interpreter::recycle`] lends its buffers to the next, and otherwise the
/// next run's buffers start at the size of the last one's.
pub struct Interpreter<'p> {
    program: &'p Program,
    sites: machine::Sites<'p>,
    spare: Option<machine::Buffers>,
    /// Operations, iteration entries and reads of the last run.
    last: (usize, usize, usize),
    /// Why the program cannot run at all: an extension access.
    refused: Option<RunError>,
}

impl<'p> Interpreter<'p> {
    pub fn new(program: &'p Program) -> Interpreter<'p> {
        Interpreter {
            program,
            sites: machine::Sites::new(program),
            spare: None,
            last: (0, 0, 0),
            refused: program.first_ext_access().map(|a| {
                let name = a.ext.as_ref().map_or("", |x| x.name.as_str());
                RunError {
                    kind: ErrorKind::Unsupported,
                    message: format!(
                        "the interpreter cannot run an access of kind `@{name}`: it knows the \
                         core accesses only"
                    ),
                    span: a.span,
                }
            }),
        }
    }

    /// Runs the program to the end, or to the first error.
    pub fn run(&mut self, options: &Options) -> Result<Run, RunError> {
        if let Some(e) = &self.refused {
            return Err(e.clone());
        }
        check_loop_options(self.program, options)?;
        let buffers = self.spare.take().unwrap_or_else(|| {
            let (ops, iters, reads) = self.last;
            machine::Buffers {
                ops: Ops::with_capacity(ops, iters),
                reads: Vec::with_capacity(reads),
            }
        });
        let run = machine::Machine::new(self.program, &self.sites, options, buffers)?.run()?;
        self.last = (run.ops.len(), run.ops.iters.len(), run.reads.len());
        Ok(run)
    }

    /// Takes back a run that is no longer needed: the next run writes its
    /// trace into the same memory.
    pub fn recycle(&mut self, run: Run) {
        let mut ops = run.ops;
        let mut reads = run.reads;
        ops.clear();
        reads.clear();
        self.spare = Some(machine::Buffers { ops, reads });
    }
}

fn check_loop_options(program: &Program, options: &Options) -> Result<(), RunError> {
    let bad = |message: String| RunError {
        kind: ErrorKind::BadOption,
        message,
        span: Span::NONE,
    };
    if options.params.len() != program.params.len() {
        return Err(bad(format!(
            "{} parameter values given for {} parameters",
            options.params.len(),
            program.params.len()
        )));
    }
    if options.max_steps >= u64::from(u32::MAX) {
        return Err(bad(format!("--max-steps must be below {}", u32::MAX)));
    }
    let reordered = options.reverse.iter().chain(&options.shuffle);
    for name in reordered.chain(&options.thread_loops) {
        let kinds: Vec<CounterKind> = program
            .counters
            .iter()
            .filter(|c| c.name == *name)
            .map(|c| c.kind)
            .collect();
        if kinds.is_empty() {
            return Err(bad(format!("no loop has the counter `{name}`")));
        }
        if !kinds.contains(&CounterKind::For) {
            return Err(bad(format!(
                "`{name}` is a `while` loop; only `for` loops can be reordered"
            )));
        }
    }
    if let Some(name) = options.reverse.iter().find(|n| options.shuffle.contains(n)) {
        return Err(bad(format!(
            "loop `{name}` cannot be both reversed and shuffled"
        )));
    }
    Ok(())
}

/// The names sites go by, computed once per program.
#[derive(Clone, Debug)]
pub struct SiteNames {
    stmts: Vec<String>,
    conds: Vec<String>,
}

impl SiteNames {
    pub fn new(program: &Program) -> SiteNames {
        SiteNames {
            stmts: program.stmts().iter().map(|s| s.label.clone()).collect(),
            conds: program
                .conditions()
                .iter()
                .map(|c| c.name.clone())
                .collect(),
        }
    }

    /// A statement's label or a condition's name.
    pub fn name(&self, site: Site) -> &str {
        match site {
            Site::Stmt(s) => &self.stmts[s.index()],
            Site::Cond(c) => &self.conds[c.index()],
        }
    }

    /// The name without a derived-version suffix: the identity that
    /// transformations keep.
    pub fn base(&self, site: Site) -> &str {
        base_label(self.name(site))
    }

    /// `S[1, 2]`, or `S` outside every loop.
    pub fn op<'r>(&self, op: impl Into<Op<'r>>) -> String {
        let op = op.into();
        format_op(self.name(op.site), op.iter)
    }
}

/// `S[1, 2]`, or `S` for an empty iteration vector.
pub fn format_op(name: &str, iter: &[i64]) -> String {
    if iter.is_empty() {
        name.to_string()
    } else {
        let parts: Vec<String> = iter.iter().map(i64::to_string).collect();
        format!("{name}[{}]", parts.join(", "))
    }
}
