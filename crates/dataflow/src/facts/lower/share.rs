//! One process's share of the lowering, for σ across processes
//! (`dataflow::dd`, docs/scaling.md): the program's access instances are
//! cut into `parts` stretches of execution order, about equal by the count,
//! and process `part` keeps only the facts of its own stretch.
//!
//! Every process walks the program in order from the start, as the
//! sequential lowering does, with the one table of latest writes per cell
//! (so its `prev`, `link` and `hop` are those of the whole walk, in global
//! ids), and drops what it walked at each *boundary*: between two top-level
//! nodes, and between two iterations of a top-level `for` loop. There the
//! guard is empty and no loop but that one is open, so nothing walked later
//! looks back into what was dropped, but for two things kept by cell: the
//! latest write (the cell table), and a frame's entry write (the `hop` of a
//! must-write outside every guard ends there, or at NONE). The entry writes
//! themselves (operation, site, iteration vector: a function of the cell)
//! are kept too, until the walk passes the process's stretch ([`Entries`]),
//! so that a read of its stretch whose source is an entry write made in an
//! earlier stretch is resolved where the reader is (`dataflow::dd`).
//!
//! Cut k is the first boundary where the instances counted reach k/parts of
//! the count made up front; every process places the same cuts, since the
//! walk is deterministic. A process stops at the cut after its stretch,
//! except process 0, which walks on to the end keeping every operation's
//! tables (`op_site`, `iters`, `slots`: the `Flow` is built there) and the
//! totals, and so meets every error the whole lowering would; *light*
//! ([`lower_share_light`], when each process builds its own readers' `Flow`),
//! it keeps only its own stretch's operations, as the others do.

use super::{walk, Lowerer, Mode};
use crate::facts::count::Count;
use crate::facts::kinds::AccessLowering;
use crate::facts::{
    closure_of, cond_lits_of, cover_lits_of, role, Config, Facts, Frame, Guard, LowerError, NONE,
};
use crate::model::Program;
use std::ops::Range;

/// The ids of the first entries of each table a [`Facts`] holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Base {
    pub(super) acc: u32,
    pub(super) op: u32,
    pub(super) iters: u32,
    pub(super) scope: u32,
    pub(super) cond: u32,
    pub(super) whiles: u32,
    pub(super) inst_iters: u32,
    pub(super) slot: u32,
}

/// Exchanges the named tables of a set-aside struct with `Facts`' (each
/// struct names the tables it keeps).
macro_rules! swap_fields {
    ($kept:expr, $facts:expr; $($table:ident),+ $(,)?) => {
        $(std::mem::swap(&mut $kept.$table, &mut $facts.$table);)+
    };
}

/// What a process keeps of the access-instance tables (and the scopes and
/// instances, which only its access instances refer to).
#[derive(Default)]
struct AccTables {
    acc_op: Vec<u32>,
    acc_role: Vec<u8>,
    acc_prev: Vec<u32>,
    acc_link: Vec<u32>,
    acc_slot: Vec<u32>,
    acc_cell: Vec<u32>,
    scopes: Vec<crate::facts::Scope>,
    cond_insts: Vec<crate::facts::Instance>,
    while_insts: Vec<crate::facts::Instance>,
    inst_iters: Vec<i64>,
}

impl AccTables {
    /// Exchanges the tables with `f`'s.
    fn swap(&mut self, f: &mut Facts) {
        swap_fields!(self, f; acc_op, acc_role, acc_prev, acc_link, acc_slot, acc_cell,
            scopes, cond_insts, while_insts, inst_iters);
    }
}

/// Process 0's operation tables of its stretch, set aside (light).
#[derive(Default)]
struct OpTables {
    op_site: Vec<u32>,
    op_scope: Vec<u32>,
    iters: Vec<i64>,
    slots: Vec<crate::facts::Slot>,
    op_iter_start: Vec<u32>,
}

impl OpTables {
    fn swap(&mut self, f: &mut Facts) {
        swap_fields!(self, f; op_site, op_scope, iters, slots, op_iter_start);
    }
}

