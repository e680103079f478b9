//! LMAD regions (issue 19): `cargo bench --bench regions`. Building and
//! simplifying every loop's read, write and must-write regions of each
//! fixture kernel (fixtures/regions, the LMAD paper's figures, the other
//! paper fixtures), and of a synthetic program of 1,000 references (100
//! nests of 2–3 loops, ten references each over three arrays). The issue's
//! later target is summarising a 1,000-procedure program in under 1 s.

use arrayflow::diagnostics::FileId;
use arrayflow::model::Program;
use arrayflow::regions::build;
use criterion::{criterion_group, criterion_main, Criterion};
use std::fmt::Write;
use std::hint::black_box;

fn compile(text: &str) -> Program {
    let (p, diags) = arrayflow::lower::compile(text, FileId(0));
    p.unwrap_or_else(|| panic!("{diags:?}"))
}

/// 100 nests × 10 references: rectangular, triangular and strided loops,
/// one- and two-dimensional arrays with extents in N and M.
fn synthetic() -> String {
    let mut s = String::from(
        "param N = 64, M = 32;\nreal A[0..N, 0..M];\nreal B[0..4*N];\nreal C[0..N];\n",
    );
    for b in 0..100 {
        let lo = if b % 3 == 0 { "i" } else { "0" };
        let step = if b % 4 == 1 { " step 2" } else { "" };
        let _ = write!(
            s,
            "for i = 1 to N - 1 do\n  for j = {lo} to M{step} do\n\
             \x20   A[i, j] = A[i - 1, j] + B[2 * i + j] + C[i];\n\
             \x20   B[i + j + {b}] += A[i, M - j];\n\
             \x20   C[i] = B[4 * i] + A[{}, j];\n\
             \x20 end\n  C[i - 1] = C[i + 1];\nend\n",
            b % 7
        );
    }
    s
}

fn fixtures() -> Vec<(String, Program)> {
    let mut out = Vec::new();
    for dir in ["fixtures/regions", "fixtures/papers"] {
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .expect("fixtures")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "loop"))
            .collect();
        paths.sort();
        for p in paths {
            let text = std::fs::read_to_string(&p).expect("read");
            if let (Some(prog), _) = arrayflow::lower::compile(&text, FileId(0)) {
                out.push((p.display().to_string(), prog));
            }
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("regions");
    let kernels = fixtures();
    g.bench_function(format!("every fixture kernel ({})", kernels.len()), |b| {
        b.iter(|| {
            for (_, p) in &kernels {
                black_box(build::regions(p, &|_| None));
            }
        })
    });
    let p = compile(&synthetic());
    let refs: usize = p.stmts().iter().map(|s| s.accesses().len()).sum();
    assert!(refs >= 1000, "{refs} references");
    g.sample_size(10);
    g.bench_function(format!("synthetic {refs} references, symbolic"), |b| {
        b.iter(|| black_box(build::regions(&p, &|_| None)))
    });
    g.bench_function(format!("synthetic {refs} references, N=64 M=32"), |b| {
        b.iter(|| {
            black_box(build::regions(&p, &|v| match v {
                arrayflow::model::Var::Param(x) => Some([64, 32][x.index()]),
                _ => None,
            }))
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
