//! `flow`'s formats: `--format isl` (bounded σ streamed per read access,
//! a piece per group box and source) read back instance by instance and
//! compared with the engine's per-instance σ (`dataflow::analyze`) on every
//! `.loop` fixture of fixtures/c/kernels at its defaults and at N = 7; and
//! `--instances` outside `--format json` a usage error, not ignored.

mod support;

use arrayflow::dataflow::{analyze, Config};
use arrayflow::model::{Program, Site};
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use support::fixtures::{load, loop_files};

/// (reader, access) → reader iteration → (sources as (name, iteration), initial).
type Sigma = BTreeMap<(String, usize), BTreeMap<Vec<i64>, (BTreeSet<(String, Vec<i64>)>, bool)>>;

fn arrayflow(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(args)
        .output()
        .expect("the binary runs");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The engine's σ, keyed as the isl output names things.
fn engine(program: &Program, params: &[(String, i64)]) -> Sigma {
    let config = Config {
        params: params.to_vec(),
        ..Config::default()
    };
    let flow = analyze(program, &config).unwrap();
    let name = |s: Site| arrayflow::symbolic::isl::tuple(&program.site_name(s));
    let mut out = Sigma::new();
    for r in flow.iter() {
        let sources = r.writes().map(|(s, i)| (name(s), i.to_vec())).collect();
        out.entry((name(r.site()), r.access()))
            .or_default()
            .insert(r.iter().to_vec(), (sources, r.initial()));
    }
    out
}

/// `i3`, `i3 - 2`, `i3 + 1` or an integer, at the reader iteration `x`.
fn coord(e: &str, x: &[i64]) -> i64 {
    let e = e.trim();
    if let Some(rest) = e.strip_prefix('i') {
        let (var, off) = match rest.split_once(' ') {
            Some((v, o)) => {
                let o = o.replace(' ', "");
                (v, o.parse::<i64>().unwrap_or_else(|_| panic!("{e}")))
            }
            None => (rest, 0),
        };
        x[var.parse::<usize>().unwrap()] + off
    } else {
        e.parse().unwrap_or_else(|_| panic!("{e}"))
    }
}

/// The reader iterations a piece's constraints (`lo <= i0 <= hi`, `i1 = v`,
/// joined by `and`) describe, for `dims` coordinates.
fn points(cons: &str, dims: usize) -> Vec<Vec<i64>> {
    let mut bx = vec![(i64::MIN, i64::MIN); dims];
    for c in cons.split(" and ").filter(|c| !c.is_empty()) {
        let parts: Vec<&str> = c.split(" <= ").collect();
        let (var, lo, hi) = match parts[..] {
            [lo, v, hi] => (v, lo.parse().unwrap(), hi.parse().unwrap()),
            _ => {
                let (v, x) = c.split_once(" = ").unwrap_or_else(|| panic!("{c}"));
                (v, x.parse().unwrap(), x.parse().unwrap())
            }
        };
        bx[var[1..].parse::<usize>().unwrap()] = (lo, hi);
    }
    assert!(bx.iter().all(|b| b.0 != i64::MIN), "unconstrained: {cons}");
    let mut out = vec![Vec::new()];
    for &(lo, hi) in &bx {
        out = out
            .into_iter()
            .flat_map(|p| {
                (lo..=hi).map(move |v| {
                    let mut q = p.clone();
                    q.push(v);
                    q
                })
            })
            .collect();
    }
    out
}

/// `R[i0, i1]` → ("R", 2).
fn tuple_of(t: &str) -> (String, Vec<String>) {
    let (name, rest) = t.trim().split_once('[').unwrap_or_else(|| panic!("{t}"));
    let inner = rest.strip_suffix(']').unwrap();
    let items = if inner.is_empty() {
        Vec::new()
    } else {
        inner.split(", ").map(str::to_string).collect()
    };
    (name.to_string(), items)
}

/// The isl output read back instance by instance.
fn read_isl(text: &str) -> Sigma {
    let mut out = Sigma::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (head, body) = line.split_once(": {").unwrap_or_else(|| panic!("{line}"));
        let mut h = head.split(' ');
        let (kind, reader, access) = (h.next().unwrap(), h.next().unwrap(), h.next().unwrap());
        let key = (reader.to_string(), access.parse::<usize>().unwrap());
        let entry = out.entry(key).or_default();
        let body = body.trim().strip_suffix('}').unwrap().trim();
        for piece in body.split("; ").filter(|p| !p.is_empty()) {
            let (rel, cons) = piece.split_once(" : ").unwrap_or((piece, ""));
            match kind {
                "source" => {
                    let (me, src) = rel.split_once(" -> ").unwrap();
                    let (_, vars) = tuple_of(me);
                    let (w, coords) = tuple_of(src);
                    for x in points(cons, vars.len()) {
                        let it = coords.iter().map(|c| coord(c, &x)).collect();
                        entry.entry(x).or_default().0.insert((w.clone(), it));
                    }
                }
                "initial" => {
                    let (_, vars) = tuple_of(rel);
                    for x in points(cons, vars.len()) {
                        entry.entry(x).or_default().1 = true;
                    }
                }
                _ => panic!("{line}"),
            }
        }
    }
    out.retain(|_, v| !v.is_empty());
    out
}

#[test]
fn isl_output_is_the_engines_sigma() {
    let mut compared = 0;
    for path in loop_files("fixtures/c/kernels") {
        let program = load(&path);
        let p = path.to_str().unwrap();
        let mut sizes: Vec<Vec<(String, i64)>> = vec![Vec::new()];
        if program.param("N").is_some() {
            sizes.push(vec![("N".to_string(), 7)]);
        }
        for params in sizes {
            let mut args = vec!["flow", p, "--format", "isl"];
            let given: Vec<String> = params.iter().map(|(n, v)| format!("{n}={v}")).collect();
            for g in &given {
                args.extend(["--param", g.as_str()]);
            }
            let (code, out, err) = arrayflow(&args);
            assert_eq!(code, Some(0), "{p} {params:?}: {err}");
            assert!(out.starts_with("# bounded σ at"), "{out}");
            let want = engine(&program, &params);
            let got = read_isl(&out);
            assert_eq!(got, want, "{p} {params:?}\n{out}");
            compared += want.values().map(|m| m.len()).sum::<usize>();
        }
    }
    assert!(compared > 1000, "{compared} read instances compared");
}

#[test]
fn instances_outside_json_is_a_usage_error() {
    let matmul = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/c/kernels/matmul.loop"
    );
    for extra in [
        &["--format", "text"][..],
        &["--format", "isl"],
        &[],
        &["--format", "json", "--symbolic"],
    ] {
        let mut args = vec!["flow", matmul, "--instances"];
        args.extend(extra);
        let (code, out, err) = arrayflow(&args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(
            err.contains("`--instances`") && err.contains("--format json"),
            "{err}"
        );
    }
    let (code, out, _) = arrayflow(&["flow", matmul, "--instances", "--format", "json"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("\"reads\""), "{out}");
}
