//! Storage reuse inside an array (storage paper §3–4, the successive modulo
//! of Lefebvre–Feautrier and Darte, SMO's conflict sets): a temporary (an
//! array whose final contents are not results) that the mapping keeps as
//! it is may still hold fewer cells than it declares, when not all of its
//! values are live at once. A *modular mapping* sends cell `c` to the place
//! `(a·c) mod M`, one linear form of its subscripts modulo a size.
//!
//! At concrete sizes: a value (a write of a cell) is live from its write to
//! its reads (a dead value at its write alone). Two values of different
//! cells *conflict* when the schedule does not order the end of one before
//! the other's write: some read of the first may run after the second's
//! write (the schedule is a partial order: operations it leaves unordered
//! may run either way). Reads happen before the write of their operation,
//! so a value last read by the operation that writes another does not
//! conflict with it. The conflict set D holds the differences `c1 − c2` of
//! conflicting cells; a form `a` keeps them apart modulo `M` when `a·d ≢ 0
//! (mod M)` for every d in D, which `M = 1 + max |a·d|` ensures as soon as
//! `a·d ≠ 0`. The forms searched are small: each coefficient −2..2, or, on
//! the last dimension but one, ±1 or ±2 times the last dimension's extent
//! (a row-major linearisation); the one with the fewest cells wins (ties:
//! fewer extents, smaller coefficients, then the order of the search).
//!
//! Only arrays every read of which has one source (no initial value, no
//! may-access), of at most [`MAX_DIMS`] dimensions and [`MAX_VALUES`]
//! values are candidates, and a mapping is used only when `M` is below the
//! declared cells. Candidates of one shape are also tried merged into one
//! virtual array indexed first by `k` (inter-array reuse). `emit` fits `M`
//! over its sample sizes as an affine function of the parameters ([`fit`]),
//! checks it at every sample and validates the program at other sizes;
//! `prove` then proves the layout for every parameter value ([`layout`]; a
//! form with an extent as a coefficient when the modulus is a multiple of
//! that extent).
//! [`simulate`] is the plain reference: it runs the operations in an order
//! the schedule allows with the array laid out by a mapping and checks that
//! every read finds its source's value in its place.

use super::mapping::Mapping;
use super::schedule::Order;
use crate::expansion::Expansion;
use crate::model::{
    Access, Affine, ArrayId, BinOp, Expr, ExprKind, ParamId, Program, Range, Span, StmtKind,
    Subscript, Var,
};
use std::collections::{BTreeSet, HashMap, HashSet};

/// The most values of an array (or a merged group) whose conflicts are
/// found, pairwise.
pub const MAX_VALUES: usize = 4000;

/// The most dimensions of an array tried (a merged group has one more).
pub const MAX_DIMS: usize = 3;

/// One coefficient of a form: `scale`, times the extent of the array's last
/// dimension when `stride`.
pub type Coef = (i64, bool);

/// A linear form of a cell's subscripts, one coefficient per dimension.
pub type Form = Vec<Coef>;

/// The modular mapping of one array at one size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Modular {
    /// The array (the first of a merged group: it holds the storage).
    pub array: ArrayId,
    /// A merged group, in the order of its `k` index; empty for one array.
    pub merged: Vec<ArrayId>,
    pub name: String,
    /// The form chosen and its modulus (the cells) at this size: the
    /// least there, or the fitted formula's value once fitted.
    pub form: Form,
    pub modulus: i64,
    /// The least modulus of any form at this size.
    pub least: i64,
    /// Every form that keeps the conflicts apart, with its least modulus,
    /// in the order of preference (what [`fit`] chooses from across sizes).
    pub valid: Vec<(Form, i64)>,
    /// Distinct conflict differences (both signs).
    pub conflicts: usize,
    /// Values (writes) of the array at this size.
    pub values: usize,
    /// The modulus as a formula in the parameters, once fitted across sizes.
    pub formula: Option<Affine>,
    /// Whether the modulus is below the declared cells (else the array
    /// keeps them).
    pub worth: bool,
}

/// Why an array is no candidate, per array.
pub type Refused = Vec<(ArrayId, String)>;

/// A value: the cell written (subscripts), its write and its reads.
struct Value {
    cell: Vec<i64>,
    write: u32,
    reads: Vec<u32>,
}

/// Whether the schedule runs `a` before `b` (or they are one operation,
/// whose reads come before its write) in every order it allows.
pub(crate) fn surely_before(order: &Order, a: u32, b: u32) -> bool {
    if a == b {
        return true;
    }
    if order.schedule.affine.is_some() {
        let (ta, tb) = (order.time(a), order.time(b));
        return match ta.iter().zip(tb).position(|(x, y)| x != y) {
            Some(d) => ta[d] < tb[d],
            None => false,
        };
    }
    a < b && order.broken_by(a, b).is_none()
}

/// The values of `array` at these sizes, or why it is no candidate.
fn values(exp: &Expansion, array: ArrayId) -> Result<Vec<Value>, String> {
    let located = super::locate_accesses(exp);
    values_of(exp, &located, &[array])
        .pop()
        .expect("one array asked")
}

