//! Interpreter and generator speed on generated programs: the cost of one
//! property-test case (generate, then run at the defaults). Also the
//! validation step of `expand --emit code` on Example 2: the emitted program
//! against the original by `equiv` at N = 6, 8, 9 on 3 seeds each.

use arrayflow::codegen::{self, check};
use arrayflow::diagnostics::SourceFiles;
use arrayflow::gen::{generate, GenOptions, Size};
use arrayflow::interp::{run, Options};
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

mod clock;
use clock::wall_and_cpu;

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
        let mut g = c.benchmark_group("interp");
        wall_and_cpu(&mut g, &format!("run 100 {name} programs"), || {
            for (p, o) in ps.iter().zip(&opts) {
                black_box(run(p, o).expect("generated programs run"));
            }
        });
        g.finish();
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
    let mut g = c.benchmark_group("interp");
    wall_and_cpu(&mut g, "validate example 2 (N = 6, 8, 9; 3 seeds)", || {
        check::compare(&original, &emitted, black_box(&vectors), 3)
    });
    g.finish();
}

criterion_group!(benches, bench, validation);
criterion_main!(benches);
