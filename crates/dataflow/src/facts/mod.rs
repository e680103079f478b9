//! The input relations of the dataflow rules, and the lowering that builds them
//! from a [`Program`] at concrete parameter values.
//!
//! This is the one place that says what every input relation means (the
//! rules in `rules/` and docs/rules.md refer to it). Notation is Datalog; ids
//! are dense `u32`s, and every relation is stored column-wise, indexed by its
//! first column, so that a rule looks it up in O(1).
//!
//! ```text
//! Op      operation: a statement instance or a condition-test instance that
//!         has at least one access. Ids follow the sequential execution order
//!         ≺ (the 2d+1 schedule at the concrete sizes), so u ≺ v ⇔ u < v.
//! Acc     access instance: one cell touched by one access of one operation.
//!         Ids follow execution order too; within an operation, every read
//!         instance comes before every write instance (reads happen first).
//!         So for accesses of one cell, x is earlier than y ⇔ x < y.
//! Cell    one element of one array (a scalar is a 0-dimensional array).
//! Lit     a guard literal: cond(I, B) — instance I of an unknown condition
//!         took value B; runs(J, K) — instance J of a `while` loop ran trip K.
//! NONE    u32::MAX: "no earlier write" (the initial value).
//!
//! op_site(O, Site), op_iter(O, Vec<i64>)  side tables naming operation O.
//! guard(O, L)       L ∈ G(O): the literals under which O executes.
//! closure(O, L)     G(O) forces L: L ∈ G(O), or L = runs(J, K) and
//!                   runs(J, K') ∈ G(O) with K' ≥ K.
//! cond_lit(O, I, B) cond(I, B) ∈ G(O) (the literals consistency looks at).
//! acc_op(X, O)      access instance X belongs to operation O.
//! read(X, S)        X reads its cell; S is its read slot: the pair
//!                   (operation, access index) it is reported under.
//! write(X)          X writes its cell.
//! must(X)           X is a write of exactly its cell (affine subscripts).
//! cover(X)          must(X), directly in the `then` body of an `if` on an
//!                   unknown condition whose `else` body writes the same
//!                   cell (`model::cover`): one of the two runs whenever
//!                   the `if` does. G(X)'s innermost literal is cond(I, true).
//! may(X)            X is a write of some cell of a range (a non-affine
//!                   subscript makes it a write of every cell there).
//! update(X)         X reads its cell and then writes it (compound `+=`).
//! prev_write(X, W)  W is the latest write instance of X's cell with W < X,
//!                   or W = NONE when there is none. Defined for readers.
//! hop(W, H)         for must(W): H is the latest write of W's cell before
//!                   the first position of Inner(W), the innermost guard
//!                   region of W (see `Scope`); NONE if there is none. All
//!                   writes of the cell between H and W lie in Inner(W).
//! link(W, P)        for may(W): P = prev_write(W, P).
//! ```
//!
//! `hop` and `link` share one column (`acc_link`): a write has exactly one
//! kind. The lowering is done by [`lower`]; how each kind of access becomes
//! access instances is in [`kinds`].

pub mod count;
pub mod kinds;
mod lower;

pub use lower::{
    lower, lower_cells, lower_framed, lower_share, lower_share_light, lower_split, lower_with,
    place_mispredicted, placed_loops, split_loops, Share, SplitAt,
};

use crate::model::{ArrayId, CondId, Program, Site, Span, StmtId};
use std::fmt;

/// "No access instance": the initial value, or the end of a write chain.
pub const NONE: u32 = u32::MAX;

/// Flags of an access instance.
pub mod role {
    pub const READ: u8 = 1;
    pub const WRITE: u8 = 2;
    pub const MUST: u8 = 4;
    /// A must-write that, with the `else` branch's write of its cell,
    /// covers the cell (`model::cover`).
    pub const COVER: u8 = 8;
}

/// A guard literal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lit {
    /// Instance `inst` of an unknown condition took value `value`.
    Cond { inst: u32, value: bool },
    /// Instance `inst` of a `while` loop with an unknown condition ran trip `trip`.
    Runs { inst: u32, trip: u32 },
}

/// A node of the guard tree. An operation's guard G(O) is the literals on the
/// path from its scope to the root. `start` is the first access-instance id
/// of the region Sc(lit) = { O : lit ∈ closure(O) }, which is an interval of the
/// execution order (docs/rules.md, lemma 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scope {
    pub parent: u32,
    pub lit: Lit,
    pub start: u32,
}