/// [`values`] of each of `arrays`, in one pass over the accesses.
fn values_of(
    exp: &Expansion,
    located: &[Option<(ArrayId, Vec<i64>)>],
    arrays: &[ArrayId],
) -> Vec<Result<Vec<Value>, String>> {
    let f = &exp.inst.facts;
    let flow = &exp.inst.flow;
    let at = |a: ArrayId| arrays.iter().position(|&b| b == a);
    let mut by_op: HashMap<u32, usize> = HashMap::new();
    let mut out: Vec<Result<Vec<Value>, String>> = arrays.iter().map(|_| Ok(Vec::new())).collect();
    for x in 0..f.n_accs() as u32 {
        let Some((a, cell)) = &located[x as usize] else {
            continue;
        };
        let Some(k) = at(*a) else { continue };
        let Ok(vals) = &mut out[k] else { continue };
        if f.is_may(x) {
            out[k] = Err("a may-access (a subscript that is not affine)".into());
            continue;
        }
        if f.is_write(x) {
            let op = f.op(x);
            by_op.insert(op, vals.len());
            vals.push(Value {
                cell: cell.clone(),
                write: op,
                reads: Vec::new(),
            });
        }
    }
    for r in flow.iter() {
        let Some(k) = at(r.array()) else { continue };
        let Ok(vals) = &mut out[k] else { continue };
        let src = flow.source_ops(r.index());
        if r.initial() || src.len() != 1 {
            out[k] = Err(if r.initial() {
                "it reads initial values".into()
            } else {
                "a read with several possible sources".into()
            });
            continue;
        }
        // A write operation writes one cell: its value is of one array.
        let Some(&v) = by_op
            .get(&src[0])
            .filter(|&&v| vals.get(v).is_some_and(|x| x.write == src[0]))
        else {
            out[k] = Err("a read whose source writes no cell of it".into());
            continue;
        };
        vals[v].reads.push(f.slots[r.index()].op);
    }
    out
}

/// The distinct differences of conflicting cells (both signs).
fn conflicts(order: &Order, vals: &[Value]) -> BTreeSet<Vec<i64>> {
    let ends: Vec<&[u32]> = vals
        .iter()
        .map(|v| {
            if v.reads.is_empty() {
                std::slice::from_ref(&v.write)
            } else {
                v.reads.as_slice()
            }
        })
        .collect();
    let n = vals.first().map_or(0, |v| v.cell.len());
    let mut d = Differences::new(vals, n);
    // In program order (operations are numbered in it) a value lives from
    // its write to its last read: two conflict when each is written before
    // the other's last read. A sweep over the writes finds those pairs
    // without testing every other.
    let sequential = order.schedule.affine.is_none() && !order.schedule.parallel.contains(&true);
    if sequential {
        let last: Vec<u32> = ends
            .iter()
            .map(|e| e.iter().copied().max().unwrap_or(0))
            .collect();
        let mut by_write: Vec<usize> = (0..vals.len()).collect();
        by_write.sort_by_key(|&k| vals[k].write);
        for (n, &i) in by_write.iter().enumerate() {
            for &j in &by_write[n + 1..] {
                if vals[j].write >= last[i] {
                    break;
                }
                d.add(&vals[i].cell, &vals[j].cell, || true);
            }
        }
        return d.into_set();
    }
    let done = |k: usize, w: u32| ends[k].iter().all(|&e| surely_before(order, e, w));
    for i in 0..vals.len() {
        for j in i + 1..vals.len() {
            d.add(&vals[i].cell, &vals[j].cell, || {
                !done(i, vals[j].write) && !done(j, vals[i].write)
            });
        }
    }
    d.into_set()
}

/// A set of cell differences closed under negation. Most pairs of values
/// repeat a difference already found, so looking one up must be cheap: a
/// bit per difference in the box the cells span, or (a box too large) a
/// hash of fixed-size keys.
enum Differences {
    Bits {
        /// Per dimension: the largest difference, and the index stride.
        dims: Vec<(i64, usize)>,
        bits: Vec<u64>,
    },
    Keys(HashSet<Key, crate::hash::WordHash>, usize),
}

/// A cell difference padded with zeros.
type Key = [i64; MAX_DIMS + 1];

/// The most bits [`Differences::Bits`] takes.
const MAX_BITS: usize = 1 << 24;

impl Differences {
    fn new(vals: &[Value], n: usize) -> Differences {
        let mut dims = Vec::with_capacity(n);
        let mut total = 1usize;
        for d in 0..n {
            let (lo, hi) = (vals.iter().map(|v| v.cell[d]))
                .fold((i64::MAX, i64::MIN), |(l, h), x| (l.min(x), h.max(x)));
            let width = hi
                .checked_sub(lo)
                .and_then(|s| usize::try_from(s).ok())
                .and_then(|s| s.checked_mul(2)?.checked_add(1));
            match width.and_then(|w| Some((w, total.checked_mul(w)?))) {
                Some((w, t)) if t <= MAX_BITS => {
                    dims.push(((w as i64 - 1) / 2, total));
                    total = t;
                }
                _ => return Differences::Keys(HashSet::default(), n),
            }
        }
        Differences::Bits {
            dims,
            bits: vec![0; total.div_ceil(64)],
        }
    }

