//! Lowering a program at concrete sizes into the input relations.
//!
//! One walk over the program in execution order emits operations, guard
//! scopes and access instances, so ids come out in execution order. A table
//! of the latest write per cell gives `prev_write` directly, and `hop` by
//! following `hop`/`link` back from the latest write while it lies inside the
//! new write's innermost guard region: each write is stepped over at most once
//! for every write that hides it, so the walk is amortised linear.

use super::kinds::{kind_of, AccessLowering, CellTable, Point, Sink, CORE};
use super::{role, Config, Facts, Frame, Instance, Lit, LowerError, Scope, Slot, NONE};
use crate::model::eval::{self, StaticEnv};
mod place;
mod share;
mod split;

pub use place::{place_mispredicted, placed_loops};
pub use share::{lower_share, lower_share_light, Share};
pub use split::split_loops;

use crate::model::{
    Access, AccessKind, ArrayId, Condition, For, If, Node, Program, Site, Span, Stmt, StmtId, While,
};

/// An access of a statement or condition with the kind that lowers it.
struct Plan<'p> {
    access: &'p Access,
    kind: AccessKind,
    lowering: &'static dyn AccessLowering,
    /// Access instances per operation (`AccessLowering::count`: fixed once
    /// the arrays are laid out), set before the walk.
    count: u64,
}

struct Lowerer<'p, 'a> {
    program: &'p Program,
    config: &'p Config,
    params: Vec<i64>,
    counters: Vec<i64>,
    iter: Vec<i64>,
    scope: u32,
    /// The plans of each statement and condition (shared, not owned: the
    /// walk hands them to `op` while it mutates the rest).
    stmt_plans: &'a [Vec<Plan<'p>>],
    cond_plans: &'a [Vec<Plan<'p>>],
    /// By statement: whether its must-writes cover their cell
    /// (`model::cover`, role `COVER`).
    covers: &'a [bool],
    reads: Vec<usize>,
    /// The read slot (counted from the operation's first) and array of each
    /// of `reads`.
    read_tags: Vec<(u32, ArrayId)>,
    writes: Vec<(usize, u8)>,
    scratch: Vec<i64>,
    frame: FrameState,
    cells: CellTable,
    count: u64,
    keep_cells: bool,
    /// Loop iterations entered, bounded like access instances so that a loop
    /// whose body makes no instances cannot spin for ever.
    iterations: u64,
    /// Per loop (by counter) and per `if` (by its first condition): whether
    /// its subtree makes access instances; per condition: whether it is
    /// static. Fixed by the program: computed once, not at every instance.
    loop_touches: Vec<bool>,
    if_touches: Vec<bool>,
    cond_static: Vec<bool>,
    /// Per condition, its affine form when it has one (tested without the
    /// expression tree).
    cond_affine: Vec<Option<eval::AffineCmp>>,
    /// Whether a top-level `for` loop may be lowered in parallel chunks
    /// (`place`), and stitched ones (`split`, which needs room for a copy):
    /// decided once, from the count, the layout and the memory budget.
    split: bool,
    stitch: bool,
    /// How loops are split ([`SplitAt`]).
    split_at: SplitAt,
    /// In a chunk of a split loop: the access instances whose `prev` or
    /// `link` reaches the chunk's start (`split::OpenEnd`), and by array
    /// whether anything writes it (reads of the others stay NONE).
    open: Option<(Vec<split::OpenEnd>, Vec<bool>)>,
    /// The ids of the first entries `facts` holds (all 0 but in a
    /// process's share, `share`, which drops what it does not keep).
    base: share::Base,
    /// In a process's share: which stretch of the program it keeps.
    window: Option<share::Window>,
    facts: Facts,
}

/// What the lowering needs of a [`Frame`].
#[derive(Default)]
struct FrameState {
    on: bool,
    /// By statement: the frame's statements, which the walk skips.
    skip: Vec<bool>,
    /// By array: its entry statement.
    entry: Vec<Option<StmtId>>,
    /// By array: whether it has an entry or exit statement.
    framed: Vec<bool>,
    exit: Vec<(ArrayId, StmtId)>,
    /// Cells of framed arrays, at their first access.
    touched: Vec<usize>,
    /// One bit per cell: in `touched`.
    seen: Vec<u64>,
}