/// The walk's state in a share.
pub(super) struct Window {
    part: usize,
    parts: usize,
    /// Process 0 keeps only its stretch's operations.
    light: bool,
    /// Light: process 0's operations, set aside past its stretch.
    kept_ops: Option<OpTables>,
    /// The site index of the last reader's operation, once known.
    last_reader_site: u32,
    /// Access instances counted up front (frames' left out, as `count`).
    total: u64,
    /// Where each process's stretch starts (access-instance ids), for the
    /// processes whose cut the walk has passed.
    cuts: Vec<u32>,
    stopped: bool,
    /// Process 0, past its stretch: the stretch's tables, set aside.
    kept: Option<(AccTables, Base)>,
    /// By cell: its frame entry write (NONE: none), grown on use.
    entry: Vec<u32>,
    /// The entry writes made until the walk passed this stretch.
    entries: Entries,
    readers: u64,
    last_reader_op: u32,
    n_accs: u64,
}

impl Window {
    /// The window of process `part` of `parts`; `None` when the program is
    /// lowered whole (one part, or no count to cut by).
    pub(super) fn new(
        part: usize,
        parts: usize,
        light: bool,
        counted: Option<&Count>,
        framed: Option<(u64, u64)>,
        facts: &mut Facts,
    ) -> Option<Window> {
        let c = counted?;
        if parts < 2 || part >= parts {
            return None;
        }
        // Room for a stretch and an eighth (a cut falls at a boundary, past
        // its share of the count); process 0 keeps every operation, with
        // room for a frame's (an entry and an exit per cell at most: the
        // count leaves them out), so that no table grows by doubling.
        let (cells, dims) = framed.unwrap_or((0, 0));
        let n = |v: u64| (v / parts as u64 + v / (8 * parts as u64)) as usize;
        let ops = |v: u64, per_cell: u64| {
            let v = v + 2 * cells * per_cell;
            if part == 0 && !light {
                v as usize
            } else {
                n(v)
            }
        };
        facts.reserve_tables(
            [
                n(c.instances),
                ops(c.ops, 1),
                ops(c.iter_entries, dims),
                ops(c.slots, 1),
            ],
            false,
        );
        Some(Window {
            part,
            parts,
            light,
            kept_ops: None,
            last_reader_site: NONE,
            total: c.instances,
            cuts: Vec::with_capacity(parts),
            stopped: false,
            kept: None,
            entry: Vec::new(),
            entries: Entries::default(),
            readers: 0,
            last_reader_op: NONE,
            n_accs: 0,
        })
    }

    pub(super) fn stopped(&self) -> bool {
        self.stopped
    }

    /// A reader of operation `op` was made.
    pub(super) fn read(&mut self, op: u32) {
        self.readers += 1;
        self.last_reader_op = op;
    }

    /// A frame's access instance `x` on `cell` was made, of operation `op`
    /// at site index `site` with iteration vector `iter`.
    pub(super) fn frame_write(
        &mut self,
        cell: usize,
        x: u32,
        flags: u8,
        op: u32,
        site: u32,
        iter: &[i64],
    ) {
        if flags & role::READ != 0 {
            self.read(op);
        }
        if flags & role::WRITE != 0 {
            if self.entry.len() <= cell {
                self.entry.resize(cell + 1, NONE);
            }
            self.entry[cell] = x;
            // No later stretch's reader asks this process about it.
            if self.cuts.len() <= self.part + 1 {
                self.entries.iters.extend_from_slice(iter);
                let end = self.entries.iters.len() as u32;
                self.entries.rows.push((x, op, site, end));
            }
        }
    }

    /// The frame's entry write of `cell`, or NONE.
    pub(super) fn entry_of(&self, cell: usize) -> u32 {
        self.entry.get(cell).copied().unwrap_or(NONE)
    }

    /// Notes the last reader's site while its operation is held.
    fn note_site(&mut self, facts: &Facts, base: &Base) {
        let k = self.last_reader_op.wrapping_sub(base.op) as usize;
        if let Some(&s) = facts.op_site.get(k) {
            self.last_reader_site = s;
        }
    }

    /// At the end of the walk: process 0's stretch back in place.
    pub(super) fn finish(mut self, facts: &mut Facts, base: &mut Base) -> Window {
        self.note_site(facts, base);
        self.n_accs = u64::from(base.acc) + facts.acc_op.len() as u64;
        if let Some((mut ops, kept)) = self.kept_ops.take().zip(self.kept.as_ref().map(|k| k.1)) {
            ops.swap(facts);
            base.op = kept.op;
            base.iters = kept.iters;
            base.slot = kept.slot;
        }
        if let Some((mut tables, kept)) = self.kept.take() {
            tables.swap(facts);
            base.acc = kept.acc;
            base.scope = kept.scope;
            base.cond = kept.cond;
            base.whiles = kept.whiles;
            base.inst_iters = kept.inst_iters;
        }
        self.entry = Vec::new();
        self.entries.rows.shrink_to_fit();
        self.entries.iters.shrink_to_fit();
        self
    }
}

