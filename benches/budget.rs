//! How fast, and in how little memory, an over-budget request
//! ends with its error. Each case runs the path the command runs (through
//! the analysis database for `flow`, `expansion::expand` for `expand`) on a
//! program whose instances or memory are far over the budget.
//! Target: every error in under 50 ms and under 100 MB of peak heap.
//!
//! `cargo bench --bench budget` runs criterion timings, then prints the
//! table (peak heap above what was live before; wall time, mean of 10);
//! `ARRAYFLOW_BENCH_QUICK=1` prints the table only.

#[allow(dead_code)]
mod support;

use arrayflow::dataflow::{Config, DataflowError};
use arrayflow::db::{self, resolve::FileFlowError};
use arrayflow::expansion::{self, ExpansionError};
use std::time::{Duration, Instant};

struct Case {
    name: &'static str,
    file: &'static str,
    config: Config,
    /// Through `expansion::expand` (else the database's `flow`).
    expand: bool,
}

fn cases() -> Vec<Case> {
    let cfg = |n: i64, max_instances: u64, max_memory: u64| Config {
        params: vec![("N".to_string(), n)],
        max_trips: 4,
        max_instances,
        max_memory,
    };
    let gib = 1 << 30;
    let matmul = "fixtures/c/kernels/matmul.loop";
    let polly = "fixtures/papers/polly-mse-intro-expanded.loop";
    vec![
        Case {
            name: "flow matmul N=2000 (8·10^9 instances)",
            file: matmul,
            config: cfg(2000, 50_000_000, gib),
            expand: false,
        },
        Case {
            name: "expand matmul N=2000",
            file: matmul,
            config: cfg(2000, 50_000_000, gib),
            expand: true,
        },
        Case {
            name: "flow matmul N=512, max-instances 10^9 (memory)",
            file: matmul,
            config: cfg(512, 1_000_000_000, gib),
            expand: false,
        },
        Case {
            name: "expand polly-mse-intro N=3000 (memory)",
            file: polly,
            config: cfg(3000, 50_000_000, gib),
            expand: true,
        },
        Case {
            name: "flow matmul C file N=10^6 (10^18 instances)",
            file: "fixtures/c/kernels/matmul.c",
            config: cfg(1_000_000, 50_000_000, gib),
            expand: false,
        },
    ]
}

/// Runs one case; returns the error code it ended with.
fn run(case: &Case) -> &'static str {
    let text = std::fs::read_to_string(case.file).expect("fixture");
    let code = |e: &DataflowError| match e {
        DataflowError::Budget { .. } => "E0302",
        DataflowError::Memory(_) => "E0304",
        _ => "other",
    };
    if case.expand {
        let (program, _) = db::compile(std::path::Path::new(case.file), &text, db::FILE);
        match expansion::expand(&program.expect("valid"), &case.config) {
            Err(ExpansionError::Dataflow(e)) => code(&e),
            _ => "ok",
        }
    } else {
        let db = db::Database::new(case.config.clone());
        let file = db.add_file(case.file, text);
        match db::resolve::file_flow(&db, file) {
            Err(FileFlowError::Analysis(d)) => d.code,
            _ => "ok",
        }
    }
}

fn main() {
    let cases = cases();
    if std::env::var_os("ARRAYFLOW_BENCH_QUICK").is_none() {
        let mut c = support::criterion();
        let mut g = c.benchmark_group("budget error");
        for case in &cases {
            g.bench_function(case.name, |b| b.iter(|| run(case)));
        }
        g.finish();
    }
    // Wall time: thread CPU time (schedstat) is updated too seldom for
    // requests this short.
    println!("\n| request | error | wall time (mean of 10) | peak heap |");
    println!("|---|---|---|---|");
    for case in &cases {
        let mut total = Duration::ZERO;
        let mut peak = 0;
        let mut got = "";
        for _ in 0..10 {
            let start = Instant::now();
            let (code, _, p) = support::measure(|| run(case));
            total += start.elapsed();
            peak = peak.max(p);
            got = code;
        }
        println!(
            "| {} | {got} | {:.2} ms | {:.1} MB |",
            case.name,
            total.as_secs_f64() * 100.0,
            peak as f64 / 1e6
        );
    }
}
