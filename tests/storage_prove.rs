//! The contracted program proved for every parameter value
//! (`storage::prove`). Layouts written by hand from the paper's
//! Figure 1 and the folded example (maydan-1.7-unused-index), then broken
//! one way at a time (a fold too small, a read one place off, the final
//! value's place wrong, a loop made parallel that the layout does not
//! allow): the right ones are proved, every broken one is not. Then the
//! emitter's own layouts on the kernels, whose programs are right by
//! `equiv` (tests/storage.rs), are proved, and what is outside the prover
//! says why. Temporaries sharing storage: proved when never live
//! together, not when they are.

use arrayflow::codegen::Options;
use arrayflow::diagnostics::FileId;
use arrayflow::model::{Affine, ArrayId, CounterId, ParamId, Program, StmtId, Var};
use arrayflow::storage::prove::{cell, prove, Layout, Proof, Time};
use arrayflow::storage::{emit, Schedule};
use std::collections::HashMap;

fn read(path: &str) -> Program {
    let path = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    let (p, d) = arrayflow::lower::compile(&std::fs::read_to_string(path).unwrap(), FileId(0));
    p.unwrap_or_else(|| panic!("{d:?}"))
}

fn counter(p: &Program, name: &str) -> Affine {
    let k = p.counters.iter().position(|c| c.name == name).unwrap();
    Affine::var(Var::Counter(CounterId(k as u32)))
}

fn stmt(p: &Program, label: &str) -> StmtId {
    p.stmts().iter().find(|s| s.label == label).unwrap().id
}

fn array(p: &Program, name: &str) -> ArrayId {
    ArrayId(p.arrays.iter().position(|a| a.name == name).unwrap() as u32)
}

fn plus(a: &Affine, c: i64) -> Affine {
    a.checked_add(&Affine::constant(c)).unwrap()
}

/// Parallel flags by counter name.
fn loops(p: &Program, parallel: &[&str]) -> Vec<bool> {
    p.counters
        .iter()
        .map(|c| parallel.contains(&c.name.as_str()))
        .collect()
}

fn not_proved(p: &Proof) -> &str {
    match p {
        Proof::NotProved(why) => why,
        Proof::Proved { .. } => panic!("proved"),
    }
}

/// `a[j] = a[j + 1]` for i, j in 1..10, j parallel: a_c[j, i % 2], read at
/// a_c[j + 1, (i - 1) % 2], the final values at a_c[c, 10 % 2] (by hand).
fn unused_index() -> (Program, Layout) {
    let p = read("fixtures/papers/maydan-1.7-unused-index.loop");
    let (i, s) = (counter(&p, "i"), stmt(&p, "S"));
    let l = Layout {
        array: array(&p, "a"),
        folds: vec![Some(2)],
        ranges: vec![None],
        writes: HashMap::from([(s, vec![i.clone()])]),
        reads: HashMap::from([((s, 0), Some(vec![plus(&i, -1)]))]),
        last: Some(vec![Affine::constant(10)]),
        shared: Vec::new(),
        modular: None,
    };
    (p, l)
}