/// Moves the access-instance tables (and scopes, instances) past `b`.
fn pass_accs(f: &Facts, b: &mut Base) {
    b.acc += f.acc_op.len() as u32;
    b.scope += f.scopes.len() as u32;
    b.cond += f.cond_insts.len() as u32;
    b.whiles += f.while_insts.len() as u32;
    b.inst_iters += f.inst_iters.len() as u32;
}

/// Drops the access-instance tables, keeping their room.
fn drop_accs(f: &mut Facts, b: &mut Base) {
    pass_accs(f, b);
    f.acc_op.clear();
    f.acc_role.clear();
    f.acc_prev.clear();
    f.acc_link.clear();
    f.acc_slot.clear();
    f.acc_cell.clear();
    f.scopes.clear();
    f.cond_insts.clear();
    f.while_insts.clear();
    f.inst_iters.clear();
}

/// Drops the operation tables.
fn drop_ops(f: &mut Facts, b: &mut Base) {
    b.op += f.op_site.len() as u32;
    b.iters += f.iters.len() as u32;
    b.slot += f.slots.len() as u32;
    f.op_site.clear();
    f.op_scope.clear();
    f.iters.clear();
    f.slots.clear();
    f.op_iter_start.clear();
    f.op_iter_start.push(b.iters);
}

impl Lowerer<'_, '_> {
    /// At a boundary (module documentation): places the cuts the count has
    /// reached and drops what this process does not keep. `true` once the
    /// walk is past this process's stretch and may stop.
    pub(super) fn boundary(&mut self) -> bool {
        let at = self.next_acc() as u32;
        let count = u128::from(self.count);
        let Some(w) = &mut self.window else {
            return false;
        };
        w.note_site(&self.facts, &self.base);
        if w.stopped {
            return true;
        }
        let before = w.cuts.len();
        let reached = |k: usize| count * w.parts as u128 >= u128::from(w.total) * k as u128;
        while w.cuts.len() < w.parts && reached(w.cuts.len()) {
            w.cuts.push(at);
        }
        let (p, now) = (w.part, w.cuts.len());
        if before <= p {
            // All walked so far comes before this process's stretch.
            drop_accs(&mut self.facts, &mut self.base);
            drop_ops(&mut self.facts, &mut self.base);
        }
        if now > p + 1 {
            if p != 0 {
                w.stopped = true;
                return true;
            }
            if w.kept.is_none() {
                let start = self.base;
                pass_accs(&self.facts, &mut self.base);
                let mut tables = AccTables::default();
                tables.swap(&mut self.facts);
                w.kept = Some((tables, start));
                if w.light {
                    // Its operations aside too; the later ones dropped.
                    let mut ops = OpTables::default();
                    ops.swap(&mut self.facts);
                    self.base.op += ops.op_site.len() as u32;
                    self.base.iters += ops.iters.len() as u32;
                    self.base.slot += ops.slots.len() as u32;
                    self.facts.op_iter_start.push(self.base.iters);
                    w.kept_ops = Some(ops);
                }
            } else {
                drop_accs(&mut self.facts, &mut self.base);
                if w.light {
                    drop_ops(&mut self.facts, &mut self.base);
                }
            }
        }
        false
    }
}

/// One process's facts: the access instances of its stretch (and their
/// operations, scopes and instances), in the ids of the whole program.
#[derive(Debug)]
pub struct Share {
    /// The tables kept; entry k of a table is the id `base + k`.
    pub facts: Facts,
    base: Base,
    /// Where each process's stretch starts, as far as this one walked.
    cuts: Vec<u32>,
    /// Every process holds the whole program (it could not be cut).
    whole: bool,
    n_accs: u64,
    readers: u64,
    last_reader_op: u32,
    last_reader_site: u32,
    entries: Entries,
}