    /// Adds `a - b` and `b - a` if `a - b` is not in yet and `conflict()`.
    fn add(&mut self, a: &[i64], b: &[i64], conflict: impl FnOnce() -> bool) {
        if a == b {
            return;
        }
        match self {
            Differences::Bits { dims, bits } => {
                let index = |sign: i64| -> usize {
                    (a.iter().zip(b).zip(dims.iter()))
                        .map(|((x, y), &(m, stride))| ((sign * (x - y) + m) as usize) * stride)
                        .sum()
                };
                let k = index(1);
                if bits[k / 64] & (1 << (k % 64)) != 0 || !conflict() {
                    return;
                }
                let back = index(-1);
                for k in [k, back] {
                    bits[k / 64] |= 1 << (k % 64);
                }
            }
            Differences::Keys(set, _) => {
                let mut k = [0; MAX_DIMS + 1];
                for (d, (x, y)) in a.iter().zip(b).enumerate() {
                    k[d] = x - y;
                }
                if set.contains(&k) || !conflict() {
                    return;
                }
                set.insert(k.map(|v| -v));
                set.insert(k);
            }
        }
    }

    fn into_set(self) -> BTreeSet<Vec<i64>> {
        match self {
            Differences::Bits { dims, bits } => {
                let mut out = BTreeSet::new();
                for (w, &word) in bits.iter().enumerate() {
                    let mut rest = word;
                    while rest != 0 {
                        let mut k = w * 64 + rest.trailing_zeros() as usize;
                        rest &= rest - 1;
                        let mut x = vec![0; dims.len()];
                        for (d, &(m, stride)) in dims.iter().enumerate().rev() {
                            x[d] = (k / stride) as i64 - m;
                            k %= stride;
                        }
                        out.insert(x);
                    }
                }
                out
            }
            Differences::Keys(set, n) => set.into_iter().map(|k| k[..n].to_vec()).collect(),
        }
    }
}

/// The conflict set of `array` at the sizes of `exp` under `order`: the
/// differences of cells live together (both signs); or why the array is
/// no candidate.
pub fn conflict_set(
    exp: &Expansion,
    order: &Order,
    array: ArrayId,
) -> Result<BTreeSet<Vec<i64>>, String> {
    let vals = values(exp, array)?;
    if vals.first().is_some_and(|v| v.cell.len() > MAX_DIMS) {
        return Err(format!("more than {MAX_DIMS} dimensions"));
    }
    Ok(conflicts(order, &vals))
}

/// Whether the coefficients `a` keep every difference of `d` apart modulo
/// `m`: no `a·d` a multiple of `m`.
pub fn keeps_apart(a: &[i64], d: &BTreeSet<Vec<i64>>, m: i64) -> bool {
    d.iter().all(|x| {
        let v: i64 = a.iter().zip(x).map(|(p, q)| p * q).sum();
        v.rem_euclid(m) != 0
    })
}

/// The concrete coefficients of `form` when the last dimension spans
/// `extent` cells.
pub fn coefficients(form: &Form, extent: i64) -> Vec<i64> {
    form.iter()
        .map(|&(s, stride)| if stride { s * extent } else { s })
        .collect()
}

/// The forms searched for an array of `n` dimensions, in the order of
/// preference among equal moduli (first nonzero coefficient positive).
pub fn forms(n: usize) -> Vec<Form> {
    let choices = |k: usize| -> Vec<Coef> {
        let mut v: Vec<Coef> = (-2..=2).map(|s| (s, false)).collect();
        if n >= 2 && k == n - 2 {
            v.extend([(1, true), (-1, true), (2, true), (-2, true)]);
        }
        v
    };
    let mut all: Vec<Form> = vec![Vec::new()];
    for k in 0..n {
        all = all
            .into_iter()
            .flat_map(|f| {
                choices(k).into_iter().map(move |c| {
                    let mut g = f.clone();
                    g.push(c);
                    g
                })
            })
            .collect();
    }
    all.retain(|f| f.iter().find(|c| c.0 != 0).is_some_and(|c| c.0 > 0));
    let key = |f: &Form| {
        (
            f.iter().filter(|c| c.1).count(),
            f.iter().map(|c| c.0.abs()).sum::<i64>(),
            f.iter().map(|c| c.0.abs()).max().unwrap_or(0),
        )
    };
    all.sort_by_key(key);
    all
}

/// The least modulus that keeps every difference of `d` apart under the
/// coefficients `a` (`1 + max |a·d|`), None when some `a·d` is 0.
pub fn modulus(a: &[i64], d: &BTreeSet<Vec<i64>>) -> Option<i64> {
    let mut most = 0;
    for x in d {
        let v: i64 = a.iter().zip(x).map(|(p, q)| p * q).sum();
        if v == 0 {
            return None;
        }
        most = most.max(v.abs());
    }
    Some(most + 1)
}

/// The extent of the array's last dimension and its declared cells at
/// these parameter values.
fn extents(program: &Program, array: ArrayId, params: &[i64]) -> Option<(i64, i64)> {
    let value = |a: &Affine| {
        a.eval(|v| match v {
            Var::Param(p) => params.get(p.index()).copied().unwrap_or(0),
            _ => 0,
        })
    };
    let mut cells = 1i64;
    let mut last = 1;
    for r in &program.array_decl(array).dims {
        last = (value(&r.hi.affine)? - value(&r.lo.affine)? + 1).max(0);
        cells = cells.checked_mul(last)?;
    }
    Some((last, cells))
}

