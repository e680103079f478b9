//! The whole `arrayflow flow FILE --format json` path (parse,
//! per-kernel σ, the file's sources, grouping, JSON) against a direct
//! last-writer simulation of matmul that prints the same JSON. Target: the
//! command ≤ 3× the simulation at N=128.
//!
//! The simulation is a plain loop nest over matmul tracking the last writer
//! of each cell of C (A and B are never written: every read of them sees the
//! initial value); it groups and prints with the library's `Grouper` and
//! `GroupWriter`, so both sides pay the same output cost and the ratio is the
//! cost of the analysis. Its output is checked byte for byte against the
//! command's (an independent oracle of the command's σ).
//!
//! Two commands are measured: the rules engine (`--engine rules`, through
//! the database as above) and the quast engine (`symbolic::analyze`, then
//! each read instance's quast evaluated: `symbolic::bounded`), which
//! `flow` uses by default past 10^5 instances when every read is exact.
//!
//! `cargo bench --bench flow_command` runs criterion timings, then prints
//! the table (thread CPU time, median of 5; peak heap above what was live
//! before); `ARRAYFLOW_BENCH_QUICK=1` prints the table only.

#[allow(dead_code)]
mod support;

use arrayflow::dataflow::grouped::Grouper;
use arrayflow::dataflow::render::GroupWriter;
use arrayflow::dataflow::Config;
use arrayflow::db::{self, resolve::file_groups};
use arrayflow::model::{Program, Site};
use std::time::Duration;

const FILE: &str = "fixtures/c/kernels/matmul.loop";

fn config(n: i64) -> Config {
    Config {
        params: vec![("N".to_string(), n)],
        max_trips: 4,
        ..Config::default()
    }
}

/// What `arrayflow flow FILE --param N=n --format json` does, writing to a
/// buffer instead of stdout.
fn command(text: &str, n: i64) -> Vec<u8> {
    let database = db::Database::new(config(n));
    let file = database.add_file(FILE, text);
    let r = file_groups(
        &database,
        file,
        |program, (params, trips)| GroupWriter::new(program, &params, trips, true, Vec::new()),
        |w, a| w.write(&a),
    );
    match r {
        Ok(Ok(w)) => w.finish().unwrap_or_default(),
        _ => panic!("matmul must analyse"),
    }
}

/// What `arrayflow flow FILE --param N=n --format json` does by default
/// at these sizes: quasts, found and proved, evaluated per read instance.
fn command_quasts(program: &Program, n: i64) -> Vec<u8> {
    let sym = arrayflow::symbolic::analyze(program);
    let params = vec![("N".to_string(), n)];
    let mut w = GroupWriter::new(program, &params, 4, true, Vec::new()).expect("a Vec");
    arrayflow::symbolic::bounded::groups(program, &sym, &[n], |a| w.write(&a))
        .expect("matmul's quasts are exact")
        .expect("a Vec");
    w.finish().expect("a Vec")
}

/// The direct simulation: one pass over matmul's iterations in program
/// order, a dense table of C's last writer.
fn simulation(program: &Program, n: i64) -> Vec<u8> {
    let site = |label: &str| {
        let s = program.stmts().into_iter().find(|s| s.label == label);
        Site::Stmt(s.expect("matmul has S and T").id)
    };
    let (s, t) = (site("S"), site("T"));
    let reads = |label: &str| {
        let s = program.stmts().into_iter().find(|s| s.label == label);
        let s = s.expect("matmul has T");
        s.reads().iter().map(|a| a.array).collect::<Vec<_>>()
    };
    let arrays = reads("T");
    let params = vec![("N".to_string(), n)];
    let mut w = GroupWriter::new(program, &params, 4, true, Vec::new()).expect("a Vec");
    let mut g = Grouper::new(program);
    let un = n as usize;
    // The last writer of C[i, j]: S's (i, j), or T's (i, j, k).
    let mut last: Vec<Option<(Site, [i64; 3])>> = vec![None; un * un];
    for i in 0..n {
        for j in 0..n {
            let cell = i as usize * un + j as usize;
            last[cell] = Some((s, [i, j, 0]));
            for k in 0..n {
                let it = [i, j, k];
                let (src, iter) = last[cell].expect("S wrote it");
                let len = if src == s { 2 } else { 3 };
                g.read(t, &it, 0, arrays[0], [(src, &iter[..len])], false);
                g.read(t, &it, 1, arrays[1], [], true);
                g.read(t, &it, 2, arrays[2], [], true);
                last[cell] = Some((t, it));
            }
        }
    }
    for site in [s, t] {
        w.write(&g.take(site)).expect("a Vec");
    }
    w.finish().expect("a Vec")
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let text = std::fs::read_to_string(FILE).expect("the fixture");
    let database = db::Database::new(config(4));
    let program = db::parse(&database, database.add_file(FILE, text.as_str()))
        .program
        .clone()
        .expect("matmul parses");
    let sizes = [64, 128];
    for n in sizes {
        let sim = simulation(&program, n);
        assert!(
            command(&text, n) == sim,
            "the command and the simulation disagree at N={n}"
        );
        assert!(
            command_quasts(&program, n) == sim,
            "the quast engine and the simulation disagree at N={n}"
        );
    }
    if std::env::var_os("ARRAYFLOW_BENCH_QUICK").is_none() {
        let mut c = support::criterion();
        let mut g = c.benchmark_group("flow command");
        for n in sizes {
            g.bench_function(format!("command matmul N={n}"), |b| {
                b.iter(|| command(&text, n))
            });
            g.bench_function(format!("command (quasts) matmul N={n}"), |b| {
                b.iter(|| command_quasts(&program, n))
            });
            g.bench_function(format!("simulation matmul N={n}"), |b| {
                b.iter(|| simulation(&program, n))
            });
        }
        g.finish();
    }
    println!("\n| matmul | engine | command (CPU, median of 5) | peak heap | simulation | peak heap | ratio | JSON bytes |");
    println!("|---|---|---|---|---|---|---|---|");
    for n in sizes {
        for engine in ["rules", "quasts"] {
            let run = || match engine {
                "rules" => command(&text, n),
                _ => command_quasts(&program, n),
            };
            let (mut tc, mut ts) = (Vec::new(), Vec::new());
            let (mut pc, mut ps, mut bytes) = (0, 0, 0);
            for _ in 0..5 {
                let (out, t, p) = support::measure(run);
                tc.push(t);
                pc = pc.max(p);
                bytes = out.len();
                let (_, t, p) = support::measure(|| simulation(&program, n));
                ts.push(t);
                ps = ps.max(p);
            }
            let (c, s) = (median(tc), median(ts));
            println!(
                "| N={n} | {engine} | {:.1} ms | {:.0} MB | {:.1} ms | {:.0} MB | {:.1}× | {bytes} |",
                c.as_secs_f64() * 1e3,
                pc as f64 / 1e6,
                s.as_secs_f64() * 1e3,
                ps as f64 / 1e6,
                c.as_secs_f64() / s.as_secs_f64()
            );
        }
    }
}
