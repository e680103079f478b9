//! Closed-form labels from bounded results. A write's label is (group, κ): the group is the atom
//! (statement, side of one affine split) it belongs to, merged with every
//! atom it shares a class with; κ is a subset of the counters common to the
//! group's statements, constant on every class. A read's label is a small
//! decision tree over affine conditions whose leaves are a group and one
//! affine function per κ dimension, fitted exactly on the samples.

use super::boxes::{concrete_boxes, hull, volume, Boxes, IntBox};
use super::fit;
use super::records::{all_bits, counter_at, kappa_of, records, AtSite, Eval, Recs, WriteRec};
pub use super::records::{eval_at, Sample, Sites};
use crate::expansion::classes::NONE;
use crate::hash::WordHash;
use crate::model::{
    AccessKind, Affine, ArrayId, CounterId, CounterKind, ExprKind, Node, ParamId, Program, Site,
    Var,
};
use std::collections::{HashMap, HashSet};

/// A label condition: `Le(e)`: e ≤ 0; `Stride(e, k)`: k divides e (the
/// parity of a counter, where exact σ splits by it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Test {
    Le(Affine),
    Stride(Affine, i64),
}

impl Test {
    /// Its truth where the forms evaluate by `value` (None on overflow).
    pub fn holds(&self, value: impl Fn(&Affine) -> Option<i64>) -> Option<bool> {
        match self {
            Test::Le(e) => Some(value(e)? <= 0),
            Test::Stride(e, k) => Some(value(e)?.rem_euclid(*k) == 0),
        }
    }
}

/// A read label as a decision tree: `Split(t, yes, no)` tests t.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tree {
    /// None: the original array (only initial values reach the read).
    Leaf(Option<(usize, Vec<Affine>)>),
    Split(Test, Box<Tree>, Box<Tree>),
}

impl Tree {
    /// The groups its leaves read, in order of first appearance.
    pub fn groups(&self, out: &mut Vec<usize>) {
        match self {
            Tree::Leaf(Some((g, _))) if !out.contains(g) => out.push(*g),
            Tree::Leaf(_) => {}
            Tree::Split(_, a, b) => {
                a.groups(out);
                b.groups(out);
            }
        }
    }

    pub fn conditions(&self, out: &mut Vec<Test>) {
        if let Tree::Split(e, a, b) = self {
            if !out.contains(e) {
                out.push(e.clone());
            }
            a.conditions(out);
            b.conditions(out);
        }
    }

    /// The leaf selected by truth values of conditions.
    pub fn leaf(&self, truth: &dyn Fn(&Test) -> bool) -> &Option<(usize, Vec<Affine>)> {
        match self {
            Tree::Leaf(l) => l,
            Tree::Split(e, a, b) => {
                if truth(e) {
                    a.leaf(truth)
                } else {
                    b.leaf(truth)
                }
            }
        }
    }
}
/// The closed form chosen for one array.
#[derive(Clone, Debug)]
pub struct ArrayForm {
    pub array: ArrayId,
    /// Per writing statement: its split conditions (each e ≤ 0).
    pub splits: HashMap<usize, Vec<Affine>>,
    /// (statement index, side bits) → group; bit k is set where condition
    /// k of the statement holds.
    pub atom_group: HashMap<(usize, u32), usize, WordHash>,
    /// κ of each group.
    pub kappa: Vec<Vec<CounterId>>,
    /// Per group: its index box (None: the declared ranges) and κ box (None:
    /// a κ counter without an affine box).
    pub boxes: Vec<GroupBox>,
    /// Groups that are scratch arrays for dead writes (κ subscripts only).
    pub scratch: Vec<bool>,
    /// Whether a class of the group holds an initial value (copy-in).
    pub copy_in: Vec<bool>,
    /// Σ_c distinct labels and Σ_c classes over the samples (k of m), before
    /// dead writes are placed.
    pub labels: u64,
    pub classes: u64,
    /// Σ over the samples of the live-out-only classes placed in the cell of
    /// a finished class.
    pub shared: u64,
    /// Where dead writes went, for the report.
    pub notes: Vec<String>,
}

/// Index and κ boxes of one group, as affine bounds in the parameters.
#[derive(Clone, Debug)]
pub struct GroupBox {
    pub cells: Option<Vec<(Affine, Affine)>>,
    pub kappa: Option<Vec<(Affine, Affine)>>,
}

/// Per-array outcome.
#[derive(Clone, Debug)]
pub enum Outcome {
    Expanded(Box<ArrayForm>),
    NotExpanded(String),
}

/// Truth bits of split conditions at one operation.
pub fn side_bits(conds: &[Affine], loops: &[CounterId], iter: &[i64], params: &[i64]) -> u32 {
    conds.iter().enumerate().fold(0, |b, (k, e)| {
        if eval_at(e, loops, iter, params).is_some_and(|v| v <= 0) {
            b | 1 << k
        } else {
            b
        }
    })
}

/// Buffers of `evaluate`, kept across the trials of a split search (one
/// evaluation is a few passes over the writes; allocating its tables anew
/// for every trial cost as much as the passes).
#[derive(Default)]
pub(super) struct Work {
    /// Atoms (statement, side bits) in the order met.
    atoms: Vec<(usize, u32)>,
    /// Their order sorted by statement, all-true sides first (the order
    /// groups are numbered in).
    sorted: Vec<usize>,
    /// Start of every sample's writes in `aix`.
    offs: Vec<usize>,
    /// Atom of every write (samples in a row).
    aix: Vec<usize>,
    parent: Vec<usize>,
    /// Per atom: live, dead, copied-in writes (bits 0, 1, 2).
    flags: Vec<u8>,
    roots: Vec<usize>,
    /// Group of every atom.
    group_of: Vec<usize>,
    copy_in: Vec<bool>,
    placeable: Vec<bool>,
    has_dead: Vec<bool>,
    /// Per group, the counters some class of it is not constant on
    /// (`Recs::moving` joined).
    moving: Vec<u64>,
    kappa: Vec<Vec<CounterId>>,
    keys: Vec<i64>,
    /// Keys packed in one word (mixed radix over the columns' ranges:
    /// the same order and equalities), the index in the low 32 bits.
    packed: Vec<u64>,
    order: Vec<u32>,
    id: Vec<u32>,
    stamp: Vec<u32>,
    pub labels: u64,
    pub classes: u64,
    pub agree: u64,
}

fn find(p: &mut [usize], mut x: usize) -> usize {
    while p[x] != x {
        p[x] = p[p[x]];
        x = p[x];
    }
    x
}

/// Groups (atoms joined by shared classes), κ (common counters constant on
/// every class of the group) and the label count under side bits `bits`.
/// κ keeps counters that do not separate classes: `drop_counters` removes
/// them (the split search does not need to: dropping can only merge
/// labels, and every class has one label already, so the count is final).
pub(super) fn evaluate(program: &Program, sites: &Sites, recs: &[Recs], bits: &[Vec<u32>]) -> Eval {
    let mut w = Work::default();
    w.run(program, sites, recs, bits, None);
    w.eval(recs)
}