/// The modular mappings of the `temporaries` the mapping keeps as they are,
/// at the sizes of `exp`; with the arrays that are no candidates and why.
/// Every candidate's own mapping and every group's are returned; those to
/// use are `worth` (fewer cells than declared, or than apart for a group;
/// an array of a group worth merging is not worth on its own).
/// Candidates of one shape and element type are also tried merged into one
/// virtual array, indexed first by `k` (0 for the first, 1 for the next,
/// …): the merged mapping replaces theirs when it needs fewer cells than
/// they do apart (each its own mapping's, or its declared cells) and than
/// one of them declares (else sharing storage does as well).
pub fn compute(
    program: &Program,
    exp: &Expansion,
    order: &Order,
    mapping: &Mapping,
    temporaries: &[ArrayId],
) -> (Vec<Modular>, Refused) {
    let located = super::locate_accesses(exp);
    let sample = super::Sample {
        program,
        exp,
        order,
        mapping,
        located: &located,
    };
    compute_located(&sample, temporaries)
}

/// [`compute`] of one sample, each access located already.
pub(crate) fn compute_located(
    sample: &super::Sample,
    temporaries: &[ArrayId],
) -> (Vec<Modular>, Refused) {
    let (program, exp, order) = (sample.program, sample.exp, sample.order);
    let (mapping, located) = (sample.mapping, sample.located);
    let params: Vec<i64> = exp.inst.facts.params.iter().map(|&(_, v)| v).collect();
    let mut found: Vec<Modular> = Vec::new();
    let mut refused = Vec::new();
    let mut candidates: Vec<(ArrayId, Vec<Value>, i64, i64)> = Vec::new();
    let asked: Vec<ArrayId> = (mapping.arrays.iter())
        .map(|am| am.array)
        .filter(|a| temporaries.contains(a))
        .collect();
    let mut all_values = values_of(exp, located, &asked).into_iter();
    for am in &mapping.arrays {
        let a = am.array;
        if !temporaries.contains(&a) {
            continue;
        }
        let values = all_values.next().expect("one per array asked");
        if !am.dims.is_empty() || am.may_write {
            refused.push((a, "the schedule expands it".into()));
            continue;
        }
        if program.array_decl(a).dims.len() > MAX_DIMS {
            refused.push((a, format!("more than {MAX_DIMS} dimensions")));
            continue;
        }
        let vals = match values {
            Ok(v) if v.len() > MAX_VALUES => {
                let why = format!(
                    "{} values at these sizes, more than the {MAX_VALUES} compared pairwise",
                    v.len()
                );
                refused.push((a, why));
                continue;
            }
            Ok(v) => v,
            Err(why) => {
                refused.push((a, why));
                continue;
            }
        };
        let Some((extent, cells)) = extents(program, a, &params) else {
            refused.push((a, "its extents are not affine in the parameters".into()));
            continue;
        };
        match search(program, &[a], &vals, extent, cells, order) {
            Some(m) => found.push(m),
            None => refused.push((a, "no form searched keeps its conflicts apart".into())),
        }
        candidates.push((a, vals, extent, cells));
    }
    // Groups of one shape and element type, in declaration order.
    let decl = |a: ArrayId| program.array_decl(a);
    let same = |a: ArrayId, b: ArrayId| {
        let (x, y) = (decl(a), decl(b));
        x.elem == y.elem
            && x.dims.len() == y.dims.len()
            && (x.dims.iter().zip(&y.dims))
                .all(|(p, q)| p.lo.affine == q.lo.affine && p.hi.affine == q.hi.affine)
    };
    let mut grouped = vec![false; candidates.len()];
    for i in 0..candidates.len() {
        if grouped[i] {
            continue;
        }
        let members: Vec<usize> = (i..candidates.len())
            .filter(|&j| !grouped[j] && same(candidates[i].0, candidates[j].0))
            .collect();
        if members.len() < 2 {
            continue;
        }
        for &j in &members {
            grouped[j] = true;
        }
        let arrays: Vec<ArrayId> = members.iter().map(|&j| candidates[j].0).collect();
        if members
            .iter()
            .map(|&j| candidates[j].1.len())
            .sum::<usize>()
            > MAX_VALUES
        {
            continue;
        }
        let mut vals = Vec::new();
        for (k, &j) in members.iter().enumerate() {
            for v in &candidates[j].1 {
                let mut cell = vec![k as i64];
                cell.extend(&v.cell);
                vals.push(Value {
                    cell,
                    write: v.write,
                    reads: v.reads.clone(),
                });
            }
        }
        let (extent, cells) = (candidates[i].2, candidates[i].3);
        let apart: i64 = (arrays.iter())
            .map(|a| {
                found
                    .iter()
                    .find(|m| m.array == *a)
                    .map_or(cells, |m| m.modulus.min(cells))
            })
            .sum();
        let Some(mut m) = search(program, &arrays, &vals, extent, cells, order) else {
            continue;
        };
        // Below one array's cells too: sharing storage (`colour`) already
        // gives temporaries of one shape that are never live together on a
        // cell one array's storage.
        m.worth = m.modulus < apart && m.modulus < cells;
        if m.worth {
            for x in found.iter_mut().filter(|x| arrays.contains(&x.array)) {
                x.worth = false;
            }
        }
        found.push(m);
    }
    (found, refused)
}

