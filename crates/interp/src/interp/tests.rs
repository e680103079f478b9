//! Interpreter tests on programs built by hand. Expected values are derived
//! from the program's meaning (who must write what), not copied from output.

use super::*;
use crate::model::builder::{e, ProgramBuilder};
use crate::model::{BinOp, CmpOp, Cond, StmtId};

fn opts(program: &Program, seed: u64) -> Options {
    let mut o = Options::new(program.param_values(&[]).unwrap());
    o.seed = seed;
    o
}

/// Example 1 of the maximal static expansion paper (Figure 1).
pub fn example1() -> Program {
    let mut b = ProgramBuilder::new();
    let n = b.param("N", Some(5)).unwrap();
    let x = b.scalar("x").unwrap();
    b.begin_for("i", e::int(1), e::param(n), 1).unwrap();
    b.assign(Some("T"), e::access(x, vec![]), None, e::unknown())
        .unwrap();
    b.begin_while(Some("w"), Cond::Unknown).unwrap();
    b.assign(
        Some("S"),
        e::access(x, vec![]),
        None,
        e::call("f", vec![e::read(x, vec![])]),
    )
    .unwrap();
    b.end().unwrap();
    b.call(Some("R"), "use", vec![e::read(x, vec![])]).unwrap();
    b.end().unwrap();
    b.finish().unwrap()
}

fn name(run: &Run, names: &SiteNames, w: Writer) -> String {
    run.op(w).map_or("initial".into(), |o| names.op(o))
}

#[test]
fn example1_reads_follow_the_dataflow() {
    let p = example1();
    let names = SiteNames::new(&p);
    let mut trips_seen = std::collections::BTreeSet::new();
    for seed in 0..40 {
        let mut o = opts(&p, seed);
        o.max_trips = 3;
        let run = run(&p, &o).unwrap();
        for i in 1..=5i64 {
            // S ran trips 0..k in iteration i (the while counter counts from 0).
            let trips = run
                .ops
                .iter()
                .filter(|op| names.name(op.site) == "S" && op.iter[0] == i)
                .count() as i64;
            assert!(trips <= 3);
            trips_seen.insert(trips);
            let expected = if trips == 0 {
                format!("T[{i}]")
            } else {
                format!("S[{i}, {}]", trips - 1)
            };
            let r: Vec<&Read> = run
                .reads
                .iter()
                .filter(|r| run.ops.get(r.op).site == Site::Stmt(StmtId(2)))
                .filter(|r| run.ops.get(r.op).iter == [i])
                .collect();
            assert_eq!(r.len(), 1);
            assert_eq!(name(&run, &names, r[0].writer), expected);
            // Every S instance reads the value of the write just before it.
            for k in 0..trips {
                let s = run
                    .reads
                    .iter()
                    .find(|r| {
                        let op = run.ops.get(r.op);
                        names.name(op.site) == "S" && op.iter == vec![i, k]
                    })
                    .unwrap();
                let before = if k == 0 {
                    format!("T[{i}]")
                } else {
                    format!("S[{i}, {}]", k - 1)
                };
                assert_eq!(name(&run, &names, s.writer), before);
            }
        }
        // x ends holding what R of the last iteration read.
        let last = run.reads.last().unwrap();
        assert_eq!(run.arrays[0].cells[0].value, last.value);
    }
    // The while loop's decisions vary: no trip and the full 3 trips both occur.
    assert!(trips_seen.contains(&0) && trips_seen.contains(&3));
}

#[test]
fn runs_are_deterministic_and_seeds_differ() {
    let p = example1();
    let a = run(&p, &opts(&p, 7)).unwrap();
    let b = run(&p, &opts(&p, 7)).unwrap();
    let c = run(&p, &opts(&p, 8)).unwrap();
    assert_eq!(a.reads, b.reads);
    assert_eq!(a.arrays, b.arrays);
    assert_ne!(a.reads, c.reads);
}

