//! Budgets, empty domains, bad sizes, and the engine's batching and refuelling
//! paths on kernels big enough to reach them.

#[allow(dead_code)]
mod kernels;
#[allow(dead_code)]
mod naive;

use kernels::{guarded_scalar, matmul};

use arrayflow::dataflow::{analyze, Config, DataflowError, Flow, Sources};
use arrayflow::model::builder::{e, ProgramBuilder};
use arrayflow::model::{Cond, Operation, Site, StmtId};
use std::collections::BTreeMap;

fn reads(flow: &Flow) -> BTreeMap<(Operation, usize), Sources> {
    flow.iter()
        .map(|r| ((r.operation(), r.access()), r.sources()))
        .collect()
}

fn sized(n: i64) -> Config {
    Config {
        params: vec![("N".to_string(), n)],
        ..Config::default()
    }
}

#[test]
fn instance_budget_names_the_statement_and_count() {
    let mut config = sized(100);
    config.max_instances = 1000;
    match analyze(&matmul(), &config) {
        Err(DataflowError::Budget {
            unit,
            site,
            count,
            max,
            ..
        }) => {
            assert_eq!((unit, site.as_str(), max), ("access instances", "S", 1000));
            // S makes 3 instances per operation; the count is the first over.
            assert!((1001..=1003).contains(&count), "{count}");
        }
        other => panic!("expected a budget error, got {other:?}"),
    }
    let msg = analyze(&matmul(), &config).unwrap_err().to_string();
    assert!(
        msg.contains("--max-instances") && msg.contains("N=100"),
        "{msg}"
    );
}

#[test]
fn walk_budget_stops_quadratic_outputs() {
    let mut config = sized(2000);
    config.max_instances = 100_000;
    match analyze(&guarded_scalar(), &config) {
        Err(DataflowError::Budget { unit, site, .. }) => {
            assert_eq!((unit, site.as_str()), ("walk steps", "R"));
        }
        other => panic!("expected a walk budget error, got {other:?}"),
    }
}

#[test]
fn long_walks_are_refuelled() {
    // R(i) visits i writes, more than one batch's fuel for large i.
    let n = 300;
    let p = guarded_scalar();
    let flow = analyze(&p, &sized(n)).unwrap();
    let op = |k: u32, iter: Vec<i64>| Operation {
        site: Site::Stmt(StmtId(k)),
        iter,
    };
    let mut expected = BTreeMap::new();
    for i in 1..=n {
        let writes = (1..=i).map(|i2| op(0, vec![i2])).collect();
        expected.insert(
            (op(1, vec![i]), 0),
            Sources {
                writes,
                initial: true,
            },
        );
    }
    assert_eq!(reads(&flow), expected);
}

#[test]
fn many_batches_match_the_last_writer() {
    // 24^3 operations with three reads each: several batches.
    let p = matmul();
    let sizes = vec![("N".to_string(), 24)];
    let flow = analyze(
        &p,
        &Config {
            params: sizes.clone(),
            ..Config::default()
        },
    )
    .unwrap();
    assert_eq!(flow.len(), 3 * 24 * 24 * 24);
    assert_eq!(reads(&flow), naive::last_writer(&p, &sizes, 4));
}

#[test]
fn empty_and_negative_domains() {
    for n in [0, -1, -5] {
        let flow = analyze(&matmul(), &sized(n)).unwrap();
        assert!(flow.is_empty());
        assert_eq!(flow.params(), &[("N".to_string(), n)]);
    }
    let config = Config {
        max_trips: 0,
        ..Config::default()
    };
    let mut b = ProgramBuilder::new();
    let x = b.scalar("x").unwrap();
    b.begin_while(None, Cond::Unknown).unwrap();
    b.assign(None, e::access(x, vec![]), None, e::read(x, vec![]))
        .unwrap();
    b.end().unwrap();
    b.call(None, "use", vec![e::read(x, vec![])]).unwrap();
    let p = b.finish().unwrap();
    let flow = analyze(&p, &config).unwrap();
    // No trip runs: only the final use, reading the initial value.
    assert_only_initial(&flow);
}