/// A trial's change to the side bits: `bit` added to the writes of one
/// statement where `sides` (one per write of it, samples in a row) holds.
#[derive(Clone, Copy)]
pub(super) struct Extra<'a> {
    pub stmt: usize,
    pub bit: u32,
    pub sides: &'a [bool],
}

impl Work {
    /// `evaluate` into the buffers under `bits` (with `extra`): labels,
    /// classes and agree are then read off them, the rest by `eval`.
    pub(super) fn run(
        &mut self,
        program: &Program,
        sites: &Sites,
        recs: &[Recs],
        bits: &[Vec<u32>],
        extra: Option<Extra>,
    ) {
        let (atoms, aix, flags) = (&mut self.atoms, &mut self.aix, &mut self.flags);
        let parent = &mut self.parent;
        atoms.clear();
        aix.clear();
        flags.clear();
        parent.clear();
        self.offs.clear();
        let mut sides = extra.map_or(&[][..], |x| x.sides).iter();
        let (xs, xbit) = extra.map_or((usize::MAX, 0), |x| (x.stmt, x.bit));
        for (rs, bs) in recs.iter().zip(bits) {
            let off = aix.len();
            self.offs.push(off);
            let mut last = (usize::MAX, 0, 0);
            for (w, &b) in rs.slim.iter().zip(bs) {
                let b = if w.stmt == xs && sides.next() == Some(&true) {
                    b | xbit
                } else {
                    b
                };
                if (last.0, last.1) != (w.stmt, b) {
                    let k = match atoms.iter().position(|&a| a == (w.stmt, b)) {
                        Some(k) => k,
                        None => {
                            atoms.push((w.stmt, b));
                            flags.push(0);
                            parent.push(parent.len());
                            atoms.len() - 1
                        }
                    };
                    last = (w.stmt, b, k);
                }
                let a = last.2;
                aix.push(a);
                flags[a] |= w.flags;
                // Every write joins the atom of its class's first write
                // (met before it).
                if w.rep != NONE {
                    let f = aix[off + w.rep as usize];
                    if a != f {
                        let (ra, rb) = (find(parent, a), find(parent, f));
                        parent[ra] = rb;
                    }
                }
            }
        }
        self.offs.push(aix.len());
        let n_atoms = atoms.len();
        self.sorted.clear();
        self.sorted.extend(0..n_atoms);
        self.sorted
            .sort_unstable_by_key(|&k| (atoms[k].0, std::cmp::Reverse(atoms[k].1)));
        self.roots.clear();
        self.group_of.clear();
        self.group_of.resize(n_atoms, 0);
        self.copy_in.clear();
        // Live-out-only writes are placed only along with dead ones (their
        // value is needed after every read: they may share a finished cell).
        self.placeable.clear();
        self.has_dead.clear();
        for &k in &self.sorted {
            let r = find(parent, k);
            let g = match self.roots.iter().position(|&x| x == r) {
                Some(g) => g,
                None => {
                    self.roots.push(r);
                    self.copy_in.push(false);
                    self.placeable.push(true);
                    self.has_dead.push(false);
                    self.roots.len() - 1
                }
            };
            let f = flags[k];
            self.copy_in[g] |= f & 4 != 0;
            self.placeable[g] &= f & 5 == 0;
            self.has_dead[g] |= f & 2 != 0;
            self.group_of[k] = g;
        }
        for (p, d) in self.placeable.iter_mut().zip(&self.has_dead) {
            *p &= d;
        }
        let n = self.roots.len();
        // κ: common counters constant on every class.
        let words = recs.first().map_or(0, |r| r.words);
        self.moving.clear();
        self.moving.resize(n * words, 0);
        for (k, rs) in recs.iter().enumerate() {
            let ax = &aix[self.offs[k]..self.offs[k + 1]];
            for (lc, &r) in rs.reps.iter().enumerate() {
                let g = self.group_of[ax[r as usize]];
                let m = &rs.moving[lc * words..(lc + 1) * words];
                for (a, b) in self.moving[g * words..(g + 1) * words].iter_mut().zip(m) {
                    *a |= b;
                }
            }
        }
        self.kappa.resize_with(n, Vec::new);
        self.kappa.truncate(n);
        let (sorted, group_of, atoms) = (&self.sorted, &self.group_of, &self.atoms);
        for (g, ks) in self.kappa.iter_mut().enumerate() {
            let members = || {
                sorted
                    .iter()
                    .filter(move |&&k| group_of[k] == g)
                    .map(|&k| atoms[k].0)
            };
            ks.clear();
            let Some(first) = members().next() else {
                continue;
            };
            let moving = &self.moving[g * words..(g + 1) * words];
            ks.extend(
                sites.stmt[first]
                    .iter()
                    .copied()
                    .filter(|c| program.counter_decl(*c).kind == CounterKind::For)
                    .filter(|c| members().all(|s| sites.stmt[s].contains(c)))
                    .filter(|c| moving[c.index() / 64] & 1 << (c.index() % 64) == 0),
            );
        }
        self.count(sites, recs);
        self.classes = recs.iter().map(|rs| rs.pairs.len() as u64).sum();
        // Dead updates whose write joins the group of what they read.
        self.agree = 0;
        for (k, rs) in recs.iter().enumerate() {
            let ax = &self.aix[self.offs[k]..self.offs[k + 1]];
            for &(x, r) in &rs.updates {
                if self.group_of[ax[x as usize]] == self.group_of[ax[r as usize]] {
                    self.agree += 1;
                }
            }
        }
    }

