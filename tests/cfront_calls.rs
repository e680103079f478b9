//! Calls to functions of the same C file (docs/c.md, *Calls*):
//! `fixtures/c/calls/rows.c` is the C twin of `fixtures/procs/rows.loop`
//! and must lower to the hand-inlined `rows.inlined.loop` and give the same
//! summaries and `flow --calls` output; calls that cannot be inlined keep
//! the unknown-call reading (W0905 may-writes).

use arrayflow::diagnostics::{has_errors, SourceFiles};
use arrayflow::model::Program;
use std::path::Path;

const C: &str = "fixtures/c/calls/rows.c";
const LOOP: &str = "fixtures/procs/rows.loop";
const INLINED: &str = "fixtures/procs/rows.inlined.loop";

fn compile(path: &str) -> Program {
    let source = std::fs::read_to_string(path).unwrap();
    let mut files = SourceFiles::new();
    let id = files.add(path.to_string(), source);
    let (p, diags) = arrayflow::cli::compile(Path::new(path), files.source(id), id);
    assert!(!has_errors(&diags), "{}", files.render_all(&diags));
    p.unwrap()
}

fn arrayflow(args: &[&str]) -> (i32, String, String) {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(args)
        .output()
        .unwrap();
    let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (o.status.code().unwrap_or(-1), s(&o.stdout), s(&o.stderr))
}

fn sorted_lines(s: &str) -> Vec<String> {
    let mut v: Vec<String> = s.lines().map(str::to_string).collect();
    v.sort();
    v
}

/// C declares arrays where they are first used (`s` before `B`), `.loop`
/// where they are written: declarations compare as sets, bodies exactly.
#[test]
fn rows_c_lowers_to_the_hand_inlined_program() {
    let (c, l) = (compile(C), compile(INLINED));
    assert_eq!(
        arrayflow::print::body(&c, &c.body, 0),
        arrayflow::print::body(&l, &l.body, 0)
    );
    assert_eq!(
        sorted_lines(&arrayflow::print::declarations(&c)),
        sorted_lines(&arrayflow::print::declarations(&l))
    );
    let (a, b) = (arrayflow(&["flow", C]), arrayflow(&["flow", INLINED]));
    assert_eq!((a.0, &a.1), (0, &b.1));
}

#[test]
fn flow_calls_on_c_equals_flow_calls_on_the_loop_file() {
    for mode in ["summary", "inline"] {
        let a = arrayflow(&["flow", "--calls", mode, C]);
        let b = arrayflow(&["flow", "--calls", mode, LOOP]);
        assert_eq!(a.0, 0, "{}", a.2);
        assert!(a.1.contains("call L[4] reads s from I"), "{}", a.1);
        assert_eq!(sorted_lines(&a.1), sorted_lines(&b.1), "--calls {mode}");
    }
}

/// The `procedure` and `call` blocks of `regions`, without their source
/// positions, each array's lines sorted as a unit.
fn summaries(out: &str) -> Vec<(String, Vec<String>)> {
    let mut blocks: Vec<(String, Vec<String>)> = Vec::new();
    let mut on = false;
    for line in out.lines() {
        if !line.starts_with(' ') {
            on = line.starts_with("procedure ") || line.starts_with("call ");
            if on {
                let head = line.split(" at ").next().unwrap_or(line).to_string();
                blocks.push((head, Vec::new()));
            }
        } else if on {
            let arrays = &mut blocks.last_mut().unwrap().1;
            if !line.starts_with("    ") || arrays.is_empty() {
                arrays.push(String::new());
            }
            let a = arrays.last_mut().unwrap();
            a.push_str(line);
            a.push('\n');
        }
    }
    for (_, arrays) in &mut blocks {
        arrays.sort();
    }
    blocks
}

