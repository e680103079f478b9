//! R, R*, live writes, classes, representatives and labels, on the access
//! instances of a bounded analysis (docs/expansion.md).

use super::ExpansionError;
use crate::dataflow::Instances;
use crate::facts::Facts;

/// No write / no label / no class.
pub const NONE: u32 = u32::MAX;

#[path = "../../rules/expansion.rs"]
mod rules_source;

/// σ as the rules see it: the elements (writes, then initial values) each
/// read slot may read. Equal to every other: there is one per run.
#[derive(Clone, Copy)]
pub(crate) struct Sigma<'a> {
    flow: &'a crate::dataflow::Flow,
    op_write: &'a [u32],
    /// Initial-value elements, grouped by slot: `init[init_start[s]..init_start[s + 1]]`.
    init: &'a [u32],
    init_start: &'a [u32],
}

impl PartialEq for Sigma<'_> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for Sigma<'_> {}
impl std::hash::Hash for Sigma<'_> {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl<'a> Sigma<'a> {
    pub(crate) fn n_slots(&self) -> u32 {
        self.flow.len() as u32
    }

    fn init_of(&self, s: u32) -> &'a [u32] {
        let s = s as usize;
        &self.init[self.init_start[s] as usize..self.init_start[s + 1] as usize]
    }

    /// The possible sources of slot `s`: writes, then initial values.
    pub(crate) fn elements(&self, s: u32) -> impl Iterator<Item = u32> + 'a {
        let op_write = self.op_write;
        self.flow
            .source_ops(s as usize)
            .iter()
            .map(move |&o| op_write[o as usize])
            .chain(self.init_of(s).iter().copied())
    }

    pub(crate) fn anchor(&self, s: u32) -> Option<u32> {
        // The rules ask once per slot: where a long run polls.
        arrayflow_model::cancel::poll_every(s as usize);
        self.elements(s).next()
    }
}

/// R's spanning edges, by the rules of `rules/expansion.rs`.
fn related<'a>(sigma: Sigma<'a>) -> Vec<(u32, u32)> {
    let r = ascent::ascent_run! {
        struct Run<'a>;
        include_source!(rules_source::expansion_r);
        ctx(sigma);
    };
    r.related
}

/// Classes and labels of every write and read of one analysis.
#[derive(Debug, Default)]
pub struct Classes {
    /// Write operations (op ids of the facts), in execution order.
    pub write_ops: Vec<u32>,
    /// Write `w`'s cells: `write_cells[write_start[w]..write_start[w + 1]]`
    /// (one for a must-write, the declared range for a may-write).
    pub write_start: Vec<u32>,
    pub write_cells: Vec<u32>,
    /// Whether write `w` is a may-write (non-affine subscript).
    pub write_may: Vec<bool>,
    /// Whether write `w` is a possible source of some read.
    pub live: Vec<bool>,
    /// Class of write `w` (classes numbered by representative, in execution
    /// order), or NONE for a dead write.
    pub write_class: Vec<u32>,
    /// Label of each class, 1-based.
    pub class_label: Vec<u32>,
    /// Representative φ of each class: a write id, or, when
    /// `class_rep_initial`, the cell whose initial value it is.
    pub class_rep: Vec<u32>,
    pub class_rep_initial: Vec<bool>,
    /// Class of each read slot (of its sources), or NONE when no live write is
    /// in it (the read sees only initial contents no write shares).
    pub read_class: Vec<u32>,
    /// Per written cell (sorted by cell id): (cell, number of classes of live
    /// writes of the cell, W(c)/R*).
    pub cell_classes: Vec<(u32, u32)>,
    /// Σ_c |W(c)/R*|.
    pub total: u64,
}

impl Classes {
    pub fn write_cells(&self, w: usize) -> &[u32] {
        &self.write_cells[self.write_start[w] as usize..self.write_start[w + 1] as usize]
    }

    pub fn write_label(&self, w: usize) -> Option<u32> {
        self.label_of(self.write_class[w])
    }

    pub fn read_label(&self, slot: usize) -> Option<u32> {
        self.read_class.get(slot).and_then(|&c| self.label_of(c))
    }

    fn label_of(&self, class: u32) -> Option<u32> {
        self.class_label.get(class as usize).copied()
    }

    pub fn n_classes(&self) -> usize {
        self.class_label.len()
    }
}