    /// Σ over cells and samples of the distinct labels (group, κ values)
    /// among the classes writing the cell. Every class has one label
    /// (groups join classes, κ is constant on them), so its first write
    /// gives it; labels are interned per sample and each cell's distinct
    /// label numbers counted.
    fn count(&mut self, sites: &Sites, recs: &[Recs]) {
        let kappa = &self.kappa;
        let width = 1 + kappa.iter().map(Vec::len).max().unwrap_or(0);
        let mut labels = 0;
        let (keys, packed, order, id, stamp) = (
            &mut self.keys,
            &mut self.packed,
            &mut self.order,
            &mut self.id,
            &mut self.stamp,
        );
        for (k, rs) in recs.iter().enumerate() {
            let ax = &self.aix[self.offs[k]..self.offs[k + 1]];
            keys.clear();
            for &r in &rs.reps {
                let w = &rs.writes[r as usize];
                let g = self.group_of[ax[r as usize]];
                keys.push(g as i64);
                keys.extend(kappa[g].iter().map(|&c| counter_at(sites, w, c)));
                keys.resize(keys.len() + width - 1 - kappa[g].len(), 0);
            }
            let key = |k: u32| &keys[k as usize * width..(k as usize + 1) * width];
            id.clear();
            id.resize(rs.reps.len(), 0u32);
            if pack(keys, width, rs.reps.len(), packed) {
                packed.sort_unstable();
                let mut next = 0;
                for k in 0..packed.len() {
                    if k > 0 && packed[k - 1] >> 32 != packed[k] >> 32 {
                        next += 1;
                    }
                    id[packed[k] as u32 as usize] = next;
                }
            } else {
                order.clear();
                order.extend(0..rs.reps.len() as u32);
                order.sort_unstable_by(|&a, &b| key(a).cmp(key(b)));
                let mut next = 0;
                for k in 0..order.len() {
                    if k > 0 && key(order[k - 1]) != key(order[k]) {
                        next += 1;
                    }
                    id[order[k] as usize] = next;
                }
            }
            // stamp[label] = 1 + the cell that last counted it.
            stamp.clear();
            stamp.resize(rs.reps.len(), 0);
            for (c, cell) in rs.pairs.chunk_by(|a, b| a.0 == b.0).enumerate() {
                for &(_, lc) in cell {
                    let l = id[lc as usize] as usize;
                    if stamp[l] != c as u32 + 1 {
                        stamp[l] = c as u32 + 1;
                        labels += 1;
                    }
                }
            }
        }
        self.labels = labels;
    }

    /// The evaluation `run` left in the buffers.
    pub(super) fn eval(&self, recs: &[Recs]) -> Eval {
        Eval {
            atom_group: self
                .atoms
                .iter()
                .copied()
                .zip(self.group_of.iter().copied())
                .collect(),
            groups: (0..recs.len())
                .map(|k| {
                    self.aix[self.offs[k]..self.offs[k + 1]]
                        .iter()
                        .map(|&a| self.group_of[a])
                        .collect()
                })
                .collect(),
            kappa: self.kappa.clone(),
            copy_in: self.copy_in.clone(),
            placeable: self.placeable.clone(),
            labels: self.labels,
            classes: self.classes,
        }
    }
}

/// `n` keys of `width` columns as `(mixed-radix number) << 32 | index`
/// into `out`; false (out unspecified) when the numbers need more than 32
/// bits or there are too many keys. Digits are the columns minus their
/// minimum, the first column most significant: the numbers compare as the
/// keys do.
fn pack(keys: &[i64], width: usize, n: usize, out: &mut Vec<u64>) -> bool {
    out.clear();
    if n == 0 {
        return true;
    }
    if n > u32::MAX as usize {
        return false;
    }
    let mut radix = [(0i64, 0u64); 8];
    let Some(radix) = radix.get_mut(..width) else {
        return false;
    };
    let mut span: u64 = 1;
    for (c, r) in radix.iter_mut().enumerate() {
        let col = keys.iter().skip(c).step_by(width).take(n);
        let (lo, hi) = col.fold((i64::MAX, i64::MIN), |(l, h), &v| (l.min(v), h.max(v)));
        let Some(range) = hi.checked_sub(lo).and_then(|d| u64::try_from(d).ok()) else {
            return false;
        };
        *r = (lo, range + 1);
        span = match span.checked_mul(range + 1) {
            Some(x) if x <= 1 << 32 => x,
            _ => return false,
        };
    }
    out.extend(
        keys.chunks_exact(width)
            .take(n)
            .enumerate()
            .map(|(k, key)| {
                let v = key.iter().zip(&*radix).fold(0u64, |acc, (&x, &(lo, r))| {
                    acc * r + x.wrapping_sub(lo) as u64
                });
                v << 32 | k as u64
            }),
    );
    true
}

/// Drops the κ counters that do not separate classes (innermost first).
/// Dropping a counter of group g can only merge labels of g, so the count
/// falls exactly when some cell holds two classes of g told apart by that
/// counter alone (`separates`); otherwise it stays.
pub(super) fn drop_counters(sites: &Sites, recs: &[Recs], ev: &mut Eval) {
    for g in 0..ev.kappa.len() {
        let mut k = ev.kappa[g].len();
        while k > 0 {
            k -= 1;
            let removed = ev.kappa[g].remove(k);
            if separates(sites, recs, &ev.groups, g, &ev.kappa[g], removed) {
                ev.kappa[g].insert(k, removed);
            }
        }
    }
}

/// Whether some cell holds two classes of group g with equal values of the
/// counters `kept` and different values of `c`.
fn separates(
    sites: &Sites,
    recs: &[Recs],
    groups: &[Vec<usize>],
    g: usize,
    kept: &[CounterId],
    c: CounterId,
) -> bool {
    let mut here: Vec<&WriteRec> = Vec::new();
    for (rs, gs) in recs.iter().zip(groups) {
        for cell in rs.pairs.chunk_by(|a, b| a.0 == b.0) {
            here.clear();
            for &(_, lc) in cell {
                let r = rs.reps[lc as usize] as usize;
                if gs[r] == g {
                    here.push(&rs.writes[r]);
                }
            }
            for (i, a) in here.iter().enumerate() {
                for b in &here[..i] {
                    if counter_at(sites, a, c) != counter_at(sites, b, c)
                        && kept
                            .iter()
                            .all(|&x| counter_at(sites, a, x) == counter_at(sites, b, x))
                    {
                        return true;
                    }
                }
            }
        }
    }
    false
}

