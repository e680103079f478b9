//! The storage mapping at concrete sizes: per written array, the loop
//! dimensions added to it. A write of cell `c` by an operation at iteration
//! vector `x` goes to `(c, e_1(x), …)`: `e = x_L` for a parallel loop `L`
//! whose iterations would otherwise share a cell while a value in it is live
//! (expanded), `e = x_L mod d` for a sequential loop `L` whose values must
//! outlive `d - 1` of its iterations (folded); every other loop adds
//! nothing (mod 1: its values share the original cell, as in the program).
//! A read goes to the place its sources wrote, through one affine function
//! of its iteration vector per added dimension (fitted; checked against
//! every source). A writer outside an added loop writes at the loop's lower
//! bound.
//!
//! The mapping is found by repair: start from the original cells, find the
//! accesses the schedule leaves unordered on one place (a race: a write and
//! another access, the parallel loop breaking their order), and add the
//! dimension that separates them: the racing parallel loop, or, once it is
//! added, the sequential loop over which the racing read's value lives
//! (folded modulo the longest such lifetime + 1). The result is race-free
//! and every read's sources are at its place, which makes the contracted
//! program compute what the original does under every order of the
//! parallel iterations (docs/expansion.md §10).

use super::dependences::{neighbours, op_name};
use super::schedule::{Breach, Order};
use crate::expansion::Expansion;
use crate::hash::WordHash;
use crate::model::{ArrayId, CounterId, Program, Site, Var};
use std::collections::{BTreeMap, HashMap};

/// Cell -> its array: looked up once per access instance.
type CellArrays = HashMap<u32, ArrayId, WordHash>;

/// A dimension added to an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    /// Indexed by this parallel loop's counter.
    Expand(CounterId),
    /// Indexed by this sequential loop's counter modulo `d`.
    Fold(CounterId, i64),
}

impl Dim {
    pub fn counter(self) -> CounterId {
        match self {
            Dim::Expand(c) | Dim::Fold(c, _) => c,
        }
    }
}

/// How one read access of a contracted array finds its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadPlace {
    /// Every instance sees the initial value: the original array.
    Original,
    /// Per added dimension, the source's counter as an affine function of
    /// the read's loop counters (coefficients by loop, constant).
    Fitted(Vec<(Vec<i64>, i64)>),
}

/// Where each read access `(site, access)` of an array reads.
pub type ReadPlaces = BTreeMap<(Site, usize), ReadPlace>;

/// The mapping of one array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayMap {
    pub array: ArrayId,
    pub name: String,
    pub dims: Vec<Dim>,
    /// Read accesses `(site, access)` of the array and where they read.
    pub reads: ReadPlaces,
    /// Declared cells of the original array at these sizes.
    pub original: u64,
    /// Cells of the contracted array at these sizes.
    pub cells: u64,
    /// Whether some write may miss its cell (non-affine subscript, unknown
    /// condition): such an array is not contracted.
    pub may_write: bool,
}

/// Why no mapping was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unmappable {
    pub array: String,
    pub reason: String,
    /// The site the reason points at, if any.
    pub site: Option<Site>,
    /// The array needs expanding but some write may miss its cell: the
    /// pairing gives it maximal static expansion (`storage::pair`).
    pub dynamic: bool,
}

/// The storage mapping of every array at one size.
#[derive(Clone, Debug)]
pub struct Mapping {
    pub arrays: Vec<ArrayMap>,
    /// Lower bound and extent of every loop's counter at these sizes, by
    /// counter id (0, 0 for a loop that never runs).
    pub ranges: Vec<(i64, i64)>,
}

impl Mapping {
    pub fn total(&self) -> u64 {
        self.arrays.iter().map(|a| a.cells).sum()
    }

    pub fn original(&self) -> u64 {
        self.arrays.iter().map(|a| a.original).sum()
    }
}

