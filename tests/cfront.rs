//! The C front end against `.loop` twins: the paper examples in
//! `fixtures/c/` (twins in `fixtures/papers/`) and the classic kernels in
//! `fixtures/c/kernels/` (twins next to them). For each pair the lowered
//! models are equal (labels, generated names and all), `flow`, `deps` and
//! `expand` give the same JSON, σ equals the naive reference, and `verify`
//! finds every executed read's writer in σ. Spot checks of σ derived by hand from each
//! kernel's text make sure the comparisons compare something meaningful.

#[allow(dead_code)]
mod naive;

use arrayflow::dataflow::{self, analyze, Config, Flow, Sources};
use arrayflow::diagnostics::{has_errors, SourceFiles};
use arrayflow::interp::Options;
use arrayflow::model::{Operation, Program, Site};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn compile(path: &Path) -> Program {
    let source = std::fs::read_to_string(path).unwrap();
    let mut files = SourceFiles::new();
    let id = files.add(path.display().to_string(), source);
    let (p, diags) = arrayflow::cli::compile(path, files.source(id), id);
    assert!(!has_errors(&diags), "{}", files.render_all(&diags));
    p.unwrap_or_else(|| panic!("{}: no program", path.display()))
}

/// (C file, `.loop` twin) for every fixture pair.
fn pairs() -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for k in 1..=3 {
        out.push((
            PathBuf::from(format!("fixtures/c/mse-example{k}.c")),
            PathBuf::from(format!("fixtures/papers/mse-example{k}.loop")),
        ));
    }
    let mut kernels: Vec<PathBuf> = std::fs::read_dir("fixtures/c/kernels")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    kernels.sort();
    for c in kernels {
        let twin = c.with_extension("loop");
        assert!(twin.exists(), "{} has no .loop twin", c.display());
        out.push((c, twin));
    }
    out
}

fn config(max_trips: u32) -> Config {
    Config {
        max_trips,
        ..Config::default()
    }
}

