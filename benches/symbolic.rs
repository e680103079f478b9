//! Six kernels: symbolic σ (`symbolic::analyze`: sample, fit,
//! prove) of matmul, jacobi-2d, seidel-2d (the .loop twins in
//! fixtures/c/kernels) and the three MSE examples
//! (fixtures/papers/mse-example*.loop, which are not static control: their
//! sets of possible sources, `symbolic::fada`). Each kernel with an exact
//! read is measured twice, with its declared sizes and with every
//! parameter's default set to 128: the analysis never runs at the
//! defaults, so the two must match (independent of N). The parameter
//! vectors it does run at are printed. Target: ≤ 2 ms each.

use arrayflow::diagnostics::SourceFiles;
use arrayflow::model::Program;
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

// As the `arrayflow` binary.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn load(rel: &str) -> Program {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut files = SourceFiles::new();
    let file = files.add(rel.to_string(), text.clone());
    arrayflow::db::compile(&path, &text, file).0.unwrap()
}

const FILES: [(&str, &str); 6] = [
    ("matmul", "fixtures/c/kernels/matmul.loop"),
    ("jacobi-2d", "fixtures/c/kernels/jacobi2d.loop"),
    ("seidel-2d", "fixtures/c/kernels/seidel2d.loop"),
    ("mse-example1", "fixtures/papers/mse-example1.loop"),
    ("mse-example2", "fixtures/papers/mse-example2.loop"),
    ("mse-example3", "fixtures/papers/mse-example3.loop"),
];

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("symbolic");
    g.measurement_time(Duration::from_secs(3));
    for (name, rel) in FILES {
        let program = load(rel);
        let sym = arrayflow::symbolic::analyze(&program);
        let exact = sym
            .reads
            .iter()
            .filter(|r| matches!(r.outcome, arrayflow::symbolic::Outcome::Exact(_)))
            .count();
        let largest = sym.samples.iter().flatten().max();
        eprintln!(
            "{name}: {exact} of {} reads exact; {} samples, largest parameter value {largest:?}",
            sym.reads.len(),
            sym.samples.len()
        );
        g.bench_function(name, |b| {
            b.iter(|| arrayflow::symbolic::analyze(black_box(&program)))
        });
        if exact > 0 {
            let mut big = program.clone();
            for p in &mut big.params {
                p.default = Some(128);
            }
            g.bench_function(format!("{name} (defaults 128)"), |b| {
                b.iter(|| arrayflow::symbolic::analyze(black_box(&big)))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
