//! The cascade on a generated corpus mirroring the PERFECT mix of the
//! thesis' Table 1 (tests that decided: GCD 384, SVPC 5,176, Acyclic 323,
//! Loop Residue 6, Fourier–Motzkin 174; constants need no test and are left
//! out), and `deps` on every fixture. Prints the corpus make-up and the memo
//! hit rates (on the corpus and on the fixtures) before measuring.
//!
//! Problems come from random affine programs (tests/support/gen.rs): each
//! reference pair's problem, and the same with random direction constraints
//! (as the Burke–Cytron refinement adds them), classified by the test that
//! decides them with memoization off.

#[path = "../tests/support/gen.rs"]
#[allow(dead_code)]
mod gen;

use arrayflow::dependence::pairs::{self, Built};
use arrayflow::dependence::{analyze, Config, MemoMode, Problem, Test, Tester};
use arrayflow::diagnostics::SourceFiles;
use arrayflow::model::Program;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use gen::{Rng, Shape};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Duration;

// As the `arrayflow` binary.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Table 1 totals (per test that decided), and the corpus size.
const MIX: [(Test, usize); 5] = [
    (Test::Gcd, 384),
    (Test::Svpc, 5176),
    (Test::Acyclic, 323),
    (Test::LoopResidue, 6),
    (Test::FourierMotzkin, 174),
];
const CORPUS: usize = 10_000;

struct Item {
    problem: Problem,
    indices: Vec<bool>,
}

fn tester(memo: MemoMode) -> Tester {
    Tester::new(Config {
        memo,
        ..Config::default()
    })
}

/// The pair problems of a program, each also with a random direction
/// constraint on some common loops.
fn problems(program: &Program, rng: &mut Rng, out: &mut Vec<Item>) {
    let refs = pairs::references(program);
    for (i, a) in refs.iter().enumerate() {
        for b in &refs[i..] {
            if a.access.array != b.access.array || !(a.kind.writes() || b.kind.writes()) {
                continue;
            }
            let Built { pair, .. } = pairs::build(program, a, b);
            let mut p = pair.problem.clone();
            out.push(Item {
                problem: pair.problem,
                indices: pair.indices.clone(),
            });
            if pair.loops.is_empty() {
                continue;
            }
            let n = p.n();
            for &(s, d) in &pair.loops {
                let mut c = vec![0i64; n];
                match rng.range(0, 3) {
                    0 => {
                        c[s] = -1;
                        c[d] = 1;
                        p.add_eq(&c, 0);
                    }
                    1 => {
                        c[s] = 1;
                        c[d] = -1;
                        p.add_le(&c, -1);
                    }
                    2 => {
                        c[s] = -1;
                        c[d] = 1;
                        p.add_le(&c, -1);
                    }
                    _ => {}
                }
            }
            out.push(Item {
                problem: p,
                indices: pair.indices,
            });
        }
    }
}

/// Buckets of problems by the test that decides them.
fn buckets() -> BTreeMap<Test, Vec<Item>> {
    let want: BTreeMap<Test, usize> = MIX
        .iter()
        .map(|&(t, k)| (t, (CORPUS * k).div_ceil(6063)))
        .collect();
    let mut out: BTreeMap<Test, Vec<Item>> = BTreeMap::new();
    let mut classify = tester(MemoMode::Off);
    let mut rng = Rng::new(7);
    for seed in 0..200_000u64 {
        let shape = Shape {
            param: seed % 3 == 0,
            guards: seed % 2 == 0,
            nonaffine: false,
            dims: 1 + (seed % 2) as usize,
            depth: 2 + (seed % 2) as usize,
            coeff: if seed % 4 == 0 { 3 } else { 1 },
        };
        let program = gen::program(&mut Rng::new(seed), shape);
        let mut items = Vec::new();
        problems(&program, &mut rng, &mut items);
        for item in items {
            let t = classify.test(&item.problem, &item.indices).decided_by;
            let t = if t == Test::BranchBound {
                Test::FourierMotzkin
            } else {
                t
            };
            let Some(&w) = want.get(&t) else { continue };
            let b = out.entry(t).or_default();
            if b.len() < w {
                b.push(item);
            }
        }
        if want
            .iter()
            .all(|(t, &w)| out.get(t).is_some_and(|b| b.len() >= w))
        {
            break;
        }
    }
    out
}

/// Every fixture program (papers and ours).
fn fixtures() -> Vec<(String, Program)> {
    let mut out = Vec::new();
    for dir in ["fixtures/papers", "fixtures/dependence"] {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for path in paths
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "loop"))
        {
            let Ok(source) = std::fs::read_to_string(&path) else {
                continue;
            };
            let mut files = SourceFiles::new();
            let id = files.add(path.display().to_string(), source);
            if let (Some(p), _) = arrayflow::lower::compile(files.source(id), id) {
                out.push((path.display().to_string(), p));
            }
        }
    }
    out
}

