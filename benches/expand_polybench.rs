//! `arrayflow expand FILE --emit code` and `arrayflow privatize FILE --emit
//! code` on every PolyBench/C 4.2.1 kernel as shipped (fixtures/c/polybench,
//! default sizes, no `-D`): wall time of each command (median of
//! `ARRAYFLOW_BENCH_RUNS`, default 3), how many arrays `expand` expanded and
//! proved, and the loops `privatize` made parallel. Targets: every array
//! expanded and proved, each command in at most 200 ms per kernel.
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
fn run(command: &str, file: &str) -> (Duration, String) {
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args([command, file, "--emit", "code"])
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
    println!("| kernel | expand, median | expand, min | expanded and proved | privatize, median | loops privatized |");
    println!("|---|---|---|---|---|---|");
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let timed = |command: &str| {
            let mut times = Vec::new();
            let mut last = String::new();
            for _ in 0..runs.max(1) {
                let (t, out) = run(command, &name);
                times.push(t);
                last = out;
            }
            times.sort();
            (times, last)
        };
        let (times, out) = timed("expand");
        let (x, n) = expanded(&out);
        let (ptimes, pout) = timed("privatize");
        let loops = pout
            .lines()
            .filter(|l| l.contains("#pragma omp parallel for"))
            .count();
        let ms = |t: &Duration| t.as_secs_f64() * 1e3;
        println!(
            "| {name} | {:.0} ms | {:.0} ms | {x} of {n} | {:.0} ms | {loops} |",
            ms(&times[times.len() / 2]),
            ms(&times[0]),
            ms(&ptimes[ptimes.len() / 2]),
        );
    }
}
