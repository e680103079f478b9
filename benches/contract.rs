//! Storage under a schedule, per kernel. Two timings: the
//! analysis `expand --transform contract` prints (parse, σ, the schedule's
//! dependences, the storage mapping, the live-value bound, at the kernel's
//! default sizes), target at most 10 ms each; and the whole `--emit code`
//! (the analysis at every sample size, the fits, the program, and its
//! `equiv` runs with `doall` shuffled at the samples and validation sizes).
//!
//! Also the pairing (MSE where control is dynamic, contraction elsewhere),
//! whole `--emit code`; and programs with only some arrays live-out
//! (`--live-out`: modular mappings, temporaries sharing storage), both
//! timings.
//!
//! `cargo bench --bench contract` runs criterion timings, then prints the
//! table (mean wall time of 10 runs); `ARRAYFLOW_BENCH_QUICK=1` prints the
//! table only; `ARRAYFLOW_BENCH_FILTER=smoothing` times only the rows whose
//! file name contains it.

use arrayflow::codegen::Options;
use arrayflow::dataflow::Config;
use arrayflow::diagnostics::FileId;
use arrayflow::expansion;
use arrayflow::storage::{self, emit, Schedule};
use std::time::Instant;

/// (file, parallel loops).
const KERNELS: &[(&str, &[&str])] = &[
    ("fixtures/papers/storage-figure1.loop", &["i"]),
    ("fixtures/c/kernels/jacobi1d.loop", &["i"]),
    ("fixtures/c/kernels/jacobi2d.loop", &["i", "j"]),
    ("fixtures/c/kernels/matmul.loop", &["i", "j"]),
    ("fixtures/c/kernels/lu.loop", &["i"]),
    ("fixtures/papers/maydan-1.7-unused-index.loop", &["j"]),
    ("fixtures/c/kernels/heat1d.loop", &["i"]),
    ("fixtures/c/kernels/heat2d.loop", &["i", "j"]),
];

/// (file, affine schedule file): `--emit code` rescheduled to the
/// schedule's order (no `doall` marking stands for it).
const RESCHEDULED: &[(&str, &str)] = &[
    (
        "fixtures/papers/storage-figure1.loop",
        "fixtures/reschedule/figure1-paper.schedule",
    ),
    (
        "fixtures/c/kernels/matmul.loop",
        "fixtures/reschedule/matmul-k-outer.schedule",
    ),
    (
        "fixtures/c/kernels/seidel2d.loop",
        "fixtures/reschedule/seidel2d-wavefront.schedule",
    ),
];

/// (file, parallel loops): `--emit code` paired (MSE for the arrays
/// under dynamic control, then contraction).
const PAIRED: &[(&str, &[&str])] = &[
    ("fixtures/storage/pair-histogram.loop", &["i"]),
    ("fixtures/papers/mse-example3.loop", &["i"]),
];

/// (file, parallel loops, live-out arrays): the other arrays are
/// temporaries.
const LIVE_OUT: &[(&str, &[&str], &[&str])] = &[
    ("fixtures/storage/modular-fibonacci.loop", &[], &["R"]),
    ("fixtures/storage/modular-heat1d.loop", &[], &["Out"]),
    ("fixtures/storage/modular-heat1d.loop", &["i"], &["Out"]),
    (
        "fixtures/storage/modular-heat1d-double-buffer.loop",
        &[],
        &["Out"],
    ),
    (
        "fixtures/storage/modular-heat1d-buffers.loop",
        &[],
        &["Out"],
    ),
    ("fixtures/storage/modular-blur.loop", &[], &["out"]),
    ("fixtures/storage/modular-blur.loop", &["x"], &["out"]),
    ("fixtures/storage/jacobi2d-smoothing.loop", &[], &["A4"]),
    (
        "fixtures/storage/temporaries-phases.loop",
        &["i"],
        &["A", "B", "C"],
    ),
    ("fixtures/c/kernels/jacobi1d.loop", &[], &["A"]),
    ("fixtures/c/kernels/heat1d.loop", &[], &["A"]),
    ("fixtures/c/kernels/jacobi2d.loop", &[], &["A"]),
    ("fixtures/c/kernels/heat2d.loop", &[], &["A"]),
];