impl FrameState {
    fn new(program: &Program, frame: &Frame) -> FrameState {
        let n = program.arrays.len();
        let mut f = FrameState {
            on: !frame.entry.is_empty() || !frame.exit.is_empty(),
            skip: vec![false; program.stmts().len()],
            entry: vec![None; n],
            framed: vec![false; n],
            exit: frame.exit.clone(),
            touched: Vec::new(),
            seen: Vec::new(),
        };
        for &(a, s) in &frame.entry {
            f.entry[a.index()] = Some(s);
        }
        for &(a, s) in frame.entry.iter().chain(&frame.exit) {
            f.framed[a.index()] = true;
            f.skip[s.index()] = true;
        }
        f
    }
}

/// Lowers `program` at the sizes of `config` into [`Facts`] with the core
/// kinds.
pub fn lower(program: &Program, config: &Config) -> Result<Facts, LowerError> {
    lower_framed(program, config, &CORE, false, &Frame::default())
}

/// [`lower`], also recording the cell of every access instance
/// (`Facts::acc_cell`) and keeping the cell table (`Facts::cells`): for
/// layers that need to know what each write writes (expansion).
pub fn lower_cells(program: &Program, config: &Config) -> Result<Facts, LowerError> {
    lower_framed(program, config, &CORE, true, &Frame::default())
}

