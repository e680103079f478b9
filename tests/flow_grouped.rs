//! `flow`'s grouped output (`dataflow::grouped`) against the
//! per-instance σ: every read instance recoverable from the groups, with the
//! same sources, exactly once. On every `.loop` fixture of fixtures/papers
//! and fixtures/c/kernels at its defaults (69 files), and on 200 generated
//! programs (ARRAYFLOW_CASES sets the count) through the database's
//! streamed path (`db::resolve::file_groups`, several kernels) against the
//! engine's σ of the whole program; through the binary, the grouped JSON
//! expanded by its documented schema against `--instances`.

mod support;

use arrayflow::dataflow::grouped::{group, AccessGroups, Grouper, PartialAccess};
use arrayflow::dataflow::{analyze, Config, Flow};
use arrayflow::gen::{generate, GenOptions, Size};
use arrayflow::model::{Program, Site};
use serde_json::Value;
use std::collections::BTreeMap;

type Sigma = BTreeMap<(Site, Vec<i64>, usize), (Vec<(Site, Vec<i64>)>, bool)>;

/// The per-instance σ of a flow.
fn per_instance(flow: &Flow) -> Sigma {
    flow.iter()
        .map(|r| {
            let writes = r.writes().map(|(s, i)| (s, i.to_vec())).collect();
            (
                (r.site(), r.iter().to_vec(), r.access()),
                (writes, r.initial()),
            )
        })
        .collect()
}

/// σ recovered from groups; fails on an instance listed twice or a group
/// whose count disagrees with its boxes.
fn recovered(groups: &[AccessGroups]) -> Result<Sigma, String> {
    let mut out = Sigma::new();
    for a in groups {
        for g in &a.groups {
            let mut n = 0u64;
            for it in g.instances() {
                n += 1;
                let writes = g.sources.iter().map(|s| (s.site, s.at(&it))).collect();
                let key = (a.site, it.clone(), a.access);
                if out.insert(key, (writes, g.initial)).is_some() {
                    return Err(format!(
                        "{:?}{it:?} access {} listed twice",
                        a.site, a.access
                    ));
                }
            }
            if n != g.count {
                return Err(format!("group of {} instances lists {n}", g.count));
            }
        }
    }
    Ok(out)
}