/// An unknown-condition instance or a `while`-loop instance: which condition,
/// and the iteration vector of its enclosing loops (`inst_iters[iter_start..]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instance {
    pub cond: CondId,
    pub iter_start: u32,
    pub iter_len: u32,
}

/// One read slot: the reads of access `access` of operation `op`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub op: u32,
    pub access: u32,
}

/// Concrete sizes and limits of one bounded analysis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Parameter values given; parameters not listed take their default.
    pub params: Vec<(String, i64)>,
    /// The most trips any `while` loop instance may run.
    pub max_trips: u32,
    /// The most access instances the analysis may create.
    pub max_instances: u64,
    /// The most bytes the process may hold while it runs (`crate::budget`).
    pub max_memory: u64,
}

/// The default `--max-instances`.
pub const DEFAULT_MAX_INSTANCES: u64 = 50_000_000;

impl Default for Config {
    fn default() -> Config {
        Config {
            params: Vec::new(),
            max_trips: 4,
            max_instances: DEFAULT_MAX_INSTANCES,
            max_memory: crate::budget::limit(),
        }
    }
}

/// Statements around a program that stand for every cell of an array but
/// are lowered only for the cells the program touches (`db::kernel::augment`,
/// `codegen`'s copy-out). Each statement accesses its array once, by one
/// loop counter per dimension; the walk skips it, and:
///
/// - an *entry* statement writes (must, no guard) each cell of its array
///   the program touches, just before the first access of that cell. Nothing
///   touches the cell before, so this is the same as writing it at the
///   start: no read's sources change. Its iteration vector is the cell's index.
/// - an *exit* statement reads each cell of its array the program writes,
///   after everything else, in statement order then index order.
///
/// Neither counts against the budget of access instances or loop
/// iterations; the walk-step budget grows by their number.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Frame {
    pub entry: Vec<(ArrayId, StmtId)>,
    pub exit: Vec<(ArrayId, StmtId)>,
}

/// Why a program could not be lowered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LowerError {
    /// Bad or missing parameter values (the message says which).
    Params(String),
    /// The budget of access instances was exceeded.
    Budget {
        /// What was counted: "access instances", "loop iterations", or
        /// "walk steps" (writes the rules visited). Each is bounded by
        /// `max_instances`.
        unit: &'static str,
        /// Label of the statement (or name of the condition) whose accesses went over.
        site: String,
        span: Span,
        /// The count the analysis had reached with that statement.
        count: u64,
        max: u64,
        /// The parameter values in force, for the message.
        params: Vec<(String, i64)>,
    },
    /// A bound, subscript or static condition cannot be evaluated.
    Eval { what: String, span: Span },
    /// The memory budget would be (or was) exceeded.
    Memory(crate::budget::Exceeded),
    /// The distributed engine's workers could not run (`dataflow::dd`: the
    /// other processes did not connect in time, a worker failed).
    Cluster(String),
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LowerError::Params(m) => f.write_str(m),
            LowerError::Budget {
                unit,
                site,
                count,
                max,
                params,
                ..
            } => {
                let sizes: Vec<String> = params.iter().map(|(n, v)| format!("{n}={v}")).collect();
                write!(
                    f,
                    "the analysis needs more than {max} {unit}: `{site}` brings the \
                     count to {count} (at {}); lower the parameters with `--param NAME=INT` or \
                     `--max-trips`, or raise the budget with `--max-instances`",
                    if sizes.is_empty() {
                        "no parameters".to_string()
                    } else {
                        sizes.join(", ")
                    }
                )
            }
            LowerError::Eval { what, .. } => f.write_str(what),
            LowerError::Memory(e) => e.fmt(f),
            LowerError::Cluster(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for LowerError {}

impl From<crate::budget::Exceeded> for LowerError {
    fn from(e: crate::budget::Exceeded) -> LowerError {
        LowerError::Memory(e)
    }
}

impl LowerError {
    /// Where in the source the error points, when it points somewhere.
    pub fn span(&self) -> Option<Span> {
        match self {
            LowerError::Params(_) | LowerError::Memory(_) | LowerError::Cluster(_) => None,
            LowerError::Budget { span, .. } | LowerError::Eval { span, .. } => Some(*span),
        }
    }
}

/// The lowered relations of one program at concrete sizes (see the module
/// documentation for their meaning).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// Parameter values used, by declaration order.
    pub params: Vec<(String, i64)>,
    pub max_trips: u32,
    pub n_stmts: u32,
    /// Name of every site, by site index (statement labels, then condition names).
    pub site_names: Vec<String>,

    // Operations.
    /// The site of each operation, as a site index (see [`Facts::site_index`]).
    pub op_site: Vec<u32>,
    /// `op_iter(O)` is `iters[op_iter_start[O]..op_iter_start[O + 1]]`.
    pub op_iter_start: Vec<u32>,
    pub iters: Vec<i64>,
    /// Innermost scope of the operation's guard, or NONE for an empty guard.
    pub op_scope: Vec<u32>,
    pub scopes: Vec<Scope>,
    /// Condition instances (`Lit::Cond::inst`) and while instances (`Lit::Runs::inst`).
    pub cond_insts: Vec<Instance>,
    pub while_insts: Vec<Instance>,
    pub inst_iters: Vec<i64>,

    // Access instances.
    pub acc_op: Vec<u32>,
    pub acc_role: Vec<u8>,
    /// prev_write for readers (NONE for a pure write).
    pub acc_prev: Vec<u32>,
    /// hop for must writes, link for may writes (NONE for a pure read).
    pub acc_link: Vec<u32>,
    /// The read slot of a reader (NONE for a pure write).
    pub acc_slot: Vec<u32>,
    /// The cell of every access instance (an index of `cells`); filled only
    /// by [`lower_cells`], empty otherwise.
    pub acc_cell: Vec<u32>,
    /// The cell table; kept only by [`lower_cells`].
    pub cells: kinds::CellTable,

    /// Read slots, in execution order of their operation then access index.
    pub slots: Vec<Slot>,
    /// Array read by access `a` of site `s`: `site_arrays[site_index(s)][a]`.
    pub site_arrays: Vec<Vec<crate::model::ArrayId>>,
    /// Access instances of the [`Frame`]'s statements (not in the budget).
    pub frame_instances: u64,
}

