//! LMAD regions: `cargo bench --bench regions`. Building and
//! simplifying every loop's read, write and must-write regions of each
//! fixture kernel (fixtures/regions, the LMAD paper's figures, the other
//! paper fixtures), and of a synthetic program of 1,000 references (100
//! nests of 2–3 loops, ten references each over three arrays). Summarising
//! a program of 1,000 small procedures (MOD/USE/KILL of each, with the
//! dependence tests USE needs, then each one's call translated): the
//! target is under 1 s.

use arrayflow::diagnostics::FileId;
use arrayflow::model::Program;
use arrayflow::regions::{build, summary};
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

/// 1,000 procedures of two loops and three array parameters (one a
/// matrix), each called once on rows, columns and whole arrays.
fn procedures() -> String {
    let mut s =
        String::from("param N = 64;\nreal A[0..N];\nreal C[0..N];\nreal B[0..N, 0..N];\n\n");
    for k in 0..1000 {
        let _ = write!(
            s,
            "proc p{k}(real X[0..N], real Y[0..N], real G[0..N, 0..N], int m)\n\
             \x20 for j = 1 to m do\n    X[j] = Y[j - 1] + X[j] * {k};\n  end\n\
             \x20 for j = 0 to N do\n    G[j, {}] = X[j] + G[j, m];\n  end\nend\n",
            k % 5
        );
    }
    for k in 0..1000 {
        let args = match k % 3 {
            0 => "A, C, B, N",
            1 => "B[k, *], A, B, k",
            _ => "B[*, 1], C, B, 2",
        };
        if k % 3 == 1 {
            let _ = writeln!(s, "for k = 1 to N do\n  L{k}: call p{k}({args});\nend");
        } else {
            let _ = writeln!(s, "L{k}: call p{k}({args});");
        }
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
    let text = procedures();
    let (p, calls, diags) = arrayflow::lower::compile_calls(&text, FileId(0));
    let p = p.unwrap_or_else(|| panic!("{diags:?}"));
    assert_eq!(calls.procs.len(), 1000);
    g.bench_function("summarise 1,000 procedures", |b| {
        b.iter(|| {
            for q in &calls.procs {
                black_box(summary::summarize(q, &|_| None));
            }
        })
    });
    g.bench_function(
        "summarise 1,000 procedures and translate their calls",
        |b| {
            b.iter(|| {
                let sums: Vec<_> = calls
                    .procs
                    .iter()
                    .map(|q| summary::summarize(q, &|_| None))
                    .collect();
                for site in &calls.sites {
                    black_box(summary::at_call(
                        &p,
                        &calls,
                        site,
                        &sums[site.proc],
                        &|_| None,
                    ));
                }
            })
        },
    );
    g.bench_function("front end of the 1,000-procedure program", |b| {
        b.iter(|| black_box(arrayflow::lower::compile_calls(&text, FileId(0))))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