#[test]
fn parameter_errors_name_the_parameter() {
    let mut b = ProgramBuilder::new();
    let m = b.param("M", None).unwrap();
    let x = b.array("x", vec![(e::int(0), e::param(m))]).unwrap();
    b.call(None, "use", vec![e::read(x, vec![e::int(0)])])
        .unwrap();
    let p = b.finish().unwrap();
    let err = analyze(&p, &Config::default()).unwrap_err().to_string();
    assert!(
        err.contains("`M`") && err.contains("--param M=INT"),
        "{err}"
    );
    let bad = Config {
        params: vec![("Q".to_string(), 1)],
        ..Config::default()
    };
    let err = analyze(&p, &bad).unwrap_err().to_string();
    assert!(err.contains("`Q`"), "{err}");
}

#[test]
fn cli_reports_budget_errors_with_exit_code_1() {
    let path = format!(
        "{}/fixtures/papers/mse-example2.loop",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(["flow", &path, "--param", "N=50", "--max-instances", "100"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    // S makes 2 instances (a write, a read) per operation: 100 up to S at
    // i = 1, j = 50; T right after it brings the count to 101.
    assert!(err.contains("E0302") && err.contains("`T`"), "{err}");
    assert!(err.contains("count to 101"), "{err}");
    assert!(
        err.contains("mse-example2.loop"),
        "points at the file: {err}"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(["flow", &path, "--param", "K=1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(["flow", "/nonexistent.loop"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn loops_without_instances_cannot_spin() {
    // An outer loop of 10^15 trips whose inner loop is always empty: the
    // iterations are bounded by the budget too.
    let mut b = ProgramBuilder::new();
    let x = b.scalar("x").unwrap();
    b.begin_for("i", e::int(1), e::int(1_000_000_000_000_000), 1)
        .unwrap();
    b.begin_for("j", e::int(1), e::int(0), 1).unwrap();
    b.assign(None, e::access(x, vec![]), None, e::unknown())
        .unwrap();
    b.end().unwrap();
    b.end().unwrap();
    let p = idle_loop_then_use(b, x);
    let config = Config {
        max_instances: 10_000,
        ..Config::default()
    };
    match analyze(&p, &config) {
        Err(DataflowError::Budget {
            unit, site, count, ..
        }) => {
            assert_eq!(
                (unit, site.as_str(), count),
                ("loop iterations", "i", 10_001)
            );
        }
        other => panic!("expected an iteration budget error, got {other:?}"),
    }
    // Without the first loop the program is cheap.
    let mut b = ProgramBuilder::new();
    let x = b.scalar("x").unwrap();
    let flow = analyze(&idle_loop_then_use(b, x), &config).unwrap();
    assert_only_initial(&flow);
}

/// Appends a loop of 10^15 trips with nothing that touches memory (skipped
/// whatever its range), then `R: use(x)`.
fn idle_loop_then_use(
    mut b: ProgramBuilder,
    x: arrayflow::model::ArrayId,
) -> arrayflow::model::Program {
    b.begin_for("k", e::int(1), e::int(1_000_000_000_000_000), 1)
        .unwrap();
    b.begin_if(None, Cond::Unknown).unwrap();
    b.end().unwrap();
    b.end().unwrap();
    b.call(Some("R"), "use", vec![e::read(x, vec![])]).unwrap();
    b.finish().unwrap()
}

/// The flow has one read, and it may read only the initial value.
fn assert_only_initial(flow: &Flow) {
    let all: Vec<_> = reads(flow).into_values().collect();
    let initial = Sources {
        writes: vec![],
        initial: true,
    };
    assert_eq!(all, vec![initial]);
}