/// The best form for `vals` (of `arrays`, merged when several), its
/// modulus, and every valid form.
fn search(
    program: &Program,
    arrays: &[ArrayId],
    vals: &[Value],
    extent: i64,
    cells: i64,
    order: &Order,
) -> Option<Modular> {
    let d = conflicts(order, vals);
    let n = vals
        .first()
        .map_or(program.array_decl(arrays[0]).dims.len(), |v| v.cell.len());
    let valid: Vec<(Form, i64)> = forms(n)
        .into_iter()
        .filter_map(|f| modulus(&coefficients(&f, extent), &d).map(|m| (f, m)))
        .collect();
    let (form, m) = valid.iter().min_by_key(|x| x.1).cloned()?;
    let a = arrays[0];
    Some(Modular {
        // Never written (nor read): nothing to lay out.
        worth: m < cells && !vals.is_empty(),
        array: a,
        merged: if arrays.len() > 1 {
            arrays.to_vec()
        } else {
            Vec::new()
        },
        name: program.array_decl(a).name.clone(),
        form,
        modulus: m,
        least: m,
        valid,
        conflicts: d.len(),
        values: vals.len(),
        formula: None,
    })
}

/// One array's mapping across sample sizes. Per form valid at every
/// sample where the array has values, its modulus as an affine function of
/// the parameters: fitted exactly at the samples whose parameters are all
/// at least 3 (else 2, else all), raised by a constant (up to 3) where a
/// smaller sample needs more (a degenerate size: `N = 1`); it must be at
/// least the least modulus at every sample. The form whose formula is
/// smallest at the first sample wins (ties: the order of preference).
/// `at` holds, per sample, its parameter values and the array's mapping
/// there (None: no value of the array there).
pub fn fit(at: &[(Vec<i64>, Option<&Modular>)]) -> Option<(Form, Affine)> {
    let first = at.iter().find_map(|(_, m)| *m)?;
    let p0 = &at.iter().find(|(_, m)| m.is_some())?.0;
    let need = |f: &Form, m: &Modular| m.valid.iter().find(|(g, _)| g == f).map(|x| x.1);
    let value = |a: &Affine, p: &[i64]| {
        a.eval(|v| match v {
            Var::Param(q) => p.get(q.index()).copied().unwrap_or(0),
            _ => 0,
        })
    };
    let mut best: Option<(i64, Form, Affine)> = None;
    for (form, _) in &first.valid {
        let needs: Option<Vec<(Vec<i64>, i64)>> = at
            .iter()
            .filter_map(|(p, m)| m.map(|m| need(form, m).map(|n| (p.clone(), n))))
            .collect();
        let Some(needs) = needs else { continue };
        let at_least = |k: i64| -> Vec<(Vec<i64>, i64)> {
            (needs.iter())
                .filter(|(p, _)| p.iter().all(|&v| v >= k))
                .cloned()
                .collect()
        };
        let mut found = None;
        'sets: for pts in [at_least(3), at_least(2), needs.clone()] {
            if pts.len() < 2 {
                continue;
            }
            let Some((c, k)) = crate::fit::simplest(&pts, 0) else {
                continue;
            };
            let mut a = Affine::constant(k);
            for (q, &x) in c.iter().enumerate() {
                if x != 0 {
                    let term = Affine::var(Var::Param(ParamId(q as u32))).checked_scale(x)?;
                    a = a.checked_add(&term)?;
                }
            }
            for raise in 0..=3 {
                let b = a.checked_add(&Affine::constant(raise))?;
                if needs
                    .iter()
                    .all(|(p, n)| value(&b, p).is_some_and(|m| m >= *n))
                {
                    found = Some(b);
                    break 'sets;
                }
            }
        }
        let Some(b) = found else { continue };
        let Some(v) = value(&b, p0) else { continue };
        if best.as_ref().is_none_or(|x| v < x.0) {
            best = Some((v, form.clone(), b));
        }
    }
    best.map(|(_, f, a)| (f, a))
}

/// `(t - i) mod (N + 1)`: the form over the array's dimension names
/// ([`dim_names`]) and the modulus.
pub fn describe(program: &Program, array: ArrayId, form: &Form, modulus: &str) -> String {
    let mut names = dim_names(program, array);
    if form.len() > names.len() {
        // A merged group: its index first.
        names.insert(0, "k".into());
    }
    let last = last_extent(program, array);
    let mut terms = String::new();
    for (k, &(s, stride)) in form.iter().enumerate() {
        if s == 0 {
            continue;
        }
        let mut t = match s.abs() {
            1 => String::new(),
            x => format!("{x}*"),
        };
        if stride {
            t += &if last.contains(' ') {
                format!("({last})*")
            } else {
                format!("{last}*")
            };
        }
        t += &names[k];
        if terms.is_empty() {
            terms = if s < 0 { format!("-{t}") } else { t };
        } else {
            terms += &format!(" {} {t}", if s < 0 { '-' } else { '+' });
        }
    }
    let m = if modulus.chars().all(|c| c.is_ascii_digit()) {
        modulus.to_string()
    } else {
        format!("({modulus})")
    };
    format!("({terms}) mod {m}")
}

/// The extent of the array's last dimension at these parameter values.
pub fn last_extent_at(program: &Program, array: ArrayId, params: &[i64]) -> i64 {
    extents(program, array, params).map_or(1, |x| x.0)
}

/// The text of the extent of the array's last dimension (`N`, `N + 2`).
fn last_extent(program: &Program, array: ArrayId) -> String {
    let Some(r) = program.array_decl(array).dims.last() else {
        return "1".into();
    };
    match crate::codegen::extent(&r.lo.affine, &r.hi.affine) {
        Some(a) => crate::print::expr(program, &crate::codegen::expr_of(&a)),
        None => "?".into(),
    }
}

