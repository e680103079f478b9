//! Bounded σ on several threads (`dataflow::parallel`) is the sequential
//! engine's, exactly: the same sources and initial flags for every read,
//! the same stats, the same initial-value bits of the kept facts, and the
//! same error (message included) when the walk-step budget runs out.
//!
//! The sequential engine at one thread is the oracle (it is checked against
//! the naive transcription of the definition in tests/dataflow_agree.rs).
//! Programs: every fixture (`.loop` and `.c`, the error fixtures left out)
//! and generated programs (`arrayflow::gen`, 40 by default, more with
//! `ARRAYFLOW_CASES`), each at 2 and 3 threads, with batches cut small
//! (1, 3 and 8 readers; fuel 0, 2 and 64 steps) so that small programs run
//! many batches and many walks alone, and with the walk-step budget set
//! between the instances and the steps needed, so that errors are compared.
//! The binary's `flow` output at `--threads 1, 2, 3` is compared byte for
//! byte on every fixture and on matmul at N=24 (5 batches of the real size);
//! `ARRAYFLOW_THREADS` sets the default count and is refused when it is not
//! a positive integer. A batch that panics on a worker makes the analysis
//! panic with its message (no hang waiting for its outcome).

#[allow(dead_code)]
mod kernels;
mod support;

use arrayflow::dataflow::dispatch::analyze_cut;
use arrayflow::dataflow::{with_threads, Config, DataflowError, Flow};
use arrayflow::model::Program;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_arrayflow");

/// Batch sizes and fuels the engines are compared at.
const CUTS: [(usize, u32); 4] = [(1, 0), (3, 2), (8, 64), (8192, 64)];

/// Programs past this many access instances are compared at the default
/// cut only (batches of one read would take long in the test profile).
const SMALL: u64 = 20_000;

fn fixtures() -> Vec<PathBuf> {
    support::fixtures::paths()
}

fn same(a: &Flow, b: &Flow) -> Result<(), String> {
    if a.stats() != b.stats() {
        return Err(format!("stats {:?} vs {:?}", a.stats(), b.stats()));
    }
    support::same_reads(a, b)
}

type Run = Result<(Flow, Vec<u64>), DataflowError>;

fn run(threads: usize, program: &Program, config: &Config, cut: (usize, u32), keep: bool) -> Run {
    with_threads(threads, || analyze_cut(program, config, cut, keep)).expect("a pool")
}

fn agree(one: &Run, other: &Run) -> Result<(), String> {
    match (one, other) {
        (Ok((a, abits)), Ok((b, bbits))) => {
            same(a, b)?;
            if abits != bbits {
                return Err("initial-value bits differ".to_string());
            }
            Ok(())
        }
        (Err(a), Err(b)) if a.to_string() == b.to_string() => Ok(()),
        (a, b) => Err(format!(
            "{} vs {}",
            a.as_ref()
                .map_or_else(|e| e.to_string(), |_| "σ".to_string()),
            b.as_ref()
                .map_or_else(|e| e.to_string(), |_| "σ".to_string())
        )),
    }
}

/// Compares 1 thread with 2 and 3 on `program`; returns how many
/// comparisons were made.
fn compare(name: &str, program: &Program) -> usize {
    let base = Config {
        max_instances: 2_000_000,
        ..Config::default()
    };
    let mut n = 0;
    for (k, &cut) in CUTS.iter().enumerate() {
        let keep = k % 2 == 1;
        let one = run(1, program, &base, cut, keep);
        let Ok((flow, _)) = &one else {
            // Not analysable at these sizes: the same error everywhere.
            let two = run(2, program, &base, cut, keep);
            agree(&one, &two).unwrap_or_else(|e| panic!("{name} {cut:?}: {e}"));
            return n + 1;
        };
        let st = flow.stats();
        if st.access_instances > SMALL && cut.0 < 8192 {
            continue;
        }
        // Budgets between the instances (lowering passes) and the steps
        // the walks need (the walks run out): the same error, or σ.
        let mut budgets = vec![base.max_instances];
        if st.walk_steps > st.access_instances {
            let (i, v) = (st.access_instances, st.walk_steps);
            budgets.extend([i, (i + v) / 2, v - 1]);
        }
        for max in budgets {
            let config = Config {
                max_instances: max,
                ..base.clone()
            };
            let one = run(1, program, &config, cut, keep);
            for threads in [2, 3] {
                let other = run(threads, program, &config, cut, keep);
                agree(&one, &other).unwrap_or_else(|e| {
                    panic!("{name}, cut {cut:?}, budget {max}, {threads} threads: {e}")
                });
                n += 1;
            }
        }
    }
    n
}

