//! Acceptance: σ of the three examples of the maximal static expansion paper
//! (*Maximal Static Expansion*, section 2) equals the paper's
//! formulas (1) to (4) evaluated at the given sizes. The expected sets are
//! enumerated here from the formulas, never taken from the engine.

#[allow(dead_code)]
mod kernels;

use arrayflow::dataflow::{analyze, Config, Flow, Sources};
use arrayflow::model::{Operation, Program, Site, StmtId};
use kernels::{example1, example2, example3, fixture};
use std::collections::BTreeMap;

fn config(n: i64, max_trips: u32) -> Config {
    Config {
        params: vec![("N".to_string(), n)],
        max_trips,
        ..Config::default()
    }
}

fn op(program: &Program, label: &str, iter: &[i64]) -> Operation {
    let s = program
        .stmts()
        .iter()
        .find(|s| s.label == label)
        .map(|s| s.id)
        .unwrap_or(StmtId(u32::MAX));
    Operation {
        site: Site::Stmt(s),
        iter: iter.to_vec(),
    }
}

/// Every read of the flow, as a map.
fn reads(flow: &Flow) -> BTreeMap<(Operation, usize), Sources> {
    flow.iter()
        .map(|r| ((r.operation(), r.access()), r.sources()))
        .collect()
}

fn sources(mut writes: Vec<Operation>, initial: bool) -> Sources {
    writes.sort();
    Sources { writes, initial }
}

type Expected = BTreeMap<(Operation, usize), Sources>;

/// Formulas (1) and (2) at N = n, for max-trips k (sources with w < k).
fn expected1(p: &Program, n: i64, k: u32) -> Expected {
    let mut expected = BTreeMap::new();
    for i in 1..=n {
        // Formula (1), for every trip the bound allows: w < max_trips.
        for w in 0..i64::from(k) {
            let src = if w > 0 {
                vec![op(p, "S", &[i, w - 1])]
            } else {
                vec![op(p, "T", &[i])]
            };
            expected.insert((op(p, "S", &[i, w]), 0), sources(src, false));
        }
        // Formula (2): {<i,T>} ∪ {<i,w,S> : w >= 0}, w < max_trips.
        let mut src = vec![op(p, "T", &[i])];
        src.extend((0..i64::from(k)).map(|w| op(p, "S", &[i, w])));
        expected.insert((op(p, "R", &[i]), 0), sources(src, false));
    }
    expected
}

/// Formula (3) at N = n; the initial flag follows from T always running.
fn expected2(p: &Program, n: i64) -> Expected {
    let mut expected = BTreeMap::new();
    // T reads nothing; S reads A[i-j+2N] (access 0).
    for i in 1..=2 * n {
        for j in 1..=2 * n {
            let diagonal = |lo_j: i64| {
                (1..=2 * n)
                    .flat_map(move |i2| (lo_j..j).map(move |j2| (i2, j2)))
                    .filter(move |&(i2, j2)| i2 - j2 == i - j)
            };
            let mut src: Vec<Operation> = Vec::new();
            let mut ts = Vec::new();
            if j <= n {
                src.extend(diagonal(1).map(|(i2, j2)| op(p, "S", &[i2, j2])));
            } else {
                src.extend(diagonal(n + 1).map(|(i2, j2)| op(p, "S", &[i2, j2])));
                ts.extend(
                    (1..=i)
                        .filter(|&i2| i2 == i - j + n)
                        .map(|i2| op(p, "T", &[i2, n])),
                );
            }
            // T always runs (its condition is static), so it kills the
            // initial value exactly when formula (3) lists a T.
            let initial = ts.is_empty();
            src.extend(ts);
            expected.insert((op(p, "S", &[i, j]), 0), sources(src, initial));
        }
    }
    expected
}

/// Formula (4) at N = n.
fn expected3(p: &Program, n: i64) -> Expected {
    let mut expected = BTreeMap::new();
    for i in 1..=n {
        // Formula (4): {<i,S>} ∪ {<i,j,T> : 1 <= j <= N}.
        let mut src = vec![op(p, "S", &[i])];
        src.extend((1..=n).map(|j| op(p, "T", &[i, j])));
        expected.insert((op(p, "R", &[i]), 0), sources(src, false));
    }
    expected
}

/// Runs `arrayflow flow FILE --format json --instances ARGS` and returns its
/// `reads`.
fn cli_reads(name: &str, args: &[&str]) -> serde_json::Value {
    let path = format!("{}/fixtures/papers/{name}", env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(["flow", &path, "--format", "json", "--instances"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["reads"].clone()
}

/// The JSON `reads` array of `flow --format json --instances`, for expected sets.
fn as_json(p: &Program, expected: &Expected) -> serde_json::Value {
    let name = |o: &Operation| p.site_name(o.site);
    let reads: Vec<serde_json::Value> = expected
        .iter()
        .map(|((o, a), s)| {
            let array = match o.site {
                Site::Stmt(id) => p.stmts()[id.index()].reads()[*a].array,
                Site::Cond(id) => p.conditions()[id.index()].reads()[*a].array,
            };
            serde_json::json!({
                "stmt": name(o), "iter": o.iter, "access": a,
                "array": p.array_decl(array).name,
                "sources": s.writes.iter()
                    .map(|w| serde_json::json!({"stmt": name(w), "iter": w.iter}))
                    .collect::<Vec<_>>(),
                "initial": s.initial,
            })
        })
        .collect();
    serde_json::Value::Array(reads)
}

#[test]
fn example1_formulas_1_and_2() {
    let (n, k) = (5, 3);
    let p = &example1();
    let flow = analyze(p, &config(n, k)).unwrap();
    assert_eq!(reads(&flow), expected1(p, n, k));
    assert_eq!(flow.params(), &[("N".to_string(), 5)]);
    let f = fixture("mse-example1.loop");
    assert_eq!(
        reads(&analyze(&f, &config(n, k)).unwrap()),
        expected1(&f, n, k)
    );
    let got = cli_reads("mse-example1.loop", &["--param", "N=5", "--max-trips", "3"]);
    assert_eq!(got, as_json(&f, &expected1(&f, n, k)));
}

#[test]
fn example2_formula_3() {
    let n = 4;
    let p = &example2();
    let got = reads(&analyze(p, &config(n, 4)).unwrap());
    assert_eq!(got, expected2(p, n));
    // The notable case: S at j = 1 reads the initial value only.
    let first = &got[&(op(p, "S", &[3, 1]), 0)];
    assert!(first.initial && first.writes.is_empty());
    let f = fixture("mse-example2.loop");
    assert_eq!(
        reads(&analyze(&f, &config(n, 4)).unwrap()),
        expected2(&f, n)
    );
    let got = cli_reads("mse-example2.loop", &["--param", "N=4"]);
    assert_eq!(got, as_json(&f, &expected2(&f, n)));
}

#[test]
fn example3_formula_4() {
    let n = 4;
    let p = &example3();
    assert_eq!(reads(&analyze(p, &config(n, 4)).unwrap()), expected3(p, n));
    let f = fixture("mse-example3.loop");
    assert_eq!(
        reads(&analyze(&f, &config(n, 4)).unwrap()),
        expected3(&f, n)
    );
    let got = cli_reads("mse-example3.loop", &["--param", "N=4"]);
    assert_eq!(got, as_json(&f, &expected3(&f, n)));
}
