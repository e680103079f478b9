//! Every analysis bounded by its budget.
//!
//! - `facts::count` against the lowering: on random programs from
//!   `arrayflow::gen` (300 cases, `ARRAYFLOW_CASES` raises it), the count
//!   made without lowering equals the sizes of the facts the lowering made,
//!   and under a budget the error is the one the facts say (the statement
//!   whose operation holds the first instance past the budget).
//! - Over-budget programs, run through the binary under
//!   `ulimit -v 2000000` (2 GB of address space): each ends with its
//!   diagnostic and exit 1, never a "memory allocation" abort or a panic.

mod support;

use arrayflow::dataflow::{Config, DataflowError};
use arrayflow::facts::{self, count};
use arrayflow::gen::{generate, GenOptions, Size};
use proptest::prelude::*;
use std::process::{Command, Output};

fn cases() -> u32 {
    support::cases(300).try_into().unwrap_or(u32::MAX)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]
    #[test]
    fn count_equals_the_lowering(seed in any::<u64>(), max_trips in 0u32..4, cut in 0u64..100) {
        let size = if seed % 4 == 0 { Size::Medium } else { Size::Small };
        let program = generate(seed, &GenOptions::all(size));
        let config = Config { max_trips, ..Config::default() };
        let lowered = match facts::lower(&program, &config) {
            Ok(f) => f,
            // A static condition that cannot be evaluated: nothing to compare.
            Err(DataflowError::Eval { .. }) => return Err(TestCaseError::reject("eval")),
            Err(e) => return Err(TestCaseError::fail(e.to_string())),
        };
        let c = count::of(&program, &config)
            .map_err(|e| TestCaseError::fail(e.to_string()))?
            .ok_or_else(|| TestCaseError::fail("a small program was not counted"))?;
        prop_assert_eq!(c.instances, lowered.n_accs() as u64);
        prop_assert_eq!(c.ops, lowered.n_ops() as u64);
        prop_assert_eq!(c.slots, lowered.slots.len() as u64);
        prop_assert_eq!(c.iter_entries, lowered.iters.len() as u64);

        // A budget below the count: the error names the operation that holds
        // instance number `max` (0-based), with the count at its end.
        let n = lowered.n_accs() as u64;
        prop_assume!(n > 0);
        let max = n * cut / 100;
        let tight = Config { max_instances: max, ..config.clone() };
        let op = lowered.op(max as u32);
        let end = (max as usize..lowered.n_accs())
            .find(|&x| lowered.op(x as u32) != op)
            .unwrap_or(lowered.n_accs()) as u64;
        let site = &lowered.site_names[lowered.site_index(lowered.site(op))];
        match count::of(&program, &tight) {
            Err(DataflowError::Budget { unit: "access instances", site: s, count, max: m, .. }) => {
                prop_assert_eq!(&s, site);
                prop_assert_eq!(count, end);
                prop_assert_eq!(m, max);
            }
            // Loop iterations can go over first: the lowering agrees.
            Err(DataflowError::Budget { unit: "loop iterations", .. }) => {
                prop_assert!(c.iterations > max);
            }
            other => prop_assert!(false, "expected a budget error, got {:?}", other),
        }
    }
}

/// The binary on `args` under a 2 GB address-space limit.
fn capped(args: &[&str]) -> Output {
    let bin = env!("CARGO_BIN_EXE_arrayflow");
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    let script = format!("ulimit -v 2000000 && exec '{bin}' {}", quoted.join(" "));
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("sh runs")
}

/// Exit 1 with `code` on stderr, and no abort or panic.
fn fails_with(args: &[&str], code: &str) -> String {
    let out = capped(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !err.contains("memory allocation"),
        "{args:?}: aborted: {err}"
    );
    assert!(!err.contains("panicked"), "{args:?}: panicked: {err}");
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert!(err.contains(&format!("error[{code}]")), "{args:?}: {err}");
    err
}

const MATMUL: &str = "fixtures/c/kernels/matmul.loop";

