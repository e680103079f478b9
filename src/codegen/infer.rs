//! Closed-form labels from bounded results (issue 6, "Finding closed
//! forms"). A write's label is (group, κ): the group is the atom
//! (statement, side of one affine split) it belongs to, merged with every
//! atom it shares a class with; κ is a subset of the counters common to the
//! group's statements, constant on every class. A read's label is a small
//! decision tree over affine conditions whose leaves are a group and one
//! affine function per κ dimension, fitted exactly on the samples.

use super::fit;
use crate::expansion::classes::NONE;
use crate::expansion::Expansion;
use crate::model::{
    AccessKind, Affine, ArrayId, CounterId, CounterKind, ExprKind, Node, ParamId, Program, Site,
    Var,
};
use std::collections::{BTreeMap, HashMap};

/// The bounded expansion at one parameter vector.
pub struct Sample {
    pub values: Vec<i64>,
    pub exp: Expansion,
}

/// The enclosing loops of every site (outermost first: the positions of the
/// iteration vector).
pub struct Sites {
    pub stmt: Vec<Vec<CounterId>>,
    pub cond: Vec<Vec<CounterId>>,
}

impl Sites {
    pub fn new(p: &Program) -> Sites {
        let mut s = Sites {
            stmt: vec![Vec::new(); p.stmts().len()],
            cond: vec![Vec::new(); p.conditions().len()],
        };
        walk(&p.body, &mut Vec::new(), &mut s);
        s
    }

    pub fn loops(&self, site: Site) -> &[CounterId] {
        match site {
            Site::Stmt(x) => &self.stmt[x.index()],
            Site::Cond(x) => &self.cond[x.index()],
        }
    }
}

fn walk(nodes: &[Node], outer: &mut Vec<CounterId>, s: &mut Sites) {
    for n in nodes {
        match n {
            Node::Stmt(st) => s.stmt[st.id.index()] = outer.clone(),
            Node::For(f) => {
                outer.push(f.counter);
                walk(&f.body, outer, s);
                outer.pop();
            }
            Node::While(w) => {
                outer.push(w.counter);
                s.cond[w.cond.id.index()] = outer.clone();
                walk(&w.body, outer, s);
                outer.pop();
            }
            Node::If(i) => {
                for (c, b) in &i.branches {
                    s.cond[c.id.index()] = outer.clone();
                    walk(b, outer, s);
                }
                if let Some(b) = &i.otherwise {
                    walk(b, outer, s);
                }
            }
        }
    }
}

/// Value of `e` at an operation of a site with loops `loops`.
pub fn eval_at(e: &Affine, loops: &[CounterId], iter: &[i64], params: &[i64]) -> Option<i64> {
    let ok = e.vars().all(|v| match v {
        Var::Param(_) => true,
        Var::Counter(c) => loops.contains(&c),
    });
    if !ok {
        return None;
    }
    e.eval(|v| match v {
        Var::Param(p) => params.get(p.index()).copied().unwrap_or(0),
        Var::Counter(c) => loops
            .iter()
            .position(|&l| l == c)
            .and_then(|k| iter.get(k).copied())
            .unwrap_or(0),
    })
}

/// A read label as a decision tree: `Split(e, yes, no)` tests e ≤ 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tree {
    /// None: the original array (only initial values reach the read).
    Leaf(Option<(usize, Vec<Affine>)>),
    Split(Affine, Box<Tree>, Box<Tree>),
}

impl Tree {
    pub fn conditions(&self, out: &mut Vec<Affine>) {
        if let Tree::Split(e, a, b) = self {
            if !out.contains(e) {
                out.push(e.clone());
            }
            a.conditions(out);
            b.conditions(out);
        }
    }