/// Candidate split conditions (e ≤ 0) from the program: loop bounds, affine
/// guards, differences of affine subscripts of one array.
pub fn pool(program: &Program) -> Vec<Affine> {
    let mut out: Vec<Affine> = Vec::new();
    // First-seen order, deduplicated by a set (not a scan of `out`).
    let mut seen: HashSet<Affine> = HashSet::new();
    let mut push = |e: Option<Affine>| {
        if let Some(mut e) = e {
            e.terms.retain(|t| t.1 != 0);
            e.terms.sort();
            if !e.terms.is_empty() && !seen.contains(&e) {
                seen.insert(e.clone());
                out.push(e);
            }
        }
    };
    fn nodes(ns: &[Node], push: &mut dyn FnMut(Option<Affine>), runs: &mut Vec<Affine>) {
        for n in ns {
            match n {
                Node::For(f) => {
                    let (lo, hi) = (&f.lower.affine, &f.upper.affine);
                    let params = |v: Var| matches!(v, Var::Param(_));
                    if lo.vars().chain(hi.vars()).all(params) {
                        runs.extend(lo.checked_sub(hi));
                    }
                    let c = Affine::var(Var::Counter(f.counter));
                    push(c.checked_sub(&f.lower.affine));
                    push(
                        c.checked_sub(&f.upper.affine)
                            .and_then(|e| e.checked_add(&Affine::constant(1))),
                    );
                    nodes(&f.body, push, runs);
                }
                Node::While(w) => nodes(&w.body, push, runs),
                Node::If(i) => {
                    for (c, b) in &i.branches {
                        cond(&c.cond, push);
                        nodes(b, push, runs);
                    }
                    if let Some(b) = &i.otherwise {
                        nodes(b, push, runs);
                    }
                }
                Node::Stmt(_) => {}
            }
        }
    }
    fn cond(c: &crate::model::Cond, push: &mut dyn FnMut(Option<Affine>)) {
        use crate::model::Cond;
        match c {
            Cond::Cmp(_, l, r) => {
                if let (Some(l), Some(r)) = (Affine::from_expr(l), Affine::from_expr(r)) {
                    if let Some(d) = l.checked_sub(&r) {
                        push(d.checked_add(&Affine::constant(1)));
                        push(Some(d.clone()));
                        push(d.checked_scale(-1));
                    }
                }
            }
            Cond::And(a, b) | Cond::Or(a, b) => {
                cond(a, push);
                cond(b, push);
            }
            Cond::Not(a) => cond(a, push),
            Cond::Unknown => {}
        }
    }
    let mut runs = Vec::new();
    nodes(&program.body, &mut push, &mut runs);
    // Subscript differences per array and dimension.
    let mut subs: HashMap<(ArrayId, usize), Vec<Affine>> = HashMap::new();
    for s in program.stmts() {
        for a in s.accesses() {
            for (d, sub) in a.access.subscripts.iter().enumerate() {
                if let Some(f) = &sub.affine {
                    let v = subs.entry((a.access.array, d)).or_default();
                    if !v.contains(f) {
                        v.push(f.clone());
                    }
                }
            }
        }
    }
    // Reads subscripted by a plain counter (the copy-out's virtual reads):
    // split where the range of each affine write subscript starts and ends.
    for s in program.stmts() {
        for a in s.accesses() {
            if a.kind != AccessKind::Read {
                continue;
            }
            for (d, sub) in a.access.subscripts.iter().enumerate() {
                let ExprKind::Counter(o) = sub.expr.kind else {
                    continue;
                };
                let ov = Affine::var(Var::Counter(o));
                for w in program.stmts() {
                    let Some((wa, _)) = w.write() else { continue };
                    if wa.array != a.access.array {
                        continue;
                    }
                    let Some(Some(f)) = wa.subscripts.get(d).map(|x| x.affine.as_ref()) else {
                        continue;
                    };
                    if let Some((lo, hi)) = range(program, f) {
                        push(
                            ov.checked_sub(&lo)
                                .and_then(|e| e.checked_add(&Affine::constant(1))),
                        );
                        push(ov.checked_sub(&hi));
                    }
                }
            }
        }
    }
    let mut keys: Vec<_> = subs.keys().copied().collect();
    keys.sort();
    // Where one subscript enters and leaves the range another write's
    // subscript covers (Figure 6's band N+1..3N-1 of S against T's i+N).
    for k in &keys {
        let fs = &subs[k];
        for w in program.stmts() {
            let Some((wa, _)) = w.write() else { continue };
            if wa.array != k.0 {
                continue;
            }
            let Some(Some(g)) = wa.subscripts.get(k.1).map(|x| x.affine.as_ref()) else {
                continue;
            };
            let Some((lo, hi)) = range(program, g) else {
                continue;
            };
            for f in fs.iter().filter(|f| *f != g && f.vars().next().is_some()) {
                push(
                    f.checked_sub(&lo)
                        .and_then(|e| e.checked_add(&Affine::constant(1))),
                );
                push(f.checked_sub(&hi));
            }
        }
    }
    for k in keys {
        let fs = &subs[&k];
        for (x, f) in fs.iter().enumerate() {
            for g in &fs[x + 1..] {
                if let Some(d) = f.checked_sub(g) {
                    push(Some(d.clone()));
                    push(d.checked_add(&Affine::constant(1)));
                    push(d.checked_scale(-1));
                }
            }
        }
    }
    // Loops whose bounds are parameters only run when lo - hi <= 0: a read
    // after a loop that may be empty sees the loop's last write or what
    // came before it (copy-out: N >= 1 ? S's label N - 1 : I's label).
    // Last in the pool: the other conditions keep their rank.
    for e in runs {
        push(Some(e));
    }
    out
}

/// The box [lo, hi] of every for counter (outer counters substituted).
pub fn counter_box(program: &Program, c: CounterId) -> Option<(Affine, Affine)> {
    fn find(
        nodes: &[Node],
        c: CounterId,
        outer: &mut Vec<(CounterId, Affine, Affine)>,
    ) -> Option<(Affine, Affine)> {
        for n in nodes {
            match n {
                Node::For(f) => {
                    let lo = box_bound(&f.lower.affine, outer, true)?;
                    let hi = box_bound(&f.upper.affine, outer, false)?;
                    if f.counter == c {
                        return Some((lo, hi));
                    }
                    outer.push((f.counter, lo, hi));
                    let r = find(&f.body, c, outer);
                    outer.pop();
                    if r.is_some() {
                        return r;
                    }
                }
                Node::While(w) => {
                    if let Some(r) = find(&w.body, c, outer) {
                        return Some(r);
                    }
                }
                Node::If(i) => {
                    for (_, b) in &i.branches {
                        if let Some(r) = find(b, c, outer) {
                            return Some(r);
                        }
                    }
                    if let Some(b) = &i.otherwise {
                        if let Some(r) = find(b, c, outer) {
                            return Some(r);
                        }
                    }
                }
                Node::Stmt(_) => {}
            }
        }
        None
    }
    find(&program.body, c, &mut Vec::new())
}

/// A loop bound's least (`low`) or greatest value over the boxes of the
/// counters around it.
fn box_bound(e: &Affine, outer: &[(CounterId, Affine, Affine)], low: bool) -> Option<Affine> {
    let mut acc = Affine::constant(e.constant);
    for &(v, k) in &e.terms {
        let t = match v {
            Var::Param(_) => Affine::var(v).checked_scale(k)?,
            Var::Counter(x) => {
                let (_, lo, hi) = outer.iter().find(|o| o.0 == x)?;
                let pick = if (k > 0) == low { lo } else { hi };
                pick.checked_scale(k)?
            }
        };
        acc = acc.checked_add(&t)?;
    }
    Some(acc)
}

/// [`counter_box`] of every counter at once, in one walk: the box of the
/// first loop of each counter the search reaches, a search of a list of
/// nodes stopping at a loop whose bounds have no box, as there.
pub fn counter_boxes(program: &Program) -> HashMap<CounterId, (Affine, Affine)> {
    fn walk(
        nodes: &[Node],
        outer: &mut Vec<(CounterId, Affine, Affine)>,
        out: &mut HashMap<CounterId, (Affine, Affine)>,
    ) {
        for n in nodes {
            match n {
                Node::For(f) => {
                    let Some(lo) = box_bound(&f.lower.affine, outer, true) else {
                        return;
                    };
                    let Some(hi) = box_bound(&f.upper.affine, outer, false) else {
                        return;
                    };
                    out.entry(f.counter)
                        .or_insert_with(|| (lo.clone(), hi.clone()));
                    outer.push((f.counter, lo, hi));
                    walk(&f.body, outer, out);
                    outer.pop();
                }
                Node::While(w) => walk(&w.body, outer, out),
                Node::If(i) => {
                    for (_, b) in &i.branches {
                        walk(b, outer, out);
                    }
                    if let Some(b) = &i.otherwise {
                        walk(b, outer, out);
                    }
                }
                Node::Stmt(_) => {}
            }
        }
    }
    let mut out = HashMap::new();
    walk(&program.body, &mut Vec::new(), &mut out);
    out
}