#[test]
fn matmul_over_the_instance_budget_is_refused_at_once() {
    for n in ["N=512", "N=2000"] {
        let err = fails_with(&["flow", MATMUL, "--param", n], "E0302");
        // T makes 3 instances per operation: N² (S) + 3 N³ in all, the first
        // crossing of 50,000,000 is inside T's loops.
        assert!(err.contains("`T`"), "{err}");
    }
    fails_with(&["expand", MATMUL, "--param", "N=2000"], "E0302");
    fails_with(
        &[
            "plot",
            MATMUL,
            "--param",
            "N=2000",
            "--stmt",
            "T",
            "-o",
            "/dev/null",
        ],
        "E0302",
    );
}

#[test]
fn matmul_c_over_the_instance_budget_is_refused_at_once() {
    fails_with(
        &["flow", "fixtures/c/kernels/matmul.c", "--param", "N=512"],
        "E0302",
    );
}

#[test]
fn matmul_past_the_memory_budget_is_refused_before_allocating() {
    // N² (S) + 3N³ (T: C, A, B) = 402,915,328 access instances at N=512
    // (the database's entry writes and exit reads are a `facts::Frame`,
    // made only for the cells touched and not counted), admitted by the
    // instance budget, take more than 6 GB of facts: refused by the
    // estimate.
    // Under the default budget: half of the 2 GB address space.
    // `flow` with the rules engine: its quasts (the default past 10^5
    // instances) hold no facts (tests/flow_engines.rs).
    let big = |command: &str, more: &[&str]| {
        let mut args = vec![
            command,
            MATMUL,
            "--param",
            "N=512",
            "--max-instances",
            "1000000000",
        ];
        args.extend_from_slice(more);
        fails_with(&args, "E0304")
    };
    let err = big("flow", &["--engine", "rules"]);
    assert!(err.contains("402915328 access instances"), "{err}");
    assert!(err.contains("would need"), "{err}");
    big("expand", &[]);
}

#[test]
fn an_explicit_memory_budget_is_kept() {
    // N=64: 786,432 instances, over 13 MB of facts, over 1 MiB.
    let err = fails_with(
        &[
            "flow",
            MATMUL,
            "--param",
            "N=64",
            "--max-memory",
            "1M",
            "--engine",
            "rules",
        ],
        "E0304",
    );
    assert!(err.contains("1.0 MiB"), "{err}");
    fails_with(
        &["expand", MATMUL, "--param", "N=64", "--max-memory", "1M"],
        "E0304",
    );
    fails_with(
        &["verify", MATMUL, "--param", "N=64", "--max-memory", "1M"],
        "E0304",
    );
}

/// A file of `n` statements `S<k>: A[1] = A[2];` in the test's own folder.
fn statements(n: usize) -> String {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("stmts{n}.loop"));
    let mut text = String::from("real A[0..3];\n");
    for k in 0..n {
        text.push_str(&format!("S{k}: A[1] = A[2];\n"));
    }
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

/// A run's tables (per statement and array) count against the budget
/// before its first step: on 20,000 statements they are tens of MB, which
/// the cells alone (4) do not show.
#[test]
fn a_runs_tables_count_against_the_budget() {
    let p = statements(20_000);
    let err = fails_with(&["run", &p, "--max-memory", "8M"], "E0400");
    assert!(
        err.contains("the run's tables for 20000 statements and conditions"),
        "{err}"
    );
}

/// `verify` runs the original and the expanded program on two threads:
/// each run's tables and the trace its polls reserve are counted before
/// they are allocated, so the peak stays under the budget (these budgets
/// are where the runs meet it, for 20,000 statements).
#[test]
fn verify_keeps_its_runs_under_the_budget() {
    let p = statements(20_000);
    for (budget, bytes) in [("170M", 170u64 << 20), ("180M", 180 << 20)] {
        let out = Command::new(env!("CARGO_BIN_EXE_arrayflow"))
            .args(["verify", "--transform", "mse", "--max-memory", budget, &p])
            .env("ARRAYFLOW_PEAK", "1")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let peak: u64 = err
            .lines()
            .find_map(|l| l.strip_prefix("peak heap: "))
            .and_then(|l| l.strip_suffix(" bytes"))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no peak: {err}"));
        assert!(peak <= bytes, "{budget}: peak {peak}: {err}");
    }
}