fn array_program(dims: Vec<(i64, i64)>) -> (Program, crate::model::ArrayId) {
    let mut b = ProgramBuilder::new();
    let a = b
        .array(
            "A",
            dims.into_iter()
                .map(|(lo, hi)| (e::int(lo), e::int(hi)))
                .collect(),
        )
        .unwrap();
    b.array("B", vec![(e::int(0), e::int(3))]).unwrap();
    b.scalar("x").unwrap();
    (b.finish().unwrap(), a)
}

#[test]
fn initial_values_differ_and_depend_on_names_not_declaration_order() {
    let (p, _) = array_program(vec![(1, 4), (0, 3), (-1, 1)]);
    let run1 = run(&p, &opts(&p, 3)).unwrap();
    let mut all: Vec<i64> = run1
        .arrays
        .iter()
        .flat_map(|c| c.cells.iter().map(|c| c.value))
        .collect();
    let n = all.len();
    assert_eq!(n, 4 * 4 * 3 + 4 + 1);
    all.sort();
    all.dedup();
    assert_eq!(all.len(), n);
    // Another program declaring B first still gives B the same cells.
    let mut b = ProgramBuilder::new();
    b.array("B", vec![(e::int(0), e::int(3))]).unwrap();
    let q = b.finish().unwrap();
    let run2 = run(&q, &opts(&q, 3)).unwrap();
    assert_eq!(run2.arrays[0], run1.arrays[1]);
}

#[test]
fn out_of_range_names_statement_iteration_and_index() {
    let mut b = ProgramBuilder::new();
    let n = b.param("N", Some(3)).unwrap();
    let a = b.array("A", vec![(e::int(1), e::param(n))]).unwrap();
    let i = b.begin_for("i", e::int(1), e::param(n), 1).unwrap();
    b.assign(
        Some("S"),
        e::access(a, vec![e::add(e::counter(i), e::int(1))]),
        None,
        e::int(0),
    )
    .unwrap();
    b.end().unwrap();
    let p = b.finish().unwrap();
    let err = run(&p, &opts(&p, 0)).unwrap_err();
    assert_eq!(err.kind, ErrorKind::OutOfRange);
    assert!(err.message.contains("statement `S`"), "{}", err.message);
    assert!(err.message.contains("i=3"), "{}", err.message);
    assert!(err.message.contains("A[4]"), "{}", err.message);
}

#[test]
fn step_budget_stops_the_run() {
    let mut b = ProgramBuilder::new();
    let x = b.scalar("x").unwrap();
    b.begin_for("i", e::int(1), e::int(1_000_000_000), 1)
        .unwrap();
    b.assign(Some("S"), e::access(x, vec![]), None, e::int(1))
        .unwrap();
    b.end().unwrap();
    let p = b.finish().unwrap();
    let mut o = opts(&p, 0);
    o.max_steps = 1000;
    let err = run(&p, &o).unwrap_err();
    assert_eq!(err.kind, ErrorKind::StepBudget);
    assert!(err.message.contains("1000"));
    o.shuffle = vec!["i".into()];
    assert_eq!(run(&p, &o).unwrap_err().kind, ErrorKind::StepBudget);
}

#[test]
fn call_subscripts_are_reduced_into_range_and_others_are_not() {
    let mut b = ProgramBuilder::new();
    let a = b.array("A", vec![(e::int(3), e::int(5))]).unwrap();
    let i = b.begin_for("i", e::int(1), e::int(50), 1).unwrap();
    b.assign(
        Some("S"),
        e::access(a, vec![e::call("foo", vec![e::counter(i)])]),
        None,
        e::counter(i),
    )
    .unwrap();
    b.end().unwrap();
    let p = b.finish().unwrap();
    let r = run(&p, &opts(&p, 1)).unwrap();
    // 50 writes land on the 3 cells; some cell is written.
    assert!(r.arrays[0]
        .cells
        .iter()
        .any(|c| c.writer != Writer::Initial));
    // The same call plus 0 is not a call: out of range.
    let mut b = ProgramBuilder::new();
    let a = b.array("A", vec![(e::int(3), e::int(5))]).unwrap();
    b.assign(
        Some("S"),
        e::access(a, vec![e::add(e::call("foo", vec![e::int(1)]), e::int(0))]),
        None,
        e::int(0),
    )
    .unwrap();
    let p = b.finish().unwrap();
    assert_eq!(
        run(&p, &opts(&p, 1)).unwrap_err().kind,
        ErrorKind::OutOfRange
    );
}