/// [min, max] of an affine function over the boxes of its counters.
pub(crate) fn range(program: &Program, f: &Affine) -> Option<(Affine, Affine)> {
    range_by(f, |c| counter_box(program, c))
}

/// [`range`] with the counters' boxes from `boxes` (as [`counter_box`]).
pub(crate) fn range_by(
    f: &Affine,
    boxes: impl Fn(CounterId) -> Option<(Affine, Affine)>,
) -> Option<(Affine, Affine)> {
    let mut lo = Affine::constant(f.constant);
    let mut hi = Affine::constant(f.constant);
    for &(v, k) in &f.terms {
        match v {
            Var::Param(_) => {
                let t = Affine::var(v).checked_scale(k)?;
                lo = lo.checked_add(&t)?;
                hi = hi.checked_add(&t)?;
            }
            Var::Counter(c) => {
                let (a, b) = boxes(c)?;
                let (x, y) = if k > 0 { (a, b) } else { (b, a) };
                lo = lo.checked_add(&x.checked_scale(k)?)?;
                hi = hi.checked_add(&y.checked_scale(k)?)?;
            }
        }
    }
    Some((lo, hi))
}

/// Whether `e` only uses parameters and for-counters among `loops`.
fn usable(program: &Program, e: &Affine, loops: &[CounterId]) -> bool {
    e.vars().all(|v| match v {
        Var::Param(_) => true,
        Var::Counter(c) => loops.contains(&c) && program.counter_decl(c).kind == CounterKind::For,
    })
}

/// Splits per statement.
pub type Splits = HashMap<usize, Vec<Affine>>;

/// Merges groups that never share a cell at any sample (same κ, neither
/// placeable) when the merged box is no larger than the two: fewer arrays,
/// the same labels per cell. Groups stay in the order of their first atom.
pub(super) fn merge_disjoint(sites: &Sites, recs: &[Recs], ev: &mut Eval) {
    let n = ev.kappa.len();
    if n < 2 {
        return;
    }
    let (target, _) = merge_plan(sites, recs, ev);
    let keep: Vec<usize> = (0..n).filter(|&g| target[g] == g).collect();
    let new_id = |g: usize| keep.iter().position(|&k| k == target[g]).unwrap_or(0);
    for g in ev.atom_group.values_mut() {
        *g = new_id(*g);
    }
    for g in ev.groups.iter_mut().flatten() {
        *g = new_id(*g);
    }
    ev.kappa = keep.iter().map(|&g| ev.kappa[g].clone()).collect();
    ev.copy_in = keep.iter().map(|&g| ev.copy_in[g]).collect();
    ev.placeable = keep.iter().map(|&g| ev.placeable[g]).collect();
}

/// The merges of `merge_disjoint`: the group every group goes into (itself
/// when kept), `ev.copy_in` of the kept groups updated, and the concrete
/// boxes of the merged groups when they were made (at the kept groups'
/// places: what `concrete_boxes` gives after the renaming).
fn merge_plan(sites: &Sites, recs: &[Recs], ev: &mut Eval) -> (Vec<usize>, Option<Boxes>) {
    let n = ev.kappa.len();
    // Which groups share a cell at some sample (n × n), and the boxes by
    // group, made when a first pair gets that far.
    let mut share_boxes: Option<(Vec<bool>, Boxes)> = None;
    let mut target: Vec<usize> = (0..n).collect();
    for h in 1..n {
        if ev.placeable[h] {
            continue;
        }
        for g in 0..h {
            if target[g] != g || ev.placeable[g] || ev.kappa[g] != ev.kappa[h] {
                continue;
            }
            let (share, boxes) = share_boxes.get_or_insert_with(|| {
                (
                    shared_cells(recs, &ev.groups, n),
                    concrete_boxes(sites, recs, ev, &[]),
                )
            });
            if share[g * n + h] {
                continue;
            }
            let ci = ev.copy_in[g] || ev.copy_in[h];
            let nd = recs.first().map_or(0, |r| r.declared.len());
            let merged: Vec<Option<Vec<(i64, i64)>>> = boxes
                .iter()
                .zip(recs)
                .map(|(bs, rs)| {
                    let mut m = bs[g].clone();
                    if let Some(b) = &bs[h] {
                        hull(&mut m, b);
                    }
                    if let (true, Some(m)) = (ci, &mut m) {
                        m[..nd].copy_from_slice(&rs.declared);
                    }
                    m
                })
                .collect();
            let before: i64 = boxes.iter().map(|b| volume(&b[g]) + volume(&b[h])).sum();
            let after: i64 = merged.iter().map(volume).sum();
            if after > before {
                continue;
            }
            target[h] = g;
            ev.copy_in[g] = ci;
            for (b, m) in boxes.iter_mut().zip(merged) {
                b[g] = m;
            }
            // g now writes the cells of h too.
            for x in 0..n {
                if share[h * n + x] {
                    share[g * n + x] = true;
                    share[x * n + g] = true;
                }
            }
            break;
        }
    }
    (target, share_boxes.map(|(_, b)| b))
}

/// Whether groups g and h write a common cell at some sample, at g·n + h.
fn shared_cells(recs: &[Recs], groups: &[Vec<usize>], n: usize) -> Vec<bool> {
    let mut share = vec![false; n * n];
    let mut here: Vec<usize> = Vec::new();
    for (rs, gs) in recs.iter().zip(groups) {
        for cell in rs.cell_writes.chunk_by(|a, b| a.0 == b.0) {
            here.clear();
            for &(_, x) in cell {
                let g = gs[x as usize];
                if !here.contains(&g) {
                    here.push(g);
                }
            }
            for (i, &a) in here.iter().enumerate() {
                for &b in &here[..i] {
                    share[a * n + b] = true;
                    share[b * n + a] = true;
                }
            }
        }
    }
    share
}

/// `estimate` of the form after `drop_counters` and `merge_disjoint`
/// (which it leaves undone): the boxes the merges made are the renamed
/// form's.
fn merged_size(sites: &Sites, recs: &[Recs], ev: &mut Eval) -> i64 {
    drop_counters(sites, recs, ev);
    if ev.kappa.len() < 2 {
        return estimate(sites, recs, ev);
    }
    let (target, boxes) = merge_plan(sites, recs, ev);
    let Some(boxes) = boxes else {
        return estimate(sites, recs, ev);
    };
    boxes
        .iter()
        .map(|bs| {
            bs.iter()
                .enumerate()
                .filter(|&(g, _)| target[g] == g && !ev.placeable[g])
                .map(|(_, b)| volume(b))
                .sum::<i64>()
        })
        .sum()
}