/// A run's poll reserves the trace of its next steps by the deepest nest
/// of loops, not by the number of loops: 5,000 one-statement loops need
/// under 20 MB, and were refused at 16 MiB held under a 200 MiB budget
/// (an estimate of 4096 steps × 5,000 entries each).
#[test]
fn many_loops_are_not_mistaken_for_a_deep_nest() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("loops5000.loop");
    let mut text = String::from("param N = 4;\nreal A[0..N+1];\n");
    for k in 0..5000 {
        text.push_str(&format!(
            "for i{k} = 1 to N do S{k}: A[i{k}] = A[i{k}+1]; end\n"
        ));
    }
    std::fs::write(&path, text).unwrap();
    let p = path.to_string_lossy();
    let out = capped(&["verify", "--max-memory", "200M", &p]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("σ holds: 2000000 reads checked"),
        "{stdout}"
    );
}

/// `expand --emit code` reads its output back as a program: refused on its
/// estimate (bytes of text) before the parse, not found out after it.
#[test]
fn expands_read_back_is_refused_on_its_estimate() {
    let p = statements(20_000);
    let err = fails_with(
        &["expand", &p, "--emit", "code", "--max-memory", "100M"],
        "E0304",
    );
    assert!(err.contains("reading back the expanded program"), "{err}");
}

#[test]
fn a_bad_memory_budget_is_a_usage_error() {
    let out = capped(&["flow", MATMUL, "--max-memory", "lots"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a size"), "{err}");
}

#[test]
fn polly_expansion_at_n_3000_ends_with_a_diagnostic() {
    let p = "fixtures/papers/polly-mse-intro-expanded.loop";
    fails_with(&["expand", p, "--param", "N=3000"], "E0304");
}

#[test]
fn verify_over_budget_prints_the_diagnostic() {
    let err = fails_with(&["verify", MATMUL, "--max-instances", "10"], "E0302");
    assert!(!err.contains("Budget {"), "{err}");
    assert!(err.contains("--max-instances"), "{err}");
}

#[path = "support/lsp_client.rs"]
mod lsp_client;

#[test]
fn the_language_server_answers_over_budget_and_keeps_serving() {
    use serde_json::json;
    let bin = env!("CARGO_BIN_EXE_arrayflow");
    let text = std::fs::read_to_string(format!("{}/{MATMUL}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let u = "file:///work/matmul.loop";
    let options =
        json!({"params": {"N": 64}, "maxMemory": 1 << 20, "maxInstances": 1_000_000_000u64});
    let mut c = lsp_client::Client::start_with(bin, options);
    c.open(u, &text);
    let diags = c.diagnostics(u, 1);
    assert!(diags.iter().any(|d| d["code"] == "E0304"), "{diags:?}");
    // A budget back to the default, small sizes: the analysis runs again.
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"arrayflow": {"params": {"N": 3}, "maxMemory": 0}}}),
    );
    c.wait("diagnostics without the memory error", |v| {
        v["method"] == "textDocument/publishDiagnostics"
            && v["params"]["uri"] == u
            && !v.to_string().contains("E0304")
    });
    let lens = c.call("textDocument/codeLens", json!({"textDocument": {"uri": u}}));
    assert!(lens.to_string().contains("N=3"), "{lens}");
    c.shutdown();
}

/// `run` and `equiv` hold a trace of every read, which grows with the steps:
/// past the memory budget they stop with a diagnostic (E0400, E0401), not
/// an abort. matmul at N = 300 takes about 10^8 steps (a trace of several
/// GB); under the 2 GB limit the default budget is 1 GB.
#[test]
fn runs_past_the_memory_budget_end_with_a_diagnostic() {
    let steps = ["--max-steps", "4000000000"];
    for budget in [&["--max-memory", "32M"][..], &[]] {
        let mut run = vec!["run", MATMUL, "--param", "N=300"];
        run.extend(steps);
        run.extend(budget);
        let err = fails_with(&run, "E0400");
        assert!(err.contains("of memory"), "{err}");
        if !budget.is_empty() {
            assert!(err.contains("the budget of 32 MiB"), "{err}");
        }
    }
    let mut equiv = vec!["equiv", MATMUL, MATMUL, "--param", "N=300", "--seeds", "1"];
    equiv.extend(steps);
    equiv.extend(["--max-memory", "32M"]);
    let err = fails_with(&equiv, "E0401");
    assert!(err.contains("the budget of 32 MiB"), "{err}");
}
