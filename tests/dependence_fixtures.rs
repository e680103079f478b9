//! The program fixtures of digest §1 (and a few of our own) against the
//! results written by hand in tests/data/deps-fixtures.txt.

use arrayflow::dependence::{analyze, Config, MemoMode, PairReport, Test, Tester};
use arrayflow::diagnostics::{has_errors, SourceFiles};
use arrayflow::model::Program;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Line {
    array: String,
    src: String,
    dst: String,
    dependent: bool,
    kinds: BTreeSet<String>,
    directions: BTreeSet<String>,
    distances: BTreeSet<String>,
    decided_by: String,
    exact: bool,
}

fn set(field: &str, sep: char) -> BTreeSet<String> {
    if field == "-" {
        return BTreeSet::new();
    }
    field
        .split(sep)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn expected() -> BTreeMap<String, Vec<Line>> {
    let text = include_str!("data/deps-fixtures.txt");
    let mut out: BTreeMap<String, Vec<Line>> = BTreeMap::new();
    for (k, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split('|').map(str::trim).collect();
        assert_eq!(f.len(), 10, "line {}: {raw}", k + 1);
        out.entry(f[0].to_string()).or_default().push(Line {
            array: f[1].into(),
            src: f[2].into(),
            dst: f[3].into(),
            dependent: match f[4] {
                "dependent" => true,
                "independent" => false,
                other => panic!("line {}: {other}", k + 1),
            },
            kinds: set(f[5], ','),
            directions: set(f[6], ' '),
            distances: set(f[7], ' '),
            decided_by: f[8].into(),
            exact: match f[9] {
                "exact" => true,
                "conservative" => false,
                other => panic!("line {}: {other}", k + 1),
            },
        });
    }
    out
}

fn vector<T: std::fmt::Display>(v: &[T]) -> String {
    let parts: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("({})", parts.join(","))
}

fn observed(p: &PairReport) -> Line {
    Line {
        array: p.array.clone(),
        src: p.src.to_string(),
        dst: p.dst.to_string(),
        dependent: p.dependent,
        kinds: p
            .kinds
            .iter()
            .map(|k| {
                serde_json::to_value(k)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect(),
        directions: p.directions.iter().map(|d| vector(d)).collect(),
        distances: p.distances.iter().map(|d| vector(d)).collect(),
        decided_by: p.decided_by.name().to_string(),
        exact: p.exact,
    }
}

/// Parses `fixtures/<name>.loop`.
fn program(name: &str) -> Program {
    let path = format!("fixtures/{name}.loop");
    let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut files = SourceFiles::new();
    let id = files.add(path.clone(), source);
    let (program, diags) = arrayflow::lower::compile(files.source(id), id);
    assert!(!has_errors(&diags), "{}", files.render_all(&diags));
    program.unwrap_or_else(|| panic!("{path} did not lower"))
}

#[test]
fn every_fixture_gives_the_digest_result() {
    let expected = expected();
    assert!(expected.len() >= 18, "the data file lost fixtures");
    // Every digest §1 program fixture has its expectations.
    for entry in std::fs::read_dir("fixtures/papers").expect("fixtures/papers") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .to_string();
        if let Some(stem) = name
            .strip_prefix("maydan-1.")
            .and_then(|s| s.strip_suffix(".loop"))
        {
            let key = format!("papers/maydan-1.{stem}");
            assert!(expected.contains_key(&key), "no expectations for {key}");
        }
    }
    for (stem, lines) in &expected {
        for memo in [
            MemoMode::Off,
            MemoMode::Simple,
            MemoMode::Improved,
            MemoMode::Auto,
        ] {
            let mut tester = Tester::new(Config {
                memo,
                ..Config::default()
            });
            let pairs = analyze(&program(stem), &mut tester);
            let mut got: Vec<Line> = pairs.iter().map(observed).collect();
            let mut want = lines.clone();
            // `*` accepts any deciding test.
            for (g, w) in got.iter_mut().zip(&want) {
                if w.decided_by == "*" {
                    g.decided_by = "*".into();
                }
            }
            got.sort();
            want.sort();
            assert_eq!(got, want, "{stem} with memo {memo:?}");
        }
    }
}

/// Digest §1.8: (a) and (b) collapse to the same key once the unused j loop
/// is dropped, so (b) and the collapsed loop are answered from the table.
#[test]
fn improved_key_collapses_the_memo_examples() {
    let run = |memo| {
        let mut t = Tester::new(Config {
            memo,
            ..Config::default()
        });
        analyze(&program("papers/maydan-1.8-memo-a"), &mut t);
        let after_a = t.stats().of(Test::Svpc).unique;
        analyze(&program("papers/maydan-1.8-memo-b"), &mut t);
        analyze(&program("papers/maydan-1.8-memo-key"), &mut t);
        (after_a, t.stats().of(Test::Svpc).unique, t.stats())
    };
    let (a, all, stats) = run(MemoMode::Improved);
    // The write/read problem of (b) and of the collapsed loop: no new SVPC run
    // for it. (Self pairs of (b) hit too; the collapsed loop's self pair has
    // one loop fewer, so its direction problems are new.)
    assert!(all <= a + 1, "improved: {a} then {all}\n{}", stats.render());
    assert!(stats.exact_hit_rate() > 0.0);
    let (a, all, _) = run(MemoMode::Simple);
    assert!(all >= a + 2, "simple: {a} then {all}");
}
