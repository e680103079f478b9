//! The reference semantics of σ: the definition of docs/rules.md §1 in
//! plain Rust, judging every (write, read) pair of a cell by conditions
//! (1)–(3) as written. Slow (quadratic in the writes of a cell per read)
//! and obviously right, for tests: the rules are checked against it, here and in crates that add
//! access kinds. It shares no code with `facts` or the rules: the potential
//! operations come from a recursive walk of the model (`model::eval` for
//! bounds, subscripts and static conditions), and each access's cells from
//! [`core_cells`] or, for an extension access, from the caller's
//! [`Meaning`].

use super::Sources;
use crate::model::eval::{self, StaticEnv};
use crate::model::{
    Access, AccessKind, AccessRef, CondId, Condition, Expr, Node, Operation, Program, Site,
};
use std::collections::{BTreeMap, HashMap};

/// A cell: array id and index.
pub type Cell = (u32, Vec<i64>);

/// The cells one access of one operation touches and whether it surely
/// touches them (a must-access), or `None` when the caller does not know
/// the access. Given the program, the access, what it does, and the
/// parameter and counter values of the operation.
pub type Meaning<'m> =
    dyn Fn(&Program, &Access, AccessKind, &StaticEnv) -> Option<(Vec<Cell>, bool)> + 'm;

/// The cells of a core access: its cell when every subscript is affine (a
/// must-access), otherwise every cell of the declared range in the
/// non-affine dimensions (a may-access). `None` for an extension access.
pub fn core_cells(
    program: &Program,
    a: &Access,
    _: AccessKind,
    env: &StaticEnv,
) -> Option<(Vec<Cell>, bool)> {
    if a.ext.is_some() {
        return None;
    }
    let value = |e: &Expr| eval::expr(e, &mut StaticEnv { ..*env }).ok();
    let decl = program.array_decl(a.array);
    let mut out: Vec<Vec<i64>> = vec![Vec::new()];
    for (d, s) in a.subscripts.iter().enumerate() {
        let set: Vec<i64> = if s.affine.is_some() {
            vec![value(&s.expr)?]
        } else {
            (value(&decl.dims[d].lo.expr)?..=value(&decl.dims[d].hi.expr)?).collect()
        };
        out = out
            .into_iter()
            .flat_map(|p| {
                set.iter().map(move |&v| {
                    let mut q = p.clone();
                    q.push(v);
                    q
                })
            })
            .collect();
    }
    Some((
        out.into_iter().map(|c| (a.array.0, c)).collect(),
        a.is_affine(),
    ))
}

/// A guard literal: condition `CondId` at the iteration vector took the
/// value, or the `while` loop `CondId` (its condition) at the iteration
/// vector ran trip k.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Lit {
    Cond(CondId, Vec<i64>, bool),
    Runs(CondId, Vec<i64>, i64),
}

/// A potential operation with what §1 needs of it.
pub struct RefOp {
    pub op: Operation,
    /// G(op).
    pub guard: Vec<Lit>,
    /// Cells each read access may read, by access index.
    pub reads: Vec<Vec<Cell>>,
    /// Cells written, and whether surely.
    pub write: Option<(Vec<Cell>, bool)>,
}

struct Walk<'p, 'm> {
    program: &'p Program,
    meaning: &'m Meaning<'m>,
    params: Vec<i64>,
    counters: Vec<i64>,
    iter: Vec<i64>,
    max_trips: u32,
    ops: Vec<RefOp>,
    error: Option<String>,
}

