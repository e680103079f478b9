//! Bounded σ on timely/differential-dataflow (`dataflow::dd`).
//!
//! 1. Time: the dd engine at 1 worker against the ascent engine on 1
//!    thread (`dataflow::analyze`, lowering included in both), matmul at
//!    N=64 and N=128. Target: dd within 3× of ascent. Median of 5 wall
//!    times; the machine is shared, so the load average is printed.
//! 2. Memory: the binary (`flow --engine dd`, `ARRAYFLOW_PEAK=1`: each
//!    process prints its counting allocator's peak heap) on matmul N=128 at
//!    P = 1, 2, 4 processes on 127.0.0.1, one worker each, then on two
//!    kernels (fixtures/dd/matmul-twice.loop: the second product's reads
//!    resolve through the first's exit reads). Target: each process's
//!    peak ≤ 1/P × the single process's + 50 MB.
//!
//! Before timing, dd's σ is checked against the ascent engine's read by read.
//!
//! `cargo bench --bench dd` runs criterion (N=64), then prints the tables;
//! `ARRAYFLOW_BENCH_QUICK=1` prints the tables only.

#[path = "common/mod.rs"]
mod common;
#[allow(dead_code)]
#[path = "../tests/kernels/mod.rs"]
mod kernels;

use arrayflow::budget;
use arrayflow::dataflow::dd::{with_cluster, Cluster};
use arrayflow::dataflow::{analyze, with_threads, Config, Flow};
use common::{config, load, same_reads, wall};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[global_allocator]
static ALLOC: budget::Counting<mimalloc::MiMalloc> = budget::Counting::new(mimalloc::MiMalloc);

fn ascent(c: &Config) -> Flow {
    with_threads(1, || {
        analyze(&kernels::matmul(), c).expect("matmul analyses")
    })
    .expect("pool")
}

fn dd(c: &Config) -> Flow {
    with_cluster(Cluster::local(1), || {
        analyze(&kernels::matmul(), c).expect("matmul analyses")
    })
}

fn time_table() {
    println!("\n| matmul | read instances | ascent, 1 thread | dd, 1 worker | dd / ascent | peak heap ascent | peak heap dd | load average |");
    println!("|---|---|---|---|---|---|---|---|");
    for n in [64, 128] {
        let c = config(n);
        let (a, d) = (ascent(&c), dd(&c));
        same_reads(&a, &d);
        let reads = a.stats().read_instances;
        drop((a, d));
        let (ta, pa) = wall(|| ascent(&c));
        let (td, pd) = wall(|| dd(&c));
        println!(
            "| N={n} | {reads} | {:.0} ms | {:.0} ms | {:.2}x | {} MB | {} MB | {} |",
            ta.as_secs_f64() * 1e3,
            td.as_secs_f64() * 1e3,
            td.as_secs_f64() / ta.as_secs_f64(),
            pa >> 20,
            pd >> 20,
            load()
        );
    }
}

/// Runs `flow --engine dd` on `p` processes; each process's peak heap, and
/// its peak before the dd run (the lowering), and the wall time of the run.
fn processes(p: usize, n: i64, file: &str) -> (Vec<(u64, u64)>, Duration) {
    let ports: Vec<u16> = {
        let held: Vec<_> = (0..p)
            .map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("a port"))
            .collect();
        held.iter()
            .map(|l| l.local_addr().expect("addr").port())
            .collect()
    };
    let hosts = std::env::temp_dir().join(format!("arrayflow-dd-bench-{}", std::process::id()));
    let text: String = ports.iter().map(|q| format!("127.0.0.1:{q}\n")).collect();
    std::fs::write(&hosts, text).expect("hosts file");
    let file = format!("{}/{file}", env!("CARGO_MANIFEST_DIR"));
    let file = file.as_str();
    let t = Instant::now();
    let children: Vec<_> = (0..p)
        .map(|i| {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_arrayflow"));
            cmd.args(["flow", file, "--param", &format!("N={n}"), "--engine", "dd"])
                .args(["--max-instances", "1000000000", "--max-memory", "64G"])
                .env("ARRAYFLOW_PEAK", "1")
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            if p > 1 {
                cmd.args(["--processes", &p.to_string(), "--process", &i.to_string()])
                    .arg("--hosts")
                    .arg(&hosts);
            }
            cmd.spawn().expect("the binary starts")
        })
        .collect();
    let mut peaks = Vec::new();
    for child in children {
        let out = child.wait_with_output().expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        // "peak heap of process I[ before the dd run]: B bytes"
        let bytes = |before: bool| -> u64 {
            err.lines()
                .filter_map(|l| l.strip_prefix("peak heap of process "))
                // The last: the process's final peak, not an earlier probe.
                .rfind(|l| l.contains(" before the dd run") == before)
                .and_then(|l| l.split(": ").nth(1))
                .and_then(|b| b.trim_end_matches(" bytes").parse().ok())
                .expect("the peak is reported")
        };
        peaks.push((bytes(false), bytes(true)));
    }
    let _ = std::fs::remove_file(&hosts);
    (peaks, t.elapsed())
}

/// [`processes`] at P = 1, 2, 4 on `file` (under the crate), as a table.
fn memory_table(n: i64, file: &str) {
    println!(
        "\n{file} N={n}, `flow --engine dd`, one worker per process, 127.0.0.1 (load average {})",
        load()
    );
    println!("| P | wall | peak heap per process (0, 1, ...) | of which before the dd run (the lowering) | target 1/P × single + 50 MB | met |");
    println!("|---|---|---|---|---|---|");
    let mut single = 0;
    for p in [1, 2, 4] {
        let (peaks, t) = processes(p, n, file);
        if p == 1 {
            single = peaks[0].0;
        }
        let bound = single / p as u64 + (50 << 20);
        let mb = |f: fn(&(u64, u64)) -> u64| -> String {
            let list: Vec<String> = peaks.iter().map(|b| format!("{}", f(b) >> 20)).collect();
            list.join(", ")
        };
        println!(
            "| {p} | {:.1} s | {} MB | {} MB | {} MB | {} |",
            t.as_secs_f64(),
            mb(|b| b.0),
            mb(|b| b.1),
            bound >> 20,
            if peaks.iter().all(|b| b.0 <= bound) {
                "yes"
            } else {
                "no"
            }
        );
    }
}

fn main() {
    if std::env::var_os("ARRAYFLOW_BENCH_QUICK").is_none() {
        let c = config(64);
        let mut cr = common::criterion();
        let mut g = cr.benchmark_group("dd");
        g.bench_function("matmul N=64 ascent, 1 thread", |b| b.iter(|| ascent(&c)));
        g.bench_function("matmul N=64 dd, 1 worker", |b| b.iter(|| dd(&c)));
        g.finish();
    }
    time_table();
    memory_table(128, "fixtures/c/kernels/matmul.loop");
    memory_table(128, "fixtures/dd/matmul-twice.loop");
}
