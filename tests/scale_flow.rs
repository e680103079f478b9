//! Symbolic σ (the quasts engine of `flow`) at scale: a read's proof tests
//! the writers that can lie between its source and it, one of each shape
//! where the program order alone decides, not every writer of its array.

use arrayflow::symbolic::{self, Outcome};
use std::process::Command;

fn compile(text: &str) -> arrayflow::model::Program {
    let (program, diags) = arrayflow::lower::compile(text, arrayflow::diagnostics::FileId(0));
    program.unwrap_or_else(|| panic!("compiles: {diags:?}"))
}

/// `n` statements `S<k>: A[1] = A[2];`.
fn statements(n: usize) -> String {
    let mut s = String::from("param N = 4;\nreal A[1..2];\n");
    for k in 0..n {
        s.push_str(&format!("S{k}: A[1] = A[2];\n"));
    }
    s
}

/// `n` loops `for i = 1 to N do S<k>: A[i] = A[i + 1]; end`: each read's
/// source is the loop before (at i + 1 ≤ N), else the initial value.
fn loops(n: usize) -> String {
    let mut s = String::from("param N = 4;\nassume N >= 1;\nreal A[1..N + 1];\n");
    for k in 0..n {
        s.push_str(&format!("for i = 1 to N do S{k}: A[i] = A[i + 1]; end\n"));
    }
    s
}

fn all_exact(sym: &symbolic::Symbolic) -> bool {
    sym.reads
        .iter()
        .all(|r| matches!(r.outcome, Outcome::Exact(_)))
}

/// Every read of `A[2]` reads the initial value: its proof was one test per
/// writer of A before it, n²/2 for n statements (8,000 statements took 18
/// s); a writer of another constant cell needs none.
#[test]
fn constant_cells_need_no_test() {
    let n = 2000;
    let (sym, problems) = symbolic::analyze_counted(&compile(&statements(n)));
    assert_eq!(sym.reads.len(), n);
    assert!(all_exact(&sym));
    assert!(
        problems <= 4 * n as u64,
        "{problems} problems for {n} reads"
    );
}

/// Loops in sequence, all of one shape: a read's killers are tested in its
/// own loop and its source's, and once for every loop before (the same
/// problem for each), not once per loop.
#[test]
fn writers_of_one_shape_are_tested_once() {
    for n in [200, 800] {
        let (sym, problems) = symbolic::analyze_counted(&compile(&loops(n)));
        assert_eq!(sym.reads.len(), n);
        assert!(
            all_exact(&sym),
            "{:?}",
            sym.reads.last().map(|r| &r.outcome)
        );
        assert!(
            problems <= 40 * n as u64,
            "{problems} problems for {n} loops"
        );
    }
}

fn flow(file: &std::path::Path, engine: &str) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .arg("flow")
        .arg(file)
        .args(["--engine", engine, "--param", "N=5"])
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The quasts engine still prints the rules engine's bytes on both
/// patterns, and on loops whose writers differ in shape and overlap.
#[test]
fn quasts_equal_rules() {
    let mixed = "param N = 4;\nassume N >= 2;\nreal A[0..2 * N + 2];\n\
                 for i = 1 to N do S: A[i] = A[i + 1]; end\n\
                 T: A[1] = A[2];\n\
                 for i = 1 to N do U: A[i + 1] = A[i + 2]; end\n\
                 for i = 1 to N do V: A[i + 1] = A[i]; W: A[i] = A[i + 2]; end\n\
                 X: A[3] = A[2 * N];\n\
                 for i = 1 to N do Y: A[i] = A[i]; end\n";
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    for (k, text) in [statements(300), loops(300), mixed.to_string()]
        .iter()
        .enumerate()
    {
        let file = dir.join(format!("scale-flow-{}-{k}.loop", std::process::id()));
        std::fs::write(&file, text).unwrap();
        let (code, quasts, err) = flow(&file, "quasts");
        assert_eq!(code, 0, "{err}");
        let (code, rules, err) = flow(&file, "rules");
        assert_eq!(code, 0, "{err}");
        assert_eq!(quasts, rules, "program {k}");
        let _ = std::fs::remove_file(&file);
    }
}

/// Grouping σ of n loops in sequence: finding the loops a reader shares
/// with its source costs a few steps per source, not a step per site of
/// the program for every reader site (that made 100,000 loops take 17 s).
#[test]
fn grouping_work_is_linear_in_the_sources() {
    use arrayflow::dataflow::{self, grouped::Grouper};
    let work = |n: usize| {
        let program = compile(&loops(n));
        let flow = dataflow::analyze(&program, &dataflow::Config::default()).expect("σ");
        let mut g = Grouper::new(&program);
        let mut sources = 0u64;
        for r in flow.sorted() {
            sources += r.writes().count() as u64;
            g.add(&r);
        }
        // Three of each loop's four reads reach the loop before (A[5] is never
        // written).
        assert_eq!(sources, 3 * (n as u64 - 1), "{n} loops");
        (g.work(), sources)
    };
    let (small, s_small) = work(1000);
    let (large, s_large) = work(4000);
    // Each loop's read reaches the loop before: at most its one loop
    // compared, plus one step, per source.
    assert!(small <= 2 * s_small, "{small} steps for {s_small} sources");
    assert!(large <= 2 * s_large, "{large} steps for {s_large} sources");
    assert!(
        large <= 5 * small,
        "{small} steps at 1000 loops, {large} at 4000"
    );
}
