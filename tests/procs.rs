//! Procedures in `.loop` (docs/language.md, *Procedures*): each fixture of
//! fixtures/procs lowers to the same program as its `.inlined.loop`, the
//! call inlined by hand from the rules of the docs; the call-site records
//! of rows.loop, worked out by hand; `fmt` prints procedures back (the
//! text reads back to the same program and is a fixed point); every
//! command runs on a program with calls. The diagnostics E0118–E0123 are
//! checked by tests/docs.rs from their examples.

use arrayflow::diagnostics::FileId;
use arrayflow::lower::{compile, compile_calls, format_procs};
use arrayflow::model::{base_label, Program};
mod support;

use support::run;

const FIXTURES: [&str; 2] = ["rows", "grid"];

fn read(name: &str) -> String {
    std::fs::read_to_string(format!("fixtures/procs/{name}")).unwrap()
}

fn program(source: &str) -> Program {
    let (p, diags) = compile(source, FileId(0));
    p.unwrap_or_else(|| panic!("{diags:?}"))
}

#[test]
fn calls_lower_to_the_program_inlined_by_hand() {
    for name in FIXTURES {
        let got = program(&read(&format!("{name}.loop")));
        let want = program(&read(&format!("{name}.inlined.loop")));
        assert_eq!(got, want, "{name}");
        let labels: Vec<String> = got.stmts().iter().map(|s| s.label.clone()).collect();
        let hand: Vec<String> = want.stmts().iter().map(|s| s.label.clone()).collect();
        assert_eq!(labels, hand, "{name}");
    }
}

#[test]
fn call_sites_say_where_the_inlined_statements_came_from() {
    let (p, calls, diags) = compile_calls(&read("rows.loop"), FileId(0));
    assert!(p.is_some(), "{diags:?}");
    let names: Vec<&str> = calls.procs.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["scale", "fill"]);
    // Statements: I 0, L.S 1, F.T 2, F._P1.S 3, R 4.
    type Site<'a> = (&'a str, usize, Option<usize>, usize, std::ops::Range<u32>);
    let got: Vec<Site> = calls
        .sites
        .iter()
        .map(|s| (s.label.as_str(), s.proc, s.parent, s.depth, s.stmts.clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("L", 0, None, 1, 1..2),
            ("F", 1, None, 0, 2..4),
            ("F._P1", 0, Some(1), 0, 3..4),
        ]
    );
    assert_eq!(calls.site_of_stmt(3), Some(1));
    assert_eq!(calls.site_of_stmt(4), None);
    // scale's own program: the file's parameters, then k; X and f.
    let scale = &calls.procs[0].program;
    let params: Vec<&str> = scale.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(params, ["N", "M", "k"]);
    let arrays: Vec<&str> = scale.arrays.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(arrays, ["X", "f"]);
}

#[test]
fn fmt_prints_procedures_back() {
    for name in FIXTURES {
        let source = read(&format!("{name}.loop"));
        let text = format_procs(&source, FileId(0)).expect("has procedures");
        assert!(text.contains("\nproc "), "{name}: {text}");
        assert_eq!(program(&text), program(&source), "{name}");
        assert_eq!(
            format_procs(&text, FileId(0)).as_deref(),
            Some(text.as_str())
        );
    }
    assert_eq!(format_procs("real x;\nx = 1;\nuse(x);\n", FileId(0)), None);
}

#[test]
fn inlined_labels_have_their_own_base() {
    assert_eq!(base_label("S.2.1"), "S");
    assert_eq!(base_label("L.S"), "L.S");
    assert_eq!(base_label("L.S.2"), "L.S");
    assert_eq!(base_label("W._P1._S2.1"), "W._P1._S2");
    // `proc` and `call` stay ordinary names where no name follows them.
    let p = program("real proc, call;\nproc = 1;\ncall = proc;\nuse(call);\n");
    assert_eq!(p.arrays.len(), 2);
}

#[test]
fn every_command_runs_on_programs_with_calls() {
    for name in FIXTURES {
        let file = format!("fixtures/procs/{name}.loop");
        let inlined = format!("fixtures/procs/{name}.inlined.loop");
        for args in [
            vec!["check", file.as_str()],
            vec!["run", file.as_str()],
            vec!["deps", file.as_str()],
            vec!["regions", file.as_str()],
            vec!["expand", file.as_str(), "--emit", "code"],
            vec!["equiv", file.as_str(), inlined.as_str()],
        ] {
            let (code, _, err) = run(&args);
            assert_eq!(code, 0, "{args:?}: {err}");
        }
        // σ of the program with calls is σ of the one inlined by hand.
        let (_, a, _) = run(&["flow", file.as_str(), "--format", "json"]);
        let (_, b, _) = run(&["flow", inlined.as_str(), "--format", "json"]);
        assert_eq!(a, b, "{name}");
    }
}

/// The summaries of rows.loop, checked by hand: scale touches X[j],
/// j = 1..M+1, offsets 0..M; fill writes Y then reads it through scale
/// (a flow inside the call: USE over-approximate); at L, X is row i of
/// B[1..N, 0..M], offsets (i−1)(M+1) + 0..M; at F, Z is row 2 (base M+1);
/// at F._P1, X is V shifted by one (base 0) and f is B[2, 0] (offset M+1).
#[test]
fn regions_print_each_summary_and_each_call() {
    let (code, out, err) = run(&["regions", "fixtures/procs/rows.loop"]);
    assert_eq!(code, 0, "{err}");
    let tail = &out[out.find("procedure ").expect("summaries")..];
    assert_eq!(tail, read("rows.regions.expected"));
    let (code, json, _) = run(&["regions", "fixtures/procs/rows.loop", "--format", "json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["procedures"][0]["procedure"], "scale");
    assert_eq!(v["procedures"][0]["exact"], true);
    assert_eq!(v["procedures"][1]["exact"], false);
    assert_eq!(v["calls"][0]["call"], "L");
    assert_eq!(
        v["calls"][0]["arrays"][0]["kill"]["lmads"][0]["text"],
        "B^{1}_{M} + M*i - M + i - 1 if M >= 0"
    );
    let (code, isl, _) = run(&["regions", "fixtures/procs/rows.loop", "--format", "isl"]);
    assert_eq!(code, 0);
    assert!(isl.contains("# call F._P1"), "{isl}");
}

/// `flow --calls`: the answers for rows.loop, worked out by hand. Inline:
/// each call L[i] reads row i of B (never written before) and s from I; F
/// reads row 2 written by L[2]; F's reads of V all see F's own writes. The
/// summary of fill takes every read of Y as upward exposed, so it adds
/// `call F reads V from the initial value`.
#[test]
fn flow_at_call_granularity() {
    let (code, inline, err) = run(&["flow", "fixtures/procs/rows.loop", "--calls", "inline"]);
    assert_eq!(code, 0, "{err}");
    let mut want = String::from("R reads access 0 from call L[1]\nR reads access 1 from call F\n");
    for i in 1..=4 {
        want +=
            &format!("call L[{i}] reads B from the initial value\ncall L[{i}] reads s from I\n");
    }
    want += "call F reads B from call L[2]\n";
    let body = |s: &str| s.split_once('\n').unwrap().1.to_string();
    assert_eq!(body(&inline), want);
    assert!(
        inline.contains("summary contains inline: yes; equal: no"),
        "{inline}"
    );
    let (_, summary, _) = run(&["flow", "fixtures/procs/rows.loop", "--calls", "summary"]);
    assert_eq!(
        body(&summary),
        want + "call F reads V from the initial value\n"
    );
}
