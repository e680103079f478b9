//! A top-level `for` loop lowered on several threads: its iterations are
//! cut into chunks, each chunk is walked on its own from a blank cell table,
//! and the chunks are stitched in order into exactly the facts the
//! sequential walk makes.
//!
//! A chunk sees no write before it, so a `prev` (of a reader) or a `link`
//! (of a may-write, or of a must-write inside a guard) that reached the
//! chunk's start is left open, and the walk records it (reads of arrays
//! nothing writes excepted: theirs stays NONE); the stitch, going through the chunks in
//! order with the table of latest writes, closes it with the latest write
//! to that cell before the chunk. A must-write outside every guard hops
//! over everything before it (its guard region starts at 0), so its NONE
//! is final. Every id (operations, access instances, slots, scopes,
//! condition and while instances, iteration entries) is shifted by what
//! comes before the chunk.
//!
//! Used only where the result cannot differ: no frame, every array laid out
//! densely, the instances counted up front. A chunk that numbers a cell
//! outside the dense layout or fails, or totals past a budget, make the loop
//! walk sequentially instead, which gives the same facts or the same error.

use super::{FrameState, Lowerer};
use crate::facts::{Facts, Instance, Lit, LowerError, Scope, Slot, NONE};
use crate::model::For;
use rayon::prelude::*;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Loops lowered in chunks so far, in this process (for tests: that the
/// chunks were used at all).
static SPLIT_LOOPS: AtomicU64 = AtomicU64::new(0);

/// How many loops this process has lowered in chunks.
pub fn split_loops() -> u64 {
    SPLIT_LOOPS.load(Relaxed)
}

/// Programs under this many access instances are lowered sequentially
/// (a few milliseconds: not worth the threads).
pub(super) const MIN_INSTANCES: u64 = 1 << 18;

/// Chunks per thread: on a shared machine a thread may be descheduled, and
/// more chunks than threads even out the wait for the slowest.
pub(super) const PER_THREAD: u64 = 4;

/// An open end, recorded by the chunk's walk: access instance `x` (its id
/// as the chunk numbers it: from 0 here, final in `place`), whose `prev` or
/// (`link`) `link` is the latest write to `cell` before the chunk.
pub struct OpenEnd {
    x: u32,
    cell: u32,
    link: bool,
}

impl OpenEnd {
    pub(super) fn new(x: usize, cell: usize, link: bool) -> OpenEnd {
        OpenEnd {
            x: x as u32,
            cell: cell as u32,
            link,
        }
    }
}

/// An open end with its cell numbered among the chunk's open cells.
pub(super) struct Open {
    pub(super) x: u32,
    slot: u32,
    pub(super) link: bool,
}

/// What a chunk's walk leaves besides its facts: where it joins the
/// chunks before it.
pub(super) struct Ends {
    /// Cells the chunk writes, each with its latest write (the chunk's id).
    pub(super) touched: Vec<(u32, u32)>,
    /// The distinct cells of the open ends, by slot.
    open_cells: Vec<u32>,
    pub(super) open: Vec<Open>,
}

impl Ends {
    /// The values of the open ends, from `tops` (the latest writes before
    /// the chunk), by slot.
    pub(super) fn closed(&self, tops: &[u32]) -> Vec<u32> {
        (self.open_cells.iter())
            .map(|&c| tops[c as usize])
            .collect()
    }

    /// The value open end `e` takes from [`Ends::closed`].
    pub(super) fn value(e: &Open, closed: &[u32]) -> u32 {
        closed[e.slot as usize]
    }
}

/// One chunk walked on its own.
struct Part {
    facts: Facts,
    ends: Ends,
    count: u64,
    iterations: u64,
}

/// How many of each id come before a chunk (in `place`, also how many of
/// each one trip makes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Offsets {
    pub(super) op: u64,
    pub(super) iters: u64,
    pub(super) scope: u64,
    pub(super) cond: u64,
    pub(super) whiles: u64,
    pub(super) inst_iters: u64,
    pub(super) acc: u64,
    pub(super) slot: u64,
}

impl Offsets {
    pub(super) fn of(f: &Facts) -> Offsets {
        Offsets {
            op: f.op_site.len() as u64,
            iters: f.iters.len() as u64,
            scope: f.scopes.len() as u64,
            cond: f.cond_insts.len() as u64,
            whiles: f.while_insts.len() as u64,
            inst_iters: f.inst_iters.len() as u64,
            acc: f.acc_op.len() as u64,
            slot: f.slots.len() as u64,
        }
    }

