//! Data-driven: every program in fixtures/equiv/ against the paper example it
//! transforms (fixtures/papers/<example>.loop, from the file name's prefix).
//! Each file states its expected verdict in a header line, derived by hand
//! from the transformation it makes:
//!
//! - `# expect: agree`
//! - `# expect: differ final X`: the first mismatch is in the final contents
//!   of array `X`;
//! - `# expect: differ read OP [initial]`: the first mismatch is a read of
//!   operation `OP` (`R[2]`), or of any operation of statement `OP` (`S`),
//!   and with `initial`, A read an initial value there.

use arrayflow::diagnostics::SourceFiles;
use arrayflow::equiv::{equiv, EquivOptions, Verdict};
use arrayflow::model::Program;
use std::path::{Path, PathBuf};
use std::process::Command;

fn parse(path: &Path) -> Program {
    let source = std::fs::read_to_string(path).unwrap();
    let mut files = SourceFiles::new();
    let id = files.add(path.display().to_string(), source);
    let (program, diags) = arrayflow::lower::compile(files.source(id), id);
    program.unwrap_or_else(|| panic!("{}", files.render_all(&diags)))
}

fn fixtures() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir("fixtures/equiv")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "loop"))
        .collect();
    out.sort();
    out
}

fn original(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap().to_string_lossy();
    let example = name.split('.').next().unwrap();
    PathBuf::from(format!("fixtures/papers/{example}.loop"))
}

fn expectation(path: &Path) -> Vec<String> {
    let source = std::fs::read_to_string(path).unwrap();
    let line = source
        .lines()
        .find_map(|l| l.strip_prefix("# expect: "))
        .unwrap_or_else(|| panic!("{}: no `# expect:` line", path.display()));
    line.split_whitespace().map(String::from).collect()
}

#[test]
fn equiv_fixtures_get_their_expected_verdicts() {
    let paths = fixtures();
    assert!(paths.len() >= 9);
    let (mut agree, mut differ) = (0, 0);
    for path in paths {
        let shown = path.display().to_string();
        let a = parse(&original(&path));
        let b = parse(&path);
        let o = EquivOptions {
            seeds: 20,
            ..EquivOptions::default()
        };
        let verdict = equiv(&a, &b, &o).unwrap_or_else(|e| panic!("{shown}: {e}"));
        let want = expectation(&path);
        match (want[0].as_str(), verdict) {
            ("agree", Verdict::Agree(x)) => {
                assert_eq!(x.seeds, 20);
                assert!(x.reads > 0, "{shown}");
                agree += 1;
            }
            ("differ", Verdict::Differ(m)) => {
                match want[1].as_str() {
                    "final" => {
                        let prefix = format!("final contents of {}", want[2]);
                        assert!(m.what.starts_with(&prefix), "{shown}: {m}");
                    }
                    "read" => {
                        // "read K of OP" or "read K of OP (B: ...)".
                        let op = m.what.split(" of ").nth(1).unwrap();
                        let op = op.split(" (B:").next().unwrap();
                        let matches = if want[2].contains('[') {
                            op == want[2]
                        } else {
                            op.split('[').next() == Some(want[2].as_str())
                        };
                        assert!(matches, "{shown}: {m}");
                        if want.get(3).map(String::as_str) == Some("initial") {
                            assert_eq!(m.expected.as_ref().unwrap().writer, "initial");
                        }
                        assert!(m.actual.is_some(), "{shown}: {m}");
                    }
                    other => panic!("{shown}: unknown expectation {other}"),
                }
                differ += 1;
            }
            (w, v) => panic!("{shown}: expected {w}, got {v:?}"),
        }
    }
    assert!(agree >= 3 && differ >= 6);
}