/// Union-find with path halving and union by size.
struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    fn new(n: usize) -> UnionFind {
        UnionFind {
            parent: (0..n as u32).collect(),
            size: vec![1; n],
        }
    }

    fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let p = self.parent[x as usize];
            self.parent[x as usize] = self.parent[p as usize];
            x = self.parent[x as usize];
        }
        x
    }

    fn union(&mut self, a: u32, b: u32) {
        let (a, b) = (self.find(a), self.find(b));
        if a == b {
            return;
        }
        let (big, small) = if self.size[a as usize] >= self.size[b as usize] {
            (a, b)
        } else {
            (b, a)
        };
        self.parent[small as usize] = big;
        self.size[big as usize] += self.size[small as usize];
    }
}

/// The writes of the facts: ops with write instances, their cells, may flags.
fn writes(facts: &Facts) -> (Classes, Vec<u32>) {
    let mut c = Classes {
        write_start: vec![0],
        ..Classes::default()
    };
    let mut op_write = vec![NONE; facts.n_ops()];
    for x in 0..facts.n_accs() as u32 {
        if !facts.is_write(x) {
            continue;
        }
        let op = facts.op(x);
        if c.write_ops.last() != Some(&op) {
            if !c.write_ops.is_empty() {
                c.write_start.push(c.write_cells.len() as u32);
            }
            op_write[op as usize] = c.write_ops.len() as u32;
            c.write_ops.push(op);
            c.write_may.push(facts.is_may(x));
        }
        c.write_cells.push(facts.acc_cell[x as usize]);
    }
    if !c.write_ops.is_empty() {
        c.write_start.push(c.write_cells.len() as u32);
    }
    (c, op_write)
}