/// The arrays of `p` not named in `live_out`.
fn temporaries(p: &arrayflow::model::Program, live_out: &[&str]) -> Vec<arrayflow::model::ArrayId> {
    (0..p.arrays.len() as u32)
        .map(arrayflow::model::ArrayId)
        .filter(|a| !live_out.contains(&p.array_decl(*a).name.as_str()))
        .collect()
}

/// Both timings of a program with only `live_out` live-out.
fn with_live_out(text: &str, par: &[&str], live_out: &[&str], emit: bool) -> usize {
    let (p, _) = arrayflow::lower::compile(text, FileId(0));
    let p = p.expect("program");
    let s = Schedule::new(&p, Some(&names(par))).expect("schedule");
    let t = temporaries(&p, live_out);
    if emit {
        let e = storage::pair::checked_with(&p, &s, &t, &Options::default()).expect("emitted");
        return e.text.len();
    }
    let exp = expansion::expand(&p, &Config::default()).expect("expansion");
    storage::contract_with(&p, &exp, &s, Some(&t))
        .expect("contraction")
        .mapping
        .total() as usize
}

fn source(file: &str) -> String {
    std::fs::read_to_string(format!("{}/{file}", env!("CARGO_MANIFEST_DIR"))).expect("fixture")
}

fn names(par: &[&str]) -> Vec<String> {
    par.iter().map(|s| s.to_string()).collect()
}

/// What `expand --transform contract` computes, from the text.
fn analysis(text: &str, par: &[&str]) -> u64 {
    let (p, _) = arrayflow::lower::compile(text, FileId(0));
    let p = p.expect("program");
    let exp = expansion::expand(&p, &Config::default()).expect("expansion");
    let s = Schedule::new(&p, Some(&names(par))).expect("schedule");
    storage::contract(&p, &exp, &s)
        .expect("contraction")
        .mapping
        .total()
}

/// What `expand --transform contract --emit code` computes, from the text.
fn emitted(text: &str, par: &[&str]) -> usize {
    let (p, _) = arrayflow::lower::compile(text, FileId(0));
    let p = p.expect("program");
    let s = Schedule::new(&p, Some(&names(par))).expect("schedule");
    emit::checked(&p, &s, &Options::default())
        .expect("emitted")
        .text
        .len()
}

/// `expand --transform contract --schedule FILE --emit code`, from the
/// texts.
fn rescheduled(text: &str, schedule: &str) -> usize {
    let (p, _) = arrayflow::lower::compile(text, FileId(0));
    let p = p.expect("program");
    let a = storage::affine::parse(&p, schedule).expect("schedule");
    let e = emit::checked(&p, &Schedule::affine(&p, a), &Options::default()).expect("emitted");
    assert!(e.iterations.is_some(), "rescheduled");
    e.text.len()
}

/// `expand --transform contract --emit code` with the pairing.
fn paired(text: &str, par: &[&str]) -> usize {
    let (p, _) = arrayflow::lower::compile(text, FileId(0));
    let p = p.expect("program");
    let s = Schedule::new(&p, Some(&names(par))).expect("schedule");
    let e = storage::pair::checked_with(&p, &s, &[], &Options::default()).expect("emitted");
    assert!(e.mse.is_some(), "paired");
    e.text.len()
}

fn mean_ms(f: impl Fn()) -> f64 {
    f();
    let t = Instant::now();
    for _ in 0..10 {
        f();
    }
    t.elapsed().as_secs_f64() * 100.0
}

/// Whether a row of `file` is timed (`ARRAYFLOW_BENCH_FILTER`).
fn wanted(file: &str) -> bool {
    std::env::var("ARRAYFLOW_BENCH_FILTER").map_or(true, |f| file.contains(&f))
}

