//! Sibling loops with one counter name (fixtures/loops/siblings.loop: `for
//! i` on line 10 carries a flow dependence, `for i` on line 13 only the
//! anti and output dependences of the scalar `t`) are told apart by every
//! command: the emitted code, `--parallel i@LINE`, and the reports, which
//! name loops `i@LINE`.

use std::process::{Command, Output};

const FILE: &str = "fixtures/loops/siblings.loop";

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .expect("run arrayflow")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The `for i` lines of a `.loop` program, in order.
fn for_i(program: &str) -> Vec<&str> {
    (program.lines().map(str::trim))
        .filter(|l| l.starts_with("for i "))
        .collect()
}

/// MSE expands `t`, so the second loop carries nothing and is marked
/// `doall`; the first still carries S's flow dependence. When the exact
/// tests' verdict was kept by counter name, the first loop's dependence
/// took the mark off both.
#[test]
fn the_emitted_code_marks_the_second_loop_doall() {
    let o = run(&["expand", FILE, "--emit", "code"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert_eq!(
        for_i(&out),
        ["for i = 1 to N do", "for i = 1 to N doall"],
        "{out}"
    );
    let doall = (out.lines())
        .find(|l| l.starts_with("# doall"))
        .expect("doall line");
    // The copy-out loops (o1 for A, o1_1 for B) carry nothing either.
    assert!(doall.ends_with(": i@13, o1, o1_1"), "{doall}");
}

/// `--parallel i@13` runs the second loop in parallel (t expanded along
/// it), `i@10` the first, which breaks S's flow dependence (E0602); a bare
/// `i` and a line with no `for i` are refused with the loops' lines.
#[test]
fn parallel_picks_a_loop_by_its_line() {
    let contract = |p: &str| run(&["expand", FILE, "--transform", "contract", "--parallel", p]);
    let o = contract("i@13");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains("(parallel: i@13)\n"), "{out}");
    assert!(out.contains("t: expanded along parallel i@13\n"), "{out}");
    assert!(
        out.contains("output T -> T on t: broken by parallel i@13 ("),
        "{out}"
    );

    let o = contract("i@10");
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("error[E0602]"), "{err}");

    // A bare `i` names both loops, so the first one's flow dependence is
    // broken (E0602 at i@10), as before lines could be given.
    let o = contract("i");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(err.contains("error[E0602]"), "{err}");
    assert!(err.contains("i@10"), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    let o = contract("i@11");
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "`--parallel i@11`: no `for i` loop starts on that line; there are `i@10`, `i@13`"
        ),
        "{err}"
    );
    let o = contract("i@x");
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("COUNTER@LINE"), "{err}");

    // With --emit code the header names the chosen loop, and only it runs
    // doall.
    let o = run(&[
        "expand",
        FILE,
        "--transform",
        "contract",
        "--parallel",
        "i@13",
        "--emit",
        "code",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        out.contains("# storage under a schedule: parallel i@13\n"),
        "{out}"
    );
    assert_eq!(
        for_i(&out),
        ["for i = 1 to N do", "for i = 1 to N doall"],
        "{out}"
    );
}

/// `privatize` and `expand` name each loop with its line.
#[test]
fn reports_name_both_loops_with_their_lines() {
    let o = run(&["privatize", FILE]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains("loop i@10: not parallel\n"), "{out}");
    assert!(
        out.contains("loop i@13: parallel after privatizing t\n"),
        "{out}"
    );

    let o = run(&["expand", FILE]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let named: Vec<&str> = (out.lines().map(str::trim_start))
        .filter(|l| l.starts_with("i@"))
        .collect();
    assert_eq!(named.len(), 2, "{out}");
    assert!(named[0].starts_with("i@10"), "{out}");
    assert!(named[1].starts_with("i@13"), "{out}");
}
