//! A top-level `for` loop lowered on several threads straight into the
//! final tables, when where each trip's facts go is known before it runs.
//!
//! Either every trip makes as many operations, access instances, slots,
//! scopes, ... (no loop bound or static condition inside the loop mentions
//! its counter): the first trip is walked in place and measured, and trip
//! `t` starts at `end of the first + (t - 1) × one trip` in every table.
//! Or the trips differ but make no guard (no unknown condition inside):
//! `facts::count::per_trip` counts what each makes up front. The trips
//! left are cut into chunks of about as many access instances, each walked
//! on the pool from a blank cell table with its ids already final
//! (`Lowerer::base`), into scratch tables flushed into the chunk's own
//! stretch of the final tables' spare room every [`FLUSH`] access
//! instances: nothing is copied after the walk (`split`'s stitch), no
//! second set of tables is held, and the scratch stays in cache. The open
//! ends (`split::OpenEnd`) are closed in place afterwards, chunk by chunk.
//!
//! A chunk that fills its stretches other than exactly, numbers a cell or
//! fails makes the rest of the loop walk sequentially, which gives the same
//! facts or the same error; so does a prediction over a budget. Loops with
//! both (trips that differ and guards) are stitched (`split`).

use super::split::{self, Ends, Offsets};
use super::Lowerer;
use crate::facts::{Facts, LowerError};
use crate::model::{For, Node};
use rayon::prelude::*;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Loops lowered in place so far, in this process (for tests: that this
/// path ran at all).
static PLACED_LOOPS: AtomicU64 = AtomicU64::new(0);

/// How many loops this process has lowered in place.
pub fn placed_loops() -> u64 {
    PLACED_LOOPS.load(Relaxed)
}

/// Chunks that made other sizes than predicted, so far (a wrong prediction
/// costs the parallel walk, not the facts: tests require none).
static MISPREDICTED: AtomicU64 = AtomicU64::new(0);

/// How many chunks made other sizes than predicted in this process.
pub fn place_mispredicted() -> u64 {
    MISPREDICTED.load(Relaxed)
}

/// Access instances a chunk gathers before it flushes them (at the end of
/// a trip): about 0.5 MB of scratch with every table, well inside a core's
/// cache.
pub(super) const FLUSH: usize = 1 << 15;

/// Trips per thread the loop needs at least (`SplitAt::place_trips`): with
/// fewer, the first trip (walked alone when the trips are alike) is too
/// large a part of the loop, and the chunks too few to even out.
pub(super) const MIN_TRIPS_PER_THREAD: u128 = 4;

/// One table's stretch of spare room for a chunk, filled from the front.
struct Fill<'f, T> {
    out: &'f mut [MaybeUninit<T>],
    at: usize,
}

impl<T: Copy> Fill<'_, T> {
    /// Moves `scratch` to the end of what is filled; `false` (nothing
    /// moved) when it does not fit.
    fn put(&mut self, scratch: &mut Vec<T>) -> bool {
        let Some(out) = self.out.get_mut(self.at..self.at + scratch.len()) else {
            return false;
        };
        for (o, &v) in out.iter_mut().zip(scratch.iter()) {
            o.write(v);
        }
        self.at += scratch.len();
        scratch.clear();
        true
    }

    fn full(&self) -> bool {
        self.at == self.out.len()
    }
}

/// Splits the spare room of `v` into consecutive stretches of `sizes`.
fn carve<T>(v: &mut Vec<T>, sizes: impl Iterator<Item = usize>) -> Vec<Fill<'_, T>> {
    (split::spare_pieces(v, sizes).into_iter())
        .map(|out| Fill { out, at: 0 })
        .collect()
}