#[test]
fn fixtures_agree_at_every_thread_count() {
    let mut programs = 0;
    let mut comparisons = 0;
    for path in fixtures() {
        if let Some(program) = support::compile(&path) {
            programs += 1;
            comparisons += compare(&path.display().to_string(), &program);
        }
    }
    assert!(programs > 50, "{programs} fixtures compiled");
    assert!(comparisons > 500, "{comparisons} comparisons");
}

#[test]
fn generated_programs_agree_at_every_thread_count() {
    let cases = support::cases(40);
    for seed in 0..cases {
        compare(
            &format!("generated program {seed}"),
            &support::generated(seed),
        );
    }
}

fn flow(path: &Path, threads: u32, extra: &[&str]) -> (Option<i32>, Vec<u8>, Vec<u8>) {
    let out = Command::new(BIN)
        .arg("flow")
        .arg(path)
        .args(extra)
        .arg(format!("--threads={threads}"))
        .output()
        .expect("the binary runs");
    (out.status.code(), out.stdout, out.stderr)
}

#[test]
fn flow_output_is_the_same_at_every_thread_count() {
    let mut files = fixtures();
    files.retain(|p| support::compile(p).is_some());
    for path in &files {
        let one = flow(path, 1, &[]);
        for threads in [2, 3] {
            assert!(
                flow(path, threads, &[]) == one,
                "{}: `flow --threads {threads}` differs from `--threads 1`",
                path.display()
            );
        }
    }
    // Several batches of the real size (8192 readers): 41,472 readers.
    let matmul = Path::new("fixtures/c/kernels/matmul.loop");
    let args = ["--param", "N=24", "--engine", "rules", "--format", "json"];
    let one = flow(matmul, 1, &args);
    assert_eq!(one.0, Some(0), "{}", String::from_utf8_lossy(&one.2));
    assert!(one.1.len() > 100);
    for threads in [2, 3] {
        assert!(
            flow(matmul, threads, &args) == one,
            "matmul at {threads} threads"
        );
    }
}

#[test]
fn threads_must_be_positive() {
    let (code, _, err) = flow(Path::new("fixtures/c/kernels/matmul.loop"), 0, &[]);
    assert_eq!(code, Some(2));
    assert!(String::from_utf8_lossy(&err).contains("--threads"));
}

