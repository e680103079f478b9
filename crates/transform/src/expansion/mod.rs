//! Maximal static expansion at concrete sizes (the paper's sections 3 to 5): R, R* as classes, live and dead writes, representatives φ,
//! labels ν; the single-assignment baseline; which loops carry a dependence
//! before and after. Built on σ from [`crate::dataflow`]. docs/expansion.md
//! has the definitions, conventions and results.

pub mod classes;
pub mod parallel;
#[cfg(feature = "plot")]
pub mod plot;
pub mod render;
pub mod sa;

pub use classes::Classes;

use crate::dataflow::{self, Config, DataflowError, Instances};
use crate::model::{ArrayId, Operation, Program, Site};
use std::fmt;

/// Why an expansion could not be computed.
#[derive(Debug)]
pub enum ExpansionError {
    /// σ could not be computed (sizes, budget, evaluation).
    Dataflow(DataflowError),
    /// The sources of one read fell into two classes: a bug, reported
    /// instead of a panic.
    SplitRead { slot: u32 },
    /// σ named an operation that writes nothing: a bug.
    NotAWrite,
    /// More writes and initial values than 32-bit ids can number.
    TooLarge(usize),
}

impl fmt::Display for ExpansionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExpansionError::Dataflow(e) => e.fmt(f),
            ExpansionError::SplitRead { slot } => write!(
                f,
                "internal error: the sources of read slot {slot} are in two classes"
            ),
            ExpansionError::NotAWrite => {
                f.write_str("internal error: a source of a read writes nothing")
            }
            ExpansionError::TooLarge(n) => {
                write!(f, "{n} writes and initial values: too many to number")
            }
        }
    }
}

impl std::error::Error for ExpansionError {}

impl From<DataflowError> for ExpansionError {
    fn from(e: DataflowError) -> Self {
        ExpansionError::Dataflow(e)
    }
}

/// The maximal static expansion of one program at concrete sizes.
#[derive(Debug)]
pub struct Expansion {
    pub inst: Instances,
    pub classes: Classes,
    pub arrays: Vec<ArraySummary>,
    /// The memory budget it was computed under, which the reports made
    /// from it (`parallel::report`) keep to.
    pub max_memory: u64,
}

/// What expansion does to one array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArraySummary {
    pub array: ArrayId,
    pub name: String,
    /// Declared cells at these sizes.
    pub cells_before: u64,
    /// Distinct cells some write (live or dead) may write.
    pub cells_written: u64,
    /// Σ over its cells of |W(c)/R*| (live writes only).
    pub classes: u64,
    pub dead_writes: u64,
    pub max_classes_per_cell: u32,
    /// For every written cell, sorted: (index, |W(c)/R*|).
    pub classes_per_cell: Vec<(Vec<i64>, u32)>,
}

/// Computes σ, then the classes and labels.
pub fn expand(program: &Program, config: &Config) -> Result<Expansion, ExpansionError> {
    expand_framed(
        program,
        config,
        &crate::kinds::Kinds::core(),
        &crate::facts::Frame::default(),
    )
}

/// [`expand`] with the access kinds of `kinds`.
pub fn expand_with(
    program: &Program,
    config: &Config,
    kinds: &crate::kinds::Kinds,
) -> Result<Expansion, ExpansionError> {
    expand_framed(program, config, kinds, &crate::facts::Frame::default())
}

/// [`expand_with`] with a [`crate::facts::Frame`]: its statements lowered
/// only for the cells the rest of the program touches.
pub fn expand_framed(
    program: &Program,
    config: &Config,
    kinds: &crate::kinds::Kinds,
    frame: &crate::facts::Frame,
) -> Result<Expansion, ExpansionError> {
    let inst = dataflow::analyze_instances_framed(program, config, kinds, frame)?;
    let polled = |what: &str| {
        let what = || format!("the {what} of {} access instances", inst.facts.n_accs());
        crate::budget::check(config.max_memory, what)
            .map_err(|e| ExpansionError::Dataflow(DataflowError::Memory(e)))
    };
    polled("σ")?;
    let classes = classes::compute(&inst)?;
    polled("classes")?;
    let arrays = summaries(program, &inst, &classes);
    Ok(Expansion {
        inst,
        classes,
        arrays,
        max_memory: config.max_memory,
    })
}

