//! The single-assignment baseline on every case where Polly's pass gives up,
//! the parallelism report on the paper's examples and other fixtures, and
//! the `expand` / `plot` commands. Expected values are worked out by hand
//! from the programs (comments say how).

use arrayflow::dataflow::Config;
use arrayflow::expansion::parallel::{report, Carried, LoopReport};
use arrayflow::expansion::sa::{single_assignment, PhiReason, PollyCase, ReadKind, SaReport};
use arrayflow::expansion::{expand, Expansion};
use arrayflow::model::Program;
use std::process::Command;

#[allow(dead_code)]
mod kernels;

use kernels::{fixture, fixture_path};

fn run(name: &str, max_trips: u32) -> (Program, Expansion) {
    let p = fixture(name);
    let config = Config {
        max_trips,
        ..Config::default()
    };
    let e = expand(&p, &config).unwrap();
    (p, e)
}

fn sa(name: &str) -> (Program, SaReport) {
    let (p, e) = run(name, 3);
    let r = single_assignment(&p, &e);
    (p, r)
}

/// The cases Polly gives up on for the array named `array`.
fn cases(p: &Program, r: &SaReport, array: &str) -> Vec<PollyCase> {
    let id = p.array(array).unwrap();
    r.polly
        .iter()
        .find(|(a, _)| *a == id)
        .map(|(_, v)| v.clone())
        .unwrap_or_default()
}

fn read_kind(r: &SaReport, site: &str) -> ReadKind {
    r.reads
        .iter()
        .find(|x| x.site_name == site)
        .unwrap()
        .kind
        .clone()
}

#[test]
fn polly_more_than_one_write() {
    // W1: B[i], W2: B[j] for j = 0..N-1, R reads B[i]: W2[i, i] overwrote
    // W1[i], so R has one source, W2, through (i) -> (i, i).
    let (p, r) = sa("polly-two-writes.loop");
    assert_eq!(cases(&p, &r, "B"), vec![PollyCase::SeveralWrites]);
    assert_eq!(read_kind(&r, "R"), ReadKind::Direct { stmt: "W2".into() });
    assert_eq!(r.phi_reads(), (0, 0));
    // B_W1 has N = 4 cells, B_W2 N² = 16.
    assert_eq!(r.memory(p.array("B").unwrap()), (20, 20));
}

#[test]
fn polly_read_from_original_array() {
    // R[i] reads B[i] before the j loop of iteration i writes it: W[i-1, i]
    // for i >= 1, the initial value for i = 0.
    let (p, r) = sa("polly-read-before-write.loop");
    assert_eq!(cases(&p, &r, "B"), vec![PollyCase::ReadFromOriginal]);
    assert_eq!(
        read_kind(&r, "R"),
        ReadKind::Phi(vec![PhiReason::InitialAndWrites])
    );
    assert_eq!(r.phi_reads(), (1, 4));
}

#[test]
fn polly_load_after_store() {
    // W: B[i] then R: use(B[i]) in the same (i, j) iteration: R reads W[i, j].
    let (p, r) = sa("polly-read-after-write.loop");
    assert_eq!(cases(&p, &r, "B"), vec![PollyCase::LoadAfterStore]);
    assert_eq!(read_kind(&r, "R"), ReadKind::Direct { stmt: "W".into() });
}

#[test]
fn polly_several_dependences_per_read() {
    // S: tmp = tmp + 2 reads I at i = 0 and S[i-1] after: two statements.
    let (p, r) = sa("polly-phi.loop");
    assert_eq!(
        cases(&p, &r, "tmp"),
        vec![PollyCase::SeveralWrites, PollyCase::SeveralDependences]
    );
    assert_eq!(
        read_kind(&r, "S"),
        ReadKind::Phi(vec![PhiReason::SeveralStatements])
    );
    // Storage Figure 1: s = s + 1 reads R[i] at j = 1, S[i, j-1] after.
    let (p, r) = sa("storage-figure1.loop");
    assert!(cases(&p, &r, "s").contains(&PollyCase::SeveralDependences));
    assert_eq!(
        read_kind(&r, "S"),
        ReadKind::Phi(vec![PhiReason::SeveralStatements])
    );
}