/// Declares [`Stretches`] over the tables the walk fills, each with the
/// [`Offsets`] count that sizes it (`op_iter_start` holds one entry per
/// operation after its leading 0).
macro_rules! tables {
    ($($table:ident: $ty:ty = $kind:ident),+ $(,)?) => {
        /// A chunk's stretch of every table.
        struct Stretches<'f> {
            $($table: Fill<'f, $ty>,)+
        }

        impl Stretches<'_> {
            /// Each chunk's stretches, for chunks making `sizes` (the
            /// access instances' cells only when `cells`).
            fn carve<'f>(f: &'f mut Facts, sizes: &[Offsets], cells: bool) -> Vec<Stretches<'f>> {
                let acc_cell = |o: &Offsets| if cells { o.acc } else { 0 };
                    $(let mut $table = carve(
                    &mut f.$table,
                    sizes.iter().map(|o| tables!(@size o, acc_cell, $table, $kind)),
                ).into_iter();)+
                sizes
                    .iter()
                    .map(|_| Stretches {
                        $($table: $table.next().expect("one stretch per chunk"),)+
                    })
                    .collect()
            }

            /// Moves the scratch tables of `c` into the stretches and
            /// numbers what follows after them; `false` when they overflow.
            fn flush(&mut self, c: &mut Lowerer) -> bool {
                let next = Offsets::of(&c.facts)
                    .zip(Offsets::from_base(c.base), |a, b| a + b);
                let fits = true $(&& self.$table.put(&mut c.facts.$table))+;
                c.base = next.base();
                fits
            }

            fn full(&self) -> bool {
                true $(&& self.$table.full())+
            }
        }

        /// Reserves room for `more` (each table by its count) in `f`.
        fn reserve(f: &mut Facts, more: Offsets, cells: bool) {
            let acc_cell = |o: &Offsets| if cells { o.acc } else { 0 };
            $(f.$table.reserve_exact(tables!(@size &more, acc_cell, $table, $kind));)+
        }

        /// Lengthens every table of `f` by `more`.
        ///
        /// # Safety
        /// The `more` entries after each table's end must have been written
        /// (every chunk's stretches [`Stretches::full`]).
        unsafe fn extend(f: &mut Facts, more: Offsets, cells: bool) {
            let acc_cell = |o: &Offsets| if cells { o.acc } else { 0 };
            $(
                let n = tables!(@size &more, acc_cell, $table, $kind);
                // SAFETY: by the caller, these entries are written.
                unsafe { f.$table.set_len(f.$table.len() + n) };
            )+
        }
    };
    (@size $o:expr, $cells:ident, acc_cell, $kind:ident) => { $cells($o) as usize };
    (@size $o:expr, $cells:ident, $table:ident, $kind:ident) => { $o.$kind as usize };
}

tables! {
    op_site: u32 = op,
    op_iter_start: u32 = op,
    iters: i64 = iters,
    op_scope: u32 = op,
    scopes: crate::facts::Scope = scope,
    cond_insts: crate::facts::Instance = cond,
    while_insts: crate::facts::Instance = whiles,
    inst_iters: i64 = inst_iters,
    acc_op: u32 = acc,
    acc_role: u8 = acc,
    acc_prev: u32 = acc,
    acc_link: u32 = acc,
    acc_slot: u32 = acc,
    acc_cell: u32 = acc,
    slots: crate::facts::Slot = slot,
}

/// What some trips of the loop make.
#[derive(Clone, Copy)]
struct Made {
    /// Of every table.
    facts: Offsets,
    /// Access instances and loop iterations, as the budgets count them.
    count: u64,
    iterations: u64,
}

impl Made {
    fn zip(self, o: Made, op: impl Fn(u64, u64) -> u64) -> Made {
        Made {
            facts: self.facts.zip(o.facts, &op),
            count: op(self.count, o.count),
            iterations: op(self.iterations, o.iterations),
        }
    }

    fn times(self, k: u64) -> Made {
        Made {
            facts: self.facts.times(k),
            count: self.count.saturating_mul(k),
            iterations: self.iterations.saturating_mul(k),
        }
    }
}

