//! The naive reference for σ: the definition of docs/rules.md §1 transcribed
//! literally into crepe rules. Quadratic (and worse), obviously right, for
//! tests only.
//!
//! Plain Rust does what crepe cannot: enumerating the potential operations
//! of the program with their guards, iteration vectors and touched cells
//! (`dataflow::reference::operations`: a recursive walk of the model,
//! evaluating bounds, subscripts and static conditions with `model::eval`),
//! and turning the derived tuples back into operations. Everything from the
//! enumeration on is crepe.

use arrayflow::dataflow::Sources;
use arrayflow::model::{CondId, Operation, Program};
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
        // CoverLit(O, I): O is a cover (`model::cover`): its `if`'s `else`
        // writes its cell too, and its own literal is cond(I, true).
        @input
        pub struct CoverLit(pub u32, pub u32);

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

        // Covers: one branch of a cover w2's `if` writes c, so for a read r
        // not in its `else` whose G(r) forces w2's other literals, w2 kills
        // every earlier write and the initial value.
        struct CoverUnforced(u32, u32);
        CoverUnforced(w2, r) <-
            Before(w2, r, _), CoverLit(w2, i0), GuardCond(w2, i, b), (i != i0), !GuardCond(r, i, b);
        CoverUnforced(w2, r) <-
            Before(w2, r, _), CoverLit(w2, _), GuardRuns(w2, j, k), !RForcesRuns(r, j, k);
        struct CoverKills(u32, u32, u32);
        CoverKills(w2, r, c) <-
            Before(w2, r, c), CoverLit(w2, i0), !GuardCond(r, i0, false), !CoverUnforced(w2, r);
        Killed(w, r, c) <- Cand(w, r, c), CoverKills(w2, r, c), (w < w2);
        InitKilled(r, c) <- CoverKills(_, r, c);
        @output
        pub struct Initial(pub u32, pub u32);
        Initial(r, a) <- Read(r, a, c), !InitKilled(r, c);
        // The cells whose initial value reaches read (r, a).
        @output
        pub struct InitialCell(pub u32, pub u32, pub u32);
        InitialCell(r, a, c) <- Read(r, a, c), !InitKilled(r, c);
    }
}

pub use arrayflow::dataflow::reference::Cell;
use arrayflow::dataflow::reference::{Lit, RefOp};

/// The potential operations in execution order, with guards and cells (the
/// enumeration of `dataflow::reference`, plain Rust; the rules below are
/// crepe's).
fn enumerate(program: &Program, params: &[(String, i64)], max_trips: u32) -> Vec<RefOp> {
    arrayflow::dataflow::reference::operations(
        program,
        params,
        max_trips,
        &arrayflow::dataflow::reference::core_cells,
    )
    .expect("a program the reference can enumerate")
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
    let covers = arrayflow::model::cover::covers(program);
    let mut rt = rules::Crepe::new();
    for (id, o) in ops.iter().enumerate() {
        let id = id as u32;
        rt.extend([rules::Op(id)]);
        let cover = matches!(o.op.site, arrayflow::model::Site::Stmt(s) if covers[s.index()]);
        for (k, l) in o.guard.iter().enumerate() {
            let n = conds.len() as u32;
            match l {
                Lit::Cond(c, v, b) => {
                    let i = *conds.entry((*c, v.clone())).or_insert(n);
                    rt.extend([rules::GuardCond(id, i, *b)]);
                    // Its innermost literal: its `if`'s condition, true.
                    if cover && *b && k + 1 == o.guard.len() {
                        rt.extend([rules::CoverLit(id, i)]);
                    }
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