/// Lower bound and extent per loop: from the bounds when they use only
/// parameters, else from the operations inside.
pub(crate) fn loop_ranges(program: &Program, exp: &Expansion, order: &Order) -> Vec<(i64, i64)> {
    let f = &exp.inst.facts;
    let mut lo = vec![i64::MAX; program.counters.len()];
    let mut hi = vec![i64::MIN; program.counters.len()];
    for op in 0..f.n_ops() as u32 {
        for (d, &c) in order.loops(op).iter().enumerate() {
            let v = f.op_iter(op)[d];
            lo[c.index()] = lo[c.index()].min(v);
            hi[c.index()] = hi[c.index()].max(v);
        }
    }
    let params: Vec<i64> = f.params.iter().map(|&(_, v)| v).collect();
    for f in super::nodes::fors(&program.body) {
        let (c, a) = (f.counter, &f.lower.affine);
        if !a.uses_counters() {
            if let Some(v) = a.eval(|v| match v {
                Var::Param(p) => params.get(p.index()).copied().unwrap_or(0),
                Var::Counter(_) => 0,
            }) {
                lo[c.index()] = v;
            }
        }
    }
    lo.iter()
        .zip(&hi)
        .map(|(&l, &h)| match (l, h) {
            (i64::MAX, _) => (0, 0),
            (l, i64::MIN) => (l, 0),
            (l, h) => (l, (h - l + 1).max(0)),
        })
        .collect()
}

/// The unreduced index of `op` in added dimension `d`: its counter of the
/// dimension's loop, or the loop's lower bound when outside it.
pub(crate) fn raw(order: &Order, ranges: &[(i64, i64)], op: u32, d: Dim) -> i64 {
    let c = d.counter();
    order.counter_at(op, c).unwrap_or(ranges[c.index()].0)
}

/// Where `op`'s write goes in the dimensions `ds` added to its array (its
/// cell aside): each dimension's index, reduced.
pub(crate) fn write_place(order: &Order, ranges: &[(i64, i64)], ds: &[Dim], op: u32) -> Vec<i64> {
    ds.iter()
        .map(|&d| Places::reduce(d, raw(order, ranges, op, d)))
        .collect()
}

/// One step of the repair: places for every access under `dims`.
struct Places<'a> {
    order: &'a Order<'a>,
    ranges: &'a [(i64, i64)],
}

impl Places<'_> {
    /// The unreduced index of `op` in added dimension `d`.
    fn raw(&self, op: u32, d: Dim) -> i64 {
        raw(self.order, self.ranges, op, d)
    }

    fn reduce(d: Dim, v: i64) -> i64 {
        match d {
            Dim::Expand(_) => v,
            Dim::Fold(_, m) => v.rem_euclid(m),
        }
    }
}

