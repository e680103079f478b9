//! Covers (docs/rules.md §1): an `if`/`else` that writes a cell in both
//! branches leaves no older value of it behind. fixtures/loops/covers.loop
//! has σ worked out by hand in its header; every engine gives it (the
//! walk, the dd engine, the symbolic FADA sets), and the random programs of
//! dataflow_agree.rs and symbolic_fada.rs check the rest against the
//! references. On C, the temporary of fixtures/c/real/select_temp.c is
//! expanded to one cell per iteration, proved for every N.

mod support;

const COVERS: &str = "fixtures/loops/covers.loop";
const SELECT: &str = "fixtures/c/real/select_temp.c";

fn flow(args: &[&str]) -> String {
    let (code, out, err) = support::run(args);
    assert_eq!(code, 0, "{err}");
    out
}

/// The bounded σ at N = 3, line by line as the header works it out.
#[test]
fn bounded_sigma_is_the_hand_answer_on_every_engine() {
    let out = flow(&["flow", COVERS]);
    for line in [
        "T1[i] reads x (access 0) from S1[i]   for i = 0..3\n",
        "R1[i] reads x (access 0) from X0   for i = 0\n",
        "R1[i] reads x (access 0) from S1[i-1] or S2[i-1] or S3[i-1]   for i = 1..3\n",
        "U[i] reads x (access 0) from S1[i] or S2[i] or S3[i]   for i = 0..3\n",
        "U[i] reads y (access 1) from T1[i] or R1[i]   for i = 0..3\n",
        "U[i] reads z (access 2) from W1[i] or the initial value   for i = 0\n",
        "U[i] reads z (access 2) from W1[i-3] or W1[i-2] or W1[i-1] or W1[i] or the initial value   for i = 3\n",
        "V[i] reads w (access 0) from E1[i] or E2[i] or E3[i]   for i = 0..3\n",
    ] {
        assert!(out.contains(line), "{line} in\n{out}");
    }
    assert_eq!(flow(&["flow", "--engine", "dd", COVERS]), out);
}

/// The possible-source sets for every N say the same.
#[test]
fn symbolic_sets_are_the_hand_answer() {
    let out = flow(&["flow", "--symbolic", COVERS]);
    for block in [
        "U(i) reads x (access 0) from one of (possible sources: control is not static):\n  S1(i)\n  S2(i)\n  S3(i)\n",
        "U(i) reads y (access 1) from one of (possible sources: control is not static):\n  T1(i)\n  R1(i)\n",
        "R1(i) reads x (access 0) from one of (possible sources: control is not static):\n  X0() where i <= 0\n  S1(i - 1) where i >= 1\n  S2(i - 1) where i >= 1\n  S3(i - 1) where i >= 1\n",
        "U(i) reads z (access 2) from one of (possible sources: control is not static):\n  W1(i') where i' >= 0 and i >= i' + 1\n  W1(i)\n  initial\n",
        "V(i) reads w (access 0) from one of (possible sources: control is not static):\n  E1(i)\n  E2(i)\n  E3(i)\n",
    ] {
        assert!(out.contains(block), "{block} in\n{out}");
    }
}

/// `x` set on both branches, then read: one cell per iteration, proved
/// for every N, and loop i runs in parallel.
#[test]
fn a_temporary_set_on_both_branches_expands_to_one_cell_per_iteration() {
    let out = flow(&["expand", "--emit", "code", SELECT]);
    assert!(
        out.contains("// x: maximal\n//   static: proved for every N"),
        "{out}"
    );
    assert!(
        out.contains("      x_1[i] = a[i] * 2.0;\n")
            && out.contains("      x_1[i] = b[i] - 1.0;\n"),
        "{out}"
    );
    assert!(
        out.contains("out_1[i] = x_1[i] * x_1[i] + x_1[i];"),
        "{out}"
    );
    let pragma = out
        .find("#pragma omp parallel for")
        .expect("a parallel loop");
    assert!(out[pragma..].contains("for (int i = 0;"), "{out}");
    let report = flow(&["privatize", SELECT]);
    assert!(
        report.contains("loop i@12: parallel after privatizing x\n")
            && report.contains("  x: private; no copy-in; nothing live after\n"),
        "{report}"
    );
}

/// Privatization outside static control, proved from the possible sources
/// (docs/expansion.md §9.1): `x` in select_temp.c becomes `private(x)`
/// without `--allow-unproved`. Where a condition reads the private
/// scalar (condition_private.c), conditions have no possible sources: the
/// same verdict stays checked at the samples only, and no loop is marked.
#[test]
fn privatization_outside_static_control_is_proved_from_possible_sources() {
    let out = flow(&["privatize", "--emit", "code", SELECT]);
    assert!(
        out.starts_with("// arrayflow privatize --emit code: loops parallel (as written or after privatization) for every parameter value (possible sources: control is not static),\n"),
        "{out}"
    );
    assert!(
        out.contains("#pragma omp parallel for private(x) if("),
        "{out}"
    );
    let json = flow(&["privatize", "--format", "json", SELECT]);
    assert!(json.contains("\"proved\":true"), "{json}");
    let unproved = "fixtures/c/sound/condition_private.c";
    let out = flow(&["privatize", "--emit", "code", unproved]);
    assert!(
        out.starts_with("// arrayflow privatize --emit code: no loop marked parallel: not proved for every parameter value.\n"),
        "{out}"
    );
    assert!(!out.contains("#pragma omp"), "{out}");
    let report = flow(&["privatize", unproved]);
    assert!(
        report.contains("(from σ at these sizes; not proved for others)\nloop i@12: parallel after privatizing t\n"),
        "{report}"
    );
}