#[test]
fn regions_on_c_prints_the_loop_file_summaries() {
    let (a, b) = (arrayflow(&["regions", C]), arrayflow(&["regions", LOOP]));
    assert_eq!(a.0, 0, "{}", a.2);
    let (sa, sb) = (summaries(&a.1), summaries(&b.1));
    let heads: Vec<&str> = sa.iter().map(|(h, _)| h.as_str()).collect();
    assert_eq!(
        heads,
        [
            "procedure scale",
            "procedure fill",
            "call L: scale",
            "call F: fill",
            "call F._P1: scale"
        ]
    );
    assert_eq!(sa, sb);
}

/// A recursive call and a call through a function pointer are not inlined:
/// the warning says so and the call may write what it is passed.
#[test]
fn calls_that_cannot_be_inlined_keep_the_may_write_reading() {
    let f = "fixtures/c/calls/recursive.c";
    let (code, out, err) = arrayflow(&["fmt", f]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("W0905") && err.contains("this call to `halve` is not inlined"));
    assert!(
        out.contains("H: A[__any()] = halve(A[__any()], N);"),
        "{out}"
    );
    // `g` is a function pointer: a barrier (docs/c.md, Calls).
    assert!(
        out.contains(
            "T.1: __effects = __effect_g(__effects, Y[__any()]);\n\
             T.2: Y[__any()] = __effect_g(__effects);\nT: g(Y[__any()]);"
        ),
        "{out}"
    );
    assert!(
        err.contains(
            "calls to `bump` are not inlined: it uses `A`, which is not one of its parameters"
        ),
        "{err}"
    );
    // `bump` assigns the global `A`: a barrier.
    assert!(
        out.contains(
            "B.1: __effects = __effect_bump(__effects, A[__any()]);\n\
             B.2: A[__any()] = __effect_bump(__effects);\nB: bump(A[__any()]);"
        ),
        "{out}"
    );
    assert_eq!(out.matches("U: A[0] = Z[1];").count(), 1, "{out}");
    // halve's own body is still analysed, once.
    assert_eq!(out.matches("S: X[i] = X[i] / 2;").count(), 1, "{out}");
}

/// A `double` parameter is a copy in C: a callee that assigns it is not
/// inlined (binding it to the caller's cell would write that cell); one
/// that only reads it is.
#[test]
fn a_callee_assigning_a_by_value_parameter_is_not_inlined() {
    let f = "fixtures/c/calls/byvalue.c";
    let (code, out, err) = arrayflow(&["fmt", f]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "calls to `scaled` are not inlined: it assigns its parameter `f`, which C passes by value"
        ),
        "{err}"
    );
    assert!(
        out.contains("C: A[__any()] = scaled(A[__any()], s);"),
        "{out}"
    );
    // `fill` reads its `f`: inlined, `f` bound to the caller's `s`.
    assert!(out.contains("D.T: A[i] = s;"), "{out}");
    // The caller's `s` is never written by a call: R reads I's value.
    let (code, flow, err) = arrayflow(&["flow", f]);
    assert_eq!(code, 0, "{err}");
    assert!(flow.contains("R reads s (access 0) from I\n"), "{flow}");
}

/// A preprocessed file: the calls' record is made from the preprocessor's
/// output, as the program is (from the file's own text, `N` was a parameter
/// the program did not have: inexact summaries, and `regions` indexed
/// parameters that were not there).
#[test]
fn calls_of_a_preprocessed_file_are_summarised_from_its_preprocessed_text() {
    const MACRO: &str = "fixtures/c/calls/scale-macro.c";
    let (code, out, err) = arrayflow(&[
        "flow",
        "--preprocess",
        "always",
        "--calls",
        "summary",
        MACRO,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("summaries exact: yes"), "{out}");
    // By hand: the call reads B[0] from I and A from the initial value; R's
    // A[3] comes from the call.
    let body: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(
        body,
        [
            "R reads access 0 from call C",
            "call C reads B from I",
            "call C reads A from the initial value",
        ],
        "{out}"
    );
    let (code, out, err) = arrayflow(&["regions", "--preprocess", "always", MACRO]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("procedure scale"), "{out}");
    assert!(out.contains("mod   X^{1}_{7} + 0  (exact)"), "{out}");
}