fn last_writer_program(parallel: bool) -> Program {
    let mut b = ProgramBuilder::new();
    let x = b.scalar("x").unwrap();
    let i = b
        .begin_for_at("i", e::int(1), e::int(6), 1, parallel, Span::NONE)
        .unwrap();
    b.assign(Some("S"), e::access(x, vec![]), None, e::counter(i))
        .unwrap();
    b.end().unwrap();
    b.finish().unwrap()
}

fn write_order(r: &Run) -> Vec<i64> {
    r.ops.iter().map(|o| o.iter[0]).collect()
}

#[test]
fn loop_orders() {
    let p = last_writer_program(false);
    let r = run(&p, &opts(&p, 0)).unwrap();
    assert_eq!(write_order(&r), vec![1, 2, 3, 4, 5, 6]);
    assert_eq!(r.arrays[0].cells[0].value, 6);
    let mut o = opts(&p, 0);
    o.reverse = vec!["i".into()];
    let r = run(&p, &o).unwrap();
    assert_eq!(write_order(&r), vec![6, 5, 4, 3, 2, 1]);
    assert_eq!(r.arrays[0].cells[0].value, 1);
    let mut o = opts(&p, 0);
    o.shuffle = vec!["i".into()];
    let mut orders = std::collections::BTreeSet::new();
    for seed in 0..10 {
        o.seed = seed;
        let mut w = write_order(&run(&p, &o).unwrap());
        orders.insert(w.clone());
        w.sort();
        assert_eq!(w, vec![1, 2, 3, 4, 5, 6]);
    }
    assert!(orders.len() > 5);
    // doall loops shuffle only when asked.
    let q = last_writer_program(true);
    let mut o = opts(&q, 4);
    assert_eq!(write_order(&run(&q, &o).unwrap()), vec![1, 2, 3, 4, 5, 6]);
    o.shuffle_parallel = true;
    let orders: std::collections::BTreeSet<_> = (0..10)
        .map(|seed| {
            o.seed = seed;
            write_order(&run(&q, &o).unwrap())
        })
        .collect();
    assert!(orders.len() > 5);
}

#[test]
fn bad_loop_options() {
    let p = example1();
    for (rev, shuf) in [
        (vec!["k"], vec![]),
        (vec!["w"], vec![]),
        (vec!["i"], vec!["i"]),
    ] {
        let mut o = opts(&p, 0);
        o.reverse = rev.into_iter().map(String::from).collect();
        o.shuffle = shuf.into_iter().map(String::from).collect();
        assert_eq!(run(&p, &o).unwrap_err().kind, ErrorKind::BadOption);
    }
}

#[test]
fn compound_assignment_reads_then_writes() {
    let mut b = ProgramBuilder::new();
    let x = b.scalar("x").unwrap();
    b.assign(Some("S"), e::access(x, vec![]), Some(BinOp::Add), e::int(5))
        .unwrap();
    let p = b.finish().unwrap();
    let before = run(&array_program(vec![]).0, &opts(&p, 2)).unwrap().arrays[2].cells[0].value;
    let r = run(&p, &opts(&p, 2)).unwrap();
    assert_eq!(r.reads.len(), 1);
    assert_eq!(r.reads[0].access, 0);
    assert_eq!(r.reads[0].value, before);
    assert_eq!(r.reads[0].writer, Writer::Initial);
    assert_eq!(r.arrays[0].cells[0].value, before.wrapping_add(5));
}