impl Walk<'_, '_> {
    fn env(&self) -> StaticEnv<'_> {
        StaticEnv {
            params: &self.params,
            counters: &self.counters,
        }
    }

    fn value(&mut self, e: &Expr) -> i64 {
        let r = eval::expr(e, &mut self.env());
        r.unwrap_or_else(|e| {
            self.error.get_or_insert(format!("{e:?}"));
            0
        })
    }

    fn test(&mut self, c: &Condition) -> bool {
        let r = eval::cond(&c.cond, &mut self.env());
        r.unwrap_or_else(|e| {
            self.error.get_or_insert(format!("{e:?}"));
            false
        })
    }

    fn cells(&mut self, a: &Access, kind: AccessKind) -> (Vec<Cell>, bool) {
        let got = (self.meaning)(self.program, a, kind, &self.env())
            .or_else(|| core_cells(self.program, a, kind, &self.env()));
        got.unwrap_or_else(|| {
            let name = a.ext.as_ref().map_or("?", |x| x.name.as_str());
            self.error
                .get_or_insert(format!("no meaning for an access of kind `@{name}`"));
            (Vec::new(), false)
        })
    }

    fn emit(&mut self, site: Site, accs: Vec<AccessRef<'_>>, guard: &[Lit]) {
        let mut reads = Vec::new();
        let mut write = None;
        for a in accs {
            let (cells, must) = self.cells(a.access, a.kind);
            if a.kind.reads() {
                reads.push(cells.clone());
            }
            if a.kind.writes() {
                write = Some((cells, must));
            }
        }
        if reads.is_empty() && write.is_none() {
            return;
        }
        self.ops.push(RefOp {
            op: Operation {
                site,
                iter: self.iter.clone(),
            },
            guard: guard.to_vec(),
            reads,
            write,
        });
    }

    fn cond_op(&mut self, c: &Condition, guard: &[Lit]) {
        let mut accs = Vec::new();
        c.cond.collect_reads(&mut accs);
        self.emit(Site::Cond(c.id), accs, guard);
    }

    fn block(&mut self, nodes: &[Node], guard: &[Lit]) {
        for n in nodes {
            if self.error.is_some() {
                return;
            }
            match n {
                Node::Stmt(s) => self.emit(Site::Stmt(s.id), s.accesses(), guard),
                Node::For(f) => {
                    let lo = self.value(&f.lower.expr);
                    let hi = self.value(&f.upper.expr);
                    self.iter.push(lo);
                    let mut v = lo;
                    while v <= hi && self.error.is_none() {
                        self.counters[f.counter.index()] = v;
                        *self.iter.last_mut().unwrap_or(&mut 0) = v;
                        self.block(&f.body, guard);
                        v += f.step;
                    }
                    self.iter.pop();
                }
                Node::While(w) => {
                    let unknown = !w.cond.cond.is_static();
                    let outer = self.iter.clone();
                    self.iter.push(0);
                    for k in 0..i64::from(self.max_trips) {
                        self.counters[w.counter.index()] = k;
                        *self.iter.last_mut().unwrap_or(&mut 0) = k;
                        let mut g = guard.to_vec();
                        if unknown && k > 0 {
                            g.push(Lit::Runs(w.cond.id, outer.clone(), k - 1));
                        }
                        self.cond_op(&w.cond, &g);
                        let mut g = guard.to_vec();
                        if unknown {
                            g.push(Lit::Runs(w.cond.id, outer.clone(), k));
                        } else if !self.test(&w.cond) {
                            break;
                        }
                        self.block(&w.body, &g);
                    }
                    self.iter.pop();
                }
                Node::If(i) => {
                    let mut g = guard.to_vec();
                    let mut taken = false;
                    for (c, body) in &i.branches {
                        self.cond_op(c, &g);
                        if c.cond.is_static() {
                            if self.test(c) {
                                self.block(body, &g);
                                taken = true;
                                break;
                            }
                        } else {
                            let mut gt = g.clone();
                            gt.push(Lit::Cond(c.id, self.iter.clone(), true));
                            self.block(body, &gt);
                            g.push(Lit::Cond(c.id, self.iter.clone(), false));
                        }
                    }
                    if !taken {
                        if let Some(body) = &i.otherwise {
                            self.block(body, &g);
                        }
                    }
                }
            }
        }
    }
}

/// Whether the literals `f` force `l` (docs/rules.md §1).
fn forces(f: &[&Lit], l: &Lit) -> bool {
    f.iter().any(|&m| match (m, l) {
        (Lit::Runs(j, v, k2), Lit::Runs(j1, v1, k)) => j == j1 && v == v1 && k2 >= k,
        _ => m == l,
    })
}

fn consistent(a: &[Lit], b: &[Lit]) -> bool {
    a.iter().all(|x| {
        b.iter().all(|y| match (x, y) {
            (Lit::Cond(i, v, p), Lit::Cond(j, w, q)) => !(i == j && v == w && p != q),
            _ => true,
        })
    })
}