/// The frame's entry writes a process saw before it passed its stretch,
/// in execution order (so by write and by operation alike): an entry write
/// is a must-write outside every guard with no write before it, so a walk
/// that reaches one ends there with it as the source, and its operation's
/// site and iteration vector (the cell's index) are all a reader's owner
/// needs to name it.
#[derive(Debug, Default)]
struct Entries {
    /// (write, operation, site index, end of its iteration vector in `iters`).
    rows: Vec<(u32, u32, u32, u32)>,
    iters: Vec<i64>,
}

impl Entries {
    fn by_write(&self, w: u32) -> Option<usize> {
        self.rows.binary_search_by_key(&w, |r| r.0).ok()
    }

    fn by_op(&self, op: u32) -> Option<usize> {
        self.rows.binary_search_by_key(&op, |r| r.1).ok()
    }

    fn iter(&self, k: usize) -> &[i64] {
        let start = k.checked_sub(1).map_or(0, |j| self.rows[j].3) as usize;
        &self.iters[start..self.rows[k].3 as usize]
    }
}

/// [`lower_share`], process 0 keeping only its own stretch's operations
/// (the others' tables are not needed where each process builds the
/// `Flow` of its own readers: `dataflow::dd`, spread).
pub fn lower_share_light(
    program: &Program,
    config: &Config,
    kinds: &[&'static dyn AccessLowering],
    frame: &Frame,
    part: usize,
    parts: usize,
) -> Result<Share, LowerError> {
    share_of(program, config, kinds, frame, part, parts, true)
}

/// Lowers process `part`'s share of `program` out of `parts` (module
/// documentation). A program with no count up front is lowered whole,
/// as is every program when `parts` is 1: [`Share::is_whole`].
pub fn lower_share(
    program: &Program,
    config: &Config,
    kinds: &[&'static dyn AccessLowering],
    frame: &Frame,
    part: usize,
    parts: usize,
) -> Result<Share, LowerError> {
    share_of(program, config, kinds, frame, part, parts, false)
}

fn share_of(
    program: &Program,
    config: &Config,
    kinds: &[&'static dyn AccessLowering],
    frame: &Frame,
    part: usize,
    parts: usize,
    light: bool,
) -> Result<Share, LowerError> {
    let mode = Mode::Share { part, parts, light };
    let walked = walk(program, config, kinds, false, frame, mode)?;
    let Some(w) = walked.window else {
        return Ok(Share::whole(walked.facts));
    };
    Ok(Share {
        facts: walked.facts,
        base: walked.base,
        cuts: w.cuts,
        whole: false,
        n_accs: w.n_accs,
        readers: w.readers,
        last_reader_op: w.last_reader_op,
        last_reader_site: w.last_reader_site,
        entries: w.entries,
    })
}

impl Share {
    /// The whole program's facts, held by every process.
    pub fn whole(facts: Facts) -> Share {
        let readers = (0..facts.n_accs() as u32).filter(|&x| facts.is_read(x));
        let (readers, last) = readers.fold((0u64, NONE), |(n, _), x| (n + 1, facts.op(x)));
        let last_reader_site = facts.op_site.get(last as usize).copied().unwrap_or(NONE);
        Share {
            last_reader_site,
            n_accs: facts.n_accs() as u64,
            facts,
            base: Base::default(),
            cuts: vec![0],
            whole: true,
            readers,
            last_reader_op: last,
            entries: Entries::default(),
        }
    }

    /// Whether every process holds the whole program.
    pub fn is_whole(&self) -> bool {
        self.whole
    }

    /// Whether this process holds every operation's tables and the totals
    /// (process 0, or a whole program).
    pub fn has_all_ops(&self) -> bool {
        self.base.op == 0 && self.base.slot == 0 && self.base.iters == 0
    }

    /// The access instances this process holds.
    pub fn accs(&self) -> Range<u32> {
        self.base.acc..self.base.acc + self.facts.acc_op.len() as u32
    }

    /// The process whose stretch holds access instance `x` (0 for a whole
    /// program).
    pub fn owner(&self, x: u32) -> usize {
        self.cuts.partition_point(|&c| c <= x).saturating_sub(1)
    }

    /// Access instances of the whole program (known to process 0).
    pub fn n_accs(&self) -> u64 {
        self.n_accs
    }

    /// The site index of the last reader of the whole program (process 0),
    /// or NONE.
    pub fn last_reader_site(&self) -> u32 {
        self.last_reader_site
    }

    /// Readers of the whole program, and the operation of the last (process 0).
    pub fn readers(&self) -> (u64, u32) {
        (self.readers, self.last_reader_op)
    }

    fn at(&self, x: u32) -> usize {
        (x - self.base.acc) as usize
    }

    /// Whether access instance `x` is of this process's stretch.
    pub fn holds(&self, x: u32) -> bool {
        self.accs().contains(&x)
    }

    /// Whether write `w` is a frame's entry write (of a cell first touched
    /// before this process passed its stretch; none for a whole program).
    pub fn is_entry(&self, w: u32) -> bool {
        self.entries.by_write(w).is_some()
    }

    /// The operation of write `w`: of this stretch, or an entry write.
    pub fn write_op(&self, w: u32) -> u32 {
        match self.entries.by_write(w) {
            Some(k) if !self.holds(w) => self.entries.rows[k].1,
            _ => self.op(w),
        }
    }

    /// Whether operation `op` is of an entry write this stretch does not
    /// hold (its site and iteration vector are known all the same).
    pub fn is_entry_op(&self, op: u32) -> bool {
        self.entry_op(op).is_some()
    }

    /// The entry write's row of operation `op` when the stretch does not
    /// hold `op`.
    fn entry_op(&self, op: u32) -> Option<usize> {
        let held = op >= self.base.op && ((op - self.base.op) as usize) < self.facts.op_site.len();
        (!held).then(|| self.entries.by_op(op)).flatten()
    }

    pub fn op(&self, x: u32) -> u32 {
        self.facts.acc_op[self.at(x)]
    }

    pub fn prev(&self, x: u32) -> u32 {
        self.facts.acc_prev[self.at(x)]
    }

    pub fn link(&self, w: u32) -> u32 {
        self.facts.acc_link[self.at(w)]
    }

    pub fn slot(&self, x: u32) -> u32 {
        self.facts.acc_slot[self.at(x)]
    }

    fn has(&self, x: u32, flags: u8) -> bool {
        self.facts.acc_role[self.at(x)] & flags == flags
    }

    pub fn is_read(&self, x: u32) -> bool {
        self.has(x, role::READ)
    }

    pub fn is_must(&self, x: u32) -> bool {
        self.has(x, role::WRITE | role::MUST)
    }

    pub fn is_may(&self, x: u32) -> bool {
        self.has(x, role::WRITE) && !self.has(x, role::MUST)
    }

    /// `Facts::is_cover`.
    pub fn is_cover(&self, x: u32) -> bool {
        self.has(x, role::WRITE | role::MUST | role::COVER)
    }

    /// `Facts::cover_lits`, for a write of this process's stretch.
    pub fn cover_lits(&self, w: u32) -> Option<(crate::facts::Lit, crate::facts::Lit)> {
        cover_lits_of(self.guard(self.op(w)))
    }

    /// The ids of the first operation, read slot and iteration entry held.
    pub fn bases(&self) -> (u32, u32, u32) {
        (self.base.op, self.base.slot, self.base.iters)
    }

    /// The iteration vector of operation `op` of this process's stretch
    /// (or of an entry write's, [`Share::write_op`]).
    pub fn op_iter(&self, op: u32) -> &[i64] {
        if let Some(e) = self.entry_op(op) {
            return self.entries.iter(e);
        }
        let k = (op - self.base.op) as usize;
        let f = &self.facts;
        let at = |i: usize| (f.op_iter_start[i] - self.base.iters) as usize;
        &f.iters[at(k)..at(k + 1)]
    }

    /// The site index of operation `op` (as [`Share::op_iter`]).
    pub fn site(&self, op: u32) -> u32 {
        if let Some(e) = self.entry_op(op) {
            return self.entries.rows[e].2;
        }
        self.facts.op_site[(op - self.base.op) as usize]
    }

    /// guard(O, L) of an operation of this process's stretch.
    pub fn guard(&self, op: u32) -> Guard<'_> {
        let scope = self.facts.op_scope[(op - self.base.op) as usize];
        Guard::based(&self.facts, scope, self.base.scope)
    }

    pub fn closure(&self, op: u32) -> impl Iterator<Item = crate::facts::Lit> + '_ {
        closure_of(self.guard(op))
    }

    pub fn cond_lits(&self, op: u32) -> impl Iterator<Item = (u32, bool)> + '_ {
        cond_lits_of(self.guard(op))
    }
}