/// The extent of the array's last dimension, affine in the parameters
/// (None without dimensions, or on overflow).
pub(crate) fn last_extent_affine(program: &Program, array: ArrayId) -> Option<Affine> {
    let r = program.array_decl(array).dims.last()?;
    crate::codegen::extent(&r.lo.affine, &r.hi.affine)
}

/// Names for the array's dimensions: the counters the first write whose
/// subscripts are all plain counters uses, else `c1, c2, …`.
pub fn dim_names(program: &Program, array: ArrayId) -> Vec<String> {
    let n = program.array_decl(array).dims.len();
    for s in program.stmts() {
        if let StmtKind::Assign { target, .. } = &s.kind {
            if target.array != array {
                continue;
            }
            let names: Option<Vec<String>> = target
                .subscripts
                .iter()
                .map(|x| match x.expr.kind {
                    ExprKind::Counter(c) => Some(program.counter_decl(c).name.clone()),
                    _ => None,
                })
                .collect();
            if let Some(v) = names {
                let distinct: BTreeSet<&String> = v.iter().collect();
                if distinct.len() == v.len() {
                    return v;
                }
            }
        }
    }
    (1..=n).map(|k| format!("c{k}")).collect()
}

/// A mapping to lay into a program: the array, its form and modulus.
#[derive(Clone, Debug)]
pub struct Laid {
    pub array: ArrayId,
    /// A merged group (the first is `array`), or empty.
    pub merged: Vec<ArrayId>,
    pub form: Form,
    pub modulus: Affine,
}

/// Rewrites `p` so that each array of `laid` is declared `[0..M-1]` (as
/// `A_m`) and every access to it goes to `[(a·subscripts) % M]` (`%` is
/// Euclidean: never negative).
/// The new arrays' names, in the order of `laid`.
pub(crate) fn apply(
    p: &mut Program,
    laid: &[Laid],
    names: &mut crate::codegen::Names,
) -> Vec<String> {
    let mut new_names = Vec::new();
    type Place = (Vec<Expr>, Expr, Option<i64>);
    let mut places: HashMap<ArrayId, Place> = HashMap::new();
    let mut holder: HashMap<ArrayId, ArrayId> = HashMap::new();
    for l in laid {
        let decl = p.array_decl(l.array).clone();
        let last = decl.dims.last().map(|_| {
            crate::codegen::expr_of(
                &last_extent_affine(p, l.array).unwrap_or_else(|| Affine::constant(1)),
            )
        });
        let coefs: Vec<Expr> = l
            .form
            .iter()
            .map(|&(s, stride)| match (stride, &last) {
                (true, Some(e)) if s == 1 => e.clone(),
                (true, Some(e)) => bin(BinOp::Mul, Expr::int(s), e.clone()),
                _ => Expr::int(s),
            })
            .collect();
        let m = crate::codegen::expr_of(&l.modulus);
        let hi = l.modulus.checked_sub(&Affine::constant(1)).expect("small");
        let a = &mut p.arrays[l.array.index()];
        a.name = names.fresh(&format!("{}_m", decl.name));
        new_names.push(a.name.clone());
        a.dims = vec![Range {
            lo: crate::model::Bound {
                expr: Expr::int(0),
                affine: Affine::constant(0),
            },
            hi: crate::model::Bound {
                expr: crate::codegen::expr_of(&hi),
                affine: hi,
            },
        }];
        if l.merged.is_empty() {
            places.insert(l.array, (coefs, m, None));
        } else {
            for (k, &x) in l.merged.iter().enumerate() {
                places.insert(x, (coefs.clone(), m.clone(), Some(k as i64)));
                holder.insert(x, l.array);
            }
        }
    }
    let place = |a: &mut Access| {
        let Some((coefs, m, k)) = places.get(&a.array) else {
            return;
        };
        // The merged group's index first, as a constant subscript.
        let subs: Vec<Expr> = (k.map(Expr::int).into_iter())
            .chain(a.subscripts.iter().map(|s| s.expr.clone()))
            .collect();
        let mut constant = 0i64;
        let mut terms: Vec<(bool, Expr)> = Vec::new();
        for (c, s) in coefs.iter().zip(subs) {
            terms.push(match (&c.kind, &s.kind) {
                (ExprKind::Int(x), ExprKind::Int(y)) => {
                    constant += x * y;
                    continue;
                }
                (ExprKind::Int(0), _) => continue,
                (ExprKind::Int(1), _) => (false, s),
                (ExprKind::Int(-1), _) => (true, s),
                (ExprKind::Int(x), _) if *x < 0 => (true, bin(BinOp::Mul, Expr::int(-x), s)),
                _ => (false, bin(BinOp::Mul, c.clone(), s)),
            });
        }
        // Positive terms first: `i - 2 * t + 1` rather than `-(2 * t) + i + 1`.
        terms.sort_by_key(|t| t.0);
        if terms.first().is_some_and(|t| t.0) && constant > 0 {
            terms.insert(0, (false, Expr::int(constant)));
            constant = 0;
        }
        let mut sum: Option<Expr> = None;
        for (neg, term) in terms {
            sum = Some(match (sum, neg) {
                (Some(x), false) => bin(BinOp::Add, x, term),
                (Some(x), true) => bin(BinOp::Sub, x, term),
                (None, false) => term,
                (None, true) => Expr::new(ExprKind::Neg(Box::new(term)), Span::NONE),
            });
        }
        let e = match (sum, constant) {
            (None, c) => Expr::int(c),
            (Some(x), 0) => x,
            (Some(x), c) if c < 0 => bin(BinOp::Sub, x, Expr::int(-c)),
            (Some(x), c) => bin(BinOp::Add, x, Expr::int(c)),
        };
        a.array = *holder.get(&a.array).unwrap_or(&a.array);
        a.subscripts = vec![Subscript::new(bin(BinOp::Rem, e, m.clone()))];
    };
    super::nodes::each_access_mut(&mut p.body, &place);
    new_names
}