/// Cells of the renamed form summed over the samples, the placeable groups
/// counted as free (they go into other groups' cells).
fn estimate(sites: &Sites, recs: &[Recs], ev: &Eval) -> i64 {
    concrete_boxes(sites, recs, ev, &[])
        .iter()
        .map(|bs| {
            bs.iter()
                .zip(&ev.placeable)
                .filter(|(_, &p)| !p)
                .map(|(b, _)| volume(b))
                .sum::<i64>()
        })
        .sum()
}

/// Splits of at most this many conditions per statement.
const MAX_CONDS: usize = 2;

/// The sides a new condition gives the writes of statement s (`ops`: their
/// iteration vectors and parameters, samples in a row), or None when it
/// leaves them all on one side.
fn sides_of(sites: &Sites, ops: &[(&[i64], &[i64])], s: usize, e: &Affine) -> Option<Vec<bool>> {
    let at = AtSite::new(e, &sites.stmt[s]);
    let sides: Vec<bool> = ops
        .iter()
        .map(|&(iter, params)| at.eval(iter, params).is_some_and(|v| v <= 0))
        .collect();
    (sides.iter().any(|&b| b) && !sides.iter().all(|&b| b)).then_some(sides)
}

fn with(splits: &HashMap<usize, Vec<Affine>>, s: usize, e: &Affine) -> HashMap<usize, Vec<Affine>> {
    let mut t = splits.clone();
    t.entry(s).or_default().push(e.clone());
    t
}

/// Every one-condition trial of `stmts` (statement order, then pool order)
/// with its score. `candidates` gives the conditions of a statement with
/// the sides they give its writes (conditions leaving every write on one
/// side are left out). A trial depends only on those sides, so it is
/// evaluated once per distinct division.
fn scan<'a, T: Copy>(
    stmts: &[usize],
    candidates: impl Fn(usize) -> Vec<(&'a Affine, &'a [bool])>,
    mut try_split: impl FnMut(usize, &[bool]) -> T,
) -> Vec<(usize, &'a Affine, T)> {
    let mut out = Vec::new();
    let mut seen: HashMap<&[bool], T, WordHash> = HashMap::default();
    for &s in stmts {
        seen.clear();
        for (e, sides) in candidates(s) {
            let x = *seen.entry(sides).or_insert_with(|| try_split(s, sides));
            out.push((s, e, x));
        }
    }
    out
}

/// Chooses splits for one array: greedy rounds that raise the label count
/// (ties: dead updates in place), then rounds that shrink the renamed form
/// at the same count; then groups, κ, merges and dead-write placement. The
/// best form, and the splits of alternatives (the form before shrinking,
/// ties of the last round) to build with `form_with` when it fails.
pub(super) fn array_form(
    program: &Program,
    sites: &Sites,
    samples: &[Sample],
    array: ArrayId,
    pool: &[Affine],
    recs: &[Recs],
) -> Option<(ArrayForm, Vec<Splits>)> {
    let mut stmts: Vec<usize> = recs
        .iter()
        .flat_map(|r| r.writes.iter().map(|w| w.stmt))
        .collect();
    stmts.sort_unstable();
    stmts.dedup();
    if stmts.is_empty() {
        return None;
    }
    // The sides of every usable condition of every statement, made once:
    // the first scan asks for all of them.
    let sides: Vec<Vec<Option<Vec<bool>>>> = stmts
        .iter()
        .map(|&s| {
            let ops: Vec<(&[i64], &[i64])> = recs
                .iter()
                .zip(samples)
                .flat_map(|(rs, x)| {
                    rs.writes
                        .iter()
                        .filter(|w| w.stmt == s)
                        .map(|w| (w.iter.as_slice(), x.values.as_slice()))
                })
                .collect();
            pool.iter()
                .map(|e| {
                    usable(program, e, &sites.stmt[s])
                        .then(|| sides_of(sites, &ops, s, e))
                        .flatten()
                })
                .collect()
        })
        .collect();
    let candidates = |splits: &Splits, s: usize| -> Vec<(&Affine, &[bool])> {
        let have = splits.get(&s).map_or(&[][..], |v| v.as_slice());
        if have.len() >= MAX_CONDS {
            return Vec::new();
        }
        let k = stmts.iter().position(|&x| x == s).unwrap_or(0);
        pool.iter()
            .zip(&sides[k])
            .filter(|(e, _)| !have.contains(e))
            .filter_map(|(e, sd)| Some((e, sd.as_deref()?)))
            .collect()
    };
    // A trial adds one condition to statement s: its bits are the current
    // ones with the next bit of s set where the condition holds.
    fn extra<'a>(splits: &Splits, s: usize, sides: &'a [bool]) -> Option<Extra<'a>> {
        Some(Extra {
            stmt: s,
            bit: 1u32 << splits.get(&s).map_or(0, Vec::len),
            sides,
        })
    }
    let mut work = Work::default();
    let mut splits: Splits = HashMap::new();
    let mut bits = all_bits(sites, samples, recs, &splits);
    work.run(program, sites, recs, &bits, None);
    let mut best = (work.labels, work.classes);
    // Splits that tie with the one taken in the last round: the read labels
    // may have a closed form under one and not under another.
    let mut ties: Vec<(usize, Affine)> = Vec::new();
    let mut before = splits.clone();
    for _ in 0..3 {
        if best.0 == best.1 {
            break;
        }
        let mut round: Vec<(usize, Affine, (u64, u64))> = Vec::new();
        let scored = scan(
            &stmts,
            |s| candidates(&splits, s),
            |s, sides| {
                work.run(program, sites, recs, &bits, extra(&splits, s, sides));
                (work.labels, work.agree)
            },
        );
        for (s, e, score) in scored {
            let cur = round.first().map_or((best.0, 0), |x| x.2);
            if score > cur {
                round.clear();
            }
            if score.0 > best.0 && score >= cur {
                round.push((s, e.clone(), score));
            }
        }
        if round.is_empty() {
            break;
        }
        let (s, e, _) = round.remove(0);
        before = splits.clone();
        splits = with(&splits, s, &e);
        bits = all_bits(sites, samples, recs, &splits);
        work.run(program, sites, recs, &bits, None);
        best = (work.labels, work.classes);
        ties = round.into_iter().map(|(s, e, _)| (s, e)).collect();
    }
    let mut alts: Vec<Splits> = Vec::new();
    // Shrinking rounds: at the same label count, a split whose groups
    // (merged, dead and live-out-only ones free) take fewer cells.
    let size_of = |mut ev: Eval| merged_size(sites, recs, &mut ev);
    if best.0 == best.1 {
        work.run(program, sites, recs, &bits, None);
        let mut size = size_of(work.eval(recs));
        let first = splits.clone();
        for _ in 0..2 {
            let mut pick: Option<(usize, Affine, i64)> = None;
            let scored = scan(
                &stmts,
                |s| candidates(&splits, s),
                |s, sides| {
                    work.run(program, sites, recs, &bits, extra(&splits, s, sides));
                    (work.labels == best.0).then(|| size_of(work.eval(recs)))
                },
            );
            for (s, e, got) in scored {
                if let Some(z) = got {
                    if z < pick.as_ref().map_or(size, |p| p.2) {
                        pick = Some((s, e.clone(), z));
                    }
                }
            }
            let Some((s, e, z)) = pick else { break };
            splits = with(&splits, s, &e);
            bits = all_bits(sites, samples, recs, &splits);
            size = z;
        }
        if splits != first {
            alts.push(first);
        }
    }
    for (s, e) in ties.into_iter().take(16) {
        alts.push(with(&before, s, &e));
    }
    let form = build(program, sites, samples, recs, array, splits);
    Some((form, alts))
}

