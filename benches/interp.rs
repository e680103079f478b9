//! Interpreter and generator speed on generated programs: the cost of one
//! property-test case (generate, then run at the defaults).

use arrayflow::gen::{generate, GenOptions, Size};
use arrayflow::interp::{run, Options};
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

fn programs(size: Size) -> Vec<arrayflow::model::Program> {
    (0..100)
        .map(|s| generate(s, &GenOptions::all(size)))
        .collect()
}

fn bench(c: &mut Criterion) {
    for (name, size) in [
        ("small", Size::Small),
        ("medium", Size::Medium),
        ("large", Size::Large),
    ] {
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

criterion_group!(benches, bench);
criterion_main!(benches);