    fn plus(self, f: &Facts) -> Offsets {
        self.zip(Offsets::of(f), |a, b| a + b)
    }

    /// Each count of `self` and `o` combined by `op` (saturating ops only:
    /// what overflows fails [`Offsets::fit`]).
    pub(super) fn zip(self, o: Offsets, op: impl Fn(u64, u64) -> u64) -> Offsets {
        Offsets {
            op: op(self.op, o.op),
            iters: op(self.iters, o.iters),
            scope: op(self.scope, o.scope),
            cond: op(self.cond, o.cond),
            whiles: op(self.whiles, o.whiles),
            inst_iters: op(self.inst_iters, o.inst_iters),
            acc: op(self.acc, o.acc),
            slot: op(self.slot, o.slot),
        }
    }

    /// `k` times each count.
    pub(super) fn times(self, k: u64) -> Offsets {
        self.zip(self, |a, _| a.saturating_mul(k))
    }

    /// The ids a walker starts from to number its first facts `self`.
    pub(super) fn base(self) -> super::share::Base {
        super::share::Base {
            acc: self.acc as u32,
            op: self.op as u32,
            iters: self.iters as u32,
            scope: self.scope as u32,
            cond: self.cond as u32,
            whiles: self.whiles as u32,
            inst_iters: self.inst_iters as u32,
            slot: self.slot as u32,
        }
    }

    /// The counts a walker starting from `b` numbers its first facts with.
    pub(super) fn from_base(b: super::share::Base) -> Offsets {
        Offsets {
            op: b.op.into(),
            iters: b.iters.into(),
            scope: b.scope.into(),
            cond: b.cond.into(),
            whiles: b.whiles.into(),
            inst_iters: b.inst_iters.into(),
            acc: b.acc.into(),
            slot: b.slot.into(),
        }
    }

    /// Whether every id below these counts fits the facts' `u32` ids, NONE
    /// left out (the sequential walk refuses more).
    pub(super) fn fit(&self) -> bool {
        let most = u64::from(NONE) - 1;
        [
            self.op,
            self.iters,
            self.scope,
            self.cond,
            self.whiles,
            self.inst_iters,
            self.acc,
            self.slot,
        ]
        .iter()
        .all(|&n| n <= most)
    }
}

/// Spare capacity of the tables the count reserves.
#[derive(Clone, Copy)]
struct Room {
    accs: usize,
    ops: usize,
    iters: usize,
    slots: usize,
}

impl Room {
    fn left(f: &Facts) -> Room {
        let left = |cap: usize, len: usize| cap.saturating_sub(len);
        Room {
            accs: left(f.acc_op.capacity(), f.acc_op.len()),
            ops: left(f.op_site.capacity(), f.op_site.len()),
            iters: left(f.iters.capacity(), f.iters.len()),
            slots: left(f.slots.capacity(), f.slots.len()),
        }
    }

    /// `part / whole` of the room.
    fn scaled(self, part: u128, whole: u128) -> Room {
        let s = |n: usize| (n as u128 * part / whole.max(1)) as usize;
        Room {
            accs: s(self.accs),
            ops: s(self.ops),
            iters: s(self.iters),
            slots: s(self.slots),
        }
    }

    fn reserve(self, f: &mut Facts, keep_cells: bool) {
        f.reserve_tables([self.accs, self.ops, self.iters, self.slots], keep_cells);
    }
}

/// `id + by` for an id that is not NONE (they fit: [`Offsets::fit`]).
fn shift(id: u32, by: u64) -> u32 {
    if id == NONE {
        NONE
    } else {
        (u64::from(id) + by) as u32
    }
}

/// The trips of a `for` loop from `lo` to `hi`.
pub(super) struct Trips {
    lo: i64,
    step: i64,
    /// How many.
    pub(super) n: u128,
}

impl Trips {
    /// `None` when there are none, or the step does not advance.
    pub(super) fn of(f: &For, lo: i64, hi: i64) -> Option<Trips> {
        if hi < lo || f.step <= 0 {
            return None;
        }
        let n = ((i128::from(hi) - i128::from(lo)) / i128::from(f.step) + 1) as u128;
        Some(Trips {
            lo,
            step: f.step,
            n,
        })
    }

