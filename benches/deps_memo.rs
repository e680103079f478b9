//! `deps` on a 400-statement program (tests/support/many.rs) with
//! each memo mode: `off`, `improved` (the thesis' key, tables always on) and
//! `auto` (the default: the improved key in tables that switch themselves
//! off when they do not pay). Prints each mode's hit rates and the peak heap
//! of one run first, and writes the program to `target/deps-memo-400.loop`
//! for `/usr/bin/time -v arrayflow deps` (docs/benchmarks.md, "The `deps`
//! memo"). `ARRAYFLOW_BENCH_QUICK=1`: the figures only.

#[path = "../tests/support/many.rs"]
mod many;
mod support;

use arrayflow::dependence::{analyze, Config, MemoMode, Tester};
use std::hint::black_box;
use std::time::Duration;

const MODES: [(&str, MemoMode); 3] = [
    ("off", MemoMode::Off),
    ("improved", MemoMode::Improved),
    ("auto", MemoMode::Auto),
];

fn tester(memo: MemoMode) -> Tester {
    Tester::new(Config {
        memo,
        ..Config::default()
    })
}

fn main() {
    let text = many::program(400, 1);
    let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".to_string());
    let path = format!("{target}/deps-memo-400.loop");
    if std::fs::write(&path, &text).is_ok() {
        eprintln!("the program: {path}");
    }
    let (program, diags) = arrayflow::lower::compile(&text, arrayflow::diagnostics::FileId(0));
    let program = program.unwrap_or_else(|| panic!("{diags:?}"));
    for (name, memo) in MODES {
        let mut t = tester(memo);
        let (pairs, cpu, peak) = support::measure(|| analyze(&program, &mut t).len());
        eprintln!(
            "{name}: {pairs} pairs, {:.2} s CPU, peak heap {:.1} MB\n{}",
            cpu.as_secs_f64(),
            peak as f64 / 1e6,
            t.stats().render()
        );
    }
    if std::env::var_os("ARRAYFLOW_BENCH_QUICK").is_some() {
        return;
    }
    let mut c = support::criterion().measurement_time(Duration::from_secs(40));
    let mut g = c.benchmark_group("deps_memo_400");
    for (name, memo) in MODES {
        g.bench_function(name, |b| {
            b.iter(|| black_box(analyze(&program, &mut tester(memo)).len()))
        });
    }
    g.finish();
}
