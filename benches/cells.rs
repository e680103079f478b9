//! Cells cost only for the cells touched: `arrayflow flow`'s path
//! (the database: kernels, entry writes and exit reads, σ across kernels)
//! on programs that declare huge arrays and touch a few cells, and the same
//! programs with the arrays declared just big enough (the dense case).
//! CPU time and peak heap of one cold analysis (a new database each time).
//!
//! `ARRAYFLOW_BENCH_QUICK=1` prints the table only.

mod support;

use arrayflow::dataflow::Config;
use arrayflow::db::resolve::file_flow;
use arrayflow::db::Database;
use std::hint::black_box;

fn programs() -> Vec<(&'static str, String)> {
    let one =
        |n: &str| format!("param N = {n};\nreal B[0..N];\nfor i = 0 to 3 do\n  B[i] = 1;\nend\n");
    let two = |n: &str| {
        format!("param N = {n};\nreal C[0..N, 0..N];\nfor i = 0 to 3 do\n  C[i, i] = 1;\nend\n")
    };
    // Three kernels reading what the one before wrote, 10^4 cells touched.
    let chain = |n: &str| {
        format!(
            "param N = {n};\nreal A[0..N], B[0..N];\n\
             for i = 0 to 9999 do\n  A[i] = i;\nend\n\
             for i = 1 to 9999 do\n  B[i] = A[i - 1] + A[i];\nend\n\
             for i = 0 to 9998 do\n  A[i] = B[i + 1];\nend\n"
        )
    };
    vec![
        ("big.loop (B[0..10^8], 4 written)", one("100000000")),
        ("B[0..3], 4 written", one("3")),
        ("big2.loop (C[0..10^5, 0..10^5], 4 written)", two("100000")),
        ("C[0..3, 0..3], 4 written", two("3")),
        ("3 kernels, A, B[0..10^8], 10^4 cells", chain("100000000")),
        ("3 kernels, A, B[0..9999], 10^4 cells", chain("9999")),
    ]
}

fn flow(text: &str) -> usize {
    let db = Database::new(Config::default());
    let file = db.add_file("bench.loop", text);
    match file_flow(&db, file) {
        Ok(f) => f.len(),
        Err(_) => panic!("the analysis fails"),
    }
}

fn main() {
    let programs = programs();
    if std::env::var_os("ARRAYFLOW_BENCH_QUICK").is_none() {
        let mut c = support::criterion();
        let mut g = c.benchmark_group("cells");
        for (name, text) in &programs {
            g.bench_function(*name, |b| b.iter(|| flow(black_box(text))));
        }
        g.finish();
    }
    println!("\n| program | reads | CPU time (median of 11) | peak heap |");
    println!("|---|---|---|---|");
    for (name, text) in &programs {
        let mut runs: Vec<_> = (0..11).map(|_| support::measure(|| flow(text))).collect();
        runs.sort_by_key(|r| r.1);
        let (reads, t, peak) = runs[runs.len() / 2];
        let peak = runs.iter().map(|r| r.2).max().unwrap_or(peak);
        println!(
            "| {name} | {reads} | {:.3} ms | {:.1} KiB |",
            t.as_secs_f64() * 1000.0,
            peak as f64 / 1024.0
        );
    }
}
