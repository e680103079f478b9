//! `flow --engine quasts` (bounded σ from proved quasts, src/symbolic/bounded.rs)
//! against `--engine rules` (the Datalog rules, checked against a naive
//! reference in dataflow_agree.rs): byte for byte in text, JSON and isl on
//! every fixture whose reads all have exact quasts; the refusals name a
//! read; on generated static-control programs (60 by default;
//! ARRAYFLOW_CASES raises it) the groups are equal at two parameter vectors;
//! `auto` takes the quasts past 10^5 instances with the same output.

mod support;

use arrayflow::dataflow::{self, grouped, Config};
use arrayflow::gen::{generate, GenOptions, Size};
use arrayflow::symbolic::{self, bounded};
use std::path::{Path, PathBuf};
use std::process::Command;

fn flow(file: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .arg("flow")
        .arg(file)
        .args(args)
        .output()
        .expect("arrayflow runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    v
}

#[test]
fn engines_agree_on_fixtures() {
    let mut paths = files("fixtures/c/kernels", "loop");
    paths.extend(files("fixtures/c/kernels", "c"));
    paths.extend(files("fixtures/papers", "loop"));
    paths.extend(files("fixtures/dependence", "loop"));
    paths.extend(files("fixtures/equiv", "loop"));
    let (mut same, mut refused) = (0, 0);
    for path in &paths {
        for format in ["text", "json", "isl"] {
            let q = flow(path, &["--format", format, "--engine", "quasts"]);
            let r = flow(path, &["--format", format, "--engine", "rules"]);
            if q.0 == Some(1) && q.2.contains("`--engine quasts`") {
                assert!(
                    q.2.contains("has no exact quast") || q.2.contains("reads memory"),
                    "{}: the refusal names no read: {}",
                    path.display(),
                    q.2
                );
                assert!(
                    q.1.is_empty(),
                    "{}: output before the refusal",
                    path.display()
                );
                refused += 1;
                continue;
            }
            assert_eq!(
                q.0,
                r.0,
                "{} {format}: exit codes\n{}\n{}",
                path.display(),
                q.2,
                r.2
            );
            assert_eq!(
                q.1,
                r.1,
                "{} {format}: the engines disagree",
                path.display()
            );
            same += 1;
        }
    }
    eprintln!("{same} outputs equal, {refused} refused by the quasts");
    // 70 of 114 fixtures have quasts for every read when written.
    assert!(same >= 150, "only {same} outputs compared");
}

#[test]
fn engines_agree_on_generated_programs() {
    let cases = support::cases(60);
    let (mut compared, mut skipped) = (0, 0);
    for seed in 0..cases {
        let program = generate(seed, &GenOptions::static_control(Size::Small));
        let sym = symbolic::analyze(&program);
        let defaults = program.param_values(&[]).expect("defaults");
        if bounded::unusable(&program, &sym, &defaults).is_some() {
            skipped += 1;
            continue;
        }
        let mut moved = defaults.clone();
        if let Some(v) = moved.first_mut() {
            *v += 2;
        }
        for values in [defaults, moved] {
            // Where an access leaves its declared range the quasts make no
            // claim, and `flow` takes the rules.
            if bounded::unusable(&program, &sym, &values).is_some() {
                continue;
            }
            let params: Vec<(String, i64)> = (program.params.iter())
                .zip(&values)
                .map(|(p, &v)| (p.name.clone(), v))
                .collect();
            let config = Config {
                params,
                max_trips: 4,
                ..Config::default()
            };
            let Ok(flow) = dataflow::analyze(&program, &config) else {
                continue;
            };
            let rules = grouped::group(&program, &flow);
            let mut quasts = Vec::new();
            bounded::groups(&program, &sym, &values, |a| {
                quasts.extend(a);
                Ok::<(), ()>(())
            })
            .expect("usable")
            .expect("no sink error");
            assert_eq!(quasts, rules, "seed {seed} at {values:?}");
            compared += 1;
        }
    }
    eprintln!("{compared} (program, sizes) compared, {skipped} programs without quasts everywhere");
    assert!(compared >= cases, "only {compared} compared");
}

#[test]
fn auto_takes_the_quasts_past_a_size_with_the_same_output() {
    let matmul = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/c/kernels/matmul.loop");
    // N = 48: 48³ = 110,592 instances of T alone, past 10^5.
    let auto = flow(&matmul, &["--param", "N=48", "--format", "json"]);
    let rules = flow(
        &matmul,
        &["--param", "N=48", "--format", "json", "--engine", "rules"],
    );
    assert_eq!(auto.0, Some(0), "{}", auto.2);
    assert_eq!(auto.1, rules.1);
}

#[test]
fn refusals_are_diagnosed() {
    let spmv = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/c/kernels/spmv.loop");
    let (code, out, err) = flow(&spmv, &["--engine", "quasts"]);
    assert_eq!(code, Some(1));
    assert!(out.is_empty());
    assert!(err.contains("`while`"), "{err}");
    let (code, _, err) = flow(
        &spmv,
        &["--engine", "quasts", "--format", "json", "--instances"],
    );
    assert_eq!(code, Some(2));
    assert!(err.contains("--instances"), "{err}");
    // `auto` leaves a program without quasts everywhere to the rules.
    let (code, out, _) = flow(&spmv, &[]);
    assert_eq!(code, Some(0));
    assert!(out.contains("reads"), "{out}");
}
