//! The naive reference for σ: the definition of issue 3 transcribed
//! literally into crepe rules. Quadratic (and worse), obviously right, for
//! tests only.
//!
//! Plain Rust does what crepe cannot: enumerating the potential operations
//! of the program with their guards, iteration vectors and touched cells (a
//! recursive walk of the model, evaluating bounds, subscripts and static
//! conditions with `model::eval`), and turning the derived tuples back into
//! operations. Everything from the enumeration on is crepe.

use arrayflow::dataflow::Sources;
use arrayflow::model::eval::{self, StaticEnv};
use arrayflow::model::{Access, AccessKind, CondId, Condition, Node, Operation, Program, Site};
use std::collections::{BTreeMap, HashMap};

mod rules {
    use crepe::crepe;

    crepe! {
        // Op(O): a potential operation; ids are positions in execution order,
        // so O1 ≺ O2 ⇔ O1 < O2.
        @input
        pub struct Op(pub u32);
        // GuardCond(O, I, B): cond(I, B) ∈ G(O).
        @input
        pub struct GuardCond(pub u32, pub u32, pub bool);
        // GuardRuns(O, J, K): runs(J, K) ∈ G(O).
        @input
        pub struct GuardRuns(pub u32, pub u32, pub u32);
        // Write(O, C, Must): O writes cell C; Must unless a may-write.
        @input
        pub struct Write(pub u32, pub u32, pub bool);
        // Read(O, A, C): access A of O may read cell C.
        @input
        pub struct Read(pub u32, pub u32, pub u32);

        // Condition 1: w may write c and w ≺ r.
        struct Cand(u32, u32, u32);
        Cand(w, r, c) <- Read(r, _, c), Write(w, c, _), (w < r);

        // F = G(w) ∪ G(r) forces a literal: it is in F, or it is runs(J, K)
        // and F holds runs(J, K') with K' >= K.
        struct Pair(u32, u32);
        Pair(w, r) <- Cand(w, r, _);
        struct ForcesCond(u32, u32, u32, bool);
        ForcesCond(w, r, i, b) <- Pair(w, r), GuardCond(w, i, b);
        ForcesCond(w, r, i, b) <- Pair(w, r), GuardCond(r, i, b);
        struct HasRuns(u32, u32, u32, u32);
        HasRuns(w, r, j, k) <- Pair(w, r), GuardRuns(w, j, k);
        HasRuns(w, r, j, k) <- Pair(w, r), GuardRuns(r, j, k);

        // Condition 2: G(w) ∪ G(r) consistent.
        struct Inconsistent(u32, u32);
        Inconsistent(w, r) <- Pair(w, r), GuardCond(w, i, b), GuardCond(r, i, b2), (b != b2);

        // Condition 3: a must-write w2 with w ≺ w2 ≺ r all of whose literals
        // F forces kills w.
        struct Between(u32, u32, u32);
        Between(w2, w, r) <- Cand(w, r, c), Write(w2, c, true), (w < w2), (w2 < r);
        struct RunsForced(u32, u32, u32, u32);
        RunsForced(w, r, j, k) <-
            Between(w2, w, r), GuardRuns(w2, j, k), HasRuns(w, r, j, k2), (k2 >= k);
        struct Unforced(u32, u32, u32);
        Unforced(w2, w, r) <- Between(w2, w, r), GuardCond(w2, i, b), !ForcesCond(w, r, i, b);
        Unforced(w2, w, r) <- Between(w2, w, r), GuardRuns(w2, j, k), !RunsForced(w, r, j, k);
        struct Killed(u32, u32, u32);
        Killed(w, r, c) <-
            Cand(w, r, c), Write(w2, c, true), (w < w2), (w2 < r), !Unforced(w2, w, r);

        @output
        pub struct Source(pub u32, pub u32, pub u32);
        Source(r, a, w) <-
            Read(r, a, c), Cand(w, r, c), !Inconsistent(w, r), !Killed(w, r, c);

        // Initial value: no must-write w2 ≺ r of c has all of G(w2) forced by G(r).
        struct Before(u32, u32, u32);
        Before(w2, r, c) <- Read(r, _, c), Write(w2, c, true), (w2 < r);
        struct RForcesRuns(u32, u32, u32);
        RForcesRuns(r, j, k) <- Before(w2, r, _), GuardRuns(w2, j, k), GuardRuns(r, j, k2), (k2 >= k);
        struct UnforcedByR(u32, u32);
        UnforcedByR(w2, r) <- Before(w2, r, _), GuardCond(w2, i, b), !GuardCond(r, i, b);
        UnforcedByR(w2, r) <- Before(w2, r, _), GuardRuns(w2, j, k), !RForcesRuns(r, j, k);
        struct InitKilled(u32, u32);
        InitKilled(r, c) <- Before(w2, r, c), !UnforcedByR(w2, r);
        @output
        pub struct Initial(pub u32, pub u32);
        Initial(r, a) <- Read(r, a, c), !InitKilled(r, c);
        // The cells whose initial value reaches read (r, a).
        @output
        pub struct InitialCell(pub u32, pub u32, pub u32);
        InitialCell(r, a, c) <- Read(r, a, c), !InitKilled(r, c);
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Lit {
    Cond(CondId, Vec<i64>, bool),
    Runs(CondId, Vec<i64>, i64),
}

/// A cell: array id and index.
pub type Cell = (u32, Vec<i64>);

struct NOp {
    op: Operation,
    guard: Vec<Lit>,
    /// Cells each read access may read, by access index.
    reads: Vec<Vec<Cell>>,
    /// Cells written, and whether it is a must-write.
    write: Option<(Vec<Cell>, bool)>,
}

struct Walk<'p> {
    program: &'p Program,
    params: Vec<i64>,
    counters: Vec<i64>,
    iter: Vec<i64>,
    max_trips: u32,
    ops: Vec<NOp>,
}

impl<'p> Walk<'p> {
    fn value(&self, e: &arrayflow::model::Expr) -> i64 {
        let mut env = StaticEnv {
            params: &self.params,
            counters: &self.counters,
        };
        eval::expr(e, &mut env).expect("static expression")
    }