fn fixtures() -> Vec<std::path::PathBuf> {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut out = Vec::new();
    for dir in ["fixtures/papers", "fixtures/c/kernels"] {
        for e in std::fs::read_dir(format!("{root}/{dir}")).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "loop") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn compile(text: &str) -> Option<Program> {
    let (p, _) = arrayflow::lower::compile(text, arrayflow::diagnostics::FileId(0));
    p
}

#[test]
fn groups_recover_sigma_on_every_fixture() {
    let mut checked = 0;
    for path in fixtures() {
        let Some(program) = compile(&std::fs::read_to_string(&path).unwrap()) else {
            continue;
        };
        let Ok(flow) = analyze(&program, &Config::default()) else {
            continue;
        };
        let groups = group(&program, &flow);
        assert_eq!(
            recovered(&groups),
            Ok(per_instance(&flow)),
            "{}",
            path.display()
        );
        checked += 1;
    }
    assert!(checked >= 50, "only {checked} fixtures analysed");
}

#[test]
fn groups_are_few_on_matmul() {
    let path = format!(
        "{}/fixtures/c/kernels/matmul.loop",
        env!("CARGO_MANIFEST_DIR")
    );
    let program = compile(&std::fs::read_to_string(path).unwrap()).unwrap();
    let config = Config {
        params: vec![("N".into(), 16)],
        ..Config::default()
    };
    let flow = analyze(&program, &config).unwrap();
    let groups = group(&program, &flow);
    // C from S (k = 0) or from T at k-1; A and B from the initial value;
    // each group one box.
    let shape: Vec<(usize, usize)> = groups
        .iter()
        .map(|a| (a.groups.len(), a.groups.iter().map(|g| g.boxes.len()).sum()))
        .collect();
    assert_eq!(shape, vec![(2, 2), (1, 1), (1, 1)]);
    assert_eq!(
        groups[0].groups[1].boxes,
        vec![vec![(0, 15), (0, 15), (1, 15)]]
    );
    assert_eq!(recovered(&groups), Ok(per_instance(&flow)));
}

/// The database's streamed groups of a file equal the groups of the
/// engine's σ of the whole program.
fn db_groups(program: &Program, config: &Config) -> Option<(Vec<AccessGroups>, Sigma)> {
    let text = arrayflow::print::program(program);
    let database = arrayflow::db::Database::new(config.clone());
    let file = database.add_file("g.loop", text);
    let program = arrayflow::db::parse(&database, file).program.clone()?;
    let flow = analyze(&program, config).ok()?;
    let streamed = arrayflow::db::resolve::file_groups::<_, ()>(
        &database,
        file,
        |_, _| Ok(Vec::new()),
        |all, a| {
            all.extend(a);
            Ok(())
        },
    );
    let Ok(Ok(streamed)) = streamed else {
        panic!("the engine analysed it, the database did not");
    };
    assert_eq!(streamed, group(&program, &flow));
    Some((streamed, per_instance(&flow)))
}

#[test]
fn streamed_groups_recover_sigma_on_generated_programs() {
    let mut checked = 0;
    for seed in 0..support::cases(200) {
        let size = if seed % 4 == 0 {
            Size::Medium
        } else {
            Size::Small
        };
        let program = generate(seed, &GenOptions::all(size));
        let config = Config {
            max_trips: (seed % 4) as u32,
            ..Config::default()
        };
        let Some((groups, want)) = db_groups(&program, &config) else {
            continue;
        };
        assert_eq!(
            recovered(&groups),
            Ok(want),
            "seed {seed}: {}",
            arrayflow::print::program(&program)
        );
        checked += 1;
    }
    assert!(
        checked * 2 >= support::cases(200),
        "only {checked} analysed"
    );
}

fn cli_json(path: &str, extra: &[&str]) -> Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arrayflow"))
        .args(["flow", path, "--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

/// The grouped JSON expanded by docs/interpreter.md's schema into the
/// `--instances` records (stmt, iter, access, array, sources, initial).
fn expand_json(v: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for a in v["accesses"].as_array().unwrap() {
        for g in a["groups"].as_array().unwrap() {
            for bx in g["iters"].as_array().unwrap() {
                let ranges: Vec<Vec<i64>> = bx.as_array().unwrap().iter().map(ints).collect();
                let mut points: Vec<Vec<i64>> = vec![Vec::new()];
                for r in &ranges {
                    points = points
                        .into_iter()
                        .flat_map(|p| {
                            (r[0]..=r[1]).map(move |x| {
                                let mut q = p.clone();
                                q.push(x);
                                q
                            })
                        })
                        .collect();
                }
                for it in points {
                    let sources: Vec<Value> = g["sources"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|s| {
                            let iter: Vec<i64> = s["iter"]
                                .as_array()
                                .unwrap()
                                .iter()
                                .enumerate()
                                .map(|(d, c)| match c.as_array() {
                                    Some(k) => it[d] + k[0].as_i64().unwrap(),
                                    None => c.as_i64().unwrap(),
                                })
                                .collect();
                            serde_json::json!({"stmt": s["stmt"], "iter": iter})
                        })
                        .collect();
                    out.push(serde_json::json!({
                        "stmt": a["stmt"], "iter": it, "access": a["access"],
                        "array": a["array"], "sources": sources, "initial": g["initial"],
                    }));
                }
            }
        }
    }
    out
}

#[test]
fn cli_grouped_json_expands_to_the_instances() {
    let root = env!("CARGO_MANIFEST_DIR");
    for (file, n) in [
        ("fixtures/c/kernels/matmul.loop", "N=6"),
        ("fixtures/c/kernels/seidel2d.loop", "N=6"),
        ("fixtures/papers/mse-example2.loop", "N=5"),
        ("fixtures/papers/mse-example1.loop", "N=5"),
    ] {
        let path = format!("{root}/{file}");
        if !std::path::Path::new(&path).exists() {
            panic!("{file} is gone");
        }
        let grouped = cli_json(&path, &["--param", n]);
        let each = cli_json(&path, &["--param", n, "--instances"]);
        let key = |v: &Value| {
            (
                v["stmt"].as_str().unwrap().to_string(),
                ints(&v["iter"]),
                v["access"].as_u64().unwrap(),
            )
        };
        let mut got = expand_json(&grouped);
        got.sort_by_key(key);
        let mut want = each["reads"].as_array().unwrap().clone();
        want.sort_by_key(key);
        assert!(!want.is_empty(), "{file}");
        assert_eq!(got, want, "{file}");
        assert_eq!(grouped["params"], each["params"]);
    }
}

/// The groups of `flow` with its reads (in `Flow::sorted` order) cut into
/// `parts` consecutive stretches, each grouped by a grouper of its own,
/// shipped as words and absorbed in `order` (stretch indices) by the
/// first stretch's grouper, site by site.
fn grouped_in_stretches(
    program: &Program,
    flow: &Flow,
    parts: usize,
    order: &[usize],
) -> Vec<AccessGroups> {
    let n = flow.len();
    let mut groupers: Vec<Grouper> = (0..parts).map(|_| Grouper::new(program)).collect();
    let mut sites: Vec<Site> = Vec::new();
    for (k, r) in flow.sorted().enumerate() {
        if sites.last() != Some(&r.site()) {
            sites.push(r.site());
        }
        let g = &mut groupers[k * parts / n.max(1)];
        g.add(&r);
    }
    let mut merged = Grouper::new(program);
    let mut out = Vec::new();
    for site in sites {
        for &p in order {
            let words: Vec<Vec<i64>> = (groupers[p].take_partial(site).iter())
                .map(PartialAccess::words)
                .collect();
            let back = words
                .iter()
                .map(|w| PartialAccess::from_words(w).expect("words read back"))
                .collect();
            merged.absorb(site, back);
        }
        out.extend(merged.take(site));
    }
    out
}

/// Grouping can be done per stretch of the reads and merged exactly
/// (`Grouper::take_partial`, `Grouper::absorb`): on every fixture and
/// generated programs, cut into 2, 3 and 7 stretches, the merged groups
/// equal the groups of the whole σ; merged in reverse order, they differ
/// on some (the check can fail).
#[test]
fn groups_of_stretches_merge_into_the_groups_of_the_whole() {
    let mut programs: Vec<(String, Program, Config)> = Vec::new();
    for path in fixtures() {
        if let Some(p) = compile(&std::fs::read_to_string(&path).unwrap()) {
            programs.push((path.display().to_string(), p, Config::default()));
        }
    }
    for seed in 0..support::cases(60) {
        let config = Config {
            max_trips: (seed % 4) as u32,
            ..Config::default()
        };
        let program = generate(seed, &GenOptions::all(Size::Small));
        programs.push((format!("generated program {seed}"), program, config));
    }
    let (mut checked, mut reversed_differs) = (0, 0);
    for (name, program, config) in &programs {
        let Ok(flow) = analyze(program, config) else {
            continue;
        };
        let whole = group(program, &flow);
        for parts in [2, 3, 7] {
            let order: Vec<usize> = (0..parts).collect();
            let merged = grouped_in_stretches(program, &flow, parts, &order);
            assert_eq!(merged, whole, "{name} in {parts} stretches");
            let back: Vec<usize> = order.iter().rev().copied().collect();
            reversed_differs +=
                usize::from(grouped_in_stretches(program, &flow, parts, &back) != whole);
        }
        checked += 1;
    }
    assert!(checked >= 80, "only {checked} programs analysed");
    assert!(
        reversed_differs > 0,
        "merging out of order is never noticed"
    );
}