/// [`lower`] or (`keep_cells`) [`lower_cells`] with the access kinds
/// `kinds`, asked in order (`crate::kinds::Kinds::all`).
pub fn lower_with(
    program: &Program,
    config: &Config,
    kinds: &[&'static dyn AccessLowering],
    keep_cells: bool,
) -> Result<Facts, LowerError> {
    lower_framed(program, config, kinds, keep_cells, &Frame::default())
}

/// [`lower_with`] with the statements of `frame` lowered only for the cells
/// the rest touches (see [`Frame`]).
pub fn lower_framed(
    program: &Program,
    config: &Config,
    kinds: &[&'static dyn AccessLowering],
    keep_cells: bool,
    frame: &Frame,
) -> Result<Facts, LowerError> {
    lower_split(
        program,
        config,
        kinds,
        keep_cells,
        frame,
        SplitAt::default(),
    )
}

/// When [`lower_split`] splits a loop across threads, and how often a chunk
/// written in place (`place`) flushes its scratch tables.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct SplitAt {
    /// Programs making fewer access instances are lowered sequentially
    /// (tests force small programs through the split with 0).
    pub instances: u64,
    /// A chunk flushes at the end of a trip once it holds this many access
    /// instances (tests flush every trip with 0).
    pub flush: usize,
    /// A loop is written in place from this many trips per thread (its
    /// first trip may run alone; tests take every loop with 0).
    pub place_trips: u128,
}

impl Default for SplitAt {
    fn default() -> SplitAt {
        SplitAt {
            instances: split::MIN_INSTANCES,
            flush: place::FLUSH,
            place_trips: place::MIN_TRIPS_PER_THREAD,
        }
    }
}

/// [`lower_framed`], splitting a top-level loop across the threads of the
/// current rayon pool as `at` says. The facts are the same at every thread
/// count and every `at`.
#[doc(hidden)]
pub fn lower_split(
    program: &Program,
    config: &Config,
    kinds: &[&'static dyn AccessLowering],
    keep_cells: bool,
    frame: &Frame,
    at: SplitAt,
) -> Result<Facts, LowerError> {
    let mode = Mode::Split(at);
    walk(program, config, kinds, keep_cells, frame, mode).map(|w| w.facts)
}

/// How [`walk`] lowers: everything, splitting top-level loops across threads
/// as [`SplitAt`] says; or one process's share (`share`).
enum Mode {
    Split(SplitAt),
    Share {
        part: usize,
        parts: usize,
        /// Process 0 keeps only its own stretch's operations.
        light: bool,
    },
}

/// What [`walk`] ends with.
struct Walked {
    facts: Facts,
    /// The ids of the first entries of `facts` (0 but in a share).
    base: share::Base,
    /// In a share: the stretch kept and what the walk saw of the rest;
    /// `None` when the program is lowered whole (one part, no count).
    window: Option<share::Window>,
}

/// The walk of `program` in execution order into [`Facts`].
fn walk<'p>(
    program: &'p Program,
    config: &Config,
    kinds: &[&'static dyn AccessLowering],
    keep_cells: bool,
    frame: &Frame,
    mode: Mode,
) -> Result<Walked, LowerError> {
    let params = program
        .param_values(&config.params)
        .map_err(LowerError::Params)?;
    let dims = super::count::dims(program, &params)?;
    let plans = |accs: Vec<crate::model::AccessRef<'p>>| -> Result<Vec<Plan<'p>>, LowerError> {
        accs.into_iter()
            .map(|a| {
                Ok(Plan {
                    access: a.access,
                    kind: a.kind,
                    lowering: kind_of(kinds, a.access, a.kind)?,
                    count: 0,
                })
            })
            .collect()
    };
    let mut stmt_plans: Vec<Vec<Plan<'_>>> = program
        .stmts()
        .iter()
        .map(|s| plans(s.accesses()))
        .collect::<Result<_, _>>()?;
    let mut cond_plans: Vec<Vec<Plan<'_>>> = program
        .conditions()
        .iter()
        .map(|c| {
            let mut out = Vec::new();
            c.cond.collect_reads(&mut out);
            plans(out)
        })
        .collect::<Result<_, _>>()?;
    let site_arrays = program
        .stmts()
        .iter()
        .map(|s| s.reads().iter().map(|a| a.array).collect())
        .chain(
            program
                .conditions()
                .iter()
                .map(|c| c.reads().iter().map(|a| a.array).collect()),
        )
        .collect();
    let facts = Facts {
        params: program
            .params
            .iter()
            .zip(&params)
            .map(|(p, &v)| (p.name.clone(), v))
            .collect(),
        max_trips: config.max_trips,
        n_stmts: program.stmts().len() as u32,
        site_names: program
            .stmts()
            .iter()
            .map(|s| s.label.clone())
            .chain(program.conditions().iter().map(|c| c.name.clone()))
            .collect(),
        op_iter_start: vec![0],
        site_arrays,
        ..Facts::default()
    };
    // Counted first: over budget fails here, before anything is allocated.
    // The frame's statements are lowered only for the cells touched and do
    // not count against the budget: the count skips them.
    let framed = FrameState::new(program, frame);
    let skip: &[bool] = if framed.on { &framed.skip } else { &[] };
    let counted = super::count::count(program, config, &params, &dims, &facts.params, skip)?;
    let mut facts = facts;
    let cells = CellTable::new(
        &dims,
        super::kinds::dense_limit(counted.as_ref().map(|c| c.instances)),
    );
    let window = match mode {
        Mode::Share { part, parts, light } => {
            // A frame's cells, and the most dimensions of an array.
            let dims_most = dims.iter().map(Vec::len).max().unwrap_or(0) as u64;
            let framed = framed.on.then_some((cells.tops.len() as u64, dims_most));
            share::Window::new(part, parts, light, counted.as_ref(), framed, &mut facts)
        }
        Mode::Split(_) => None,
    };
    if let (Some(c), None) = (&counted, &window) {
        c.admit(config, keep_cells)?;
        c.reserve(&mut facts, keep_cells);
    }
    let split = !framed.on
        && cells.all_dense()
        && counted.as_ref().is_some_and(|c| match mode {
            Mode::Split(at) => c.instances >= at.instances,
            Mode::Share { .. } => false,
        })
        && rayon::current_num_threads() > 1;
    // Stitched chunks (`split`) hold a second copy of the loop's facts
    // until the stitch: taken only when it fits the memory budget beside the
    // tables reserved above. Chunks written in place (`place`) hold none.
    let stitch = split
        && counted.as_ref().is_some_and(|c| {
            crate::budget::reserve(c.bytes(keep_cells), config.max_memory, String::new).is_ok()
        });
    for p in stmt_plans.iter_mut().chain(&mut cond_plans).flatten() {
        p.count = p.lowering.count(p.access, &cells);
    }
    let covers = crate::model::cover::covers(program);
    let mut l = Lowerer {
        program,
        config,
        counters: vec![0; program.counters.len()],
        params,
        iter: Vec::new(),
        scope: NONE,
        stmt_plans: &stmt_plans,
        cond_plans: &cond_plans,
        covers: &covers,
        reads: Vec::new(),
        read_tags: Vec::new(),
        writes: Vec::new(),
        scratch: Vec::new(),
        frame: framed,
        cells,
        count: 0,
        keep_cells,
        iterations: 0,
        loop_touches: vec![false; program.counters.len()],
        if_touches: vec![false; program.conditions().len()],
        cond_static: program
            .conditions()
            .iter()
            .map(|c| c.cond.is_static())
            .collect(),
        cond_affine: program
            .conditions()
            .iter()
            .map(|c| eval::AffineCmp::of(&c.cond))
            .collect(),
        split,
        stitch,
        split_at: match mode {
            Mode::Split(at) => at,
            Mode::Share { .. } => SplitAt::default(),
        },
        open: None,
        base: share::Base::default(),
        window,
        facts,
    };
    l.shape(&program.body);
    l.block(&program.body)?;
    l.boundary();
    if !l.window.as_ref().is_some_and(share::Window::stopped) {
        l.exits()?;
    }
    let window = l.window.take().map(|w| w.finish(&mut l.facts, &mut l.base));
    let mut f = l.facts;
    if keep_cells {
        f.cells = l.cells;
    }
    // Growth headroom would otherwise stay allocated while the rules run. A
    // share's tables were reserved near their size: trimmed only when much
    // is left, as the copy would raise its peak more than it saves.
    let all = window.is_none();
    trim(&mut f.op_site, all);
    trim(&mut f.op_iter_start, all);
    trim(&mut f.iters, all);
    trim(&mut f.op_scope, all);
    trim(&mut f.acc_op, all);
    trim(&mut f.acc_role, all);
    trim(&mut f.acc_prev, all);
    trim(&mut f.acc_link, all);
    trim(&mut f.acc_slot, all);
    trim(&mut f.slots, all);
    trim(&mut f.acc_cell, all);
    Ok(Walked {
        facts: f,
        base: l.base,
        window,
    })
}

/// Frees `v`'s spare room (`always`, or when it is over an eighth of it).
fn trim<T>(v: &mut Vec<T>, always: bool) {
    if always || v.capacity() - v.len() > v.len() / 8 {
        v.shrink_to_fit();
    }
}

impl<'p, 'a> Lowerer<'p, 'a> {
    /// Whether anything in `nodes` accesses memory (subtrees that do not are
    /// skipped, whatever their loops' ranges), recording it for every loop
    /// and `if` under `nodes` in `loop_touches` and `if_touches`: one
    /// bottom-up pass before the walk.
    fn shape(&mut self, nodes: &[Node]) -> bool {
        let mut any = false;
        for n in nodes {
            any |= match n {
                Node::Stmt(s) => {
                    !self.stmt_plans[s.id.index()].is_empty()
                        && !self.frame.skip.get(s.id.index()).copied().unwrap_or(false)
                }
                Node::For(f) => {
                    let t = self.shape(&f.body);
                    self.loop_touches[f.counter.index()] = t;
                    t
                }
                Node::While(w) => {
                    let t = self.shape(&w.body) || !self.cond_plans[w.cond.id.index()].is_empty();
                    self.loop_touches[w.counter.index()] = t;
                    t
                }
                Node::If(i) => {
                    let mut t = false;
                    for (c, b) in &i.branches {
                        t |= self.shape(b) | !self.cond_plans[c.id.index()].is_empty();
                    }
                    if let Some(b) = &i.otherwise {
                        t |= self.shape(b);
                    }
                    if let Some((c, _)) = i.branches.first() {
                        self.if_touches[c.id.index()] = t;
                    }
                    t
                }
            };
        }
        any
    }

    /// The error for a budget `max` of `unit` that `name` took to `count`.
    fn over(&self, unit: &'static str, name: &str, span: Span, count: u64, max: u64) -> LowerError {
        LowerError::Budget {
            unit,
            site: name.to_string(),
            span,
            count,
            max,
            params: self.facts.params.clone(),
        }
    }

    /// Counts one loop iteration against the budget.
    fn iteration(&mut self, name: &str, span: Span) -> Result<(), LowerError> {
        self.iterations += 1;
        let max = self.config.max_instances;
        if self.iterations > max {
            return Err(self.over("loop iterations", name, span, self.iterations, max));
        }
        Ok(())
    }

    fn block(&mut self, nodes: &'p [Node]) -> Result<(), LowerError> {
        let top = self.window.is_some() && self.iter.is_empty() && self.scope == NONE;
        for n in nodes {
            if top && self.boundary() {
                return Ok(());
            }
            match n {
                Node::Stmt(s) => self.stmt(s)?,
                Node::For(f) => self.for_loop(f)?,
                Node::While(w) => self.while_loop(w)?,
                Node::If(i) => self.if_node(i)?,
            }
        }
        Ok(())
    }

    fn point(&self) -> Point<'_> {
        Point {
            params: &self.params,
            counters: &self.counters,
        }
    }

    fn for_loop(&mut self, f: &'p For) -> Result<(), LowerError> {
        if !self.loop_touches[f.counter.index()] {
            return Ok(());
        }
        let lo = self.point().affine(&f.lower.affine, f.lower.expr.span)?;
        let hi = self.point().affine(&f.upper.affine, f.upper.expr.span)?;
        if self.split
            && self.iter.is_empty()
            && self.scope == NONE
            && self.worth_splitting(f, lo, hi)
            && (place::for_loop(self, f, lo, hi)?
                || (self.stitch && split::for_loop(self, f, lo, hi)?))
        {
            return Ok(());
        }
        self.trips(f, lo, hi)
    }

    /// Whether a top-level loop is large enough for the parallel paths:
    /// their setup copies tables of every site of the program (a walker per
    /// chunk), so a loop making fewer operations (trips × its sites, a
    /// rough measure) than the program has sites is walked sequentially.
    /// Without this, a program of 100,000 small loops spent minutes setting
    /// up chunks. Tests forcing every loop through the paths (no instance
    /// threshold) skip the check.
    fn worth_splitting(&self, f: &For, lo: i64, hi: i64) -> bool {
        if self.split_at.instances == 0 {
            return true;
        }
        fn sites(nodes: &[Node]) -> u64 {
            (nodes.iter())
                .map(|n| match n {
                    Node::Stmt(_) => 1,
                    Node::For(f) => sites(&f.body),
                    Node::While(w) => 1 + sites(&w.body),
                    Node::If(i) => {
                        let branches = i.branches.iter().map(|(_, b)| 1 + sites(b)).sum::<u64>();
                        branches + i.otherwise.as_deref().map_or(0, sites)
                    }
                })
                .sum()
        }
        let trips = split::Trips::of(f, lo, hi).map_or(0, |t| t.n);
        let made = trips.saturating_mul(u128::from(sites(&f.body)));
        made >= self.facts.site_names.len() as u128
    }

    /// The iterations `lo, lo + step, ..` up to `hi` of loop `f`.
    fn trips(&mut self, f: &'p For, lo: i64, hi: i64) -> Result<(), LowerError> {
        let program = self.program;
        let name = &program.counter_decl(f.counter).name;
        let c = f.counter.index();
        let top = self.window.is_some() && self.iter.is_empty() && self.scope == NONE;
        self.iter.push(lo);
        let mut v = lo;
        while v <= hi {
            if top && self.boundary() {
                break;
            }
            self.iteration(name, f.span)?;
            arrayflow_model::cancel::poll();
            self.counters[c] = v;
            if let Some(last) = self.iter.last_mut() {
                *last = v;
            }
            self.block(&f.body)?;
            match v.checked_add(f.step) {
                Some(next) => v = next,
                None => break,
            }
        }
        self.iter.pop();
        Ok(())
    }

    fn static_cond(&self, c: &Condition) -> Result<bool, LowerError> {
        let mut env = StaticEnv {
            params: &self.params,
            counters: &self.counters,
        };
        if let Some(a) = &self.cond_affine[c.id.index()] {
            return Ok(a.holds(&env));
        }
        eval::cond(&c.cond, &mut env).map_err(|e| LowerError::Eval {
            what: format!(
                "condition `{}` cannot be evaluated at these sizes: {}",
                c.name,
                match e {
                    eval::EvalError::DivisionByZero(_) => "division by zero".to_string(),
                    eval::EvalError::NotStatic(_) => "it is not static".to_string(),
                    eval::EvalError::Env(m, _) => m,
                }
            ),
            span: c.span,
        })
    }

    fn push_scope(&mut self, lit: Lit) {
        self.facts.scopes.push(Scope {
            parent: self.scope,
            lit,
            start: self.next_acc() as u32,
        });
        self.scope = self.base.scope + self.facts.scopes.len() as u32 - 1;
    }

    fn instance(&mut self, c: &Condition) -> Instance {
        let inst = Instance {
            cond: c.id,
            iter_start: self.base.inst_iters + self.facts.inst_iters.len() as u32,
            iter_len: self.iter.len() as u32,
        };
        self.facts.inst_iters.extend_from_slice(&self.iter);
        inst
    }

    fn while_loop(&mut self, w: &'p While) -> Result<(), LowerError> {
        if !self.loop_touches[w.counter.index()] {
            return Ok(());
        }
        let c = w.counter.index();
        let unknown = !self.cond_static[w.cond.id.index()];
        let inst = if unknown {
            let i = self.instance(&w.cond);
            self.facts.while_insts.push(i);
            self.base.whiles + self.facts.while_insts.len() as u32 - 1
        } else {
            NONE
        };
        let saved = self.scope;
        self.iter.push(0);
        for trip in 0..self.config.max_trips {
            self.iteration(&w.cond.name, w.span)?;
            let k = i64::from(trip);
            self.counters[c] = k;
            if let Some(last) = self.iter.last_mut() {
                *last = k;
            }
            // Test k runs when trips 0..k-1 ran: its guard still holds runs(k-1).
            self.test(&w.cond)?;
            if unknown {
                self.scope = saved;
                self.push_scope(Lit::Runs { inst, trip });
            } else if !self.static_cond(&w.cond)? {
                break;
            }
            self.block(&w.body)?;
        }
        self.scope = saved;
        self.iter.pop();
        Ok(())
    }

    fn if_node(&mut self, i: &'p If) -> Result<(), LowerError> {
        let any = match i.branches.first() {
            Some((c, _)) => self.if_touches[c.id.index()],
            // No branch to key it by (the front ends never make one): walk it.
            None => true,
        };
        if !any {
            return Ok(());
        }
        let saved = self.scope;
        let mut taken = false;
        for (c, body) in &i.branches {
            self.test(c)?;
            if self.cond_static[c.id.index()] {
                if self.static_cond(c)? {
                    self.block(body)?;
                    taken = true;
                    break;
                }
            } else {
                let ins = self.instance(c);
                self.facts.cond_insts.push(ins);
                let inst = self.base.cond + self.facts.cond_insts.len() as u32 - 1;
                let outer = self.scope;
                self.push_scope(Lit::Cond { inst, value: true });
                self.block(body)?;
                self.scope = outer;
                self.push_scope(Lit::Cond { inst, value: false });
            }
        }
        if !taken {
            if let Some(body) = &i.otherwise {
                self.block(body)?;
            }
        }
        self.scope = saved;
        Ok(())
    }

    fn test(&mut self, c: &'p Condition) -> Result<(), LowerError> {
        let plans = &self.cond_plans[c.id.index()];
        self.op(Site::Cond(c.id), plans, &c.name, c.span)
    }

    fn stmt(&mut self, s: &'p Stmt) -> Result<(), LowerError> {
        if self.frame.on && self.frame.skip[s.id.index()] {
            return Ok(());
        }
        let plans = &self.stmt_plans[s.id.index()];
        self.op(Site::Stmt(s.id), plans, &s.label, s.span)
    }

    /// Emits one operation: its read slots, its read instances, then its
    /// write instances.
    fn op(
        &mut self,
        site: Site,
        plans: &[Plan<'p>],
        name: &str,
        span: Span,
    ) -> Result<(), LowerError> {
        if plans.is_empty() {
            return Ok(());
        }
        let n: u64 = plans
            .iter()
            .map(|p| p.count)
            .fold(0u64, u64::saturating_add);
        self.count = self.count.saturating_add(n);
        let max = self.config.max_instances.min(u64::from(NONE) - 1);
        if self.count > max {
            return Err(self.over("access instances", name, span, self.count, max));
        }
        // The cells first: a first access may bring an entry write, which
        // comes before this operation.
        let write_slot = self.cells_of(plans)?;
        if self.frame.on {
            self.first_touches(plans)?;
        }
        let entries = self.base.iters as usize + self.facts.iters.len() + self.iter.len();
        let Ok(end) = u32::try_from(entries) else {
            let max = u64::from(u32::MAX);
            return Err(self.over("iteration-vector entries", name, span, entries as u64, max));
        };
        let base = self.base;
        let f = &mut self.facts;
        let op = base.op + f.op_site.len() as u32;
        if op.is_multiple_of(4096) {
            crate::budget::check(self.config.max_memory, || "the lowered facts".to_string())?;
        }
        f.op_site.push(f.site_index(site) as u32);
        f.iters.extend_from_slice(&self.iter);
        f.op_iter_start.push(end);
        f.op_scope.push(self.scope);
        let slot_base = base.slot + f.slots.len() as u32;
        let n_reads = plans.iter().filter(|p| p.kind.reads()).count() as u32;
        f.slots
            .extend((0..n_reads).map(|access| Slot { op, access }));
        let inner_start =
            (f.scopes.get(self.scope.wrapping_sub(base.scope) as usize)).map_or(0, |s| s.start);

        let cover = matches!(site, Site::Stmt(s) if self.covers[s.index()]);
        self.emit_all(op, slot_base, write_slot, inner_start, cover);
        Ok(())
    }

    /// The cells of one operation: those it reads into `reads` (slot and
    /// array in `read_tags`), those its target writes into `writes`; the
    /// target's read slot when it also reads.
    fn cells_of(&mut self, plans: &[Plan<'p>]) -> Result<Option<u32>, LowerError> {
        let Lowerer {
            params,
            counters,
            reads,
            read_tags,
            writes,
            scratch,
            cells,
            ..
        } = self;
        let point = Point { params, counters };
        let mut sink = Sink {
            cells,
            reads,
            writes,
            scratch,
            room: 0,
            over: false,
        };
        let emit = |p: &Plan, sink: &mut Sink| {
            sink.claim(p.count);
            p.lowering.emit(p.access, p.kind, &point, sink)?;
            sink.claimed(p.lowering, p.access, p.count)
        };
        sink.clear();
        read_tags.clear();
        let mut slot = 0;
        let mut write_slot = None;
        let mut target = None;
        for p in plans {
            if p.kind.writes() {
                target = Some(p);
                if p.kind.reads() {
                    write_slot = Some(slot);
                    slot += 1;
                }
                continue;
            }
            emit(p, &mut sink)?;
            read_tags.resize(sink.reads.len(), (slot, p.access.array));
            slot += 1;
        }
        if let Some(p) = target {
            emit(p, &mut sink)?;
        }
        Ok(write_slot)
    }

    /// The entry writes of the framed cells this operation touches first.
    fn first_touches(&mut self, plans: &[Plan<'p>]) -> Result<(), LowerError> {
        let target = plans
            .iter()
            .find(|p| p.kind.writes())
            .map(|p| p.access.array);
        for k in 0..self.reads.len() + self.writes.len() {
            let (cell, array) = match self.reads.get(k) {
                Some(&c) => (c, self.read_tags[k].1),
                None => match (self.writes.get(k - self.reads.len()), target) {
                    (Some(&(c, _)), Some(a)) => (c, a),
                    _ => continue,
                },
            };
            if self.cells.tops[cell] != NONE || !self.frame.framed[array.index()] {
                continue;
            }
            let (word, bit) = (cell / 64, 1u64 << (cell % 64));
            if self.frame.seen.len() <= word {
                self.frame.seen.resize(word + 1, 0);
            }
            if self.frame.seen[word] & bit != 0 {
                continue;
            }
            self.frame.seen[word] |= bit;
            self.frame.touched.push(cell);
            if let Some(s) = self.frame.entry[array.index()] {
                let x = self.frame_op(Site::Stmt(s), cell, role::WRITE | role::MUST, NONE)?;
                self.cells.tops[cell] = x;
            }
        }
        Ok(())
    }

    /// One operation of a frame statement on `cell` (its iteration vector is
    /// the cell's index), with one access instance; its id.
    fn frame_op(
        &mut self,
        site: Site,
        cell: usize,
        flags: u8,
        prev: u32,
    ) -> Result<u32, LowerError> {
        let base = self.base;
        let f = &mut self.facts;
        let index = self.cells.locate(cell).map(|(_, i)| i).unwrap_or_default();
        let x = base.acc as usize + f.acc_op.len();
        let end = base.iters as usize + f.iters.len() + index.len();
        if x >= NONE as usize - 1 || u32::try_from(end).is_err() {
            let name = f.site_names[f.site_index(site)].clone();
            let max = u64::from(NONE) - 1;
            return Err(self.over("access instances", &name, Span::NONE, x as u64 + 1, max));
        }
        let op = base.op + f.op_site.len() as u32;
        let site = f.site_index(site) as u32;
        f.op_site.push(site);
        f.iters.extend_from_slice(&index);
        f.op_iter_start.push(end as u32);
        f.op_scope.push(NONE);
        let slot = if flags & role::READ != 0 {
            f.slots.push(Slot { op, access: 0 });
            base.slot + f.slots.len() as u32 - 1
        } else {
            NONE
        };
        f.acc_op.push(op);
        f.acc_role.push(flags);
        f.acc_prev.push(prev);
        f.acc_link.push(NONE);
        f.acc_slot.push(slot);
        if self.keep_cells {
            f.acc_cell.push(cell as u32);
        }
        f.frame_instances += 1;
        if let Some(w) = &mut self.window {
            w.frame_write(cell, x as u32, flags, op, site, &index);
        }
        Ok(x as u32)
    }

    /// Whether access instance `x` is an entry write (one the share
    /// dropped: whether it is the entry write of `cell`).
    fn is_entry(&self, x: u32, cell: usize) -> bool {
        let f = &self.facts;
        let Some(&op) = f.acc_op.get(x.wrapping_sub(self.base.acc) as usize) else {
            return self.window.as_ref().is_some_and(|w| w.entry_of(cell) == x);
        };
        let site = f.op_site[op.wrapping_sub(self.base.op) as usize] as usize;
        self.frame.skip.get(site).copied().unwrap_or(false)
    }

    /// The exit reads: every framed cell of an exit array the walk wrote, in
    /// exit statement order, then index order.
    fn exits(&mut self) -> Result<(), LowerError> {
        let touched = std::mem::take(&mut self.frame.touched);
        let mut written: Vec<(ArrayId, Vec<i64>, usize)> = touched
            .into_iter()
            .filter(|&c| {
                let top = self.cells.tops[c];
                top != NONE && !self.is_entry(top, c)
            })
            .filter_map(|c| self.cells.locate(c).map(|(a, i)| (a, i, c)))
            .collect();
        written.sort_unstable();
        for (a, s) in std::mem::take(&mut self.frame.exit) {
            let from = written.partition_point(|w| w.0 < a);
            let to = written.partition_point(|w| w.0 <= a);
            for &(_, _, cell) in &written[from..to] {
                let top = self.cells.tops[cell];
                self.frame_op(Site::Stmt(s), cell, role::READ, top)?;
            }
        }
        Ok(())
    }

    /// Emits the instances of one operation from `reads` and `writes`:
    /// reads first, in access order; then the write target.
    fn emit_all(
        &mut self,
        op: u32,
        slot_base: u32,
        write_slot: Option<u32>,
        inner_start: u32,
        cover: bool,
    ) {
        let framed = self.frame.on;
        for (k, &cell) in self.reads.iter().enumerate() {
            let f = &mut self.facts;
            let top = self.cells.tops[cell];
            if let Some((open, written)) = &mut self.open {
                if top == NONE && written[self.read_tags[k].1.index()] {
                    let x = self.base.acc as usize + f.acc_op.len();
                    open.push(split::OpenEnd::new(x, cell, false));
                }
            }
            if let Some(w) = &mut self.window {
                w.read(op);
            }
            f.acc_op.push(op);
            f.acc_role.push(role::READ);
            f.acc_prev.push(top);
            f.acc_link.push(NONE);
            f.acc_slot.push(slot_base + self.read_tags[k].0);
            if self.keep_cells {
                f.acc_cell.push(cell as u32);
            }
        }
        let write_slot = write_slot.map_or(NONE, |s| slot_base + s);
        for k in 0..self.writes.len() {
            let (cell, mut flags) = self.writes[k];
            if cover && flags & role::MUST != 0 {
                flags |= role::COVER;
            }
            let x = self.next_acc() as u32;
            let top = self.cells.tops[cell];
            let link = if flags & role::MUST != 0 {
                // hop: step back over the writes inside Inner(x); an entry
                // write stands for one before everything.
                let mut h = top;
                while h != NONE && h >= inner_start && !(framed && self.is_entry(h, cell)) {
                    match self
                        .facts
                        .acc_link
                        .get(h.wrapping_sub(self.base.acc) as usize)
                    {
                        Some(&link) => h = link,
                        // Dropped by the share: outside every guard, the hop
                        // ends at the cell's entry write, or NONE.
                        None => {
                            h = self.window.as_ref().map_or(NONE, |w| w.entry_of(cell));
                            break;
                        }
                    }
                }
                h
            } else {
                top
            };
            if let Some((open, _)) = &mut self.open {
                if flags & role::READ != 0 && top == NONE {
                    open.push(split::OpenEnd::new(x as usize, cell, false));
                }
                // A must-write outside every guard hops to NONE whatever
                // came before.
                if link == NONE && (flags & role::MUST == 0 || self.scope != NONE) {
                    open.push(split::OpenEnd::new(x as usize, cell, true));
                }
            }
            let f = &mut self.facts;
            f.acc_op.push(op);
            f.acc_role.push(flags);
            f.acc_prev
                .push(if flags & role::READ != 0 { top } else { NONE });
            f.acc_link.push(link);
            f.acc_slot.push(if flags & role::READ != 0 {
                write_slot
            } else {
                NONE
            });
            if self.keep_cells {
                f.acc_cell.push(cell as u32);
            }
            self.cells.tops[cell] = x;
            if flags & role::READ != 0 {
                if let Some(w) = &mut self.window {
                    w.read(op);
                }
            }
        }
    }

    /// The id the next access instance takes.
    fn next_acc(&self) -> usize {
        self.base.acc as usize + self.facts.acc_op.len()
    }
}