    fn test(&self, c: &Condition) -> bool {
        let mut env = StaticEnv {
            params: &self.params,
            counters: &self.counters,
        };
        eval::cond(&c.cond, &mut env).expect("static condition")
    }

    fn cells(&self, a: &Access) -> (Vec<Cell>, bool) {
        let decl = self.program.array_decl(a.array);
        let mut sets: Vec<Vec<i64>> = Vec::new();
        for (d, s) in a.subscripts.iter().enumerate() {
            if s.affine.is_some() {
                sets.push(vec![self.value(&s.expr)]);
            } else {
                let lo = self.value(&decl.dims[d].lo.expr);
                let hi = self.value(&decl.dims[d].hi.expr);
                sets.push((lo..=hi).collect());
            }
        }
        let mut out = vec![Vec::new()];
        for set in sets {
            out = out
                .into_iter()
                .flat_map(|p: Vec<i64>| {
                    set.iter().map(move |&v| {
                        let mut q = p.clone();
                        q.push(v);
                        q
                    })
                })
                .collect();
        }
        (
            out.into_iter().map(|c| (a.array.0, c)).collect(),
            a.is_affine(),
        )
    }

    fn emit(&mut self, site: Site, accs: Vec<arrayflow::model::AccessRef<'_>>, guard: &[Lit]) {
        let mut reads = Vec::new();
        let mut write = None;
        for a in accs {
            let (cells, must) = self.cells(a.access);
            if a.kind == AccessKind::Update {
                reads.insert(0, cells.clone());
            } else if a.kind.reads() {
                reads.push(cells.clone());
            }
            if a.kind.writes() {
                write = Some((cells, must));
            }
        }
        if reads.is_empty() && write.is_none() {
            return;
        }
        self.ops.push(NOp {
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
            match n {
                Node::Stmt(s) => self.emit(Site::Stmt(s.id), s.accesses(), guard),
                Node::For(f) => {
                    let lo = self.value(&f.lower.expr);
                    let hi = self.value(&f.upper.expr);
                    self.iter.push(lo);
                    let mut v = lo;
                    while v <= hi {
                        self.counters[f.counter.index()] = v;
                        *self.iter.last_mut().unwrap() = v;
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
                        *self.iter.last_mut().unwrap() = k;
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

/// The potential operations in execution order, with guards and cells.
fn enumerate(program: &Program, params: &[(String, i64)], max_trips: u32) -> Vec<NOp> {
    let mut w = Walk {
        program,
        params: program.param_values(params).expect("parameter values"),
        counters: vec![0; program.counters.len()],
        iter: Vec::new(),
        max_trips,
        ops: Vec::new(),
    };
    w.block(&program.body, &[]);
    w.ops
}

/// σ of every read by the definition: (operation, access) ↦ sources.
pub fn sigma(
    program: &Program,
    params: &[(String, i64)],
    max_trips: u32,
) -> BTreeMap<(Operation, usize), Sources> {
    full(program, params, max_trips).sigma
}

/// σ with what the expansion reference needs besides: the cells whose
/// initial value reaches each read, and every write with its cells.
pub struct Full {
    pub sigma: BTreeMap<(Operation, usize), Sources>,
    pub initial_cells: BTreeMap<(Operation, usize), Vec<Cell>>,
    /// Write operations in execution order, with the cells they may write.
    pub writes: Vec<(Operation, Vec<Cell>)>,
}

/// [`sigma`] and the rest of [`Full`].
pub fn full(program: &Program, params: &[(String, i64)], max_trips: u32) -> Full {
    let ops = enumerate(program, params, max_trips);

    let mut cells: HashMap<Cell, u32> = HashMap::new();
    let mut conds: HashMap<(CondId, Vec<i64>), u32> = HashMap::new();
    let mut cell = |c: &Cell| {
        let n = cells.len() as u32;
        *cells.entry(c.clone()).or_insert(n)
    };
    let mut rt = rules::Crepe::new();
    for (id, o) in ops.iter().enumerate() {
        let id = id as u32;
        rt.extend([rules::Op(id)]);
        for l in &o.guard {
            let n = conds.len() as u32;
            match l {
                Lit::Cond(c, v, b) => {
                    let i = *conds.entry((*c, v.clone())).or_insert(n);
                    rt.extend([rules::GuardCond(id, i, *b)]);
                }
                Lit::Runs(c, v, k) => {
                    let j = *conds.entry((*c, v.clone())).or_insert(n);
                    rt.extend([rules::GuardRuns(id, j, *k as u32)]);
                }
            }
        }
        for (a, cs) in o.reads.iter().enumerate() {
            for c in cs {
                rt.extend([rules::Read(id, a as u32, cell(c))]);
            }
        }
        if let Some((cs, must)) = &o.write {
            for c in cs {
                rt.extend([rules::Write(id, cell(c), *must)]);
            }
        }
    }
    let (source, initial, initial_cell) = rt.run();

    let mut out: BTreeMap<(Operation, usize), Sources> = BTreeMap::new();
    for o in &ops {
        for a in 0..o.reads.len() {
            out.insert((o.op.clone(), a), Sources::default());
        }
    }
    for rules::Source(r, a, s) in source {
        let key = (ops[r as usize].op.clone(), a as usize);
        if let Some(e) = out.get_mut(&key) {
            e.writes.push(ops[s as usize].op.clone());
        }
    }
    for rules::Initial(r, a) in initial {
        if let Some(e) = out.get_mut(&(ops[r as usize].op.clone(), a as usize)) {
            e.initial = true;
        }
    }
    for e in out.values_mut() {
        e.writes.sort();
        e.writes.dedup();
    }
    let mut names: Vec<Cell> = vec![(0, Vec::new()); cells.len()];
    for (c, &k) in &cells {
        names[k as usize] = c.clone();
    }
    let mut initial_cells: BTreeMap<(Operation, usize), Vec<Cell>> = BTreeMap::new();
    for rules::InitialCell(r, a, c) in initial_cell {
        initial_cells
            .entry((ops[r as usize].op.clone(), a as usize))
            .or_default()
            .push(names[c as usize].clone());
    }
    let writes = ops
        .iter()
        .filter_map(|o| o.write.as_ref().map(|(cs, _)| (o.op.clone(), cs.clone())))
        .collect();
    Full {
        sigma: out,
        initial_cells,
        writes,
    }
}

/// The last writer of every read, by simulating the potential operations in
/// execution order with a last-writer table: σ exactly, for programs whose
/// conditions are all static and whose accesses are all affine.
pub fn last_writer(
    program: &Program,
    params: &[(String, i64)],
    max_trips: u32,
) -> BTreeMap<(Operation, usize), Sources> {
    let ops = enumerate(program, params, max_trips);
    let mut last: HashMap<Cell, Operation> = HashMap::new();
    let mut out = BTreeMap::new();
    for o in &ops {
        assert!(
            o.guard.is_empty(),
            "only for programs without unknown conditions"
        );
        for (a, cells) in o.reads.iter().enumerate() {
            let mut s = Sources::default();
            for c in cells {
                match last.get(c) {
                    Some(op) => s.writes.push(op.clone()),
                    None => s.initial = true,
                }
            }
            s.writes.sort();
            s.writes.dedup();
            out.insert((o.op.clone(), a), s);
        }
        if let Some((cells, must)) = &o.write {
            assert!(*must, "only for must-writes");
            for c in cells {
                last.insert(c.clone(), o.op.clone());
            }
        }
    }
    out
}
