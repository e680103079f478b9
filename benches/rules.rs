//! Run-time Datalog rules (src/datalog) against the same rules compiled
//! with ascent, on the same exported facts, and the database's latency from
//! a rule edit to the new findings on a 50-kernel file.
//!
//! - `reach`: transitive closure of "a value written by operation A is read
//!   by operation B" (`source` joined with `read`) on Example 2 of the MSE
//!   paper at N = 12.
//! - `unreached`: reads that see only the initial value (the shipped
//!   `fixtures/rules/uninitialized.dl` logic, without the report) on the
//!   same facts.
//! - `edit`: a rule file's text changed, then the findings of every rule
//!   file on the 50-kernel file of benches/lsp.rs (the exported relations
//!   are cached: only the edited file's check and evaluation re-run).
//!
//! `cargo bench --bench rules`; `ARRAYFLOW_BENCH_QUICK=1` prints the table
//! only (wall-clock medians of 21 samples of 10 runs).

use arrayflow::datalog::{self, Exported};
use arrayflow::db::{rules as dbr, Database};
use arrayflow::diagnostics::FileId;
use salsa::Setter;
use std::time::Duration;
use support::cpu_time as time;

#[allow(dead_code)]
mod support;

const REACH: &str = ".decl dep(a: number, b: number)\n\
    dep(A, B) :- source(R, A), read(R, B, _).\n\
    .decl reach(a: number, b: number)\n\
    reach(A, B) :- dep(A, B).\n\
    reach(A, C) :- reach(A, B), dep(B, C).\n";

const UNREACHED: &str = ".decl reached(r: number)\n\
    reached(R) :- source(R, _).\n\
    .decl unreached(r: number, x: number)\n\
    unreached(R, X) :- read(R, _, X), initial(R), !reached(R).\n";

ascent::ascent! {
    struct Reach;
    relation source(i64, i64);
    relation read(i64, i64, i64);
    relation dep(i64, i64);
    relation reach(i64, i64);
    dep(a, b) <-- source(r, a), read(r, b, _);
    reach(a, b) <-- dep(a, b);
    reach(a, c) <-- reach(a, b), dep(b, c);
}

ascent::ascent! {
    struct Unreached;
    relation source(i64, i64);
    relation read(i64, i64, i64);
    relation initial(i64);
    relation reached(i64);
    relation unreached(i64, i64);
    reached(r) <-- source(r, _);
    unreached(r, x) <-- read(r, _, x), initial(r), !reached(r);
}

fn rel<'a>(e: &'a Exported, name: &str) -> &'a [Vec<i64>] {
    let k = datalog::relations::NAMES
        .iter()
        .position(|n| *n == name)
        .unwrap();
    &e.relations[k]
}

fn facts() -> Exported {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/papers/mse-example2.loop"
    ))
    .unwrap();
    let db = Database::new(arrayflow::dataflow::Config {
        params: vec![("N".into(), 12)],
        ..Default::default()
    });
    let file = db.add_file("ex2.loop", text);
    dbr::exported(&db, file).clone().expect("a valid fixture")
}

fn run_time(rules: &datalog::Rules, e: &Exported, name: &str) -> usize {
    let out = datalog::evaluate(rules, &e.relations, &e.symbols);
    out.relations[rules.relation(name).unwrap()].len()
}

fn ascent_reach(e: &Exported) -> usize {
    let mut p = Reach {
        source: rel(e, "source").iter().map(|r| (r[0], r[1])).collect(),
        read: rel(e, "read").iter().map(|r| (r[0], r[1], r[2])).collect(),
        ..Default::default()
    };
    p.run();
    p.reach.len()
}

fn ascent_unreached(e: &Exported) -> usize {
    let mut p = Unreached {
        source: rel(e, "source").iter().map(|r| (r[0], r[1])).collect(),
        read: rel(e, "read").iter().map(|r| (r[0], r[1], r[2])).collect(),
        initial: rel(e, "initial").iter().map(|r| (r[0],)).collect(),
        ..Default::default()
    };
    p.run();
    p.unreached.len()
}