#[test]
fn copies_are_untraced_and_pass_the_origin_on() {
    let mut b = ProgramBuilder::new();
    let x = b.scalar("x").unwrap();
    let y = b.scalar("y").unwrap();
    b.assign(Some("T"), e::access(x, vec![]), None, e::unknown())
        .unwrap();
    b.assign_at(
        Some("C"),
        true,
        e::access(y, vec![]),
        None,
        e::read(x, vec![]),
        Span::NONE,
    );
    b.call(Some("R"), "use", vec![e::read(y, vec![])]).unwrap();
    let p = b.finish().unwrap();
    let names = SiteNames::new(&p);
    let r = run(&p, &opts(&p, 0)).unwrap();
    assert_eq!(r.reads.len(), 1, "the copy's read is not traced");
    let read = r.reads[0];
    assert_eq!(name(&r, &names, read.writer), "C");
    assert_eq!(name(&r, &names, read.origin), "T");
    assert_eq!(read.value, r.arrays[0].cells[0].value);
    let o = opts(&p, 0);
    let text = output::text(&p, &o, &r);
    let line = format!("  R read 0 = {} from T (copied by C)\n", read.value);
    assert!(text.contains(&line), "{text}");
    assert!(text.contains(&format!("  y = {} from T (copied by C)\n", read.value)));
    let j = output::json(&p, &o, &r);
    assert_eq!(j["reads"][0]["writer"]["site"], "C");
    assert_eq!(j["reads"][0]["origin"]["site"], "T");
    assert_eq!(j["arrays"][0]["cells"][0]["writer"]["site"], "T");
    assert!(j["arrays"][0]["cells"][0].get("origin").is_none());
    // `verify` traces copies too: the copy reads x, written by T.
    let mut o = opts(&p, 0);
    o.trace_copies = true;
    let r = run(&p, &o).unwrap();
    assert_eq!(r.reads.len(), 2);
    assert_eq!(name(&r, &names, r.reads[0].writer), "T");
    assert_eq!(names.op(r.ops.get(r.reads[0].op)), "C");
}

#[test]
fn data_dependent_conditions_use_the_data_and_are_traced() {
    let mut b = ProgramBuilder::new();
    let a = b.array("A", vec![(e::int(1), e::int(40))]).unwrap();
    let x = b.scalar("x").unwrap();
    let i = b.begin_for("i", e::int(1), e::int(40), 1).unwrap();
    b.begin_if(
        Some("c"),
        e::cmp(CmpOp::Gt, e::read(a, vec![e::counter(i)]), e::int(0)),
    )
    .unwrap();
    b.assign(Some("S"), e::access(x, vec![]), None, e::counter(i))
        .unwrap();
    b.end().unwrap();
    b.end().unwrap();
    let p = b.finish().unwrap();
    let names = SiteNames::new(&p);
    let r = run(&p, &opts(&p, 5)).unwrap();
    assert_eq!(r.reads.len(), 40);
    let mut taken = 0;
    for read in &r.reads {
        let op = r.ops.get(read.op);
        assert_eq!(names.name(op.site), "c");
        let ran = r
            .ops
            .iter()
            .any(|o| names.name(o.site) == "S" && o.iter == op.iter);
        assert_eq!(ran, read.value > 0);
        taken += ran as usize;
    }
    assert!(taken > 5 && taken < 35);
}

/// `if [name] ... then S: x = i end` inside `for i`.
fn guarded(cond_name: &str, label: &str) -> Program {
    let mut b = ProgramBuilder::new();
    let x = b.scalar("x").unwrap();
    let i = b.begin_for("i", e::int(1), e::int(30), 1).unwrap();
    b.begin_if(Some(cond_name), Cond::Unknown).unwrap();
    b.assign(
        Some(label),
        e::access(x, vec![]),
        None,
        e::add(e::unknown(), e::counter(i)),
    )
    .unwrap();
    b.end().unwrap();
    b.end().unwrap();
    b.finish().unwrap()
}

#[test]
fn derived_names_see_the_same_world() {
    let a = guarded("c", "S");
    let b = guarded("c.2", "S.1");
    let c = guarded("d", "S");
    let ra = run(&a, &opts(&a, 9)).unwrap();
    let rb = run(&b, &opts(&b, 9)).unwrap();
    let rc = run(&c, &opts(&c, 9)).unwrap();
    let iters = |r: &Run| -> Vec<Vec<i64>> { r.ops.iter().map(|o| o.iter.to_vec()).collect() };
    assert_eq!(iters(&ra), iters(&rb));
    assert_eq!(ra.arrays, rb.arrays);
    assert_ne!(
        iters(&ra),
        iters(&rc),
        "another condition decides differently"
    );
}

