//! `arrayflow expand FILE --emit code` on every PolyBench/C 4.2.1 kernel
//! as shipped (fixtures/c/polybench, default sizes, no `-D`): wall time of
//! the command (median of `ARRAYFLOW_BENCH_RUNS`, default 3) and how many
//! arrays it expanded and proved. Target:
//! every array expanded and proved, each kernel in at most 200 ms.
//!
//! The command runs as a child process, as users run it: parsing and
//! preprocessing are part of the time. `cargo bench --bench expand_polybench`
//! prints the table; `ARRAYFLOW_BENCH_FILTER=gemm` runs the kernels whose
//! name contains it.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/c/polybench");

/// One run: wall time and stdout.
fn run(file: &str) -> (Duration, String) {
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(["expand", file, "--emit", "code"])
        .current_dir(DIR)
        .output()
        .expect("the binary runs");
    let wall = t.elapsed();
    assert!(
        out.status.success(),
        "{file}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (wall, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// (expanded and proved, arrays) from the header's `// A:` lines.
fn expanded(out: &str) -> (usize, usize) {
    let arrays: Vec<&str> = out
        .lines()
        .filter(|l| {
            l.strip_prefix("// ")
                .and_then(|r| r.split_once(": "))
                .is_some_and(|(name, _)| {
                    !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')
                })
        })
        .collect();
    let proved = out
        .lines()
        .filter(|l| l.starts_with("//   static: proved"))
        .count();
    let kept = arrays.iter().filter(|l| l.contains("not expanded")).count();
    ((arrays.len() - kept).min(proved), arrays.len())
}

fn main() {
    let runs: usize = std::env::var("ARRAYFLOW_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let filter = std::env::var("ARRAYFLOW_BENCH_FILTER").unwrap_or_default();
    let mut files: Vec<PathBuf> = std::fs::read_dir(DIR)
        .expect("fixtures/c/polybench")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .filter(|p| p.to_string_lossy().contains(&filter))
        .collect();
    files.sort();
    println!("| kernel | median wall | min wall | expanded and proved |");
    println!("|---|---|---|---|");
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let mut times = Vec::new();
        let mut last = String::new();
        for _ in 0..runs.max(1) {
            let (t, out) = run(&name);
            times.push(t);
            last = out;
        }
        times.sort();
        let (x, n) = expanded(&last);
        println!(
            "| {name} | {:.0} ms | {:.0} ms | {x} of {n} |",
            times[times.len() / 2].as_secs_f64() * 1e3,
            times[0].as_secs_f64() * 1e3,
        );
    }
}