#[test]
fn polly_may_writes() {
    // Example 3: S writes A[foo(i)], a may-write; R may read S[i] or any
    // T[i, j]: several sources per instance.
    let (p, r) = sa("mse-example3.loop");
    let c = cases(&p, &r, "A");
    assert!(c.contains(&PollyCase::MayWrite), "{c:?}");
    assert!(c.contains(&PollyCase::SeveralDependences), "{c:?}");
    assert_eq!(
        read_kind(&r, "R"),
        ReadKind::Phi(vec![
            PhiReason::SeveralStatements,
            PhiReason::SeveralSources
        ])
    );
    // Example 1: S runs a data-dependent number of times (a may-write in
    // Polly's terms); R reads T[i] or any S[i, w].
    let (p, r) = sa("mse-example1.loop");
    assert!(cases(&p, &r, "x").contains(&PollyCase::MayWrite));
    assert_eq!(r.phi_reads(), (2, 5 + 5 * 3));
}

#[test]
fn polly_expandable_case() {
    // polly-fie: Polly expands it; every read is direct.
    let (p, r) = sa("polly-fie.loop");
    assert!(r.polly.is_empty(), "{:?}", r.polly);
    assert_eq!(read_kind(&r, "T"), ReadKind::Direct { stmt: "S".into() });
    assert_eq!(read_kind(&r, "S"), ReadKind::Direct { stmt: "U".into() });
    assert_eq!(r.memory(p.array("B").unwrap()), (16, 16));
    // polly-nested-map: T[i] reads B[0, i] from S[0, i]: affine.
    let (_, r) = sa("polly-nested-map.loop");
    assert_eq!(read_kind(&r, "T"), ReadKind::Direct { stmt: "S".into() });
}

const ALL: Carried = Carried {
    flow: true,
    anti: true,
    output: true,
};
const NONE: Carried = Carried {
    flow: false,
    anti: false,
    output: false,
};
const FLOW: Carried = Carried {
    flow: true,
    anti: false,
    output: false,
};
const OUTPUT: Carried = Carried {
    flow: false,
    anti: false,
    output: true,
};

fn loops(name: &str, trips: u32) -> Vec<LoopReport> {
    let (p, e) = run(name, trips);
    report(&p, &e).expect("within the memory budget")
}

fn carried(l: &[LoopReport], name: &str) -> (Carried, Carried, Carried) {
    let l = l.iter().find(|l| l.name == name).unwrap();
    (l.original, l.mse, l.sa)
}

#[test]
fn parallelism_of_the_paper_examples() {
    // Example 1: x is reused by every i (all kinds); after MSE x[i] is
    // private to i, as in SA. The while loop stays sequential: S[i, w+1]
    // reads what S[i, w] wrote (SA: flow only).
    let l = loops("mse-example1.loop", 3);
    assert_eq!(carried(&l, "i"), (ALL, NONE, NONE));
    assert_eq!(carried(&l, "_W1"), (ALL, ALL, FLOW));
    // Example 2: values flow along diagonals across i (flow in SA); j
    // iterations of one i touch different cells.
    let l = loops("mse-example2.loop", 3);
    assert_eq!(carried(&l, "i"), (ALL, ALL, FLOW));
    assert_eq!(carried(&l, "j"), (NONE, NONE, NONE));
    // Example 3: after MSE (A[.., i]) loop i is parallel (Figure 7.b).
    let l = loops("mse-example3.loop", 3);
    assert_eq!(carried(&l, "i"), (ALL, NONE, NONE));
    assert_eq!(carried(&l, "j"), (NONE, NONE, NONE));
    // The paper's claim: whatever SA makes parallel, MSE does too.
    for f in [
        "mse-example1.loop",
        "mse-example2.loop",
        "mse-example3.loop",
    ] {
        assert!(loops(f, 3).iter().all(|l| l.mse_keeps_sa()), "{f}");
    }
}

#[test]
fn parallelism_of_other_fixtures() {
    // tmp / s carried through j and reused by every i. Both are static
    // control with one source per read, so every write is its own class:
    // MSE is single assignment here, and j keeps only the true flow.
    for f in ["polly-mse-intro.loop", "storage-figure1.loop"] {
        let l = loops(f, 3);
        assert_eq!(carried(&l, "i"), (ALL, NONE, NONE), "{f}");
        assert_eq!(carried(&l, "j"), (ALL, FLOW, FLOW), "{f}");
    }
    // Storage Figure 1 at n = 4: R[i] and S[i, j] for j < n are live, each
    // its own class (n + n(n-1) = 16); S[i, n] is dead (n of them).
    let (_, e) = run("storage-figure1.loop", 3);
    assert_eq!(e.classes.total, 16);
    assert_eq!(e.arrays[0].dead_writes, 4);
    // A[l] = 3 in a 4-deep nest, never read: every write is dead and gets
    // a private cell, so nothing is carried after MSE.
    let l = loops("polly-heap-4d.loop", 3);
    for name in ["i", "j", "k"] {
        assert_eq!(carried(&l, name), (OUTPUT, NONE, NONE), "{name}");
    }
    assert_eq!(carried(&l, "l"), (NONE, NONE, NONE));
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_arrayflow"))
}