/// The merged groups of `laid`: the arrays of each after the first are no
/// longer accessed, and `colour::apply` drops them (with the classes of
/// temporaries sharing storage, in one renumbering).
pub(crate) fn groups(laid: &[Laid]) -> Vec<Vec<ArrayId>> {
    (laid.iter())
        .filter(|l| !l.merged.is_empty())
        .map(|l| l.merged.clone())
        .collect()
}

fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
    crate::model::builder::e::bin(op, l, r)
}

/// The plain reference: the operations run in one order the schedule allows
/// (program order when `seed` is 0, else a random topological order of the
/// schedule's partial order drawn from `seed`), `array`'s cells laid out by
/// the coefficients `a` modulo `m`; every read must find its source's value
/// in its place. The first read that does not, by operation ids.
pub fn simulate(
    exp: &Expansion,
    order: &Order,
    array: ArrayId,
    a: &[i64],
    m: i64,
    seed: u64,
) -> Result<(), String> {
    let vals = values(exp, array)?;
    let n = exp.inst.facts.n_ops();
    let run: Vec<u32> = if seed == 0 {
        (0..n as u32).collect()
    } else {
        random_order(order, n, seed)
    };
    let place = |cell: &[i64]| -> usize {
        let v: i64 = a.iter().zip(cell).map(|(p, q)| p * q).sum();
        v.rem_euclid(m) as usize
    };
    let mut reads_of: HashMap<u32, Vec<usize>> = HashMap::new();
    let mut write_of: HashMap<u32, usize> = HashMap::new();
    for (k, v) in vals.iter().enumerate() {
        write_of.insert(v.write, k);
        for &r in &v.reads {
            reads_of.entry(r).or_default().push(k);
        }
    }
    let mut held: Vec<Option<usize>> = vec![None; m as usize];
    for op in run {
        for &k in reads_of.get(&op).map_or(&[][..], |v| v.as_slice()) {
            let p = place(&vals[k].cell);
            if held[p] != Some(k) {
                return Err(format!(
                    "operation {op} reads {:?} at place {p}, which holds {:?}",
                    vals[k].cell,
                    held[p].map(|j| &vals[j].cell)
                ));
            }
        }
        if let Some(&k) = write_of.get(&op) {
            held[place(&vals[k].cell)] = Some(k);
        }
    }
    Ok(())
}

/// A random topological order of the schedule's partial order over `n`
/// operations (pairwise: for small programs).
fn random_order(order: &Order, n: usize, seed: u64) -> Vec<u32> {
    let mut preds = vec![0usize; n];
    let mut succs: Vec<Vec<u32>> = vec![Vec::new(); n];
    for a in 0..n as u32 {
        for b in 0..n as u32 {
            if a != b && surely_before(order, a, b) {
                preds[b as usize] += 1;
                succs[a as usize].push(b);
            }
        }
    }
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut ready: Vec<u32> = (0..n as u32).filter(|&k| preds[k as usize] == 0).collect();
    let mut out = Vec::with_capacity(n);
    while !ready.is_empty() {
        let k = (next() % ready.len() as u64) as usize;
        let op = ready.swap_remove(k);
        out.push(op);
        for &s in &succs[op as usize] {
            preds[s as usize] -= 1;
            if preds[s as usize] == 0 {
                ready.push(s);
            }
        }
    }
    out
}

/// The mappings to lay out across `emit`'s samples (per sample: its
/// parameter values, the modular mappings and the refusals there): the
/// arrays with fewer cells at the first sample and a candidate at every
/// sample, with the form and modulus [`fit`] finds.
pub fn across(samples: &[(Vec<i64>, Vec<Modular>, Refused)]) -> Vec<Laid> {
    let Some((_, first, _)) = samples.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    'arrays: for m in first.iter().filter(|m| m.worth) {
        let members = if m.merged.is_empty() {
            vec![m.array]
        } else {
            m.merged.clone()
        };
        let mut at: Vec<(Vec<i64>, Option<&Modular>)> = Vec::new();
        for (p, ms, r) in samples {
            if r.iter().any(|(a, _)| members.contains(a)) {
                continue 'arrays;
            }
            let Some(here) = ms
                .iter()
                .find(|x| x.array == m.array && x.merged == m.merged)
            else {
                continue 'arrays;
            };
            at.push((p.clone(), Some(here).filter(|x| x.values > 0)));
        }
        if let Some((form, modulus)) = fit(&at) {
            out.push(Laid {
                array: m.array,
                merged: m.merged.clone(),
                form,
                modulus,
            });
        }
    }
    out
}

/// The modulus as text (`N + 1`).
pub fn modulus_text(program: &Program, m: &Affine) -> String {
    crate::print::expr(program, &crate::codegen::expr_of(m))
}