    /// The counter's value at trip `t` (from 0).
    pub(super) fn value(&self, t: u128) -> i64 {
        (i128::from(self.lo) + t as i128 * i128::from(self.step)) as i64
    }
}

/// Walks loop `f` (at the top level, outside every guard) from `lo` to
/// `hi` in chunks on the current rayon pool. `false` when it did not (too
/// few trips, or a chunk the stitch cannot take): the caller walks it.
pub(super) fn for_loop<'p>(
    l: &mut Lowerer<'p, '_>,
    f: &'p For,
    lo: i64,
    hi: i64,
) -> Result<bool, LowerError> {
    let Some(trips) = Trips::of(f, lo, hi) else {
        return Ok(false);
    };
    let value = |t: u128| trips.value(t);
    let trips = trips.n;
    let threads = rayon::current_num_threads() as u128;
    // The first 1/threads of the trips is walked in place, by `l` itself,
    // while the other threads walk the rest in chunks: what comes before
    // is known there, and its facts go straight into the reserved tables,
    // so only the other chunks are copied by the stitch.
    let head = (trips / threads).max(1);
    let chunks = ((threads - 1) * u128::from(PER_THREAD)).min(trips - head);
    if chunks < 1 || threads < 2 {
        return Ok(false);
    }
    // Chunk k takes the trips [head + rest·k/chunks, head + rest·(k+1)/chunks).
    let rest = trips - head;
    let ranges: Vec<(i64, i64)> = (0..chunks)
        .map(|k| {
            (
                value(head + rest * k / chunks),
                value(head + rest * (k + 1) / chunks - 1),
            )
        })
        .collect();
    // The room the count reserved and the walk has not used yet, which the
    // loop's instances take part of: each chunk reserves its share by trips
    // (exact for a rectangular loop), so chunks rarely grow by doubling.
    let room = Room::left(&l.facts);
    let share = |(a, b): (i64, i64)| {
        let t = (i128::from(b) - i128::from(a)) / i128::from(f.step) + 1;
        room.scaled(t as u128, trips)
    };
    let blank = l.blank(&written(l.program));
    let watch = arrayflow_model::cancel::current();
    let (walked, parts) = rayon::join(
        || l.trips(f, lo, value(head - 1)),
        || {
            (ranges.par_iter())
                .map(|&r| {
                    arrayflow_model::cancel::watching(watch.clone(), || blank.part(f, r, share(r)))
                })
                .collect::<Vec<Option<Part>>>()
        },
    );
    walked?;
    let rest_lo = value(head);
    let Some(parts) = parts.into_iter().collect::<Option<Vec<Part>>>() else {
        // The rest as the sequential walk makes it, after the head.
        return l.trips(f, rest_lo, hi).map(|()| true);
    };
    let count = parts.iter().fold(l.count, |n, p| n.saturating_add(p.count));
    let iterations = (parts.iter()).fold(l.iterations, |n, p| n.saturating_add(p.iterations));
    let max = l.config.max_instances;
    let end = parts
        .iter()
        .fold(Offsets::of(&l.facts), |o, p| o.plus(&p.facts));
    if count > max.min(u64::from(NONE) - 1) || iterations > max || !end.fit() {
        // The sequential walk stops with the budget error where it runs out.
        return l.trips(f, rest_lo, hi).map(|()| true);
    }
    l.count = count;
    l.iterations = iterations;
    stitch(l, parts);
    SPLIT_LOOPS.fetch_add(1, Relaxed);
    Ok(true)
}

/// By array: whether any statement writes it (reads of the others have
/// no open end: nothing before the chunk can have written them).
pub(super) fn written(program: &crate::model::Program) -> Vec<bool> {
    let mut written = vec![false; program.arrays.len()];
    for s in program.stmts() {
        for a in s.accesses().iter().filter(|a| a.kind.writes()) {
            written[a.access.array.index()] = true;
        }
    }
    written
}

