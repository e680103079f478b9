//! Verdicts on real-C shapes that used to be wrong, each worked out by
//! hand (`fixtures/c/sound/`): a call the file does not define is a
//! barrier (docs/c.md, *Calls*), and macro arithmetic in bounds, subscripts
//! and sizes follows `--param`, or is assumed at its value (*Folding*).

fn arrayflow(args: &[&str]) -> (i32, String, String) {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(args)
        .output()
        .unwrap();
    let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (o.status.code().unwrap_or(-1), s(&o.stdout), s(&o.stderr))
}

const EXIT: &str = "fixtures/c/sound/exitcall.c";
const EFFECTS: &str = "fixtures/c/sound/effects.c";
const BOUND: &str = "fixtures/c/sound/macrobound.c";
const EXTENTS: &str = "fixtures/c/sound/extents.c";
const CHECK: &str = "fixtures/c/sound/checkexit.c";
const STRIDE: &str = "fixtures/c/sound/stride.c";
const ROWS: &str = "fixtures/c/sound/rows.c";

/// `if (d[i] < 0) exit(0);` in loop i (line 8): never parallel, with or
/// without `--allow-opaque`, which only lets the C be printed.
#[test]
fn a_loop_that_may_exit_is_not_parallel() {
    let (code, out, err) = arrayflow(&["privatize", "--param", "LEN=8", EXIT]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("loop i@8: not parallel"), "{out}");
    // The cell the report names is explained, with the call behind it.
    assert!(
        out.contains(
            "\n# `__effects` stands for the state that calls to `exit` may read and write"
        ),
        "{out}"
    );
    assert!(
        err.contains("W0905") && err.contains("it ends the run"),
        "{err}"
    );
    let (code, out, err) = arrayflow(&["privatize", "--param", "LEN=8", "--emit", "code", EXIT]);
    assert_eq!(code, 1, "{out}");
    assert!(
        err.contains("E0911") && err.contains("exitcall.c:9:19"),
        "{err}"
    );
}