/// The storage mapping of `program` under the schedule of `order`.
pub fn compute(program: &Program, exp: &Expansion, order: &Order) -> Result<Mapping, Unmappable> {
    let f = &exp.inst.facts;
    let ranges = loop_ranges(program, exp, order);
    let n_arrays = program.arrays.len();
    let mut dims: Vec<Vec<Dim>> = vec![Vec::new(); n_arrays];
    // The array of every cell touched, and which arrays may-write.
    let mut cell_array = CellArrays::default();
    let mut may_write = vec![false; n_arrays];
    for x in 0..f.n_accs() as u32 {
        let cell = f.acc_cell[x as usize];
        let a = *cell_array.entry(cell).or_insert_with(|| {
            f.cells
                .locate(cell as usize)
                .map_or(ArrayId(u32::MAX), |(a, _)| a)
        });
        if f.is_write(x) && f.is_may(x) && a.index() < n_arrays {
            may_write[a.index()] = true;
        }
    }
    let places = Places {
        order,
        ranges: &ranges,
    };
    let name = |a: ArrayId| program.array_decl(a).name.clone();
    let mut reads = Vec::new();
    for _round in 0..4 * program.counters.len() + 4 {
        reads = fit_reads(program, exp, &places, &dims)?;
        let races = races(exp, &places, &dims, &reads, &cell_array);
        if races.is_empty() {
            break;
        }
        let mut changed = false;
        for (a, first, second, kind, breach) in races {
            let ai = a.index();
            let Breach::Loop(l) = breach else {
                return Err(Unmappable {
                    array: name(a),
                    reason: format!(
                        "the schedule runs {} no earlier than {} on one cell, in one iteration of \
                         every common loop: no loop dimension separates them",
                        op_name(exp, first),
                        op_name(exp, second)
                    ),
                    site: Some(f.site(second)),
                    dynamic: false,
                });
            };
            if dims[ai].iter().any(|d| d.counter() == l) {
                // Already expanded along l: the value must outlive an
                // iteration of a sequential loop around.
                let read = match kind {
                    Some(super::dependences::Kind::Output) => None,
                    Some(super::dependences::Kind::Anti) => Some(first),
                    None => Some(second),
                };
                let fold = read.and_then(|r| fold_for(exp, order, a, r, &dims[ai], &cell_array));
                match fold {
                    Some(d) if !dims[ai].contains(&d) => {
                        dims[ai].push(d);
                        // Outer loops first, as they nest.
                        dims[ai].sort_by_key(|x| x.counter());
                        changed = true;
                    }
                    _ => {
                        return Err(Unmappable {
                            array: name(a),
                            reason: format!(
                                "{} and {} share a place under {} {} even with it expanded",
                                op_name(exp, first),
                                op_name(exp, second),
                                reordering(order),
                                program.counter_decl(l).name
                            ),
                            site: Some(f.site(second)),
                            dynamic: false,
                        })
                    }
                }
            } else if may_write[ai] {
                return Err(Unmappable {
                    array: name(a),
                    reason: format!(
                        "{} {} needs it expanded, but some write may miss its cell \
                         (a non-affine subscript or an unknown condition): maximal static \
                         expansion is the transformation for it",
                        reordering(order),
                        program.counter_decl(l).name
                    ),
                    site: Some(f.site(second)),
                    dynamic: true,
                });
            } else {
                dims[ai].push(Dim::Expand(l));
                dims[ai].sort_by_key(|x| x.counter());
                changed = true;
            }
            if changed {
                break;
            }
        }
        if !changed {
            break;
        }
    }
    // The repair adds a dimension per race; a later one may make an earlier
    // one useless (a loop whose counter the cell already determines): drop
    // every dimension the mapping stays race-free without.
    for a in 0..n_arrays {
        let mut k = 0;
        while k < dims[a].len() {
            let mut fewer = dims.clone();
            fewer[a].remove(k);
            let ok = fit_reads(program, exp, &places, &fewer).ok().filter(|r| {
                races(exp, &places, &fewer, r, &cell_array)
                    .iter()
                    .all(|race| race.0.index() != a)
            });
            match ok {
                Some(r) => {
                    dims = fewer;
                    reads = r;
                }
                None => k += 1,
            }
        }
    }
    let last_check = races(exp, &places, &dims, &reads, &cell_array);
    if let Some((a, x, y, _, l)) = last_check.first() {
        let under = match l {
            Breach::Loop(l) => format!("across iterations of {}", program.counter_decl(*l).name),
            Breach::Body => "in one iteration".to_string(),
        };
        return Err(Unmappable {
            array: name(*a),
            reason: format!(
                "{} and {} still share a place the schedule does not keep them in order on ({under})",
                op_name(exp, *x),
                op_name(exp, *y),
            ),
            site: Some(f.site(*y)),
            dynamic: false,
        });
    }
    let arrays = (0..n_arrays)
        .map(|k| {
            let id = ArrayId(k as u32);
            let original: u64 = (0..program.array_decl(id).dims.len())
                .map(|d| f.cells.range(id, d).1.max(0) as u64)
                .product();
            let factor: u64 = dims[k]
                .iter()
                .map(|&d| match d {
                    Dim::Expand(c) => ranges[c.index()].1.max(0) as u64,
                    Dim::Fold(_, m) => m as u64,
                })
                .product();
            ArrayMap {
                array: id,
                name: name(id),
                dims: dims[k].clone(),
                reads: reads[k].clone(),
                original,
                cells: original.saturating_mul(factor),
                may_write: may_write[k],
            }
        })
        .collect();
    Ok(Mapping { arrays, ranges })
}