impl<'p, 'a> Lowerer<'p, 'a> {
    /// A walker with this one's program, plans and position, and blank
    /// facts and cell table: what every chunk starts from.
    pub(super) fn blank(&self, written: &[bool]) -> Lowerer<'p, 'a> {
        let facts = Facts {
            params: self.facts.params.clone(),
            max_trips: self.facts.max_trips,
            n_stmts: self.facts.n_stmts,
            site_names: self.facts.site_names.clone(),
            op_iter_start: vec![0],
            site_arrays: self.facts.site_arrays.clone(),
            ..Facts::default()
        };
        Lowerer {
            program: self.program,
            config: self.config,
            params: self.params.clone(),
            counters: self.counters.clone(),
            iter: Vec::new(),
            scope: NONE,
            stmt_plans: self.stmt_plans,
            cond_plans: self.cond_plans,
            covers: self.covers,
            reads: Vec::new(),
            read_tags: Vec::new(),
            writes: Vec::new(),
            scratch: Vec::new(),
            frame: FrameState::default(),
            cells: self.cells.blank(),
            count: 0,
            keep_cells: self.keep_cells,
            iterations: 0,
            loop_touches: self.loop_touches.clone(),
            if_touches: self.if_touches.clone(),
            cond_static: self.cond_static.clone(),
            cond_affine: self.cond_affine.clone(),
            split: false,
            stitch: false,
            split_at: self.split_at,
            open: Some((Vec::new(), written.to_vec())),
            base: super::share::Base::default(),
            window: None,
            facts,
        }
    }

    /// Walks the iterations `a..=b` of `f` on their own, from `self` (a
    /// [`Lowerer::blank`]): `None` when the walk fails or numbers a cell
    /// (the caller then walks sequentially).
    fn part(&self, f: &'p For, (a, b): (i64, i64), room: Room) -> Option<Part> {
        let mut c = self.blank(&self.open.as_ref()?.1);
        room.reserve(&mut c.facts, self.keep_cells);
        c.trips(f, a, b).ok()?;
        Some(Part {
            ends: c.ends()?,
            count: c.count,
            iterations: c.iterations,
            facts: c.facts,
        })
    }

    /// A chunk walker's [`Ends`] once it is done; `None` when it numbered a
    /// cell (outside the dense layout: the numbers would clash).
    pub(super) fn ends(&mut self) -> Option<Ends> {
        if self.cells.numbered() > 0 {
            return None;
        }
        let touched = (self.cells.tops.iter().enumerate())
            .filter(|&(_, &t)| t != NONE)
            .map(|(cell, &t)| (cell as u32, t))
            .collect();
        let ends = self.open.take().map(|(ends, _)| ends).unwrap_or_default();
        let mut slot_of = vec![NONE; self.cells.tops.len()];
        let mut open_cells = Vec::new();
        let open = (ends.into_iter())
            .map(|e| {
                let slot = &mut slot_of[e.cell as usize];
                if *slot == NONE {
                    *slot = open_cells.len() as u32;
                    open_cells.push(e.cell);
                }
                Open {
                    x: e.x,
                    slot: *slot,
                    link: e.link,
                }
            })
            .collect();
        Some(Ends {
            touched,
            open_cells,
            open,
        })
    }
}