/// The 50-kernel file of benches/lsp.rs.
fn kernels_file() -> String {
    let mut s = String::from("param N = 24;\nreal A[0..N, 0..N];\nreal B[0..N, 0..N];\nreal s;\n");
    for k in 0..50 {
        s.push_str(&format!(
            "for i = 1 to N doall\n  for j = 1 to N do\n    S{k}: A[i, j] = A[i-1, j] + B[i, j-1];\n    T{k}: B[i, j] = A[i, j] - s;\n  end\n  U{k}: s = s + A[i, N];\nend\n"
        ));
    }
    s
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let e = facts();
    let reach = datalog::compile(REACH, FileId(0)).unwrap();
    let unreached = datalog::compile(UNREACHED, FileId(0)).unwrap();
    let n_reach = run_time(&reach, &e, "reach");
    assert_eq!(n_reach, ascent_reach(&e), "the two engines disagree");
    let n_unreached = run_time(&unreached, &e, "unreached");
    assert_eq!(
        n_unreached,
        ascent_unreached(&e),
        "the two engines disagree"
    );

    // The edit: the doall rule, toggled between marked and all loops.
    let doall = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/rules/doall_flow.dl"
    ))
    .unwrap();
    let variants = [
        doall.clone(),
        doall.replace("loop(L, C, 1)", "loop(L, C, _)"),
    ];
    let mut db = Database::default();
    let file = db.add_file("k50.loop", kernels_file());
    dbr::set_rules(&mut db, &[("doall.dl".into(), variants[0].clone())]);
    let (warm, cold) = time(|| dbr::rule_diagnostics(&db, file).len());
    let rule_file = dbr::RuleSet::get(&db).files(&db)[0];
    let mut k = 0;
    let mut edit = |db: &mut Database| {
        k += 1;
        rule_file.set_text(db).to(variants[k % 2].clone());
        dbr::rule_diagnostics(db, file).len()
    };

    if std::env::var_os("ARRAYFLOW_BENCH_QUICK").is_none() {
        let mut c = support::criterion();
        let mut g = c.benchmark_group("rules");
        g.bench_function("reach run-time", |b| {
            b.iter(|| run_time(&reach, &e, "reach"))
        });
        g.bench_function("reach ascent", |b| b.iter(|| ascent_reach(&e)));
        g.bench_function("unreached run-time", |b| {
            b.iter(|| run_time(&unreached, &e, "unreached"))
        });
        g.bench_function("unreached ascent", |b| b.iter(|| ascent_unreached(&e)));
        g.bench_function("edit 50 kernels", |b| b.iter(|| edit(&mut db)));
        g.finish();
    }

    // Wall-clock medians of 21 samples of 10 runs each (CPU time is too
    // coarse for the ascent runs).
    let t = |f: &mut dyn FnMut() -> usize| {
        median(
            (0..21)
                .map(|_| {
                    let start = std::time::Instant::now();
                    for _ in 0..10 {
                        std::hint::black_box(f());
                    }
                    start.elapsed() / 10
                })
                .collect(),
        )
    };
    let rt_reach = t(&mut || run_time(&reach, &e, "reach"));
    let asc_reach = t(&mut || ascent_reach(&e));
    let rt_un = t(&mut || run_time(&unreached, &e, "unreached"));
    let asc_un = t(&mut || ascent_unreached(&e));
    let edits = t(&mut || edit(&mut db));
    println!(
        "facts: {} reads, {} sources",
        rel(&e, "read").len(),
        rel(&e, "source").len()
    );
    println!(
        "reach: {n_reach} tuples; run-time {rt_reach:?}, ascent {asc_reach:?}, ratio {:.2}",
        rt_reach.as_secs_f64() / asc_reach.as_secs_f64()
    );
    println!(
        "unreached: {n_unreached} tuples; run-time {rt_un:?}, ascent {asc_un:?}, ratio {:.2}",
        rt_un.as_secs_f64() / asc_un.as_secs_f64()
    );
    println!("50-kernel file: first findings ({warm}) {cold:?} (analyses included); rule edit to new findings {edits:?}");
}