/// A value divided by zero is a value (PolyBench's durbin: `beta` wraps to 0):
/// the same for the same dividend, another for another dividend or for `%`;
/// reads see it like any other value. (Bounds are affine, so a run has no
/// static division; the analyses' static guards still report one.)
#[test]
fn division_by_zero_in_a_run_is_a_value() {
    let p = parsed(
        "real x, y, z, w, u;\nS: x = 1 / 0;\nT: y = 1 / 0;\nU: z = 2 / 0;\nV: w = 1 % 0;\nu = 5;\nW: u /= 0;\nR: use(x + y + z + w + u);\n",
    );
    let r = run(&p, &opts(&p, 3)).unwrap();
    let value = |name: &str| {
        let a = p.arrays.iter().position(|a| a.name == name).unwrap();
        r.arrays[a].get(0).unwrap().value
    };
    assert_eq!(value("x"), value("y"));
    assert_ne!(value("x"), value("z"));
    assert_ne!(value("x"), value("w"));
    // `u /= 0` divides 5 by zero: 5's quotient, another dividend than 1.
    assert_ne!(value("u"), value("x"));
    // W reads u; R reads the five.
    assert_eq!(r.reads.len(), 6);
    // Another seed, other values; the same seed, the same ones.
    let again = run(&p, &opts(&p, 3)).unwrap();
    assert_eq!(r.arrays, again.arrays);
    let other = run(&p, &opts(&p, 4)).unwrap();
    assert_ne!(r.arrays, other.arrays);
}

#[test]
fn too_many_cells_is_an_error() {
    // A big array is sparse: the budget bounds the cells a run touches.
    let p = parsed("param N = 1000000000000; real A[1..N]; for i = 1 to 10 do A[i] = i; end");
    let mut o = opts(&p, 0);
    o.max_cells = 8;
    assert_eq!(run(&p, &o).unwrap_err().kind, ErrorKind::TooLarge);
    o.max_cells = 10;
    assert_eq!(run(&p, &o).unwrap().arrays[0].held_len(), 10);
    let (p, _) = array_program(vec![(i64::MIN, i64::MAX)]);
    assert_eq!(run(&p, &opts(&p, 0)).unwrap_err().kind, ErrorKind::TooLarge);
}

fn parsed(source: &str) -> Program {
    arrayflow_loop::lower::compile(source, crate::diagnostics::FileId(0))
        .0
        .expect("a valid program")
}

/// A big (sparse) array behaves as a small (dense) one: the same reads and
/// values, and the cells it holds are those the small one's run touched,
/// with the same contents; an untouched cell reads its initial value.
#[test]
fn sparse_arrays_run_as_dense_ones() {
    let text = |n: &str| {
        format!(
            "param N = {n}; real A[0..N, 0..N]; real s;\n\
             for i = 0 to 3 do A[i, i + 1] = A[i, i] + A[i + 2, 5]; end\n\
             s = A[1, 2] + A[7, 7];"
        )
    };
    let small = parsed(&text("9"));
    let big = parsed(&text("100000000"));
    for seed in 0..4 {
        let a = run(&small, &opts(&small, seed)).unwrap();
        let b = run(&big, &opts(&big, seed)).unwrap();
        assert_eq!(a.arrays[0].touched, None);
        let held = b.arrays[0].touched.as_ref().expect("sparse");
        let values = |r: &Run| {
            r.reads
                .iter()
                .map(|x| (x.value, x.writer))
                .collect::<Vec<_>>()
        };
        assert_eq!(values(&a), values(&b));
        // 4 written (A[1, 2] read again), 4 read on the diagonal, 4 in
        // column 5, and A[7, 7].
        assert_eq!(held.len(), 4 + 4 + 4 + 1);
        for (&flat, cell) in held {
            let index = b.arrays[0].index(flat);
            let k = a.arrays[0].offset(&index).unwrap();
            assert_eq!(a.arrays[0].cells[k], *cell, "cell {index:?}");
        }
        let untouched = b.arrays[0].offset(&[7, 7]).unwrap();
        let seven = crate::interp::initial_value(seed, "A", &[7, 7]);
        assert_eq!(b.arrays[0].get(untouched).unwrap().value, seven);
        assert_eq!(
            a.arrays[0].cells[a.arrays[0].offset(&[7, 7]).unwrap()].value,
            seven
        );
    }
}

