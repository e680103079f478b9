//! Every command on programs of many statements: `n` statements
//! `S<k>: A[1] = A[2];` (n = 1k, 4k, 16k, 100k), 100k loops
//! `for i = 1 to N do S<k>: A[i] = A[i + 1]; end`, 100k declarations, and
//! 1k, 2k, 4k statements in one loop each writing its own array,
//! each command run as the binary under `ulimit -v 4000000`. Prints the
//! table of docs/scaling.md ("Many statements"): wall time, peak RSS and
//! how each run ended (exit 0, or its diagnostic's code; never an
//! allocation abort). Then criterion times `check`, `fmt`, `flow` and
//! `deps` at 16k statements. `ARRAYFLOW_BENCH_QUICK=1`: the table only.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The statements of the pattern, outside any loop.
fn statements(n: usize) -> String {
    let mut s = String::from("real A[1..2];\n");
    for k in 0..n {
        s.push_str(&format!("S{k}: A[1] = A[2];\n"));
    }
    s
}

fn loops(n: usize) -> String {
    let mut s = String::from("param N = 4;\nreal A[1..N + 1];\n");
    for k in 0..n {
        s.push_str(&format!("for i = 1 to N do S{k}: A[i] = A[i + 1]; end\n"));
    }
    s
}

/// `n` statements in one loop, each writing its own array from the one
/// before: as many arrays, writes and reads as statements.
fn one_loop(n: usize) -> String {
    let mut s = String::from("param N = 100;\n");
    for k in 0..n {
        s.push_str(&format!("real A{k}[0..N];\n"));
    }
    s.push_str("for i = 0 to N do\n");
    for k in 0..n {
        let from = if k == 0 {
            "f(i)".to_string()
        } else {
            format!("A{}[i]", k - 1)
        };
        s.push_str(&format!("  S{k}: A{k}[i] = {from};\n"));
    }
    s.push_str("end\n");
    s
}

/// The commands timed on [`one_loop`] programs, whose cost should double
/// with the statements (at most ×2.2 per doubling).
const ONE_LOOP_COMMANDS: [&str; 6] = [
    "flow",
    "facts",
    "privatize",
    "privatize --emit code",
    "expand",
    "expand --emit code",
];

fn declarations(n: usize) -> String {
    (0..n).map(|k| format!("real A{k}[1..2];\n")).collect()
}

/// How one run ended, its wall time and peak RSS (KB).
struct Run {
    ended: String,
    wall: Duration,
    rss_kb: u64,
}

fn run(command: &str, file: &Path, scratch: &Path) -> Run {
    let exe = env!("CARGO_BIN_EXE_arrayflow");
    let extra = match command {
        "facts" => format!("--format souffle {}", scratch.join("facts").display()),
        _ => String::new(),
    };
    let script = format!(
        "ulimit -v 4000000; exec /usr/bin/time -f '%M' {exe} {command} {} {extra} > /dev/null",
        file.display()
    );
    let t = Instant::now();
    let out = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .output()
        .expect("runs sh");
    let wall = t.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    let rss_kb = err
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(0);
    let code = err
        .split(['[', ']'])
        .find(|w| w.len() == 5 && w.starts_with('E'))
        .map(str::to_string);
    let ended = match (out.status.code(), code) {
        (Some(0), _) => "ok".to_string(),
        (Some(c), Some(d)) => format!("{d} (exit {c})"),
        (Some(c), None) if err.contains("memory allocation") => format!("abort (exit {c})"),
        (Some(c), None) => format!("exit {c}"),
        (None, _) => "killed".to_string(),
    };
    Run {
        ended,
        wall,
        rss_kb,
    }
}

impl Run {
    /// The run's row of the table.
    fn print_row(&self, program: &str, command: &str) {
        eprintln!(
            "| {program} | {command} | {} | {:.2} s | {} MB |",
            self.ended,
            self.wall.as_secs_f64(),
            self.rss_kb / 1024
        );
    }
}

const COMMANDS: [&str; 7] = [
    "check",
    "fmt",
    "flow",
    "deps",
    "facts",
    "expand",
    "privatize",
];

fn main() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("scale-bench");
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let mut inputs: Vec<(String, String)> = [1_000, 4_000, 16_000, 100_000]
        .iter()
        .map(|&n| (format!("{n} statements"), statements(n)))
        .collect();
    inputs.push(("100k loops".to_string(), loops(100_000)));
    inputs.push(("100k declarations".to_string(), declarations(100_000)));
    eprintln!("load average {}", common::load());
    eprintln!("| program | command | ended | wall | peak RSS |");
    eprintln!("|---|---|---|---|---|");
    // Wall times of `check`, `fmt` and `flow` at 16k and 100k statements.
    let mut growth: Vec<(&str, f64, f64)> = Vec::new();
    for (k, (name, text)) in inputs.iter().enumerate() {
        let file = dir.join(format!("input-{k}.loop"));
        std::fs::write(&file, text).expect("writes the program");
        for command in COMMANDS {
            let r = run(command, &file, &dir);
            r.print_row(name, command);
            let t = r.wall.as_secs_f64();
            if ["check", "fmt", "flow"].contains(&command) {
                match name.as_str() {
                    "16000 statements" => growth.push((command, t, 0.0)),
                    "100000 statements" => {
                        if let Some(g) = growth.iter_mut().find(|g| g.0 == command) {
                            g.2 = t;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    // Statements in one loop: each command at 1k, 2k and 4k, and the
    // factor from 2k to 4k.
    let one_loops: Vec<(usize, PathBuf)> = [1_000, 2_000, 4_000]
        .into_iter()
        .map(|n| {
            let file = dir.join(format!("one-loop-{n}.loop"));
            std::fs::write(&file, one_loop(n)).expect("writes the program");
            (n, file)
        })
        .collect();
    for command in ONE_LOOP_COMMANDS {
        let mut walls = Vec::new();
        for (n, file) in &one_loops {
            let r = run(command, file, &dir);
            r.print_row(&format!("{n} statements in one loop"), command);
            walls.push(r.wall.as_secs_f64());
        }
        eprintln!(
            "{command}: 2k → 4k statements in one loop ×{:.1}",
            walls[2] / walls[1].max(1e-3)
        );
    }
    // n log n from 16k to 100k statements is a factor of 7.4.
    let nlogn = (1e5 * 1e5f64.ln()) / (16e3 * 16e3f64.ln());
    for (command, small, large) in growth {
        eprintln!(
            "{command}: 16k → 100k statements ×{:.1} (n log n: ×{nlogn:.1})",
            large / small.max(1e-3)
        );
    }
    if std::env::var_os("ARRAYFLOW_BENCH_QUICK").is_some() {
        return;
    }
    let file = dir.join("input-2.loop");
    let mut c = common::criterion();
    for command in ["check", "fmt", "flow", "deps"] {
        c.bench_function(&format!("{command} 16k statements"), |b| {
            b.iter(|| run(command, &file, &dir))
        });
    }
    c.final_summary();
}