/// What the trips of the loop from its first chunked one make, by trip.
enum PerTrip {
    /// Every trip the same.
    Alike(Made),
    /// Counted up front (`facts::count::per_trip`): what the trips before
    /// each make, from 0 (one more entry than trips).
    Counted(Vec<Made>),
}

impl PerTrip {
    /// What the first `k` of these trips make.
    fn before(&self, k: u128) -> Made {
        match self {
            PerTrip::Alike(one) => one.times(k as u64),
            PerTrip::Counted(before) => before[k as usize],
        }
    }

    /// `n` trips cut into at most `chunks` ranges of about as many access
    /// instances each.
    fn cut(&self, n: u128, chunks: u128) -> Vec<(u128, u128)> {
        let total = u128::from(self.before(n).facts.acc);
        let mut ends: Vec<u128> = (1..chunks)
            .map(|k| {
                let target = total * k / chunks;
                // The first trip count whose instances reach `target`.
                let (mut lo, mut hi) = (0, n);
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    if u128::from(self.before(mid).facts.acc) < target {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                lo
            })
            .collect();
        ends.push(n);
        let mut start = 0;
        (ends.into_iter())
            .filter_map(|end| {
                let r = (start, end);
                start = start.max(end);
                (r.0 < r.1).then_some(r)
            })
            .collect()
    }
}

/// Whether `nodes` hold an `if` or `while` with an unknown condition (its
/// guards make scopes and condition instances, which `facts::count` does
/// not count).
fn guarded(nodes: &[Node]) -> bool {
    nodes.iter().any(|n| match n {
        Node::Stmt(_) => false,
        Node::For(g) => guarded(&g.body),
        Node::While(w) => !w.cond.cond.is_static() || guarded(&w.body),
        Node::If(i) => {
            i.branches
                .iter()
                .any(|(c, body)| !c.cond.is_static() || guarded(body))
                || i.otherwise.as_ref().is_some_and(|b| guarded(b))
        }
    })
}

/// Walks loop `f` (at the top level, outside every guard) from `lo` to
/// `hi` as above. `false` when it does not apply (trips that may differ
/// and make guards, or cannot be counted; too few trips): the caller
/// lowers the loop otherwise.
pub(super) fn for_loop<'p>(
    l: &mut Lowerer<'p, '_>,
    f: &'p For,
    lo: i64,
    hi: i64,
) -> Result<bool, LowerError> {
    let Some(range) = split::Trips::of(f, lo, hi) else {
        return Ok(false);
    };
    let threads = rayon::current_num_threads() as u128;
    if threads < 2 || range.n < threads * l.split_at.place_trips {
        return Ok(false);
    }
    // What each trip from `from` on makes.
    let varies = crate::facts::count::Shape::of(l.program, &[]).varies[f.counter.index()];
    let (from, trips) = if !varies {
        // The first trip, walked and measured.
        let before = Made {
            facts: Offsets::of(&l.facts),
            count: l.count,
            iterations: l.iterations,
        };
        l.trips(f, lo, lo)?;
        let after = Made {
            facts: Offsets::of(&l.facts),
            count: l.count,
            iterations: l.iterations,
        };
        (1, PerTrip::Alike(after.zip(before, |a, b| a - b)))
    } else if guarded(&f.body) {
        return Ok(false);
    } else {
        let Ok(dims) = crate::facts::count::dims(l.program, &l.params) else {
            return Ok(false);
        };
        let n = range.n as u64;
        let at = |k: u64| range.value(u128::from(k));
        let Some(counts) =
            crate::facts::count::per_trip(l.program, l.config, &l.params, &dims, f, n, at)
        else {
            return Ok(false);
        };
        let mut before = vec![Made {
            facts: Offsets::default(),
            count: 0,
            iterations: 0,
        }];
        for c in counts {
            let made = Made {
                facts: Offsets {
                    op: c.ops,
                    iters: c.iter_entries,
                    acc: c.instances,
                    slot: c.slots,
                    ..Offsets::default()
                },
                count: c.instances,
                iterations: c.iterations,
            };
            let last = *before.last().expect("starts with one");
            before.push(last.zip(made, u64::saturating_add));
        }
        (0, PerTrip::Counted(before))
    };
    let n = range.n - from;
    let now = Made {
        facts: Offsets::of(&l.facts),
        count: l.count,
        iterations: l.iterations,
    };
    let whole = trips.before(n);
    let end = now.zip(whole, u64::saturating_add);
    let max = l.config.max_instances;
    let value = |t: u128| range.value(from + t);
    if end.count > max.min(u64::from(crate::facts::NONE) - 1)
        || end.iterations > max
        || !end.facts.fit()
    {
        // The sequential walk stops with the budget error where it runs out.
        return l.trips(f, value(0), hi).map(|()| true);
    }
    let ranges = trips.cut(n, threads * u128::from(split::PER_THREAD));
    let at: Vec<Offsets> = (ranges.iter())
        .map(|&(a, _)| now.facts.zip(trips.before(a).facts, |x, y| x + y))
        .collect();
    let sizes: Vec<Offsets> = (ranges.iter())
        .map(|&(a, b)| (trips.before(b).facts).zip(trips.before(a).facts, |x, y| x - y))
        .collect();
    let cells = l.keep_cells;
    reserve(&mut l.facts, whole.facts, cells);
    let blank = l.blank(&split::written(l.program));
    let walked: Option<Vec<Ends>> = {
        let stretches = Stretches::carve(&mut l.facts, &sizes, cells);
        let watch = arrayflow_model::cancel::current();
        (ranges.par_iter().zip(&at).zip(stretches))
            .map(|((&(a, b), &at), out)| {
                arrayflow_model::cancel::watching(watch.clone(), || {
                    chunk(&blank, f, (value(a), value(b - 1)), at, out)
                })
            })
            .collect()
    };
    let Some(walked) = walked else {
        return l.trips(f, value(0), hi).map(|()| true);
    };
    // SAFETY: every chunk filled its stretches exactly (`chunk`), and the
    // stretches tile `whole` after each table's end.
    unsafe { extend(&mut l.facts, whole.facts, cells) };
    l.count = end.count;
    l.iterations = end.iterations;
    // In order: each chunk's open ends take the latest writes before it.
    let tops = &mut l.cells.tops;
    let facts = &mut l.facts;
    for ends in &walked {
        let closed = ends.closed(tops);
        for e in &ends.open {
            let v = Ends::value(e, &closed);
            let table = if e.link {
                &mut facts.acc_link
            } else {
                &mut facts.acc_prev
            };
            table[e.x as usize] = v;
        }
        for &(cell, t) in &ends.touched {
            tops[cell as usize] = t;
        }
    }
    PLACED_LOOPS.fetch_add(1, Relaxed);
    Ok(true)
}

/// Walks the trips `a..=b` of `f` from `blank`, numbering its facts from
/// `at` and flushing them into `out`; `None` when the walk fails, numbers a
/// cell, or does not fill `out` exactly.
fn chunk<'p>(
    blank: &Lowerer<'p, '_>,
    f: &'p For,
    (a, b): (i64, i64),
    at: Offsets,
    mut out: Stretches,
) -> Option<Ends> {
    let mut c = blank.blank(&blank.open.as_ref()?.1);
    c.base = at.base();
    // The scratch holds whole operations only: no leading 0.
    c.facts.op_iter_start.clear();
    let mut v = a;
    loop {
        c.trips(f, v, v).ok()?;
        if (v == b || c.facts.acc_op.len() >= c.split_at.flush) && !out.flush(&mut c) {
            MISPREDICTED.fetch_add(1, Relaxed);
            return None;
        }
        if v == b {
            break;
        }
        v = v.checked_add(f.step)?;
    }
    if !out.full() {
        MISPREDICTED.fetch_add(1, Relaxed);
        return None;
    }
    c.ends()
}