/// An `Interpreter` reused across seeds and parameter values, with runs
/// handed back or kept, makes exactly the runs `run` makes afresh.
#[test]
fn a_reused_interpreter_runs_as_a_fresh_one() {
    let p = example1();
    let mut it = Interpreter::new(&p);
    let same = |a: &Run, b: &Run| {
        assert!(a.ops.iter().eq(b.ops.iter()));
        assert_eq!(
            (&a.reads, &a.arrays, a.steps),
            (&b.reads, &b.arrays, b.steps)
        );
    };
    for seed in 0..12 {
        let mut o = opts(&p, seed);
        // Runs of different lengths: 1 to 7 iterations of `i`.
        o.params = vec![seed as i64 % 7 + 1];
        let fresh = run(&p, &o).unwrap();
        let reused = it.run(&o).unwrap();
        same(&fresh, &reused);
        assert_eq!(reused.ops.len(), fresh.ops.len());
        if seed % 3 != 0 {
            it.recycle(reused);
        }
    }
}

/// `...` values and calls are the documented hashes of (domain, seed, base
/// label or function name, iteration vector, position), whatever loops were
/// entered and left in between (the machine reuses hash states of outer
/// iteration entries): every value below is recomputed from its definition.
#[test]
fn unknown_values_are_the_hash_of_their_iteration() {
    use crate::hash::StableHasher;
    let mut b = ProgramBuilder::new();
    let n = b.param("N", Some(3)).unwrap();
    let a = b
        .array(
            "A",
            vec![
                (e::int(1), e::param(n)),
                (e::int(1), e::param(n)),
                (e::int(1), e::int(2)),
            ],
        )
        .unwrap();
    let v = b
        .array(
            "B",
            vec![(e::int(1), e::param(n)), (e::int(1), e::param(n))],
        )
        .unwrap();
    let u = b.array("C", vec![(e::int(1), e::param(n))]).unwrap();
    let i = b.begin_for("i", e::int(1), e::param(n), 1).unwrap();
    b.assign(
        Some("U"),
        e::access(u, vec![e::counter(i)]),
        None,
        e::unknown(),
    )
    .unwrap();
    let j = b.begin_for("j", e::int(1), e::param(n), 1).unwrap();
    let k = b.begin_for("k", e::int(1), e::int(2), 1).unwrap();
    let sub = vec![e::counter(i), e::counter(j), e::counter(k)];
    let value = e::add(e::unknown(), e::call("f", vec![e::counter(k)]));
    b.assign(Some("S"), e::access(a, sub), None, value).unwrap();
    b.end().unwrap();
    b.assign(
        Some("V"),
        e::access(v, vec![e::counter(i), e::counter(j)]),
        None,
        e::unknown(),
    )
    .unwrap();
    b.end().unwrap();
    b.end().unwrap();
    let p = b.finish().unwrap();
    for seed in [0, 7] {
        let o = opts(&p, seed);
        // Domains 2 (a statement's `...`) and 3 (a call), docs/interpreter.md.
        let unknown = |label: &str, iter: &[i64]| {
            StableHasher::new(2)
                .word(seed)
                .str(label)
                .ints(iter)
                .word(0)
                .finish() as i64
        };
        let call = |x: i64| StableHasher::new(3).word(seed).str("f").ints(&[x]).finish() as i64;
        let run = run(&p, &o).unwrap();
        let cell = |arr: crate::model::ArrayId, index: &[i64]| {
            let c = &run.arrays[arr.index()];
            c.cells[c.offset(index).unwrap()].value
        };
        for x in 1..=3 {
            assert_eq!(cell(u, &[x]), unknown("U", &[x]));
            for y in 1..=3 {
                assert_eq!(cell(v, &[x, y]), unknown("V", &[x, y]));
                for z in 1..=2 {
                    let expected = unknown("S", &[x, y, z]).wrapping_add(call(z));
                    assert_eq!(cell(a, &[x, y, z]), expected);
                }
            }
        }
    }
}