/// The C printed back has the call as written, once, and nothing of the
/// model's `__effects`: no statement, no declaration, no prototype of a
/// function `<stdlib.h>` declares, and loop i stays sequential.
#[test]
fn a_barrier_is_printed_as_the_call_alone() {
    for cmd in ["privatize", "expand"] {
        let args = [
            cmd,
            "--param",
            "LEN=8",
            "--emit",
            "code",
            "--allow-opaque",
            EXIT,
        ];
        let (code, out, err) = arrayflow(&args);
        assert_eq!(code, 0, "{cmd}: {err}");
        // The C, without the report in `//` comments above it (which
        // names `__effects` as the expansion saw it).
        let out: String = (out.lines())
            .filter(|l| !l.starts_with("//"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(out.matches("exit(0);").count(), 1, "{cmd}: {out}");
        assert!(!out.contains("__effect"), "{cmd}: {out}");
        assert!(!out.contains("__any"), "{cmd}: {out}");
        assert!(!out.contains("double exit("), "{cmd}: {out}");
        assert!(
            !out.contains("#pragma omp parallel for\n  for (int i"),
            "{cmd}: {out}"
        );
    }
}

/// `note(i)` may write `a` (loop i, line 14), `tick()` follows the last
/// `tick()` (loop m, line 20: not a reduction of `s`); `sqrt` and `abs`
/// are pure (loop j, line 18).
#[test]
fn calls_order_their_loops_and_pure_ones_do_not() {
    let (code, out, err) = arrayflow(&["privatize", "--param", "N=6", "--allow-opaque", EFFECTS]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("loop i@14: not parallel"), "{out}");
    assert!(out.contains("loop j@18: parallel"), "{out}");
    assert!(out.contains("loop m@20: not parallel"), "{out}");
    assert!(!out.contains("reduction"), "{out}");
    // One barrier warning per call, none for `sqrt` or `abs`.
    assert_eq!(err.matches("[W0905]").count(), 2, "{err}");
}

/// `i < LEN/2` is `i <= LEN_div_2 - 1`, a parameter that stands for
/// `LEN / 2` (16000): a `for` loop, and a[i + 5] written at i is read at
/// i + 5: distance 5, not parallel.
#[test]
fn a_bound_over_macros_is_a_derived_parameter_and_keeps_its_dependence() {
    let (code, out, err) = arrayflow(&["privatize", BOUND]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("loop i@8: not parallel"), "{out}");
    assert!(!err.contains("W0903") && !err.contains("W0912"), "{err}");
    let (code, out, err) = arrayflow(&["deps", BOUND]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("a: _S1 write -> _S1 read 0: dependent (flow); loops (i); directions (+); distances (5)"),
        "{out}"
    );
    let (_, out, _) = arrayflow(&["fmt", BOUND]);
    assert!(
        out.contains("param LEN_div_2 = 16000; // LEN / 2\n"),
        "{out}"
    );
    assert!(out.contains("for i = 0 to LEN_div_2 - 1 do"), "{out}");
    // It follows `LEN`: at LEN = 12 the loop runs 6 times, i = 0..5, and
    // writes a[5..10].
    let (code, out, err) = arrayflow(&["run", "--param", "LEN=12", BOUND]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("LEN=12, LEN_div_2=6,"), "{out}");
    assert!(
        out.contains("a[10] = ") && out.contains("from _S1[5]"),
        "{out}"
    );
    assert!(!out.contains("from _S1[6]"), "{out}");
    // The C printed back says what the source said.
    let (code, out, err) = arrayflow(&["privatize", "--emit", "code", BOUND]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("i <= (LEN / 2) - 1;"), "{out}");
}

/// N = 10: x has N*N = 100 cells, HALF = (10 + 1)/2 = 5 (truncated), so i
/// runs to 4; x[i + (N >> 1)] is x[i + 5]. `N * N`, `HALF` and `N >> 1`
/// are derived parameters; 2*N stays affine in N; nothing is folded for
/// good (no W0912), so every one follows `--param N=...`.
#[test]
fn sizes_subscripts_and_bounds_fold_and_affine_ones_stay() {
    let (code, out, err) = arrayflow(&["fmt", EXTENTS]);
    assert_eq!(code, 0, "{err}");
    for line in [
        "param N_times_N = 100; // N * N\n",
        "param HALF = 5;\n",
        "param N_shr_1 = 5; // N >> 1\n",
        "real x[0..N_times_N - 1];",
        "real y[0..2 * N - 1];",
        "for i = 0 to HALF - 1 do",
        "x[i + N_shr_1] = 1;",
        "for j = 0 to 2 * N - 1 do",
    ] {
        assert!(out.contains(line), "{line} in {out}");
    }
    assert!(!err.contains("W0903") && !err.contains("W0904"), "{err}");
    assert!(!err.contains("W0912"), "{err}");
    // At N = 4: HALF = (4 + 1)/2 = 2 (C truncates), N * N = 16, N >> 1 = 2.
    let (code, out, err) = arrayflow(&["run", "--param", "N=4", EXTENTS]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("N=4, HALF=2, N_times_N=16, N_shr_1=2,"),
        "{out}"
    );
}

/// `x[i*N + j]` with `#define N 10`: the factor is folded at 10 and the
/// program assumes `N == 10`. Then row i is x[10i .. 10i + 9], written by
/// iteration i alone: loop i (line 9) is parallel as written, with nothing
/// to privatize, and the report says what it assumes. `--param N=20`
/// would pair bounds of 20 with rows of 10, which C never computes: it
/// is refused.
#[test]
fn a_macro_factor_of_a_counter_is_assumed_and_its_rows_are_disjoint() {
    let (code, out, err) = arrayflow(&["privatize", ROWS]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("loop i@9: parallel\n  x: shared\n"), "{out}");
    assert!(
        out.contains("\n# assumes `N == 10`: the macro multiplies a counter"),
        "{out}"
    );
    assert_eq!(err.matches("[W0912]").count(), 2, "{err}");
    assert!(err.contains("the analysis takes `N` = 10"), "{err}");
    let (_, out, _) = arrayflow(&["fmt", ROWS]);
    assert!(out.contains("assume N == 10;\n"), "{out}");
    assert!(out.contains("x[i * 10 + j] = y[i * 10 + j] * "), "{out}");
    for command in ["privatize", "flow"] {
        let (code, _, err) = arrayflow(&[command, "--param", "N=20", ROWS]);
        assert_eq!(code, 1, "{command}: {err}");
        assert!(
            err.contains(
                "error[E0301]: the parameter values break the program's assumption `N == 10`"
            ),
            "{command}: {err}"
        );
    }
    let (code, out, err) = arrayflow(&["privatize", "--emit", "code", ROWS]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("// assumes `N == 10`"), "{out}");
    assert!(
        out.contains("#pragma omp parallel for if((long)N * N >= ARRAYFLOW_PARALLEL_WORK)\n  for (int i = 0;"),
        "{out}"
    );
    assert!(!out.contains("malloc"), "{out}");
}

/// `check`, defined in the file, may call `exit`: it is not inlined, and
/// a call to it is a barrier (loop i, line 12).
#[test]
fn a_function_of_the_file_that_may_exit_is_a_barrier() {
    let (code, out, err) = arrayflow(&["privatize", "--allow-opaque", CHECK]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("loop i@12: not parallel"), "{out}");
    assert!(err.contains("calls to `check` are not inlined"), "{err}");
    assert!(
        err.contains("`check` assigns a global or makes a call that is a barrier"),
        "{err}"
    );
}

/// A global bound in a region that calls a barrier may change under it:
/// it is a cell the call may write, not a parameter, so the loops are
/// `while` loops (W0903), the barrier names `n`, the second loop's
/// "parallel" is from samples, and `--emit code` marks no loop.
#[test]
fn a_global_bound_a_call_may_change_is_not_a_parameter() {
    const GLOBAL: &str = "fixtures/c/sound/globalbound.c";
    let (code, out, err) = arrayflow(&["privatize", GLOBAL]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("`a`, `b`, `n` and the program's other state"),
        "{err}"
    );
    assert!(err.contains("W0903"), "{err}");
    assert!(out.contains("not proved for others"), "{out}");
    assert!(out.contains("loop i@15: not parallel"), "{out}");
    // `--allow-opaque`: the call is printed as written (E0911 otherwise).
    let (code, out, err) = arrayflow(&["privatize", "--emit", "code", "--allow-opaque", GLOBAL]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("#pragma omp"), "{out}");
    // Without the call, `n` is a parameter and the second loop is proved.
    let text = std::fs::read_to_string(GLOBAL)
        .unwrap()
        .replace("    grow();\n", "");
    let dir = std::env::temp_dir().join(format!("arrayflow-globalbound-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plain = dir.join("plain.c");
    std::fs::write(&plain, text).unwrap();
    let (code, out, err) = arrayflow(&[
        "privatize",
        "--param",
        "n=50",
        "--emit",
        "code",
        plain.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.matches("#pragma omp parallel for").count(), 2, "{out}");
}

/// Without a preprocessor, a function-like macro is a pure function only
/// when its body is: `SQ` is (loop i@13 parallel), `BUMP` assigns a
/// global, so it is a barrier (loop i@15 not parallel).
#[test]
fn an_unexpanded_macro_that_assigns_is_a_barrier() {
    const MACROS: &str = "fixtures/c/sound/macrocall.c";
    let (code, out, err) = arrayflow(&["privatize", "--preprocess", "never", MACROS]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("loop i@13: parallel"), "{out}");
    assert!(out.contains("loop i@15: not parallel"), "{out}");
    assert!(
        err.contains("`BUMP` is a function-like macro whose body assigns"),
        "{err}"
    );
    assert!(
        !err.contains("`SQ` is a function-like macro whose"),
        "{err}"
    );
}

/// `log` may set `errno`: in a file that reads `errno` the calls are
/// barriers (loop i@10 not parallel); the same loop in a file that never
/// names `errno` is parallel, as `<math.h>` calls are pure there, and
/// every report of it says what that assumes.
#[test]
fn math_calls_are_barriers_where_the_file_reads_errno() {
    const ERRNO: &str = "fixtures/c/sound/errno.c";
    let (code, out, err) = arrayflow(&["privatize", ERRNO]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("loop i@10: not parallel"), "{out}");
    assert!(err.contains("`log` may set `errno`"), "{err}");
    let text = std::fs::read_to_string(ERRNO).unwrap();
    let without = text
        .replace("#include <errno.h>", "")
        .replace("errno", "status");
    let dir = std::env::temp_dir().join(format!("arrayflow-errno-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("status.c");
    std::fs::write(&file, without).unwrap();
    let (code, out, err) = arrayflow(&["privatize", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("loop i@10: parallel"), "{out}");
    // That verdict rests on `log` leaving `errno` alone: the report, its
    // JSON and the emitted C's header say so; the file that reads `errno`
    // assumes nothing.
    const ASSUMES: &str = "assumes `log` set no `errno` that is read after this code";
    assert!(out.contains(&format!("# {ASSUMES}")), "{out}");
    let status = file.to_str().unwrap();
    let (code, json, err) = arrayflow(&["privatize", "--format", "json", status]);
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let listed = json["assumes"].as_array().map(Vec::len);
    assert_eq!(listed, Some(1), "{json}");
    let (code, c, err) = arrayflow(&["privatize", "--emit", "code", status]);
    assert_eq!(code, 0, "{err}");
    assert!(c.contains(&format!("// {ASSUMES}")), "{c}");
    for args in [
        &["privatize", ERRNO][..],
        &["privatize", "--emit", "code", ERRNO],
    ] {
        let (code, out, err) = arrayflow(args);
        assert_eq!(code, 0, "{err}");
        assert!(!out.contains("assumes"), "{out}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `i += inc`: analysed for `inc >= 1`, an assumption the user did not
/// write, so the report and the emitted C's header state it, and
/// `--param inc=0` is refused.
#[test]
fn a_parameter_step_is_an_assumption_every_report_states() {
    let said = "assumes `inc >= 1`: a `for` loop steps by it";
    let (code, out, err) = arrayflow(&["privatize", "--param", "n=20", "--param", "inc=3", STRIDE]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("not proved for others"), "{out}");
    assert!(out.contains(&format!("\n# {said}")), "{out}");
    let args = [
        "privatize",
        "--param",
        "n=20",
        "--param",
        "inc=3",
        "--emit",
        "code",
        STRIDE,
    ];
    let (code, out, err) = arrayflow(&args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("\n// {said}")), "{out}");
    let (code, _, err) = arrayflow(&["privatize", "--param", "n=20", "--param", "inc=0", STRIDE]);
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("E0301"), "{err}");
}