fn flow_json(p: &Program, flow: &Flow) -> String {
    let mut out = Vec::new();
    dataflow::render::json(p, flow, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn every_c_fixture_lowers_to_its_twin() {
    let pairs = pairs();
    assert!(pairs.len() >= 13, "only {} pairs", pairs.len());
    for (c, twin) in pairs {
        let (mut pc, pl) = (compile(&c), compile(&twin));
        // `.loop` has no locals: which C arrays are is the one difference.
        for a in &mut pc.arrays {
            a.local = false;
        }
        assert_eq!(
            arrayflow::print::program(&pc),
            arrayflow::print::program(&pl),
            "{}",
            c.display()
        );
        assert_eq!(pc, pl, "{}", c.display());
    }
}

#[test]
fn flow_json_of_c_equals_flow_json_of_twin() {
    for (c, twin) in pairs() {
        let (pc, pl) = (compile(&c), compile(&twin));
        let fc = analyze(&pc, &config(3)).unwrap();
        let fl = analyze(&pl, &config(3)).unwrap();
        let (jc, jl) = (flow_json(&pc, &fc), flow_json(&pl, &fl));
        assert!(jc.lines().count() > 2, "{}: no reads", c.display());
        assert_eq!(jc, jl, "{}", c.display());
    }
}

#[test]
fn sigma_of_c_fixtures_equals_the_naive_reference() {
    for (c, _) in pairs() {
        let p = compile(&c);
        let flow = analyze(&p, &config(3)).unwrap();
        let got: BTreeMap<(Operation, usize), Sources> = flow
            .iter()
            .map(|r| ((r.operation(), r.access()), r.sources()))
            .collect();
        let want = naive::sigma(&p, &[], 3);
        assert!(!want.is_empty(), "{}", c.display());
        assert_eq!(got, want, "{}", c.display());
    }
}

#[test]
fn verify_is_clean_on_every_c_fixture() {
    for (c, _) in pairs() {
        let p = compile(&c);
        let mut o = Options::new(p.param_values(&[]).unwrap());
        o.max_trips = 3;
        let r = arrayflow::verify::verify(&p, &[], &o, 4)
            .unwrap_or_else(|e| panic!("{}: {e}", c.display()));
        assert!(
            r.violations.is_empty(),
            "{}: {}",
            c.display(),
            r.violations[0]
        );
        assert!(r.reads > 0, "{}: no read checked", c.display());
    }
}

fn op(p: &Program, label: &str, iter: &[i64]) -> Operation {
    let s = p
        .stmts()
        .iter()
        .find(|s| s.label == label)
        .unwrap_or_else(|| panic!("no statement {label}"))
        .id;
    Operation {
        site: Site::Stmt(s),
        iter: iter.to_vec(),
    }
}

/// σ of one read of a C fixture at the default sizes, max-trips 3.
fn sigma(file: &str, label: &str, iter: &[i64], access: usize) -> (Program, Sources) {
    let p = compile(Path::new(file));
    let flow = analyze(&p, &config(3)).unwrap();
    let s = flow
        .sources(&op(&p, label, iter), access)
        .unwrap_or_else(|| panic!("{file}: no read {access} of {label}{iter:?}"));
    (p, s)
}

fn writes(p: &Program, ops: &[(&str, Vec<i64>)]) -> Vec<Operation> {
    let mut v: Vec<Operation> = ops.iter().map(|(l, i)| op(p, l, i)).collect();
    v.sort();
    v
}

/// Sources worked out by hand from the C text of each kernel.
#[test]
fn kernel_sources_match_hand_derivations() {
    let k = "fixtures/c/kernels/";
    // matmul: C[i][j] += ... reads what S or the previous k wrote.
    let (p, s) = sigma(&format!("{k}matmul.c"), "T", &[1, 2, 0], 0);
    assert_eq!(s.writes, writes(&p, &[("S", vec![1, 2])]));
    assert!(!s.initial);
    let (p, s) = sigma(&format!("{k}matmul.c"), "T", &[1, 2, 3], 0);
    assert_eq!(s.writes, writes(&p, &[("T", vec![1, 2, 2])]));
    let (_, s) = sigma(&format!("{k}matmul.c"), "T", &[1, 2, 3], 1); // A[1][3]
    assert!(s.writes.is_empty() && s.initial);
    // prefix: B[i-1] comes from the previous iteration, B[0] from I.
    let (p, s) = sigma(&format!("{k}prefix.c"), "S", &[1], 0);
    assert_eq!(s.writes, writes(&p, &[("I", vec![])]));
    let (p, s) = sigma(&format!("{k}prefix.c"), "S", &[5], 0);
    assert_eq!(s.writes, writes(&p, &[("S", vec![4])]));
    // lu: A[i][j] -= ... reads the previous k's update, or the input.
    let (_, s) = sigma(&format!("{k}lu.c"), "T", &[0, 2, 3], 0);
    assert!(s.writes.is_empty() && s.initial);
    let (p, s) = sigma(&format!("{k}lu.c"), "T", &[2, 3, 4], 0);
    assert_eq!(s.writes, writes(&p, &[("T", vec![1, 3, 4])]));
    // lu: the pivot A[k][k] at k = 2 was last updated by T at k = 1.
    let (p, s) = sigma(&format!("{k}lu.c"), "S", &[2, 3], 1);
    assert_eq!(s.writes, writes(&p, &[("T", vec![1, 2, 2])]));
    // reduction: s carried from T to T, R reads the last one (N = 8).
    let (p, s) = sigma(&format!("{k}reduction.c"), "T", &[0], 0);
    assert_eq!(s.writes, writes(&p, &[("S", vec![])]));
    let (p, s) = sigma(&format!("{k}reduction.c"), "R", &[], 0);
    assert_eq!(s.writes, writes(&p, &[("T", vec![7])]));
    // jacobi1d: A[i-1] at t = 1 comes from U at t = 0, unless i - 1 = 0.
    let (p, s) = sigma(&format!("{k}jacobi1d.c"), "S", &[1, 3], 0);
    assert_eq!(s.writes, writes(&p, &[("U", vec![0, 2])]));
    let (_, s) = sigma(&format!("{k}jacobi1d.c"), "S", &[1, 1], 0);
    assert!(s.writes.is_empty() && s.initial);
    // trisolve, backward loop: model iteration i' is C's i = N - 1 - i', so
    // V at i' = 0 (C's i = 4) reads x[4], last written by R at i = 4.
    let (p, s) = sigma(&format!("{k}trisolve.c"), "V", &[0], 0);
    assert_eq!(s.writes, writes(&p, &[("R", vec![4])]));
    // W at i' = 1 (C's i = 3), j = 4 reads y[4], written by X at i' = 0.
    let (p, s) = sigma(&format!("{k}trisolve.c"), "W", &[1, 4], 2);
    assert_eq!(s.writes, writes(&p, &[("X", vec![0])]));
    // spmv: y[i] in the `while` loop: Y first, then the previous trip.
    let (p, s) = sigma(&format!("{k}spmv.c"), "A", &[2, 0], 0);
    assert_eq!(s.writes, writes(&p, &[("Y", vec![2])]));
    let (p, s) = sigma(&format!("{k}spmv.c"), "A", &[2, 1], 0);
    assert_eq!(s.writes, writes(&p, &[("A", vec![2, 0])]));
    // indirect: hist[key[i]] may be any cell: every Z and every H.
    let (p, s) = sigma(&format!("{k}indirect.c"), "G", &[0], 0);
    let mut all: Vec<(&str, Vec<i64>)> = (0..5).map(|b| ("Z", vec![b])).collect();
    all.extend((0..8).map(|i| ("H", vec![i])));
    assert_eq!(s.writes, writes(&p, &all));
    assert!(!s.initial);
}

fn arrayflow(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(args)
        .output()
        .expect("the binary runs")
}

#[test]
fn cli_flow_on_c_prints_the_twin_json() {
    for (c, twin) in pairs().into_iter().take(4) {
        let (c, twin) = (c.to_str().unwrap(), twin.to_str().unwrap());
        let a = arrayflow(&["flow", "--format", "json", c]);
        let b = arrayflow(&["flow", "--format", "json", twin]);
        assert_eq!(
            a.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&a.stderr)
        );
        assert_eq!(a.stdout, b.stdout, "{c}");
    }
}

/// `deps` and `expand` print the same JSON for a C file as for its twin, and
/// `expand --emit code` the same C program as `--emit c` on the twin
/// (through the binary, so the whole command path is the same too).
#[test]
fn cli_deps_and_expand_on_c_print_the_twin_output() {
    for (c, twin) in pairs() {
        let (c, twin) = (c.to_str().unwrap(), twin.to_str().unwrap());
        // The paper examples call functions they do not define (E0911).
        let emit_c: [&str; 4] = ["expand", "--emit", "code", "--allow-opaque"];
        let emit_twin: [&str; 4] = ["expand", "--emit", "c", "--allow-opaque"];
        for (args, twin_args) in [
            (
                &["deps", "--format", "json"][..],
                &["deps", "--format", "json"][..],
            ),
            (
                &["expand", "--format", "json"][..],
                &["expand", "--format", "json"][..],
            ),
            (&emit_c[..], &emit_twin[..]),
        ] {
            let cmd = args.join(" ");
            let a = arrayflow(&[args, &[c]].concat());
            let b = arrayflow(&[twin_args, &[twin]].concat());
            assert_eq!(
                a.status.code(),
                Some(0),
                "{cmd} {c}: {}",
                String::from_utf8_lossy(&a.stderr)
            );
            assert!(a.stdout.len() > 20, "{cmd} {c}: no output");
            // Loops are named with their line (`i@12`), which differs
            // between the twins.
            let unlined = |s: &[u8]| {
                let s = String::from_utf8_lossy(s).into_owned();
                let mut out = String::new();
                let mut chars = s.chars().peekable();
                while let Some(ch) = chars.next() {
                    out.push(ch);
                    if ch == '@' && chars.peek().is_some_and(char::is_ascii_digit) {
                        while chars.peek().is_some_and(char::is_ascii_digit) {
                            chars.next();
                        }
                    }
                }
                out
            };
            if args[1] == "--emit" {
                // C out of C is printed into the original function (docs/c.md,
                // "C output"), the twin's as `void kernel(...)`: the reports
                // above the code are the same.
                let printed = "/* Printed by arrayflow";
                let (a, b) = (unlined(&a.stdout), unlined(&b.stdout));
                let (ra, ca) = a.split_once(printed).expect("C code");
                let (rb, _) = b.split_once(printed).expect("C code");
                assert_eq!(ra, rb, "{cmd} {c}");
                let text = std::fs::read_to_string(c).unwrap();
                let function = text
                    .lines()
                    .find(|l| l.ends_with(") {") && !l.starts_with(' '))
                    .expect("a function definition");
                // A function that returns a value too, with its `return`.
                assert!(ca.contains(function), "{cmd} {c}: no `{function}`:\n{ca}");
                if text.contains("return ") {
                    assert!(ca.contains("  return "), "{cmd} {c}: no `return`:\n{ca}");
                }
            } else {
                assert_eq!(unlined(&a.stdout), unlined(&b.stdout), "{cmd} {c}");
            }
        }
    }
}

#[test]
fn cli_commands_accept_c_files() {
    let c = "fixtures/c/kernels/matmul.c";
    for args in [
        vec!["check", c],
        vec!["run", c],
        vec!["verify", c],
        vec!["equiv", c, "fixtures/c/kernels/matmul.loop"],
    ] {
        let o = arrayflow(&args);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let o = arrayflow(&["fmt", c]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.starts_with("# The .loop form of"), "{text}");
    assert!(text.contains("T: C[i, j] += A[i, k] * B[k, j];"), "{text}");
}

#[test]
fn c_errors_exit_1_and_point_at_the_file() {
    let dir = std::env::temp_dir().join(format!("arrayflow-cfront-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.c");
    std::fs::write(&bad, "void f( { for (;;) }\n").unwrap();
    let o = arrayflow(&["check", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("error[E0901]") && err.contains("bad.c:1:"),
        "{err}"
    );
}

/// A C file that includes its own header (PolyBench's
/// `polybench.h`) is run through the system preprocessor first: its
/// function-like macros declare the arrays, and `-D` picks the size. The
/// file's directory is searched; `-I` adds more; a missing header or
/// `--preprocess never` is an error that says what to do.
#[test]
fn c_files_with_their_own_headers_are_preprocessed() {
    let dir = std::env::temp_dir().join(format!("arrayflow-cpp-{}", std::process::id()));
    let inc = dir.join("inc");
    std::fs::create_dir_all(&inc).unwrap();
    std::fs::write(
        inc.join("sizes.h"),
        "#ifdef SMALL\n#define N 4\n#else\n#define N 40\n#endif\n\
         #define ARRAY_1D(name, n) name[n]\n",
    )
    .unwrap();
    let file = dir.join("k.c");
    std::fs::write(
        &file,
        "#include <stdio.h>\n#include \"sizes.h\"\n\
         void kernel(int n, double ARRAY_1D(A, N)) {\n#pragma scop\n\
         for (int i = 1; i < n; i++) A[i] = A[i - 1];\n#pragma endscop\n}\n\
         int main(void) { double A[N]; kernel(N, A); return 0; }\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let i = inc.to_str().unwrap();
    // The header is in `inc`: without -I the preprocessor fails.
    let o = arrayflow(&["check", f]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("sizes.h") && err.contains("-I DIR"), "{err}");
    // With it, the macros declare A[N] and n defaults to N (main's call).
    let o = arrayflow(&["run", f, "-I", i, "-D", "SMALL", "--format", "json"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("was preprocessed"), "{err}");
    let out = String::from_utf8_lossy(&o.stdout);
    // n = N = 4 (SMALL): `A[i - 1]` is read at i = 1..3.
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["params"]["n"], 4, "{out}");
    assert_eq!(v["reads"].as_array().map(Vec::len), Some(3), "{out}");
    // Without -D SMALL, N = 40.
    let o = arrayflow(&["run", f, "-I", i, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["params"]["n"], 40);
    // Parsed as it is, the macro-declared array is not understood.
    let o = arrayflow(&["check", f, "--preprocess", "never"]);
    assert_ne!(o.status.code(), Some(0));
}
