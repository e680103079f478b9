//! A file of many small kernels (`db::parallel::kernel_flows`):
//! 16 top-level loop nests of 10,800 access instances each, too few for
//! the batches of one kernel to run in parallel, so they gain only from
//! running side by side. Timed at 1 and 2 threads: σ of every kernel in a
//! fresh database (`kernel_flows`, then each `kernel_flow` in order, as
//! `flow` asks), and the whole `flow FILE` in-process (`cli::flow::run_to`,
//! its output to memory: σ across kernels, grouping and printing, which
//! run in order, come on top). Each is the median of 5, then 9
//! alternating pairs (median ratio, and the fastest of each). Before
//! timing, the two outputs are checked to be the same bytes.
//!
//! `cargo bench --bench kernels` runs criterion, then prints the figures;
//! `ARRAYFLOW_BENCH_QUICK=1` prints the figures only.

#[path = "common/mod.rs"]
mod common;

use arrayflow::budget;
use arrayflow::cli::flow::{run_to, Args};
use arrayflow::dataflow::with_threads;
use clap::{Args as _, FromArgMatches};
use common::{alternating, load, wall};

#[global_allocator]
static ALLOC: budget::Counting<mimalloc::MiMalloc> = budget::Counting::new(mimalloc::MiMalloc);

/// 16 kernels: each a 60 × 60 nest reading two arrays and updating one.
fn program() -> String {
    let mut s = String::from("param N = 60;\nreal A[1..N, 1..N];\nreal B[1..N, 1..N];\n");
    for k in 0..16 {
        let (w, r) = if k % 2 == 0 { ("A", "B") } else { ("B", "A") };
        s += &format!(
            "for i = 1 to N do\n  for j = 1 to N do\n    S{k}: {w}[i, j] = {w}[i, j] + {r}[j, i];\n  end\nend\n"
        );
    }
    s
}

fn flow(args: &Args, threads: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let code =
        with_threads(threads, || run_to(args, &mut out, &mut std::io::sink())).expect("pool");
    assert_eq!(arrayflow::cli::code_of(code), 0, "flow succeeds");
    out
}

/// σ of every kernel of `text` in a fresh database, on `threads` threads.
fn sigma(text: &str, threads: usize) -> usize {
    with_threads(threads, || {
        let db = arrayflow::db::Database::with_kinds(common::config(60), arrayflow::cli::kinds());
        let file = db.add_file("kernels.loop", text);
        arrayflow::db::parallel::kernel_flows(&db, file);
        let kernels = arrayflow::db::kernels(&db, file);
        let ok = kernels
            .iter()
            .filter(|&&k| arrayflow::db::kernel_flow(&db, k).result.is_ok())
            .count();
        assert_eq!(ok, 16, "every kernel analyses");
        ok
    })
    .expect("pool")
}

/// Median of 5 at 1 and 2 threads, then 9 alternating pairs, printed.
fn figures(what: &str, mut run: impl FnMut(usize)) {
    let (one, _) = wall(|| run(1));
    let (two, _) = wall(|| run(2));
    let pairs = alternating(&mut run);
    println!(
        "| {what} | {:.1} / {:.1} ms, {:.2}x | {} | {} | {} |",
        one.as_secs_f64() * 1e3,
        two.as_secs_f64() * 1e3,
        one.as_secs_f64() / two.as_secs_f64(),
        pairs.spread(),
        pairs.fastest(),
        load()
    );
}

fn main() {
    let text = program();
    let path = std::env::temp_dir().join(format!("arrayflow-kernels-{}.loop", std::process::id()));
    std::fs::write(&path, &text).expect("writes");
    let argv = ["flow", path.to_str().expect("UTF-8"), "--engine", "rules"];
    let m = Args::augment_args(clap::Command::new("flow"))
        .try_get_matches_from(argv)
        .expect("options");
    let args = Args::from_arg_matches(&m).expect("flow's options");
    assert!(flow(&args, 1) == flow(&args, 2), "the same output");
    if std::env::var_os("ARRAYFLOW_BENCH_QUICK").is_none() {
        let mut cr = common::criterion();
        let mut g = cr.benchmark_group("kernels");
        for threads in [1, 2] {
            g.bench_function(format!("σ of 16 small kernels, {threads} threads"), |b| {
                b.iter(|| sigma(&text, threads))
            });
        }
        g.finish();
    }
    println!(
        "
16 small kernels (172,800 access instances), 1 / 2 threads"
    );
    println!(
        "| what | median of 5 | alternating pairs: median (range) | fastest of 9 | load average |"
    );
    println!("|---|---|---|---|---|");
    figures("σ of every kernel", |t| {
        sigma(&text, t);
    });
    figures("`flow` in-process", |t| drop(flow(&args, t)));
    let _ = std::fs::remove_file(&path);
}