    /// The leaf selected by truth values of conditions.
    pub fn leaf(&self, truth: &dyn Fn(&Affine) -> bool) -> &Option<(usize, Vec<Affine>)> {
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
    /// Per writing statement: its split condition (e ≤ 0), if any.
    pub splits: HashMap<usize, Affine>,
    /// (statement index, side) → group; side is true without a split.
    pub atom_group: HashMap<(usize, bool), usize>,
    /// κ of each group.
    pub kappa: Vec<Vec<CounterId>>,
    /// Whether a class of the group holds an initial value (copy-in).
    pub copy_in: Vec<bool>,
    /// Σ_c distinct labels and Σ_c classes over the samples (k of m).
    pub labels: u64,
    pub classes: u64,
}

/// Per-array outcome.
#[derive(Clone, Debug)]
pub enum Outcome {
    Expanded(ArrayForm),
    NotExpanded(String),
}

struct WriteRec {
    stmt: usize,
    iter: Vec<i64>,
    class: u32,
    cells: Vec<u32>,
}

fn write_recs(program: &Program, s: &Sample, array: ArrayId) -> Vec<WriteRec> {
    let stmts = program.stmts();
    let c = &s.exp.classes;
    let facts = &s.exp.inst.facts;
    let mut out = Vec::new();
    for (w, &op) in c.write_ops.iter().enumerate() {
        let Site::Stmt(st) = facts.site(op) else {
            continue;
        };
        let Some((acc, _)) = stmts[st.index()].write() else {
            continue;
        };
        if acc.array != array {
            continue;
        }
        out.push(WriteRec {
            stmt: st.index(),
            iter: facts.op_iter(op).to_vec(),
            class: c.write_class[w],
            cells: c.write_cells(w).to_vec(),
        });
    }
    out
}

/// Common for-counters of the statements, in the nesting order of the first.
fn common_counters(program: &Program, sites: &Sites, stmts: &[usize]) -> Vec<CounterId> {
    let Some(&first) = stmts.first() else {
        return Vec::new();
    };
    sites.stmt[first]
        .iter()
        .copied()
        .filter(|c| program.counter_decl(*c).kind == CounterKind::For)
        .filter(|c| stmts.iter().all(|&s| sites.stmt[s].contains(c)))
        .collect()
}

struct Eval {
    atom_group: HashMap<(usize, bool), usize>,
    kappa: Vec<Vec<CounterId>>,
    copy_in: Vec<bool>,
    labels: u64,
    classes: u64,
}

fn side(split: Option<&Affine>, sites: &Sites, w: &WriteRec, params: &[i64]) -> bool {
    match split {
        None => true,
        Some(e) => eval_at(e, &sites.stmt[w.stmt], &w.iter, params).is_some_and(|v| v <= 0),
    }
}

/// Label (group, κ values) of a write.
fn label_of(
    atom_group: &HashMap<(usize, bool), usize>,
    kappa: &[Vec<CounterId>],
    sites: &Sites,
    w: &WriteRec,
    sd: bool,
) -> (usize, Vec<i64>) {
    let g = atom_group.get(&(w.stmt, sd)).copied().unwrap_or(0);
    let loops = &sites.stmt[w.stmt];
    let k = kappa[g]
        .iter()
        .map(|c| {
            loops
                .iter()
                .position(|l| l == c)
                .and_then(|p| w.iter.get(p).copied())
                .unwrap_or(0)
        })
        .collect();
    (g, k)
}

/// (Σ distinct labels, Σ classes) over cells and samples.
fn count(
    recs: &[Vec<WriteRec>],
    samples: &[Sample],
    splits: &HashMap<usize, Affine>,
    atom_group: &HashMap<(usize, bool), usize>,
    kappa: &[Vec<CounterId>],
    sites: &Sites,
) -> (u64, u64) {
    let (mut labels, mut classes) = (0, 0);
    // Labels interned to numbers: the sorts below move triples of u32, not
    // vectors (this runs once per trial split and per κ counter dropped).
    // Ranks keep the labels' order, so the dedup below keeps the same one.
    let mut per: Vec<(u32, u32, u32)> = Vec::new();
    for (rs, s) in recs.iter().zip(samples) {
        let ls: Vec<Option<(usize, Vec<i64>)>> = rs
            .iter()
            .map(|w| {
                (w.class != NONE).then(|| {
                    let sd = side(splits.get(&w.stmt), sites, w, &s.values);
                    label_of(atom_group, kappa, sites, w, sd)
                })
            })
            .collect();
        let mut ranks: BTreeMap<&(usize, Vec<i64>), u32> =
            ls.iter().flatten().map(|l| (l, 0)).collect();
        for (k, r) in ranks.values_mut().enumerate() {
            *r = k as u32;
        }
        per.clear();
        for (w, l) in rs.iter().zip(&ls) {
            let Some(l) = l else { continue };
            let id = ranks[l];
            per.extend(w.cells.iter().map(|&cell| (cell, w.class, id)));
        }
        per.sort_unstable();
        per.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
        classes += per.len() as u64;
        let mut ls: Vec<(u32, u32)> = per.iter().map(|&(c, _, l)| (c, l)).collect();
        ls.sort_unstable();
        ls.dedup();
        labels += ls.len() as u64;
    }
    (labels, classes)
}

fn evaluate(
    program: &Program,
    sites: &Sites,
    samples: &[Sample],
    recs: &[Vec<WriteRec>],
    stmts: &[usize],
    splits: &HashMap<usize, Affine>,
    drop: bool,
) -> Eval {
    // Atoms, merged through classes.
    let mut atoms: Vec<(usize, bool)> = Vec::new();
    for &s in stmts {
        atoms.push((s, true));
        if splits.contains_key(&s) {
            atoms.push((s, false));
        }
    }
    let idx = |a: (usize, bool)| atoms.iter().position(|&b| b == a).unwrap_or(0);
    let mut parent: Vec<usize> = (0..atoms.len()).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    let mut init_atoms = vec![false; atoms.len()];
    for (rs, s) in recs.iter().zip(samples) {
        let mut first: HashMap<u32, usize> = HashMap::new();
        let c = &s.exp.classes;
        for w in rs {
            if w.class == NONE {
                continue;
            }
            let a = idx((w.stmt, side(splits.get(&w.stmt), sites, w, &s.values)));
            if c.class_rep_initial.get(w.class as usize) == Some(&true) {
                init_atoms[a] = true;
            }
            match first.get(&w.class) {
                Some(&b) => {
                    let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
                    parent[ra] = rb;
                }
                None => {
                    first.insert(w.class, a);
                }
            }
        }
    }
    let mut roots: Vec<usize> = Vec::new();
    let mut atom_group = HashMap::new();
    let mut copy_in = Vec::new();
    for (k, &a) in atoms.iter().enumerate() {
        let r = find(&mut parent, k);
        let g = match roots.iter().position(|&x| x == r) {
            Some(g) => g,
            None => {
                roots.push(r);
                copy_in.push(false);
                roots.len() - 1
            }
        };
        copy_in[g] |= init_atoms[k];
        atom_group.insert(a, g);
    }
    // κ: common counters constant on every class.
    let mut kappa: Vec<Vec<CounterId>> = Vec::new();
    for g in 0..roots.len() {
        let members: Vec<usize> = atoms
            .iter()
            .filter(|a| atom_group[a] == g)
            .map(|a| a.0)
            .collect();
        let mut ks = common_counters(program, sites, &members);
        ks.retain(|&c| {
            recs.iter().zip(samples).all(|(rs, s)| {
                let mut seen: HashMap<u32, i64> = HashMap::new();
                rs.iter().all(|w| {
                    if w.class == NONE
                        || atom_group.get(&(w.stmt, side(splits.get(&w.stmt), sites, w, &s.values)))
                            != Some(&g)
                    {
                        return true;
                    }
                    let loops = &sites.stmt[w.stmt];
                    let v = loops
                        .iter()
                        .position(|&l| l == c)
                        .and_then(|p| w.iter.get(p).copied())
                        .unwrap_or(0);
                    *seen.entry(w.class).or_insert(v) == v
                })
            })
        });
        kappa.push(ks);
    }
    // Drop counters that do not separate classes (innermost first).
    // Every class has one label (groups join classes, κ is constant on
    // them), so dropping can only merge labels: `labels` is final already
    // and the split search (`drop` false) skips the drops.
    let (mut labels, classes) = count(recs, samples, splits, &atom_group, &kappa, sites);
    for g in (0..kappa.len()).filter(|_| drop) {
        let mut k = kappa[g].len();
        while k > 0 {
            k -= 1;
            let removed = kappa[g].remove(k);
            let (l, _) = count(recs, samples, splits, &atom_group, &kappa, sites);
            if l < labels {
                kappa[g].insert(k, removed);
            } else {
                labels = l;
            }
        }
    }
    Eval {
        atom_group,
        kappa,
        copy_in,
        labels,
        classes,
    }
}

/// Candidate split conditions (e ≤ 0) from the program: loop bounds, affine
/// guards, differences of affine subscripts of one array.
pub fn pool(program: &Program) -> Vec<Affine> {
    let mut out: Vec<Affine> = Vec::new();
    let mut push = |e: Option<Affine>| {
        if let Some(mut e) = e {
            e.terms.retain(|t| t.1 != 0);
            e.terms.sort();
            if !e.terms.is_empty() && !out.contains(&e) {
                out.push(e);
            }
        }
    };
    fn nodes(ns: &[Node], push: &mut dyn FnMut(Option<Affine>)) {
        for n in ns {
            match n {
                Node::For(f) => {
                    let c = Affine::var(Var::Counter(f.counter));
                    push(c.checked_sub(&f.lower.affine));
                    push(
                        c.checked_sub(&f.upper.affine)
                            .and_then(|e| e.checked_add(&Affine::constant(1))),
                    );
                    nodes(&f.body, push);
                }
                Node::While(w) => nodes(&w.body, push),
                Node::If(i) => {
                    for (c, b) in &i.branches {
                        cond(&c.cond, push);
                        nodes(b, push);
                    }
                    if let Some(b) = &i.otherwise {
                        nodes(b, push);
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
    nodes(&program.body, &mut push);
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
                    let lo = bound(&f.lower.affine, outer, true)?;
                    let hi = bound(&f.upper.affine, outer, false)?;
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
    fn bound(e: &Affine, outer: &[(CounterId, Affine, Affine)], low: bool) -> Option<Affine> {
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
    find(&program.body, c, &mut Vec::new())
}

/// [min, max] of an affine function over the boxes of its counters.
fn range(program: &Program, f: &Affine) -> Option<(Affine, Affine)> {
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
                let (a, b) = counter_box(program, c)?;
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

/// The writes of `array` at each sample, and the statements making them.
fn writes(
    program: &Program,
    samples: &[Sample],
    array: ArrayId,
) -> (Vec<Vec<WriteRec>>, Vec<usize>) {
    let recs: Vec<Vec<WriteRec>> = samples
        .iter()
        .map(|s| write_recs(program, s, array))
        .collect();
    let mut stmts: Vec<usize> = recs.iter().flatten().map(|w| w.stmt).collect();
    stmts.sort_unstable();
    stmts.dedup();
    (recs, stmts)
}

/// The form of one array under `splits` (groups and κ evaluated).
pub fn form_with(
    program: &Program,
    sites: &Sites,
    samples: &[Sample],
    array: ArrayId,
    splits: HashMap<usize, Affine>,
) -> ArrayForm {
    let (recs, stmts) = writes(program, samples, array);
    let ev = evaluate(program, sites, samples, &recs, &stmts, &splits, true);
    ArrayForm::new(array, splits, ev)
}

impl ArrayForm {
    fn new(array: ArrayId, splits: HashMap<usize, Affine>, ev: Eval) -> ArrayForm {
        ArrayForm {
            array,
            splits,
            atom_group: ev.atom_group,
            kappa: ev.kappa,
            copy_in: ev.copy_in,
            labels: ev.labels,
            classes: ev.classes,
        }
    }
}

/// Chooses splits greedily, then groups and κ, for one array: the best
/// form, and the splits of the alternatives (ties of the last round, to
/// build with `form_with` when the best one fails).
pub fn array_form(
    program: &Program,
    sites: &Sites,
    samples: &[Sample],
    array: ArrayId,
    pool: &[Affine],
) -> Option<(ArrayForm, Vec<HashMap<usize, Affine>>)> {
    let (recs, stmts) = writes(program, samples, array);
    if stmts.is_empty() {
        return None;
    }
    let mut splits: HashMap<usize, Affine> = HashMap::new();
    let full = |splits: &HashMap<usize, Affine>| {
        evaluate(program, sites, samples, &recs, &stmts, splits, true)
    };
    let mut best = full(&splits);
    // Splits that tie with the one taken in the last round: the read labels
    // may have a closed form under one and not under another.
    let mut ties: Vec<(usize, Affine, u64)> = Vec::new();
    let mut before = splits.clone();
    for _ in 0..3 {
        if best.labels == best.classes {
            break;
        }
        let mut round: Vec<(usize, Affine, u64)> = Vec::new();
        for &s in &stmts {
            if splits.contains_key(&s) {
                continue;
            }
            // A trial depends only on the sides it gives the writes of s:
            // splits leaving them all on one side change nothing, and
            // splits giving the same sides give the same count.
            let mut seen: HashMap<Vec<bool>, u64> = HashMap::new();
            for e in pool.iter().filter(|e| usable(program, e, &sites.stmt[s])) {
                let sides: Vec<bool> = recs
                    .iter()
                    .zip(samples)
                    .flat_map(|(rs, x)| {
                        rs.iter()
                            .filter(|w| w.stmt == s)
                            .map(|w| side(Some(e), sites, w, &x.values))
                    })
                    .collect();
                if sides.iter().all(|&b| b) || !sides.iter().any(|&b| b) {
                    continue;
                }
                let labels = match seen.get(&sides) {
                    Some(&l) => l,
                    None => {
                        let mut trial = splits.clone();
                        trial.insert(s, e.clone());
                        let l =
                            evaluate(program, sites, samples, &recs, &stmts, &trial, false).labels;
                        seen.insert(sides, l);
                        l
                    }
                };
                let cur = round.first().map_or(best.labels, |x| x.2);
                if labels > cur {
                    round.clear();
                }
                if labels > best.labels && labels >= cur {
                    round.push((s, e.clone(), labels));
                }
            }
        }
        if round.is_empty() {
            break;
        }
        let (s, e, _) = round.remove(0);
        before = splits.clone();
        splits.insert(s, e);
        best = full(&splits);
        ties = round;
    }
    let make = |splits, ev| ArrayForm::new(array, splits, ev);
    let mut alts = Vec::new();
    for (s, e, _) in ties.into_iter().take(16) {
        let mut alt = before.clone();
        alt.insert(s, e);
        alts.push(alt);
    }
    Some((make(splits, best), alts))
}

/// One read instance: the site's for-counter values then the parameters,
/// and its label.
struct Pt {
    x: Vec<i64>,
    label: Option<(usize, Vec<i64>)>,
}

/// Fits the read label of every read access of `form.array`, keyed by
/// (site, access). Err names the first read without a closed form.
pub fn read_trees(
    program: &Program,
    sites: &Sites,
    samples: &[Sample],
    form: &ArrayForm,
    pool: &[Affine],
) -> Result<HashMap<(Site, usize), Tree>, String> {
    let mut points: HashMap<(Site, usize), Vec<Pt>> = HashMap::new();
    for s in samples {
        let recs = write_recs(program, s, form.array);
        let mut class_label: HashMap<u32, (usize, Vec<i64>)> = HashMap::new();
        for w in &recs {
            if w.class != NONE && !class_label.contains_key(&w.class) {
                let sd = side(form.splits.get(&w.stmt), sites, w, &s.values);
                class_label.insert(
                    w.class,
                    label_of(&form.atom_group, &form.kappa, sites, w, sd),
                );
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
        let refs: Vec<&Pt> = pts.iter().collect();
        let tree = (0..=2)
            .find_map(|depth| fit_tree(&refs, &vars, &form.copy_in, &conds, depth))
            .ok_or_else(|| {
                format!(
                    "read {} of `{}` has no closed-form label",
                    key.1,
                    program.site_name(key.0)
                )
            })?;
        out.insert(key, tree);
    }
    Ok(out)
}

/// A leaf: one group and affine κ. Points that see only initial values
/// (label None) fit any group that is copied in.
fn fit_leaf(pts: &[&Pt], vars: &[Var], copy_in: &[bool]) -> Option<Tree> {
    let Some((g, k0)) = pts.iter().find_map(|p| p.label.as_ref()) else {
        return Some(Tree::Leaf(None));
    };
    if !pts.iter().all(|p| match &p.label {
        Some((h, k)) => h == g && k.len() == k0.len(),
        None => copy_in.get(*g) == Some(&true),
    }) {
        return None;
    }
    let mut dims = Vec::new();
    for d in 0..k0.len() {
        let data: Vec<(Vec<i64>, i64)> = pts
            .iter()
            .filter_map(|p| p.label.as_ref().map(|(_, k)| (p.x.clone(), k[d])))
            .collect();
        let (a, b) = fit::affine(&data)?;
        // At reads that see only initial values the label must stay inside
        // the κ values seen (the copied-in box), not just fit.
        let lo = data.iter().map(|d| d.1).min()?;
        let hi = data.iter().map(|d| d.1).max()?;
        for p in pts.iter().filter(|p| p.label.is_none()) {
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

fn fit_tree(
    pts: &[&Pt],
    vars: &[Var],
    copy_in: &[bool],
    conds: &[(Affine, Vec<i64>, i64)],
    depth: usize,
) -> Option<Tree> {
    if let Some(t) = fit_leaf(pts, vars, copy_in) {
        return Some(t);
    }
    if depth == 0 {
        return None;
    }
    for (e, a, b) in conds {
        let holds = |p: &Pt| a.iter().zip(&p.x).map(|(c, v)| c * v).sum::<i64>() + b <= 0;
        let (yes, no): (Vec<&Pt>, Vec<&Pt>) = pts.iter().partition(|p| holds(p));
        if yes.is_empty() || no.is_empty() {
            continue;
        }
        let Some(ty) = fit_tree(&yes, vars, copy_in, conds, depth - 1) else {
            continue;
        };
        if let Some(tn) = fit_tree(&no, vars, copy_in, conds, depth - 1) {
            return Some(Tree::Split(e.clone(), Box::new(ty), Box::new(tn)));
        }
    }
    None
}