/// `F -> F_m: (i) mod 2`: the header line of a laid mapping, `q` the
/// program it was laid into.
pub fn line(program: &Program, new_name: &str, l: &Laid) -> String {
    let name = |a: &ArrayId| program.array_decl(*a).name.clone();
    let form = describe(
        program,
        l.array,
        &l.form,
        &modulus_text(program, &l.modulus),
    );
    if l.merged.is_empty() {
        return format!("{} -> {new_name}: {form}", name(&l.array));
    }
    let all: Vec<String> = l.merged.iter().map(name).collect();
    let ks: Vec<String> = (l.merged.iter().enumerate())
        .map(|(k, a)| format!("{k} for {}", name(a)))
        .collect();
    format!(
        "{} -> {new_name}: merged, {form} (k: {})",
        all.join(", "),
        ks.join(", ")
    )
}

/// The report's formulas: the contraction's modular mappings analysed
/// again at `emit`'s sample sizes and fitted ([`across`]); a mapping whose
/// form the samples do not agree on keeps no formula.
pub fn fill_formulas(
    program: &Program,
    schedule: &super::Schedule,
    temporaries: &[ArrayId],
    o: &crate::codegen::Options,
    c: &mut super::Contraction,
) {
    if c.modular.is_empty() {
        return;
    }
    let Ok(samples) = crate::codegen::vectors::samples(program, o) else {
        return;
    };
    let mut mods = Vec::new();
    for v in samples {
        let mut config = crate::dataflow::Config::default();
        let names = program.params.iter().map(|q| q.name.clone());
        config.params = names.zip(v.iter().copied()).collect();
        (config.max_trips, config.max_instances) = (o.max_trips, o.max_instances);
        let Ok(exp) = crate::expansion::expand(program, &config) else {
            continue;
        };
        let order = Order::new(program, &exp.inst.facts, schedule);
        let Ok(mapping) = super::mapping::compute(program, &exp, &order) else {
            continue;
        };
        let (m, r) = compute(program, &exp, &order, &mapping, temporaries);
        mods.push((v, m, r));
    }
    let laid = across(&mods);
    let params = c.params.clone();
    for m in &mut c.modular {
        if let Some(l) = (laid.iter()).find(|l| l.array == m.array && l.merged == m.merged) {
            let v = l.modulus.eval(|v| match v {
                Var::Param(q) => params.get(q.index()).copied().unwrap_or(0),
                _ => 0,
            });
            if let Some(v) = v {
                m.form = l.form.clone();
                m.modulus = v;
                m.formula = Some(l.modulus.clone());
            }
        }
    }
}

/// The layout `prove` takes for a laid mapping. A coefficient that is an
/// extent (`N*y`) is a product of a parameter and a counter, which the
/// exact tests do not take: it goes to [`super::prove::Stride`], which
/// proves it when the modulus is a whole multiple of that extent.
pub fn layout(program: &Program, l: &Laid) -> Result<super::prove::Layout, String> {
    let name = || program.array_decl(l.array).name.clone();
    let stride = if l.form.iter().any(|&(s, stride)| stride && s != 0) {
        let extent = last_extent_affine(program, l.array)
            .ok_or_else(|| format!("the last extent of `{}` is not affine", name()))?;
        Some(super::prove::Stride {
            coefs: l
                .form
                .iter()
                .map(|&(s, st)| if st { s } else { 0 })
                .collect(),
            extent,
        })
    } else {
        None
    };
    let arrays = if l.merged.is_empty() {
        vec![l.array]
    } else {
        l.merged.clone()
    };
    let m = super::prove::Modulo {
        coefs: l
            .form
            .iter()
            .map(|&(s, st)| if st { 0 } else { s })
            .collect(),
        k: (arrays.iter().enumerate())
            .map(|(k, &a)| (a, k as i64))
            .collect(),
        modulus: l.modulus.clone(),
        stride,
    };
    super::prove::Layout::modular(program, &arrays, m)
        .ok_or_else(|| format!("the arrays merged with `{}` differ in shape", name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`Differences`], both ways it stores them, against a plain set of
    /// every conflicting pair's difference and its negation.
    #[test]
    fn differences_agree_with_a_plain_set() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |m: i64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as i64
        };
        for round in 0..60 {
            let n = 1 + (round % 4) as usize;
            // Every fourth round spans a box too large for the bits.
            let scale = if round % 4 == 3 { 10_000_000 } else { 1 };
            let vals: Vec<Value> = (0..1 + next(40))
                .map(|_| Value {
                    cell: (0..n).map(|_| (next(9) - 4) * scale).collect(),
                    write: 0,
                    reads: Vec::new(),
                })
                .collect();
            let conflict = |i: usize, j: usize| !(i * 7 + j * 3).is_multiple_of(5);
            let mut plain = BTreeSet::new();
            let mut d = Differences::new(&vals, n);
            for i in 0..vals.len() {
                for j in i + 1..vals.len() {
                    let (a, b) = (&vals[i].cell, &vals[j].cell);
                    d.add(a, b, || conflict(i, j));
                    if a != b && conflict(i, j) {
                        let x: Vec<i64> = a.iter().zip(b).map(|(p, q)| p - q).collect();
                        plain.insert(x.iter().map(|v| -v).collect::<Vec<i64>>());
                        plain.insert(x);
                    }
                }
            }
            let bits = matches!(d, Differences::Bits { .. });
            assert_eq!(bits, scale == 1, "round {round}: the store chosen");
            assert_eq!(d.into_set(), plain, "round {round}");
        }
    }
}