/// Computes classes and labels from σ (docs/expansion.md, §2).
pub fn compute(inst: &Instances) -> Result<Classes, ExpansionError> {
    let facts = &inst.facts;
    let flow = &inst.flow;
    let (mut c, op_write) = writes(facts);
    let n_w = c.write_ops.len();

    // Pseudo-writes: the initial value of each cell some read instance
    // sees. (An update's read instance comes after the op's other reads but
    // has its first slot: sort.)
    let mut init: Vec<(u32, u32)> = Vec::new(); // (slot, cell)
    for x in 0..facts.n_accs() as u32 {
        arrayflow_model::cancel::poll_every(x as usize);
        if facts.is_read(x) && inst.initial_at(x) {
            init.push((facts.acc_slot[x as usize], facts.acc_cell[x as usize]));
        }
    }
    init.sort_unstable();
    let mut init_cells: Vec<u32> = init.iter().map(|&(_, cell)| cell).collect();
    init_cells.sort_unstable();
    init_cells.dedup();
    let n_elems = n_w + init_cells.len();
    if n_elems >= NONE as usize {
        return Err(ExpansionError::TooLarge(n_elems));
    }
    let mut init_elems: Vec<u32> = Vec::with_capacity(init.len());
    let mut init_start: Vec<u32> = Vec::with_capacity(flow.len() + 1);
    let mut k = 0;
    for s in 0..flow.len() as u32 {
        arrayflow_model::cancel::poll_every(s as usize);
        init_start.push(init_elems.len() as u32);
        let from = init_elems.len();
        while k < init.len() && init[k].0 == s {
            // `init_cells` holds every cell of `init`.
            let p = init_cells.binary_search(&init[k].1).unwrap_or(0);
            init_elems.push((n_w + p) as u32);
            k += 1;
        }
        init_elems[from..].sort_unstable();
        let mut v = init_elems.split_off(from);
        v.dedup();
        init_elems.extend(v);
    }
    init_start.push(init_elems.len() as u32);

    // Live writes: the possible sources of some read.
    c.live = vec![false; n_w];
    for s in 0..flow.len() {
        arrayflow_model::cancel::poll_every(s);
        for &op in flow.source_ops(s) {
            match op_write
                .get(op as usize)
                .and_then(|&w| c.live.get_mut(w as usize))
            {
                Some(l) => *l = true,
                None => return Err(ExpansionError::NotAWrite),
            }
        }
    }

    let sigma = Sigma {
        flow,
        op_write: &op_write,
        init: &init_elems,
        init_start: &init_start,
    };
    let mut uf = UnionFind::new(n_elems);
    for (i, (e, a)) in related(sigma).into_iter().enumerate() {
        arrayflow_model::cancel::poll_every(i);
        uf.union(e, a);
    }

    // φ: the earliest element of each class; initial values come first (in
    // cell order), then writes in execution order. `key` numbers elements
    // in that order.
    let key = |e: u32| -> u32 {
        if (e as usize) < n_w {
            (init_cells.len() + e as usize) as u32
        } else {
            e - n_w as u32
        }
    };
    let mut first = vec![NONE; n_elems]; // root -> min key
    for e in 0..n_elems as u32 {
        let r = uf.find(e) as usize;
        first[r] = first[r].min(key(e));
    }

    // Cells of each class that has a live write: its live writes' cells and
    // the cells of the initial values in it. (φ key, cell) pairs.
    let mut has_live = vec![false; n_elems];
    for w in 0..n_w {
        if c.live[w] {
            let r = uf.find(w as u32) as usize;
            has_live[r] = true;
        }
    }
    let mut class_cells: Vec<(u32, u32)> = Vec::new();
    let mut live_pairs: Vec<(u32, u32)> = Vec::new(); // (cell, φ key)
    for w in 0..n_w {
        if c.live[w] {
            let k = first[uf.find(w as u32) as usize];
            for &cell in c.write_cells(w) {
                class_cells.push((k, cell));
                live_pairs.push((cell, k));
            }
        }
    }
    for (p, &cell) in init_cells.iter().enumerate() {
        let r = uf.find((n_w + p) as u32) as usize;
        if has_live[r] {
            class_cells.push((first[r], cell));
        }
    }
    class_cells.sort_unstable();
    class_cells.dedup();

    // Labels: classes in φ order, each the smallest label no earlier class
    // sharing one of its cells has (docs/expansion.md, §3).
    let mut key_class: Vec<u32> = vec![NONE; n_elems];
    let mut label_cells: Vec<u32> = class_cells.iter().map(|&(_, cell)| cell).collect();
    label_cells.sort_unstable();
    label_cells.dedup();
    let dense = |cell: u32| label_cells.binary_search(&cell).unwrap_or(0);
    // Per cell, the smallest label no class has taken yet; labels taken
    // above it are in `above`.
    let mut mex: Vec<u32> = vec![1; label_cells.len()];
    let mut above: std::collections::HashSet<(u32, u32)> = Default::default();
    let mut k = 0;
    while k < class_cells.len() {
        let fk = class_cells[k].0;
        let mut end = k;
        while end < class_cells.len() && class_cells[end].0 == fk {
            end += 1;
        }
        let cells = &class_cells[k..end];
        let mut label = cells
            .iter()
            .map(|&(_, cell)| mex[dense(cell)])
            .max()
            .unwrap_or(1);
        while cells
            .iter()
            .any(|&(_, cell)| above.contains(&(cell, label)))
        {
            label += 1;
        }
        for &(_, cell) in cells {
            let m = &mut mex[dense(cell)];
            if *m == label {
                *m += 1;
                while above.remove(&(cell, *m)) {
                    *m += 1;
                }
            } else {
                above.insert((cell, label));
            }
        }
        key_class[fk as usize] = c.class_label.len() as u32;
        c.class_label.push(label);
        if (fk as usize) < init_cells.len() {
            c.class_rep.push(init_cells[fk as usize]);
            c.class_rep_initial.push(true);
        } else {
            c.class_rep.push(fk - init_cells.len() as u32);
            c.class_rep_initial.push(false);
        }
        k = end;
    }

    let class_of = |uf: &mut UnionFind, e: u32| key_class[first[uf.find(e) as usize] as usize];
    c.write_class = (0..n_w as u32)
        .map(|w| {
            if c.live[w as usize] {
                class_of(&mut uf, w)
            } else {
                NONE
            }
        })
        .collect();

    // Every read: its sources must share one class.
    c.read_class = vec![NONE; flow.len()];
    for s in 0..flow.len() as u32 {
        let Some(a) = sigma.anchor(s) else { continue };
        let root = uf.find(a);
        for e in sigma.elements(s) {
            if uf.find(e) != root {
                return Err(ExpansionError::SplitRead { slot: s });
            }
        }
        c.read_class[s as usize] = key_class[first[root as usize] as usize];
    }

    // W(c)/R* per written cell.
    live_pairs.sort_unstable();
    live_pairs.dedup();
    let mut written: Vec<u32> = c.write_cells.clone();
    written.sort_unstable();
    written.dedup();
    let mut p = 0;
    for cell in written {
        let mut n = 0;
        while p < live_pairs.len() && live_pairs[p].0 == cell {
            n += 1;
            p += 1;
        }
        c.cell_classes.push((cell, n));
    }
    c.total = live_pairs.len() as u64;
    Ok(c)
}