#[test]
fn the_folded_example_is_proved_and_each_break_is_not() {
    let (p, l) = unused_index();
    let j = loops(&p, &["j"]);
    assert!(prove(&p, Time::Loops(&j), std::slice::from_ref(&l)).proved());

    // mod 1: S[i, j + 1] overwrites a[j + 1] while S[i, j] may still
    // need the value of i - 1 (j parallel).
    let mut one = l.clone();
    one.folds = vec![Some(1)];
    let why = prove(&p, Time::Loops(&j), std::slice::from_ref(&one));
    assert!(not_proved(&why).contains("may overwrite"), "{why:?}");
    // The same storage is right when j runs in order.
    let none = loops(&p, &[]);
    assert!(prove(&p, Time::Loops(&none), std::slice::from_ref(&one)).proved());

    // The read one place off: i instead of i - 1.
    let mut off = l.clone();
    let i = counter(&p, "i");
    off.reads.insert((stmt(&p, "S"), 0), Some(vec![i]));
    let why = prove(&p, Time::Loops(&j), std::slice::from_ref(&off));
    assert!(not_proved(&why).contains("elsewhere"), "{why:?}");

    // The final values looked for at 9 % 2.
    let mut last = l.clone();
    last.last = Some(vec![Affine::constant(9)]);
    let why = prove(&p, Time::Loops(&j), std::slice::from_ref(&last));
    assert!(not_proved(&why).contains("copy-out"), "{why:?}");

    // i parallel: i - 1 may not have run.
    let i_par = loops(&p, &["i", "j"]);
    assert!(!prove(&p, Time::Loops(&i_par), std::slice::from_ref(&l)).proved());

    // The original storage: in order, yes; with j parallel, no.
    let id = Layout::identity(&p, array(&p, "a"));
    assert!(prove(&p, Time::Loops(&none), std::slice::from_ref(&id)).proved());
    assert!(!prove(&p, Time::Loops(&j), std::slice::from_ref(&id)).proved());
}

/// θ(R, i) = 0, θ(S, i, j) = j: every i at once, s_c[i], the final value
/// s_c[n] (by hand, the paper's Figure 1).
fn figure_1() -> (Program, Layout) {
    let p = read("fixtures/papers/storage-figure1.loop");
    let i = counter(&p, "i");
    let n = Affine::var(Var::Param(ParamId(0)));
    let (r, s) = (stmt(&p, "R"), stmt(&p, "S"));
    let l = Layout {
        array: array(&p, "s"),
        folds: vec![None],
        ranges: vec![Some((Affine::constant(1), n.clone()))],
        writes: HashMap::from([(r, vec![i.clone()]), (s, vec![i.clone()])]),
        reads: HashMap::from([((s, 0), Some(vec![i]))]),
        last: Some(vec![n]),
        shared: Vec::new(),
        modular: None,
    };
    (p, l)
}

#[test]
fn figure_1_s_of_n_is_proved_and_its_breaks_are_not() {
    let (p, l) = figure_1();
    let (i, s) = (counter(&p, "i"), stmt(&p, "S"));
    let par = loops(&p, &["i"]);
    assert!(prove(&p, Time::Loops(&par), std::slice::from_ref(&l)).proved());

    let mut first = l.clone();
    first.last = Some(vec![Affine::constant(1)]);
    assert!(!prove(&p, Time::Loops(&par), std::slice::from_ref(&first)).proved());
    // One place past the extent.
    let mut past = l.clone();
    past.reads.insert((s, 0), Some(vec![plus(&i, 1)]));
    let why = prove(&p, Time::Loops(&par), std::slice::from_ref(&past));
    assert!(not_proved(&why).contains("outside"), "{why:?}");
    // The scalar itself with i parallel: R of one i may reset s while
    // another i counts.
    let id = Layout::identity(&p, array(&p, "s"));
    assert!(!prove(&p, Time::Loops(&par), std::slice::from_ref(&id)).proved());
    let none = loops(&p, &[]);
    assert!(prove(&p, Time::Loops(&none), std::slice::from_ref(&id)).proved());
    // `cell` names the final value's cell variables: s has none.
    let _ = cell(0);
}