/// The form of one array under `splits`.
pub(super) fn form_with(
    program: &Program,
    sites: &Sites,
    samples: &[Sample],
    array: ArrayId,
    splits: HashMap<usize, Vec<Affine>>,
    recs: &[Recs],
) -> ArrayForm {
    build(program, sites, samples, recs, array, splits)
}

/// The records of `array` at every sample (`outs`: the copy-out reads).
pub(super) fn array_records(
    program: &Program,
    sites: &Sites,
    samples: &[Sample],
    array: ArrayId,
    outs: &[usize],
) -> Vec<Recs> {
    samples
        .iter()
        .map(|s| records(program, sites, s, array, outs))
        .collect()
}

/// Groups, κ, merges, dead-write placement and boxes under `splits`.
fn build(
    program: &Program,
    sites: &Sites,
    samples: &[Sample],
    recs: &[Recs],
    array: ArrayId,
    splits: HashMap<usize, Vec<Affine>>,
) -> ArrayForm {
    let bits = all_bits(sites, samples, recs, &splits);
    let mut ev = evaluate(program, sites, recs, &bits);
    drop_counters(sites, recs, &mut ev);
    merge_disjoint(sites, recs, &mut ev);
    let placed = super::place::place(program, sites, samples, recs, &bits, &mut ev);
    let boxes = fit_boxes(program, sites, samples, recs, &ev, &placed.scratch);
    let mut atom_group = ev.atom_group;
    // Sides no sample reached take the statement's first group.
    for (&s, conds) in &splits {
        let Some(g0) = (0..1u32 << conds.len())
            .rev()
            .find_map(|b| atom_group.get(&(s, b)).copied())
        else {
            continue;
        };
        for b in 0..1u32 << conds.len() {
            atom_group.entry((s, b)).or_insert(g0);
        }
    }
    ArrayForm {
        array,
        splits,
        atom_group,
        kappa: ev.kappa,
        boxes,
        scratch: placed.scratch,
        copy_in: ev.copy_in,
        labels: ev.labels,
        classes: ev.classes,
        shared: placed.shared,
        notes: placed.notes,
    }
}

/// An affine function of the parameters through (parameters, value) points
/// seen at three samples at least.
fn fit_param(points: &[(Vec<i64>, i64)]) -> Option<Affine> {
    if points.len() < 3 {
        return None;
    }
    let (a, b) = fit::simplest(points, 0)?;
    let mut e = Affine::constant(b);
    for (k, c) in a.into_iter().enumerate() {
        if c != 0 {
            e = e.checked_add(&Affine::var(Var::Param(ParamId(k as u32))).checked_scale(c)?)?;
        }
    }
    Some(e)
}

/// Boxes fitted on the samples: index ranges of groups that are not copied
/// in (declared otherwise, or when no fit), κ ranges (the counter's loop box
/// when no fit).
fn fit_boxes(
    program: &Program,
    sites: &Sites,
    samples: &[Sample],
    recs: &[Recs],
    ev: &Eval,
    scratch: &[bool],
) -> Vec<GroupBox> {
    let conc = concrete_boxes(sites, recs, ev, scratch);
    (0..ev.kappa.len())
        .map(|g| {
            let pts: Vec<(&Vec<i64>, &IntBox)> = conc
                .iter()
                .zip(samples)
                .filter_map(|(bs, s)| bs[g].as_ref().map(|b| (&s.values, b)))
                .collect();
            let nk = ev.kappa[g].len();
            let dims = pts.first().map_or(0, |p| p.1.len());
            let fit_dim = |d: usize| -> Option<(Affine, Affine)> {
                let lo: Vec<(Vec<i64>, i64)> =
                    pts.iter().map(|p| (p.0.clone(), p.1[d].0)).collect();
                let hi: Vec<(Vec<i64>, i64)> =
                    pts.iter().map(|p| (p.0.clone(), p.1[d].1)).collect();
                Some((fit_param(&lo)?, fit_param(&hi)?))
            };
            let nc = dims.saturating_sub(nk);
            let cells = if scratch.get(g) == Some(&true) {
                Some(Vec::new())
            } else if ev.copy_in[g] || dims == 0 {
                None
            } else {
                (0..nc).map(fit_dim).collect::<Option<Vec<_>>>()
            };
            let kappa = ev.kappa[g]
                .iter()
                .enumerate()
                .map(|(k, &c)| {
                    (dims > 0)
                        .then(|| fit_dim(nc + k))
                        .flatten()
                        .or_else(|| counter_box(program, c))
                })
                .collect::<Option<Vec<_>>>();
            GroupBox { cells, kappa }
        })
        .collect()
}

/// One read instance: the site's for-counter values then the parameters,
/// and its label.
struct Pt {
    x: Vec<i64>,
    label: Option<(usize, Vec<i64>)>,
}