impl Facts {
    /// Reserves room, exactly, for `[access instances, operations,
    /// iteration entries, slots]` more (the cells too when `keep_cells`).
    pub fn reserve_tables(&mut self, [accs, ops, iters, slots]: [usize; 4], keep_cells: bool) {
        self.acc_op.reserve_exact(accs);
        self.acc_role.reserve_exact(accs);
        self.acc_prev.reserve_exact(accs);
        self.acc_link.reserve_exact(accs);
        self.acc_slot.reserve_exact(accs);
        if keep_cells {
            self.acc_cell.reserve_exact(accs);
        }
        self.op_site.reserve_exact(ops);
        self.op_iter_start.reserve_exact(ops);
        self.op_scope.reserve_exact(ops);
        self.iters.reserve_exact(iters);
        self.slots.reserve_exact(slots);
    }

    pub fn n_ops(&self) -> usize {
        self.op_site.len()
    }

    pub fn n_accs(&self) -> usize {
        self.acc_op.len()
    }

    pub fn site(&self, op: u32) -> Site {
        self.site_of_index(self.op_site[op as usize] as usize)
    }

    pub fn op_iter(&self, op: u32) -> &[i64] {
        let o = op as usize;
        &self.iters[self.op_iter_start[o] as usize..self.op_iter_start[o + 1] as usize]
    }

    /// Dense index of a site: statements first, then conditions (the order of
    /// `Site`'s `Ord`).
    pub fn site_index(&self, site: Site) -> usize {
        match site {
            Site::Stmt(s) => s.index(),
            Site::Cond(c) => self.n_stmts as usize + c.index(),
        }
    }

    pub fn site_of_index(&self, k: usize) -> Site {
        if k < self.n_stmts as usize {
            Site::Stmt(StmtId(k as u32))
        } else {
            Site::Cond(CondId((k - self.n_stmts as usize) as u32))
        }
    }

    pub fn op(&self, x: u32) -> u32 {
        self.acc_op[x as usize]
    }

    pub fn prev(&self, x: u32) -> u32 {
        self.acc_prev[x as usize]
    }

    pub fn link(&self, w: u32) -> u32 {
        self.acc_link[w as usize]
    }

    fn has(&self, x: u32, flags: u8) -> bool {
        self.acc_role
            .get(x as usize)
            .is_some_and(|r| r & flags == flags)
    }

    pub fn is_read(&self, x: u32) -> bool {
        self.has(x, role::READ)
    }

    pub fn is_write(&self, x: u32) -> bool {
        self.has(x, role::WRITE)
    }

    pub fn is_must(&self, x: u32) -> bool {
        self.has(x, role::WRITE | role::MUST)
    }