/// What reorders a loop's iterations: `parallel i`, or `the schedule's loop i`.
fn reordering(order: &Order) -> &'static str {
    if order.schedule.affine.is_some() {
        "the schedule's loop"
    } else {
        "parallel"
    }
}

/// The read access `(site, access)` of a read access instance.
fn read_key(exp: &Expansion, x: u32) -> (Site, usize) {
    let f = &exp.inst.facts;
    let slot = f.acc_slot[x as usize] as usize;
    (f.site(f.op(x)), f.slots[slot].access as usize)
}

/// Per array, where each read access of it reads: the source's index in
/// every added dimension as one affine function of the read's counters.
fn fit_reads(
    program: &Program,
    exp: &Expansion,
    places: &Places,
    dims: &[Vec<Dim>],
) -> Result<Vec<ReadPlaces>, Unmappable> {
    let f = &exp.inst.facts;
    let flow = &exp.inst.flow;
    // (array, site, access) -> [(iteration, per-dim source index or None)]
    type Points = Vec<(Vec<i64>, Option<Vec<i64>>)>;
    let mut by_access: BTreeMap<(u32, Site, usize), Points> = BTreeMap::new();
    for r in flow.iter() {
        let a = r.array();
        let ds = &dims[a.index()];
        if ds.is_empty() {
            continue;
        }
        let op = f.slots[r.index()].op;
        let mut value: Option<Vec<i64>> = None;
        for &src in flow.source_ops(r.index()) {
            let v: Vec<i64> = ds.iter().map(|&d| places.raw(src, d)).collect();
            match &value {
                Some(w) if *w != v => {
                    return Err(Unmappable {
                        array: program.array_decl(a).name.clone(),
                        reason: format!(
                            "the read of `{}` in {} (access {}) has sources at two places ({} among them)",
                            program.array_decl(a).name,
                            op_name(exp, op),
                            r.access(),
                            op_name(exp, src)
                        ),
                        site: Some(r.site()),
                        dynamic: false,
                    })
                }
                _ => value = Some(v),
            }
        }
        by_access
            .entry((a.0, r.site(), r.access()))
            .or_default()
            .push((f.op_iter(op).to_vec(), value));
    }
    let mut out = vec![BTreeMap::new(); dims.len()];
    for ((a, site, access), points) in by_access {
        let ds = &dims[a as usize];
        if points.iter().all(|(_, v)| v.is_none()) {
            out[a as usize].insert((site, access), ReadPlace::Original);
            continue;
        }
        let mut fits = Vec::new();
        for k in 0..ds.len() {
            let pts: Vec<(&[i64], i64)> = points
                .iter()
                .filter_map(|(x, v)| v.as_ref().map(|v| (x.as_slice(), v[k])))
                .collect();
            let n = pts.first().map_or(0, |p| p.0.len());
            let Some(fit) = crate::fit::simplest(&pts, n) else {
                return Err(Unmappable {
                    array: program.array_decl(ArrayId(a)).name.clone(),
                    reason: format!(
                        "read {access} of {}: the sources' {} is no affine function of the read's iteration",
                        program.site_name(site),
                        program.counter_decl(ds[k].counter()).name
                    ),
                    site: Some(site),
                    dynamic: false,
                });
            };
            fits.push(fit);
        }
        out[a as usize].insert((site, access), ReadPlace::Fitted(fits));
    }
    Ok(out)
}

fn eval_fit(fit: &(Vec<i64>, i64), x: &[i64]) -> i64 {
    fit.0.iter().zip(x).fold(fit.1, |acc, (c, v)| {
        acc.saturating_add(c.saturating_mul(*v))
    })
}

type Race = (ArrayId, u32, u32, Option<super::dependences::Kind>, Breach);