/// σ of every read of `program` by the definition of docs/rules.md §1, at
/// the parameter values `params` (the rest at their defaults) and at most
/// `max_trips` trips of each `while`: (operation, read access index) ↦
/// sources. `meaning` gives the cells of extension accesses (and may
/// override core ones). Errors: bad parameter values, an expression that
/// cannot be evaluated, an access no meaning covers.
pub fn sigma(
    program: &Program,
    params: &[(String, i64)],
    max_trips: u32,
    meaning: &Meaning<'_>,
) -> Result<BTreeMap<(Operation, usize), Sources>, String> {
    let ops = operations(program, params, max_trips, meaning)?;
    Ok(sigma_of(&ops, &crate::model::cover::covers(program)))
}

/// The potential operations of `program` in execution order (ops without
/// any access left out), with guards and cells: what [`sigma`] judges, for
/// other references to build on.
pub fn operations(
    program: &Program,
    params: &[(String, i64)],
    max_trips: u32,
    meaning: &Meaning<'_>,
) -> Result<Vec<RefOp>, String> {
    let mut w = Walk {
        program,
        meaning,
        params: program.param_values(params)?,
        counters: vec![0; program.counters.len()],
        iter: Vec::new(),
        max_trips,
        ops: Vec::new(),
        error: None,
    };
    w.block(&program.body, &[]);
    match w.error {
        Some(e) => Err(e),
        None => Ok(w.ops),
    }
}

/// Whether the write of `w` covers its cell for a reader with guard `gr`
/// (docs/rules.md §1, *Covers*): `w`'s statement is a cover
/// (`model::cover`), so one branch of its `if` writes the cell; then its
/// own literal, the `if`'s condition true, counts as forced for a reader
/// that is not in the `else` branch.
fn cover_forced(covers: &[bool], w: &RefOp, gr: &[&Lit], l: &Lit) -> bool {
    let Site::Stmt(s) = w.op.site else {
        return false;
    };
    match (w.guard.last(), l) {
        (Some(own @ Lit::Cond(c, v, true)), _) if covers[s.index()] && own == l => {
            !gr.contains(&&Lit::Cond(*c, v.clone(), false))
        }
        _ => false,
    }
}

/// σ by the definition over the operations of [`operations`].
fn sigma_of(ops: &[RefOp], covers: &[bool]) -> BTreeMap<(Operation, usize), Sources> {
    // The writes of each cell, in execution order: (op index, must).
    let mut writes: HashMap<&Cell, Vec<(usize, bool)>> = HashMap::new();
    for (k, o) in ops.iter().enumerate() {
        if let Some((cells, must)) = &o.write {
            for c in cells {
                writes.entry(c).or_default().push((k, *must));
            }
        }
    }
    let mut out = BTreeMap::new();
    for (r, o) in ops.iter().enumerate() {
        for (a, cells) in o.reads.iter().enumerate() {
            let mut s = Sources::default();
            let fr: Vec<&Lit> = o.guard.iter().collect();
            for c in cells {
                let all: &[(usize, bool)] = writes.get(c).map_or(&[], |v| v.as_slice());
                // Back from r: each candidate against the must-writes after
                // it. A must-write whose whole guard G(r) forces kills every
                // earlier write and the initial value: the walk ends there.
                let mut later: Vec<usize> = Vec::new();
                let mut init_killed = false;
                let before = &all[..all.partition_point(|&(w, _)| w < r)];
                for &(w, must) in before.iter().rev() {
                    let gw = &ops[w].guard;
                    if consistent(gw, &o.guard) {
                        let f: Vec<&Lit> = gw.iter().chain(&o.guard).collect();
                        let killed = later
                            .iter()
                            .any(|&w2| ops[w2].guard.iter().all(|l| forces(&f, l)));
                        if !killed {
                            s.writes.push(ops[w].op.clone());
                        }
                    }
                    if must {
                        let forced =
                            |l: &Lit| forces(&fr, l) || cover_forced(covers, &ops[w], &fr, l);
                        if gw.iter().all(forced) {
                            init_killed = true;
                            break;
                        }
                        later.push(w);
                    }
                }
                s.initial |= !init_killed;
            }
            s.writes.sort();
            s.writes.dedup();
            out.insert((o.op.clone(), a), s);
        }
    }
    out
}
