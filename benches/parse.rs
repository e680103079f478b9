//! Parse + check throughput: `cargo bench --bench parse`.
//! Target: at least 20 MB/s of source on one core.

use arrayflow::diagnostics::{has_errors, FileId};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::fmt::Write;
use std::hint::black_box;

mod clock;
use clock::wall_and_cpu;

// The allocator of the `arrayflow` binary, so the figure is the CLI's.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A valid program of `stmts` statements in a realistic mix: nested loops,
/// guards, `while`s, compound assignments, calls, affine and non-affine
/// subscripts.
fn program(stmts: usize) -> String {
    let mut s = String::from(
        "# generated for benches/parse.rs\nparam N = 8, M = 6;\nassume M <= N;\n\
         real A[0..N, 0..M];\nreal B[0..2*N];\nreal x;\n\n",
    );
    let mut k = 0;
    while k < stmts {
        let b = k / 10;
        let _ = write!(
            s,
            "for i{b} = 1 to N do\n  for j = 0 to M step 2 do\n\
             \x20   S{k}: A[i{b}, j] = A[i{b} - 1, j] + B[j + i{b}] * 2 + f(x, i{b});\n\
             \x20   B[i{b} + j] += A[i{b}, j] / 3;\n\
             \x20   if j == M and i{b} > 1 then\n\
             \x20     T{k}: A[i{b}, j] = g(A[i{b}, j], B[2 * i{b}]);\n\
             \x20   elsif [c{k}] A[i{b}, j] > 0 then\n\
             \x20     use(A[i{b}, j], x);\n\
             \x20   else\n\
             \x20     x = -x + ...;\n\
             \x20   end\n  end\n\
             \x20 while [w{k}] B[i{b}] > 0 do\n\
             \x20   B[i{b}] -= 1;\n\
             \x20   A[h(i{b}), w{k} % (M + 1)] = B[i{b}];\n\
             \x20 end\n\
             \x20 R{k}: use(B[N - i{b}], A[N, M]);\nend\n"
        );
        k += 8;
        let _ = writeln!(s, "U{k}: x = x * 2 + B[0];\nV{k}: use(x);");
        k += 2;
    }
    s
}

fn bench(c: &mut Criterion) {
    let source = program(100_000);
    let (p, diags) = arrayflow::lower::compile(&source, FileId(0));
    assert!(!has_errors(&diags), "the generated program is valid");
    assert!(p.expect("valid").stmts().len() >= 100_000);
    let mut g = c.benchmark_group("parse");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(source.len() as u64));
    wall_and_cpu(&mut g, "parse+check 100k statements", || {
        arrayflow::lower::compile(black_box(&source), FileId(0))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
