//! `arrayflow-kinds` (the arrayflow command built with this crate's kinds
//! through `cli::main_with`) on the fixtures, whose expected sources are
//! worked out by hand in their header comments: `check`, `flow`, `expand`,
//! the commands that refuse extension accesses, and the language server.

#[path = "../../../tests/support/lsp_client.rs"]
mod lsp_client;

use serde_json::Value;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_arrayflow-kinds");

fn fixture(name: &str) -> String {
    format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("run arrayflow-kinds")
}

/// `flow --format json`: (stmt, iter, access) -> (sources as "S[i]", initial).
fn flow(name: &str) -> Vec<(String, Vec<String>, bool)> {
    let out = run(&["flow", "--format", "json", "--instances", &fixture(name)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let op = |o: &Value| {
        format!(
            "{}{:?}",
            o["stmt"].as_str().unwrap_or("?"),
            o["iter"]
                .as_array()
                .map(|a| a
                    .iter()
                    .map(|x| x.as_i64().unwrap_or(0))
                    .collect::<Vec<_>>())
                .unwrap_or_default()
        )
    };
    v["reads"]
        .as_array()
        .expect("reads")
        .iter()
        .map(|r| {
            let sources = r["sources"]
                .as_array()
                .expect("sources")
                .iter()
                .map(op)
                .collect();
            (
                format!("{}/{}", op(r), r["access"]),
                sources,
                r["initial"] == Value::Bool(true),
            )
        })
        .collect()
}

fn read(of: &[(String, Vec<String>, bool)], key: &str) -> (Vec<String>, bool) {
    let r = of
        .iter()
        .find(|r| r.0 == key)
        .unwrap_or_else(|| panic!("no read {key} in {of:?}"));
    (r.1.clone(), r.2)
}

fn ops(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// The sections fixture, in `.loop` or in C (`memset`/`memcpy`).
fn sections_as_worked_out_by_hand(name: &str) {
    let f = flow(name);
    for i in 0..=4 {
        assert_eq!(read(&f, &format!("S2[{i}]/0")), (ops(&["S1[]"]), false));
    }
    assert_eq!(read(&f, "S3[]/0"), (ops(&["S2[0]", "S2[1]"]), false));
    for i in [0, 3, 4] {
        assert_eq!(read(&f, &format!("S4[{i}]/0")), (ops(&["S1[]"]), false));
    }
    for i in [1, 2] {
        assert_eq!(
            read(&f, &format!("S4[{i}]/0")),
            (ops(&["S3[]"]), false),
            "S3 kills S1"
        );
    }
    assert_eq!(f.len(), 11, "{f:?}");
}

#[test]
fn sections_flow_as_worked_out_by_hand() {
    sections_as_worked_out_by_hand("sections.loop");
}

#[test]
fn memset_and_memcpy_are_sections_in_c() {
    sections_as_worked_out_by_hand("sections.c");
}

/// The lifetime fixture, in `.loop` (the end is `E`) or in C (`T_end`, at
/// the end of the loop body that declares `T`); `at` is where `T[1]` is
/// read (`line:column`).
fn lifetime_as_worked_out_by_hand(name: &str, end: &str, at: &str) {
    let f = flow(name);
    for i in 0..=3 {
        assert_eq!(
            read(&f, &format!("S2[{i}]/0")),
            (ops(&[format!("S1[{i}]").as_str()]), false)
        );
    }
    assert_eq!(read(&f, "S2[0]/1"), (ops(&[]), true));
    for i in 1..=3 {
        let end = format!("{end}[{}]", i - 1);
        assert_eq!(
            read(&f, &format!("S2[{i}]/1")),
            (ops(&[end.as_str()]), false)
        );
    }
    let out = run(&["check", &fixture(name)]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("error[K0001]: `T[1]` may read a cell after its lifetime ended"),
        "{err}"
    );
    assert!(err.contains(&format!("{name}:{at}")), "{err}");
}

#[test]
fn a_lifetime_end_kills_and_a_dead_read_is_an_error() {
    lifetime_as_worked_out_by_hand("lifetime.loop", "E", "10:21");
    let out = run(&["check", &fixture("sections.loop")]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_array_declared_in_a_loop_body_dies_with_each_trip_in_c() {
    lifetime_as_worked_out_by_hand("lifetime.c", "T_end", "14:19");
}

#[test]
fn expand_counts_the_section_writes() {
    for name in ["sections.loop", "sections.c"] {
        let out = run(&["expand", &fixture(name)]);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        // A[1..2] are written by S1 and by S3, and both values are read (S2
        // reads S1's, S4 S3's): two classes there; A[0], A[3..4] one.
        assert!(text.contains("A[1 .. 2]: x2"), "{name}: {text}");
        assert!(text.contains("A[0]: x1"), "{name}: {text}");
        assert!(text.contains("A[3 .. 4]: x1"), "{name}: {text}");
    }
}

/// C that looks like a section but is not one the kind can model: W0910,
/// and the call is read as any call (a may-write, W0905).
/// Run-time rules read σ of a program with extension accesses: on
/// sections.loop (header comment), A is read from S3 by S4 only (at i = 1,
/// 2), and from S1 by S2 and by S4 (at i = 0, 3, 4).
#[test]
fn rules_run_over_a_program_with_extension_accesses() {
    let dir = std::env::temp_dir().join(format!("arrayflow-kinds-rules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rules = dir.join("sources.dl");
    std::fs::write(
        &rules,
        ".decl from(to: site, from: site)\n\
         from(T, F) :- read(R, O, _), source(R, W), op(O, T), op(W, F).\n\
         .output from\n",
    )
    .unwrap();
    let out = run(&[
        "check",
        "--rules",
        rules.to_str().unwrap(),
        &fixture("sections.loop"),
    ]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(!stderr.contains("E1102"), "{stderr}");
    let mut got: Vec<&str> = stdout.lines().filter(|l| l.starts_with("from(")).collect();
    got.sort_unstable();
    assert_eq!(
        got,
        [
            r#"from("S2", "S1")"#,
            r#"from("S3", "S2")"#,
            r#"from("S4", "S1")"#,
            r#"from("S4", "S3")"#
        ],
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn c_calls_the_sections_cannot_model_are_warnings() {
    let dir = std::env::temp_dir().join(format!("arrayflow-kinds-c-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (
            "memset(A, 0, 3 * sizeof(float));",
            "counts `float` objects where the array holds `double` ones",
        ),
        (
            "memset(A, 0, 12);",
            "covers 12 bytes, not a whole number of 8-byte `double` elements",
        ),
        (
            "memcpy(A, I, 2 * sizeof(double));",
            "copies `int` elements into `double` ones",
        ),
        ("memset(A, 0);", "takes 3 arguments, not 2"),
        (
            "memset(A, 0, n * n * sizeof(double));",
            "has a start or a length that is not affine",
        ),
    ];
    for (k, (call, why)) in cases.iter().enumerate() {
        let path = dir.join(format!("case{k}.c"));
        let text = format!(
            "void memset(); void memcpy();\nint n = 3;\ndouble A[8];\nint I[8];\nvoid f(void) {{\n  {call}\n  A[0] = A[1];\n}}\n"
        );
        std::fs::write(&path, text).unwrap();
        let out = run(&["check", "--preprocess", "never", path.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{call}: {err}");
        assert!(
            err.contains("warning[W0910]") && err.contains(why),
            "{call}: {err}"
        );
        assert!(err.contains("warning[W0905]"), "{call}: {err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn unknown_kinds_and_misplaced_ones_are_diagnostics() {
    let dir = std::env::temp_dir().join(format!("arrayflow-kinds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (
            "unknown.loop",
            "real A[0..3];\nS: A[0] @slice(2) = 1;\n",
            "E0116",
            "unknown access kind `@slice`",
        ),
        (
            "arity.loop",
            "real A[0..3];\nS: A[0] @section(1, 2) = 1;\n",
            "E0117",
            "takes 1 argument but is given 2",
        ),
        (
            "read.loop",
            "real A[0..3];\nreal x;\nS: x = A[0] @dead(2);\n",
            "E0117",
            "`@dead` does not take this access",
        ),
        (
            "affine.loop",
            "real A[0..3];\nreal B[0..3];\nS: A[0] @section(B[1]) = 1;\n",
            "E0117",
            "must be affine",
        ),
        // The section's end outside the declared range: the kind's
        // lowering error, which `check` analyses the file to find.
        (
            "range.loop",
            "real A[0..3];\nreal x;\nS: A[2] @section(6) = 1;\nT: x = A[0];\n",
            "E0303",
            "leaves the declared range",
        ),
    ];
    for (name, text, code, message) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let out = run(&["check", path.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(
            err.contains(&format!("error[{code}]")) && err.contains(message),
            "{name}: {err}"
        );
    }
    // The section's end outside the declared range: an analysis error.
    let path = dir.join("range.loop");
    std::fs::write(
        &path,
        "real A[0..3];\nreal x;\nS: A[2] @section(6) = 1;\nT: x = A[0];\n",
    )
    .unwrap();
    let out = run(&["flow", path.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("leaves the declared range"), "{err}");
    // The interpreter knows the core accesses only: `run` refuses.
    let out = run(&["run", &fixture("sections.loop")]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot run an access of kind `@section`")
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_language_server_reports_a_dead_read() {
    // `T[1]` on line 10 of the `.loop` fixture, 14 of the C one (0-based 9, 13).
    for (name, line) in [("lifetime.loop", 9), ("lifetime.c", 13)] {
        let text = std::fs::read_to_string(fixture(name)).unwrap();
        let uri = format!("file:///work/{name}");
        let mut c = lsp_client::Client::start(BIN);
        c.open(&uri, &text);
        let diags = c.diagnostics(&uri, 1);
        let hit = diags.iter().find(|d| d["code"] == "K0001");
        let d = hit.unwrap_or_else(|| panic!("{name}: no K0001 in {diags:?}"));
        assert_eq!(d["range"]["start"]["line"], line, "{name}: {d}");
        c.shutdown();
    }
}