#[test]
fn the_affine_schedule_orders_the_proof() {
    // Figure 1 under { R[i] -> [0]; S[i, j] -> [j] }: s_c[i] proved; the
    // scalar kept is not (every R at time 0 at once).
    let p = read("fixtures/papers/storage-figure1.loop");
    let text = std::fs::read_to_string(format!(
        "{}/fixtures/storage/figure1-paper.schedule",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let a = arrayflow::storage::affine::parse(&p, &text).unwrap();
    let (_, l) = figure_1();
    assert!(prove(&p, Time::Affine(&a), std::slice::from_ref(&l)).proved());
    let id = Layout::identity(&p, array(&p, "s"));
    assert!(!prove(&p, Time::Affine(&a), std::slice::from_ref(&id)).proved());
}

#[test]
fn the_emitted_kernels_are_proved_and_the_rest_say_why() {
    // Each program here is right (tests/storage.rs compares it with the
    // original by equiv); static control, so the prover must prove it.
    let kernels = [
        ("fixtures/c/kernels/jacobi1d.loop", vec!["i"]),
        ("fixtures/c/kernels/jacobi2d.loop", vec!["i", "j"]),
        ("fixtures/c/kernels/heat1d.loop", vec!["i"]),
        ("fixtures/c/kernels/heat2d.loop", vec!["i", "j"]),
        ("fixtures/c/kernels/matmul.loop", vec!["i", "j"]),
        ("fixtures/c/kernels/lu.loop", vec![]),
        ("fixtures/c/kernels/seidel2d.loop", vec![]),
        ("fixtures/c/kernels/trisolve.loop", vec![]),
        // Indirect subscripts, kept in order: a subscript that is not
        // affine is left out of "on one cell".
        ("fixtures/c/kernels/indirect.loop", vec![]),
        ("fixtures/papers/storage-figure1.loop", vec!["i"]),
        ("fixtures/papers/maydan-1.7-unused-index.loop", vec!["j"]),
    ];
    for (file, par) in kernels {
        let p = read(file);
        let names: Vec<String> = par.iter().map(|s| s.to_string()).collect();
        let s = Schedule::new(&p, Some(&names)).unwrap();
        let e = emit::checked(&p, &s, &Options::default()).unwrap();
        assert!(e.proof.proved(), "{file}: {:?}", e.proof);
        assert!(emit::header(&e).contains("# proved for every parameter value"));
    }
    // Outside: a written array read by a `while`.
    let p = read("fixtures/c/kernels/spmv.loop");
    let s = Schedule::new(&p, None).unwrap();
    let e = emit::checked(&p, &s, &Options::default()).unwrap();
    assert!(
        not_proved(&e.proof).contains("reads in conditions"),
        "spmv: {:?}",
        e.proof
    );
    assert!(emit::header(&e).contains("# not proved for every parameter value: "));
}

#[test]
fn temporaries_share_storage_only_when_never_live_together() {
    // Phases (T1 dead before T2 is written): T2 in T1's storage, proved
    // with i parallel. Overlap (Q reads T1 after P2 wrote T2 on that
    // cell): the same sharing, written by hand, is not.
    let i = ["i"];
    for (file, proved) in [
        ("fixtures/storage/temporaries-phases.loop", true),
        ("fixtures/storage/temporaries-overlap.loop", false),
    ] {
        let p = read(file);
        let class = [array(&p, "T1"), array(&p, "T2")];
        let mut layouts = vec![Layout::shared(&p, &class).unwrap()];
        for name in ["A", "B", "C"] {
            if let Some(k) = p.arrays.iter().position(|a| a.name == name) {
                layouts.push(Layout::identity(&p, ArrayId(k as u32)));
            }
        }
        let par = loops(&p, &i);
        let got = prove(&p, Time::Loops(&par), &layouts);
        assert_eq!(got.proved(), proved, "{file}: {got:?}");
        // Kept apart, both are right.
        let apart: Vec<Layout> = p
            .arrays
            .iter()
            .enumerate()
            .map(|(k, _)| Layout::identity(&p, ArrayId(k as u32)))
            .collect();
        assert!(prove(&p, Time::Loops(&par), &apart).proved(), "{file}");
    }
    // The emitter's own sharing on the phases is proved.
    let p = read("fixtures/storage/temporaries-phases.loop");
    let s = Schedule::new(&p, Some(&["i".to_string()])).unwrap();
    let temps = [array(&p, "T1"), array(&p, "T2")];
    let e = emit::checked_with(&p, &s, &temps, &Options::default()).unwrap();
    assert_eq!(e.shared, vec!["T2 in T1".to_string()]);
    assert!(e.proof.proved(), "{:?}", e.proof);
}