/// Appends the chunks in order to `l`'s facts.
fn stitch(l: &mut Lowerer, mut parts: Vec<Part>) {
    // In order: where each chunk starts, and the values its open ends take.
    let mut at = Vec::with_capacity(parts.len());
    let mut closed = Vec::with_capacity(parts.len());
    let mut accs = Vec::with_capacity(parts.len());
    let mut o = Offsets::of(&l.facts);
    let tops = &mut l.cells.tops;
    for p in &parts {
        at.push(o);
        closed.push(p.ends.closed(tops));
        for &(cell, t) in &p.ends.touched {
            tops[cell as usize] = shift(t, o.acc);
        }
        accs.push(p.facts.acc_op.len());
        o = o.plus(&p.facts);
    }
    let first_acc = at.first().map_or(0, |o| o.acc) as usize;
    let keep_cells = l.keep_cells;
    let f = &mut l.facts;
    macro_rules! take {
        ($field:ident) => {
            parts
                .iter_mut()
                .map(|p| std::mem::take(&mut p.facts.$field))
                .collect()
        };
    }
    append(&mut f.op_site, take!(op_site), 0, |_, v| v);
    append(&mut f.op_iter_start, take!(op_iter_start), 1, |j, v| {
        (u64::from(v) + at[j].iters) as u32
    });
    append(&mut f.iters, take!(iters), 0, |_, v| v);
    append(&mut f.op_scope, take!(op_scope), 0, |j, v| {
        shift(v, at[j].scope)
    });
    append(&mut f.scopes, take!(scopes), 0, |j, s: Scope| Scope {
        parent: shift(s.parent, at[j].scope),
        lit: match s.lit {
            Lit::Cond { inst, value } => Lit::Cond {
                inst: shift(inst, at[j].cond),
                value,
            },
            Lit::Runs { inst, trip } => Lit::Runs {
                inst: shift(inst, at[j].whiles),
                trip,
            },
        },
        start: shift(s.start, at[j].acc),
    });
    let instance = |j: usize, i: Instance| Instance {
        iter_start: shift(i.iter_start, at[j].inst_iters),
        ..i
    };
    append(&mut f.cond_insts, take!(cond_insts), 0, instance);
    append(&mut f.while_insts, take!(while_insts), 0, instance);
    append(&mut f.inst_iters, take!(inst_iters), 0, |_, v| v);
    append(&mut f.acc_op, take!(acc_op), 0, |j, v| shift(v, at[j].op));
    append(&mut f.acc_role, take!(acc_role), 0, |_, v| v);
    append(&mut f.acc_prev, take!(acc_prev), 0, |j, v| {
        shift(v, at[j].acc)
    });
    append(&mut f.acc_link, take!(acc_link), 0, |j, v| {
        shift(v, at[j].acc)
    });
    append(&mut f.acc_slot, take!(acc_slot), 0, |j, v| {
        shift(v, at[j].slot)
    });
    if keep_cells {
        append(&mut f.acc_cell, take!(acc_cell), 0, |_, v| v);
    }
    append(&mut f.slots, take!(slots), 0, |j, s: Slot| Slot {
        op: shift(s.op, at[j].op),
        access: s.access,
    });
    // The open ends, each chunk in its own stretch of the access instances.
    let mut prev = &mut f.acc_prev[first_acc..];
    let mut link = &mut f.acc_link[first_acc..];
    let mut stretches = Vec::with_capacity(parts.len());
    for ((p, closed), n) in parts.iter().zip(closed).zip(accs) {
        let (a, rest) = std::mem::take(&mut prev).split_at_mut(n);
        prev = rest;
        let (b, rest) = std::mem::take(&mut link).split_at_mut(n);
        link = rest;
        stretches.push((a, b, &p.ends.open, closed));
    }
    stretches
        .into_par_iter()
        .for_each(|(prev, link, open, closed)| {
            for e in open {
                let v = Ends::value(e, &closed);
                if e.link {
                    link[e.x as usize] = v;
                } else {
                    prev[e.x as usize] = v;
                }
            }
        });
}

/// The spare room of `v` cut into consecutive pieces of `sizes` (which
/// must fit in it).
pub(super) fn spare_pieces<T>(
    v: &mut Vec<T>,
    sizes: impl Iterator<Item = usize>,
) -> Vec<&mut [MaybeUninit<T>]> {
    let mut rest = v.spare_capacity_mut();
    sizes
        .map(|n| {
            let (piece, tail) = std::mem::take(&mut rest).split_at_mut(n);
            rest = tail;
            piece
        })
        .collect()
}

/// Appends `parts` (each from index `skip`) to `dst`, every value mapped
/// with its chunk's index, the chunks copied in parallel straight into
/// `dst`'s spare capacity; each part is freed once copied.
fn append<T: Copy + Send + Sync>(
    dst: &mut Vec<T>,
    parts: Vec<Vec<T>>,
    skip: usize,
    map: impl Fn(usize, T) -> T + Sync,
) {
    let total: usize = parts.iter().map(|p| p.len().saturating_sub(skip)).sum();
    dst.reserve_exact(total);
    let old = dst.len();
    let sizes = parts.iter().map(|p| p.len().saturating_sub(skip));
    spare_pieces(dst, sizes)
        .into_par_iter()
        .zip(parts)
        .enumerate()
        .for_each(|(j, (out, src))| {
            for (o, &v) in out.iter_mut().zip(src.get(skip..).unwrap_or_default()) {
                o.write(map(j, v));
            }
        });
    // SAFETY: the `total` slots after `old` were each written above: every
    // piece is exactly as long as the part copied into it.
    unsafe { dst.set_len(old + total) };
}