/// The neighbouring accesses on one place that the schedule leaves
/// unordered, at most one per array, with the parallel loop breaking them.
fn races(
    exp: &Expansion,
    places: &Places,
    dims: &[Vec<Dim>],
    reads: &[ReadPlaces],
    cell_array: &CellArrays,
) -> Vec<Race> {
    let f = &exp.inst.facts;
    // Place ids: by cell where the array is not expanded (most accesses:
    // no key to hash), by cell and expanded indices elsewhere.
    let mut plain: HashMap<u32, u32, WordHash> = HashMap::default();
    let mut ids: HashMap<(u32, Vec<i64>), u32, WordHash> = HashMap::default();
    let mut events: Vec<(u32, u32, bool)> = Vec::with_capacity(f.n_accs());
    let mut place_array: Vec<ArrayId> = Vec::new();
    for x in 0..f.n_accs() as u32 {
        let cell = f.acc_cell[x as usize];
        let Some(&a) = cell_array.get(&cell) else {
            continue;
        };
        let ds = dims.get(a.index()).map_or(&[][..], |v| v.as_slice());
        let op = f.op(x);
        let mut put = |e: Vec<i64>, write: bool| {
            let next = place_array.len() as u32;
            let id = if e.is_empty() {
                *plain.entry(cell).or_insert(next)
            } else {
                *ids.entry((cell, e)).or_insert(next)
            };
            if id == next {
                place_array.push(a);
            }
            events.push((id, op, write));
        };
        if f.is_read(x) {
            if ds.is_empty() {
                put(Vec::new(), false);
            } else if let Some(ReadPlace::Fitted(fits)) = reads[a.index()].get(&read_key(exp, x)) {
                let it = f.op_iter(op);
                let e = ds
                    .iter()
                    .zip(fits)
                    .map(|(&d, fit)| Places::reduce(d, eval_fit(fit, it)))
                    .collect();
                put(e, false);
            }
        }
        if f.is_write(x) {
            put(write_place(places.order, places.ranges, ds, op), true);
        }
    }
    events.sort_unstable();
    events.dedup();
    let mut out: Vec<Race> = Vec::new();
    let mut seen = vec![false; dims.len()];
    neighbours(&events, |place, a, b, kind| {
        let arr = place_array[place as usize];
        if seen.get(arr.index()).copied().unwrap_or(true) {
            return;
        }
        if let Some(l) = places.order.broken_by(a, b) {
            seen[arr.index()] = true;
            out.push((arr, a, b, kind, l));
        }
    });
    out
}

/// The sequential loop over which read `r`'s value lives, folded modulo
/// the longest such lifetime on array `a` + 1.
fn fold_for(
    exp: &Expansion,
    order: &Order,
    a: ArrayId,
    r: u32,
    dims: &[Dim],
    cell_array: &CellArrays,
) -> Option<Dim> {
    let f = &exp.inst.facts;
    let flow = &exp.inst.flow;
    // The racing read's access; its value's source, or (when this instance
    // sees the initial value) the source of another instance of the access.
    let x = (0..f.n_accs() as u32).find(|&x| {
        f.op(x) == r && f.is_read(x) && cell_array.get(&f.acc_cell[x as usize]) == Some(&a)
    })?;
    let key = read_key(exp, x);
    let slot = f.acc_slot[x as usize] as usize;
    let (src, r) = match flow.source_ops(slot).first() {
        Some(&s) => (s, r),
        None => flow
            .iter()
            .filter(|rd| (rd.site(), rd.access()) == key)
            .find_map(|rd| {
                let s = *flow.source_ops(rd.index()).first()?;
                Some((s, f.slots[rd.index()].op))
            })?,
    };
    let (m, _) = order.split(src, r)?;
    if order.schedule.is_parallel(m) || dims.iter().any(|d| d.counter() == m) {
        return None;
    }
    let mut longest = 0i64;
    for rd in flow.iter() {
        if rd.array() != a {
            continue;
        }
        let op = f.slots[rd.index()].op;
        let Some(tr) = order.counter_at(op, m) else {
            continue;
        };
        for &s in flow.source_ops(rd.index()) {
            if let Some(tw) = order.counter_at(s, m) {
                longest = longest.max(tr - tw);
            }
        }
    }
    Some(Dim::Fold(m, longest + 1))
}
