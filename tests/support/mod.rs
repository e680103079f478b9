//! Shared by the integration tests (and the benchmark, through `#[path]`).
#![allow(dead_code)]

pub mod cbuild;
pub mod fixtures;
pub mod gen;
pub mod schedules;
pub mod symbolic;

/// A database that logs the name of every query it executes (salsa's
/// `WillExecute`), to count what an edit re-runs.
pub fn logging_db() -> (
    arrayflow::db::Database,
    std::sync::Arc<std::sync::Mutex<Vec<String>>>,
) {
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = log.clone();
    let db = arrayflow::db::Database::with_events(
        Default::default(),
        Box::new(move |event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind {
                let name = format!("{database_key:?}");
                let name = name.split('(').next().unwrap_or("").to_string();
                sink.lock().unwrap().push(name);
            }
        }),
    );
    (db, log)
}

/// How many random cases a property test runs: `ARRAYFLOW_CASES`, else `default`.
pub fn cases(default: u64) -> u64 {
    std::env::var("ARRAYFLOW_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `check(seed)` for every seed below `cases`, on one worker per core
/// (seed k on worker k mod workers), in seed order within each worker:
/// the long property tests check independent programs. A worker's panic
/// (its message printed by the test harness) fails the caller.
#[allow(dead_code)]
pub fn per_seed<T: Send>(cases: u64, check: impl Fn(u64) -> T + Sync) -> Vec<T> {
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let check = &check;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers as u64)
            .map(|w| s.spawn(move || (w..cases).step_by(workers).map(check).collect::<Vec<T>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a worker failed: see the message above"))
            .collect()
    })
}

/// Every parameter of `p` at its default + `k`: a size the emitters
/// neither sample nor validate (storage tests).
pub fn defaults_plus(p: &arrayflow::model::Program, k: i64) -> Vec<(String, i64)> {
    p.params
        .iter()
        .zip(p.param_values(&[]).unwrap())
        .map(|(q, v)| (q.name.clone(), v + k))
        .collect()
}

/// Runs the `arrayflow` binary with `args`: (exit code, stdout, stderr).
pub fn run(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(args)
        .output()
        .expect("run arrayflow");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The program of a source file, `None` when it has errors.
#[allow(unused_imports)]
pub use fixtures::compile;

/// Generated program `seed` with every feature (`GenOptions::all`): medium
/// every fourth seed, small otherwise.
pub fn generated(seed: u64) -> arrayflow::model::Program {
    use arrayflow::gen::{generate, GenOptions, Size};
    let size = if seed.is_multiple_of(4) {
        Size::Medium
    } else {
        Size::Small
    };
    generate(seed, &GenOptions::all(size))
}

/// Whether two flows have the same reads with the same sources and
/// initial flags (stats aside); the first difference otherwise.
pub fn same_reads(
    a: &arrayflow::dataflow::Flow,
    b: &arrayflow::dataflow::Flow,
) -> Result<(), String> {
    if a.len() != b.len() {
        return Err(format!("{} reads vs {}", a.len(), b.len()));
    }
    for (x, y) in a.iter().zip(b.iter()) {
        if x.operation() != y.operation()
            || x.access() != y.access()
            || x.initial() != y.initial()
            || !x.writes().eq(y.writes())
        {
            return Err(format!(
                "read {} of {:?}: {:?} vs {:?}",
                x.access(),
                x.operation(),
                x.sources(),
                y.sources()
            ));
        }
    }
    Ok(())
}

/// The cells `p` declares with every parameter at `n`.
#[allow(dead_code)]
pub fn declared(p: &arrayflow::model::Program, n: i64) -> i64 {
    let at = |a: &arrayflow::model::Affine| a.eval(|_| n).unwrap();
    (p.arrays.iter())
        .map(|d| {
            (d.dims.iter())
                .map(|r| (at(&r.hi.affine) - at(&r.lo.affine) + 1).max(0))
                .product::<i64>()
        })
        .sum()
}