    /// cover(X): a must-write in the `then` body of an `if` whose `else`
    /// body writes the same cell (`model::cover`). Its innermost guard
    /// literal is that `if`'s cond(I, true).
    pub fn is_cover(&self, x: u32) -> bool {
        self.has(x, role::WRITE | role::MUST | role::COVER)
    }

    /// For cover(W): the literal of the `if`'s other branch, cond(I,
    /// false), and its own, cond(I, true).
    pub fn cover_lits(&self, w: u32) -> Option<(Lit, Lit)> {
        cover_lits_of(self.guard(self.op(w)))
    }

    /// Whether `l` is cover(W)'s own literal, cond(I, true), which a
    /// reader after the `if` counts as forced (rules/must.rs).
    pub fn is_cover_lit(&self, w: u32, l: &Lit) -> bool {
        self.is_cover(w) && self.cover_lits(w).is_some_and(|(_, own)| own == *l)
    }

    pub fn is_may(&self, x: u32) -> bool {
        self.is_write(x) && !self.has(x, role::MUST)
    }

    pub fn is_update(&self, x: u32) -> bool {
        self.has(x, role::READ | role::WRITE)
    }

    /// guard(O, L): the literals of G(O), innermost first.
    pub fn guard(&self, op: u32) -> Guard<'_> {
        Guard::based(self, self.op_scope[op as usize], 0)
    }

    /// closure(O, L): every literal G(O) forces.
    pub fn closure(&self, op: u32) -> impl Iterator<Item = Lit> + '_ {
        closure_of(self.guard(op))
    }

    /// cond_lit(O, I, B).
    pub fn cond_lits(&self, op: u32) -> impl Iterator<Item = (u32, bool)> + '_ {
        cond_lits_of(self.guard(op))
    }

    pub fn inst_iter(&self, inst: &Instance) -> &[i64] {
        let s = inst.iter_start as usize;
        &self.inst_iters[s..s + inst.iter_len as usize]
    }

    /// The name of a literal for messages and tests, e.g. `cond(_C1[2]) = true`.
    pub fn describe_lit(&self, program: &Program, lit: Lit) -> String {
        let conds = program.conditions();
        let name = |inst: &Instance| {
            let iter: Vec<String> = self.inst_iter(inst).iter().map(i64::to_string).collect();
            format!("{}[{}]", conds[inst.cond.index()].name, iter.join(", "))
        };
        match lit {
            Lit::Cond { inst, value } => {
                format!("cond({}) = {value}", name(&self.cond_insts[inst as usize]))
            }
            Lit::Runs { inst, trip } => {
                format!("runs({}, {trip})", name(&self.while_insts[inst as usize]))
            }
        }
    }
}

/// The literals a guard forces (`Facts::closure`).
fn closure_of(guard: Guard<'_>) -> impl Iterator<Item = Lit> + '_ {
    guard.flat_map(|l| {
        let n = match l {
            Lit::Cond { .. } => 1,
            Lit::Runs { trip, .. } => trip + 1,
        };
        (0..n).map(move |t| match l {
            Lit::Runs { inst, .. } => Lit::Runs { inst, trip: t },
            cond => cond,
        })
    })
}

/// The condition literals of a guard (`Facts::cond_lits`).
/// A cover's literals (`Facts::cover_lits`) from its guard: the other
/// branch's and its own, when the innermost literal is a condition's true.
fn cover_lits_of(mut guard: Guard<'_>) -> Option<(Lit, Lit)> {
    match guard.next()? {
        l @ Lit::Cond { inst, value: true } => Some((Lit::Cond { inst, value: false }, l)),
        _ => None,
    }
}

fn cond_lits_of(guard: Guard<'_>) -> impl Iterator<Item = (u32, bool)> + '_ {
    guard.filter_map(|l| match l {
        Lit::Cond { inst, value } => Some((inst, value)),
        Lit::Runs { .. } => None,
    })
}

/// Iterator over the literals of a guard, innermost first.
pub struct Guard<'a> {
    facts: &'a Facts,
    scope: u32,
    /// The id of `facts.scopes[0]` (not 0 in a process's share).
    base: u32,
}

impl<'a> Guard<'a> {
    fn based(facts: &'a Facts, scope: u32, base: u32) -> Guard<'a> {
        Guard { facts, scope, base }
    }
}

impl Iterator for Guard<'_> {
    type Item = Lit;
    fn next(&mut self) -> Option<Lit> {
        let s = (self.facts.scopes).get(self.scope.wrapping_sub(self.base) as usize)?;
        self.scope = s.parent;
        Some(s.lit)
    }
}