fn main() {
    let texts: Vec<(String, &str, &[&str])> = KERNELS
        .iter()
        .filter(|(f, _)| wanted(f))
        .map(|&(f, par)| (source(f), f.rsplit('/').next().unwrap_or(f), par))
        .collect();
    if std::env::var_os("ARRAYFLOW_BENCH_QUICK").is_none() {
        let mut c = criterion::Criterion::default().configure_from_args();
        let mut g = c.benchmark_group("contract");
        for (text, name, par) in &texts {
            g.bench_function(*name, |b| b.iter(|| analysis(text, par)));
        }
        g.finish();
        let mut g = c.benchmark_group("contract --emit code");
        for (text, name, par) in &texts {
            g.bench_function(*name, |b| b.iter(|| emitted(text, par)));
        }
        g.finish();
        let mut g = c.benchmark_group("contract --schedule --emit code (rescheduled)");
        for &(f, sched) in RESCHEDULED.iter().filter(|(f, s)| wanted(f) || wanted(s)) {
            let (text, schedule) = (source(f), source(sched));
            let name = sched.rsplit('/').next().unwrap_or(sched);
            g.bench_function(name, |b| b.iter(|| rescheduled(&text, &schedule)));
        }
        g.finish();
        let mut g = c.benchmark_group("contract --live-out");
        for &(f, par, live_out) in LIVE_OUT.iter().filter(|x| wanted(x.0)) {
            let text = source(f);
            let name = format!("{} {}", f.rsplit('/').next().unwrap_or(f), par.join(","));
            g.bench_function(&name, |b| {
                b.iter(|| with_live_out(&text, par, live_out, true))
            });
        }
        g.finish();
        let mut g = c.benchmark_group("contract --emit code (paired with MSE)");
        for &(f, par) in PAIRED.iter().filter(|x| wanted(x.0)) {
            let text = source(f);
            let name = f.rsplit('/').next().unwrap_or(f);
            g.bench_function(name, |b| b.iter(|| paired(&text, par)));
        }
        g.finish();
    }
    println!("| kernel | parallel | analysis (ms) | --emit code (ms) |");
    println!("|---|---|---|---|");
    for (text, name, par) in &texts {
        let a = mean_ms(|| {
            analysis(text, par);
        });
        let e = mean_ms(|| {
            emitted(text, par);
        });
        println!("| {name} | {} | {a:.2} | {e:.1} |", par.join(", "));
    }
    println!();
    println!("| schedule (rescheduled) | --emit code (ms) |");
    println!("|---|---|");
    for &(f, sched) in RESCHEDULED.iter().filter(|(f, s)| wanted(f) || wanted(s)) {
        let (text, schedule) = (source(f), source(sched));
        let e = mean_ms(|| {
            rescheduled(&text, &schedule);
        });
        println!("| {} | {e:.1} |", sched.rsplit('/').next().unwrap_or(sched));
    }
    println!();
    println!("| live-out only | parallel | analysis (ms) | --emit code (ms) |");
    println!("|---|---|---|---|");
    for &(f, par, live_out) in LIVE_OUT.iter().filter(|x| wanted(x.0)) {
        let text = source(f);
        let a = mean_ms(|| {
            with_live_out(&text, par, live_out, false);
        });
        let e = mean_ms(|| {
            with_live_out(&text, par, live_out, true);
        });
        let name = f.rsplit('/').next().unwrap_or(f);
        println!(
            "| {name} `--live-out {}` | {} | {a:.2} | {e:.1} |",
            live_out.join(","),
            par.join(", ")
        );
    }
    println!();
    println!("| paired with MSE | parallel | --emit code (ms) |");
    println!("|---|---|---|");
    for &(f, par) in PAIRED.iter().filter(|x| wanted(x.0)) {
        let text = source(f);
        let e = mean_ms(|| {
            paired(&text, par);
        });
        let name = f.rsplit('/').next().unwrap_or(f);
        println!("| {name} | {} | {e:.1} |", par.join(", "));
    }
}
