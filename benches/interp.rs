//! Interpreter and generator speed on generated programs: the cost of one
//! property-test case (generate, then run at the defaults). Also the
//! validation step of `expand --emit code` on Example 2: the emitted program
//! against the original by `equiv` at N = 6, 8, 9 on 3 seeds each.
//!
//! After criterion's wall-clock timings, a table of thread CPU times (the
//! machine is shared); `ARRAYFLOW_BENCH_QUICK=1` prints the table only.

use arrayflow::codegen::{self, check};
use arrayflow::diagnostics::SourceFiles;
use arrayflow::gen::{generate, GenOptions, Size};
use arrayflow::interp::{run, Options};
use criterion::{criterion_group, Criterion};
use std::hint::black_box;
use std::time::Duration;

#[allow(dead_code)]
mod clock;

fn programs(size: Size) -> Vec<arrayflow::model::Program> {
    (0..100)
        .map(|s| generate(s, &GenOptions::all(size)))
        .collect()
}

const SIZES: [(&str, Size); 3] = [
    ("small", Size::Small),
    ("medium", Size::Medium),
    ("large", Size::Large),
];

fn bench(c: &mut Criterion) {
    for (name, size) in SIZES {
        c.bench_function(&format!("gen 100 {name} programs"), |b| {
            b.iter(|| programs(black_box(size)))
        });
        let ps = programs(size);
        let opts: Vec<Options> = ps
            .iter()
            .map(|p| Options::new(p.param_values(&[]).expect("defaults")))
            .collect();
        c.bench_function(&format!("run 100 {name} programs"), |b| {
            b.iter(|| {
                for (p, o) in ps.iter().zip(&opts) {
                    black_box(run(p, o).expect("generated programs run"));
                }
            })
        });
    }
}

/// Example 2 and the program `emit` makes of it.
fn example2() -> (arrayflow::model::Program, arrayflow::model::Program) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/papers/mse-example2.loop"
    );
    let text = std::fs::read_to_string(path).expect("fixture");
    let mut files = SourceFiles::new();
    let file = files.add(path.to_string(), text);
    let p = arrayflow::lower::compile(files.source(file), file)
        .0
        .expect("valid");
    let e = codegen::emit(&p, &codegen::Options::default()).expect("emitted");
    (p, e.program)
}

fn validation(c: &mut Criterion) {
    let (original, emitted) = example2();
    let vectors: Vec<check::Vector> = [6, 8, 9].map(|n| vec![("N".to_string(), n)]).into();
    let agreed = check::compare(&original, &emitted, &vectors, 3);
    assert!(agreed
        .iter()
        .all(|(_, r)| matches!(r, Ok(arrayflow::equiv::Verdict::Agree(_)))));
    c.bench_function("validate example 2 (N = 6, 8, 9; 3 seeds)", |b| {
        b.iter(|| check::compare(&original, &emitted, black_box(&vectors), 3))
    });
}

/// Mean thread CPU time of `f` over `n` calls (one clock reading around
/// all of them: the clock advances in scheduler ticks).
fn cpu_mean<T>(n: u32, mut f: impl FnMut() -> T) -> Duration {
    f();
    let start = clock::thread_cpu();
    for _ in 0..n {
        black_box(f());
    }
    clock::thread_cpu().saturating_sub(start) / n
}

fn cpu_figures() {
    println!("\n| what | thread CPU time (mean) |");
    println!("|---|---|");
    for (name, size) in SIZES {
        let ps = programs(size);
        let opts: Vec<Options> = ps
            .iter()
            .map(|p| Options::new(p.param_values(&[]).expect("defaults")))
            .collect();
        let t = cpu_mean(100, || {
            for (p, o) in ps.iter().zip(&opts) {
                black_box(run(p, o).expect("generated programs run"));
            }
        });
        println!(
            "| run 100 {name} programs (mean of 100) | {:.3} ms |",
            t.as_secs_f64() * 1e3
        );
    }
    let (original, emitted) = example2();
    let vectors: Vec<check::Vector> = [6, 8, 9].map(|n| vec![("N".to_string(), n)]).into();
    let t = cpu_mean(500, || check::compare(&original, &emitted, &vectors, 3));
    println!(
        "| validate example 2, N = 6, 8, 9, 3 seeds (mean of 500) | {:.3} ms |",
        t.as_secs_f64() * 1e3
    );
}

criterion_group!(benches, bench, validation);

fn main() {
    if std::env::var_os("ARRAYFLOW_BENCH_QUICK").is_none() {
        benches();
        Criterion::default().configure_from_args().final_summary();
    }
    cpu_figures();
}