#[test]
fn expand_json_example2() {
    let out = bin()
        .args([
            "expand",
            &fixture_path("mse-example2.loop"),
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["params"]["N"], 4);
    let a = &v["arrays"][0];
    assert_eq!(a["name"], "A");
    assert_eq!(a["cells_before"], 15);
    assert_eq!(a["cells_written"], 15);
    assert_eq!(a["classes"], 19);
    assert_eq!(a["max_classes_per_cell"], 2);
    assert_eq!(a["classes_per_cell"][0], serde_json::json!([[1], 0]));
    assert_eq!(a["classes_per_cell"][5], serde_json::json!([[6], 2]));
    // S[1, 8] writes A[1] and no read sees it.
    let w = v["writes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["stmt"] == "S" && w["iter"] == serde_json::json!([1, 8]))
        .unwrap();
    assert_eq!(w["cell"], serde_json::json!([1]));
    assert_eq!(w["label"], serde_json::Value::Null);
    assert_eq!(w["dead"], true);
    // S[2, 8] reads A[2]: S[1, 7] or the initial value, label 1.
    let r = v["reads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["stmt"] == "S" && r["iter"] == serde_json::json!([2, 8]))
        .unwrap();
    assert_eq!(r["label"], 1);
    assert_eq!(r["initial"], true);
    assert_eq!(v["memory"][0]["sa"], 64 + 8);
}

#[test]
fn expand_text_and_sa() {
    let out = bin()
        .args(["expand", &fixture_path("mse-example2.loop")])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("A[6 .. 11]: x2"), "{text}");
    assert!(text.contains("A[1]: x0 (only dead writes)"), "{text}");
    let out = bin()
        .args([
            "expand",
            &fixture_path("polly-phi.loop"),
            "--transform",
            "sa",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["phi_reads"], 1);
    assert_eq!(v["polly"][0]["array"], "tmp");
}

#[test]
fn expand_and_plot_errors() {
    let status = |args: &[&str]| bin().args(args).output().unwrap().status.code();
    let ex2 = fixture_path("mse-example2.loop");
    assert_eq!(status(&["expand", "/no/such/file.loop"]), Some(2));
    assert_eq!(status(&["expand", &ex2, "--param", "M=3"]), Some(1));
    assert_eq!(status(&["expand", &ex2, "--max-instances", "10"]), Some(1));
    // The baseline is a report: `--emit` with it is a usage error, not
    // maximal static expansion's program under its name.
    let out = bin()
        .args(["expand", &ex2, "--transform", "sa", "--emit", "code"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("`--transform sa`"));
    assert_eq!(
        status(&["expand", &ex2, "--transform", "mse", "--emit", "code"]),
        Some(0)
    );
    assert_eq!(
        status(&["plot", &ex2, "--stmt", "Q", "-o", "/tmp/x.svg"]),
        Some(2)
    );
    let ex1 = fixture_path("mse-example1.loop");
    let dir = std::env::temp_dir().join(format!("af-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("t.svg");
    let svg = svg.to_str().unwrap();
    // T is inside one loop only.
    assert_eq!(status(&["plot", &ex1, "--stmt", "T", "-o", svg]), Some(1));
}

#[test]
fn plot_example2() {
    let dir = std::env::temp_dir().join(format!("af-plot2-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("ex2.svg");
    let out = bin()
        .args([
            "plot",
            &fixture_path("mse-example2.loop"),
            "--param",
            "N=4",
            "--stmt",
            "S",
            "--stmt",
            "T",
            "-o",
            svg.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg"), "{}", &text[..100.min(text.len())]);
    // 64 S and 8 T operations: 64 circles, 8 squares (plus the frame).
    assert_eq!(text.matches("<circle").count(), 64);
    let msg = String::from_utf8_lossy(&out.stderr);
    assert!(msg.contains("72 operations"), "{msg}");
}
