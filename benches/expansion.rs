//! Classes and labels (R, R*, φ, ν) for about 10^6 live writes on generated
//! kernels: CPU time and peak memory of the expansion step alone (σ given),
//! and of σ for comparison. Target: classes and labels under 1 s on one core.
//!
//! Also the whole `expand --emit code` pipeline per paper example:
//! parse, facts, σ, classes, inference at the sampled sizes, codegen and the
//! validation `equiv` runs. Target: at most 2 ms each, in release mode.
//!
//! `cargo bench --bench expansion` runs criterion timings of the expansion
//! step and of the pipeline, then prints the tables; `ARRAYFLOW_BENCH_QUICK=1`
//! prints the tables only.

#[allow(dead_code)]
#[path = "../tests/kernels/mod.rs"]
mod kernels;
#[allow(dead_code)]
mod support;

use arrayflow::codegen;
use arrayflow::dataflow::{analyze_instances, Config, Instances};
use arrayflow::diagnostics::SourceFiles;
use arrayflow::expansion::classes;
use arrayflow::model::Program;
use kernels::{example1, example3, jacobi, matmul};

struct Kernel {
    name: &'static str,
    program: Program,
    config: Config,
}

fn kernels() -> Vec<Kernel> {
    let cfg = |ps: &[(&str, i64)], max_trips: u32| Config {
        params: ps.iter().map(|&(n, v)| (n.to_string(), v)).collect(),
        max_trips,
        max_instances: 200_000_000,
        max_memory: u64::MAX,
    };
    vec![
        // 10^6 updates C[i,j] += ..., each its own class (static control).
        Kernel {
            name: "matmul N=100",
            program: matmul(),
            config: cfg(&[("N", 100)], 4),
        },
        // Jacobi: 2 sweeps x 2 statements over 500x500.
        Kernel {
            name: "jacobi-2d N=500 T=2",
            program: jacobi(),
            config: cfg(&[("N", 500), ("T", 2)], 4),
        },
        // Example 1: 5 writes per i (T and 4 trips of S), one class per i.
        Kernel {
            name: "example 1 N=200000 trips=4",
            program: example1(),
            config: cfg(&[("N", 200_000)], 4),
        },
        // Example 3: N^2 writes of T, N classes meeting every one of N cells.
        Kernel {
            name: "example 3 N=1000",
            program: example3(),
            config: cfg(&[("N", 1000)], 4),
        },
    ]
}

fn sigma(k: &Kernel) -> Instances {
    analyze_instances(&k.program, &k.config).expect("σ")
}

fn figures(kernels: &[Kernel]) {
    println!(
        "\n| kernel | writes | live writes | classes Σ|W(c)/R*| | σ CPU time | classes+labels CPU time | classes+labels peak memory | σ peak memory |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for k in kernels {
        let (inst, ts, ps) = support::measure(|| sigma(k));
        let (c, tc, pc) = support::measure(|| classes::compute(&inst).expect("classes"));
        let live = c.live.iter().filter(|&&l| l).count();
        println!(
            "| {} | {} | {} | {} | {:.2} s | {:.3} s | {:.1} MiB ({:.0} B/live write) | {:.1} MiB |",
            k.name,
            c.write_ops.len(),
            live,
            c.total,
            ts.as_secs_f64(),
            tc.as_secs_f64(),
            pc as f64 / (1 << 20) as f64,
            pc as f64 / live.max(1) as f64,
            ps as f64 / (1 << 20) as f64,
        );
    }
}

/// The paper examples, as source text.
const EXAMPLES: [&str; 4] = [
    "mse-example1.loop",
    "mse-example2.loop",
    "mse-example3.loop",
    "storage-figure1.loop",
];

fn source(name: &str) -> String {
    let path = format!("{}/fixtures/papers/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).expect("fixture")
}

/// `expand FILE --emit code` without the printing: parse, then emit.
fn pipeline(text: &str) -> codegen::Emitted {
    let mut files = SourceFiles::new();
    let file = files.add("<bench>".to_string(), text.to_string());
    let (p, _) = arrayflow::lower::compile(files.source(file), file);
    codegen::emit(&p.expect("valid"), &codegen::Options::default()).expect("emitted")
}

fn pipeline_figures() {
    println!("\n| example | emit code CPU time (mean of 50) | target |");
    println!("|---|---|---|");
    // ARRAYFLOW_BENCH_PIPELINE=example2 times the matching examples only.
    let only = std::env::var("ARRAYFLOW_BENCH_PIPELINE").unwrap_or_default();
    for name in EXAMPLES
        .into_iter()
        .filter(|n| only == "1" || n.contains(&only))
    {
        let text = source(name);
        pipeline(&text);
        let (_, t) = support::cpu_time(|| {
            for _ in 0..50 {
                std::hint::black_box(pipeline(&text));
            }
        });
        println!(
            "| {name} | {:.3} ms | ≤ 2 ms |",
            t.as_secs_f64() * 1e3 / 50.0
        );
    }
}

fn main() {
    if std::env::var_os("ARRAYFLOW_BENCH_PIPELINE").is_some() {
        pipeline_figures();
        return;
    }
    let kernels = kernels();
    if std::env::var_os("ARRAYFLOW_BENCH_QUICK").is_none() {
        let mut c = support::criterion();
        let mut g = c.benchmark_group("expansion");
        for k in &kernels {
            let inst = sigma(k);
            g.bench_function(k.name, |b| {
                b.iter(|| classes::compute(&inst).expect("classes"))
            });
        }
        g.finish();
        let mut g = c.benchmark_group("emit code");
        for name in EXAMPLES {
            let text = source(name);
            g.bench_function(name, |b| b.iter(|| pipeline(&text)));
        }
        g.finish();
    }
    pipeline_figures();
    figures(&kernels);
}