/// Fits the read label of every read access of `form.array`, keyed by
/// (site, access). Err names the first read without a closed form.
pub(super) fn read_trees(
    program: &Program,
    sites: &Sites,
    samples: &[Sample],
    form: &ArrayForm,
    pool: &[Affine],
    recs: &[Recs],
) -> Result<HashMap<(Site, usize), Tree>, String> {
    let mut points: HashMap<(Site, usize), Vec<Pt>, WordHash> = HashMap::default();
    // Only the writes' statements, iterations and classes are used: the
    // copy-out reads (`outs`) the records were made with do not matter.
    for (s, recs) in samples.iter().zip(recs) {
        let mut class_label: HashMap<u32, (usize, Vec<i64>), WordHash> = HashMap::default();
        for w in &recs.writes {
            if w.class != NONE && !class_label.contains_key(&w.class) {
                let b = form.splits.get(&w.stmt).map_or(0, |cs| {
                    side_bits(cs, &sites.stmt[w.stmt], &w.iter, &s.values)
                });
                let g = form.atom_group.get(&(w.stmt, b)).copied().unwrap_or(0);
                class_label.insert(w.class, (g, kappa_of(&form.kappa[g], sites, w)));
            }
        }
        for r in s.exp.inst.flow.iter() {
            if r.array() != form.array {
                continue;
            }
            let site = r.site();
            let loops = sites.loops(site);
            let mut x: Vec<i64> = loops
                .iter()
                .zip(r.iter())
                .filter(|(c, _)| program.counter_decl(**c).kind == CounterKind::For)
                .map(|(_, &v)| v)
                .collect();
            x.extend_from_slice(&s.values);
            let class = s.exp.classes.read_class[r.index()];
            let label = if class == NONE {
                None
            } else {
                class_label.get(&class).cloned()
            };
            points
                .entry((site, r.access()))
                .or_default()
                .push(Pt { x, label });
        }
    }
    let mut out = HashMap::new();
    let mut keys: Vec<_> = points.keys().copied().collect();
    keys.sort();
    for key in keys {
        let pts = &points[&key];
        let loops = sites.loops(key.0);
        let vars: Vec<Var> = loops
            .iter()
            .filter(|c| program.counter_decl(**c).kind == CounterKind::For)
            .map(|&c| Var::Counter(c))
            .chain((0..program.params.len()).map(|p| Var::Param(ParamId(p as u32))))
            .collect();
        let conds: Vec<(Affine, Vec<i64>, i64)> = pool
            .iter()
            .filter(|e| usable(program, e, loops))
            .map(|e| {
                (
                    e.clone(),
                    vars.iter().map(|&v| e.coeff(v)).collect(),
                    e.constant,
                )
            })
            .collect();
        let mut fitter = Fitter {
            pts,
            vars: &vars,
            copy_in: &form.copy_in,
            conds: &conds,
            holds: vec![None; conds.len()],
        };
        let all: Vec<u64> = (0..pts.len().div_ceil(64))
            .map(|w| match pts.len() - w * 64 {
                n if n >= 64 => u64::MAX,
                n => (1 << n) - 1,
            })
            .collect();
        let tree = (0..=2)
            .find_map(|depth| fitter.tree(&all, depth))
            .ok_or_else(|| {
                format!(
                    "{} has no closed-form label",
                    super::read_name::read_of(program, key.0, key.1)
                )
            })?;
        out.insert(key, tree);
    }
    Ok(out)
}

/// A leaf: one group and affine κ. Points that see only initial values
/// (label None) fit any group that is copied in.
fn fit_leaf<'p, I>(pts: I, vars: &[Var], copy_in: &[bool]) -> Option<Tree>
where
    I: Iterator<Item = &'p Pt> + Clone,
{
    let Some((g, k0)) = pts.clone().find_map(|p| p.label.as_ref()) else {
        return Some(Tree::Leaf(None));
    };
    if !pts.clone().all(|p| match &p.label {
        Some((h, k)) => h == g && k.len() == k0.len(),
        None => copy_in.get(*g) == Some(&true),
    }) {
        return None;
    }
    let mut dims = Vec::new();
    for d in 0..k0.len() {
        let data: Vec<(&[i64], i64)> = pts
            .clone()
            .filter_map(|p| p.label.as_ref().map(|(_, k)| (p.x.as_slice(), k[d])))
            .collect();
        let (a, b) = fit::simplest_over(&data, vars)?;
        // At reads that see only initial values the label must stay inside
        // the κ values seen (the copied-in box), not just fit.
        let lo = data.iter().map(|d| d.1).min()?;
        let hi = data.iter().map(|d| d.1).max()?;
        for p in pts.clone().filter(|p| p.label.is_none()) {
            let v: i64 = a.iter().zip(&p.x).map(|(c, x)| c * x).sum::<i64>() + b;
            if v < lo || v > hi {
                return None;
            }
        }
        let mut e = Affine::constant(b);
        for (v, c) in vars.iter().zip(a) {
            if c != 0 {
                e = e.checked_add(&Affine::var(*v).checked_scale(c)?)?;
            }
        }
        dims.push(e);
    }
    Some(Tree::Leaf(Some((*g, dims))))
}

/// The points of `pts` in the bit set `set`, in their order.
fn members<'p>(pts: &'p [Pt], set: &'p [u64]) -> impl Iterator<Item = &'p Pt> + Clone {
    set.iter()
        .enumerate()
        .flat_map(move |(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    w * 64 + b
                })
            })
        })
        .filter_map(move |i| pts.get(i))
}

/// The read points of one access and the conditions a tree may test, with
/// where each condition holds (a bit set over the points, made on first
/// use).
struct Fitter<'a> {
    pts: &'a [Pt],
    vars: &'a [Var],
    copy_in: &'a [bool],
    conds: &'a [(Affine, Vec<i64>, i64)],
    holds: Vec<Option<Vec<u64>>>,
}

impl Fitter<'_> {
    fn holds(&mut self, k: usize) -> &[u64] {
        let (pts, (_, a, b)) = (self.pts, &self.conds[k]);
        self.holds[k].get_or_insert_with(|| {
            let mut set = vec![0u64; pts.len().div_ceil(64)];
            for (i, p) in pts.iter().enumerate() {
                let v = a
                    .iter()
                    .zip(&p.x)
                    .fold(0i64, |s, (c, v)| s.wrapping_add(c.wrapping_mul(*v)));
                if v.wrapping_add(*b) <= 0 {
                    set[i / 64] |= 1 << (i % 64);
                }
            }
            set
        })
    }

    /// A tree of at most `depth` splits through the points in `set` (in
    /// their order): a leaf if one fits, else the first condition (pool
    /// order) dividing them whose two sides fit.
    fn tree(&mut self, set: &[u64], depth: usize) -> Option<Tree> {
        if let Some(t) = fit_leaf(members(self.pts, set), self.vars, self.copy_in) {
            return Some(t);
        }
        if depth == 0 {
            return None;
        }
        let (mut yes, mut no) = (vec![0u64; set.len()], vec![0u64; set.len()]);
        for k in 0..self.conds.len() {
            let holds = self.holds(k);
            let (mut any_yes, mut any_no) = (false, false);
            for (((y, n), &s), &h) in yes.iter_mut().zip(&mut no).zip(set).zip(holds) {
                *y = s & h;
                *n = s & !h;
                any_yes |= *y != 0;
                any_no |= *n != 0;
            }
            if !any_yes || !any_no {
                continue;
            }
            let Some(ty) = self.tree(&yes, depth - 1) else {
                continue;
            };
            if let Some(tn) = self.tree(&no, depth - 1) {
                let e = Test::Le(self.conds[k].0.clone());
                return Some(Tree::Split(e, Box::new(ty), Box::new(tn)));
            }
        }
        None
    }
}