#[test]
fn equiv_cli_exit_codes() {
    let bin = env!("CARGO_BIN_EXE_arrayflow");
    let run = |b: &str| {
        Command::new(bin)
            .args([
                "equiv",
                "fixtures/papers/mse-example1.loop",
                b,
                "--seeds",
                "10",
            ])
            .output()
            .unwrap()
    };
    let ok = run("fixtures/equiv/mse-example1.expanded.loop");
    assert_eq!(ok.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&ok.stdout).starts_with("equivalent on 10 seeds"));
    let bad = run("fixtures/equiv/mse-example1.wrong-copy.loop");
    assert_eq!(bad.status.code(), Some(1));
    let out = String::from_utf8_lossy(&bad.stdout);
    assert!(
        out.starts_with("mismatch on seed 0: read 0 of R[2]"),
        "{out}"
    );
    // An operation of B that stands for nothing in A.
    let dir = std::env::temp_dir().join(format!("arrayflow-equiv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("q.loop");
    std::fs::write(&file, "param N = 5;\nreal x;\nQ.1: x = 1;\n").unwrap();
    let unmatched = run(file.to_str().unwrap());
    assert_eq!(unmatched.status.code(), Some(1));
    let err = String::from_utf8_lossy(&unmatched.stderr);
    assert!(
        err.contains("statement `Q.1` of B matches no statement of A"),
        "{err}"
    );
    assert!(err.contains("q.loop:3:1"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn run_cli_reports_out_of_range_and_budget() {
    let bin = env!("CARGO_BIN_EXE_arrayflow");
    let dir = std::env::temp_dir().join(format!("arrayflow-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("oob.loop");
    std::fs::write(
        &file,
        "param N = 3;\nreal A[1..N];\nfor i = 1 to N do\n  S: A[i+1] = i;\nend\n",
    )
    .unwrap();
    let out = Command::new(bin).arg("run").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("statement `S` at iteration (i=3)"), "{err}");
    assert!(err.contains("A[4]"), "{err}");
    let out = Command::new(bin)
        .args([
            "run",
            "fixtures/papers/mse-example2.loop",
            "--max-steps",
            "100",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("exceeded 100 steps"));
    let out = Command::new(bin)
        .args(["run", "fixtures/papers/mse-example1.loop", "--param", "Q=1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn derived_condition_names_parse_and_print_back() {
    let p = parse(Path::new("fixtures/equiv/mse-example2.expanded.loop"));
    let names: Vec<&str> = p.conditions().iter().map(|c| c.name.as_str()).collect();
    for want in ["_C1.1", "_C1.2", "_C1.3", "_C1.4"] {
        assert!(names.contains(&want), "{names:?}");
    }
    let text = arrayflow::print::program(&p);
    assert!(text.contains("if [_C1.3] ... then"), "{text}");
    let mut files = SourceFiles::new();
    let id = files.add("printed.loop", text);
    let (again, _) = arrayflow::lower::compile(files.source(id), id);
    assert_eq!(again, Some(p));
}

/// Conditions of affine comparisons joined by `and`, `or` and `not` (the
/// guards of rescheduled loops) run as written: the statement runs exactly
/// at the counters the same condition, written in Rust, accepts.
#[test]
fn compound_affine_conditions_run_as_written() {
    let text = "param N = 4;
real A[0..N];
for i = 0 to N do
  if (not (i < 3 or i == 5) and (i != 7 or N < 0)) or (i == 1 and not (N <= 2)) then
    S: A[i] = 1;
  end
end
";
    let (p, diags) = arrayflow::lower::compile(text, arrayflow::diagnostics::FileId(0));
    let p = p.unwrap_or_else(|| panic!("{diags:?}"));
    for n in 0..14i64 {
        let run = arrayflow::interp::run(&p, &arrayflow::interp::Options::new(vec![n]))
            .expect("the program runs");
        let ran: Vec<i64> = (run.ops.iter())
            .filter(|op| matches!(op.site, arrayflow::model::Site::Stmt(_)))
            .map(|op| op.iter[0])
            .collect();
        let expected: Vec<i64> = (0..=n)
            .filter(|&i| (!(i < 3 || i == 5) && (i != 7 || n < 0)) || (i == 1 && n > 2))
            .collect();
        assert_eq!(ran, expected, "N = {n}");
    }
}