#[test]
fn arrayflow_threads_sets_the_default_and_is_checked() {
    let matmul = "fixtures/c/kernels/matmul.loop";
    let run = |value: &str| {
        Command::new(BIN)
            .args(["flow", matmul, "--param", "N=24", "--engine", "rules"])
            .env("ARRAYFLOW_THREADS", value)
            .output()
            .expect("the binary runs")
    };
    let one = flow(
        Path::new(matmul),
        1,
        &["--param", "N=24", "--engine", "rules"],
    );
    let two = run("2");
    assert_eq!((two.status.code(), two.stdout), (one.0, one.1));
    for bad in ["0", "two", "-1"] {
        let out = run(bad);
        assert_eq!(out.status.code(), Some(2), "ARRAYFLOW_THREADS={bad}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("ARRAYFLOW_THREADS"));
    }
}

/// Six small kernels (six top-level loops); the third and the fifth run
/// out of walk steps (may-writes walked back over every earlier instance:
/// R2 over i instances of S2, about 900 steps in all at N=40 with the
/// reads of B; R4 over 2i of S4 and S5, about twice as many).
const KERNELS: &str = "param N = 40;
real A[1..N];
real B[1..N];
real x;
for i = 1 to N do
  S0: A[i] = ...;
end
for i = 2 to N do
  S1: B[i] = A[i - 1] + A[i];
end
for i = 1 to N do
  if ... then
    S2: x = B[i];
  end
  R2: use(x);
end
for i = 1 to N do
  S3: A[i] = B[N + 1 - i];
end
for i = 1 to N do
  if ... then
    S4: x = A[i];
  end
  if ... then
    S5: x = B[i];
  end
  R4: use(x);
end
for i = 1 to N do
  R5: use(A[i] + B[i] + x);
end
";

/// `flow` in this process (`cli::flow::run_to`) on `threads` threads:
/// the exit code, output and errors, and the kernels analysed side by side
/// (`db::parallel::kernel_flows`).
fn flow_here(file: &Path, threads: usize, extra: &[&str]) -> ((u8, String, String), u64) {
    use arrayflow::cli::flow::{run_to, Args};
    use clap::{Args as _, FromArgMatches};
    let argv = [&["flow", file.to_str().expect("UTF-8")][..], extra].concat();
    let m = Args::augment_args(clap::Command::new("flow"))
        .try_get_matches_from(argv)
        .expect("the options parse");
    let args = Args::from_arg_matches(&m).expect("flow's options");
    let before = arrayflow::db::parallel::prefetched();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = with_threads(threads, || run_to(&args, &mut out, &mut err)).expect("a pool");
    let text = |b: Vec<u8>| String::from_utf8(b).expect("UTF-8");
    let ran = arrayflow::db::parallel::prefetched() - before;
    ((arrayflow::cli::code_of(code), text(out), text(err)), ran)
}

/// Small kernels run side by side on 2 and 3 threads (each of the six is
/// analysed there, none at 1 thread), and the output is the same bytes;
/// with a walk-step budget the third and fifth kernels exceed, the error
/// is the third's at every count, whichever finished first.
#[test]
fn small_kernels_run_side_by_side_with_the_same_output() {
    let dir = std::env::temp_dir().join(format!("arrayflow-kernels-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let file = dir.join("kernels.loop");
    std::fs::write(&file, KERNELS).expect("writes");
    for extra in [
        &["--engine", "rules"][..],
        &[
            "--engine",
            "rules",
            "--param",
            "N=40",
            "--max-instances",
            "400",
        ],
    ] {
        let (one, ran) = flow_here(&file, 1, extra);
        assert_eq!(ran, 0, "one thread runs the kernels in order");
        for threads in [2, 3] {
            let (got, ran) = flow_here(&file, threads, extra);
            assert_eq!(got, one, "{threads} threads, {extra:?}");
            assert_eq!(ran, 6, "{threads} threads: every kernel is small");
        }
        if extra.len() > 2 {
            assert_eq!(one.0, 1, "{}", one.2);
            // The third kernel's count, not the fifth's: R2(i) visits the
            // i S2 before it and x's entry write (Σ (i + 1) = 860), S2 reads
            // B in one step (40), x's exit read visits all 40 S2 and the
            // entry (41), less the 42 frame instances (40 entries of B, the
            // entry and the exit of x), which the budget does not count.
            assert!(
                one.2.contains("error[E0302]") && one.2.contains("count to 899 "),
                "{}",
                one.2
            );
        } else {
            assert_eq!(one.0, 0, "{}", one.2);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The core rules, but the third batch run panics.
struct PanicsOnce;

static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl arrayflow::dataflow::engine::Engine for PanicsOnce {
    fn name(&self) -> &'static str {
        "panics once"
    }

    fn run(
        &self,
        input: &arrayflow::dataflow::engine::Input<'_>,
    ) -> arrayflow::dataflow::engine::Outcome {
        if RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == 2 {
            panic!("batch three fails");
        }
        arrayflow::dataflow::engine::Engine::run(&arrayflow::dataflow::engine::CoreEngine, input)
    }
}

#[test]
fn a_worker_panic_reaches_the_caller() {
    // matmul at N=24: 5 batches of the real size, so the parallel driver runs.
    let config = Config {
        params: vec![("N".to_string(), 24)],
        ..Config::default()
    };
    let kinds = arrayflow::kinds::Kinds::core().with_engine(&PanicsOnce);
    let program = kernels::matmul();
    let got = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        with_threads(2, || {
            arrayflow::dataflow::analyze_with(&program, &config, &kinds)
        })
    }));
    let payload = got.expect_err("the panic comes through");
    let message = (payload.downcast_ref::<&str>().copied())
        .or(payload.downcast_ref::<String>().map(String::as_str));
    assert_eq!(message, Some("batch three fails"));
    assert!(RUNS.load(std::sync::atomic::Ordering::Relaxed) >= 3);
}