/// This thread's CPU time: the machine may be shared, so wall time would
/// measure the other processes too.
fn cpu() -> Duration {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .map(Duration::from_nanos)
        .unwrap_or_default()
}

/// Every item through the tester once.
fn pass(t: &mut Tester, items: &[&Item]) {
    for it in items {
        black_box(t.test(&it.problem, &it.indices));
    }
}

/// Problems per second of thread CPU time, over passes of at least a second.
fn rate(items: &[&Item], memo: MemoMode, warm: bool) -> f64 {
    let mut t = tester(memo);
    if warm {
        pass(&mut t, items);
    }
    let (mut done, start) = (0usize, cpu());
    while cpu() - start < Duration::from_secs(1) {
        if !warm {
            t = tester(memo);
        }
        pass(&mut t, items);
        done += items.len();
    }
    done as f64 / (cpu() - start).as_secs_f64()
}

fn bench(c: &mut Criterion) {
    let buckets = buckets();
    eprintln!("corpus (test that decides, memo off):");
    for (t, b) in &buckets {
        eprintln!("  {:<16} {}", t.name(), b.len());
    }
    let svpc: Vec<&Item> = buckets
        .get(&Test::Svpc)
        .map(|b| b.iter().collect())
        .unwrap_or_default();
    let mut mix: Vec<&Item> = buckets.values().flatten().collect();
    // Interleave deterministically so memo tables see a program-like order.
    let mut rng = Rng::new(11);
    for i in (1..mix.len()).rev() {
        mix.swap(i, rng.range(0, i as i64) as usize);
    }
    {
        let mut t = tester(MemoMode::Improved);
        pass(&mut t, &mix);
        eprintln!("mix, one cold pass, improved key:\n{}", t.stats().render());
    }
    let fixtures = fixtures();
    for memo in [MemoMode::Simple, MemoMode::Improved] {
        let mut t = tester(memo);
        let mut pairs = 0;
        for (_, p) in &fixtures {
            pairs += analyze(p, &mut t).len();
        }
        eprintln!(
            "fixtures ({} programs, {pairs} pairs), one tester:\n{}",
            fixtures.len(),
            t.stats().render()
        );
    }

    eprintln!("problems per second of thread CPU time:");
    for (name, items, memo, warm) in [
        ("svpc, memo off", &svpc, MemoMode::Off, false),
        (
            "svpc, memo improved, cold",
            &svpc,
            MemoMode::Improved,
            false,
        ),
        (
            "svpc, memo improved, warm (all hits)",
            &svpc,
            MemoMode::Improved,
            true,
        ),
        ("mix, memo off", &mix, MemoMode::Off, false),
        ("mix, memo improved, cold", &mix, MemoMode::Improved, false),
        (
            "mix, memo improved, warm (all hits)",
            &mix,
            MemoMode::Improved,
            true,
        ),
    ] {
        eprintln!("  {name:<40} {:>10.0}", rate(items, memo, warm));
    }
    {
        let (mut pairs, start) = (0usize, cpu());
        while cpu() - start < Duration::from_secs(1) {
            let mut t = tester(MemoMode::Improved);
            for (_, p) in &fixtures {
                pairs += black_box(analyze(p, &mut t)).len();
            }
        }
        let per_s = pairs as f64 / (cpu() - start).as_secs_f64();
        eprintln!("  {:<40} {per_s:>10.0}", "deps on every fixture (pairs)");
    }
    if std::env::var_os("ARRAYFLOW_BENCH_QUICK").is_some() {
        return;
    }

    let mut g = c.benchmark_group("dependence");
    for (name, items) in [("svpc", &svpc), ("mix", &mix)] {
        g.throughput(Throughput::Elements(items.len() as u64));
        g.bench_function(format!("{name}/memo_off"), |b| {
            let mut t = tester(MemoMode::Off);
            b.iter(|| pass(&mut t, items))
        });
        g.bench_function(format!("{name}/memo_improved_cold"), |b| {
            b.iter_batched(
                || tester(MemoMode::Improved),
                |mut t| {
                    pass(&mut t, items);
                    t
                },
                BatchSize::LargeInput,
            )
        });
        g.bench_function(format!("{name}/memo_improved_warm"), |b| {
            let mut t = tester(MemoMode::Improved);
            pass(&mut t, items);
            b.iter(|| pass(&mut t, items))
        });
    }
    let total_pairs: usize = {
        let mut t = tester(MemoMode::Improved);
        fixtures.iter().map(|(_, p)| analyze(p, &mut t).len()).sum()
    };
    g.throughput(Throughput::Elements(total_pairs as u64));
    g.bench_function("fixtures/deps_with_directions", |b| {
        b.iter(|| {
            let mut t = tester(MemoMode::Improved);
            for (_, p) in &fixtures {
                black_box(analyze(p, &mut t));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