/// The array every statement writes, by statement index.
pub(crate) fn stmt_arrays(program: &Program) -> Vec<Option<ArrayId>> {
    program
        .stmts()
        .iter()
        .map(|s| s.write().map(|(a, _)| a.array))
        .collect()
}

fn summaries(program: &Program, inst: &Instances, c: &Classes) -> Vec<ArraySummary> {
    let facts = &inst.facts;
    let mut out: Vec<ArraySummary> = program
        .arrays
        .iter()
        .enumerate()
        .map(|(a, decl)| {
            let id = ArrayId(a as u32);
            let cells_before = (0..decl.dims.len())
                .map(|d| facts.cells.range(id, d).1.max(0) as u64)
                .product();
            ArraySummary {
                array: id,
                name: decl.name.clone(),
                cells_before,
                cells_written: 0,
                classes: 0,
                dead_writes: 0,
                max_classes_per_cell: 0,
                classes_per_cell: Vec::new(),
            }
        })
        .collect();
    for &(cell, n) in &c.cell_classes {
        if let Some((a, index)) = facts.cells.locate(cell as usize) {
            let s = &mut out[a.index()];
            s.cells_written += 1;
            s.classes += u64::from(n);
            s.max_classes_per_cell = s.max_classes_per_cell.max(n);
            s.classes_per_cell.push((index, n));
        }
    }
    let arrays = stmt_arrays(program);
    for (w, &op) in c.write_ops.iter().enumerate() {
        if !c.live[w] {
            if let Site::Stmt(s) = facts.site(op) {
                if let Some(Some(a)) = arrays.get(s.index()) {
                    out[a.index()].dead_writes += 1;
                }
            }
        }
    }
    for s in &mut out {
        s.classes_per_cell.sort();
    }
    out
}

impl Expansion {
    /// The operation of a facts op id.
    pub fn operation(&self, op: u32) -> Operation {
        Operation {
            site: self.inst.facts.site(op),
            iter: self.inst.facts.op_iter(op).to_vec(),
        }
    }

    /// The (array, index) of a cell id.
    pub fn cell(&self, cell: u32) -> Option<(ArrayId, Vec<i64>)> {
        self.inst.facts.cells.locate(cell as usize)
    }

    /// The write id of an operation, if it writes (a linear search: for
    /// tests and lookups, not loops).
    pub fn write_of(&self, op: &Operation) -> Option<usize> {
        let facts = &self.inst.facts;
        self.classes
            .write_ops
            .iter()
            .position(|&o| facts.site(o) == op.site && facts.op_iter(o) == op.iter.as_slice())
    }

    /// Every write: its operation, label (None when dead) and whether it is
    /// live, in execution order.
    pub fn writes(&self) -> impl Iterator<Item = (Operation, Option<u32>, bool)> + '_ {
        let c = &self.classes;
        c.write_ops
            .iter()
            .enumerate()
            .map(move |(w, &op)| (self.operation(op), c.write_label(w), c.live[w]))
    }

    /// Every read: its operation, access index and label.
    pub fn reads(&self) -> impl Iterator<Item = (Operation, usize, Option<u32>)> + '_ {
        self.inst.flow.iter().map(move |r| {
            (
                r.operation(),
                r.access(),
                self.classes.read_label(r.index()),
            )
        })
    }

    /// Label of the write operation `op` (None: dead or not a write).
    pub fn write_label(&self, op: &Operation) -> Option<u32> {
        self.write_of(op).and_then(|w| self.classes.write_label(w))
    }

    /// Label of read access `access` of `op` (None: reads only initial
    /// contents no live write shares, or no such read).
    pub fn read_label(&self, op: &Operation, access: usize) -> Option<u32> {
        let r = self.inst.flow.get(op, access)?;
        self.classes.read_label(r.index())
    }

    /// Whether the write operation `op` is dead.
    pub fn is_dead(&self, op: &Operation) -> Option<bool> {
        self.write_of(op).map(|w| !self.classes.live[w])
    }
}
